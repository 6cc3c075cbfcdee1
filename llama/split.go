package llama

import (
	"context"
	"fmt"

	"github.com/ggml-go/ggml"
)

// schedEngine computes the graphs of a model whose layers are on several
// devices (placement.go) with a ggml.Scheduler over the devices' backends
// and the local CPU (last: it takes the graph inputs). Nodes go where their
// weights, or the KV cache they write, are; the scheduler cuts the graph
// where the device changes and copies the activations across. Its compute
// buffers, one per backend, are reserved for the largest graph when the
// session starts and reused for every graph after.
type schedEngine struct {
	cpu   *ggml.Backend
	devs  []*device
	sc    *ggml.Scheduler
	meta  []byte
	ctx   *ggml.Context
	dmeta []byte
	dctx  *ggml.Context
	last  *ggml.Graph // the graph placed last
}

func newSchedEngine(m *Model, kv *kvCache, maxBatch, threads int) (e *schedEngine, err error) {
	defer recoverOp(&err)
	cpu, err := ggml.NewCPUBackend()
	if err != nil {
		return nil, err
	}
	if err := cpu.SetThreads(threads); err != nil {
		cpu.Close()
		return nil, err
	}
	backends := make([]*ggml.Backend, 0, len(m.devs)+1)
	for _, d := range m.devs {
		backends = append(backends, d.be)
	}
	backends = append(backends, cpu)
	n := m.graphSize()
	sc, err := ggml.NewScheduler(backends, 4*n, false)
	if err != nil {
		cpu.Close()
		return nil, err
	}
	arena := ggml.GraphOverhead(n, false) + 2*n*ggml.TensorOverhead() + 4096
	e = &schedEngine{cpu: cpu, devs: m.devs, sc: sc, meta: make([]byte, arena), dmeta: make([]byte, arena)}
	ctx, err := e.context()
	if err == nil {
		err = sc.Reserve(m.build(ctx, kv, maxBatch, kv.nCtx-maxBatch, 1).g)
	}
	if err != nil {
		e.close()
		return nil, fmt.Errorf("llama: reserving the compute buffers: %w", err)
	}
	return e, nil
}

func (e *schedEngine) context() (*ggml.Context, error) { return renewContext(&e.ctx, e.meta) }

func (e *schedEngine) decodeContext() (*ggml.Context, error) {
	return renewContext(&e.dctx, e.dmeta)
}

// renewContext closes *c and makes it a new context over arena.
func renewContext(c **ggml.Context, arena []byte) (*ggml.Context, error) {
	if *c != nil {
		(*c).Close()
		*c = nil
	}
	ctx, err := ggml.NewContext(ggml.ContextOptions{Buffer: arena, NoAlloc: true})
	if err != nil {
		return nil, err
	}
	*c = ctx
	return ctx, nil
}

func (e *schedEngine) run(ctx context.Context, b *batchGraph, tokens []int32) error {
	if b.g != e.last {
		e.last = nil
		if err := e.sc.Alloc(b.g); err != nil {
			return e.explain(err)
		}
		e.last = b.g
	}
	if err := b.setInputs(tokens); err != nil {
		return err
	}
	if err := e.sc.Compute(ctx, b.g); err != nil {
		e.last = nil // place it again next time (a failed computation may leave the splits half done)
		return e.explain(err)
	}
	return nil
}

// explain names the device a failed computation lost, and what to do.
func (e *schedEngine) explain(err error) error {
	for _, d := range e.devs {
		if !d.alive() {
			return fmt.Errorf("llama: lost the RPC server %s (layers %s): %w; once it is back, a new session loads its layers again",
				d.name, layerRange(d.first, d.end), err)
		}
	}
	return err
}

// computeBytes is the size of the compute buffers, every backend's.
func (e *schedEngine) computeBytes() int {
	n := 0
	for _, b := range e.sc.Backends() {
		n += e.sc.BufferSize(b)
	}
	return n
}

// deviceComputeBytes is the local CPU's compute buffer and each device's.
func (e *schedEngine) deviceComputeBytes() []int {
	out := []int{e.sc.BufferSize(e.cpu)}
	for _, d := range e.devs {
		out = append(out, e.sc.BufferSize(d.be))
	}
	return out
}

func (e *schedEngine) close() {
	for _, c := range []**ggml.Context{&e.ctx, &e.dctx} {
		if *c != nil {
			(*c).Close()
			*c = nil
		}
	}
	e.last = nil
	e.sc.Close()
	e.cpu.Close()
}

// Devices reports where the session's model is and what each device holds
// for it: the weights, the KV cache of its layers and its compute buffer
// (the local CPU first, then the devices as Model.Devices).
func (s *Session) Devices() []DeviceUsage {
	out := s.m.Devices()
	if s.eng == nil {
		return out
	}
	for i, n := range s.kv.bytes() {
		if i < len(out) {
			out[i].KVBytes = n
		}
	}
	switch e := s.eng.(type) {
	case *schedEngine:
		for i, n := range e.deviceComputeBytes() {
			if i < len(out) {
				out[i].ComputeBytes = n
			}
		}
	default:
		out[0].ComputeBytes = e.computeBytes()
	}
	return out
}
