package ggml

// The graph allocator: misuse, and buffers per buffer type.

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGraphAllocatorMisuse(t *testing.T) {
	quietLog(t)
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	m, g, _, ctx, _ := backendMLP(t, be)
	ga, err := NewGraphAllocator()
	require.NoError(t, err)
	require.NoError(t, ga.Alloc(g))
	m.fill(t)
	require.NoError(t, be.Compute(context.Background(), g))

	// a second graph with the same allocator: the first one's tensors are detached
	ctx2, err := NewContext(ContextOptions{MemSize: 16*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	defer ctx2.Close()
	z := ctx2.Sqr(ctx2.NewTensor1D(TypeF32, 1000))
	g2 := ctx2.NewGraph().BuildForward(z)
	require.NoError(t, ga.Alloc(g2))
	require.False(t, m.y.HasData(), "the first graph's tensors lost their memory")
	require.Error(t, be.Compute(context.Background(), g))
	require.NoError(t, ga.Alloc(g))
	m.fill(t)
	require.NoError(t, be.Compute(context.Background(), g))

	requireOpPanic(t, "BufferSize", func() { ga.BufferSize(1) })
	require.Error(t, ga.Reserve(g, []int{0}))
	require.Error(t, ga.Reserve(g, make([]int, g.NNodes()), []int{5}))
	require.Error(t, ga.Reserve(g, []int{0}, nil))

	require.NoError(t, ga.Close())
	require.NoError(t, ga.Close())
	require.False(t, m.y.HasData())
	require.PanicsWithValue(t, ErrClosedAllocator, func() { _ = ga.Alloc(g) })
	require.Error(t, be.Compute(context.Background(), g))
	_, err = NewGraphAllocator(nil)
	require.Error(t, err)
	_ = ctx
}

// Two buffer types: leafs in one buffer, nodes in the other.
func TestGraphAllocatorBufferIDs(t *testing.T) {
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	m, g, _, _, _ := backendMLP(t, be)
	ga, err := NewGraphAllocator(CPUBufferType(), CPUBufferType())
	require.NoError(t, err)
	defer ga.Close()
	nodes := make([]int, g.NNodes())
	for i := range nodes {
		nodes[i] = 1
	}
	require.NoError(t, ga.Reserve(g, nodes, make([]int, len(g.Leafs()))))
	require.NoError(t, ga.Alloc(g))
	require.Greater(t, ga.BufferSize(0), 0)
	require.Equal(t, 0, ga.BufferSize(1), "one buffer type: one buffer, counted once")
	m.fill(t)
	require.NoError(t, be.Compute(context.Background(), g))
	got, _ := m.y.Float32s()
	require.Equal(t, referenceMLP(t, runtime.NumCPU()), got)
}
