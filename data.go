package ggml

/*
#include "glue.h"
#include "ggml-cpu-impl.h"

// Whether writing t's memory is forbidden (it, or the tensor it views, is flagged read-only).
static int gg_readonly(const gg_t * t) {
    const gg_t * owner = t->view_src != NULL ? t->view_src : t;
    return (owner->flags & LM_TENSOR_FLAG_READONLY) != 0;
}

// Row-wise conversion between a tensor of any layout and a packed f32 array.
// Returns 0, or -1 if the type has no converter in that direction.
static int gg_rows_to_f32(const gg_t * t, float * out) {
    const struct lm_ggml_type_traits * tr = lm_ggml_get_type_traits(t->type);
    const int64_t ne0 = t->ne[0];
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
        const char * row = (const char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
        float * dst = out + ((i3*t->ne[2] + i2)*t->ne[1] + i1)*ne0;
        const bool dense = tr->is_quantized || t->nb[0] == tr->type_size;
        if (dense && t->type == LM_GGML_TYPE_F32) {
            memcpy(dst, row, ne0 * sizeof(float));
        } else if (dense && tr->to_float != NULL) {
            tr->to_float(row, dst, ne0);
        } else if (tr->is_quantized) {
            return -1; // a quantized type without a row converter
        } else {
            for (int64_t i0 = 0; i0 < ne0; i0++) dst[i0] = lm_ggml_get_f32_nd(t, i0, i1, i2, i3);
        }
    }
    return 0;
}

static int gg_rows_from_f32(gg_t * t, const float * in) {
    const struct lm_ggml_type_traits * tr = lm_ggml_get_type_traits(t->type);
    const int64_t ne0 = t->ne[0];
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
        char * row = (char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
        const float * src = in + ((i3*t->ne[2] + i2)*t->ne[1] + i1)*ne0;
        if (t->type == LM_GGML_TYPE_F32 && t->nb[0] == sizeof(float)) {
            memcpy(row, src, ne0 * sizeof(float));
        } else if (tr->is_quantized || (t->nb[0] == tr->type_size && tr->from_float_ref != NULL)) {
            if (tr->from_float_ref == NULL) return -1;
            tr->from_float_ref(src, row, ne0);
        } else {
            for (int64_t i0 = 0; i0 < ne0; i0++) lm_ggml_set_f32_nd(t, i0, i1, i2, i3, src[i0]);
        }
    }
    return 0;
}

// Copies between the tensor's (possibly strided) elements and a packed buffer
// of elements of the same type (plain types) or whole rows (quantized types).
static void gg_rows_copy(gg_t * t, char * packed, int to_tensor) {
    const size_t row = lm_ggml_row_size(t->type, t->ne[0]);
    const size_t es = lm_ggml_type_size(t->type);
    const bool dense0 = lm_ggml_is_quantized(t->type) || t->nb[0] == es;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
        char * p = (char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
        char * q = packed + ((i3*t->ne[2] + i2)*t->ne[1] + i1)*row;
        if (dense0) {
            if (to_tensor) memcpy(p, q, row); else memcpy(q, p, row);
        } else {
            for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                if (to_tensor) memcpy(p + i0*t->nb[0], q + i0*es, es); else memcpy(q + i0*es, p + i0*t->nb[0], es);
            }
        }
    }
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

func (t *Tensor) requireData(op string) *C.struct_lm_ggml_tensor {
	p := t.ptr()
	if p.data == nil && !bool(C.lm_ggml_is_empty(p)) {
		panic(&OpError{Op: op, Msg: fmt.Sprintf("tensor %q has no data (no-alloc context)", t.Name())})
	}
	return p
}

// requireWritable is requireData for methods that write the tensor's data.
func (t *Tensor) requireWritable(op string) *C.struct_lm_ggml_tensor {
	p, err := t.writable(op)
	if err != nil {
		panic(err)
	}
	return p
}

// writable is requireWritable reporting a read-only tensor as an error.
func (t *Tensor) writable(op string) (*C.struct_lm_ggml_tensor, error) {
	p := t.requireData(op)
	if C.gg_readonly(p) != 0 {
		return nil, &OpError{Op: op, Msg: fmt.Sprintf("tensor %q is read-only (it points into a mapped file)", t.Name())}
	}
	return p, nil
}

// ReadOnly reports whether the tensor's memory must not be written: tensors
// of Context.LoadGGUF without copy, and views of them.
func (t *Tensor) ReadOnly() bool { return C.gg_readonly(t.ptr()) != 0 }

// packedSize is the number of bytes of the tensor's elements when packed.
func (t *Tensor) packedSize() int {
	p := t.ptr()
	return int(C.lm_ggml_row_size(p._type, p.ne[0])) * int(p.ne[1]*p.ne[2]*p.ne[3])
}

// Bytes returns a copy of the tensor's data, packed in element order (rows of
// blocks for quantized types), whatever the tensor's strides.
// A failed transfer from another device's memory (an RPC server gone)
// panics with an *OpError.
func (t *Tensor) Bytes() []byte {
	out := make([]byte, t.packedSize())
	t.mustData("Bytes", false, func(p *C.struct_lm_ggml_tensor) {
		if len(out) > 0 {
			C.gg_rows_copy(p, (*C.char)(unsafe.Pointer(&out[0])), 0)
		}
	})
	return out
}

// SetBytes copies b, packed in element order, into the tensor's elements.
func (t *Tensor) SetBytes(b []byte) error {
	if _, err := t.writable("SetBytes"); err != nil {
		return err
	}
	if len(b) != t.packedSize() {
		return fmt.Errorf("ggml: SetBytes: tensor %q holds %d bytes, got %d", t.Name(), t.packedSize(), len(b))
	}
	if len(b) == 0 {
		return nil
	}
	return t.withData("SetBytes", true, true, func(p *C.struct_lm_ggml_tensor) {
		C.gg_rows_copy(p, (*C.char)(unsafe.Pointer(&b[0])), 1)
	})
}

// Float32s returns the tensor's elements as float32 in element order,
// converting from f16, bf16, integer and quantized types.
func (t *Tensor) Float32s() ([]float32, error) {
	t.requireData("Float32s")
	out := make([]float32, t.NElements())
	if len(out) == 0 {
		return out, nil
	}
	var rc C.int
	if err := t.withData("Float32s", false, false, func(p *C.struct_lm_ggml_tensor) {
		rc = C.gg_rows_to_f32(p, (*C.float)(unsafe.Pointer(&out[0])))
	}); err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, fmt.Errorf("ggml: Float32s: no conversion from %s to f32", t.Type())
	}
	return out, nil
}

// Float32sInto is Float32s writing into dst, which must hold exactly
// NElements values (reading a result every step without allocating).
func (t *Tensor) Float32sInto(dst []float32) error {
	t.requireData("Float32sInto")
	if len(dst) != t.NElements() {
		return fmt.Errorf("ggml: Float32sInto: tensor %q has %d elements, dst %d", t.Name(), t.NElements(), len(dst))
	}
	if len(dst) == 0 {
		return nil
	}
	var rc C.int
	if err := t.withData("Float32sInto", false, false, func(p *C.struct_lm_ggml_tensor) {
		rc = C.gg_rows_to_f32(p, (*C.float)(unsafe.Pointer(&dst[0])))
	}); err != nil {
		return err
	}
	if rc != 0 {
		return fmt.Errorf("ggml: Float32sInto: no conversion from %s to f32", t.Type())
	}
	return nil
}

// SetFloat32s sets the tensor's elements from v in element order, converting
// to the tensor's type (quantizing with the type's reference quantizer, from_float_ref, if needed).
func (t *Tensor) SetFloat32s(v []float32) error {
	if _, err := t.writable("SetFloat32s"); err != nil {
		return err
	}
	if len(v) != t.NElements() {
		return fmt.Errorf("ggml: SetFloat32s: tensor %q has %d elements, got %d", t.Name(), t.NElements(), len(v))
	}
	if len(v) == 0 {
		return nil
	}
	var rc C.int
	if err := t.withData("SetFloat32s", true, true, func(p *C.struct_lm_ggml_tensor) {
		rc = C.gg_rows_from_f32(p, (*C.float)(unsafe.Pointer(&v[0])))
	}); err != nil {
		return err
	}
	if rc != 0 {
		return fmt.Errorf("ggml: SetFloat32s: no conversion from f32 to %s", t.Type())
	}
	return nil
}

// Int32s returns the elements of an i32 tensor.
func (t *Tensor) Int32s() ([]int32, error) {
	if t.Type() != TypeI32 {
		return nil, fmt.Errorf("ggml: Int32s: tensor %q is %s, not i32", t.Name(), t.Type())
	}
	out := make([]int32, t.NElements())
	if len(out) == 0 {
		return out, nil
	}
	err := t.withData("Int32s", false, false, func(p *C.struct_lm_ggml_tensor) {
		C.gg_rows_copy(p, (*C.char)(unsafe.Pointer(&out[0])), 0)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetInt32s sets the elements of an i32 tensor.
func (t *Tensor) SetInt32s(v []int32) error {
	if t.Type() != TypeI32 {
		return fmt.Errorf("ggml: SetInt32s: tensor %q is %s, not i32", t.Name(), t.Type())
	}
	var b []byte
	if len(v) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
	}
	return t.SetBytes(b)
}

// index checks idx (missing indices are 0) against the shape and returns
// the four indices for C.
func (t *Tensor) index(op string, idx []int) (i0, i1, i2, i3 C.int64_t) {
	if len(idx) > MaxDims {
		panic(&OpError{Op: op, Msg: fmt.Sprintf("at most %d indices expected, got %d", MaxDims, len(idx))})
	}
	var ii [MaxDims]int
	ne := t.Ne()
	for d := range MaxDims {
		if d < len(idx) {
			ii[d] = idx[d]
		}
		if ii[d] < 0 || ii[d] >= ne[d] {
			panic(&OpError{Op: op, Msg: fmt.Sprintf("index %v out of range for shape %v", idx, ne)})
		}
	}
	if t.Type().IsQuantized() {
		panic(&OpError{Op: op, Msg: "element access to a quantized tensor"})
	}
	return C.int64_t(ii[0]), C.int64_t(ii[1]), C.int64_t(ii[2]), C.int64_t(ii[3])
}

// F32 returns the element at the given indices (i0 first; missing ones are 0).
func (t *Tensor) F32(idx ...int) (v float32) {
	i0, i1, i2, i3 := t.index("F32", idx)
	t.withElem("F32", false, i0, i1, i2, i3, func(p *C.struct_lm_ggml_tensor, i0, i1, i2, i3 C.int64_t) {
		v = float32(C.lm_cpu_get_f32_at(p, i0, i1, i2, i3))
	})
	return v
}

// SetF32 sets the element at the given indices.
func (t *Tensor) SetF32(v float32, idx ...int) {
	i0, i1, i2, i3 := t.index("SetF32", idx)
	t.withElem("SetF32", true, i0, i1, i2, i3, func(p *C.struct_lm_ggml_tensor, i0, i1, i2, i3 C.int64_t) {
		C.lm_cpu_set_f32_at(p, i0, i1, i2, i3, C.float(v))
	})
}

// I32 returns the element at the given indices as an int32.
func (t *Tensor) I32(idx ...int) (v int32) {
	i0, i1, i2, i3 := t.index("I32", idx)
	t.withElem("I32", false, i0, i1, i2, i3, func(p *C.struct_lm_ggml_tensor, i0, i1, i2, i3 C.int64_t) {
		v = int32(C.lm_cpu_get_i32_at(p, i0, i1, i2, i3))
	})
	return v
}

// SetI32 sets the element at the given indices.
func (t *Tensor) SetI32(v int32, idx ...int) {
	i0, i1, i2, i3 := t.index("SetI32", idx)
	t.withElem("SetI32", true, i0, i1, i2, i3, func(p *C.struct_lm_ggml_tensor, i0, i1, i2, i3 C.int64_t) {
		C.lm_cpu_set_i32_at(p, i0, i1, i2, i3, C.int32_t(v))
	})
}

// Fill sets every element to v (plain types only).
func (t *Tensor) Fill(v float32) *Tensor {
	t.requireWritable("Fill")
	if t.Type().IsQuantized() {
		panic(&OpError{Op: "Fill", Msg: "element access to a quantized tensor"})
	}
	t.mustData("Fill", true, func(p *C.struct_lm_ggml_tensor) { C.lm_ggml_set_f32(p, C.float(v)) })
	return t
}

// Zero sets the tensor's bytes to zero.
func (t *Tensor) Zero() *Tensor {
	t.mustData("Zero", true, func(p *C.struct_lm_ggml_tensor) { C.lm_ggml_set_zero(p) })
	return t
}
