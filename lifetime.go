// Lifetimes of contexts: which contexts a context depends on, what closing
// one does to the others, and arenas kept alive while a computation uses them.
//
// The rules (see Context.Close):
//   - A context depends on every context whose tensors its tensors or graphs
//     reference (an operand of an op built in it, a tensor added to its graph,
//     a graph copied into it, gradients of BuildBackward, ...). It holds those
//     contexts strongly, so the garbage collector never frees a context that
//     another live one still points into.
//   - Closing a context closes, for use, every context that depends on it,
//     directly or not: their methods (and those of their tensors and graphs)
//     panic with an error that wraps ErrClosed instead of reading freed memory.
//   - Close during a computation that uses the context (from a custom-op
//     callback, or from another goroutine) takes effect at once for new calls,
//     but the arena is freed only when the computation ends.

package ggml

/*
#include "glue.h"
*/
import "C"

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"weak"
)

// errDepClosed is the panic value when a context whose tensors are used was
// closed: ErrClosed itself, as for the closed context (the package contract).
var errDepClosed = ErrClosed

// ctxLife is the lifetime state of a Context.
type ctxLife struct {
	closed atomic.Bool // Close was called
	broken atomic.Bool // a context this one depends on was closed

	mu         sync.Mutex
	deps       map[*Context]struct{}   // contexts this one references (held strongly)
	dependents []weak.Pointer[Context] // contexts that reference this one
	busy       int                     // computations using the arena now
	freeLater  bool                    // closed while busy: free when the last one ends
}

// ptr returns the C context, panicking with ErrClosed if it, or a context it
// depends on, was closed.
func (ctx *Context) ptr() *C.struct_lm_ggml_context {
	if ctx == nil || ctx.life.closed.Load() {
		panic(ErrClosed)
	}
	if ctx.life.broken.Load() {
		panic(errDepClosed)
	}
	return ctx.c
}

// Closed reports whether Close was called.
func (ctx *Context) Closed() bool { return ctx == nil || ctx.life.closed.Load() }

// Close frees the arena. Afterwards every method of the context, of its
// tensors and graphs, and of the contexts that depend on it (that use its
// tensors), panics with an error wrapping ErrClosed. If a computation is using
// the context (Close from a custom-op callback or from another goroutine), the
// arena is freed when that computation ends. Close is idempotent.
func (ctx *Context) Close() error {
	if ctx == nil {
		return nil
	}
	l := &ctx.life
	l.mu.Lock()
	if l.closed.Load() {
		l.mu.Unlock()
		return nil
	}
	l.closed.Store(true)
	ctx.cleanup.Stop()
	dependents := l.dependents
	l.dependents = nil
	l.deps = nil
	if l.busy > 0 {
		l.freeLater = true
	} else {
		ctx.handle().free(false)
	}
	l.mu.Unlock()
	markBroken(dependents)
	return nil
}

// markBroken marks the given contexts, and the contexts that depend on them,
// as depending on a closed context.
func markBroken(list []weak.Pointer[Context]) {
	for _, w := range list {
		c := w.Value()
		if c == nil || !c.life.broken.CompareAndSwap(false, true) {
			continue
		}
		c.life.mu.Lock()
		next := c.life.dependents
		c.life.mu.Unlock()
		markBroken(next)
	}
}

// addDep records that ctx references tensors of dep.
func addDep(ctx, dep *Context) {
	if ctx == dep || ctx == nil || dep == nil {
		return
	}
	ctx.life.mu.Lock()
	_, known := ctx.life.deps[dep]
	if !known {
		if ctx.life.deps == nil {
			ctx.life.deps = map[*Context]struct{}{}
		}
		ctx.life.deps[dep] = struct{}{}
	}
	ctx.life.mu.Unlock()
	if known {
		return
	}
	dep.life.mu.Lock()
	d := dep.life.dependents
	if len(d) >= 16 && len(d) == cap(d) { // drop collected dependents before growing
		live := d[:0]
		for _, w := range d {
			if w.Value() != nil {
				live = append(live, w)
			}
		}
		clear(d[len(live):])
		d = live
	}
	dep.life.dependents = append(d, weak.Make(ctx))
	gone := dep.life.closed.Load() || dep.life.broken.Load()
	dep.life.mu.Unlock()
	if gone { // dep was closed meanwhile (by another goroutine)
		markBroken([]weak.Pointer[Context]{weak.Make(ctx)})
	}
}

// depList is a snapshot of the contexts ctx depends on directly.
func (ctx *Context) depList() []*Context {
	ctx.life.mu.Lock()
	defer ctx.life.mu.Unlock()
	out := make([]*Context, 0, len(ctx.life.deps))
	for d := range ctx.life.deps {
		out = append(out, d)
	}
	return out
}

// closure lists ctx and every context it depends on, directly or not.
// (Every computation asks: the usual few contexts are searched in the list
// itself, a set is made only for many.)
func (ctx *Context) closure() []*Context {
	out := []*Context{ctx}
	var seen map[*Context]bool
	for i := 0; i < len(out); i++ {
		for _, d := range out[i].depList() {
			if seen == nil && len(out) >= 16 {
				seen = make(map[*Context]bool, 2*len(out))
				for _, c := range out {
					seen[c] = true
				}
			}
			if (seen != nil && seen[d]) || (seen == nil && slices.Contains(out, d)) {
				continue
			}
			if seen != nil {
				seen[d] = true
			}
			out = append(out, d)
		}
	}
	return out
}

// acquire marks every context of ctx's closure as used by a computation, so
// that Close defers freeing it, and returns them for release. It panics with
// ErrClosed (wrapped) if one is closed.
func (ctx *Context) acquire() []*Context {
	ctx.ptr()
	all := ctx.closure()
	for i, c := range all {
		c.life.mu.Lock()
		closed := c.life.closed.Load()
		if !closed {
			c.life.busy++
		}
		c.life.mu.Unlock()
		if closed {
			release(all[:i])
			panic(errDepClosed)
		}
	}
	return all
}

// release ends a computation's use of the contexts, freeing those closed
// meanwhile.
func release(all []*Context) {
	for _, c := range all {
		c.life.mu.Lock()
		c.life.busy--
		if c.life.busy == 0 && c.life.freeLater {
			c.life.freeLater = false
			c.handle().free(false)
		}
		c.life.mu.Unlock()
	}
	runtime.KeepAlive(all)
}
