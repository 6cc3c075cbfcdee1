package gguf

/*
#include "ggml.h"
*/
import "C"

import "fmt"

// ValueType is the type of a metadata value (enum lm_gguf_type).
type ValueType uint32

const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
	typeCount   ValueType = 13
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

// String returns the short name used by the C API (u8, i32, str, arr, ...).
func (t ValueType) String() string {
	if t < typeCount {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

// Size is the encoded size of a fixed-size value, 0 for strings and arrays.
func (t ValueType) Size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// TensorType is a tensor element type id (enum lm_ggml_type). The root
// package converts it to and from ggml.Type, which has the same values.
type TensorType uint32

// Tensor type ids, as in the file format (ggml's numbering: MIT License,
// Copyright (c) 2023-2024 The ggml authors).
const (
	TensorF32        TensorType = 0
	TensorF16        TensorType = 1
	TensorQ4_0       TensorType = 2
	TensorQ4_1       TensorType = 3
	TensorQ5_0       TensorType = 6
	TensorQ5_1       TensorType = 7
	TensorQ8_0       TensorType = 8
	TensorQ8_1       TensorType = 9
	TensorQ2_K       TensorType = 10
	TensorQ3_K       TensorType = 11
	TensorQ4_K       TensorType = 12
	TensorQ5_K       TensorType = 13
	TensorQ6_K       TensorType = 14
	TensorQ8_K       TensorType = 15
	TensorIQ2_XXS    TensorType = 16
	TensorIQ2_XS     TensorType = 17
	TensorIQ3_XXS    TensorType = 18
	TensorIQ1_S      TensorType = 19
	TensorIQ4_NL     TensorType = 20
	TensorIQ3_S      TensorType = 21
	TensorIQ2_S      TensorType = 22
	TensorIQ4_XS     TensorType = 23
	TensorI8         TensorType = 24
	TensorI16        TensorType = 25
	TensorI32        TensorType = 26
	TensorI64        TensorType = 27
	TensorF64        TensorType = 28
	TensorIQ1_M      TensorType = 29
	TensorBF16       TensorType = 30
	TensorQ4_0_4_4   TensorType = 31
	TensorQ4_0_4_8   TensorType = 32
	TensorQ4_0_8_8   TensorType = 33
	TensorTQ1_0      TensorType = 34
	TensorTQ2_0      TensorType = 35
	TensorIQ4_NL_4_4 TensorType = 36
)

// Valid reports whether files may hold tensors of this type (it has a
// block layout; removed and reserved ids do not).
func (t TensorType) Valid() bool {
	return uint32(t) < uint32(C.LM_GGML_TYPE_COUNT) && t.BlockSize() > 0 && t.TypeSize() > 0
}

// BlockSize is the number of elements per block (1 for plain types).
func (t TensorType) BlockSize() int {
	if uint32(t) >= uint32(C.LM_GGML_TYPE_COUNT) {
		return 0
	}
	return int(C.lm_ggml_blck_size(C.enum_lm_ggml_type(t)))
}

// TypeSize is the number of bytes per block.
func (t TensorType) TypeSize() int {
	if uint32(t) >= uint32(C.LM_GGML_TYPE_COUNT) {
		return 0
	}
	return int(C.lm_ggml_type_size(C.enum_lm_ggml_type(t)))
}

// String returns the type's name (f32, q4_K, ...).
func (t TensorType) String() string {
	if !t.Valid() {
		return fmt.Sprintf("TensorType(%d)", uint32(t))
	}
	return C.GoString(C.lm_ggml_type_name(C.enum_lm_ggml_type(t)))
}

// TensorTypeByName returns the type with the given name (as String gives).
func TensorTypeByName(name string) (TensorType, bool) {
	for t := TensorType(0); uint32(t) < uint32(C.LM_GGML_TYPE_COUNT); t++ {
		if t.Valid() && t.String() == name {
			return t, true
		}
	}
	return 0, false
}

// tensorBytes is the exact byte size of a tensor of type t and the given
// shape, with the same rules as the C reader: known type, 1 to 4
// non-negative dimensions, rows a whole number of blocks, and element count
// and byte size within int64.
func tensorBytes(t TensorType, shape []int64) (int64, error) {
	if !t.Valid() {
		return 0, fmt.Errorf("invalid tensor type %d", uint32(t))
	}
	if len(shape) < 1 || len(shape) > MaxDims {
		return 0, fmt.Errorf("%d dimensions, want 1 to %d", len(shape), MaxDims)
	}
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is negative (%d)", i, d)
		}
	}
	blck := int64(t.BlockSize())
	if shape[0]%blck != 0 {
		return 0, fmt.Errorf("row length %d is not a multiple of the block size %d of %s", shape[0], blck, t)
	}
	const maxInt64 = 1<<63 - 1
	mul := func(start int64, f []int64) (int64, bool, bool) {
		p, empty := start, false
		for _, d := range f {
			if d == 0 {
				empty = true
				continue
			}
			if p > maxInt64/d {
				return 0, false, false
			}
			p *= d
		}
		return p, empty, true
	}
	if _, _, ok := mul(1, shape); !ok {
		return 0, fmt.Errorf("shape %v overflows the element count", shape)
	}
	f := append([]int64{shape[0] / blck}, shape[1:]...)
	b, empty, ok := mul(int64(t.TypeSize()), f)
	if !ok {
		return 0, fmt.Errorf("shape %v overflows the byte size", shape)
	}
	if empty {
		return 0, nil
	}
	return b, nil
}
