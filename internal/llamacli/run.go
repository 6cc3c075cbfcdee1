// Package llamacli is the command line of the llama runner, shared by
// examples/llama and `ggml run`.
package llamacli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/llama"
)

// config holds the runner's settings as the command line gives them.
type config struct {
	model, prompt, ids                  string
	n, threads, nCtx, batch, topK, reps int
	ceiling, ceilingPairs               int
	temp, topP                          float64
	seed                                uint64
	kvF32, ignoreEOS, quiet, mmap, fa   bool
	noRepack, noWarmup                  bool
	rpc, tensorSplit                    string   // --rpc servers and their weights
	args                                []string // positional arguments left after the flags
}

// defineFlags declares the runner's flags on fs, to be parsed into the
// returned config.
func defineFlags(fs *flag.FlagSet) *config {
	c := &config{}
	fs.StringVar(&c.model, "m", "", "model file (GGUF, llama architecture)")
	fs.StringVar(&c.prompt, "p", "Once upon a time", "prompt")
	fs.StringVar(&c.ids, "ids", "", "prompt as comma-separated token ids (instead of -p)")
	fs.IntVar(&c.n, "n", 64, "tokens to generate (-1: until end of text or the context is full; 0: evaluate the prompt only)")
	fs.IntVar(&c.threads, "t", 0, "threads (0 or negative: all CPUs; more than the CPUs: capped to them)")
	fs.Float64Var(&c.temp, "temp", 0.8, "temperature, >= 0 (0: greedy)")
	fs.IntVar(&c.topK, "top-k", 40, "top-k sampling, >= 0 (0: off)")
	fs.Float64Var(&c.topP, "top-p", 0.95, "top-p sampling, in [0, 1] (1: off)")
	fs.Uint64Var(&c.seed, "seed", 0, "random seed (0: random)")
	fs.IntVar(&c.nCtx, "c", 0, "context size in positions (0: the model's trained context, at most 2048); generation stops when it is full")
	fs.IntVar(&c.batch, "b", 512, "prompt batch size, >= 1")
	fs.BoolVar(&c.kvF32, "kv-f32", false, "keep the KV cache in f32 (default f16)")
	fs.BoolVar(&c.fa, "fa", false, "flash attention (as llama.cpp's -fa): V cached a row per position, attention by FlashAttnExt")
	fs.BoolVar(&c.ignoreEOS, "ignore-eos", false, "keep generating after an end-of-text token")
	fs.BoolVar(&c.quiet, "q", false, "print only the generated text (no prompt)")
	fs.BoolVar(&c.mmap, "mmap", false, "use the weights in place in the memory-mapped file (no copy)")
	fs.BoolVar(&c.noRepack, "no-repack", false, "keep the projection matrices in the plain layout (by default the CPU's repacked one where it has one: on x86-64, q8_0, q4_0, iq4_nl, q4_K and q6_K)")
	fs.IntVar(&c.reps, "r", 1, "repeat the prompt and the generation this many times from an empty session and report the best times (as llama_run.c's -r); the text printed is the first run's")
	fs.BoolVar(&c.noWarmup, "no-warmup", false, "skip the warm-up evaluation before the prompt (its one-time costs then count in the prompt's time)")
	fs.IntVar(&c.ceiling, "ceiling", 0, "after generating, time this many plain reads of the weights a token reads (the speed limit memory sets) and compare")
	fs.IntVar(&c.ceilingPairs, "ceiling-pairs", 0, "after generating, evaluate this many more tokens one at a time, each between two plain reads of the weights, and print the median of their shares of the reads' speed: steadier than -ceiling where the memory's speed drifts (the tokens are then forgotten; they need free positions in the context)")
	fs.StringVar(&c.rpc, "rpc", "", "RPC servers HOST:PORT[,HOST:PORT...] (ggml rpc-server) to spread the layers over, as llama.cpp's --rpc")
	fs.StringVar(&c.tensorSplit, "tensor-split", "", "weights W1,W2,... of the --rpc servers' shares of the layers, and optionally one more for this machine (default: in proportion to their free memory)")
	fs.StringVar(&c.tensorSplit, "ts", "", "short for --tensor-split")
	return c
}

// validate checks the settings before anything is loaded: each problem is
// a one-line error (cli.ErrUsage) naming the flag. New flags add their
// checks here.
func (c *config) validate() error {
	checks := []struct {
		bad bool
		msg string
	}{
		{len(c.args) > 0, fmt.Sprintf("unexpected argument %q: give the prompt with -p (quoted)", strings.Join(c.args, " "))},
		{c.model == "", "no model: give one with -m MODEL.gguf"},
		{c.n < -1, fmt.Sprintf("-n %d: must be -1 (until the context is full) or a count >= 0", c.n)},
		{c.nCtx < 0, fmt.Sprintf("-c %d: the context size must be >= 0 (0: the model's)", c.nCtx)},
		{c.batch < 1, fmt.Sprintf("-b %d: the batch size must be >= 1", c.batch)},
		{c.temp < 0 || math.IsNaN(c.temp), fmt.Sprintf("--temp %g: the temperature must be >= 0 (0: greedy)", c.temp)},
		{c.topK < 0, fmt.Sprintf("--top-k %d: must be >= 0 (0: off)", c.topK)},
		{!(c.topP >= 0 && c.topP <= 1), fmt.Sprintf("--top-p %g: must be between 0 and 1 (1: off)", c.topP)},
		{c.reps < 1, fmt.Sprintf("-r %d: must be >= 1", c.reps)},
		{c.ceiling < 0, fmt.Sprintf("-ceiling %d: must be >= 0", c.ceiling)},
		{c.ceiling > 0 && c.rpc != "", "-ceiling reads the weights in this process's memory: it cannot be combined with --rpc"},
		{c.ceilingPairs < 0, fmt.Sprintf("-ceiling-pairs %d: must be >= 0", c.ceilingPairs)},
		{c.ceilingPairs > 0 && c.rpc != "", "-ceiling-pairs reads the weights in this process's memory: it cannot be combined with --rpc"},
	}
	for _, ch := range checks {
		if ch.bad {
			return cli.Usagef("%s", ch.msg)
		}
	}
	return nil
}

// usage writes the runner's help.
func usage(name string, fs *flag.FlagSet) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintf(w, "usage: %s -m MODEL.gguf [-p PROMPT] [-n N] [-t THREADS] [-c CTX] [--temp T] [--top-k K] [--top-p P] [--seed S]\n\n"+
			"Runs a llama-architecture model: prints the prompt and the generated text to stdout,\n"+
			"the memory used and the speeds to stderr.\n\nflags:\n", name)
		fs.PrintDefaults()
	}
}

// Run parses args (without the program name) and runs the model: it prints
// the prompt and the generated text to stdout as it goes, and the speeds to
// stderr. -h prints the help to stdout and returns nil; a bad flag or
// argument is an error wrapping cli.ErrUsage.
func Run(name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c := defineFlags(fs)
	help, err := cli.Parse(fs, args, stdout, usage(name, fs))
	if help || err != nil {
		return err
	}
	c.args = fs.Args()
	if err := c.validate(); err != nil {
		return err
	}
	threads := cli.Threads(c.threads, func(msg string) { fmt.Fprintln(stderr, "warning:", msg) })
	if err := cli.CheckFile(c.model); err != nil {
		return err
	}
	split, err := splitOptions(c.rpc, c.tensorSplit)
	if err != nil {
		return err
	}
	if split != nil {
		defer quietCore()()
	}
	m, err := llama.Load(c.model, llama.LoadOptions{Mmap: c.mmap, NoRepack: c.noRepack, Split: split})
	if err != nil {
		return err
	}
	defer m.Close()

	var toks []int32
	if c.ids != "" {
		for _, f := range strings.Split(c.ids, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return fmt.Errorf("-ids: %v", err)
			}
			toks = append(toks, int32(v))
		}
	} else {
		if m.Vocab.Model == llama.TokenizerNone {
			return errors.New("the model has no tokenizer: give the prompt as -ids")
		}
		toks = m.Tokenize(c.prompt, true)
	}
	if len(toks) == 0 {
		return errors.New("empty prompt")
	}
	ctxSize, err := contextSize(c.nCtx, m.NCtxTrain, len(toks), stderr)
	if err != nil {
		return err
	}
	s, err := m.NewSession(llama.SessionOptions{Threads: threads, Context: ctxSize, Batch: c.batch, F32KV: c.kvF32, FlashAttn: c.fa})
	if err != nil {
		return err
	}
	defer s.Close()

	if !c.noWarmup {
		if err := s.Warmup(context.Background()); err != nil {
			return err
		}
	}
	kvBytes, computeBytes := s.Memory()
	fmt.Fprintf(stderr, "memory: weights %.1f MiB, KV cache %.1f MiB (%d positions), compute buffer %.1f MiB\n",
		mib(m.WeightBytes()), mib(kvBytes), ctxSize, mib(computeBytes))
	if split != nil {
		printDevices(stderr, s)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if !c.quiet {
		if m.Vocab.Model == llama.TokenizerNone {
			fmt.Fprint(out, toks)
		} else {
			fmt.Fprint(out, m.Detokenize(toks))
		}
		out.Flush()
	}
	smp := llama.SamplerOptions{Temp: float32(c.temp), TopK: c.topK, TopP: float32(c.topP), Seed: c.seed}
	if c.seed == 0 {
		smp.Seed = uint64(os.Getpid())<<32 ^ uint64(len(c.prompt))
	}
	// Generate's MaxTokens 0 means "until the context is full", which is -n -1
	opts := llama.GenerateOptions{MaxTokens: max(c.n, 0), Sampler: smp, IgnoreEOG: c.ignoreEOS}
	if c.n == 0 {
		// the prompt is evaluated, the first token sampled ends it (and is not shown)
		opts.OnToken = func(int32) error { return llama.ErrStop }
	}
	shown := opts
	if c.n != 0 {
		shown.OnToken = func(id int32) error {
			if m.Vocab.Model == llama.TokenizerNone {
				fmt.Fprintf(out, " %d", id)
			} else {
				out.WriteString(m.Piece(id))
			}
			return out.Flush()
		}
	}
	st, err := s.Generate(ctx, toks, shown)
	fmt.Fprintln(out)
	out.Flush()
	if err == nil && stoppedByContext(c, m, s, st) {
		fmt.Fprintf(stderr, "generation stopped: the context is full (%d positions; -c sets its size)\n", ctxSize)
	}
	if err == nil && c.reps > 1 {
		if st, err = bestOf(ctx, s, toks, st, c.reps, opts); err == nil {
			fmt.Fprintf(stderr, "reps: %d, the best of each time below; generated tokens identical across reps: yes\n", c.reps)
		}
	}
	if c.n == 0 {
		st.Tokens = nil
	}
	fmt.Fprintf(stderr, "prompt: %d tokens in %.2f ms = %.2f tokens/s (cpu %.2f ms)\n",
		st.PromptTokens, ms(st.PromptTime), st.PromptTokensPerSecond(), ms(st.PromptCPU))
	fmt.Fprintf(stderr, "generation: %d tokens (%d evaluated) in %.2f ms = %.2f tokens/s (cpu %.2f ms, %d threads)\n",
		len(st.Tokens), st.GenEvals, ms(st.GenTime), st.GenTokensPerSecond(), ms(st.GenCPU), s.Threads())
	if err == nil && c.ceiling > 0 {
		err = printCeiling(stderr, m, s.Threads(), c.ceiling, st)
	}
	if err == nil && c.ceilingPairs > 0 {
		err = printPairedCeiling(ctx, stderr, s, toks[len(toks)-1], c.ceilingPairs)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// contextSize is the KV cache's size for -c n: the model's trained context
// (at most 2048) for 0. A size past the trained context is allowed with a
// warning (the model has not seen those positions); a prompt that does not
// fit is an error.
func contextSize(n, trained, prompt int, stderr io.Writer) (int, error) {
	if n == 0 {
		n = 2048
		if trained > 0 {
			n = min(trained, n)
		}
	} else if trained > 0 && n > trained {
		fmt.Fprintf(stderr, "warning: -c %d is past the model's trained context (%d positions): text beyond position %d is extrapolation and may be poor\n",
			n, trained, trained)
	}
	if prompt > n {
		return 0, fmt.Errorf("the prompt is %d tokens and the context holds %d positions (-c)", prompt, n)
	}
	return n, nil
}

// stoppedByContext reports whether generation ended because the KV cache
// was full rather than at -n tokens or an end of text.
func stoppedByContext(c *config, m *llama.Model, s *llama.Session, st llama.Stats) bool {
	if c.n == 0 || len(st.Tokens) == 0 || (c.n > 0 && len(st.Tokens) >= c.n) {
		return false
	}
	last := st.Tokens[len(st.Tokens)-1]
	return s.Pos() == s.ContextSize() && (c.ignoreEOS || !m.Vocab.IsEOG(last))
}

// bestOf runs the generation of first reps-1 more times from an empty
// session and returns first with the best prompt and generation times (and
// their CPU times). The tokens must be the same every time.
func bestOf(ctx context.Context, s *llama.Session, toks []int32, first llama.Stats, reps int, opts llama.GenerateOptions) (llama.Stats, error) {
	best := first
	for range reps - 1 {
		if err := s.Rewind(0); err != nil {
			return best, err
		}
		st, err := s.Generate(ctx, toks, opts)
		if err != nil {
			return best, err
		}
		if !slices.Equal(st.Tokens, first.Tokens) {
			return best, errors.New("-r: the generated tokens differ between runs")
		}
		if st.PromptTime < best.PromptTime {
			best.PromptTime, best.PromptCPU = st.PromptTime, st.PromptCPU
		}
		if st.GenTime < best.GenTime {
			best.GenTime, best.GenCPU = st.GenTime, st.GenCPU
		}
	}
	return best, nil
}

// printCeiling prints the best and the mean time of rounds plain reads of
// the matrices a token reads, and how close generation (a mean over its
// tokens) came to the mean.
func printCeiling(w io.Writer, m *llama.Model, threads, rounds int, st llama.Stats) error {
	ts, bytes, err := m.StreamCeiling(threads, rounds)
	if err != nil {
		return err
	}
	var sum time.Duration
	for _, t := range ts {
		sum += t
	}
	best, mean := slices.Min(ts), sum/time.Duration(len(ts))
	fmt.Fprintf(w, "ceiling: the %.1f MiB of matrices a token reads, read once in decode order (loads only, %d threads, %d rounds): best %.3f ms, mean %.3f ms = %.1f GB/s",
		mib(int(bytes)), threads, rounds, ms(best), ms(mean), float64(bytes)/mean.Seconds()/1e9)
	if st.GenEvals > 0 {
		per := st.GenTime / time.Duration(st.GenEvals)
		fmt.Fprintf(w, "; generation %.3f ms/token, %.0f%% of the mean's speed", ms(per), 100*mean.Seconds()/per.Seconds())
	}
	fmt.Fprintln(w)
	return nil
}

// printPairedCeiling evaluates n more tokens, each between two plain reads
// of the weights (Session.PairedCeiling), and prints the median, quartiles
// and range of their shares of the reads' speed, with the reads' and the
// tokens' median times.
func printPairedCeiling(ctx context.Context, w io.Writer, s *llama.Session, tok int32, n int) error {
	pos := s.Pos()
	ps, bytes, err := s.PairedCeiling(ctx, tok, n)
	if errors.Is(err, llama.ErrContextFull) {
		return fmt.Errorf("-ceiling-pairs %d: the context has %d free positions after the generation (raise -c)", n, s.ContextSize()-pos)
	}
	if err != nil {
		return err
	}
	shares := make([]float64, len(ps))
	reads := make([]float64, 0, len(ps)+1)
	toks := make([]float64, len(ps))
	for i, p := range ps {
		shares[i], toks[i] = 100*p.Share(), ms(p.Token)
		if i == 0 {
			reads = append(reads, ms(p.Before))
		}
		reads = append(reads, ms(p.After))
	}
	q := quantiles(shares, 0, 0.25, 0.5, 0.75, 1)
	rd := quantiles(reads, 0.5)[0]
	fmt.Fprintf(w, "ceiling pairs: %d tokens from position %d, each between two plain reads of the %.1f MiB of matrices (%d threads): share of the reads' speed median %.0f%% (quartiles %.0f–%.0f%%, range %.0f–%.0f%%); reads median %.3f ms = %.1f GB/s, tokens median %.3f ms\n",
		n, pos, mib(int(bytes)), s.Threads(), q[2], q[1], q[3], q[0], q[4], rd, float64(bytes)/rd/1e6, quantiles(toks, 0.5)[0])
	return nil
}

// quantiles returns the qs quantiles of xs (linear between the two nearest
// ranks); xs is sorted in place.
func quantiles(xs []float64, qs ...float64) []float64 {
	slices.Sort(xs)
	out := make([]float64, len(qs))
	for i, q := range qs {
		if len(xs) == 0 {
			out[i] = math.NaN()
			continue
		}
		r := q * float64(len(xs)-1)
		lo := int(r)
		hi := min(lo+1, len(xs)-1)
		out[i] = xs[lo] + (r-float64(lo))*(xs[hi]-xs[lo])
	}
	return out
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }

func mib(n int) float64 { return float64(n) / (1 << 20) }
