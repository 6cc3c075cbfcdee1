// One method per C op constructor, all of the same shape (first written from
// a table of the C signatures; maintained by hand). The interpreter table in
// parity_test.go maps the C names to these methods.
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

GG_DEF(gg_t *, dup, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, dup_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, add, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, add_inplace, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, add_cast, (gg_c * ctx, gg_t * a, gg_t * b, enum lm_ggml_type typ), (ctx, a, b, typ))
GG_DEF(gg_t *, add1, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, add1_inplace, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, acc, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t nb2, size_t nb3, size_t offset), (ctx, a, b, nb1, nb2, nb3, offset))
GG_DEF(gg_t *, acc_inplace, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t nb2, size_t nb3, size_t offset), (ctx, a, b, nb1, nb2, nb3, offset))
GG_DEF(gg_t *, sub, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, sub_inplace, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, mul, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, mul_inplace, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, div, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, div_inplace, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, sqr, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sqr_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sqrt, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sqrt_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, log, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, log_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sin, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sin_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, cos, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, cos_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, abs, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, abs_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sgn, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sgn_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, neg, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, neg_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, step, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, step_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, tanh, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, tanh_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, elu, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, elu_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, relu, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, relu_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, leaky_relu, (gg_c * ctx, gg_t * a, float negativeSlope, bool inplace), (ctx, a, negativeSlope, inplace))
GG_DEF(gg_t *, sigmoid, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sigmoid_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, gelu, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, gelu_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, gelu_quick, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, gelu_quick_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, silu, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, silu_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, silu_back, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, hardswish, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, hardsigmoid, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, exp, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, exp_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, unary, (gg_c * ctx, gg_t * a, enum lm_ggml_unary_op op), (ctx, a, op))
GG_DEF(gg_t *, unary_inplace, (gg_c * ctx, gg_t * a, enum lm_ggml_unary_op op), (ctx, a, op))
GG_DEF(gg_t *, scale, (gg_c * ctx, gg_t * a, float s), (ctx, a, s))
GG_DEF(gg_t *, scale_inplace, (gg_c * ctx, gg_t * a, float s), (ctx, a, s))
GG_DEF(gg_t *, clamp, (gg_c * ctx, gg_t * a, float lo, float hi), (ctx, a, lo, hi))
GG_DEF(gg_t *, sum, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, sum_rows, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, mean, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, argmax, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, count_equal, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, repeat, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, repeat_back, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, concat, (gg_c * ctx, gg_t * a, gg_t * b, int dim), (ctx, a, b, dim))
GG_DEF(gg_t *, norm, (gg_c * ctx, gg_t * a, float eps), (ctx, a, eps))
GG_DEF(gg_t *, norm_inplace, (gg_c * ctx, gg_t * a, float eps), (ctx, a, eps))
GG_DEF(gg_t *, rms_norm, (gg_c * ctx, gg_t * a, float eps), (ctx, a, eps))
GG_DEF(gg_t *, rms_norm_inplace, (gg_c * ctx, gg_t * a, float eps), (ctx, a, eps))
GG_DEF(gg_t *, rms_norm_back, (gg_c * ctx, gg_t * a, gg_t * b, float eps), (ctx, a, b, eps))
GG_DEF(gg_t *, group_norm, (gg_c * ctx, gg_t * a, int nGroups, float eps), (ctx, a, nGroups, eps))
GG_DEF(gg_t *, group_norm_inplace, (gg_c * ctx, gg_t * a, int nGroups, float eps), (ctx, a, nGroups, eps))
GG_DEF(gg_t *, mul_mat, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, mul_mat_id, (gg_c * ctx, gg_t * as, gg_t * b, gg_t * ids), (ctx, as, b, ids))
GG_DEF(gg_t *, out_prod, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, set, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t nb2, size_t nb3, size_t offset), (ctx, a, b, nb1, nb2, nb3, offset))
GG_DEF(gg_t *, set_inplace, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t nb2, size_t nb3, size_t offset), (ctx, a, b, nb1, nb2, nb3, offset))
GG_DEF(gg_t *, set_1d, (gg_c * ctx, gg_t * a, gg_t * b, size_t offset), (ctx, a, b, offset))
GG_DEF(gg_t *, set_1d_inplace, (gg_c * ctx, gg_t * a, gg_t * b, size_t offset), (ctx, a, b, offset))
GG_DEF(gg_t *, set_2d, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t offset), (ctx, a, b, nb1, offset))
GG_DEF(gg_t *, set_2d_inplace, (gg_c * ctx, gg_t * a, gg_t * b, size_t nb1, size_t offset), (ctx, a, b, nb1, offset))
GG_DEF(gg_t *, cpy, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, cast, (gg_c * ctx, gg_t * a, enum lm_ggml_type typ), (ctx, a, typ))
GG_DEF(gg_t *, cont, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, cont_1d, (gg_c * ctx, gg_t * a, int64_t ne0), (ctx, a, ne0))
GG_DEF(gg_t *, cont_2d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1), (ctx, a, ne0, ne1))
GG_DEF(gg_t *, cont_3d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, int64_t ne2), (ctx, a, ne0, ne1, ne2))
GG_DEF(gg_t *, cont_4d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3), (ctx, a, ne0, ne1, ne2, ne3))
GG_DEF(gg_t *, get_rows, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, get_rows_back, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c), (ctx, a, b, c))
GG_DEF(gg_t *, diag, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, diag_mask_inf, (gg_c * ctx, gg_t * a, int nPast), (ctx, a, nPast))
GG_DEF(gg_t *, diag_mask_inf_inplace, (gg_c * ctx, gg_t * a, int nPast), (ctx, a, nPast))
GG_DEF(gg_t *, diag_mask_zero, (gg_c * ctx, gg_t * a, int nPast), (ctx, a, nPast))
GG_DEF(gg_t *, diag_mask_zero_inplace, (gg_c * ctx, gg_t * a, int nPast), (ctx, a, nPast))
GG_DEF(gg_t *, soft_max, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, soft_max_inplace, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, soft_max_ext, (gg_c * ctx, gg_t * a, gg_t * mask, float scale, float maxBias), (ctx, a, mask, scale, maxBias))
GG_DEF(gg_t *, soft_max_back, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, soft_max_back_inplace, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
*/
import "C"

// ---------------------------------------------------------------- element-wise binary

// Dup returns a copy of a (same shape and type, contiguous).
func (ctx *Context) Dup(a *Tensor) *Tensor {
	return ctx.build("Dup", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_dup(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// DupInplace is Dup computed into a view of a.
func (ctx *Context) DupInplace(a *Tensor) *Tensor {
	return ctx.build("DupInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_dup_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Add returns a + b with a's shape and type; b broadcasts over a. a may be
// f32, f16, bf16 or quantized (then b is f32), b f32, f16 or bf16.
func (ctx *Context) Add(a, b *Tensor) *Tensor {
	return ctx.build("Add", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_add(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// AddInplace is Add written into a.
func (ctx *Context) AddInplace(a, b *Tensor) *Tensor {
	return ctx.build("AddInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_add_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
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
	return ctx.build("Add1", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_add1(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// Add1Inplace is Add1 written into a.
func (ctx *Context) Add1Inplace(a, b *Tensor) *Tensor {
	return ctx.build("Add1Inplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_add1_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
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
	return ctx.build("Sub", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sub(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// SubInplace is Sub written into a.
func (ctx *Context) SubInplace(a, b *Tensor) *Tensor {
	return ctx.build("SubInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sub_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// Mul returns a * b element-wise with a's shape; b broadcasts over a.
func (ctx *Context) Mul(a, b *Tensor) *Tensor {
	return ctx.build("Mul", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_mul(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// MulInplace is Mul written into a.
func (ctx *Context) MulInplace(a, b *Tensor) *Tensor {
	return ctx.build("MulInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_mul_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// Div returns a / b element-wise with a's shape; b broadcasts over a.
func (ctx *Context) Div(a, b *Tensor) *Tensor {
	return ctx.build("Div", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_div(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// DivInplace is Div written into a.
func (ctx *Context) DivInplace(a, b *Tensor) *Tensor {
	return ctx.build("DivInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_div_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// ---------------------------------------------------------------- element-wise unary (same shape and type as a)

// Sqr returns a*a element-wise.
func (ctx *Context) Sqr(a *Tensor) *Tensor {
	return ctx.build("Sqr", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sqr(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SqrInplace is Sqr written into a.
func (ctx *Context) SqrInplace(a *Tensor) *Tensor {
	return ctx.build("SqrInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sqr_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Sqrt returns the element-wise square root of a.
func (ctx *Context) Sqrt(a *Tensor) *Tensor {
	return ctx.build("Sqrt", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sqrt(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SqrtInplace is Sqrt written into a.
func (ctx *Context) SqrtInplace(a *Tensor) *Tensor {
	return ctx.build("SqrtInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sqrt_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Log returns the element-wise natural logarithm of a.
func (ctx *Context) Log(a *Tensor) *Tensor {
	return ctx.build("Log", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_log(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// LogInplace is Log written into a.
func (ctx *Context) LogInplace(a *Tensor) *Tensor {
	return ctx.build("LogInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_log_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Sin returns the element-wise sine of a.
func (ctx *Context) Sin(a *Tensor) *Tensor {
	return ctx.build("Sin", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sin(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SinInplace is Sin written into a.
func (ctx *Context) SinInplace(a *Tensor) *Tensor {
	return ctx.build("SinInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sin_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Cos returns the element-wise cosine of a.
func (ctx *Context) Cos(a *Tensor) *Tensor {
	return ctx.build("Cos", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cos(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// CosInplace is Cos written into a.
func (ctx *Context) CosInplace(a *Tensor) *Tensor {
	return ctx.build("CosInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cos_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Abs returns |a| element-wise (UnaryAbs).
func (ctx *Context) Abs(a *Tensor) *Tensor {
	return ctx.build("Abs", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_abs(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// AbsInplace is Abs written into a.
func (ctx *Context) AbsInplace(a *Tensor) *Tensor {
	return ctx.build("AbsInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_abs_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Sgn returns the sign of a (-1, 0 or 1) element-wise.
func (ctx *Context) Sgn(a *Tensor) *Tensor {
	return ctx.build("Sgn", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sgn(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SgnInplace is Sgn written into a.
func (ctx *Context) SgnInplace(a *Tensor) *Tensor {
	return ctx.build("SgnInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sgn_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Neg returns -a.
func (ctx *Context) Neg(a *Tensor) *Tensor {
	return ctx.build("Neg", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_neg(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// NegInplace is Neg written into a.
func (ctx *Context) NegInplace(a *Tensor) *Tensor {
	return ctx.build("NegInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_neg_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Step returns 1 where a > 0, else 0.
func (ctx *Context) Step(a *Tensor) *Tensor {
	return ctx.build("Step", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_step(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// StepInplace is Step written into a.
func (ctx *Context) StepInplace(a *Tensor) *Tensor {
	return ctx.build("StepInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_step_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Tanh returns the element-wise hyperbolic tangent of a.
func (ctx *Context) Tanh(a *Tensor) *Tensor {
	return ctx.build("Tanh", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_tanh(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// TanhInplace is Tanh written into a.
func (ctx *Context) TanhInplace(a *Tensor) *Tensor {
	return ctx.build("TanhInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_tanh_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Elu returns a where a > 0, else exp(a)-1.
func (ctx *Context) Elu(a *Tensor) *Tensor {
	return ctx.build("Elu", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_elu(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// EluInplace is Elu written into a.
func (ctx *Context) EluInplace(a *Tensor) *Tensor {
	return ctx.build("EluInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_elu_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Relu returns max(a, 0).
func (ctx *Context) Relu(a *Tensor) *Tensor {
	return ctx.build("Relu", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_relu(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// ReluInplace is Relu written into a.
func (ctx *Context) ReluInplace(a *Tensor) *Tensor {
	return ctx.build("ReluInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_relu_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
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
	return ctx.build("Sigmoid", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sigmoid(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SigmoidInplace is Sigmoid written into a.
func (ctx *Context) SigmoidInplace(a *Tensor) *Tensor {
	return ctx.build("SigmoidInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sigmoid_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Gelu returns the tanh approximation of GELU of a.
func (ctx *Context) Gelu(a *Tensor) *Tensor {
	return ctx.build("Gelu", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_gelu(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// GeluInplace is Gelu written into a.
func (ctx *Context) GeluInplace(a *Tensor) *Tensor {
	return ctx.build("GeluInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_gelu_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// GeluQuick returns a*sigmoid(1.702*a).
func (ctx *Context) GeluQuick(a *Tensor) *Tensor {
	return ctx.build("GeluQuick", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_gelu_quick(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// GeluQuickInplace is GeluQuick written into a.
func (ctx *Context) GeluQuickInplace(a *Tensor) *Tensor {
	return ctx.build("GeluQuickInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_gelu_quick_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Silu returns a*sigmoid(a).
func (ctx *Context) Silu(a *Tensor) *Tensor {
	return ctx.build("Silu", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_silu(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SiluInplace is Silu written into a.
func (ctx *Context) SiluInplace(a *Tensor) *Tensor {
	return ctx.build("SiluInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_silu_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SiluBack returns the gradient of Silu at a (x) given the output
// gradient b (dy), same shape.
func (ctx *Context) SiluBack(a, b *Tensor) *Tensor {
	return ctx.build("SiluBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_silu_back(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// Hardswish returns a*min(1, max(0, (a+3)/6)).
func (ctx *Context) Hardswish(a *Tensor) *Tensor {
	return ctx.build("Hardswish", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_hardswish(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Hardsigmoid returns min(1, max(0, (a+3)/6)).
func (ctx *Context) Hardsigmoid(a *Tensor) *Tensor {
	return ctx.build("Hardsigmoid", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_hardsigmoid(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Exp returns exp(a) element-wise.
func (ctx *Context) Exp(a *Tensor) *Tensor {
	return ctx.build("Exp", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_exp(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// ExpInplace is Exp written into a.
func (ctx *Context) ExpInplace(a *Tensor) *Tensor {
	return ctx.build("ExpInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_exp_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
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
	return ctx.build("Sum", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sum(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SumRows sums each row: [ne0, ne1, ne2, ne3] -> [1, ne1, ne2, ne3].
func (ctx *Context) SumRows(a *Tensor) *Tensor {
	return ctx.build("SumRows", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_sum_rows(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Mean averages each row: [ne0, ne1, ne2, ne3] -> [1, ne1, ne2, ne3].
func (ctx *Context) Mean(a *Tensor) *Tensor {
	return ctx.build("Mean", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_mean(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// Argmax returns the index of the largest element of each row of the f32
// matrix a: [ne0, ne1] -> i32 [ne1].
func (ctx *Context) Argmax(a *Tensor) *Tensor {
	return ctx.build("Argmax", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_argmax(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// CountEqual counts the positions where a and b (i32, same shape)
// are equal: i64 [1].
func (ctx *Context) CountEqual(a, b *Tensor) *Tensor {
	return ctx.build("CountEqual", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_count_equal(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// Repeat tiles a to b's shape (each ne of b a multiple of a's); only b's
// shape is used.
func (ctx *Context) Repeat(a, b *Tensor) *Tensor {
	return ctx.build("Repeat", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_repeat(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// RepeatBack sums a into b's shape (the gradient of Repeat): each ne
// of a is a multiple of b's.
func (ctx *Context) RepeatBack(a, b *Tensor) *Tensor {
	return ctx.build("RepeatBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_repeat_back(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
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
	return ctx.build("MulMat", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_mul_mat(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
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
	return ctx.build("OutProd", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_out_prod(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
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
	return ctx.build("Cpy", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cpy(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
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
	return ctx.build("Cont", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cont(ce, ctx.ptr(), a.use(ctx))
	}, a)
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
	return ctx.build("GetRows", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_get_rows(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
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
	return ctx.build("Diag", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_diag(ce, ctx.ptr(), a.use(ctx))
	}, a)
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
	return ctx.build("SoftMax", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_soft_max(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SoftMaxInplace is SoftMax written into a.
func (ctx *Context) SoftMaxInplace(a *Tensor) *Tensor {
	return ctx.build("SoftMaxInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_soft_max_inplace(ce, ctx.ptr(), a.use(ctx))
	}, a)
}

// SoftMaxExt returns softmax(a*scale + mask*slope) per row; mask
// (f16 or f32 [ne0, >=ne1], broadcast over dims 2 and 3) may be nil; maxBias >
// 0 enables ALiBi slopes per head (dimension 2), else slope is 1.
func (ctx *Context) SoftMaxExt(a, mask *Tensor, scale, maxBias float32) *Tensor {
	return ctx.build("SoftMaxExt", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_soft_max_ext(ce, ctx.ptr(), a.use(ctx), mask.use(ctx), C.float(scale), C.float(maxBias))
	}, a)
}

// SoftMaxBack returns the gradient of SoftMax given the output
// gradient a (dy) and the softmax output b (y), same shape.
func (ctx *Context) SoftMaxBack(a, b *Tensor) *Tensor {
	return ctx.build("SoftMaxBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_soft_max_back(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// SoftMaxBackInplace is SoftMaxBack written into a.
func (ctx *Context) SoftMaxBackInplace(a, b *Tensor) *Tensor {
	return ctx.build("SoftMaxBackInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_soft_max_back_inplace(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}
