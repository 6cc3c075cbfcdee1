package ggml

/*
#include "glue.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-alloc.h"
#include "ggml-cpu-impl.h"
#include <stdatomic.h>
#include <stdio.h>


GG_DEF(struct lm_ggml_backend_buffer *, backend_buft_alloc_buffer, (struct lm_ggml_backend_buffer_type * bt, size_t size), (bt, size))
GG_DEF(struct lm_ggml_backend_buffer *, backend_alloc_ctx_tensors_from_buft, (gg_c * ctx, struct lm_ggml_backend_buffer_type * bt), (ctx, bt))
void lm_ggml_log_quiet(bool on);

// Allocations whose failure the Go side returns as an error, with the
// reason the core recorded copied to why (the core's own log line would
// say it again). The reason is per thread: it is read in the same call.
typedef struct { char msg[256]; } gg_why;
static struct lm_ggml_backend_buffer * gg_quiet_alloc(gg_err * e, gg_why * why, gg_c * ctx, struct lm_ggml_backend_buffer_type * bt, size_t size) {
    lm_backend_clear_error();
    lm_ggml_log_quiet(true);
    struct lm_ggml_backend_buffer * b = ctx != NULL ? gg_backend_alloc_ctx_tensors_from_buft(e, ctx, bt) : gg_backend_buft_alloc_buffer(e, bt, size);
    lm_ggml_log_quiet(false);
    snprintf(why->msg, sizeof(why->msg), "%s", b == NULL ? lm_backend_last_error() : "");
    return b;
}
GG_DEFV(backend_buffer_clear, (struct lm_ggml_backend_buffer * b, uint8_t v), (b, v))
GG_DEFV(backend_tensor_set, (gg_t * t, const void * d, size_t o, size_t n), (t, d, o, n))
GG_DEFV(backend_tensor_get, (const gg_t * t, void * d, size_t o, size_t n), (t, d, o, n))
GG_DEFV(backend_cpu_set_n_threads, (struct lm_ggml_backend * b, int n), (b, n))
GG_DEFV(backend_cpu_set_threadpool, (struct lm_ggml_backend * b, struct lm_ggml_threadpool * tp), (b, tp))

// The cancellation flag of a Go context.Context, read by the backend's abort
// callback after each node.
typedef struct { atomic_int stop; } gg_abort_flag;
static bool gg_abort_cb(void * p) { return atomic_load(&((gg_abort_flag *) p)->stop) != 0; }
static gg_abort_flag * gg_abort_new(void) { return calloc(1, sizeof(gg_abort_flag)); }
static void gg_abort_set(gg_abort_flag * f, int v) { atomic_store(&f->stop, v); }

// Installs (f != NULL) or removes the abort callback, if the backend's
// registry offers one. Returns whether it could.
static bool gg_backend_set_abort(struct lm_ggml_backend * b, gg_abort_flag * f) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_dev_backend_reg(lm_ggml_backend_get_device(b));
    lm_ggml_backend_set_abort_callback_t fn = (lm_ggml_backend_set_abort_callback_t)
        lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_set_abort_callback");
    if (fn == NULL) return false;
    fn(b, f != NULL ? gg_abort_cb : NULL, f);
    return true;
}

// Computes g on b; on failure e holds the reason (compute_driver.go).
int gg_backend_compute(struct lm_ggml_backend * b, gg_g * g, gg_err * e);

// Forgets where ctx's tensors in the given memory ranges live (data and
// buffer become NULL): the memory is about to be freed or reused. A tensor
// is in a range if its buffer is that buffer or its data lies in it (views
// made before lm_ggml_backend_view_init have data but no buffer).
static void gg_detach(gg_c * ctx, struct lm_ggml_backend_buffer ** bufs, uintptr_t * base, size_t * size, int n) {
    for (gg_t * t = lm_ggml_get_first_tensor(ctx); t != NULL; t = lm_ggml_get_next_tensor(ctx, t)) {
        for (int i = 0; i < n; i++) {
            const uintptr_t p = (uintptr_t) t->data;
            if (t->buffer == bufs[i] || (t->data != NULL && p >= base[i] && p - base[i] < size[i])) {
                t->data = NULL;
                t->buffer = NULL;
                break;
            }
        }
    }
}

// A host copy of t: a tensor struct like t whose data is a copy of t's bytes
// (the same strides), or, with fresh, uninitialized bytes (for a write of
// every byte). NULL with e set on failure.
static gg_t * gg_shadow_get(gg_err * e, gg_t * t, int fresh) {
    const size_t n = lm_ggml_nbytes(t);
    gg_t * s = malloc(sizeof(gg_t) + n + 1);
    if (s == NULL) {
        e->failed = 1;
        snprintf(e->msg, sizeof(e->msg), "out of memory (%zu bytes)", n);
        return NULL;
    }
    *s = *t;
    s->data = s + 1;
    s->buffer = NULL;
    s->view_src = NULL;
    if (!fresh) gg_backend_tensor_get(e, t, s->data, 0, n);
    if (e->failed) {
        free(s);
        return NULL;
    }
    return s;
}

static void gg_shadow_put(gg_err * e, gg_t * t, gg_t * s) {
    gg_backend_tensor_set(e, t, s->data, 0, lm_ggml_nbytes(t));
}

// A host copy of one element of t (at byte offset off of its data): a
// tensor struct of one element whose data follows it, read through t's
// backend unless fresh. NULL with e set on failure.
static gg_t * gg_elem_get(gg_err * e, gg_t * t, size_t off, int fresh) {
    const size_t es = lm_ggml_type_size(t->type);
    gg_t * s = malloc(sizeof(gg_t) + es + 8);
    if (s == NULL) {
        e->failed = 1;
        snprintf(e->msg, sizeof(e->msg), "out of memory");
        return NULL;
    }
    *s = *t;
    for (int d = 0; d < LM_GGML_MAX_DIMS; d++) s->ne[d] = 1;
    s->data = s + 1;
    s->buffer = NULL;
    s->view_src = NULL;
    if (!fresh) gg_backend_tensor_get(e, t, s->data, off, es);
    if (e->failed) {
        free(s);
        return NULL;
    }
    return s;
}

static void gg_elem_put(gg_err * e, gg_t * t, gg_t * s, size_t off) {
    gg_backend_tensor_set(e, t, s->data, off, lm_ggml_type_size(t->type));
}

static struct lm_ggml_backend_buffer * gg_tensor_buffer(const gg_t * t) {
    return t->buffer != NULL ? t->buffer : (t->view_src != NULL ? t->view_src->buffer : NULL);
}

// Whether t's bytes are in host memory, or with repacked also in a
// CPU_REPACK buffer (this process's memory, maybe in the CPU's layout).
static bool gg_data_is_local(const gg_t * t, bool repacked) {
    struct lm_ggml_backend_buffer * b = gg_tensor_buffer(t);
    return b == NULL || lm_ggml_backend_buffer_is_host(b) ||
           (repacked && lm_ggml_backend_cpu_buft_is_aarch64(lm_ggml_backend_buffer_get_type(b)));
}

static void * gg_buffer_base(struct lm_ggml_backend_buffer * b) { return lm_ggml_backend_buffer_get_base(b); }
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/cmem"
	"github.com/ggml-go/ggml/internal/link"
)

// ---------------------------------------------------------------- backends

// Backend computes graphs: lm_ggml_backend_t. It is safe for concurrent use;
// computations on one backend run one after the other.
type Backend struct {
	mu         sync.Mutex // held by computations and calls that change the backend
	life       memLife    // short calls in flight (Name, Supports, ...), which Close waits for
	closeLater atomic.Bool
	b          *C.struct_lm_ggml_backend
	abort      *C.gg_abort_flag
	pool       *Threadpool   // set with SetThreadpool: kept alive while in use
	poolRef    *backendPool  // the same, for the cleanup (which must not reference the Backend)
	drv        *driverRef    // see computeDriver
	held       *cmem.Holding // its own pool's threads and work buffer, counted by the garbage collector
	cpu        bool          // a CPU backend (long computations run on drv)
	last       time.Duration // how long the last computation took
	yielded    time.Time     // when a direct computation last yielded first (see yieldForSysmon)
	cleanup    runtime.Cleanup

	stopMu sync.Mutex
	stops  map[*func()]struct{} // what Close stops first (ServeRPC's servers)
}

// onClose registers stop, which Close calls before it waits for the calls
// in flight; the returned function unregisters it.
func (b *Backend) onClose(stop func()) (unregister func()) {
	b.stopMu.Lock()
	defer b.stopMu.Unlock()
	if b.stops == nil {
		b.stops = map[*func()]struct{}{}
	}
	k := &stop
	b.stops[k] = struct{}{}
	return func() {
		b.stopMu.Lock()
		defer b.stopMu.Unlock()
		delete(b.stops, k)
	}
}

type backendHandle struct {
	b     *C.struct_lm_ggml_backend
	abort *C.gg_abort_flag
	pool  *backendPool
	drv   *driverRef
	held  *cmem.Holding
}

// backendPool is the Threadpool set on a backend (see SetThreadpool), which
// the backend's C side points to: attached to it until the backend lets it go.
type backendPool struct {
	mu sync.Mutex
	tp *Threadpool
}

// set makes tp (nil: none) the pool, detaching the previous one.
func (bp *backendPool) set(tp *Threadpool) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.tp != nil {
		bp.tp.detach()
	}
	bp.tp = tp
}

func freeBackend(h backendHandle) {
	C.lm_ggml_backend_free(h.b)
	C.free(unsafe.Pointer(h.abort))
	h.pool.set(nil)
	h.drv.close()
}

// ErrClosedBackend is the panic value when a closed Backend is used.
var ErrClosedBackend = errors.New("ggml: use of closed backend")

// NewCPUBackend creates a CPU backend. It computes with DefaultThreads()
// threads (see SetThreads) of a pool of its own, kept between computations.
func NewCPUBackend() (*Backend, error) {
	initOnce()
	b := C.lm_ggml_backend_cpu_init()
	if b == nil {
		return nil, errors.New("ggml: NewCPUBackend: cannot create the backend")
	}
	return newBackend(b)
}

func newBackend(b *C.struct_lm_ggml_backend) (*Backend, error) {
	abort := C.gg_abort_new()
	if abort == nil {
		C.lm_ggml_backend_free(b)
		return nil, errors.New("ggml: out of memory")
	}
	be := &Backend{b: b, abort: abort, held: new(cmem.Holding)}
	be.poolRef = new(backendPool)
	be.drv = new(driverRef)
	be.cleanup = runtime.AddCleanup(be, func(h backendHandle) {
		freeBackend(h)
		h.held.Collected()
	}, backendHandle{b, abort, be.poolRef, be.drv, be.held})
	if C.lm_ggml_backend_is_cpu(b) {
		n := DefaultThreads()
		var e C.gg_err
		C.gg_backend_cpu_set_n_threads(&e, b, C.int(n))
		be.cpu = true
	}
	return be, nil
}

// account tells the garbage collector what the backend holds now (its own
// pool's threads, its work buffer, its compute driver's thread), under b.mu.
func (b *Backend) account() {
	var threads C.int
	var work C.size_t
	C.lm_backend_cpu_held(b.b, &threads, &work)
	n := threadCharge(int(threads)) + int64(work)
	if b.drv.started() {
		n += threadCharge(1)
	}
	b.held.Set(n)
}

// nilBackend is the panic value (or error) of a method of a nil *Backend.
func nilBackend(op string) *OpError { return &OpError{Op: op, Msg: "nil *Backend"} }

// ptr is the C backend, under b.mu; it panics if b is nil or closed.
func (b *Backend) ptr() *C.struct_lm_ggml_backend {
	if b == nil {
		panic(nilBackend("Backend"))
	}
	if b.b == nil || b.closeLater.Load() {
		panic(ErrClosedBackend)
	}
	return b.b
}

// use pins the backend for a short call that does not hold b.mu (which a
// computation holds): Close waits for done. It panics if b is nil or closed.
func (b *Backend) use(op string) (p *C.struct_lm_ggml_backend, done func()) {
	if b == nil {
		panic(nilBackend(op))
	}
	if b.closeLater.Load() || !b.life.pin() {
		panic(ErrClosedBackend)
	}
	return b.b, b.life.unpin
}

// lock takes b.mu for a call on b, panicking if b is nil or closed; unlock
// ends it.
func (b *Backend) lock(op string) *C.struct_lm_ggml_backend {
	if b == nil {
		panic(nilBackend(op))
	}
	b.mu.Lock()
	if b.b == nil || b.closeLater.Load() {
		b.unlock()
		panic(ErrClosedBackend)
	}
	return b.b
}

// unlock releases b.mu, first freeing the backend if Close came from a
// callback of the call that held it.
func (b *Backend) unlock() {
	if b.closeLater.Load() && b.b != nil {
		b.free()
	}
	b.mu.Unlock()
}

// Close frees the backend. Buffers made from its buffer type stay valid.
// Close waits for a computation on the backend; from a custom-op or eval
// callback of a computation, it returns at once and the backend is freed
// when the computation ends. Close is idempotent.
func (b *Backend) Close() error {
	if b == nil {
		return nil
	}
	if !b.mu.TryLock() {
		if !insideCallback() {
			b.mu.Lock()
		} else if b.closeLater.Store(true); !b.mu.TryLock() {
			return nil // the holder of b.mu frees it (unlock)
		}
	}
	defer b.mu.Unlock()
	if b.b != nil {
		b.free()
	}
	return nil
}

// free releases the backend's resources (under b.mu).
func (b *Backend) free() {
	b.closeLater.Store(true)
	b.stopMu.Lock()
	for stop := range b.stops {
		(*stop)()
	}
	b.stopMu.Unlock()
	b.life.retire(func() {}, false) // short calls and servers in flight end first
	b.cleanup.Stop()
	freeBackend(backendHandle{b.b, b.abort, b.poolRef, b.drv, nil})
	b.held.Release()
	b.b, b.abort, b.pool = nil, nil, nil
}

// Name is the backend's name ("CPU").
func (b *Backend) Name() string {
	p, done := b.use("Backend.Name")
	defer done()
	return C.GoString(C.lm_ggml_backend_name(p))
}

// IsCPU reports whether this is a CPU backend.
func (b *Backend) IsCPU() bool {
	p, done := b.use("Backend.IsCPU")
	defer done()
	return bool(C.lm_ggml_backend_is_cpu(p))
}

// SetThreads sets the number of threads a CPU backend computes with (0:
// DefaultThreads(); see ResolveThreads).
func (b *Backend) SetThreads(n int) error {
	if b == nil {
		return nilBackend("SetThreads")
	}
	if insideCallback() {
		return ErrInCallback
	}
	p := b.lock("SetThreads")
	defer b.unlock()
	if !C.lm_ggml_backend_is_cpu(p) {
		return fmt.Errorf("ggml: SetThreads: %s is not a CPU backend", C.GoString(C.lm_ggml_backend_name(p)))
	}
	n, err := resolveThreads("SetThreads", n)
	if err != nil {
		return err
	}
	var e C.gg_err
	C.gg_backend_cpu_set_n_threads(&e, p, C.int(n))
	return cError("SetThreads", &e)
}

// SetThreadpool makes a CPU backend compute on tp's threads (nil: its own
// pool again). The backend keeps tp alive while it is set; closing tp while
// it is set makes computations fail.
func (b *Backend) SetThreadpool(tp *Threadpool) error {
	if b == nil {
		return nilBackend("SetThreadpool")
	}
	if insideCallback() {
		return ErrInCallback
	}
	p := b.lock("SetThreadpool")
	defer b.unlock()
	if !C.lm_ggml_backend_is_cpu(p) {
		return fmt.Errorf("ggml: SetThreadpool: %s is not a CPU backend", C.GoString(C.lm_ggml_backend_name(p)))
	}
	var ctp *C.struct_lm_ggml_threadpool
	if tp != nil {
		ctp = tp.attach() // ErrClosedThreadpool if closed
	}
	var e C.gg_err
	C.gg_backend_cpu_set_threadpool(&e, p, ctp) // pauses the previous pool: still attached here
	if err := cError("SetThreadpool", &e); err != nil {
		if tp != nil {
			tp.detach()
		}
		return err
	}
	b.poolRef.set(tp)
	b.pool = tp
	b.account() // its own pool is gone
	return nil
}

// BufferType is the backend's default buffer type.
func (b *Backend) BufferType() *BufferType {
	p, done := b.use("Backend.BufferType")
	defer done()
	bt := C.lm_ggml_backend_get_default_buffer_type(p)
	return &BufferType{bt: bt, owner: b}
}

// NewBuffer allocates a buffer of the backend's default type.
func (b *Backend) NewBuffer(size int) (*Buffer, error) {
	if b == nil {
		return nil, nilBackend("NewBuffer")
	}
	return b.BufferType().NewBuffer(size)
}

// Supports reports whether the backend can compute t's op for t's types
// (and reach its sources' memory).
func (b *Backend) Supports(t *Tensor) bool {
	needTensors("Supports", t)
	p, done := b.use("Backend.Supports")
	defer done()
	return bool(C.lm_ggml_backend_supports_op(p, t.ptr()))
}

// computeArgs checks the arguments of a Compute: an error for a nil
// context or graph.
func computeArgs(op string, ctx context.Context, g *Graph) error {
	switch {
	case ctx == nil:
		return &OpError{Op: op, Msg: "nil context.Context"}
	case g == nil:
		return &OpError{Op: op, Msg: "nil *Graph"}
	}
	return nil
}

// Compute computes g. Every tensor of g needs data (a context that
// allocates, AllocTensors, or a GraphAllocator); a tensor without is an
// error. Cancelling ctx stops the computation after the node being
// computed; Compute then returns ctx.Err().
func (b *Backend) Compute(ctx context.Context, g *Graph) error {
	if insideCallback() {
		return ErrInCallback
	}
	if b == nil {
		return nilBackend("Compute")
	}
	if err := computeArgs("Compute", ctx, g); err != nil {
		return err
	}
	g.ptr()
	p := b.lock("Compute")
	defer b.unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.pool != nil {
		b.pool.mu.Lock()
		defer b.pool.mu.Unlock()
		if b.pool.closed.Load() {
			return fmt.Errorf("ggml: Compute: %w", ErrClosedThreadpool)
		}
		b.pool.acquire() // a Close meanwhile stops the threads when this computation ends
		defer b.pool.release()
	}
	defer g.begin()()
	if err := g.initGrads(); err != nil {
		return fmt.Errorf("ggml: Compute: %w", err)
	}
	cancellable := false
	if ctx.Done() != nil {
		C.gg_abort_set(b.abort, 0)
		if C.gg_backend_set_abort(p, b.abort) {
			cancellable = true
			release := watchCancel(ctx, func() { C.gg_abort_set(b.abort, 1) })
			defer func() {
				release() // the flag is the backend's: nobody touches it after Close
				C.gg_backend_set_abort(p, nil)
			}()
		}
	}
	pins, err := pinGraphMemory(g)
	if err != nil {
		return err
	}
	defer unpinAll(pins)
	var e C.gg_err
	var st C.int
	start := time.Now()
	if drv := b.driver(); drv != nil {
		st = drv.compute(p, g.g, &e)
	} else {
		if b.cpu && yieldForSysmon(b.yielded, start) {
			b.yielded = start
			start = time.Now()
		}
		st = C.gg_backend_compute(p, g.g, &e)
	}
	b.last = time.Since(start)
	if b.cpu {
		b.account()
	}
	runtime.KeepAlive(g)
	switch {
	case st == C.LM_GGML_STATUS_ABORTED && cancellable && ctx.Err() != nil:
		return ctx.Err()
	case e.failed != 0:
		return fmt.Errorf("ggml: Compute: %s", C.GoString(&e.msg[0]))
	case st != C.LM_GGML_STATUS_SUCCESS:
		return statusError(C.int(st))
	}
	return g.customOpError()
}

// driver is the computeDriver computations on b use, or nil.
func (b *Backend) driver() *computeDriver {
	if !b.cpu || !useDriver(b.last) {
		return nil
	}
	return b.drv.get()
}

// cError converts a C failure reported through e into an error.
func cError(op string, e *C.gg_err) error {
	if e.failed == 0 {
		return nil
	}
	return fmt.Errorf("ggml: %s: %s", op, C.GoString(&e.msg[0]))
}

// ---------------------------------------------------------------- buffer types

// BufferType describes a kind of memory tensors can live in:
// lm_ggml_backend_buffer_type_t. Buffer types are owned by their backend
// or device and need no closing.
type BufferType struct {
	bt    *C.struct_lm_ggml_backend_buffer_type
	owner *Backend // keeps the backend alive (nil: a static type)
}

// CPUBufferType is the buffer type of host memory.
func CPUBufferType() *BufferType {
	initOnce()
	return &BufferType{bt: C.lm_ggml_backend_cpu_buffer_type()}
}

// CPURepackBufferType is the CPU's buffer type for mul_mat weights
// ("CPU_REPACK"; upstream ggml's lm_ggml_backend_cpu_aarch64_buffer_type):
// matrices of a type the CPU has a faster kernel for in another layout
// (CPURepacks) are stored in that layout, everything else as in
// CPUBufferType. Reading and writing tensors (Bytes, SetBytes, ...) gives
// and takes their plain bytes; a repacked tensor can only be computed from
// as the weights of MulMat (other ops, and MulMat of a view of it, fail at
// compute). One-token mat-vecs over repacked weights read memory in
// one sequential stream, so decoding from this buffer type is faster than
// from a CPU buffer. Not a host buffer type.
func CPURepackBufferType() *BufferType {
	initOnce()
	return &BufferType{bt: C.lm_ggml_backend_cpu_aarch64_buffer_type()}
}

// CPURepacks reports whether CPURepackBufferType stores matrices of type t
// (with at least 8 rows, contiguous) repacked on this CPU at its current
// SIMD level: q8_0, q4_0, iq4_nl, q4_K and q6_K on x86-64 at the AVX2
// and AVX-512 levels.
func CPURepacks(t Type) bool {
	initOnce()
	return bool(C.lm_cpu_repacks_type(C.enum_lm_ggml_type(t)))
}

func (bt *BufferType) ptr() *C.struct_lm_ggml_backend_buffer_type {
	if bt == nil || bt.bt == nil {
		panic(&OpError{Op: "BufferType", Msg: "nil *BufferType"})
	}
	return bt.bt
}

// Name is the buffer type's name ("CPU").
func (bt *BufferType) Name() string { return C.GoString(C.lm_ggml_backend_buft_name(bt.ptr())) }

// Alignment is the alignment of tensor data in buffers of this type.
func (bt *BufferType) Alignment() int { return int(C.lm_ggml_backend_buft_get_alignment(bt.ptr())) }

// MaxSize is the largest buffer of this type (larger allocations of
// AllocTensors are split).
func (bt *BufferType) MaxSize() int {
	n := uint64(C.lm_ggml_backend_buft_get_max_size(bt.ptr()))
	if n > uint64(^uint(0)>>1) {
		return int(^uint(0) >> 1)
	}
	return int(n)
}

// IsHost reports whether buffers of this type are memory of this process.
func (bt *BufferType) IsHost() bool { return bool(C.lm_ggml_backend_buft_is_host(bt.ptr())) }

// NewBuffer allocates a buffer of size bytes.
func (bt *BufferType) NewBuffer(size int) (*Buffer, error) {
	if bt == nil || bt.bt == nil {
		return nil, &OpError{Op: "NewBuffer", Msg: "nil *BufferType"}
	}
	if size < 0 {
		return nil, fmt.Errorf("ggml: NewBuffer: negative size %d", size)
	}
	var e C.gg_err
	var why C.gg_why
	b := C.gg_quiet_alloc(&e, &why, nil, bt.ptr(), C.size_t(size))
	if err := cError("NewBuffer", &e); err != nil {
		return nil, err
	}
	if b == nil {
		if r := C.GoString(&why.msg[0]); r != "" {
			return nil, errors.New("ggml: NewBuffer: " + r)
		}
		return nil, fmt.Errorf("ggml: NewBuffer: cannot allocate a %s buffer of %d bytes", bt.Name(), size)
	}
	return newBuffer(b, bt, nil), nil
}

// ---------------------------------------------------------------- buffers

// BufferUsage tells a backend what a buffer holds (lm_ggml_backend_buffer_usage).
type BufferUsage int32

// Buffer usages.
const (
	BufferUsageAny     BufferUsage = 0
	BufferUsageWeights BufferUsage = 1
	BufferUsageCompute BufferUsage = 2
)

// ErrClosedBuffer is the panic value when a closed Buffer is used.
var ErrClosedBuffer = errors.New("ggml: use of closed buffer")

// Buffer is memory of a buffer type holding tensors: lm_ggml_backend_buffer_t.
// Tensors allocated in it (Context.AllocTensors) keep it alive. Close waits
// for computations and data accesses using it, frees it, and the tensors
// lose their data (using them is then an error). It is safe for concurrent
// use.
type Buffer struct {
	life    memLife
	b       *C.struct_lm_ggml_backend_buffer
	bt      *BufferType
	mem     memRanges // its memory (the parts of a multi-buffer)
	users   contextSet
	charged int64 // host bytes charged to cmem (0 for memory elsewhere, e.g. on an RPC server)
	cleanup runtime.Cleanup
}

func newBuffer(b *C.struct_lm_ggml_backend_buffer, bt *BufferType, parts []C.lm_ggml_backend_buffer_t) *Buffer {
	buf := &Buffer{b: b, bt: bt}
	buf.mem.add(b)
	for _, p := range parts {
		buf.mem.add(p)
	}
	if C.lm_ggml_backend_buffer_is_host(b) {
		// the garbage collector counts it, so that forgetting Close cannot
		// run a program out of memory
		buf.charged = int64(C.lm_ggml_backend_buffer_get_size(b))
		cmem.Charge(buf.charged)
	}
	buf.cleanup = runtime.AddCleanup(buf, func(h bufferHandle) {
		C.lm_ggml_backend_buffer_free(h.b)
		cmem.Collected(h.charged)
	}, bufferHandle{b, buf.charged})
	owners.add(buf.mem.bufs, buf)
	return buf
}

type bufferHandle struct {
	b       *C.struct_lm_ggml_backend_buffer
	charged int64
}

// use pins the buffer for a method: its C buffer stays valid until done is
// called. A nil buffer panics with an *OpError, a closed one with
// ErrClosedBuffer.
func (b *Buffer) use(op string) (p *C.struct_lm_ggml_backend_buffer, done func()) {
	if b == nil {
		panic(&OpError{Op: op, Msg: "nil *Buffer"})
	}
	if !b.life.pin() {
		panic(ErrClosedBuffer)
	}
	return b.b, b.life.unpin
}

// Close detaches the tensors allocated in the buffer and frees it, once the
// computations and data accesses using it are over (Close from a custom-op
// callback of such a computation returns at once; the buffer is freed when
// the computation ends). Close is idempotent.
func (b *Buffer) Close() error {
	if b == nil {
		return nil
	}
	b.life.retire(b.free, true)
	return nil
}

// free is Close once nothing uses the buffer.
func (b *Buffer) free() {
	b.users.detach(&b.mem)
	owners.remove(b.mem.bufs)
	b.cleanup.Stop()
	C.lm_ggml_backend_buffer_free(b.b)
	cmem.Release(b.charged)
	b.b = nil
}

// Size is the buffer's size in bytes.
func (b *Buffer) Size() int {
	p, done := b.use("Buffer.Size")
	defer done()
	return int(C.lm_ggml_backend_buffer_get_size(p))
}

// Name is the name of the buffer's type.
func (b *Buffer) Name() string {
	p, done := b.use("Buffer.Name")
	defer done()
	return C.GoString(C.lm_ggml_backend_buffer_name(p))
}

// Type is the buffer's type.
func (b *Buffer) Type() *BufferType {
	_, done := b.use("Buffer.Type")
	defer done()
	return b.bt
}

// IsHost reports whether the buffer is memory of this process.
func (b *Buffer) IsHost() bool {
	p, done := b.use("Buffer.IsHost")
	defer done()
	return bool(C.lm_ggml_backend_buffer_is_host(p))
}

// Clear sets every byte of the buffer to v.
func (b *Buffer) Clear(v byte) error {
	if b == nil {
		return &OpError{Op: "Buffer.Clear", Msg: "nil *Buffer"}
	}
	p, done := b.use("Buffer.Clear")
	defer done()
	var e C.gg_err
	C.gg_backend_buffer_clear(&e, p, C.uint8_t(v))
	return cError("Clear", &e)
}

// Usage is what the buffer holds.
func (b *Buffer) Usage() BufferUsage {
	p, done := b.use("Buffer.Usage")
	defer done()
	return BufferUsage(C.lm_ggml_backend_buffer_get_usage(p))
}

// SetUsage tells the backend what the buffer holds.
func (b *Buffer) SetUsage(u BufferUsage) {
	p, done := b.use("Buffer.SetUsage")
	defer done()
	C.lm_ggml_backend_buffer_set_usage(p, C.enum_lm_ggml_backend_buffer_usage(u))
}

// ---------------------------------------------------------------- who points into which memory

// memRanges is a set of C buffers and their address ranges.
type memRanges struct {
	bufs []*C.struct_lm_ggml_backend_buffer
	base []C.uintptr_t
	size []C.size_t
}

func (m *memRanges) add(b *C.struct_lm_ggml_backend_buffer) {
	for _, x := range m.bufs {
		if x == b {
			return
		}
	}
	m.bufs = append(m.bufs, b)
	m.base = append(m.base, C.uintptr_t(uintptr(C.gg_buffer_base(b))))
	m.size = append(m.size, C.lm_ggml_backend_buffer_get_size(b))
}

// contextSet is the contexts whose tensors (or views of them) live in some
// memory: when the memory goes, their tensors are detached.
type contextSet struct {
	mu   sync.Mutex
	ctxs map[weak.Pointer[Context]]struct{} // weak: a context's cleanup holds what it keeps, its owners among them
}

func (s *contextSet) add(ctx *Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctxs == nil {
		s.ctxs = map[weak.Pointer[Context]]struct{}{}
	}
	s.ctxs[weak.Make(ctx)] = struct{}{}
}

// detach clears the data of the tensors in m of every open context of s,
// and forgets the contexts.
func (s *contextSet) detach(m *memRanges) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(m.bufs) == 0 {
		s.ctxs = nil
		return
	}
	for w := range s.ctxs {
		// a collected or closed context's tensors are unreachable (and its
		// arena may be freed)
		if ctx := w.Value(); ctx != nil && !ctx.Closed() {
			C.gg_detach(ctx.c, &m.bufs[0], &m.base[0], &m.size[0], C.int(len(m.bufs)))
		}
	}
	s.ctxs = nil
}

// memOwner is a Go object owning backend memory: a Buffer or a GraphAllocator.
// pin keeps the memory from being freed or moved until unpin (false if it
// is already gone).
type memOwner interface {
	track(ctx *Context)
	pin() bool
	unpin()
}

func (b *Buffer) track(ctx *Context) {
	b.users.add(ctx)
	ctx.keepAlive(b)
}

func (b *Buffer) pin() bool { return b.life.pin() }
func (b *Buffer) unpin()    { b.life.unpin() }

// memLife counts the uses in flight of some memory (pins) so that freeing or
// moving it (hold, retire) waits for them. A pin fails while the memory is
// held, instead of waiting: a Go callback of a computation that
// reads a tensor must not wait for a Close that waits for the computation.
type memLife struct {
	mu     sync.Mutex
	cond   sync.Cond
	pins   int
	held   bool
	onIdle func()        // retire from a callback: run at the last unpin
	gone   chan struct{} // retire was called; closed once its free ran
}

func (l *memLife) pin() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return false
	}
	l.pins++
	return true
}

func (l *memLife) unpin() {
	l.mu.Lock()
	l.pins--
	var f func()
	if l.pins == 0 {
		if l.cond.L != nil {
			l.cond.Broadcast()
		}
		f, l.onIdle = l.onIdle, nil
	}
	l.mu.Unlock()
	if f != nil {
		f()
	}
}

// hold waits until no pin is held and makes new pins fail until share.
// From a callback of a computation, which may hold a pin and waits for the
// callback, it fails with ErrInCallback instead of waiting.
func (l *memLife) hold() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pins > 0 && insideCallback() {
		return ErrInCallback
	}
	if l.cond.L == nil {
		l.cond.L = &l.mu
	}
	l.held = true
	for l.pins > 0 {
		l.cond.Wait()
	}
	return nil
}

// share ends hold (not a retirement that came meanwhile).
func (l *memLife) share() {
	l.mu.Lock()
	l.held = l.gone != nil
	l.mu.Unlock()
}

// retire makes pins fail for good and runs free once none is held: after
// waiting for them, or, with deferInCallback, called from a callback of a
// computation (which may hold a pin and waits for the callback), at the
// last unpin. A later retire waits until free has run (except from a
// callback).
func (l *memLife) retire(free func(), deferInCallback bool) {
	l.mu.Lock()
	if l.gone != nil {
		gone := l.gone
		l.mu.Unlock()
		if !insideCallback() {
			<-gone
		}
		return
	}
	gone := make(chan struct{})
	l.gone = gone
	free0 := free
	free = func() {
		free0()
		close(gone)
	}
	l.held = true
	if deferInCallback && l.pins > 0 && insideCallback() {
		l.onIdle = free
		l.mu.Unlock()
		return
	}
	if l.cond.L == nil {
		l.cond.L = &l.mu
	}
	for l.pins > 0 {
		l.cond.Wait()
	}
	l.mu.Unlock()
	free()
}

// ownerOf is the Go owner of t's memory, if any.
func ownerOf(t *C.struct_lm_ggml_tensor) memOwner {
	b := t.buffer
	if b == nil && t.view_src != nil {
		b = t.view_src.buffer
	}
	if b == nil {
		return nil
	}
	return owners.get(b)
}

// owners maps the C buffers of live owners to them, so that a view made in
// any context of a tensor in backend memory is detached with it. It holds
// them weakly: an owner nobody uses is collected (and its cleanup frees its
// memory) even though the map still names it.
var owners ownerMap

type ownerMap struct{ m sync.Map } // C buffer -> *ownerRef

type ownerRef struct{ get func() memOwner }

// weakOwner is a reference to p that does not keep it alive.
func weakOwner[T any, P interface {
	*T
	memOwner
}](p P) func() memOwner {
	w := weak.Make((*T)(p))
	return func() memOwner {
		if v := w.Value(); v != nil {
			return P(v)
		}
		return nil
	}
}

func (o *ownerMap) add(bufs []*C.struct_lm_ggml_backend_buffer, owner memOwner) {
	ref := new(ownerRef)
	switch v := owner.(type) {
	case *Buffer:
		ref.get = weakOwner(v)
	case *GraphAllocator:
		ref.get = weakOwner(v)
	case *Scheduler:
		ref.get = weakOwner(v)
	default:
		panic(fmt.Sprintf("ggml: unknown memory owner %T", owner))
	}
	for _, b := range bufs {
		o.m.Store(b, ref)
	}
}

// get is the live owner of b, or nil (an entry of a collected owner is
// dropped).
func (o *ownerMap) get(b *C.struct_lm_ggml_backend_buffer) memOwner {
	v, ok := o.m.Load(b)
	if !ok {
		return nil
	}
	if owner := v.(*ownerRef).get(); owner != nil {
		return owner
	}
	o.m.CompareAndDelete(b, v)
	return nil
}

func (o *ownerMap) remove(bufs []*C.struct_lm_ggml_backend_buffer) {
	for _, b := range bufs {
		o.m.Delete(b)
	}
}

// trackBackendView registers ctx with the owner of t's memory when t is in
// backend memory (called for every tensor the package wraps: no cgo call).
func trackBackendView(ctx *Context, t *C.struct_lm_ggml_tensor) {
	if owner := ownerOf(t); owner != nil {
		owner.track(ctx)
	}
}

// ---------------------------------------------------------------- tensors in backend memory

// reason is ": " and the reason the core recorded for a failed allocation,
// or "" if it recorded none.
func reason(w *C.gg_why) string {
	if r := C.GoString(&w.msg[0]); r != "" {
		return ": " + r
	}
	return ""
}

// BufferTarget is where AllocTensors and LoadGGUFInto place tensors: a
// *Backend (its default buffer type) or a *BufferType. No other type
// implements it.
type BufferTarget interface {
	targetBufferType(op string) (*BufferType, error)
}

func (b *Backend) targetBufferType(op string) (*BufferType, error) {
	if b == nil {
		return nil, nilBackend(op)
	}
	return b.BufferType(), nil
}

func (bt *BufferType) targetBufferType(op string) (*BufferType, error) {
	if bt == nil || bt.bt == nil {
		return nil, &OpError{Op: op, Msg: "nil *BufferType"}
	}
	return bt, nil
}

// bufferTypeOf is target's buffer type, or an error for a nil target.
func bufferTypeOf(op string, target BufferTarget) (*BufferType, error) {
	if target == nil {
		return nil, &OpError{Op: op, Msg: "nil BufferTarget"}
	}
	return target.targetBufferType(op)
}

// AllocTensors allocates every tensor of a NoAlloc context that has no data
// yet in one buffer of target's type (a *Backend's default type, or a
// *BufferType), or in several if the type's maximum size requires it (one
// Buffer owns them all). Views get their source's memory.
// ErrNothingToAllocate if every tensor already has data.
func (ctx *Context) AllocTensors(target BufferTarget) (*Buffer, error) {
	bt, err := bufferTypeOf("AllocTensors", target)
	if err != nil {
		return nil, err
	}
	p := ctx.ptr()
	var e C.gg_err
	var why C.gg_why
	b := C.gg_quiet_alloc(&e, &why, p, bt.ptr(), 0)
	if err := cError("AllocTensors", &e); err != nil {
		return nil, err
	}
	if b == nil {
		for _, t := range ctx.Tensors() {
			if !t.HasData() && t.ViewSrc() == nil {
				return nil, fmt.Errorf("ggml: AllocTensors: cannot allocate the tensors of the context in a %s buffer%s", bt.Name(), reason(&why))
			}
		}
		return nil, ErrNothingToAllocate
	}
	// the parts a multi-buffer's tensors point to (only this call's: tensors
	// placed by an earlier call belong to the Buffer that call returned)
	var parts []C.lm_ggml_backend_buffer_t
	if n := C.lm_backend_multi_buffer_parts(b, nil, 0); n > 0 {
		parts = make([]C.lm_ggml_backend_buffer_t, n)
		C.lm_backend_multi_buffer_parts(b, &parts[0], n)
	}
	buf := newBuffer(b, bt, parts)
	buf.track(ctx)
	return buf, nil
}

// ErrNothingToAllocate is returned by AllocTensors when every tensor of the
// context already has data.
var ErrNothingToAllocate = errors.New("ggml: AllocTensors: every tensor already has data")

// LoadGGUFInto creates in c (which must be NoAlloc) one tensor per tensor of
// f, named and shaped as in the file, allocates them in target (a *Backend
// or *BufferType, as AllocTensors) and copies their data from f, however f
// was opened (Open, OpenBytes or OpenReader). f may be closed afterwards.
// A file of no tensors gives an empty map and a nil Buffer.
func (c *Context) LoadGGUFInto(f *gguf.File, target BufferTarget) (tensors map[string]*Tensor, buf *Buffer, err error) {
	if f == nil {
		return nil, nil, &OpError{Op: "LoadGGUFInto", Msg: "nil *gguf.File"}
	}
	if !c.NoAlloc() {
		return nil, nil, errors.New("ggml: LoadGGUFInto needs a NoAlloc context")
	}
	defer recoverGGUF("LoadGGUFInto", &tensors, &err)
	infos := f.Tensors()
	tensors = make(map[string]*Tensor, len(infos))
	for _, info := range infos {
		tensors[info.Name] = c.newGGUFTensor(info)
	}
	if len(tensors) == 0 {
		return tensors, nil, nil
	}
	buf, err = c.AllocTensors(target)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (map[string]*Tensor, *Buffer, error) {
		_ = buf.Close()
		return nil, nil, err
	}
	for name, t := range tensors {
		// a view of the mapping or a fresh copy (OpenReader), copied at once
		data, err := link.GGUFTensorView(f, name)
		if err != nil {
			return fail(fmt.Errorf("ggml: LoadGGUFInto: %w", err))
		}
		if len(data) != t.NBytes() {
			return fail(fmt.Errorf("ggml: LoadGGUFInto: tensor %q has %d bytes in the file, %d in memory", name, len(data), t.NBytes()))
		}
		if len(data) == 0 {
			continue
		}
		var e C.gg_err
		C.gg_backend_tensor_set(&e, t.ptr(), unsafe.Pointer(unsafe.SliceData(data)), 0, C.size_t(len(data)))
		runtime.KeepAlive(f)
		if err := cError("LoadGGUFInto", &e); err != nil {
			return fail(err)
		}
	}
	return tensors, buf, nil
}

// Buffer is the Go buffer the tensor's data lives in, or nil (context
// memory, a graph allocator's buffer, or no data).
func (t *Tensor) Buffer() *Buffer {
	b := C.gg_tensor_buffer(t.ptr())
	if b == nil {
		return nil
	}
	if buf, ok := owners.get(b).(*Buffer); ok {
		return buf
	}
	return nil
}

// pinData keeps the tensor's buffer from being freed until the returned
// function is called; a closed buffer panics with an *OpError.
func (t *Tensor) pinData(op string) (unpin func()) {
	o := ownerOf(t.ptr())
	if o == nil {
		return func() {}
	}
	if !o.pin() {
		panic(&OpError{Op: op, Msg: fmt.Sprintf("the buffer of tensor %q is closed", t.Name())})
	}
	return o.unpin
}

// hostData returns the tensor's data pointer, pinned (its buffer cannot be
// freed) until release is called, for tensors whose bytes are in this
// process's memory; an error otherwise (no data, a closed buffer, or memory
// of another device).
func (t *Tensor) hostData(op string) (p unsafe.Pointer, release func(), err error) {
	return t.localData(op, false)
}

// localData is hostData that, with repacked, also takes a tensor of a
// CPU_REPACK buffer: its memory is this process's, its bytes possibly in
// the CPU's layout (for reading the memory, as StreamProbe does, not for
// the values).
func (t *Tensor) localData(op string, repacked bool) (p unsafe.Pointer, release func(), err error) {
	defer recoverOpError(&err)
	c := t.requireData(op) // an empty tensor may have none: p is then nil
	release = t.pinData(op)
	if c.data != nil && !C.gg_data_is_local(c, C.bool(repacked)) {
		release()
		where := "host memory"
		if repacked {
			where = "this process's memory"
		}
		return nil, nil, &OpError{Op: op, Msg: fmt.Sprintf("tensor %q is not in %s", t.Name(), where)}
	}
	return c.data, release, nil
}

// withData runs f on the tensor's bytes in this process's memory: the tensor
// itself, or, for a tensor in a buffer of another kind of memory, a copy read
// through the backend (and written back after f when write is set). With
// whole, f writes every element, so a contiguous tensor's copy is not read
// first. Writing a read-only tensor (LoadGGUF without copy) panics with an
// *OpError; a failed transfer (an RPC server gone) is the error returned.
func (t *Tensor) withData(op string, write, whole bool, f func(p *C.struct_lm_ggml_tensor)) error {
	defer t.pinData(op)()
	p := t.requireData(op)
	if write {
		p = t.requireWritable(op)
	}
	defer runtime.KeepAlive(t) // the memory must outlive the C calls (see Graph.compute)
	if p.data == nil || C.gg_data_is_local(p, false) {
		f(p)
		return nil
	}
	var e C.gg_err
	fresh := C.int(0)
	if write && whole && bool(C.lm_ggml_is_contiguous(p)) {
		fresh = 1
	}
	s := C.gg_shadow_get(&e, p, fresh)
	if err := cError(op, &e); err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(s))
	f(s)
	if write {
		C.gg_shadow_put(&e, p, s)
		return cError(op, &e)
	}
	return nil
}

// withElem runs f on the element of the tensor at the given indices: in
// place, or, for a tensor in another kind of memory, on a copy of that
// element alone (read first unless write, written back after f when write),
// which f reaches at indices 0. A failed transfer panics with an *OpError.
func (t *Tensor) withElem(op string, write bool, i0, i1, i2, i3 C.int64_t, f func(p *C.struct_lm_ggml_tensor, i0, i1, i2, i3 C.int64_t)) {
	defer t.pinData(op)()
	p := t.requireData(op)
	if write {
		p = t.requireWritable(op)
	}
	defer runtime.KeepAlive(t)
	if p.data == nil || C.gg_data_is_local(p, false) {
		f(p, i0, i1, i2, i3)
		return
	}
	off := C.size_t(i0)*p.nb[0] + C.size_t(i1)*p.nb[1] + C.size_t(i2)*p.nb[2] + C.size_t(i3)*p.nb[3]
	var e C.gg_err
	fresh := C.int(0)
	if write {
		fresh = 1
	}
	s := C.gg_elem_get(&e, p, off, fresh)
	check(op, &e)
	defer C.free(unsafe.Pointer(s))
	f(s, 0, 0, 0, 0)
	if write {
		C.gg_elem_put(&e, p, s, off)
		check(op, &e)
	}
}

// mustData is withData for methods without an error result: a failed
// transfer panics with an *OpError.
func (t *Tensor) mustData(op string, write bool, f func(p *C.struct_lm_ggml_tensor)) {
	if err := t.withData(op, write, false, f); err != nil {
		panic(&OpError{Op: op, Msg: strings.TrimPrefix(err.Error(), "ggml: "+op+": ")})
	}
}

// ownPoolWorkers is the number of worker threads of the CPU backends' own
// pools alive now (for tests).
func ownPoolWorkers() int { return int(C.lm_backend_cpu_own_workers()) }
