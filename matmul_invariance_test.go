package ggml

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// mulMatTypes lists every weight type MulMat accepts: f32, f16, bf16 and
// the quantized types with a conversion to f32 (not the repacked layouts).
func mulMatTypes() []Type {
	var ts []Type
	for t := Type(0); t < TypeCount; t++ {
		switch {
		case t == TypeF32, t == TypeF16, t == TypeBF16:
		case !t.IsQuantized(), t == TypeQ8_1, t == TypeQ8_K:
			continue
		case t == TypeQ4_0_4_4, t == TypeQ4_0_4_8, t == TypeQ4_0_8_8, t == TypeIQ4_NL_4_4:
			continue
		}
		ts = append(ts, t)
	}
	return ts
}

// weightBytes returns k x m weights of type t made from random values.
func weightBytes(t *testing.T, r *rand.Rand, typ Type, k, m int) []byte {
	v := make([]float32, k*m)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	switch typ {
	case TypeF32:
		var b bytes.Buffer
		require.NoError(t, binary.Write(&b, binary.LittleEndian, v))
		return b.Bytes()
	case TypeF16, TypeBF16:
		out := make([]byte, 2*len(v))
		for i, x := range v {
			var h uint16
			if typ == TypeF16 {
				h = FP32ToFP16(x)
			} else {
				h = FP32ToBF16(x)
			}
			binary.LittleEndian.PutUint16(out[2*i:], h)
		}
		return out
	}
	imat := make([]float32, k)
	for i := range imat {
		imat[i] = 1 + r.Float32()
	}
	q, err := Quantize(typ, v, k, imat)
	require.NoError(t, err)
	return q
}

// mulMatCols computes w (k x m, raw bytes of type typ) times columns
// [c0, c0+n) of x (k x ncols f32) on the given number of threads.
func mulMatCols(t *testing.T, typ Type, w []byte, k, m int, x []float32, c0, n, threads int) []float32 {
	ctx := newCtx(t, len(w)+4*(k+m)*n+1<<20)
	a := ctx.NewTensor2D(typ, k, m)
	require.NoError(t, a.SetBytes(w))
	b := ctx.NewTensor2D(TypeF32, k, n)
	require.NoError(t, b.SetFloat32s(x[c0*k:(c0+n)*k]))
	y := ctx.MulMat(a, b)
	require.NoError(t, ctx.NewGraph().BuildForward(y).Compute(threads))
	out, err := y.Float32s()
	require.NoError(t, err)
	ctx.Close()
	return out
}

// A column's MulMat result must not depend on how many columns share the
// call or on the thread count: every type, every SIMD level, bit for bit.
func TestMulMatBatchInvariance(t *testing.T) {
	const m, ncols = 19, 64
	forEachLevel(t, func(t *testing.T) {
		for _, typ := range mulMatTypes() {
			t.Run(typ.String(), func(t *testing.T) {
				r := rand.New(rand.NewPCG(7, uint64(typ)))
				k := 512
				if typ.BlockSize() == 1 {
					k = 300 // a tail past every SIMD width
				}
				w := weightBytes(t, r, typ, k, m)
				x := make([]float32, k*ncols)
				for i := range x {
					x[i] = float32(r.NormFloat64()) * float32(1+i/k%5)
				}
				alone := make([][]float32, ncols)
				for c := range ncols {
					alone[c] = mulMatCols(t, typ, w, k, m, x, c, 1, 1)
				}
				for _, n := range []int{2, 3, 5, 8, 13, 31, 64} {
					for threads := 1; threads <= 3; threads++ {
						c0 := (n*5 + threads) % (ncols - n + 1)
						got := mulMatCols(t, typ, w, k, m, x, c0, n, threads)
						for c := range n {
							col := got[c*m : (c+1)*m]
							for i := range m {
								if math.Float32bits(col[i]) != math.Float32bits(alone[c0+c][i]) {
									t.Fatalf("n=%d threads=%d column %d row %d: %v, alone %v", n, threads, c0+c, i, col[i], alone[c0+c][i])
								}
							}
						}
					}
				}
			})
		}
	})
}

// Threads share out a MulMat's src1 conversion and its blocks through
// counters the engine zeroes between nodes, with no barrier between the two
// phases. A graph of several MulMat nodes (quantized weights, whose columns
// are converted, and f16 ones, whose are not; two batches; more than one
// column block) must give the same bits on any thread count, more threads
// than cores included.
func TestMulMatThreadsShareWork(t *testing.T) {
	const k, m, m2, n = 256, 224, 96, 150
	r := rand.New(rand.NewPCG(11, 3))
	wq := weightBytes(t, r, TypeQ4_K, k, m)
	wh := weightBytes(t, r, TypeF16, k, m)
	w8 := weightBytes(t, r, TypeQ8_0, m, m2)
	xs := make([]float32, k*n*2)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	var want [][]float32
	for _, threads := range []int{1, 2, 3, 8} {
		ctx := newCtx(t, 16<<20)
		x := ctx.NewTensor3D(TypeF32, k, n, 2)
		require.NoError(t, x.SetFloat32s(xs))
		q := ctx.NewTensor2D(TypeQ4_K, k, m)
		require.NoError(t, q.SetBytes(wq))
		h := ctx.NewTensor2D(TypeF16, k, m)
		require.NoError(t, h.SetBytes(wh))
		w := ctx.NewTensor2D(TypeQ8_0, m, m2)
		require.NoError(t, w.SetBytes(w8))
		y1 := ctx.MulMat(q, x)
		y2 := ctx.MulMat(h, x)
		y3 := ctx.MulMat(w, ctx.Add(y1, y2))
		require.NoError(t, ctx.NewGraph().BuildForward(y3).Compute(threads))
		var got [][]float32
		for _, y := range []*Tensor{y1, y2, y3} {
			v, err := y.Float32s()
			require.NoError(t, err)
			got = append(got, v)
		}
		ctx.Close()
		if want == nil {
			want = got
			continue
		}
		for i := range got {
			for j := range got[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
					t.Fatalf("threads=%d node %d element %d: %v, on 1 thread %v", threads, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
}
