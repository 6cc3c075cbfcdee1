package ggml

/*
#include "glue.h"
#include "ggml-cpu-impl.h"

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
	"sync/atomic"
	"unsafe"

	"github.com/ggml-go/ggml/internal/cmem"
)

// MaxThreads is the largest number of threads of a pool.
const MaxThreads = 512

// DefaultThreads is the count of threads a 0 stands for wherever the
// library takes one: runtime.NumCPU() (the CPUs the process may run on),
// at most MaxThreads. llama.cpp's -t default counts physical cores
// instead, which needs each platform's topology; NumCPU is what the Go
// runtime knows everywhere.
func DefaultThreads() int { return min(runtime.NumCPU(), MaxThreads) }

// ResolveThreads is the one rule for a count of threads given to the
// library (and package llama): 0 is DefaultThreads(), 1 to MaxThreads is
// itself, and anything else, negative or above MaxThreads, is an error
// (never silently clamped).
func ResolveThreads(n int) (int, error) { return resolveThreads("", n) }

// resolveThreads is ResolveThreads with op named in the error.
func resolveThreads(op string, n int) (int, error) {
	switch {
	case n == 0:
		return DefaultThreads(), nil
	case n < 0 || n > MaxThreads:
		if op != "" {
			op += ": "
		}
		return 0, fmt.Errorf("ggml: %sthread count %d out of range: 0 (the default, %d here) or 1 to %d", op, n, DefaultThreads(), MaxThreads)
	}
	return n, nil
}

// SchedPriority is the scheduling priority of a pool's threads.
type SchedPriority int32

// Priorities, as in the C API.
const (
	PrioNormal   SchedPriority = 0
	PrioMedium   SchedPriority = 1
	PrioHigh     SchedPriority = 2
	PrioRealtime SchedPriority = 3
)

// ThreadpoolParams configure a Threadpool (lm_ggml_threadpool_params).
type ThreadpoolParams struct {
	NThreads  int // 0: DefaultThreads()
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
// concurrent use: computations on one pool run one after the other. Close
// while a computation runs on the pool (from a custom-op callback or another
// goroutine) stops the threads when that computation ends; Pause and Resume
// may be called at any time.
type Threadpool struct {
	mu      sync.Mutex // serializes computations
	n       int
	cleanup runtime.Cleanup

	state     sync.Mutex // guards the fields below
	tp        *C.struct_lm_ggml_threadpool
	closed    atomic.Bool
	busy      bool // a computation runs on the pool
	users     int  // backends the pool is set on (Backend.SetThreadpool)
	freeLater bool // closed while busy or used: stop the threads when neither
}

// NewThreadpool starts a pool.
func NewThreadpool(p ThreadpoolParams) (*Threadpool, error) {
	initOnce()
	n, err := resolveThreads("NewThreadpool", p.NThreads)
	if err != nil {
		return nil, err
	}
	p.NThreads = n
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

// ErrClosedThreadpool is the panic value when a closed Threadpool is used;
// it matches ErrClosed (errors.Is).
var ErrClosedThreadpool error = &closedError{"threadpool"}

type closedError struct{ what string }

func (e *closedError) Error() string        { return "ggml: use of closed " + e.what }
func (e *closedError) Is(target error) bool { return target == ErrClosed }

// withPool runs f on the C pool under the state lock, panicking with
// ErrClosedThreadpool if the pool is closed.
func (tp *Threadpool) withPool(f func(p *C.struct_lm_ggml_threadpool)) {
	if tp == nil {
		panic(&OpError{Op: "Threadpool", Msg: "nil *Threadpool"})
	}
	tp.state.Lock()
	defer tp.state.Unlock()
	if tp.closed.Load() {
		panic(ErrClosedThreadpool)
	}
	f(tp.tp)
}

// acquire marks the pool as computing (tp.mu held) and returns it.
func (tp *Threadpool) acquire() (p *C.struct_lm_ggml_threadpool) {
	tp.withPool(func(c *C.struct_lm_ggml_threadpool) {
		tp.busy = true
		p = c
	})
	return p
}

// release ends a computation, stopping the threads if Close came meanwhile.
func (tp *Threadpool) release() {
	tp.state.Lock()
	defer tp.state.Unlock()
	tp.busy = false
	tp.freeIfDone()
}

// attach records a backend the pool is set on and returns the C pool: a
// Close then stops the threads only after detach.
func (tp *Threadpool) attach() (p *C.struct_lm_ggml_threadpool) {
	tp.withPool(func(c *C.struct_lm_ggml_threadpool) {
		tp.users++
		p = c
	})
	return p
}

// detach ends what attach began.
func (tp *Threadpool) detach() {
	tp.state.Lock()
	defer tp.state.Unlock()
	tp.users--
	tp.freeIfDone()
}

// freeIfDone stops the threads of a closed pool nothing uses any more
// (tp.state held).
func (tp *Threadpool) freeIfDone() {
	if tp.freeLater && !tp.busy && tp.users == 0 {
		tp.freeLater = false
		C.lm_ggml_threadpool_free(tp.tp)
		cmem.Release(threadCharge(tp.n))
		tp.tp = nil
	}
}

// mustOpen panics with ErrClosedThreadpool if the pool is closed.
func (tp *Threadpool) mustOpen() { tp.withPool(func(*C.struct_lm_ggml_threadpool) {}) }

// NThreads is the number of threads of the pool.
func (tp *Threadpool) NThreads() int {
	tp.mustOpen()
	return tp.n
}

// idle reports how many of the pool's workers are asleep between jobs right
// now and how many times one has woken since the pool started.
func (tp *Threadpool) idle() (sleeping int, wakeups uint) {
	var n C.int
	var w C.unsigned
	tp.withPool(func(p *C.struct_lm_ggml_threadpool) { C.lm_cpu_threadpool_idle(p, &n, &w) })
	return int(n), uint(w)
}

// Pause puts the workers to sleep until Resume or the next computation.
func (tp *Threadpool) Pause() {
	tp.withPool(func(p *C.struct_lm_ggml_threadpool) { C.lm_ggml_threadpool_pause(p) })
}

// Resume wakes paused workers.
func (tp *Threadpool) Resume() {
	tp.withPool(func(p *C.struct_lm_ggml_threadpool) { C.lm_ggml_threadpool_resume(p) })
}

// Close stops the workers: at once, or when the running computation ends,
// or, for a pool set on a Backend, when the backend lets it go (another
// SetThreadpool, or its Close); such a backend's computations fail with
// ErrClosedThreadpool meanwhile. It is idempotent.
func (tp *Threadpool) Close() error {
	if tp == nil {
		return nil
	}
	tp.state.Lock()
	defer tp.state.Unlock()
	if tp.closed.Swap(true) {
		return nil
	}
	tp.cleanup.Stop()
	if tp.busy || tp.users > 0 {
		tp.freeLater = true
		return nil
	}
	C.lm_ggml_threadpool_free(tp.tp)
	cmem.Release(threadCharge(tp.n))
	tp.tp = nil
	return nil
}

// ReleaseCachedThreadpool stops the threads of the process-wide pool that
// computations without a pool of their own (Graph.Compute, ComputeContext,
// lm_ggml_graph_compute_with_ctx in C) share, and frees it. Such a
// computation takes that pool when it is idle and has as many threads as it
// asks for (else it starts threads of its own, as many as it asks for), and
// leaves its pool behind for the next one, so a program computing small graphs
// in a loop does not start threads on every call. Idle, the pool's threads
// sleep; this gives them back to the system, for instance when a program
// is done computing. The next computation starts a new pool.
func ReleaseCachedThreadpool() {
	initOnce()
	C.lm_cpu_release_cached_threadpool()
}
