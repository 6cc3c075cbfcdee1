package ggml

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/internal/cmem"
	"github.com/stretchr/testify/require"
)

// quietLog drops the core's log for the rest of the test (errors it logs
// on purpose).
func quietLog(t *testing.T) {
	SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { SetLogger(nil) })
}

// mlp builds y = soft_max(w2 * silu(w1 * x + b1)) in ctx over weights wctx.
type mlp struct {
	w1, b1, w2, x, y *Tensor
}

func newMLP(wctx, ctx *Context) *mlp {
	m := &mlp{
		w1: wctx.NewTensor2D(TypeF32, 32, 48).SetName("w1"),
		b1: wctx.NewTensor1D(TypeF32, 48).SetName("b1"),
		w2: wctx.NewTensor2D(TypeF32, 48, 16).SetName("w2"),
	}
	m.x = ctx.NewTensor2D(TypeF32, 32, 5).SetName("x").SetInput()
	h := ctx.Silu(ctx.Add(ctx.MulMat(m.w1, m.x), m.b1))
	m.y = ctx.SoftMax(ctx.MulMat(m.w2, h)).SetName("y").SetOutput()
	return m
}

func ramp(n int, seed float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((i*37+int(seed*100))%23)/23 - 0.5
	}
	return v
}

func (m *mlp) fill(t *testing.T) {
	require.NoError(t, m.w1.SetFloat32s(ramp(32*48, 1)))
	require.NoError(t, m.b1.SetFloat32s(ramp(48, 2)))
	require.NoError(t, m.w2.SetFloat32s(ramp(48*16, 3)))
	require.NoError(t, m.x.SetFloat32s(ramp(32*5, 4)))
}

// reference computes the MLP in an allocating context with Graph.Compute.
func referenceMLP(t *testing.T, nThreads int) []float32 {
	ctx, err := NewContext(ContextOptions{MemSize: 4 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	m := newMLP(ctx, ctx)
	m.fill(t)
	require.NoError(t, ctx.NewGraph().BuildForward(m.y).Compute(nThreads))
	v, err := m.y.Float32s()
	require.NoError(t, err)
	return v
}

// backendMLP sets up the MLP for a backend: weights in a buffer, the graph
// in a NoAlloc context.
func backendMLP(t *testing.T, be *Backend) (m *mlp, g *Graph, wctx, ctx *Context, wbuf *Buffer) {
	var err error
	wctx, err = NewContext(ContextOptions{MemSize: 16 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	ctx, err = NewContext(ContextOptions{MemSize: 64*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	m = newMLP(wctx, ctx)
	wbuf, err = wctx.AllocTensors(be)
	require.NoError(t, err)
	g = ctx.NewGraph().BuildForward(m.y)
	return m, g, wctx, ctx, wbuf
}

func TestBackendCPUComputeMatchesGraphCompute(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	require.True(t, be.IsCPU())
	require.Equal(t, "CPU", be.Name())
	require.GreaterOrEqual(t, be.BufferType().Alignment(), 32)
	require.True(t, be.BufferType().IsHost())

	for _, nt := range []int{1, 3} {
		require.NoError(t, be.SetThreads(nt))
		m, g, wctx, ctx, wbuf := backendMLP(t, be)
		require.Equal(t, 1, len(wctx.keep), "the weights context keeps its buffer")
		require.Same(t, wbuf, m.w1.Buffer())
		ga, err := NewGraphAllocator(be.BufferType())
		require.NoError(t, err)
		require.NoError(t, ga.Reserve(g))
		require.NoError(t, ga.Alloc(g))
		require.Greater(t, ga.BufferSize(0), 0)
		m.fill(t)
		require.NoError(t, be.Compute(context.Background(), g))
		got, err := m.y.Float32s()
		require.NoError(t, err)
		require.Equal(t, referenceMLP(t, nt), got, "bit-identical to Graph.Compute with %d threads", nt)

		// again, after allocating the same graph again: the input survived
		require.NoError(t, ga.Alloc(g))
		require.NoError(t, be.Compute(context.Background(), g))
		again, err := m.y.Float32s()
		require.NoError(t, err)
		require.Equal(t, got, again)
		require.NoError(t, ga.Close())
		require.NoError(t, wbuf.Close())
		require.NoError(t, ctx.Close())
		require.NoError(t, wctx.Close())
	}
}

func TestBackendThreadpool(t *testing.T) {
	quietLog(t)
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	require.NoError(t, be.SetThreadpool(tp))
	m, g, _, _, _ := backendMLP(t, be)
	ga, err := NewGraphAllocator()
	require.NoError(t, err)
	require.NoError(t, ga.Alloc(g))
	m.fill(t)
	require.NoError(t, be.Compute(context.Background(), g))
	got, _ := m.y.Float32s()
	require.Equal(t, referenceMLP(t, 2), got)

	require.NoError(t, tp.Close())
	err = be.Compute(context.Background(), g)
	require.ErrorIs(t, err, ErrClosedThreadpool, "a closed pool makes computations fail, not crash")
	require.NoError(t, be.SetThreadpool(nil))
	require.NoError(t, be.Compute(context.Background(), g))
	require.Error(t, be.SetThreads(-1))
	require.Error(t, be.SetThreads(MaxThreads+1))
}

// A custom op that cancels the computation the first time it runs.
func TestBackendComputeCancel(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer ctx.Close()

	cctx, cancel := context.WithCancel(context.Background())
	x := ctx.NewTensor1D(TypeF32, 64).Fill(1)
	calls := 0
	// the backend's abort flag (a C atomic_int), which the watcher sets
	// asynchronously: the callback waits for it rather than for a fixed
	// time, which a loaded machine may not give the watcher
	stop := (*atomic.Int32)(unsafe.Pointer(be.abort))
	y := ctx.MapCustom1(x, func(dst, src *Tensor, ith, nth int) {
		calls++
		cancel()
		for end := time.Now().Add(time.Minute); stop.Load() == 0 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
	}, 1)
	for range 50 {
		y = ctx.Scale(y, 1.0001)
	}
	g := ctx.NewGraph().BuildForward(y)
	err = be.Compute(cctx, g)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, calls)

	// cancelled before: not started
	err = be.Compute(cctx, g)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, calls)

	// a deadline far away does not disturb
	dctx, dcancel := context.WithTimeout(context.Background(), time.Hour)
	defer dcancel()
	y2 := ctx.Scale(x, 2)
	require.NoError(t, be.Compute(dctx, ctx.NewGraph().BuildForward(y2)))
	require.Equal(t, float32(2), y2.F32(3))
}

func TestBackendMisuse(t *testing.T) {
	quietLog(t)
	be, err := NewCPUBackend()
	require.NoError(t, err)

	// a NoAlloc tensor computed before it has memory: an error naming it
	ctx, err := NewContext(ContextOptions{MemSize: 32*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor1D(TypeF32, 8).SetName("a")
	b := ctx.Scale(a, 2)
	g := ctx.NewGraph().BuildForward(b)
	err = be.Compute(context.Background(), g)
	require.Error(t, err)
	require.Contains(t, err.Error(), "no data")
	require.False(t, a.HasData())
	requireOpPanic(t, "Float32s", func() { _, _ = a.Float32s() })

	// AllocTensors: no target, then the real thing, then nothing left to do
	_, err = ctx.AllocTensors(nil)
	require.Error(t, err)
	buf, err := ctx.AllocTensors(CPUBufferType())
	require.NoError(t, err)
	_, err = ctx.AllocTensors(be)
	require.ErrorIs(t, err, ErrNothingToAllocate)
	require.True(t, a.HasData() && b.HasData())
	require.NoError(t, a.SetFloat32s([]float32{1, 2, 3, 4, 5, 6, 7, 8}))
	require.NoError(t, be.Compute(context.Background(), g))
	require.Equal(t, float32(16), b.F32(7))
	require.Equal(t, BufferUsageAny, buf.Usage())
	buf.SetUsage(BufferUsageWeights)
	require.Equal(t, BufferUsageWeights, buf.Usage())
	require.Equal(t, "CPU", buf.Name())
	require.True(t, buf.IsHost())
	require.GreaterOrEqual(t, buf.Size(), 64)

	// a view made in another context after allocation
	other, err := NewContext(ContextOptions{MemSize: 8 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	defer other.Close()
	v := other.View1D(a, 4, 16)
	require.Equal(t, float32(5), v.F32(0))

	// closing the buffer detaches every tensor in it: errors, not crashes
	require.NoError(t, buf.Close())
	require.NoError(t, buf.Close())
	require.False(t, a.HasData())
	require.False(t, b.HasData())
	require.False(t, v.HasData())
	requireOpPanic(t, "F32", func() { v.F32(0) })
	err = be.Compute(context.Background(), g)
	require.Error(t, err)
	require.PanicsWithValue(t, ErrClosedBuffer, func() { buf.Size() })
	require.PanicsWithValue(t, ErrClosedBuffer, func() { _ = buf.Clear(0) })
	require.Nil(t, a.Buffer())

	// allocate again: works
	buf2, err := ctx.AllocTensors(be)
	require.NoError(t, err)
	require.NoError(t, buf2.Clear(0))
	require.Equal(t, float32(0), a.F32(3))

	// closed backend
	require.NoError(t, be.Close())
	require.NoError(t, be.Close())
	require.PanicsWithValue(t, ErrClosedBackend, func() { be.Name() })
	require.PanicsWithValue(t, ErrClosedBackend, func() { _ = be.Compute(context.Background(), g) })
	require.PanicsWithValue(t, ErrClosedBackend, func() { be.BufferType() })

	// buffer types
	_, err = CPUBufferType().NewBuffer(-1)
	require.Error(t, err)
	nb, err := CPUBufferType().NewBuffer(0)
	require.NoError(t, err)
	require.Equal(t, 0, nb.Size())
	require.NoError(t, nb.Close())
}

// Buffers and allocators stay alive while their tensors are reachable.
func TestBackendLifetimes(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	m, g, wctx, ctx, _ := backendMLP(t, be) // the Buffer is not kept here
	ga, err := NewGraphAllocator(be.BufferType())
	require.NoError(t, err)
	require.NoError(t, ga.Alloc(g))
	ga = nil
	be = nil
	for range 3 {
		runtime.GC()
	}
	m.fill(t)
	be2, err := NewCPUBackend()
	require.NoError(t, err)
	defer be2.Close()
	require.NoError(t, be2.Compute(context.Background(), g))
	got, _ := m.y.Float32s()
	require.Equal(t, referenceMLP(t, runtime.NumCPU()), got)
	runtime.KeepAlive(wctx)
	runtime.KeepAlive(ctx)
	_ = ga
	_ = be
}

func TestBackendSupports(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	ctx, err := NewContext(ContextOptions{MemSize: 16 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor1D(TypeF16, 256)
	require.True(t, be.Supports(ctx.Cpy(a, ctx.NewTensor1D(TypeQ4_0, 256))))
	require.False(t, be.Supports(ctx.Cpy(a, ctx.NewTensor1D(TypeIQ2_XXS, 256))), "no quantizer without an importance matrix")
	require.True(t, be.Supports(ctx.MulMat(ctx.NewTensor2D(TypeQ4_K, 256, 4), ctx.NewTensor2D(TypeF32, 256, 2))))
}

func TestBackendErrorsAreNotPanicsOfC(t *testing.T) {
	quietLog(t)
	// every misuse above ends in a Go error or panic value, never in the
	// C abort: make sure a C assertion through a GG_DEF wrapper is reported
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	var oe *OpError
	_, err = CPUBufferType().NewBuffer(1 << 62)
	require.Error(t, err)
	require.False(t, errors.As(err, &oe))
}

// Several goroutines build and allocate graphs over shared weights and
// compute them on one backend (run with -race).
func TestBackendSharedWeightsConcurrently(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	require.NoError(t, be.SetThreads(2))
	wctx, err := NewContext(ContextOptions{MemSize: 16 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	defer wctx.Close()
	w := wctx.NewTensor2D(TypeF32, 16, 8)
	wbuf, err := wctx.AllocTensors(be)
	require.NoError(t, err)
	defer wbuf.Close()
	require.NoError(t, w.SetFloat32s(ramp(128, 9)))

	errs := make(chan error, 4)
	for k := range 4 {
		go func() {
			errs <- func() error {
				ctx, err := NewContext(ContextOptions{MemSize: 16*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
				if err != nil {
					return err
				}
				defer ctx.Close()
				x := ctx.NewTensor1D(TypeF32, 16).SetInput()
				y := ctx.Scale(ctx.MulMat(w, x), float32(k))
				g := ctx.NewGraph().BuildForward(y)
				ga, err := NewGraphAllocator()
				if err != nil {
					return err
				}
				defer ga.Close()
				for range 5 {
					if err := ga.Alloc(g); err != nil {
						return err
					}
					if err := x.SetFloat32s(ramp(16, 1)); err != nil {
						return err
					}
					if err := be.Compute(context.Background(), g); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// Closing a buffer while a computation uses it waits for the computation;
// a Go callback of that computation that reads a tensor of the buffer
// meanwhile gets an error instead of waiting (no deadlock).
func TestBufferCloseWaitsForCompute(t *testing.T) {
	quietLog(t)
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	require.NoError(t, be.SetThreads(1))
	ctx, err := NewContext(ContextOptions{MemSize: 16*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	started, release := make(chan struct{}), make(chan struct{})
	x := ctx.NewTensor1D(TypeF32, 8)
	y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {
		close(started)
		<-release
		_, _ = a.Float32s() // the buffer is being closed: panics, which Compute reports
	}, 1)
	g := ctx.NewGraph().BuildForward(y)
	buf, err := ctx.AllocTensors(be)
	require.NoError(t, err)
	require.NoError(t, x.SetFloat32s(ramp(8, 1)))

	errc := make(chan error, 1)
	go func() { errc <- be.Compute(context.Background(), g) }()
	<-started
	closed := make(chan struct{})
	go func() { _ = buf.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a computation used the buffer")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.Error(t, <-errc, "the callback's read of the closing buffer is an error of Compute")
	<-closed
	require.False(t, x.HasData())
}

// twoBufferContext is a NoAlloc context whose tensors were placed by two
// AllocTensors calls: x in first, late (added after the first call) in
// second; y = x*late is computed by a custom op that waits for release.
type twoBufferContext struct {
	ctx            *Context
	x, late, y     *Tensor
	first, second  *Buffer
	g              *Graph
	started, relse chan struct{}
}

func newTwoBufferContext(t *testing.T, be *Backend) *twoBufferContext {
	f := &twoBufferContext{started: make(chan struct{}), relse: make(chan struct{})}
	var err error
	f.ctx, err = NewContext(ContextOptions{MemSize: 16*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	t.Cleanup(func() { f.ctx.Close() })
	f.x = f.ctx.NewTensor1D(TypeF32, 1<<16).SetName("x")
	f.first, err = f.ctx.AllocTensors(be)
	require.NoError(t, err)
	f.late = f.ctx.NewTensor1D(TypeF32, 1<<16).SetName("late")
	f.second, err = f.ctx.AllocTensors(be)
	require.NoError(t, err)
	require.NoError(t, f.x.SetFloat32s(ramp(1<<16, 1)))
	require.NoError(t, f.late.SetFloat32s(ramp(1<<16, 2)))
	var once sync.Once
	f.y = f.ctx.MapCustom2(f.x, f.late, func(dst, a, b *Tensor, ith, nth int) {
		once.Do(func() { close(f.started); <-f.relse })
	}, 1)
	yb, err := f.ctx.AllocTensors(be)
	require.NoError(t, err)
	t.Cleanup(func() { yb.Close() })
	f.g = f.ctx.NewGraph().BuildForward(f.ctx.Add(f.ctx.Mul(f.x, f.late), f.y))
	return f
}

// Each Buffer of a context allocated in two steps owns its own tensors:
// Close of either waits for a computation reading its memory (it does not
// free it under the computation).
func TestBufferCloseWaitsForComputeOfEachBuffer(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	for _, which := range []string{"first", "second", "first, Graph.Compute", "second, Graph.Compute"} {
		f := newTwoBufferContext(t, be)
		compute := func() error { return be.Compute(context.Background(), f.g) }
		if strings.HasSuffix(which, "Graph.Compute") {
			compute = func() error { return f.g.Compute(2) }
		}
		require.Same(t, f.first, f.x.Buffer())
		require.Same(t, f.second, f.late.Buffer())
		buf := f.first
		if strings.HasPrefix(which, "second") {
			buf = f.second
		}
		ga, err := NewGraphAllocator()
		require.NoError(t, err)
		require.NoError(t, ga.Alloc(f.g))
		errc := make(chan error, 1)
		go func() { errc <- compute() }()
		<-f.started
		closed := make(chan struct{})
		go func() { _ = buf.Close(); close(closed) }()
		// Close must be waiting for the computation's pin, not done
		deadline := time.Now().Add(time.Minute)
		for {
			select {
			case <-closed:
				t.Fatalf("Close of the %s buffer returned while a computation read it", which)
			default:
			}
			buf.life.mu.Lock()
			waiting := buf.life.held && buf.life.pins > 0
			buf.life.mu.Unlock()
			if waiting {
				break
			}
			require.True(t, time.Now().Before(deadline), "Close never started waiting")
			runtime.Gosched()
		}
		close(f.relse)
		require.NoError(t, <-errc)
		<-closed
		require.NoError(t, ga.Close())
	}
}

// Closing one Buffer detaches only the tensors placed in it.
func TestBufferCloseDetachesOnlyItsTensors(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	f := newTwoBufferContext(t, be)
	want := f.x.Bytes()
	require.NoError(t, f.second.Close())
	require.False(t, f.late.HasData())
	require.True(t, f.x.HasData(), "the first buffer's tensor kept its memory")
	require.Equal(t, want, f.x.Bytes())
	require.Same(t, f.first, f.x.Buffer())
	require.NoError(t, f.first.Close())
	require.False(t, f.x.HasData())

	// and the other way round
	f = newTwoBufferContext(t, be)
	want = f.late.Bytes()
	require.NoError(t, f.first.Close())
	require.False(t, f.x.HasData())
	require.True(t, f.late.HasData())
	require.Equal(t, want, f.late.Bytes())
	require.NoError(t, f.second.Close())
}

// ---------------------------------------------------------------- every method, misused

// methodArgs gives the arguments of a method call: the values of fix whose
// type matches, zero values (nil pointers, 0, nil context) otherwise.
func methodArgs(m reflect.Value, fix []any) []reflect.Value {
	mt := m.Type()
	args := make([]reflect.Value, mt.NumIn())
	for i := range args {
		at := mt.In(i)
		if mt.IsVariadic() && i == mt.NumIn()-1 {
			at = at.Elem()
		}
		args[i] = reflect.Zero(at)
		for _, v := range fix {
			if v != nil && reflect.TypeOf(v).AssignableTo(at) {
				args[i] = reflect.ValueOf(v)
				break
			}
		}
	}
	if mt.IsVariadic() {
		args = args[:len(args)-1]
	}
	return args
}

// misuseOutcome calls f and describes a contract violation: a runtime error
// (nil dereference, ...), a panic value that is not an error, or no return
// within a minute. "" if f returned or panicked with an error.
func misuseOutcome(f func()) string {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	select {
	case r := <-done:
		if r == nil {
			return ""
		}
		if _, ok := r.(runtime.Error); ok {
			return fmt.Sprintf("runtime error: %v", r)
		}
		if _, ok := r.(error); !ok {
			return fmt.Sprintf("panic with %T %v", r, r)
		}
		return ""
	case <-time.After(time.Minute):
		return "no return within a minute"
	}
}

// callEveryMethod calls each exported method of recv (Close last) with the
// arguments methodArgs makes from fix, and reports the violations.
func callEveryMethod(t *testing.T, what string, recv any, fix ...any) {
	t.Helper()
	v := reflect.ValueOf(recv)
	var closeM reflect.Value
	for i := range v.NumMethod() {
		name := v.Type().Method(i).Name
		m := v.Method(i)
		if name == "Close" {
			closeM = m
			continue
		}
		if bad := misuseOutcome(func() { m.Call(methodArgs(m, fix)) }); bad != "" {
			t.Errorf("%s %T.%s: %s", what, recv, name, bad)
		}
	}
	if closeM.IsValid() {
		if bad := misuseOutcome(func() { closeM.Call(nil) }); bad != "" {
			t.Errorf("%s %T.Close: %s", what, recv, bad)
		}
	}
}

// misuseFixture is one open object of each kind, and a graph and tensor
// whose memory is in a buffer of the backend.
type misuseFixture struct {
	be  *Backend
	bt  *BufferType
	buf *Buffer
	ga  *GraphAllocator
	sc  *Scheduler
	tp  *Threadpool
	g   *Graph
	x   *Tensor
}

func newMisuseFixture(t *testing.T) *misuseFixture {
	f := &misuseFixture{}
	var err error
	f.be, err = NewCPUBackend()
	require.NoError(t, err)
	require.NoError(t, f.be.SetThreads(2))
	f.bt = f.be.BufferType()
	ctx, err := NewContext(ContextOptions{MemSize: 16*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	f.x = ctx.NewTensor1D(TypeF32, 64).SetName("x")
	f.buf, err = ctx.AllocTensors(f.be)
	require.NoError(t, err)
	require.NoError(t, f.buf.Clear(0))
	f.g = ctx.NewGraph().BuildForward(ctx.Scale(f.x, 2))
	f.ga, err = NewGraphAllocator()
	require.NoError(t, err)
	require.NoError(t, f.ga.Alloc(f.g))
	f.sc, err = NewScheduler([]*Backend{f.be}, 64, false)
	require.NoError(t, err)
	f.tp, err = NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	return f
}

func (f *misuseFixture) objects() []any {
	return []any{f.be, f.bt, f.buf, f.ga, f.sc, f.tp}
}

func (f *misuseFixture) close() {
	f.sc.Close()
	f.ga.Close()
	f.buf.Close()
	f.tp.Close()
	f.be.Close()
}

// Nil receivers and nil arguments of the backend types' methods give an
// error (or an *OpError panic where there is no error result), never a
// runtime error.
func TestNilArgumentsGiveErrors(t *testing.T) {
	quietLog(t)
	f := newMisuseFixture(t)
	defer f.close()
	for _, nilRecv := range []any{(*Backend)(nil), (*BufferType)(nil), (*Buffer)(nil), (*GraphAllocator)(nil), (*Scheduler)(nil), (*Threadpool)(nil)} {
		callEveryMethod(t, "nil receiver", nilRecv, f.g, f.x, f.be)
	}
	for _, o := range f.objects() {
		if _, isTP := o.(*Threadpool); isTP {
			continue // its methods take no pointers
		}
		callEveryMethod(t, "nil arguments", o)
	}
	f = newMisuseFixture(t)
	defer f.close()

	// the calls of the issue, one by one: errors where there is an error result
	var oe *OpError
	require.ErrorAs(t, f.be.Compute(context.Background(), nil), &oe)
	var nilCtx context.Context // a nil context on purpose
	require.ErrorAs(t, f.be.Compute(nilCtx, f.g), &oe)
	require.ErrorAs(t, f.sc.Compute(nilCtx, f.g), &oe)
	require.ErrorAs(t, f.ga.Alloc(nil), &oe)
	require.ErrorAs(t, f.ga.Reserve(nil), &oe)
	require.ErrorAs(t, f.sc.Alloc(nil), &oe)
	require.ErrorAs(t, f.sc.Reserve(nil), &oe)
	require.ErrorAs(t, f.sc.Compute(context.Background(), nil), &oe)
	require.ErrorAs(t, f.sc.SetTensorBackend(nil, f.be), &oe)
	require.ErrorAs(t, f.sc.SetTensorBackend(f.x, nil), &oe)
	require.ErrorAs(t, panicValue(func() { f.be.Supports(nil) }).(error), &oe)
	ctx, err := NewContext(ContextOptions{MemSize: 4 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	ctx.NewTensor1D(TypeF32, 4)
	_, err = ctx.AllocTensors((*Backend)(nil))
	require.ErrorAs(t, err, &oe)
	require.Contains(t, err.Error(), "nil")
	require.NotErrorIs(t, err, ErrClosedBackend)
	_, err = ctx.AllocTensors((*BufferType)(nil))
	require.ErrorAs(t, err, &oe)
	_, _, err = ctx.LoadGGUFInto(nil, f.be)
	require.ErrorAs(t, err, &oe)
	require.ErrorAs(t, panicValue(func() { (*Tensor)(nil).Buffer() }).(error), &oe)
	require.ErrorAs(t, panicValue(func() { (*Graph)(nil).NNodes() }).(error), &oe)
	require.Error(t, ServeRPC(context.Background(), nil, f.be, 0))
	_, err = DialRPC(nilCtx, "127.0.0.1:1")
	require.Error(t, err)
	_, _, err = RPCDeviceMemory(nilCtx, "127.0.0.1:1")
	require.Error(t, err)
	require.Error(t, ServeRPC(nilCtx, nil, f.be, 0))
}

// Every method of a closed backend object gives an error or panics with one
// (ErrClosedBackend, ErrClosedBuffer, ...), never a runtime error or a hang.
func TestMethodsAfterClose(t *testing.T) {
	quietLog(t)
	f := newMisuseFixture(t)
	f.close()
	for _, o := range f.objects() {
		callEveryMethod(t, "closed", o, context.Background(), f.g, f.x, f.be, f.tp)
	}
	require.False(t, f.x.HasData())
	require.PanicsWithValue(t, ErrClosedBackend, func() { f.be.Name() })
	require.PanicsWithValue(t, ErrClosedBuffer, func() { f.buf.Size() })
	require.PanicsWithValue(t, ErrClosedAllocator, func() { f.ga.BufferSize(0) })
	require.PanicsWithValue(t, ErrClosedScheduler, func() { f.sc.NSplits() })
}

// Every method of the backend objects, called while other goroutines close
// them, gives a result, an error or an error panic: nothing is freed under
// a call (run with -race).
func TestMethodsConcurrentWithClose(t *testing.T) {
	quietLog(t)
	for range 3 {
		f := newMisuseFixture(t)
		var wg sync.WaitGroup
		for _, o := range f.objects() {
			wg.Go(func() { callEveryMethod(t, "concurrent with Close", o, context.Background(), f.g, f.x, f.be, f.tp) })
		}
		wg.Go(func() {
			if bad := misuseOutcome(func() { _ = f.be.Compute(context.Background(), f.g) }); bad != "" {
				t.Errorf("Compute concurrent with Close: %s", bad)
			}
			f.close()
		})
		wg.Wait()
		f.close()
	}
}

// CPU backends left unclosed, each computed once on a pool of its own, are
// collected: their threads count toward collections like other C resources
// (the charges start collections, counted by cmem), and the workers of the
// backends' own pools (not the process's threads) go away.
func TestUnclosedCPUBackendsAreCollected(t *testing.T) {
	const n, threads = 300, 4
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	x := ctx.NewTensor1D(TypeF32, 4096).Fill(1)
	g := ctx.NewGraph().BuildForward(ctx.Scale(x, 2))
	settle()
	start := ownPoolWorkers()
	collections := cmem.Read().Collections
	peak := 0
	for range n {
		be, err := NewCPUBackend()
		require.NoError(t, err)
		require.NoError(t, be.SetThreads(threads))
		require.NoError(t, be.Compute(context.Background(), g))
		peak = max(peak, ownPoolWorkers()-start)
	}
	// How many threads are alive at the peak depends on how soon the
	// cleanups run, which a loaded machine delays; that the threads' charges
	// started collections does not.
	collections = cmem.Read().Collections - collections
	t.Logf("%d collections started by the charges; at most %d workers of own pools alive for %d unclosed backends of %d threads", collections, peak, n, threads)
	require.Positive(t, collections, "the backends' threads never started a collection")
	for deadline := time.Now().Add(time.Minute); ownPoolWorkers()-start >= peak; {
		require.True(t, time.Now().Before(deadline), "the collector never freed the rest")
		settle()
	}
}

// Close called from two goroutines while a computation uses the buffer:
// neither returns before the buffer is freed and its tensors detached.
func TestBufferCloseFromTwoGoroutinesBothWait(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	f := newTwoBufferContext(t, be)
	ga, err := NewGraphAllocator()
	require.NoError(t, err)
	defer ga.Close()
	require.NoError(t, ga.Alloc(f.g))
	errc := make(chan error, 1)
	go func() { errc <- be.Compute(context.Background(), f.g) }()
	<-f.started
	attached := make(chan bool, 2)
	for range 2 {
		go func() {
			_ = f.first.Close()
			attached <- f.x.HasData()
		}()
	}
	close(f.relse)
	require.NoError(t, <-errc)
	require.False(t, <-attached, "a Close returned before the tensors were detached")
	require.False(t, <-attached, "a Close returned before the tensors were detached")
}

// Close of the Buffer, GraphAllocator and Backend a computation uses, called
// from a custom-op callback of that computation, returns at once (waiting
// would wait for itself) and takes effect when the computation ends.
func TestCloseInCallbackTakesEffectWhenComputeEnds(t *testing.T) {
	quietLog(t)
	for _, which := range []string{"buffer", "allocator", "backend"} {
		be, err := NewCPUBackend()
		require.NoError(t, err)
		ctx, err := NewContext(ContextOptions{MemSize: 16*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
		require.NoError(t, err)
		x := ctx.NewTensor1D(TypeF32, 256)
		buf, err := ctx.AllocTensors(be)
		require.NoError(t, err)
		require.NoError(t, x.SetFloat32s(ramp(256, 1)))
		ga, err := NewGraphAllocator()
		require.NoError(t, err)
		var once sync.Once
		closed := make(chan error, 1)
		y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {
			once.Do(func() {
				switch which {
				case "buffer":
					closed <- buf.Close()
				case "allocator":
					closed <- ga.Close()
				case "backend":
					closed <- be.Close()
				}
			})
		}, 2)
		g := ctx.NewGraph().BuildForward(ctx.Scale(y, 2))
		require.NoError(t, ga.Alloc(g))
		errc := make(chan error, 1)
		go func() { errc <- be.Compute(context.Background(), g) }()
		select {
		case err := <-errc:
			require.NoError(t, err, which)
		case <-time.After(time.Minute):
			t.Fatalf("Close of the %s from a callback: Compute never returned", which)
		}
		require.NoError(t, <-closed)
		switch which {
		case "buffer":
			require.False(t, x.HasData())
			require.PanicsWithValue(t, ErrClosedBuffer, func() { buf.Size() })
		case "allocator":
			require.False(t, y.HasData())
			require.PanicsWithValue(t, ErrClosedAllocator, func() { ga.BufferSize(0) })
		case "backend":
			require.PanicsWithValue(t, ErrClosedBackend, func() { be.Name() })
		}
		require.NoError(t, ga.Close())
		require.NoError(t, buf.Close())
		require.NoError(t, be.Close())
		require.NoError(t, ctx.Close())
	}
}

// Placing a graph (GraphAllocator.Alloc/Reserve, Scheduler.Alloc) while
// another goroutine closes the Buffer that holds the graph's weights either
// succeeds, while the Buffer waits, or fails with an error: the allocators
// never read a buffer that is being freed.
func TestPlacingConcurrentWithBufferClose(t *testing.T) {
	quietLog(t)
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	for i := range 200 {
		ctx, err := NewContext(ContextOptions{MemSize: 8*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
		require.NoError(t, err)
		w := ctx.NewTensor1D(TypeF32, 64)
		buf, err := ctx.AllocTensors(be)
		require.NoError(t, err)
		g := ctx.NewGraph().BuildForward(ctx.Scale(w, 2))
		ga, err := NewGraphAllocator()
		require.NoError(t, err)
		sc, err := NewScheduler([]*Backend{be}, 64, false)
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Go(func() {
			for range i % 7 {
				runtime.Gosched()
			}
			_ = buf.Close()
		})
		for range 20 { // until the Buffer is gone
			switch i % 3 {
			case 0:
				err = ga.Alloc(g)
			case 1:
				err = ga.Reserve(g)
			default:
				err = sc.Alloc(g)
			}
			if err != nil {
				break
			}
		}
		wg.Wait()
		sc.Close()
		ga.Close()
		ctx.Close()
	}
}
