package ggml

/*
#include "glue.h"

// Row by row, as the reference applies from_float_ref when it writes
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

// The kernels alone, into buffers the caller owns (see quantizeInto).
static void gg_quantize_into(gg_err * e, enum lm_ggml_type t, const float * src, void * dst,
                             int64_t nrows, int64_t n_per_row, const float * im) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        e->failed = 1;
        memcpy(e->msg, f.msg, sizeof(e->msg));
        return;
    }
    lm_ggml_quantize_chunk(t, src, dst, 0, nrows, n_per_row, im);
    lm_ggml_err_pop(&f);
}

static int gg_dequantize_into(enum lm_ggml_type t, const void * src, float * dst, int64_t n) {
    const lm_ggml_to_float_t fn = lm_ggml_get_type_traits(t)->to_float;
    if (fn == NULL) return -1;
    fn(src, dst, n);
    return 0;
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

// quantizeInto is Quantize writing into dst, which must be exactly the size
// of the result: it lets benchmarks measure the kernels without the
// allocation of the result (which, for large rows, costs as much as a fast
// kernel).
func quantizeInto(dst []byte, t Type, src []float32, nPerRow int, imatrix []float32) error {
	if !t.valid() || nPerRow <= 0 || len(src)%nPerRow != 0 || (imatrix != nil && len(imatrix) != nPerRow) {
		return fmt.Errorf("ggml: quantizeInto %s: bad arguments", t)
	}
	rowSize, err := RowSize(t, nPerRow)
	if err != nil {
		return err
	}
	nrows := len(src) / nPerRow
	if len(dst) != nrows*rowSize {
		return fmt.Errorf("ggml: quantizeInto %s: dst has %d bytes, want %d", t, len(dst), nrows*rowSize)
	}
	if nrows == 0 {
		return nil
	}
	initOnce()
	var im *C.float
	if imatrix != nil {
		im = (*C.float)(unsafe.Pointer(&imatrix[0]))
	}
	var e C.gg_err
	C.gg_quantize_into(&e, uint32(t), (*C.float)(unsafe.Pointer(&src[0])), unsafe.Pointer(&dst[0]),
		C.int64_t(nrows), C.int64_t(nPerRow), im)
	if e.failed != 0 {
		return fmt.Errorf("ggml: quantizeInto %s: %s", t, C.GoString(&e.msg[0]))
	}
	return nil
}

// dequantizeInto is Dequantize of len(dst) elements into dst (types with a
// to_float only), for the same reason.
func dequantizeInto(dst []float32, t Type, src []byte) error {
	size, err := RowSize(t, len(dst))
	if err != nil {
		return err
	}
	if len(src) < size {
		return fmt.Errorf("ggml: dequantizeInto %s: %d bytes, want %d", t, len(src), size)
	}
	if len(dst) == 0 {
		return nil
	}
	initOnce()
	if C.gg_dequantize_into(uint32(t), unsafe.Pointer(&src[0]), (*C.float)(unsafe.Pointer(&dst[0])), C.int64_t(len(dst))) != 0 {
		return fmt.Errorf("ggml: dequantizeInto: type %s has no conversion to f32", t)
	}
	return nil
}
