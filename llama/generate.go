package llama

import (
	"context"
	"errors"
	"time"
)

// GenerateOptions configure Generate.
type GenerateOptions struct {
	MaxTokens int            // tokens to generate (at most; 0: until the context is full)
	Sampler   SamplerOptions // how each token is chosen
	// OnToken, if not nil, is called with each generated token as soon as
	// it is chosen; returning ErrStop ends the generation without error,
	// any other error ends it with that error.
	OnToken func(id int32) error
	// IgnoreEOG keeps generating after an end-of-generation token.
	IgnoreEOG bool
}

// ErrStop, returned by an OnToken callback, stops Generate early.
var ErrStop = errors.New("llama: stop")

// Stats report what Generate did and how fast.
type Stats struct {
	PromptTokens int           // tokens evaluated for the prompt
	PromptTime   time.Duration // evaluating them
	Tokens       []int32       // the generated tokens
	GenEvals     int           // one-token evaluations
	GenTime      time.Duration // those evaluations plus sampling
	// Process CPU time (all threads) of the two phases, where the platform
	// measures it: robust to other processes competing for the CPUs.
	PromptCPU, GenCPU time.Duration
}

// PromptTokensPerSecond is the prompt evaluation speed.
func (s Stats) PromptTokensPerSecond() float64 {
	return float64(s.PromptTokens) / max(s.PromptTime.Seconds(), 1e-9)
}

// GenTokensPerSecond is the generation speed (one-token evaluations per second).
func (s Stats) GenTokensPerSecond() float64 {
	return float64(s.GenEvals) / max(s.GenTime.Seconds(), 1e-9)
}

// Generate evaluates prompt (appended to what the session holds), then
// samples and evaluates up to opts.MaxTokens tokens, stopping early at an
// end-of-generation token, at ErrStop from OnToken, when the context is
// full, or when ctx is done (its error is returned with the stats so far).
func (s *Session) Generate(ctx context.Context, prompt []int32, opts GenerateOptions) (st Stats, err error) {
	if len(prompt) == 0 {
		return st, errors.New("llama: Generate: empty prompt")
	}
	smp := NewSampler(opts.Sampler)
	t0, c0 := time.Now(), cpuTime()
	logits, err := s.Eval(ctx, prompt)
	if err != nil {
		return st, err
	}
	st.PromptTokens, st.PromptTime, st.PromptCPU = len(prompt), time.Since(t0), cpuTime()-c0
	defer func(c0 time.Duration) { st.GenCPU = cpuTime() - c0 }(cpuTime()) // sets the result

	limit := opts.MaxTokens
	if limit <= 0 {
		limit = s.ContextSize() - s.Pos() + 1
	}
	var gen time.Duration
	next := make([]int32, 1)
	for len(st.Tokens) < limit {
		t := time.Now()
		id := smp.Sample(logits)
		gen += time.Since(t)
		st.Tokens = append(st.Tokens, id)
		if opts.OnToken != nil {
			if err := opts.OnToken(id); err != nil {
				st.GenTime = gen
				if errors.Is(err, ErrStop) {
					return st, nil
				}
				return st, err
			}
		}
		if (!opts.IgnoreEOG && s.m.Vocab.IsEOG(id)) || len(st.Tokens) == limit || s.Pos() == s.ContextSize() {
			break
		}
		t = time.Now()
		next[0] = id
		logits, err = s.Eval(ctx, next)
		gen += time.Since(t)
		if err != nil {
			st.GenTime = gen
			return st, err
		}
		st.GenEvals++
	}
	st.GenTime = gen
	return st, nil
}
