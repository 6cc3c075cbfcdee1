package llama

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ggml-go/ggml"
)

// Training a llama model with the package's own autodiff and AdamW. The
// training graph is the inference graph without the KV cache: a batch of
// sequences of NCtx tokens, causal attention within each, cross-entropy of
// the next token at every position.

// ModelOptions configure NewModel.
type ModelOptions struct {
	Tied bool    // the output projection shares token_embd
	Seed uint64  // of the random weights
	Std  float32 // standard deviation of the random weights; 0: 0.02
}

// NewModel creates a model of the given shape with random f32 weights
// (normal; norms 1), e.g. to train it.
func NewModel(h Hparams, vocab *Vocab, o ModelOptions) (*Model, error) {
	if o.Std == 0 {
		o.Std = 0.02
	}
	if h.Arch == "" {
		h.Arch = "llama"
	}
	a := archs[h.Arch]
	if a == nil || !a.trainable {
		return nil, fmt.Errorf("llama: NewModel: architecture %q: only llama models can be made", h.Arch)
	}
	h.RopeType = a.ropeType
	if h.NHeadKV == 0 {
		h.NHeadKV = h.NHead
	}
	if h.NEmbd <= 0 || h.NHead <= 0 || h.NLayer < 0 || h.NFF <= 0 || h.NEmbd%h.NHead != 0 || h.NHead%h.NHeadKV != 0 {
		return nil, fmt.Errorf("llama: NewModel: bad shape %+v", h)
	}
	h.HeadDim = h.NEmbd / h.NHead
	h.HeadDimV = h.HeadDim
	if h.NRot == 0 {
		h.NRot = h.HeadDim
	}
	if h.NVocab == 0 {
		h.NVocab = vocab.Size()
	}
	if h.RMSEps == 0 {
		h.RMSEps = 1e-5
	}
	if h.RopeFreqBase == 0 {
		h.RopeFreqBase = 10000
	}
	if h.RopeFreqScale == 0 {
		h.RopeFreqScale = 1
	}
	if h.NCtxTrain == 0 {
		h.NCtxTrain = 2048
	}
	// the keys a loaded file defaults (see decoderHparams)
	if h.RopeScaling == "" {
		h.RopeScaling = "linear"
	}
	if h.RopeScalingFactor == 0 && h.RopeFreqScale != 1 {
		h.RopeScalingFactor = 1 / h.RopeFreqScale
	}
	if h.NCtxOrigYarn == 0 {
		h.NCtxOrigYarn = h.NCtxTrain
	}
	if h.RopeAttnFactor == 0 {
		h.RopeAttnFactor = 1
	}
	if h.NVocab <= 0 || h.NRot <= 0 || h.NRot > h.HeadDim || h.NRot%2 != 0 || h.NCtxTrain < 0 {
		return nil, fmt.Errorf("llama: NewModel: bad shape %+v", h)
	}
	// the f32 weights, with overflow checks, before anything is allocated
	// for them: a shape the machine cannot hold is an error
	gqa := h.NEmbdGQA()
	perLayer, ok1 := addSizes(2*int64(h.NEmbd), 2*int64(h.NEmbd)*int64(h.NEmbd), 2*int64(h.NEmbd)*int64(gqa), 3*int64(h.NEmbd)*int64(h.NFF))
	layers, ok2 := mulSizes(4, perLayer, int64(h.NLayer))
	embd, ok3 := mulSizes(4*2, int64(h.NEmbd), int64(h.NVocab))
	need, ok4 := addSizes(layers, embd)
	if h.NEmbd > 1<<30 || h.NFF > 1<<30 || h.NLayer > 1<<30 || !ok1 || !ok2 || !ok3 || !ok4 || need > memoryLimit() {
		return nil, fmt.Errorf("llama: NewModel: the weights of %+v take more memory than there is", h)
	}
	type spec struct {
		name  string
		shape []int
		norm  bool
	}
	specs := []spec{{"token_embd.weight", []int{h.NEmbd, h.NVocab}, false}, {"output_norm.weight", []int{h.NEmbd}, true}}
	if !o.Tied {
		specs = append(specs, spec{"output.weight", []int{h.NEmbd, h.NVocab}, false})
	}
	for i := range h.NLayer {
		p := fmt.Sprintf("blk.%d.", i)
		specs = append(specs,
			spec{p + "attn_norm.weight", []int{h.NEmbd}, true},
			spec{p + "attn_q.weight", []int{h.NEmbd, h.NEmbd}, false},
			spec{p + "attn_k.weight", []int{h.NEmbd, gqa}, false},
			spec{p + "attn_v.weight", []int{h.NEmbd, gqa}, false},
			spec{p + "attn_output.weight", []int{h.NEmbd, h.NEmbd}, false},
			spec{p + "ffn_norm.weight", []int{h.NEmbd}, true},
			spec{p + "ffn_gate.weight", []int{h.NEmbd, h.NFF}, false},
			spec{p + "ffn_up.weight", []int{h.NEmbd, h.NFF}, false},
			spec{p + "ffn_down.weight", []int{h.NFF, h.NEmbd}, false})
	}
	size := 1 << 12
	for _, s := range specs {
		n := 4
		for _, d := range s.shape {
			n *= d
		}
		size += ggml.TensorOverhead() + n + 64
	}
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: size})
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x2545f4914f6cdd1d))
	m := &Model{Hparams: h, Vocab: vocab, weights: ctx, tensors: map[string]*ggml.Tensor{}, arch: a}
	for _, s := range specs {
		t := ctx.NewTensor(ggml.TypeF32, s.shape...).SetName(s.name)
		v := make([]float32, t.NElements())
		for i := range v {
			if s.norm {
				v[i] = 1
			} else {
				v[i] = float32(rng.NormFloat64() * float64(o.Std))
			}
		}
		if err := t.SetFloat32s(v); err != nil {
			ctx.Close()
			return nil, err
		}
		m.tensors[s.name] = t
	}
	if err := m.bind(); err != nil {
		ctx.Close()
		return nil, err
	}
	return m, nil
}

// TrainOptions configure Train.
type TrainOptions struct {
	Seq     int     // tokens per training sequence (at most the model's context length)
	Batch   int     // sequences per step
	Steps   int     // optimizer steps
	LR      float32 // peak learning rate: linear warmup over the first 5% of steps, cosine decay to LR/10
	Decay   float32 // AdamW weight decay
	Seed    uint64  // picks the training windows
	Threads int     // 0: ggml.DefaultThreads() (the rule of ggml.ResolveThreads)
	// OnStep, if not nil, is called after each step with its training loss;
	// an error stops training and is returned.
	OnStep func(step int, loss float32) error
}

// Train fits the f32 weights of m (from NewModel, or a model loaded with
// Load without Mmap) to predict each next token of text, given as
// token ids, with AdamW. ctx is checked between steps.
func Train(ctx context.Context, m *Model, text []int32, o TrainOptions) (err error) {
	defer recoverOp(&err)
	done, err := m.use("Train")
	if err != nil {
		return err
	}
	defer done()
	if o.Seq <= 0 || o.Batch <= 0 || o.Steps <= 0 {
		return errors.New("llama: Train: Seq, Batch and Steps must be positive")
	}
	if o.Seq > len(text)-2 {
		return fmt.Errorf("llama: Train: %d tokens of text, need more than Seq+1 = %d", len(text), int64(o.Seq)+1)
	}
	// the one-hot labels and logits of a batch (and their gradients), and
	// the attention scores of every head, with overflow checks: a batch the
	// machine cannot hold is an error before anything is allocated
	outs, ok1 := mulSizes(4*4, int64(o.Seq), int64(o.Batch), int64(m.NVocab))
	scores, ok2 := mulSizes(4*2, int64(o.Seq), int64(o.Seq), int64(o.Batch), int64(m.NHead))
	need, ok3 := addSizes(outs, scores)
	if !ok1 || !ok2 || !ok3 || need > memoryLimit() {
		return fmt.Errorf("llama: Train: batches of %d sequences of %d tokens take more memory than there is", o.Batch, o.Seq)
	}
	for _, t := range text {
		if t < 0 || int(t) >= m.NVocab {
			return fmt.Errorf("llama: Train: token %d out of range [0, %d)", t, m.NVocab)
		}
	}
	for _, t := range m.tensors {
		if t.Type() != ggml.TypeF32 || !t.HasData() || m.file != nil {
			return errors.New("llama: Train: the weights must be f32 in writable memory (NewModel, or Load without Mmap)")
		}
	}
	if !m.arch.trainable {
		return fmt.Errorf("llama: Train: %s models cannot be trained", m.Arch)
	}
	for _, L := range m.Layers {
		if L.Bq != nil || L.Bk != nil || L.Bv != nil || L.Bo != nil || L.BGate != nil || L.BUp != nil || L.BDown != nil {
			return errors.New("llama: Train: the model has biases, which training leaves out")
		}
		if L.Wqkv != nil || L.WGateUp != nil {
			return errors.New("llama: Train: the model's matrices are fused (Load it with NoFuse)")
		}
	}
	if o.LR == 0 {
		o.LR = 1e-3
	}
	if o.Threads, err = ggml.ResolveThreads(o.Threads); err != nil {
		return fmt.Errorf("llama: Train: %w", err)
	}
	for _, t := range m.tensors {
		m.weights.SetParam(t)
	}

	// size the compute arena by building the graph once without data
	size, err := measureTrain(m, o.Seq, o.Batch)
	if err != nil {
		return err
	}
	cctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: size})
	if err != nil {
		return err
	}
	defer cctx.Close()
	in := m.buildTrain(cctx, o.Seq, o.Batch)
	p := ggml.DefaultAdamWParams()
	p.Alpha, p.WeightDecay = o.LR, o.Decay
	p.Beta2 = 0.99
	tr, err := ggml.NewTrainer(cctx, in.loss, ggml.TrainerOptions{AdamW: p, Threads: o.Threads, GraphSize: m.trainGraphSize()})
	if err != nil {
		return err
	}
	defer tr.Close()
	if err := in.setStatic(); err != nil {
		return err
	}

	rng := rand.New(rand.NewPCG(o.Seed, 0xda3e39cb94b95bdb))
	tokens := make([]int32, o.Seq*o.Batch)
	labels := make([]float32, m.NVocab*o.Seq*o.Batch)
	warm := max(1, o.Steps/20)
	for step := range o.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		// learning rate schedule
		var lr float32
		if step < warm {
			lr = o.LR * float32(step+1) / float32(warm)
		} else {
			f := float64(step-warm) / float64(max(1, o.Steps-warm))
			lr = o.LR * float32(0.1+0.9*0.5*(1+math.Cos(math.Pi*f)))
		}
		tr.Opt.Params.Alpha = lr
		// a batch of random windows: inputs and one-hot next tokens
		clear(labels)
		for b := range o.Batch {
			at := rng.IntN(len(text) - o.Seq - 1)
			for i := range o.Seq {
				r := b*o.Seq + i
				tokens[r] = text[at+i]
				labels[r*m.NVocab+int(text[at+i+1])] = 1
			}
		}
		if err := in.tokens.SetInt32s(tokens); err != nil {
			return err
		}
		if err := in.labels.SetFloat32s(labels); err != nil {
			return err
		}
		loss, err := tr.Step()
		if err != nil {
			return err
		}
		if o.OnStep != nil {
			if err := o.OnStep(step, loss); err != nil {
				return err
			}
		}
	}
	return nil
}

// trainInputs are the tensors of a training graph.
type trainInputs struct {
	tokens, pos, mask, labels, loss *ggml.Tensor
	seq                             int
}

func (m *Model) trainGraphSize() int { return 4096 + 400*m.NLayer }

// buildTrain builds the loss of a batch of sequences in ctx.
func (m *Model) buildTrain(ctx *ggml.Context, seq, batch int) *trainInputs {
	h := m.Hparams
	hd, n := h.HeadDim, seq*batch
	in := &trainInputs{seq: seq}
	in.tokens = ctx.NewTensor1D(ggml.TypeI32, n).SetName("train_tokens").SetInput()
	in.pos = ctx.NewTensor1D(ggml.TypeI32, seq).SetName("train_pos").SetInput()
	in.mask = ctx.NewTensor2D(ggml.TypeF32, seq, seq).SetName("train_mask").SetInput()
	in.labels = ctx.NewTensor2D(ggml.TypeF32, m.NVocab, n).SetName("train_labels").SetInput()
	rope := m.ropeParams()
	scale := float32(1 / math.Sqrt(float64(hd)))

	x := ctx.GetRows(m.TokEmbd, in.tokens)
	for _, L := range m.Layers {
		cur := ctx.Mul(ctx.RMSNorm(x, h.RMSEps), L.AttnNorm)
		q := ctx.RopeExt(ctx.Reshape4D(ctx.MulMat(L.Wq, cur), hd, h.NHead, seq, batch), in.pos, m.RopeFreqs, rope)
		k := ctx.RopeExt(ctx.Reshape4D(ctx.MulMat(L.Wk, cur), hd, h.NHeadKV, seq, batch), in.pos, m.RopeFreqs, rope)
		v := ctx.Reshape4D(ctx.MulMat(L.Wv, cur), hd, h.NHeadKV, seq, batch)

		kp := ctx.Cont(ctx.Permute(k, 0, 2, 1, 3))       // [hd, seq, nHeadKV, batch]
		kq := ctx.MulMat(kp, ctx.Permute(q, 0, 2, 1, 3)) // [seq, seq, nHead, batch]
		kq = ctx.SoftMaxExt(kq, in.mask, scale, 0)
		vt := ctx.Cont(ctx.Permute(v, 1, 2, 0, 3)) // [seq, hd, nHeadKV, batch]
		kqv := ctx.MulMat(vt, kq)                  // [hd, seq, nHead, batch]
		// cont then reshape: the core has no backward for a reshaping cont
		cur = ctx.Reshape2D(ctx.Cont(ctx.Permute(kqv, 0, 2, 1, 3)), h.NEmbd, n)
		x = m.feedForward(ctx, &L, ctx.Add(ctx.MulMat(L.Wo, cur), x), n)
	}
	x = ctx.Mul(ctx.RMSNorm(x, h.RMSEps), m.OutNorm)
	logits := ctx.MulMat(m.Output, x)
	in.loss = ctx.CrossEntropyLoss(logits, in.labels).SetName("train_loss")
	return in
}

// setStatic writes the positions and the causal mask.
func (in *trainInputs) setStatic() error {
	pos := make([]int32, in.seq)
	mask := make([]float32, in.seq*in.seq)
	inf := float32(math.Inf(-1))
	for i := range in.seq {
		pos[i] = int32(i)
		for j := i + 1; j < in.seq; j++ {
			mask[i*in.seq+j] = inf
		}
	}
	if err := in.pos.SetInt32s(pos); err != nil {
		return err
	}
	return in.mask.SetFloat32s(mask)
}

// measureTrain is the arena a training graph (forward, backward, optimizer)
// needs: the tensors of the forward and backward graph built without data,
// plus room for the optimizer's nodes.
func measureTrain(m *Model, seq, batch int) (size int, err error) {
	defer recoverOp(&err)
	gs := m.trainGraphSize()
	meta := 3*ggml.GraphOverhead(gs, true) + 3*gs*ggml.TensorOverhead()
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: meta, NoAlloc: true})
	if err != nil {
		return 0, err
	}
	defer ctx.Close()
	in := m.buildTrain(ctx, seq, batch)
	in.loss.SetLoss()
	g := ctx.NewGraphCustom(gs, true)
	g.BuildForward(in.loss)
	if err := g.BuildBackward(ctx, ctx, false); err != nil {
		return 0, err
	}
	size = 2*meta + 1<<20
	for _, t := range ctx.Tensors() {
		if t.ViewSrc() == nil && !t.HasData() {
			size += (t.NBytes() + 63) &^ 63
		}
	}
	return size, nil
}
