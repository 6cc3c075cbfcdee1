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
	// decodeContext is context for the one-token graph the session keeps
	// (another arena: it outlives the batch graphs evaluated meanwhile).
	decodeContext() (*ggml.Context, error)
	// run gives the graph memory, sets its inputs and computes it; ctx may
	// stop the computation.
	run(ctx context.Context, b *batchGraph, tokens []int32) error
	// computeBytes is the size of the compute buffers.
	computeBytes() int
	close()
}

// backendEngine computes graphs on a CPU backend. Graph contexts hold only
// tensor descriptions (in one small arena, reused); the graph allocator
// places the tensors' data in its buffer, reserved once for the largest
// graph of the session and reused for every graph (intermediates share
// memory once they are dead), so nothing is allocated per token.
//
// A graph computed again (the session's one-token graph) keeps the places
// the allocator gave its tensors as long as no other graph was allocated
// since: run allocates only a graph other than the last one allocated.
type backendEngine struct {
	be    *ggml.Backend
	ga    *ggml.GraphAllocator
	meta  []byte // the arena of the graph contexts
	ctx   *ggml.Context
	dmeta []byte // the arena of the one-token graph's context
	dctx  *ggml.Context
	last  *ggml.Graph // the graph whose tensors the allocator placed last
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
	arena := ggml.GraphOverhead(n, false) + 2*n*ggml.TensorOverhead() + 4096
	e = &backendEngine{be: be, ga: ga, meta: make([]byte, arena), dmeta: make([]byte, arena)}
	// the largest usual graph: a full batch at the end of the cache, the
	// logits of its last token (EvalAll's graphs grow the buffer once)
	ctx, err := e.context()
	if err == nil {
		nPast := 0 // an encoder's (no cache): a whole sequence
		if kv != nil {
			nPast = kv.nCtx - maxBatch
		}
		err = ga.Reserve(m.build(ctx, kv, maxBatch, nPast, 1).g)
		e.last = nil // reserving placed nothing
	}
	if err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *backendEngine) context() (*ggml.Context, error) { return renewContext(&e.ctx, e.meta) }

func (e *backendEngine) decodeContext() (*ggml.Context, error) { return renewContext(&e.dctx, e.dmeta) }

func (e *backendEngine) run(ctx context.Context, b *batchGraph, tokens []int32) error {
	if b.g != e.last {
		e.last = nil
		if err := e.ga.Alloc(b.g); err != nil {
			return err
		}
		e.last = b.g
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

// computeBytes is the size of the compute buffer.
func (e *backendEngine) computeBytes() int { return e.ga.BufferSize(0) }

func (e *backendEngine) close() {
	for _, c := range []**ggml.Context{&e.ctx, &e.dctx} {
		if *c != nil {
			(*c).Close()
			*c = nil
		}
	}
	e.last = nil
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
