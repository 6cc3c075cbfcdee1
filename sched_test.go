package ggml

import (
	"context"
	"fmt"

	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// schedNet is y = soft_max(w3 * silu(w2 * relu(w1 * x + b1))): part A (w1,
// b1) then part B (w2, w3), with their weights in contexts of their own.
type schedNet struct {
	w1, b1, w2, w3, x, h, y *Tensor
}

func newSchedNet(wa, wb, ctx *Context) *schedNet {
	n := &schedNet{
		w1: wa.NewTensor2D(TypeF32, 32, 48).SetName("w1"),
		b1: wa.NewTensor1D(TypeF32, 48).SetName("b1"),
		w2: wb.NewTensor2D(TypeF16, 48, 48).SetName("w2"),
		w3: wb.NewTensor2D(TypeF32, 48, 16).SetName("w3"),
	}
	n.x = ctx.NewTensor2D(TypeF32, 32, 5).SetName("x").SetInput()
	n.h = ctx.Relu(ctx.Add(ctx.MulMat(n.w1, n.x), n.b1)).SetName("h")
	n.y = ctx.SoftMax(ctx.MulMat(n.w3, ctx.Silu(ctx.MulMat(n.w2, n.h)))).SetName("y").SetOutput()
	return n
}

func schedValues(n int, seed int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Sin(float64(i*7+seed*13))) * 0.5
	}
	return v
}

func (n *schedNet) fillWeights(t testing.TB) {
	require.NoError(t, n.w1.SetFloat32s(schedValues(32*48, 1)))
	require.NoError(t, n.b1.SetFloat32s(schedValues(48, 2)))
	require.NoError(t, n.w2.SetFloat32s(schedValues(48*48, 3)))
	require.NoError(t, n.w3.SetFloat32s(schedValues(48*16, 4)))
}

func (n *schedNet) fillInput(t testing.TB) {
	require.NoError(t, n.x.SetFloat32s(schedValues(32*5, 5)))
}

// schedReference computes the network directly, in an allocating context.
func schedReference(t *testing.T) []float32 {
	ctx, err := NewContext(ContextOptions{MemSize: 4 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	n := newSchedNet(ctx, ctx, ctx)
	n.fillWeights(t)
	n.fillInput(t)
	require.NoError(t, ctx.NewGraph().BuildForward(n.y).Compute(1))
	v, err := n.y.Float32s()
	require.NoError(t, err)
	return v
}

// schedSetup holds the weights of a network in backend buffers (part A on
// a, part B on b) and builds graphs of it in fresh NoAlloc contexts.
type schedSetup struct {
	wa, wb *Context
	bufs   []*Buffer
	net    *schedNet // the weights
}

func newSchedSetup(t testing.TB, a, b *Backend) *schedSetup {
	s := &schedSetup{}
	var err error
	s.wa, err = NewContext(ContextOptions{MemSize: 8 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	s.wb, err = NewContext(ContextOptions{MemSize: 8 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	scratch, err := NewContext(ContextOptions{MemSize: 32 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	defer scratch.Close()
	s.net = newSchedNet(s.wa, s.wb, scratch)
	for _, w := range []struct {
		ctx *Context
		be  *Backend
	}{{s.wa, a}, {s.wb, b}} {
		buf, err := w.ctx.AllocTensors(w.be)
		require.NoError(t, err)
		buf.SetUsage(BufferUsageWeights)
		s.bufs = append(s.bufs, buf)
	}
	s.net.fillWeights(t)
	return s
}

// graph builds the network over the setup's weights in a new context.
func (s *schedSetup) graph(t testing.TB) (*schedNet, *Graph, *Context) {
	ctx, err := NewContext(ContextOptions{MemSize: 64*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	w := s.net
	n := &schedNet{w1: w.w1, b1: w.b1, w2: w.w2, w3: w.w3}
	n.x = ctx.NewTensor2D(TypeF32, 32, 5).SetName("x").SetInput()
	n.h = ctx.Relu(ctx.Add(ctx.MulMat(n.w1, n.x), n.b1)).SetName("h")
	n.y = ctx.SoftMax(ctx.MulMat(n.w3, ctx.Silu(ctx.MulMat(n.w2, n.h)))).SetName("y").SetOutput()
	return n, ctx.NewGraph().BuildForward(n.y), ctx
}

func (s *schedSetup) close() {
	for _, b := range s.bufs {
		_ = b.Close()
	}
	_ = s.wa.Close()
	_ = s.wb.Close()
}

func twoCPUBackends(t testing.TB) (*Backend, *Backend) {
	a, err := NewCPUBackend()
	require.NoError(t, err)
	b, err := NewCPUBackend()
	require.NoError(t, err)
	return a, b
}

func TestSchedulerTwoCPUBackends(t *testing.T) {
	want := schedReference(t)
	a, b := twoCPUBackends(t)
	defer a.Close()
	defer b.Close()
	setup := newSchedSetup(t, a, b)
	defer setup.close()
	sc, err := NewScheduler([]*Backend{a, b}, 256, false)
	require.NoError(t, err)
	defer sc.Close()
	require.Equal(t, 1, sc.NCopies())
	require.Equal(t, []*Backend{a, b}, sc.Backends())

	// one backend does it all
	n, g, _ := setup.graph(t)
	require.NoError(t, sc.Alloc(g))
	require.Equal(t, 1, sc.NSplits())
	n.fillInput(t)
	require.NoError(t, sc.Compute(context.Background(), g))
	got, err := n.y.Float32s()
	require.NoError(t, err)
	require.Equal(t, want, got, "bit-identical to Graph.Compute")
	require.Equal(t, a, sc.TensorBackend(n.y))

	// part B pinned to the second backend: two splits, same bits
	sc.Reset()
	n, g, _ = setup.graph(t)
	nodes := g.Nodes()
	for _, node := range nodes[5:] { // after h
		require.NoError(t, sc.SetTensorBackend(node, b))
	}
	require.Equal(t, b, sc.TensorBackend(n.y))
	require.NoError(t, sc.Alloc(g))
	require.Equal(t, 2, sc.NSplits())
	require.Equal(t, a, sc.TensorBackend(n.h))
	require.Equal(t, b, sc.TensorBackend(n.y))
	n.fillInput(t)
	require.NoError(t, sc.Compute(context.Background(), g))
	got, err = n.y.Float32s()
	require.NoError(t, err)
	require.Equal(t, want, got)
	// again, as placed
	require.NoError(t, sc.Compute(context.Background(), g))
	got, _ = n.y.Float32s()
	require.Equal(t, want, got)
	require.Positive(t, sc.BufferSize(a))
	require.Zero(t, sc.BufferSize(b), "backends of one buffer type share a compute buffer")
}

// A backend given twice (ggml's test-opt gives the CPU as main and host
// backend) is accepted and used as one: one split, the same bits, and
// locking it for a call does not wait on itself.
func TestSchedulerSameBackendTwice(t *testing.T) {
	want := schedReference(t)
	a, err := NewCPUBackend()
	require.NoError(t, err)
	defer a.Close()
	setup := newSchedSetup(t, a, a)
	defer setup.close()
	sc, err := NewScheduler([]*Backend{a, a}, 256, false)
	require.NoError(t, err)
	defer sc.Close()
	require.Equal(t, []*Backend{a, a}, sc.Backends())
	n, g, _ := setup.graph(t)
	require.NoError(t, sc.SetTensorBackend(n.y, a))
	require.NoError(t, sc.Alloc(g))
	require.Equal(t, 1, sc.NSplits())
	n.fillInput(t)
	require.NoError(t, sc.Compute(context.Background(), g))
	got, err := n.y.Float32s()
	require.NoError(t, err)
	require.Equal(t, want, got, "bit-identical to Graph.Compute")
	require.Equal(t, a, sc.TensorBackend(n.y))
	require.Positive(t, sc.BufferSize(a))
}

func TestSchedulerReserveReuse(t *testing.T) {
	want := schedReference(t)
	a, b := twoCPUBackends(t)
	defer a.Close()
	defer b.Close()
	setup := newSchedSetup(t, a, b)
	defer setup.close()
	sc, err := NewScheduler([]*Backend{a, b}, 256, true)
	require.NoError(t, err)
	defer sc.Close()

	_, g, ctx := setup.graph(t)
	require.NoError(t, sc.Reserve(g))
	size := sc.BufferSize(a)
	require.Positive(t, size)
	require.NoError(t, ctx.Close())
	for range 4 {
		n, g, ctx := setup.graph(t)
		require.NoError(t, sc.Alloc(g))
		n.fillInput(t)
		require.NoError(t, sc.Compute(context.Background(), g))
		got, err := n.y.Float32s()
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, size, sc.BufferSize(a), "graphs of the reserved shape fit the reservation")
		require.NoError(t, ctx.Close())
	}
}

func TestSchedulerEvalCallback(t *testing.T) {
	want := schedReference(t)
	a, b := twoCPUBackends(t)
	defer a.Close()
	defer b.Close()
	setup := newSchedSetup(t, a, b)
	defer setup.close()
	sc, err := NewScheduler([]*Backend{a, b}, 256, false)
	require.NoError(t, err)
	defer sc.Close()

	n, g, _ := setup.graph(t)
	require.NoError(t, sc.Alloc(g))
	n.fillInput(t)
	var asked, seen []string
	sc.SetEvalCallback(func(t *Tensor, ask bool) bool {
		if ask {
			asked = append(asked, t.Name())
			return t.Op() == OpMulMat
		}
		seen = append(seen, t.Name())
		_, err := t.Float32s() // computed by now
		return err == nil
	})
	require.NoError(t, sc.Compute(context.Background(), g))
	require.Len(t, asked, g.NNodes())
	require.Len(t, seen, 3)
	got, _ := n.y.Float32s()
	require.Equal(t, want, got)

	// false stops the computation
	seen = seen[:0]
	sc.SetEvalCallback(func(t *Tensor, ask bool) bool {
		if ask {
			return true
		}
		seen = append(seen, t.Name())
		return len(seen) < 2
	})
	require.NoError(t, sc.Compute(context.Background(), g))
	require.Len(t, seen, 2)

	// a panic becomes an error
	sc.SetEvalCallback(func(t *Tensor, ask bool) bool { panic("boom") })
	err = sc.Compute(context.Background(), g)
	require.ErrorContains(t, err, "boom")

	sc.SetEvalCallback(nil)
	require.NoError(t, sc.Compute(context.Background(), g))
	got, _ = n.y.Float32s()
	require.Equal(t, want, got)
}

func TestSchedulerCancel(t *testing.T) {
	a, b := twoCPUBackends(t)
	defer a.Close()
	defer b.Close()
	sc, err := NewScheduler([]*Backend{a, b}, 2100, false)
	require.NoError(t, err)
	defer sc.Close()

	// 2000 matmuls of 512x512 matrices: minutes of work, unless cancelled
	ctx, err := NewContext(ContextOptions{MemSize: 2100*TensorOverhead() + GraphOverhead(2100, false), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	x := ctx.NewTensor2D(TypeF32, 512, 512).SetInput()
	y := x
	for range 2000 {
		y = ctx.MulMat(x, y)
	}
	g := ctx.NewGraphCustom(2100, false).BuildForward(y)
	require.NoError(t, sc.Alloc(g))
	require.NoError(t, x.SetFloat32s(make([]float32, 512*512)))

	done, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, sc.Compute(done, g), context.Canceled, "an already cancelled context computes nothing")

	// cancelled while computing (from the eval callback, at the first node:
	// the backends stop after the node they are computing)
	done, cancel = context.WithCancel(context.Background())
	sc.SetEvalCallback(func(t *Tensor, ask bool) bool {
		cancel()
		return false
	})
	start := time.Now()
	require.ErrorIs(t, sc.Compute(done, g), context.Canceled)
	require.Less(t, time.Since(start), 30*time.Second, "stopped early")
	sc.SetEvalCallback(nil)

	// cancelled from another goroutine, without a callback
	done, cancel = context.WithCancel(context.Background())
	timer := time.AfterFunc(20*time.Millisecond, cancel)
	defer timer.Stop()
	start = time.Now()
	require.ErrorIs(t, sc.Compute(done, g), context.Canceled)
	require.Less(t, time.Since(start), 30*time.Second, "stopped early")

	// and the scheduler works on
	small, err := NewContext(ContextOptions{MemSize: 8*TensorOverhead() + GraphOverhead(16, false), NoAlloc: true})
	require.NoError(t, err)
	defer small.Close()
	u := small.NewTensor1D(TypeF32, 4).SetInput()
	v := small.Scale(u, 2)
	gs := small.NewGraphCustom(16, false).BuildForward(v)
	require.NoError(t, sc.Alloc(gs))
	require.NoError(t, u.SetFloat32s([]float32{1, 2, 3, 4}))
	require.NoError(t, sc.Compute(context.Background(), gs))
	got, err := v.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{2, 4, 6, 8}, got)
}

func TestSchedulerMisuse(t *testing.T) {
	a, b := twoCPUBackends(t)
	defer a.Close()
	defer b.Close()

	_, err := NewScheduler(nil, 64, false)
	require.Error(t, err)
	_, err = NewScheduler([]*Backend{a, nil}, 64, false)
	require.Error(t, err)
	_, err = NewScheduler([]*Backend{a}, 0, false)
	require.Error(t, err)
	many := make([]*Backend, 17)
	for i := range many {
		many[i] = a
	}
	_, err = NewScheduler(many, 64, false)
	require.Error(t, err)

	setup := newSchedSetup(t, a, b)
	defer setup.close()
	sc, err := NewScheduler([]*Backend{a, b}, 8, false)
	require.NoError(t, err)

	// a graph larger than the scheduler was made for
	n, g, _ := setup.graph(t)
	err = sc.Compute(context.Background(), g)
	require.ErrorContains(t, err, "more than")

	// a backend that is not the scheduler's
	other, err := NewCPUBackend()
	require.NoError(t, err)
	require.Error(t, sc.SetTensorBackend(n.y, other))
	require.Zero(t, sc.BufferSize(other))
	require.Nil(t, sc.TensorBackend(n.y))
	require.NoError(t, other.Close())
	require.NoError(t, sc.Close())
	require.NoError(t, sc.Close(), "Close is idempotent")

	// a closed scheduler
	require.PanicsWithValue(t, ErrClosedScheduler, func() { _ = sc.Compute(context.Background(), g) })
	require.PanicsWithValue(t, ErrClosedScheduler, func() { _ = sc.Alloc(g) })
	require.PanicsWithValue(t, ErrClosedScheduler, func() { _ = sc.Reserve(g) })
	require.PanicsWithValue(t, ErrClosedScheduler, func() { sc.NSplits() })
	require.PanicsWithValue(t, ErrClosedScheduler, func() { sc.Reset() })
	require.PanicsWithValue(t, ErrClosedScheduler, func() { sc.TensorBackend(n.y) })
	require.PanicsWithValue(t, ErrClosedScheduler, func() { _ = sc.SetTensorBackend(n.y, a) })

	// the tensors it placed are detached when it closes
	sc, err = NewScheduler([]*Backend{a, b}, 256, false)
	require.NoError(t, err)
	n, g, gctx := setup.graph(t)
	require.NoError(t, sc.Alloc(g))
	n.fillInput(t)
	require.NoError(t, sc.Compute(context.Background(), g))
	require.True(t, n.y.HasData())
	require.NoError(t, sc.Close())
	require.False(t, n.y.HasData())
	require.Panics(t, func() { _, _ = n.y.Float32s() })

	// ... and when another graph takes their memory
	sc, err = NewScheduler([]*Backend{a, b}, 256, false)
	require.NoError(t, err)
	defer sc.Close()
	n, g, _ = setup.graph(t)
	require.NoError(t, sc.Alloc(g))
	n2, g2, _ := setup.graph(t)
	require.NoError(t, sc.Alloc(g2))
	require.False(t, n.y.HasData())
	require.True(t, n2.y.HasData())
	// placing the first one again (its inputs set after: they were detached too)
	require.NoError(t, sc.Alloc(g))
	require.False(t, n2.y.HasData())
	n.fillInput(t)
	require.NoError(t, sc.Compute(context.Background(), g))
	require.Equal(t, schedReference(t), must(n.y.Float32s()))

	// a graph of a closed context
	require.NoError(t, gctx.Close())
	_, g3, ctx3 := setup.graph(t)
	require.NoError(t, ctx3.Close())
	require.PanicsWithValue(t, ErrClosed, func() { _ = sc.Compute(context.Background(), g3) })

	// a closed backend
	c, err := NewCPUBackend()
	require.NoError(t, err)
	sc2, err := NewScheduler([]*Backend{c, b}, 256, false)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	n4, g4, _ := setup.graph(t)
	require.PanicsWithValue(t, ErrClosedBackend, func() { _ = sc2.Compute(context.Background(), g4) })
	require.NotPanics(t, func() { sc2.NSplits() })
	require.NoError(t, sc2.Close())
	require.PanicsWithValue(t, ErrClosedBackend, func() { _, _ = NewScheduler([]*Backend{c}, 64, false) })
	_ = n4

	// a closed thread pool set on a backend
	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	d, err := NewCPUBackend()
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.SetThreadpool(tp))
	sc3, err := NewScheduler([]*Backend{d}, 256, false)
	require.NoError(t, err)
	defer sc3.Close()
	require.NoError(t, tp.Close())
	_, g5, _ := setup.graph(t)
	require.ErrorIs(t, sc3.Compute(context.Background(), g5), ErrClosedThreadpool)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A scheduler dropped without Close is freed by the garbage collector, after
// the tensors it placed are gone; its backends outlive it.
func TestSchedulerCleanup(t *testing.T) {
	a, b := twoCPUBackends(t)
	defer a.Close()
	defer b.Close()
	setup := newSchedSetup(t, a, b)
	defer setup.close()
	for range 3 {
		sc, err := NewScheduler([]*Backend{a, b}, 256, false)
		require.NoError(t, err)
		n, g, _ := setup.graph(t)
		n.fillInputAfter(t, sc, g)
		require.NoError(t, sc.Compute(context.Background(), g))
	}
	runtime.GC()
	runtime.GC()
	require.Equal(t, "CPU", a.Name())
}

func (n *schedNet) fillInputAfter(t *testing.T, sc *Scheduler, g *Graph) {
	require.NoError(t, sc.Alloc(g))
	n.fillInput(t)
}

// The scheduler's cost per graph on two CPU backends (part B pinned to the
// second): computing a placed graph, and placing a new graph (assignment,
// splits, plan) without computing it. Compare with BenchmarkSchedulerDirect.
func BenchmarkSchedulerCompute(b *testing.B) {
	benchScheduler(b, func(b *testing.B, sc *Scheduler, setup *schedSetup, pin func(*Graph)) {
		_, g, _ := setup.graph(b)
		pin(g)
		require.NoError(b, sc.Alloc(g))
		for b.Loop() {
			if err := sc.Compute(context.Background(), g); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSchedulerPlace(b *testing.B) {
	benchScheduler(b, func(b *testing.B, sc *Scheduler, setup *schedSetup, pin func(*Graph)) {
		for b.Loop() {
			b.StopTimer()
			_, g, ctx := setup.graph(b)
			sc.Reset()
			pin(g)
			b.StartTimer()
			if err := sc.Alloc(g); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = ctx.Close()
			b.StartTimer()
		}
	})
}

// The same graph computed directly on the first backend (placed once by a
// GraphAllocator).
func BenchmarkSchedulerDirect(b *testing.B) {
	benchScheduler(b, func(b *testing.B, sc *Scheduler, setup *schedSetup, pin func(*Graph)) {
		_, g, _ := setup.graph(b)
		ga, err := NewGraphAllocator()
		require.NoError(b, err)
		defer ga.Close()
		require.NoError(b, ga.Alloc(g))
		be := sc.Backends()[0]
		for b.Loop() {
			if err := be.Compute(context.Background(), g); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchScheduler(b *testing.B, run func(b *testing.B, sc *Scheduler, setup *schedSetup, pin func(*Graph))) {
	x, y := twoCPUBackends(b)
	defer x.Close()
	defer y.Close()
	require.NoError(b, x.SetThreads(1)) // the kernels are not what is measured
	require.NoError(b, y.SetThreads(1))
	setup := newSchedSetup(b, x, y)
	defer setup.close()
	sc, err := NewScheduler([]*Backend{x, y}, 256, false)
	require.NoError(b, err)
	defer sc.Close()
	pin := func(g *Graph) {
		for _, n := range g.Nodes()[5:] {
			_ = sc.SetTensorBackend(n, y)
		}
	}
	run(b, sc, setup, pin)
}

// An eval callback that uses its scheduler or the scheduler's backends gets
// ErrInCallback (they are held by the Compute that runs the callback) instead
// of waiting forever; Close from it takes effect when Compute ends; a
// runtime.Goexit in it is an error of Compute.
func TestSchedulerEvalCallbackReentryErrors(t *testing.T) {
	a, b := twoCPUBackends(t)
	defer a.Close()
	defer b.Close()
	setup := newSchedSetup(t, a, b)
	defer setup.close()
	sc, err := NewScheduler([]*Backend{a, b}, 256, false)
	require.NoError(t, err)
	defer sc.Close()
	n, g, ctx := setup.graph(t)
	defer ctx.Close()
	require.NoError(t, sc.Alloc(g))
	n.fillInput(t)

	uses := map[string]func() error{
		"Compute":               func() error { return sc.Compute(context.Background(), g) },
		"Alloc":                 func() error { return sc.Alloc(g) },
		"Reserve":               func() error { return sc.Reserve(g) },
		"SetTensorBackend":      func() error { return sc.SetTensorBackend(n.h, a) },
		"NSplits":               func() error { sc.NSplits(); return nil },
		"NCopies":               func() error { sc.NCopies(); return nil },
		"Backends":              func() error { sc.Backends(); return nil },
		"BufferSize":            func() error { sc.BufferSize(a); return nil },
		"TensorBackend":         func() error { sc.TensorBackend(n.h); return nil },
		"Reset":                 func() error { sc.Reset(); return nil },
		"SetEvalCallback":       func() error { sc.SetEvalCallback(nil); return nil },
		"Backend.Compute":       func() error { return a.Compute(context.Background(), g) },
		"Backend.SetThreads":    func() error { return b.SetThreads(1) },
		"Backend.SetThreadpool": func() error { return a.SetThreadpool(nil) },
	}
	for name, use := range uses {
		var got error
		sc.SetEvalCallback(func(*Tensor, bool) bool {
			if got == nil {
				got = func() (err error) {
					defer func() {
						if r := recover(); r != nil {
							err, _ = r.(error)
							if err == nil {
								err = fmt.Errorf("%v", r)
							}
						}
					}()
					return use()
				}()
			}
			return true
		})
		done := make(chan error, 1)
		go func() { done <- sc.Compute(context.Background(), g) }()
		select {
		case err := <-done:
			require.NoError(t, err, name)
		case <-time.After(time.Minute):
			t.Fatalf("%s from the eval callback: Compute never returned", name)
		}
		require.ErrorIs(t, got, ErrInCallback, name)
	}
	sc.SetEvalCallback(nil)
	want, err := func() ([]float32, error) {
		require.NoError(t, sc.Compute(context.Background(), g))
		return n.y.Float32s()
	}()
	require.NoError(t, err)

	// runtime.Goexit (t.FailNow) in the callback: an error, the scheduler works on
	sc.SetEvalCallback(func(*Tensor, bool) bool { runtime.Goexit(); return true })
	require.ErrorContains(t, sc.Compute(context.Background(), g), "Goexit")
	sc.SetEvalCallback(nil)
	require.NoError(t, sc.Compute(context.Background(), g))

	// Close of the scheduler and of a backend from the callback: when Compute ends
	var once sync.Once
	sc.SetEvalCallback(func(*Tensor, bool) bool {
		once.Do(func() {
			require.NoError(t, sc.Close())
			require.NoError(t, b.Close())
		})
		return true
	})
	require.NoError(t, sc.Compute(context.Background(), g))
	require.False(t, n.y.HasData(), "the scheduler closed: its placement is detached")
	require.PanicsWithValue(t, ErrClosedScheduler, func() { sc.NSplits() })
	require.PanicsWithValue(t, ErrClosedBackend, func() { b.Name() })
	require.NotEmpty(t, want)
}
