// User-defined operations: map_custom1/2/3 (and _inplace) with Go callbacks,
// and the deprecated map_*_f32 forms.
//
// A Go callback is registered in a cgo.Handle that travels to C as the op's
// userdata (for the _f32 forms, which have no userdata, in a spare slot of the
// node's op_params); a C trampoline hands it back to an exported Go function
// (ops_custom_export.go). The handle is deleted when the Context that built
// the node is collected. A panic in a callback is recovered on the worker
// thread and recorded on the op; Graph.Compute then reports it as an error.

package ggml

/*
#include "glue.h"
#include <stdint.h>

extern void goCustom1(gg_t *, gg_t *, int, int, uintptr_t);
extern void goCustom2(gg_t *, gg_t *, gg_t *, int, int, uintptr_t);
extern void goCustom3(gg_t *, gg_t *, gg_t *, gg_t *, int, int, uintptr_t);
extern void goCustomF32(gg_t *, gg_t *, gg_t *, gg_t *, uintptr_t);

static void gg_custom1_tramp(gg_t * dst, const gg_t * a, int ith, int nth, void * ud) {
    goCustom1(dst, (gg_t *) a, ith, nth, (uintptr_t) ud);
}
static void gg_custom2_tramp(gg_t * dst, const gg_t * a, const gg_t * b, int ith, int nth, void * ud) {
    goCustom2(dst, (gg_t *) a, (gg_t *) b, ith, nth, (uintptr_t) ud);
}
static void gg_custom3_tramp(gg_t * dst, const gg_t * a, const gg_t * b, const gg_t * c, int ith, int nth, void * ud) {
    goCustom3(dst, (gg_t *) a, (gg_t *) b, (gg_t *) c, ith, nth, (uintptr_t) ud);
}

// The _f32 forms keep only the function pointer (op_params bytes 0..7); the
// handle goes to bytes 16..23, which nothing else reads.
enum { GG_F32_HANDLE_OFF = 16 };

static uintptr_t gg_f32_handle(const gg_t * dst) {
    uintptr_t h;
    memcpy(&h, (const char *) dst->op_params + GG_F32_HANDLE_OFF, sizeof h);
    return h;
}
static void gg_custom1_f32_tramp(gg_t * dst, const gg_t * a) {
    goCustomF32(dst, (gg_t *) a, NULL, NULL, gg_f32_handle(dst));
}
static void gg_custom2_f32_tramp(gg_t * dst, const gg_t * a, const gg_t * b) {
    goCustomF32(dst, (gg_t *) a, (gg_t *) b, NULL, gg_f32_handle(dst));
}
static void gg_custom3_f32_tramp(gg_t * dst, const gg_t * a, const gg_t * b, const gg_t * c) {
    goCustomF32(dst, (gg_t *) a, (gg_t *) b, (gg_t *) c, gg_f32_handle(dst));
}

GG_DEF(gg_t *, map_custom1, (gg_c * ctx, gg_t * a, int n, uintptr_t h), (ctx, a, gg_custom1_tramp, n, (void *) h))
GG_DEF(gg_t *, map_custom1_inplace, (gg_c * ctx, gg_t * a, int n, uintptr_t h), (ctx, a, gg_custom1_tramp, n, (void *) h))
GG_DEF(gg_t *, map_custom2, (gg_c * ctx, gg_t * a, gg_t * b, int n, uintptr_t h), (ctx, a, b, gg_custom2_tramp, n, (void *) h))
GG_DEF(gg_t *, map_custom2_inplace, (gg_c * ctx, gg_t * a, gg_t * b, int n, uintptr_t h), (ctx, a, b, gg_custom2_tramp, n, (void *) h))
GG_DEF(gg_t *, map_custom3, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c, int n, uintptr_t h), (ctx, a, b, c, gg_custom3_tramp, n, (void *) h))
GG_DEF(gg_t *, map_custom3_inplace, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c, int n, uintptr_t h), (ctx, a, b, c, gg_custom3_tramp, n, (void *) h))

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
GG_DEF(gg_t *, map_unary_f32, (gg_c * ctx, gg_t * a, void * f), (ctx, a, (lm_ggml_unary_op_f32_t) f))
GG_DEF(gg_t *, map_unary_inplace_f32, (gg_c * ctx, gg_t * a, void * f), (ctx, a, (lm_ggml_unary_op_f32_t) f))
GG_DEF(gg_t *, map_binary_f32, (gg_c * ctx, gg_t * a, gg_t * b, void * f), (ctx, a, b, (lm_ggml_binary_op_f32_t) f))
GG_DEF(gg_t *, map_binary_inplace_f32, (gg_c * ctx, gg_t * a, gg_t * b, void * f), (ctx, a, b, (lm_ggml_binary_op_f32_t) f))
GG_DEF(gg_t *, map_custom1_f32, (gg_c * ctx, gg_t * a), (ctx, a, gg_custom1_f32_tramp))
GG_DEF(gg_t *, map_custom1_inplace_f32, (gg_c * ctx, gg_t * a), (ctx, a, gg_custom1_f32_tramp))
GG_DEF(gg_t *, map_custom2_f32, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b, gg_custom2_f32_tramp))
GG_DEF(gg_t *, map_custom2_inplace_f32, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b, gg_custom2_f32_tramp))
GG_DEF(gg_t *, map_custom3_f32, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c), (ctx, a, b, c, gg_custom3_f32_tramp))
GG_DEF(gg_t *, map_custom3_inplace_f32, (gg_c * ctx, gg_t * a, gg_t * b, gg_t * c), (ctx, a, b, c, gg_custom3_f32_tramp))

static void gg_set_f32_handle(gg_t * dst, uintptr_t h) {
    memcpy((char *) dst->op_params + GG_F32_HANDLE_OFF, &h, sizeof h);
}

// Layout of the map_custom{1,2,3} op_params (ggml's).
struct gg_custom_params { void * fun; int n_tasks; void * userdata; };

// Reports the handle of a node built by this file's methods (0: not ours).
static uintptr_t gg_node_handle(const gg_t * t) {
    struct gg_custom_params p;
    void * fun;
    switch (t->op) {
    case LM_GGML_OP_MAP_CUSTOM1:
    case LM_GGML_OP_MAP_CUSTOM2:
    case LM_GGML_OP_MAP_CUSTOM3:
        memcpy(&p, t->op_params, sizeof p);
        if (p.fun == (void *) gg_custom1_tramp || p.fun == (void *) gg_custom2_tramp || p.fun == (void *) gg_custom3_tramp) {
            return (uintptr_t) p.userdata;
        }
        return 0;
    case LM_GGML_OP_MAP_CUSTOM1_F32:
    case LM_GGML_OP_MAP_CUSTOM2_F32:
    case LM_GGML_OP_MAP_CUSTOM3_F32:
        memcpy(&fun, t->op_params, sizeof fun);
        if (fun == (void *) gg_custom1_f32_tramp || fun == (void *) gg_custom2_f32_tramp || fun == (void *) gg_custom3_f32_tramp) {
            return gg_f32_handle(t);
        }
        return 0;
    default:
        return 0;
    }
}

// A C row function for tests of the deprecated map_unary_f32 (dst = -src).
static void gg_test_neg_row(const int n, float * dst, const float * src) {
    for (int i = 0; i < n; i++) dst[i] = -src[i];
}
static void gg_test_sub_row(const int n, float * dst, const float * a, const float * b) {
    for (int i = 0; i < n; i++) dst[i] = a[i] - b[i];
}
static void * gg_test_neg_row_ptr(void) { return (void *) gg_test_neg_row; }
static void * gg_test_sub_row_ptr(void) { return (void *) gg_test_sub_row; }
*/
import "C"

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// NTasksMax as the nTasks of MapCustom1/2/3 runs the callback on every thread
// of the computation.
const NTasksMax = -1

// Custom1Func computes dst from a for MapCustom1: it is called once per
// task, with ith in [0, nth), and must compute its share of dst (for example
// the rows r with r % nth == ith).
//
// Threading contract: the calls for one node run concurrently on up to nth
// worker threads (not goroutines of the caller), so the function must be safe
// for concurrent use and must not block waiting on the other tasks. The
// tensors are only valid during the call: do not retain them, and do not
// build graph nodes, create tensors or compute graphs from inside the
// callback (read and write data only: Float32s, SetFloat32s, F32, SetF32,
// Bytes, SetBytes, ...). A panic, or runtime.Goexit (t.FailNow in a test), is
// recovered and makes Graph.Compute return a *CustomOpPanicError (the
// remaining tasks of that op are skipped). A computation started from the
// callback returns ErrInCallback; closing a context or a Threadpool from the
// callback takes effect for new calls at once and frees the memory when the
// computation ends (the callback's tensors then panic with ErrClosed).
//
// Each call runs on a goroutine of its own, which the worker thread waits
// for, so that a panic or Goexit cannot take down the worker thread: a
// hand-off between threads per call (BenchmarkMapCustomCall; a few
// microseconds on an idle machine, tens on an overloaded one).
type Custom1Func func(dst, a *Tensor, ith, nth int)

// Custom2Func is Custom1Func with two operands (MapCustom2).
type Custom2Func func(dst, a, b *Tensor, ith, nth int)

// Custom3Func is Custom1Func with three operands (MapCustom3).
type Custom3Func func(dst, a, b, c *Tensor, ith, nth int)

// CustomF32Func computes dst for the deprecated MapCustom{1,2,3}F32 forms: it
// is called once, on one thread, with the operands (b and c are nil when the
// op has fewer). The tensor contract of Custom1Func applies.
type CustomF32Func func(dst, a, b, c *Tensor)

// customOp is what a handle refers to.
type customOp struct {
	name string
	ctx  weak.Pointer[Context] // not strong: the handle table must not keep the context alive
	f1   Custom1Func
	f2   Custom2Func
	f3   Custom3Func
	fF32 CustomF32Func

	mu  sync.Mutex
	err error // first panic since the last Compute
}

// CustomOpPanicError is the error of a computation in which a custom op's
// callback panicked.
type CustomOpPanicError struct {
	Op    string // Go method that built the node
	Node  string // node name (may be empty)
	Value any    // the panic value
}

func (e *CustomOpPanicError) Error() string {
	return fmt.Sprintf("ggml: compute: %s callback of node %q panicked: %v", e.Op, e.Node, e.Value)
}

// Unwrap returns the panic value if it is an error.
func (e *CustomOpPanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

func (op *customOp) failed() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.err != nil
}

// pendingPanics counts recorded, not yet reported callback panics, so that
// computations without any skip the scan of their nodes.
var pendingPanics atomic.Int64

func (op *customOp) fail(dst *C.struct_lm_ggml_tensor, v any) {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.err == nil {
		op.err = &CustomOpPanicError{Op: op.name, Node: C.GoString(&dst.name[0]), Value: v}
		pendingPanics.Add(1)
	}
}

func (op *customOp) take() error {
	op.mu.Lock()
	defer op.mu.Unlock()
	err := op.err
	if err != nil {
		op.err = nil
		pendingPanics.Add(-1)
	}
	return err
}

// newHandle makes a handle for op, a callback of a node of ctx.
func (ctx *Context) newHandle(op *customOp) C.uintptr_t {
	op.ctx = weak.Make(ctx)
	return C.uintptr_t(cgo.NewHandle(op))
}

// keepHandle ties the handle of a built node to ctx: it is deleted when ctx
// is collected. A failed construction deletes it at once.
func (ctx *Context) keepHandle(h C.uintptr_t, e *C.gg_err) {
	if e.failed != 0 {
		cgo.Handle(h).Delete()
		return
	}
	runtime.AddCleanup(ctx, func(h cgo.Handle) { h.Delete() }, cgo.Handle(h))
}

// callbacksRunning counts callbacks in progress, so that insideCallback
// costs nothing while there are none.
var callbacksRunning atomic.Int64

// errGoexit is the value recorded when a callback calls runtime.Goexit (as
// t.FailNow and t.SkipNow do).
var errGoexit = errors.New("the callback called runtime.Goexit (e.g. t.FailNow)")

// runCustom runs one callback invocation. The callback runs on a goroutine
// of its own, which this worker thread waits for: a panic is recovered and a
// runtime.Goexit ends only that goroutine (on the thread of a C worker, or in
// the middle of the C computation, either would be fatal); both are recorded
// on the op and make the computation return an error.
func runCustom(h C.uintptr_t, dst *C.struct_lm_ggml_tensor, call func(op *customOp, w func(*C.struct_lm_ggml_tensor) *Tensor)) {
	op, ok := cgo.Handle(h).Value().(*customOp)
	if !ok || op.failed() {
		return
	}
	callbacksRunning.Add(1)
	defer callbacksRunning.Add(-1)
	done := make(chan struct{})
	go runCallback(op, dst, call, done)
	<-done
}

// runCallback is the body of a callback's goroutine; insideCallback looks for
// it on the stack.
func runCallback(op *customOp, dst *C.struct_lm_ggml_tensor, call func(op *customOp, w func(*C.struct_lm_ggml_tensor) *Tensor), done chan<- struct{}) {
	defer close(done)
	returned := false
	defer func() {
		if r := recover(); r != nil {
			op.fail(dst, r)
		} else if !returned {
			op.fail(dst, errGoexit)
		}
	}()
	ctx := op.ctx.Value()
	if ctx == nil {
		panic(errors.New("the context of the node was collected"))
	}
	call(op, ctx.wrap)
	returned = true
}

var runCallbackName = runtime.FuncForPC(reflect.ValueOf(runCallback).Pointer()).Name()

// insideCallback reports whether the calling goroutine runs a custom-op
// callback or a scheduler's eval callback (where a computation, or a Reset,
// would wait for itself).
func insideCallback() bool {
	if callbacksRunning.Load() == 0 {
		return false
	}
	pcs := make([]uintptr, 256)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == runCallbackName || f.Function == runSchedEvalName {
			return true
		}
		if !more {
			return false
		}
	}
}

// customOpError returns (and clears) the first callback failure recorded on
// the nodes of g since the last call. Graph.Compute and ComputeWith call it
// after the C computation returns (the contexts may be closed for use by
// then, but their arenas are alive until the computation ends).
func (g *Graph) customOpError() error {
	if pendingPanics.Load() == 0 {
		return nil
	}
	var first error
	for i, n := 0, int(C.lm_ggml_graph_n_nodes(g.g)); i < n; i++ {
		h := C.gg_node_handle(C.lm_ggml_graph_node(g.g, C.int(i)))
		if h == 0 {
			continue
		}
		op, ok := cgo.Handle(h).Value().(*customOp)
		if !ok {
			continue
		}
		if err := op.take(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func checkNTasks(op string, n int) {
	if n != NTasksMax && n <= 0 {
		panic(&OpError{Op: op, Msg: fmt.Sprintf("nTasks must be positive or NTasksMax, got %d", n)})
	}
}

func needFunc(op string, isNil bool) {
	if isNil {
		panic(&OpError{Op: op, Msg: "nil callback"})
	}
}

// MapCustom1 returns a new tensor of a's type and shape computed by fn (see
// Custom1Func for the threading contract) on min(nTasks, threads) threads;
// nTasks is positive or NTasksMax.
func (ctx *Context) MapCustom1(a *Tensor, fn Custom1Func, nTasks int) *Tensor {
	return ctx.mapCustom1("MapCustom1", a, fn, nTasks, false)
}

// MapCustom1Inplace is MapCustom1 with dst a view of a.
func (ctx *Context) MapCustom1Inplace(a *Tensor, fn Custom1Func, nTasks int) *Tensor {
	return ctx.mapCustom1("MapCustom1Inplace", a, fn, nTasks, true)
}

func (ctx *Context) mapCustom1(name string, a *Tensor, fn Custom1Func, nTasks int, inplace bool) *Tensor {
	needTensors(name, a)
	needFunc(name, fn == nil)
	checkNTasks(name, nTasks)
	c, pa := ctx.ptr(), a.use(ctx)
	h := ctx.newHandle(&customOp{name: name, f1: fn})
	var e C.gg_err
	var r *C.struct_lm_ggml_tensor
	if inplace {
		r = C.gg_map_custom1_inplace(&e, c, pa, cint(name, nTasks), h)
	} else {
		r = C.gg_map_custom1(&e, c, pa, cint(name, nTasks), h)
	}
	ctx.keepHandle(h, &e)
	check(name, &e)
	return ctx.wrap(r)
}

// MapCustom2 is MapCustom1 with a second operand b (any shape); the result
// has a's type and shape.
func (ctx *Context) MapCustom2(a, b *Tensor, fn Custom2Func, nTasks int) *Tensor {
	return ctx.mapCustom2("MapCustom2", a, b, fn, nTasks, false)
}

// MapCustom2Inplace is MapCustom2 with dst a view of a.
func (ctx *Context) MapCustom2Inplace(a, b *Tensor, fn Custom2Func, nTasks int) *Tensor {
	return ctx.mapCustom2("MapCustom2Inplace", a, b, fn, nTasks, true)
}

func (ctx *Context) mapCustom2(name string, a, b *Tensor, fn Custom2Func, nTasks int, inplace bool) *Tensor {
	needTensors(name, a, b)
	needFunc(name, fn == nil)
	checkNTasks(name, nTasks)
	c, pa, pb := ctx.ptr(), a.use(ctx), b.use(ctx)
	h := ctx.newHandle(&customOp{name: name, f2: fn})
	var e C.gg_err
	var r *C.struct_lm_ggml_tensor
	if inplace {
		r = C.gg_map_custom2_inplace(&e, c, pa, pb, cint(name, nTasks), h)
	} else {
		r = C.gg_map_custom2(&e, c, pa, pb, cint(name, nTasks), h)
	}
	ctx.keepHandle(h, &e)
	check(name, &e)
	return ctx.wrap(r)
}

// MapCustom3 is MapCustom1 with operands b and c (any shapes); the result has
// a's type and shape.
func (ctx *Context) MapCustom3(a, b, c *Tensor, fn Custom3Func, nTasks int) *Tensor {
	return ctx.mapCustom3("MapCustom3", a, b, c, fn, nTasks, false)
}

// MapCustom3Inplace is MapCustom3 with dst a view of a.
func (ctx *Context) MapCustom3Inplace(a, b, c *Tensor, fn Custom3Func, nTasks int) *Tensor {
	return ctx.mapCustom3("MapCustom3Inplace", a, b, c, fn, nTasks, true)
}

func (ctx *Context) mapCustom3(name string, a, b, c *Tensor, fn Custom3Func, nTasks int, inplace bool) *Tensor {
	needTensors(name, a, b, c)
	needFunc(name, fn == nil)
	checkNTasks(name, nTasks)
	cc, pa, pb, pc := ctx.ptr(), a.use(ctx), b.use(ctx), c.use(ctx)
	h := ctx.newHandle(&customOp{name: name, f3: fn})
	var e C.gg_err
	var r *C.struct_lm_ggml_tensor
	if inplace {
		r = C.gg_map_custom3_inplace(&e, cc, pa, pb, pc, cint(name, nTasks), h)
	} else {
		r = C.gg_map_custom3(&e, cc, pa, pb, pc, cint(name, nTasks), h)
	}
	ctx.keepHandle(h, &e)
	check(name, &e)
	return ctx.wrap(r)
}

// ---------------------------------------------------------------- deprecated forms

// MapCustom1F32 returns a tensor of a's type and shape computed by fn on one
// thread (deprecated in the C API: prefer MapCustom1).
func (ctx *Context) MapCustom1F32(a *Tensor, fn CustomF32Func) *Tensor {
	return ctx.mapCustomF32("MapCustom1F32", 1, fn, a, nil, nil, false)
}

// MapCustom1InplaceF32 is MapCustom1F32 with dst a view of a.
func (ctx *Context) MapCustom1InplaceF32(a *Tensor, fn CustomF32Func) *Tensor {
	return ctx.mapCustomF32("MapCustom1InplaceF32", 1, fn, a, nil, nil, true)
}

// MapCustom2F32 is MapCustom1F32 with a second operand.
func (ctx *Context) MapCustom2F32(a, b *Tensor, fn CustomF32Func) *Tensor {
	return ctx.mapCustomF32("MapCustom2F32", 2, fn, a, b, nil, false)
}

// MapCustom2InplaceF32 is MapCustom2F32 with dst a view of a.
func (ctx *Context) MapCustom2InplaceF32(a, b *Tensor, fn CustomF32Func) *Tensor {
	return ctx.mapCustomF32("MapCustom2InplaceF32", 2, fn, a, b, nil, true)
}

// MapCustom3F32 is MapCustom1F32 with two more operands.
func (ctx *Context) MapCustom3F32(a, b, c *Tensor, fn CustomF32Func) *Tensor {
	return ctx.mapCustomF32("MapCustom3F32", 3, fn, a, b, c, false)
}

// MapCustom3InplaceF32 is MapCustom3F32 with dst a view of a.
func (ctx *Context) MapCustom3InplaceF32(a, b, c *Tensor, fn CustomF32Func) *Tensor {
	return ctx.mapCustomF32("MapCustom3InplaceF32", 3, fn, a, b, c, true)
}

func (ctx *Context) mapCustomF32(name string, n int, fn CustomF32Func, a, b, c *Tensor, inplace bool) *Tensor {
	needTensors(name, []*Tensor{a, b, c}[:n]...)
	needFunc(name, fn == nil)
	cc, pa, pb, pc := ctx.ptr(), a.use(ctx), b.use(ctx), c.use(ctx)
	var e C.gg_err
	var r *C.struct_lm_ggml_tensor
	switch {
	case n == 1 && !inplace:
		r = C.gg_map_custom1_f32(&e, cc, pa)
	case n == 1:
		r = C.gg_map_custom1_inplace_f32(&e, cc, pa)
	case n == 2 && !inplace:
		r = C.gg_map_custom2_f32(&e, cc, pa, pb)
	case n == 2:
		r = C.gg_map_custom2_inplace_f32(&e, cc, pa, pb)
	case !inplace:
		r = C.gg_map_custom3_f32(&e, cc, pa, pb, pc)
	default:
		r = C.gg_map_custom3_inplace_f32(&e, cc, pa, pb, pc)
	}
	check(name, &e)
	h := ctx.newHandle(&customOp{name: name, fF32: fn})
	C.gg_set_f32_handle(r, h)
	ctx.keepHandle(h, &e)
	return ctx.wrap(r)
}

// MapUnaryF32 applies the C function fn, of type lm_ggml_unary_op_f32_t
// (void (*)(int n, float * dst, const float * src)), to each row of the f32
// tensor a (contiguous rows), on one thread. Deprecated in the C API, which
// gives fn no user data, so it takes a C function pointer, not a Go func:
// use MapCustom1 for Go code.
func (ctx *Context) MapUnaryF32(a *Tensor, fn unsafe.Pointer) *Tensor {
	return ctx.mapRowsF32("MapUnaryF32", a, nil, fn, false)
}

// MapUnaryInplaceF32 is MapUnaryF32 written into a.
func (ctx *Context) MapUnaryInplaceF32(a *Tensor, fn unsafe.Pointer) *Tensor {
	return ctx.mapRowsF32("MapUnaryInplaceF32", a, nil, fn, true)
}

// MapBinaryF32 applies the C function fn, of type lm_ggml_binary_op_f32_t
// (void (*)(int n, float * dst, const float * a, const float * b)), to the
// rows of the f32 tensors a and b (same shape), on one thread. See
// MapUnaryF32.
func (ctx *Context) MapBinaryF32(a, b *Tensor, fn unsafe.Pointer) *Tensor {
	return ctx.mapRowsF32("MapBinaryF32", a, b, fn, false)
}

// MapBinaryInplaceF32 is MapBinaryF32 written into a.
func (ctx *Context) MapBinaryInplaceF32(a, b *Tensor, fn unsafe.Pointer) *Tensor {
	return ctx.mapRowsF32("MapBinaryInplaceF32", a, b, fn, true)
}

func (ctx *Context) mapRowsF32(name string, a, b *Tensor, fn unsafe.Pointer, inplace bool) *Tensor {
	binary := name[3] == 'B'
	if binary {
		needTensors(name, a, b)
	} else {
		needTensors(name, a)
	}
	needFunc(name, fn == nil)
	var e C.gg_err
	var r *C.struct_lm_ggml_tensor
	switch {
	case !binary && !inplace:
		r = C.gg_map_unary_f32(&e, ctx.ptr(), a.use(ctx), fn)
	case !binary:
		r = C.gg_map_unary_inplace_f32(&e, ctx.ptr(), a.use(ctx), fn)
	case !inplace:
		r = C.gg_map_binary_f32(&e, ctx.ptr(), a.use(ctx), b.use(ctx), fn)
	default:
		r = C.gg_map_binary_inplace_f32(&e, ctx.ptr(), a.use(ctx), b.use(ctx), fn)
	}
	check(name, &e)
	return ctx.wrap(r)
}

// C row functions for the tests of MapUnaryF32 and MapBinaryF32 (test files
// cannot use cgo).
var (
	testNegRowF32 = C.gg_test_neg_row_ptr()
	testSubRowF32 = C.gg_test_sub_row_ptr()
)
