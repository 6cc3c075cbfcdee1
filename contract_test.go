package ggml

// One test per rule of the Contract in doc.go, named after the rule.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
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

// poolThreads returns the CPU time so far of each thread of the process that
// a thread pool of the core started (the C workers name themselves
// ggml-worker), by thread id, skipping the test where /proc does not tell.
// Counting only these keeps the figures of the pool tests free of the
// threads and CPU time of the Go runtime and of the rest of the process.
func poolThreads(t *testing.T) map[int]time.Duration {
	t.Helper()
	const dir = "/proc/self/task"
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Skip("no /proc/self/task")
	}
	out := map[int]time.Duration{}
	for _, e := range es {
		comm, err := os.ReadFile(filepath.Join(dir, e.Name(), "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "ggml-worker" {
			continue // not a worker, or gone meanwhile
		}
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// schedstat's first field: nanoseconds on a CPU
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		out[tid] = time.Duration(ns)
	}
	return out
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
	require.Equal(t, ErrClosed, panicValue(func() { x.Fill(2) }))
	require.Equal(t, ErrClosed, panicValue(func() { _ = g.Compute(1) }), "a graph using a closed context")
	require.Equal(t, ErrClosed, panicValue(func() { in.NewTensor1D(TypeF32, 1) }))

	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	require.NoError(t, tp.Close())
	require.NoError(t, tp.Close())
	require.Equal(t, ErrClosedThreadpool, panicValue(func() { tp.NThreads() }))
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
	// The cleanups run on the runtime's own goroutine, later on a busy
	// machine: wait for them (garbage of earlier tests may go too).
	for deadline := time.Now().Add(time.Minute); cmem.Read().Live > before; {
		require.True(t, time.Now().Before(deadline), "charged bytes left after the owners were collected: %d, before %d", cmem.Read().Live, before)
		settle()
	}
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

// Unclosed thread pools are collected before their threads pile up. Only
// the pools' own threads are counted (the Go runtime starts threads of its
// own for the cleanups' blocking calls, more on a loaded machine).
func TestContractUnclosedThreadpoolsBounded(t *testing.T) {
	settle()
	start := len(poolThreads(t))
	peak := 0
	for range 300 {
		_, err := NewThreadpool(DefaultThreadpoolParams(4))
		require.NoError(t, err)
		peak = max(peak, len(poolThreads(t))-start)
	}
	t.Logf("pool threads grew by at most %d for 300 unclosed pools of 4 (900 workers)", peak)
	require.Less(t, peak, 600)
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
		v := panicValue(f)
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
		err, _ := panicValue(f).(error)
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
	require.Error(t, ctx.NewGraph().BuildForward(ctx.Sqr(x)).Compute(-1))

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
		v := panicValue(func() { err = f() })
		require.True(t, err != nil || typed(v), "misuse %d gave neither an error nor a typed panic (panic %v)", i, v)
	}
}

// Logging: quiet by default (WARN and ERROR to slog.Default(), an RPC
// server's INFO lines dropped); SetLogger(l) gets every level.
func TestContractLoggingQuietByDefault(t *testing.T) {
	def := &recordHandler{}
	old := slog.Default()
	slog.SetDefault(slog.New(def))
	defer slog.SetDefault(old)
	SetLogger(nil)

	s := startRPCServer(t, 16<<20)
	b, err := DialRPC(context.Background(), s.endpoint)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	s.stop() // waits for the client's session to end: its lines are written
	coreLog(3, "a warning of the core\n")
	coreLog(2, "an info line of the core\n")
	def.mu.Lock()
	var warned bool
	for _, r := range def.recs {
		require.GreaterOrEqual(t, r.Level, slog.LevelWarn, "logged by default: %s %q", r.Level, r.Message)
		warned = warned || r.Message == "a warning of the core"
	}
	def.mu.Unlock()
	require.True(t, warned, "a WARN message reaches slog.Default()")

	asked := &recordHandler{}
	SetLogger(slog.New(asked))
	defer SetLogger(nil)
	s = startRPCServer(t, 16<<20)
	b, err = DialRPC(context.Background(), s.endpoint)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	s.stop()
	asked.mu.Lock()
	defer asked.mu.Unlock()
	var connected bool
	for _, r := range asked.recs {
		connected = connected || (r.Level == slog.LevelInfo && strings.Contains(r.Message, "connected"))
	}
	require.True(t, connected, "with SetLogger, the server's INFO lines are logged")
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
		err, _ := panicValue(f).(error)
		require.True(t, errors.As(err, &oe), "%s(nil): %v", name, err)
	}
}

// ---------------------------------------------------------------- every method

const nProfiles = 4 // typical, zero, negative, huge

// methodFixture holds the receivers of one call and the values its
// arguments are drawn from.
type methodFixture struct {
	dir        string
	recv, args *Context
	recvT      []*Tensor // receivers of *Tensor methods, per profile
	argT       []*Tensor // *Tensor arguments, per profile
	graph      *Graph    // receiver of *Graph methods
	argGraph   *Graph
	tp         *Threadpool
	file       *gguf.File
	writer     *gguf.Writer
	adamw      *AdamW
	trainer    *Trainer
	closers    []func()
}

func (fx *methodFixture) close() {
	for _, c := range slices.Backward(fx.closers) {
		c()
	}
}

// tensorsOf makes one tensor per profile in ctx: an f32 matrix, an i32
// vector, a transposed (non-contiguous) view, a q4_0 matrix.
func tensorsOf(ctx *Context) []*Tensor {
	m := ctx.NewTensor2D(TypeF32, 4, 4).SetName("m")
	i := ctx.NewTensor1D(TypeI32, 4).SetName("i")
	q := ctx.NewTensor2D(TypeQ4_0, 32, 2).SetName("q")
	if !ctx.NoAlloc() {
		m.Fill(0.5)
		i.Fill(1)
		q.Zero()
	}
	return []*Tensor{m, i, ctx.Transpose(m), q}
}

// newMethodFixture builds the objects of a scenario: "closed" (receivers and
// arguments of a closed context, closed pool, file and writer), "closed-args"
// (open receivers, arguments of a closed context), "foreign" (receivers and
// arguments of two open contexts) and "noalloc" (a NoAlloc context).
func newMethodFixture(t *testing.T, scenario, ggufPath string) *methodFixture {
	fx := &methodFixture{dir: t.TempDir()}
	mk := func(noAlloc bool) *Context {
		c, err := NewContext(ContextOptions{MemSize: 4 << 20, NoAlloc: noAlloc})
		require.NoError(t, err)
		fx.closers = append(fx.closers, func() { c.Close() })
		return c
	}
	fx.recv = mk(scenario == "noalloc")
	fx.args = fx.recv
	if scenario == "closed-args" || scenario == "foreign" {
		fx.args = mk(false)
	}
	fx.recvT = tensorsOf(fx.recv)
	fx.argT = fx.recvT
	if fx.args != fx.recv {
		fx.argT = tensorsOf(fx.args)
	}
	// in "foreign" the receivers use the other context's tensors; in
	// "closed-args" they must not (closing it would close them for use)
	mixed := fx.recvT[0]
	if scenario == "foreign" {
		mixed = fx.argT[0]
	}
	fx.graph = fx.recv.NewGraphCustom(64, true).BuildForward(fx.recv.Add(fx.recvT[0], mixed))
	fx.argGraph = fx.args.NewGraph().BuildForward(fx.args.Scale(fx.argT[0], 2))
	var err error
	fx.tp, err = NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	fx.closers = append(fx.closers, func() { fx.tp.Close() })
	fx.file, err = gguf.Open(ggufPath)
	require.NoError(t, err)
	fx.closers = append(fx.closers, func() { fx.file.Close() })
	fx.writer = gguf.NewWriter(io.Discard)
	require.NoError(t, fx.writer.SetString("general.name", "x"))
	require.NoError(t, fx.writer.DeclareTensor("t", gguf.TensorF32, []int64{4}))

	fx.adamw = NewAdamW(DefaultAdamWParams())
	if scenario != "noalloc" {
		w := fx.recv.SetParam(fx.recv.NewTensor1D(TypeF32, 4).Fill(1))
		loss := fx.recv.Sum(fx.recv.Sqr(fx.recv.Mul(mixed, w))).SetLoss()
		fx.trainer, err = NewTrainer(fx.recv, loss, TrainerOptions{Threads: 1, GraphSize: 256})
		require.NoError(t, err)
		fx.closers = append(fx.closers, func() { fx.trainer.Close() })
		fx.adamw = fx.trainer.Opt
	}
	switch scenario {
	case "closed":
		fx.recv.Close()
		fx.tp.Close()
		fx.file.Close()
		fx.writer.Close()
		if fx.trainer != nil {
			fx.trainer.Close()
		}
	case "closed-args":
		fx.args.Close()
	}
	return fx
}

var (
	typeTensor  = reflect.TypeFor[*Tensor]()
	typeGraph   = reflect.TypeFor[*Graph]()
	typeContext = reflect.TypeFor[*Context]()
	typePool    = reflect.TypeFor[*Threadpool]()
	typeFile    = reflect.TypeFor[*gguf.File]()
	typeWriter  = reflect.TypeFor[*gguf.Writer]()
	typeAny     = reflect.TypeFor[any]()
	typeError   = reflect.TypeFor[error]()
	errStop     = errors.New("stop (generated callback)")
)

// argValue makes an argument of type t for profile p.
func (fx *methodFixture) argValue(t reflect.Type, p int) reflect.Value {
	ints := []int64{2, 0, -1, 1 << 40}
	floats := []float64{1, 0, math.NaN(), math.Inf(1)}
	strs := []string{filepath.Join(fx.dir, "x"), "", filepath.Join(fx.dir, "a\x00b"), filepath.Join(fx.dir, strings.Repeat("n", 80))}
	lens := []int{4, 0, 1, 16}
	switch t {
	case typeTensor:
		return reflect.ValueOf(fx.argT[p])
	case typeGraph:
		return reflect.ValueOf(fx.argGraph)
	case typeContext:
		return reflect.ValueOf(fx.args)
	case typePool:
		return reflect.ValueOf(fx.tp)
	case typeFile:
		return reflect.ValueOf(fx.file)
	case typeWriter:
		return reflect.ValueOf(fx.writer)
	case reflect.TypeFor[Type]():
		return reflect.ValueOf([]Type{TypeF32, TypeI32, Type(200), TypeQ4_0}[p])
	case reflect.TypeFor[gguf.TensorType]():
		return reflect.ValueOf([]gguf.TensorType{gguf.TensorF32, gguf.TensorI32, gguf.TensorType(200), gguf.TensorQ4_0}[p])
	case reflect.TypeFor[ContextOptions]():
		return reflect.ValueOf(ContextOptions{MemSize: []int{1 << 16, 0, -1, 1 << 50}[p]})
	case reflect.TypeFor[ThreadpoolParams]():
		return reflect.ValueOf(DefaultThreadpoolParams(int(ints[p])))
	case typeAny:
		if p == 2 {
			return reflect.Zero(t) // nil
		}
		return reflect.ValueOf([]any{5, []float32{1, 2, 3, 4}, nil, "s"}[p])
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return reflect.ValueOf(ints[p]).Convert(t)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return reflect.ValueOf(uint64(ints[p])).Convert(t)
	case reflect.Float32, reflect.Float64:
		return reflect.ValueOf(floats[p]).Convert(t)
	case reflect.Bool:
		return reflect.ValueOf(p%2 == 1)
	case reflect.String:
		return reflect.ValueOf(strs[p]).Convert(t)
	case reflect.Slice:
		s := reflect.MakeSlice(t, lens[p], lens[p])
		for i := range lens[p] {
			s.Index(i).Set(fx.argValue(t.Elem(), p))
		}
		return s
	case reflect.Array:
		a := reflect.New(t).Elem()
		for i := range a.Len() {
			a.Index(i).Set(fx.argValue(t.Elem(), p))
		}
		return a
	case reflect.Func:
		return reflect.MakeFunc(t, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, t.NumOut())
			for i := range out {
				out[i] = reflect.Zero(t.Out(i))
				if t.Out(i) == typeError {
					out[i] = reflect.ValueOf(&errStop).Elem()
				}
			}
			return out
		})
	case reflect.UnsafePointer:
		if p == 0 {
			return reflect.ValueOf(testNegRowF32)
		}
		return reflect.ValueOf(unsafe.Pointer(nil))
	case reflect.Interface:
		for _, v := range []any{context.Background(), bytes.NewReader(make([]byte, 64)), io.Discard} {
			if reflect.TypeOf(v).Implements(t) {
				return reflect.ValueOf(v)
			}
		}
	}
	return reflect.Zero(t)
}

// receiver is the receiver of type t for profile p, or false if the
// scenario has none.
func (fx *methodFixture) receiver(t reflect.Type, p int) (reflect.Value, bool) {
	var v any
	switch t {
	case typeTensor:
		v = fx.recvT[p]
	case typeGraph:
		v = fx.graph
	case typeContext:
		v = fx.recv
	case typePool:
		v = fx.tp
	case typeFile:
		v = fx.file
	case typeWriter:
		v = fx.writer
	case reflect.TypeFor[*AdamW]():
		v = fx.adamw
	case reflect.TypeFor[*Trainer]():
		if fx.trainer == nil {
			return reflect.Value{}, false
		}
		v = fx.trainer
	}
	return reflect.ValueOf(v), true
}

// callOutcome calls m with args and classifies what happened: "panic:
// <typed error>", "error", "ok", or a failure (an untyped panic).
func callOutcome(m reflect.Value, args []reflect.Value) (outcome string, bad error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err, ok := r.(error)
		var oe *OpError
		switch {
		case ok && (errors.Is(err, ErrClosed) || errors.Is(err, gguf.ErrClosed)):
			outcome = "panic: closed"
		case ok && errors.As(err, &oe):
			outcome = "panic: OpError"
		default:
			outcome, bad = "panic", fmt.Errorf("untyped panic %T: %v", r, r)
		}
	}()
	var out []reflect.Value
	if m.Type().IsVariadic() {
		out = m.CallSlice(args)
	} else {
		out = m.Call(args)
	}
	if n := len(out); n > 0 && out[n-1].Type() == typeError && !out[n-1].IsNil() {
		return "error", nil
	}
	return "ok", nil
}

// okWhenClosed lists the methods that may return normally on a closed object.
var okWhenClosed = map[string]bool{
	"Context.Close": true, "Context.Closed": true,
	"Tensor.Context": true, "Tensor.String": true,
	"Graph.Context":    true,
	"Threadpool.Close": true,
	"File.Close":       true, "File.Mapped": true, "File.Size": true,
	"Writer.Close": true, "Writer.Abort": true, "Writer.MetaSize": true,
	"AdamW.Iter": true, "AdamW.Parameters": true, "AdamW.Moments": true,
	"Trainer.Close": true,
}

// usesClosedArg reports whether a method takes an argument that belongs to a
// context (in the closed-args scenario, a closed one).
func usesClosedArg(mt reflect.Type) bool {
	for i := range mt.NumIn() {
		switch in := mt.In(i); {
		case in == typeTensor || in == typeGraph || in == typeContext:
			return true
		case in.Kind() == reflect.Slice && in.Elem() == typeTensor:
			return true
		}
	}
	return false
}

// Every exported method of the package's main types, called on closed,
// foreign (another context's) and NoAlloc objects with generated arguments,
// must return (an error, or a result) or panic with a typed error (ErrClosed
// or *OpError, or gguf.ErrClosed) — never a signal, a fatal error or a
// runtime panic. Methods are enumerated with reflect, so new ones are covered
// without editing this test; argument values come in profiles (typical, zero,
// negative, huge) so that every method also meets bad numbers.
func TestContractEveryMethodErrorsOrPanicsTyped(t *testing.T) {
	inSubprocess(t, 10*time.Minute, func(t *testing.T) {
		path := writeHalvesGGUF(t)
		types := []reflect.Type{typeContext, typeTensor, typeGraph, typePool, typeFile, typeWriter,
			reflect.TypeFor[*AdamW](), reflect.TypeFor[*Trainer]()}
		calls, failures := 0, 0
		tally := map[string]int{}
		var silent []string
		for _, scenario := range []string{"closed", "closed-args", "foreign", "noalloc"} {
			for _, rt := range types {
				for i := range rt.NumMethod() {
					meth := rt.Method(i)
					name := rt.Elem().Name() + "." + meth.Name
					for p := range nProfiles {
						fx := newMethodFixture(t, scenario, path)
						recv, ok := fx.receiver(rt, p)
						if !ok {
							fx.close()
							continue
						}
						m := recv.Method(i)
						args := make([]reflect.Value, m.Type().NumIn())
						for j := range args {
							args[j] = fx.argValue(m.Type().In(j), p)
						}
						// a crash ends the process: name the call first
						fmt.Fprintf(os.Stderr, "call %s %s profile %d\n", scenario, name, p)
						outcome, bad := callOutcome(m, args)
						calls++
						tally[scenario+" "+outcome]++
						if bad != nil {
							failures++
							t.Errorf("%s: %s profile %d: %v", scenario, name, p, bad)
						}
						if scenario == "closed" && outcome == "ok" && !okWhenClosed[name] {
							silent = append(silent, fmt.Sprintf("%s (profile %d)", name, p))
						}
						if scenario == "closed-args" && outcome == "ok" && usesClosedArg(m.Type()) {
							silent = append(silent, fmt.Sprintf("%s with arguments of a closed context (profile %d)", name, p))
						}
						fx.close()
					}
				}
			}
		}
		slices.Sort(silent)
		silent = slices.Compact(silent)
		for _, s := range silent {
			t.Errorf("closed: %s returned normally: expected an error or a panic with ErrClosed", s)
		}
		t.Logf("%d calls, %d failures; outcomes: %v", calls, failures, tally)
	})
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
//
// Only the pools' threads are measured (poolThreads): the process's CPU time
// and thread count include the Go runtime's and other tests' work, which a
// loaded machine stretches. Asleep means some 200 ms window in which no
// pool thread ran (a worker that kept polling would run in every window);
// the windows repeat until one is quiet or a deadline passes, however slow
// the machine.
func TestContractComputeCachedPool(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	y := ctx.Scale(ctx.NewTensor1D(TypeF32, 4096).Fill(2), 3)
	g := ctx.NewGraph().BuildForward(y)
	asleep := func(n int) {
		t.Helper()
		busy := ""
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			before := poolThreads(t)
			time.Sleep(200 * time.Millisecond)
			after := poolThreads(t)
			busy = ""
			for tid, c := range after {
				if c0, ok := before[tid]; ok && c-c0 > time.Millisecond {
					busy += fmt.Sprintf(" thread %d ran %v;", tid, c-c0)
				}
			}
			if busy == "" {
				return
			}
		}
		t.Fatalf("after Compute(%d), pool threads kept running in every 200 ms window for 30 s:%s", n, busy)
	}
	ReleaseCachedThreadpool()
	others := poolThreads(t) // of pools other tests left to the collector
	for _, n := range []int{2, 4} {
		for range 20 {
			require.NoError(t, g.Compute(n))
		}
		require.Equal(t, float32(6), y.F32(4095))
		asleep(n)
	}
	// the pool of 4 stayed (a pool of 2 came back first and was dropped for
	// it): releasing stops its 3 workers, pool threads started during the
	// test. A computation that another test left running may swap the
	// cached pool meanwhile (the process has one), so a few tries.
	for try := 0; ; try++ {
		if try > 0 {
			ReleaseCachedThreadpool()
			others = poolThreads(t)
			require.NoError(t, g.Compute(4))
		}
		fresh := poolThreads(t)
		for tid := range others {
			delete(fresh, tid)
		}
		ReleaseCachedThreadpool()
		left := poolThreads(t)
		var stopped []int
		for tid := range fresh {
			if _, ok := left[tid]; !ok {
				stopped = append(stopped, tid)
			}
		}
		if len(stopped) == 3 || try == 4 {
			require.Len(t, stopped, 3, "workers stopped by ReleaseCachedThreadpool (of %d pool threads started meanwhile)", len(fresh))
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

// A count of threads is checked by one rule wherever it is given: 0 is
// DefaultThreads(), 1 to MaxThreads itself, anything else an error (not
// clamped, not a panic). Compute(0) used to be an error while
// ComputeOptions{Threads: 0} meant all CPUs, and TrainerOptions' 0 meant
// at most 4.
func TestContractThreadCountsOneRule(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor1D(TypeF32, 4).Fill(1)
	y := ctx.Add(a, a)
	g := ctx.NewGraph().BuildForward(y)
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	trainer := func(threads int) (*Trainer, error) {
		c, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		w := c.SetParam(c.NewTensor1D(TypeF32, 2).Fill(1))
		return NewTrainer(c, c.Sum(c.Sqr(w)), TrainerOptions{Threads: threads})
	}
	for _, n := range []int{-1, -1 << 40, MaxThreads + 1, 1 << 20} {
		require.ErrorContains(t, g.Compute(n), "out of range", "Compute(%d)", n)
		require.ErrorContains(t, g.Run(context.Background(), ComputeOptions{Threads: n}), "out of range", "Run(%d)", n)
		require.ErrorContains(t, be.SetThreads(n), "out of range", "SetThreads(%d)", n)
		_, err := NewThreadpool(ThreadpoolParams{NThreads: n})
		require.ErrorContains(t, err, "out of range", "NewThreadpool(%d)", n)
		_, err = trainer(n)
		require.ErrorContains(t, err, "out of range", "NewTrainer(%d)", n)
		_, err = ResolveThreads(n)
		require.ErrorContains(t, err, "out of range", "ResolveThreads(%d)", n)
	}
	require.Equal(t, min(runtime.NumCPU(), MaxThreads), DefaultThreads())
	for _, n := range []int{0, 1, 3, MaxThreads} {
		want := n
		if n == 0 {
			want = DefaultThreads()
		}
		got, err := ResolveThreads(n)
		require.NoError(t, err)
		require.Equal(t, want, got)
		if n == MaxThreads {
			continue // not started here
		}
		require.NoError(t, g.Compute(n), "Compute(%d)", n)
		require.Equal(t, float32(2), y.F32(0))
		require.NoError(t, g.Run(context.Background(), ComputeOptions{Threads: n}))
		require.NoError(t, be.SetThreads(n))
		tp, err := NewThreadpool(ThreadpoolParams{NThreads: n})
		require.NoError(t, err)
		require.Equal(t, want, tp.NThreads())
		require.NoError(t, tp.Close())
		tr, err := trainer(n)
		require.NoError(t, err)
		require.Equal(t, want, tr.tp.NThreads())
		_, err = tr.Step()
		require.NoError(t, err)
		require.NoError(t, tr.Close())
	}
}
