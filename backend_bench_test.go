package ggml

import (
	"context"
	"math"
	"strconv"
	"testing"
)

// tfConfig is a llama-style transformer: the shapes of tests/c/graphs-util.h.
type tfConfig struct {
	embd, head, ff, tokens, layers int
}

const tfVocab = 64

// tfModel mirrors graphs-util.h: tokens, positions and a causal mask as
// inputs, RMS norm, RoPE attention, SwiGLU feed-forward; with train, the
// matrices are parameters and the loss is sum(out^2).
type tfModel struct {
	tokens, pos, mask, out, loss *Tensor
	weights                      []*Tensor
}

func buildTransformer(wctx, ctx *Context, c tfConfig, train bool) *tfModel {
	m := &tfModel{}
	w := func(t *Tensor, param bool) *Tensor {
		m.weights = append(m.weights, t)
		if train && param {
			wctx.SetParam(t)
		}
		return t
	}
	embd := w(wctx.NewTensor2D(TypeF32, c.embd, tfVocab), false)
	hd := c.embd / c.head
	m.tokens = ctx.NewTensor1D(TypeI32, c.tokens).SetInput()
	m.pos = ctx.NewTensor1D(TypeI32, c.tokens).SetInput()
	m.mask = ctx.NewTensor2D(TypeF32, c.tokens, c.tokens).SetInput()
	norm := func(x, weight *Tensor) *Tensor {
		n := ctx.RMSNorm(x, 1e-5)
		if train {
			return ctx.Mul(n, ctx.Repeat(weight, n))
		}
		return ctx.Mul(n, weight)
	}
	rope := DefaultRopeParams(hd, 0)
	cur := ctx.GetRows(embd, m.tokens)
	for range c.layers {
		attnNorm := w(wctx.NewTensor1D(TypeF32, c.embd), false)
		wq := w(wctx.NewTensor2D(TypeF32, c.embd, c.embd), true)
		wk := w(wctx.NewTensor2D(TypeF32, c.embd, c.embd), true)
		wv := w(wctx.NewTensor2D(TypeF32, c.embd, c.embd), true)
		wo := w(wctx.NewTensor2D(TypeF32, c.embd, c.embd), true)
		ffnNorm := w(wctx.NewTensor1D(TypeF32, c.embd), false)
		w1 := w(wctx.NewTensor2D(TypeF32, c.embd, c.ff), true)
		w3 := w(wctx.NewTensor2D(TypeF32, c.embd, c.ff), true)
		w2 := w(wctx.NewTensor2D(TypeF32, c.ff, c.embd), true)

		h := norm(cur, attnNorm)
		q := ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(wq, h), hd, c.head, c.tokens), m.pos, nil, rope)
		k := ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(wk, h), hd, c.head, c.tokens), m.pos, nil, rope)
		v := ctx.Reshape3D(ctx.MulMat(wv, h), hd, c.head, c.tokens)
		q = ctx.Permute(q, 0, 2, 1, 3)
		k = ctx.Permute(k, 0, 2, 1, 3)
		kq := ctx.MulMat(k, q)
		scale := float32(1 / math.Sqrt(float64(hd)))
		if train {
			kq = ctx.SoftMax(ctx.Add(ctx.Scale(kq, scale), m.mask))
		} else {
			kq = ctx.SoftMaxExt(kq, m.mask, scale, 0)
		}
		vt := ctx.Cont(ctx.Permute(v, 1, 2, 0, 3))
		kqv := ctx.MulMat(vt, kq)
		merged := ctx.Reshape2D(ctx.Cont(ctx.Permute(kqv, 0, 2, 1, 3)), c.embd, c.tokens)
		cur = ctx.Add(cur, ctx.MulMat(wo, merged))
		h2 := norm(cur, ffnNorm)
		cur = ctx.Add(cur, ctx.MulMat(w2, ctx.Mul(ctx.Silu(ctx.MulMat(w1, h2)), ctx.MulMat(w3, h2))))
	}
	m.out = cur.SetOutput()
	if train {
		m.loss = ctx.Sum(ctx.Sqr(m.out))
		m.loss.SetLoss()
	}
	return m
}

// BenchmarkGraphAllocatorMemory reports, for transformer graphs, the
// allocator's compute buffer beside the total size of the tensors it places
// (tests/c/bench-alloc.c mem prints the same for comparison with another core).
func BenchmarkGraphAllocatorMemory(b *testing.B) {
	for _, c := range []tfConfig{{128, 4, 344, 24, 2}, {512, 8, 1376, 128, 4}} {
		for _, train := range []bool{false, true} {
			name := "forward"
			if train {
				name = "backward"
			}
			b.Run(name+"/embd="+strconv.Itoa(c.embd), func(b *testing.B) {
				wctx, err := NewContext(ContextOptions{MemSize: 256 * TensorOverhead(), NoAlloc: true})
				if err != nil {
					b.Fatal(err)
				}
				defer wctx.Close()
				ctx, err := NewContext(ContextOptions{MemSize: 16384*TensorOverhead() + GraphOverhead(8192, true), NoAlloc: true})
				if err != nil {
					b.Fatal(err)
				}
				defer ctx.Close()
				m := buildTransformer(wctx, ctx, c, train)
				wbuf, err := wctx.AllocTensors(CPUBufferType())
				if err != nil {
					b.Fatal(err)
				}
				defer wbuf.Close()
				g := ctx.NewGraphCustom(8192, train)
				if train {
					g.BuildForward(m.loss)
					if err := g.BuildBackward(ctx, ctx, false); err != nil {
						b.Fatal(err)
					}
				} else {
					g.BuildForward(m.out)
				}
				total := 0
				for _, t := range append(g.Nodes(), g.Leafs()...) {
					if !t.HasData() && t.ViewSrc() == nil {
						total += t.NBytes()
					}
				}
				ga, err := NewGraphAllocator()
				if err != nil {
					b.Fatal(err)
				}
				defer ga.Close()
				for b.Loop() {
					if err := ga.Reserve(g); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(ga.BufferSize(0)), "buffer-B")
				b.ReportMetric(float64(total), "tensors-B")
			})
		}
	}
}

// BenchmarkBackendCompute computes a transformer forward graph on 2 threads:
// "graph" with Graph.ComputeWith over an allocating context, "backend" with
// GraphAllocator.Alloc + Backend.Compute over backend buffers, both on one
// thread pool (the goal: backend within 2% of graph).
func BenchmarkBackendCompute(b *testing.B) {
	c := tfConfig{512, 8, 1376, 64, 2}
	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Close()
	fill := func(m *tfModel) {
		for i, w := range m.weights {
			v := make([]float32, w.NElements())
			for j := range v {
				v[j] = 0.05 * float32((j*31+i*7)%29-14) / 14
			}
			if err := w.SetFloat32s(v); err != nil {
				b.Fatal(err)
			}
		}
		tok := make([]int32, c.tokens)
		mask := make([]float32, c.tokens*c.tokens)
		for i := range tok {
			tok[i] = int32((i*7 + 3) % tfVocab)
			for j := range c.tokens {
				if j > i {
					mask[i*c.tokens+j] = float32(math.Inf(-1))
				}
			}
		}
		if err := m.tokens.SetInt32s(tok); err != nil {
			b.Fatal(err)
		}
		for i := range tok {
			tok[i] = int32(i)
		}
		if err := m.pos.SetInt32s(tok); err != nil {
			b.Fatal(err)
		}
		if err := m.mask.SetFloat32s(mask); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("graph", func(b *testing.B) {
		ctx, err := NewContext(ContextOptions{MemSize: 256 << 20})
		if err != nil {
			b.Fatal(err)
		}
		defer ctx.Close()
		m := buildTransformer(ctx, ctx, c, false)
		fill(m)
		g := ctx.NewGraph().BuildForward(m.out)
		for b.Loop() {
			if err := g.ComputeWith(tp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("backend", func(b *testing.B) {
		be, err := NewCPUBackend()
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		if err := be.SetThreadpool(tp); err != nil {
			b.Fatal(err)
		}
		wctx, err := NewContext(ContextOptions{MemSize: 256 * TensorOverhead(), NoAlloc: true})
		if err != nil {
			b.Fatal(err)
		}
		defer wctx.Close()
		ctx, err := NewContext(ContextOptions{MemSize: 4096*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
		if err != nil {
			b.Fatal(err)
		}
		defer ctx.Close()
		m := buildTransformer(wctx, ctx, c, false)
		wbuf, err := wctx.AllocTensors(be)
		if err != nil {
			b.Fatal(err)
		}
		defer wbuf.Close()
		g := ctx.NewGraph().BuildForward(m.out)
		ga, err := NewGraphAllocator(be.BufferType())
		if err != nil {
			b.Fatal(err)
		}
		defer ga.Close()
		if err := ga.Alloc(g); err != nil {
			b.Fatal(err)
		}
		fill(m)
		for b.Loop() {
			if err := ga.Alloc(g); err != nil {
				b.Fatal(err)
			}
			if err := be.Compute(context.Background(), g); err != nil {
				b.Fatal(err)
			}
		}
	})
}
