package llamacli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/llama"
)

// `ggml embed`: the embeddings of texts as llama.cpp's llama-embedding
// prints them (its examples/embedding of the 1.3.3 era): the vectors,
// normalized as --embd-normalize says, then the cosine similarities
// between the texts; or JSON (--embd-output-format).

// prompts is a repeatable -p.
type prompts []string

func (p *prompts) String() string { return strings.Join(*p, "\n") }
func (p *prompts) Set(v string) error {
	*p = append(*p, v)
	return nil
}

// embedConfig holds embed's settings.
type embedConfig struct {
	model, file, format, sep, pooling string
	prompt                            prompts
	normalize, threads, nCtx          int
}

func defineEmbedFlags(fs *flag.FlagSet) *embedConfig {
	c := &embedConfig{}
	fs.StringVar(&c.model, "model", "", "model file (GGUF): an encoder (bert) or a decoder with --pooling")
	fs.Var(&c.prompt, "prompt", "a text to embed (repeatable; each is also split at --embd-separator)")
	fs.StringVar(&c.file, "file", "", "read the texts from this file, one per line (instead of -p)")
	fs.IntVar(&c.normalize, "embd-normalize", 2, "normalization: -1 none, 0 max absolute value to the int16 range, 1 taxicab, 2 euclidean, >2 p-norm")
	fs.StringVar(&c.format, "embd-output-format", "", "output: empty (text and the cosine similarity matrix), array, json, or json+ (json with the cosine similarities)")
	fs.StringVar(&c.sep, "embd-separator", "\n", "separator of the texts within a prompt")
	fs.StringVar(&c.pooling, "pooling", "", "pooling: none, mean, cls or last (default: the model's pooling_type)")
	fs.IntVar(&c.threads, "threads", 0, "threads (0 or negative: all CPUs)")
	fs.IntVar(&c.nCtx, "ctx-size", 0, "positions of the longest text (0: the model's trained context, at most 2048)")
	for name, short := range map[string]string{"model": "m", "prompt": "p", "file": "f", "threads": "t", "ctx-size": "c"} {
		cli.Alias(fs, name, short)
	}
	return c
}

func (c *embedConfig) validate(args []string) error {
	switch {
	case len(args) > 0:
		return cli.Usagef("unexpected argument %q: give the texts with -p (quoted)", strings.Join(args, " "))
	case c.model == "":
		return cli.Usagef("no model: give one with -m MODEL.gguf")
	case c.file != "" && len(c.prompt) > 0:
		return cli.Usagef("-f and -p both give the texts: give one")
	case c.file == "" && len(c.prompt) == 0:
		return cli.Usagef("no text: give one or more with -p, or a file of lines with -f")
	case c.normalize < -1:
		return cli.Usagef("--embd-normalize %d: -1 (none), 0 (int16 range), 1 (taxicab), 2 (euclidean) or more (p-norm)", c.normalize)
	case c.format != "" && c.format != "array" && c.format != "json" && c.format != "json+":
		return cli.Usagef("--embd-output-format %q: empty, array, json or json+", c.format)
	case c.sep == "":
		return cli.Usagef("--embd-separator: empty")
	case c.nCtx < 0 || c.nCtx > llama.MaxContext:
		return cli.Usagef("-c %d: the context size must be 0 (the model's) to %d", c.nCtx, llama.MaxContext)
	}
	if c.pooling != "" {
		if p, err := llama.ParsePooling(c.pooling); err != nil || p == llama.PoolingRank {
			return cli.Usagef("--pooling %q: none, mean, cls or last", c.pooling)
		}
	}
	return nil
}

// Embed parses args (without the program name) and prints the embeddings
// of the texts to stdout as llama-embedding does. -h prints the help; a
// bad flag is an error wrapping cli.ErrUsage.
func Embed(name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c := defineEmbedFlags(fs)
	help, err := cli.Parse(fs, args, stdout, func(w io.Writer) {
		fmt.Fprintf(w, "usage: %s -m MODEL.gguf -p TEXT [-p TEXT ...] | -f FILE [--embd-normalize N] [--embd-output-format array|json|json+] [--pooling P]\n\n"+
			"Prints the embedding of each text (one per -p, or per line of -f) as llama.cpp's llama-embedding:\n"+
			"the vectors, then the cosine similarity of every pair of texts.\n\nflags:\n", name)
		cli.PrintFlags(fs, w)
	})
	if help || err != nil {
		return err
	}
	if err := c.validate(fs.Args()); err != nil {
		return err
	}
	var texts []string
	for _, p := range c.prompt {
		texts = append(texts, strings.Split(p, c.sep)...)
	}
	if c.file != "" {
		s, err := readPrompt(c.file)
		if err != nil {
			return err
		}
		texts = strings.Split(s, c.sep)
	}
	if err := cli.CheckFile(c.model); err != nil {
		return err
	}
	m, err := llama.Load(c.model, llama.LoadOptions{})
	if err != nil {
		return err
	}
	defer m.Close()
	pooling := m.PoolingType
	if c.pooling != "" {
		pooling, _ = llama.ParsePooling(c.pooling)
	}
	threads := cli.Threads(c.threads, func(msg string) { fmt.Fprintln(stderr, "warning:", msg) })
	s, err := m.NewSession(llama.SessionOptions{Threads: threads, Context: c.nCtx})
	if err != nil {
		return err
	}
	defer s.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var embs [][]float32
	for i, text := range texts {
		toks := m.Tokenize(text, true)
		if len(toks) == 0 {
			return fmt.Errorf("text %d (%q) has no tokens", i+1, text)
		}
		if sep := m.Vocab.SEP; sep >= 0 && toks[len(toks)-1] != sep {
			fmt.Fprintf(stderr, "warning: text %d does not end with the SEP token (tokenizer.ggml.add_eos_token should be true)\n", i+1)
		}
		if pooling == llama.PoolingNone {
			rows, err := s.TokenEmbeddings(ctx, toks)
			if err != nil {
				return fmt.Errorf("text %d: %w", i+1, err)
			}
			for _, r := range rows {
				embs = append(embs, llama.Normalize(r, c.normalize))
			}
			continue
		}
		e, err := s.PooledEmbeddings(ctx, toks, pooling)
		if err != nil {
			return fmt.Errorf("text %d: %w", i+1, err)
		}
		embs = append(embs, llama.Normalize(e, c.normalize))
	}
	if c.format == "" {
		printEmbeddings(stdout, embs, texts, c.normalize, pooling == llama.PoolingNone)
	} else {
		printEmbeddingsJSON(stdout, embs, len(texts), c.normalize, c.format)
	}
	return nil
}

// embdValue formats one value as llama-embedding does: integers after
// normalization 0, else 6 decimals (width 9).
func embdValue(v float32, norm int) string {
	if norm == 0 {
		return fmt.Sprintf("%6.0f ", v)
	}
	return fmt.Sprintf("%9.6f ", v)
}

// printEmbeddings is llama-embedding's text output: per text its vector
// (all of it for one text, the first 16 values for several; per token the
// first and last 3 without pooling), then for several texts the matrix of
// their cosine similarities.
func printEmbeddings(w io.Writer, embs [][]float32, texts []string, norm int, perToken bool) {
	fmt.Fprintln(w)
	for j, e := range embs {
		fmt.Fprintf(w, "embedding %d: ", j)
		if perToken {
			for _, v := range e[:min(3, len(e))] {
				fmt.Fprint(w, embdValue(v, norm))
			}
			fmt.Fprint(w, " ... ")
			for _, v := range e[max(len(e)-3, 0):] {
				fmt.Fprint(w, embdValue(v, norm))
			}
		} else {
			n := len(e)
			if len(embs) > 1 {
				n = min(16, n)
			}
			for _, v := range e[:n] {
				fmt.Fprint(w, embdValue(v, norm))
			}
		}
		fmt.Fprintln(w)
	}
	if perToken || len(embs) < 2 {
		return
	}
	fmt.Fprint(w, "\ncosine similarity matrix:\n\n")
	for _, t := range texts {
		fmt.Fprintf(w, "%6.6s ", t)
	}
	fmt.Fprintln(w)
	for i := range embs {
		for j := range embs {
			fmt.Fprintf(w, "%6.2f ", llama.CosineSimilarity(embs[i], embs[j]))
		}
		fmt.Fprintf(w, "%1.10s\n", texts[i])
	}
}

// printEmbeddingsJSON is llama-embedding's --embd-output-format array,
// json or json+ (json with the cosine similarities of several texts).
func printEmbeddingsJSON(w io.Writer, embs [][]float32, nTexts, norm int, format string) {
	obj := format != "array"
	if obj {
		fmt.Fprint(w, "{\n  \"object\": \"list\",\n  \"data\": [\n")
	} else {
		fmt.Fprint(w, "[")
	}
	for j, e := range embs {
		if obj {
			fmt.Fprintf(w, "    {\n      \"object\": \"embedding\",\n      \"index\": %d,\n      \"embedding\": ", j)
		}
		fmt.Fprint(w, "[")
		for i, v := range e {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			if norm == 0 {
				fmt.Fprintf(w, "%1.0f", v)
			} else {
				fmt.Fprintf(w, "%1.7f", v)
			}
		}
		if obj {
			fmt.Fprint(w, "]\n    }")
		} else {
			fmt.Fprint(w, "]")
		}
		if j < len(embs)-1 {
			if obj {
				fmt.Fprint(w, ",\n")
			} else {
				fmt.Fprint(w, ",")
			}
		}
	}
	if obj {
		fmt.Fprint(w, "\n  ]")
	} else {
		fmt.Fprint(w, "]\n")
	}
	if format == "json+" && nTexts > 1 {
		fmt.Fprint(w, ",\n  \"cosineSimilarity\": [\n")
		for i := range embs {
			fmt.Fprint(w, "    [")
			for j := range embs {
				if j > 0 {
					fmt.Fprint(w, ", ")
				}
				fmt.Fprintf(w, "%6.2f", llama.CosineSimilarity(embs[i], embs[j]))
			}
			fmt.Fprint(w, " ]")
			if i < len(embs)-1 {
				fmt.Fprint(w, ",\n")
			}
		}
		fmt.Fprint(w, "\n  ]")
	}
	if obj {
		fmt.Fprint(w, "\n}\n")
	}
}
