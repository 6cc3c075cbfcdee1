package ggml

// Tests of issue 11 ("Robustness and Go manners"), one per numbered item.
// Anything that used to crash runs in a subprocess (inSubprocess), so that a
// regression fails the test instead of killing the run.

import (
	"encoding/binary"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/require"
)

const subprocessTimeout = 2 * time.Minute

// Item 1: views must lie inside their source.
func TestRobustViewBounds(t *testing.T) {
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

// Item 2: tensor sizes must not overflow.
func TestRobustTensorSizeOverflow(t *testing.T) {
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

// Item 5: element access to i64 and f64 tensors (CountEqual's result is i64).
func TestRobustElementAccessWideTypes(t *testing.T) {
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

// Item 3: a graph copied into another context keeps the source context
// alive, and reports it closed instead of reading freed memory.
func TestRobustCopyToAcrossContexts(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		build := func() (*Context, *Graph) {
			c1, err := NewContext(ContextOptions{MemSize: 1 << 20})
			require.NoError(t, err)
			x := c1.NewTensor1D(TypeF32, 1024).Fill(2)
			g1 := c1.NewGraph().BuildForward(c1.Scale(c1.Add(x, x), 3))
			g2 := newCtx(t, 1<<20).NewGraph()
			g1.CopyTo(g2)
			return c1, g2
		}
		// the source context is unreachable but for g2: collections must not free it
		_, g2 := build()
		for range 5 {
			runtime.GC()
			newCtx(t, 4<<20).NewTensor1D(TypeF32, 1<<18).Fill(-1) // reuse freed memory
		}
		require.NoError(t, g2.Compute(2))
		out := g2.Node(-1)
		v, err := out.Float32s()
		require.NoError(t, err)
		require.Equal(t, float32(12), v[1023])
		require.NotSame(t, g2.Context(), out.Context(), "the node belongs to the source context")
		// the source context closed: ErrClosed, never freed memory
		c1, g3 := build()
		require.NoError(t, c1.Close())
		v2 := panicValue(func() { g3.Compute(2) })
		require.ErrorIs(t, v2.(error), ErrClosed)
		require.ErrorIs(t, panicValue(func() { g3.Nodes() }).(error), ErrClosed)
	})
}

// Item 4: Grad and GradAcc after the context holding them was closed.
func TestRobustGradAfterClose(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		setup := func() (static, compute *Context, g *Graph, w, loss *Tensor) {
			static, _ = NewContext(ContextOptions{MemSize: 1 << 20})
			compute, _ = NewContext(ContextOptions{MemSize: 1 << 20})
			ctx := newCtx(t, 1<<20)
			w = ctx.SetParam(ctx.NewTensor1D(TypeF32, 4).Fill(3))
			loss = ctx.Sum(ctx.Sqr(w)).SetLoss()
			g = ctx.NewGraphCustom(DefaultGraphSize, true).BuildForward(loss)
			require.NoError(t, g.BuildBackward(static, compute, true))
			require.NoError(t, g.Compute(2))
			require.Same(t, compute, g.Grad(w).Context())
			require.Same(t, static, g.GradAcc(loss).Context())
			return
		}
		static, compute, g, w, loss := setup()
		require.NoError(t, compute.Close())
		require.ErrorIs(t, panicValue(func() { g.Grad(w) }).(error), ErrClosed)
		require.ErrorIs(t, panicValue(func() { g.GradAcc(loss) }).(error), ErrClosed)
		require.NoError(t, static.Close())

		static, compute, g, w, loss = setup()
		gr := g.Grad(w)
		require.NoError(t, static.Close())
		require.ErrorIs(t, panicValue(func() { g.GradAcc(loss) }).(error), ErrClosed)
		require.ErrorIs(t, panicValue(func() { gr.Float32s() }).(error), ErrClosed, "compute depends on the closed static context")
		require.NoError(t, compute.Close())
	})
}

// Item 6: tensors without memory (NoAlloc contexts) are an error at compute.
func TestRobustNoAllocCompute(t *testing.T) {
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
		require.ErrorContains(t, err, "no data")
		requireOpPanic(t, "Reset", func() { g.Reset() })
	})
}

// Item 9: closing contexts and pools from inside a custom-op callback.
func TestRobustCloseInCallback(t *testing.T) {
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

// Item 12: one graph computed from several goroutines at once: the
// computations are serialized. A last custom node checks each computation's
// result from inside it (reading outputs after Compute returns would race
// with the next computation).
func TestRobustConcurrentComputeOneGraph(t *testing.T) {
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

// Item 13: the first computation after BuildBackward gives well-defined
// gradients without Reset, even in an arena full of leftovers.
func TestRobustGradientsWithoutReset(t *testing.T) {
	for _, accumulate := range []bool{false, true} {
		buf := make([]byte, 1<<20)
		for i := 0; i+4 <= len(buf); i += 4 {
			binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(123.5))
		}
		ctx, err := NewContext(ContextOptions{Buffer: buf})
		require.NoError(t, err)
		w := ctx.SetParam(ctx.NewTensor1D(TypeF32, 4))
		require.NoError(t, w.SetFloat32s([]float32{1, 2, 3, 4}))
		loss := ctx.Sum(ctx.Sqr(w)).SetLoss()
		g := ctx.NewGraphCustom(DefaultGraphSize, true).BuildForward(loss)
		require.NoError(t, g.BuildBackward(ctx, ctx, accumulate))
		if accumulate {
			acc, err := g.GradAcc(w).Float32s()
			require.NoError(t, err)
			require.Equal(t, []float32{0, 0, 0, 0}, acc, "accumulators start at 0")
		}
		require.NoError(t, g.Compute(2))
		gr, err := g.Grad(w).Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{2, 4, 6, 8}, gr, "accumulate=%v", accumulate)
		require.NoError(t, ctx.Close())
	}
}

// Item 14: indices out of range fail the computation with an error naming
// the op and the node.
func TestRobustIndexOutOfRange(t *testing.T) {
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

// Item 15: runtime.Goexit in a callback (t.FailNow does it) makes Compute
// return an error, instead of hanging or a fatal error.
func TestRobustGoexitInCallback(t *testing.T) {
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

// writeRobustGGUF writes a GGUF file with an f32 tensor "w" of 16 values i/2.
func writeRobustGGUF(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.gguf")
	w, err := gguf.Create(path)
	require.NoError(t, err)
	data := make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)/2))
	}
	require.NoError(t, w.SetString("general.name", "test"))
	require.NoError(t, w.AddTensor("w", gguf.TensorF32, []int64{16}, data))
	require.NoError(t, w.Close())
	return path
}

// Item 7: a TensorReader read after Close.
func TestRobustTensorReaderAfterClose(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		f, err := gguf.Open(writeRobustGGUF(t))
		require.NoError(t, err)
		r, err := f.TensorReader("w")
		require.NoError(t, err)
		buf := make([]byte, 8)
		_, err = r.ReadAt(buf, 0)
		require.NoError(t, err)
		data, err := f.TensorData("w")
		require.NoError(t, err)
		require.Equal(t, byte(0x40), data[63]) // 7.5
		require.NoError(t, f.Close())
		_, err = r.ReadAt(buf, 0)
		require.ErrorIs(t, err, gguf.ErrClosed)
		_, err = io.ReadAll(r)
		require.ErrorIs(t, err, gguf.ErrClosed)
		_, err = f.TensorData("w")
		require.ErrorIs(t, err, gguf.ErrClosed)
		// a slice of the mapping kept past Close reads zeros, not a fault
		require.Equal(t, make([]byte, 64), append([]byte(nil), data...))
	})
}

// Item 8: tensors of LoadGGUF without copy are read-only and keep the
// mapping alive after the file is closed.
func TestRobustLoadGGUFNoCopy(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		f, err := gguf.Open(writeRobustGGUF(t))
		require.NoError(t, err)
		ctx := newCtx(t, 1<<20)
		ts, err := ctx.LoadGGUF(f, false)
		require.NoError(t, err)
		w := ts["w"]
		require.True(t, w.ReadOnly())
		require.NoError(t, f.Close())
		for range 3 {
			runtime.GC()
		}
		v, err := w.Float32s()
		require.NoError(t, err, "readable after the file is closed")
		require.Equal(t, float32(7.5), v[15])
		require.Equal(t, float32(7.5), w.F32(15))
		// writes through the Go API
		require.Error(t, w.SetFloat32s(make([]float32, 16)))
		require.Error(t, w.SetBytes(make([]byte, 64)))
		requireOpPanic(t, "SetF32", func() { w.SetF32(1, 0) })
		requireOpPanic(t, "Fill", func() { w.Fill(1) })
		requireOpPanic(t, "Zero", func() { w.Zero() })
		view := ctx.View1D(w, 4, 8)
		require.True(t, view.ReadOnly())
		requireOpPanic(t, "SetI32", func() { view.SetI32(1, 0) })
		// writes by computations: in place ops, copies into it, views of it
		x := ctx.NewTensor1D(TypeF32, 16).Fill(1)
		for name, node := range map[string]*Tensor{
			"AddInplace":   ctx.AddInplace(w, x),
			"ScaleInplace": ctx.ScaleInplace(view, 2),
			"Cpy":          ctx.Cpy(x, w),
			"Cpy to view":  ctx.Cpy(ctx.View1D(x, 4, 0), view),
		} {
			err := ctx.NewGraph().BuildForward(node).Compute(2)
			require.ErrorContains(t, err, "read-only", name)
		}
		// reading it in ops is fine
		y := ctx.Add(w, x)
		require.NoError(t, ctx.NewGraph().BuildForward(y).Compute(2))
		require.Equal(t, float32(8.5), y.F32(15))
		v, _ = w.Float32s()
		require.Equal(t, float32(7.5), v[15], "unchanged")
		// the optimizer cannot update a read-only parameter
		p := ctx.SetParam(w)
		loss := ctx.Sum(ctx.Mul(p, x)).SetLoss()
		tr, err := NewTrainer(ctx, loss, TrainerOptions{Threads: 2})
		require.NoError(t, err)
		defer tr.Close()
		_, err = tr.Step()
		require.ErrorContains(t, err, "read-only")
	})
}
