package llama

import (
	"fmt"
	"math"

	"github.com/ggml-go/ggml"
)

// bert: BERT sentence encoders (bge, MiniLM, ...) as llama.cpp 1.3.3
// builds LLM_ARCH_BERT: token, token-type (row 0: every token is of
// "sentence A") and learned position embeddings, a LayerNorm, then
// post-norm blocks: attention with biases over the whole sequence (not
// causal unless attention.causal says so), residual, LayerNorm, GELU
// feed-forward with biases, residual, LayerNorm. No output head: the
// hidden states are the output, pooled as pooling_type says
// (Session.Embeddings). No KV cache (stateNone).
func init() {
	registerArch(&architecture{
		name:     "bert",
		hparams:  encoderHparams(false),
		check:    checkEncoder,
		ropeType: ggml.RopeTypeNeox, // llama.cpp's, unused
		tensors: []tensorSpec{
			tTokEmbd, tTypeEmbd, tPosEmbd, tTokNorm, tTokNormB,
			tWq, tBq, tWk, tBk, tWv, tBv, tWo, tBo, tAttnOutNorm, tAttnOutNormB,
			tWUp, tBUp, tWDown, tBDown, tLayerOutNorm, tLayerOutNormB,
		},
		state: stateNone,
		graph: &encoder{ffn: ffnGELU},
	})

	// nomic-bert (nomic-embed-text): no position embeddings but NeoX rope
	// on Q and K, a fused QKV without biases, SwiGLU without biases;
	// pooling_type is required.
	registerArch(&architecture{
		name:     "nomic-bert",
		hparams:  encoderHparams(true),
		check:    checkEncoder,
		ropeType: ggml.RopeTypeNeox,
		tensors: []tensorSpec{
			tTokEmbd, tTypeEmbd, tTokNorm, tTokNormB,
			perLayer("attn_qkv.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NEmbdQ() + 2*h.NEmbdGQA()} }), func(L *Layer) **ggml.Tensor { return &L.Wqkv }),
			tWo, tAttnOutNorm, tAttnOutNormB,
			tWGate, tWUp, tWDown, tLayerOutNorm, tLayerOutNormB,
		},
		state: stateNone,
		graph: &encoder{ffn: ffnSwiGLU, rope: true},
	})

	// jina-bert-v2 (jina-embeddings-v2): no positions but ALiBi (maximum
	// bias 8) over the distances between tokens, optional LayerNorms of Q
	// and K and a second norm after the attention, a GELU-gated
	// feed-forward with a bias after the down projection. The optional
	// cls tensors (a reranker's head) are read for the rank pooling only,
	// which is refused.
	registerArch(&architecture{
		name:     "jina-bert-v2",
		hparams:  encoderHparams(false),
		check:    checkEncoder,
		ropeType: ggml.RopeTypeNorm, // none in llama.cpp; unused
		tensors: []tensorSpec{
			tTokEmbd, tTypeEmbd, tTokNorm, tTokNormB,
			global("cls.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, 1} }), func(m *Model) **ggml.Tensor { return &m.Cls }).opt(),
			global("cls.bias", roleBias, shape(func(h *Hparams) []int { return []int{1} }), func(m *Model) **ggml.Tensor { return &m.ClsB }).opt(),
			tWq, tBq,
			perLayer("attn_q_norm.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.QNorm }).opt(),
			perLayer("attn_q_norm.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.QNormB }).opt(),
			tWk, tBk,
			perLayer("attn_k_norm.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.KNorm }).opt(),
			perLayer("attn_k_norm.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.KNormB }).opt(),
			tWv, tBv, tWo, tBo, tAttnOutNorm, tAttnOutNormB,
			perLayer("attn_norm_2.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.AttnNorm2 }).opt(),
			perLayer("attn_norm_2.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.AttnNorm2B }).opt(),
			tWUp, tWGate, tWDown, tBDown, tLayerOutNorm, tLayerOutNormB,
		},
		state: stateNone,
		graph: &encoder{ffn: ffnGeGLU, alibi: 8},
	})
}

// encoderHparams are the keys of the BERT-like encoders (llama.cpp's
// LLM_ARCH_BERT and its kin): the decoders' (rope keys included, read by
// llama.cpp for every architecture), the LayerNorm epsilon,
// attention.causal and the token type count (required), pooling_type
// (required for nomic-bert).
func encoderHparams(poolingRequired bool) []hparamKey {
	return withKeys(keyNormEps,
		hparamKey{key: "attention.causal", required: true, field: hpBool(func(h *Hparams) *bool { return &h.Causal }),
			def: func(h *Hparams) { h.Causal = true }},
		hparamKey{key: "tokenizer.ggml.token_type_count", global: true, required: true, min: 1,
			field: hpInt(func(h *Hparams) *int { return &h.NVocabType })},
		hparamKey{key: "pooling_type", required: poolingRequired, field: func(h *Hparams) any { return &h.PoolingType }},
	)
}

// The encoders' own tensors.
var (
	tTypeEmbd      = global("token_types.weight", roleEmbd, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NVocabType} }), func(m *Model) **ggml.Tensor { return &m.TypeEmbd })
	tPosEmbd       = global("position_embd.weight", roleEmbd, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NCtxTrain} }), func(m *Model) **ggml.Tensor { return &m.PosEmbd })
	tTokNorm       = global("token_embd_norm.weight", roleNorm, embd, func(m *Model) **ggml.Tensor { return &m.TokNorm })
	tTokNormB      = global("token_embd_norm.bias", roleBias, embd, func(m *Model) **ggml.Tensor { return &m.TokNormB })
	tAttnOutNorm   = perLayer("attn_output_norm.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.AttnOutNorm })
	tAttnOutNormB  = perLayer("attn_output_norm.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.AttnOutNormB })
	tLayerOutNorm  = perLayer("layer_output_norm.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.LayerOutNorm })
	tLayerOutNormB = perLayer("layer_output_norm.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.LayerOutNormB })
)

// checkEncoder checks the attention's shape as checkDecoder does (the
// rope, unused, aside) and the pooling type.
func checkEncoder(h *Hparams) error {
	if err := checkDecoder(h, false); err != nil {
		return err
	}
	if h.NHeadKV != h.NHead {
		return fmt.Errorf("%s: attention.head_count_kv %d differs from attention.head_count %d", h.Arch, h.NHeadKV, h.NHead)
	}
	if h.PoolingType == PoolingRank {
		return fmt.Errorf("%s: pooling type rank (a classification head) is not supported", h.Arch)
	}
	return nil
}

// encoder is the graph of the BERT-like encoders: the hidden states of
// every token after the last block ([NEmbd, n] in b.logits; pooling is
// Session.Embeddings'). kv is nil: the batch is the whole sequence, at
// positions 0..n-1.
type encoder struct {
	ffn   ffnKind // ffnGELU: up, GELU, down; ffnSwiGLU, ffnGeGLU: gated (biases where the layer has them)
	rope  bool    // rotate Q and K by position (nomic-bert)
	alibi float32 // ALiBi's maximum bias (jina-bert-v2); 0: none
}

func (e *encoder) nodesPerLayer() int        { return 48 }
func (e *encoder) swaLayers(h *Hparams) bool { return false }

func (e *encoder) build(m *Model, ctx *ggml.Context, _ *kvCache, b *batchGraph) {
	h := &m.Hparams
	n := b.n
	b.nonCausal = !h.Causal
	ln := &decoder{norm: normLayer}

	x := ctx.GetRows(m.TokEmbd, b.tokens)
	typ := ctx.View1D(m.TypeEmbd, h.NEmbd, 0) // token type 0
	if typ.Type() != ggml.TypeF32 {
		typ = ctx.Cpy(typ, ctx.NewTensor1D(ggml.TypeF32, h.NEmbd))
	}
	x = ctx.Add(x, typ)
	if m.PosEmbd != nil {
		x = ctx.Add(ctx.GetRows(m.PosEmbd, b.pos), x)
	}
	x = ln.normed(ctx, h, x, m.TokNorm, m.TokNormB)

	hd := h.HeadDim
	scale := float32(1 / math.Sqrt(float64(hd)))
	b.alibi = e.alibi > 0
	b.noPos = !e.rope && m.PosEmbd == nil
	rope := h.ropeParams()
	for il := range m.Layers {
		L := &m.Layers[il]
		q, k, v := encoderQKV(ctx, h, L, x, n)
		if L.QNorm != nil {
			q = ln.normed(ctx, h, q, L.QNorm, L.QNormB)
		}
		if L.KNorm != nil {
			k = ln.normed(ctx, h, k, L.KNorm, L.KNormB)
		}
		q, k = ctx.Reshape3D(q, hd, h.NHead, n), ctx.Reshape3D(k, hd, h.NHeadKV, n)
		if e.rope {
			q, k = ctx.RopeExt(q, b.pos, nil, rope), ctx.RopeExt(k, b.pos, nil, rope)
		}
		q = ctx.Permute(q, 0, 2, 1, 3)                                 // [hd, n, nHead]
		k = ctx.Cont(ctx.Permute(k, 0, 2, 1, 3))                       // [hd, n, nHeadKV]
		kq := ctx.SoftMaxExt(ctx.MulMat(k, q), b.mask, scale, e.alibi) // [n, n, nHead]
		vt := ctx.Cont(ctx.Transpose(v))                               // [n, gqa]
		kqv := ctx.MulMat(ctx.Reshape3D(vt, n, hd, h.NHeadKV), kq)     // [hd, n, nHead]
		cur := ctx.Cont2D(ctx.Permute(kqv, 0, 2, 1, 3), h.NEmbdGQA(), n)
		b.g.BuildForward(cur)
		cur = addBias(ctx, ctx.MulMat(L.Wo, cur), L.Bo)
		cur = ln.normed(ctx, h, ctx.Add(cur, x), L.AttnOutNorm, L.AttnOutNormB)
		if L.AttnNorm2 != nil {
			cur = ln.normed(ctx, h, ctx.Add(cur, x), L.AttnNorm2, L.AttnNorm2B)
		}

		in := cur
		switch e.ffn {
		case ffnGELU:
			cur = ctx.Gelu(addBias(ctx, ctx.MulMat(L.WUp, cur), L.BUp))
		case ffnGeGLU:
			cur = ctx.Mul(ctx.Gelu(ctx.MulMat(L.WGate, cur)), ctx.MulMat(L.WUp, cur))
		default:
			cur = ctx.Mul(ctx.Silu(ctx.MulMat(L.WGate, cur)), ctx.MulMat(L.WUp, cur))
		}
		cur = addBias(ctx, ctx.MulMat(L.WDown, cur), L.BDown)
		x = ln.normed(ctx, h, ctx.Add(cur, in), L.LayerOutNorm, L.LayerOutNormB)
	}
	b.logits = x.SetName("result_embd").SetOutput()
	b.embd = b.logits
}

// encoderQKV is the queries, keys and values [width, n] of x, with their
// biases, each contiguous: from the loader's fused matrix when it made one
// (its rows are those of Wq, Wk and Wv: the same sums), else from three.
func encoderQKV(ctx *ggml.Context, h *Hparams, L *Layer, x *ggml.Tensor, n int) (q, k, v *ggml.Tensor) {
	if L.Wqkv == nil {
		return addBias(ctx, ctx.MulMat(L.Wq, x), L.Bq), addBias(ctx, ctx.MulMat(L.Wk, x), L.Bk), addBias(ctx, ctx.MulMat(L.Wv, x), L.Bv)
	}
	wq, gqa := h.NEmbdQ(), h.NEmbdGQA()
	qkv := addBias(ctx, ctx.MulMat(L.Wqkv, x), L.Bqkv)
	row := qkv.Nb()[1]
	part := func(width, off int, bias *ggml.Tensor) *ggml.Tensor {
		t := ctx.View2D(qkv, width, n, row, off*4)
		if L.Bqkv == nil && bias != nil {
			return ctx.Add(t, bias)
		}
		return ctx.Cont(t)
	}
	return part(wq, 0, L.Bq), part(gqa, wq, L.Bk), part(gqa, wq+gqa, L.Bv)
}
