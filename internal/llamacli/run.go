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
	model, prompt, file, ids            string
	n, threads, nCtx, batch, topK, reps int
	ceiling, ceilingPairs               int
	temp, topP, minP, repeatPenalty     float64
	repeatLastN, gpuLayers              int
	seed                                seed
	kvF32, ignoreEOS, quiet, mmap, fa   bool
	noRepack, noWarmup                  bool
	rpc, tensorSplit                    string   // --rpc servers and their weights
	args                                []string // positional arguments left after the flags
	chat                                chatConfig
	given                               map[string]bool // the flags on the command line, by name (aliases included)
}

// defineFlags declares the runner's flags on fs, to be parsed into the
// returned config. The names are llama.cpp's (its long ones, and the short
// ones its users type), with cli.Alias for each second name.
func defineFlags(fs *flag.FlagSet) *config {
	c := &config{}
	fs.StringVar(&c.model, "model", "", "model file (GGUF, llama architecture)")
	fs.StringVar(&c.prompt, "prompt", "Once upon a time", "prompt")
	fs.StringVar(&c.file, "file", "", "read the prompt from this file (instead of -p; one trailing newline is dropped, as llama.cpp does)")
	fs.StringVar(&c.ids, "ids", "", "prompt as comma-separated token ids (instead of -p)")
	fs.IntVar(&c.n, "n-predict", 64, "tokens to generate (-1: until end of text or the context is full; 0: evaluate the prompt only)")
	fs.IntVar(&c.threads, "threads", 0, "threads (0 or negative: all CPUs; more than the CPUs: capped to them)")
	fs.Float64Var(&c.temp, "temp", 0.8, "temperature, >= 0 (0: greedy)")
	fs.IntVar(&c.topK, "top-k", 40, "top-k sampling, >= 0 (0: off)")
	fs.Float64Var(&c.topP, "top-p", 0.95, "top-p sampling, in [0, 1] (1: off)")
	fs.Float64Var(&c.minP, "min-p", 0.05, "min-p sampling: drop tokens less likely than this share of the likeliest, in [0, 1] (0: off)")
	fs.Float64Var(&c.repeatPenalty, "repeat-penalty", 1, "penalize the tokens of the last --repeat-last-n, > 0 (1: off)")
	fs.IntVar(&c.repeatLastN, "repeat-last-n", 64, "tokens the repetition penalty looks back over (0: off; -1: the context size)")
	fs.Var(&c.seed, "seed", "random seed `N` (0 or -1: a different one each run)")
	fs.IntVar(&c.nCtx, "ctx-size", 0, "context size in positions (0: the model's trained context, at most 2048); generation stops when it is full")
	fs.IntVar(&c.batch, "batch-size", 512, "prompt batch size, >= 1")
	fs.BoolVar(&c.kvF32, "kv-f32", false, "keep the KV cache in f32 (default f16)")
	fs.BoolVar(&c.fa, "flash-attn", false, "flash attention (as llama.cpp's -fa): V cached a row per position, attention by FlashAttnExt")
	fs.IntVar(&c.gpuLayers, "n-gpu-layers", 0, "accepted for llama.cpp's command lines: there is no GPU backend, every layer runs on the CPU (--rpc spreads them over machines)")
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
	for name, short := range map[string]string{"model": "m", "prompt": "p", "file": "f", "n-predict": "n", "threads": "t",
		"seed": "s", "ctx-size": "c", "batch-size": "b", "flash-attn": "fa", "n-gpu-layers": "ngl", "tensor-split": "ts"} {
		cli.Alias(fs, name, short)
	}
	c.chat.define(fs)
	return c
}

// seed is --seed: a seed, or 0 and llama.cpp's -1 for a different one each run.
type seed struct{ v uint64 }

func (s *seed) String() string {
	if s == nil {
		return "0"
	}
	return strconv.FormatUint(s.v, 10)
}

func (s *seed) Set(v string) error {
	if v == "-1" {
		s.v = 0
		return nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return errors.New("a seed is 0 to 2^64-1, or -1")
	}
	s.v = n
	return nil
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
		{c.file != "" && (c.given["p"] || c.given["prompt"]), "-f and -p both give the prompt: give one"},
		{c.ids != "" && (c.file != "" || c.given["p"] || c.given["prompt"]), "-ids and -p or -f all give the prompt: give one"},
		{c.n < -1, fmt.Sprintf("-n %d: must be -1 (until the context is full) or a count >= 0", c.n)},
		{c.nCtx < 0 || c.nCtx > llama.MaxContext, fmt.Sprintf("-c %d: the context size must be 0 (the model's) to %d", c.nCtx, llama.MaxContext)},
		{c.batch < 1 || c.batch > llama.MaxContext, fmt.Sprintf("-b %d: the batch size must be 1 to %d", c.batch, llama.MaxContext)},
		{c.temp < 0 || math.IsNaN(c.temp) || math.IsInf(c.temp, 0), fmt.Sprintf("--temp %g: the temperature must be >= 0 (0: greedy)", c.temp)},
		{c.topK < 0, fmt.Sprintf("--top-k %d: must be >= 0 (0: off)", c.topK)},
		{!(c.topP >= 0 && c.topP <= 1), fmt.Sprintf("--top-p %g: must be between 0 and 1 (1: off)", c.topP)},
		{!(c.minP >= 0 && c.minP <= 1), fmt.Sprintf("--min-p %g: must be between 0 and 1 (0: off)", c.minP)},
		{!(c.repeatPenalty > 0) || math.IsInf(c.repeatPenalty, 0), fmt.Sprintf("--repeat-penalty %g: must be > 0 (1: off)", c.repeatPenalty)},
		{c.repeatLastN < -1, fmt.Sprintf("--repeat-last-n %d: must be >= 0, or -1 (the context size)", c.repeatLastN)},
		{c.reps < 1, fmt.Sprintf("-r %d: must be >= 1", c.reps)},
		{c.ceiling < 0, fmt.Sprintf("-ceiling %d: must be >= 0", c.ceiling)},
		{c.ceiling > 0 && c.rpc != "", "-ceiling reads the weights in this process's memory: it cannot be combined with --rpc"},
		{c.ceilingPairs < 0, fmt.Sprintf("-ceiling-pairs %d: must be >= 0", c.ceilingPairs)},
		{c.ceilingPairs > 0 && c.rpc != "", "-ceiling-pairs reads the weights in this process's memory: it cannot be combined with --rpc"},
	}
	checks = append(checks, c.chat.checks(c)...)
	for _, ch := range checks {
		if ch.bad {
			return cli.Usagef("%s", ch.msg)
		}
	}
	return nil
}

// parseIDs reads -ids: comma-separated token ids, each 0 to MaxInt32 (the
// model's vocabulary is checked once it is loaded, by checkIDs). An error
// names the value at fault.
func parseIDs(s string) ([]int32, error) {
	var toks []int32
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, cli.Usagef("-ids %s: id %d is empty", s, i+1)
		}
		v, err := strconv.ParseInt(f, 10, 64)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange):
			return nil, cli.Usagef("-ids: %s is out of range (token ids are 0 to %d)", f, math.MaxInt32)
		case err != nil:
			return nil, cli.Usagef("-ids: %q is not a token id (an integer)", f)
		case v < 0 || v > math.MaxInt32:
			return nil, cli.Usagef("-ids: %s is out of range (token ids are 0 to %d)", f, math.MaxInt32)
		}
		toks = append(toks, int32(v))
	}
	return toks, nil
}

// checkIDs refuses -ids past the model's vocabulary of n tokens.
func checkIDs(toks []int32, n int) error {
	for _, id := range toks {
		if int(id) >= n {
			return cli.Usagef("-ids: %d is not in the model's vocabulary (ids 0 to %d)", id, n-1)
		}
	}
	return nil
}

// usage writes the runner's help.
func usage(name string, fs *flag.FlagSet) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintf(w, "usage: %s -m MODEL.gguf [-p PROMPT | -f FILE] [-n N] [-t THREADS] [-c CTX] [--temp T] [--top-k K] [--top-p P] [--min-p P] [-s SEED]\n"+
			"       %s -m MODEL.gguf -cnv [-sys SYSTEM_PROMPT] [--chat-template NAME] [...]\n\n"+
			"Runs a llama-architecture model: prints the prompt and the generated text to stdout,\n"+
			"the memory used and the speeds to stderr. With -cnv, a chat as llama-cli's conversation\n"+
			"mode: each line of stdin is a user message, the reply is printed after it; EOF ends.\n"+
			"The flags are llama.cpp's; each takes one dash or two, and may follow other arguments.\n\nflags:\n", name, name)
		cli.PrintFlags(fs, w)
	}
}

// Run parses args (without the program name) and runs the model: it prints
// the prompt and the generated text to stdout as it goes, and the speeds to
// stderr. -h prints the help to stdout and returns nil; a bad flag or
// argument is an error wrapping cli.ErrUsage. In conversation mode (-cnv)
// it reads the user's messages from os.Stdin.
func Run(name string, args []string, stdout, stderr io.Writer) error {
	return RunWithInput(name, args, os.Stdin, stdout, stderr)
}

// RunWithInput is Run reading the conversation's messages from stdin.
func RunWithInput(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c := defineFlags(fs)
	help, err := cli.Parse(fs, args, stdout, usage(name, fs))
	if help || err != nil {
		return err
	}
	c.args = fs.Args()
	c.given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.given[f.Name] = true })
	if err := c.validate(); err != nil {
		return err
	}
	var toks []int32
	if c.ids != "" {
		if toks, err = parseIDs(c.ids); err != nil {
			return err
		}
	}
	split, err := splitOptions(c.rpc, c.tensorSplit)
	if err != nil {
		return err
	}
	threads := cli.Threads(c.threads, func(msg string) { fmt.Fprintln(stderr, "warning:", msg) })
	if c.given["ngl"] || c.given["n-gpu-layers"] {
		fmt.Fprintf(stderr, "note: -ngl %d: there is no GPU backend; every layer runs on the CPU (--rpc spreads them over machines)\n", c.gpuLayers)
	}
	if err := cli.CheckFile(c.model); err != nil {
		return err
	}
	if c.file != "" {
		if c.prompt, err = readPrompt(c.file); err != nil {
			return err
		}
	}
	if split != nil {
		defer quietCore()()
	}
	m, err := llama.Load(c.model, llama.LoadOptions{Mmap: c.mmap, NoRepack: c.noRepack, Split: split})
	if err != nil {
		return rpcLoadError(err, split)
	}
	defer m.Close()

	if c.chat.on {
		if toks, err = c.chat.start(m, c, stderr); err != nil {
			return err
		}
	} else if c.ids != "" {
		if err := checkIDs(toks, m.NVocab); err != nil {
			return err
		}
	} else {
		if m.Vocab.Model == llama.TokenizerNone {
			return errors.New("the model has no tokenizer: give the prompt as -ids")
		}
		toks = m.Tokenize(c.prompt, true)
	}
	if len(toks) == 0 && !c.chat.on {
		return errors.New("empty prompt")
	}
	ctxSize, err := contextSize(c.nCtx, m.Hparams, c.kvF32, len(toks), stderr)
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
	state := "KV cache"
	if m.Recurrent() {
		state = "recurrent state" // its size does not depend on the positions
	}
	fmt.Fprintf(stderr, "memory: weights %.1f MiB, %s %.1f MiB (%d positions), compute buffer %.1f MiB\n",
		mib(m.WeightBytes()), state, mib(kvBytes), ctxSize, mib(computeBytes))
	if split != nil {
		printDevices(stderr, s)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	out := &textWriter{w: bufio.NewWriter(stdout)}
	defer out.Flush()
	if c.chat.on {
		return c.converse(ctx, s, toks, stdin, out, stderr)
	}
	if !c.quiet {
		if m.Vocab.Model == llama.TokenizerNone {
			fmt.Fprint(out, toks)
		} else {
			fmt.Fprint(out, m.Detokenize(toks))
		}
		out.Flush()
	}
	smp := c.samplerOptions(stderr)
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
	out.EndLine()
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

// gave reports whether any of names (one flag's spellings) was given.
func (c *config) gave(names ...string) bool {
	for _, n := range names {
		if c.given[n] {
			return true
		}
	}
	return false
}

// textWriter is the buffered stdout of the text, which remembers its last
// byte so that the text can end with exactly one newline.
type textWriter struct {
	w    *bufio.Writer
	last byte
}

func (t *textWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		t.last = p[len(p)-1]
	}
	return t.w.Write(p)
}

func (t *textWriter) WriteString(s string) (int, error) { return t.Write([]byte(s)) }

func (t *textWriter) Flush() error { return t.w.Flush() }

// EndLine writes a newline unless the text already ends with one.
func (t *textWriter) EndLine() {
	if t.last != '\n' {
		t.Write([]byte{'\n'})
	}
}

// readPrompt reads -f's file, less one trailing newline (as llama.cpp).
func readPrompt(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("-f: %w", err)
	}
	s, cut := strings.CutSuffix(string(b), "\n")
	if cut {
		s = strings.TrimSuffix(s, "\r")
	}
	return s, nil
}

// contextSize is the KV cache's size for -c n: the model's trained context
// (at most 2048) for 0. A size past the trained context is allowed with one
// warning (the model has not seen those positions), which says what the
// cache will take; a prompt that does not fit is an error.
func contextSize(n int, h llama.Hparams, kvF32 bool, prompt int, stderr io.Writer) (int, error) {
	trained := h.NCtxTrain
	if n == 0 {
		n = 2048
		if trained > 0 {
			n = min(trained, n)
		}
	} else if trained > 0 && n > trained {
		fmt.Fprintf(stderr, "warning: -c %d is past the model's trained context (%d positions): text beyond position %d is extrapolation and may be poor; the KV cache will take %s\n",
			n, trained, trained, memString(kvCacheBytes(h, n, kvF32)))
	}
	if prompt > n {
		return 0, fmt.Errorf("the prompt is %d tokens and the context holds %d positions (-c)", prompt, n)
	}
	return n, nil
}

// kvCacheBytes is what a KV cache of n positions takes: a K and a V row
// of the K/V width per position and layer, in f16 (or f32).
func kvCacheBytes(h llama.Hparams, n int, f32 bool) int {
	elem := 2
	if f32 {
		elem = 4
	}
	return 2 * h.NLayer * h.NEmbdGQA() * n * elem
}

// samplerOptions is the sampler the flags ask for. A seed of 0 (or -1)
// draws one from the process.
func (c *config) samplerOptions(stderr io.Writer) llama.SamplerOptions {
	smp := llama.SamplerOptions{Temp: float32(c.temp), TopK: c.topK, TopP: float32(c.topP), Seed: c.seed.v}
	if c.seed.v == 0 {
		smp.Seed = uint64(os.Getpid())<<32 ^ uint64(len(c.prompt))
	}
	smp.MinP = float32(c.minP)
	// llama.cpp's --repeat-last-n: 0 turns the penalty off, -1 is the
	// context (every token the session holds: the sampler's -1)
	if c.repeatLastN != 0 {
		smp.RepeatPenalty = float32(c.repeatPenalty)
		smp.RepeatLastN = c.repeatLastN
	}
	return smp
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

// memString is a size in KiB, MiB or GiB, whichever reads best.
func memString(n int) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", mib(n))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
