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
	for _, want := range []string{"a is f32 [3, 4]", "b is f32 [5, 2]", "b must broadcast over a"} {
		require.Contains(t, oe.Error(), want)
	}
	require.NotContains(t, oe.Error(), "LM_GGML_ASSERT")
	require.Contains(t, oe.Detail, "lm_ggml_can_repeat(b, a) does not hold (ctor-elementwise.c:")

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

// A shape error says the op, the operands' shapes and the rule in words
// (opRules), not the core's condition, which stays in Detail with its place;
// Error ends with the place.
func TestOpErrorSaysTheRule(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 8 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	f32 := func(shape ...int) *Tensor { return ctx.NewTensor(TypeF32, shape...) }
	f16 := func(shape ...int) *Tensor { return ctx.NewTensor(TypeF16, shape...) }
	i32 := func(shape ...int) *Tensor { return ctx.NewTensor(TypeI32, shape...) }
	cases := []struct {
		op, msg, file string
		f             func()
	}{
		{"MulMat", "a is f32 [4, 3], b is f32 [5, 2]: rows of a and b must have the same length (4 ≠ 5)", "ctor-matmul.c",
			func() { ctx.MulMat(f32(4, 3), f32(5, 2)) }},
		{"MulMat", "a is f32 [4, 3, 2], b is f32 [4, 5, 3]: b's dimensions 2 and 3 (3, 1) must be whole multiples of a's (2, 1)", "ctor-matmul.c",
			func() { ctx.MulMat(f32(4, 3, 2), f32(4, 5, 3)) }},
		{"Add", "a is f32 [3, 4], b is f32 [5, 2]: b must broadcast over a: each dimension of b must divide a's (dimension 0: 5 does not divide 3)", "ctor-elementwise.c",
			func() { ctx.Add(f32(3, 4), f32(5, 2)) }},
		{"Sub", "a is f32 [6, 4], b is f32 [3, 3]: b must broadcast over a: each dimension of b must divide a's (dimension 1: 3 does not divide 4)", "ctor-elementwise.c",
			func() { ctx.Sub(f32(6, 4), f32(3, 3)) }},
		{"MulInplace", "a is f32 [6, 4], b is f32 [6, 4, 2]: b must broadcast over a: each dimension of b must divide a's (dimension 2: 2 does not divide 1)", "ctor-elementwise.c",
			func() { ctx.MulInplace(f32(6, 4), f32(6, 4, 2)) }},
		{"Div", "a is f32 [6], b is f32 [4]: b must broadcast over a: each dimension of b must divide a's (dimension 0: 4 does not divide 6)", "ctor-elementwise.c",
			func() { ctx.Div(f32(6), f32(4)) }},
		{"Concat", "a is f32 [2, 3], b is f32 [2, 4]: a and b must have the same size in every dimension but the one joined; they differ in dimensions 1 (3 ≠ 4)", "ctor-shape.c",
			func() { ctx.Concat(f32(2, 3), f32(2, 4), 0) }},
		{"Concat", "a is f32 [2, 3], b is f16 [2, 3]: a and b must have the same type (f32 ≠ f16)", "ctor-shape.c",
			func() { ctx.Concat(f32(2, 3), f16(2, 3), 1) }},
		{"Concat", "a is f32 [2, 3], b is f32 [2, 3]: dim must be 0, 1, 2 or 3", "ctor-shape.c",
			func() { ctx.Concat(f32(2, 3), f32(2, 3), 4) }},
		{"GetRows", "a is f32 [4, 5, 2], b is i32 [3, 3]: b holds a list of row numbers per matrix of a: its dimension 1 (3) must equal a's dimension 2 (2)", "ctor-copy.c",
			func() { ctx.GetRows(f32(4, 5, 2), i32(3, 3)) }},
		{"GetRows", "a is f32 [4, 5], b is f32 [3]: the row numbers b must be i32 (b is f32)", "ctor-copy.c",
			func() { ctx.GetRows(f32(4, 5), f32(3)) }},
		{"Reshape2D", "a is f32 [3, 4]: a reshape keeps the number of elements: a has 12, the new shape 25", "ggml.c",
			func() { ctx.Reshape2D(f32(3, 4), 5, 5) }},
		{"Reshape2D", "a is f32 [4, 3]: a must be contiguous to be reshaped (Cont makes a contiguous copy)", "ggml.c",
			func() { ctx.Reshape2D(ctx.Transpose(f32(3, 4)), 6, 2) }},
		{"View2D", "a is f32 [3, 4]: the view must lie inside its source: it ends at byte 60, the source has 48", "ggml.c",
			func() { ctx.View2D(f32(3, 4), 3, 4, 12, 12) }},
		{"Cpy", "a is f32 [3, 4], b is f16 [5]: a and b must have the same number of elements (12 ≠ 5)", "ctor-copy.c",
			func() { ctx.Cpy(f32(3, 4), f16(5)) }},
		{"Rope", "a is f32 [8, 2, 3], b is i32 [4]: b holds one position per token: its length (4) must equal a's dimension 2 (3)", "ctor-nn.c",
			func() { ctx.Rope(f32(8, 2, 3), i32(4), 8, 0) }},
		{"RopeExt", "a is f32 [8, 2, 3], b is f32 [3]: the positions b must be i32 (b is f32)", "ctor-nn.c",
			func() { ctx.RopeExt(f32(8, 2, 3), f32(3), nil, RopeParams{NDims: 8}) }},
		{"RopeExt", "a is f32 [8, 2, 3], b is i32 [3], freqFactors is f32 [2]: the frequency factors must hold NDims/2 values or more (they hold 2)", "ctor-nn.c",
			func() { ctx.RopeExt(f32(8, 2, 3), i32(3), f32(2), RopeParams{NDims: 8}) }},
		{"SoftMaxExt", "a is f32 [8, 4], mask is f32 [7, 4]: the mask's rows must be as long as a's (7 ≠ 8)", "ctor-norm.c",
			func() { ctx.SoftMaxExt(f32(8, 4), f32(7, 4), 1, 0) }},
		{"SoftMaxExt", "a is f32 [8, 4], mask is f16 [8, 2]: the mask must have a row for each of a's 4 rows (it has 2)", "ctor-norm.c",
			func() { ctx.SoftMaxExt(f32(8, 4), f16(8, 2), 1, 0) }},
		{"SoftMaxExt", "a is f32 [8, 4]: maxBias > 0 needs a mask", "ctor-norm.c",
			func() { ctx.SoftMaxExt(f32(8, 4), nil, 1, 8) }},
		{"FlashAttnExt", "q is f32 [32, 5, 4], k is f16 [64, 10, 4], v is f16 [64, 10, 4]: rows of q and k must have the same length (32 ≠ 64)", "ctor-attn.c",
			func() { ctx.FlashAttnExt(f32(32, 5, 4), f16(64, 10, 4), f16(64, 10, 4), nil, 1, 0, 0) }},
		{"FlashAttnExt", "q is f32 [64, 5, 4], k is f16 [64, 10, 4], v is f16 [64, 10, 4], mask is f16 [10, 8]: the mask must have at least 32 rows, q's 5 queries rounded up to a multiple of KQMaskPad (32); it has 8", "ctor-attn.c",
			func() { ctx.FlashAttnExt(f32(64, 5, 4), f16(64, 10, 4), f16(64, 10, 4), f16(10, 8), 1, 0, 0) }},
		{"FlashAttnExt", "q is f32 [64, 5, 4], k is f16 [64, 10, 4], v is f16 [64, 10, 4], mask is f16 [8, 32]: the mask must have a column for each of k's 10 keys (it has 8)", "ctor-attn.c",
			func() { ctx.FlashAttnExt(f32(64, 5, 4), f16(64, 10, 4), f16(64, 10, 4), f16(8, 32), 1, 0, 0) }},
		{"FlashAttnExt", "q is f32 [64, 5, 4], k is f16 [64, 10, 4], v is f16 [64, 9, 4]: k and v must have one row per key each (10 ≠ 9)", "ctor-attn.c",
			func() { ctx.FlashAttnExt(f32(64, 5, 4), f16(64, 10, 4), f16(64, 9, 4), nil, 1, 0, 0) }},
	}
	for _, c := range cases {
		oe := panicOpError(t, c.f)
		require.NotNil(t, oe, "%s: no *OpError", c.msg)
		require.Equal(t, c.op, oe.Op)
		require.Equal(t, c.msg, oe.Msg)
		require.Contains(t, oe.Detail, "("+c.file+":", "the core's check and place stay in Detail")
		require.True(t, strings.HasPrefix(oe.Error(), "ggml: "+c.op+": "+c.msg+" ("+c.file+":"), oe.Error())
		require.NotContains(t, oe.Msg, "->", "no C in the words")
	}
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
