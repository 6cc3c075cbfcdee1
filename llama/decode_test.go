package llama

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// The kept one-token graph: across kvPad buckets, after batches (which
// allocate other graphs in between), after Rewind, and with non-finite
// values left in the cache past the rewind point, its logits are those of
// a fresh session evaluating the same tokens; with either attention
// (mul_mat over a transposed V cache, or flash attention).
func TestDecodeGraphReuse(t *testing.T) {
	m := decodeModel(t)
	toks := tokenRun(m, 90, 7)
	for _, flash := range []bool{false, true} {
		t.Run(map[bool]string{false: "mul_mat", true: "flash"}[flash], func(t *testing.T) {
			testDecodeGraphReuse(t, m, toks, flash)
		})
	}
}

func testDecodeGraphReuse(t *testing.T, m *Model, toks []int32, flash bool) {
	ctx := context.Background()
	newSession := func(f32 bool) *Session {
		s, err := m.NewSession(SessionOptions{Threads: 1, Context: 90, Batch: 16, F32KV: f32, FlashAttn: flash})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	for _, f32 := range []bool{false, true} {
		// reference: every row of a batched evaluation
		want, err := newSession(f32).EvalAll(ctx, toks)
		if err != nil {
			t.Fatal(err)
		}
		row := func(i int) []float32 { return want[i*m.NVocab : (i+1)*m.NVocab] }
		s := newSession(f32)
		check := func(what string, i int, got []float32) {
			t.Helper()
			for _, v := range got {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("f32 %v %s token %d: non-finite logit", f32, what, i)
				}
			}
			if d := maxAbsDiff(got, row(i)); d > 1e-4 {
				t.Errorf("f32 %v %s token %d: logits differ by %g", f32, what, i, d)
			}
		}
		// one by one across three buckets, a batch in between
		for i := 0; i < 70; i++ {
			if i == 40 {
				l, err := s.Eval(ctx, toks[40:45])
				if err != nil {
					t.Fatal(err)
				}
				check("after batch", 44, l)
				i = 44
				continue
			}
			l, err := s.Eval(ctx, toks[i:i+1])
			if err != nil {
				t.Fatal(err)
			}
			check("one by one", i, l)
		}
		// poison what lies past the rewind point, then go on from there
		poisonKV(t, s, 20, 70)
		if err := s.Rewind(20); err != nil {
			t.Fatal(err)
		}
		for i := 20; i < 90; i++ {
			l, err := s.Eval(ctx, toks[i:i+1])
			if err != nil {
				t.Fatal(err)
			}
			check("after rewind", i, l)
		}
	}
}

// Flash attention gives the logits of the mul_mat attention, to rounding,
// for a prompt in batches (its rows share K and V rows four at a time) and
// then token by token, with GQA (two query heads per K/V head).
func TestFlashAttnMatchesMulMat(t *testing.T) {
	m := decodeModel(t)
	ctx := context.Background()
	toks := tokenRun(m, 40, 11)
	run := func(flash bool) []float32 {
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 64, Batch: 8, FlashAttn: flash})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		out, err := s.EvalAll(ctx, toks[:30])
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range toks[30:] {
			l, err := s.Eval(ctx, []int32{tok})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, l...)
		}
		return out
	}
	want, got := run(false), run(true)
	if len(got) != len(want) {
		t.Fatalf("%d logits, want %d", len(got), len(want))
	}
	for i := 0; i < len(toks); i++ {
		if d := maxAbsDiff(got[i*m.NVocab:(i+1)*m.NVocab], want[i*m.NVocab:(i+1)*m.NVocab]); d > 1e-4 || math.IsNaN(float64(d)) {
			t.Errorf("token %d: logits differ by %g", i, d)
		}
	}
}

// tokenRun is n token ids of m's vocabulary, 1 + i*step wrapped past
// the last id (0 is left out).
func tokenRun(m *Model, n, step int) []int32 {
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(1 + (i*step)%(m.NVocab-1))
	}
	return toks
}

// decodeModel loads the small GQA model of the decoding tests, closed when
// the test ends.
func decodeModel(t *testing.T) *Model {
	t.Helper()
	m, err := Load(smallModel(t, Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 96}, false), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// poisonKV writes +Inf into positions [from, to) of the cache's K and V.
func poisonKV(t *testing.T, s *Session, from, to int) {
	t.Helper()
	kv := s.kv
	for il := range kv.k {
		for _, isK := range []bool{true, false} {
			x := kv.v[il]
			if isK {
				x = kv.k[il]
			}
			vals, err := x.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			gqa := len(vals) / kv.nCtx
			inf := float32(math.Inf(1))
			for p := from; p < to; p++ {
				for c := range gqa {
					if isK || kv.flash {
						vals[p*gqa+c] = inf
					} else {
						vals[c*kv.nCtx+p] = inf
					}
				}
			}
			if err := x.SetFloat32s(vals); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Greedy agrees with a plain scan (first of the largest, NaN skipped, 0 when
// nothing is above -Inf) on odd lengths, ties, infinities and NaNs.
func TestGreedy(t *testing.T) {
	plain := func(l []float32) int32 {
		best, bv := 0, float32(math.Inf(-1))
		for i, v := range l {
			if v > bv {
				best, bv = i, v
			}
		}
		return int32(best)
	}
	r := rand.New(rand.NewPCG(7, 8))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for n := range 40 {
		for range 50 {
			l := make([]float32, n)
			for i := range l {
				switch r.IntN(8) {
				case 0:
					l[i] = nan
				case 1:
					l[i] = -inf
				case 2:
					l[i] = 3 // ties
				case 3:
					if r.IntN(4) == 0 {
						l[i] = inf
					}
				default:
					l[i] = float32(r.NormFloat64())
				}
			}
			if got, want := Greedy(l), plain(l); got != want {
				t.Fatalf("Greedy(%v) = %d, want %d", l, got, want)
			}
		}
	}
}

// Warmup leaves the session as it found it: the logits after it are those
// of a session without it, bit for bit, at the start, in the middle, and
// when the context is full (where it does nothing).
func TestWarmup(t *testing.T) {
	m := decodeModel(t)
	ctx := context.Background()
	toks := tokenRun(m, 24, 5)
	run := func(warm bool) [][]float32 {
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 24, Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var out [][]float32
		step := func(tk []int32) {
			if warm {
				if err := s.Warmup(ctx); err != nil {
					t.Fatal(err)
				}
			}
			l, err := s.Eval(ctx, tk)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, append([]float32(nil), l...))
		}
		step(toks[:10])
		for i := 10; i < 24; i++ {
			step(toks[i : i+1])
		}
		if warm {
			if err := s.Warmup(ctx); err != nil || s.Pos() != 24 {
				t.Fatalf("Warmup on a full session: %v, position %d", err, s.Pos())
			}
		}
		return out
	}
	want, got := run(false), run(true)
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(want[i][j]) != math.Float32bits(got[i][j]) {
				t.Fatalf("evaluation %d logit %d: %g with warm-ups, %g without", i, j, got[i][j], want[i][j])
			}
		}
	}
}

// With flash attention a token's logits do not depend on the tokens
// evaluated with it or on the thread count, bit for bit: a prompt in one
// batch, in batches of other sizes, and token by token. (The mul_mat
// attention's sums run over the cache length the graph covers, which the
// batches change, so it agrees to rounding only.)
func TestFlashAttnLogitsBatchInvariant(t *testing.T) {
	m := decodeModel(t)
	ctx := context.Background()
	toks := tokenRun(m, 37, 5)
	var want []float32
	for _, threads := range []int{1, 2, 3} {
		for _, batch := range []int{37, 8, 5, 1} {
			s, err := m.NewSession(SessionOptions{Threads: threads, Context: 64, Batch: batch, FlashAttn: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []float32
			for i := 0; i < len(toks); i += batch {
				l, err := s.EvalAll(ctx, toks[i:min(i+batch, len(toks))])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, l...)
			}
			s.Close()
			if want == nil {
				want = got
				continue
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("threads %d, batches of %d: token %d logit %d is %v, in one batch on one thread %v",
						threads, batch, i/m.NVocab, i%m.NVocab, got[i], want[i])
				}
			}
		}
	}
}
