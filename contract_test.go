package ggml

// One test per rule of the Contract in doc.go, named after the rule.

import (
	"context"
	"encoding/binary"
	"errors"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/cmem"
)

// ---------------------------------------------------------------- helpers

// procStat reads a number of the process from /proc (skipping the test where
// there is no /proc): resident bytes, mappings or threads.
func procStat(t *testing.T, what string) int64 {
	t.Helper()
	switch what {
	case "rss":
		b, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			t.Skip("no /proc/self/statm")
		}
		n, _ := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
		return n * int64(os.Getpagesize())
	case "maps":
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps")
		}
		return int64(strings.Count(string(b), "\n"))
	case "threads":
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			t.Skip("no /proc/self/status")
		}
		m := regexp.MustCompile(`(?m)^Threads:\s+(\d+)`).FindSubmatch(b)
		require.NotNil(t, m)
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return n
	}
	panic(what)
}

// settle collects until the cleanups of what became unreachable have run.
func settle() {
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// writeTestGGUF writes a file with one f32 tensor "w" of n elements 0, 1, 2, ...
func writeTestGGUF(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.gguf")
	w, err := gguf.Create(path)
	require.NoError(t, err)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i % 1000)
	}
	data := make([]byte, 4*n)
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	require.NoError(t, w.SetString("general.name", "contract"))
	require.NoError(t, w.AddTensor("w", gguf.TensorF32, []int64{int64(n)}, data))
	require.NoError(t, w.Close())
	return path
}

// recovered runs f and returns its panic value (nil if it returned).
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// ---------------------------------------------------------------- ownership

// A Tensor keeps its Context: with only the tensor referenced, collections
// do not free the arena.
func TestContractTensorKeepsContext(t *testing.T) {
	x := func() *Tensor {
		ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		return ctx.NewTensor1D(TypeF32, 1000).Fill(7)
	}()
	settle()
	v, err := x.Float32s()
	require.NoError(t, err)
	require.Equal(t, float32(7), v[999])
}

// A Graph keeps its Context and the contexts its nodes take tensors from.
func TestContractGraphKeepsContexts(t *testing.T) {
	var out weak.Pointer[Context]
	g, y := func() (*Graph, *Tensor) {
		in, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		x := in.NewTensor1D(TypeF32, 100).Fill(3)
		ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		out = weak.Make(in)
		y := ctx.Scale(x, 2)
		return ctx.NewGraph().BuildForward(y), y
	}()
	settle()
	require.NotNil(t, out.Value(), "the input context was collected under a graph that uses it")
	require.NoError(t, g.Compute(2))
	require.Equal(t, float32(6), y.F32(99))
}

// A Context keeps the gguf.File its no-copy tensors point into: dropping the
// File does not unmap the data.
func TestContractContextKeepsMappedFile(t *testing.T) {
	path := writeTestGGUF(t, 4096)
	w := func() *Tensor {
		f, err := gguf.Open(path)
		require.NoError(t, err)
		ctx, err := NewContext(ContextOptions{MemSize: GGUFContextSize(f, false) + 1<<16})
		require.NoError(t, err)
		ts, err := ctx.LoadGGUF(f, false)
		require.NoError(t, err)
		return ts["w"]
	}()
	settle()
	v, err := w.Float32s()
	require.NoError(t, err)
	require.Equal(t, float32(4095%1000), v[4095])
}

// Computing keeps the graph, and through it its contexts, alive until the
// computation is over, even when Compute is the caller's last use of them.
func TestContractComputeKeepsItsGraph(t *testing.T) {
	var ctxRef weak.Pointer[Context]
	collected := false
	err := func() error {
		ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		ctxRef = weak.Make(ctx)
		x := ctx.NewTensor1D(TypeF32, 256).Fill(1)
		y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {
			settle()
			collected = collected || ctxRef.Value() == nil
		}, 1)
		return ctx.NewGraph().BuildForward(y).Compute(1)
	}()
	require.NoError(t, err)
	require.False(t, collected, "the context was collected during its computation")
}

// Close does not wait for dependents: they fail from then on, with ErrClosed.
func TestContractCloseFailsDependents(t *testing.T) {
	in, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	ctx := newCtx(t, 1<<20)
	x := in.NewTensor1D(TypeF32, 8).Fill(1)
	y := ctx.Scale(x, 2)
	g := ctx.NewGraph().BuildForward(y)
	require.NoError(t, in.Close())
	require.NoError(t, in.Close(), "Close is idempotent")
	require.Equal(t, ErrClosed, recovered(func() { x.Fill(2) }))
	require.Equal(t, ErrClosed, recovered(func() { _ = g.Compute(1) }), "a graph using a closed context")
	require.Equal(t, ErrClosed, recovered(func() { in.NewTensor1D(TypeF32, 1) }))

	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	require.NoError(t, tp.Close())
	require.Equal(t, ErrClosedThreadpool, recovered(func() { tp.NThreads() }))
}

// Unclosed contexts, pools and files are released by the collector, and
// what they held is given back to the accounting.
func TestContractCollectorReleasesUnclosed(t *testing.T) {
	path := writeTestGGUF(t, 1024)
	settle()
	before := cmem.Read().Live
	func() {
		for range 8 {
			ctx, err := NewContext(ContextOptions{MemSize: 4 << 20})
			require.NoError(t, err)
			ctx.NewTensor1D(TypeF32, 1000).Fill(1)
			_, err = NewThreadpool(DefaultThreadpoolParams(2))
			require.NoError(t, err)
			f, err := gguf.Open(path)
			require.NoError(t, err)
			_, err = f.String("general.name")
			require.NoError(t, err)
		}
		require.Greater(t, cmem.Read().Live, before+8*(4<<20))
	}()
	settle()
	require.Equal(t, before, cmem.Read().Live, "charged bytes left after the owners were collected")
}

// 64 unclosed contexts of 64 MiB, each filled, with no runtime.GC of the
// program: resident memory stays far below the 4 GiB they add up to.
func TestContractRSSBoundedUnclosedArenas(t *testing.T) {
	const size, n = 64 << 20, 64
	settle()
	start := procStat(t, "rss")
	peak := int64(0)
	for range n {
		ctx, err := NewContext(ContextOptions{MemSize: size})
		require.NoError(t, err)
		ctx.NewTensor1D(TypeF32, (size-4096)/4).Zero() // touches every page
		peak = max(peak, procStat(t, "rss")-start)
	}
	t.Logf("RSS growth peak %d MiB for %d unclosed contexts of %d MiB", peak>>20, n, size>>20)
	require.Less(t, peak, int64(512<<20))
}

// Unclosed backend buffers and graph allocators, each filled, with no
// runtime.GC of the program: resident memory stays bounded as well.
func TestContractRSSBoundedUnclosedBackendMemory(t *testing.T) {
	const elems, n = 8 << 20, 48 // 32 MiB per buffer and per compute buffer
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	settle()
	start := procStat(t, "rss")
	peak := int64(0)
	for range n {
		wctx, err := NewContext(ContextOptions{MemSize: 16 * TensorOverhead(), NoAlloc: true})
		require.NoError(t, err)
		w := wctx.NewTensor1D(TypeF32, elems)
		buf, err := wctx.AllocTensors(be)
		require.NoError(t, err)
		require.NoError(t, buf.Clear(1)) // touches every page
		gctx, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
		require.NoError(t, err)
		y := gctx.Scale(w, 2).SetOutput()
		g := gctx.NewGraph().BuildForward(y)
		ga, err := NewGraphAllocator()
		require.NoError(t, err)
		require.NoError(t, ga.Alloc(g))
		require.NoError(t, be.Compute(context.Background(), g)) // writes every page of the compute buffer
		peak = max(peak, procStat(t, "rss")-start)
	}
	t.Logf("RSS growth peak %d MiB for %d unclosed buffers and allocators of %d MiB each", peak>>20, n, elems*4>>20)
	require.Less(t, peak, int64(512<<20))
}

// Unclosed files whose no-copy tensors were computed on (every page of the
// mapping read) stay bounded too: in resident memory and in mappings.
func TestContractRSSBoundedUnclosedFiles(t *testing.T) {
	const elems, n = 8 << 20, 48 // 32 MiB of tensor data per file
	path := writeTestGGUF(t, elems)
	settle()
	start, startMaps := procStat(t, "rss"), procStat(t, "maps")
	peak, peakMaps := int64(0), int64(0)
	for range n {
		f, err := gguf.Open(path)
		require.NoError(t, err)
		ctx, err := NewContext(ContextOptions{MemSize: GGUFContextSize(f, false) + GraphOverhead(DefaultGraphSize, false) + 1<<16})
		require.NoError(t, err)
		ts, err := ctx.LoadGGUF(f, false)
		require.NoError(t, err)
		s := ctx.Sum(ts["w"])
		require.NoError(t, ctx.NewGraph().BuildForward(s).Compute(1))
		peak = max(peak, procStat(t, "rss")-start)
		peakMaps = max(peakMaps, procStat(t, "maps")-startMaps)
	}
	t.Logf("RSS growth peak %d MiB, %d more mappings, for %d unclosed files of %d MiB", peak>>20, peakMaps, n, elems*4>>20)
	require.Less(t, peak, int64(512<<20))
	require.Less(t, peakMaps, int64(n/2))
}

// Unclosed thread pools are collected before their threads pile up.
func TestContractUnclosedThreadpoolsBounded(t *testing.T) {
	settle()
	start := procStat(t, "threads")
	peak := int64(0)
	for range 300 {
		_, err := NewThreadpool(DefaultThreadpoolParams(4))
		require.NoError(t, err)
		peak = max(peak, procStat(t, "threads")-start)
	}
	t.Logf("thread count grew by at most %d for 300 unclosed pools of 4", peak)
	require.Less(t, peak, int64(600))
}

// ---------------------------------------------------------------- errors and panics

// Programmer errors while building graphs panic with an *OpError that
// recover can inspect.
func TestContractProgrammerErrorsPanicOpError(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	a := ctx.NewTensor2D(TypeF32, 4, 3)
	b := ctx.NewTensor2D(TypeF32, 5, 3)
	for name, f := range map[string]func(){
		"MulMat":         func() { ctx.MulMat(a, b) },
		"Add":            func() { ctx.Add(a, ctx.NewTensor1D(TypeF32, 7)) },
		"Permute":        func() { ctx.Permute(a, 0, 0, 1, 2) },
		"NewTensor":      func() { ctx.NewTensor(TypeF32, 1, 2, 3, 4, 5) },
		"F32":            func() { a.F32(4) },
		"NewGraphCustom": func() { ctx.NewGraphCustom(0, false) },
	} {
		v := recovered(f)
		err, ok := v.(error)
		require.True(t, ok, "%s: panic value %v is not an error", name, v)
		var oe *OpError
		require.True(t, errors.As(err, &oe), "%s: %v is not an *OpError", name, err)
		require.Equal(t, name, oe.Op)
	}
}

// Using a closed object panics with ErrClosed (ErrClosedThreadpool).
func TestContractClosedObjectsPanicErrClosed(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	x := ctx.NewTensor1D(TypeF32, 4)
	g := ctx.NewGraph().BuildForward(ctx.Sqr(x))
	require.NoError(t, ctx.Close())
	for name, f := range map[string]func(){
		"Context.UsedMem": func() { ctx.UsedMem() },
		"Tensor.Shape":    func() { x.Shape() },
		"Tensor.Float32s": func() { _, _ = x.Float32s() },
		"Graph.NNodes":    func() { g.NNodes() },
		"Graph.Compute":   func() { _ = g.Compute(1) },
	} {
		err, _ := recovered(f).(error)
		require.ErrorIs(t, err, ErrClosed, name)
	}
}

// Problems in data and I/O are errors, never panics.
func TestContractDataProblemsReturnErrors(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	x := ctx.NewTensor1D(TypeF32, 4)
	_, err := NewContext(ContextOptions{MemSize: -1})
	require.Error(t, err)
	require.Error(t, x.SetFloat32s([]float32{1, 2, 3}), "a slice that does not match the tensor")
	_, err = Quantize(TypeQ4_0, make([]float32, 33), 33, nil)
	require.Error(t, err)
	_, err = Dequantize(TypeQ4_0, make([]byte, 3), 32)
	require.Error(t, err)
	require.Error(t, ValidateRowData(TypeF32, []byte{0, 0, 0xc0, 0x7f}), "a NaN")
	require.Error(t, ctx.NewGraph().BuildForward(ctx.Sqr(x)).Compute(0))

	y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) { panic("callback failed") }, 1)
	err = ctx.NewGraph().BuildForward(y).Compute(2)
	var pe *CustomOpPanicError
	require.ErrorAs(t, err, &pe)

	_, err = gguf.OpenBytes([]byte("GGUF not really"), gguf.Options{})
	var fe *gguf.FormatError
	require.ErrorAs(t, err, &fe)
	_, err = gguf.Open(filepath.Join(t.TempDir(), "missing.gguf"))
	require.ErrorIs(t, err, os.ErrNotExist)

	f, err := gguf.Open(writeTestGGUF(t, 1<<16))
	require.NoError(t, err)
	defer f.Close()
	small := newCtx(t, 4096)
	_, err = small.LoadGGUF(f, true)
	require.Error(t, err, "a context too small for the file")
}

// Nothing ends the process: each of these misuses gives an error or a
// recoverable panic with a typed value (a signal would end this test binary).
func TestContractNothingEndsTheProcess(t *testing.T) {
	typed := func(v any) bool {
		err, ok := v.(error)
		if !ok {
			return false
		}
		var oe *OpError
		return errors.As(err, &oe) || errors.Is(err, ErrClosed) || errors.Is(err, ErrClosedThreadpool)
	}
	ctx := newCtx(t, 1<<20)
	na, err := NewContext(ContextOptions{MemSize: 1 << 16, NoAlloc: true})
	require.NoError(t, err)
	defer na.Close()
	closed, err := NewContext(ContextOptions{MemSize: 1 << 16})
	require.NoError(t, err)
	ct := closed.NewTensor1D(TypeF32, 4)
	require.NoError(t, closed.Close())
	a := ctx.NewTensor2D(TypeF32, 4, 4)
	for i, f := range []func() error{
		func() error { ctx.NewTensor1D(TypeF32, 1<<40); return nil },
		func() error { ctx.Reshape2D(a, 3, 3); return nil },
		func() error { ctx.MulMat(a, ct); return nil },
		func() error { _, err := na.NewTensor1D(TypeF32, 4).Float32s(); return err },
		func() error { return ctx.NewGraph().BuildForward(ctx.Sqr(ct)).Compute(1) },
		func() error { ctx.NewGraphCustom(1, false).BuildForward(ctx.Sqr(ctx.Sqr(a))); return nil },
		func() error { _, err := Quantize(Type(999), make([]float32, 32), 32, nil); return err },
		func() error { _, err := gguf.OpenBytes(nil, gguf.Options{}); return err },
	} {
		var err error
		v := recovered(func() { err = f() })
		require.True(t, err != nil || typed(v), "misuse %d gave neither an error nor a typed panic (panic %v)", i, v)
	}
}

// Nil operands are programmer errors like any other: an *OpError, never a
// signal.
func TestContractNilOperandsPanicOpError(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	a := ctx.NewTensor1D(TypeF32, 4)
	for name, f := range map[string]func(){
		"DupTensor":  func() { ctx.DupTensor(nil) },
		"ViewTensor": func() { ctx.ViewTensor(nil) },
		"View1D":     func() { ctx.View1D(nil, 1, 0) },
		"Reshape1D":  func() { ctx.Reshape1D(nil, 1) },
		"Reshape":    func() { ctx.Reshape(a, nil) },
		"Permute":    func() { ctx.Permute(nil, 0, 1, 2, 3) },
		"Transpose":  func() { ctx.Transpose(nil) },
		"SameShape":  func() { a.SameShape(nil) },
		"CanRepeat":  func() { a.CanRepeat(nil) },
	} {
		var oe *OpError
		err, _ := recovered(f).(error)
		require.True(t, errors.As(err, &oe), "%s(nil): %v", name, err)
	}
}

// ---------------------------------------------------------------- threads

// Functions without a receiver may be called from any goroutine at once;
// separate contexts are used in parallel; data of a context nobody modifies
// is read in parallel.
func TestContractConcurrentUse(t *testing.T) {
	shared := newCtx(t, 1<<20)
	sx := shared.NewTensor1D(TypeF32, 1000).Fill(5)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			src := make([]float32, 256)
			for i := range src {
				src[i] = float32(i*w) / 100
			}
			q, err := Quantize(TypeQ8_0, src, 256, nil)
			if err == nil {
				_, err = Dequantize(TypeQ8_0, q, 256)
			}
			if _, e := TypeTraits(TypeQ4_K); err == nil {
				err = e
			}
			ctx, e := NewContext(ContextOptions{MemSize: 1 << 20})
			if err == nil {
				err = e
			}
			if err == nil {
				y := ctx.Scale(ctx.NewTensor1D(TypeF32, 64).Fill(float32(w)), 2)
				err = ctx.NewGraph().BuildForward(y).Compute(1)
				if err == nil && y.F32(63) != float32(2*w) {
					err = errors.New("wrong result in a parallel context")
				}
				ctx.Close()
			}
			if v, e := sx.Float32s(); err == nil && (e != nil || v[999] != 5) {
				err = errors.New("parallel read of shared data failed")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// Computations of one graph run one after the other when Compute is called
// from several goroutines at once.
func TestContractGraphComputeSerializes(t *testing.T) {
	ctx := newCtx(t, 4<<20)
	x := ctx.NewTensor1D(TypeF32, 4096).Fill(1)
	acc := ctx.NewTensor1D(TypeF32, 4096).Fill(0)
	y := ctx.AddInplace(acc, x) // every computation adds 1 to acc
	g := ctx.NewGraph().BuildForward(y)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- g.Compute(2) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, float32(8), acc.F32(4095))
}

// A Threadpool is safe for concurrent use; its computations run one after
// the other.
func TestContractThreadpoolConcurrent(t *testing.T) {
	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	defer tp.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for w := range 6 {
		wg.Go(func() {
			ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
			if err != nil {
				errs <- err
				return
			}
			defer ctx.Close()
			y := ctx.Scale(ctx.NewTensor1D(TypeF32, 1024).Fill(float32(w)), 3)
			g := ctx.NewGraph().BuildForward(y)
			for range 5 {
				if err := g.ComputeWith(tp); err != nil {
					errs <- err
					return
				}
			}
			if y.F32(1023) != float32(3*w) {
				errs <- errors.New("wrong result on a shared pool")
				return
			}
			errs <- nil
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// Compute without a Threadpool runs on a pool the process keeps between
// computations (one at most, its threads asleep while idle;
// ReleaseCachedThreadpool frees it); computations running at the same time
// each get threads of their own (TestComputeConcurrentThreadCounts).
func TestContractComputeCachedPool(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	y := ctx.Scale(ctx.NewTensor1D(TypeF32, 4096).Fill(2), 3)
	g := ctx.NewGraph().BuildForward(y)
	cpu := func() time.Duration { return processCPUTime(t) }
	for _, n := range []int{2, 4} {
		for range 20 {
			require.NoError(t, g.Compute(n))
		}
		require.Equal(t, float32(6), y.F32(4095))
		c0 := cpu()
		time.Sleep(200 * time.Millisecond)
		idle := cpu() - c0
		require.Less(t, idle, 20*time.Millisecond, "CPU used over 200 ms after Compute(%d)", n)
	}
	// the pool of 4 stayed (a pool of 2 came back first and was dropped for
	// it): releasing stops its 3 workers; the Go runtime may start a thread
	// meanwhile, so a few tries
	for try := 0; ; try++ {
		require.NoError(t, g.Compute(4))
		before := procStat(t, "threads")
		ReleaseCachedThreadpool()
		after := procStat(t, "threads")
		if before-after == 3 || try == 4 {
			require.Equal(t, int64(3), before-after, "threads stopped by ReleaseCachedThreadpool")
			break
		}
	}
	require.NoError(t, g.Compute(2))
}

// Custom-op callbacks run on the computation's worker threads, up to nTasks
// at once, each with its own ith; a panic in one is an error of Compute.
func TestContractCustomOpCallbacksOnWorkers(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	x := ctx.NewTensor2D(TypeF32, 16, 8).Fill(2)
	var mu sync.Mutex
	seen := map[int]int{}
	y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {
		mu.Lock()
		seen[ith] = nth
		mu.Unlock()
		for r := ith; r < 8; r += nth {
			for c := range 16 {
				dst.SetF32(a.F32(c, r)+1, c, r)
			}
		}
	}, 3)
	require.NoError(t, ctx.NewGraph().BuildForward(y).Compute(4))
	require.Equal(t, map[int]int{0: 3, 1: 3, 2: 3}, seen, "min(nTasks, threads) tasks, each ith once")
	v, err := y.Float32s()
	require.NoError(t, err)
	for _, e := range v {
		require.Equal(t, float32(3), e)
	}
}

// A callback that closes its context does so when the computation ends; one
// that calls runtime.Goexit or computes makes Compute return an error. The
// process lives on.
func TestContractCustomOpMisuseIsAnError(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	x := ctx.NewTensor1D(TypeF32, 4).Fill(1)
	y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) { ctx.Close() }, 1)
	require.NoError(t, ctx.NewGraph().BuildForward(y).Compute(1))
	require.True(t, ctx.Closed())
	require.PanicsWithValue(t, ErrClosed, func() { x.Shape() })
	ctx3 := newCtx(t, 1<<20)
	var inner error
	w := ctx3.MapCustom1(ctx3.NewTensor1D(TypeF32, 4), func(dst, a *Tensor, ith, nth int) {
		inner = ctx3.NewGraph().BuildForward(a).Compute(1)
	}, 1)
	require.NoError(t, ctx3.NewGraph().BuildForward(w).Compute(1))
	require.ErrorIs(t, inner, ErrInCallback)
	ctx2 := newCtx(t, 1<<20)
	z := ctx2.MapCustom1(ctx2.NewTensor1D(TypeF32, 4), func(dst, a *Tensor, ith, nth int) { runtime.Goexit() }, 2)
	require.Error(t, ctx2.NewGraph().BuildForward(z).Compute(2))
}

// ---------------------------------------------------------------- versions

// A name marked Deprecated names its replacement, which exists and is not
// deprecated itself.
func TestContractDeprecatedNamesNameReplacements(t *testing.T) {
	// The checker itself, on a package with one good and one bad alias.
	bad := deprecatedWithoutReplacement(t, map[string]string{"a.go": `package p
// OpMulMatID is the op.
const OpMulMatID = 1
// OpMulMatId is the old name.
//
// Deprecated: use OpMulMatID.
const OpMulMatId = OpMulMatID
// Old is gone.
//
// Deprecated: use nothing.
func Old() {}
`})
	require.Equal(t, []string{"Old"}, bad)

	for _, dir := range []string{".", "gguf"} {
		files := map[string]string{}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				b, err := os.ReadFile(filepath.Join(dir, n))
				require.NoError(t, err)
				files[n] = string(b)
			}
		}
		require.Empty(t, deprecatedWithoutReplacement(t, files), "in %s", dir)
	}
}

// deprecatedWithoutReplacement lists the exported names of a package (file
// name -> source) whose Deprecated paragraph names no exported identifier
// that exists and is not deprecated itself.
func deprecatedWithoutReplacement(t *testing.T, src map[string]string) []string {
	fset := token.NewFileSet()
	var files []*ast.File
	for name, text := range src {
		f, err := parser.ParseFile(fset, name, text, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	dp, err := doc.NewFromFiles(fset, files, "x", doc.AllDecls)
	require.NoError(t, err)
	docs := map[string]string{} // exported name -> its doc
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				docs[n] = v.Doc
			}
		}
	}
	values(dp.Consts)
	values(dp.Vars)
	for _, f := range dp.Funcs {
		docs[f.Name] = f.Doc
	}
	for _, ty := range dp.Types {
		docs[ty.Name] = ty.Doc
		values(ty.Consts)
		values(ty.Vars)
		for _, f := range append(ty.Funcs, ty.Methods...) {
			docs[f.Name] = f.Doc
		}
	}
	word := regexp.MustCompile(`[A-Z][A-Za-z0-9_]*`)
	var bad []string
	for name, d := range docs {
		i := strings.Index(d, "Deprecated:")
		if !ast.IsExported(name) || i < 0 {
			continue
		}
		ok := false
		for _, w := range word.FindAllString(d[i+len("Deprecated:"):], -1) {
			if rd, found := docs[w]; found && w != name && !strings.Contains(rd, "Deprecated:") {
				ok = true
			}
		}
		if !ok {
			bad = append(bad, name)
		}
	}
	return bad
}
