package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/internal/corpus"
	"github.com/ggml-go/ggml/internal/llamacli"
	"github.com/ggml-go/ggml/llama"
)

// runCmd runs a llama model (the same program as examples/llama).
func runCmd(args []string) error {
	return llamacli.Run("ggml run", args, os.Stdout, os.Stderr)
}

// embedCmd prints the embeddings of texts (as llama.cpp's llama-embedding).
func embedCmd(args []string) error {
	return llamacli.Embed("ggml embed", args, os.Stdout, os.Stderr)
}

// parseQuantType accepts a ggml type QuantizeFile can write (q4_K, q8_0,
// iq4_nl, f16, ...) in any case.
func parseQuantType(s string) (ggml.Type, error) {
	for _, t := range llama.QuantizeTypes() {
		if strings.EqualFold(t.String(), s) {
			return t, nil
		}
	}
	return 0, cli.Usagef("quantize: unknown ggml type %q; the types are %s", s, typeNames())
}

func typeNames() string {
	var names []string
	for _, t := range llama.QuantizeTypes() {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}

func mixtureNames() string {
	var names []string
	for _, m := range llama.Mixtures() {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// parseTarget reads quantize's TYPE: a llama.cpp file type (Q4_K_M, Q8_0,
// ..., and the aliases Q3_K, Q4_K, Q5_K; in any case), the mixture
// llama.cpp's quantize tool makes of it; with pure (its --pure) the
// mixture's base type alone.
func parseTarget(s string, pure bool, o *llama.QuantizeOptions) error {
	m, ok := llama.ParseMixture(s)
	if !ok {
		return cli.Usagef("quantize: unknown type %q; the types are %s", s, mixtureNames())
	}
	if pure {
		o.Type = m.Base
	} else {
		o.Mixture = m
	}
	return nil
}

const quantizeAbout = `Converts the weight matrices of a GGUF model and keeps everything else.
TYPE is a llama.cpp file type, in any case, and means what it means to
llama.cpp's quantize tool (its rules for llama models): Q4_K_M is q4_K with
q6_K for the output matrix and for half of the attn_v and ffn_down
matrices (the first and the last eighth of the layers and every third one
between); Q4_0 is q4_0 with a q6_K output matrix; Q8_0 is q8_0 throughout;
Q3_K, Q4_K and Q5_K are the _M types. --pure gives every matrix TYPE's
base type (IQ2_S's is iq2_xs, IQ2_M's iq2_s, IQ3_XS's and IQ3_M's iq3_s).
Rows that are not a whole number of blocks get a wider type. Tensors
already quantized are refused unless --allow-requantize (quantizing twice
loses quality). The output file appears atomically.

types: ` // + the list

// quantizeCmd: ggml quantize [flags] IN.gguf OUT.gguf TYPE [THREADS]
func quantizeCmd(args []string) error {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	imatrix := fs.String("imatrix", "", "importance matrix file (llama.cpp imatrix .dat format)")
	outType := fs.String("output-tensor-type", "", "ggml type of output.weight (default: the TYPE's rule)")
	embType := fs.String("token-embedding-type", "", "ggml type of token_embd.weight (default: the TYPE's rule)")
	pure := fs.Bool("pure", false, "no mixture: every matrix gets TYPE's base type")
	requant := fs.Bool("allow-requantize", false, "convert tensors that are already quantized (quality is lost)")
	threads := fs.Int("t", 0, "threads (0 or negative: all CPUs; more than the CPUs: capped)")
	help, err := parseFlags(fs, args, "quantize [flags] IN.gguf OUT.gguf TYPE [THREADS]", quantizeAbout+mixtureNames())
	if help || err != nil {
		return err
	}
	if fs.NArg() < 3 || fs.NArg() > 4 {
		return cli.Usagef("quantize: IN.gguf OUT.gguf TYPE expected (ggml quantize -h for help)")
	}
	in, out := fs.Arg(0), fs.Arg(1)
	o := llama.QuantizeOptions{AllowRequantize: *requant}
	if err := parseTarget(fs.Arg(2), *pure, &o); err != nil {
		return err
	}
	n := *threads
	if fs.NArg() == 4 {
		if n, err = strconv.Atoi(fs.Arg(3)); err != nil {
			return cli.Usagef("quantize: THREADS %q is not a number", fs.Arg(3))
		}
	}
	o.Threads = cli.Threads(n, func(msg string) { fmt.Fprintln(os.Stderr, "warning:", msg) })
	for _, x := range []struct {
		flag string
		dst  *ggml.Type
	}{{*outType, &o.OutputType}, {*embType, &o.EmbdType}} {
		if x.flag != "" {
			if *x.dst, err = parseQuantType(x.flag); err != nil {
				return err
			}
		}
	}
	if *imatrix != "" {
		if o.Imatrix, err = llama.ReadImatrix(*imatrix); err != nil {
			return err
		}
	}
	if err := cli.CheckFile(in); err != nil {
		return err
	}
	start := time.Now()
	if isTerminal(os.Stderr) {
		o.Progress = func(i, n int, name string) { progressBar(i, n, name) }
	}
	st, err := llama.QuantizeFile(in, out, o)
	if o.Progress != nil {
		fmt.Fprintln(os.Stderr)
	}
	if err != nil {
		if errors.Is(err, llama.ErrRequantize) {
			err = fmt.Errorf("%w (or --allow-requantize)", err)
		}
		return err
	}
	name := o.Type.String()
	if o.Mixture.Name != "" {
		name = o.Mixture.Name
	}
	var tally []string
	for _, t := range slices.Sorted(maps.Keys(st.Types)) {
		tally = append(tally, fmt.Sprintf("%s %d", t, st.Types[t]))
	}
	fmt.Fprintf(os.Stderr, "quantize: %s -> %s (%s): %d tensors, %d converted (%d to a wider type); %s\n",
		in, out, name, st.Tensors, st.Quantized, st.Fallbacks, strings.Join(tally, ", "))
	fmt.Fprintf(os.Stderr, "quantize: size %.2f MiB -> %.2f MiB, %.2f bits per weight, in %v\n",
		float64(st.BytesIn)/(1<<20), float64(st.BytesOut)/(1<<20), st.BitsPerWeight(), time.Since(start).Round(time.Millisecond))
	return nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func progressBar(i, n int, name string) {
	const width = 30
	done := width * i / max(n, 1)
	if len(name) > 40 {
		name = name[:40]
	}
	fmt.Fprintf(os.Stderr, "\r[%s%s] %d/%d %-40s", strings.Repeat("#", done), strings.Repeat(".", width-done), i, n, name)
}

// trainLlamaCmd trains a small llama model on a text (the shipped Opticks by
// default) and saves it as GGUF with its tokenizer.
func trainLlamaCmd(args []string) error {
	fs := flag.NewFlagSet("train-llama", flag.ContinueOnError)
	out := fs.String("o", filepath.Join("models", "opticks.gguf"), "output model file")
	textFile := fs.String("text", "", "training text (UTF-8; default: the shipped Opticks extract)")
	vocab := fs.Int("vocab", 384, "vocabulary size (SentencePiece-style, byte-pair merges; <= 300: characters)")
	embd := fs.Int("embd", 96, "embedding length")
	layers := fs.Int("layers", 3, "transformer blocks")
	heads := fs.Int("heads", 4, "attention heads")
	kvHeads := fs.Int("kv-heads", 0, "K/V heads (0: heads)")
	ff := fs.Int("ff", 256, "feed-forward length")
	seq := fs.Int("ctx", 64, "training sequence length (the model's context length)")
	batch := fs.Int("batch", 16, "sequences per step")
	steps := fs.Int("steps", 1000, "optimizer steps")
	lr := fs.Float64("lr", 3e-3, "peak learning rate")
	decay := fs.Float64("wd", 0.01, "AdamW weight decay")
	threads := fs.Int("t", 0, "threads (0 or negative: all CPUs; more than the CPUs: capped)")
	seed := fs.Uint64("seed", 1, "random seed")
	tied := fs.Bool("tied", false, "tie the output projection to the token embeddings")
	help, err := parseFlags(fs, args, "train-llama [-o OUT.gguf] [flags]",
		"Trains a small llama model (its own vocabulary, autodiff and AdamW) on a text and saves it as GGUF.\n"+
			"The model's context is -ctx positions: the runner stops generating there.")
	if help || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := positive("train-llama", intFlag{"embd", *embd}, intFlag{"layers", *layers}, intFlag{"heads", *heads},
		intFlag{"ff", *ff}, intFlag{"ctx", *seq}, intFlag{"batch", *batch}, intFlag{"steps", *steps}); err != nil {
		return err
	}
	if *kvHeads < 0 || *vocab < 0 || !(*lr > 0) || math.IsInf(*lr, 0) || !(*decay >= 0) || math.IsInf(*decay, 0) {
		return cli.Usagef("train-llama: -kv-heads and -vocab must be >= 0, -lr > 0 and -wd >= 0 (finite)")
	}
	if *embd%*heads != 0 || *kvHeads > 0 && *heads%*kvHeads != 0 {
		return cli.Usagef("train-llama: -embd %d must be a multiple of -heads %d, and -heads of -kv-heads %d", *embd, *heads, *kvHeads)
	}
	if (*embd / *heads)%2 != 0 {
		return cli.Usagef("train-llama: -embd %d / -heads %d: the head size must be even (rotary embeddings turn pairs)", *embd, *heads)
	}
	*threads = cli.Threads(*threads, func(msg string) { fmt.Fprintln(os.Stderr, "warning:", msg) })
	text := corpus.Opticks
	if *textFile != "" {
		b, err := os.ReadFile(*textFile)
		if err != nil {
			return err
		}
		text = string(b)
	}
	t0 := time.Now()
	v, err := llama.TrainVocab(text, *vocab, 4)
	if err != nil {
		return err
	}
	ids := v.Tokenize(text, false, false)
	fmt.Fprintf(os.Stderr, "vocabulary: %d tokens in %v; text: %d bytes = %d tokens\n",
		v.Size(), time.Since(t0).Round(time.Millisecond), len(text), len(ids))
	h := llama.Hparams{NEmbd: *embd, NLayer: *layers, NHead: *heads, NHeadKV: *kvHeads, NFF: *ff, NCtxTrain: *seq}
	m, err := llama.NewModel(h, v, llama.ModelOptions{Tied: *tied, Seed: *seed})
	if err != nil {
		return err
	}
	defer m.Close()
	params := 0
	for _, t := range []*ggml.Tensor{m.TokEmbd, m.Output, m.OutNorm} {
		params += t.NElements()
	}
	if *tied {
		params -= m.TokEmbd.NElements()
	}
	for _, L := range m.Layers {
		for _, t := range []*ggml.Tensor{L.AttnNorm, L.Wq, L.Wk, L.Wv, L.Wo, L.FFNNorm, L.WGate, L.WUp, L.WDown} {
			params += t.NElements()
		}
	}
	fmt.Fprintf(os.Stderr, "model: %d parameters (%d layers, embd %d, ff %d, %d heads)\n", params, *layers, *embd, *ff, *heads)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	avg := float32(0)
	err = llama.Train(ctx, m, ids, llama.TrainOptions{
		Seq: *seq, Batch: *batch, Steps: *steps, LR: float32(*lr), Decay: float32(*decay), Seed: *seed, Threads: *threads,
		OnStep: func(step int, loss float32) error {
			if step == 0 {
				avg = loss
			}
			avg = 0.95*avg + 0.05*loss
			if step%50 == 0 || step == *steps-1 {
				el := time.Since(start)
				fmt.Fprintf(os.Stderr, "step %5d/%d  loss %.3f (avg %.3f)  %.0f ms/step\n", step+1, *steps, loss, avg,
					float64(el.Milliseconds())/float64(step+1))
			}
			return nil
		},
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if dir := filepath.Dir(*out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := m.Save(*out, "opticks-"+strconv.Itoa(params/1000)+"k"); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s after %v\n", *out, time.Since(start).Round(time.Second))
	return nil
}
