package ggml

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// AdamWParams are the hyper-parameters of AdamW. A zero field means its
// default, the same for NewAdamW and TrainerOptions.AdamW: those of
// DefaultAdamWParams, so AdamWParams{Alpha: 0.05} changes only the
// learning rate (WeightDecay's default is 0). AdamW.Params, set after
// NewAdamW or NewTrainer, is used as it is: the way to a zero Beta1, Beta2
// or Eps.
type AdamWParams struct {
	Alpha       float32 // learning rate
	Beta1       float32 // decay of the first moment
	Beta2       float32 // decay of the second moment
	Eps         float32 // added to the root of the second moment
	WeightDecay float32 // decoupled weight decay, multiplied by Alpha
}

// DefaultAdamWParams returns the usual defaults: learning rate 1e-3, betas
// 0.9 and 0.999, eps 1e-8, no weight decay.
func DefaultAdamWParams() AdamWParams {
	return AdamWParams{Alpha: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// AdamW is the AdamW optimizer for the parameters of a graph. It owns a
// context with the moments m, v of every parameter and the hyper-parameter
// tensor the step nodes read, which Step rewrites before each optimizer run
// (bias corrections 1/(1-beta^t) included).
//
//	opt := ggml.NewAdamW(ggml.DefaultAdamWParams())
//	gOpt := gGrad.Dup(ctx)       // forward + backward graph
//	err := opt.Build(gOpt, ctx)  // + one opt_step_adamw node per parameter
//	gOpt.Reset()                 // loss gradient 1, moments 0
//	for ... { opt.Step(); gGrad.Reset(); gOpt.Compute(n) }
type AdamW struct {
	// Params may be changed between steps (e.g. a learning rate schedule).
	Params AdamWParams

	ctx    *Context
	hp     *Tensor // f32 [7]: alpha, beta1, beta2, eps, wd, beta1h, beta2h
	params []*Tensor
	m, v   []*Tensor
	iter   int
}

// withDefaults fills the zero fields of p from DefaultAdamWParams.
func (p AdamWParams) withDefaults() AdamWParams {
	d := DefaultAdamWParams()
	for _, f := range []struct{ v, def *float32 }{{&p.Alpha, &d.Alpha}, {&p.Beta1, &d.Beta1}, {&p.Beta2, &d.Beta2}, {&p.Eps, &d.Eps}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return p
}

// NewAdamW returns an optimizer with the given hyper-parameters, each zero
// field taking its default (see AdamWParams); Build attaches it to a graph.
func NewAdamW(p AdamWParams) *AdamW { return &AdamW{Params: p.withDefaults()} }

// recoverOpError turns a panic with an *OpError into *err; other panics go on.
func recoverOpError(err *error) {
	if r := recover(); r != nil {
		var oe *OpError
		if e, ok := r.(error); ok && errors.As(e, &oe) {
			*err = oe
			return
		}
		panic(r)
	}
}

// Build adds to g, after BuildBackward, one AdamW step node (created in
// compute; nil means g's context) for every f32 parameter of g that has a
// gradient. The step nodes come last, so every use of a parameter's old
// value is computed before it is updated. An optimizer is built once.
func (o *AdamW) Build(g *Graph, compute *Context) (err error) {
	defer recoverOpError(&err)
	if o.ctx != nil {
		return errors.New("ggml: AdamW.Build: the optimizer is already built")
	}
	if compute == nil {
		compute = g.ctx
	}
	type pg struct{ p, g *Tensor }
	var list []pg
	bytes := 0
	for _, n := range g.Nodes() {
		if n.Flags()&FlagParam == 0 {
			continue
		}
		gr := g.Grad(n)
		if gr == nil {
			continue
		}
		if n.Type() != TypeF32 {
			return fmt.Errorf("ggml: AdamW.Build: parameter %q is %s, not f32", n.Name(), n.Type())
		}
		list = append(list, pg{n, gr})
		bytes += 2 * n.NBytes()
	}
	if len(list) == 0 {
		return errors.New("ggml: AdamW.Build: the graph has no parameter with a gradient (call BuildBackward first)")
	}
	ctx, err := NewContext(ContextOptions{MemSize: (2*len(list)+1)*(TensorOverhead()+64) + bytes + 64})
	if err != nil {
		return err
	}
	o.hp = ctx.NewTensor1D(TypeF32, 7).SetName("adamw params")
	for _, x := range list {
		m := ctx.DupTensor(x.p).SetName("adamw m for " + x.p.Name()).Zero()
		v := ctx.DupTensor(x.p).SetName("adamw v for " + x.p.Name()).Zero()
		step := compute.OptStepAdamW(x.p, x.g, m, v, o.hp)
		g.BuildForward(step)
		o.params = append(o.params, x.p)
		o.m = append(o.m, m)
		o.v = append(o.v, v)
	}
	addDep(g.ctx, compute)
	addDep(g.ctx, ctx)
	addDep(compute, ctx)
	o.ctx = ctx
	return o.write()
}

// write stores the hyper-parameters for step o.iter (at least 1).
func (o *AdamW) write() error {
	t := float64(max(o.iter, 1))
	p := o.Params
	b1h := 1 / (1 - math.Pow(float64(p.Beta1), t))
	b2h := 1 / (1 - math.Pow(float64(p.Beta2), t))
	return o.hp.SetFloat32s([]float32{p.Alpha, p.Beta1, p.Beta2, p.Eps, p.WeightDecay, float32(b1h), float32(b2h)})
}

// Step advances to the next optimizer step: call it once before each
// computation of the graph holding the step nodes.
func (o *AdamW) Step() error {
	if o.ctx == nil {
		return errors.New("ggml: AdamW.Step: the optimizer is not built")
	}
	o.iter++
	return o.write()
}

// Iter is the number of steps taken (since Build or Reset).
func (o *AdamW) Iter() int { return o.iter }

// Parameters lists the parameters the optimizer updates.
func (o *AdamW) Parameters() []*Tensor { return o.params }

// Moments returns the first and second moment tensors of parameter i (an
// index into Parameters); it panics with an *OpError for another i.
func (o *AdamW) Moments(i int) (m, v *Tensor) {
	if i < 0 || i >= len(o.m) {
		panic(&OpError{Op: "AdamW.Moments", Msg: fmt.Sprintf("parameter index %d out of range [0, %d)", i, len(o.m))})
	}
	return o.m[i], o.v[i]
}

// Reset starts the optimizer afresh: step count and moments 0.
func (o *AdamW) Reset() {
	o.iter = 0
	for i := range o.m {
		o.m[i].Zero()
		o.v[i].Zero()
	}
}

// ---------------------------------------------------------------- training loop

// TrainerOptions configure NewTrainer.
type TrainerOptions struct {
	// AdamW are the optimizer's hyper-parameters, a zero field taking its
	// default as in NewAdamW (see AdamWParams). For a zero Beta1, Beta2 or
	// Eps, set Trainer.Opt.Params after NewTrainer.
	AdamW     AdamWParams
	Threads   int // compute threads; 0: DefaultThreads() (negative: an error, see ResolveThreads)
	GraphSize int // node capacity of the graphs; 0: DefaultGraphSize
	// Outputs are extra tensors (e.g. logits) that Eval computes with the loss.
	Outputs []*Tensor
}

// Trainer trains the parameters of a model with AdamW. Its graphs are built
// once; each step the caller sets the input tensors and calls Step:
//
//	x := ctx.NewTensor2D(ggml.TypeF32, 2, batch)   // inputs
//	y := ctx.NewTensor2D(ggml.TypeF32, 3, batch)   // one-hot labels
//	w := ctx.SetParam(ctx.NewTensor2D(ggml.TypeF32, 2, 3))
//	loss := ctx.CrossEntropyLoss(ctx.MulMat(w, x), y)
//	tr, err := ggml.NewTrainer(ctx, loss, ggml.TrainerOptions{})
//	defer tr.Close()
//	err = tr.Fit(epochs, nBatches, loadBatch, func(s ggml.EpochStats) error {
//		fmt.Println(s.Epoch, s.Loss)
//		return nil
//	})
type Trainer struct {
	Loss *Tensor
	Opt  *AdamW
	// FwdGraph computes the loss and the outputs, GradGraph adds the
	// gradients, OptGraph (a copy of GradGraph) adds the AdamW steps.
	FwdGraph, GradGraph, OptGraph *Graph

	tp *Threadpool
}

// NewTrainer builds the graphs of a training step for loss (an f32 scalar,
// marked with SetLoss if it is not already) in compute, which must allocate
// data. The parameters must have been marked with SetParam.
func NewTrainer(compute *Context, loss *Tensor, opts TrainerOptions) (tr *Trainer, err error) {
	defer recoverOpError(&err)
	if opts.Threads, err = resolveThreads("NewTrainer", opts.Threads); err != nil {
		return nil, err
	}
	if opts.GraphSize <= 0 {
		opts.GraphSize = DefaultGraphSize
	}
	if loss.Flags()&FlagLoss == 0 {
		loss.SetLoss()
	}
	fwd := compute.NewGraphCustom(opts.GraphSize, false)
	for _, o := range opts.Outputs {
		fwd.BuildForward(o)
	}
	fwd.BuildForward(loss)

	gg := compute.NewGraphCustom(opts.GraphSize, true)
	gg.BuildForward(loss)
	if err := gg.BuildBackward(compute, compute, false); err != nil {
		return nil, err
	}
	gopt := gg.Dup(compute)
	opt := NewAdamW(opts.AdamW)
	if err := opt.Build(gopt, compute); err != nil {
		return nil, err
	}
	gopt.Reset()
	tp, err := NewThreadpool(DefaultThreadpoolParams(opts.Threads))
	if err != nil {
		return nil, err
	}
	return &Trainer{Loss: loss, Opt: opt, FwdGraph: fwd, GradGraph: gg, OptGraph: gopt, tp: tp}, nil
}

// Step runs one training step on the current inputs: forward, backward and
// the AdamW update. It returns the loss before the update.
func (tr *Trainer) Step() (float32, error) {
	if err := tr.Opt.Step(); err != nil {
		return 0, err
	}
	tr.GradGraph.Reset()
	if err := tr.OptGraph.Run(context.Background(), ComputeOptions{Threadpool: tr.tp}); err != nil {
		return 0, err
	}
	return tr.Loss.F32(0), nil
}

// Eval computes the loss and the outputs on the current inputs, without
// training.
func (tr *Trainer) Eval() (float32, error) {
	if err := tr.FwdGraph.Run(context.Background(), ComputeOptions{Threadpool: tr.tp}); err != nil {
		return 0, err
	}
	return tr.Loss.F32(0), nil
}

// EpochStats describe a finished epoch of Fit.
type EpochStats struct {
	Epoch   int           // from 1
	Loss    float64       // mean training loss over the epoch's batches
	Batches int           // steps in the epoch
	Elapsed time.Duration // duration of the epoch
}

// Fit trains for the given number of epochs of nBatches steps each. Before
// each step, load(i) fills the input tensors with batch i (0 <= i < nBatches).
// onEpoch, if not nil, is called after each epoch; an error from it (or from
// load) stops training and is returned.
func (tr *Trainer) Fit(epochs, nBatches int, load func(batch int) error, onEpoch func(EpochStats) error) error {
	tr.Loss.ptr()    // ErrClosed if the model's context is closed
	tr.tp.mustOpen() // ErrClosedThreadpool after Close
	for ep := 1; ep <= epochs; ep++ {
		start := time.Now()
		sum := 0.0
		for b := range nBatches {
			if load != nil {
				if err := load(b); err != nil {
					return err
				}
			}
			l, err := tr.Step()
			if err != nil {
				return err
			}
			sum += float64(l)
		}
		if onEpoch != nil {
			s := EpochStats{Epoch: ep, Loss: sum / float64(max(nBatches, 1)), Batches: nBatches, Elapsed: time.Since(start)}
			if err := onEpoch(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close stops the trainer's threads. The graphs and the optimizer's context
// are freed with their contexts.
func (tr *Trainer) Close() error {
	return tr.tp.Close()
}
