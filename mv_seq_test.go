package ggml

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Mat-vec over short contiguous rows has two walks (eight rows side by side,
// or one row after the other for large matrices); they must give the same
// bits for every float type, length (tails included), row count and thread
// count, at every level.
func TestMatVecWalksAgree(t *testing.T) {
	defer setMvSeqMinBytes(setMvSeqMinBytes(0))
	rng := rand.New(rand.NewPCG(7, 8))
	ks := []int{1, 7, 8, 9, 31, 33, 96, 288, 291, 512}
	ms := []int{1, 5, 8, 9, 17, 40, 100}
	forEachLevel(t, func(t *testing.T) {
		for _, typ := range []Type{TypeF32, TypeF16, TypeBF16} {
			for _, k := range ks {
				for _, m := range ms {
					w := weightBytes(t, rng, typ, k, m)
					x := make([]float32, k)
					for i := range x {
						x[i] = float32(rng.NormFloat64())
					}
					setMvSeqMinBytes(math.MaxInt64)
					want := mulMatCols(t, typ, w, k, m, x, 0, 1, 1)
					for _, th := range []int{1, 3} {
						setMvSeqMinBytes(0)
						got := mulMatCols(t, typ, w, k, m, x, 0, 1, th)
						for i := range want {
							require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]),
								"%v k=%d m=%d threads=%d row %d", typ, k, m, th, i)
						}
					}
				}
			}
		}
	})
}
