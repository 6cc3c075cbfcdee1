package ggml_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// A context owns the memory of its tensors. Tensors have a type and up to
// four dimensions, the row length first; views share their source's data.
func Example() {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()

	a := ctx.NewTensor2D(ggml.TypeF32, 3, 2).SetName("a") // 2 rows of 3
	if err := a.SetFloat32s([]float32{1, 2, 3, 4, 5, 6}); err != nil {
		panic(err)
	}
	fmt.Println(a)
	fmt.Println("elements:", a.NElements(), "bytes:", a.NBytes(), "strides:", a.Nb())
	fmt.Println("a[row 1, column 2] =", a.F32(2, 1))

	at := ctx.Transpose(a) // a view: no data is copied
	fmt.Println("transposed:", at.Shape(), "contiguous:", at.IsContiguous())
	v, _ := at.Float32s() // read in the view's element order
	fmt.Println(v)

	h := ctx.NewTensor1D(ggml.TypeF16, 4).Fill(0.1) // f16 rounds 0.1
	hv, _ := h.Float32s()
	fmt.Printf("%.6f\n", hv[0])
	// Output:
	// a f32 [3 2] (NONE)
	// elements: 6 bytes: 24 strides: [4 12 24 24]
	// a[row 1, column 2] = 6
	// transposed: [2 3] contiguous: false
	// [1 4 2 5 3 6]
	// 0.099976
}

// Operations only describe the computation; a graph collects them and
// Compute runs it on threads, here 4 threads made for the call and then a
// pool reused by several computations.
func ExampleGraph_Compute() {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()

	w := ctx.NewTensor2D(ggml.TypeF32, 3, 2) // 2 rows of 3
	x := ctx.NewTensor2D(ggml.TypeF32, 3, 2) // 2 columns of 3
	_ = w.SetFloat32s([]float32{1, 0, -1, 0.5, 0.5, 0.5})
	_ = x.SetFloat32s([]float32{1, 2, 3, -1, 0, 1})
	y := ctx.SoftMax(ctx.MulMat(w, x)) // [2, 2]: a softmax over each column
	g := ctx.NewGraph().BuildForward(y)
	fmt.Println("nodes:", g.NNodes())

	if err := g.Compute(4); err != nil {
		panic(err)
	}
	printRounded(y, 3)

	tp, err := ggml.NewThreadpool(ggml.DefaultThreadpoolParams(2))
	if err != nil {
		panic(err)
	}
	defer tp.Close()
	_ = x.SetFloat32s([]float32{0, 0, 0, 1, 1, 1})
	if err := g.Run(context.Background(), ggml.ComputeOptions{Threadpool: tp}); err != nil {
		panic(err)
	}
	printRounded(y, 3)
	// Output:
	// nodes: 2
	// [0.007 0.993 0.119 0.881]
	// [0.500 0.500 0.182 0.818]
}

// printRounded prints the elements of t with prec decimals.
func printRounded(t *ggml.Tensor, prec int) {
	v, err := t.Float32s()
	if err != nil {
		panic(err)
	}
	fmt.Print("[")
	for i, e := range v {
		if i > 0 {
			fmt.Print(" ")
		}
		fmt.Printf("%.*f", prec, e)
	}
	fmt.Println("]")
}

// Training: mark parameters, mark the loss, build the backward graph, and
// let AdamW update the parameters. Here w learns to match a target.
func ExampleAdamW() {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 4 << 20})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()

	w := ctx.SetParam(ctx.NewTensor1D(ggml.TypeF32, 3))
	_ = w.SetFloat32s([]float32{0, 0, 0})
	target := ctx.NewTensor1D(ggml.TypeF32, 3)
	_ = target.SetFloat32s([]float32{1, -2, 0.5})
	loss := ctx.Sum(ctx.Sqr(ctx.Sub(w, target))).SetLoss()

	g := ctx.NewGraphCustom(64, true).BuildForward(loss)
	if err := g.BuildBackward(ctx, ctx, false); err != nil {
		panic(err)
	}
	step := g.Dup(ctx) // forward + backward + the AdamW updates
	opt := ggml.NewAdamW(ggml.AdamWParams{Alpha: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	if err := opt.Build(step, ctx); err != nil {
		panic(err)
	}
	step.Reset() // moments to 0, the loss gradient to 1

	for i := 1; i <= 200; i++ {
		if err := opt.Step(); err != nil {
			panic(err)
		}
		g.Reset() // gradients to 0 before they are computed again
		if err := step.Compute(1); err != nil {
			panic(err)
		}
		if i == 1 || i == 10 || i == 25 || i == 200 {
			fmt.Printf("step %3d: loss %.2f\n", i, loss.F32(0)) // before the step's update
		}
	}
	printRounded(w, 2)
	// Output:
	// step   1: loss 5.25
	// step  10: loss 1.31
	// step  25: loss 0.05
	// step 200: loss 0.00
	// [1.00 -2.00 0.50]
}

// Quantize packs rows of floats into a block format exactly as the reference
// does; Dequantize unpacks them.
func ExampleQuantize() {
	src := make([]float32, 64) // 2 rows of 32: one q8_0 block each
	for i := range src {
		src[i] = float32(math.Sin(float64(i) / 5))
	}
	q, err := ggml.Quantize(ggml.TypeQ8_0, src, 32, nil)
	if err != nil {
		panic(err)
	}
	rowSize, _ := ggml.RowSize(ggml.TypeQ8_0, 32)
	fmt.Println("bytes:", len(q), "per row:", rowSize)

	back, err := ggml.Dequantize(ggml.TypeQ8_0, q, len(src))
	if err != nil {
		panic(err)
	}
	maxErr := 0.0
	for i := range src {
		maxErr = math.Max(maxErr, math.Abs(float64(back[i]-src[i])))
	}
	fmt.Printf("largest error: %.3f\n", maxErr)

	tr, _ := ggml.TypeTraits(ggml.TypeQ4_K)
	fmt.Println(tr.Name, "block:", tr.BlockSize, "elements in", tr.TypeSize, "bytes")
	// Output:
	// bytes: 68 per row: 34
	// largest error: 0.004
	// q4_K block: 256 elements in 144 bytes
}

// A custom operation runs Go code on the computation's worker threads: each
// of the nTasks calls computes its share of the rows.
func ExampleContext_MapCustom1() {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()

	x := ctx.NewTensor2D(ggml.TypeF32, 4, 3)
	_ = x.SetFloat32s([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	var calls atomic.Int32
	cube := func(dst, a *ggml.Tensor, ith, nth int) {
		calls.Add(1)
		for r := ith; r < a.Ne()[1]; r += nth {
			for c := range a.Ne()[0] {
				v := a.F32(c, r)
				dst.SetF32(v*v*v, c, r)
			}
		}
	}
	y := ctx.MapCustom1(x, cube, 2)
	if err := ctx.NewGraph().BuildForward(ctx.Sum(y)).Compute(4); err != nil {
		panic(err)
	}
	v, _ := y.Float32s()
	fmt.Println(v[:4], "...", v[11])
	fmt.Println("calls:", calls.Load())
	// Output:
	// [1 8 27 64] ... 1728
	// calls: 2
}

// LoadGGUF makes tensors of a GGUF file: copied into the context, or, as
// here, pointing into the file's read-only mapping.
func ExampleContext_LoadGGUF() {
	dir, err := os.MkdirTemp("", "ggml-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.gguf")

	// Write a file with one f32 tensor.
	src, _ := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 16})
	defer src.Close()
	w := src.NewTensor2D(ggml.TypeF32, 2, 2).SetName("w")
	_ = w.SetFloat32s([]float32{1, 2, 3, 4})
	out, err := gguf.Create(path)
	if err != nil {
		panic(err)
	}
	_ = out.SetString("general.architecture", "example")
	if err := ggml.AddTensorToGGUF(out, w); err != nil {
		panic(err)
	}
	if err := out.Close(); err != nil {
		panic(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	ctx, _ := ggml.NewContext(ggml.ContextOptions{MemSize: ggml.GGUFContextSize(f, false) + 1<<20})
	defer ctx.Close()
	tensors, err := ctx.LoadGGUF(f, false)
	if err != nil {
		panic(err)
	}
	y := ctx.Scale(tensors["w"], 10)
	if err := ctx.NewGraph().BuildForward(y).Compute(1); err != nil {
		panic(err)
	}
	fmt.Println(tensors["w"])
	printRounded(y, 3)
	// Output:
	// w f32 [2 2] (NONE)
	// [10.000 20.000 30.000 40.000]
}

// An arena sized from its parts: each tensor's header (TensorOverhead) and
// data (rounded up to 16 bytes), and the graph (GraphOverhead: about 66 KB
// for NewGraph's DefaultGraphSize nodes). New tensors are not zeroed.
func ExampleGraphOverhead() {
	size := 3*ggml.TensorOverhead() + (8+12+6)*4 + 3*16 +
		ggml.GraphOverhead(ggml.DefaultGraphSize, false)
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: size})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()
	a := ctx.NewTensor2D(ggml.TypeF32, 4, 2) // data not zeroed: set it
	b := ctx.NewTensor2D(ggml.TypeF32, 4, 3)
	_ = a.SetFloat32s([]float32{1, 2, 3, 4, 5, 6, 7, 8})
	b.Fill(1)
	c := ctx.MulMat(a, b) // [2, 3]
	g := ctx.NewGraph()
	g.BuildForward(c)
	if err := g.Compute(4); err != nil {
		panic(err)
	}
	v, _ := c.Float32s()
	fmt.Println(v)
	fmt.Println("graph KB:", ggml.GraphOverhead(ggml.DefaultGraphSize, false)/1000, "fits:", ctx.UsedMem() <= ctx.MemSize())
	// Output:
	// [10 26 10 26 10 26]
	// graph KB: 66 fits: true
}
