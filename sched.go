package ggml

/*
#include "glue.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include <stdatomic.h>
#include <stdint.h>

// Error capture for the scheduler's calls: an abort inside a backend comes
// back in e, and so does the reason of a failure the call reports.
static void gg_sched_fail(gg_err * e, const char * fallback) {
    e->failed = 1;
    const char * why = lm_backend_last_error();
    snprintf(e->msg, sizeof(e->msg), "%s", why[0] != '\0' ? why : fallback);
}

static lm_ggml_backend_sched_t gg_sched_new(gg_err * e, lm_ggml_backend_t * backends, int n, size_t size, bool parallel) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        e->failed = 1;
        memcpy(e->msg, f.msg, sizeof(e->msg));
        return NULL;
    }
    lm_ggml_backend_sched_t s = lm_ggml_backend_sched_new(backends, NULL, n, size, parallel);
    lm_ggml_err_pop(&f);
    if (s == NULL) gg_sched_fail(e, "cannot create the scheduler");
    return s;
}

// what: 0 reserve, 1 alloc_graph.
static bool gg_sched_place(gg_err * e, lm_ggml_backend_sched_t s, gg_g * g, int what) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        e->failed = 1;
        memcpy(e->msg, f.msg, sizeof(e->msg));
        return false;
    }
    const bool ok = what == 0 ? lm_ggml_backend_sched_reserve(s, g) : lm_ggml_backend_sched_alloc_graph(s, g);
    lm_ggml_err_pop(&f);
    if (!ok) gg_sched_fail(e, what == 0 ? "cannot reserve the graph" : "cannot allocate the graph");
    return ok;
}

extern _Bool goSchedEval(struct lm_ggml_tensor * t, _Bool ask, uintptr_t h);
static bool gg_sched_eval(struct lm_ggml_tensor * t, bool ask, void * h) { return goSchedEval(t, ask, (uintptr_t) h); }

// Computes g with the eval trampoline installed when h != 0.
static int gg_sched_compute(gg_err * e, lm_ggml_backend_sched_t s, gg_g * g, uintptr_t h) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        lm_ggml_backend_sched_set_eval_callback(s, NULL, NULL);
        e->failed = 1;
        memcpy(e->msg, f.msg, sizeof(e->msg));
        return LM_GGML_STATUS_FAILED;
    }
    lm_ggml_backend_sched_set_eval_callback(s, h != 0 ? gg_sched_eval : NULL, (void *) h);
    const int st = lm_ggml_backend_sched_graph_compute(s, g);
    lm_ggml_backend_sched_set_eval_callback(s, NULL, NULL);
    lm_ggml_err_pop(&f);
    if (st == LM_GGML_STATUS_FAILED || st == LM_GGML_STATUS_ALLOC_FAILED) {
        gg_sched_fail(e, lm_ggml_status_to_string(st));
    }
    return st;
}

// The compute buffers g's tensors were placed in (usage COMPUTE, each once).
static int gg_sched_buffers(gg_g * g, struct lm_ggml_backend_buffer ** out, int cap) {
    int n = 0;
    for (int k = 0; k < g->n_nodes + g->n_leafs; k++) {
        const gg_t * t = k < g->n_nodes ? g->nodes[k] : g->leafs[k - g->n_nodes];
        struct lm_ggml_backend_buffer * b = t->buffer;
        if (b == NULL || lm_ggml_backend_buffer_get_usage(b) != LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE) continue;
        int i = 0;
        while (i < n && out[i] != b) i++;
        if (i == n && n < cap) out[n++] = b;
    }
    return n;
}

// Cancellation: a flag read by the backends' abort callbacks after each node.
typedef struct { atomic_int stop; } gg_sched_stop;
static bool gg_sched_stop_cb(void * p) { return atomic_load(&((gg_sched_stop *) p)->stop) != 0; }
static gg_sched_stop * gg_sched_stop_new(void) { return calloc(1, sizeof(gg_sched_stop)); }
static void gg_sched_stop_set(gg_sched_stop * f, int v) { atomic_store(&f->stop, v); }

// Installs (f != NULL) or removes the abort callback of b where its
// registry offers one; whether it could.
static bool gg_sched_watch(lm_ggml_backend_t b, gg_sched_stop * f) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_dev_backend_reg(lm_ggml_backend_get_device(b));
    if (reg == NULL) return false;
    lm_ggml_backend_set_abort_callback_t fn = (lm_ggml_backend_set_abort_callback_t)
        lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_set_abort_callback");
    if (fn == NULL) return false;
    fn(b, f != NULL ? gg_sched_stop_cb : NULL, f);
    return true;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/cgo"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ggml-go/ggml/internal/cmem"
)

// Scheduler computes graphs over several backends (lm_ggml_backend_sched):
// each node goes to a backend (the first, in the order given, that supports
// it, preferring the one whose buffer holds its weights or that
// SetTensorBackend named), the graph is cut into splits of consecutive nodes
// on one backend, and the inputs a split needs from another backend's memory
// are copied into its compute buffer. The compute buffers (one per buffer
// type) belong to the scheduler and are reused from graph to graph.
//
// The scheduler keeps its backends alive; closing one of them while the
// scheduler uses it makes its calls panic with ErrClosedBackend. The tensors
// of a graph it placed keep it alive; placing another graph (Alloc, Reserve,
// or Compute of a graph other than the last one placed), Reset or Close
// detaches them (their memory is reused: reading them is an error until
// they are placed again). It is safe for concurrent use: its calls run one
// after the other.
type Scheduler struct {
	mu       sync.Mutex
	s        C.lm_ggml_backend_sched_t
	backends []*Backend
	cbs      []C.lm_ggml_backend_t // their C backends (fixed for the scheduler's life)
	stop     *C.gg_sched_stop
	eval     func(t *Tensor, ask bool) bool
	placed   *Graph        // the graph placed last: computed again without a new split
	placedN  [2]int        // its node and leaf counts then (a graph extended since is placed again)
	mem      memRanges     // the compute buffers of the last placement
	users    contextSet    // contexts whose tensors live in mem
	life     memLife       // data accesses in flight to mem
	held     *cmem.Holding // its host compute buffers, counted by the garbage collector
	cleanup  runtime.Cleanup

	closeLater atomic.Bool // Close from a callback: the holder of mu frees it
}

// ErrClosedScheduler is the panic value when a closed Scheduler is used.
var ErrClosedScheduler = errors.New("ggml: use of closed scheduler")

type schedHandle struct {
	s        C.lm_ggml_backend_sched_t
	stop     *C.gg_sched_stop
	backends []*Backend // alive until the scheduler is freed
	held     *cmem.Holding
}

func freeScheduler(h schedHandle) {
	C.lm_ggml_backend_sched_free(h.s)
	C.free(unsafe.Pointer(h.stop))
	if h.held != nil {
		h.held.Collected()
	}
}

// NewScheduler creates a scheduler over backends, in priority order (the
// last one, usually the CPU, also takes the graph inputs). graphSize is the
// most nodes plus leafs of the graphs it will compute. With parallel
// upstream ggml keeps several copies of the inputs to overlap successive graphs
// on asynchronous backends; every backend of this package completes its
// work before returning, so NCopies is 1 either way. A backend given twice
// (as ggml's own tests give the CPU as both main and host backend) counts
// once: where the scheduler would use the later one, it uses the first.
func NewScheduler(backends []*Backend, graphSize int, parallel bool) (*Scheduler, error) {
	initOnce()
	if len(backends) == 0 || len(backends) > 16 {
		return nil, fmt.Errorf("ggml: NewScheduler: need 1 to 16 backends, got %d", len(backends))
	}
	if graphSize <= 0 {
		return nil, fmt.Errorf("ggml: NewScheduler: graph size must be positive, got %d", graphSize)
	}
	cb := make([]C.lm_ggml_backend_t, len(backends))
	for i, b := range backends {
		if b == nil {
			return nil, fmt.Errorf("ggml: NewScheduler: backend %d is nil", i)
		}
	}
	bs := slices.Clone(backends)
	unlock, err := lockBackends(bs)
	if err != nil {
		return nil, fmt.Errorf("ggml: NewScheduler: %w", err)
	}
	defer unlock()
	for i, b := range bs {
		cb[i] = b.ptr()
	}
	stop := C.gg_sched_stop_new()
	if stop == nil {
		return nil, errors.New("ggml: NewScheduler: out of memory")
	}
	var e C.gg_err
	s := C.gg_sched_new(&e, &cb[0], C.int(len(cb)), C.size_t(graphSize), C.bool(parallel))
	if s == nil {
		C.free(unsafe.Pointer(stop))
		return nil, fmt.Errorf("ggml: NewScheduler: %s", C.GoString(&e.msg[0]))
	}
	sc := &Scheduler{s: s, backends: bs, cbs: cb, stop: stop, held: new(cmem.Holding)}
	sc.cleanup = runtime.AddCleanup(sc, freeScheduler, schedHandle{s, stop, bs, sc.held})
	return sc, nil
}

// lockWaits locks mu, unless that would wait from inside a callback (of a
// computation that may hold mu and waits for the callback): then it reports
// false without locking.
func lockWaits(mu *sync.Mutex) bool {
	if mu.TryLock() {
		return true
	}
	if insideCallback() {
		return false
	}
	mu.Lock()
	return true
}

// lockBackends locks the backends and the thread pools set on them (each
// in one global order, so that schedulers sharing backends cannot deadlock).
// It panics with ErrClosedBackend if a backend is closed, and fails if a
// pool set on one was closed, or with ErrInCallback if a callback would wait
// for its own computation. The returned function unlocks them.
func lockBackends(bs []*Backend) (func(), error) {
	byAddr := func(a, b unsafe.Pointer) int {
		switch {
		case uintptr(a) < uintptr(b):
			return -1
		case uintptr(a) > uintptr(b):
			return 1
		}
		return 0
	}
	order := slices.Clone(bs)
	slices.SortFunc(order, func(a, b *Backend) int { return byAddr(unsafe.Pointer(a), unsafe.Pointer(b)) })
	order = slices.Compact(order) // a backend given twice is locked once
	for i, b := range order {
		if !lockWaits(&b.mu) {
			for _, l := range order[:i] {
				l.unlock()
			}
			return nil, ErrInCallback
		}
	}
	var pools []*Threadpool
	for _, b := range order {
		if b.pool != nil && !slices.Contains(pools, b.pool) {
			pools = append(pools, b.pool)
		}
	}
	slices.SortFunc(pools, func(a, b *Threadpool) int { return byAddr(unsafe.Pointer(a), unsafe.Pointer(b)) })
	for i, p := range pools {
		if !lockWaits(&p.mu) {
			for _, l := range pools[:i] {
				l.mu.Unlock()
			}
			for _, b := range order {
				b.unlock()
			}
			return nil, ErrInCallback
		}
	}
	unlock := func() {
		for _, p := range pools {
			p.mu.Unlock()
		}
		for _, b := range order {
			b.unlock()
		}
	}
	for _, b := range order {
		if b.b == nil || b.closeLater.Load() {
			unlock()
			panic(ErrClosedBackend)
		}
	}
	for _, p := range pools {
		if p.closed.Load() {
			unlock()
			return nil, ErrClosedThreadpool
		}
	}
	// as Backend.Compute: a pool closed meanwhile stops its threads when
	// this call ends
	for _, p := range pools {
		p.acquire()
	}
	return func() {
		for _, p := range pools {
			p.release()
		}
		unlock()
	}, nil
}

// enter locks the scheduler and its backends for a call that runs on them.
// It panics if the scheduler or a backend is closed; ErrInCallback from a
// callback of a computation holding them.
func (sc *Scheduler) enter(op string) (func(), error) {
	if err := sc.lock(op); err != nil {
		return nil, err
	}
	unlock, err := func() (f func(), err error) {
		defer func() {
			if f == nil {
				sc.unlock()
			}
		}()
		return lockBackends(sc.backends)
	}()
	if err != nil {
		return nil, err
	}
	return func() {
		unlock()
		sc.unlock()
	}, nil
}

// lock locks the scheduler alone (for calls that only read its state). It
// panics with an *OpError for a nil scheduler, ErrClosedScheduler for a
// closed one, and returns ErrInCallback from a callback of a computation
// holding the scheduler (the eval callback, a custom op's).
func (sc *Scheduler) lock(op string) error {
	if sc == nil {
		panic(&OpError{Op: op, Msg: "nil *Scheduler"})
	}
	if !lockWaits(&sc.mu) {
		return fmt.Errorf("ggml: Scheduler.%s: %w", op, ErrInCallback)
	}
	if sc.s == nil || sc.closeLater.Load() {
		sc.unlock() // frees it if a Close from a callback left that to the holder
		panic(ErrClosedScheduler)
	}
	return nil
}

// mustLock is lock for methods without an error result: ErrInCallback is
// their panic.
func (sc *Scheduler) mustLock(op string) {
	if err := sc.lock(op); err != nil {
		panic(err)
	}
}

// unlock releases sc.mu, first freeing the scheduler if Close came from a
// callback of the call that held it.
func (sc *Scheduler) unlock() {
	if sc.closeLater.Load() && sc.s != nil {
		_ = sc.free() // not from a callback: the placement's readers can be waited for
	}
	sc.mu.Unlock()
}

// Close detaches the tensors the scheduler placed and frees it and its
// compute buffers (not the backends). From a callback of a computation of
// the scheduler it returns at once and the scheduler is freed when the
// computation ends. Close is idempotent.
func (sc *Scheduler) Close() error {
	if sc == nil {
		return nil
	}
	if !sc.mu.TryLock() {
		if !insideCallback() {
			sc.mu.Lock()
		} else if sc.closeLater.Store(true); !sc.mu.TryLock() {
			return nil // the holder of sc.mu frees it (unlock)
		}
	}
	defer sc.mu.Unlock()
	if sc.s != nil {
		return sc.free()
	}
	return nil
}

// free releases the scheduler (under sc.mu).
func (sc *Scheduler) free() error {
	if err := sc.release(); err != nil {
		return fmt.Errorf("ggml: Scheduler.Close: %w", err)
	}
	sc.closeLater.Store(false)
	sc.cleanup.Stop()
	freeScheduler(schedHandle{sc.s, sc.stop, nil, nil})
	sc.held.Release()
	sc.s, sc.stop, sc.placed = nil, nil, nil
	runtime.KeepAlive(sc.backends)
	sc.backends, sc.cbs = nil, nil
	return nil
}

// release detaches the tensors of earlier placements (under sc.mu). It
// fails with ErrInCallback from a callback of a computation reading them.
func (sc *Scheduler) release() error {
	// data accesses in flight to the old placement finish first
	if err := sc.life.hold(); err != nil {
		return err
	}
	defer sc.life.share()
	sc.users.detach(&sc.mem)
	owners.remove(sc.mem.bufs)
	sc.mem = memRanges{}
	sc.placed = nil
	return nil
}

func (sc *Scheduler) pin() bool { return sc.life.pin() }
func (sc *Scheduler) unpin()    { sc.life.unpin() }

func (sc *Scheduler) track(ctx *Context) {
	sc.users.add(ctx)
	ctx.keepAlive(sc)
}

// record notes the compute buffers g was placed in and the contexts whose
// tensors now live there (under sc.mu).
func (sc *Scheduler) record(g *Graph) {
	var bufs [64]*C.struct_lm_ggml_backend_buffer
	n := int(C.gg_sched_buffers(g.g, &bufs[0], C.int(len(bufs))))
	for _, b := range bufs[:n] {
		if owners.get(b) == nil {
			sc.mem.add(b)
		}
	}
	owners.add(sc.mem.bufs, sc)
	for _, c := range graphContexts(g) {
		sc.track(c)
	}
}

// account tells the garbage collector how much host memory the compute
// buffers hold now (under sc.mu).
func (sc *Scheduler) account() {
	var n int64
	for _, b := range sc.cbs {
		if C.lm_ggml_backend_buft_is_host(C.lm_ggml_backend_get_default_buffer_type(b)) {
			n += int64(C.lm_ggml_backend_sched_get_buffer_size(sc.s, b))
		}
	}
	sc.held.Set(n)
}

// place splits g and places it (what: 0 reserve, 1 alloc), under the locks.
func (sc *Scheduler) place(op string, g *Graph, what C.int) error {
	g.ptr()
	if err := sc.release(); err != nil {
		return fmt.Errorf("ggml: Scheduler.%s: %w", op, err)
	}
	// the memory of g's tensors in Buffers stays while the scheduler reads it
	pins, err := pinGraphMemoryExcept(g, sc)
	if err != nil {
		return fmt.Errorf("ggml: Scheduler.%s: %w", op, err)
	}
	defer unpinAll(pins)
	var e C.gg_err
	ok := C.gg_sched_place(&e, sc.s, g.g, what)
	sc.account()
	if what == 1 {
		sc.record(g) // even after a failure: some tensors may be placed
	}
	runtime.KeepAlive(g)
	if !ok {
		return fmt.Errorf("ggml: Scheduler.%s: %s", op, C.GoString(&e.msg[0]))
	}
	if what == 1 {
		sc.placed = g
		sc.placedN = graphCounts(g)
	}
	return nil
}

func graphCounts(g *Graph) [2]int { return [2]int{int(g.g.n_nodes), int(g.g.n_leafs)} }

// schedArgs checks the receiver and graph of a call: an error for nil.
func schedArgs(op string, sc *Scheduler, g *Graph) error {
	switch {
	case sc == nil:
		return &OpError{Op: "Scheduler." + op, Msg: "nil *Scheduler"}
	case g == nil:
		return &OpError{Op: "Scheduler." + op, Msg: "nil *Graph"}
	}
	return nil
}

// Reserve sizes the compute buffers for g, the largest graph to come,
// without placing or computing it: graphs of its shape then compute without
// allocating.
func (sc *Scheduler) Reserve(g *Graph) error {
	if err := schedArgs("Reserve", sc, g); err != nil {
		return err
	}
	unlock, err := sc.enter("Reserve")
	if err != nil {
		return fmt.Errorf("ggml: Scheduler.Reserve: %w", err)
	}
	defer unlock()
	return sc.place("Reserve", g, 0)
}

// Alloc assigns g's nodes to backends and places its tensors in the compute
// buffers, so that inputs can be set before Compute.
func (sc *Scheduler) Alloc(g *Graph) error {
	if err := schedArgs("Alloc", sc, g); err != nil {
		return err
	}
	unlock, err := sc.enter("Alloc")
	if err != nil {
		return fmt.Errorf("ggml: Scheduler.Alloc: %w", err)
	}
	defer unlock()
	return sc.place("Alloc", g, 1)
}

// schedCall is what the eval trampoline needs during one Compute.
type schedCall struct {
	g    *Graph
	fn   func(t *Tensor, ask bool) bool
	err  error // a panic of fn, or its runtime.Goexit
	want bool  // fn's last result
}

// runSchedEval runs the eval callback on a goroutine of its own, which the
// computation waits for (as custom-op callbacks: a runtime.Goexit ends only
// it, and insideCallback finds it on the stack).
func runSchedEval(call *schedCall, t *Tensor, ask bool, done chan<- struct{}) {
	defer close(done)
	returned := false
	defer func() {
		r := recover()
		switch {
		case r != nil:
			if err, ok := r.(error); ok {
				call.err = fmt.Errorf("ggml: Scheduler.Compute: eval callback panicked: %w", err)
			} else {
				call.err = fmt.Errorf("ggml: Scheduler.Compute: eval callback panicked: %v", r)
			}
		case !returned:
			call.err = fmt.Errorf("ggml: Scheduler.Compute: eval callback: %w", errGoexit)
		}
	}()
	call.want = call.fn(t, ask)
	returned = true
}

var runSchedEvalName = runtime.FuncForPC(reflect.ValueOf(runSchedEval).Pointer()).Name()

// Compute computes g: the graph placed last (by Alloc or the previous
// Compute) as it is, any other graph after placing it. Cancelling ctx stops
// the computation after the node being computed on backends that can abort
// (the CPU); Compute then returns ctx.Err().
func (sc *Scheduler) Compute(ctx context.Context, g *Graph) error {
	if insideCallback() {
		return ErrInCallback
	}
	if err := schedArgs("Compute", sc, g); err != nil {
		return err
	}
	if ctx == nil {
		return &OpError{Op: "Scheduler.Compute", Msg: "nil context.Context"}
	}
	unlock, err := sc.enter("Compute")
	if err != nil {
		return fmt.Errorf("ggml: Scheduler.Compute: %w", err)
	}
	defer unlock()
	g.ptr()
	if err := ctx.Err(); err != nil {
		return err
	}
	defer g.begin()()
	if sc.placed != g || sc.placedN != graphCounts(g) {
		if err := sc.place("Compute", g, 1); err != nil {
			return err
		}
	}
	if err := g.initGrads(); err != nil { // once placed: the gradients need memory
		return fmt.Errorf("ggml: Scheduler.Compute: %w", err)
	}
	// the memory of the graph's tensors (weights in Buffers, ...) stays
	// until the computation ends
	pins, err := pinGraphMemory(g)
	if err != nil {
		return fmt.Errorf("ggml: Scheduler.Compute: %w", err)
	}
	defer unpinAll(pins)
	if ctx.Done() != nil {
		C.gg_sched_stop_set(sc.stop, 0)
		var watched []C.lm_ggml_backend_t
		for _, b := range sc.cbs {
			if C.gg_sched_watch(b, sc.stop) {
				watched = append(watched, b)
			}
		}
		release := watchCancel(ctx, func() { C.gg_sched_stop_set(sc.stop, 1) })
		defer func() {
			release()
			for _, b := range watched {
				C.gg_sched_watch(b, nil)
			}
		}()
	}
	var h cgo.Handle
	var call *schedCall
	if sc.eval != nil {
		call = &schedCall{g: g, fn: sc.eval}
		h = cgo.NewHandle(call)
		defer h.Delete()
	}
	var e C.gg_err
	st := C.gg_sched_compute(&e, sc.s, g.g, C.uintptr_t(h))
	runtime.KeepAlive(g)
	for _, b := range sc.backends {
		if b.cpu {
			b.account()
		}
	}
	switch {
	case call != nil && call.err != nil:
		return call.err
	case st == C.LM_GGML_STATUS_ABORTED && ctx.Err() != nil:
		return ctx.Err()
	case e.failed != 0:
		return fmt.Errorf("ggml: Scheduler.Compute: %s", C.GoString(&e.msg[0]))
	case st != C.LM_GGML_STATUS_SUCCESS:
		return statusError(C.int(st))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return g.customOpError()
}

// SetEvalCallback sets fn to be called during Compute for every node: with
// ask true, before the node is computed, fn says whether it wants to see the
// node's result; if so the graph is cut after the node and fn is called
// again with ask false once it is computed (its data can then be read), and
// returning false stops the computation (Compute returns nil). fn runs on
// a goroutine of its own that Compute waits for; it must not use the
// scheduler or its backends (their methods return or panic with
// ErrInCallback there, and Close takes effect when Compute ends). A panic
// or runtime.Goexit of fn makes Compute return an error. nil removes the
// callback.
func (sc *Scheduler) SetEvalCallback(fn func(t *Tensor, ask bool) bool) {
	sc.mustLock("SetEvalCallback")
	defer sc.unlock()
	sc.eval = fn
}

// SetTensorBackend makes t (a node of the graphs to come) be computed on b,
// one of the scheduler's backends, until Reset.
func (sc *Scheduler) SetTensorBackend(t *Tensor, b *Backend) error {
	if sc == nil {
		return &OpError{Op: "Scheduler.SetTensorBackend", Msg: "nil *Scheduler"}
	}
	if t == nil || b == nil {
		return &OpError{Op: "Scheduler.SetTensorBackend", Msg: "nil tensor or backend"}
	}
	if err := sc.lock("SetTensorBackend"); err != nil {
		return err
	}
	defer sc.unlock()
	i := slices.Index(sc.backends, b)
	if i < 0 {
		return errors.New("ggml: Scheduler.SetTensorBackend: the backend is not one of the scheduler's")
	}
	C.lm_ggml_backend_sched_set_tensor_backend(sc.s, t.ptr(), sc.cbs[i])
	return nil
}

// TensorBackend is the backend t was assigned to by the last placement (or
// by SetTensorBackend), nil if none.
func (sc *Scheduler) TensorBackend(t *Tensor) *Backend {
	needTensors("Scheduler.TensorBackend", t)
	sc.mustLock("TensorBackend")
	defer sc.unlock()
	cb := C.lm_ggml_backend_sched_get_tensor_backend(sc.s, t.ptr())
	if i := slices.Index(sc.cbs, cb); i >= 0 && cb != nil {
		return sc.backends[i]
	}
	return nil
}

// NSplits is the number of splits of the last graph placed or reserved.
func (sc *Scheduler) NSplits() int {
	sc.mustLock("NSplits")
	defer sc.unlock()
	return int(C.lm_ggml_backend_sched_get_n_splits(sc.s))
}

// NCopies is the number of copies kept of each input (1: see NewScheduler).
func (sc *Scheduler) NCopies() int {
	sc.mustLock("NCopies")
	defer sc.unlock()
	return int(C.lm_ggml_backend_sched_get_n_copies(sc.s))
}

// Backends returns the scheduler's backends, in priority order.
func (sc *Scheduler) Backends() []*Backend {
	sc.mustLock("Backends")
	defer sc.unlock()
	return slices.Clone(sc.backends)
}

// BufferSize is the size of the compute buffer of backend b (0 if b shares
// the buffer of an earlier backend with the same buffer type, or is not one
// of the scheduler's).
func (sc *Scheduler) BufferSize(b *Backend) int {
	sc.mustLock("BufferSize")
	defer sc.unlock()
	i := slices.Index(sc.backends, b)
	if i < 0 {
		return 0
	}
	return int(C.lm_ggml_backend_sched_get_buffer_size(sc.s, sc.cbs[i]))
}

// Reset forgets the assignments (SetTensorBackend included) and detaches
// the tensors of the graph placed last; the compute buffers are kept.
func (sc *Scheduler) Reset() {
	sc.mustLock("Reset")
	defer sc.unlock()
	if err := sc.release(); err != nil {
		panic(fmt.Errorf("ggml: Scheduler.Reset: %w", err))
	}
	C.lm_ggml_backend_sched_reset(sc.s)
}
