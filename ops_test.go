package ggml

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func opsFill(t *testing.T, x *Tensor, f func(i int) float32) *Tensor {
	t.Helper()
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = f(i)
	}
	require.NoError(t, x.SetFloat32s(v))
	return x
}

func opsCompute(t *testing.T, ctx *Context, out *Tensor, threads int) []float32 {
	t.Helper()
	g := ctx.NewGraph()
	g.BuildForward(out)
	require.NoError(t, g.Compute(threads))
	v, err := out.Float32s()
	require.NoError(t, err)
	return v
}

func TestOpShapes(t *testing.T) {
	ctx := newCtx(t, 64<<20)
	f32 := func(ne ...int) *Tensor { return ctx.NewTensor(TypeF32, ne...) }
	i32 := func(ne ...int) *Tensor { return ctx.NewTensor(TypeI32, ne...) }
	x := f32(8, 6, 4, 2)
	pos := i32(4)
	type shapeCase struct {
		name  string
		f     func() *Tensor
		shape []int
		typ   Type
	}
	cases := []shapeCase{
		{"AddCast", func() *Tensor { return ctx.AddCast(ctx.NewTensor(TypeF16, 8, 6, 4, 2), f32(8), TypeF32) }, []int{8, 6, 4, 2}, TypeF32},
		{"Add1", func() *Tensor { return ctx.Add1(x, f32(1)) }, []int{8, 6, 4, 2}, TypeF32},
		{"Sum", func() *Tensor { return ctx.Sum(x) }, []int{1}, TypeF32},
		{"SumRows", func() *Tensor { return ctx.SumRows(x) }, []int{1, 6, 4, 2}, TypeF32},
		{"Mean", func() *Tensor { return ctx.Mean(x) }, []int{1, 6, 4, 2}, TypeF32},
		{"Argmax", func() *Tensor { return ctx.Argmax(f32(5, 3)) }, []int{3}, TypeI32},
		{"CountEqual", func() *Tensor { return ctx.CountEqual(i32(7), i32(7)) }, []int{1}, TypeI64},
		{"Repeat", func() *Tensor { return ctx.Repeat(f32(8, 1), x) }, []int{8, 6, 4, 2}, TypeF32},
		{"RepeatBack", func() *Tensor { return ctx.RepeatBack(x, f32(8, 3)) }, []int{8, 3}, TypeF32},
		{"Concat", func() *Tensor { return ctx.Concat(f32(8, 6), f32(8, 2), 1) }, []int{8, 8}, TypeF32},
		{"MulMat", func() *Tensor { return ctx.MulMat(f32(16, 5), f32(16, 3)) }, []int{5, 3}, TypeF32},
		{"MulMat bcast", func() *Tensor { return ctx.MulMat(f32(16, 5, 2), f32(16, 3, 4)) }, []int{5, 3, 4}, TypeF32},
		{"MulMatID", func() *Tensor { return ctx.MulMatID(f32(16, 5, 4), f32(16, 2, 3), i32(2, 3)) }, []int{5, 2, 3}, TypeF32},
		{"OutProd", func() *Tensor { return ctx.OutProd(f32(6, 4), f32(5, 4)) }, []int{6, 5}, TypeF32},
		{"Cont2D", func() *Tensor { return ctx.Cont2D(ctx.Transpose(f32(6, 4)), 2, 12) }, []int{2, 12}, TypeF32},
		{"Cast", func() *Tensor { return ctx.Cast(x, TypeF16) }, []int{8, 6, 4, 2}, TypeF16},
		{"GetRows", func() *Tensor { return ctx.GetRows(f32(8, 10), i32(3)) }, []int{8, 3}, TypeF32},
		{"GetRowsBack", func() *Tensor { return ctx.GetRowsBack(f32(8, 3), i32(3), f32(8, 10)) }, []int{8, 10}, TypeF32},
		{"Diag", func() *Tensor { return ctx.Diag(f32(5)) }, []int{5, 5}, TypeF32},
		{"SoftMaxExt", func() *Tensor { return ctx.SoftMaxExt(f32(8, 6, 2), f32(8, 6), 0.5, 0) }, []int{8, 6, 2}, TypeF32},
		{"Rope", func() *Tensor { return ctx.Rope(f32(8, 2, 4), pos, 8, RopeTypeNeox) }, []int{8, 2, 4}, TypeF32},
		{"RopeExt", func() *Tensor { return ctx.RopeExt(f32(8, 2, 4), pos, f32(4), DefaultRopeParams(8, 0)) }, []int{8, 2, 4}, TypeF32},
		{"Im2Col 2D", func() *Tensor {
			return ctx.Im2Col(f32(3, 3, 2, 4), f32(9, 8, 2, 1), Conv2DParams{1, 1, 1, 1, 1, 1}, true, TypeF32)
		}, []int{18, 9, 8}, TypeF32},
		{"Im2Col 1D", func() *Tensor {
			return ctx.Im2Col(f32(3, 4, 6), f32(20, 4, 2), Conv2DParams{S0: 2, D0: 1}, false, TypeF16)
		}, []int{12, 9, 2}, TypeF16},
		{"Conv1D", func() *Tensor { return ctx.Conv1D(f32(3, 4, 5), f32(12, 4), 1, 1, 1) }, []int{12, 5}, TypeF32},
		{"Conv2D", func() *Tensor { return ctx.Conv2D(f32(3, 3, 2, 4), f32(8, 7, 2), Conv2DParams{1, 1, 1, 1, 1, 1}) }, []int{8, 7, 4}, TypeF32},
		{"Conv2DSkP0", func() *Tensor { return ctx.Conv2DSkP0(f32(2, 2, 3, 5), f32(8, 6, 3)) }, []int{4, 3, 5}, TypeF32},
		{"ConvTranspose2DP0", func() *Tensor { return ctx.ConvTranspose2DP0(f32(3, 3, 4, 2), f32(5, 5, 2), 2) }, []int{11, 11, 4}, TypeF32},
		{"ConvTranspose1D", func() *Tensor { return ctx.ConvTranspose1D(f32(3, 4, 2), f32(7, 2), 2, 0, 1) }, []int{15, 4}, TypeF32},
		{"Pool1D", func() *Tensor { return ctx.Pool1D(f32(15, 4), PoolAvg, 3, 3, 0) }, []int{5, 4}, TypeF32},
		{"Pool2D", func() *Tensor { return ctx.Pool2D(f32(8, 6, 3), PoolMax, Pool2DParams{2, 2, 2, 2, 0, 0}) }, []int{4, 3, 3}, TypeF32},
		{"Upscale", func() *Tensor { return ctx.Upscale(f32(4, 3, 2), 2) }, []int{8, 6, 2}, TypeF32},
		{"UpscaleExt", func() *Tensor { return ctx.UpscaleExt(f32(4, 3), 9, 5, 2, 1) }, []int{9, 5, 2}, TypeF32},
		{"Pad", func() *Tensor { return ctx.Pad(f32(5, 4, 2), 2, 1, 0, 1) }, []int{7, 5, 2, 2}, TypeF32},
		{"Arange", func() *Tensor { return ctx.Arange(-2, 3, 0.5) }, []int{10}, TypeF32},
		{"TimestepEmbedding", func() *Tensor { return ctx.TimestepEmbedding(f32(5), 16, 10000) }, []int{16, 5}, TypeF32},
		{"Argsort", func() *Tensor { return ctx.Argsort(f32(7, 3), SortDesc) }, []int{7, 3}, TypeI32},
		{"TopK", func() *Tensor { return ctx.TopK(f32(7, 3), 2) }, []int{2, 3}, TypeI32},
		{"FlashAttnExt", func() *Tensor {
			return ctx.FlashAttnExt(f32(64, 5, 4), ctx.NewTensor(TypeF16, 64, 32, 2), ctx.NewTensor(TypeF16, 64, 32, 2),
				ctx.NewTensor(TypeF16, 32, KQMaskPad), 0.125, 0, 0)
		}, []int{64, 4, 5}, TypeF32},
		{"SSMConv", func() *Tensor { return ctx.SSMConv(f32(7, 6, 2), f32(4, 6)) }, []int{6, 4, 2}, TypeF32},
		{"WinPart", func() *Tensor { return ctx.WinPart(f32(4, 7, 5), 3) }, []int{4, 3, 3, 6}, TypeF32},
		{"WinUnpart", func() *Tensor { return ctx.WinUnpart(f32(4, 3, 3, 6), 7, 5, 3) }, []int{4, 7, 5}, TypeF32},
		{"GetRelPos", func() *Tensor { return ctx.GetRelPos(ctx.NewTensor(TypeF16, 6, 7), 4, 4) }, []int{6, 4, 4}, TypeF16},
		{"RWKVWKV6", func() *Tensor {
			return ctx.RWKVWKV6(f32(4, 1, 2, 3), f32(1, 4, 2, 3), f32(1, 4, 2, 3), f32(4, 2), f32(1, 4, 2, 3), f32(32, 1))
		}, []int{8, 7}, TypeF32},
		{"CrossEntropyLoss", func() *Tensor { return ctx.CrossEntropyLoss(f32(10, 6), f32(10, 6)) }, []int{1}, TypeF32},
		{"CrossEntropyLossBack", func() *Tensor { return ctx.CrossEntropyLossBack(f32(10, 6), f32(10, 6), f32(1)) }, []int{10, 6}, TypeF32},
		{"Unary", func() *Tensor { return ctx.Unary(x, UnaryGelu) }, []int{8, 6, 4, 2}, TypeF32},
		{"LeakyRelu", func() *Tensor { return ctx.LeakyRelu(x, 0.1, false) }, []int{8, 6, 4, 2}, TypeF32},
	}
	for _, c := range cases {
		var r *Tensor
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: %v", c.name, p)
				}
			}()
			r = c.f()
		}()
		if r != nil {
			require.Equal(t, c.shape, r.Shape(), c.name)
			require.Equal(t, c.typ, r.Type(), c.name)
		}
	}
	// inplace variants are views of their operand
	in := ctx.AddInplace(x, x)
	require.Equal(t, x.t, in.ViewSrc().t)
	require.Equal(t, OpAdd, in.Op())
	require.Equal(t, OpUnary, ctx.ReluInplace(x).Op())
	require.Equal(t, "RELU", ctx.Relu(x).OpDesc())
}

func TestOpValues(t *testing.T) {
	ctx := newCtx(t, 16<<20)
	a := opsFill(t, ctx.NewTensor2D(TypeF32, 3, 2), func(i int) float32 { return float32(i + 1) }) // rows [1 2 3] [4 5 6]
	b := opsFill(t, ctx.NewTensor2D(TypeF32, 3, 2), func(i int) float32 { return float32(i%3) - 1 })
	require.Equal(t, []float32{14, 32}, opsCompute(t, ctx, ctx.Cont(ctx.Transpose(ctx.MulMat(ctx.Cont(a), ctx.Concat(a, ctx.Neg(a), 1)))), 2)[:2])
	require.Equal(t, []float32{0, 2, 4, 3, 5, 7}, opsCompute(t, ctx, ctx.Add(a, b), 1))
	require.Equal(t, []float32{6, 15}, opsCompute(t, ctx, ctx.SumRows(a), 2))
	require.Equal(t, []float32{21}, opsCompute(t, ctx, ctx.Sum(a), 2))
	require.Equal(t, []float32{1, 2, 2.5, 2.5, 2.5, 2.5}, opsCompute(t, ctx, ctx.Clamp(ctx.Dup(a), 0, 2.5), 2))
	require.Equal(t, []float32{1, 2, 2}, opsCompute(t, ctx, ctx.Set1D(ctx.Scale(a, 0.5), ctx.View1D(a, 2, 0), 4), 1)[1:4])
	sm := opsCompute(t, ctx, ctx.SoftMax(a), 2)
	require.InDelta(t, 1, sm[0]+sm[1]+sm[2], 1e-6)
	require.Equal(t, []float32{1, 2, 3, 0, 0, 4, 5, 6, 0, 0}, opsCompute(t, ctx, ctx.Pad(a, 2, 0, 0, 0), 2))
	ar := opsCompute(t, ctx, ctx.Arange(0, 2, 0.5), 1)
	require.Equal(t, []float32{0, 0.5, 1, 1.5}, ar)

	// Rope equals RopeExt with the default parameters and no freq factors
	x := opsFill(t, ctx.NewTensor3D(TypeF32, 8, 2, 3), func(i int) float32 { return float32(math.Sin(float64(i))) })
	pos := ctx.NewTensor1D(TypeI32, 3)
	require.NoError(t, pos.SetInt32s([]int32{0, 5, 11}))
	r1 := opsCompute(t, ctx, ctx.Rope(x, pos, 8, RopeTypeNeox), 2)
	r2 := opsCompute(t, ctx, ctx.RopeExt(x, pos, nil, DefaultRopeParams(8, RopeTypeNeox)), 2)
	require.Equal(t, r1, r2)
	xv, _ := x.Float32s()
	require.Equal(t, xv[:16], r1[:16], "position 0 is the identity")
	// RopeBack undoes RopeExt
	p := DefaultRopeParams(8, 0)
	back := opsCompute(t, ctx, ctx.RopeBack(ctx.RopeExt(x, pos, nil, p), pos, nil, p), 2)
	for i := range xv {
		require.InDelta(t, xv[i], back[i], 1e-5)
	}
	corr := RopeYarnCorrDims(128, 4096, 10000, 32, 1)
	require.True(t, corr[0] >= 0 && corr[0] <= corr[1] && corr[1] <= 127, "%v", corr)
}

func TestOpPrec(t *testing.T) {
	ctx := newCtx(t, 16<<20)
	mm := ctx.MulMat(ctx.NewTensor2D(TypeF32, 4, 2), ctx.NewTensor2D(TypeF32, 4, 3))
	require.Same(t, mm, mm.SetPrec(PrecF32))
	fa := ctx.FlashAttnExt(ctx.NewTensor3D(TypeF32, 64, 1, 2), ctx.NewTensor3D(TypeF16, 64, 4, 2), ctx.NewTensor3D(TypeF16, 64, 4, 2), nil, 1, 0, 0)
	require.Equal(t, PrecDefault, fa.Prec())
	fa.SetPrec(PrecF32)
	require.Equal(t, PrecF32, fa.Prec())
	requireOpPanic(t, "SetPrec", func() { ctx.Add(mm, mm).SetPrec(PrecF32) })
	requireOpPanic(t, "Prec", func() { mm.Prec() })
}

func TestOpInvalidArguments(t *testing.T) {
	ctx := newCtx(t, 16<<20)
	a := ctx.NewTensor2D(TypeF32, 4, 3)
	requireOpPanic(t, "MulMat", func() { ctx.MulMat(a, ctx.NewTensor2D(TypeF32, 5, 3)) })
	requireOpPanic(t, "Add", func() { ctx.Add(a, ctx.NewTensor2D(TypeF32, 3, 3)) })
	requireOpPanic(t, "Add", func() { ctx.Add(a, nil) })
	requireOpPanic(t, "View1D", func() { ctx.View1D(a, 10, 16) })
	requireOpPanic(t, "Set1D", func() { ctx.Set1D(a, a, -4) })
	requireOpPanic(t, "Concat", func() { ctx.Concat(a, a, 4) })
	requireOpPanic(t, "GetRows", func() { ctx.GetRows(a, a) })
	requireOpPanic(t, "Cont2D", func() { ctx.Cont2D(a, 5, 5) })
	requireOpPanic(t, "FlashAttnBack", func() { ctx.FlashAttnBack(a, a, a, a, false) })
	requireOpPanic(t, "Conv2D", func() {
		ctx.Conv2D(ctx.NewTensor4D(TypeF32, 3, 3, 2, 4), ctx.NewTensor3D(TypeF32, 8, 8, 3), Conv2DParams{1, 1, 0, 0, 1, 1})
	})
	requireOpPanic(t, "MapCustom1", func() { ctx.MapCustom1(a, func(_, _ *Tensor, _, _ int) {}, 0) })
	requireOpPanic(t, "MapCustom1", func() { ctx.MapCustom1(a, nil, 1) })
	requireOpPanic(t, "MapUnaryF32", func() { ctx.MapUnaryF32(a, nil) })
	requireOpPanic(t, "RopeExt", func() { ctx.RopeExt(a, nil, nil, DefaultRopeParams(4, 0)) })
	// the context is still usable after recovered panics
	require.Equal(t, []int{3, 3}, ctx.MulMat(a, a).Shape())
}

func TestMapCustom(t *testing.T) {
	ctx := newCtx(t, 16<<20)
	a := opsFill(t, ctx.NewTensor2D(TypeF32, 5, 8), func(i int) float32 { return float32(i) })
	b := opsFill(t, ctx.NewTensor2D(TypeF32, 5, 8), func(i int) float32 { return 1 })
	var mu sync.Mutex
	seen := map[[2]int]bool{}
	double := func(dst, src *Tensor, ith, nth int) {
		mu.Lock()
		seen[[2]int{ith, nth}] = true
		mu.Unlock()
		for r := ith; r < src.Ne()[1]; r += nth {
			for c := range src.Ne()[0] {
				dst.SetF32(2*src.F32(c, r), c, r)
			}
		}
	}
	out := ctx.MapCustom1(a, double, NTasksMax)
	require.Equal(t, OpMapCustom1, out.Op())
	got := opsCompute(t, ctx, out, 4)
	for i, v := range got {
		require.Equal(t, float32(2*i), v)
	}
	require.Len(t, seen, 4)
	for k := range seen {
		require.Equal(t, 4, k[1])
	}

	// nTasks caps the number of threads
	clear(seen)
	opsCompute(t, ctx, ctx.MapCustom1(a, double, 2), 4)
	require.Equal(t, map[[2]int]bool{{0, 2}: true, {1, 2}: true}, seen)

	add := func(dst, x, y *Tensor, ith, nth int) {
		if ith != 0 {
			return
		}
		xv, _ := x.Float32s()
		yv, _ := y.Float32s()
		for i := range xv {
			xv[i] += yv[i]
		}
		if err := dst.SetFloat32s(xv); err != nil {
			panic(err)
		}
	}
	got = opsCompute(t, ctx, ctx.MapCustom2(a, b, add, NTasksMax), 3)
	require.Equal(t, float32(1), got[0])
	require.Equal(t, float32(40), got[39])

	sum3 := func(dst, x, y, z *Tensor, ith, nth int) {
		if ith == 0 {
			xv, _ := x.Float32s()
			yv, _ := y.Float32s()
			zv, _ := z.Float32s()
			for i := range xv {
				xv[i] += yv[i] + zv[i]
			}
			_ = dst.SetFloat32s(xv)
		}
	}
	got = opsCompute(t, ctx, ctx.MapCustom3(a, b, b, sum3, 1), 3)
	require.Equal(t, float32(2), got[0])

	// inplace: the result is a view of a
	c := opsFill(t, ctx.NewTensor1D(TypeF32, 4), func(i int) float32 { return float32(i) })
	ip := ctx.MapCustom1Inplace(c, double, NTasksMax)
	require.Equal(t, c.t, ip.ViewSrc().t)
	opsCompute(t, ctx, ip, 2)
	cv, _ := c.Float32s()
	require.Equal(t, []float32{0, 2, 4, 6}, cv)

	// deprecated forms
	f32 := func(dst, x, y, z *Tensor) {
		xv, _ := x.Float32s()
		for i := range xv {
			xv[i] = -xv[i]
			if y != nil {
				yv, _ := y.Float32s()
				xv[i] += yv[i]
			}
			if z != nil {
				panic("z must be nil for MapCustom2F32")
			}
		}
		_ = dst.SetFloat32s(xv)
	}
	got = opsCompute(t, ctx, ctx.MapCustom1F32(a, f32), 3)
	require.Equal(t, float32(-39), got[39])
	got = opsCompute(t, ctx, ctx.MapCustom2F32(a, b, f32), 3)
	require.Equal(t, float32(-38), got[39])
	require.Equal(t, OpMapCustom2F32, ctx.MapCustom2InplaceF32(a, b, f32).Op())
	require.Equal(t, OpMapCustom3F32, ctx.MapCustom3F32(a, b, b, func(dst, x, y, z *Tensor) {}).Op())
	got = opsCompute(t, ctx, ctx.MapUnaryF32(a, testNegRowF32), 2)
	require.Equal(t, float32(-7), got[7])
	got = opsCompute(t, ctx, ctx.MapBinaryF32(a, b, testSubRowF32), 2)
	require.Equal(t, float32(6), got[7])
}

func TestMapCustomPanicIsAnError(t *testing.T) {
	ctx := newCtx(t, 16<<20)
	a := opsFill(t, ctx.NewTensor2D(TypeF32, 4, 4), func(i int) float32 { return float32(i) })
	boom := errors.New("boom")
	fail := true
	out := ctx.MapCustom1(a, func(dst, src *Tensor, ith, nth int) {
		if fail && ith == nth-1 {
			panic(boom)
		}
		for r := ith; r < 4; r += nth {
			for c := range 4 {
				dst.SetF32(src.F32(c, r), c, r)
			}
		}
	}, NTasksMax).SetName("exploding")
	g := ctx.NewGraph()
	g.BuildForward(ctx.Scale(out, 2))
	err := g.Compute(3)
	if err == nil {
		// The C computation cannot report the panic by itself: graph.go must
		// return g.customOpError() after computing (see ops_custom.go).
		err = g.customOpError()
		require.Error(t, err)
		t.Fatalf("Graph.Compute returned nil after a callback panic; graph.go does not call customOpError yet (recorded: %v)", err)
	}
	var pe *CustomOpPanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "MapCustom1", pe.Op)
	require.Equal(t, "exploding", pe.Node)
	require.ErrorIs(t, err, boom)
	// the error is reported once; a later computation that does not panic succeeds
	fail = false
	require.NoError(t, g.Compute(3))
	v, _ := g.Node(-1).Float32s()
	require.Equal(t, float32(30), v[15])
}

func TestCrossContextOperands(t *testing.T) {
	c1 := newCtx(t, 1<<20)
	c2 := newCtx(t, 1<<20)
	c3 := newCtx(t, 1<<20)
	a := opsFill(t, c1.NewTensor1D(TypeF32, 4), func(i int) float32 { return float32(i) })
	b := opsFill(t, c2.NewTensor1D(TypeF32, 4), func(i int) float32 { return 10 })
	sum := c3.Add(a, b)
	require.Same(t, c3, sum.Context())
	require.Contains(t, c3.depList(), c1)
	require.Contains(t, c3.depList(), c2)
	require.Equal(t, []float32{10, 11, 12, 13}, opsCompute(t, c3, c3.Mul(sum, c3.MapCustom1(b, func(dst, src *Tensor, ith, nth int) {
		if ith == 0 {
			v, _ := src.Float32s()
			for i := range v {
				v[i] /= 10
			}
			_ = dst.SetFloat32s(v)
		}
	}, 1)), 2))
	// a closed operand context is detected, not dereferenced
	g := c3.NewGraph()
	g.BuildForward(sum)
	require.NoError(t, c1.Close())
	require.Panics(t, func() { _ = g.Compute(1) })
	require.Panics(t, func() { c3.Add(a, b) })
}

// argmaxRef is the reference's running max/compare loop: ties go to the
// last index, and a NaN restarts the search.
func argmaxRef(row []float32) int32 {
	m := float32(math.Inf(-1))
	idx := int32(0)
	for i, v := range row {
		if !(m > v) {
			m = v
		}
		if m == v {
			idx = int32(i)
		}
	}
	return idx
}

// Argmax answers as the reference's loop does for every row, whichever
// path computes it: rows of every length around the vector widths, ties,
// signed zeros, infinities and NaNs anywhere.
func TestArgmaxMatchesTheRunningLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, 1}
	for _, n := range []int{1, 2, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 100, 257, 1000} {
		const rows = 24
		ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		x := ctx.NewTensor2D(TypeF32, n, rows)
		v := make([]float32, n*rows)
		for row := range rows {
			seg := v[row*n : (row+1)*n]
			for i := range seg {
				seg[i] = float32(r.IntN(5)) // many ties
			}
			switch row % 6 {
			case 1: // a few specials anywhere
				for range 1 + r.IntN(3) {
					seg[r.IntN(n)] = special[r.IntN(len(special))]
				}
			case 2: // a NaN last, or first
				seg[n-1] = float32(math.NaN())
				if n > 1 && r.IntN(2) == 0 {
					seg[0] = float32(math.NaN())
				}
			case 3: // all -inf
				for i := range seg {
					seg[i] = float32(math.Inf(-1))
				}
			case 4: // signed zeros only
				for i := range seg {
					seg[i] = special[r.IntN(2)]
				}
			case 5: // random floats, the maximum in the tail
				for i := range seg {
					seg[i] = float32(r.NormFloat64())
				}
				seg[n-1-r.IntN(min(n, 7))] = 10
			}
		}
		require.NoError(t, x.SetFloat32s(v))
		y := ctx.Argmax(x)
		require.NoError(t, ctx.NewGraph().BuildForward(y).Compute(2))
		got, err := y.Int32s()
		require.NoError(t, err)
		for row := range rows {
			require.Equal(t, argmaxRef(v[row*n:(row+1)*n]), got[row], "n=%d row %d: %v", n, row, v[row*n:(row+1)*n])
		}
		ctx.Close()
	}
}

// Indices out of range fail the computation with an error naming
// the op and the node.
func TestIndexOutOfRangeIsAnError(t *testing.T) {
	for _, threads := range []int{1, 4} {
		ctx := newCtx(t, 4<<20)
		a := ctx.NewTensor2D(TypeF32, 8, 5).Fill(1)
		idx := ctx.NewTensor1D(TypeI32, 3)
		require.NoError(t, idx.SetInt32s([]int32{0, 7, 2}))
		rows := ctx.GetRows(a, idx).SetName("rows")
		after := ctx.Scale(rows, 2)
		g := ctx.NewGraph().BuildForward(after)
		err := g.Compute(threads)
		require.ErrorContains(t, err, "GET_ROWS (node rows)")
		require.ErrorContains(t, err, "row index 7")
		require.NoError(t, idx.SetInt32s([]int32{0, -1, 2}))
		require.ErrorContains(t, g.Compute(threads), "row index -1")
		require.NoError(t, idx.SetInt32s([]int32{0, 4, 2}))
		require.NoError(t, g.Compute(threads))
		v, err := after.Float32s()
		require.NoError(t, err)
		require.Equal(t, float32(2), v[23])

		grad := ctx.NewTensor2D(TypeF32, 8, 3).Fill(1)
		back := ctx.GetRowsBack(grad, idx, a).SetName("back")
		require.NoError(t, idx.SetInt32s([]int32{0, 5, 2}))
		require.ErrorContains(t, ctx.NewGraph().BuildForward(back).Compute(threads), "GET_ROWS_BACK (node back)")

		// mul_mat_id: 4 experts of [16 -> 8], 2 used per token, 3 tokens
		as := ctx.NewTensor3D(TypeF32, 16, 8, 4).Fill(0.5)
		b := ctx.NewTensor3D(TypeF32, 16, 2, 3).Fill(1)
		ids := ctx.NewTensor2D(TypeI32, 2, 3)
		require.NoError(t, ids.SetInt32s([]int32{0, 1, 2, 4, 3, 0}))
		mm := ctx.MulMatID(as, b, ids).SetName("moe")
		gm := ctx.NewGraph().BuildForward(mm)
		require.ErrorContains(t, gm.Compute(threads), "MUL_MAT_ID (node moe)")
		require.NoError(t, ids.SetInt32s([]int32{0, 1, 2, 3, 3, 0}))
		require.NoError(t, gm.Compute(threads))
		require.Equal(t, float32(8), mm.F32(7, 1, 2))
	}
}

// Closing contexts and pools from inside a custom-op callback.
func TestCloseInCustomOpCallback(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		for _, threads := range []int{1, 4} {
			for _, which := range []string{"graph context", "operand context", "pool"} {
				ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
				require.NoError(t, err)
				in, err := NewContext(ContextOptions{MemSize: 1 << 20})
				require.NoError(t, err)
				tp, err := NewThreadpool(DefaultThreadpoolParams(threads))
				require.NoError(t, err)
				x := in.NewTensor1D(TypeF32, 4096).Fill(1)
				var once sync.Once
				y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {
					once.Do(func() {
						switch which {
						case "graph context":
							ctx.Close()
						case "operand context":
							in.Close()
						case "pool":
							tp.Close()
						}
					})
					v, err := a.Float32s()
					if err == nil {
						err = dst.SetFloat32s(v)
					}
					if err != nil {
						panic(err)
					}
				}, NTasksMax)
				g := ctx.NewGraph().BuildForward(ctx.Scale(ctx.Add(y, x), 2))
				err = g.ComputeWith(tp)
				if which == "pool" {
					require.NoError(t, err) // the pool stops when the computation ends
					require.ErrorIs(t, panicValue(func() { g.ComputeWith(tp) }).(error), ErrClosed)
				} else {
					require.ErrorIs(t, err, ErrClosed, "%s, %d threads", which, threads)
					require.ErrorIs(t, panicValue(func() { g.Compute(1) }).(error), ErrClosed)
				}
				ctx.Close()
				in.Close()
				tp.Close()
				runtime.GC()
			}
		}
	})
}

// Runtime.Goexit in a callback (t.FailNow does it) makes Compute
// return an error, instead of hanging or a fatal error.
func TestGoexitInCustomOpCallbackIsAnError(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		for _, threads := range []int{1, 4} {
			for _, tasks := range []int{1, NTasksMax} {
				ctx := newCtx(t, 1<<20)
				x := ctx.NewTensor1D(TypeF32, 64).Fill(1)
				y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) { runtime.Goexit() }, tasks)
				err := ctx.NewGraph().BuildForward(y).Compute(threads)
				var pe *CustomOpPanicError
				require.ErrorAs(t, err, &pe, "%d threads, %d tasks", threads, tasks)
				require.ErrorContains(t, err, "Goexit")
				// and the next computation works
				z := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {}, tasks)
				require.NoError(t, ctx.NewGraph().BuildForward(z).Compute(threads))
			}
		}
	})
}

// A computation started from inside a callback returns ErrInCallback instead
// of waiting for itself.
func TestComputeInCallbackIsErrInCallback(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		ctx := newCtx(t, 1<<20)
		tp, err := NewThreadpool(DefaultThreadpoolParams(2))
		require.NoError(t, err)
		defer tp.Close()
		x := ctx.NewTensor1D(TypeF32, 8).Fill(1)
		var g *Graph
		errs := make(chan error, 16)
		y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {
			errs <- g.Compute(1)
			errs <- g.ComputeWith(tp)
			if ith == 0 { // a context is not for concurrent use: one task builds in it
				errs <- ctx.NewGraph().BuildForward(ctx.Scale(x, 2)).Compute(1)
			}
			v := panicValue(func() { g.Reset() })
			errs <- v.(error)
		}, 2)
		g = ctx.NewGraphCustom(DefaultGraphSize, false).BuildForward(y)
		require.NoError(t, g.ComputeWith(tp))
		close(errs)
		inCallback, opErrors := 0, 0 // the two tasks' reports interleave
		for err := range errs {
			var oe *OpError
			switch {
			case errors.Is(err, ErrInCallback):
				inCallback++
			case errors.As(err, &oe):
				opErrors++
			default:
				t.Errorf("unexpected %v", err)
			}
		}
		require.Equal(t, 5, inCallback)
		require.Equal(t, 2, opErrors)
	})
}

// Ints that do not fit a C int are refused, not truncated into another
// (valid-looking) value.
func TestIntArgumentsNotTruncated(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	a := ctx.NewTensor2D(TypeF32, 4, 4).Fill(1)
	g := ctx.NewGraph().BuildForward(ctx.Scale(a, 2))
	requireOpPanic(t, "Node", func() { g.Node(1 << 32) })
	requireOpPanic(t, "Concat", func() { ctx.Concat(a, a, 1<<32) })
	requireOpPanic(t, "Permute", func() { ctx.Permute(a, 1<<32, 1, 2, 3) })
	requireOpPanic(t, "TopK", func() { ctx.TopK(a, 1<<32+1) })
	requireOpPanic(t, "MapCustom1", func() { ctx.MapCustom1(a, func(dst, a *Tensor, ith, nth int) {}, 1<<32+1) })
}
