package llama

import (
	"fmt"
	"math"

	"github.com/ggml-go/ggml"
)

// The forward graph of a batch of tokens, as llama.cpp's llama builds it:
// per layer RMS norm, Q/K/V projections, rope, attention over the KV cache
// (K stored a row per position, V transposed: a row per channel), output
// projection, residual, RMS norm, SwiGLU feed-forward, residual; then the
// final norm and the vocabulary projection of the rows whose logits are
// wanted (only the last one while generating, which also skips the last
// layer's feed-forward for the other rows).

// batchGraph is a built graph and its input and output tensors.
type batchGraph struct {
	g      *ggml.Graph
	tokens *ggml.Tensor // i32 [n]
	pos    *ggml.Tensor // i32 [n]
	mask   *ggml.Tensor // f32 [nKV, n]
	logits *ggml.Tensor // f32 [n_vocab, nOut]
	n      int
	nPast  int
	nOut   int
	nKV    int // cache positions attention reads (padded to kvPad when n == 1)

	// One-token graphs only: the tensors that place this token's K and V in
	// the cache (per layer: the destination views and the Cpy results, views
	// of the cache too), moved by moveTo; and the host copies of the inputs.
	stores  []*ggml.Tensor
	kvBytes [2]int // bytes per position of the K stores and the V stores
	inPos   []int32
	inMask  []float32
}

// kvPad is the granularity of the attention length of one-token graphs:
// such a graph reads the cache up to the next multiple of kvPad (or nCtx),
// with the positions after the token masked, so that one graph serves
// kvPad consecutive positions (only its K/V store views move). The masked
// positions add exact zeros to the attention sums, but the kernels group
// the sums differently for another length: logits change in the last bits
// (as llama.cpp's, which pads the same way). 32 keeps the extra attention
// work small next to the weights' (256 would be a few percent per token on
// small models).
const kvPad = 32

// decodeKV is the attention length of the one-token graph at position nPast.
func decodeKV(nPast, nCtx int) int {
	return min((nPast/kvPad+1)*kvPad, nCtx)
}

// graphSize is the node capacity a graph of the model needs.
func (m *Model) graphSize() int { return 40*m.NLayer + 64 }

// ropeParams are the rope parameters of the model.
func (m *Model) ropeParams() ggml.RopeParams {
	p := ggml.DefaultRopeParams(m.NRot, ggml.RopeTypeNorm)
	p.NCtxOrig = m.NCtxTrain
	p.FreqBase = m.RopeFreqBase
	p.FreqScale = m.RopeFreqScale
	return p
}

// build adds to ctx the graph of n tokens at positions nPast.. writing their
// K and V into kv; nOut is 1 (logits of the last token) or n (of every token).
func (m *Model) build(ctx *ggml.Context, kv *kvCache, n, nPast, nOut int) *batchGraph {
	h := m.Hparams
	hd, nkv, gqa := h.HeadDim, nPast+n, h.NEmbdGQA()
	if n == 1 {
		nkv = decodeKV(nPast, kv.nCtx)
	}
	b := &batchGraph{n: n, nPast: nPast, nOut: nOut, nKV: nkv}
	b.g = ctx.NewGraphCustom(m.graphSize(), false)
	b.tokens = ctx.NewTensor1D(ggml.TypeI32, n).SetName("inp_tokens").SetInput()
	b.pos = ctx.NewTensor1D(ggml.TypeI32, n).SetName("inp_pos").SetInput()
	b.mask = ctx.NewTensor2D(ggml.TypeF32, nkv, n).SetName("inp_mask").SetInput()
	rope := m.ropeParams()
	scale := float32(1 / math.Sqrt(float64(hd)))
	es := kv.k[0].ElementSize()

	x := ctx.GetRows(m.TokEmbd, b.tokens)
	var faMask *ggml.Tensor // the mask as flash attention takes it, made once
	var xLast *ggml.Tensor  // the last layer's residual rows that go on
	for il, L := range m.Layers {
		if il == len(m.Layers)-1 && nOut < n {
			// The view joins the graph here, after the nodes of the
			// previous layer: where the last layer is on another device
			// (placement.go) it is then part of that layer's split, not
			// of the next device's, whose graph must not reach the
			// previous device's memory through it.
			xLast = lastRows(ctx, x, nOut)
			b.g.BuildForward(xLast)
		}
		cur := ctx.Mul(ctx.RMSNorm(x, h.RMSEps), L.AttnNorm)
		q, k, v := m.projectQKV(ctx, &L, cur, b.pos, n, rope)

		// append this batch's K and V to the cache
		kc, vc := kv.k[il], kv.v[il]
		kDst, vDst := kv.rows(ctx, il, nPast, n)
		vSrc := ctx.Transpose(v)
		if kv.flash {
			vSrc = v
		}
		kCpy, vCpy := ctx.Cpy(k, kDst), ctx.Cpy(vSrc, vDst)
		b.g.BuildForward(kCpy)
		b.g.BuildForward(vCpy)
		if n == 1 {
			b.stores = append(b.stores, kDst, kCpy, vDst, vCpy)
		}

		// attention over positions 0..nkv of the cache
		kAll := ctx.View3D(kc, hd, nkv, h.NHeadKV, es*gqa, es*hd, 0) // [hd, nkv, nHeadKV]
		if kv.flash {
			if faMask == nil { // f16, its rows padded: what FlashAttnExt takes
				rows := (n + ggml.KQMaskPad - 1) / ggml.KQMaskPad * ggml.KQMaskPad
				faMask = ctx.Cpy(ctx.Pad(b.mask, 0, rows-n, 0, 0), ctx.NewTensor2D(ggml.TypeF16, nkv, rows))
			}
			vAll := ctx.View3D(vc, hd, nkv, h.NHeadKV, es*gqa, es*hd, 0)                         // [hd, nkv, nHeadKV]
			kqv := ctx.FlashAttnExt(ctx.Permute(q, 0, 2, 1, 3), kAll, vAll, faMask, scale, 0, 0) // [hd, nHead, n]
			cur = ctx.Reshape2D(kqv, h.NEmbd, n)
		} else {
			kq := ctx.MulMat(kAll, ctx.Permute(q, 0, 2, 1, 3))                       // [nkv, n, nHead]
			kq = ctx.SoftMaxExt(kq, b.mask, scale, 0)                                // causal
			vAll := ctx.View3D(vc, nkv, hd, h.NHeadKV, es*kv.nCtx, es*kv.nCtx*hd, 0) // [nkv, hd, nHeadKV]
			kqv := ctx.MulMat(vAll, kq)                                              // [hd, n, nHead]
			if n == 1 {
				cur = ctx.Reshape2D(kqv, h.NEmbd, 1) // one token: the heads are already in order
			} else {
				cur = ctx.Cont2D(ctx.Permute(kqv, 0, 2, 1, 3), h.NEmbd, n)
			}
		}
		cur = ctx.MulMat(L.Wo, cur)

		rows := n
		if il == len(m.Layers)-1 && nOut < n {
			// only the last rows go on: the rest of the graph is per row
			cur = lastRows(ctx, cur, nOut)
			x = xLast
			rows = nOut
		}
		x = m.feedForward(ctx, &L, ctx.Add(cur, x), rows)
	}
	if len(m.Layers) == 0 && nOut < n {
		x = lastRows(ctx, x, nOut)
	}
	x = ctx.Mul(ctx.RMSNorm(x, h.RMSEps), m.OutNorm)
	b.logits = ctx.MulMat(m.Output, x).SetName("logits").SetOutput()
	b.g.BuildForward(b.logits)
	if n == 1 {
		b.kvBytes = [2]int{es * gqa, kv.vStoreBytes()}
		b.inPos, b.inMask = make([]int32, 1), make([]float32, nkv)
	}
	return b
}

// projectQKV computes the rotated queries [hd, nHead, n] and keys
// [hd, nHeadKV, n] and the values [NEmbdGQA, n] of the normed input cur:
// with a fused [Wq; Wk; Wv] one mul_mat, and one rope for the queries and
// keys (adjacent in each row of the product), else three and two.
func (m *Model) projectQKV(ctx *ggml.Context, L *Layer, cur, pos *ggml.Tensor, n int, rope ggml.RopeParams) (q, k, v *ggml.Tensor) {
	h := m.Hparams
	hd := h.HeadDim
	freqs := m.RopeFreqs
	if L.ropeFreqs != nil {
		freqs = L.ropeFreqs
	}
	if L.Wqkv == nil {
		q = ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(L.Wq, cur), hd, h.NHead, n), pos, freqs, rope)
		k = ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(L.Wk, cur), hd, h.NHeadKV, n), pos, freqs, rope)
		return q, k, ctx.MulMat(L.Wv, cur)
	}
	const f = 4 // bytes of an f32

	qkv := ctx.MulMat(L.Wqkv, cur) // [NEmbd + 2 NEmbdGQA, n]
	row := (h.NEmbd + 2*h.NEmbdGQA()) * f
	heads := h.NHead + h.NHeadKV
	qk := ctx.RopeExt(ctx.View3D(qkv, hd, heads, n, hd*f, row, 0), pos, freqs, rope) // [hd, heads, n]
	q = ctx.View3D(qk, hd, h.NHead, n, hd*f, heads*hd*f, 0)
	k = ctx.View3D(qk, hd, h.NHeadKV, n, hd*f, heads*hd*f, h.NHead*hd*f)
	v = ctx.View2D(qkv, h.NEmbdGQA(), n, row, (h.NEmbd+h.NEmbdGQA())*f)
	return q, k, v
}

// feedForward is the second half of a block: RMS norm, SwiGLU, residual;
// in has n rows.
func (m *Model) feedForward(ctx *ggml.Context, L *Layer, in *ggml.Tensor, n int) *ggml.Tensor {
	cur := ctx.Mul(ctx.RMSNorm(in, m.RMSEps), L.FFNNorm)
	var gate, up *ggml.Tensor
	if L.WGateUp != nil {
		gu := ctx.MulMat(L.WGateUp, cur) // [2 NFF, n]: gate rows, then up rows
		row := 2 * m.NFF * 4
		gate = ctx.View2D(gu, m.NFF, n, row, 0)
		up = ctx.View2D(gu, m.NFF, n, row, m.NFF*4)
	} else {
		gate, up = ctx.MulMat(L.WGate, cur), ctx.MulMat(L.WUp, cur)
	}
	cur = ctx.MulMat(L.WDown, ctx.Mul(ctx.Silu(gate), up))
	return ctx.Add(cur, in)
}

// lastRows is a view of the last k columns of the 2-D tensor t.
func lastRows(ctx *ggml.Context, t *ggml.Tensor, k int) *ggml.Tensor {
	ne, nb := t.Ne(), t.Nb()
	return ctx.View2D(t, ne[0], k, nb[1], (ne[1]-k)*nb[1])
}

// moveTo makes a one-token graph evaluate the token at position nPast
// (< nKV): its K and V go to that row of the cache.
func (b *batchGraph) moveTo(nPast int) error {
	if b.n != 1 || nPast < 0 || nPast >= b.nKV {
		return fmt.Errorf("llama: internal error: a graph of %d tokens over %d positions moved to position %d", b.n, b.nKV, nPast)
	}
	for i, t := range b.stores {
		if err := t.SetViewOffset(b.kvBytes[i/2%2] * nPast); err != nil {
			return err
		}
	}
	b.nPast = nPast
	return nil
}

// setInputs writes the token ids, their positions and the causal mask
// (token i sees the cache up to position nPast+i). A one-token graph keeps
// its input slices (made once by build) across tokens; a batch graph is
// evaluated once and gets them here.
func (b *batchGraph) setInputs(tokens []int32) error {
	if b.inPos == nil {
		b.inPos, b.inMask = make([]int32, b.n), make([]float32, b.nKV*b.n)
	}
	inf := float32(math.Inf(-1))
	for i := range b.n {
		b.inPos[i] = int32(b.nPast + i)
		row := b.inMask[i*b.nKV : (i+1)*b.nKV]
		for j := range row {
			if j <= b.nPast+i {
				row[j] = 0
			} else {
				row[j] = inf
			}
		}
	}
	if err := b.tokens.SetInt32s(tokens); err != nil {
		return err
	}
	if err := b.pos.SetInt32s(b.inPos); err != nil {
		return err
	}
	return b.mask.SetFloat32s(b.inMask)
}
