package ggml

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkArgmax: a batch of logits rows (32000-token vocabulary, 512
// positions), the shape of test-backend-ops' perf case; one thread.
func BenchmarkArgmax(b *testing.B) {
	const n, rows = 32000, 512
	ctx, err := NewContext(ContextOptions{MemSize: n*rows*4 + 1<<20})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	x := ctx.NewTensor2D(TypeF32, n, rows)
	v := make([]float32, n*rows)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	if err := x.SetFloat32s(v); err != nil {
		b.Fatal(err)
	}
	g := ctx.NewGraph().BuildForward(ctx.Argmax(x))
	b.SetBytes(n * rows * 4)
	b.ResetTimer()
	for b.Loop() {
		if err := g.Compute(1); err != nil {
			b.Fatal(err)
		}
	}
}
