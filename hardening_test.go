package ggml

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// panicValue runs f and returns what it panicked with (nil if it returned).
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

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

func TestHardeningCloseInEveryOrder(t *testing.T) {
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
func TestHardeningGCKeepsDependencies(t *testing.T) {
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

func TestHardeningUseAfterCloseNeverCrashes(t *testing.T) {
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

// Separate contexts on separate goroutines, some sharing one pool (run with -race).
func TestHardeningConcurrentGraphs(t *testing.T) {
	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	defer tp.Close()
	const workers, rounds = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				ctx, err := NewContext(ContextOptions{MemSize: 4 << 20})
				if err != nil {
					errs <- err
					return
				}
				n := 32 + w
				a := ctx.NewTensor2D(TypeF32, n, 8).Fill(float32(w + 1))
				b := ctx.NewTensor2D(TypeF32, n, 4).Fill(float32(r + 1))
				y := ctx.SoftMax(ctx.MulMat(a, b)) // [8, 4], all equal: softmax is 1/8
				s := ctx.Sum(ctx.MulMat(a, b))
				g := ctx.NewGraph().BuildForward(y).BuildForward(s)
				if w%2 == 0 {
					err = g.ComputeWith(tp)
				} else {
					err = g.Compute(2)
				}
				if err == nil {
					var v, sv []float32
					v, err = y.Float32s()
					if err == nil {
						sv, err = s.Float32s()
					}
					if err == nil && (v[0] != 0.125 || v[31] != 0.125) {
						err = fmt.Errorf("worker %d round %d: softmax %v", w, r, v[:4])
					}
					want := float32(32 * n * (w + 1) * (r + 1))
					if err == nil && sv[0] != want {
						err = fmt.Errorf("worker %d round %d: sum %v, want %v", w, r, sv[0], want)
					}
				}
				if r%2 == 0 {
					ctx.Close()
				} // odd rounds are left to the collector
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	runtime.GC()
}

func TestHardeningResourceBounds(t *testing.T) {
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
