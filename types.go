package ggml

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"strings"
)

func (t Type) valid() bool {
	return t < TypeCount && C.lm_ggml_blck_size(uint32(t)) > 0
}

// String returns the type's name as in the C API ("f32", "q4_K", ...).
func (t Type) String() string {
	if t >= TypeCount {
		return fmt.Sprintf("Type(%d)", uint32(t))
	}
	return C.GoString(C.lm_ggml_type_name(uint32(t)))
}

// BlockSize is the number of elements in one block (1 for plain types).
func (t Type) BlockSize() int {
	if t >= TypeCount {
		return 0
	}
	return int(C.lm_ggml_blck_size(uint32(t)))
}

// Size is the size in bytes of one block.
func (t Type) Size() int {
	if t >= TypeCount {
		return 0
	}
	return int(C.lm_ggml_type_size(uint32(t)))
}

// IsQuantized reports whether t is a block-quantized type.
func (t Type) IsQuantized() bool { return t < TypeCount && bool(C.lm_ggml_is_quantized(uint32(t))) }

// TypeByName returns the type with the given C name ("f16", "q8_0",
// "q4_K", ...). Case does not matter ("Q4_K", "F16" and "IQ2_XXS" name the
// same types): no two type names differ only in case.
func TypeByName(name string) (Type, bool) {
	for t := Type(0); t < TypeCount; t++ {
		if t.valid() && strings.EqualFold(t.String(), name) {
			return t, true
		}
	}
	return 0, false
}

// String returns the op's name as in the C API ("ADD", "MUL_MAT", ...).
func (op Op) String() string {
	if op < 0 || op >= OpCount {
		return fmt.Sprintf("Op(%d)", int32(op))
	}
	return C.GoString(C.lm_ggml_op_name(uint32(op)))
}

// Symbol returns the op's symbol as in the C API ("x+y", "X*Y", ...).
func (op Op) Symbol() string {
	if op < 0 || op >= OpCount {
		return fmt.Sprintf("Op(%d)", int32(op))
	}
	return C.GoString(C.lm_ggml_op_symbol(uint32(op)))
}

// String returns the unary op's name as in the C API ("RELU", ...).
func (op UnaryOp) String() string {
	if op < 0 || op >= UnaryOpCount {
		return fmt.Sprintf("UnaryOp(%d)", int32(op))
	}
	return C.GoString(C.lm_ggml_unary_op_name(uint32(op)))
}

// OpDesc is the op name, or the unary op name for UNARY tensors.
func (t *Tensor) OpDesc() string { return C.GoString(C.lm_ggml_op_desc(t.ptr())) }
