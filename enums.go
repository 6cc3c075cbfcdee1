// Enum values mirror csrc/include/ggml.h; they are part of the file formats: never renumber.
// The numbering is ggml's (MIT License, Copyright (c) 2023-2024 The ggml authors).

package ggml

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

// Op is a graph operation (lm_ggml_op).
type Op int32

// Operations, in the order of the C enum.
const (
	OpNone                 Op = 0
	OpDup                  Op = 1
	OpAdd                  Op = 2
	OpAdd1                 Op = 3
	OpAcc                  Op = 4
	OpSub                  Op = 5
	OpMul                  Op = 6
	OpDiv                  Op = 7
	OpSqr                  Op = 8
	OpSqrt                 Op = 9
	OpLog                  Op = 10
	OpSin                  Op = 11
	OpCos                  Op = 12
	OpSum                  Op = 13
	OpSumRows              Op = 14
	OpMean                 Op = 15
	OpArgmax               Op = 16
	OpCountEqual           Op = 17
	OpRepeat               Op = 18
	OpRepeatBack           Op = 19
	OpConcat               Op = 20
	OpSiluBack             Op = 21
	OpNorm                 Op = 22
	OpRMSNorm              Op = 23
	OpRMSNormBack          Op = 24
	OpGroupNorm            Op = 25
	OpMulMat               Op = 26
	OpMulMatID             Op = 27
	OpOutProd              Op = 28
	OpScale                Op = 29
	OpSet                  Op = 30
	OpCpy                  Op = 31
	OpCont                 Op = 32
	OpReshape              Op = 33
	OpView                 Op = 34
	OpPermute              Op = 35
	OpTranspose            Op = 36
	OpGetRows              Op = 37
	OpGetRowsBack          Op = 38
	OpDiag                 Op = 39
	OpDiagMaskInf          Op = 40
	OpDiagMaskZero         Op = 41
	OpSoftMax              Op = 42
	OpSoftMaxBack          Op = 43
	OpRope                 Op = 44
	OpRopeBack             Op = 45
	OpClamp                Op = 46
	OpConvTranspose1D      Op = 47
	OpIm2Col               Op = 48
	OpIm2ColBack           Op = 49
	OpConvTranspose2D      Op = 50
	OpPool1D               Op = 51
	OpPool2D               Op = 52
	OpPool2DBack           Op = 53
	OpUpscale              Op = 54
	OpPad                  Op = 55
	OpArange               Op = 56
	OpTimestepEmbedding    Op = 57
	OpArgsort              Op = 58
	OpLeakyRelu            Op = 59
	OpFlashAttnExt         Op = 60
	OpFlashAttnBack        Op = 61
	OpSSMConv              Op = 62
	OpSSMScan              Op = 63
	OpWinPart              Op = 64
	OpWinUnpart            Op = 65
	OpGetRelPos            Op = 66
	OpAddRelPos            Op = 67
	OpRWKVWKV6             Op = 68
	OpUnary                Op = 69
	OpMapUnary             Op = 70
	OpMapBinary            Op = 71
	OpMapCustom1F32        Op = 72
	OpMapCustom2F32        Op = 73
	OpMapCustom3F32        Op = 74
	OpMapCustom1           Op = 75
	OpMapCustom2           Op = 76
	OpMapCustom3           Op = 77
	OpCrossEntropyLoss     Op = 78
	OpCrossEntropyLossBack Op = 79
	OpOptStepAdamW         Op = 80
	OpCount                Op = 81
)

// Deprecated names of ops, kept for compatibility: the package spells
// initialisms and dimension suffixes as its methods do (MulMatID, Conv1D,
// Im2Col, RMSNorm, SSMConv, RWKVWKV6, OptStepAdamW).
const (
	// Deprecated: use OpConvTranspose1D.
	OpConvTranspose1d = OpConvTranspose1D
	// Deprecated: use OpConvTranspose2D.
	OpConvTranspose2d = OpConvTranspose2D
	// Deprecated: use OpIm2Col.
	OpIm2col = OpIm2Col
	// Deprecated: use OpIm2ColBack.
	OpIm2colBack = OpIm2ColBack
	// Deprecated: use OpMulMatID.
	OpMulMatId = OpMulMatID
	// Deprecated: use OpOptStepAdamW.
	OpOptStepAdamw = OpOptStepAdamW
	// Deprecated: use OpPool1D.
	OpPool1d = OpPool1D
	// Deprecated: use OpPool2D.
	OpPool2d = OpPool2D
	// Deprecated: use OpPool2DBack.
	OpPool2dBack = OpPool2DBack
	// Deprecated: use OpRMSNorm.
	OpRmsNorm = OpRMSNorm
	// Deprecated: use OpRMSNormBack.
	OpRmsNormBack = OpRMSNormBack
	// Deprecated: use OpRWKVWKV6.
	OpRwkvWkv6 = OpRWKVWKV6
	// Deprecated: use OpSSMConv.
	OpSsmConv = OpSSMConv
	// Deprecated: use OpSSMScan.
	OpSsmScan = OpSSMScan
)

// UnaryOp is an element-wise function of LM_GGML_OP_UNARY (lm_ggml_unary_op).
type UnaryOp int32

// Unary operations, in the order of the C enum.
const (
	UnaryAbs         UnaryOp = 0
	UnarySgn         UnaryOp = 1
	UnaryNeg         UnaryOp = 2
	UnaryStep        UnaryOp = 3
	UnaryTanh        UnaryOp = 4
	UnaryElu         UnaryOp = 5
	UnaryRelu        UnaryOp = 6
	UnarySigmoid     UnaryOp = 7
	UnaryGelu        UnaryOp = 8
	UnaryGeluQuick   UnaryOp = 9
	UnarySilu        UnaryOp = 10
	UnaryHardswish   UnaryOp = 11
	UnaryHardsigmoid UnaryOp = 12
	UnaryExp         UnaryOp = 13
	UnaryOpCount     UnaryOp = 14
)
