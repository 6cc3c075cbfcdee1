package llama

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// samplerCombos is every combination of the sampler's steps, each off and
// on in a few settings.
func samplerCombos() []SamplerOptions {
	var out []SamplerOptions
	for _, temp := range []float32{0, 0.01, 0.8, 5} {
		for _, k := range []int{0, 1, 2, 3, 100} {
			for _, p := range []float32{0, 0.5, 0.95, 1} {
				for _, minp := range []float32{0, 0.05, 1} {
					for _, rp := range []float32{0, 1.3} {
						out = append(out, SamplerOptions{Temp: temp, TopK: k, TopP: p, MinP: minp, RepeatPenalty: rp,
							FrequencyPenalty: rp / 4, PresencePenalty: rp / 8, Seed: 9})
					}
				}
			}
		}
	}
	return out
}

// NaN and -Inf logits are never chosen, whatever the options and wherever
// they are (TopK's selection among them used to slice out of range); +Inf
// ones take all the probability; logits with none above -Inf are an error
// of Pick, and Greedy's 0 from Sample.
func TestSamplerSkipsNaNAndInf(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := [][]float32{
		{nan, 1, 2, 3},
		{1, 2, 3, nan},
		{1, nan, 3, nan, 2},
		{nan, nan, nan, 0.5},
		{-inf, 1, nan, -inf},
		{1, inf, nan, 2, inf},
		{nan, -inf, inf},
		{-inf, nan, 3e38, 3e38, -3e38},
	}
	hopeless := [][]float32{{nan}, {nan, nan, nan}, {-inf, nan}, {-inf, -inf}, {}}
	for _, o := range samplerCombos() {
		s := NewSampler(o)
		s.Accept(0, 1, 1, 2)
		for _, l := range cases {
			hasInf := false
			for _, v := range l {
				hasInf = hasInf || math.IsInf(float64(v), 1)
			}
			for range 20 {
				id, err := s.Pick(l)
				if err != nil {
					t.Fatalf("%+v on %v: %v", o, l, err)
				}
				v := l[id]
				if !(v > float32(math.Inf(-1))) || hasInf && !math.IsInf(float64(v), 1) {
					t.Fatalf("%+v on %v: drew %d (%g)", o, l, id, v)
				}
				if id := s.Sample(l); !(l[id] > float32(math.Inf(-1))) {
					t.Fatalf("%+v on %v: Sample drew %d (%g)", o, l, id, l[id])
				}
			}
		}
		for _, l := range hopeless {
			if id, err := s.Pick(l); !errors.Is(err, ErrNoCandidates) {
				t.Fatalf("%+v on %v: %d, %v", o, l, id, err)
			}
			if id := s.Sample(l); id != 0 {
				t.Fatalf("%+v on %v: Sample gave %d, not Greedy's 0", o, l, id)
			}
		}
	}
}

// The case: temperature 1 without TopK used to draw the NaN token
// every time.
func TestSamplerNeverDrawsNaN(t *testing.T) {
	l := []float32{0, float32(math.NaN()), 1, 0.5}
	for _, k := range []int{0, 2, 3} {
		s := NewSampler(SamplerOptions{Temp: 1, TopK: k, Seed: 5})
		for range 200 {
			if id := s.Sample(l); id == 1 {
				t.Fatalf("TopK %d: drew the NaN token", k)
			}
		}
	}
}

// Options no step can honour are Pick's error (Sample then falls back to
// Greedy).
func TestSamplerOptionsValidate(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, o := range []SamplerOptions{
		{Temp: nan}, {TopP: nan}, {TopP: -0.1}, {MinP: nan}, {MinP: -0.5}, {MinP: 1.5},
		{RepeatPenalty: -1}, {RepeatPenalty: inf}, {RepeatPenalty: nan},
		{FrequencyPenalty: inf}, {FrequencyPenalty: nan}, {PresencePenalty: -inf}, {PresencePenalty: nan},
		{RepeatLastN: -2},
	} {
		if o.Validate() == nil {
			t.Errorf("%+v: no error", o)
		}
		s := NewSampler(o)
		if _, err := s.Pick([]float32{1, 3, 2}); err == nil {
			t.Errorf("%+v: Pick without error", o)
		}
		if id := s.Sample([]float32{1, 3, 2}); id != 1 {
			t.Errorf("%+v: Sample gave %d, not Greedy's 1", o, id)
		}
	}
	for _, o := range samplerCombos() {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if err := (SamplerOptions{Temp: inf, TopP: 2, RepeatLastN: -1}).Validate(); err != nil {
		t.Error(err)
	}
}

// The penalties follow llama.cpp's: a seen token's positive logit is
// divided by RepeatPenalty, a negative one multiplied, then its count times
// FrequencyPenalty and PresencePenalty once are subtracted; only the last
// RepeatLastN tokens count.
func TestSamplerPenalties(t *testing.T) {
	l := []float32{2, -1, 1.9, 0.5}
	s := NewSampler(SamplerOptions{RepeatPenalty: 2, RepeatLastN: 3})
	s.Accept(0, 0, 1, 2) // the window of 3 holds 0, 1, 2
	got := append([]float32(nil), s.penalize(l)...)
	want := []float32{1, -2, 0.95, 0.5}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("repeat penalty: %v, want %v", got, want)
	}
	if fmt.Sprint(l) != "[2 -1 1.9 0.5]" {
		t.Errorf("the caller's logits changed: %v", l)
	}
	s = NewSampler(SamplerOptions{FrequencyPenalty: 0.5, PresencePenalty: 0.25})
	s.Accept(0, 0, 3)
	if got, want := fmt.Sprint(s.penalize(l)), fmt.Sprint([]float32{0.75, -1, 1.9, -0.25}); got != want {
		t.Errorf("frequency and presence: %s, want %s", got, want)
	}
	// greedy decoding with a penalty leaves the token it just chose when
	// the next is close (the repeat penalty does not grow with the count)
	s = NewSampler(SamplerOptions{RepeatPenalty: 1.5})
	var ids []int32
	for range 4 {
		ids = append(ids, s.Sample([]float32{2, 1.8, 0}))
	}
	if fmt.Sprint(ids) != "[0 1 0 0]" {
		t.Errorf("greedy with repeat penalty 1.5: %v", ids)
	}
	// off: nothing copied or changed
	s = NewSampler(SamplerOptions{RepeatPenalty: 1})
	s.Accept(0, 1)
	if p := s.penalize(l); &p[0] != &l[0] {
		t.Error("penalty 1 copied the logits")
	}
	// the history is bounded by the window, -1 keeps every token
	s = NewSampler(SamplerOptions{RepeatPenalty: 1.1, RepeatLastN: 4})
	for range 1000 {
		s.Accept(1)
	}
	if len(s.hist) > 2*4+64 {
		t.Errorf("window 4: %d tokens kept", len(s.hist))
	}
	s = NewSampler(SamplerOptions{RepeatPenalty: 2, RepeatLastN: -1})
	s.Accept(0)
	s.Accept(make([]int32, 5000)...)
	s.Accept(3)
	if got := s.penalize(l); got[0] != 1 || got[3] != 0.25 {
		t.Errorf("window -1: %v", got)
	}
}

// MinP keeps the tokens whose probability is at least MinP times the best
// one's, before the temperature.
func TestSamplerMinP(t *testing.T) {
	// p relative to the best: 1, e^-1, e^-3
	l := []float32{3, 2, 0}
	s := NewSampler(SamplerOptions{Temp: 50, MinP: 0.3, Seed: 1})
	seen := map[int32]int{}
	for range 500 {
		seen[s.Sample(l)]++
	}
	if seen[2] != 0 || seen[0] == 0 || seen[1] == 0 {
		t.Errorf("min-p 0.3: %v", seen)
	}
	s = NewSampler(SamplerOptions{Temp: 50, MinP: 1, Seed: 1})
	for range 100 {
		if id := s.Sample(l); id != 0 {
			t.Fatalf("min-p 1 drew %d", id)
		}
	}
}

// The same seed and options give the same tokens, penalties and all; Reset
// starts the same sequence again; another seed gives another.
func TestSamplerSeedIsReproducible(t *testing.T) {
	l := make([]float32, 50)
	for i := range l {
		l[i] = float32(i%7) * 0.3
	}
	o := SamplerOptions{Temp: 1.5, TopK: 30, TopP: 0.97, MinP: 0.01, RepeatPenalty: 1.2, FrequencyPenalty: 0.1, Seed: 1234}
	run := func(s *Sampler) []int32 {
		var out []int32
		for range 100 {
			out = append(out, s.Sample(l))
		}
		return out
	}
	s := NewSampler(o)
	a := run(s)
	b := run(NewSampler(o))
	s.Reset()
	c := run(s)
	if !equalIDs(a, b) || !equalIDs(a, c) {
		t.Errorf("seed 1234 gave %v, then %v, after Reset %v", a, b, c)
	}
	o.Seed = 1235
	if equalIDs(a, run(NewSampler(o))) {
		t.Error("seeds 1234 and 1235 drew the same 100 tokens")
	}
}
