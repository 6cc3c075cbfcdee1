package ggml_test

import (
	"context"
	"fmt"
	"net"

	"github.com/ggml-go/ggml"
)

// A backend computes graphs whose tensors live in its buffers. Weights are
// described in a NoAlloc context and given one buffer; the graph's
// intermediates get memory from a graph allocator.
func ExampleBackend() {
	be, err := ggml.NewCPUBackend()
	if err != nil {
		panic(err)
	}
	defer be.Close()

	wctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 8 * ggml.TensorOverhead(), NoAlloc: true})
	if err != nil {
		panic(err)
	}
	defer wctx.Close()
	w := wctx.NewTensor2D(ggml.TypeF32, 3, 2) // 2 rows of 3
	weights, err := wctx.AllocTensors(be)
	if err != nil {
		panic(err)
	}
	defer weights.Close()
	_ = w.SetFloat32s([]float32{1, 0, -1, 0.5, 0.5, 0.5})

	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()
	x := ctx.NewTensor1D(ggml.TypeF32, 3).SetInput()
	y := ctx.Relu(ctx.MulMat(w, x)).SetOutput()
	g := ctx.NewGraph().BuildForward(y)

	ga, err := ggml.NewGraphAllocator(be.BufferType())
	if err != nil {
		panic(err)
	}
	defer ga.Close()
	if err := ga.Alloc(g); err != nil {
		panic(err)
	}
	_ = x.SetFloat32s([]float32{2, 4, 6})
	if err := be.Compute(context.Background(), g); err != nil {
		panic(err)
	}
	fmt.Println("backend:", be.Name(), "w in the weights buffer:", w.Buffer() == weights)
	printRounded(y, 2)
	// Output:
	// backend: CPU w in the weights buffer: true
	// [0.00 6.00]
}

// A graph allocator sized once (Reserve, for the largest graph) serves
// every later graph of that shape or smaller from the same buffer: memory
// stays flat from one computation to the next.
func ExampleGraphAllocator() {
	be, err := ggml.NewCPUBackend()
	if err != nil {
		panic(err)
	}
	defer be.Close()
	ga, err := ggml.NewGraphAllocator(be.BufferType())
	if err != nil {
		panic(err)
	}
	defer ga.Close()

	build := func(n int) (*ggml.Context, *ggml.Graph, *ggml.Tensor, *ggml.Tensor) {
		ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20, NoAlloc: true})
		if err != nil {
			panic(err)
		}
		x := ctx.NewTensor1D(ggml.TypeF32, n).SetInput()
		y := ctx.Sum(ctx.Sqr(ctx.Scale(x, 2))).SetOutput() // sum of (2x)^2
		return ctx, ctx.NewGraph().BuildForward(y), x, y
	}
	big, gBig, _, _ := build(1024)
	defer big.Close()
	if err := ga.Reserve(gBig); err != nil {
		panic(err)
	}
	reserved := ga.BufferSize(0)
	for _, n := range []int{4, 1024, 100} {
		ctx, g, x, y := build(n)
		if err := ga.Alloc(g); err != nil {
			panic(err)
		}
		_ = x.Fill(1)
		if err := be.Compute(context.Background(), g); err != nil {
			panic(err)
		}
		fmt.Printf("n=%d sum=%.0f same buffer: %v\n", n, y.F32(0), ga.BufferSize(0) == reserved)
		ctx.Close()
	}
	// Output:
	// n=4 sum=16 same buffer: true
	// n=1024 sum=4096 same buffer: true
	// n=100 sum=400 same buffer: true
}

// A scheduler computes one graph over several backends: each node runs on
// the backend that holds its weights, and what a split needs from another
// backend's memory is copied. Here two CPU backends stand for two devices.
func ExampleScheduler() {
	dev, err := ggml.NewCPUBackend() // a stand-in for an accelerator or a remote machine
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	cpu, err := ggml.NewCPUBackend()
	if err != nil {
		panic(err)
	}
	defer cpu.Close()

	wctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 8 * ggml.TensorOverhead(), NoAlloc: true})
	if err != nil {
		panic(err)
	}
	defer wctx.Close()
	w := wctx.NewTensor2D(ggml.TypeF32, 2, 2)
	weights, err := wctx.AllocTensors(dev)
	if err != nil {
		panic(err)
	}
	defer weights.Close()
	weights.SetUsage(ggml.BufferUsageWeights) // nodes that use w go to dev
	_ = w.SetFloat32s([]float32{0, 1, 1, 0})  // swaps the two elements

	sc, err := ggml.NewScheduler([]*ggml.Backend{dev, cpu}, 64, false) // the CPU comes last
	if err != nil {
		panic(err)
	}
	defer sc.Close()
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()
	x := ctx.NewTensor1D(ggml.TypeF32, 2).SetInput()
	y := ctx.Scale(ctx.MulMat(w, x), 10).SetOutput()
	g := ctx.NewGraph().BuildForward(y)
	if err := sc.Alloc(g); err != nil {
		panic(err)
	}
	_ = x.SetFloat32s([]float32{1, 2})
	if err := sc.Compute(context.Background(), g); err != nil {
		panic(err)
	}
	fmt.Println("mul_mat on dev:", sc.TensorBackend(y.Src(0)) == dev)
	printRounded(y, 1)
	// Output:
	// mul_mat on dev: true
	// [20.0 10.0]
}

// A ggml RPC server makes a machine's backend usable from other machines
// (ggml rpc-server on the command line). Here the server runs in this
// process on a loopback port; the client sees it as one more Backend.
func ExampleDialRPC() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	served, err := ggml.NewCPUBackend()
	if err != nil {
		panic(err)
	}
	defer served.Close()
	stop, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ggml.ServeRPC(stop, ln, served, 64<<20) }()
	defer func() { cancel(); <-done }()

	remote, err := ggml.DialRPC(context.Background(), ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer remote.Close()
	_, total, err := ggml.RPCDeviceMemory(context.Background(), ln.Addr().String())
	if err != nil {
		panic(err)
	}
	fmt.Println("remote backend:", remote.IsRPC(), "memory:", total>>20, "MiB")

	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 3)
	y := ctx.Mul(a, a)
	g := ctx.NewGraph().BuildForward(y)
	buf, err := ctx.AllocTensors(remote) // a, and y, in the server's memory
	if err != nil {
		panic(err)
	}
	defer buf.Close()
	if err := a.SetFloat32s([]float32{1, 2, 3}); err != nil { // sent to the server
		panic(err)
	}
	if err := remote.Compute(context.Background(), g); err != nil { // computed there
		panic(err)
	}
	printRounded(y, 0) // read back
	// Output:
	// remote backend: true memory: 64 MiB
	// [1 4 9]
}

// A Trainer runs the training loop: forward, backward and AdamW steps on
// graphs built once. Here a linear classifier learns which of two inputs is
// larger.
func ExampleTrainer() {
	const batch = 8
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 16 << 20})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()
	x := ctx.NewTensor2D(ggml.TypeF32, 2, batch)      // inputs
	labels := ctx.NewTensor2D(ggml.TypeF32, 2, batch) // one-hot
	w := ctx.SetParam(ctx.NewTensor2D(ggml.TypeF32, 2, 2))
	_ = w.SetFloat32s([]float32{0.1, -0.1, 0.05, 0.02})
	loss := ctx.CrossEntropyLoss(ctx.MulMat(w, x), labels)

	tr, err := ggml.NewTrainer(ctx, loss, ggml.TrainerOptions{AdamW: ggml.AdamWParams{Alpha: 0.1}, Threads: 1})
	if err != nil {
		panic(err)
	}
	defer tr.Close()
	load := func(b int) error {
		xs := make([]float32, 0, 2*batch)
		ys := make([]float32, 0, 2*batch)
		for i := range batch {
			u, v := float32((b*batch+i)%5), float32((b*batch+i*3)%7)
			xs = append(xs, u, v)
			if u > v {
				ys = append(ys, 1, 0)
			} else {
				ys = append(ys, 0, 1)
			}
		}
		if err := x.SetFloat32s(xs); err != nil {
			return err
		}
		return labels.SetFloat32s(ys)
	}
	var first, last float64
	err = tr.Fit(30, 4, load, func(s ggml.EpochStats) error {
		if s.Epoch == 1 {
			first = s.Loss
		}
		last = s.Loss
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("loss fell by more than half:", last < first/2)
	// Output:
	// loss fell by more than half: true
}
