package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/cli"
)

// spirals generates n points per class on `classes` interleaved noisy
// spiral arms in the plane; labels are the arm indices.
func spirals(rng *rand.Rand, classes, n int) (xs [][2]float32, ys []int) {
	for c := range classes {
		for i := range n {
			r := float64(i) / float64(n)
			th := 7*r + 2*math.Pi*float64(c)/float64(classes) + 0.15*rng.NormFloat64()
			xs = append(xs, [2]float32{float32(r * math.Sin(th)), float32(r * math.Cos(th))})
			ys = append(ys, c)
		}
	}
	return xs, ys
}

// trainCmd trains a 2-64-64-3 ReLU network on three spirals with AdamW.
func trainCmd(args []string) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	epochs := fs.Int("epochs", 60, "training epochs")
	batch := fs.Int("batch", 100, "batch size")
	perClass := fs.Int("n", 1000, "points per class")
	hidden := fs.Int("hidden", 64, "hidden units per layer")
	lr := fs.Float64("lr", 0.01, "AdamW learning rate")
	threads := fs.Int("t", 1, "threads (0 or negative: all CPUs; the network is small: more threads mostly synchronise)")
	seed := fs.Uint64("seed", 1, "random seed")
	if help, err := parseFlags(fs, args, "train [flags]", "Trains a 2-64-64-3 ReLU network on three spirals with AdamW."); help || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := positive("train", intFlag{"epochs", *epochs}, intFlag{"batch", *batch}, intFlag{"n", *perClass}, intFlag{"hidden", *hidden}); err != nil {
		return err
	}
	if !(*lr > 0) || math.IsInf(*lr, 0) {
		return cli.Usagef("train: -lr %g: must be > 0", *lr)
	}
	*threads = cli.Threads(*threads, func(msg string) { fmt.Fprintln(os.Stderr, "warning:", msg) })
	const classes = 3
	rng := rand.New(rand.NewPCG(*seed, 7))
	xs, ys := spirals(rng, classes, *perClass)
	nb := len(xs) / *batch
	if nb == 0 {
		return cli.Usagef("train: -batch %d: larger than the data set (%d points: 3 classes of -n)", *batch, len(xs))
	}

	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 64 << 20})
	if err != nil {
		return err
	}
	defer ctx.Close()

	// parameters, He-initialised
	layer := func(name string, in, out int) (w, b *ggml.Tensor) {
		w = ctx.SetParam(ctx.NewTensor2D(ggml.TypeF32, in, out).SetName(name + ".w"))
		b = ctx.SetParam(ctx.NewTensor1D(ggml.TypeF32, out).SetName(name + ".b"))
		v := make([]float32, in*out)
		s := math.Sqrt(2 / float64(in))
		for i := range v {
			v[i] = float32(rng.NormFloat64() * s)
		}
		_ = w.SetFloat32s(v)
		b.Zero()
		return w, b
	}
	w1, b1 := layer("l1", 2, *hidden)
	w2, b2 := layer("l2", *hidden, *hidden)
	w3, b3 := layer("l3", *hidden, classes)

	x := ctx.NewTensor2D(ggml.TypeF32, 2, *batch).SetName("x")
	y := ctx.NewTensor2D(ggml.TypeF32, classes, *batch).SetName("y")
	h := ctx.Relu(ctx.Add(ctx.MulMat(w1, x), b1))
	h = ctx.Relu(ctx.Add(ctx.MulMat(w2, h), b2))
	logits := ctx.Add(ctx.MulMat(w3, h), b3).SetName("logits")
	loss := ctx.CrossEntropyLoss(logits, y).SetName("loss")

	p := ggml.DefaultAdamWParams()
	p.Alpha = float32(*lr)
	tr, err := ggml.NewTrainer(ctx, loss, ggml.TrainerOptions{AdamW: p, Threads: *threads, Outputs: []*ggml.Tensor{logits}})
	if err != nil {
		return err
	}
	defer tr.Close()
	fmt.Printf("3 spirals, %d points, MLP 2-%d-%d-3 (ReLU), AdamW lr %g, batch %d, %d threads, %d graph nodes per step\n",
		len(xs), *hidden, *hidden, *lr, *batch, *threads, tr.OptGraph.NNodes())

	order := rng.Perm(len(xs))
	xb := make([]float32, 2**batch)
	yb := make([]float32, classes**batch)
	load := func(ids []int) error {
		clear(yb)
		for j, i := range ids {
			xb[2*j], xb[2*j+1] = xs[i][0], xs[i][1]
			yb[classes*j+ys[i]] = 1
		}
		if err := x.SetFloat32s(xb); err != nil {
			return err
		}
		return y.SetFloat32s(yb)
	}
	accuracy := func() (float64, error) {
		ids := make([]int, *batch)
		right, total := 0, 0
		for b := range nb {
			for j := range ids {
				ids[j] = b**batch + j
			}
			if err := load(ids); err != nil {
				return 0, err
			}
			if _, err := tr.Eval(); err != nil {
				return 0, err
			}
			out, err := logits.Float32s()
			if err != nil {
				return 0, err
			}
			for j, i := range ids {
				best := 0
				for c := 1; c < classes; c++ {
					if out[classes*j+c] > out[classes*j+best] {
						best = c
					}
				}
				if best == ys[i] {
					right++
				}
				total++
			}
		}
		return float64(right) / float64(total), nil
	}

	start := time.Now()
	var trainTime time.Duration
	err = tr.Fit(*epochs, nb, func(b int) error {
		if b == 0 {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		return load(order[b**batch : (b+1)**batch])
	}, func(s ggml.EpochStats) error {
		trainTime += s.Elapsed
		if s.Epoch == 1 || s.Epoch%10 == 0 || s.Epoch == *epochs {
			acc, err := accuracy()
			if err != nil {
				return err
			}
			fmt.Printf("epoch %3d  loss %.4f  accuracy %5.1f%%  %7.0f samples/s\n",
				s.Epoch, s.Loss, 100*acc, float64(s.Batches**batch)/s.Elapsed.Seconds())
		}
		return nil
	})
	if err != nil {
		return err
	}
	acc, err := accuracy()
	if err != nil {
		return err
	}
	samples := *epochs * nb * *batch
	fmt.Printf("trained on %d samples in %.2fs: %.0f samples/s; final accuracy %.1f%% (total %.2fs)\n",
		samples, trainTime.Seconds(), float64(samples)/trainTime.Seconds(), 100*acc, time.Since(start).Seconds())
	return nil
}
