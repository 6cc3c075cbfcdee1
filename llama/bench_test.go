package llama

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/internal/corpus"
)

// The hot paths of the runner: one-token evaluation, a prompt batch,
// building a graph, sampling and tokenizing. The model is
// $LLAMA_BENCH_MODEL, or a random one (256 wide, 4 layers); threads
// $LLAMA_BENCH_THREADS (default 1).

func benchThreads() int {
	if n, err := strconv.Atoi(os.Getenv("LLAMA_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return 1
}

func benchSession(b *testing.B, ctxSize, batch int) *Session {
	b.Helper()
	path := os.Getenv("LLAMA_BENCH_MODEL")
	if path == "" {
		v, err := TrainVocab(corpus.Opticks[:20000], 0, 5)
		if err != nil {
			b.Fatal(err)
		}
		m, err := NewModel(Hparams{NEmbd: 256, NLayer: 4, NHead: 4, NFF: 768, NCtxTrain: 512}, v, ModelOptions{Seed: 1, Std: 0.05})
		if err != nil {
			b.Fatal(err)
		}
		path = filepath.Join(b.TempDir(), "bench.gguf")
		if err := m.Save(path, "bench"); err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
	m, err := Load(path, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	s, err := m.NewSession(SessionOptions{Threads: benchThreads(), Context: ctxSize, Batch: batch})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkDecode: one-token evaluations (positions 64..256, cycling).
func BenchmarkDecode(b *testing.B) {
	s := benchSession(b, 256, 64)
	ctx := context.Background()
	prompt := make([]int32, 64)
	for i := range prompt {
		prompt[i] = int32(1 + i%50)
	}
	tok := []int32{5}
	b.ResetTimer()
	for range b.N {
		if s.Pos() == s.ContextSize() || s.Pos() == 0 {
			b.StopTimer()
			s.Rewind(0)
			if _, err := s.Eval(ctx, prompt); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, err := s.Eval(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrompt: a batch of 128 tokens from position 0.
func BenchmarkPrompt(b *testing.B) {
	s := benchSession(b, 256, 128)
	ctx := context.Background()
	prompt := make([]int32, 128)
	for i := range prompt {
		prompt[i] = int32(1 + i%50)
	}
	b.ResetTimer()
	for range b.N {
		s.Rewind(0)
		if _, err := s.Eval(ctx, prompt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(prompt))/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkBuildDecode: building (not computing) a one-token graph.
func BenchmarkBuildDecode(b *testing.B) {
	s := benchSession(b, 256, 32)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx, err := s.eng.context()
		if err != nil {
			b.Fatal(err)
		}
		s.m.build(ctx, s.kv, 1, 100, 1)
	}
}

// BenchmarkSample: greedy and top-k/top-p/temperature over 32000 logits.
func BenchmarkSample(b *testing.B) {
	logits := make([]float32, 32000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	for _, c := range []struct {
		name string
		o    SamplerOptions
	}{{"greedy", SamplerOptions{}}, {"topk40-topp0.95", SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95}},
		{"topp0.95", SamplerOptions{Temp: 0.8, TopP: 0.95}}} {
		b.Run(c.name, func(b *testing.B) {
			s := NewSampler(c.o)
			b.ReportAllocs()
			for range b.N {
				s.Sample(logits)
			}
		})
	}
}

// BenchmarkTokenize: the tokenizers of the shared vocabularies on 4 KB of text.
func BenchmarkTokenize(b *testing.B) {
	text := corpus.Opticks[:4096]
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"} {
		b.Run(name, func(b *testing.B) {
			v := loadTestVocab(b, name)
			b.SetBytes(int64(len(text)))
			for range b.N {
				v.Tokenize(text, true, false)
			}
		})
	}
}

// mixedText is about 1 MB of mixed text: English prose, code, numbers,
// accented and CJK text, and runs of spaces and newlines.
func mixedText() string {
	var b strings.Builder
	extra := "func f(x int) int {\n\treturn x*31 + 7 // 12345678\n}\n" +
		"Les élèves ont étudié l'été dernier — 3,14159 ≈ π.\n" +
		"東京は日本の首都です。서울은 한국의 수도입니다. Привет, мир!\n" +
		"    indented\n\n\n  'll 've 'RE ...!!! $100.00\n"
	for b.Len() < 1<<20 {
		b.WriteString(corpus.Opticks[:min(len(corpus.Opticks), 8192)])
		b.WriteString(extra)
	}
	return b.String()
}

// BenchmarkTokenizeMixed: byte-level BPE on 1 MB of mixed text, with Llama
// 3's pre-tokenizer (a hand-written scanner) and Qwen2's (the regex
// matcher).
func BenchmarkTokenizeMixed(b *testing.B) {
	text := mixedText()
	for _, name := range []string{"ggml-vocab-llama-bpe.gguf", "ggml-vocab-qwen2.gguf"} {
		b.Run(name, func(b *testing.B) {
			v := loadTestVocab(b, name)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				v.Tokenize(text, false, false)
			}
		})
	}
}

// BenchmarkDecodeTiny: one-token evaluations of a model so small (32 wide,
// one layer, 64-token vocabulary) that the time is the runner's own per
// token: graph reuse, inputs, the Compute call, reading the logits.
func BenchmarkDecodeTiny(b *testing.B) {
	v, err := TrainVocab(corpus.Opticks[:2000], 64, 1)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewModel(Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 64, NCtxTrain: 256}, v, ModelOptions{Seed: 1, Std: 0.05})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Threads: benchThreads(), Context: 256, Batch: 64})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	tok := []int32{5}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if s.Pos() == s.ContextSize() {
			b.StopTimer()
			s.Rewind(0)
			b.StartTimer()
		}
		if _, err := s.Eval(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
