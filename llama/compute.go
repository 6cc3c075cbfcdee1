package llama

import (
	"context"
	"fmt"

	"github.com/ggml-go/ggml"
)

// engine is where a graph's tensors get memory and where the graph runs:
// the one piece of the package that depends on how ggml computes.
type engine interface {
	// context returns an empty context for the tensors of one graph; it is
	// valid until the next call.
	context() (*ggml.Context, error)
	// run gives the graph memory, sets its inputs and computes it; ctx may
	// stop the computation.
	run(ctx context.Context, b *batchGraph, tokens []int32) error
	close()
}

// arenaEngine computes graphs in a context whose arena holds every tensor of
// the graph (no reuse between nodes). The arena is sized once for the
// largest graph the session can build and reused for every graph, so
// nothing is allocated per token.
type arenaEngine struct {
	buf  []byte
	free func()
	ctx  *ggml.Context
	tp   *ggml.Threadpool
}

func newArenaEngine(m *Model, kv *kvCache, maxBatch int, tp *ggml.Threadpool) (*arenaEngine, error) {
	size, err := measureGraph(m, kv, maxBatch)
	if err != nil {
		return nil, err
	}
	buf, free, err := allocArena(size)
	if err != nil {
		return nil, err
	}
	return &arenaEngine{buf: buf, free: free, tp: tp}, nil
}

// measureGraph is the arena size of the largest graph: maxBatch tokens at the
// end of the cache, logits for all of them.
func measureGraph(m *Model, kv *kvCache, maxBatch int) (size int, err error) {
	defer recoverOp(&err)
	meta := ggml.GraphOverhead(m.graphSize(), false) + 4*m.graphSize()*ggml.TensorOverhead()
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: meta, NoAlloc: true})
	if err != nil {
		return 0, err
	}
	defer ctx.Close()
	m.build(ctx, kv, maxBatch, kv.nCtx-maxBatch, maxBatch)
	size = ctx.UsedMem() + 1<<16
	for _, t := range ctx.Tensors() {
		if t.ViewSrc() == nil && !t.HasData() {
			size += (t.NBytes() + 63) &^ 63
		}
	}
	return size, nil
}

func (e *arenaEngine) context() (*ggml.Context, error) {
	if e.ctx != nil {
		e.ctx.Close()
	}
	var err error
	e.ctx, err = ggml.NewContext(ggml.ContextOptions{Buffer: e.buf})
	return e.ctx, err
}

func (e *arenaEngine) run(_ context.Context, b *batchGraph, tokens []int32) error {
	if err := b.setInputs(tokens); err != nil {
		return err
	}
	return b.g.ComputeWith(e.tp)
}

func (e *arenaEngine) close() {
	if e.ctx != nil {
		e.ctx.Close()
		e.ctx = nil
	}
	if e.free != nil {
		e.free()
		e.free, e.buf = nil, nil
	}
}

// recoverOp turns a panic with a *ggml.OpError (a graph the core rejects,
// e.g. a weight type without a kernel) into an error.
func recoverOp(err *error) {
	if r := recover(); r != nil {
		if oe, ok := r.(*ggml.OpError); ok {
			*err = fmt.Errorf("llama: building the graph: %w", oe)
			return
		}
		panic(r)
	}
}
