package ggml

/*
#include "glue.h"

// Row by row, as upstream ggml applies from_float_ref when it writes
// ref_quant; the i-quant grids are built first because several reference
// row quantizers look them up.
static void gg_quantize_ref(gg_err * e, enum lm_ggml_type t, const float * src, void * dst,
                            int64_t nrows, int64_t n_per_row, size_t row_size) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        e->failed = 1;
        memcpy(e->msg, f.msg, sizeof(e->msg));
        return;
    }
    lm_ggml_quantize_init(t);
    const lm_ggml_from_float_t fn = lm_ggml_get_type_traits(t)->from_float_ref;
    for (int64_t r = 0; r < nrows; ++r) {
        fn(src + r * n_per_row, (char *) dst + r * row_size, n_per_row);
    }
    lm_ggml_err_pop(&f);
}

*/
import "C"

import (
	"fmt"
	"unsafe"
)

// QuantizeRef converts rows of nPerRow floats into type t with the type's
// reference row quantizer (from_float_ref), without an importance matrix.
// For most types it gives the same bytes as Quantize without an imatrix; it
// exists so that the reference quantizer itself can be checked, and it works
// for the few types (q8_1, f16, bf16) that have a reference quantizer but no
// lm_ggml_quantize_chunk path.
func QuantizeRef(t Type, src []float32, nPerRow int) ([]byte, error) {
	tr, err := TypeTraits(t)
	if err != nil {
		return nil, fmt.Errorf("ggml: QuantizeRef: %w", err)
	}
	if !tr.HasFromFloatRef {
		return nil, fmt.Errorf("ggml: QuantizeRef: type %s has no reference quantizer", t)
	}
	if nPerRow <= 0 || nPerRow%tr.BlockSize != 0 {
		return nil, fmt.Errorf("ggml: QuantizeRef: row length %d is not a positive multiple of the %s block size %d", nPerRow, t, tr.BlockSize)
	}
	if len(src)%nPerRow != 0 {
		return nil, fmt.Errorf("ggml: QuantizeRef: %d values are not a whole number of rows of %d", len(src), nPerRow)
	}
	initOnce()
	nrows := len(src) / nPerRow
	rowSize := nPerRow / tr.BlockSize * tr.TypeSize
	out := make([]byte, rowSize*nrows)
	if nrows == 0 {
		return out, nil
	}
	var e C.gg_err
	C.gg_quantize_ref(&e, uint32(t), (*C.float)(unsafe.Pointer(&src[0])), unsafe.Pointer(&out[0]),
		C.int64_t(nrows), C.int64_t(nPerRow), C.size_t(rowSize))
	if e.failed != 0 {
		return nil, fmt.Errorf("ggml: QuantizeRef %s: %s", t, C.GoString(&e.msg[0]))
	}
	return out, nil
}
