package llama

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/require"
)

// tinyBERT writes a bert file of random f32 weights (embd 32, 2 heads, ff
// 48, 2 layers, 16 positions, 40 tokens, no tokenizer) with the given
// pooling type.
func tinyBERT(t *testing.T, pooling Pooling) string {
	return tinyEncoder(t, "bert", pooling)
}

// tinyEncoder is tinyBERT for the architecture arch (bert, nomic-bert or
// jina-bert-v2, with every optional tensor).
func tinyEncoder(t *testing.T, arch string, pooling Pooling) string {
	t.Helper()
	const e, ff, layers, ctx, vocab = 32, 48, 2, 16, 40
	path := filepath.Join(t.TempDir(), arch+".gguf")
	w, err := gguf.Create(path)
	require.NoError(t, err)
	defer w.Abort()
	require.NoError(t, w.SetString("general.architecture", arch))
	for k, v := range map[string]uint32{"context_length": ctx, "embedding_length": e, "block_count": layers,
		"feed_forward_length": ff, "attention.head_count": 2, "pooling_type": uint32(pooling)} {
		require.NoError(t, w.SetUint32(arch+"."+k, v))
	}
	require.NoError(t, w.Set(arch+".attention.layer_norm_epsilon", float32(1e-12)))
	require.NoError(t, w.Set(arch+".attention.causal", false))
	require.NoError(t, w.SetUint32("tokenizer.ggml.token_type_count", 2))
	require.NoError(t, w.SetString("tokenizer.ggml.model", "no_vocab"))
	require.NoError(t, w.SetUint32(arch+".vocab_size", vocab))
	rng := rand.New(rand.NewPCG(7, 8))
	add := func(name string, mean, std float64, shape ...int64) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(mean + std*rng.NormFloat64())
		}
		require.NoError(t, w.AddTensor(name, gguf.TensorF32, shape, v))
	}
	norm := func(name string) {
		add(name+".weight", 1, 0.1, e)
		add(name+".bias", 0, 0.1, e)
	}
	add("token_embd.weight", 0, 0.5, e, vocab)
	add("token_types.weight", 0, 0.5, e, 2)
	if arch == "bert" {
		add("position_embd.weight", 0, 0.5, e, ctx)
	}
	if arch == "jina-bert-v2" {
		add("cls.weight", 0, 0.2, e, 1)
		add("cls.bias", 0, 0.1, 1)
	}
	norm("token_embd_norm")
	for l := range layers {
		p := "blk." + string(rune('0'+l)) + "."
		if arch == "nomic-bert" {
			add(p+"attn_qkv.weight", 0, 0.2, e, 3*e)
			add(p+"attn_output.weight", 0, 0.2, e, e)
		} else {
			for _, m := range []string{"attn_q", "attn_k", "attn_v", "attn_output"} {
				add(p+m+".weight", 0, 0.2, e, e)
				add(p+m+".bias", 0, 0.1, e)
			}
		}
		if arch == "jina-bert-v2" {
			norm(p + "attn_q_norm")
			norm(p + "attn_k_norm")
			norm(p + "attn_norm_2")
		}
		norm(p + "attn_output_norm")
		add(p+"ffn_up.weight", 0, 0.2, e, ff)
		if arch == "bert" {
			add(p+"ffn_up.bias", 0, 0.1, ff)
		} else {
			add(p+"ffn_gate.weight", 0, 0.2, e, ff)
		}
		add(p+"ffn_down.weight", 0, 0.2, ff, e)
		if arch != "nomic-bert" {
			add(p+"ffn_down.bias", 0, 0.1, e)
		}
		norm(p + "layer_output_norm")
	}
	require.NoError(t, w.Close())
	return path
}

// The three encoders' mean-pooled embedding of a few tokens is llama.cpp
// 1.3.3's for the same files (testdata/encoders-llamacpp.json: the files
// tinyEncoder writes are made the same way every time), with the fused
// (default) and the mapped load, at 1 and 2 threads.
func TestEncodersMatchLlamaCpp(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "encoders-llamacpp.json"))
	require.NoError(t, err)
	var ref map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &ref))
	var toks []int32
	require.NoError(t, json.Unmarshal(ref["tokens"], &toks))
	for _, arch := range []string{"bert", "nomic-bert", "jina-bert-v2"} {
		t.Run(arch, func(t *testing.T) {
			var want []float32
			require.NoError(t, json.Unmarshal(ref[arch], &want))
			path := tinyEncoder(t, arch, PoolingMean)
			for _, opts := range []LoadOptions{{}, {Mmap: true}} {
				m, err := Load(path, opts)
				require.NoError(t, err)
				defer m.Close()
				for _, threads := range []int{1, 2} {
					s, err := m.NewSession(SessionOptions{Threads: threads})
					require.NoError(t, err)
					got, err := s.Embeddings(context.Background(), toks)
					s.Close()
					require.NoError(t, err)
					cos := CosineSimilarity(got, want)
					t.Logf("mmap %v, %d threads: cosine %.9f, nmse %.3g", opts.Mmap, threads, cos, nmse(got, want))
					require.GreaterOrEqual(t, cos, 0.9999, "mmap %v, %d threads", opts.Mmap, threads)
					require.Less(t, nmse(got, want), 1e-8, "mmap %v, %d threads", opts.Mmap, threads)
				}
			}
		})
	}
}

// nomic-bert and jina-bert-v2 have no position embeddings: their
// positions come from rope and from ALiBi, so that the mean over a
// sequence changes when its tokens are reordered (it would not without
// positions); their vectors are finite and the mapped load agrees.
func TestEncoderPositions(t *testing.T) {
	ctx := context.Background()
	for _, arch := range []string{"nomic-bert", "jina-bert-v2"} {
		t.Run(arch, func(t *testing.T) {
			path := tinyEncoder(t, arch, PoolingMean)
			_, s := bertSession(t, path, LoadOptions{})
			a, err := s.Embeddings(ctx, []int32{1, 5, 9, 13, 2})
			require.NoError(t, err)
			b, err := s.Embeddings(ctx, []int32{1, 13, 9, 5, 2})
			require.NoError(t, err)
			require.Less(t, CosineSimilarity(a, b), 0.99999)
			for _, v := range a {
				require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0))
			}
			_, sm := bertSession(t, path, LoadOptions{Mmap: true})
			c, err := sm.Embeddings(ctx, []int32{1, 5, 9, 13, 2})
			require.NoError(t, err)
			require.InDeltaSlice(t, a, c, 1e-5)
		})
	}
}

func bertSession(t *testing.T, path string, opts LoadOptions) (*Model, *Session) {
	t.Helper()
	m, err := Load(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	s, err := m.NewSession(SessionOptions{Threads: 2})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return m, s
}

// The pooled embeddings are the per-token output pooled as the file says;
// the fused Q/K/V of a normal load and the separate matrices of a mapped
// one give the same vectors.
func TestBertPooling(t *testing.T) {
	path := tinyBERT(t, PoolingMean)
	m, s := bertSession(t, path, LoadOptions{})
	require.Equal(t, PoolingMean, m.PoolingType)
	require.False(t, m.Causal)
	ctx := context.Background()
	toks := []int32{1, 5, 9, 13, 2}
	rows, err := s.TokenEmbeddings(ctx, toks)
	require.NoError(t, err)
	require.Len(t, rows, len(toks))
	mean, err := s.Embeddings(ctx, toks)
	require.NoError(t, err)
	for i := range mean {
		var sum float64
		for _, r := range rows {
			sum += float64(r[i])
		}
		require.InDelta(t, sum/float64(len(rows)), mean[i], 1e-5)
	}
	cls, err := s.PooledEmbeddings(ctx, toks, PoolingCLS)
	require.NoError(t, err)
	require.Equal(t, rows[0], cls)
	last, err := s.PooledEmbeddings(ctx, toks, PoolingLast)
	require.NoError(t, err)
	require.Equal(t, rows[len(rows)-1], last)

	// non-causal: the first token's vector depends on the tokens after it
	other, err := s.TokenEmbeddings(ctx, []int32{1, 5, 9, 13, 3})
	require.NoError(t, err)
	require.NotEqual(t, rows[0], other[0])

	_, sm := bertSession(t, path, LoadOptions{Mmap: true})
	mapped, err := sm.Embeddings(ctx, toks)
	require.NoError(t, err)
	require.InDeltaSlice(t, mean, mapped, 1e-5)
}

// An encoder has no KV cache: Eval and Generate say to use Embeddings;
// inputs past the position embeddings, empty or out of the vocabulary are
// errors.
func TestBertSessionErrors(t *testing.T) {
	m, s := bertSession(t, tinyBERT(t, PoolingCLS), LoadOptions{})
	ctx := context.Background()
	_, err := s.Eval(ctx, []int32{1, 2})
	require.ErrorContains(t, err, "encoder")
	require.ErrorContains(t, err, "Embeddings")
	_, err = s.Generate(ctx, []int32{1, 2}, GenerateOptions{MaxTokens: 2})
	require.ErrorContains(t, err, "Embeddings")
	kv, _ := s.Memory()
	require.Zero(t, kv)
	require.NoError(t, s.Rewind(0))

	_, err = s.Embeddings(ctx, nil)
	require.ErrorContains(t, err, "no tokens")
	_, err = s.Embeddings(ctx, []int32{40})
	require.ErrorContains(t, err, "out of range")
	_, err = s.Embeddings(ctx, make([]int32, 17))
	require.ErrorIs(t, err, ErrContextFull)
	long, err := m.NewSession(SessionOptions{Threads: 1, Context: 32})
	require.NoError(t, err)
	defer long.Close()
	_, err = long.Embeddings(ctx, make([]int32, 17))
	require.ErrorContains(t, err, "position embeddings for 16")
	_, err = s.PooledEmbeddings(ctx, []int32{1}, PoolingRank)
	require.ErrorContains(t, err, "not supported")
	require.NoError(t, s.Close())
	_, err = s.Embeddings(ctx, []int32{1})
	require.ErrorIs(t, err, ErrClosed)
}

// A file without pooling gives per-token output only; a decoder's
// embeddings are its hidden states after the output norm, and leave its
// session empty.
func TestEmbeddingsPoolingNone(t *testing.T) {
	ctx := context.Background()
	_, s := bertSession(t, tinyBERT(t, PoolingNone), LoadOptions{})
	_, err := s.Embeddings(ctx, []int32{1, 2})
	require.ErrorIs(t, err, ErrNoPooling)
	require.ErrorContains(t, err, "per-token")
	_, err = s.TokenEmbeddings(ctx, []int32{1, 2})
	require.NoError(t, err)

	path := smallModel(t, Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 64}, false)
	m, err := Load(path, LoadOptions{})
	require.NoError(t, err)
	defer m.Close()
	ds, err := m.NewSession(SessionOptions{Threads: 2, Batch: 3})
	require.NoError(t, err)
	defer ds.Close()
	toks := []int32{1, 2, 3, 4, 5, 6, 7}
	_, err = ds.Embeddings(ctx, toks)
	require.ErrorIs(t, err, ErrNoPooling)
	rows, err := ds.TokenEmbeddings(ctx, toks) // three batches
	require.NoError(t, err)
	require.Len(t, rows, len(toks))
	require.Zero(t, ds.Pos())
	last, err := ds.PooledEmbeddings(ctx, toks, PoolingLast)
	require.NoError(t, err)
	require.InDeltaSlice(t, rows[len(rows)-1], last, 1e-5)
	// causal: the first token's vector is that of the first token alone
	one, err := ds.TokenEmbeddings(ctx, toks[:1])
	require.NoError(t, err)
	require.InDeltaSlice(t, rows[0], one[0], 1e-5)
	for _, v := range rows[3] {
		require.False(t, math.IsNaN(float64(v)))
	}
}

func TestNormalizeAndCosine(t *testing.T) {
	v := []float32{3, -4}
	require.Equal(t, []float32{3, -4}, Normalize(v, -1))
	require.InDeltaSlice(t, []float32{3 * 32760.0 / 4, -32760}, Normalize(v, 0), 1e-2)
	require.InDeltaSlice(t, []float32{3.0 / 7, -4.0 / 7}, Normalize(v, 1), 1e-6)
	require.InDeltaSlice(t, []float32{0.6, -0.8}, Normalize(v, 2), 1e-6)
	p3 := math.Cbrt(27 + 64)
	require.InDeltaSlice(t, []float32{float32(3 / p3), float32(-4 / p3)}, Normalize(v, 3), 1e-6)
	require.Equal(t, []float32{0, 0}, Normalize([]float32{0, 0}, 2))
	require.InDelta(t, 1, CosineSimilarity(v, []float32{6, -8}), 1e-12)
	require.InDelta(t, 0, CosineSimilarity(v, []float32{4, 3}), 1e-12)
	require.Equal(t, 1.0, CosineSimilarity([]float32{0}, []float32{0}))
	require.Equal(t, 0.0, CosineSimilarity([]float32{0}, []float32{1}))
	for _, p := range []Pooling{PoolingNone, PoolingMean, PoolingCLS, PoolingLast, PoolingRank} {
		q, err := ParsePooling(p.String())
		require.NoError(t, err)
		require.Equal(t, p, q)
	}
	_, err := ParsePooling("max")
	require.Error(t, err)
}

// A bert file is refused by name when it lacks a key or tensor llama.cpp
// requires, or asks for the rank pooling.
func TestBertFileErrors(t *testing.T) {
	good := tinyBERT(t, PoolingMean)
	for _, c := range []struct {
		what string
		e    archEdit
		want string
	}{
		{"missing position embeddings", archEdit{drop: map[string]bool{"position_embd.weight": true}}, "missing tensor position_embd.weight"},
		{"missing post-norm bias", archEdit{drop: map[string]bool{"blk.1.layer_output_norm.bias": true}}, "missing tensor blk.1.layer_output_norm.bias"},
		{"token types", archEdit{set: map[string]any{"tokenizer.ggml.token_type_count": uint32(3)}}, "tensor token_types.weight has shape [32 2], want [32 3]"},
		{"rank pooling", archEdit{set: map[string]any{"bert.pooling_type": uint32(4)}}, "rank"},
		{"bad pooling", archEdit{set: map[string]any{"bert.pooling_type": uint32(9)}}, "not a pooling type"},
	} {
		t.Run(c.what, func(t *testing.T) {
			err := loadFails(t, reArch(t, good, c.e), c.what)
			require.ErrorContains(t, err, c.want)
		})
	}
	// keys llama.cpp requires
	for _, key := range []string{"bert.attention.causal", "tokenizer.ggml.token_type_count"} {
		f, err := gguf.Open(good)
		require.NoError(t, err)
		out := filepath.Join(t.TempDir(), "nokey.gguf")
		w, err := gguf.Create(out)
		require.NoError(t, err)
		require.NoError(t, w.CopyKVs(f))
		require.NoError(t, w.Remove(key))
		for _, info := range f.Tensors() {
			data, err := f.TensorData(info.Name)
			require.NoError(t, err)
			require.NoError(t, w.AddTensor(info.Name, info.Type, info.Shape, data))
		}
		require.NoError(t, w.Close())
		f.Close()
		_, err = Load(out, LoadOptions{})
		require.ErrorContains(t, err, key)
		require.True(t, errors.Is(err, gguf.ErrNotFound), "%v", err)
	}
}

// Save writes an encoder's keys (token_type_count outside the bert.*
// ones) and tensors: the copy gives the same embedding.
func TestBertSaveRoundTrip(t *testing.T) {
	m, s := bertSession(t, tinyBERT(t, PoolingMean), LoadOptions{})
	ctx := context.Background()
	want, err := s.Embeddings(ctx, []int32{1, 2, 3})
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "copy.gguf")
	require.NoError(t, m.Save(out, "copy"))
	_, s2 := bertSession(t, out, LoadOptions{})
	got, err := s2.Embeddings(ctx, []int32{1, 2, 3})
	require.NoError(t, err)
	require.Equal(t, want, got)
}
