package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/ggml-go/ggml"
)

func infoCmd(args []string) error {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	if help, err := parseFlags(fs, args, "info", "Prints the module version, the CPU, the SIMD levels and the thread limit."); help || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Printf("module:   %s %s (%s)\n", bi.Main.Path, bi.Main.Version, bi.GoVersion)
	}
	fmt.Printf("cpu:      %s\n", ggml.CPUSummary())
	fmt.Printf("levels:   %v (in use: %s)\n", ggml.SupportedCPULevels(), ggml.CurrentCPULevel())
	fmt.Printf("threads:  up to %d per pool; %d CPUs here\n", ggml.MaxThreads, runtime.NumCPU())
	n := 0
	for t := ggml.Type(0); t < ggml.TypeCount; t++ {
		if tr, err := ggml.TypeTraits(t); err == nil && tr.HasToFloat {
			n++
		}
	}
	fmt.Printf("types:    %d tensor types can be dequantized\n", n)
	return nil
}

func demoCmd(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	if help, err := parseFlags(fs, args, "demo", "Builds and computes graphs on 1 to 4 threads, quantizes, and prints results and speeds."); help || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	fmt.Println("ggml for Go — demo")
	fmt.Println("cpu:", ggml.CPUSummary())
	fmt.Println()

	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 64 << 20})
	if err != nil {
		return err
	}
	defer ctx.Close()

	// 1. A tiny layer: y = softmax(relu(W·x + b)), printed.
	w := ctx.NewTensor2D(ggml.TypeF32, 3, 4).SetName("W") // 4 rows of 3
	x := ctx.NewTensor2D(ggml.TypeF32, 3, 2).SetName("x") // 2 columns of 3
	b := ctx.NewTensor1D(ggml.TypeF32, 4).SetName("b")
	must(w.SetFloat32s([]float32{1, 0, -1, 0.5, 0.5, 0.5, -1, 2, 0, 0, 0, 1}))
	must(x.SetFloat32s([]float32{1, 2, 3, -1, 0, 1}))
	must(b.SetFloat32s([]float32{0.1, 0.2, 0.3, 0.4}))
	y := ctx.SoftMax(ctx.Relu(ctx.Add(ctx.MulMat(w, x), b))).SetName("y")
	g := ctx.NewGraph().BuildForward(y)
	if err := g.Compute(2); err != nil {
		return err
	}
	fmt.Printf("graph: %d nodes, %d leafs\n", g.NNodes(), len(g.Leafs()))
	for _, n := range g.Nodes() {
		fmt.Printf("  %-12s %-9s %v\n", n.Name(), n.OpDesc(), n.Shape())
	}
	out, err := y.Float32s()
	if err != nil {
		return err
	}
	fmt.Printf("y = softmax(relu(W·x + b)) = %v (shape %v)\n\n", round(out), y.Shape())

	// 2. The same matrix product on 1, 2 and 4 threads: identical bits, and speed.
	const n = 512
	a := ctx.NewTensor2D(ggml.TypeF32, n, n)
	c := ctx.NewTensor2D(ggml.TypeF32, n, n)
	r := rand.New(rand.NewPCG(1, 2))
	must(a.SetFloat32s(randVec(r, n*n)))
	must(c.SetFloat32s(randVec(r, n*n)))
	p := ctx.MulMat(a, c)
	gm := ctx.NewGraph().BuildForward(p)
	var first []float32
	for _, threads := range []int{1, 2, 4} {
		tp, err := ggml.NewThreadpool(ggml.DefaultThreadpoolParams(threads))
		if err != nil {
			return err
		}
		start := time.Now()
		const reps = 5
		for range reps {
			if err := gm.Run(context.Background(), ggml.ComputeOptions{Threadpool: tp}); err != nil {
				return err
			}
		}
		el := time.Since(start) / reps
		tp.Close()
		res, _ := p.Float32s()
		same := "reference"
		if first == nil {
			first = res
		} else if equalBits(first, res) {
			same = "identical to 1 thread"
		} else {
			same = "DIFFERENT from 1 thread"
		}
		fmt.Printf("mul_mat %dx%d · %dx%d on %d thread(s): %7.2f ms, %6.1f GFLOP/s, %s\n",
			n, n, n, n, threads, float64(el.Microseconds())/1000, 2*n*n*n/el.Seconds()/1e9, same)
	}
	fmt.Println()

	// 3. Quantization round trips.
	row := randVec(r, 4096)
	for _, t := range []ggml.Type{ggml.TypeQ8_0, ggml.TypeQ4_0, ggml.TypeQ4_K, ggml.TypeQ6_K} {
		q, err := ggml.Quantize(t, row, len(row), nil)
		if err != nil {
			fmt.Printf("quantize %-5s: %v\n", t, err)
			continue
		}
		back, err := ggml.Dequantize(t, q, len(row))
		if err != nil {
			fmt.Printf("dequantize %-5s: %v\n", t, err)
			continue
		}
		fmt.Printf("quantize %-5s: %5d bytes for %d floats (%.2f bits/weight), rmse %.5f\n",
			t, len(q), len(row), float64(8*len(q))/float64(len(row)), rmse(row, back))
	}
	return nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func round(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(math.Round(float64(x)*1e4) / 1e4)
	}
	return out
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func rmse(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i] - b[i])
		s += d * d
	}
	return math.Sqrt(s / float64(len(a)))
}
