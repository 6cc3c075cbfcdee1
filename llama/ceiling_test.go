package llama

import (
	"testing"
)

// StreamCeiling reads exactly the matrices a one-token evaluation reads: the
// fused ones when the model was loaded fused, the separate ones otherwise,
// and the output (the token embedding when tied); it fails on a closed model.
func TestStreamCeiling(t *testing.T) {
	h := Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 96}
	for _, tied := range []bool{false, true} {
		path := smallModel(t, h, tied)
		for _, noFuse := range []bool{false, true} {
			m, err := Load(path, LoadOptions{NoFuse: noFuse})
			if err != nil {
				t.Fatal(err)
			}
			ms := m.DecodeMatrices()
			perLayer := 4
			if noFuse {
				perLayer = 7
			}
			if len(ms) != perLayer*h.NLayer+1 || ms[len(ms)-1] != m.Output {
				t.Fatalf("tied %v, nofuse %v: %d matrices, want %d ending with the output", tied, noFuse, len(ms), perLayer*h.NLayer+1)
			}
			if tied && m.Output != m.TokEmbd {
				t.Fatal("tied model: the output is not the token embedding")
			}
			var want int64
			for _, x := range ms {
				want += int64(x.NBytes())
			}
			for _, threads := range []int{1, 3} {
				ts, bytes, err := m.StreamCeiling(threads, 4)
				if err != nil {
					t.Fatal(err)
				}
				if bytes != want || len(ts) != 4 {
					t.Fatalf("%d threads: %d bytes in %d rounds, want %d in 4", threads, bytes, len(ts), want)
				}
				for _, d := range ts {
					if d <= 0 {
						t.Fatalf("round of %v", d)
					}
				}
			}
			if _, _, err := m.StreamCeiling(0, 1); err == nil {
				t.Fatal("0 threads accepted")
			}
			if _, _, err := m.StreamCeiling(1, 0); err == nil {
				t.Fatal("0 rounds accepted")
			}
			m.Close()
			if _, _, err := m.StreamCeiling(1, 1); err == nil {
				t.Fatal("closed model accepted")
			}
		}
	}
}
