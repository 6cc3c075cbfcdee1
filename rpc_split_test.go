package ggml

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A small llama: token embeddings, blocks of RMSNorm + causal self-attention
// with RoPE + SwiGLU feed-forward, a final norm and the output head.
const (
	llEmbd   = 64
	llHeads  = 4
	llHeadD  = llEmbd / llHeads
	llFF     = 128
	llVocab  = 97
	llTokens = 7
)

type llLayer struct {
	attnNorm, wq, wk, wv, wo, ffnNorm, w1, w2, w3 *Tensor
}

type llWeights struct {
	embd, outNorm, out *Tensor
	layers             []llLayer
}

// llNewWeights makes the tensors of the model: the embeddings and the head in
// ctxs[0], layer i in ctxs[1+i%(len(ctxs)-1)] (or ctxs[0] if there is one).
func llNewWeights(ctxs []*Context, nLayers int) *llWeights {
	w := &llWeights{
		embd:    ctxs[0].NewTensor2D(TypeF32, llEmbd, llVocab),
		outNorm: ctxs[0].NewTensor1D(TypeF32, llEmbd),
		out:     ctxs[0].NewTensor2D(TypeF16, llEmbd, llVocab),
	}
	for i := range nLayers {
		c := ctxs[0]
		if len(ctxs) > 1 {
			c = ctxs[1+i%(len(ctxs)-1)]
		}
		w.layers = append(w.layers, llLayer{
			attnNorm: c.NewTensor1D(TypeF32, llEmbd),
			wq:       c.NewTensor2D(TypeF16, llEmbd, llEmbd),
			wk:       c.NewTensor2D(TypeF16, llEmbd, llEmbd),
			wv:       c.NewTensor2D(TypeF32, llEmbd, llEmbd),
			wo:       c.NewTensor2D(TypeF32, llEmbd, llEmbd),
			ffnNorm:  c.NewTensor1D(TypeF32, llEmbd),
			w1:       c.NewTensor2D(TypeQ8_0, llEmbd, llFF),
			w2:       c.NewTensor2D(TypeF32, llFF, llEmbd),
			w3:       c.NewTensor2D(TypeF32, llEmbd, llFF),
		})
	}
	return w
}

func (w *llWeights) all() []*Tensor {
	ts := []*Tensor{w.embd, w.outNorm, w.out}
	for _, l := range w.layers {
		ts = append(ts, l.attnNorm, l.wq, l.wk, l.wv, l.wo, l.ffnNorm, l.w1, l.w2, l.w3)
	}
	return ts
}

// llFill gives every weight deterministic values (norm weights near 1).
func llFill(t *testing.T, w *llWeights) {
	for i, x := range w.all() {
		v := make([]float32, x.NElements())
		for j := range v {
			v[j] = 0.2 * float32(math.Sin(float64(j)*0.731+float64(i)*1.37))
			if x.NDims() == 1 {
				v[j] += 1
			}
		}
		require.NoError(t, x.SetFloat32s(v))
	}
}

type llInputs struct{ tokens, pos, mask *Tensor }

// llGraph builds the forward graph of the logits in ctx.
func llGraph(ctx *Context, w *llWeights) (*Graph, *llInputs, *Tensor) {
	in := &llInputs{
		tokens: ctx.NewTensor1D(TypeI32, llTokens).SetInput(),
		pos:    ctx.NewTensor1D(TypeI32, llTokens).SetInput(),
		mask:   ctx.NewTensor2D(TypeF32, llTokens, llTokens).SetInput(),
	}
	rope := DefaultRopeParams(llHeadD, 0)
	x := ctx.GetRows(w.embd, in.tokens)
	for _, l := range w.layers {
		h := ctx.Mul(ctx.RMSNorm(x, 1e-5), l.attnNorm)
		q := ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(l.wq, h), llHeadD, llHeads, llTokens), in.pos, nil, rope)
		k := ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(l.wk, h), llHeadD, llHeads, llTokens), in.pos, nil, rope)
		v := ctx.Reshape3D(ctx.MulMat(l.wv, h), llHeadD, llHeads, llTokens)
		kq := ctx.MulMat(ctx.Permute(k, 0, 2, 1, 3), ctx.Permute(q, 0, 2, 1, 3)) // [tokens(k), tokens(q), heads]
		kq = ctx.SoftMaxExt(kq, in.mask, float32(1/math.Sqrt(llHeadD)), 0)
		vt := ctx.Cont(ctx.Permute(v, 1, 2, 0, 3)) // [tokens, headD, heads]
		att := ctx.Permute(ctx.MulMat(vt, kq), 0, 2, 1, 3)
		x = ctx.Add(ctx.MulMat(l.wo, ctx.Cont2D(att, llEmbd, llTokens)), x)
		h = ctx.Mul(ctx.RMSNorm(x, 1e-5), l.ffnNorm)
		ff := ctx.Mul(ctx.Silu(ctx.MulMat(l.w1, h)), ctx.MulMat(l.w3, h))
		x = ctx.Add(ctx.MulMat(l.w2, ff), x)
	}
	logits := ctx.MulMat(w.out, ctx.Mul(ctx.RMSNorm(x, 1e-5), w.outNorm)).SetOutput()
	return ctx.NewGraph().BuildForward(logits), in, logits
}

func llSetInputs(t *testing.T, in *llInputs) {
	tok, pos := make([]int32, llTokens), make([]int32, llTokens)
	mask := make([]float32, llTokens*llTokens)
	for i := range llTokens {
		tok[i] = int32((i*31 + 5) % llVocab)
		pos[i] = int32(i)
		for j := range llTokens {
			if j > i {
				mask[i*llTokens+j] = float32(math.Inf(-1))
			}
		}
	}
	require.NoError(t, in.tokens.SetInt32s(tok))
	require.NoError(t, in.pos.SetInt32s(pos))
	require.NoError(t, in.mask.SetFloat32s(mask))
}

// argmaxRows is the greedy next token at each position.
func argmaxRows(v []float32) []int {
	out := make([]int, len(v)/llVocab)
	for r := range out {
		row := v[r*llVocab : (r+1)*llVocab]
		for j := range row {
			if row[j] > row[out[r]] {
				out[r] = j
			}
		}
	}
	return out
}

// llLocal computes the logits with everything in one allocating context.
func llLocal(t *testing.T, nLayers int) []float32 {
	ctx, err := NewContext(ContextOptions{MemSize: 64 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	w := llNewWeights([]*Context{ctx}, nLayers)
	llFill(t, w)
	g, in, logits := llGraph(ctx, w)
	llSetInputs(t, in)
	require.NoError(t, g.Compute(2))
	out, err := logits.Float32s()
	require.NoError(t, err)
	return out
}

// rpcCheckSplit computes the model with its layers' weights on the servers
// at endpoints (one layer each, in turn) and the embeddings, the head and the
// inputs on the local CPU, the scheduler splitting the graph; the logits must
// be within tol of computing everything locally, and give the same tokens.
func rpcCheckSplit(t *testing.T, endpoints []string, tol float64) {
	nLayers := 2 * len(endpoints)
	cpu, err := NewCPUBackend()
	require.NoError(t, err)
	defer cpu.Close()
	require.NoError(t, cpu.SetThreads(2))
	backends := []*Backend{}
	for _, ep := range endpoints {
		b, err := DialRPC(context.Background(), ep)
		require.NoError(t, err)
		defer b.Close()
		backends = append(backends, b)
	}
	backends = append(backends, cpu) // last: it takes the inputs

	// weights: one NoAlloc context per backend, allocated there
	ctxs := make([]*Context, 1+len(endpoints))
	for i := range ctxs {
		ctxs[i], err = NewContext(ContextOptions{MemSize: 64 * TensorOverhead(), NoAlloc: true})
		require.NoError(t, err)
		defer ctxs[i].Close()
	}
	w := llNewWeights(ctxs, nLayers)
	owners := append([]*Backend{cpu}, backends[:len(endpoints)]...)
	for i, c := range ctxs {
		buf, err := c.AllocTensors(owners[i])
		require.NoError(t, err)
		defer buf.Close()
		buf.SetUsage(BufferUsageWeights)
	}
	llFill(t, w)

	ctx, err := NewContext(ContextOptions{MemSize: 4 << 20, NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	g, in, logits := llGraph(ctx, w)
	sc, err := NewScheduler(backends, 2048, false)
	require.NoError(t, err)
	defer sc.Close()
	require.NoError(t, sc.Alloc(g))
	llSetInputs(t, in)
	require.NoError(t, sc.Compute(context.Background(), g))
	got, err := logits.Float32s()
	require.NoError(t, err)

	// the graph was cut between the machines
	require.GreaterOrEqual(t, sc.NSplits(), 2*len(endpoints)+1)
	onRemote := 0
	for _, n := range g.Nodes() {
		if tb := sc.TensorBackend(n); tb != nil && tb.IsRPC() {
			onRemote++
		}
	}
	require.Greater(t, onRemote, g.NNodes()/2)

	want := llLocal(t, nLayers)
	require.Len(t, got, len(want))
	maxDiff := 0.0
	for i := range want {
		maxDiff = math.Max(maxDiff, math.Abs(float64(got[i]-want[i])))
	}
	t.Logf("%d layers over %d servers: %d splits, %d of %d nodes remote, max |logit diff| %.3g", nLayers, len(endpoints),
		sc.NSplits(), onRemote, g.NNodes(), maxDiff)
	require.LessOrEqual(t, maxDiff, tol)
	require.Equal(t, argmaxRows(want), argmaxRows(got))

	// a second pass over the same placement
	require.NoError(t, sc.Compute(context.Background(), g))
	again, err := logits.Float32s()
	require.NoError(t, err)
	require.Equal(t, got, again)
}

// TestRPCSplitLlama: the scheduler splits a llama-shaped graph across the
// local CPU and two RPC servers on loopback (in this process, or the servers
// listed in GGML_RPC_SERVERS, comma-separated: e.g. two ggml rpc-server
// processes).
func TestRPCSplitLlama(t *testing.T) {
	if eps := os.Getenv("GGML_RPC_SERVERS"); eps != "" {
		rpcCheckSplit(t, strings.Split(eps, ","), 1e-5)
		return
	}
	a := startRPCServer(t, 256<<20)
	b := startRPCServer(t, 256<<20)
	rpcCheckSplit(t, []string{a.endpoint, b.endpoint}, 1e-5)
}
