// Package cmem makes memory that the Go garbage collector cannot see count
// towards collections: C heap blocks, memory mappings and OS threads held by
// Go objects whose cleanups (runtime.AddCleanup) release them.
//
// The collector paces itself on the Go heap only, so a program that creates
// objects holding large C buffers and forgets to Close them would otherwise
// grow without bound while its Go heap stays tiny. Every such object charges
// its size here when it takes the resource and gives it back when it frees
// it; when the charged bytes grow past a goal, Charge runs a collection
// (runtime.GC) so that unreachable owners are found and their cleanups run.
//
// The goal follows GOGC the way the collector's own heap goal does: the
// bytes estimated to have survived the last collection started here, plus
// GOGC percent of them, and at least MinGoal. With GOGC=off it is the
// memory limit (GOMEMLIMIT) minus the Go heap, or nothing at all.
//
// Use:
//
//	n := int64(size)
//	cmem.Charge(n)                         // before (or right after) allocating
//	p := C.malloc(n)                       // on failure: cmem.Release(n)
//	obj := &Obj{p: p, n: n}
//	obj.cleanup = runtime.AddCleanup(obj, func(r res) { C.free(r.p); cmem.Collected(r.n) }, res{p, n})
//	// Close: obj.cleanup.Stop(); C.free(obj.p); cmem.Release(obj.n)
//
// An owner whose size changes (an allocator that grows its buffers) keeps a
// *Holding instead and calls Set after each change.
//
// Release is for explicit frees (Close, or a transient buffer), Collected for
// frees done by a cleanup: only the latter tell the pacer that garbage was
// found, so a program that closes what it opens never triggers collections
// by churning through buffers.
package cmem

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// MinGoal is the smallest goal: charges below it never start a collection.
const MinGoal = 64 << 20

var (
	live   atomic.Int64 // bytes charged and not yet given back
	base   atomic.Int64 // estimate of the charged bytes that survived the last collection started here
	goal   atomic.Int64 // Charge collects when live exceeds it
	gogc   atomic.Int64 // GOGC percent (-1: off), read at each collection
	limit  atomic.Int64 // GOMEMLIMIT minus the Go heap at the last collection (MaxInt64: none)
	forced atomic.Int64 // collections started by Charge
	gcMu   sync.Mutex   // one collection at a time
)

func init() {
	gogc.Store(100)
	limit.Store(math.MaxInt64)
	goal.Store(MinGoal)
	readSettings()
	setGoal()
}

// Charge records n bytes held outside the Go heap. If the bytes charged now
// exceed the goal it first runs a garbage collection, so that objects that
// became unreachable without being closed release theirs. It must not be
// called from a cleanup.
func Charge(n int64) {
	if n <= 0 {
		return
	}
	if live.Add(n) > goal.Load() {
		collect()
	}
}

// Release gives back n bytes freed explicitly (Close, end of a computation).
func Release(n int64) {
	if n > 0 {
		live.Add(-n)
	}
}

// Collected gives back n bytes freed by a cleanup: they were garbage, so the
// estimate of what survived the last collection shrinks and the goal with it.
// It only does atomic arithmetic, so cleanups may call it.
func Collected(n int64) {
	if n <= 0 {
		return
	}
	live.Add(-n)
	for {
		b := base.Load()
		if base.CompareAndSwap(b, max(b-n, 0)) {
			break
		}
	}
	setGoal()
}

// Holding is the charge of one owner whose size changes over its life (an
// allocator whose buffers grow when it reserves a bigger graph). Its zero
// value holds nothing. Keep it outside the owner (a separate allocation)
// so that the owner's cleanup can take it as its argument.
type Holding struct{ n atomic.Int64 }

// Set makes the holding n bytes, charging or releasing the difference.
func (h *Holding) Set(n int64) {
	if d := n - h.n.Swap(max(n, 0)); d > 0 {
		Charge(d)
	} else {
		Release(-d)
	}
}

// Release gives everything back after an explicit free (Close).
func (h *Holding) Release() { Release(h.n.Swap(0)) }

// Collected gives everything back from the owner's cleanup.
func (h *Holding) Collected() { Collected(h.n.Swap(0)) }

// Stats describes the accounting, for tests and diagnostics.
type Stats struct {
	Live        int64 // bytes charged now
	Goal        int64 // Charge collects above this
	Collections int64 // collections started by Charge
}

// Read returns the current Stats.
func Read() Stats {
	return Stats{Live: live.Load(), Goal: goal.Load(), Collections: forced.Load()}
}

func collect() {
	if !gcMu.TryLock() {
		return // another goroutine is collecting; it has the same effect
	}
	defer gcMu.Unlock()
	if live.Load() <= goal.Load() {
		return
	}
	done := sentinel()
	runtime.GC()
	forced.Add(1)
	// What is charged now includes the garbage this collection found: its
	// cleanups lower the estimate through Collected as they run. Give them
	// a moment before the caller allocates more (the sentinel's cleanup was
	// queued with theirs).
	base.Store(live.Load())
	readSettings()
	setGoal()
	select {
	case <-done:
	case <-time.After(cleanupWait):
	}
}

// cleanupWait bounds how long a collection started by Charge waits for the
// cleanups it made runnable.
const cleanupWait = 5 * time.Millisecond

// sentinel returns a channel closed by the cleanup of an object that is
// unreachable as soon as sentinel returns.
//
//go:noinline
func sentinel() chan struct{} {
	done := make(chan struct{})
	s := &struct{ _ [32]byte }{} // not a tiny allocation: tiny objects may share a cleanup slot
	runtime.AddCleanup(s, func(c chan struct{}) { close(c) }, done)
	return done
}

func setGoal() {
	b := base.Load()
	g := int64(math.MaxInt64)
	if p := gogc.Load(); p >= 0 {
		if f := float64(b) * (1 + float64(p)/100); f < math.MaxInt64 {
			g = int64(f)
		}
	}
	g = min(g, limit.Load())
	goal.Store(max(g, MinGoal))
}

var settings = []metrics.Sample{
	{Name: "/gc/gogc:percent"},
	{Name: "/gc/gomemlimit:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
}

// readSettings reads GOGC and GOMEMLIMIT (which debug.SetGCPercent and
// debug.SetMemoryLimit may change at any time) and the Go heap size.
func readSettings() {
	metrics.Read(settings)
	p := int64(-1)
	if v := settings[0].Value; v.Kind() == metrics.KindUint64 && v.Uint64() <= math.MaxInt32 {
		p = int64(v.Uint64())
	}
	gogc.Store(p)
	l := int64(math.MaxInt64)
	if v := settings[1].Value; v.Kind() == metrics.KindUint64 && v.Uint64() < math.MaxInt64 {
		heap := int64(0)
		if h := settings[2].Value; h.Kind() == metrics.KindUint64 {
			heap = int64(min(h.Uint64(), math.MaxInt64))
		}
		l = max(int64(v.Uint64())-heap, 0)
	}
	limit.Store(l)
}
