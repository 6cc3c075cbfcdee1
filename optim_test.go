package ggml

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// AdamWParams mean one thing wherever they are given: a zero field is its
// default in NewAdamW as in TrainerOptions.AdamW (NewAdamW used to keep
// zeros, NewTrainer to fill them); AdamW.Params set afterwards is used as
// it is, zeros included.
func TestAdamWZeroFieldsAreDefaultsEverywhere(t *testing.T) {
	d := DefaultAdamWParams()
	withAlpha := d
	withAlpha.Alpha = 0.05
	for _, c := range []struct{ in, want AdamWParams }{
		{AdamWParams{}, d},
		{AdamWParams{Alpha: 0.05}, withAlpha},
		{AdamWParams{Alpha: 0.1, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WeightDecay: 0.05}, AdamWParams{Alpha: 0.1, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WeightDecay: 0.05}},
		{AdamWParams{WeightDecay: 0.1}, AdamWParams{Alpha: d.Alpha, Beta1: d.Beta1, Beta2: d.Beta2, Eps: d.Eps, WeightDecay: 0.1}},
	} {
		require.Equal(t, c.want, NewAdamW(c.in).Params, "NewAdamW(%+v)", c.in)

		ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		w := ctx.SetParam(ctx.NewTensor1D(TypeF32, 2).Fill(1))
		tr, err := NewTrainer(ctx, ctx.Sum(ctx.Sqr(w)), TrainerOptions{AdamW: c.in, Threads: 1})
		require.NoError(t, err)
		require.Equal(t, c.want, tr.Opt.Params, "TrainerOptions{AdamW: %+v}", c.in)

		// set afterwards, a zero is a zero: beta1 0 makes the moment the
		// gradient itself
		tr.Opt.Params.Beta1 = 0
		_, err = tr.Step()
		require.NoError(t, err)
		hp, err := tr.Opt.hp.Float32s()
		require.NoError(t, err)
		require.Zero(t, hp[1], "beta1 written to the step nodes")
		m, _ := tr.Opt.Moments(0)
		require.Equal(t, []float32{2, 2}, must(m.Float32s()), "first moment with beta1 0: the gradient 2w")
		require.NoError(t, tr.Close())
		ctx.Close()
	}
}
