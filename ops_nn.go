// One method per C op constructor, all of the same shape (first written from
// a table of the C signatures; maintained by hand). The interpreter table in
// parity_test.go maps the C names to these methods.
//
// Neural-network operations with plain scalar parameters: padding and
// resizing, sorting, embeddings, attention, state-space and windowing ops,
// losses and the optimizer step. The rope, convolution and pooling families
// (option structs) are in ops_params.go, user callbacks in ops_custom.go.

package ggml

/*
#include "glue.h"

GG_DEF(gg_t *, upscale, (gg_c * ctx, gg_t * a, int scaleFactor), (ctx, a, scaleFactor))
GG_DEF(gg_t *, upscale_ext, (gg_c * ctx, gg_t * a, int ne0, int ne1, int ne2, int ne3), (ctx, a, ne0, ne1, ne2, ne3))
GG_DEF(gg_t *, pad, (gg_c * ctx, gg_t * a, int p0, int p1, int p2, int p3), (ctx, a, p0, p1, p2, p3))
GG_DEF(gg_t *, argsort, (gg_c * ctx, gg_t * a, enum lm_ggml_sort_order order), (ctx, a, order))
GG_DEF(gg_t *, top_k, (gg_c * ctx, gg_t * a, int k), (ctx, a, k))
GG_DEF(gg_t *, arange, (gg_c * ctx, float start, float stop, float step), (ctx, start, stop, step))
GG_DEF(gg_t *, timestep_embedding, (gg_c * ctx, gg_t * timesteps, int dim, int maxPeriod), (ctx, timesteps, dim, maxPeriod))
GG_DEF(gg_t *, flash_attn_ext, (gg_c * ctx, gg_t * q, gg_t * k, gg_t * v, gg_t * mask, float scale, float maxBias, float logitSoftcap), (ctx, q, k, v, mask, scale, maxBias, logitSoftcap))
GG_DEF(gg_t *, flash_attn_back, (gg_c * ctx, gg_t * q, gg_t * k, gg_t * v, gg_t * d, bool masked), (ctx, q, k, v, d, masked))
GG_DEF(gg_t *, ssm_conv, (gg_c * ctx, gg_t * sx, gg_t * c), (ctx, sx, c))
GG_DEF(gg_t *, ssm_scan, (gg_c * ctx, gg_t * s, gg_t * x, gg_t * dt, gg_t * a, gg_t * b, gg_t * c), (ctx, s, x, dt, a, b, c))
GG_DEF(gg_t *, rwkv_wkv6, (gg_c * ctx, gg_t * k, gg_t * v, gg_t * r, gg_t * tf, gg_t * td, gg_t * state), (ctx, k, v, r, tf, td, state))
GG_DEF(gg_t *, win_part, (gg_c * ctx, gg_t * a, int w), (ctx, a, w))
GG_DEF(gg_t *, win_unpart, (gg_c * ctx, gg_t * a, int w0, int h0, int w), (ctx, a, w0, h0, w))
GG_DEF(gg_t *, get_rel_pos, (gg_c * ctx, gg_t * a, int qh, int kh), (ctx, a, qh, kh))
GG_DEF(gg_t *, add_rel_pos, (gg_c * ctx, gg_t * a, gg_t * pw, gg_t * ph), (ctx, a, pw, ph))
GG_DEF(gg_t *, add_rel_pos_inplace, (gg_c * ctx, gg_t * a, gg_t * pw, gg_t * ph), (ctx, a, pw, ph))
GG_DEF(gg_t *, cross_entropy_loss, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, cross_entropy_loss_back, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c), (ctx, a, b, c))
GG_DEF(gg_t *, opt_step_adamw, (gg_c * ctx, gg_t * a, gg_t * grad, gg_t * m, gg_t * v, gg_t * adamwParams), (ctx, a, grad, m, v, adamwParams))
*/
import "C"

// ---------------------------------------------------------------- resizing and padding

// Upscale resizes dimensions 0 and 1 by scaleFactor (nearest
// neighbour): [ne0, ne1, ne2, ne3] -> [ne0*s, ne1*s, ne2, ne3].
func (ctx *Context) Upscale(a *Tensor, scaleFactor int) *Tensor {
	return ctx.build("Upscale", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_upscale(ce, ctx.ptr(), a.use(ctx), cint("Upscale", scaleFactor))
	}, a)
}

// UpscaleExt resizes a to [ne0, ne1, ne2, ne3] by nearest neighbour;
// each new size must be at least the old one.
func (ctx *Context) UpscaleExt(a *Tensor, ne0, ne1, ne2, ne3 int) *Tensor {
	return ctx.build("UpscaleExt", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_upscale_ext(ce, ctx.ptr(), a.use(ctx), cint("UpscaleExt", ne0), cint("UpscaleExt", ne1), cint("UpscaleExt", ne2), cint("UpscaleExt", ne3))
	}, a)
}

// Pad appends p0..p3 zeros at the end of each dimension: [ne0+p0, ne1+p1,
// ne2+p2, ne3+p3], f32.
func (ctx *Context) Pad(a *Tensor, p0, p1, p2, p3 int) *Tensor {
	return ctx.build("Pad", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_pad(ce, ctx.ptr(), a.use(ctx), cint("Pad", p0), cint("Pad", p1), cint("Pad", p2), cint("Pad", p3))
	}, a)
}

// ---------------------------------------------------------------- sorting and sequences

// Argsort returns, for each row of the f32 tensor a, the i32 indices
// that sort it in order (same shape as a).
func (ctx *Context) Argsort(a *Tensor, order SortOrder) *Tensor {
	return ctx.build("Argsort", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_argsort(ce, ctx.ptr(), a.use(ctx), C.enum_lm_ggml_sort_order(order))
	}, a)
}

// TopK returns the i32 indices of the k largest elements of each row of a:
// [ne0, ...] -> [k, ...] (a view of Argsort with SortDesc; k <= ne0).
func (ctx *Context) TopK(a *Tensor, k int) *Tensor {
	return ctx.build("TopK", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_top_k(ce, ctx.ptr(), a.use(ctx), cint("TopK", k))
	}, a)
}

// Arange returns the f32 vector start, start+step, ... below stop:
// [ceil((stop-start)/step)]; step must be positive and stop > start.
func (ctx *Context) Arange(start, stop, step float32) *Tensor {
	return ctx.build("Arange", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_arange(ce, ctx.ptr(), C.float(start), C.float(stop), C.float(step))
	})
}

// TimestepEmbedding returns sinusoidal embeddings of the f32
// timesteps [N]: cos then sin of t*maxPeriod^(-i/half) -> f32 [dim (rounded up
// to even), N].
func (ctx *Context) TimestepEmbedding(timesteps *Tensor, dim, maxPeriod int) *Tensor {
	return ctx.build("TimestepEmbedding", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_timestep_embedding(ce, ctx.ptr(), timesteps.use(ctx), cint("TimestepEmbedding", dim), cint("TimestepEmbedding", maxPeriod))
	}, timesteps)
}

// ---------------------------------------------------------------- attention

// FlashAttnExt computes softmax(q*k^T*scale + mask)*v per head
// without materializing the scores. q f32 [D, nQ, nHead, nBatch]; k, v (f16,
// f32 or quantized) [D, nKV, nHeadKV, nBatch] with nHead a multiple of nHeadKV;
// mask (f16 [nKV, >=pad(nQ, KQMaskPad)], or nil); maxBias > 0 enables ALiBi;
// logitSoftcap > 0 applies softcap*tanh(s/softcap). Result f32 [Dv, nHead, nQ,
// nBatch] (heads and queries swapped). See Tensor.SetPrec.
func (ctx *Context) FlashAttnExt(q, k, v, mask *Tensor, scale, maxBias, logitSoftcap float32) *Tensor {
	return ctx.buildOpt("FlashAttnExt", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_flash_attn_ext(ce, ctx.ptr(), q.use(ctx), k.use(ctx), v.use(ctx), mask.use(ctx), C.float(scale), C.float(maxBias), C.float(logitSoftcap))
	}, []*Tensor{q, k, v}, mask)
}

// FlashAttnBack is the gradient of the old flash attention op.
// ggml never ported it to FlashAttnExt and its constructor always
// fails; so does this one (with an *OpError).
func (ctx *Context) FlashAttnBack(q, k, v, d *Tensor, masked bool) *Tensor {
	return ctx.build("FlashAttnBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_flash_attn_back(ce, ctx.ptr(), q.use(ctx), k.use(ctx), v.use(ctx), d.use(ctx), C.bool(masked))
	}, q, k, v, d)
}

// ---------------------------------------------------------------- state-space models and RWKV

// SSMConv is the Mamba depthwise causal convolution: sx [dConv-1+nT,
// dInner, nS], c [dConv, dInner] -> f32 [dInner, nT, nS].
func (ctx *Context) SSMConv(sx, c *Tensor) *Tensor {
	return ctx.build("SSMConv", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_ssm_conv(ce, ctx.ptr(), sx.use(ctx), c.use(ctx))
	}, sx, c)
}

// SSMScan is the Mamba selective scan: s [dState, dInner, nS], x and dt
// [dInner, nT, nS], a (A) [dState, dInner], b (B) and c (C) [dState, nT, nS] ->
// f32 vector holding y (nelements(x)) followed by the final states
// (nelements(s)).
func (ctx *Context) SSMScan(s, x, dt, a, b, c *Tensor) *Tensor {
	return ctx.build("SSMScan", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_ssm_scan(ce, ctx.ptr(), s.use(ctx), x.use(ctx), dt.use(ctx), a.use(ctx), b.use(ctx), c.use(ctx))
	}, s, x, dt, a, b, c)
}

// RWKVWKV6 is the RWKV v6 time-mixing recurrence: k [S, 1, H, T], v, r
// and td [1, S, H, T], tf [S, H], state [S*S*H, nSeqs] -> f32 [S*H, T +
// S*nSeqs] holding the outputs followed by the new states.
func (ctx *Context) RWKVWKV6(k, v, r, tf, td, state *Tensor) *Tensor {
	return ctx.build("RWKVWKV6", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_rwkv_wkv6(ce, ctx.ptr(), k.use(ctx), v.use(ctx), r.use(ctx), tf.use(ctx), td.use(ctx), state.use(ctx))
	}, k, v, r, tf, td, state)
}

// ---------------------------------------------------------------- windows and relative positions (SAM)

// WinPart splits a [C, W, H, 1] into w x w windows, zero padding W and
// H to multiples of w: -> f32 [C, w, w, nWindows].
func (ctx *Context) WinPart(a *Tensor, w int) *Tensor {
	return ctx.build("WinPart", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_win_part(ce, ctx.ptr(), a.use(ctx), cint("WinPart", w))
	}, a)
}

// WinUnpart reassembles WinPart's windows a [C, w, w, n] into [C, w0,
// h0, 1], dropping the padding.
func (ctx *Context) WinUnpart(a *Tensor, w0, h0, w int) *Tensor {
	return ctx.build("WinUnpart", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_win_unpart(ce, ctx.ptr(), a.use(ctx), cint("WinUnpart", w0), cint("WinUnpart", h0), cint("WinUnpart", w))
	}, a)
}

// GetRelPos expands the relative position table a [C, 2*max(qh,kh)-1]
// (f16, bf16 or f32) to [C, kh, qh]; qh must equal kh.
func (ctx *Context) GetRelPos(a *Tensor, qh, kh int) *Tensor {
	return ctx.build("GetRelPos", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_get_rel_pos(ce, ctx.ptr(), a.use(ctx), cint("GetRelPos", qh), cint("GetRelPos", kh))
	}, a)
}

// AddRelPos adds decomposed relative position terms to the attention
// scores a [kw*kh, qw*qh, B] (f32): pw [kw, qw*qh, B] along width, ph [kh,
// qw*qh, B] along height. Same shape as a.
func (ctx *Context) AddRelPos(a, pw, ph *Tensor) *Tensor {
	return ctx.build("AddRelPos", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_add_rel_pos(ce, ctx.ptr(), a.use(ctx), pw.use(ctx), ph.use(ctx))
	}, a, pw, ph)
}

// AddRelPosInplace is AddRelPos written into a.
func (ctx *Context) AddRelPosInplace(a, pw, ph *Tensor) *Tensor {
	return ctx.build("AddRelPosInplace", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_add_rel_pos_inplace(ce, ctx.ptr(), a.use(ctx), pw.use(ctx), ph.use(ctx))
	}, a, pw, ph)
}

// ---------------------------------------------------------------- losses and optimizer

// CrossEntropyLoss returns the mean over rows of
// -sum(b*log(softmax(a))): a (logits) and b (target probabilities) f32 of the
// same shape -> f32 [1].
func (ctx *Context) CrossEntropyLoss(a, b *Tensor) *Tensor {
	return ctx.build("CrossEntropyLoss", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cross_entropy_loss(ce, ctx.ptr(), a.use(ctx), b.use(ctx))
	}, a, b)
}

// CrossEntropyLossBack returns the gradient of
// CrossEntropyLoss with respect to the logits a, given the labels b and the
// loss gradient c (f32 [1]); same shape as a.
func (ctx *Context) CrossEntropyLossBack(a, b, c *Tensor) *Tensor {
	return ctx.build("CrossEntropyLossBack", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_cross_entropy_loss_back(ce, ctx.ptr(), a.use(ctx), b.use(ctx), c.use(ctx))
	}, a, b, c)
}

// OptStepAdamW updates the parameter a (marked with SetParam) in
// place by one AdamW step with gradient grad and moments m, v (all f32, a's
// shape; m and v are updated too). adamwParams is f32 [7]: alpha, beta1, beta2,
// eps, weight decay, 1/(1-beta1^t), 1/(1-beta2^t). The result is a view of a.
func (ctx *Context) OptStepAdamW(a, grad, m, v, adamwParams *Tensor) *Tensor {
	return ctx.build("OptStepAdamW", func(ce *C.gg_err) *C.struct_lm_ggml_tensor {
		return C.gg_opt_step_adamw(ce, ctx.ptr(), a.use(ctx), grad.use(ctx), m.use(ctx), v.use(ctx), adamwParams.use(ctx))
	}, a, grad, m, v, adamwParams)
}
