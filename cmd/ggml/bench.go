package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/llama"
)

const benchAbout = `Without -m: prints the median, min and max time of the figures the
project tracks (conversions, quantization, mat-vec, GEMM, a llama-shaped
model, graph overhead), on -t threads (default 1).

With -m MODEL, as llama.cpp's llama-bench: a prompt-processing test (ppN:
N random tokens evaluated from an empty cache, in batches of -b) for each
-p value and a generation test (tgN: N tokens one at a time) for each -n
value, on each -t thread count (default: all CPUs), with flash attention
off and on as -fa lists (0, 1), after each -d depth of tokens already in
the cache (their evaluation untimed: "tg128 @ d4096"); each is run once
untimed, then -r times, and its row gives the mean tokens per second and
the standard deviation over the runs, as a markdown table (-o md), CSV or
JSON. The lists take commas (-p 128,512) or repeated flags.`

// benchCmd prints the speed figures the project tracks (conversions,
// quantization, mat-vec, GEMM, a llama-shaped model, graph overhead): for
// each, the median time of several runs, its spread, and a rate; or with
// -m a model's prompt and generation speeds as llama-bench does.
func benchCmd(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	threads := cli.NewIntList()
	fs.Var(threads, "threads", "thread counts `N,...` (0 or negative: all CPUs; more than the CPUs: capped); default 1, with -m all CPUs")
	runs := fs.Int("runs", 15, "timed runs per figure (after one warm-up run; without -m)")
	only := fs.String("only", "", "run only the figures whose name matches this regexp (without -m)")
	model := fs.String("model", "", "a GGUF model to time as llama-bench does")
	prompts := cli.NewIntList(modelBenchDefaults.prompt)
	fs.Var(prompts, "n-prompt", "with -m: prompt test lengths `N,...` (0: none)")
	gens := cli.NewIntList(modelBenchDefaults.gen)
	fs.Var(gens, "n-gen", "with -m: generation test lengths `N,...` (0: none)")
	fas := cli.NewIntList(0)
	fs.Var(fas, "flash-attn", "with -m: flash attention off or on `0|1,...`")
	depths := cli.NewIntList(0)
	fs.Var(depths, "n-depth", "with -m: tokens `N,...` in the cache before each test (evaluated untimed)")
	reps := fs.Int("repetitions", modelBenchDefaults.reps, "with -m: timed runs per test")
	batch := fs.Int("batch-size", 512, "with -m: prompt tokens per graph")
	output := fs.String("output", "md", "with -m: output format, md, csv or json")
	for name, short := range map[string]string{"threads": "t", "model": "m", "n-prompt": "p", "n-gen": "n",
		"repetitions": "r", "batch-size": "b", "output": "o", "flash-attn": "fa", "n-depth": "d"} {
		cli.Alias(fs, name, short)
	}
	if help, err := parseFlags(fs, args, "bench [-t N] [-runs N] [-only RE]\n       ggml bench -m MODEL [-p N,...] [-n N,...] [-t N,...] [-fa 0|1,...] [-d N,...] [-r N] [-o md|csv|json]", benchAbout); help || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *model != "" {
		return modelBenchCmd(modelBench{path: *model, prompts: prompts.Values, gens: gens.Values, threads: threads.Values,
			fas: fas.Values, depths: depths.Values, reps: *reps, batch: *batch, format: *output}, given)
	}
	for _, f := range []string{"p", "n-prompt", "n", "n-gen", "r", "repetitions", "b", "batch-size", "o", "output",
		"fa", "flash-attn", "d", "n-depth"} {
		if given[f] {
			return cli.Usagef("bench: %s is for timing a model: give one with -m MODEL", cli.FlagName(f, len(f) <= 2))
		}
	}
	if *runs < 1 {
		return cli.Usagef("bench: -runs %d: must be >= 1", *runs)
	}
	t := 1
	switch len(threads.Values) {
	case 0:
	case 1:
		t = threads.Values[0]
	default:
		return cli.Usagef("bench: -t %s: one thread count without -m", threads)
	}
	t = cli.Threads(t, func(msg string) { fmt.Fprintln(os.Stderr, "warning:", msg) })
	re, err := regexp.Compile(*only)
	if err != nil {
		return cli.Usagef("bench: -only %q: %v", *only, err)
	}
	fmt.Printf("ggml bench: %d thread(s), %d runs, SIMD level %v\n", t, *runs, ggml.CurrentCPULevel())
	fmt.Printf("%-44s %10s %10s %10s  %s\n", "figure", "median ms", "min ms", "max ms", "rate (at the median)")
	b := &bencher{threads: t, runs: *runs, only: re}
	defer b.close()
	if err := b.open(); err != nil {
		return err
	}
	for _, f := range benchFigures() {
		if !re.MatchString(f.name) {
			continue
		}
		if err := f.run(b, f.name); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// modelBenchCmd checks the flags of `ggml bench -m` and runs it.
func modelBenchCmd(b modelBench, given map[string]bool) error {
	if given["runs"] || given["only"] {
		return cli.Usagef("bench: -runs and -only are for the kernel figures; with -m the runs are -r")
	}
	if len(b.threads) == 0 {
		b.threads = []int{0}
	}
	for _, l := range []struct {
		name string
		vals []int
	}{{"-p", b.prompts}, {"-n", b.gens}, {"-d", b.depths}} {
		for _, v := range l.vals {
			if v < 0 || v > llama.MaxContext {
				return cli.Usagef("bench: %s %d: must be 0 to %d", l.name, v, llama.MaxContext)
			}
		}
	}
	for _, v := range b.fas {
		if v != 0 && v != 1 {
			return cli.Usagef("bench: -fa %d: must be 0 or 1", v)
		}
	}
	if len(benchTests(b.prompts, b.gens)) == 0 {
		return cli.Usagef("bench: -p and -n are all 0: no test to run")
	}
	if b.reps < 1 {
		return cli.Usagef("bench: -r %d: must be >= 1", b.reps)
	}
	if b.batch < 1 || b.batch > llama.MaxContext {
		return cli.Usagef("bench: -b %d: must be 1 to %d", b.batch, llama.MaxContext)
	}
	return runModelBench(b, os.Stdout, os.Stderr)
}

type bencher struct {
	threads, runs int
	only          *regexp.Regexp
	tp            *ggml.Threadpool
}

func (b *bencher) open() error {
	tp, err := ggml.NewThreadpool(ggml.DefaultThreadpoolParams(b.threads))
	b.tp = tp
	return err
}

func (b *bencher) close() {
	if b.tp != nil {
		b.tp.Close()
	}
}

// time runs f once to warm up, then b.runs times, and prints the figure.
func (b *bencher) time(name string, f func() error, amount float64, unit string) error {
	if err := f(); err != nil {
		return err
	}
	ts := make([]float64, b.runs)
	for i := range ts {
		t0 := time.Now()
		if err := f(); err != nil {
			return err
		}
		ts[i] = time.Since(t0).Seconds()
	}
	slices.Sort(ts)
	med := ts[len(ts)/2]
	fmt.Printf("%-44s %10.4f %10.4f %10.4f  %.2f %s\n", name, med*1e3, ts[0]*1e3, ts[len(ts)-1]*1e3, amount/med, unit)
	return nil
}

type benchFigure struct {
	name string
	run  func(b *bencher, name string) error
}

func benchFigures() []benchFigure {
	figs := []benchFigure{
		{"fp16->fp32 row (4M)", benchConvert(false)},
		{"bf16->fp32 row (4M)", benchConvert(true)},
		{"dequantize q4_0 (4M)", benchDequantize(ggml.TypeQ4_0)},
		{"dequantize q6_K (4M)", benchDequantize(ggml.TypeQ6_K)},
		{"quantize q4_0 (4M, f32 in)", benchQuantize(ggml.TypeQ4_0)},
	}
	mm := func(t ggml.Type, k, m, n int) benchFigure {
		return benchFigure{fmt.Sprintf("mul_mat %v K=%d M=%d N=%d", t, k, m, n), benchMulMat(t, k, m, n)}
	}
	for _, t := range []ggml.Type{ggml.TypeF32, ggml.TypeF16, ggml.TypeQ4_0, ggml.TypeQ8_0, ggml.TypeQ4_K} {
		figs = append(figs, mm(t, 4096, 4096, 1))
	}
	// the layouts the llama runner loads its projections in where the CPU has them
	for _, t := range []ggml.Type{ggml.TypeQ8_0, ggml.TypeQ4_0, ggml.TypeIQ4_NL, ggml.TypeQ4_K, ggml.TypeQ6_K} {
		if ggml.CPURepacks(t) {
			figs = append(figs, benchFigure{fmt.Sprintf("mul_mat %v K=4096 M=4096 N=1 repacked", t), benchMulMatRepacked(t, 4096, 4096)})
		}
	}
	for _, t := range []ggml.Type{ggml.TypeF32, ggml.TypeF16, ggml.TypeQ4_0, ggml.TypeQ4_K} {
		figs = append(figs, mm(t, 1024, 1024, 256))
	}
	for _, n := range []int{12, 16, 24, 32} {
		figs = append(figs, mm(ggml.TypeQ8_0, 4096, 4096, n))
	}
	figs = append(figs, mm(ggml.TypeF32, 288, 32000, 1),
		benchFigure{"llama 24M f32, decode 1 token (ctx 32)", benchLlama(ggml.TypeF32, 1, 32)},
		benchFigure{"llama 24M q8_0, prompt of 32 tokens", benchLlama(ggml.TypeQ8_0, 32, 0)},
		benchFigure{"graph of 2000 tiny adds", benchTinyAdds})
	return figs
}

func randFloats(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}

const convN = 1 << 22

func benchConvert(bf16 bool) func(b *bencher, name string) error {
	return func(b *bencher, name string) error {
		src := randFloats(rand.New(rand.NewPCG(1, 2)), convN, 3)
		h := make([]uint16, convN)
		dst := make([]float32, convN)
		if bf16 {
			ggml.FP32ToBF16Row(h, src)
			return b.time(name, func() error { ggml.BF16ToFP32Row(dst, h); return nil }, convN*4/1e9, "GB/s out")
		}
		ggml.FP32ToFP16Row(h, src)
		return b.time(name, func() error { ggml.FP16ToFP32Row(dst, h); return nil }, convN*4/1e9, "GB/s out")
	}
}

func benchDequantize(t ggml.Type) func(b *bencher, name string) error {
	return func(b *bencher, name string) error {
		src := randFloats(rand.New(rand.NewPCG(1, 3)), convN, 1)
		q, err := ggml.Quantize(t, src, 4096, nil)
		if err != nil {
			return err
		}
		dst := make([]float32, convN)
		return b.time(name, func() error { return ggml.DequantizeInto(dst, t, q) }, convN*4/1e9, "GB/s out")
	}
}

func benchQuantize(t ggml.Type) func(b *bencher, name string) error {
	return func(b *bencher, name string) error {
		src := randFloats(rand.New(rand.NewPCG(1, 4)), convN, 1)
		q, err := ggml.Quantize(t, src, 4096, nil)
		if err != nil {
			return err
		}
		return b.time(name, func() error { return ggml.QuantizeInto(q, t, src, 4096, nil) }, convN*4/1e6, "MB/s in")
	}
}

// setWeights fills t (f32, f16 or quantized) from random values.
func setWeights(t *ggml.Tensor, r *rand.Rand, scale float64) error {
	return t.SetFloat32s(randFloats(r, t.NElements(), scale))
}

func benchMulMat(t ggml.Type, k, m, n int) func(b *bencher, name string) error {
	return func(b *bencher, name string) error {
		ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: k*m*4 + k*n*4 + m*n*4 + 1<<20})
		if err != nil {
			return err
		}
		defer ctx.Close()
		r := rand.New(rand.NewPCG(uint64(k), uint64(m*n)))
		w := ctx.NewTensor2D(t, k, m)
		x := ctx.NewTensor2D(ggml.TypeF32, k, n)
		if err := setWeights(w, r, 1); err != nil {
			return err
		}
		if err := setWeights(x, r, 1); err != nil {
			return err
		}
		g := ctx.NewGraph().BuildForward(ctx.MulMat(w, x))
		return b.time(name, func() error { return g.Run(context.Background(), ggml.ComputeOptions{Threadpool: b.tp}) }, 2*float64(k*m*n)/1e9, "GFLOP/s")
	}
}

// benchMulMatRepacked times a mat-vec whose weights are in a
// CPURepackBufferType buffer, on a CPU backend with the bencher's pool.
func benchMulMatRepacked(t ggml.Type, k, m int) func(b *bencher, name string) error {
	return func(b *bencher, name string) error {
		be, err := ggml.NewCPUBackend()
		if err != nil {
			return err
		}
		defer be.Close()
		if b.tp != nil {
			if err := be.SetThreadpool(b.tp); err != nil {
				return err
			}
		}
		wctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 4 * ggml.TensorOverhead(), NoAlloc: true})
		if err != nil {
			return err
		}
		defer wctx.Close()
		w := wctx.NewTensor2D(t, k, m)
		wbuf, err := wctx.AllocTensors(ggml.CPURepackBufferType())
		if err != nil {
			return err
		}
		defer wbuf.Close()
		r := rand.New(rand.NewPCG(uint64(k), uint64(m)))
		if err := setWeights(w, r, 1); err != nil {
			return err
		}
		ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 8*ggml.TensorOverhead() + ggml.GraphOverhead(ggml.DefaultGraphSize, false), NoAlloc: true})
		if err != nil {
			return err
		}
		defer ctx.Close()
		x := ctx.NewTensor2D(ggml.TypeF32, k, 1).SetInput()
		g := ctx.NewGraph().BuildForward(ctx.MulMat(w, x))
		ga, err := ggml.NewGraphAllocator()
		if err != nil {
			return err
		}
		defer ga.Close()
		if err := ga.Alloc(g); err != nil {
			return err
		}
		if err := setWeights(x, r, 1); err != nil {
			return err
		}
		return b.time(name, func() error { return be.Compute(context.Background(), g) }, 2*float64(k*m)/1e9, "GFLOP/s")
	}
}

func benchTinyAdds(b *bencher, name string) error {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 16 << 20})
	if err != nil {
		return err
	}
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 64)
	if err := a.SetFloat32s(make([]float32, 64)); err != nil {
		return err
	}
	c := a
	for range 2000 {
		c = ctx.Add(c, a)
	}
	g := ctx.NewGraphCustom(4096, false).BuildForward(c)
	return b.time(name, func() error { return g.Run(context.Background(), ggml.ComputeOptions{Threadpool: b.tp}) }, 2000/1e6, "M nodes/s")
}

// llamaShape is the stories15M shape: about 24M parameters.
var llamaShape = struct{ embd, layers, heads, ff, vocab int }{288, 6, 6, 768, 32000}

// benchLlama times one forward pass of a llama-shaped model with random
// weights (matrices of type wt, norms and embeddings f32) over n tokens that
// follow past cached positions: RMS norms, rotary embeddings, causal
// attention through a KV cache, a SiLU-gated FFN and the output logits.
func benchLlama(wt ggml.Type, n, past int) func(b *bencher, name string) error {
	return func(b *bencher, name string) error {
		s := llamaShape
		hd, nctx := s.embd/s.heads, past+n
		ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 400 << 20})
		if err != nil {
			return err
		}
		defer ctx.Close()
		r := rand.New(rand.NewPCG(5, uint64(n)))
		var ferr error
		mat := func(wtype ggml.Type, ne0, ne1 int, scale float64) *ggml.Tensor {
			t := ctx.NewTensor2D(wtype, ne0, ne1)
			if err := setWeights(t, r, scale); err != nil && ferr == nil {
				ferr = err
			}
			return t
		}
		norm := func() *ggml.Tensor { return mat(ggml.TypeF32, s.embd, 1, 0.1) }
		ids := ctx.NewTensor1D(ggml.TypeI32, n)
		pos := ctx.NewTensor1D(ggml.TypeI32, n)
		iv, pv := make([]int32, n), make([]int32, n)
		for i := range n {
			iv[i], pv[i] = int32(r.IntN(s.vocab)), int32(past+i)
		}
		if err := ids.SetInt32s(iv); err != nil {
			return err
		}
		if err := pos.SetInt32s(pv); err != nil {
			return err
		}
		x := ctx.GetRows(mat(ggml.TypeF32, s.embd, s.vocab, 1), ids)
		g := ctx.NewGraphCustom(4096, false)
		rope := ggml.DefaultRopeParams(hd, 0)
		scale := 1 / math.Sqrt(float64(hd))
		for range s.layers {
			wq, wk := mat(wt, s.embd, s.embd, scale), mat(wt, s.embd, s.embd, scale)
			wv, wo := mat(wt, s.embd, s.embd, scale), mat(wt, s.embd, s.embd, scale)
			w1, w3 := mat(wt, s.embd, s.ff, scale), mat(wt, s.embd, s.ff, scale)
			w2 := mat(wt, s.ff, s.embd, 1/math.Sqrt(float64(s.ff)))
			kc := mat(ggml.TypeF32, hd*s.heads, nctx, 1)
			vc := mat(ggml.TypeF32, hd*s.heads, nctx, 1)

			h := ctx.Mul(ctx.RMSNorm(x, 1e-5), norm())
			q := ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(wq, h), hd, s.heads, n), pos, nil, rope)
			k := ctx.RopeExt(ctx.Reshape3D(ctx.MulMat(wk, h), hd, s.heads, n), pos, nil, rope)
			v := ctx.MulMat(wv, h)
			row := hd * s.heads * 4
			// the new positions go into the caches before attention reads them
			g.BuildForward(ctx.Cpy(k, ctx.View3D(kc, hd, s.heads, n, hd*4, row, past*row)))
			g.BuildForward(ctx.Cpy(ctx.Reshape3D(v, hd, s.heads, n), ctx.View3D(vc, hd, s.heads, n, hd*4, row, past*row)))
			keys := ctx.Permute(ctx.View3D(kc, hd, s.heads, nctx, hd*4, row, 0), 0, 2, 1, 3)           // [hd, nctx, heads]
			vals := ctx.Cont(ctx.Permute(ctx.View3D(vc, hd, s.heads, nctx, hd*4, row, 0), 1, 2, 0, 3)) // [nctx, hd, heads]
			kq := ctx.MulMat(keys, ctx.Permute(q, 0, 2, 1, 3))                                         // [nctx, n, heads]
			kq = ctx.SoftMaxExt(ctx.DiagMaskInf(kq, past), nil, float32(scale), 0)
			o := ctx.Cont(ctx.Permute(ctx.MulMat(vals, kq), 0, 2, 1, 3)) // [hd, heads, n]
			x = ctx.Add(x, ctx.MulMat(wo, ctx.Reshape2D(o, s.embd, n)))
			h = ctx.Mul(ctx.RMSNorm(x, 1e-5), norm())
			x = ctx.Add(x, ctx.MulMat(w2, ctx.Mul(ctx.Silu(ctx.MulMat(w1, h)), ctx.MulMat(w3, h))))
		}
		logits := ctx.MulMat(mat(wt, s.embd, s.vocab, 0.05), ctx.Mul(ctx.RMSNorm(x, 1e-5), norm()))
		g.BuildForward(logits)
		if ferr != nil {
			return ferr
		}
		return b.time(name, func() error { return g.Run(context.Background(), ggml.ComputeOptions{Threadpool: b.tp}) }, float64(n), "tokens/s")
	}
}
