package ggml

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------- parity: traits and names

func TestTypeTraitsParity(t *testing.T) {
	var want []struct {
		ID                 uint32 `json:"id"`
		Name               string `json:"name"`
		BlckSize           int    `json:"blck_size"`
		BlckSizeInterleave int    `json:"blck_size_interleave"`
		TypeSize           int    `json:"type_size"`
		IsQuantized        bool   `json:"is_quantized"`
		HasToFloat         bool   `json:"has_to_float"`
		HasFromFloatRef    bool   `json:"has_from_float_ref"`
		RequiresImatrix    bool   `json:"requires_imatrix"`
	}
	readParityJSON(t, &want, "type_traits.json")
	require.NotEmpty(t, want)
	for _, w := range want {
		got, err := TypeTraits(Type(w.ID))
		require.NoError(t, err)
		require.Equal(t, Traits{
			Name: w.Name, BlockSize: w.BlckSize, BlockSizeInterleave: w.BlckSizeInterleave,
			TypeSize: w.TypeSize, IsQuantized: w.IsQuantized, HasToFloat: w.HasToFloat,
			HasFromFloatRef: w.HasFromFloatRef, RequiresImatrix: w.RequiresImatrix,
		}, got, "type %d", w.ID)
		if w.Name != "DEPRECATED" {
			require.Equal(t, w.Name, Type(w.ID).String())
			require.Equal(t, w.BlckSize, Type(w.ID).BlockSize())
			require.Equal(t, w.TypeSize, Type(w.ID).Size())
			byName, ok := TypeByName(w.Name)
			require.True(t, ok)
			require.Equal(t, Type(w.ID), byName)
		}
	}
	_, err := TypeTraits(TypeCount)
	require.Error(t, err)
}

func TestOpNamesParity(t *testing.T) {
	var want struct {
		Ops []struct {
			ID     int    `json:"id"`
			Name   string `json:"name"`
			Symbol string `json:"symbol"`
		} `json:"ops"`
		Unary []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		} `json:"unary_ops"`
	}
	readParityJSON(t, &want, "op_names.json")
	require.Len(t, want.Ops, int(OpCount))
	require.Len(t, want.Unary, int(UnaryOpCount))
	for _, o := range want.Ops {
		require.Equal(t, o.Name, Op(o.ID).String(), "op %d", o.ID)
		require.Equal(t, o.Symbol, Op(o.ID).Symbol(), "op %d", o.ID)
	}
	for _, u := range want.Unary {
		require.Equal(t, u.Name, UnaryOp(u.ID).String(), "unary op %d", u.ID)
	}
}

// ---------------------------------------------------------------- parity: fp16 / bf16 on every SIMD path

func decodeHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func hexF32(t *testing.T, s string) []float32 {
	b := decodeHex(t, s)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func hexU16(t *testing.T, s string) []uint16 {
	b := decodeHex(t, s)
	out := make([]uint16, len(b)/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

// halfToFloat converts IEEE binary16 to float32 exactly, independently of the core.
func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		v := float32(mant) * float32(math.Ldexp(1, -24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

func isNaN16(h uint16) bool   { return h&0x7c00 == 0x7c00 && h&0x03ff != 0 }
func isNaNBF16(h uint16) bool { return h&0x7f80 == 0x7f80 && h&0x007f != 0 }

// forEachLevel runs f once per SIMD level the CPU supports.
func forEachLevel(t *testing.T, f func(t *testing.T)) {
	for _, l := range SupportedCPULevels() {
		t.Run(l.String(), func(t *testing.T) {
			require.NoError(t, ForceCPULevel(l))
			defer ResetCPULevel()
			f(t)
		})
	}
}

func TestFP16BF16Parity(t *testing.T) {
	var data map[string]any
	readParityJSON(t, &data, "fp16_bf16.json")
	str := func(k string) string { s, _ := data[k].(string); require.NotEmpty(t, s, k); return s }
	in := hexF32(t, str("input_f32"))
	wantF16 := hexU16(t, str("fp32_to_fp16_row"))
	wantF16F32 := hexF32(t, str("fp16_to_fp32_row"))
	wantBF16Ref := hexU16(t, str("fp32_to_bf16_row_ref"))
	wantBF16 := hexU16(t, str("fp32_to_bf16_row"))
	wantBF16F32 := hexF32(t, str("bf16_to_fp32_row"))
	n := len(in)
	require.Equal(t, 4096, n)
	// The reference file's fp16_to_fp32_row holds only zeros (its producer
	// did not fill the buffer). An all-zero answer for non-zero halves is
	// impossible, so in that case the rows are held to the exact conversion
	// computed independently here instead.
	degenerateF16F32, nonzeroHalves := true, false
	for i := range n {
		degenerateF16F32 = degenerateF16F32 && math.Float32bits(wantF16F32[i]) == 0
		nonzeroHalves = nonzeroHalves || wantF16[i]&0x7fff != 0
	}
	degenerateF16F32 = degenerateF16F32 && nonzeroHalves
	if degenerateF16F32 {
		t.Log("fp16_to_fp32_row in the parity file is all zeros: checking against the exact conversion instead")
	}

	forEachLevel(t, func(t *testing.T) {
		// odd lengths exercise the scalar tails of the SIMD loops
		for _, m := range []int{n, n - 3, 7, 1} {
			h := make([]uint16, m)
			FP32ToFP16Row(h, in[:m])
			for i := range m {
				if isNaN16(wantF16[i]) {
					require.True(t, isNaN16(h[i]), "fp32_to_fp16 %d", i)
				} else {
					require.Equal(t, wantF16[i], h[i], "fp32_to_fp16 %d (input %08x)", i, math.Float32bits(in[i]))
				}
				require.Equal(t, wantF16[i] == h[i] || isNaN16(h[i]), true)
			}
			f := make([]float32, m)
			FP16ToFP32Row(f, wantF16[:m])
			for i := range m {
				w := wantF16F32[i]
				if degenerateF16F32 {
					w = halfToFloat(wantF16[i])
				}
				if math.IsNaN(float64(w)) {
					require.True(t, math.IsNaN(float64(f[i])), "fp16_to_fp32 %d", i)
				} else {
					require.Equal(t, math.Float32bits(w), math.Float32bits(f[i]), "fp16_to_fp32 %d", i)
				}
			}
			b := make([]uint16, m)
			FP32ToBF16RowRef(b, in[:m])
			for i := range m {
				if isNaNBF16(wantBF16Ref[i]) {
					require.True(t, isNaNBF16(b[i]), "bf16_ref %d", i)
				} else {
					require.Equal(t, wantBF16Ref[i], b[i], "fp32_to_bf16_row_ref %d", i)
				}
			}
			FP32ToBF16Row(b, in[:m])
			for i := range m {
				switch {
				case isNaNBF16(wantBF16[i]):
					require.True(t, isNaNBF16(b[i]), "bf16 %d", i)
				case wantBF16[i] != wantBF16Ref[i]:
					// the reference's AVX512-BF16 path flushed a subnormal:
					// we give the _ref answer on every path
					require.Equal(t, wantBF16Ref[i], b[i], "fp32_to_bf16_row %d", i)
				default:
					require.Equal(t, wantBF16[i], b[i], "fp32_to_bf16_row %d", i)
				}
			}
			g := make([]float32, m)
			BF16ToFP32Row(g, wantBF16Ref[:m])
			for i := range m {
				w := wantBF16F32[i]
				if math.IsNaN(float64(w)) {
					require.True(t, math.IsNaN(float64(g[i])))
				} else {
					require.Equal(t, math.Float32bits(w), math.Float32bits(g[i]), "bf16_to_fp32 %d", i)
				}
			}
		}
	})
	// scalar helpers agree with the rows
	for i := range 64 {
		require.True(t, FP32ToFP16(in[i]) == wantF16[i] || isNaN16(wantF16[i]))
	}
}

// ---------------------------------------------------------------- contexts and tensors

func newCtx(t testing.TB, size int) *Context {
	t.Helper()
	ctx, err := NewContext(ContextOptions{MemSize: size})
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

func TestContextBasics(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	require.Equal(t, 0, ctx.UsedMem())
	a := ctx.NewTensor2D(TypeF32, 3, 2).SetName("a")
	require.Equal(t, []int{3, 2}, a.Shape())
	require.Equal(t, [4]int{3, 2, 1, 1}, a.Ne())
	require.Equal(t, [4]int{4, 12, 24, 24}, a.Nb())
	require.Equal(t, 6, a.NElements())
	require.Equal(t, 24, a.NBytes())
	require.True(t, a.IsContiguous())
	require.Equal(t, "a", a.Name())
	require.Equal(t, a.t, ctx.Tensor("a").t)
	require.Greater(t, ctx.UsedMem(), 24)
	require.NoError(t, a.SetFloat32s([]float32{1, 2, 3, 4, 5, 6}))
	require.Equal(t, float32(6), a.F32(2, 1))
	a.SetF32(-1, 0, 1)
	v, err := a.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, -1, 5, 6}, v)

	// transposed view reads in its own element order
	tr := ctx.Transpose(a)
	require.Equal(t, []int{2, 3}, tr.Shape())
	require.True(t, tr.IsTransposed())
	v, err = tr.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, -1, 2, 5, 3, 6}, v)
	into := make([]float32, 6)
	require.NoError(t, tr.Float32sInto(into))
	require.Equal(t, v, into)
	require.Error(t, tr.Float32sInto(into[:5]))

	// f16 tensors convert on the way in and out
	h := ctx.NewTensor1D(TypeF16, 3)
	require.NoError(t, h.SetFloat32s([]float32{0.5, -2, 65504}))
	v, err = h.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{0.5, -2, 65504}, v)

	i := ctx.NewTensor1D(TypeI32, 4)
	require.NoError(t, i.SetInt32s([]int32{1, -2, 3, 4}))
	iv, err := i.Int32s()
	require.NoError(t, err)
	require.Equal(t, []int32{1, -2, 3, 4}, iv)
	require.Error(t, i.SetInt32s([]int32{1}))
	require.Error(t, a.SetFloat32s([]float32{1}))
	_, err = a.Int32s()
	require.Error(t, err)
	require.Len(t, ctx.Tensors(), 4)
}

func TestEmptyTensor(t *testing.T) {
	ctx := newCtx(t, 1<<16)
	e := ctx.NewTensor2D(TypeF32, 0, 5)
	require.True(t, e.IsEmpty())
	require.Equal(t, 0, e.NBytes())
	v, err := e.Float32s()
	require.NoError(t, err)
	require.Empty(t, v)
	require.Empty(t, e.Bytes())
}

func TestNoAllocContext(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 16, NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor1D(TypeF32, 1<<20) // metadata only: fits easily
	require.False(t, a.HasData())
	requireOpPanic(t, "Float32s", func() { a.Float32s() })
}

func TestCallerBuffer(t *testing.T) {
	buf := make([]byte, 1<<16)
	ctx, err := NewContext(ContextOptions{Buffer: buf})
	require.NoError(t, err)
	a := ctx.NewTensor1D(TypeF32, 4)
	a.Fill(3)
	require.Equal(t, float32(3), a.F32(2))
	require.NoError(t, ctx.Close())
	_, err = NewContext(ContextOptions{MemSize: 100, Buffer: make([]byte, 10)})
	require.Error(t, err)
}

// requireOpPanic checks that f panics with an *OpError whose Op is op.
func requireOpPanic(t *testing.T, op string, f func()) *OpError {
	t.Helper()
	var got any
	func() {
		defer func() { got = recover() }()
		f()
	}()
	require.NotNil(t, got, "expected a panic from %s", op)
	err, ok := got.(error)
	require.True(t, ok, "panic value %v is not an error", got)
	var oe *OpError
	require.True(t, errors.As(err, &oe), "panic %v is not an *OpError", err)
	require.Equal(t, op, oe.Op)
	require.NotEmpty(t, oe.Msg)
	return oe
}

func TestInvalidArgumentsPanicRecoverably(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	a := ctx.NewTensor2D(TypeF32, 4, 3)
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(Type(4), 32) })  // removed type
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeQ4_0, 33) }) // not whole blocks
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeF32, 1, 2, 3, 4, 5) })
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeF32, -1) })
	requireOpPanic(t, "NewTensor", func() { ctx.NewTensor(TypeF32, 1<<40, 1<<40) }) // overflows
	requireOpPanic(t, "View1D", func() { ctx.View1D(a, 13, 0) })
	requireOpPanic(t, "View2D", func() { ctx.View2D(a, 4, 3, 16, 8) })
	requireOpPanic(t, "Reshape2D", func() { ctx.Reshape2D(a, 5, 2) })
	requireOpPanic(t, "Reshape1D", func() { ctx.Reshape1D(ctx.Transpose(a), 12) })
	requireOpPanic(t, "Permute", func() { ctx.Permute(a, 0, 0, 1, 2) })
	requireOpPanic(t, "Node", func() { ctx.NewGraph().Node(0) })
	requireOpPanic(t, "F32", func() { a.F32(4, 0) })
	// the context still works after recovered panics
	b := ctx.NewTensor1D(TypeF32, 2)
	require.Equal(t, 2, b.NElements())

	small := newCtx(t, 1024)
	oe := requireOpPanic(t, "NewTensor", func() { small.NewTensor1D(TypeF32, 1024) })
	require.Contains(t, oe.Msg, "not enough space")
}

func TestGraphFull(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	g := ctx.NewGraphCustom(2, false)
	a := ctx.NewTensor1D(TypeF32, 4)
	x := ctx.View1D(a, 2, 0)
	y := ctx.View1D(x, 1, 0)
	z := ctx.View1D(y, 1, 0)
	requireOpPanic(t, "BuildForward", func() { g.BuildForward(z) })
}

func TestUseAfterClose(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	a := ctx.NewTensor1D(TypeF32, 4)
	g := ctx.NewGraph()
	require.NoError(t, ctx.Close())
	require.NoError(t, ctx.Close()) // idempotent
	for name, f := range map[string]func(){
		"NewTensor": func() { ctx.NewTensor1D(TypeF32, 1) },
		"Shape":     func() { a.Shape() },
		"Float32s":  func() { a.Float32s() },
		"NNodes":    func() { g.NNodes() },
		"Compute":   func() { g.Compute(1) },
		"UsedMem":   func() { ctx.UsedMem() },
	} {
		require.PanicsWithValue(t, ErrClosed, f, name)
	}
	require.Equal(t, "<tensor of closed context>", a.String())
}

func TestGCFreesContexts(t *testing.T) {
	for range 200 {
		ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
		require.NoError(t, err)
		ctx.NewTensor1D(TypeF32, 1000).Fill(1)
	}
	runtime.GC()
	runtime.GC()
}

func TestThreadpool(t *testing.T) {
	p := DefaultThreadpoolParams(3)
	require.Equal(t, uint32(50), p.Poll)
	require.True(t, p.Match(DefaultThreadpoolParams(3)))
	require.False(t, p.Match(DefaultThreadpoolParams(2)))
	q := p
	q.CPUMask = []bool{true}
	require.False(t, p.Match(q))
	tp, err := NewThreadpool(p)
	require.NoError(t, err)
	require.Equal(t, 3, tp.NThreads())
	tp.Pause()
	tp.Resume()
	require.NoError(t, tp.Close())
	require.NoError(t, tp.Close())
	require.PanicsWithValue(t, ErrClosedThreadpool, func() { tp.NThreads() })
	_, err = NewThreadpool(DefaultThreadpoolParams(0))
	require.Error(t, err)
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
	require.Error(t, g.Compute(0))
}

// panicValue runs f and returns what it panicked with (nil if it returned).
func panicValue(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}
