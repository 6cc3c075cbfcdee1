package llama

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/corpus"
)

// trainTiny trains a small char-level model on the shipped text for a few
// seconds and saves it in dir.
func trainTiny(t *testing.T, dir string, steps int) (string, []float32) {
	t.Helper()
	text := corpus.Opticks[:60000]
	v, err := TrainVocab(text, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	ids := v.Tokenize(text, false, false)
	m, err := NewModel(Hparams{NEmbd: 64, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 160, NCtxTrain: 64}, v, ModelOptions{Tied: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var losses []float32
	start := time.Now()
	err = Train(context.Background(), m, ids, TrainOptions{Seq: 32, Batch: 8, Steps: steps, LR: 3e-3, Seed: 1, Threads: 2,
		OnStep: func(step int, loss float32) error { losses = append(losses, loss); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("vocab %d tokens, text %d tokens, %d steps in %v: loss %.3f -> %.3f",
		v.Size(), len(ids), steps, time.Since(start).Round(time.Millisecond), losses[0], losses[len(losses)-1])
	path := filepath.Join(dir, "tiny.gguf")
	if err := m.Save(path, "tiny-opticks"); err != nil {
		t.Fatal(err)
	}
	return path, losses
}

// greedyRun evaluates prompt (all logits) and generates n tokens greedily
// with an f32 KV cache.
func greedyRun(t *testing.T, path string, prompt []int32, n int) (gen []int32, last []float32) {
	t.Helper()
	m, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Threads: 2, Context: len(prompt) + n + 1, F32KV: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	all, err := s.EvalAll(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	last = all[(len(prompt)-1)*m.NVocab:]
	logits := last
	for range n {
		id := Greedy(logits)
		gen = append(gen, id)
		if logits, err = s.Eval(ctx, []int32{id}); err != nil {
			t.Fatal(err)
		}
	}
	return gen, last
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// TestEndToEnd trains a tiny model on the shipped text, saves it, quantizes
// it, runs every file with the Go runner and, when a C compiler is there,
// with the C runner built against csrc, and compares greedy tokens and the
// last prompt position's logits.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	path, losses := trainTiny(t, dir, 80)
	if !(losses[len(losses)-1] < losses[0]*0.75) {
		t.Errorf("training loss did not fall enough: %.3f -> %.3f", losses[0], losses[len(losses)-1])
	}
	m, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prompt := m.Tokenize("The Light of the Sun", true)
	if prompt[0] != m.Vocab.BOS || m.Detokenize(prompt) != "The Light of the Sun" {
		t.Fatalf("prompt round trip: %v -> %q", prompt, m.Detokenize(prompt))
	}
	// sampled generation through the public API
	s, err := m.NewSession(SessionOptions{Threads: 2, Context: 64})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Generate(context.Background(), prompt, GenerateOptions{MaxTokens: 24, IgnoreEOG: true,
		Sampler: SamplerOptions{Temp: 0.8, TopK: 20, TopP: 0.9, Seed: 7}})
	if err != nil || len(st.Tokens) != 24 || st.GenEvals != 23 {
		t.Fatalf("Generate: %v, %d tokens, %d evals", err, len(st.Tokens), st.GenEvals)
	}
	t.Logf("sampled: %q", m.Detokenize(st.Tokens))
	s.Close()
	m.Close()

	const nGen = 16
	files := map[string]string{"f32": path}
	for _, typ := range []ggml.Type{ggml.TypeQ8_0, ggml.TypeQ4_0, ggml.TypeQ4_K} {
		out := filepath.Join(dir, "tiny-"+typ.String()+".gguf")
		qs, err := QuantizeFile(path, out, QuantizeOptions{Type: typ, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if typ == ggml.TypeQ4_K && qs.Fallbacks != qs.Quantized {
			t.Errorf("q4_K: rows of 64 and 160 need the fallback type: %+v", qs)
		}
		files[typ.String()] = out
	}
	var crun string
	for _, name := range []string{"f32", "q8_0", "q4_0", "q4_K"} {
		gen, last := greedyRun(t, files[name], prompt, nGen)
		m, _ := Load(files[name], LoadOptions{})
		t.Logf("%-5s greedy: %q", name, m.Detokenize(gen))
		m.Close()
		if crun == "" {
			crun = cRunner(t)
		}
		c := runC(t, crun, files[name], prompt, nGen)
		if !equalIDs(gen, c.gen) {
			t.Errorf("%s: Go tokens %v, C tokens %v", name, gen, c.gen)
		}
		d := maxAbsDiff(last, c.logits)
		t.Logf("%-5s tokens agree with the C runner; last logits max |diff| %.3g", name, d)
		if d > 1e-4 {
			t.Errorf("%s: last logits differ from the C runner by %g", name, d)
		}
	}
}

// TestWeightTypes quantizes a random model whose rows fit every block size
// to each type with a kernel and checks the Go runner against the C runner.
func TestWeightTypes(t *testing.T) {
	v, err := TrainVocab(corpus.Opticks[:20000], 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(Hparams{NEmbd: 256, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 512, NCtxTrain: 64}, v,
		ModelOptions{Seed: 3, Std: 0.08})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "rand-f32.gguf")
	if err := m.Save(path, "random"); err != nil {
		t.Fatal(err)
	}
	m.Close()
	// an importance matrix (uniform but for a ramp) for the types that need one
	im := map[string][]float32{}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range f.Tensors() {
		w := make([]float32, info.Shape[0])
		for i := range w {
			w[i] = 1 + float32(i%7)
		}
		im[info.Name] = w
	}
	f.Close()
	crun := cRunner(t)
	prompt := v.Tokenize("Of the Refractions of Light", true, false)
	const nGen = 12
	types := []ggml.Type{ggml.TypeF32, ggml.TypeF16, ggml.TypeBF16, ggml.TypeQ8_0, ggml.TypeQ4_0, ggml.TypeQ4_1,
		ggml.TypeQ5_0, ggml.TypeQ5_1, ggml.TypeQ2_K, ggml.TypeQ3_K, ggml.TypeQ4_K, ggml.TypeQ5_K, ggml.TypeQ6_K,
		ggml.TypeIQ4_NL, ggml.TypeIQ4_XS, ggml.TypeTQ1_0, ggml.TypeTQ2_0, ggml.TypeIQ2_XXS}
	if os.Getenv("LLAMA_TEST_ALL_TYPES") != "" {
		// the other importance-matrix types: their quantizers take a second or more each
		types = append(types, ggml.TypeIQ2_XS, ggml.TypeIQ2_S, ggml.TypeIQ3_XXS, ggml.TypeIQ3_S, ggml.TypeIQ1_S, ggml.TypeIQ1_M)
	} else {
		t.Log("LLAMA_TEST_ALL_TYPES=1 adds iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m")
	}
	for _, typ := range types {
		file := path
		if typ != ggml.TypeF32 {
			file = filepath.Join(dir, "rand-"+typ.String()+".gguf")
			qs, err := QuantizeFile(path, file, QuantizeOptions{Type: typ, Threads: 2, Imatrix: im})
			if err != nil {
				t.Fatal(err)
			}
			if qs.Fallbacks != 0 || qs.Quantized != 2+7*2 {
				t.Errorf("%s: %+v", typ, qs)
			}
		}
		gen, last := greedyRun(t, file, prompt, nGen)
		c := runC(t, crun, file, prompt, nGen)
		d := maxAbsDiff(last, c.logits)
		t.Logf("%-6s Go %v C %v; last logits max |diff| %.3g", typ, gen, c.gen, d)
		if !equalIDs(gen, c.gen) {
			t.Errorf("%s: tokens differ", typ)
		}
		if d > 1e-4 {
			t.Errorf("%s: last logits differ by %g", typ, d)
		}
	}
}
