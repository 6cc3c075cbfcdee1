package llama

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/ggml-go/ggml"
)

// engine is where a graph's tensors get memory and where the graph runs:
// the one piece of the package that depends on how ggml computes.
type engine interface {
	// context returns an empty context for the tensors of one graph of n
	// tokens; it is valid until the next call.
	context(n int) (*ggml.Context, error)
	// run gives the graph memory, sets its inputs and computes it; ctx may
	// stop the computation.
	run(ctx context.Context, b *batchGraph, tokens []int32) error
	close()
}

// backendEngine computes graphs on a CPU backend. Batch graph contexts
// hold only tensor descriptions (in one small arena, reused); the graph
// allocator places the tensors' data in its buffer, reserved once for the
// largest graph of the session and reused for every graph (intermediates
// share memory once they are dead). One-token graphs instead get their
// data with their descriptions, in a second arena sized once for the
// longest one: their shapes change with every position, which would make
// the graph allocator plan again each token, and all their tensors
// together are small. Nothing is allocated per token.
type backendEngine struct {
	be   *ggml.Backend
	ga   *ggml.GraphAllocator
	meta []byte // the arena of the batch graph contexts
	step []byte // the arena of the one-token graph contexts, data included
	ctx  *ggml.Context
}

func newBackendEngine(m *Model, kv *kvCache, maxBatch, threads int) (e *backendEngine, err error) {
	defer recoverOp(&err)
	be, err := ggml.NewCPUBackend()
	if err != nil {
		return nil, err
	}
	if err := be.SetThreads(threads); err != nil {
		be.Close()
		return nil, err
	}
	ga, err := ggml.NewGraphAllocator(be.BufferType())
	if err != nil {
		be.Close()
		return nil, err
	}
	n := m.graphSize()
	e = &backendEngine{be: be, ga: ga, meta: make([]byte, ggml.GraphOverhead(n, false)+2*n*ggml.TensorOverhead()+4096)}
	// the largest usual graph: a full batch at the end of the cache, the
	// logits of its last token (EvalAll's graphs grow the buffer once)
	ctx, err := e.context(maxBatch)
	if err == nil {
		err = ga.Reserve(m.build(ctx, kv, maxBatch, kv.nCtx-maxBatch, 1).g)
	}
	if err == nil {
		err = e.sizeStep(m, kv)
	}
	if err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// sizeStep makes the arena of the one-token graphs: the descriptions and
// the data (each padded as the context pads it) of the longest one.
func (e *backendEngine) sizeStep(m *Model, kv *kvCache) error {
	ctx, err := e.context(0)
	if err != nil {
		return err
	}
	m.build(ctx, kv, 1, kv.nCtx-1, 1)
	const align = 64 // the arena's alignment; the context pads data to 16
	size := ctx.UsedMem() + 4096
	for _, t := range ctx.Tensors() {
		if t.ViewSrc() == nil {
			size += (t.NBytes() + 15) &^ 15
		}
	}
	buf := make([]byte, size+align)
	off := int(-uintptr(unsafe.Pointer(&buf[0])) & (align - 1))
	e.step = buf[off : off+size : off+size]
	return nil
}

func (e *backendEngine) context(n int) (*ggml.Context, error) {
	if e.ctx != nil {
		e.ctx.Close()
	}
	opts := ggml.ContextOptions{Buffer: e.meta, NoAlloc: true}
	if n == 1 && e.step != nil {
		opts = ggml.ContextOptions{Buffer: e.step}
	}
	var err error
	e.ctx, err = ggml.NewContext(opts)
	return e.ctx, err
}

func (e *backendEngine) run(ctx context.Context, b *batchGraph, tokens []int32) error {
	if !b.logits.HasData() { // a batch graph: the allocator places it
		if err := e.ga.Alloc(b.g); err != nil {
			return err
		}
	}
	if err := b.setInputs(tokens); err != nil {
		return err
	}
	if len(tokens) == 1 {
		// A one-token graph takes milliseconds: the caller's ctx is checked
		// before it, and watching ctx during it (a goroutine per graph,
		// woken and joined) would cost more than it saves.
		ctx = context.Background()
	}
	return e.be.Compute(ctx, b.g)
}

// computeBytes is the size of the compute buffer and the one-token arena.
func (e *backendEngine) computeBytes() int { return e.ga.BufferSize(0) + len(e.step) }

func (e *backendEngine) close() {
	if e.ctx != nil {
		e.ctx.Close()
		e.ctx = nil
	}
	e.ga.Close()
	e.be.Close()
}

// recoverOp turns a panic with a *ggml.OpError (a graph the core rejects)
// into an error.
func recoverOp(err *error) {
	if r := recover(); r != nil {
		if oe, ok := r.(*ggml.OpError); ok {
			*err = fmt.Errorf("llama: building the graph: %w", oe)
			return
		}
		panic(r)
	}
}
