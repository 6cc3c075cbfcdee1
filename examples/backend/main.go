// Command backend shows the backend layer of the ggml package, the way
// llama.cpp-style programs use it: a two-layer perceptron whose weights
// live in a backend buffer, a graph allocator that gives the intermediate
// tensors memory once, and a CPU backend that computes the graph for
// several inputs, reusing the same memory each time.
//
//	go run ./examples/backend -t 2
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/ggml-go/ggml"
)

func main() {
	threads := flag.Int("t", 2, "threads of the CPU backend")
	flag.Parse()
	if err := run(os.Stdout, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "backend:", err)
		os.Exit(1)
	}
}

const (
	nIn, nHidden, nOut = 8, 16, 4
	batch              = 3
)

func run(w io.Writer, threads int) error {
	// 1. A backend: here the CPU, with its own threads.
	be, err := ggml.NewCPUBackend()
	if err != nil {
		return err
	}
	defer be.Close()
	if err := be.SetThreads(threads); err != nil {
		return err
	}

	// 2. The weights: described in a NoAlloc context (metadata only), then
	// given one buffer of the backend's memory.
	wctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 8 * ggml.TensorOverhead(), NoAlloc: true})
	if err != nil {
		return err
	}
	defer wctx.Close()
	w1 := wctx.NewTensor2D(ggml.TypeF32, nIn, nHidden).SetName("w1")
	w2 := wctx.NewTensor2D(ggml.TypeF16, nHidden, nOut).SetName("w2") // f16: half the memory
	weights, err := wctx.AllocTensors(be)
	if err != nil {
		return err
	}
	defer weights.Close()
	weights.SetUsage(ggml.BufferUsageWeights)
	r := rand.New(rand.NewPCG(1, 2))
	for _, t := range []*ggml.Tensor{w1, w2} {
		v := make([]float32, t.NElements())
		for i := range v {
			v[i] = float32(r.NormFloat64()) * 0.3
		}
		if err := t.SetFloat32s(v); err != nil { // converted to the tensor's type
			return err
		}
	}
	fmt.Fprintf(w, "weights: %d bytes in a %s buffer\n", weights.Size(), weights.Name())

	// 3. The graph: inputs and outputs flagged, so that the allocator
	// neither reuses their memory nor overwrites them.
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	if err != nil {
		return err
	}
	defer ctx.Close()
	x := ctx.NewTensor2D(ggml.TypeF32, nIn, batch).SetName("x").SetInput()
	h := ctx.Gelu(ctx.MulMat(w1, x))
	y := ctx.SoftMax(ctx.MulMat(w2, h)).SetName("y").SetOutput()
	g := ctx.NewGraph().BuildForward(y)

	// 4. The allocator plans the intermediates' memory once.
	ga, err := ggml.NewGraphAllocator(be.BufferType())
	if err != nil {
		return err
	}
	defer ga.Close()
	if err := ga.Alloc(g); err != nil {
		return err
	}
	fmt.Fprintf(w, "graph: %d nodes, compute buffer %d bytes\n", g.NNodes(), ga.BufferSize(0))

	// 5. Compute for a few inputs: only the input's data changes.
	for round := range 3 {
		in := make([]float32, nIn*batch)
		for i := range in {
			in[i] = float32(r.NormFloat64())
		}
		if err := x.SetFloat32s(in); err != nil {
			return err
		}
		if err := be.Compute(context.Background(), g); err != nil {
			return err
		}
		out, err := y.Float32s()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "round %d, the %d columns' probabilities:", round+1, batch)
		for c := range batch {
			fmt.Fprintf(w, " %.3f", out[c*nOut:(c+1)*nOut])
		}
		fmt.Fprintln(w)
	}
	return nil
}
