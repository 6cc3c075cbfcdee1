package gguf

/*
#cgo CFLAGS: -std=gnu11 -I${SRCDIR}/../csrc/include
#include <stdlib.h>
#include "ggml.h"
#include "gguf-ext.h"

static struct lm_gguf_context * gguf_go_parse(const void * data, size_t avail, uint64_t size, bool meta_only,
                                              uint64_t * need, char * err, size_t err_size) {
    struct lm_gguf_init_params p = { meta_only, NULL };
    return lm_gguf_init_from_prefix_ex(data, avail, size, p, need, err, err_size);
}
*/
import "C"

import (
	"unsafe"

	_ "github.com/ggml-go/ggml/csrc"
)

// parse runs the C parser over the first len(prefix) bytes of a file of the
// given size. On failure it returns the reason, and need > 0 when the parser
// only wants more leading bytes. The C side copies everything it keeps, so
// prefix may be Go memory.
func parse(prefix []byte, size int64, metaOnly bool) (ctx *C.struct_lm_gguf_context, need int64, err string) {
	var errBuf [512]C.char
	var cneed C.uint64_t
	var p unsafe.Pointer
	if len(prefix) > 0 {
		p = unsafe.Pointer(&prefix[0])
	}
	ctx = C.gguf_go_parse(p, C.size_t(len(prefix)), C.uint64_t(size), C.bool(metaOnly), &cneed, &errBuf[0], C.size_t(len(errBuf)))
	if ctx == nil {
		return nil, int64(cneed), C.GoString(&errBuf[0])
	}
	return ctx, 0, ""
}
