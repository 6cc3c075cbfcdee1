package llama

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SamplerOptions choose the next token from logits. The steps run in the
// order of llama.cpp's common sampler (cui-llama.rn 1.3.3), each one off
// at its zero value:
//
//  1. Penalties, on the tokens among the last RepeatLastN the sampler has
//     seen (Accept, and each token it chose): RepeatPenalty divides a
//     positive logit and multiplies a negative one, then FrequencyPenalty
//     times the token's count in that window and PresencePenalty once are
//     subtracted.
//  2. Temp <= 0 is greedy: the argmax of the penalised logits (the steps
//     below keep it anyway).
//  3. TopK keeps the K most likely tokens (0 or less: all).
//  4. TopP keeps the smallest set, best first, whose probability reaches
//     TopP (0 or >= 1: all).
//  5. MinP keeps the tokens whose probability is at least MinP times the
//     most likely one's.
//  6. The logits are divided by Temp and a token is drawn from their
//     softmax with a generator seeded by Seed.
//
// A logit that is NaN or -Inf is never chosen; +Inf logits, if any, share
// all the probability. The same options, Seed included, and the same
// sequence of logits and accepted tokens give the same tokens: sampling is
// reproducible. Validate reports the options no step can honour.
type SamplerOptions struct {
	Temp float32 // temperature; <= 0: greedy
	TopK int
	TopP float32
	MinP float32 // llama.cpp's min_p, in [0, 1]
	Seed uint64  // the generator's seed; every value, 0 included, is a seed
	// RepeatPenalty is llama.cpp's repeat_penalty: 0 or 1 is off, more than
	// 1 makes the repeated tokens less likely. Finite, not negative.
	RepeatPenalty float32
	// RepeatLastN is how many of the latest tokens the penalties look at
	// (llama.cpp's repeat_last_n): 0 means 64, llama.cpp's default; -1
	// every token seen. To turn the penalties off, leave the three
	// penalties at zero.
	RepeatLastN int
	// FrequencyPenalty and PresencePenalty are llama.cpp's
	// frequency_penalty and presence_penalty (finite; 0: off).
	FrequencyPenalty, PresencePenalty float32
}

// DefaultRepeatLastN is the window of the penalties when
// SamplerOptions.RepeatLastN is 0 (llama.cpp's default).
const DefaultRepeatLastN = 64

// Validate reports options that no sampler can honour: a NaN anywhere, a
// TopP below 0, a MinP outside [0, 1], a RepeatPenalty negative or not
// finite, a FrequencyPenalty or PresencePenalty not finite, a RepeatLastN
// below -1.
func (o SamplerOptions) Validate() error {
	nan := func(x float32) bool { return x != x }
	finite := func(x float32) bool { return !math.IsInf(float64(x), 0) && !nan(x) }
	switch {
	case nan(o.Temp):
		return errors.New("llama: sampler: Temp is NaN")
	case nan(o.TopP) || o.TopP < 0:
		return fmt.Errorf("llama: sampler: TopP %g: 0 (all) to 1", o.TopP)
	case nan(o.MinP) || o.MinP < 0 || o.MinP > 1:
		return fmt.Errorf("llama: sampler: MinP %g: 0 (off) to 1", o.MinP)
	case !finite(o.RepeatPenalty) || o.RepeatPenalty < 0:
		return fmt.Errorf("llama: sampler: RepeatPenalty %g: finite and not negative (0 or 1: off)", o.RepeatPenalty)
	case !finite(o.FrequencyPenalty):
		return fmt.Errorf("llama: sampler: FrequencyPenalty %g is not finite", o.FrequencyPenalty)
	case !finite(o.PresencePenalty):
		return fmt.Errorf("llama: sampler: PresencePenalty %g is not finite", o.PresencePenalty)
	case o.RepeatLastN < -1:
		return fmt.Errorf("llama: sampler: RepeatLastN %d: -1 (every token), 0 (%d) or a count", o.RepeatLastN, DefaultRepeatLastN)
	}
	return nil
}

// ErrNoCandidates is returned by Pick when no logit is a number above -Inf.
var ErrNoCandidates = errors.New("llama: sampler: no logit is a number above -Inf")

// Sampler draws tokens; it keeps its random state, the latest tokens (for
// the penalties) and scratch space between calls. Not safe for concurrent
// use.
type Sampler struct {
	opts  SamplerOptions
	err   error // from Validate
	rng   *rand.Rand
	cand  []candidate
	work  []float32       // the penalised logits
	hist  []int32         // the latest tokens, oldest first
	count map[int32]int32 // scratch: occurrences in the window
}

type candidate struct {
	id    int32
	logit float32
	p     float32
}

// NewSampler returns a sampler with the given options. Options that
// Validate refuses make Pick return its error.
func NewSampler(opts SamplerOptions) *Sampler {
	s := &Sampler{opts: opts, err: opts.Validate()}
	s.Reset()
	return s
}

// Reset makes s as new: the generator restarts from the seed and the
// tokens seen are forgotten.
func (s *Sampler) Reset() {
	s.rng = rand.New(rand.NewPCG(s.opts.Seed, 0x9e3779b97f4a7c15))
	s.hist = s.hist[:0]
}

// Accept records tokens the sampler did not choose (a prompt's) as seen,
// for the penalties; the tokens Pick and Sample choose are recorded
// already.
func (s *Sampler) Accept(ids ...int32) {
	s.hist = append(s.hist, ids...)
	if n := s.window(); n >= 0 && len(s.hist) > 2*n+64 {
		s.hist = append(s.hist[:0], s.hist[len(s.hist)-n:]...)
	}
}

// window is the number of latest tokens the penalties read; -1: all.
func (s *Sampler) window() int {
	switch n := s.opts.RepeatLastN; {
	case n == 0:
		return DefaultRepeatLastN
	case n < 0:
		return -1
	default:
		return n
	}
}

func (s *Sampler) penalizing() bool {
	o := s.opts
	return (o.RepeatPenalty != 0 && o.RepeatPenalty != 1) || o.FrequencyPenalty != 0 || o.PresencePenalty != 0
}

// penalize returns logits with the penalties applied (in a copy), or
// logits itself when there are none.
func (s *Sampler) penalize(logits []float32) []float32 {
	if !s.penalizing() || len(s.hist) == 0 {
		return logits
	}
	o := s.opts
	win := s.hist
	if n := s.window(); n >= 0 && len(win) > n {
		win = win[len(win)-n:]
	}
	if s.count == nil {
		s.count = map[int32]int32{}
	}
	clear(s.count)
	for _, id := range win {
		s.count[id]++
	}
	s.work = append(s.work[:0], logits...)
	rp := o.RepeatPenalty
	if rp == 0 {
		rp = 1
	}
	for id, n := range s.count {
		if id < 0 || int(id) >= len(s.work) {
			continue
		}
		v := s.work[id]
		if v <= 0 {
			v *= rp
		} else {
			v /= rp
		}
		s.work[id] = v - float32(n)*o.FrequencyPenalty - o.PresencePenalty
	}
	return s.work
}

// Greedy returns the id of the largest logit (the first one on ties; NaNs
// are skipped; 0 if no logit is above -Inf).
func Greedy(logits []float32) int32 {
	// It runs once per generated token over the whole vocabulary: four
	// independent running maxima first, then the first index holding the
	// largest.
	inf := float32(math.Inf(-1))
	m0, m1, m2, m3 := inf, inf, inf, inf
	i := 0
	for ; i+4 <= len(logits); i += 4 {
		x := logits[i : i+4 : i+4]
		if x[0] > m0 {
			m0 = x[0]
		}
		if x[1] > m1 {
			m1 = x[1]
		}
		if x[2] > m2 {
			m2 = x[2]
		}
		if x[3] > m3 {
			m3 = x[3]
		}
	}
	for _, v := range logits[i:] {
		if v > m0 {
			m0 = v
		}
	}
	for _, v := range [3]float32{m1, m2, m3} {
		if v > m0 {
			m0 = v
		}
	}
	if m0 == inf {
		return 0
	}
	for i, v := range logits {
		if v == m0 {
			return int32(i)
		}
	}
	return 0
}

// Pick chooses the next token from logits (see SamplerOptions) and records
// it as seen. It returns the error of Validate for bad options, and
// ErrNoCandidates when no logit is a number above -Inf (none then counts
// as seen).
func (s *Sampler) Pick(logits []float32) (int32, error) {
	if s.err != nil {
		return 0, s.err
	}
	id, ok := s.pick(logits)
	if !ok {
		return 0, ErrNoCandidates
	}
	s.Accept(id)
	return id, nil
}

// Sample is Pick without the error: for options Validate refuses, and
// logits of which none is a number above -Inf, it returns Greedy(logits).
func (s *Sampler) Sample(logits []float32) int32 {
	id, err := s.Pick(logits)
	if err != nil {
		return Greedy(logits)
	}
	return id
}

func (s *Sampler) pick(logits []float32) (int32, bool) {
	o := s.opts
	l := s.penalize(logits)
	if o.Temp <= 0 {
		id := Greedy(l)
		return id, len(l) > 0 && l[id] > negInf
	}
	c := s.topK(l, o.TopK)
	if len(c) == 0 {
		return 0, false
	}
	if o.TopP > 0 && o.TopP < 1 {
		// probabilities without temperature, as llama.cpp
		softmax(c, 1)
		c = nucleus(c, o.TopP)
	}
	if o.MinP > 0 {
		c = minP(c, o.MinP)
	}
	softmax(c, 1/o.Temp)
	r := s.rng.Float32()
	last := 0
	for i, x := range c {
		if x.p > 0 {
			last = i
		}
		r -= x.p
		if r < 0 && x.p > 0 {
			return x.id, true
		}
	}
	return c[last].id, true // rounding left r above the sum
}

var negInf = float32(math.Inf(-1))

// nucleus reorders c to start with its most likely candidates, best first,
// and returns the shortest such prefix whose probability reaches p. It
// pops a heap instead of sorting: the nucleus is usually a few tokens of
// tens of thousands.
func nucleus(c []candidate, p float32) []candidate {
	if slices.IsSortedFunc(c, byLogitDesc) {
		cum := float32(0)
		for i := range c {
			if cum += c[i].p; cum >= p {
				return c[:i+1]
			}
		}
		return c
	}
	h := heap[candidate]{items: c, less: func(a, b candidate) bool { return byLogitDesc(a, b) < 0 }}
	h.init()
	cum := float32(0)
	for n := len(c); n > 0; n-- {
		x := h.pop() // shrinks the heap's view; c[n-1] is free for x
		c[n-1] = x
		if cum += x.p; cum >= p {
			break
		}
	}
	// the popped candidates sit at the end of c, worst first
	out := c[len(h.items):]
	slices.Reverse(out)
	return out
}

// minP keeps, in order, the candidates whose probability is at least p
// times the largest: whose logit is at least the largest plus log(p).
func minP(c []candidate, p float32) []candidate {
	m := negInf
	for _, x := range c {
		m = max(m, x.logit)
	}
	floor := m + float32(math.Log(float64(p)))
	out := c[:0]
	for _, x := range c {
		if x.logit >= floor {
			out = append(out, x)
		}
	}
	return out
}

func byLogitDesc(a, b candidate) int {
	switch {
	case a.logit > b.logit:
		return -1
	case a.logit < b.logit:
		return 1
	}
	return int(a.id - b.id)
}

// topK returns the k best candidates sorted (all of them, unsorted, for
// k <= 0 or k >= len(logits)), leaving out the logits that are NaN or
// -Inf: those are never drawn. The selection keeps a small sorted list, so
// it costs one pass over the logits for the usual small k.
func (s *Sampler) topK(logits []float32, k int) []candidate {
	c := s.cand[:0]
	if k <= 0 || k >= len(logits) {
		for i, v := range logits {
			if v > negInf {
				c = append(c, candidate{id: int32(i), logit: v})
			}
		}
		s.cand = c
		return c
	}
	for i, v := range logits {
		if !(v > negInf) || len(c) == k && v <= c[k-1].logit {
			continue
		}
		x := candidate{id: int32(i), logit: v}
		j, _ := slices.BinarySearchFunc(c, x, byLogitDesc)
		if len(c) < k {
			c = append(c, candidate{})
		}
		copy(c[j+1:], c[j:len(c)-1])
		c[j] = x
	}
	s.cand = c
	return c
}

// softmax sets p of each candidate (none NaN or -Inf) from its logit times
// scale. The differences from the largest logit are scaled, so a huge
// scale (a tiny temperature) leaves the largest at probability 1 instead of
// overflowing; +Inf logits, if any, share the probability.
func softmax(c []candidate, scale float32) {
	m := negInf
	for _, x := range c {
		m = max(m, x.logit)
	}
	inf := math.IsInf(float64(m), 1)
	sum := float32(0)
	for i := range c {
		d := c[i].logit - m
		switch {
		case inf && c[i].logit == m, !inf && d == 0:
			c[i].p = 1
		case inf:
			c[i].p = 0
		default:
			c[i].p = float32(math.Exp(float64(d) * float64(scale)))
		}
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}
