package llama

import (
	"math"
	"math/rand/v2"
	"slices"
)

// SamplerOptions choose the next token from logits. Temp <= 0 is greedy
// (argmax). Otherwise, in llama.cpp's order: keep the TopK most likely
// tokens (0: all), then the smallest set whose probability reaches TopP
// (0 or >= 1: all), divide the logits by Temp, and draw from their softmax
// with a generator seeded by Seed.
type SamplerOptions struct {
	Temp float32
	TopK int
	TopP float32
	Seed uint64
}

// Sampler draws tokens; it keeps its random state and scratch space between
// calls. Not safe for concurrent use.
type Sampler struct {
	opts SamplerOptions
	rng  *rand.Rand
	cand []candidate
}

type candidate struct {
	id    int32
	logit float32
	p     float32
}

// NewSampler returns a sampler with the given options.
func NewSampler(opts SamplerOptions) *Sampler {
	return &Sampler{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))}
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

// Sample picks the next token from logits.
func (s *Sampler) Sample(logits []float32) int32 {
	o := s.opts
	if o.Temp <= 0 || len(logits) == 0 {
		return Greedy(logits)
	}
	c := s.topK(logits, o.TopK)
	// probabilities without temperature for top-p, as llama.cpp
	softmax(c, 1)
	if o.TopP > 0 && o.TopP < 1 {
		c = nucleus(c, o.TopP)
	}
	softmax(c, 1/o.Temp)
	r := s.rng.Float32()
	for _, x := range c {
		r -= x.p
		if r < 0 {
			return x.id
		}
	}
	return c[len(c)-1].id
}

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
// k <= 0 or k >= len(logits)). The selection keeps a small sorted list, so
// it costs one pass over the logits for the usual small k.
func (s *Sampler) topK(logits []float32, k int) []candidate {
	c := s.cand[:0]
	if k <= 0 || k >= len(logits) {
		for i, v := range logits {
			c = append(c, candidate{id: int32(i), logit: v})
		}
		s.cand = c
		return c
	}
	for i, v := range logits {
		if len(c) == k && v <= c[k-1].logit {
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

// softmax sets p of each candidate from its logit times scale.
func softmax(c []candidate, scale float32) {
	m := float32(math.Inf(-1))
	for _, x := range c {
		m = max(m, x.logit*scale)
	}
	sum := float32(0)
	for i := range c {
		c[i].p = float32(math.Exp(float64(c[i].logit*scale - m)))
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}
