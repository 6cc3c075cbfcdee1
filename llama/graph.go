package llama

import (
	"fmt"
	"math"

	"github.com/ggml-go/ggml"
)

// The forward graph of a batch of tokens. build makes the graph and its
// inputs and asks the model's architecture (graphBuilder) for the nodes.
// The decoders share one builder, decoder, made of blocks: norms (RMS, or
// LayerNorm with its bias), the Q/K/V projections (fused or not, biases
// when the file has them) with rope (normal or NeoX), attention over the KV
// cache (K stored a row per position, V transposed: a row per channel;
// sliding-window layers see a mask of their own; optional soft-capping),
// and the feed-forward kinds (SwiGLU, GELU without gate, GELU gate).
// llama's graph is llama.cpp's: per layer RMS norm, Q/K/V projections,
// rope, attention, output projection, residual, RMS norm, SwiGLU
// feed-forward, residual; then the final norm and the vocabulary
// projection of the rows whose logits are wanted (only the last one while
// generating, which also skips the last layer's feed-forward for the
// other rows).

// batchGraph is a built graph and its input and output tensors.
type batchGraph struct {
	g      *ggml.Graph
	tokens *ggml.Tensor // i32 [n]
	pos    *ggml.Tensor // i32 [n]
	mask   *ggml.Tensor // f32 [nKV, n] (nil when no layer reads it)
	// maskSWA is the mask of the sliding-window layers (f32 [nKV, n]; nil
	// without such layers): it also hides the positions nSWA or more
	// before the token.
	maskSWA *ggml.Tensor
	nSWA    int
	logits  *ggml.Tensor // f32 [n_vocab, nOut] (an encoder's: its output, [NEmbd, n])
	n       int
	nPast   int
	nOut    int
	nKV     int // cache positions attention reads (padded to kvPad when n == 1)

	// embd is the hidden states of the nOut rows after the output norm
	// ([NEmbd, nOut], kept as an output: Session.Embeddings reads it), or
	// nil where the architecture's graph does not give them.
	embd *ggml.Tensor
	// nonCausal: every token sees the whole batch (encoders; nPast is 0)
	nonCausal bool
	// alibi: the mask holds minus the distance between the positions
	// where it holds 0 (SoftMaxExt scales it by each head's slope)
	alibi bool
	// noPos: the graph does not read pos (jina-bert-v2: ALiBi only)
	noPos bool

	// One-token graphs only: the tensors that place this token's K and V in
	// the cache (per layer: the destination views and the Cpy results, views
	// of the cache too), moved by moveTo; and the host copies of the inputs.
	stores    []*ggml.Tensor
	kvBytes   [2]int // bytes per position of the K stores and the V stores
	inPos     []int32
	inMask    []float32
	inMaskSWA []float32

	// the masks as flash attention takes them, made once per graph
	faMask, faMaskSWA *ggml.Tensor
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
func (m *Model) graphSize() int { return m.arch.graph.nodesPerLayer()*m.NLayer + 64 }

// build adds to ctx the graph of n tokens at positions nPast.. writing their
// K and V into kv; nOut is 1 (logits of the last token) or n (of every token).
func (m *Model) build(ctx *ggml.Context, kv *kvCache, n, nPast, nOut int) *batchGraph {
	nkv := nPast + n
	if n == 1 && kv != nil {
		nkv = decodeKV(nPast, kv.nCtx)
	}
	b := &batchGraph{n: n, nPast: nPast, nOut: nOut, nKV: nkv}
	b.g = ctx.NewGraphCustom(m.graphSize(), false)
	b.tokens = ctx.NewTensor1D(ggml.TypeI32, n).SetName("inp_tokens").SetInput()
	if m.arch.state == stateRecurrent { // no positions: the state carries the order
		m.arch.graph.build(m, ctx, kv, b)
		b.g.BuildForward(b.logits)
		return b
	}
	b.pos = ctx.NewTensor1D(ggml.TypeI32, n).SetName("inp_pos").SetInput()
	b.mask = ctx.NewTensor2D(ggml.TypeF32, nkv, n).SetName("inp_mask").SetInput()
	if m.arch.graph.swaLayers(&m.Hparams) {
		b.nSWA = m.SlidingWindow
		b.maskSWA = ctx.NewTensor2D(ggml.TypeF32, nkv, n).SetName("inp_mask_swa").SetInput()
	}
	m.arch.graph.build(m, ctx, kv, b)
	b.g.BuildForward(b.logits)
	if b.g.Tensor("inp_mask") == nil {
		b.mask = nil // no layer reads it (phi3: all attend within the window)
	}
	if n == 1 && kv != nil {
		b.kvBytes = [2]int{kv.k[0].ElementSize() * m.NEmbdGQA(), kv.vStoreBytes()}
		b.inPos, b.inMask = make([]int32, 1), make([]float32, nkv)
		if b.maskSWA != nil {
			b.inMaskSWA = make([]float32, nkv)
		}
	}
	return b
}

// normKind is a decoder's norm.
type normKind int

const (
	normRMS   normKind = iota // RMS norm (attention.layer_norm_rms_epsilon) times the weight
	normLayer                 // LayerNorm (attention.layer_norm_epsilon) times the weight plus the bias
)

// ffnKind is a decoder's feed-forward network.
type ffnKind int

const (
	ffnSwiGLU ffnKind = iota // down(silu(gate(x)) * up(x))
	ffnGeGLU                 // down(gelu(gate(x)) * up(x))
	ffnGELU                  // down(gelu(up(x))), no gate
)

// decoder is the graph of the llama-like decoders: an architecture's file
// fills in the blocks that differ. What a file's optional weights add
// (biases, post-norms) is taken from the Layer fields that are not nil;
// what its keys add (soft-caps, the sliding window) from Hparams.
type decoder struct {
	norm normKind
	ffn  ffnKind
	// embdScale multiplies the token embeddings by sqrt(NEmbd) (gemma).
	embdScale bool
	// kqScale is the attention's scale; nil: 1/sqrt(HeadDim).
	kqScale func(h *Hparams) float32
	// scaleQ: the scale multiplies the rotated queries before attention,
	// which then scales by 1 (gemma's and phi3's graphs; the scores'
	// rounding, and what a soft-cap sees, are then llama.cpp's).
	scaleQ bool
	// swa reports whether layer il uses the sliding window of
	// h.SlidingWindow positions (nil: no layer does).
	swa func(h *Hparams, il int) bool
	// nodes bounds the graph nodes of a layer; 0: 48.
	nodes int
}

func (d *decoder) nodesPerLayer() int {
	if d.nodes > 0 {
		return d.nodes
	}
	return 48
}

func (d *decoder) swaLayers(h *Hparams) bool {
	if d.swa == nil || h.SlidingWindow <= 0 {
		return false
	}
	for il := range h.NLayer {
		if d.swa(h, il) {
			return true
		}
	}
	return false
}

func (d *decoder) build(m *Model, ctx *ggml.Context, kv *kvCache, b *batchGraph) {
	h := &m.Hparams
	n, nOut := b.n, b.nOut
	rope := h.ropeParams()
	scale := float32(1 / math.Sqrt(float64(h.HeadDim)))
	if d.kqScale != nil {
		scale = d.kqScale(h)
	}

	x := ctx.GetRows(m.TokEmbd, b.tokens)
	if d.embdScale {
		x = ctx.Scale(x, float32(math.Sqrt(float64(h.NEmbd))))
	}
	var xLast *ggml.Tensor // the last layer's residual rows that go on
	for il := range m.Layers {
		L := &m.Layers[il]
		last := il == len(m.Layers)-1 && nOut < n
		if last {
			// The view joins the graph here, after the nodes of the
			// previous layer: where the last layer is on another device
			// (placement.go) it is then part of that layer's split, not
			// of the next device's, whose graph must not reach the
			// previous device's memory through it.
			xLast = lastRows(ctx, x, nOut)
			b.g.BuildForward(xLast)
		}
		cur := d.normed(ctx, h, x, L.AttnNorm, L.AttnNormB)
		q, k, v := m.projectQKV(ctx, L, cur, b.pos, n, rope, m.ropeFactors(L, kv))
		kqScale := scale
		if d.scaleQ {
			// as rows of all heads: q may be a view of the fused product,
			// whose heads are contiguous within a token but not across
			q = ctx.View2D(q, h.HeadDim*h.NHead, n, q.Nb()[2], 0)
			q, kqScale = ctx.Reshape3D(ctx.Scale(q, scale), h.HeadDim, h.NHead, n), 1
		}
		mask := b.mask
		if d.swa != nil && b.maskSWA != nil && d.swa(h, il) {
			mask = b.maskSWA
		}
		cur = b.attend(ctx, h, kv, il, q, k, v, mask, kqScale)
		cur = addBias(ctx, ctx.MulMat(L.Wo, cur), L.Bo)
		if L.AttnPostNorm != nil {
			cur = d.normed(ctx, h, cur, L.AttnPostNorm, nil)
		}

		rows := n
		if last {
			// only the last rows go on: the rest of the graph is per row
			cur = lastRows(ctx, cur, nOut)
			x = xLast
			rows = nOut
		}
		x = d.feedForward(ctx, h, L, ctx.Add(cur, x), rows)
	}
	if len(m.Layers) == 0 && nOut < n {
		x = lastRows(ctx, x, nOut)
	}
	x = d.normed(ctx, h, x, m.OutNorm, m.OutNormB)
	b.embd = x.SetOutput()
	logits := ctx.MulMat(m.Output, x)
	if c := h.FinalSoftCap; c != 0 {
		logits = ctx.Scale(ctx.Tanh(ctx.Scale(logits, 1/c)), c)
	}
	b.logits = logits.SetName("logits").SetOutput()
}

// normed is the decoder's norm of x with weight w and bias bias (either
// may be nil).
func (d *decoder) normed(ctx *ggml.Context, h *Hparams, x, w, bias *ggml.Tensor) *ggml.Tensor {
	if d.norm == normLayer {
		x = ctx.Norm(x, h.NormEps)
	} else {
		x = ctx.RMSNorm(x, h.RMSEps)
	}
	if w != nil {
		x = ctx.Mul(x, w)
	}
	return addBias(ctx, x, bias)
}

// addBias is x + bias, or x when bias is nil.
func addBias(ctx *ggml.Context, x, bias *ggml.Tensor) *ggml.Tensor {
	if bias == nil {
		return x
	}
	return ctx.Add(x, bias)
}

// attend stores this batch's K and V of layer il in the cache and computes
// the attention of the queries q [hd, nHead, n] over the cache's first
// b.nKV positions, with mask: the heads' outputs [hd*nHead, n] (before the
// output projection). h.AttnSoftCap, if not 0, caps the scaled scores
// (c*tanh(scale*s/c), as flash attention does).
func (b *batchGraph) attend(ctx *ggml.Context, h *Hparams, kv *kvCache, il int, q, k, v, mask *ggml.Tensor, scale float32) *ggml.Tensor {
	n, nPast, nkv := b.n, b.nPast, b.nKV
	hd, gqa, es := h.HeadDim, h.NEmbdGQA(), kv.k[il].ElementSize()
	width := hd * h.NHead
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

	kAll := ctx.View3D(kc, hd, nkv, h.NHeadKV, es*gqa, es*hd, 0) // [hd, nkv, nHeadKV]
	if kv.flash {
		fa := &b.faMask
		if mask == b.maskSWA {
			fa = &b.faMaskSWA
		}
		if *fa == nil { // f16, its rows padded: what FlashAttnExt takes
			rows := (n + ggml.KQMaskPad - 1) / ggml.KQMaskPad * ggml.KQMaskPad
			*fa = ctx.Cpy(ctx.Pad(mask, 0, rows-n, 0, 0), ctx.NewTensor2D(ggml.TypeF16, nkv, rows))
		}
		vAll := ctx.View3D(vc, hd, nkv, h.NHeadKV, es*gqa, es*hd, 0)                                  // [hd, nkv, nHeadKV]
		kqv := ctx.FlashAttnExt(ctx.Permute(q, 0, 2, 1, 3), kAll, vAll, *fa, scale, 0, h.AttnSoftCap) // [hd, nHead, n]
		return ctx.Reshape2D(kqv, width, n)
	}
	kq := ctx.MulMat(kAll, ctx.Permute(q, 0, 2, 1, 3)) // [nkv, n, nHead]
	if c := h.AttnSoftCap; c != 0 {
		kq = ctx.Scale(ctx.Tanh(ctx.Scale(kq, scale/c)), c)
		scale = 1
	}
	kq = ctx.SoftMaxExt(kq, mask, scale, 0)                                  // causal
	vAll := ctx.View3D(vc, nkv, hd, h.NHeadKV, es*kv.nCtx, es*kv.nCtx*hd, 0) // [nkv, hd, nHeadKV]
	kqv := ctx.MulMat(vAll, kq)                                              // [hd, n, nHead]
	if n == 1 {
		return ctx.Reshape2D(kqv, width, 1) // one token: the heads are already in order
	}
	return ctx.Cont2D(ctx.Permute(kqv, 0, 2, 1, 3), width, n)
}

// projectQKV computes the rotated queries [hd, nHead, n] and keys
// [hd, nHeadKV, n] and the values [NEmbdGQA, n] of the normed input cur:
// with a fused [Wq; Wk; Wv] (and [Bq; Bk; Bv], or no biases) one mul_mat,
// and one rope for the queries and keys (adjacent in each row of the
// product), else three and two. freqs are the rope's factors (nil: none).
func (m *Model) projectQKV(ctx *ggml.Context, L *Layer, cur, pos *ggml.Tensor, n int, rope ggml.RopeParams, freqs *ggml.Tensor) (q, k, v *ggml.Tensor) {
	h := &m.Hparams
	hd, wq, gqa := h.HeadDim, h.NEmbdQ(), h.NEmbdGQA()
	const f = 4 // bytes of an f32
	apart := L.Bqkv == nil && (L.Bq != nil || L.Bk != nil || L.Bv != nil)
	if L.Wqkv != nil && !apart {
		qkv := addBias(ctx, ctx.MulMat(L.Wqkv, cur), L.Bqkv) // [wq + 2 gqa, n]
		row := (wq + 2*gqa) * f
		heads := h.NHead + h.NHeadKV
		qk := ctx.RopeExt(ctx.View3D(qkv, hd, heads, n, hd*f, row, 0), pos, freqs, rope) // [hd, heads, n]
		q = ctx.View3D(qk, hd, h.NHead, n, hd*f, heads*hd*f, 0)
		k = ctx.View3D(qk, hd, h.NHeadKV, n, hd*f, heads*hd*f, h.NHead*hd*f)
		v = ctx.View2D(qkv, gqa, n, row, (wq+gqa)*f)
		return q, k, v
	}
	var qc, kc, vc *ggml.Tensor
	if L.Wqkv != nil { // one product, biases added apart
		qkv := ctx.MulMat(L.Wqkv, cur)
		row := (wq + 2*gqa) * f
		qc = ctx.View2D(qkv, wq, n, row, 0)
		kc = ctx.View2D(qkv, gqa, n, row, wq*f)
		vc = ctx.View2D(qkv, gqa, n, row, (wq+gqa)*f)
	} else {
		qc, kc, vc = ctx.MulMat(L.Wq, cur), ctx.MulMat(L.Wk, cur), ctx.MulMat(L.Wv, cur)
	}
	qc, kc, vc = addBias(ctx, qc, L.Bq), addBias(ctx, kc, L.Bk), addBias(ctx, vc, L.Bv)
	if !qc.IsContiguous() {
		qc = ctx.Cont(qc)
	}
	if !kc.IsContiguous() {
		kc = ctx.Cont(kc)
	}
	q = ctx.RopeExt(ctx.Reshape3D(qc, hd, h.NHead, n), pos, freqs, rope)
	k = ctx.RopeExt(ctx.Reshape3D(kc, hd, h.NHeadKV, n), pos, freqs, rope)
	return q, k, vc
}

// feedForward is the second half of a block: norm, feed-forward network
// (with its post-norm if the layer has one), residual; in has n rows.
func (d *decoder) feedForward(ctx *ggml.Context, h *Hparams, L *Layer, in *ggml.Tensor, n int) *ggml.Tensor {
	cur := d.normed(ctx, h, in, L.FFNNorm, L.FFNNormB)
	if d.ffn == ffnGELU {
		cur = ctx.Gelu(addBias(ctx, ctx.MulMat(L.WUp, cur), L.BUp))
	} else {
		var gate, up *ggml.Tensor
		if L.WGateUp != nil {
			gu := ctx.MulMat(L.WGateUp, cur) // [2 NFF, n]: gate rows, then up rows
			row := 2 * h.NFF * 4
			gate = ctx.View2D(gu, h.NFF, n, row, 0)
			up = ctx.View2D(gu, h.NFF, n, row, h.NFF*4)
		} else {
			gate, up = ctx.MulMat(L.WGate, cur), ctx.MulMat(L.WUp, cur)
		}
		gate, up = addBias(ctx, gate, L.BGate), addBias(ctx, up, L.BUp)
		if d.ffn == ffnGeGLU {
			gate = ctx.Gelu(gate)
		} else {
			gate = ctx.Silu(gate)
		}
		cur = ctx.Mul(gate, up)
	}
	cur = addBias(ctx, ctx.MulMat(L.WDown, cur), L.BDown)
	if L.FFNPostNorm != nil {
		cur = d.normed(ctx, h, cur, L.FFNPostNorm, nil)
	}
	return ctx.Add(cur, in)
}

// feedForward is the llama feed-forward of the model's decoder (Train's).
func (m *Model) feedForward(ctx *ggml.Context, L *Layer, in *ggml.Tensor, n int) *ggml.Tensor {
	return m.arch.graph.(*decoder).feedForward(ctx, &m.Hparams, L, in, n)
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
// (token i sees the cache up to position nPast+i); a recurrent graph has
// only the token ids. A one-token graph keeps
// its input slices (made once by build) across tokens; a batch graph is
// evaluated once and gets them here.
func (b *batchGraph) setInputs(tokens []int32) error {
	if b.pos == nil { // a recurrent graph: the tokens only
		return b.tokens.SetInt32s(tokens)
	}
	if b.inPos == nil {
		b.inPos, b.inMask = make([]int32, b.n), make([]float32, b.nKV*b.n)
	}
	if b.maskSWA != nil && b.inMaskSWA == nil {
		b.inMaskSWA = make([]float32, b.nKV*b.n)
	}
	inf := float32(math.Inf(-1))
	for i := range b.n {
		p := b.nPast + i
		b.inPos[i] = int32(p)
		row := b.inMask[i*b.nKV : (i+1)*b.nKV]
		for j := range row {
			switch {
			case j > p && !b.nonCausal:
				row[j] = inf
			case b.alibi:
				row[j] = -float32(max(p-j, j-p))
			default:
				row[j] = 0
			}
		}
		if b.maskSWA != nil {
			// as llama.cpp: a sliding-window layer does not see the
			// positions nSWA or more before the token
			swa := b.inMaskSWA[i*b.nKV : (i+1)*b.nKV]
			for j := range swa {
				if j <= p && p-j < b.nSWA {
					swa[j] = 0
				} else {
					swa[j] = inf
				}
			}
		}
	}
	if err := b.tokens.SetInt32s(tokens); err != nil {
		return err
	}
	if !b.noPos {
		if err := b.pos.SetInt32s(b.inPos); err != nil {
			return err
		}
	}
	if b.maskSWA != nil {
		if err := b.maskSWA.SetFloat32s(b.inMaskSWA); err != nil {
			return err
		}
	}
	if b.mask == nil {
		return nil
	}
	return b.mask.SetFloat32s(b.inMask)
}
