package ggml

// Contexts and tensors: creation, NoAlloc contexts and caller buffers; sizes
// that overflow or do not fit are refused, views stay inside their source,
// elements of every plain type can be read and set. Also the helpers most
// tests use: newCtx, requireOpPanic, panicValue.

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// newCtx is a context closed when the test ends.
func newCtx(t testing.TB, size int) *Context {
	t.Helper()
	ctx, err := NewContext(ContextOptions{MemSize: size})
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// requireOpPanic checks that f panics with an *OpError whose Op is op.
func requireOpPanic(t *testing.T, op string, f func()) *OpError {
	t.Helper()
	var got any
	func() {
		defer func() { got = recover() }()
		f()
	}()
	require.NotNil(t, got, "expected a panic from %s", op)
	err, ok := got.(error)
	require.True(t, ok, "panic value %v is not an error", got)
	var oe *OpError
	require.True(t, errors.As(err, &oe), "panic %v is not an *OpError", err)
	require.Equal(t, op, oe.Op)
	require.NotEmpty(t, oe.Msg)
	return oe
}

// panicValue runs f and returns what it panicked with (nil if it returned).
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

func TestContextBasics(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	require.Equal(t, 0, ctx.UsedMem())
	a := ctx.NewTensor2D(TypeF32, 3, 2).SetName("a")
	require.Equal(t, []int{3, 2}, a.Shape())
	require.Equal(t, [4]int{3, 2, 1, 1}, a.Ne())
	require.Equal(t, [4]int{4, 12, 24, 24}, a.Nb())
	require.Equal(t, 6, a.NElements())
	require.Equal(t, 24, a.NBytes())
	require.True(t, a.IsContiguous())
	require.Equal(t, "a", a.Name())
	require.Equal(t, a.t, ctx.Tensor("a").t)
	require.Greater(t, ctx.UsedMem(), 24)
	require.NoError(t, a.SetFloat32s([]float32{1, 2, 3, 4, 5, 6}))
	require.Equal(t, float32(6), a.F32(2, 1))
	a.SetF32(-1, 0, 1)
	v, err := a.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, -1, 5, 6}, v)

	// transposed view reads in its own element order
	tr := ctx.Transpose(a)
	require.Equal(t, []int{2, 3}, tr.Shape())
	require.True(t, tr.IsTransposed())
	v, err = tr.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, -1, 2, 5, 3, 6}, v)
	into := make([]float32, 6)
	require.NoError(t, tr.Float32sInto(into))
	require.Equal(t, v, into)
	require.Error(t, tr.Float32sInto(into[:5]))

	// f16 tensors convert on the way in and out
	h := ctx.NewTensor1D(TypeF16, 3)
	require.NoError(t, h.SetFloat32s([]float32{0.5, -2, 65504}))
	v, err = h.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{0.5, -2, 65504}, v)

	i := ctx.NewTensor1D(TypeI32, 4)
	require.NoError(t, i.SetInt32s([]int32{1, -2, 3, 4}))
	iv, err := i.Int32s()
	require.NoError(t, err)
	require.Equal(t, []int32{1, -2, 3, 4}, iv)
	require.Error(t, i.SetInt32s([]int32{1}))
	require.Error(t, a.SetFloat32s([]float32{1}))
	_, err = a.Int32s()
	require.Error(t, err)
	require.Len(t, ctx.Tensors(), 4)
}

func TestEmptyTensor(t *testing.T) {
	ctx := newCtx(t, 1<<16)
	e := ctx.NewTensor2D(TypeF32, 0, 5)
	require.True(t, e.IsEmpty())
	require.Equal(t, 0, e.NBytes())
	v, err := e.Float32s()
	require.NoError(t, err)
	require.Empty(t, v)
	require.Empty(t, e.Bytes())
}

func TestNoAllocContext(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 16, NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor1D(TypeF32, 1<<20) // metadata only: fits easily
	require.False(t, a.HasData())
	requireOpPanic(t, "Float32s", func() { a.Float32s() })
}

func TestCallerBuffer(t *testing.T) {
	buf := make([]byte, 1<<16)
	ctx, err := NewContext(ContextOptions{Buffer: buf})
	require.NoError(t, err)
	a := ctx.NewTensor1D(TypeF32, 4)
	a.Fill(3)
	require.Equal(t, float32(3), a.F32(2))
	require.NoError(t, ctx.Close())
	_, err = NewContext(ContextOptions{MemSize: 100, Buffer: make([]byte, 10)})
	require.Error(t, err)
}

func TestInvalidArgumentsPanicRecoverably(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	a := ctx.NewTensor2D(TypeF32, 4, 3)
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(Type(4), 32) })  // removed type
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeQ4_0, 33) }) // not whole blocks
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeF32, 1, 2, 3, 4, 5) })
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeF32, -1) })
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeF32, 1<<40, 1<<40) }) // overflows
	requireOpPanic(t, "View1D", func() { ctx.View1D(a, 13, 0) })
	requireOpPanic(t, "View2D", func() { ctx.View2D(a, 4, 3, 16, 8) })
	requireOpPanic(t, "Reshape2D", func() { ctx.Reshape2D(a, 5, 2) })
	requireOpPanic(t, "Reshape1D", func() { ctx.Reshape1D(ctx.Transpose(a), 12) })
	requireOpPanic(t, "Permute", func() { ctx.Permute(a, 0, 0, 1, 2) })
	requireOpPanic(t, "Node", func() { ctx.NewGraph().Node(0) })
	requireOpPanic(t, "F32", func() { a.F32(4, 0) })
	// the context still works after recovered panics
	b := ctx.NewTensor1D(TypeF32, 2)
	require.Equal(t, 2, b.NElements())

	small := newCtx(t, 1024)
	oe := requireOpPanic(t, "NewTensor", func() { small.NewTensor1D(TypeF32, 1024) })
	require.Contains(t, oe.Msg, "not enough space")
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
