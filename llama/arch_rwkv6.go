package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// rwkv6: RWKV-6 ("Finch") as llama.cpp 1.3.3 loads and builds
// LLM_ARCH_RWKV6. No attention: a LayerNorm on the token embeddings, then
// per layer a time mix (token shift, data-dependent interpolations through
// a low-rank projection, receptance/key/value/gate projections, a
// data-dependent decay, the WKV6 recurrence over heads of wkv.head_size,
// a group norm per head, the SiLU gate, the output projection) and a
// channel mix (token shift, squared ReLU, a sigmoid gate), each after a
// LayerNorm and added to the residual, which is halved after every
// rescale_every_n_layers layers. The session keeps per layer the token
// shift (the two normed inputs of the last token) and the WKV state of the
// heads (recurrent.go).
func init() {
	registerArch(&architecture{
		name: "rwkv6",
		hparams: recurrentHparams(keyNormEps,
			hparamKey{key: "wkv.head_size", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.WKVHeadSize })},
			hparamKey{key: "time_mix_extra_dim", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.TimeMixExtraDim })},
			hparamKey{key: "time_decay_extra_dim", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.TimeDecayExtraDim })},
			hparamKey{key: "rescale_every_n_layers", field: hpInt(func(h *Hparams) *int { return &h.RescaleEveryNLayers })},
		),
		check: func(h *Hparams) error {
			if h.NEmbd%h.WKVHeadSize != 0 {
				return fmt.Errorf("rwkv6: embedding length %d is not a multiple of wkv.head_size %d", h.NEmbd, h.WKVHeadSize)
			}
			if h.NFF < 1 {
				return fmt.Errorf("rwkv6: feed_forward_length %d: the channel mix needs at least 1", h.NFF)
			}
			return nil
		},
		tensors: []tensorSpec{
			tTokEmbd,
			global("token_embd_norm.weight", roleNorm, embd, func(m *Model) **ggml.Tensor { return &m.TokNorm }),
			global("token_embd_norm.bias", roleBias, embd, func(m *Model) **ggml.Tensor { return &m.TokNormB }),
			tAttnNorm, tAttnNormB,
			rwkv("time_mix_lerp_x.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.LerpX }),
			rwkv("time_mix_w1.weight", roleParam, shape(func(h *Hparams) []int { return []int{h.NEmbd, 5 * h.TimeMixExtraDim} }), func(R *RWKVLayer) **ggml.Tensor { return &R.MixW1 }),
			rwkv("time_mix_w2.weight", roleParam, shape(func(h *Hparams) []int { return []int{h.TimeMixExtraDim, h.NEmbd, 5} }), func(R *RWKVLayer) **ggml.Tensor { return &R.MixW2 }),
			rwkv("time_mix_lerp_w.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.LerpW }),
			rwkv("time_mix_lerp_k.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.LerpK }),
			rwkv("time_mix_lerp_v.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.LerpV }),
			rwkv("time_mix_lerp_r.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.LerpR }),
			rwkv("time_mix_lerp_g.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.LerpG }),
			rwkv("time_mix_receptance.weight", roleMatrix, embdSq, func(R *RWKVLayer) **ggml.Tensor { return &R.Receptance }),
			rwkv("time_mix_key.weight", roleMatrix, embdSq, func(R *RWKVLayer) **ggml.Tensor { return &R.Key }),
			rwkv("time_mix_value.weight", roleMatrix, embdSq, func(R *RWKVLayer) **ggml.Tensor { return &R.Value }),
			rwkv("time_mix_gate.weight", roleMatrix, embdSq, func(R *RWKVLayer) **ggml.Tensor { return &R.Gate }),
			rwkv("time_mix_decay_w1.weight", roleParam, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.TimeDecayExtraDim} }), func(R *RWKVLayer) **ggml.Tensor { return &R.DecayW1 }),
			rwkv("time_mix_decay_w2.weight", roleParam, shape(func(h *Hparams) []int { return []int{h.TimeDecayExtraDim, h.NEmbd} }), func(R *RWKVLayer) **ggml.Tensor { return &R.DecayW2 }),
			rwkv("time_mix_decay.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.Decay }),
			rwkv("time_mix_first.weight", roleParam, shape(func(h *Hparams) []int { return []int{h.WKVHeadSize, rwkvHeads(h)} }), func(R *RWKVLayer) **ggml.Tensor { return &R.First }),
			rwkv("time_mix_ln.weight", roleNorm, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.LN }),
			rwkv("time_mix_ln.bias", roleBias, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.LNB }),
			rwkv("time_mix_output.weight", roleMatrix, embdSq, func(R *RWKVLayer) **ggml.Tensor { return &R.Output }),
			rwkv("attn_norm_2.weight", roleNorm, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.AttnNorm2 }),
			rwkv("attn_norm_2.bias", roleBias, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.AttnNorm2B }),
			rwkv("channel_mix_lerp_k.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.ChanLerpK }),
			rwkv("channel_mix_lerp_r.weight", roleParam, embd, func(R *RWKVLayer) **ggml.Tensor { return &R.ChanLerpR }),
			rwkv("channel_mix_receptance.weight", roleMatrix, embdSq, func(R *RWKVLayer) **ggml.Tensor { return &R.ChanReceptance }),
			rwkv("channel_mix_key.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NFF} }), func(R *RWKVLayer) **ggml.Tensor { return &R.ChanKey }),
			rwkv("channel_mix_value.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NFF, h.NEmbd} }), func(R *RWKVLayer) **ggml.Tensor { return &R.ChanValue }),
			tOutNorm, tOutNormB,
			outputOf(global("output.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NVocab} }), func(m *Model) **ggml.Tensor { return &m.Output })),
		},
		state: stateRecurrent,
		graph: rwkv6Graph{},
	})
}

// RWKVLayer holds the weights of an rwkv6 layer other than its first
// LayerNorm (Layer.AttnNorm, AttnNormB); nil in other architectures.
type RWKVLayer struct {
	// time mix: the token-shift interpolations (x, then w, k, v, r, g, each
	// plus its data-dependent part from the low-rank MixW1 [E, 5 mix], MixW2
	// [mix, E, 5])
	LerpX, LerpW, LerpK, LerpV, LerpR, LerpG *ggml.Tensor
	MixW1, MixW2                             *ggml.Tensor
	Receptance, Key, Value, Gate, Output     *ggml.Tensor // [E, E] projections
	// the decay: Decay plus the low-rank DecayW2(tanh(DecayW1 x))
	Decay, DecayW1, DecayW2 *ggml.Tensor
	First                   *ggml.Tensor // the current token's bonus (u) [head size, heads]
	LN, LNB                 *ggml.Tensor // the group norm's weight and bias
	// channel mix, after its LayerNorm
	AttnNorm2, AttnNorm2B              *ggml.Tensor
	ChanLerpK, ChanLerpR               *ggml.Tensor
	ChanReceptance, ChanKey, ChanValue *ggml.Tensor
}

// rwkvHeads is the number of WKV heads (0 before wkv.head_size is known).
func rwkvHeads(h *Hparams) int {
	if h.WKVHeadSize <= 0 {
		return 0
	}
	return h.NEmbd / h.WKVHeadSize
}

var embdSq = shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NEmbd} })

func rwkv(name string, role tensorRole, sh func(h *Hparams) []int, field func(R *RWKVLayer) **ggml.Tensor) tensorSpec {
	return perLayer(name, role, sh, func(L *Layer) **ggml.Tensor { return field(&L.RWKV) })
}

// rwkv6Graph builds rwkv6's graph (llama.cpp's build_rwkv6).
type rwkv6Graph struct{}

func (rwkv6Graph) swaLayers(*Hparams) bool { return false }
func (rwkv6Graph) nodesPerLayer() int      { return 128 }

// stateSizes: the token shift of the time and the channel mix (E each),
// the WKV state of the heads (head size x E).
func (rwkv6Graph) stateSizes(h *Hparams) (k, v int) { return 2 * h.NEmbd, h.WKVHeadSize * h.NEmbd }

// rwkvGroupNormEps is the epsilon of the time mix's group norm (llama.cpp
// 1.3.3 writes 64e-5 in its graph).
const rwkvGroupNormEps = 64e-5

func (rwkv6Graph) build(m *Model, ctx *ggml.Context, kv *kvCache, b *batchGraph) {
	h := &m.Hparams
	n, e := b.n, h.NEmbd
	ln := &decoder{norm: normLayer}
	const f = 4 // bytes of an f32
	x := ln.normed(ctx, h, ctx.GetRows(m.TokEmbd, b.tokens), m.TokNorm, m.TokNormB)
	for il := range m.Layers {
		L := &m.Layers[il]
		shift := kv.k[il] // the time mix's previous input, then the channel mix's
		xa := ln.normed(ctx, h, x, L.AttnNorm, L.AttnNormB)
		prev := tokenShift(ctx, ctx.View1D(shift, e, 0), xa, n)
		x = ctx.Add(x, rwkvTimeMix(ctx, h, &L.RWKV, xa, prev, kv.v[il], b, n))
		xf := ln.normed(ctx, h, x, L.RWKV.AttnNorm2, L.RWKV.AttnNorm2B)
		prev = tokenShift(ctx, ctx.View1D(shift, e, e*f), xf, n)
		x = ctx.Add(x, rwkvChannelMix(ctx, &L.RWKV, xf, prev))
		// the reads of the token shift come before its stores
		b.g.BuildForward(x)
		b.g.BuildForward(ctx.Cpy(lastRows(ctx, xa, 1), ctx.View2D(shift, e, 1, e*f, 0)))
		b.g.BuildForward(ctx.Cpy(lastRows(ctx, xf, 1), ctx.View2D(shift, e, 1, e*f, e*f)))
		if r := h.RescaleEveryNLayers; r > 0 && (il+1)%r == 0 {
			x = ctx.Scale(x, 0.5)
		}
	}
	if b.nOut < n {
		x = lastRows(ctx, x, b.nOut)
	}
	x = ln.normed(ctx, h, x, m.OutNorm, m.OutNormB)
	b.logits = ctx.MulMat(m.Output, x).SetName("logits").SetOutput()
}

// rwkvTimeMix is the time mix of the normed input cur [E, n] whose token
// shift is prev [E, n]; it reads the WKV state and stores the new one.
func rwkvTimeMix(ctx *ggml.Context, h *Hparams, R *RWKVLayer, cur, prev, state *ggml.Tensor, b *batchGraph, n int) *ggml.Tensor {
	e, hs := h.NEmbd, h.WKVHeadSize
	heads, mix := rwkvHeads(h), h.TimeMixExtraDim
	const f = 4
	sx := ctx.Sub(prev, cur)
	lerp := func(mu, extra *ggml.Tensor) *ggml.Tensor { // cur + sx*(mu + extra)
		if extra != nil {
			mu = ctx.Add(extra, mu)
		}
		return ctx.Add(ctx.Mul(sx, mu), cur)
	}
	// the five data-dependent parts: tanh(x W1) split in five of mix,
	// each times its [mix, E] slice of W2 -> [E, n, 5]
	xxx := ctx.Tanh(ctx.MulMat(R.MixW1, lerp(R.LerpX, nil)))               // [5 mix, n]
	xxx = ctx.Cont(ctx.Permute(ctx.Reshape3D(xxx, mix, 5, n), 0, 2, 1, 3)) // [mix, n, 5]
	parts := ctx.MulMat(R.MixW2, xxx)                                      // [E, n, 5]
	part := func(i int) *ggml.Tensor { return ctx.View2D(parts, e, n, e*f, i*e*n*f) }
	xw, xk, xv, xr, xg := lerp(R.LerpW, part(0)), lerp(R.LerpK, part(1)), lerp(R.LerpV, part(2)), lerp(R.LerpR, part(3)), lerp(R.LerpG, part(4))

	r := ctx.Transpose(ctx.Reshape4D(ctx.MulMat(R.Receptance, xr), hs, 1, heads, n)) // [1, hs, H, n]
	k := ctx.Transpose(ctx.Reshape4D(ctx.MulMat(R.Key, xk), 1, hs, heads, n))        // [hs, 1, H, n]
	v := ctx.Transpose(ctx.Reshape4D(ctx.MulMat(R.Value, xv), hs, 1, heads, n))      // [1, hs, H, n]
	g := ctx.Silu(ctx.MulMat(R.Gate, xg))
	w := ctx.MulMat(R.DecayW2, ctx.Tanh(ctx.MulMat(R.DecayW1, xw)))
	w = ctx.Add(w, ctx.Reshape1D(R.Decay, e))
	w = ctx.Reshape4D(ctx.Exp(ctx.Neg(ctx.Exp(w))), 1, hs, heads, n)

	out := ctx.RWKVWKV6(k, v, r, R.First, w, ctx.Reshape2D(state, hs*e, 1)) // [E, n + hs]
	b.g.BuildForward(ctx.Cpy(ctx.View1D(out, hs*e, e*n*f), ctx.View1D(state, hs*e, 0)))
	cur = ctx.View1D(out, e*n, 0)

	// the group norm: each head's outputs normed apart
	cur = ctx.Norm(ctx.Reshape3D(cur, hs, heads, n), rwkvGroupNormEps)
	cur = ctx.Add(ctx.Mul(ctx.Reshape2D(cur, e, n), R.LN), R.LNB)
	return ctx.MulMat(R.Output, ctx.Mul(cur, g))
}

// rwkvChannelMix is the channel mix of the normed input cur [E, n] whose
// token shift is prev.
func rwkvChannelMix(ctx *ggml.Context, R *RWKVLayer, cur, prev *ggml.Tensor) *ggml.Tensor {
	sx := ctx.Sub(prev, cur)
	xk := ctx.Add(ctx.Mul(sx, R.ChanLerpK), cur)
	xr := ctx.Add(ctx.Mul(sx, R.ChanLerpR), cur)
	r := ctx.Sigmoid(ctx.MulMat(R.ChanReceptance, xr))
	k := ctx.Sqr(ctx.Relu(ctx.MulMat(R.ChanKey, xk)))
	return ctx.Mul(r, ctx.MulMat(R.ChanValue, k))
}
