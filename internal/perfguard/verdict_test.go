package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMedianOddEvenAndInputUnchanged(t *testing.T) {
	xs := []float64{3, 1, 2}
	assert.Equal(t, 2.0, median(xs))
	assert.Equal(t, []float64{3, 1, 2}, xs)
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.Equal(t, 7.0, median([]float64{7}))
}

func TestSpanIsMinAndMax(t *testing.T) {
	lo, hi := span([]float64{5, 2, 9, 4})
	assert.Equal(t, 2.0, lo)
	assert.Equal(t, 9.0, hi)
}

func TestSummarizeRatiosArePerRound(t *testing.T) {
	s, err := summarize([]float64{100, 50, 200}, []float64{110, 50, 180})
	require.NoError(t, err)
	assert.InDelta(t, 1.0, s.ratio, 1e-12) // ratios 1.1, 1.0, 0.9
	assert.InDelta(t, 0.9, s.ratioLo, 1e-12)
	assert.InDelta(t, 1.1, s.ratioHi, 1e-12)
	assert.Equal(t, 100.0, s.oldMed)
	assert.Equal(t, 110.0, s.newMed)
	assert.Equal(t, [2]float64{50, 200}, [2]float64{s.oldLo, s.oldHi})
	assert.Equal(t, [2]float64{50, 180}, [2]float64{s.newLo, s.newHi})
	assert.Equal(t, verdictSame, s.verdict)
}

func TestSummarizeSlowerNeedsLowRatioAndApartRanges(t *testing.T) {
	// 10% slower in every round, ranges apart: slower
	s, err := summarize([]float64{100, 101, 102}, []float64{90, 91, 92})
	require.NoError(t, err)
	assert.Equal(t, verdictSlower, s.verdict)

	// 10% slower by the median, but the ranges overlap (a noisy round): not judged
	s, err = summarize([]float64{100, 101, 80}, []float64{90, 91, 92})
	require.NoError(t, err)
	assert.Less(t, s.ratio, minRatio)
	assert.Equal(t, verdictSame, s.verdict)

	// ranges apart but within the line (2% slower): not judged
	s, err = summarize([]float64{100, 100.5, 101}, []float64{98, 98.5, 99})
	require.NoError(t, err)
	assert.Equal(t, verdictSame, s.verdict)
}

func TestSummarizeFasterIsTheMirror(t *testing.T) {
	s, err := summarize([]float64{90, 91, 92}, []float64{100, 101, 102})
	require.NoError(t, err)
	assert.Equal(t, verdictFaster, s.verdict)
}

func TestSummarizeJudgesNothingOnFewRounds(t *testing.T) {
	s, err := summarize([]float64{100, 101}, []float64{50, 51})
	require.NoError(t, err)
	assert.Equal(t, verdictFew, s.verdict)
	assert.InDelta(t, 0.5, s.ratio, 0.01) // the figures are still shown
}

func TestSummarizeRefusesUnpairedOrEmptyRounds(t *testing.T) {
	_, err := summarize([]float64{1, 2}, []float64{1})
	assert.Error(t, err)
	_, err = summarize(nil, nil)
	assert.Error(t, err)
	_, err = summarize([]float64{0}, []float64{1})
	assert.Error(t, err)
}
