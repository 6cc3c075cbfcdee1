// Enum values mirror csrc/include/ggml.h; they are part of the file formats: never renumber.
// The numbering is ggml's (MIT License, Copyright (c) 2023-2024 The ggml authors).

package ggml

// The Op and UnaryOp constants (enums_ops.go) and the C core's op tables are
// generated from the op enums of csrc/include/ggml.h.
//go:generate go run ./internal/gen/optable

// Type is a tensor element type (lm_ggml_type).
type Type uint32

// Tensor types. The numbering is part of the GGUF format. The names keep
// the C type names as they are (q4_K is TypeQ4_K, iq2_xxs is TypeIQ2_XXS),
// so that a name found in a model file or the C sources maps to one constant.
const (
	TypeF32        Type = 0
	TypeF16        Type = 1
	TypeQ4_0       Type = 2
	TypeQ4_1       Type = 3
	TypeQ5_0       Type = 6
	TypeQ5_1       Type = 7
	TypeQ8_0       Type = 8
	TypeQ8_1       Type = 9
	TypeQ2_K       Type = 10
	TypeQ3_K       Type = 11
	TypeQ4_K       Type = 12
	TypeQ5_K       Type = 13
	TypeQ6_K       Type = 14
	TypeQ8_K       Type = 15
	TypeIQ2_XXS    Type = 16
	TypeIQ2_XS     Type = 17
	TypeIQ3_XXS    Type = 18
	TypeIQ1_S      Type = 19
	TypeIQ4_NL     Type = 20
	TypeIQ3_S      Type = 21
	TypeIQ2_S      Type = 22
	TypeIQ4_XS     Type = 23
	TypeI8         Type = 24
	TypeI16        Type = 25
	TypeI32        Type = 26
	TypeI64        Type = 27
	TypeF64        Type = 28
	TypeIQ1_M      Type = 29
	TypeBF16       Type = 30
	TypeQ4_0_4_4   Type = 31
	TypeQ4_0_4_8   Type = 32
	TypeQ4_0_8_8   Type = 33
	TypeTQ1_0      Type = 34
	TypeTQ2_0      Type = 35
	TypeIQ4_NL_4_4 Type = 36
	// TypeCount is one past the largest type id.
	TypeCount Type = 39
)
