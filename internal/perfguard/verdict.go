package main

import (
	"errors"
	"fmt"
	"slices"
)

// minRatio is the guard's line: a case is slower when the median of its
// per-round new/old ratios is below it and the two sides' ranges do not
// overlap (the new side's best round is below the old side's worst).
const minRatio = 0.97

// minRounds is the fewest rounds a verdict is given on: with two, the
// ranges of two identical builds fall apart one time in six by chance
// alone (with three one in twenty, with five one in 252).
const minRounds = 3

// verdicts of a case.
const (
	verdictSame   = ""
	verdictFew    = "not judged (fewer than 3 rounds)"
	verdictSlower = "SLOWER"
	verdictFaster = "faster"
)

// summary is what the table shows of one case: rates are higher-is-faster
// (tokens/s, GFLOPS), one per round and side.
type summary struct {
	ratio, ratioLo, ratioHi float64 // median, min and max of the per-round new/old ratios
	oldMed, oldLo, oldHi    float64
	newMed, newLo, newHi    float64
	verdict                 string
}

// median of xs (the mean of the two middle values for an even count); xs is
// not changed.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// span is the smallest and the largest of xs.
func span(xs []float64) (lo, hi float64) {
	return slices.Min(xs), slices.Max(xs)
}

// summarize compares the rates of the old and the new side, round by round
// (old[i] and new[i] ran in the same round, one after the other).
func summarize(old, new []float64) (summary, error) {
	if len(old) == 0 || len(old) != len(new) {
		return summary{}, fmt.Errorf("%d old and %d new rounds: want the same number, at least 1", len(old), len(new))
	}
	ratios := make([]float64, len(old))
	for i := range old {
		if !(old[i] > 0) || !(new[i] > 0) {
			return summary{}, errors.New("a rate that is not positive")
		}
		ratios[i] = new[i] / old[i]
	}
	var s summary
	s.ratio = median(ratios)
	s.ratioLo, s.ratioHi = span(ratios)
	s.oldMed = median(old)
	s.oldLo, s.oldHi = span(old)
	s.newMed = median(new)
	s.newLo, s.newHi = span(new)
	switch {
	case len(old) < minRounds:
		s.verdict = verdictFew
	case s.ratio < minRatio && s.newHi < s.oldLo:
		s.verdict = verdictSlower
	case s.ratio > 1/minRatio && s.newLo > s.oldHi:
		s.verdict = verdictFaster
	}
	return s, nil
}
