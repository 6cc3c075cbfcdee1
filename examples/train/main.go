// Command train shows training with the ggml package: a small multilayer
// perceptron learns to tell which of two rings around the origin a point
// lies on. Parameters are marked with SetParam, the loss is a cross
// entropy, and a Trainer runs forward, backward and AdamW steps on graphs
// built once; between steps only the input tensors change.
//
//	go run ./examples/train -epochs 40
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/ggml-go/ggml"
)

func main() {
	epochs := flag.Int("epochs", 40, "passes over the training set")
	threads := flag.Int("t", 2, "threads")
	flag.Parse()
	if _, err := run(os.Stdout, *epochs, *threads); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

const (
	hidden   = 32
	batch    = 32
	nBatches = 16
)

// ring returns n points, half on a ring of radius 1 (class 0) and half on
// a ring of radius 2 (class 1), with some noise, and their one-hot labels.
func ring(r *rand.Rand, n int) (xs, ys []float32) {
	for i := range n {
		class := i % 2
		radius := 1 + float64(class) + 0.2*r.NormFloat64()
		angle := 2 * math.Pi * r.Float64()
		xs = append(xs, float32(radius*math.Cos(angle)), float32(radius*math.Sin(angle)))
		ys = append(ys, float32(1-class), float32(class))
	}
	return xs, ys
}

// run trains the model and returns its accuracy on points it has not seen.
func run(w io.Writer, epochs, threads int) (float64, error) {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 32 << 20})
	if err != nil {
		return 0, err
	}
	defer ctx.Close()

	// The model: 2 -> hidden -> 2, with biases.
	r := rand.New(rand.NewPCG(7, 8))
	param := func(shape ...int) *ggml.Tensor {
		t := ctx.SetParam(ctx.NewTensor(ggml.TypeF32, shape...))
		v := make([]float32, t.NElements())
		for i := range v {
			v[i] = float32(r.NormFloat64()) * 0.5
		}
		_ = t.SetFloat32s(v)
		return t
	}
	w1, b1 := param(2, hidden), param(hidden)
	w2, b2 := param(hidden, 2), param(2)
	x := ctx.NewTensor2D(ggml.TypeF32, 2, batch)      // a batch of points
	labels := ctx.NewTensor2D(ggml.TypeF32, 2, batch) // their one-hot classes
	h := ctx.Silu(ctx.Add(ctx.MulMat(w1, x), b1))     // b1 is broadcast over the batch
	logits := ctx.Add(ctx.MulMat(w2, h), b2)
	loss := ctx.CrossEntropyLoss(logits, labels)

	tr, err := ggml.NewTrainer(ctx, loss, ggml.TrainerOptions{
		AdamW:   ggml.AdamWParams{Alpha: 0.01},
		Threads: threads,
		Outputs: []*ggml.Tensor{logits},
	})
	if err != nil {
		return 0, err
	}
	defer tr.Close()

	trainX, trainY := ring(r, batch*nBatches)
	load := func(b int) error {
		if err := x.SetFloat32s(trainX[b*batch*2 : (b+1)*batch*2]); err != nil {
			return err
		}
		return labels.SetFloat32s(trainY[b*batch*2 : (b+1)*batch*2])
	}
	err = tr.Fit(epochs, nBatches, load, func(s ggml.EpochStats) error {
		if s.Epoch == 1 || s.Epoch%10 == 0 {
			fmt.Fprintf(w, "epoch %3d: mean loss %.4f\n", s.Epoch, s.Loss)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}

	// Accuracy on new points: Eval computes the loss and the logits only.
	testX, testY := ring(r, batch)
	if err := x.SetFloat32s(testX); err != nil {
		return 0, err
	}
	if err := labels.SetFloat32s(testY); err != nil {
		return 0, err
	}
	if _, err := tr.Eval(); err != nil {
		return 0, err
	}
	out, err := logits.Float32s()
	if err != nil {
		return 0, err
	}
	right := 0
	for i := range batch {
		if (out[2*i+1] > out[2*i]) == (testY[2*i+1] == 1) {
			right++
		}
	}
	acc := float64(right) / batch
	fmt.Fprintf(w, "accuracy on %d new points: %.0f%%\n", batch, 100*acc)
	return acc, nil
}
