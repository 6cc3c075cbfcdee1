package ggml

// Graphs: copies into another context, DOT dumps.

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// A graph copied into another context keeps the source context
// alive, and reports it closed instead of reading freed memory.
func TestGraphCopyToKeepsSourceContext(t *testing.T) {
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

func TestGraphFull(t *testing.T) {
	ctx := newCtx(t, 1<<20)
	g := ctx.NewGraphCustom(2, false)
	a := ctx.NewTensor1D(TypeF32, 4)
	x := ctx.View1D(a, 2, 0)
	y := ctx.View1D(x, 1, 0)
	z := ctx.View1D(y, 1, 0)
	requireOpPanic(t, "BuildForward", func() { g.BuildForward(z) })
}
