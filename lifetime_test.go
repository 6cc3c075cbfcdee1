package ggml

// Lifetimes: contexts and pools closed in any order, or left to the
// collector; what depends on a closed object panics with ErrClosed and never
// reaches freed memory.

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// lifetimeFixture is a graph in context a over inputs in context b, plus a pool.
type lifetimeFixture struct {
	a, b *Context
	g    *Graph
	y    *Tensor
	tp   *Threadpool
}

func newLifetimeFixture(t *testing.T) *lifetimeFixture {
	t.Helper()
	b, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	a, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	x := b.NewTensor1D(TypeF32, 64).Fill(2)
	w := b.NewTensor1D(TypeF32, 64).Fill(3)
	y := a.Scale(a.Mul(x, w), 0.5) // a's graph reads b's tensors
	g := a.NewGraph().BuildForward(y)
	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	return &lifetimeFixture{a: a, b: b, g: g, y: y, tp: tp}
}

// computeAndCheck computes the graph on the pool and checks the result, or
// checks that it panics with the error closed objects call for.
func (f *lifetimeFixture) computeAndCheck(t *testing.T, aClosed, bClosed, tpClosed bool) {
	t.Helper()
	var err error
	got := panicValue(func() { err = f.g.ComputeWith(f.tp) })
	switch {
	case aClosed || bClosed:
		err, _ := got.(error)
		require.ErrorIs(t, err, ErrClosed)
	case tpClosed:
		require.Equal(t, ErrClosedThreadpool, got)
	default:
		require.Nil(t, got)
		require.NoError(t, err)
		v, err := f.y.Float32s()
		require.NoError(t, err)
		for _, e := range v {
			require.Equal(t, float32(3), e)
		}
	}
}

func TestCloseInEveryOrder(t *testing.T) {
	names := []string{"graph context", "input context", "threadpool"}
	perms := [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, p := range perms {
		t.Run(fmt.Sprint(names[p[0]], ", ", names[p[1]], ", ", names[p[2]]), func(t *testing.T) {
			f := newLifetimeFixture(t)
			closed := [3]bool{}
			f.computeAndCheck(t, false, false, false)
			for _, i := range p {
				switch i {
				case 0:
					require.NoError(t, f.a.Close())
				case 1:
					require.NoError(t, f.b.Close())
				case 2:
					require.NoError(t, f.tp.Close())
				}
				closed[i] = true
				runtime.GC()
				f.computeAndCheck(t, closed[0], closed[1], closed[2])
				runtime.GC()
			}
			// Everything is closed: every use panics clearly, Close stays idempotent.
			require.Equal(t, ErrClosed, panicValue(func() { f.g.NNodes() }))
			require.Equal(t, ErrClosed, panicValue(func() { f.y.Float32s() }))
			require.Equal(t, ErrClosed, panicValue(func() { f.a.NewTensor1D(TypeF32, 1) }))
			require.Equal(t, ErrClosedThreadpool, panicValue(func() { f.tp.Pause() }))
			require.Equal(t, ErrClosedThreadpool, panicValue(func() { f.tp.NThreads() }))
			require.NoError(t, f.a.Close())
			require.NoError(t, f.b.Close())
			require.NoError(t, f.tp.Close())
		})
	}
}

// Dropping every reference but the graph must keep the input context alive
// (the graph context depends on it) across collections.
func TestCollectorKeepsDependencies(t *testing.T) {
	f := newLifetimeFixture(t)
	g, y := f.g, f.y
	f.tp.Close()
	f = nil
	for range 3 {
		runtime.GC()
	}
	require.NoError(t, g.Compute(2))
	v, err := y.Float32s()
	require.NoError(t, err)
	require.Equal(t, float32(3), v[0])
	// Now drop everything and let the cleanups run while other work goes on.
	g, y = nil, nil
	for range 3 {
		runtime.GC()
		newLifetimeFixture(t).tp.Close()
	}
	runtime.GC()
}

func TestUseAfterCloseNeverCrashes(t *testing.T) {
	f := newLifetimeFixture(t)
	other, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, f.b.Close())
	// f.y's context is open, but f.y's sources are in the closed one: using
	// f.y (or anything of its context) panics instead of reaching freed memory.
	got := panicValue(func() { other.Add(f.y, f.y) })
	require.Equal(t, errDepClosed, got)
	got = panicValue(func() { f.a.Add(f.y, f.y); f.g.Compute(1) })
	require.Equal(t, errDepClosed, got)
	require.ErrorIs(t, errDepClosed, ErrClosed)
	require.False(t, f.a.Closed())
	require.NoError(t, f.a.Close())
	for name, fn := range map[string]func(){
		"operand":     func() { other.Add(f.y, f.y) },
		"View":        func() { other.View1D(f.y, 1, 0) },
		"SetFloat32s": func() { f.y.SetFloat32s(make([]float32, 64)) },
		"Compute":     func() { f.g.Compute(1) },
		"BuildFwd":    func() { f.g.BuildForward(f.y) },
	} {
		v := panicValue(fn)
		err, ok := v.(error)
		require.True(t, ok, "%s: panic value %v", name, v)
		require.True(t, errors.Is(err, ErrClosed), "%s: %v", name, err)
	}
	f.tp.Close()
	require.Equal(t, ErrClosedThreadpool, panicValue(func() { f.tp.Resume() }))
}

func TestUseAfterClosePanicsErrClosed(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	a := ctx.NewTensor1D(TypeF32, 4)
	g := ctx.NewGraph()
	require.NoError(t, ctx.Close())
	require.NoError(t, ctx.Close()) // idempotent
	for name, f := range map[string]func(){
		"NewTensor": func() { ctx.NewTensor1D(TypeF32, 1) },
		"Shape":     func() { a.Shape() },
		"Float32s":  func() { a.Float32s() },
		"NNodes":    func() { g.NNodes() },
		"Compute":   func() { g.Compute(1) },
		"UsedMem":   func() { ctx.UsedMem() },
	} {
		require.PanicsWithValue(t, ErrClosed, f, name)
	}
	require.Equal(t, "<tensor of closed context>", a.String())
}

func TestGCFreesContexts(t *testing.T) {
	for range 200 {
		ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		ctx.NewTensor1D(TypeF32, 1000).Fill(1)
	}
	runtime.GC()
	runtime.GC()
}
