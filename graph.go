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
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/ggml-go/ggml/internal/cmem"
)

// DefaultGraphSize is the node capacity of NewGraph.
const DefaultGraphSize = 2048

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

// NewGraph creates a graph with room for DefaultGraphSize nodes and no
// gradients. It takes GraphOverhead(DefaultGraphSize, false) bytes of the
// context's arena (about 66 KB on 64-bit systems), which MemSize must
// leave room for; NewGraphCustom with a smaller size takes less.
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
	if e.failed != 0 {
		panic(g.buildError("BuildForward", C.GoString(&e.msg[0])))
	}
	return g
}

// buildError is the *OpError of a call that adds tensors to g and failed
// with the core's message msg: when the graph ran out of room (its node or
// leaf arrays, or the hash set that holds both and fills first), it says so
// and how to get a bigger graph.
func (g *Graph) buildError(op, msg string) *OpError {
	if strings.Contains(msg, "hash set is full") || strings.Contains(msg, "graph is full") {
		msg = fmt.Sprintf("the graph is too small: it has room for %d nodes (and as many leafs), fewer than these tensors need; "+
			"make a bigger one with NewGraphCustom(size, grads) (NewGraph's size is DefaultGraphSize = %d) [core: %s]",
			g.Size(), DefaultGraphSize, msg)
	}
	return &OpError{Op: op, Msg: msg}
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

// ComputeOptions say how Graph.Run computes a graph on the CPU.
type ComputeOptions struct {
	// Threads is the number of threads; 0: DefaultThreads() (see
	// ResolveThreads). Without Threadpool, they are those of a pool the process
	// keeps between computations (see ReleaseCachedThreadpool).
	Threads int
	// Threadpool, if not nil, computes the graph on its threads;
	// computations on one pool run one after the other. Threads must then
	// be 0 or the pool's size.
	Threadpool *Threadpool
}

// Run computes the graph on the CPU, as opts say, and is stopped when ctx
// is done: the cancellation is checked between nodes (a long node runs to
// its end), and the error then wraps context.Cause(ctx). Nodes computed
// before keep their results, the others hold stale data.
//
// It returns an error naming the op and the node if the graph cannot be
// computed (an op the CPU lacks, a tensor without memory such as one of a
// NoAlloc context, a node that would write into read-only memory such as a
// tensor of LoadGGUF without copy) or if a kernel found bad data: an index
// out of range in GetRows, GetRowsBack or MulMatID fails the computation
// after that node (the other rows are computed, the bad ones are zero). A
// thread count follows the rule of every count of threads the library
// takes (ResolveThreads): 0 is DefaultThreads(), a negative count or one
// above MaxThreads is an error.
//
// Computations of one graph are serialized (see Graph). If the graph has
// gradients that BuildBackward could not initialize, the first computation
// initializes them as Reset does. Using a closed context panics with
// ErrClosed, as elsewhere; from inside a custom-op callback Run returns
// ErrInCallback. Graphs whose tensors live in backend buffers can also be
// computed by Backend.Compute and Scheduler.Compute, which take the same
// context first.
func (g *Graph) Run(ctx context.Context, opts ComputeOptions) error {
	if err := computeArgs("Run", ctx, g); err != nil {
		return err
	}
	if insideCallback() {
		return ErrInCallback
	}
	g.ptr() // a closed context is reported before a closed pool
	if tp := opts.Threadpool; tp != nil {
		tp.mu.Lock()
		defer tp.mu.Unlock()
		p := tp.acquire()
		defer tp.release()
		if opts.Threads != 0 && opts.Threads != tp.n {
			return fmt.Errorf("ggml: Run: %d threads asked of a pool of %d", opts.Threads, tp.n)
		}
		return g.compute(ctx, tp.n, p)
	}
	n, err := resolveThreads("Compute", opts.Threads)
	if err != nil {
		return err
	}
	return g.compute(ctx, n, nil)
}

// Compute runs the graph with nThreads threads (0: DefaultThreads()): the
// short form of g.Run(context.Background(), ComputeOptions{Threads:
// nThreads}). See Run.
func (g *Graph) Compute(nThreads int) error {
	return g.Run(context.Background(), ComputeOptions{Threads: nThreads})
}

// ComputeContext is Compute, stopped when cctx is done.
//
// Deprecated: use g.Run(cctx, ComputeOptions{Threads: nThreads}).
func (g *Graph) ComputeContext(cctx context.Context, nThreads int) error {
	return g.Run(cctx, ComputeOptions{Threads: nThreads})
}

// ComputeWith runs the graph on the threads of tp.
//
// Deprecated: use g.Run(ctx, ComputeOptions{Threadpool: tp}).
func (g *Graph) ComputeWith(tp *Threadpool) error {
	return g.ComputeWithContext(context.Background(), tp)
}

// ComputeWithContext is ComputeWith, stopped when cctx is done.
//
// Deprecated: use g.Run(cctx, ComputeOptions{Threadpool: tp}).
func (g *Graph) ComputeWithContext(cctx context.Context, tp *Threadpool) error {
	if tp == nil {
		if insideCallback() {
			return ErrInCallback
		}
		g.ptr()
		panic(&OpError{Op: "ComputeWith", Msg: "nil Threadpool"})
	}
	return g.Run(cctx, ComputeOptions{Threadpool: tp})
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
