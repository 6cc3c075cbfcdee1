package ggml

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Long chains of tiny nodes: nearly all the time is in the barrier between
// nodes, both where threads spin (no more threads than cores) and where
// they sleep (more threads than cores: every wait takes the sleeping path,
// so a lost wake-up would hang this test).
func TestBarrierChains(t *testing.T) {
	for _, threads := range []int{2, 3, 8} {
		ctx := newCtx(t, 8<<20)
		x := ctx.NewTensor1D(TypeF32, 64).Fill(0)
		one := ctx.NewTensor1D(TypeF32, 64).Fill(1)
		y := x
		const nodes = 400
		for range nodes {
			y = ctx.Add(y, one)
		}
		g := ctx.NewGraph().BuildForward(y)
		for range 25 {
			require.NoError(t, g.Compute(threads))
			require.Equal(t, float32(nodes), y.F32(63), "threads %d", threads)
		}
	}
}
