package ggml

/*
#include "glue.h"
#include "ggml-backend.h"
#include "ggml-alloc.h"


GG_DEF(bool, gallocr_reserve, (struct lm_ggml_gallocr * a, gg_g * g), (a, g))
GG_DEF(bool, gallocr_reserve_n, (struct lm_ggml_gallocr * a, gg_g * g, const int * nid, const int * lid), (a, g, nid, lid))
GG_DEF(bool, gallocr_alloc_graph, (struct lm_ggml_gallocr * a, gg_g * g), (a, g))

// The buffers g's tensors live in (each once). (noescape: out is a Go
// array on the caller's stack, filled, not kept; nocallback: no Go in it.)
#cgo noescape gg_graph_buffers
#cgo nocallback gg_graph_buffers
static int gg_graph_buffers(gg_g * g, struct lm_ggml_backend_buffer ** out, int cap) {
    int n = 0;
    for (int k = 0; k < g->n_nodes + g->n_leafs; k++) {
        const gg_t * t = k < g->n_nodes ? g->nodes[k] : g->leafs[k - g->n_nodes];
        for (int j = -1; j < LM_GGML_MAX_SRC; j++) {
            const gg_t * s = j < 0 ? t : (k < g->n_nodes ? t->src[j] : NULL);
            if (s == NULL) continue;
            // a view made before its source had memory has data but no buffer
            struct lm_ggml_backend_buffer * b = s->buffer != NULL ? s->buffer : (s->view_src != NULL ? s->view_src->buffer : NULL);
            if (b == NULL) continue;
            int i = 0;
            while (i < n && out[i] != b) i++;
            if (i == n && n < cap) out[n++] = b;
        }
    }
    return n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ggml-go/ggml/internal/cmem"
)

// GraphAllocator places the tensors of graphs in buffers it owns, reusing
// the memory of tensors no longer needed (lm_ggml_gallocr). Tensors flagged
// as inputs (SetInput) are placed first and never overwritten, outputs
// (SetOutput) are never overwritten; other intermediates, and leafs after
// their last use, are. It is safe for concurrent use.
//
// The tensors of a graph it allocated keep it alive. Allocating another
// graph, reserving, or closing waits for computations using its memory and
// detaches the tensors of the graphs allocated before, views of them
// included (their memory is reused or freed: using them is an error until
// they are allocated again).
type GraphAllocator struct {
	mu      sync.Mutex
	closed  atomic.Bool // Close was called (the buffers are freed once unused)
	life    memLife
	ga      C.lm_ggml_gallocr_t
	bts     []*BufferType
	mem     memRanges     // the buffers of the last allocation
	users   contextSet    // contexts whose tensors live in mem
	held    *cmem.Holding // its host buffers, counted by the garbage collector
	cleanup runtime.Cleanup
}

// ErrClosedAllocator is the panic value when a closed GraphAllocator is used.
var ErrClosedAllocator = errors.New("ggml: use of closed graph allocator")

// NewGraphAllocator creates an allocator with one buffer per buffer type
// given (buffer id i is bts[i]; ids of one type share a buffer). With no
// argument it uses the CPU buffer type.
func NewGraphAllocator(bts ...*BufferType) (*GraphAllocator, error) {
	initOnce()
	if len(bts) == 0 {
		bts = []*BufferType{CPUBufferType()}
	}
	cb := make([]C.lm_ggml_backend_buffer_type_t, len(bts))
	for i, bt := range bts {
		if bt == nil || bt.bt == nil {
			return nil, fmt.Errorf("ggml: NewGraphAllocator: buffer type %d is nil", i)
		}
		cb[i] = bt.bt
	}
	ga := C.lm_ggml_gallocr_new_n(&cb[0], C.int(len(cb)))
	if ga == nil {
		return nil, errors.New("ggml: NewGraphAllocator: cannot create the allocator")
	}
	a := &GraphAllocator{ga: ga, bts: append([]*BufferType(nil), bts...), held: new(cmem.Holding)}
	a.cleanup = runtime.AddCleanup(a, func(h gallocrHandle) {
		C.lm_ggml_gallocr_free(h.ga)
		h.held.Collected()
	}, gallocrHandle{ga, a.held})
	return a, nil
}

type gallocrHandle struct {
	ga   C.lm_ggml_gallocr_t
	held *cmem.Holding
}

// account tells the garbage collector how much host memory the buffers
// hold now (they grow when a bigger graph is placed), under a.mu.
func (a *GraphAllocator) account() {
	var n int64
	for i, bt := range a.bts {
		if C.lm_ggml_backend_buft_is_host(bt.bt) {
			n += int64(C.lm_ggml_gallocr_get_buffer_size(a.ga, C.int(i)))
		}
	}
	a.held.Set(n)
}

// lock takes a.mu for a call, panicking with an *OpError if a is nil and
// ErrClosedAllocator if it is closed; the caller unlocks a.mu.
func (a *GraphAllocator) lock(op string) C.lm_ggml_gallocr_t {
	if a == nil {
		panic(&OpError{Op: op, Msg: "nil *GraphAllocator"})
	}
	a.mu.Lock()
	if a.closed.Load() {
		a.mu.Unlock()
		panic(ErrClosedAllocator)
	}
	return a.ga
}

// Close detaches the tensors it allocated and frees its buffers, once the
// computations and data accesses using them are over (Close from a custom-op
// callback of such a computation returns at once; the buffers are freed when
// the computation ends). Close is idempotent.
func (a *GraphAllocator) Close() error {
	if a == nil {
		return nil
	}
	a.closed.Store(true) // not under a.mu: an Alloc holding it may wait for this callback's computation
	a.life.retire(a.free, true)
	return nil
}

// free is Close once nothing uses the buffers.
func (a *GraphAllocator) free() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.detachAll()
	a.cleanup.Stop()
	C.lm_ggml_gallocr_free(a.ga)
	a.held.Release()
	a.ga = nil
}

// detachAll detaches the tensors of earlier allocations (under a.mu).
func (a *GraphAllocator) detachAll() {
	a.users.detach(&a.mem)
	owners.remove(a.mem.bufs)
	a.mem = memRanges{}
}

func (a *GraphAllocator) track(ctx *Context) {
	a.users.add(ctx)
	ctx.keepAlive(a)
}

func (a *GraphAllocator) pin() bool { return a.life.pin() }
func (a *GraphAllocator) unpin()    { a.life.unpin() }

// pinGraphMemory pins the Go owners of the memory g's tensors live in, so
// that none is freed or moved while g is computed; the caller unpins them.
func pinGraphMemory(g *Graph) ([]memOwner, error) { return pinGraphMemoryExcept(g, nil) }

// pinGraphMemoryExcept is pinGraphMemory for a caller that is itself one of
// the owners and already holds its own memory (an allocator placing g).
func pinGraphMemoryExcept(g *Graph, self memOwner) ([]memOwner, error) {
	var bufs [256]*C.struct_lm_ggml_backend_buffer
	n := int(C.gg_graph_buffers(g.g, &bufs[0], C.int(len(bufs))))
	var pins []memOwner
	for _, b := range bufs[:n] {
		owner := owners.get(b)
		if owner == nil || owner == self {
			continue
		}
		dup := false
		for _, p := range pins {
			dup = dup || p == owner
		}
		if dup {
			continue
		}
		if !owner.pin() {
			for _, p := range pins {
				p.unpin()
			}
			return nil, errors.New("ggml: Compute: the memory of the graph's tensors is being freed or re-planned")
		}
		pins = append(pins, owner)
	}
	return pins, nil
}

// unpinAll ends the pins of pinGraphMemory.
func unpinAll(pins []memOwner) {
	for _, o := range pins {
		o.unpin()
	}
}

// graphContexts is g's context and every context its tensors come from.
func graphContexts(g *Graph) []*Context { return g.ctx.closure() }

// Reserve sizes the buffers for g, a graph at least as large as the ones to
// be allocated (the worst case), without placing g's tensors. With several
// buffer types, nodeIDs and leafIDs give the buffer id of each node and
// leaf (nil: id 0 for all).
func (a *GraphAllocator) Reserve(g *Graph, ids ...[]int) error {
	if a == nil {
		return &OpError{Op: "Reserve", Msg: "nil *GraphAllocator"}
	}
	if g == nil {
		return &OpError{Op: "Reserve", Msg: "nil *Graph"}
	}
	g.ptr()
	p := a.lock("Reserve")
	defer a.mu.Unlock()
	// tensors move: computations and data accesses in flight finish first
	if err := a.life.hold(); err != nil {
		return fmt.Errorf("ggml: Reserve: %w", err)
	}
	defer a.life.share()
	a.detachAll()
	pins, err := pinGraphMemoryExcept(g, a)
	if err != nil {
		return fmt.Errorf("ggml: Reserve: %w", err)
	}
	defer unpinAll(pins)
	var e C.gg_err
	var ok C.bool
	switch len(ids) {
	case 0:
		ok = C.gg_gallocr_reserve(&e, p, g.g)
	case 2:
		nid, err := a.idArray("Reserve", ids[0], g.NNodes(), "node")
		if err != nil {
			return err
		}
		lid, err := a.idArray("Reserve", ids[1], len(g.Leafs()), "leaf")
		if err != nil {
			return err
		}
		ok = C.gg_gallocr_reserve_n(&e, p, g.g, ptrOrNil(nid), ptrOrNil(lid))
		runtime.KeepAlive(nid)
		runtime.KeepAlive(lid)
	default:
		return errors.New("ggml: Reserve: give no buffer ids, or node ids and leaf ids")
	}
	runtime.KeepAlive(g)
	a.account()
	if err := cError("Reserve", &e); err != nil {
		return err
	}
	if !ok {
		return errors.New("ggml: Reserve: cannot allocate the buffers")
	}
	return nil
}

func (a *GraphAllocator) idArray(op string, ids []int, n int, what string) ([]C.int, error) {
	if ids == nil {
		return nil, nil
	}
	if len(ids) != n {
		return nil, fmt.Errorf("ggml: %s: %d %s buffer ids for %d %ss", op, len(ids), what, n, what)
	}
	out := make([]C.int, n)
	for i, id := range ids {
		if id < 0 || id >= len(a.bts) {
			return nil, fmt.Errorf("ggml: %s: %s %d has buffer id %d (the allocator has %d)", op, what, i, id, len(a.bts))
		}
		out[i] = C.int(id)
	}
	return out, nil
}

func ptrOrNil(s []C.int) *C.int {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// Alloc places the tensors of g that have no data in the allocator's
// buffers. With one buffer type, a graph other than the reserved one is
// planned (and the buffer grown) as needed; with several, Reserve must have
// been called with this graph.
func (a *GraphAllocator) Alloc(g *Graph) error {
	if a == nil {
		return &OpError{Op: "Alloc", Msg: "nil *GraphAllocator"}
	}
	if g == nil {
		return &OpError{Op: "Alloc", Msg: "nil *Graph"}
	}
	g.ptr()
	p := a.lock("Alloc")
	defer a.mu.Unlock()
	// tensors move: computations and data accesses in flight finish first
	if err := a.life.hold(); err != nil {
		return fmt.Errorf("ggml: Alloc: %w", err)
	}
	defer a.life.share()
	a.detachAll()
	// the memory of g's other tensors (weights in Buffers, ...) stays while
	// the allocator reads it and tells its own buffers from theirs
	pins, err := pinGraphMemoryExcept(g, a)
	if err != nil {
		return fmt.Errorf("ggml: Alloc: %w", err)
	}
	defer unpinAll(pins)
	var e C.gg_err
	ok := C.gg_gallocr_alloc_graph(&e, p, g.g)
	// record where the tensors went, even after a failure (some may be placed)
	var bufs [64]*C.struct_lm_ggml_backend_buffer
	n := int(C.gg_graph_buffers(g.g, &bufs[0], C.int(len(bufs))))
	for _, b := range bufs[:n] {
		if owners.get(b) == nil {
			a.mem.add(b) // the allocator's own (others belong to Buffers)
		}
	}
	owners.add(a.mem.bufs, a)
	for _, c := range graphContexts(g) {
		a.track(c)
	}
	runtime.KeepAlive(g)
	a.account()
	if err := cError("Alloc", &e); err != nil {
		return err
	}
	if !ok {
		if len(a.bts) > 1 {
			return errors.New("ggml: Alloc: the graph is not the reserved one (with several buffer types, Reserve it first)")
		}
		return errors.New("ggml: Alloc: cannot allocate the graph's buffer")
	}
	return nil
}

// BufferSize is the size of buffer id (0 for an id sharing the buffer of a
// lower one).
func (a *GraphAllocator) BufferSize(id int) int {
	p := a.lock("BufferSize")
	defer a.mu.Unlock()
	if id < 0 || id >= len(a.bts) {
		panic(&OpError{Op: "BufferSize", Msg: fmt.Sprintf("buffer id %d out of range [0, %d)", id, len(a.bts))})
	}
	return int(C.lm_ggml_gallocr_get_buffer_size(p, C.int(id)))
}
