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

// Computes g with the plan the caller made (lm_ggml_graph_plan), with the
// work buffer from the C heap.
static int gg_graph_compute(gg_g * g, struct lm_ggml_cplan * plan) {
    void * work = NULL;
    if (plan->work_size > 0) {
        work = malloc(plan->work_size);
        if (work == NULL) return LM_GGML_STATUS_ALLOC_FAILED;
        plan->work_data = work;
    }
    int status = lm_ggml_graph_compute(g, plan);
    free(work);
    plan->work_data = NULL;
    return status;
}

static struct lm_ggml_threadpool * gg_threadpool_new(int n, int prio, uint32_t poll, bool strict, bool paused, const bool * mask) {
    struct lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(n);
    p.prio = prio;
    p.poll = poll;
    p.strict_cpu = strict;
    p.paused = paused;
    if (mask) memcpy(p.cpumask, mask, sizeof(p.cpumask));
    return lm_ggml_threadpool_new(&p);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ggml-go/ggml/internal/cmem"
)

// DefaultGraphSize is the node capacity of NewGraph.
const DefaultGraphSize = int(C.LM_GGML_DEFAULT_GRAPH_SIZE)

// Graph is a computation graph in a Context: the nodes to compute, in order.
type Graph struct {
	ctx *Context
	g   *C.struct_lm_ggml_cgraph
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
	g.ctx.ptr()
	return g.g
}

// Context returns the context that holds the graph.
func (g *Graph) Context() *Context { return g.ctx }

// BuildForward adds t and every tensor it depends on (not yet in the graph).
func (g *Graph) BuildForward(t *Tensor) *Graph {
	e := g.ctx.errBuf()
	C.gg_build_forward_expand(e, g.ptr(), t.use(g.ctx))
	check("BuildForward", e)
	return g
}

// Size is the node capacity.
func (g *Graph) Size() int { return int(C.lm_ggml_graph_size(g.ptr())) }

// NNodes is the number of nodes (tensors computed by an op).
func (g *Graph) NNodes() int { return int(C.lm_ggml_graph_n_nodes(g.ptr())) }

// Node returns node i; negative i counts from the end (-1 is the last node).
func (g *Graph) Node(i int) *Tensor {
	e := g.ctx.errBuf()
	t := C.gg_graph_node(e, g.ptr(), C.int(i))
	check("Node", e)
	return g.ctx.wrap(t)
}

// Nodes returns the nodes in compute order.
func (g *Graph) Nodes() []*Tensor {
	n := g.NNodes()
	out := make([]*Tensor, n)
	for i := range out {
		out[i] = g.Node(i)
	}
	return out
}

// Leafs returns the graph's leafs (tensors used but not computed).
func (g *Graph) Leafs() []*Tensor {
	p := g.ptr()
	n := int(C.gg_graph_n_leafs(p))
	out := make([]*Tensor, n)
	for i := range out {
		out[i] = g.ctx.wrap(C.gg_graph_leaf(p, C.int(i)))
	}
	return out
}

// Tensor returns the node or leaf with the given name, or nil.
func (g *Graph) Tensor(name string) *Tensor {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return g.ctx.wrap(C.lm_ggml_graph_get_tensor(g.ptr(), cs))
}

// Clear removes every node and leaf.
func (g *Graph) Clear() { C.lm_ggml_graph_clear(g.ptr()) }

// Dup copies the graph (with its gradients) into ctx.
func (g *Graph) Dup(ctx *Context) *Graph {
	e := ctx.errBuf()
	r := C.gg_graph_dup(e, ctx.ptr(), g.ptr())
	check("Dup", e)
	if ctx != g.ctx {
		if ctx.deps == nil {
			ctx.deps = map[*Context]struct{}{}
		}
		ctx.deps[g.ctx] = struct{}{}
	}
	return &Graph{ctx: ctx, g: r}
}

// CopyTo copies the graph's nodes, leafs and gradients into dst.
func (g *Graph) CopyTo(dst *Graph) {
	e := g.ctx.errBuf()
	C.gg_graph_cpy(e, g.ptr(), dst.ptr())
	check("CopyTo", e)
}

// Print writes a description of the graph to the log.
func (g *Graph) Print() { C.lm_ggml_graph_print(g.ptr()) }

// DumpDot writes the graph in graphviz format to path; fwd, if not nil, is
// the forward graph (its nodes are drawn differently).
func (g *Graph) DumpDot(fwd *Graph, path string) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	var f *C.struct_lm_ggml_cgraph
	if fwd != nil {
		f = fwd.ptr()
	}
	C.lm_ggml_graph_dump_dot(g.ptr(), f, cs)
}

// checkOpen panics with ErrClosed if the graph's context, or any context its
// tensors come from, was closed.
func (g *Graph) checkOpen() {
	seen := map[*Context]bool{}
	var walk func(c *Context)
	walk = func(c *Context) {
		if seen[c] {
			return
		}
		seen[c] = true
		c.ptr()
		for d := range c.deps {
			walk(d)
		}
	}
	walk(g.ctx)
}

// Compute runs the graph with nThreads threads (a pool made for this call).
func (g *Graph) Compute(nThreads int) error {
	if nThreads < 1 {
		return fmt.Errorf("ggml: Compute: need at least one thread, got %d", nThreads)
	}
	if nThreads > MaxThreads {
		nThreads = MaxThreads
	}
	g.checkOpen()
	if err := g.compute(nThreads, nil); err != nil {
		return err
	}
	return g.customOpError()
}

// ComputeWith runs the graph on the threads of tp.
func (g *Graph) ComputeWith(tp *Threadpool) error {
	g.checkOpen()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	err := g.compute(tp.n, tp.ptr())
	runtime.KeepAlive(tp)
	if err != nil {
		return err
	}
	return g.customOpError()
}

// compute plans and runs the graph. The work buffer is C memory, charged to
// the collector's accounting while it exists. The graph (and through it its
// contexts) stays reachable until the computation is over: a caller whose
// last use of them is this call must not see them collected under it.
func (g *Graph) compute(nThreads int, tp *C.struct_lm_ggml_threadpool) error {
	defer runtime.KeepAlive(g)
	plan := C.lm_ggml_graph_plan(g.g, C.int(nThreads), tp)
	work := int64(plan.work_size)
	cmem.Charge(work)
	defer cmem.Release(work)
	return statusError(C.gg_graph_compute(g.g, &plan))
}

func statusError(s C.int) error {
	if s == C.LM_GGML_STATUS_SUCCESS {
		return nil
	}
	return fmt.Errorf("ggml: compute: %s", C.GoString(C.lm_ggml_status_to_string(int32(s))))
}

// ---------------------------------------------------------------- thread pools

// MaxThreads is the largest number of threads of a pool.
const MaxThreads = int(C.LM_GGML_MAX_N_THREADS)

// SchedPriority is the scheduling priority of a pool's threads.
type SchedPriority int32

// Priorities, as in the C API.
const (
	PrioNormal   SchedPriority = C.LM_GGML_SCHED_PRIO_NORMAL
	PrioMedium   SchedPriority = C.LM_GGML_SCHED_PRIO_MEDIUM
	PrioHigh     SchedPriority = C.LM_GGML_SCHED_PRIO_HIGH
	PrioRealtime SchedPriority = C.LM_GGML_SCHED_PRIO_REALTIME
)

// ThreadpoolParams configure a Threadpool (lm_ggml_threadpool_params).
type ThreadpoolParams struct {
	NThreads  int
	Prio      SchedPriority
	Poll      uint32 // 0: sleep between graphs .. 100: spin aggressively
	StrictCPU bool   // one CPU of CPUMask per thread
	Paused    bool   // start paused
	CPUMask   []bool // CPUs the threads may run on; empty: any
}

// DefaultThreadpoolParams returns the C defaults for n threads: poll 50,
// normal priority, no CPU mask, not strict, not paused.
func DefaultThreadpoolParams(n int) ThreadpoolParams {
	return ThreadpoolParams{NThreads: n, Prio: PrioNormal, Poll: 50}
}

// Match reports whether p and q describe the same pool (as lm_ggml_threadpool_params_match).
func (p ThreadpoolParams) Match(q ThreadpoolParams) bool {
	if p.NThreads != q.NThreads || p.Prio != q.Prio || p.Poll != q.Poll || p.StrictCPU != q.StrictCPU {
		return false
	}
	for i := range MaxThreads {
		if (i < len(p.CPUMask) && p.CPUMask[i]) != (i < len(q.CPUMask) && q.CPUMask[i]) {
			return false
		}
	}
	return true
}

// Threadpool is a set of worker threads that compute graphs. It is safe for
// concurrent use: computations on one pool run one after the other.
type Threadpool struct {
	mu      sync.Mutex
	tp      *C.struct_lm_ggml_threadpool
	n       int
	cleanup runtime.Cleanup
}

// NewThreadpool starts a pool.
func NewThreadpool(p ThreadpoolParams) (*Threadpool, error) {
	initOnce()
	if p.NThreads < 1 || p.NThreads > MaxThreads {
		return nil, fmt.Errorf("ggml: NewThreadpool: thread count %d out of range [1, %d]", p.NThreads, MaxThreads)
	}
	if len(p.CPUMask) > MaxThreads {
		return nil, fmt.Errorf("ggml: NewThreadpool: CPU mask longer than %d", MaxThreads)
	}
	var mask *C.bool
	if len(p.CPUMask) > 0 {
		m := (*[1 << 20]C.bool)(C.calloc(C.size_t(MaxThreads), 1))[:MaxThreads:MaxThreads]
		defer C.free(unsafe.Pointer(&m[0]))
		for i, v := range p.CPUMask {
			m[i] = C.bool(v)
		}
		mask = &m[0]
	}
	cmem.Charge(threadCharge(p.NThreads))
	tp := C.gg_threadpool_new(C.int(p.NThreads), C.int(p.Prio), C.uint32_t(p.Poll), C.bool(p.StrictCPU), C.bool(p.Paused), mask)
	if tp == nil {
		cmem.Release(threadCharge(p.NThreads))
		return nil, fmt.Errorf("ggml: NewThreadpool: cannot start %d threads", p.NThreads)
	}
	t := &Threadpool{tp: tp, n: p.NThreads}
	type pool struct {
		tp *C.struct_lm_ggml_threadpool
		n  int
	}
	t.cleanup = runtime.AddCleanup(t, func(p pool) {
		C.lm_ggml_threadpool_free(p.tp)
		cmem.Collected(threadCharge(p.n))
	}, pool{tp, p.NThreads})
	return t, nil
}

// threadCharge is what a pool's OS threads count for in the collector's
// accounting (stacks and kernel state): enough that a program starting pools
// without closing them is collected long before it runs out of threads.
func threadCharge(n int) int64 { return int64(n) << 20 }

func (tp *Threadpool) ptr() *C.struct_lm_ggml_threadpool {
	if tp == nil || tp.tp == nil {
		panic(ErrClosedThreadpool)
	}
	return tp.tp
}

// ErrClosedThreadpool is the panic value when a closed Threadpool is used.
var ErrClosedThreadpool = fmt.Errorf("ggml: use of closed threadpool")

// NThreads is the number of threads of the pool.
func (tp *Threadpool) NThreads() int { tp.ptr(); return tp.n }

// Pause puts the workers to sleep until Resume or the next computation.
func (tp *Threadpool) Pause() {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	C.lm_ggml_threadpool_pause(tp.ptr())
}

// Resume wakes paused workers.
func (tp *Threadpool) Resume() {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	C.lm_ggml_threadpool_resume(tp.ptr())
}

// Close stops the workers. It is idempotent.
func (tp *Threadpool) Close() error {
	if tp == nil {
		return nil
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.tp == nil {
		return nil
	}
	tp.cleanup.Stop()
	C.lm_ggml_threadpool_free(tp.tp)
	cmem.Release(threadCharge(tp.n))
	tp.tp = nil
	return nil
}
