// Operations whose C signatures have many scalar parameters, exposed with
// option structs (one method per C function all the same): the rope family,
// im2col and the convolutions built on it, and pooling. Also the enum types
// of op arguments and the precision setters.

package ggml

/*
#include "glue.h"

GG_DEF(gg_t *, rope, (gg_c * ctx, gg_t * a, gg_t * b, int n_dims, int mode), (ctx, a, b, n_dims, mode))
GG_DEF(gg_t *, rope_inplace, (gg_c * ctx, gg_t * a, gg_t * b, int n_dims, int mode), (ctx, a, b, n_dims, mode))
GG_DEF(gg_t *, rope_ext, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c, int nd, int mode, int nco, float fb, float fs, float ef, float af, float bf, float bs),
    (ctx, a, b, c, nd, mode, nco, fb, fs, ef, af, bf, bs))
GG_DEF(gg_t *, rope_ext_inplace, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c, int nd, int mode, int nco, float fb, float fs, float ef, float af, float bf, float bs),
    (ctx, a, b, c, nd, mode, nco, fb, fs, ef, af, bf, bs))
GG_DEF(gg_t *, rope_back, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c, int nd, int mode, int nco, float fb, float fs, float ef, float af, float bf, float bs),
    (ctx, a, b, c, nd, mode, nco, fb, fs, ef, af, bf, bs))
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
GG_DEF(gg_t *, rope_custom, (gg_c * ctx, gg_t * a, gg_t * b, int nd, int mode, int nco, float fb, float fs, float ef, float af, float bf, float bs),
    (ctx, a, b, nd, mode, nco, fb, fs, ef, af, bf, bs))
GG_DEF(gg_t *, rope_custom_inplace, (gg_c * ctx, gg_t * a, gg_t * b, int nd, int mode, int nco, float fb, float fs, float ef, float af, float bf, float bs),
    (ctx, a, b, nd, mode, nco, fb, fs, ef, af, bf, bs))
GG_DEFV(rope_yarn_corr_dims, (int nd, int nco, float fb, float bf, float bs, float * dims), (nd, nco, fb, bf, bs, dims))

GG_DEF(gg_t *, im2col, (gg_c * ctx, gg_t * a, gg_t * b, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D, enum lm_ggml_type t),
    (ctx, a, b, s0, s1, p0, p1, d0, d1, is_2D, t))
GG_DEF(gg_t *, im2col_back, (gg_c * ctx, gg_t * a, gg_t * b, int64_t * ne, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D),
    (ctx, a, b, ne, s0, s1, p0, p1, d0, d1, is_2D))
GG_DEF(gg_t *, conv_depthwise_2d, (gg_c * ctx, gg_t * a, gg_t * b, int s0, int s1, int p0, int p1, int d0, int d1), (ctx, a, b, s0, s1, p0, p1, d0, d1))
GG_DEF(gg_t *, conv_1d, (gg_c * ctx, gg_t * a, gg_t * b, int s0, int p0, int d0), (ctx, a, b, s0, p0, d0))
GG_DEF(gg_t *, conv_1d_ph, (gg_c * ctx, gg_t * a, gg_t * b, int s, int d), (ctx, a, b, s, d))
GG_DEF(gg_t *, conv_transpose_1d, (gg_c * ctx, gg_t * a, gg_t * b, int s0, int p0, int d0), (ctx, a, b, s0, p0, d0))
GG_DEF(gg_t *, conv_2d, (gg_c * ctx, gg_t * a, gg_t * b, int s0, int s1, int p0, int p1, int d0, int d1), (ctx, a, b, s0, s1, p0, p1, d0, d1))
GG_DEF(gg_t *, conv_2d_sk_p0, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, conv_2d_s1_ph, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, conv_transpose_2d_p0, (gg_c * ctx, gg_t * a, gg_t * b, int stride), (ctx, a, b, stride))

GG_DEF(gg_t *, pool_1d, (gg_c * ctx, gg_t * a, enum lm_ggml_op_pool op, int k0, int s0, int p0), (ctx, a, op, k0, s0, p0))
GG_DEF(gg_t *, pool_2d, (gg_c * ctx, gg_t * a, enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1),
    (ctx, a, op, k0, k1, s0, s1, p0, p1))
GG_DEF(gg_t *, pool_2d_back, (gg_c * ctx, gg_t * a, gg_t * af, enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1),
    (ctx, a, af, op, k0, k1, s0, s1, p0, p1))

GG_DEFV(mul_mat_set_prec, (gg_t * a, enum lm_ggml_prec p), (a, p))
GG_DEFV(flash_attn_ext_set_prec, (gg_t * a, enum lm_ggml_prec p), (a, p))
GG_DEF(enum lm_ggml_prec, flash_attn_ext_get_prec, (const gg_t * a), (a))
*/
import "C"

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"
)

// needTensors panics with an *OpError naming op if a required operand is nil
// (the C constructors would dereference it).
func needTensors(op string, ts ...*Tensor) {
	for i, t := range ts {
		if t == nil {
			panic(&OpError{Op: op, Msg: fmt.Sprintf("tensor operand %d is nil", i+1)})
		}
	}
}

// build is the body of an op constructor: it checks that the required operands
// are not nil, runs call (which calls a gg_ wrapper with ce and the C
// arguments), panics with an *OpError naming op and describing the required
// operands (see operandError) if the core reported an assertion, and
// returns the result as a Tensor of ctx. Optional operands, which may be
// nil, are passed to the C function but not listed in required.
func (ctx *Context) build(op string, call func(ce *C.gg_err) *C.struct_lm_ggml_tensor, required ...*Tensor) *Tensor {
	return ctx.buildOpt(op, call, required)
}

// buildOpt is build for an op with optional operands after the required
// ones (nil when not given): its *OpError describes those given too.
func (ctx *Context) buildOpt(op string, call func(ce *C.gg_err) *C.struct_lm_ggml_tensor, required []*Tensor, optional ...*Tensor) *Tensor {
	needTensors(op, required...)
	ce := ctx.errBuf()
	res := call(ce)
	if ce.failed != 0 {
		panic(operandError(op, C.GoString(&ce.msg[0]), append(slices.Clone(required), optional...)))
	}
	return ctx.wrap(res)
}

// checkOperands is check for an op on operands: its *OpError describes
// them (see operandError).
func checkOperands(op string, e *C.gg_err, operands ...*Tensor) {
	if e.failed != 0 {
		panic(operandError(op, C.GoString(&e.msg[0]), operands))
	}
}

// operandError is the *OpError of op for the core's message msg: the
// operands' types and shapes (named as the op's parameters, see
// operandNames), then the rule that failed in words where opRules has it,
// else the core's condition, e.g.
//
//	MulMat: a is f32 [4, 3], b is f32 [5, 2]: rows of a and b must have the same length (4 ≠ 5)
//
// with the core's condition and place in Detail. Optional operands not
// given are nil in operands and left out.
func operandError(op, msg string, operands []*Tensor) *OpError {
	what, file, at, assertion := coreCheck(msg)
	words := what
	if assertion {
		words = what + " does not hold"
		if r := ruleFor(op, file, what); r != nil {
			words = sayRule(r, opnds{operandNames(op, len(operands)), operands}, what)
		}
	}
	detail := what
	if assertion {
		detail = what + " does not hold"
	}
	if at != "" {
		detail += " (" + at + ")"
	}
	names := operandNames(op, len(operands))
	var parts []string
	for i, t := range operands {
		if t != nil {
			parts = append(parts, fmt.Sprintf("%s is %s [%s]", names[i], t.Type(), shapeText(t)))
		}
	}
	if len(parts) > 0 {
		words = strings.Join(parts, ", ") + ": " + words
	}
	return &OpError{Op: op, Msg: words, Detail: detail, at: at}
}

// cint converts an int argument for a C int, panicking with an *OpError if
// it does not fit (a silently truncated count or index would compute
// something else).
func cint(op string, v int) C.int {
	if v < math.MinInt32 || v > math.MaxInt32 {
		panic(&OpError{Op: op, Msg: fmt.Sprintf("integer argument %d does not fit in 32 bits", v)})
	}
	return C.int(v)
}

// csize converts a byte count or offset, rejecting negative values.
func csize(op string, n int) C.size_t {
	if n < 0 {
		panic(&OpError{Op: op, Msg: fmt.Sprintf("negative byte size or offset %d", n)})
	}
	return C.size_t(n)
}

// SortOrder is the order of Argsort (lm_ggml_sort_order).
type SortOrder int32

// Sort orders.
const (
	SortAsc  SortOrder = 0
	SortDesc SortOrder = 1
)

// PoolOp is the reduction of a pooling op (lm_ggml_op_pool).
type PoolOp int32

// Pooling reductions.
const (
	PoolMax PoolOp = 0
	PoolAvg PoolOp = 1
)

// Prec is the accumulation precision requested for an op (lm_ggml_prec).
type Prec int32

// Precisions.
const (
	PrecDefault Prec = 0
	PrecF32     Prec = 1
)

// KQMaskPad is the padding of the query dimension of a FlashAttnExt mask.
const KQMaskPad = 32

// SetPrec requests the accumulation precision of t, which must be the result
// of MulMat or FlashAttnExt (otherwise it panics with an *OpError). It
// returns t.
func (t *Tensor) SetPrec(p Prec) *Tensor {
	var e C.gg_err
	switch t.Op() {
	case OpMulMat:
		C.gg_mul_mat_set_prec(&e, t.ptr(), C.enum_lm_ggml_prec(p))
	default:
		C.gg_flash_attn_ext_set_prec(&e, t.ptr(), C.enum_lm_ggml_prec(p))
	}
	check("SetPrec", &e)
	return t
}

// Prec returns the precision set on the FlashAttnExt result t (it panics
// with an *OpError for other ops).
func (t *Tensor) Prec() Prec {
	var e C.gg_err
	r := C.gg_flash_attn_ext_get_prec(&e, t.ptr())
	check("Prec", &e)
	return Prec(r)
}

// ---------------------------------------------------------------- rope

// Rope modes (bit flags of RopeParams.Mode).
const (
	RopeTypeNorm = 0
	RopeTypeNeox = int(C.LM_GGML_ROPE_TYPE_NEOX) // rotate pairs (i, i+nDims/2) instead of (2i, 2i+1)
)

// RopeParams are the scalar parameters of the rope family (the C argument
// list from n_dims to beta_slow).
type RopeParams struct {
	NDims    int // number of leading elements of each row that are rotated (even)
	Mode     int // RopeTypeNorm or RopeTypeNeox
	NCtxOrig int // training context length, for YaRN (ExtFactor != 0)

	FreqBase   float32 // theta_i = pos * FreqBase^(-2i/NDims)
	FreqScale  float32 // position interpolation factor
	ExtFactor  float32 // YaRN extrapolation mix (0: off)
	AttnFactor float32 // magnitude scale
	BetaFast   float32 // YaRN correction range
	BetaSlow   float32
}

// DefaultRopeParams returns the parameters that Rope uses: NCtxOrig 0,
// FreqBase 10000, FreqScale 1, ExtFactor 0, AttnFactor 1, BetaFast 32,
// BetaSlow 1.
func DefaultRopeParams(nDims, mode int) RopeParams {
	return RopeParams{NDims: nDims, Mode: mode, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
}

// Rope rotates pairs of elements of a [ne0, nHead, nTokens, ne3] (f32 or
// f16) by position-dependent angles; b holds the i32 positions [nTokens]
// (a.ne2). nDims <= ne0; the elements past nDims are copied. Same shape and
// type as a. It equals RopeExt with DefaultRopeParams and no freq factors.
func (ctx *Context) Rope(a, b *Tensor, nDims, mode int) *Tensor {
	return ctx.build("Rope", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rope(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("Rope", nDims), cint("Rope", mode))
	}, a, b)
}

// RopeInplace is Rope written into a.
func (ctx *Context) RopeInplace(a, b *Tensor, nDims, mode int) *Tensor {
	return ctx.build("RopeInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rope_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("RopeInplace", nDims), cint("RopeInplace", mode))
	}, a, b)
}

// RopeExt is Rope with explicit parameters (YaRN context extension) and
// optional per-dimension frequency divisors freqFactors (f32 [NDims/2], or
// nil).
func (ctx *Context) RopeExt(a, b, freqFactors *Tensor, p RopeParams) *Tensor {
	return ctx.buildOpt("RopeExt", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rope_ext(ce, ctx.ptr(), a.use(ctx), b.use(ctx), freqFactors.use(ctx), cint("RopeExt", p.NDims), cint("RopeExt", p.Mode), cint("RopeExt", p.NCtxOrig),
			C.float(p.FreqBase), C.float(p.FreqScale), C.float(p.ExtFactor), C.float(p.AttnFactor), C.float(p.BetaFast), C.float(p.BetaSlow))
	}, []*Tensor{a, b}, freqFactors)
}

// RopeExtInplace is RopeExt written into a.
func (ctx *Context) RopeExtInplace(a, b, freqFactors *Tensor, p RopeParams) *Tensor {
	return ctx.buildOpt("RopeExtInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rope_ext_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx), freqFactors.use(ctx), cint("RopeExtInplace", p.NDims), cint("RopeExtInplace", p.Mode), cint("RopeExtInplace", p.NCtxOrig),
			C.float(p.FreqBase), C.float(p.FreqScale), C.float(p.ExtFactor), C.float(p.AttnFactor), C.float(p.BetaFast), C.float(p.BetaSlow))
	}, []*Tensor{a, b}, freqFactors)
}

// RopeCustom is RopeExt without freq factors (deprecated in the C API).
func (ctx *Context) RopeCustom(a, b *Tensor, p RopeParams) *Tensor {
	return ctx.build("RopeCustom", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rope_custom(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("RopeCustom", p.NDims), cint("RopeCustom", p.Mode), cint("RopeCustom", p.NCtxOrig),
			C.float(p.FreqBase), C.float(p.FreqScale), C.float(p.ExtFactor), C.float(p.AttnFactor), C.float(p.BetaFast), C.float(p.BetaSlow))
	}, a, b)
}

// RopeCustomInplace is RopeCustom written into a.
func (ctx *Context) RopeCustomInplace(a, b *Tensor, p RopeParams) *Tensor {
	return ctx.build("RopeCustomInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rope_custom_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("RopeCustomInplace", p.NDims), cint("RopeCustomInplace", p.Mode), cint("RopeCustomInplace", p.NCtxOrig),
			C.float(p.FreqBase), C.float(p.FreqScale), C.float(p.ExtFactor), C.float(p.AttnFactor), C.float(p.BetaFast), C.float(p.BetaSlow))
	}, a, b)
}

// RopeBack is the gradient of RopeExt: a is the output gradient (shape of
// the rope result), b the positions, freqFactors as for RopeExt (or nil). It
// rotates by the opposite angles; same shape as a.
func (ctx *Context) RopeBack(a, b, freqFactors *Tensor, p RopeParams) *Tensor {
	return ctx.build("RopeBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rope_back(ce, ctx.ptr(), a.use(ctx), b.use(ctx), freqFactors.use(ctx), cint("RopeBack", p.NDims), cint("RopeBack", p.Mode), cint("RopeBack", p.NCtxOrig),
			C.float(p.FreqBase), C.float(p.FreqScale), C.float(p.ExtFactor), C.float(p.AttnFactor), C.float(p.BetaFast), C.float(p.BetaSlow))
	}, a, b)
}

// RopeYarnCorrDims returns the first and last rotated dimension that YaRN
// corrects for the given parameters (lm_ggml_rope_yarn_corr_dims).
func RopeYarnCorrDims(nDims, nCtxOrig int, freqBase, betaFast, betaSlow float32) [2]float32 {
	dims := (*[2]C.float)(C.malloc(C.size_t(unsafe.Sizeof([2]C.float{}))))
	defer C.free(unsafe.Pointer(dims))
	var e C.gg_err
	C.gg_rope_yarn_corr_dims(&e, cint("RopeYarnCorrDims", nDims), cint("RopeYarnCorrDims", nCtxOrig), C.float(freqBase), C.float(betaFast), C.float(betaSlow), &dims[0])
	check("RopeYarnCorrDims", &e)
	return [2]float32{float32(dims[0]), float32(dims[1])}
}

// ---------------------------------------------------------------- im2col and convolutions

// Conv2DParams are stride (S), padding (P) and dilation (D) along dimension
// 0 (width) and 1 (height). 1-D forms use only S0, P0, D0.
type Conv2DParams struct {
	S0, S1 int
	P0, P1 int
	D0, D1 int
}

// convOut is the output length of a convolution (for documentation):
// (in + 2p - d*(k-1) - 1)/s + 1.

// Im2Col unfolds the input b for a convolution with kernel a (only a's shape
// is used). 2-D (is2D): a [KW, KH, Cin, Cout], b [W, H, Cin, N] ->
// dstType [Cin*KH*KW, OW, OH, N]. 1-D: a [K, Cin, Cout], b [L, Cin, N] ->
// dstType [Cin*K, OL, N]. Output sizes are (in + 2p - d*(k-1) - 1)/s + 1.
// dstType is F32 or F16.
func (ctx *Context) Im2Col(a, b *Tensor, p Conv2DParams, is2D bool, dstType Type) *Tensor {
	return ctx.build("Im2Col", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_im2col(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("Im2Col", p.S0), cint("Im2Col", p.S1), cint("Im2Col", p.P0), cint("Im2Col", p.P1),
			cint("Im2Col", p.D0), cint("Im2Col", p.D1), C.bool(is2D), C.enum_lm_ggml_type(dstType))
	}, a, b)
}

// Im2ColBack is the gradient of Im2Col: a is the kernel (only its shape is
// used), b the gradient of the Im2Col result (f32 or f16) and ne the shape of
// Im2Col's input b. The columns are folded back (overlaps summed) into f32 ne.
func (ctx *Context) Im2ColBack(a, b *Tensor, ne [MaxDims]int, p Conv2DParams, is2D bool) *Tensor {
	needTensors("Im2ColBack", a, b)
	cne := (*[MaxDims]C.int64_t)(C.malloc(C.size_t(unsafe.Sizeof([MaxDims]C.int64_t{}))))
	defer C.free(unsafe.Pointer(cne))
	for i, n := range ne {
		cne[i] = C.int64_t(n)
	}
	var e C.gg_err
	r := C.gg_im2col_back(&e, ctx.ptr(), a.use(ctx), b.use(ctx), &cne[0], cint("Im2ColBack", p.S0), cint("Im2ColBack", p.S1), cint("Im2ColBack", p.P0), cint("Im2ColBack", p.P1),
		cint("Im2ColBack", p.D0), cint("Im2ColBack", p.D1), C.bool(is2D))
	check("Im2ColBack", &e)
	return ctx.wrap(r)
}

// ConvDepthwise2D convolves each channel of b [W, H, C, N] with its own
// kernel a [KW, KH, 1, C] -> [OW, OH, C, N] (through Im2Col and MulMat).
func (ctx *Context) ConvDepthwise2D(a, b *Tensor, p Conv2DParams) *Tensor {
	return ctx.build("ConvDepthwise2D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_conv_depthwise_2d(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("ConvDepthwise2D", p.S0), cint("ConvDepthwise2D", p.S1), cint("ConvDepthwise2D", p.P0), cint("ConvDepthwise2D", p.P1),
			cint("ConvDepthwise2D", p.D0), cint("ConvDepthwise2D", p.D1))
	}, a, b)
}

// Conv1D convolves b [L, Cin, N] with the kernel a [K, Cin, Cout] (f16 or
// f32) with stride s0, padding p0 and dilation d0 -> f32 [OL, Cout, N]
// (through Im2Col and MulMat).
func (ctx *Context) Conv1D(a, b *Tensor, s0, p0, d0 int) *Tensor {
	return ctx.build("Conv1D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_conv_1d(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("Conv1D", s0), cint("Conv1D", p0), cint("Conv1D", d0))
	}, a, b)
}

// Conv1DPh is Conv1D with "half" padding K/2.
func (ctx *Context) Conv1DPh(a, b *Tensor, s, d int) *Tensor {
	return ctx.build("Conv1DPh", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_conv_1d_ph(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("Conv1DPh", s), cint("Conv1DPh", d))
	}, a, b)
}

// ConvTranspose1D is the transposed 1-D convolution of b [L, Cin] with the
// kernel a [K, Cout, Cin] -> f32 [(L-1)*s0 + K, Cout]. As in ggml,
// p0 must be 0 and d0 must be 1.
func (ctx *Context) ConvTranspose1D(a, b *Tensor, s0, p0, d0 int) *Tensor {
	return ctx.build("ConvTranspose1D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_conv_transpose_1d(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("ConvTranspose1D", s0), cint("ConvTranspose1D", p0), cint("ConvTranspose1D", d0))
	}, a, b)
}

// Conv2D convolves b [W, H, Cin, N] with the kernel a [KW, KH, Cin, Cout]
// -> f32 [OW, OH, Cout, N] (through Im2Col and MulMat).
func (ctx *Context) Conv2D(a, b *Tensor, p Conv2DParams) *Tensor {
	return ctx.build("Conv2D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_conv_2d(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("Conv2D", p.S0), cint("Conv2D", p.S1), cint("Conv2D", p.P0), cint("Conv2D", p.P1),
			cint("Conv2D", p.D0), cint("Conv2D", p.D1))
	}, a, b)
}

// Conv2DSkP0 is Conv2D with stride equal to the kernel size and no padding
// (patch embedding).
func (ctx *Context) Conv2DSkP0(a, b *Tensor) *Tensor {
	return ctx.build("Conv2DSkP0", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_conv_2d_sk_p0(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// Conv2DS1Ph is Conv2D with stride 1 and half padding (KW/2, KH/2).
func (ctx *Context) Conv2DS1Ph(a, b *Tensor) *Tensor {
	return ctx.build("Conv2DS1Ph", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_conv_2d_s1_ph(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// ConvTranspose2DP0 is the transposed 2-D convolution without padding of b
// [W, H, Cin, N] with the kernel a [KW, KH, Cout, Cin] -> f32
// [(W-1)*stride + KW, (H-1)*stride + KH, Cout, N].
func (ctx *Context) ConvTranspose2DP0(a, b *Tensor, stride int) *Tensor {
	return ctx.build("ConvTranspose2DP0", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_conv_transpose_2d_p0(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("ConvTranspose2DP0", stride))
	}, a, b)
}

// ---------------------------------------------------------------- pooling

// Pool1D pools each row of a with window k0, stride s0 and padding p0:
// [ne0, ne1, ne2, ne3] -> f32 [(ne0 + 2*p0 - k0)/s0 + 1, ne1, ne2, ne3].
func (ctx *Context) Pool1D(a *Tensor, op PoolOp, k0, s0, p0 int) *Tensor {
	return ctx.build("Pool1D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_pool_1d(ce, ctx.ptr(), a.use(ctx), C.enum_lm_ggml_op_pool(op), cint("Pool1D", k0), cint("Pool1D", s0), cint("Pool1D", p0))
	}, a)
}

// Pool2DParams are window size (K), stride (S) and padding (P) along
// dimensions 0 and 1.
type Pool2DParams struct {
	K0, K1 int
	S0, S1 int
	P0, P1 float32
}

// Pool2D pools windows of dimensions 0 and 1 of a: [W, H, C, N] -> f32
// [(W + 2*P0 - K0)/S0 + 1, (H + 2*P1 - K1)/S1 + 1, C, N].
func (ctx *Context) Pool2D(a *Tensor, op PoolOp, p Pool2DParams) *Tensor {
	return ctx.build("Pool2D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_pool_2d(ce, ctx.ptr(), a.use(ctx), C.enum_lm_ggml_op_pool(op), cint("Pool2D", p.K0), cint("Pool2D", p.K1), cint("Pool2D", p.S0), cint("Pool2D", p.S1),
			C.float(p.P0), C.float(p.P1))
	}, a)
}

// Pool2DBack is the gradient of Pool2D: a is the output gradient (shape of
// the Pool2D result) and af the forward input; the result has af's shape.
func (ctx *Context) Pool2DBack(a, af *Tensor, op PoolOp, p Pool2DParams) *Tensor {
	return ctx.build("Pool2DBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_pool_2d_back(ce, ctx.ptr(), a.use(ctx), af.use(ctx), C.enum_lm_ggml_op_pool(op), cint("Pool2DBack", p.K0), cint("Pool2DBack", p.K1), cint("Pool2DBack", p.S0), cint("Pool2DBack", p.S1),
			C.float(p.P0), C.float(p.P1))
	}, a, af)
}
