package ggml

/*
#include "glue.h"
#include "ggml-impl.h"

// Moves the view t to byte offset off of its source (the tensor owning the
// memory). Returns 0, or 1 if t is not a view, 2 if it would reach past its
// source's bytes. A VIEW op records its offset relative to its operand in
// op_params: that is kept in step, so a graph copy or serialization of t
// sees the new place.
static int gg_set_view_offset(struct lm_ggml_tensor * t, size_t off) {
    struct lm_ggml_tensor * src = t->view_src;
    if (src == NULL) return 1;
    size_t span, end;
    if (lm_ggml_nelements(t) > 0 &&
        (!lm_span_bytes(t->type, t->ne, t->nb, &span) || !lm_size_add(off, span, &end) || end > lm_ggml_nbytes(src))) {
        return 2;
    }
    if (t->op == LM_GGML_OP_VIEW && t->src[0] != NULL) {
        const size_t base = t->src[0]->view_src != NULL ? t->src[0]->view_offs : 0;
        if (off < base) return 2; // before its operand: not a view of it any more
        const size_t rel = off - base;
        memcpy(t->op_params, &rel, sizeof(rel));
    }
    t->view_offs = off;
    if (src->data != NULL) t->data = (char *) src->data + off;
    return 0;
}
*/
import "C"

import "fmt"

// ViewOffset is the byte offset of a view in the memory of its source
// (ViewSrc); 0 for a tensor that is not a view.
func (t *Tensor) ViewOffset() int { return int(t.ptr().view_offs) }

// SetViewOffset moves the view t to byte offset off of its source's memory
// (ViewSrc), keeping its shape and strides: the same graph can then read or
// write another part of the source (for instance the next row of a cache)
// without being built again. If the source has data, t's data moves with
// it. Only t moves: views made from t, and ops whose result is a view of t
// (Cpy returns a view of its destination), keep their offsets and must be
// moved too.
//
// It returns an error if t is not a view, if the view would not lie inside
// its source, or if t is a VIEW op and off is before the operand it views.
// Do not call it while a graph using t is being computed.
func (t *Tensor) SetViewOffset(off int) error {
	p := t.ptr()
	if off < 0 {
		return fmt.Errorf("ggml: SetViewOffset(%d): negative offset", off)
	}
	switch C.gg_set_view_offset(p, C.size_t(off)) {
	case 1:
		return fmt.Errorf("ggml: SetViewOffset: tensor %q is not a view", t.Name())
	case 2:
		return fmt.Errorf("ggml: SetViewOffset(%d): view %q (%d bytes) would not lie inside its source %q of %d bytes",
			off, t.Name(), t.NBytes(), C.GoString(&p.view_src.name[0]), int(C.lm_ggml_nbytes(p.view_src)))
	}
	return nil
}
