package llama

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TensorSplit weights are proportions of any size: huge ones are divided
// by the largest before they are summed (1e308 twice used to overflow to
// +Inf and send every layer to one device); NaN, Inf, negative and
// all-zero weights are refused, naming TensorSplit.
func TestTensorSplitWeightsAreProportions(t *testing.T) {
	m := &Model{Hparams: Hparams{NLayer: 8}, devs: make([]*device, 2)}
	for _, c := range []struct {
		split []float64
		want  []int // layers of the two devices
	}{
		{[]float64{1, 1}, []int{4, 4}},
		{[]float64{1e308, 1e308}, []int{4, 4}},
		{[]float64{math.MaxFloat64, math.MaxFloat64, math.MaxFloat64 / 2}, []int{3, 3}},
		{[]float64{3e-320, 1e-320}, []int{6, 2}},
		{[]float64{3, 1}, []int{6, 2}},
		{[]float64{0, 1, 1}, []int{0, 4}},
		{[]float64{1e300, 0}, []int{8, 0}},
	} {
		got, err := m.layerCounts(c.split, nil, 0)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, %v; want %v", c.split, got, err, c.want)
		}
	}
	for _, bad := range [][]float64{
		{math.NaN(), 1}, {1, math.Inf(1)}, {math.Inf(-1), 1}, {-1, 2}, {0, math.Copysign(0, -1)}, {0, 0, 0}, {0, 0},
		{1}, {1, 1, 1, 1},
	} {
		_, err := m.layerCounts(bad, nil, 0)
		if err == nil || !strings.Contains(err.Error(), "TensorSplit") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if sh, err := splitShares([]float64{1e308, 1e308, 2e308 / 2}); err != nil || sh[0]+sh[1]+sh[2] != 1 {
		t.Errorf("shares %v, %v", sh, err)
	}
}
