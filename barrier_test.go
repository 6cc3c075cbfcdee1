package ggml

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Long chains of tiny nodes: nearly all the time is in the barrier between
// nodes, both where threads spin (no more threads than cores) and where
// they sleep (more threads than cores: every wait takes the sleeping path,
// so a lost wake-up would hang this test). 5, 17 and 33 threads take one,
// two and three levels of the barrier's tree with partial groups.
func TestBarrierChains(t *testing.T) {
	for _, threads := range []int{2, 3, 5, 8, 17, 33} {
		ctx := newCtx(t, 8<<20)
		x := ctx.NewTensor1D(TypeF32, 64).Fill(0)
		one := ctx.NewTensor1D(TypeF32, 64).Fill(1)
		y := x
		const nodes = 400
		for range nodes {
			y = ctx.Add(y, one)
		}
		g := ctx.NewGraph().BuildForward(y)
		reps := 25
		if threads > 8 {
			reps = 4
		}
		for range reps {
			require.NoError(t, g.Compute(threads))
			require.Equal(t, float32(nodes), y.F32(63), "threads %d", threads)
		}
	}
}
