package ggml

/*
#include "glue.h"
#include "ggml-backend-impl.h"
#include <stdio.h>

GG_DEFV(set_param, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEFV(set_loss, (gg_t * a), (a))
GG_DEFV(build_backward_expand, (gg_c * s, gg_c * c, gg_g * g, bool acc), (s, c, g, acc))
GG_DEFV(graph_reset, (gg_g * g), (g))

// graph_reset, failing also when it skipped an accumulator with no memory.
static void gg_graph_reset_checked(gg_err * e, gg_g * g) {
    gg_graph_reset(e, g);
    if (!e->failed && lm_backend_last_error()[0] != '\0') {
        e->failed = 1;
        snprintf(e->msg, sizeof(e->msg), "%s", lm_backend_last_error());
    }
}

static int gg_graph_has_grads(const gg_g * g) { return g->grads != NULL; }
*/
import "C"

// Automatic differentiation. Gradients belong to a graph, not to tensors:
//
//	w := ctx.SetParam(ctx.NewTensor1D(ggml.TypeF32, 3)) // before BuildForward
//	loss := ctx.Sum(ctx.Sqr(ctx.Sub(w, target))).SetLoss()
//	g := ctx.NewGraphCustom(ggml.DefaultGraphSize, true)
//	g.BuildForward(loss)
//	if err := g.BuildBackward(ctx, ctx, false); err != nil { ... }
//	err = g.Compute(4) // forward and backward
//	...
//	g.Reset()          // d loss/d loss = 1 and accumulators 0 again, if accumulating
//	dw := g.Grad(w)    // 2*(w - target)

// SetParam marks t as a trainable parameter: Graph.BuildBackward computes the
// gradient of the loss with respect to it. Call it before the graph is built
// (BuildForward), so that t is a node of the graph. t may also be a computed
// tensor, as in ggml: it then gets its gradient (and an accumulator), and an
// optimizer step would update values that the next computation replaces.
// It returns t.
func (ctx *Context) SetParam(t *Tensor) *Tensor {
	needTensors("SetParam", t)
	var e C.gg_err
	C.gg_set_param(&e, ctx.ptr(), t.ptr())
	check("SetParam", &e)
	return t
}

// SetLoss marks t, an f32 scalar, as the loss whose gradient
// Graph.BuildBackward computes (several losses are summed). It panics with an
// *OpError if t is not an f32 scalar. It returns t.
func (t *Tensor) SetLoss() *Tensor {
	needTensors("SetLoss", t)
	var e C.gg_err
	C.gg_set_loss(&e, t.ptr())
	check("SetLoss", &e)
	return t
}

// BuildBackward appends to g (a graph created with grads = true and built
// with BuildForward) the nodes that compute the gradient of the loss (see
// SetLoss) with respect to every parameter (see SetParam) and every node in
// between. Gradient tensors are created in compute; the accumulators (the
// loss gradient, and with accumulate the parameter gradients, which then sum
// over computations until Reset) in static, which must allocate data. A nil
// context stands for g's context.
//
// The gradients start initialized, as Reset leaves them (the loss gradient 1,
// the accumulators 0), so the first Compute gives well-defined gradients;
// with a NoAlloc static context (accumulators that a backend buffer backs
// later) the first computation initializes them instead, or reports that they
// have no memory. It returns an error, with the core's message, if g has no
// room for gradients, has no parameter or no loss, or uses an op without a
// backward rule (e.g. tanh); g may then hold a partial build and should be
// rebuilt.
//
//	g := ctx.NewGraphCustom(ggml.DefaultGraphSize, true)
//	g.BuildForward(loss)
//	err := g.BuildBackward(ctx, ctx, false)
func (g *Graph) BuildBackward(static, compute *Context, accumulate bool) error {
	if static == nil {
		static = g.ctx
	}
	if compute == nil {
		compute = g.ctx
	}
	gp := g.ptr()
	if C.gg_graph_has_grads(gp) == 0 {
		return &OpError{Op: "BuildBackward", Msg: "the graph has no room for gradients (create it with NewGraphCustom(size, true))"}
	}
	var e C.gg_err
	C.gg_build_backward_expand(&e, static.ptr(), compute.ptr(), gp, C.bool(accumulate))
	// Backward nodes of compute reference the forward tensors, and the graph
	// references tensors of both contexts: record that before reporting, as
	// a failed build may already have added nodes.
	addDep(compute, g.ctx)
	addDep(g.ctx, compute)
	addDep(g.ctx, static)
	if e.failed != 0 {
		return g.buildError("BuildBackward", C.GoString(&e.msg[0]))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reset() != nil {
		g.needReset = true // no memory yet: the first computation tries again
	}
	return nil
}

// Grad returns the gradient of the loss with respect to t in g after
// BuildBackward (computed by Compute), or nil if t has none: t is not in the
// graph, or the loss does not depend on t through a parameter.
func (g *Graph) Grad(t *Tensor) *Tensor {
	needTensors("Grad", t)
	return g.owners().wrap(C.lm_ggml_graph_get_grad(g.ptr(), t.ptr()))
}

// GradAcc returns the gradient accumulator of t (in the static context of
// BuildBackward): the loss has one, and with accumulate so do the parameters.
// It is nil for other tensors.
func (g *Graph) GradAcc(t *Tensor) *Tensor {
	needTensors("GradAcc", t)
	return g.owners().wrap(C.lm_ggml_graph_get_grad_acc(g.ptr(), t.ptr()))
}

// Reset prepares g for a new accumulation: the loss gradient becomes 1, the
// other gradient accumulators 0, and the moments of the AdamW steps in g are
// cleared. It panics with an *OpError if g has no gradients or the loss
// gradient has no memory, and waits for a running computation of g to end.
func (g *Graph) Reset() {
	if insideCallback() {
		panic(&OpError{Op: "Reset", Msg: "called from inside a custom-op callback"})
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ptr()
	if err := g.reset(); err != nil {
		panic(err)
	}
}

// reset is Reset with g.mu held and the contexts checked.
func (g *Graph) reset() error {
	var e C.gg_err
	C.gg_graph_reset_checked(&e, g.g)
	if e.failed != 0 {
		return &OpError{Op: "Reset", Msg: C.GoString(&e.msg[0])}
	}
	g.needReset = false
	return nil
}
