package ggml

/*
#include "glue.h"
#include "ggml-iquants.h"

GG_DEF(size_t, quantize_chunk, (enum lm_ggml_type t, const float * src, void * dst, int64_t start, int64_t nrows, int64_t n_per_row, const float * im),
       (t, src, dst, start, nrows, n_per_row, im))

static int gg_to_float(enum lm_ggml_type t, const void * src, float * dst, int64_t n) {
    const struct lm_ggml_type_traits * tr = lm_ggml_get_type_traits(t);
    if (t == LM_GGML_TYPE_F32) { memcpy(dst, src, n * sizeof(float)); return 0; }
    if (tr->to_float == NULL) return -1;
    tr->to_float(src, dst, n);
    return 0;
}
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// Traits describe a tensor type (lm_ggml_type_traits, plus the quantization facts).
type Traits struct {
	Name                string
	BlockSize           int // elements per block
	BlockSizeInterleave int // elements interleaved per block (repacked types)
	TypeSize            int // bytes per block
	IsQuantized         bool
	HasToFloat          bool // Dequantize works
	HasFromFloatRef     bool // a reference quantizer exists for single rows
	RequiresImatrix     bool // Quantize needs an importance matrix
}

// TypeTraits returns the traits of t.
func TypeTraits(t Type) (Traits, error) {
	if t >= TypeCount {
		return Traits{}, fmt.Errorf("ggml: invalid type id %d", uint32(t))
	}
	tr := C.lm_ggml_get_type_traits(uint32(t))
	return Traits{
		Name:                C.GoString(tr.type_name),
		BlockSize:           int(tr.blck_size),
		BlockSizeInterleave: int(tr.blck_size_interleave),
		TypeSize:            int(tr.type_size),
		IsQuantized:         bool(tr.is_quantized),
		HasToFloat:          tr.to_float != nil,
		HasFromFloatRef:     tr.from_float_ref != nil,
		RequiresImatrix:     bool(C.lm_ggml_quantize_requires_imatrix(uint32(t))),
	}, nil
}

// RequiresImatrix reports whether Quantize needs an importance matrix for t.
func RequiresImatrix(t Type) bool {
	return t < TypeCount && bool(C.lm_ggml_quantize_requires_imatrix(uint32(t)))
}

// RowSize is the number of bytes of a row of n elements of type t.
func RowSize(t Type, n int) (int, error) {
	if !t.valid() {
		return 0, fmt.Errorf("ggml: invalid type id %d", uint32(t))
	}
	if n < 0 || n%t.BlockSize() != 0 {
		return 0, fmt.Errorf("ggml: %d elements are not a whole number of %s blocks of %d", n, t, t.BlockSize())
	}
	if n/t.BlockSize() > math.MaxInt/t.Size() {
		return 0, fmt.Errorf("ggml: %d elements of %s are too many", n, t)
	}
	return n / t.BlockSize() * t.Size(), nil
}

// Quantize converts rows of nPerRow floats into type t exactly as ggml's
// lm_ggml_quantize_chunk does (f16, bf16 and f32 are accepted too).
// imatrix, if not nil, holds nPerRow importance weights; some types require it
// (see RequiresImatrix). It is safe to call from several goroutines.
func Quantize(t Type, src []float32, nPerRow int, imatrix []float32) ([]byte, error) {
	rowSize, err := quantizeArgs("Quantize", t, src, nPerRow, imatrix)
	if err != nil {
		return nil, err
	}
	out := make([]byte, rowSize*(len(src)/nPerRow))
	if err := quantize("Quantize", out, t, src, nPerRow, imatrix); err != nil {
		return nil, err
	}
	return out, nil
}

// QuantizeInto is Quantize writing into dst, which must hold exactly the
// result (len(src)/nPerRow rows of RowSize(t, nPerRow) bytes). Reusing dst
// saves the allocation, which for fast types costs more than the conversion.
func QuantizeInto(dst []byte, t Type, src []float32, nPerRow int, imatrix []float32) error {
	rowSize, err := quantizeArgs("QuantizeInto", t, src, nPerRow, imatrix)
	if err != nil {
		return err
	}
	if want := rowSize * (len(src) / nPerRow); len(dst) != want {
		return fmt.Errorf("ggml: QuantizeInto %s: dst has %d bytes, want %d", t, len(dst), want)
	}
	return quantize("QuantizeInto", dst, t, src, nPerRow, imatrix)
}

// quantizeArgs checks the arguments of Quantize and QuantizeInto and returns
// the size of one quantized row.
func quantizeArgs(fn string, t Type, src []float32, nPerRow int, imatrix []float32) (int, error) {
	if !t.valid() {
		return 0, fmt.Errorf("ggml: %s: invalid type id %d", fn, uint32(t))
	}
	if nPerRow <= 0 {
		return 0, fmt.Errorf("ggml: %s: row length must be positive, got %d", fn, nPerRow)
	}
	if nPerRow%t.BlockSize() != 0 {
		return 0, fmt.Errorf("ggml: %s: row length %d is not a multiple of the %s block size %d", fn, nPerRow, t, t.BlockSize())
	}
	if len(src)%nPerRow != 0 {
		return 0, fmt.Errorf("ggml: %s: %d values are not a whole number of rows of %d", fn, len(src), nPerRow)
	}
	if imatrix != nil && len(imatrix) != nPerRow {
		return 0, fmt.Errorf("ggml: %s: importance matrix has %d weights, want %d", fn, len(imatrix), nPerRow)
	}
	if imatrix == nil && RequiresImatrix(t) {
		return 0, fmt.Errorf("ggml: %s: type %s requires an importance matrix", fn, t)
	}
	return RowSize(t, nPerRow)
}

// quantize runs lm_ggml_quantize_chunk on checked arguments.
func quantize(fn string, dst []byte, t Type, src []float32, nPerRow int, imatrix []float32) error {
	nrows := len(src) / nPerRow
	if nrows == 0 {
		return nil
	}
	initOnce()
	var im *C.float
	if imatrix != nil {
		im = (*C.float)(unsafe.Pointer(&imatrix[0]))
	}
	var e C.gg_err
	n := C.gg_quantize_chunk(&e, uint32(t), (*C.float)(unsafe.Pointer(&src[0])), unsafe.Pointer(&dst[0]),
		0, C.int64_t(nrows), C.int64_t(nPerRow), im)
	if e.failed != 0 {
		return fmt.Errorf("ggml: %s %s: %s", fn, t, C.GoString(&e.msg[0]))
	}
	if int(n) != len(dst) {
		return fmt.Errorf("ggml: %s %s: wrote %d bytes, expected %d", fn, t, int(n), len(dst))
	}
	return nil
}

// Dequantize converts the first n elements of type t in src to float32.
func Dequantize(t Type, src []byte, n int) ([]float32, error) {
	if err := dequantizeArgs("Dequantize", t, src, n); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	if err := dequantize("Dequantize", out, t, src); err != nil {
		return nil, err
	}
	return out, nil
}

// DequantizeInto converts the first len(dst) elements of type t in src into
// dst, without allocating.
func DequantizeInto(dst []float32, t Type, src []byte) error {
	if err := dequantizeArgs("DequantizeInto", t, src, len(dst)); err != nil {
		return err
	}
	return dequantize("DequantizeInto", dst, t, src)
}

func dequantizeArgs(fn string, t Type, src []byte, n int) error {
	if !t.valid() {
		return fmt.Errorf("ggml: %s: invalid type id %d", fn, uint32(t))
	}
	size, err := RowSize(t, n)
	if err != nil {
		return fmt.Errorf("ggml: %s: %w", fn, err)
	}
	if len(src) < size {
		return fmt.Errorf("ggml: %s: %d elements of %s need %d bytes, got %d", fn, n, t, size, len(src))
	}
	return nil
}

// dequantize runs the type's to_float on checked arguments.
func dequantize(fn string, dst []float32, t Type, src []byte) error {
	if len(dst) == 0 {
		return nil
	}
	initOnce()
	if C.gg_to_float(uint32(t), unsafe.Pointer(&src[0]), (*C.float)(unsafe.Pointer(&dst[0])), C.int64_t(len(dst))) != 0 {
		return fmt.Errorf("ggml: %s: type %s has no conversion to f32", fn, t)
	}
	return nil
}

// ValidateRowData checks data of type t as ggml does before using a
// tensor from a file: the size is a whole number of blocks and no value or
// block scale is NaN or infinite. What it finds is in the error (nothing is
// logged).
func ValidateRowData(t Type, data []byte) error {
	initOnce()
	if !t.valid() {
		return fmt.Errorf("ggml: ValidateRowData: invalid type id %d", uint32(t))
	}
	if len(data)%t.Size() != 0 {
		return fmt.Errorf("ggml: ValidateRowData: %d bytes are not a whole number of %s blocks of %d bytes", len(data), t, t.Size())
	}
	if len(data) == 0 {
		return nil
	}
	var msg [256]C.char
	if !bool(C.lm_validate_row_data_msg(uint32(t), unsafe.Pointer(&data[0]), C.size_t(len(data)), &msg[0], C.size_t(len(msg)))) {
		return fmt.Errorf("ggml: ValidateRowData: invalid %s data: %s", t, C.GoString(&msg[0]))
	}
	return nil
}
