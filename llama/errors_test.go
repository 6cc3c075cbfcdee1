package llama

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// smallModel saves a random model (character vocabulary) and returns its path.
func smallModel(t *testing.T, h Hparams, tied bool) string {
	t.Helper()
	v, err := TrainVocab("the quick brown fox jumps over the lazy dog", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(h, v, ModelOptions{Tied: tied, Seed: 5, Std: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "small.gguf")
	if err := m.Save(path, "small"); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing.gguf"), LoadOptions{}); err == nil {
		t.Error("missing file: no error")
	}
	// a vocabulary-only file: hyperparameters but no tensors
	t.Run("vocabulary-only", func(t *testing.T) {
		if _, err := Load(vocabFile(t, "ggml-vocab-llama-spm.gguf"), LoadOptions{}); err == nil ||
			!strings.Contains(err.Error(), "missing tensor") {
			t.Errorf("vocabulary-only file: %v", err)
		}
	})
	// a tensor of the wrong shape
	good := smallModel(t, Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 48, NCtxTrain: 32}, true)
	f, err := gguf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	w, err := gguf.Create(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CopyKVs(f); err != nil {
		t.Fatal(err)
	}
	for _, info := range f.Tensors() {
		data, _ := f.TensorData(info.Name)
		shape := info.Shape
		if info.Name == "blk.0.ffn_gate.weight" {
			shape = []int64{shape[1], shape[0]} // same size, transposed shape
		}
		if err := w.AddTensor(info.Name, info.Type, shape, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(bad, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "ffn_gate") {
		t.Errorf("wrong shape: %v", err)
	}
}

func TestSessionErrors(t *testing.T) {
	path := smallModel(t, Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 1, NFF: 48, NCtxTrain: 32}, false)
	m, err := Load(path, LoadOptions{Mmap: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 8, Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Eval(ctx, nil); err == nil {
		t.Error("no tokens: no error")
	}
	if _, err := s.Eval(ctx, []int32{int32(m.NVocab)}); err == nil {
		t.Error("token out of range: no error")
	}
	if _, err := s.Eval(ctx, []int32{-1}); err == nil {
		t.Error("negative token: no error")
	}
	// batches of 3: the logits of 7 tokens come from three graphs
	all, err := s.EvalAll(ctx, []int32{1, 3, 4, 5, 6, 7, 8})
	if err != nil || len(all) != 7*m.NVocab {
		t.Fatalf("EvalAll: %v, %d logits", err, len(all))
	}
	if _, err := s.Eval(ctx, []int32{1, 2}); !errors.Is(err, ErrContextFull) {
		t.Errorf("context full: %v", err)
	}
	// the same logits, one token at a time
	if err := s.Rewind(0); err != nil {
		t.Fatal(err)
	}
	for i, tok := range []int32{1, 3, 4, 5, 6, 7, 8} {
		l, err := s.Eval(ctx, []int32{tok})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(l, all[i*m.NVocab:(i+1)*m.NVocab]); d > 1e-4 {
			t.Errorf("token %d: one-by-one logits differ from batched by %g", i, d)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	s.Rewind(0)
	if _, err := s.Eval(cctx, []int32{1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := s.Generate(cctx, []int32{1}, GenerateOptions{MaxTokens: 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("Generate cancelled: %v", err)
	}
	m.Close()
	if _, err := s.Eval(ctx, []int32{1}); err == nil {
		t.Error("closed model: no error")
	}
	s.Close()
	s.Close()
	if _, err := s.Eval(ctx, []int32{1}); err == nil {
		t.Error("closed session: no error")
	}
}

func TestSampler(t *testing.T) {
	logits := []float32{0, 5, 1, 4.9, -2, 3}
	if id := NewSampler(SamplerOptions{}).Sample(logits); id != 1 {
		t.Errorf("greedy: %d", id)
	}
	// top-k 2: only 1 and 3 can come out; seeded: the same sequence twice
	draw := func() []int32 {
		s := NewSampler(SamplerOptions{Temp: 1, TopK: 2, Seed: 42})
		var out []int32
		for range 200 {
			out = append(out, s.Sample(logits))
		}
		return out
	}
	a, b := draw(), draw()
	if !equalIDs(a, b) {
		t.Error("same seed, different draws")
	}
	seen := map[int32]int{}
	for _, id := range a {
		seen[id]++
	}
	if len(seen) != 2 || seen[1] == 0 || seen[3] == 0 {
		t.Errorf("top-k 2 drew %v", seen)
	}
	// top-p 0.4 keeps only the best token here (p = 0.48)
	s := NewSampler(SamplerOptions{Temp: 1, TopP: 0.4, Seed: 1})
	for range 50 {
		if id := s.Sample(logits); id != 1 {
			t.Fatalf("top-p 0.4 drew %d", id)
		}
	}
	// no top-k, no top-p: every token can come out
	s = NewSampler(SamplerOptions{Temp: 5, Seed: 3})
	seen = map[int32]int{}
	for range 2000 {
		seen[s.Sample(logits)]++
	}
	if len(seen) != len(logits) {
		t.Errorf("temperature 5 drew %v", seen)
	}
}

func TestQuantizeOptions(t *testing.T) {
	path := smallModel(t, Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 40, NCtxTrain: 32}, false)
	out := filepath.Join(t.TempDir(), "q.gguf")
	// iq2_xxs needs an importance matrix where rows fit its blocks of 256
	wide := smallModel(t, Hparams{NEmbd: 256, NLayer: 1, NHead: 2, NFF: 256, NCtxTrain: 32}, false)
	if _, err := QuantizeFile(wide, out, QuantizeOptions{Type: ggml.TypeIQ2_XXS}); err == nil {
		t.Error("iq2_xxs without imatrix: no error")
	}
	// here every row falls back to iq4_nl, which needs none
	if _, err := QuantizeFile(path, out, QuantizeOptions{Type: ggml.TypeIQ2_XXS}); err != nil {
		t.Error(err)
	}
	if _, err := QuantizeFile(path, out, QuantizeOptions{Type: ggml.TypeQ4_0_4_4}); err == nil {
		t.Error("repacked type: no error")
	}
	st, err := QuantizeFile(path, out, QuantizeOptions{Type: ggml.TypeQ8_0, OutputType: ggml.TypeQ6_K})
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]gguf.TensorType{
		"output.weight":          gguf.TensorType(ggml.TypeQ8_0), // q6_K does not fit rows of 32: q8_0
		"blk.0.ffn_down.weight":  gguf.TensorType(ggml.TypeF16),  // rows of 40: f16
		"blk.0.attn_q.weight":    gguf.TensorType(ggml.TypeQ8_0),
		"blk.0.attn_norm.weight": gguf.TensorType(ggml.TypeF32),
	}
	for name, typ := range want {
		info, ok := f.Tensor(name)
		if !ok || info.Type != typ {
			t.Errorf("%s: %v, want %v", name, info.Type, typ)
		}
	}
	if ft, _ := f.Uint32("general.file_type"); ft != 7 {
		t.Errorf("file type %d", ft)
	}
	t.Logf("%+v", st)
	if _, err := Load(out, LoadOptions{}); err != nil {
		t.Error(err)
	}
}

// An imatrix file's counts are checked against the bytes it holds before
// anything is allocated for them: a 20-byte file declaring 2^20 entries of
// 2^24 values fails at once.
func TestReadImatrixRejectsCountsTheFileDoesNotBack(t *testing.T) {
	for _, b := range [][]byte{
		{0, 0, 0x10, 0, 1, 0, 0, 0, 'x', 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
		{1, 0, 0, 0, 1, 0, 0, 0, 'x', 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
		{1, 0, 0, 0, 0, 0x10, 0, 0, 'x', 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
	} {
		path := filepath.Join(t.TempDir(), "bad.dat")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ReadImatrix(path)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%v: no error", b)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%v: %d bytes allocated for a %d-byte file (%v)", b, grew, len(b), err)
		}
	}
}

func TestImatrixFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "im.dat")
	in := map[string][]float32{"a.weight": {1, 2, 3}, "b.weight": {0.5}}
	if err := WriteImatrix(path, in); err != nil {
		t.Fatal(err)
	}
	got, err := ReadImatrix(path)
	if err != nil || len(got) != 2 || got["a.weight"][2] != 3 || got["b.weight"][0] != 0.5 {
		t.Fatalf("%v %v", got, err)
	}
	for _, b := range [][]byte{nil, {1, 0, 0}, {1, 0, 0, 0, 100, 0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 'x', 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}} {
		if _, err := parseImatrix(strings.NewReader(string(b)), int64(len(b))); err == nil {
			t.Errorf("%v: no error", b)
		}
	}
}

// TestUnsupportedWeightType: a weight in a type without a mul_mat kernel is
// reported as an error, not by a crash.
func TestUnsupportedWeightType(t *testing.T) {
	good := smallModel(t, Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 64, NCtxTrain: 32}, false)
	f, err := gguf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, typ := range []ggml.Type{ggml.TypeQ8_1, ggml.TypeI32, ggml.TypeQ4_0_4_4} {
		bad := filepath.Join(t.TempDir(), "bad.gguf")
		w, err := gguf.Create(bad)
		if err != nil {
			t.Fatal(err)
		}
		w.CopyKVs(f)
		for _, info := range f.Tensors() {
			data, _ := f.TensorData(info.Name)
			tt := info.Type
			if info.Name == "blk.0.attn_q.weight" {
				tt = gguf.TensorType(typ)
				rs, _ := ggml.RowSize(typ, int(info.Shape[0]))
				data = make([]byte, rs*int(info.Shape[1]))
			}
			if err := w.AddTensor(info.Name, tt, info.Shape, data); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		m, err := Load(bad, LoadOptions{})
		if err != nil {
			t.Logf("%s: Load: %v", typ, err)
			continue
		}
		// refused when the graph is built or when it is computed
		s, err := m.NewSession(SessionOptions{Threads: 1, Context: 16})
		if err == nil {
			_, err = s.Eval(context.Background(), []int32{1, 2})
			s.Close()
		}
		if err == nil {
			t.Errorf("%s: no error", typ)
		} else {
			t.Logf("%s: %v", typ, err)
		}
		m.Close()
	}
}

// TestFusedWeights: the ways of loading (fused into a backend buffer,
// apart, in place in the mapping, with and without repacked projections)
// give the same logits, the repacked ones the same bits as the plain ones;
// a fused model saves its original tensors, a repacked one too; Train
// refuses fused matrices.
func TestFusedWeights(t *testing.T) {
	path := smallModel(t, Hparams{NEmbd: 64, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 96, NCtxTrain: 32}, false)
	q8 := filepath.Join(t.TempDir(), "q8.gguf")
	if _, err := QuantizeFile(path, q8, QuantizeOptions{Type: ggml.TypeQ8_0}); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{path, q8} {
		var ref []float32
		plain := map[bool][]float32{} // by NoFuse: the logits without repacking
		for _, o := range []LoadOptions{{NoRepack: true}, {NoFuse: true, NoRepack: true}, {}, {NoFuse: true}, {Mmap: true}} {
			m, err := Load(file, o)
			if err != nil {
				t.Fatal(err)
			}
			if fused := m.Layers[0].Wqkv != nil && m.Layers[0].WGateUp != nil; fused != (!o.NoFuse && !o.Mmap) {
				t.Errorf("%+v: fused %v", o, fused)
			}
			s, err := m.NewSession(SessionOptions{Threads: 2, Context: 16, Batch: 4})
			if err != nil {
				t.Fatal(err)
			}
			all, err := s.EvalAll(context.Background(), []int32{1, 5, 7, 9, 11, 3})
			if err != nil {
				t.Fatal(err)
			}
			l, err := s.Eval(context.Background(), []int32{4})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, l...)
			if !o.Mmap {
				if o.NoRepack {
					plain[o.NoFuse] = all
				} else if !slices.Equal(plain[o.NoFuse], all) {
					t.Errorf("%s %+v: repacked weights give other bits than plain ones", filepath.Base(file), o)
				}
			}
			if ref == nil {
				ref = all
			} else if d := maxAbsDiff(ref, all); d > 1e-5 {
				t.Errorf("%s %+v: logits differ from the fused load by %g", filepath.Base(file), o, d)
			}
			if o == (LoadOptions{}) {
				if file == path {
					if err := Train(context.Background(), m, []int32{1, 2, 3, 4, 5, 6, 7}, TrainOptions{Seq: 2, Batch: 1, Steps: 1}); err == nil {
						t.Error("Train accepted fused matrices")
					}
				} else if ggml.CPURepacks(ggml.TypeQ8_0) && m.Layers[0].Wqkv.Buffer().Type().Name() != "CPU_REPACK" {
					t.Error("q8_0 projections not in a CPU_REPACK buffer")
				}
				out := filepath.Join(t.TempDir(), "resaved.gguf")
				if err := m.Save(out, "resaved"); err != nil {
					t.Fatal(err)
				}
				a, _ := gguf.Open(file)
				b, _ := gguf.Open(out)
				if len(a.Tensors()) != len(b.Tensors()) {
					t.Errorf("resaved %d tensors, original %d", len(b.Tensors()), len(a.Tensors()))
				}
				for _, info := range a.Tensors() {
					da, _ := a.TensorData(info.Name)
					db, err := b.TensorData(info.Name)
					if err != nil || string(da) != string(db) {
						t.Errorf("resaved %s differs (%v)", info.Name, err)
					}
				}
				a.Close()
				b.Close()
			}
			s.Close()
			m.Close()
		}
	}
}

// rewriteModel copies the GGUF file at path with the key-values of set
// replacing (or adding to) the file's, and returns the new file's path.
func rewriteModel(t *testing.T, path string, set map[string]any) string {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := filepath.Join(t.TempDir(), "rewritten.gguf")
	w, err := gguf.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.CopyKVs(f); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if err := w.Remove(k); err != nil && !errors.Is(err, gguf.ErrNotFound) {
			t.Fatal(err)
		}
		if err := w.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, info := range f.Tensors() {
		data, err := f.TensorData(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(info.Name, info.Type, info.Shape, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// loadFails loads path expecting an error, within a deadline far beyond
// what validating a small file takes (a loader that believes the counts
// takes minutes and gigabytes), with little allocated on the way.
func loadFails(t *testing.T, path, what string) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := make(chan error, 1)
	go func() {
		m, err := Load(path, LoadOptions{})
		if err == nil {
			m.Close()
		}
		res <- err
	}()
	select {
	case err := <-res:
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: loaded without error", what)
		} else if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("%s: %d MiB allocated before the error %v", what, grew>>20, err)
		}
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: Load did not return within 60 s", what)
	}
	return nil
}

// Every count a file declares is checked against the tensors it holds
// before anything proportional to the count is allocated: a valid file of
// two layers that declares 2^24 (or 2^30) fails at once, with the tensor it
// misses; widths, head counts and the vocabulary size that disagree with
// the tensors' shapes, or with each other, fail too.
func TestLoadRejectsCountsTheTensorsDoNotBackFast(t *testing.T) {
	good := smallModel(t, Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 32}, false)
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"llama.block_count", uint32(1 << 24), "blk.2.attn_norm.weight"},
		{"llama.block_count", uint32(1 << 30), "block_count"},
		{"llama.block_count", uint64(1 << 40), "block_count"},
		{"llama.block_count", int32(-2), "block_count"},
		{"llama.block_count", uint32(3), "blk.2."},
		{"llama.embedding_length", uint32(1 << 24), "embedding_length"},
		{"llama.embedding_length", uint32(64), "embedding_length"},
		{"llama.feed_forward_length", uint32(1 << 28), "feed_forward_length"},
		{"llama.attention.head_count", uint32(1 << 20), "head count"},
		{"llama.attention.head_count", uint32(2), "head_count"},
		{"llama.attention.head_count_kv", uint32(3), "KV head count"},
		{"llama.attention.head_count_kv", uint32(4), "head_count_kv"},
		{"llama.rope.dimension_count", uint32(1 << 20), "rope dimension"},
		{"llama.vocab_size", uint32(1 << 24), "vocab_size"},
		{"llama.context_length", uint64(1 << 62), "context_length"},
		{"tokenizer.ggml.scores", []float32{1, 2}, "scores"},
	} {
		what := fmt.Sprintf("%s = %v", c.key, c.v)
		err := loadFails(t, rewriteModel(t, good, map[string]any{c.key: c.v}), what)
		if err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not name %q", what, err, c.want)
		}
	}
	// a special token id past the vocabulary keeps the default, as in
	// llama.cpp (which warns): no size follows from it
	mb, err := Load(rewriteModel(t, good, map[string]any{"tokenizer.ggml.bos_token_id": uint32(1 << 30)}), LoadOptions{})
	if err != nil {
		t.Fatalf("bos_token_id past the vocabulary: %v", err)
	}
	if bos := mb.Vocab.BOS; bos < 0 || int(bos) >= mb.NVocab {
		t.Errorf("bos_token_id past the vocabulary: BOS %d, want the default", bos)
	}
	mb.Close()
	// a training context far beyond the tensors is no size the loader
	// allocates: the model loads, and sessions default to 2048 positions
	m, err := Load(rewriteModel(t, good, map[string]any{"llama.context_length": uint32(1 << 30)}), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ContextSize() != 2048 {
		t.Errorf("default context %d, want 2048", s.ContextSize())
	}
}
