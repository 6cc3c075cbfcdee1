package llama

import (
	"context"
	"errors"
	"fmt"
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

// StopReason says why Generate stopped.
type StopReason string

// The reasons Generate stops; Stats.Stop holds one on every return.
const (
	StopMaxTokens   StopReason = "max tokens"         // MaxTokens tokens were generated
	StopEOG         StopReason = "end of generation"  // the model chose an end-of-generation token
	StopContextFull StopReason = "context full"       // the KV cache is full (also when the prompt does not fit: the error wraps ErrContextFull)
	StopOnToken     StopReason = "stopped by OnToken" // OnToken returned an error (ErrStop: no error)
	StopCancelled   StopReason = "cancelled"          // ctx is done: its error is returned
	StopError       StopReason = "error"              // another error: bad options or tokens, a failed evaluation
)

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
	Stop              StopReason // why it stopped
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
// Stats.Stop says which, on every return; a full context is not an error,
// unless the prompt does not fit (ErrContextFull).
//
// The last generated token is not evaluated (nothing needs its logits
// yet): the session keeps it pending. An empty prompt continues the
// session: it evaluates the pending token, if a Generate left one and no
// Eval or Rewind came since, or else starts from the logits after the last
// token held (evaluating that token again if a Rewind made them stale);
// PromptTokens counts that evaluation. It is an error only when the
// session holds no tokens. A non-empty prompt drops the pending token.
//
// The sampler's penalties see the tokens the session holds (the last
// RepeatLastN), then each generated one.
func (s *Session) Generate(ctx context.Context, prompt []int32, opts GenerateOptions) (st Stats, err error) {
	defer func() {
		if st.Stop == "" && err != nil {
			st.Stop = StopError
			if ctx != nil && ctx.Err() != nil {
				st.Stop = StopCancelled
			} else if errors.Is(err, ErrContextFull) {
				st.Stop = StopContextFull
			}
		}
	}()
	if ctx == nil {
		return st, errors.New("llama: Generate: nil context.Context")
	}
	if err := opts.Sampler.Validate(); err != nil {
		return st, err
	}
	smp := NewSampler(opts.Sampler)
	t0, c0 := time.Now(), cpuTime()
	var logits []float32
	if len(prompt) == 0 {
		logits, st.PromptTokens, err = s.lastLogits(ctx)
	} else {
		logits, err = s.Eval(ctx, prompt)
		st.PromptTokens = len(prompt)
	}
	if err != nil {
		st.PromptTokens = 0
		return st, err
	}
	st.PromptTime, st.PromptCPU = time.Since(t0), cpuTime()-c0
	defer func(c0 time.Duration) { st.GenCPU = cpuTime() - c0 }(cpuTime()) // sets the result
	held := s.Tokens()
	if n := smp.window(); n >= 0 && len(held) > n {
		held = held[len(held)-n:]
	}
	smp.Accept(held...)

	limit := opts.MaxTokens
	if limit <= 0 {
		limit = s.ContextSize() - s.Pos() + 1
	}
	var gen time.Duration
	defer func() { st.GenTime = gen }()
	next := make([]int32, 1)
	for {
		t := time.Now()
		id, err := smp.Pick(logits)
		gen += time.Since(t)
		if err != nil {
			return st, fmt.Errorf("llama: Generate: %w", err)
		}
		st.Tokens = append(st.Tokens, id)
		if opts.OnToken != nil {
			if err := opts.OnToken(id); err != nil {
				st.Stop = StopOnToken
				s.setPending(id)
				if errors.Is(err, ErrStop) {
					return st, nil
				}
				return st, err
			}
		}
		switch {
		case !opts.IgnoreEOG && s.m.Vocab.IsEOG(id):
			st.Stop = StopEOG
		case len(st.Tokens) >= limit && opts.MaxTokens > 0:
			st.Stop = StopMaxTokens
		case s.Pos() >= s.ContextSize() || len(st.Tokens) >= limit:
			st.Stop = StopContextFull
		}
		if st.Stop != "" {
			s.setPending(id)
			return st, nil
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		t = time.Now()
		next[0] = id
		logits, err = s.Eval(ctx, next)
		gen += time.Since(t)
		if err != nil {
			return st, err
		}
		st.GenEvals++
	}
}
