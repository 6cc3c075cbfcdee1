package ggml

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func bwCtx(t *testing.T, size int) *Context {
	t.Helper()
	ctx, err := NewContext(ContextOptions{MemSize: size})
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

func bwRand(ctx *Context, rng *rand.Rand, lo, hi float32, shape ...int) *Tensor {
	x := ctx.NewTensor(TypeF32, shape...)
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float32()
	}
	if err := x.SetFloat32s(v); err != nil {
		panic(err)
	}
	return x
}

func bwFloats(t *testing.T, x *Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	require.NoError(t, err)
	return v
}

// bwGradCheck compares the gradients of Graph.BuildBackward with central
// differences of the forward computation, for every element of every
// parameter. The tolerance is on the largest difference relative to the
// largest gradient magnitude (at least 1).
func bwGradCheck(t *testing.T, name string, build func(ctx *Context, rng *rand.Rand) (loss *Tensor, params []*Tensor)) {
	t.Helper()
	ctx := bwCtx(t, 64<<20)
	rng := rand.New(rand.NewPCG(42, uint64(len(name))))
	loss, params := build(ctx, rng)
	for _, p := range params {
		ctx.SetParam(p)
	}
	loss.SetLoss()
	fwd := ctx.NewGraph().BuildForward(loss)
	g := ctx.NewGraphCustom(DefaultGraphSize, true).BuildForward(loss)
	require.NoError(t, g.BuildBackward(ctx, ctx, false), name)
	g.Reset()
	require.NoError(t, g.Compute(2), name)

	const eps = 1e-3
	for pi, p := range params {
		gr := g.Grad(p)
		require.NotNil(t, gr, "%s: no gradient for param %d", name, pi)
		require.Equal(t, p.Ne(), gr.Ne())
		an := bwFloats(t, gr)
		x0 := bwFloats(t, p)
		x := append([]float32(nil), x0...)
		maxDiff, scale := 0.0, 1.0
		for i := range x {
			eval := func(v float32) float64 {
				x[i] = v
				require.NoError(t, p.SetFloat32s(x))
				require.NoError(t, fwd.Compute(1))
				return float64(loss.F32(0))
			}
			num := (eval(x0[i]+eps) - eval(x0[i]-eps)) / (2 * eps)
			x[i] = x0[i]
			maxDiff = math.Max(maxDiff, math.Abs(num-float64(an[i])))
			scale = math.Max(scale, math.Abs(num))
		}
		require.NoError(t, p.SetFloat32s(x0))
		t.Logf("%s: param %d: max |numeric - analytic| / scale = %.2g", name, pi, maxDiff/scale)
		require.Lessf(t, maxDiff/scale, 2e-2, "%s: param %d: max |numeric - analytic| = %g (scale %g)", name, pi, maxDiff, scale)
	}
}

func TestBackwardFiniteDifferences(t *testing.T) {
	cases := map[string]func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor){
		"mlp relu": func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor) {
			w := bwRand(ctx, rng, -1, 1, 5, 4)
			b := bwRand(ctx, rng, -1, 1, 4)
			x := bwRand(ctx, rng, -1, 1, 5, 3)
			h := ctx.Relu(ctx.Add(ctx.MulMat(w, x), b))
			return ctx.Sum(ctx.Sqr(h)), []*Tensor{w, b, x}
		},
		"softmax log": func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor) {
			a := bwRand(ctx, rng, -2, 2, 6, 3)
			c := bwRand(ctx, rng, 0, 1, 6, 3)
			return ctx.Sum(ctx.Mul(ctx.Log(ctx.SoftMax(a)), c)), []*Tensor{a, c}
		},
		"cross entropy": func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor) {
			w := bwRand(ctx, rng, -1, 1, 4, 5)
			x := bwRand(ctx, rng, -1, 1, 4, 7)
			y := ctx.SoftMax(bwRand(ctx, rng, -1, 1, 5, 7))
			return ctx.CrossEntropyLoss(ctx.MulMat(w, x), y), []*Tensor{w, x}
		},
		"norm silu exp": func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor) {
			a := bwRand(ctx, rng, -1, 1, 8, 3)
			s := bwRand(ctx, rng, 0.5, 1.5, 8)
			h := ctx.Mul(ctx.RMSNorm(a, 1e-6), s)
			return ctx.Sum(ctx.Mean(ctx.Exp(ctx.Scale(ctx.Silu(h), 0.5)))), []*Tensor{a, s}
		},
		"sqrt div sin cos": func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor) {
			a := bwRand(ctx, rng, 0.5, 2, 5, 2)
			b := bwRand(ctx, rng, 0.5, 2, 5, 2)
			h := ctx.Div(ctx.Sqrt(a), ctx.Add(ctx.Sqr(b), a))
			return ctx.Sum(ctx.Sub(ctx.Sin(h), ctx.Cos(ctx.Mul(a, b)))), []*Tensor{a, b}
		},
		"views": func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor) {
			a := bwRand(ctx, rng, -1, 1, 4, 3, 2)
			p := ctx.Cont(ctx.Permute(a, 1, 0, 2, 3))
			r := ctx.Reshape2D(p, 6, 4)
			tr := ctx.Cont(ctx.Transpose(r))
			return ctx.Sum(ctx.Sqr(ctx.SumRows(ctx.Mul(tr, tr)))), []*Tensor{a}
		},
		// beyond the reference: src1 broadcast in mul
		"broadcast mul": func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor) {
			a := bwRand(ctx, rng, -1, 1, 4, 3, 2)
			b := bwRand(ctx, rng, -1, 1, 4, 1, 2)
			c := bwRand(ctx, rng, -1, 1, 1, 3)
			return ctx.Sum(ctx.Sqr(ctx.Mul(ctx.Mul(a, b), c))), []*Tensor{a, b, c}
		},
		// beyond the reference: mul_mat with broadcast batch dimensions
		"broadcast mul_mat": func(ctx *Context, rng *rand.Rand) (*Tensor, []*Tensor) {
			a := bwRand(ctx, rng, -1, 1, 5, 3, 1, 2)
			b := bwRand(ctx, rng, -1, 1, 5, 4, 3, 2)
			return ctx.Sum(ctx.Sqr(ctx.MulMat(a, b))), []*Tensor{a, b}
		},
	}
	for name, build := range cases {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) { bwGradCheck(t, name, build) })
	}
}

func TestBackwardGradLookup(t *testing.T) {
	static := bwCtx(t, 1<<20)
	compute := bwCtx(t, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	w := static.SetParam(bwRand(static, rng, -1, 1, 3))
	other := bwRand(static, rng, -1, 1, 3)
	loss := compute.Sum(compute.Sqr(w)).SetLoss()
	g := compute.NewGraphCustom(64, true).BuildForward(loss)
	require.NoError(t, g.BuildBackward(static, compute, false))
	g.Reset()
	require.NoError(t, g.Compute(1))

	gw := g.Grad(w)
	require.NotNil(t, gw)
	require.Same(t, compute, gw.Context(), "the gradient is a node of the compute context")
	require.Nil(t, g.Grad(other))
	require.Nil(t, g.GradAcc(w), "no accumulator without accumulate")
	la := g.GradAcc(loss)
	require.NotNil(t, la)
	require.Same(t, static, la.Context())
	require.Equal(t, float32(1), la.F32(0))
	wv, gv := bwFloats(t, w), bwFloats(t, gw)
	for i := range wv {
		require.InDelta(t, 2*wv[i], gv[i], 1e-6)
	}
}

// A computed tensor may be a parameter, as in ggml (its test-opt marks the
// model's output f = x*a + b): f gets the loss's gradient, and when
// accumulating, each computation passes its own gradient of f on to a and b.
func TestBackwardComputedParam(t *testing.T) {
	xs := [][]float32{{1, 2, 3, 4, 5}, {-1, 0.5, 2, -3, 1.5}}
	ts := [][]float32{{2, 1, 0, 3, 4}, {1, 1, -2, 0, 2}}
	const a0, b0 = 0.75, -0.5
	for _, accumulate := range []bool{false, true} {
		static := bwCtx(t, 1<<20)
		compute := bwCtx(t, 1<<20)
		x, tg := static.NewTensor1D(TypeF32, 5), static.NewTensor1D(TypeF32, 5)
		a := static.SetParam(static.NewTensor1D(TypeF32, 1))
		b := static.SetParam(static.NewTensor1D(TypeF32, 1))
		f := static.SetParam(compute.Add(compute.Mul(x, a), b))
		loss := compute.Sum(compute.Sqr(compute.Sub(f, tg))).SetLoss()
		g := compute.NewGraphCustom(64, true).BuildForward(loss)
		require.NoError(t, g.BuildBackward(static, compute, accumulate))
		require.NoError(t, a.SetFloat32s([]float32{a0}))
		require.NoError(t, b.SetFloat32s([]float32{b0}))
		g.Reset()
		rounds := 1
		if accumulate {
			rounds = 2
		}
		wantF := make([]float64, 5)
		var wantA, wantB float64
		for m := range rounds {
			require.NoError(t, x.SetFloat32s(xs[m]))
			require.NoError(t, tg.SetFloat32s(ts[m]))
			require.NoError(t, g.Compute(1))
			for i := range 5 {
				d := 2 * (float64(xs[m][i])*a0 + b0 - float64(ts[m][i]))
				wantF[i] += d
				wantA += d * float64(xs[m][i])
				wantB += d
			}
		}
		gf, ga, gb := g.Grad(f), g.Grad(a), g.Grad(b)
		require.NotNil(t, gf)
		require.Equal(t, accumulate, g.GradAcc(f) != nil)
		for i, v := range bwFloats(t, gf) {
			require.InDelta(t, wantF[i], v, 1e-4, "accumulate=%v: df[%d]", accumulate, i)
		}
		require.InDelta(t, wantA, bwFloats(t, ga)[0], 1e-4, "accumulate=%v: da", accumulate)
		require.InDelta(t, wantB, bwFloats(t, gb)[0], 1e-4, "accumulate=%v: db", accumulate)
	}
}

// linear classifier pieces shared by the accumulation and training tests
func bwLinearLoss(ctx *Context, w, b, x, y *Tensor) *Tensor {
	return ctx.CrossEntropyLoss(ctx.Add(ctx.MulMat(w, x), b), y)
}

func bwOneHot(rng *rand.Rand, classes, n int) []float32 {
	v := make([]float32, classes*n)
	for j := range n {
		v[j*classes+rng.IntN(classes)] = 1
	}
	return v
}

func TestBackwardAccumulate(t *testing.T) {
	const in, classes, micro, nMicro = 6, 4, 5, 4
	ctx := bwCtx(t, 16<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	w := ctx.SetParam(bwRand(ctx, rng, -1, 1, in, classes))
	b := ctx.SetParam(bwRand(ctx, rng, -1, 1, classes))
	xAll := bwRand(ctx, rng, -1, 1, in, micro*nMicro)
	yAll := ctx.NewTensor2D(TypeF32, classes, micro*nMicro)
	require.NoError(t, yAll.SetFloat32s(bwOneHot(rng, classes, micro*nMicro)))

	// one big batch
	big := bwLinearLoss(ctx, w, b, xAll, yAll).SetLoss()
	gBig := ctx.NewGraphCustom(DefaultGraphSize, true).BuildForward(big)
	require.NoError(t, gBig.BuildBackward(ctx, ctx, false))
	gBig.Reset()
	require.NoError(t, gBig.Compute(2))
	wantW, wantB := bwFloats(t, gBig.Grad(w)), bwFloats(t, gBig.Grad(b))

	// micro-batches accumulated into the parameter accumulators
	x := ctx.NewTensor2D(TypeF32, in, micro)
	y := ctx.NewTensor2D(TypeF32, classes, micro)
	small := bwLinearLoss(ctx, w, b, x, y).SetLoss()
	gAcc := ctx.NewGraphCustom(DefaultGraphSize, true).BuildForward(small)
	require.NoError(t, gAcc.BuildBackward(ctx, ctx, true))
	accW, accB := gAcc.GradAcc(w), gAcc.GradAcc(b)
	require.NotNil(t, accW)
	require.NotNil(t, accB)
	xv, yv := bwFloats(t, xAll), bwFloats(t, yAll)
	run := func(k int) {
		require.NoError(t, x.SetFloat32s(xv[k*in*micro:(k+1)*in*micro]))
		require.NoError(t, y.SetFloat32s(yv[k*classes*micro:(k+1)*classes*micro]))
		require.NoError(t, gAcc.Compute(2))
	}
	for round := range 2 { // the second round checks that Reset clears the sums
		gAcc.Reset()
		for k := range nMicro {
			run(k)
		}
		// each micro loss is a mean over its rows: the sum is nMicro times the big gradient
		gotW, gotB := bwFloats(t, accW), bwFloats(t, accB)
		for i := range wantW {
			require.InDelta(t, wantW[i], gotW[i]/nMicro, 1e-5, "round %d w[%d]", round, i)
		}
		for i := range wantB {
			require.InDelta(t, wantB[i], gotB[i]/nMicro, 1e-5, "round %d b[%d]", round, i)
		}
	}

	// without Reset a repeated computation keeps adding
	gAcc.Reset()
	run(0)
	once := bwFloats(t, accW)
	run(0)
	twice := bwFloats(t, accW)
	for i := range once {
		require.InDelta(t, 2*once[i], twice[i], 1e-5)
	}
}

func TestBackwardResetNoAccumulate(t *testing.T) {
	ctx := bwCtx(t, 4<<20)
	rng := rand.New(rand.NewPCG(5, 6))
	w := ctx.SetParam(bwRand(ctx, rng, -1, 1, 4))
	loss := ctx.Sum(ctx.Sqr(ctx.Sin(w))).SetLoss()
	g := ctx.NewGraphCustom(64, true).BuildForward(loss)
	require.NoError(t, g.BuildBackward(nil, nil, false))
	g.Reset()
	require.NoError(t, g.Compute(1))
	first := bwFloats(t, g.Grad(w))
	require.NoError(t, g.Compute(1))
	require.Equal(t, first, bwFloats(t, g.Grad(w)), "gradients are recomputed, not summed")
	g.Reset()
	require.NoError(t, g.Compute(1))
	require.Equal(t, first, bwFloats(t, g.Grad(w)))
}

func TestAdamWStep(t *testing.T) {
	ctx := bwCtx(t, 4<<20)
	w0 := []float32{0.5, -1, 2, 0.25, -0.75}
	c := []float32{1, -2, 0.5, 3, -0.1}
	w := ctx.SetParam(ctx.NewTensor1D(TypeF32, 5))
	require.NoError(t, w.SetFloat32s(w0))
	ct := ctx.NewTensor1D(TypeF32, 5)
	require.NoError(t, ct.SetFloat32s(c))
	loss := ctx.Sum(ctx.Mul(ctx.Sqr(w), ct)).SetLoss() // grad = 2*c*w
	g := ctx.NewGraphCustom(64, true).BuildForward(loss)
	require.NoError(t, g.BuildBackward(ctx, ctx, false))
	gOpt := g.Dup(ctx)
	p := AdamWParams{Alpha: 0.1, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WeightDecay: 0.05}
	opt := NewAdamW(p)
	require.NoError(t, opt.Build(gOpt, ctx))
	require.Len(t, opt.Parameters(), 1)
	require.Error(t, opt.Build(gOpt, ctx), "built twice")
	gOpt.Reset()

	// the same steps by hand, in float64
	want := make([]float64, 5)
	m, v := make([]float64, 5), make([]float64, 5)
	for i := range want {
		want[i] = float64(w0[i])
	}
	for step := 1; step <= 3; step++ {
		require.NoError(t, opt.Step())
		g.Reset()
		require.NoError(t, gOpt.Compute(1))
		b1h := 1 / (1 - math.Pow(float64(p.Beta1), float64(step)))
		b2h := 1 / (1 - math.Pow(float64(p.Beta2), float64(step)))
		for i := range want {
			gr := 2 * float64(c[i]) * want[i]
			m[i] = m[i]*float64(p.Beta1) + gr*(1-float64(p.Beta1))
			v[i] = v[i]*float64(p.Beta2) + gr*gr*(1-float64(p.Beta2))
			mh, vh := m[i]*b1h, math.Sqrt(v[i]*b2h)+float64(p.Eps)
			want[i] = want[i]*(1-float64(p.Alpha*p.WeightDecay)) - float64(p.Alpha)*mh/vh
		}
		got := bwFloats(t, w)
		for i := range want {
			require.InDelta(t, want[i], got[i], 1e-5, "step %d w[%d]", step, i)
		}
		mt, _ := opt.Moments(0)
		gm := bwFloats(t, mt)
		for i := range m {
			require.InDelta(t, m[i], gm[i], 1e-5)
		}
	}
	require.Equal(t, 3, opt.Iter())

	// Reset of the optimizer graph clears the moments
	gOpt.Reset()
	mt, vt := opt.Moments(0)
	require.Equal(t, make([]float32, 5), bwFloats(t, mt))
	require.Equal(t, make([]float32, 5), bwFloats(t, vt))
}

func TestBackwardMisuse(t *testing.T) {
	ctx := bwCtx(t, 4<<20)
	rng := rand.New(rand.NewPCG(7, 8))
	opErr := func(err error) *OpError {
		var oe *OpError
		require.True(t, errors.As(err, &oe), "want an *OpError, got %v", err)
		return oe
	}

	// no parameters
	a := bwRand(ctx, rng, -1, 1, 3)
	l := ctx.Sum(ctx.Sqr(a)).SetLoss()
	g := ctx.NewGraphCustom(64, true).BuildForward(l)
	err := g.BuildBackward(ctx, ctx, false)
	require.ErrorContains(t, err, "no trainable parameters")
	opErr(err)

	// no loss
	p := ctx.SetParam(bwRand(ctx, rng, -1, 1, 3))
	g = ctx.NewGraphCustom(64, true).BuildForward(ctx.Sum(ctx.Sqr(p)))
	require.ErrorContains(t, g.BuildBackward(ctx, ctx, false), "no training loss")

	// an op without a backward rule, named in the error
	p2 := ctx.SetParam(bwRand(ctx, rng, -1, 1, 3))
	l = ctx.Sum(ctx.Tanh(p2)).SetLoss()
	g = ctx.NewGraphCustom(64, true).BuildForward(l)
	err = g.BuildBackward(ctx, ctx, false)
	require.Error(t, err)
	require.Contains(t, strings.ToLower(err.Error()), "tanh")
	require.Contains(t, err.Error(), "backward")

	// a graph without room for gradients
	p3 := ctx.SetParam(bwRand(ctx, rng, -1, 1, 3))
	l = ctx.Sum(ctx.Sqr(p3)).SetLoss()
	g = ctx.NewGraph().BuildForward(l)
	require.ErrorContains(t, g.BuildBackward(ctx, ctx, false), "gradients")
	require.Panics(t, func() { g.Reset() })

	// the loss must be an f32 scalar
	func() {
		defer func() {
			r := recover()
			require.NotNil(t, r)
			e, ok := r.(error)
			require.True(t, ok)
			require.Contains(t, opErr(e).Msg, "scalar")
		}()
		bwRand(ctx, rng, 0, 1, 3).SetLoss()
	}()

	// Reset of a graph whose accumulators have no memory (built in NoAlloc
	// contexts, never allocated): an *OpError naming the accumulator
	func() {
		na, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
		require.NoError(t, err)
		defer na.Close()
		w := na.SetParam(na.NewTensor1D(TypeF32, 3))
		g := na.NewGraphCustom(64, true).BuildForward(na.Sum(na.Sqr(w)).SetLoss())
		require.NoError(t, g.BuildBackward(na, na, true))
		defer func() {
			e, ok := recover().(error)
			require.True(t, ok)
			require.Contains(t, opErr(e).Msg, "has no memory")
		}()
		g.Reset()
	}()

	// the optimizer needs gradients
	require.Error(t, NewAdamW(DefaultAdamWParams()).Build(ctx.NewGraphCustom(64, true).BuildForward(l), ctx))
	require.Error(t, NewAdamW(DefaultAdamWParams()).Step())
}

func TestTrainerLossDecreases(t *testing.T) {
	const in, classes, batch, nBatches = 4, 3, 32, 8
	ctx := bwCtx(t, 32<<20)
	rng := rand.New(rand.NewPCG(9, 10))
	// labels from a fixed random linear map: a separable problem
	truth := make([]float32, in*classes)
	for i := range truth {
		truth[i] = 2*rng.Float32() - 1
	}
	xs := make([]float32, in*batch*nBatches)
	ys := make([]float32, classes*batch*nBatches)
	for j := range batch * nBatches {
		for k := range in {
			xs[j*in+k] = 2*rng.Float32() - 1
		}
		best, bestV := 0, float32(math.Inf(-1))
		for c := range classes {
			s := float32(0)
			for k := range in {
				s += truth[c*in+k] * xs[j*in+k]
			}
			if s > bestV {
				best, bestV = c, s
			}
		}
		ys[j*classes+best] = 1
	}

	w := ctx.SetParam(ctx.NewTensor2D(TypeF32, in, classes).Zero())
	b := ctx.SetParam(ctx.NewTensor1D(TypeF32, classes).Zero())
	x := ctx.NewTensor2D(TypeF32, in, batch)
	y := ctx.NewTensor2D(TypeF32, classes, batch)
	loss := bwLinearLoss(ctx, w, b, x, y)
	p := DefaultAdamWParams()
	p.Alpha = 0.05
	tr, err := NewTrainer(ctx, loss, TrainerOptions{AdamW: p, Threads: 1})
	require.NoError(t, err)
	defer tr.Close()

	load := func(i int) error {
		if err := x.SetFloat32s(xs[i*in*batch : (i+1)*in*batch]); err != nil {
			return err
		}
		return y.SetFloat32s(ys[i*classes*batch : (i+1)*classes*batch])
	}
	require.NoError(t, load(0))
	l0, err := tr.Eval()
	require.NoError(t, err)
	require.InDelta(t, math.Log(classes), l0, 1e-5, "zero weights: uniform prediction")

	var losses []float64
	require.NoError(t, tr.Fit(20, nBatches, load, func(s EpochStats) error {
		require.Equal(t, len(losses)+1, s.Epoch)
		require.Equal(t, nBatches, s.Batches)
		losses = append(losses, s.Loss)
		return nil
	}))
	require.Len(t, losses, 20)
	require.Less(t, losses[19], 0.5*losses[0], "losses %v", losses)
	require.Equal(t, 20*nBatches, tr.Opt.Iter())
	require.NoError(t, load(0))
	l1, err := tr.Eval()
	require.NoError(t, err)
	require.Less(t, float64(l1), 0.5*float64(l0))

	// an error from the callback stops training
	stop := errors.New("stop")
	require.ErrorIs(t, tr.Fit(5, nBatches, load, func(EpochStats) error { return stop }), stop)
	require.Equal(t, 21*nBatches, tr.Opt.Iter())
}

// Grad and GradAcc after the context holding them was closed.
func TestGradAfterCloseIsErrClosed(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		setup := func() (static, compute *Context, g *Graph, w, loss *Tensor) {
			static, _ = NewContext(ContextOptions{MemSize: 1 << 20})
			compute, _ = NewContext(ContextOptions{MemSize: 1 << 20})
			ctx := newCtx(t, 1<<20)
			w = ctx.SetParam(ctx.NewTensor1D(TypeF32, 4).Fill(3))
			loss = ctx.Sum(ctx.Sqr(w)).SetLoss()
			g = ctx.NewGraphCustom(DefaultGraphSize, true).BuildForward(loss)
			require.NoError(t, g.BuildBackward(static, compute, true))
			require.NoError(t, g.Compute(2))
			require.Same(t, compute, g.Grad(w).Context())
			require.Same(t, static, g.GradAcc(loss).Context())
			return
		}
		static, compute, g, w, loss := setup()
		require.NoError(t, compute.Close())
		require.ErrorIs(t, panicValue(func() { g.Grad(w) }).(error), ErrClosed)
		require.ErrorIs(t, panicValue(func() { g.GradAcc(loss) }).(error), ErrClosed)
		require.NoError(t, static.Close())

		static, compute, g, w, loss = setup()
		gr := g.Grad(w)
		require.NoError(t, static.Close())
		require.ErrorIs(t, panicValue(func() { g.GradAcc(loss) }).(error), ErrClosed)
		require.ErrorIs(t, panicValue(func() { gr.Float32s() }).(error), ErrClosed, "compute depends on the closed static context")
		require.NoError(t, compute.Close())
	})
}

// The first computation after BuildBackward gives well-defined
// gradients without Reset, even in an arena full of leftovers.
func TestGradientsWithoutResetAreDefined(t *testing.T) {
	for _, accumulate := range []bool{false, true} {
		buf := make([]byte, 1<<20)
		for i := 0; i+4 <= len(buf); i += 4 {
			binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(123.5))
		}
		ctx, err := NewContext(ContextOptions{Buffer: buf})
		require.NoError(t, err)
		w := ctx.SetParam(ctx.NewTensor1D(TypeF32, 4))
		require.NoError(t, w.SetFloat32s([]float32{1, 2, 3, 4}))
		loss := ctx.Sum(ctx.Sqr(w)).SetLoss()
		g := ctx.NewGraphCustom(DefaultGraphSize, true).BuildForward(loss)
		require.NoError(t, g.BuildBackward(ctx, ctx, accumulate))
		if accumulate {
			acc, err := g.GradAcc(w).Float32s()
			require.NoError(t, err)
			require.Equal(t, []float32{0, 0, 0, 0}, acc, "accumulators start at 0")
		}
		require.NoError(t, g.Compute(2))
		gr, err := g.Grad(w).Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{2, 4, 6, 8}, gr, "accumulate=%v", accumulate)
		require.NoError(t, ctx.Close())
	}
}

func TestTrainerOptionsDefaultsPerField(t *testing.T) {
	ctx := newCtx(t, 16<<20)
	w := ctx.SetParam(ctx.NewTensor1D(TypeF32, 4).Fill(1))
	loss := ctx.Sum(ctx.Sqr(w)).SetLoss()
	tr, err := NewTrainer(ctx, loss, TrainerOptions{AdamW: AdamWParams{Alpha: 0.05}, Threads: 1})
	require.NoError(t, err)
	defer tr.Close()
	want := DefaultAdamWParams()
	want.Alpha = 0.05
	require.Equal(t, want, tr.Opt.Params)
	_, err = tr.Step()
	require.NoError(t, err)
}
