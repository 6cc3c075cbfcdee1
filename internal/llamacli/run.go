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
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml/llama"
)

// Run parses args (without the program name) and runs the model: it prints
// the prompt and the generated text to stdout as it goes, and the speeds to
// stderr.
func Run(name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("m", "", "model file (GGUF, llama architecture)")
	prompt := fs.String("p", "Once upon a time", "prompt")
	ids := fs.String("ids", "", "prompt as comma-separated token ids (instead of -p)")
	n := fs.Int("n", 64, "tokens to generate")
	threads := fs.Int("t", 0, "threads (0: all CPUs)")
	temp := fs.Float64("temp", 0.8, "temperature (0: greedy)")
	topK := fs.Int("top-k", 40, "top-k sampling (0: off)")
	topP := fs.Float64("top-p", 0.95, "top-p sampling (1: off)")
	seed := fs.Uint64("seed", 0, "random seed (0: random)")
	nCtx := fs.Int("c", 0, "context size (0: the model's, at most 2048)")
	batch := fs.Int("b", 512, "prompt batch size")
	kvF32 := fs.Bool("kv-f32", false, "keep the KV cache in f32 (default f16)")
	ignoreEOS := fs.Bool("ignore-eos", false, "keep generating after an end-of-text token")
	quiet := fs.Bool("q", false, "print only the generated text (no prompt)")
	mmap := fs.Bool("mmap", false, "use the weights in place in the memory-mapped file (no copy)")
	noRepack := fs.Bool("no-repack", false, "keep the projection matrices in the plain layout (by default the CPU's repacked one where it has one: q8_0 with AVX512-VNNI)")
	reps := fs.Int("r", 1, "repeat the prompt and the generation this many times from an empty session and report the best times (as llama_run.c's -r); the text printed is the first run's")
	noWarmup := fs.Bool("no-warmup", false, "skip the warm-up evaluation before the prompt (its one-time costs then count in the prompt's time)")
	rpc := fs.String("rpc", "", "RPC servers HOST:PORT[,HOST:PORT...] (ggml rpc-server) to spread the layers over, as llama.cpp's --rpc")
	tensorSplit := fs.String("tensor-split", "", "weights W1,W2,... of the --rpc servers' shares of the layers, and optionally one more for this machine (default: in proportion to their free memory)")
	fs.StringVar(tensorSplit, "ts", "", "short for --tensor-split")
	ceiling := fs.Int("ceiling", 0, "after generating, time this many plain reads of the weights a token reads (the speed limit memory sets) and compare")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s -m MODEL.gguf [-p PROMPT] [-n N] [-t THREADS] [--temp T] [--top-k K] [--top-p P] [--seed S]\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *model == "" {
		fs.Usage()
		return errors.New("no model (-m)")
	}
	split, err := splitOptions(*rpc, *tensorSplit)
	if err != nil {
		return err
	}
	if split != nil {
		if *ceiling > 0 {
			return errors.New("-ceiling reads the weights in this process's memory: it cannot be combined with --rpc")
		}
		defer quietCore()()
	}
	m, err := llama.Load(*model, llama.LoadOptions{Mmap: *mmap, NoRepack: *noRepack, Split: split})
	if err != nil {
		return err
	}
	defer m.Close()

	if m.Vocab.PreApprox {
		fmt.Fprintf(stderr, "warning: pre-tokenizer %q is not implemented; the text is split as GPT-2 does\n", m.Vocab.Pre)
	}
	var toks []int32
	if *ids != "" {
		for _, f := range strings.Split(*ids, ",") {
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
		toks = m.Tokenize(*prompt, true)
	}
	if len(toks) == 0 {
		return errors.New("empty prompt")
	}
	ctxSize := *nCtx
	if ctxSize <= 0 {
		// the training context (at most 2048), or more if prompt and
		// generation need it (the model then runs beyond what it was trained on)
		ctxSize = max(min(m.NCtxTrain, 2048), len(toks)+*n)
	}
	s, err := m.NewSession(llama.SessionOptions{Threads: *threads, Context: ctxSize, Batch: *batch, F32KV: *kvF32})
	if err != nil {
		return err
	}
	defer s.Close()

	if !*noWarmup {
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
	if !*quiet {
		if m.Vocab.Model == llama.TokenizerNone {
			fmt.Fprint(out, toks)
		} else {
			fmt.Fprint(out, m.Detokenize(toks))
		}
		out.Flush()
	}
	smp := llama.SamplerOptions{Temp: float32(*temp), TopK: *topK, TopP: float32(*topP), Seed: *seed}
	if *seed == 0 {
		smp.Seed = uint64(os.Getpid())<<32 ^ uint64(len(*prompt))
	}
	st, err := s.Generate(ctx, toks, llama.GenerateOptions{
		MaxTokens: *n,
		Sampler:   smp,
		IgnoreEOG: *ignoreEOS,
		OnToken: func(id int32) error {
			if m.Vocab.Model == llama.TokenizerNone {
				fmt.Fprintf(out, " %d", id)
			} else {
				out.WriteString(m.Piece(id))
			}
			return out.Flush()
		},
	})
	fmt.Fprintln(out)
	out.Flush()
	if err == nil && *reps > 1 {
		if st, err = bestOf(ctx, s, toks, st, *reps, llama.GenerateOptions{MaxTokens: *n, Sampler: smp, IgnoreEOG: *ignoreEOS}); err == nil {
			fmt.Fprintf(stderr, "reps: %d, the best of each time below; generated tokens identical across reps: yes\n", *reps)
		}
	}
	fmt.Fprintf(stderr, "prompt: %d tokens in %.2f ms = %.2f tokens/s (cpu %.2f ms)\n",
		st.PromptTokens, ms(st.PromptTime), st.PromptTokensPerSecond(), ms(st.PromptCPU))
	fmt.Fprintf(stderr, "generation: %d tokens in %.2f ms = %.2f tokens/s (cpu %.2f ms, %d threads)\n",
		st.GenEvals, ms(st.GenTime), st.GenTokensPerSecond(), ms(st.GenCPU), s.Threads())
	if err == nil && *ceiling > 0 {
		err = printCeiling(stderr, m, s.Threads(), *ceiling, st)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
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

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }

func mib(n int) float64 { return float64(n) / (1 << 20) }
