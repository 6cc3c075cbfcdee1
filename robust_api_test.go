package ggml

// Tests of the Go-manners part of issue 11 (new API: cancellation, errors of
// DumpDot, ...).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/require"
)

// A computation started from inside a callback returns ErrInCallback instead
// of waiting for itself.
func TestRobustComputeInCallback(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		ctx := newCtx(t, 1<<20)
		tp, err := NewThreadpool(DefaultThreadpoolParams(2))
		require.NoError(t, err)
		defer tp.Close()
		x := ctx.NewTensor1D(TypeF32, 8).Fill(1)
		var g *Graph
		errs := make(chan error, 16)
		y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {
			errs <- g.Compute(1)
			errs <- g.ComputeWith(tp)
			if ith == 0 { // a context is not for concurrent use: one task builds in it
				errs <- ctx.NewGraph().BuildForward(ctx.Scale(x, 2)).Compute(1)
			}
			v := panicValue(func() { g.Reset() })
			errs <- v.(error)
		}, 2)
		g = ctx.NewGraphCustom(DefaultGraphSize, false).BuildForward(y)
		require.NoError(t, g.ComputeWith(tp))
		close(errs)
		inCallback, opErrors := 0, 0 // the two tasks' reports interleave
		for err := range errs {
			var oe *OpError
			switch {
			case errors.Is(err, ErrInCallback):
				inCallback++
			case errors.As(err, &oe):
				opErrors++
			default:
				t.Errorf("unexpected %v", err)
			}
		}
		require.Equal(t, 5, inCallback)
		require.Equal(t, 2, opErrors)
	})
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

func TestDumpDotReportsFailure(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	x := ctx.NewTensor1D(TypeF32, 4)
	g := ctx.NewGraph().BuildForward(ctx.Add(x, x))
	path := filepath.Join(t.TempDir(), "g.dot")
	require.NoError(t, g.DumpDot(nil, path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "digraph")
	err = g.DumpDot(g, filepath.Join(t.TempDir(), "missing", "g.dot"))
	require.ErrorIs(t, err, os.ErrNotExist)
	var pe *PathError
	require.ErrorAs(t, err, &pe)
}

func TestValidateRowDataDoesNotLog(t *testing.T) {
	var logged bytes.Buffer
	SetLogger(slog.New(slog.NewTextHandler(&logged, nil)))
	defer SetLogger(nil)
	bad := []byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x3f} // NaN, 1
	err := ValidateRowData(TypeF32, bad)
	require.ErrorContains(t, err, "NaNs")
	err = ValidateRowData(TypeF16, []byte{0x00, 0x7c})
	require.ErrorContains(t, err, "infinities")
	q := make([]byte, TypeQ8_0.Size())
	binary.LittleEndian.PutUint16(q, 0x7e00) // NaN scale
	require.ErrorContains(t, ValidateRowData(TypeQ8_0, q), "nan value at block 0")
	require.Empty(t, logged.String())
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

func TestTrainerOptionsDefaultsPerField(t *testing.T) {
	ctx := newCtx(t, 16<<20)
	w := ctx.SetParam(ctx.NewTensor1D(TypeF32, 4).Fill(1))
	loss := ctx.Sum(ctx.Sqr(w)).SetLoss()
	tr, err := NewTrainer(ctx, loss, TrainerOptions{AdamW: AdamWParams{Alpha: 0.05}, Threads: 1})
	require.NoError(t, err)
	defer tr.Close()
	want := DefaultAdamWParams()
	want.Alpha = 0.05
	require.Equal(t, want, tr.Opt.Params)
	_, err = tr.Step()
	require.NoError(t, err)
}

func TestTypeGGUFConversion(t *testing.T) {
	for ty := Type(0); ty < TypeCount; ty++ {
		g := ty.GGUFType()
		require.Equal(t, ty, TypeFromGGUF(g))
		if ty.valid() {
			require.Equal(t, ty.String(), g.String())
		}
	}
	require.Equal(t, gguf.TensorQ4_K, TypeQ4_K.GGUFType())
	require.Equal(t, OpMulMatID, OpMulMatId) // the deprecated alias
}

// Ints that do not fit a C int are refused, not truncated into another
// (valid-looking) value.
func TestIntArgumentsNotTruncated(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	a := ctx.NewTensor2D(TypeF32, 4, 4).Fill(1)
	g := ctx.NewGraph().BuildForward(ctx.Scale(a, 2))
	requireOpPanic(t, "Node", func() { g.Node(1 << 32) })
	requireOpPanic(t, "Concat", func() { ctx.Concat(a, a, 1<<32) })
	requireOpPanic(t, "Permute", func() { ctx.Permute(a, 1<<32, 1, 2, 3) })
	requireOpPanic(t, "TopK", func() { ctx.TopK(a, 1<<32+1) })
	requireOpPanic(t, "MapCustom1", func() { ctx.MapCustom1(a, func(dst, a *Tensor, ith, nth int) {}, 1<<32+1) })
}
