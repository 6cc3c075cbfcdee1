package llama

import (
	"context"
	"slices"
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

// PairedCeiling times n one-token evaluations, each between two reads (the
// read after one token is the read before the next), and leaves the
// session as it found it: the next token's logits are those of a session
// that never ran it. It refuses n < 1, more tokens than free positions, a
// bad token and a closed session.
func TestPairedCeiling(t *testing.T) {
	h := Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 96}
	m, err := Load(smallModel(t, h, false), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	prompt := []int32{1, 5, 6}
	next := func(s *Session) []float32 {
		l, err := s.Eval(ctx, []int32{7})
		if err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), l...)
	}
	var want []float32
	for _, paired := range []bool{false, true} {
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 12, Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Eval(ctx, prompt); err != nil {
			t.Fatal(err)
		}
		if !paired {
			want = next(s)
			s.Close()
			continue
		}
		ps, bytes, err := s.PairedCeiling(ctx, 9, 5)
		if err != nil {
			t.Fatal(err)
		}
		var wantBytes int64
		for _, x := range m.DecodeMatrices() {
			wantBytes += int64(x.NBytes())
		}
		if len(ps) != 5 || bytes != wantBytes {
			t.Fatalf("%d pairs of %d bytes, want 5 of %d", len(ps), bytes, wantBytes)
		}
		for i, p := range ps {
			if p.Before <= 0 || p.Token <= 0 || p.After <= 0 || p.Share() <= 0 {
				t.Fatalf("pair %d: %+v", i, p)
			}
			if i > 0 && p.Before != ps[i-1].After {
				t.Fatalf("pair %d does not start with the read that ended pair %d", i, i-1)
			}
		}
		if s.Pos() != len(prompt) {
			t.Fatalf("position %d after PairedCeiling, want %d", s.Pos(), len(prompt))
		}
		if got := next(s); !slices.Equal(got, want) {
			t.Fatal("the logits after PairedCeiling differ from a session that never ran it")
		}
		for _, bad := range []struct {
			tok int32
			n   int
		}{{9, 0}, {9, 12 - len(prompt)}, {-1, 1}, {int32(m.NVocab), 1}} {
			if _, _, err := s.PairedCeiling(ctx, bad.tok, bad.n); err == nil {
				t.Fatalf("token %d, n %d accepted", bad.tok, bad.n)
			}
		}
		if _, _, err := s.PairedCeiling(ctx, 9, 12-len(prompt)-1); err != nil {
			t.Fatalf("every free position: %v", err)
		}
		s.Close()
		if _, _, err := s.PairedCeiling(ctx, 9, 1); err == nil {
			t.Fatal("closed session accepted")
		}
	}
	if (CeilingPair{}).Share() != 0 {
		t.Fatal("a zero token time gives a share")
	}
}
