package llama

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func generateSession(t *testing.T, m *Model, nCtx int) *Session {
	t.Helper()
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: nCtx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var greedy = GenerateOptions{IgnoreEOG: true}

func maxTokens(n int) GenerateOptions {
	o := greedy
	o.MaxTokens = n
	return o
}

// An empty prompt continues the session: after a Generate from the token
// it left pending, after Eval from the logits of the last token, after a
// Rewind from that token evaluated again; the tokens are those of one
// longer generation. A session with no tokens is an error.
func TestGenerateEmptyPromptContinues(t *testing.T) {
	m := tinyModel(t)
	ctx := context.Background()
	prompt := []int32{1, 5, 9, 2}
	whole, err := generateSession(t, m, 64).Generate(ctx, prompt, maxTokens(10))
	if err != nil || whole.Stop != StopMaxTokens || len(whole.Tokens) != 10 {
		t.Fatalf("one run: %v, %+v", err, whole)
	}

	s := generateSession(t, m, 64)
	st, err := s.Generate(ctx, nil, maxTokens(3))
	if err == nil || st.Stop != StopError || len(st.Tokens) != 0 {
		t.Errorf("empty session: %v, %+v", err, st)
	}
	a, err := s.Generate(ctx, prompt, maxTokens(4))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Generate(ctx, nil, maxTokens(6))
	if err != nil {
		t.Fatal(err)
	}
	if got := append(a.Tokens, b.Tokens...); !slices.Equal(got, whole.Tokens) || b.PromptTokens != 1 || b.Stop != StopMaxTokens {
		t.Errorf("4 then 6 tokens: %v (prompt %d), one run of 10: %v", got, b.PromptTokens, whole.Tokens)
	}
	if held := s.Tokens(); !slices.Equal(held, append(slices.Clone(prompt), whole.Tokens[:9]...)) || len(held) != s.Pos() {
		t.Errorf("the session holds %v", held)
	}

	// after Eval: the logits it returned
	s = generateSession(t, m, 64)
	if _, err := s.Eval(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	c, err := s.Generate(ctx, nil, maxTokens(10))
	if err != nil || !slices.Equal(c.Tokens, whole.Tokens) || c.PromptTokens != 0 {
		t.Errorf("after Eval: %v, %v (prompt %d), want %v", err, c.Tokens, c.PromptTokens, whole.Tokens)
	}
	// after a Rewind (the logits are stale) and after a Warmup (which
	// keeps the pending token)
	if err := s.Rewind(len(prompt) + 2); err != nil {
		t.Fatal(err)
	}
	d, err := s.Generate(ctx, nil, maxTokens(8))
	if err != nil || !slices.Equal(d.Tokens, whole.Tokens[2:]) || d.PromptTokens != 1 {
		t.Errorf("after Rewind: %v, %v (prompt %d), want %v", err, d.Tokens, d.PromptTokens, whole.Tokens[2:])
	}
	if err := s.Rewind(len(prompt) + 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Generate(ctx, nil, maxTokens(2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Warmup(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := s.Generate(ctx, nil, maxTokens(6))
	if err != nil || !slices.Equal(e.Tokens, whole.Tokens[4:]) {
		t.Errorf("after Warmup: %v, %v, want %v", err, e.Tokens, whole.Tokens[4:])
	}
}

// Stats.Stop says why Generate stopped, on every return: the context
// filling up is no error unless the prompt does not fit.
func TestGenerateStopReasons(t *testing.T) {
	m := tinyModel(t)
	ctx := context.Background()
	prompt := []int32{1, 5, 9, 2}

	s := generateSession(t, m, 16)
	st, err := s.Generate(ctx, prompt, greedy)
	if err != nil || st.Stop != StopContextFull || len(st.Tokens) != 16-len(prompt)+1 || s.Pos() != 16 {
		t.Errorf("until full: %v, stop %q, %d tokens, pos %d", err, st.Stop, len(st.Tokens), s.Pos())
	}
	st, err = s.Generate(ctx, nil, greedy) // the pending token does not fit
	if !errors.Is(err, ErrContextFull) || st.Stop != StopContextFull {
		t.Errorf("full, continued: %v, %q", err, st.Stop)
	}
	st, err = generateSession(t, m, 16).Generate(ctx, make([]int32, 17), greedy)
	if !errors.Is(err, ErrContextFull) || st.Stop != StopContextFull {
		t.Errorf("prompt longer than the context: %v, %q", err, st.Stop)
	}
	// MaxTokens reaching the end of the context together: MaxTokens
	st, err = generateSession(t, m, 16).Generate(ctx, prompt, maxTokens(13))
	if err != nil || st.Stop != StopMaxTokens {
		t.Errorf("13 tokens: %v, %q", err, st.Stop)
	}

	// end of generation: the model's first choice made its EOS
	first, err := generateSession(t, m, 64).Generate(ctx, prompt, maxTokens(1))
	if err != nil {
		t.Fatal(err)
	}
	eos := m.Vocab.EOS
	m.Vocab.EOS = first.Tokens[0]
	st, err = generateSession(t, m, 64).Generate(ctx, prompt, GenerateOptions{MaxTokens: 5})
	m.Vocab.EOS = eos
	if err != nil || st.Stop != StopEOG || len(st.Tokens) != 1 {
		t.Errorf("EOG: %v, %q, %v", err, st.Stop, st.Tokens)
	}

	// OnToken: ErrStop without error, another error with it
	stopAt := func(n int, e error) GenerateOptions {
		o := greedy
		o.OnToken = func(int32) error {
			if n--; n == 0 {
				return e
			}
			return nil
		}
		return o
	}
	st, err = generateSession(t, m, 64).Generate(ctx, prompt, stopAt(3, ErrStop))
	if err != nil || st.Stop != StopOnToken || len(st.Tokens) != 3 {
		t.Errorf("ErrStop: %v, %q, %d tokens", err, st.Stop, len(st.Tokens))
	}
	boom := errors.New("boom")
	st, err = generateSession(t, m, 64).Generate(ctx, prompt, stopAt(2, boom))
	if !errors.Is(err, boom) || st.Stop != StopOnToken || len(st.Tokens) != 2 {
		t.Errorf("OnToken error: %v, %q, %d tokens", err, st.Stop, len(st.Tokens))
	}

	// cancelled while generating, and before
	cctx, cancel := context.WithCancel(ctx)
	o := greedy
	o.OnToken = func(int32) error { cancel(); return nil }
	st, err = generateSession(t, m, 64).Generate(cctx, prompt, o)
	if !errors.Is(err, context.Canceled) || st.Stop != StopCancelled || len(st.Tokens) != 1 {
		t.Errorf("cancelled: %v, %q, %d tokens", err, st.Stop, len(st.Tokens))
	}
	st, err = generateSession(t, m, 64).Generate(cctx, prompt, greedy)
	if !errors.Is(err, context.Canceled) || st.Stop != StopCancelled {
		t.Errorf("cancelled before: %v, %q", err, st.Stop)
	}

	// errors: bad sampler options, bad tokens, a nil context, a closed session
	closed := generateSession(t, m, 64)
	closed.Close()
	for name, f := range map[string]func() (Stats, error){
		"NaN temperature": func() (Stats, error) {
			return generateSession(t, m, 64).Generate(ctx, prompt, GenerateOptions{Sampler: SamplerOptions{Temp: float32NaN()}})
		},
		"token out of range": func() (Stats, error) {
			return generateSession(t, m, 64).Generate(ctx, []int32{1, int32(m.NVocab)}, greedy)
		},
		"nil context": func() (Stats, error) {
			var none context.Context // a nil context is the point
			return generateSession(t, m, 64).Generate(none, prompt, greedy)
		},
		"closed session": func() (Stats, error) { return closed.Generate(ctx, nil, greedy) },
	} {
		st, err := f()
		if err == nil || st.Stop != StopError {
			t.Errorf("%s: %v, %q", name, err, st.Stop)
		}
	}
}

func float32NaN() float32 { z := float32(0); return z / z }

// The penalties see the tokens the session holds as well as the generated
// ones: with a huge presence penalty, greedy decoding never repeats any.
func TestGeneratePenaltiesSeeTheSession(t *testing.T) {
	m := tinyModel(t)
	prompt := []int32{1, 5, 9, 2}
	o := maxTokens(8)
	o.Sampler = SamplerOptions{PresencePenalty: 1e30}
	st, err := generateSession(t, m, 64).Generate(context.Background(), prompt, o)
	if err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(prompt), st.Tokens...)
	seen := map[int32]bool{}
	for _, id := range all {
		if seen[id] {
			t.Fatalf("token %d repeated in %v", id, all)
		}
		seen[id] = true
	}
}
