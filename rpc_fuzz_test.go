package ggml

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// rpcSeedGraphs are GRAPH_COMPUTE messages of small graphs with the ops of a
// transformer block (views, in-place ops, a cast, a copy into a cache).
func rpcSeedGraphs(t testing.TB) [][]byte {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	x := ctx.NewTensor2D(TypeF32, 32, 4)
	w := ctx.NewTensor2D(TypeF16, 32, 32)
	pos := ctx.NewTensor1D(TypeI32, 4)
	cache := ctx.NewTensor1D(TypeF16, 32*8)
	h := ctx.Mul(ctx.RMSNorm(x, 1e-5), x)
	q := ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(w, h), 8, 4, 4), pos, nil, DefaultRopeParams(8, 0))
	stored := ctx.Cpy(ctx.Cast(q, TypeF16), ctx.View1D(cache, 32*4, 0))
	kq := ctx.SoftMaxExt(ctx.MulMat(ctx.Cont(ctx.Permute(q, 0, 2, 1, 3)), ctx.Permute(q, 0, 2, 1, 3)), nil, 0.5, 0)
	y := ctx.Scale(ctx.Add(ctx.Silu(h), x), 0.5)

	var out [][]byte
	for _, root := range []*Tensor{y, kq, stored} {
		g := ctx.NewGraph().BuildForward(root)
		msg := rpcEncodeGraph(g)
		require.NotNil(t, msg)
		out = append(out, msg)
	}
	return out
}

func rpcMsg(cmd byte, payload ...[]byte) []byte {
	m := []byte{cmd}
	for _, p := range payload {
		m = append(m, p...)
	}
	return m
}

func u64le(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func TestRPCDecodeSeeds(t *testing.T) {
	for i, msg := range rpcSeedGraphs(t) {
		require.Equal(t, 2, rpcDecode(msg), "seed graph %d must build", i)
		// every truncation is refused
		for n := 0; n < len(msg); n += 37 {
			require.Equal(t, 0, rpcDecode(msg[:n]))
		}
	}
	require.Equal(t, 1, rpcDecode(rpcMsg(0, u64le(1<<20))))            // ALLOC_BUFFER
	require.Equal(t, 0, rpcDecode(rpcMsg(0, u64le(1<<20), []byte{0}))) // one byte too many
	require.Equal(t, 1, rpcDecode(rpcMsg(10)))                         // GET_DEVICE_MEMORY
	require.Equal(t, 0, rpcDecode(rpcMsg(11)))                         // no such command
	require.Equal(t, 0, rpcDecode(rpcMsg(9, make([]byte, 7))))         // graph shorter than its counts
	require.Equal(t, 2, rpcDecode(rpcMsg(9, make([]byte, 8))))         // the empty graph
}

// FuzzRPCDecode feeds the RPC server's decoder and graph rebuilding with
// arbitrary messages: never a crash, and nothing that builds may lie outside
// the buffer it names.
func FuzzRPCDecode(f *testing.F) {
	for _, msg := range rpcSeedGraphs(f) {
		f.Add(msg)
	}
	f.Add(rpcMsg(0, u64le(4096)))
	f.Add(rpcMsg(5, u64le(1), []byte{7}))
	f.Add(rpcMsg(10))
	f.Fuzz(func(t *testing.T, msg []byte) {
		if rc := rpcDecode(msg); rc < 0 {
			t.Fatalf("a built tensor lies outside its buffer")
		}
	})
}
