package main

import (
	"testing"

	"github.com/ggml-go/ggml"
)

// The repacked mat-vec figure runs for every type the CPU_REPACK buffer can
// hold, whether or not this CPU repacks it, with and without a pool.
func TestBenchMulMatRepackedRuns(t *testing.T) {
	for _, threads := range []int{1, 2} {
		b := &bencher{threads: threads, runs: 2}
		if err := b.open(); err != nil {
			t.Fatal(err)
		}
		for _, ty := range []ggml.Type{ggml.TypeQ8_0, ggml.TypeQ4_0, ggml.TypeIQ4_NL, ggml.TypeQ4_K, ggml.TypeQ6_K, ggml.TypeF32} {
			if err := benchMulMatRepacked(ty, 256, 40)(b, ty.String()+" repacked"); err != nil {
				t.Errorf("%v, %d threads: %v", ty, threads, err)
			}
		}
		b.close()
	}
}
