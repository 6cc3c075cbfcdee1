// One method per C op constructor. Those of one tensor or two go through the
// lists GG_OPS1/GG_OPS2 below (op1, op2); the others have a gg_ wrapper each
// (GG_DEF). The interpreter table in parity_test.go maps the C names to
// these methods.
//
// Element-wise, reduction, shape/copy, normalization and matrix operations.
// Every method builds a graph node (nothing is computed until Graph.Compute)
// and panics with an *OpError if the operands violate the shape contract in
// its doc comment. "Same shape" means all four ne are equal; b "broadcasts"
// over a when every ne[i] of a is a multiple of b's ne[i].
// Inplace variants return a view of their first operand that the computation
// overwrites.

package ggml

/*
#include "glue.h"

// The constructors that take one tensor, and those that take two, called by
// index: gg_op1(e, GG_OP1_<name>, ctx, a) is lm_ggml_<name>(ctx, a). One cgo
// entry for each list instead of one per constructor; a constructor of that
// form is a word here and a one-line Go method.
#define GG_OPS1(X) \
    X(dup) X(dup_inplace) X(sqr) X(sqr_inplace) X(sqrt) X(sqrt_inplace) X(log) X(log_inplace) X(sin) \
    X(sin_inplace) X(cos) X(cos_inplace) X(abs) X(abs_inplace) X(sgn) X(sgn_inplace) X(neg) X(neg_inplace) \
    X(step) X(step_inplace) X(tanh) X(tanh_inplace) X(elu) X(elu_inplace) X(relu) X(relu_inplace) X(sigmoid) \
    X(sigmoid_inplace) X(gelu) X(gelu_inplace) X(gelu_quick) X(gelu_quick_inplace) X(silu) X(silu_inplace) \
    X(hardswish) X(hardsigmoid) X(exp) X(exp_inplace) X(sum) X(sum_rows) X(mean) X(argmax) X(cont) X(diag) \
    X(soft_max) X(soft_max_inplace)
#define GG_OPS2(X) \
    X(add) X(add_inplace) X(add1) X(add1_inplace) X(sub) X(sub_inplace) X(mul) X(mul_inplace) X(div) \
    X(div_inplace) X(silu_back) X(count_equal) X(repeat) X(repeat_back) X(mul_mat) X(out_prod) X(cpy) \
    X(get_rows) X(soft_max_back) X(soft_max_back_inplace)
#define GG_OP1_ENUM(n) GG_OP1_##n,
#define GG_OP2_ENUM(n) GG_OP2_##n,
#define GG_OP_FN(n) lm_ggml_##n,
enum { GG_OPS1(GG_OP1_ENUM) GG_OP1_COUNT };
enum { GG_OPS2(GG_OP2_ENUM) GG_OP2_COUNT };
static inline gg_t * gg_op1_call(int i, gg_c * ctx, gg_t * a) {
    static gg_t * (*const fns[])(gg_c *, gg_t *) = { GG_OPS1(GG_OP_FN) };
    return fns[i](ctx, a);
}
static inline gg_t * gg_op2_call(int i, gg_c * ctx, gg_t * a, gg_t * b) {
    static gg_t * (*const fns[])(gg_c *, gg_t *, gg_t *) = { GG_OPS2(GG_OP_FN) };
    return fns[i](ctx, a, b);
}
GG_WRAP(gg_t *, op1, (int i, gg_c * ctx, gg_t * a), gg_op1_call(i, ctx, a))
GG_WRAP(gg_t *, op2, (int i, gg_c * ctx, gg_t * a, gg_t * b), gg_op2_call(i, ctx, a, b))

GG_DEF(gg_t *, add_cast, (gg_c * ctx, gg_t * a, gg_t * b, enum lm_ggml_type typ), (ctx, a, b, typ))
GG_DEF(gg_t *, acc, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t nb2, size_t nb3, size_t offset), (ctx, a, b, nb1, nb2, nb3, offset))
GG_DEF(gg_t *, acc_inplace, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t nb2, size_t nb3, size_t offset), (ctx, a, b, nb1, nb2, nb3, offset))
GG_DEF(gg_t *, leaky_relu, (gg_c * ctx, gg_t * a, float negativeSlope, bool inplace), (ctx, a, negativeSlope, inplace))
GG_DEF(gg_t *, unary, (gg_c * ctx, gg_t * a, enum lm_ggml_unary_op op), (ctx, a, op))
GG_DEF(gg_t *, unary_inplace, (gg_c * ctx, gg_t * a, enum lm_ggml_unary_op op), (ctx, a, op))
GG_DEF(gg_t *, scale, (gg_c * ctx, gg_t * a, float s), (ctx, a, s))
GG_DEF(gg_t *, scale_inplace, (gg_c * ctx, gg_t * a, float s), (ctx, a, s))
GG_DEF(gg_t *, clamp, (gg_c * ctx, gg_t * a, float lo, float hi), (ctx, a, lo, hi))
GG_DEF(gg_t *, concat, (gg_c * ctx, gg_t * a, gg_t * b, int dim), (ctx, a, b, dim))
GG_DEF(gg_t *, norm, (gg_c * ctx, gg_t * a, float eps), (ctx, a, eps))
GG_DEF(gg_t *, norm_inplace, (gg_c * ctx, gg_t * a, float eps), (ctx, a, eps))
GG_DEF(gg_t *, rms_norm, (gg_c * ctx, gg_t * a, float eps), (ctx, a, eps))
GG_DEF(gg_t *, rms_norm_inplace, (gg_c * ctx, gg_t * a, float eps), (ctx, a, eps))
GG_DEF(gg_t *, rms_norm_back, (gg_c * ctx, gg_t * a, gg_t * b, float eps), (ctx, a, b, eps))
GG_DEF(gg_t *, group_norm, (gg_c * ctx, gg_t * a, int nGroups, float eps), (ctx, a, nGroups, eps))
GG_DEF(gg_t *, group_norm_inplace, (gg_c * ctx, gg_t * a, int nGroups, float eps), (ctx, a, nGroups, eps))
GG_DEF(gg_t *, mul_mat_id, (gg_c * ctx, gg_t * as, gg_t * b, gg_t * ids), (ctx, as, b, ids))
GG_DEF(gg_t *, set, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t nb2, size_t nb3, size_t offset), (ctx, a, b, nb1, nb2, nb3, offset))
GG_DEF(gg_t *, set_inplace, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t nb2, size_t nb3, size_t offset), (ctx, a, b, nb1, nb2, nb3, offset))
GG_DEF(gg_t *, set_1d, (gg_c * ctx, gg_t * a, gg_t * b, size_t offset), (ctx, a, b, offset))
GG_DEF(gg_t *, set_1d_inplace, (gg_c * ctx, gg_t * a, gg_t * b, size_t offset), (ctx, a, b, offset))
GG_DEF(gg_t *, set_2d, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t offset), (ctx, a, b, nb1, offset))
GG_DEF(gg_t *, set_2d_inplace, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t offset), (ctx, a, b, nb1, offset))
GG_DEF(gg_t *, cast, (gg_c * ctx, gg_t * a, enum lm_ggml_type typ), (ctx, a, typ))
GG_DEF(gg_t *, cont_1d, (gg_c * ctx, gg_t * a, int64_t ne0), (ctx, a, ne0))
GG_DEF(gg_t *, cont_2d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1), (ctx, a, ne0, ne1))
GG_DEF(gg_t *, cont_3d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, int64_t ne2), (ctx, a, ne0, ne1, ne2))
GG_DEF(gg_t *, cont_4d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3), (ctx, a, ne0, ne1, ne2, ne3))
GG_DEF(gg_t *, get_rows_back, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c), (ctx, a, b, c))
GG_DEF(gg_t *, diag_mask_inf, (gg_c * ctx, gg_t * a, int nPast), (ctx, a, nPast))
GG_DEF(gg_t *, diag_mask_inf_inplace, (gg_c * ctx, gg_t * a, int nPast), (ctx, a, nPast))
GG_DEF(gg_t *, diag_mask_zero, (gg_c * ctx, gg_t * a, int nPast), (ctx, a, nPast))
GG_DEF(gg_t *, diag_mask_zero_inplace, (gg_c * ctx, gg_t * a, int nPast), (ctx, a, nPast))
GG_DEF(gg_t *, soft_max_ext, (gg_c * ctx, gg_t * a, gg_t * mask, float scale, float maxBias), (ctx, a, mask, scale, maxBias))
*/
import "C"

// op1 builds the node of a constructor of one tensor (i: C.GG_OP1_<name>,
// the list above); op names the method in an *OpError.
func (ctx *Context) op1(op string, i C.int, a *Tensor) *Tensor {
	return ctx.build(op, func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_op1(ce, i, ctx.ptr(), a.use(ctx))
	}, a)
}

// op2 is op1 for the constructors of two tensors (C.GG_OP2_<name>).
func (ctx *Context) op2(op string, i C.int, a, b *Tensor) *Tensor {
	return ctx.build(op, func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_op2(ce, i, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// ---------------------------------------------------------------- element-wise binary

// Dup returns a copy of a (same shape and type, contiguous).
func (ctx *Context) Dup(a *Tensor) *Tensor {
	return ctx.op1("Dup", C.GG_OP1_dup, a)
}

// DupInplace is Dup computed into a view of a.
func (ctx *Context) DupInplace(a *Tensor) *Tensor {
	return ctx.op1("DupInplace", C.GG_OP1_dup_inplace, a)
}

// Add returns a + b with a's shape and type; b broadcasts over a. a may be
// f32, f16, bf16 or quantized (then b is f32), b f32, f16 or bf16.
func (ctx *Context) Add(a, b *Tensor) *Tensor {
	return ctx.op2("Add", C.GG_OP2_add, a, b)
}

// AddInplace is Add written into a.
func (ctx *Context) AddInplace(a, b *Tensor) *Tensor {
	return ctx.op2("AddInplace", C.GG_OP2_add_inplace, a, b)
}

// AddCast returns a + b (b broadcasts over a) with a's shape and
// element type typ; as in ggml, a must be f16, bf16 or quantized (use
// Add for f32).
func (ctx *Context) AddCast(a, b *Tensor, typ Type) *Tensor {
	return ctx.build("AddCast", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_add_cast(ce, ctx.ptr(), a.use(ctx), b.use(ctx), C.enum_lm_ggml_type(typ))
	}, a, b)
}

// Add1 adds the scalar b (one element) to every element of a.
func (ctx *Context) Add1(a, b *Tensor) *Tensor {
	return ctx.op2("Add1", C.GG_OP2_add1, a, b)
}

// Add1Inplace is Add1 written into a.
func (ctx *Context) Add1Inplace(a, b *Tensor) *Tensor {
	return ctx.op2("Add1Inplace", C.GG_OP2_add1_inplace, a, b)
}

// Acc returns a copy of a in which the view of shape b.ne with byte strides
// nb1, nb2, nb3 starting at byte offset has b added to it. a and b are f32 and
// contiguous; the view must lie within a.
func (ctx *Context) Acc(a, b *Tensor, nb1, nb2, nb3, offset int) *Tensor {
	return ctx.build("Acc", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_acc(ce, ctx.ptr(), a.use(ctx), b.use(ctx), csize("Acc", nb1), csize("Acc", nb2), csize("Acc", nb3), csize("Acc", offset))
	}, a, b)
}

// AccInplace is Acc written into a.
func (ctx *Context) AccInplace(a, b *Tensor, nb1, nb2, nb3, offset int) *Tensor {
	return ctx.build("AccInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_acc_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx), csize("AccInplace", nb1), csize("AccInplace", nb2), csize("AccInplace", nb3), csize("AccInplace", offset))
	}, a, b)
}

// Sub returns a - b with a's shape; b broadcasts over a.
func (ctx *Context) Sub(a, b *Tensor) *Tensor {
	return ctx.op2("Sub", C.GG_OP2_sub, a, b)
}

// SubInplace is Sub written into a.
func (ctx *Context) SubInplace(a, b *Tensor) *Tensor {
	return ctx.op2("SubInplace", C.GG_OP2_sub_inplace, a, b)
}

// Mul returns a * b element-wise with a's shape; b broadcasts over a.
func (ctx *Context) Mul(a, b *Tensor) *Tensor {
	return ctx.op2("Mul", C.GG_OP2_mul, a, b)
}

// MulInplace is Mul written into a.
func (ctx *Context) MulInplace(a, b *Tensor) *Tensor {
	return ctx.op2("MulInplace", C.GG_OP2_mul_inplace, a, b)
}

// Div returns a / b element-wise with a's shape; b broadcasts over a.
func (ctx *Context) Div(a, b *Tensor) *Tensor {
	return ctx.op2("Div", C.GG_OP2_div, a, b)
}

// DivInplace is Div written into a.
func (ctx *Context) DivInplace(a, b *Tensor) *Tensor {
	return ctx.op2("DivInplace", C.GG_OP2_div_inplace, a, b)
}

// ---------------------------------------------------------------- element-wise unary (same shape and type as a)

// Sqr returns a*a element-wise.
func (ctx *Context) Sqr(a *Tensor) *Tensor {
	return ctx.op1("Sqr", C.GG_OP1_sqr, a)
}

// SqrInplace is Sqr written into a.
func (ctx *Context) SqrInplace(a *Tensor) *Tensor {
	return ctx.op1("SqrInplace", C.GG_OP1_sqr_inplace, a)
}

// Sqrt returns the element-wise square root of a.
func (ctx *Context) Sqrt(a *Tensor) *Tensor {
	return ctx.op1("Sqrt", C.GG_OP1_sqrt, a)
}

// SqrtInplace is Sqrt written into a.
func (ctx *Context) SqrtInplace(a *Tensor) *Tensor {
	return ctx.op1("SqrtInplace", C.GG_OP1_sqrt_inplace, a)
}

// Log returns the element-wise natural logarithm of a.
func (ctx *Context) Log(a *Tensor) *Tensor {
	return ctx.op1("Log", C.GG_OP1_log, a)
}

// LogInplace is Log written into a.
func (ctx *Context) LogInplace(a *Tensor) *Tensor {
	return ctx.op1("LogInplace", C.GG_OP1_log_inplace, a)
}

// Sin returns the element-wise sine of a.
func (ctx *Context) Sin(a *Tensor) *Tensor {
	return ctx.op1("Sin", C.GG_OP1_sin, a)
}

// SinInplace is Sin written into a.
func (ctx *Context) SinInplace(a *Tensor) *Tensor {
	return ctx.op1("SinInplace", C.GG_OP1_sin_inplace, a)
}

// Cos returns the element-wise cosine of a.
func (ctx *Context) Cos(a *Tensor) *Tensor {
	return ctx.op1("Cos", C.GG_OP1_cos, a)
}

// CosInplace is Cos written into a.
func (ctx *Context) CosInplace(a *Tensor) *Tensor {
	return ctx.op1("CosInplace", C.GG_OP1_cos_inplace, a)
}

// Abs returns |a| element-wise (UnaryAbs).
func (ctx *Context) Abs(a *Tensor) *Tensor {
	return ctx.op1("Abs", C.GG_OP1_abs, a)
}

// AbsInplace is Abs written into a.
func (ctx *Context) AbsInplace(a *Tensor) *Tensor {
	return ctx.op1("AbsInplace", C.GG_OP1_abs_inplace, a)
}

// Sgn returns the sign of a (-1, 0 or 1) element-wise.
func (ctx *Context) Sgn(a *Tensor) *Tensor {
	return ctx.op1("Sgn", C.GG_OP1_sgn, a)
}

// SgnInplace is Sgn written into a.
func (ctx *Context) SgnInplace(a *Tensor) *Tensor {
	return ctx.op1("SgnInplace", C.GG_OP1_sgn_inplace, a)
}

// Neg returns -a.
func (ctx *Context) Neg(a *Tensor) *Tensor {
	return ctx.op1("Neg", C.GG_OP1_neg, a)
}

// NegInplace is Neg written into a.
func (ctx *Context) NegInplace(a *Tensor) *Tensor {
	return ctx.op1("NegInplace", C.GG_OP1_neg_inplace, a)
}

// Step returns 1 where a > 0, else 0.
func (ctx *Context) Step(a *Tensor) *Tensor {
	return ctx.op1("Step", C.GG_OP1_step, a)
}

// StepInplace is Step written into a.
func (ctx *Context) StepInplace(a *Tensor) *Tensor {
	return ctx.op1("StepInplace", C.GG_OP1_step_inplace, a)
}

// Tanh returns the element-wise hyperbolic tangent of a.
func (ctx *Context) Tanh(a *Tensor) *Tensor {
	return ctx.op1("Tanh", C.GG_OP1_tanh, a)
}

// TanhInplace is Tanh written into a.
func (ctx *Context) TanhInplace(a *Tensor) *Tensor {
	return ctx.op1("TanhInplace", C.GG_OP1_tanh_inplace, a)
}

// Elu returns a where a > 0, else exp(a)-1.
func (ctx *Context) Elu(a *Tensor) *Tensor {
	return ctx.op1("Elu", C.GG_OP1_elu, a)
}

// EluInplace is Elu written into a.
func (ctx *Context) EluInplace(a *Tensor) *Tensor {
	return ctx.op1("EluInplace", C.GG_OP1_elu_inplace, a)
}

// Relu returns max(a, 0).
func (ctx *Context) Relu(a *Tensor) *Tensor {
	return ctx.op1("Relu", C.GG_OP1_relu, a)
}

// ReluInplace is Relu written into a.
func (ctx *Context) ReluInplace(a *Tensor) *Tensor {
	return ctx.op1("ReluInplace", C.GG_OP1_relu_inplace, a)
}

// LeakyRelu returns a where a > 0, else a*negativeSlope; with inplace
// the result is a view of a.
func (ctx *Context) LeakyRelu(a *Tensor, negativeSlope float32, inplace bool) *Tensor {
	return ctx.build("LeakyRelu", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_leaky_relu(ce, ctx.ptr(), a.use(ctx), C.float(negativeSlope), C.bool(inplace))
	}, a)
}

// Sigmoid returns 1/(1+exp(-a)).
func (ctx *Context) Sigmoid(a *Tensor) *Tensor {
	return ctx.op1("Sigmoid", C.GG_OP1_sigmoid, a)
}

// SigmoidInplace is Sigmoid written into a.
func (ctx *Context) SigmoidInplace(a *Tensor) *Tensor {
	return ctx.op1("SigmoidInplace", C.GG_OP1_sigmoid_inplace, a)
}

// Gelu returns the tanh approximation of GELU of a.
func (ctx *Context) Gelu(a *Tensor) *Tensor {
	return ctx.op1("Gelu", C.GG_OP1_gelu, a)
}

// GeluInplace is Gelu written into a.
func (ctx *Context) GeluInplace(a *Tensor) *Tensor {
	return ctx.op1("GeluInplace", C.GG_OP1_gelu_inplace, a)
}

// GeluQuick returns a*sigmoid(1.702*a).
func (ctx *Context) GeluQuick(a *Tensor) *Tensor {
	return ctx.op1("GeluQuick", C.GG_OP1_gelu_quick, a)
}

// GeluQuickInplace is GeluQuick written into a.
func (ctx *Context) GeluQuickInplace(a *Tensor) *Tensor {
	return ctx.op1("GeluQuickInplace", C.GG_OP1_gelu_quick_inplace, a)
}

// Silu returns a*sigmoid(a).
func (ctx *Context) Silu(a *Tensor) *Tensor {
	return ctx.op1("Silu", C.GG_OP1_silu, a)
}

// SiluInplace is Silu written into a.
func (ctx *Context) SiluInplace(a *Tensor) *Tensor {
	return ctx.op1("SiluInplace", C.GG_OP1_silu_inplace, a)
}

// SiluBack returns the gradient of Silu at a (x) given the output
// gradient b (dy), same shape.
func (ctx *Context) SiluBack(a, b *Tensor) *Tensor {
	return ctx.op2("SiluBack", C.GG_OP2_silu_back, a, b)
}

// Hardswish returns a*min(1, max(0, (a+3)/6)).
func (ctx *Context) Hardswish(a *Tensor) *Tensor {
	return ctx.op1("Hardswish", C.GG_OP1_hardswish, a)
}

// Hardsigmoid returns min(1, max(0, (a+3)/6)).
func (ctx *Context) Hardsigmoid(a *Tensor) *Tensor {
	return ctx.op1("Hardsigmoid", C.GG_OP1_hardsigmoid, a)
}

// Exp returns exp(a) element-wise.
func (ctx *Context) Exp(a *Tensor) *Tensor {
	return ctx.op1("Exp", C.GG_OP1_exp, a)
}

// ExpInplace is Exp written into a.
func (ctx *Context) ExpInplace(a *Tensor) *Tensor {
	return ctx.op1("ExpInplace", C.GG_OP1_exp_inplace, a)
}

// Unary applies the element-wise function op to a (same shape and type).
// a must be contiguous in dimension 0 (f32, or f16 where ggml allows it).
func (ctx *Context) Unary(a *Tensor, op UnaryOp) *Tensor {
	return ctx.build("Unary", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_unary(ce, ctx.ptr(), a.use(ctx), C.enum_lm_ggml_unary_op(op))
	}, a)
}

// UnaryInplace is Unary written into a.
func (ctx *Context) UnaryInplace(a *Tensor, op UnaryOp) *Tensor {
	return ctx.build("UnaryInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_unary_inplace(ce, ctx.ptr(), a.use(ctx), C.enum_lm_ggml_unary_op(op))
	}, a)
}

// Scale returns a*s. a is f32.
func (ctx *Context) Scale(a *Tensor, s float32) *Tensor {
	return ctx.build("Scale", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_scale(ce, ctx.ptr(), a.use(ctx), C.float(s))
	}, a)
}

// ScaleInplace is Scale written into a.
func (ctx *Context) ScaleInplace(a *Tensor, s float32) *Tensor {
	return ctx.build("ScaleInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_scale_inplace(ce, ctx.ptr(), a.use(ctx), C.float(s))
	}, a)
}

// Clamp returns a limited to [lo, hi] (as a view of a, as in ggml).
func (ctx *Context) Clamp(a *Tensor, lo, hi float32) *Tensor {
	return ctx.build("Clamp", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_clamp(ce, ctx.ptr(), a.use(ctx), C.float(lo), C.float(hi))
	}, a)
}

// ---------------------------------------------------------------- reductions

// Sum returns the sum of all elements of a as a tensor of shape [1].
func (ctx *Context) Sum(a *Tensor) *Tensor {
	return ctx.op1("Sum", C.GG_OP1_sum, a)
}

// SumRows sums each row: [ne0, ne1, ne2, ne3] -> [1, ne1, ne2, ne3].
func (ctx *Context) SumRows(a *Tensor) *Tensor {
	return ctx.op1("SumRows", C.GG_OP1_sum_rows, a)
}

// Mean averages each row: [ne0, ne1, ne2, ne3] -> [1, ne1, ne2, ne3].
func (ctx *Context) Mean(a *Tensor) *Tensor {
	return ctx.op1("Mean", C.GG_OP1_mean, a)
}

// Argmax returns the index of the largest element of each row of the f32
// matrix a: [ne0, ne1] -> i32 [ne1].
func (ctx *Context) Argmax(a *Tensor) *Tensor {
	return ctx.op1("Argmax", C.GG_OP1_argmax, a)
}

// CountEqual counts the positions where a and b (i32, same shape)
// are equal: i64 [1].
func (ctx *Context) CountEqual(a, b *Tensor) *Tensor {
	return ctx.op2("CountEqual", C.GG_OP2_count_equal, a, b)
}

// Repeat tiles a to b's shape (each ne of b a multiple of a's); only b's
// shape is used.
func (ctx *Context) Repeat(a, b *Tensor) *Tensor {
	return ctx.op2("Repeat", C.GG_OP2_repeat, a, b)
}

// RepeatBack sums a into b's shape (the gradient of Repeat): each ne
// of a is a multiple of b's.
func (ctx *Context) RepeatBack(a, b *Tensor) *Tensor {
	return ctx.op2("RepeatBack", C.GG_OP2_repeat_back, a, b)
}

// Concat joins a and b along dimension dim (0..3); all other dimensions
// must be equal.
func (ctx *Context) Concat(a, b *Tensor, dim int) *Tensor {
	return ctx.build("Concat", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_concat(ce, ctx.ptr(), a.use(ctx), b.use(ctx), cint("Concat", dim))
	}, a, b)
}

// ---------------------------------------------------------------- normalization

// Norm normalizes each row of a to zero mean and unit variance:
// (x-mean)/sqrt(var+eps). Same shape, f32.
func (ctx *Context) Norm(a *Tensor, eps float32) *Tensor {
	return ctx.build("Norm", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_norm(ce, ctx.ptr(), a.use(ctx), C.float(eps))
	}, a)
}

// NormInplace is Norm written into a.
func (ctx *Context) NormInplace(a *Tensor, eps float32) *Tensor {
	return ctx.build("NormInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_norm_inplace(ce, ctx.ptr(), a.use(ctx), C.float(eps))
	}, a)
}

// RMSNorm divides each row of a by sqrt(mean(x*x)+eps). Same shape,
// f32.
func (ctx *Context) RMSNorm(a *Tensor, eps float32) *Tensor {
	return ctx.build("RMSNorm", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rms_norm(ce, ctx.ptr(), a.use(ctx), C.float(eps))
	}, a)
}

// RMSNormInplace is RMSNorm written into a.
func (ctx *Context) RMSNormInplace(a *Tensor, eps float32) *Tensor {
	return ctx.build("RMSNormInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rms_norm_inplace(ce, ctx.ptr(), a.use(ctx), C.float(eps))
	}, a)
}

// RMSNormBack returns the gradient of RMSNorm at a (x) given the
// output gradient b (dy), same shape.
func (ctx *Context) RMSNormBack(a, b *Tensor, eps float32) *Tensor {
	return ctx.build("RMSNormBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rms_norm_back(ce, ctx.ptr(), a.use(ctx), b.use(ctx), C.float(eps))
	}, a, b)
}

// GroupNorm normalizes a [W, H, C, N] over groups of ceil(C/nGroups)
// channels (dimension 2) with epsilon eps. Same shape.
func (ctx *Context) GroupNorm(a *Tensor, nGroups int, eps float32) *Tensor {
	return ctx.build("GroupNorm", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_group_norm(ce, ctx.ptr(), a.use(ctx), cint("GroupNorm", nGroups), C.float(eps))
	}, a)
}

// GroupNormInplace is GroupNorm written into a.
func (ctx *Context) GroupNormInplace(a *Tensor, nGroups int, eps float32) *Tensor {
	return ctx.build("GroupNormInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_group_norm_inplace(ce, ctx.ptr(), a.use(ctx), cint("GroupNormInplace", nGroups), C.float(eps))
	}, a)
}

// ---------------------------------------------------------------- matrix products

// MulMat returns the matrix product b*a^T: a [K, N, ne02, ne03], b [K,
// M, ne12, ne13] -> f32 [N, M, ne12, ne13]; ne12 and ne13 must be multiples of
// ne02 and ne03 (a broadcasts). a may be any type with a dot product (f32, f16,
// bf16, quantized); b is f32 (or a's vec-dot type) and not transposed.
func (ctx *Context) MulMat(a, b *Tensor) *Tensor {
	return ctx.op2("MulMat", C.GG_OP2_mul_mat, a, b)
}

// MulMatID is MulMat with a matrix chosen per token: as [K, N, nAs]
// holds nAs matrices; b [K, nB, nTokens]; ids i32 [nUsed, nTokens] selects the
// matrices (nB is 1 or nUsed) -> f32 [N, nUsed, nTokens].
func (ctx *Context) MulMatID(as, b, ids *Tensor) *Tensor {
	return ctx.build("MulMatID", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_mul_mat_id(ce, ctx.ptr(), as.use(ctx), b.use(ctx), ids.use(ctx))
	}, as, b, ids)
}

// OutProd returns the sum of outer products a*b^T: a [M, K, ne02,
// ne03], b [P, K, ne12, ne13] -> f32 [M, P, ne12, ne13] (a broadcasts over dims
// 2 and 3).
func (ctx *Context) OutProd(a, b *Tensor) *Tensor {
	return ctx.op2("OutProd", C.GG_OP2_out_prod, a, b)
}

// ---------------------------------------------------------------- set, copy and layout

// Set returns a copy of a in which the view of shape b.ne with byte strides
// nb1, nb2, nb3 starting at byte offset is replaced by b. a and b are f32 (or
// both i32); the view must lie within a.
func (ctx *Context) Set(a, b *Tensor, nb1, nb2, nb3, offset int) *Tensor {
	return ctx.build("Set", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_set(ce, ctx.ptr(), a.use(ctx), b.use(ctx), csize("Set", nb1), csize("Set", nb2), csize("Set", nb3), csize("Set", offset))
	}, a, b)
}

// SetInplace is Set written into a.
func (ctx *Context) SetInplace(a, b *Tensor, nb1, nb2, nb3, offset int) *Tensor {
	return ctx.build("SetInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_set_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx), csize("SetInplace", nb1), csize("SetInplace", nb2), csize("SetInplace", nb3), csize("SetInplace", offset))
	}, a, b)
}

// Set1D is Set with a 1-D view at byte offset.
func (ctx *Context) Set1D(a, b *Tensor, offset int) *Tensor {
	return ctx.build("Set1D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_set_1d(ce, ctx.ptr(), a.use(ctx), b.use(ctx), csize("Set1D", offset))
	}, a, b)
}

// Set1DInplace is Set1D written into a.
func (ctx *Context) Set1DInplace(a, b *Tensor, offset int) *Tensor {
	return ctx.build("Set1DInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_set_1d_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx), csize("Set1DInplace", offset))
	}, a, b)
}

// Set2D is Set with a 2-D view of row stride nb1 at byte offset.
func (ctx *Context) Set2D(a, b *Tensor, nb1, offset int) *Tensor {
	return ctx.build("Set2D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_set_2d(ce, ctx.ptr(), a.use(ctx), b.use(ctx), csize("Set2D", nb1), csize("Set2D", offset))
	}, a, b)
}

// Set2DInplace is Set2D written into a.
func (ctx *Context) Set2DInplace(a, b *Tensor, nb1, offset int) *Tensor {
	return ctx.build("Set2DInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_set_2d_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx), csize("Set2DInplace", nb1), csize("Set2DInplace", offset))
	}, a, b)
}

// Cpy copies a into b, converting to b's type (b may be quantized); both
// must have the same number of elements. The result is a view of b.
func (ctx *Context) Cpy(a, b *Tensor) *Tensor {
	return ctx.op2("Cpy", C.GG_OP2_cpy, a, b)
}

// Cast returns a converted to type typ, same shape.
func (ctx *Context) Cast(a *Tensor, typ Type) *Tensor {
	return ctx.build("Cast", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cast(ce, ctx.ptr(), a.use(ctx), C.enum_lm_ggml_type(typ))
	}, a)
}

// Cont returns a contiguous copy of a (same shape and type), e.g. after
// Permute or Transpose.
func (ctx *Context) Cont(a *Tensor) *Tensor {
	return ctx.op1("Cont", C.GG_OP1_cont, a)
}

// Cont1D is Cont reshaped to [ne0]; ne0 must equal the number of
// elements of a.
func (ctx *Context) Cont1D(a *Tensor, ne0 int) *Tensor {
	return ctx.build("Cont1D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cont_1d(ce, ctx.ptr(), a.use(ctx), C.int64_t(ne0))
	}, a)
}

// Cont2D is Cont reshaped to [ne0, ne1] (same number of elements).
func (ctx *Context) Cont2D(a *Tensor, ne0, ne1 int) *Tensor {
	return ctx.build("Cont2D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cont_2d(ce, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1))
	}, a)
}

// Cont3D is Cont reshaped to [ne0, ne1, ne2] (same number of elements).
func (ctx *Context) Cont3D(a *Tensor, ne0, ne1, ne2 int) *Tensor {
	return ctx.build("Cont3D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cont_3d(ce, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1), C.int64_t(ne2))
	}, a)
}

// Cont4D is Cont reshaped to [ne0, ne1, ne2, ne3] (same number of
// elements).
func (ctx *Context) Cont4D(a *Tensor, ne0, ne1, ne2, ne3 int) *Tensor {
	return ctx.build("Cont4D", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cont_4d(ce, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1), C.int64_t(ne2), C.int64_t(ne3))
	}, a)
}

// GetRows gathers rows of a by index: a [ne0, nRows, ne2, ne3] (any
// type), b i32 [n, ne2, ne3] -> f32 (i32 for i32 a) [ne0, n, ne2, ne3].
func (ctx *Context) GetRows(a, b *Tensor) *Tensor {
	return ctx.op2("GetRows", C.GG_OP2_get_rows, a, b)
}

// GetRowsBack scatters-adds the rows of a [ne0, n] (the gradient of
// GetRows) to the rows b (i32 [n]) of a zero tensor of c's shape [ne0, nRows]
// -> f32 like c.
func (ctx *Context) GetRowsBack(a, b, c *Tensor) *Tensor {
	return ctx.build("GetRowsBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_get_rows_back(ce, ctx.ptr(), a.use(ctx), b.use(ctx), c.use(ctx))
	}, a, b, c)
}

// Diag turns each row vector into a diagonal matrix: a [n, 1, ne2, ne3] ->
// [n, n, ne2, ne3].
func (ctx *Context) Diag(a *Tensor) *Tensor {
	return ctx.op1("Diag", C.GG_OP1_diag, a)
}

// DiagMaskInf sets a[i0, i1] to -inf where i0 > nPast + i1 (causal
// mask), per matrix. Same shape, f32.
func (ctx *Context) DiagMaskInf(a *Tensor, nPast int) *Tensor {
	return ctx.build("DiagMaskInf", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_diag_mask_inf(ce, ctx.ptr(), a.use(ctx), cint("DiagMaskInf", nPast))
	}, a)
}

// DiagMaskInfInplace is DiagMaskInf written into a.
func (ctx *Context) DiagMaskInfInplace(a *Tensor, nPast int) *Tensor {
	return ctx.build("DiagMaskInfInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_diag_mask_inf_inplace(ce, ctx.ptr(), a.use(ctx), cint("DiagMaskInfInplace", nPast))
	}, a)
}

// DiagMaskZero is DiagMaskInf with 0 instead of -inf.
func (ctx *Context) DiagMaskZero(a *Tensor, nPast int) *Tensor {
	return ctx.build("DiagMaskZero", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_diag_mask_zero(ce, ctx.ptr(), a.use(ctx), cint("DiagMaskZero", nPast))
	}, a)
}

// DiagMaskZeroInplace is DiagMaskZero written into a.
func (ctx *Context) DiagMaskZeroInplace(a *Tensor, nPast int) *Tensor {
	return ctx.build("DiagMaskZeroInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_diag_mask_zero_inplace(ce, ctx.ptr(), a.use(ctx), cint("DiagMaskZeroInplace", nPast))
	}, a)
}

// SoftMax applies softmax to each row of a (f32). Same shape.
func (ctx *Context) SoftMax(a *Tensor) *Tensor {
	return ctx.op1("SoftMax", C.GG_OP1_soft_max, a)
}

// SoftMaxInplace is SoftMax written into a.
func (ctx *Context) SoftMaxInplace(a *Tensor) *Tensor {
	return ctx.op1("SoftMaxInplace", C.GG_OP1_soft_max_inplace, a)
}

// SoftMaxExt returns softmax(a*scale + mask*slope) per row; mask
// (f16 or f32 [ne0, >=ne1], broadcast over dims 2 and 3) may be nil; maxBias >
// 0 enables ALiBi slopes per head (dimension 2), else slope is 1.
func (ctx *Context) SoftMaxExt(a, mask *Tensor, scale, maxBias float32) *Tensor {
	return ctx.buildOpt("SoftMaxExt", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_soft_max_ext(ce, ctx.ptr(), a.use(ctx), mask.use(ctx), C.float(scale), C.float(maxBias))
	}, []*Tensor{a}, mask)
}

// SoftMaxBack returns the gradient of SoftMax given the output
// gradient a (dy) and the softmax output b (y), same shape.
func (ctx *Context) SoftMaxBack(a, b *Tensor) *Tensor {
	return ctx.op2("SoftMaxBack", C.GG_OP2_soft_max_back, a, b)
}

// SoftMaxBackInplace is SoftMaxBack written into a.
func (ctx *Context) SoftMaxBackInplace(a, b *Tensor) *Tensor {
	return ctx.op2("SoftMaxBackInplace", C.GG_OP2_soft_max_back_inplace, a, b)
}
