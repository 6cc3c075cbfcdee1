package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/corpus"
	"github.com/ggml-go/ggml/internal/llamacli"
	"github.com/ggml-go/ggml/llama"
)

// runCmd runs a llama model (the same program as examples/llama).
func runCmd(args []string) error {
	return llamacli.Run("ggml run", args, os.Stdout, os.Stderr)
}

// parseQuantType accepts ggml type names (q4_K, q8_0, ...) in any case and
// llama.cpp's file type names (Q4_K_M, Q5_K_S, ...: the mix suffix is
// ignored: every matrix gets the base type).
func parseQuantType(s string) (ggml.Type, error) {
	name := strings.ToLower(s)
	for _, suf := range []string{"_m", "_s", "_l"} {
		if strings.HasSuffix(name, suf) && strings.Contains(name, "_k") {
			name = strings.TrimSuffix(name, suf)
		}
	}
	for t := ggml.Type(0); t < ggml.TypeCount; t++ {
		if t.BlockSize() > 0 && strings.EqualFold(t.String(), name) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown type %q", s)
}

// quantizeCmd: ggml quantize [flags] IN.gguf OUT.gguf TYPE [THREADS]
func quantizeCmd(args []string) error {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	imatrix := fs.String("imatrix", "", "importance matrix file (llama.cpp imatrix .dat format)")
	outType := fs.String("output-tensor-type", "", "type of output.weight (default: TYPE)")
	embType := fs.String("token-embedding-type", "", "type of token_embd.weight (default: TYPE)")
	threads := fs.Int("t", 0, "threads (0: all CPUs)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: ggml quantize [flags] IN.gguf OUT.gguf TYPE [THREADS]\n\n"+
			"Converts the weight matrices of a GGUF model to TYPE (q8_0, q4_0, q4_K, q5_K, q6_K, iq4_nl, ...;\n"+
			"llama.cpp names such as Q4_K_M are accepted), keeps everything else; rows that are not a\n"+
			"whole number of blocks get a wider type. The output file appears atomically.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 3 || fs.NArg() > 4 {
		fs.Usage()
		return errors.New("quantize: IN.gguf OUT.gguf TYPE expected")
	}
	in, out := fs.Arg(0), fs.Arg(1)
	var o llama.QuantizeOptions
	var err error
	if o.Type, err = parseQuantType(fs.Arg(2)); err != nil {
		return err
	}
	o.Threads = *threads
	if fs.NArg() == 4 {
		if o.Threads, err = strconv.Atoi(fs.Arg(3)); err != nil {
			return fmt.Errorf("quantize: threads: %v", err)
		}
	}
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
	start := time.Now()
	if isTerminal(os.Stderr) {
		o.Progress = func(i, n int, name string) { progressBar(i, n, name) }
	}
	st, err := llama.QuantizeFile(in, out, o)
	if o.Progress != nil {
		fmt.Fprintln(os.Stderr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "quantize: %s -> %s (%s): %d tensors, %d converted (%d to a wider type), %.2f MiB -> %.2f MiB in %v\n",
		in, out, o.Type, st.Tensors, st.Quantized, st.Fallbacks, float64(st.BytesIn)/(1<<20), float64(st.BytesOut)/(1<<20),
		time.Since(start).Round(time.Millisecond))
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
	threads := fs.Int("t", 0, "threads (0: all CPUs)")
	seed := fs.Uint64("seed", 1, "random seed")
	tied := fs.Bool("tied", false, "tie the output projection to the token embeddings")
	if err := fs.Parse(args); err != nil {
		return err
	}
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
