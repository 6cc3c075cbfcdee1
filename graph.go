package ggml

/*
#include "glue.h"

GG_DEF(gg_g *, new_graph_custom, (gg_c * ctx, size_t size, bool grads), (ctx, size, grads))
GG_DEFV(build_forward_expand, (gg_g * g, gg_t * t), (g, t))
GG_DEF(gg_t *, graph_node, (gg_g * g, int i), (g, i))
GG_DEF(gg_g *, graph_dup, (gg_c * ctx, gg_g * g), (ctx, g))
GG_DEFV(graph_cpy, (gg_g * src, gg_g * dst), (src, dst))

static int gg_graph_n_leafs(gg_g * g) { return g->n_leafs; }
static gg_t * gg_graph_leaf(gg_g * g, int i) { return g->leafs[i]; }

static bool gg_cancelled(void * flag) { return __atomic_load_n((const int *) flag, __ATOMIC_RELAXED) != 0; }

// Plans g (asserts come back in e); 0 on success.
static int gg_graph_plan(gg_err * e, gg_g * g, int n_threads, struct lm_ggml_threadpool * tp, struct lm_ggml_cplan * out) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        e->failed = 1;
        memcpy(e->msg, f.msg, sizeof(e->msg));
        return -1;
    }
    *out = lm_ggml_graph_plan(g, n_threads, tp);
    lm_ggml_err_pop(&f);
    return 0;
}

// Computes g with the plan the caller made, with the work buffer from the C
// heap. A failed status comes back in e with the core's message. cancel, if
// not NULL, stops the computation after the node during which it becomes
// non-zero.
static int gg_graph_compute(gg_err * e, gg_g * g, struct lm_ggml_cplan * plan, int * cancel) {
    struct lm_ggml_err_frame f;
    void * volatile work = NULL;
    if (LM_GGML_TRY(&f)) {
        free(work);
        plan->work_data = NULL;
        e->failed = 1;
        memcpy(e->msg, f.msg, sizeof(e->msg));
        return LM_GGML_STATUS_FAILED;
    }
    if (plan->work_size > 0) {
        work = malloc(plan->work_size);
        if (work == NULL) {
            lm_ggml_err_pop(&f);
            e->failed = 1;
            snprintf(e->msg, sizeof(e->msg), "cannot allocate a work buffer of %zu bytes", plan->work_size);
            return LM_GGML_STATUS_ALLOC_FAILED;
        }
        plan->work_data = work;
    }
    if (cancel != NULL) {
        plan->abort_callback = gg_cancelled;
        plan->abort_callback_data = cancel;
    }
    const int status = lm_ggml_graph_compute(g, plan);
    lm_ggml_err_pop(&f);
    free(work);
    plan->work_data = NULL;
    if (status != LM_GGML_STATUS_SUCCESS && status != LM_GGML_STATUS_ABORTED) {
        e->failed = 1;
        if (f.msg[0] != '\0') memcpy(e->msg, f.msg, sizeof(e->msg));
        else snprintf(e->msg, sizeof(e->msg), "%s", lm_ggml_status_to_string(status));
    }
    return status;
}

static int * gg_new_flag(void) { return calloc(1, sizeof(int)); }

*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/ggml-go/ggml/internal/cmem"
)

// DefaultGraphSize is the node capacity of NewGraph.
const DefaultGraphSize = int(C.LM_GGML_DEFAULT_GRAPH_SIZE)

// Graph is a computation graph in a Context: the nodes to compute, in order.
//
// Computations of one Graph are serialized: Compute and its variants may be
// called from several goroutines at once; each waits for the one before to
// finish. Graphs that share nodes (Dup, CopyTo, the graphs of a Trainer) are
// distinct graphs: computing them at the same time writes the shared nodes
// concurrently, so do not.
type Graph struct {
	ctx *Context
	g   *C.struct_lm_ggml_cgraph

	mu        sync.Mutex // serializes computations and Reset
	needReset bool       // gradients not initialized yet: the next computation does it (see BuildBackward)
}

// GraphOverhead is the arena space taken by a graph of the given capacity.
func GraphOverhead(size int, grads bool) int {
	return int(C.lm_ggml_graph_overhead_custom(C.size_t(size), C.bool(grads)))
}

// NewGraph creates a graph with room for DefaultGraphSize nodes and no gradients.
func (ctx *Context) NewGraph() *Graph { return ctx.NewGraphCustom(DefaultGraphSize, false) }

// NewGraphCustom creates a graph with room for size nodes (and as many leafs);
// grads reserves room for gradients (see Graph.BuildBackward).
func (ctx *Context) NewGraphCustom(size int, grads bool) *Graph {
	if size <= 0 {
		panic(&OpError{Op: "NewGraphCustom", Msg: fmt.Sprintf("graph size must be positive, got %d", size)})
	}
	e := ctx.errBuf()
	g := C.gg_new_graph_custom(e, ctx.ptr(), C.size_t(size), C.bool(grads))
	check("NewGraphCustom", e)
	return &Graph{ctx: ctx, g: g}
}

func (g *Graph) ptr() *C.struct_lm_ggml_cgraph {
	if g == nil {
		panic(&OpError{Op: "Graph", Msg: "nil *Graph"})
	}
	g.ctx.ptr()
	return g.g
}

// Context returns the context that holds the graph.
func (g *Graph) Context() *Context { return g.ctx }

// BuildForward adds t and every tensor it depends on (not yet in the graph).
func (g *Graph) BuildForward(t *Tensor) *Graph {
	needTensors("BuildForward", t)
	p := g.ptr()
	e := g.ctx.errBuf()
	C.gg_build_forward_expand(e, p, t.use(g.ctx))
	check("BuildForward", e)
	return g
}

// Size is the node capacity.
func (g *Graph) Size() int { return int(C.lm_ggml_graph_size(g.ptr())) }

// NNodes is the number of nodes (tensors computed by an op).
func (g *Graph) NNodes() int { return int(C.lm_ggml_graph_n_nodes(g.ptr())) }

// Node returns node i; negative i counts from the end (-1 is the last node).
// The Tensor belongs to the context that holds it (which may be another one
// than the graph's).
func (g *Graph) Node(i int) *Tensor {
	var e C.gg_err
	t := C.gg_graph_node(&e, g.ptr(), cint("Node", i))
	check("Node", &e)
	return g.owners().wrap(t)
}

// Nodes returns the nodes in compute order.
func (g *Graph) Nodes() []*Tensor {
	p := g.ptr()
	o := g.owners()
	out := make([]*Tensor, int(C.lm_ggml_graph_n_nodes(p)))
	for i := range out {
		out[i] = o.wrap(C.lm_ggml_graph_node(p, C.int(i)))
	}
	return out
}

// Leafs returns the graph's leafs (tensors used but not computed).
func (g *Graph) Leafs() []*Tensor {
	p := g.ptr()
	o := g.owners()
	out := make([]*Tensor, int(C.gg_graph_n_leafs(p)))
	for i := range out {
		out[i] = o.wrap(C.gg_graph_leaf(p, C.int(i)))
	}
	return out
}

// Tensor returns the node or leaf with the given name, or nil.
func (g *Graph) Tensor(name string) *Tensor {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return g.owners().wrap(C.lm_ggml_graph_get_tensor(g.ptr(), cs))
}

// Clear removes every node and leaf.
func (g *Graph) Clear() { C.lm_ggml_graph_clear(g.ptr()) }

// Dup copies the graph (with its gradients) into ctx, which then depends on
// g's context (see Context.Close).
func (g *Graph) Dup(ctx *Context) *Graph {
	var e C.gg_err
	r := C.gg_graph_dup(&e, ctx.ptr(), g.ptr())
	check("Dup", &e)
	addDep(ctx, g.ctx)
	return &Graph{ctx: ctx, g: r, needReset: g.needReset}
}

// CopyTo copies the graph's nodes, leafs and gradients into dst, whose
// context then depends on g's (see Context.Close).
func (g *Graph) CopyTo(dst *Graph) {
	var e C.gg_err
	C.gg_graph_cpy(&e, g.ptr(), dst.ptr())
	addDep(dst.ctx, g.ctx) // even after a failure: dst may hold part of the copy
	check("CopyTo", &e)
	dst.needReset = dst.needReset || g.needReset
}

// Print writes a description of the graph to the log.
func (g *Graph) Print() { C.lm_ggml_graph_print(g.ptr()) }

// DumpDot writes the graph in graphviz format to path; fwd, if not nil, is
// the forward graph (its nodes are drawn differently). It returns an error
// wrapping the system's if the file cannot be created or written.
func (g *Graph) DumpDot(fwd *Graph, path string) error {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	var f *C.struct_lm_ggml_cgraph
	if fwd != nil {
		f = fwd.ptr()
	}
	if errno := C.lm_graph_dump_dot_file(g.ptr(), f, cs); errno != 0 {
		return &PathError{Op: "DumpDot", Path: path, Err: syscall.Errno(errno)}
	}
	return nil
}

// PathError records an error and the file that caused it.
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string { return "ggml: " + e.Op + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *PathError) Unwrap() error { return e.Err }

// ErrInCallback is returned by a computation started from inside a custom-op
// callback (see Custom1Func), which would otherwise wait for itself.
var ErrInCallback = errors.New("ggml: cannot compute a graph from inside a custom-op callback")

// Compute runs the graph with nThreads threads, those of a pool the
// process keeps between computations (see ReleaseCachedThreadpool).
//
// It returns an error naming the op and the node if the graph cannot be
// computed (an op the CPU lacks, a tensor without memory such as one of a
// NoAlloc context, a node that would write into read-only memory such as a
// tensor of LoadGGUF without copy) or if a kernel found bad data: an index
// out of range in GetRows, GetRowsBack or MulMatID fails the computation
// after that node (the other rows are computed, the bad ones are zero).
//
// Computations of one graph are serialized (see Graph). If the graph has
// gradients that BuildBackward could not initialize, the first computation
// initializes them as Reset does. Using a closed context panics with
// ErrClosed, as elsewhere; from inside a custom-op callback Compute returns
// ErrInCallback.
func (g *Graph) Compute(nThreads int) error {
	return g.ComputeContext(context.Background(), nThreads)
}

// ComputeContext is Compute, stopped when cctx is done: the cancellation is
// checked between nodes (a long node runs to its end), and the error then
// wraps context.Cause(cctx). Nodes computed before keep their results, the
// others hold stale data.
func (g *Graph) ComputeContext(cctx context.Context, nThreads int) error {
	if nThreads < 1 {
		return fmt.Errorf("ggml: Compute: need at least one thread, got %d", nThreads)
	}
	return g.compute(cctx, min(nThreads, MaxThreads), nil)
}

// ComputeWith runs the graph on the threads of tp (see Compute).
// Computations on one pool run one after the other.
func (g *Graph) ComputeWith(tp *Threadpool) error {
	return g.ComputeWithContext(context.Background(), tp)
}

// ComputeWithContext is ComputeWith, stopped when cctx is done (see
// ComputeContext).
func (g *Graph) ComputeWithContext(cctx context.Context, tp *Threadpool) error {
	if insideCallback() {
		return ErrInCallback
	}
	g.ptr() // a closed context is reported before a closed pool
	if tp == nil {
		panic(&OpError{Op: "ComputeWith", Msg: "nil Threadpool"})
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	p := tp.acquire()
	defer tp.release()
	return g.compute(cctx, tp.n, p)
}

// begin starts a computation of g, on any backend: one at a time, its
// contexts kept (a Close meanwhile frees them when it ends). It panics with
// ErrClosed (wrapped) if a context is closed. The returned func ends it.
func (g *Graph) begin() (end func()) {
	g.mu.Lock()
	ok := false
	defer func() {
		if !ok {
			g.mu.Unlock()
		}
	}()
	used := g.ctx.acquire()
	ok = true
	return func() {
		release(used)
		g.mu.Unlock()
	}
}

// initGrads initializes the gradients on the first computation after a
// BuildBackward that could not (g's tensors had no memory yet); under begin.
func (g *Graph) initGrads() error {
	if !g.needReset {
		return nil
	}
	return g.reset()
}

func (g *Graph) compute(cctx context.Context, nThreads int, tp *C.struct_lm_ggml_threadpool) error {
	if insideCallback() {
		return ErrInCallback
	}
	if cctx == nil {
		cctx = context.Background()
	}
	defer g.begin()()
	if cctx.Err() != nil {
		return fmt.Errorf("ggml: compute: %w", context.Cause(cctx))
	}
	if err := g.initGrads(); err != nil {
		return fmt.Errorf("ggml: compute: %w", err)
	}
	// tensors in backend memory (Buffers, ...): not freed until the end
	pins, err := pinGraphMemory(g)
	if err != nil {
		return err
	}
	defer unpinAll(pins)
	var cancel *C.int
	if cctx.Done() != nil {
		cancel = C.gg_new_flag()
		defer C.free(unsafe.Pointer(cancel))
		defer watchCancel(cctx, func() { // released before the flag is freed
			atomic.StoreInt32((*int32)(unsafe.Pointer(cancel)), 1)
			cancelsSeen.Add(1)
		})()
	}
	var e C.gg_err
	var plan C.struct_lm_ggml_cplan
	if C.gg_graph_plan(&e, g.g, C.int(nThreads), tp, &plan) != 0 {
		return fmt.Errorf("ggml: compute: %s", C.GoString(&e.msg[0]))
	}
	// the work buffer is C memory: charged to the collector's accounting while it exists
	work := int64(plan.work_size)
	cmem.Charge(work)
	defer cmem.Release(work)
	status := C.gg_graph_compute(&e, g.g, &plan, cancel)
	if status == C.LM_GGML_STATUS_ABORTED {
		g.customOpError() // clear what the aborted callbacks recorded
		return fmt.Errorf("ggml: compute: %w", context.Cause(cctx))
	}
	if e.failed != 0 {
		g.customOpError()
		return fmt.Errorf("ggml: compute: %s", C.GoString(&e.msg[0]))
	}
	return g.customOpError()
}

// statusError is the error of a failed status without a message.
func statusError(s C.int) error {
	if s == C.LM_GGML_STATUS_SUCCESS {
		return nil
	}
	return fmt.Errorf("ggml: compute: %s", C.GoString(C.lm_ggml_status_to_string(int32(s))))
}

// cancelsSeen counts cancellations passed on to a computation (for tests).
var cancelsSeen atomic.Int64

// owners finds the contexts that hold a graph's tensors.
type ownerList []*Context

func (g *Graph) owners() ownerList { return g.ctx.closure() }

// wrap makes a Tensor of p in the context whose arena holds it.
func (o ownerList) wrap(p *C.struct_lm_ggml_tensor) *Tensor {
	if p == nil {
		return nil
	}
	for _, c := range o {
		if C.gg_ctx_owns(c.ptr(), unsafe.Pointer(p)) != 0 {
			return c.wrap(p)
		}
	}
	return o[0].wrap(p)
}
