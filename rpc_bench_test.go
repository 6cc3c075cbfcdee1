package ggml

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkRPCTransfer: SET_TENSOR and GET_TENSOR of a 256 MiB tensor to a
// server on loopback (the bytes go through the kernel's TCP stack twice).
func BenchmarkRPCTransfer(b *testing.B) {
	const size = 256 << 20
	s := startRPCServer(b, 512<<20)
	be, err := DialRPC(context.Background(), s.endpoint)
	require.NoError(b, err)
	defer be.Close()
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 16, NoAlloc: true})
	require.NoError(b, err)
	defer ctx.Close()
	t := ctx.NewTensor1D(TypeF32, size/4)
	buf, err := ctx.AllocTensors(be)
	require.NoError(b, err)
	defer buf.Close()
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	require.NoError(b, rawTransfer(t, data, true)) // the server's pages are touched once
	for _, dir := range []string{"set", "get"} {
		b.Run(dir, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				require.NoError(b, rawTransfer(t, data, dir == "set"))
			}
		})
	}
}

// BenchmarkRPCGraph: the round trip of a one-node graph (encode, send,
// decode and rebuild on the server, compute, reply).
func BenchmarkRPCGraph(b *testing.B) {
	s := startRPCServer(b, 64<<20)
	be, err := DialRPC(context.Background(), s.endpoint)
	require.NoError(b, err)
	defer be.Close()
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	require.NoError(b, err)
	defer ctx.Close()
	x := ctx.NewTensor1D(TypeF32, 16)
	y := ctx.Sqr(x)
	buf, err := ctx.AllocTensors(be)
	require.NoError(b, err)
	defer buf.Close()
	require.NoError(b, buf.Clear(0))
	g := ctx.NewGraph().BuildForward(y)
	for b.Loop() {
		require.NoError(b, be.Compute(context.Background(), g))
	}
}
