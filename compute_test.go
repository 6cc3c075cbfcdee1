package ggml

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func randTensor(t testing.TB, ctx *Context, r *rand.Rand, typ Type, shape ...int) *Tensor {
	x := ctx.NewTensor(typ, shape...)
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	require.NoError(t, x.SetFloat32s(v))
	return x
}

// A transformer-like block: results must not depend on the thread count.
func buildBlock(t testing.TB, ctx *Context, r *rand.Rand, wtype Type) *Tensor {
	const d, n = 256, 9
	x := randTensor(t, ctx, r, TypeF32, d, n)
	w1 := randTensor(t, ctx, r, wtype, d, 4*d)
	w2 := randTensor(t, ctx, r, wtype, 4*d, d)
	pos := ctx.NewTensor1D(TypeI32, n)
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	require.NoError(t, pos.SetInt32s(p))
	h := ctx.RMSNorm(x, 1e-6)
	h = ctx.Reshape3D(h, 16, 16, n)
	h = ctx.RopeExt(h, pos, nil, DefaultRopeParams(16, 0))
	h = ctx.Reshape2D(ctx.Cont(h), d, n)
	h = ctx.Silu(ctx.MulMat(w1, h))
	h = ctx.MulMat(w2, h)
	return ctx.SoftMax(ctx.Add(h, x))
}

func TestComputeSameResultOnAnyThreadCount(t *testing.T) {
	for _, wtype := range []Type{TypeF32, TypeF16, TypeQ8_0, TypeQ4_K} {
		t.Run(wtype.String(), func(t *testing.T) {
			ctx := newCtx(t, 64<<20)
			out := buildBlock(t, ctx, rand.New(rand.NewPCG(7, 9)), wtype)
			g := ctx.NewGraph().BuildForward(out)
			var first []float32
			for _, n := range []int{1, 2, 3, 4, 8} {
				require.NoError(t, g.Compute(n))
				got, err := out.Float32s()
				require.NoError(t, err)
				if first == nil {
					first = got
					for _, v := range got {
						require.False(t, math.IsNaN(float64(v)))
					}
					continue
				}
				for i := range got {
					require.Equal(t, math.Float32bits(first[i]), math.Float32bits(got[i]), "threads %d element %d", n, i)
				}
			}
			// a thread pool gives the same, also when reused and paused in between
			tp, err := NewThreadpool(DefaultThreadpoolParams(2))
			require.NoError(t, err)
			defer tp.Close()
			for range 3 {
				require.NoError(t, g.ComputeWith(tp))
				tp.Pause()
			}
			got, _ := out.Float32s()
			require.Equal(t, first, got)
		})
	}
}

// ---------------------------------------------------------------- benchmarks of the hot paths

func benchGraph(b *testing.B, threads int, build func(ctx *Context, r *rand.Rand) (*Tensor, int64)) {
	ctx := newCtx(b, 256<<20)
	out, flops := build(ctx, rand.New(rand.NewPCG(1, 1)))
	g := ctx.NewGraph().BuildForward(out)
	tp, err := NewThreadpool(DefaultThreadpoolParams(threads))
	require.NoError(b, err)
	defer tp.Close()
	require.NoError(b, g.ComputeWith(tp))
	b.ResetTimer()
	for b.Loop() {
		if err := g.ComputeWith(tp); err != nil {
			b.Fatal(err)
		}
	}
	if flops > 0 {
		b.ReportMetric(float64(flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
}

func BenchmarkMulMat(b *testing.B) {
	for _, wt := range []Type{TypeF32, TypeF16, TypeQ8_0, TypeQ4_0, TypeQ4_1, TypeQ5_0, TypeQ5_1, TypeQ2_K, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeIQ4_XS} {
		for _, shape := range []struct{ k, m, n int }{{4096, 4096, 1}, {1024, 1024, 64}} {
			for _, threads := range []int{1, 2} {
				name := wt.String() + "/" + itoa(shape.k) + "x" + itoa(shape.m) + "x" + itoa(shape.n) + "/t" + itoa(threads)
				b.Run(name, func(b *testing.B) {
					benchGraph(b, threads, func(ctx *Context, r *rand.Rand) (*Tensor, int64) {
						w := randTensor(b, ctx, r, wt, shape.k, shape.m)
						x := randTensor(b, ctx, r, TypeF32, shape.k, shape.n)
						return ctx.MulMat(w, x), int64(2 * shape.k * shape.m * shape.n)
					})
				})
			}
		}
	}
}

// Mat-vec with weights of 96 MiB (three times this machine's L3) streamed
// from memory: short rows (K = 768 or 2048, as in small llamas) must not wait
// on the hardware prefetchers. The weights repeat one random row (speed does
// not depend on the values). Reports weights GB/s.
func BenchmarkMulMatVecFromMemory(b *testing.B) {
	const size = 96 << 20
	for _, wt := range []Type{TypeF32, TypeQ8_0, TypeQ4_0, TypeQ5_0, TypeQ4_K, TypeQ6_K} {
		for _, k := range []int{768, 2048} {
			b.Run(wt.String()+"/K"+itoa(k), func(b *testing.B) {
				benchGraph(b, 1, func(ctx *Context, r *rand.Rand) (*Tensor, int64) {
					row := randTensor(b, ctx, r, wt, k, 1).Bytes()
					m := size / len(row)
					w := ctx.NewTensor2D(wt, k, m)
					require.NoError(b, w.SetBytes(bytes.Repeat(row, m)))
					b.SetBytes(int64(m * len(row)))
					return ctx.MulMat(w, randTensor(b, ctx, r, TypeF32, k, 1)), int64(2 * k * m)
				})
			})
		}
	}
}

// The vocabulary projection of a small llama (dim 288, 32000 tokens): rows
// too short for the hardware prefetchers, a matrix larger than the L2. Its
// quantized files hold such 288-wide rows as q5_0 (not whole 256-blocks).
func BenchmarkMulMatShortRows(b *testing.B) {
	for _, wt := range []Type{TypeF32, TypeQ5_0} {
		for _, threads := range []int{1, 2} {
			b.Run(wt.String()+"/288x32000x1/t"+itoa(threads), func(b *testing.B) {
				benchGraph(b, threads, func(ctx *Context, r *rand.Rand) (*Tensor, int64) {
					w := randTensor(b, ctx, r, wt, 288, 32000)
					x := randTensor(b, ctx, r, TypeF32, 288, 1)
					return ctx.MulMat(w, x), int64(2 * 288 * 32000)
				})
			})
		}
	}
}

func BenchmarkElementwise(b *testing.B) {
	ops := map[string]func(ctx *Context, x, y *Tensor) *Tensor{
		"add":      func(ctx *Context, x, y *Tensor) *Tensor { return ctx.Add(x, y) },
		"mul":      func(ctx *Context, x, y *Tensor) *Tensor { return ctx.Mul(x, y) },
		"silu":     func(ctx *Context, x, _ *Tensor) *Tensor { return ctx.Silu(x) },
		"soft_max": func(ctx *Context, x, _ *Tensor) *Tensor { return ctx.SoftMax(x) },
		"rms_norm": func(ctx *Context, x, _ *Tensor) *Tensor { return ctx.RMSNorm(x, 1e-6) },
		"sum_rows": func(ctx *Context, x, _ *Tensor) *Tensor { return ctx.SumRows(x) },
		"sum":      func(ctx *Context, x, _ *Tensor) *Tensor { return ctx.Sum(x) },
		"cross_entropy": func(ctx *Context, x, y *Tensor) *Tensor {
			return ctx.CrossEntropyLoss(x, ctx.SoftMax(y))
		},
	}
	for _, name := range []string{"add", "mul", "silu", "soft_max", "rms_norm", "sum_rows", "sum", "cross_entropy"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(4096 * 256 * 4)
			benchGraph(b, 2, func(ctx *Context, r *rand.Rand) (*Tensor, int64) {
				x := randTensor(b, ctx, r, TypeF32, 4096, 256)
				y := randTensor(b, ctx, r, TypeF32, 4096, 256)
				return ops[name](ctx, x, y), 0
			})
		})
	}
}

func BenchmarkRopeAndAttention(b *testing.B) {
	b.Run("rope", func(b *testing.B) {
		benchGraph(b, 2, func(ctx *Context, r *rand.Rand) (*Tensor, int64) {
			x := randTensor(b, ctx, r, TypeF32, 128, 32, 64)
			pos := ctx.NewTensor1D(TypeI32, 64)
			return ctx.RopeExt(x, pos, nil, DefaultRopeParams(128, 0)), 0
		})
	})
	b.Run("flash_attn_ext", func(b *testing.B) {
		benchGraph(b, 2, func(ctx *Context, r *rand.Rand) (*Tensor, int64) {
			q := randTensor(b, ctx, r, TypeF32, 64, 32, 8)
			k := randTensor(b, ctx, r, TypeF16, 64, 256, 8)
			v := randTensor(b, ctx, r, TypeF16, 64, 256, 8)
			return ctx.FlashAttnExt(q, k, v, nil, 0.125, 0, 0), int64(4 * 64 * 32 * 256 * 8)
		})
	})
}

func BenchmarkFP16Rows(b *testing.B) {
	src := make([]float32, 1<<16)
	for i := range src {
		src[i] = float32(i) * 0.001
	}
	h := make([]uint16, len(src))
	// a row of 64 MB (bench.c's size): the streaming-store path at the AVX2 level
	big := make([]float32, 1<<24)
	for i := range big {
		big[i] = float32(math.Sin(float64(i)*0.001)) * 3
	}
	bigH := make([]uint16, len(big))
	for _, l := range SupportedCPULevels() {
		b.Run("fp32_to_fp16/"+l.String(), func(b *testing.B) {
			require.NoError(b, ForceCPULevel(l))
			defer ResetCPULevel()
			b.SetBytes(int64(4 * len(src)))
			for b.Loop() {
				FP32ToFP16Row(h, src)
			}
		})
		b.Run("fp32_to_fp16_16M/"+l.String(), func(b *testing.B) {
			require.NoError(b, ForceCPULevel(l))
			defer ResetCPULevel()
			b.SetBytes(int64(4 * len(big)))
			for b.Loop() {
				FP32ToFP16Row(bigH, big)
			}
		})
		b.Run("fp16_to_fp32/"+l.String(), func(b *testing.B) {
			require.NoError(b, ForceCPULevel(l))
			defer ResetCPULevel()
			b.SetBytes(int64(4 * len(src)))
			for b.Loop() {
				FP16ToFP32Row(src, h)
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[i:])
}

// BenchmarkMapCustomCall measures the cost of one custom-op callback (an
// empty one): the hand-off to the callback's goroutine and back.
func BenchmarkMapCustomCall(b *testing.B) {
	ctx := newCtx(b, 16<<20)
	y := ctx.NewTensor1D(TypeF32, 16).Fill(1)
	const nodes = 64
	for range nodes {
		y = ctx.MapCustom1(y, func(dst, a *Tensor, ith, nth int) {}, 1)
	}
	g := ctx.NewGraph().BuildForward(y)
	tp, err := NewThreadpool(DefaultThreadpoolParams(1))
	if err != nil {
		b.Fatal(err)
	}
	defer tp.Close()
	b.ResetTimer()
	for range b.N {
		if err := g.ComputeWith(tp); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes), "ns/call")
}

// Run is the one entry point of a CPU computation: context first, then the
// threads or the pool to use.
func TestRunTakesThreadsOrAPool(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor1D(TypeF32, 4).Fill(2)
	y := ctx.Mul(a, a)
	g := ctx.NewGraph().BuildForward(y)
	bg := context.Background()

	require.NoError(t, g.Run(bg, ComputeOptions{})) // all CPUs
	require.Equal(t, float32(4), y.F32(0))
	require.NoError(t, g.Run(bg, ComputeOptions{Threads: 2}))
	require.ErrorContains(t, g.Run(bg, ComputeOptions{Threads: -1}), "out of range")

	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	require.NoError(t, g.Run(bg, ComputeOptions{Threadpool: tp}))
	require.NoError(t, g.Run(bg, ComputeOptions{Threadpool: tp, Threads: 2}))
	require.ErrorContains(t, g.Run(bg, ComputeOptions{Threadpool: tp, Threads: 3}), "pool of 2")
	require.NoError(t, tp.Close())
	require.Panics(t, func() { _ = g.Run(bg, ComputeOptions{Threadpool: tp}) }, "a closed pool")

	var nilCtx context.Context
	var op *OpError
	require.ErrorAs(t, g.Run(nilCtx, ComputeOptions{}), &op, "a nil context")
	require.ErrorAs(t, (*Graph)(nil).Run(bg, ComputeOptions{}), &op, "a nil graph")

	cancelled, cancel := context.WithCancelCause(bg)
	stop := errors.New("stopped by the test")
	cancel(stop)
	require.ErrorIs(t, g.Run(cancelled, ComputeOptions{Threads: 1}), stop)
}

// Tensors without memory (NoAlloc contexts) are an error at compute.
func TestComputeWithoutDataIsAnError(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		na, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
		require.NoError(t, err)
		defer na.Close()
		a := na.NewTensor1D(TypeF32, 64).SetName("a")
		y := na.Add(a, a).SetName("y")
		err = na.NewGraph().BuildForward(y).Compute(2)
		require.ErrorContains(t, err, "ADD (node y)")
		require.ErrorContains(t, err, "no data")
		// an allocated result over operands without memory
		ctx := newCtx(t, 1<<20)
		x := ctx.NewTensor1D(TypeF32, 64).Fill(1)
		err = ctx.NewGraph().BuildForward(ctx.Mul(x, ctx.View1D(a, 64, 0))).Compute(1)
		require.ErrorContains(t, err, "operand a (view) has no data")
		requireOpPanic(t, "Float32s", func() { a.Float32s() })
		// BuildBackward with a NoAlloc static context: the accumulators have no
		// memory, which Compute and Reset report
		w := ctx.SetParam(ctx.NewTensor1D(TypeF32, 4).Fill(1))
		loss := ctx.Sum(ctx.Sqr(w)).SetLoss()
		g := ctx.NewGraphCustom(DefaultGraphSize, true).BuildForward(loss)
		require.NoError(t, g.BuildBackward(na, ctx, true))
		err = g.Compute(2)
		require.ErrorContains(t, err, "has no memory")
		requireOpPanic(t, "Reset", func() { g.Reset() })
	})
}

// One graph computed from several goroutines at once: the
// computations are serialized. A last custom node checks each computation's
// result from inside it (reading outputs after Compute returns would race
// with the next computation).
func TestConcurrentComputesOfOneGraphSerialize(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	x := ctx.NewTensor1D(TypeF32, 4096).Fill(1)
	s := ctx.AddInplace(ctx.Scale(x, 1), x) // 2
	s = ctx.ScaleInplace(s, 3)              // 6, in place: a second computation interleaved would double it
	var bad atomic.Int64
	check := ctx.MapCustom1(s, func(dst, a *Tensor, ith, nth int) {
		v, _ := a.Float32s()
		for _, e := range v {
			if e != 6 {
				bad.Add(1)
				return
			}
		}
	}, 1)
	g := ctx.NewGraph().BuildForward(check)
	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	defer tp.Close()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for range 12 {
				var err error
				if w%2 == 0 {
					err = g.Compute(2)
				} else {
					err = g.ComputeWith(tp)
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, bad.Load(), "computations of one graph interleaved")
}

// Separate contexts on separate goroutines, some sharing one pool (run with -race).
func TestConcurrentGraphsInSeparateContexts(t *testing.T) {
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

func TestComputeContextCancel(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	x := ctx.NewTensor1D(TypeF32, 16).Fill(1)
	cctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var calls atomic.Int64
	stopAt := errors.New("stop here")
	y := x
	for range 20 {
		y = ctx.MapCustom1(y, func(dst, a *Tensor, ith, nth int) {
			if calls.Add(1) == 5 {
				seen := cancelsSeen.Load()
				cancel(stopAt)
				for cancelsSeen.Load() == seen { // the cancellation reaches the core asynchronously
					time.Sleep(time.Millisecond)
				}
			}
			v, _ := a.Float32s()
			for i := range v {
				v[i]++
			}
			dst.SetFloat32s(v)
		}, 1)
	}
	g := ctx.NewGraph().BuildForward(y)
	err := g.ComputeContext(cctx, 2)
	require.ErrorIs(t, err, stopAt)
	n := calls.Load()
	require.Equal(t, int64(5), n, "stops after the node during which it was cancelled")
	// already cancelled: nothing runs
	require.ErrorIs(t, g.ComputeContext(cctx, 2), stopAt)
	require.Equal(t, n, calls.Load())
	// a deadline, on a pool
	tp, err := NewThreadpool(DefaultThreadpoolParams(2))
	require.NoError(t, err)
	defer tp.Close()
	dctx, dcancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer dcancel()
	time.Sleep(time.Millisecond)
	require.ErrorIs(t, g.ComputeWithContext(dctx, tp), context.DeadlineExceeded)
	// a context that is never cancelled changes nothing
	calls.Store(100)
	require.NoError(t, g.ComputeWithContext(context.Background(), tp))
	require.NoError(t, g.ComputeContext(context.TODO(), 3))
	v, err := y.Float32s()
	require.NoError(t, err)
	require.Equal(t, float32(21), v[0])
}

func TestComputeViewsOnlyGraph(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	a := ctx.NewTensor2D(TypeF32, 4, 4)
	v := ctx.Transpose(ctx.View2D(a, 2, 2, a.Nb()[1], 0))
	g := ctx.NewGraph().BuildForward(v)
	require.Equal(t, 2, g.NNodes())
	require.Len(t, g.Leafs(), 1)
	require.Equal(t, v.t, g.Node(-1).t)
	for _, n := range []int{1, 2, 4} {
		require.NoError(t, g.Compute(n))
	}
	require.Error(t, g.Compute(-1))
}
