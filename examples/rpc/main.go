// Command rpc shows a graph computed over two machines with ggml's RPC
// backend: the first layer's weights live on a server, the second layer's
// on this machine, and a scheduler splits the graph between them, sending
// only the activations across. The result is compared with the same graph
// computed locally.
//
// Against a server started elsewhere (ggml rpc-server --port 50052):
//
//	go run ./examples/rpc -addr 127.0.0.1:50052
//
// Without -addr it starts a server of its own in this process, on a
// loopback port, so the example runs alone.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"github.com/ggml-go/ggml"
)

func main() {
	addr := flag.String("addr", "", "HOST:PORT of a ggml rpc-server (empty: start one in this process)")
	flag.Parse()
	if err := run(os.Stdout, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "rpc:", err)
		os.Exit(1)
	}
}

const dim, batch = 64, 4

func run(w io.Writer, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if addr == "" {
		stop, err := serveLocally(ctx, &addr)
		if err != nil {
			return err
		}
		defer stop()
	}

	// The server's memory, and a backend that computes there.
	free, total, err := ggml.RPCDeviceMemory(ctx, addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "server %s: %d of %d MiB free\n", addr, free>>20, total>>20)
	remote, err := ggml.DialRPC(ctx, addr)
	if err != nil {
		return err
	}
	defer remote.Close()
	cpu, err := ggml.NewCPUBackend()
	if err != nil {
		return err
	}
	defer cpu.Close()

	// Two layers of weights: the first on the server, the second here. A
	// weights buffer tells the scheduler to compute their nodes where they
	// are.
	w1, w2, bufs, err := weights(remote, cpu)
	if err != nil {
		return err
	}
	defer func() {
		for _, b := range bufs {
			b.Close()
		}
	}()

	// The graph, split by the scheduler: layer 1 on the server, layer 2
	// here; x goes to the server, layer 1's output comes back.
	gctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	if err != nil {
		return err
	}
	defer gctx.Close()
	x := gctx.NewTensor2D(ggml.TypeF32, dim, batch).SetInput()
	y := gctx.MulMat(w2, gctx.Relu(gctx.MulMat(w1, x))).SetOutput()
	g := gctx.NewGraph().BuildForward(y)
	sc, err := ggml.NewScheduler([]*ggml.Backend{remote, cpu}, 256, false)
	if err != nil {
		return err
	}
	defer sc.Close()
	if err := sc.Alloc(g); err != nil {
		return err
	}
	in := make([]float32, dim*batch)
	for i := range in {
		in[i] = float32(math.Sin(float64(i)))
	}
	if err := x.SetFloat32s(in); err != nil {
		return err
	}
	if err := sc.Compute(ctx, g); err != nil {
		return err
	}
	split, err := y.Float32s()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "graph split in %d parts; tensors copied between the machines: %d\n", sc.NSplits(), sc.NCopies())

	// The same computation on this machine alone.
	local, err := computeLocally(w1, w2, in)
	if err != nil {
		return err
	}
	maxDiff := 0.0
	for i := range split {
		maxDiff = math.Max(maxDiff, math.Abs(float64(split[i]-local[i])))
	}
	fmt.Fprintf(w, "y[0..3] = %.4f, largest difference from the local result: %g\n", split[:4], maxDiff)
	return nil
}

// serveLocally starts a ggml RPC server in this process on a loopback
// port, sets *addr to it and returns the function that stops it.
func serveLocally(ctx context.Context, addr *string) (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	be, err := ggml.NewCPUBackend()
	if err != nil {
		ln.Close()
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ggml.ServeRPC(sctx, ln, be, 256<<20) }()
	*addr = ln.Addr().String()
	return func() { cancel(); <-done; be.Close() }, nil
}

// weights makes w1 in a buffer of first and w2 in a buffer of second, both
// filled with the same pseudo-random values every run.
func weights(first, second *ggml.Backend) (w1, w2 *ggml.Tensor, bufs []*ggml.Buffer, err error) {
	r := rand.New(rand.NewPCG(3, 4))
	for i, be := range []*ggml.Backend{first, second} {
		c, err := ggml.NewContext(ggml.ContextOptions{MemSize: 4 * ggml.TensorOverhead(), NoAlloc: true})
		if err != nil {
			return nil, nil, bufs, err
		}
		t := c.NewTensor2D(ggml.TypeF32, dim, dim)
		b, err := c.AllocTensors(be)
		if err != nil {
			return nil, nil, bufs, err
		}
		b.SetUsage(ggml.BufferUsageWeights)
		bufs = append(bufs, b)
		v := make([]float32, dim*dim)
		for j := range v {
			v[j] = float32(r.NormFloat64()) / dim
		}
		if err := t.SetFloat32s(v); err != nil { // sent to the server for w1
			return nil, nil, bufs, err
		}
		if i == 0 {
			w1 = t
		} else {
			w2 = t
		}
	}
	return w1, w2, bufs, nil
}

// computeLocally computes the same two layers with copies of the weights in
// this process's memory.
func computeLocally(w1, w2 *ggml.Tensor, in []float32) ([]float32, error) {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 4 << 20})
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	copyOf := func(t *ggml.Tensor) (*ggml.Tensor, error) {
		v, err := t.Float32s() // read back from wherever t lives
		if err != nil {
			return nil, err
		}
		c := ctx.NewTensor2D(ggml.TypeF32, dim, dim)
		return c, c.SetFloat32s(v)
	}
	l1, err := copyOf(w1)
	if err != nil {
		return nil, err
	}
	l2, err := copyOf(w2)
	if err != nil {
		return nil, err
	}
	x := ctx.NewTensor2D(ggml.TypeF32, dim, batch)
	if err := x.SetFloat32s(in); err != nil {
		return nil, err
	}
	y := ctx.MulMat(l2, ctx.Relu(ctx.MulMat(l1, x)))
	if err := ctx.NewGraph().BuildForward(y).Compute(2); err != nil {
		return nil, err
	}
	return y.Float32s()
}
