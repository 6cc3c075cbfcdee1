package ggml

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// panicOpError runs f and returns the *OpError it panics with (nil if it
// does not panic).
func panicOpError(t *testing.T, f func()) (oe *OpError) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			require.True(t, ok, "panic value %v", r)
			require.True(t, errors.As(e, &oe), "panic value %v", r)
		}
	}()
	f()
	return nil
}

// An op given operands of shapes it cannot take says which op,
// both shapes and the condition, not only the core's assertion text.
func TestOpErrorNamesOpAndOperandShapes(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor2D(TypeF32, 3, 4)
	b := ctx.NewTensor2D(TypeF32, 5, 2)
	oe := panicOpError(t, func() { ctx.Add(a, b) })
	require.NotNil(t, oe)
	require.Equal(t, "Add", oe.Op)
	for _, want := range []string{"a is f32 [3, 4]", "b is f32 [5, 2]", "lm_ggml_can_repeat(b, a) does not hold"} {
		require.Contains(t, oe.Error(), want)
	}
	require.NotContains(t, oe.Error(), "LM_GGML_ASSERT")

	oe = panicOpError(t, func() { ctx.MulMat(a, b) })
	require.NotNil(t, oe)
	require.True(t, strings.HasPrefix(oe.Error(), "ggml: MulMat: a is f32 [3, 4], b is f32 [5, 2]: "), oe.Error())

	// views and reshapes too
	oe = panicOpError(t, func() { ctx.Reshape(a, b) })
	require.NotNil(t, oe)
	require.True(t, strings.HasPrefix(oe.Error(), "ggml: Reshape: a is f32 [3, 4], b is f32 [5, 2]: "), oe.Error())
	oe = panicOpError(t, func() { ctx.Reshape2D(a, 5, 5) })
	require.NotNil(t, oe)
	require.True(t, strings.HasPrefix(oe.Error(), "ggml: Reshape2D: a is f32 [3, 4]: "), oe.Error())
}

// A graph too small for what is added to it says so and how to
// make a bigger one (the core only says its hash set is full).
func TestGraphTooSmallSaysHowToGrowIt(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 4 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	x := ctx.NewTensor1D(TypeF32, 4)
	y := x
	for range 20 {
		y = ctx.Add(y, ctx.NewTensor1D(TypeF32, 4))
	}
	g := ctx.NewGraphCustom(8, false)
	oe := panicOpError(t, func() { g.BuildForward(y) })
	require.NotNil(t, oe)
	require.Equal(t, "BuildForward", oe.Op)
	require.Contains(t, oe.Msg, "the graph is too small: it has room for 8 nodes")
	require.Contains(t, oe.Msg, "NewGraphCustom(size, grads)")

	// the same graph with room enough builds
	big := ctx.NewGraphCustom(64, false)
	require.Nil(t, panicOpError(t, func() { big.BuildForward(y) }))
}

// recordHandler keeps the records logged through it.
type recordHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

// A failure the library returns as an error is not also logged
// as an ERROR line by the core.
func TestNewContextFailureIsNotAlsoLogged(t *testing.T) {
	h := &recordHandler{}
	SetLogger(slog.New(h))
	defer SetLogger(nil)
	_, err := NewContext(ContextOptions{MemSize: 1 << 50})
	require.Error(t, err)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged %s %q as well as returning %v", r.Level, r.Message, err)
		}
	}
}

// A buffer that cannot be allocated is an error that says why, and the
// core does not also log it.
func TestBufferAllocationFailureIsNotAlsoLogged(t *testing.T) {
	h := &recordHandler{}
	SetLogger(slog.New(h))
	defer SetLogger(nil)
	_, err := CPUBufferType().NewBuffer(1 << 50)
	require.Error(t, err)
	ctx, cerr := NewContext(ContextOptions{MemSize: 4 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, cerr)
	defer ctx.Close()
	ctx.NewTensor1D(TypeF32, 1<<48)
	_, aerr := ctx.AllocTensors(CPUBufferType())
	require.Error(t, aerr)
	t.Logf("errors: %v; %v", err, aerr)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged %s %q as well as returning an error", r.Level, r.Message)
		}
	}
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
