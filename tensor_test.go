package ggml

// Contexts and tensors: sizes that overflow or do not fit are refused, views
// stay inside their source, elements of every plain type can be read and set.

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Views must lie inside their source.
func TestViewsLieInsideTheirSource(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		ctx := newCtx(t, 1<<20)
		a := ctx.NewTensor1D(TypeF32, 16).Fill(1)
		next := ctx.NewTensor1D(TypeF32, 16).Fill(2)
		requireOpPanic(t, "View1D", func() { ctx.View1D(a, 4, -16) })
		requireOpPanic(t, "View1D", func() { ctx.View1D(a, 4, 1<<62) })
		requireOpPanic(t, "View1D", func() { ctx.View1D(a, 17, 0) })
		requireOpPanic(t, "View1D", func() { ctx.View1D(a, 4, 52) })
		requireOpPanic(t, "View2D", func() { ctx.View2D(a, 1, 2, 1<<40, 0) })
		requireOpPanic(t, "View2D", func() { ctx.View2D(a, 4, 2, 64, 0) }) // second row runs into next
		requireOpPanic(t, "View2D", func() { ctx.View2D(a, 4, 2, -16, 0) })
		requireOpPanic(t, "View2D", func() { ctx.View2D(a, 2, 1<<62, 8, 0) })
		requireOpPanic(t, "View3D", func() { ctx.View3D(a, 2, 2, 2, 8, 1<<62, 0) })
		requireOpPanic(t, "View3D", func() { ctx.View3D(a, 2, 2, 3, 8, 28, 0) })
		requireOpPanic(t, "View4D", func() { ctx.View4D(a, 2, 2, 2, 2, 8, 16, 1<<63-1, 0) })
		requireOpPanic(t, "View4D", func() { ctx.View4D(a, 1, 1, 1, 2, 4, 4, 60, 4) })
		// a view of a view is bounded by the root
		v := ctx.View1D(a, 8, 32)
		requireOpPanic(t, "View1D", func() { ctx.View1D(v, 8, 4) })
		requireOpPanic(t, "View2D", func() { ctx.View2D(v, 2, 2, 32, 0) })
		// in-range views still work, including overlapping and broadcast rows
		w := ctx.View2D(a, 4, 3, 16, 8)
		require.Equal(t, []int{4, 3}, w.Shape())
		ctx.View2D(a, 4, 4, 16, 0)
		ctx.View3D(a, 2, 2, 2, 8, 16, 32)
		ctx.View4D(a, 2, 2, 2, 2, 8, 16, 32, 0)
		// acc and set windows are checked the same way
		b := ctx.NewTensor1D(TypeF32, 2)
		requireOpPanic(t, "Acc", func() { ctx.Acc(a, b, 1<<62, 1<<62, 1<<62, 0) })
		requireOpPanic(t, "Set", func() { ctx.Set(a, ctx.NewTensor2D(TypeF32, 2, 2), 1<<40, 64, 64, 0) })
		// nothing leaked into the next tensor
		v2, err := next.Float32s()
		require.NoError(t, err)
		for _, x := range v2 {
			require.Equal(t, float32(2), x)
		}
	})
}

// Tensor sizes must not overflow.
func TestTensorSizeOverflowIsRefused(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		ctx := newCtx(t, 1<<20)
		requireOpPanic(t, "NewTensor", func() { ctx.NewTensor1D(TypeF32, 1<<62+1) })
		requireOpPanic(t, "NewTensor", func() { ctx.NewTensor1D(TypeF64, 1<<61+1) })
		requireOpPanic(t, "NewTensor", func() { ctx.NewTensor1D(TypeQ8_0, 1<<62) })
		requireOpPanic(t, "NewTensor", func() { ctx.NewTensor4D(TypeF32, 0, 1<<40, 1<<40, 1<<40) })
		requireOpPanic(t, "NewTensor", func() { ctx.NewTensor4D(TypeF32, 4, 1<<62, 0, 2) })
		na, err := NewContext(ContextOptions{MemSize: 1 << 16, NoAlloc: true})
		require.NoError(t, err)
		defer na.Close()
		requireOpPanic(t, "NewTensor", func() { na.NewTensor1D(TypeF32, 1<<62+1) })
		requireOpPanic(t, "Reshape2D", func() { ctx.Reshape2D(ctx.NewTensor1D(TypeF32, 0), 1<<32, 1<<32) })
		// empty tensors of sane shapes are fine
		e := ctx.NewTensor4D(TypeF32, 0, 3, 5, 7)
		require.Equal(t, 0, e.NBytes())
		require.Equal(t, 0, e.NElements())
	})
}

// Element access to i64 and f64 tensors (CountEqual's result is i64).
func TestElementAccessWideTypes(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		ctx := newCtx(t, 1<<20)
		a := ctx.NewTensor1D(TypeI32, 5)
		require.NoError(t, a.SetInt32s([]int32{1, 2, 3, 4, 5}))
		b := ctx.NewTensor1D(TypeI32, 5)
		require.NoError(t, b.SetInt32s([]int32{1, 0, 3, 0, 5}))
		n := ctx.CountEqual(a, b)
		require.Equal(t, TypeI64, n.Type())
		require.NoError(t, ctx.NewGraph().BuildForward(n).Compute(2))
		require.Equal(t, int32(3), n.I32(0))
		require.Equal(t, float32(3), n.F32(0))
		require.Equal(t, float32(3), n.F32(), "no index means element 0")
		v, err := n.Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{3}, v)
		n.Fill(7)
		require.Equal(t, int32(7), n.I32(0))
		n.SetI32(-9, 0)
		require.Equal(t, float32(-9), n.F32(0))
		require.NoError(t, n.SetFloat32s([]float32{11}))
		require.Equal(t, int32(11), n.I32())

		d := ctx.NewTensor2D(TypeF64, 3, 2).Fill(0.5)
		require.Equal(t, float32(0.5), d.F32(2, 1))
		d.SetF32(1.25, 1, 1)
		v, err = d.Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{0.5, 0.5, 0.5, 0.5, 1.25, 0.5}, v)
		d.SetI32(4, 0)
		require.Equal(t, int32(4), d.I32(0, 0))
		// a view with strides, and the quantized types are still refused clearly
		tv := ctx.Transpose(d)
		require.Equal(t, float32(1.25), tv.F32(1, 1))
		q := ctx.NewTensor1D(TypeQ8_0, 32)
		requireOpPanic(t, "F32", func() { q.F32() })
		requireOpPanic(t, "Fill", func() { q.Fill(1) })
		requireOpPanic(t, "F32", func() { d.F32(0, 0, 0, 0, 0) })
	})
}

func TestSizesBeyondBoundsAreRefused(t *testing.T) {
	_, err := NewContext(ContextOptions{MemSize: 1 << 50})
	require.Error(t, err, "a 1 PiB context must be refused, not crash")
	_, err = NewContext(ContextOptions{MemSize: int(^uint(0) >> 1)})
	require.Error(t, err, "a context of MaxInt bytes (padding overflows) must be refused")

	ctx := newCtx(t, 1<<20)
	oe := requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeF32, 1<<40, 1<<40) })
	t.Log(oe)
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeF32, 1<<20, 1<<20, 1<<20, 1<<20) })
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeQ4_0, 1<<62) })
	// No-alloc contexts do not allocate data, but the size must still not overflow.
	na, err := NewContext(ContextOptions{MemSize: 1 << 16, NoAlloc: true})
	require.NoError(t, err)
	defer na.Close()
	requireOpPanic(t, "NewTensor", func() { na.NewTensor(TypeF32, 1<<31, 1<<31, 1<<31) })
	// A tensor bigger than the arena.
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor1D(TypeF32, 1<<20) })

	// A graph over its size: 3 compute nodes in a graph of 2.
	g := ctx.NewGraphCustom(2, false)
	x := ctx.NewTensor1D(TypeF32, 4).Fill(1)
	y := ctx.Scale(ctx.Add(ctx.Mul(x, x), x), 2)
	requireOpPanic(t, "BuildForward", func() { g.BuildForward(y) })
	// A graph bigger than the arena is an error of the constructor, too.
	requireOpPanic(t, "NewGraphCustom", func() { ctx.NewGraphCustom(1<<30, true) })
	// The context is still usable after all of this.
	g2 := ctx.NewGraph().BuildForward(y)
	require.NoError(t, g2.Compute(1))
	v, err := y.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{4, 4, 4, 4}, v)
}

func TestContextSizeErrors(t *testing.T) {
	_, err := NewContext(ContextOptions{})
	require.ErrorContains(t, err, "MemSize is 0")
	_, err = NewContext(ContextOptions{NoAlloc: true})
	require.Error(t, err)
	ctx := newCtx(t, 4096)
	oe := requireOpPanic(t, "NewTensor", func() { ctx.NewTensor1D(TypeF32, 4096) })
	require.Contains(t, oe.Msg, "needs 16")
	require.Contains(t, oe.Msg, "free")
	require.Contains(t, oe.Msg, "at least")
}
