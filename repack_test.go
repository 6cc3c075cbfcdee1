package ggml

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// CPURepackBufferType: q8_0, q4_0, iq4_nl, q4_K and q6_K weights in it read back as written and give
// MulMat the bits they give from a CPU buffer (one column: the repacked
// mat-vec; several: the repacked GEMM), at 1 and 3 threads; where they are
// repacked, other ops on them fail at compute with an error; other tensors
// in it work as anywhere.
func TestCPURepackBufferType(t *testing.T) {
	for _, typ := range []Type{TypeQ8_0, TypeQ4_0, TypeIQ4_NL, TypeQ4_K, TypeQ6_K} {
		t.Run(typ.String(), func(t *testing.T) { testCPURepackBufferType(t, typ) })
	}
}

func testCPURepackBufferType(t *testing.T, typ Type) {
	quietLog(t)
	bt := CPURepackBufferType()
	require.Equal(t, "CPU_REPACK", bt.Name())
	require.False(t, bt.IsHost())
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()

	// two whole groups of 8 rows and 5 plain rows, of 96 quants (256 for the K-quants)
	const M = 21
	K := (96 + typ.BlockSize() - 1) / typ.BlockSize() * typ.BlockSize()
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float32, K*M)
	for i := range src {
		src[i] = float32(r.NormFloat64())
	}
	q, err := Quantize(typ, src, K, nil)
	require.NoError(t, err)

	weights := func(bt *BufferType) (*Context, *Tensor, *Tensor, *Buffer) {
		c, err := NewContext(ContextOptions{MemSize: 4 * TensorOverhead(), NoAlloc: true})
		require.NoError(t, err)
		w := c.NewTensor2D(typ, K, M)
		small := c.NewTensor1D(TypeF32, 8) // never repacked: read as anywhere
		buf, err := c.AllocTensors(bt)
		require.NoError(t, err)
		require.NoError(t, w.SetBytes(q))
		require.NoError(t, small.SetFloat32s(ramp(8, 1)))
		return c, w, small, buf
	}
	pc, pw, _, pbuf := weights(CPUBufferType())
	defer pc.Close()
	defer pbuf.Close()
	rc, rw, rsmall, rbuf := weights(bt)
	defer rc.Close()
	defer rbuf.Close()
	require.Equal(t, q, rw.Bytes(), "the bytes read back are the bytes written")

	mulmat := func(w *Tensor, n, threads int) []float32 {
		require.NoError(t, be.SetThreads(threads))
		c, err := NewContext(ContextOptions{MemSize: 8*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
		require.NoError(t, err)
		defer c.Close()
		x := c.NewTensor2D(TypeF32, K, n).SetInput()
		y := c.MulMat(w, x)
		g := c.NewGraph().BuildForward(y)
		ga, err := NewGraphAllocator()
		require.NoError(t, err)
		defer ga.Close()
		require.NoError(t, ga.Alloc(g))
		require.NoError(t, x.SetFloat32s(ramp(K*n, 5)))
		require.NoError(t, be.Compute(context.Background(), g))
		out, err := y.Float32s()
		require.NoError(t, err)
		return out
	}
	for _, n := range []int{1, 2, 17} {
		for _, threads := range []int{1, 3} {
			require.Equal(t, mulmat(pw, n, threads), mulmat(rw, n, threads), "%d columns, %d threads", n, threads)
		}
	}

	// another op on the weights, and an op on the small plain tensor of the buffer
	c, err := NewContext(ContextOptions{MemSize: 8*TensorOverhead() + 2*GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	defer c.Close()
	ids := c.NewTensor1D(TypeI32, 1).SetInput()
	rows := c.GetRows(rw, ids)
	sum := c.Add(rsmall, rsmall)
	ga, err := NewGraphAllocator()
	require.NoError(t, err)
	defer ga.Close()
	g := c.NewGraph().BuildForward(sum)
	require.NoError(t, ga.Alloc(g))
	require.NoError(t, be.Compute(context.Background(), g))
	s, err := sum.Float32s()
	require.NoError(t, err)
	want := ramp(8, 1)
	for i := range want {
		want[i] *= 2
	}
	require.Equal(t, want, s)
	g = c.NewGraph().BuildForward(rows)
	require.NoError(t, ga.Alloc(g))
	require.NoError(t, ids.SetInt32s([]int32{20}))
	err = be.Compute(context.Background(), g)
	if CPURepacks(typ) {
		require.ErrorContains(t, err, "repacked")
	} else {
		require.NoError(t, err)
	}

	// the same tensors again in a CPU buffer: plain, whatever they were before
	require.NoError(t, rbuf.Close())
	pbuf2, err := rc.AllocTensors(CPUBufferType())
	require.NoError(t, err)
	defer pbuf2.Close()
	require.NoError(t, rw.SetBytes(q))
	require.Equal(t, mulmat(pw, 3, 2), mulmat(rw, 3, 2), "reallocated in a CPU buffer")
}
