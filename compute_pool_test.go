package ggml

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chainGraph builds y = x, then nOps steps alternating y+x and y*0.5, over n
// elements, in a context of its own.
type chainGraph struct {
	ctx  *Context
	x, y *Tensor
	g    *Graph
	nOps int
}

func newChainGraph(t testing.TB, nOps, n int) *chainGraph {
	c := &chainGraph{ctx: newCtx(t, 8<<20), nOps: nOps}
	c.x = c.ctx.NewTensor1D(TypeF32, n)
	c.y = c.x
	for i := range nOps {
		if i%2 == 0 {
			c.y = c.ctx.Add(c.y, c.x)
		} else {
			c.y = c.ctx.Scale(c.y, 0.5)
		}
	}
	c.g = c.ctx.NewGraph().BuildForward(c.y)
	return c
}

// run computes the chain for inputs v+i%7 and checks every element (f32
// steps that are exact either way, so the expected value is computed here).
func (c *chainGraph) run(cctx context.Context, threads int, v float32) error {
	n := int(c.x.Ne()[0])
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = v + float32(i%7)
	}
	if err := c.x.SetFloat32s(xs); err != nil {
		return err
	}
	if err := c.g.ComputeContext(cctx, threads); err != nil {
		return err
	}
	ys, err := c.y.Float32s()
	if err != nil {
		return err
	}
	for i, got := range ys {
		want := xs[i]
		for k := range c.nOps {
			if k%2 == 0 {
				want += xs[i]
			} else {
				want *= 0.5
			}
		}
		if got != want {
			return errors.New("wrong value")
		}
	}
	return nil
}

// Computations without a pool share a cached one: from several goroutines at
// once (each then gets a pool of its own), with thread counts that keep
// replacing the cached pool.
func TestComputeConcurrentThreadCounts(t *testing.T) {
	const workers = 4
	var wg sync.WaitGroup
	errs := make([]error, workers)
	chains := make([]*chainGraph, workers)
	for w := range workers {
		chains[w] = newChainGraph(t, 24, 3000+w)
	}
	for w := range workers {
		wg.Go(func() {
			for k := range 40 {
				if err := chains[w].run(context.Background(), 1+(w+k)%4, float32(w+k)); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		require.NoError(t, err, "goroutine %d", w)
	}
}

// A computation stopped by its context, then a failing one, leave the cached
// pool as good as new.
func TestComputeAfterCancelAndFailure(t *testing.T) {
	c := newChainGraph(t, 20, 5000)
	require.NoError(t, c.run(context.Background(), 2, 1))

	// cancelled between nodes: a custom op cancels the context as it runs
	ctx := newCtx(t, 4<<20)
	x := ctx.NewTensor1D(TypeF32, 64)
	require.NoError(t, x.SetFloat32s(make([]float32, 64)))
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := cancelsSeen.Load()
	y := ctx.MapCustom1(x, func(dst, a *Tensor, ith, nth int) {
		if ith == 0 {
			cancel()
			// the cancellation reaches the computation asynchronously
			for end := time.Now().Add(time.Minute); cancelsSeen.Load() == seen && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
		}
	}, 2)
	for range 50 {
		y = ctx.Add(y, x)
	}
	g := ctx.NewGraph().BuildForward(y)
	err := g.ComputeContext(cctx, 2)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, c.run(context.Background(), 2, 2))

	// an index out of range fails the computation after its node
	m := ctx.NewTensor2D(TypeF32, 4, 3)
	require.NoError(t, m.SetFloat32s(make([]float32, 12)))
	idx := ctx.NewTensor1D(TypeI32, 2)
	require.NoError(t, idx.SetInt32s([]int32{0, 7}))
	bad := ctx.Add(ctx.GetRows(m, idx), ctx.GetRows(m, idx))
	gb := ctx.NewGraph().BuildForward(bad)
	for _, n := range []int{2, 3} {
		require.Error(t, gb.Compute(n))
		require.NoError(t, c.run(context.Background(), n, 3))
	}

	ReleaseCachedThreadpool()
	require.NoError(t, c.run(context.Background(), 2, 4))
}

// BenchmarkComputeSmallGraph is the per-call cost of Compute on a graph of
// 20 tiny nodes, where starting threads used to cost more than the graph.
func BenchmarkComputeSmallGraph(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(itoa(threads), func(b *testing.B) {
			ctx := newCtx(b, 1<<20)
			x := ctx.NewTensor1D(TypeF32, 64)
			require.NoError(b, x.SetFloat32s(make([]float32, 64)))
			y := x
			for range 20 {
				y = ctx.Add(y, x)
			}
			g := ctx.NewGraph().BuildForward(y)
			for b.Loop() {
				if err := g.Compute(threads); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
