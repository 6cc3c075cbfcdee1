package llama

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/shareddata"
	"github.com/stretchr/testify/require"
)

// smallGemma writes a gemma file of 2 layers from a small tied llama: Q
// width 4 heads x 16 = 64 against an embedding of 32 (the head size from
// attention.key_length, not embd/heads), 2 KV heads.
func smallGemma(t *testing.T) string {
	t.Helper()
	base := smallModel(t, Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 64}, true)
	e := archEdit{arch: "gemma", drop: map[string]bool{}, add: map[string][]int64{},
		set: map[string]any{"gemma.attention.key_length": uint32(16), "gemma.attention.value_length": uint32(16),
			"gemma.rope.dimension_count": uint32(16)}}
	for _, l := range []string{"0", "1"} {
		for name, shape := range map[string][]int64{"attn_q.weight": {32, 64}, "attn_k.weight": {32, 32},
			"attn_v.weight": {32, 32}, "attn_output.weight": {64, 32}} {
			e.drop["blk."+l+"."+name] = true
			e.add["blk."+l+"."+name] = shape
		}
	}
	return reArch(t, base, e)
}

// f32Tensor reads an f32 tensor of a file.
func f32Tensor(t *testing.T, f *gguf.File, name string) []float64 {
	t.Helper()
	info, ok := f.Tensor(name)
	require.True(t, ok, name)
	require.Equal(t, gguf.TensorF32, info.Type, name)
	b, err := f.TensorData(name)
	require.NoError(t, err)
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out
}

// gemmaReference is llama.cpp's build_gemma written out in float64 over
// the f32 weights of path: the logits of the last of tokens.
func gemmaReference(t *testing.T, path string, tokens []int32) []float32 {
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	geti := func(k string) int { v, err := f.Int("gemma." + k); require.NoError(t, err); return int(v) }
	E, nl, nh, nkv, hd := geti("embedding_length"), geti("block_count"), geti("attention.head_count"), geti("attention.head_count_kv"), geti("attention.key_length")
	eps, err := f.Float("gemma.attention.layer_norm_rms_epsilon")
	require.NoError(t, err)
	base, err := f.Float("gemma.rope.freq_base")
	if err != nil {
		base = 10000
	}
	w := func(name string) []float64 { return f32Tensor(t, f, name) }
	// matvec: W [in, out] (ne0 = in) times x
	matvec := func(W, x []float64) []float64 {
		out := make([]float64, len(W)/len(x))
		for r := range out {
			for c, xc := range x {
				out[r] += W[r*len(x)+c] * xc
			}
		}
		return out
	}
	rms := func(x, g []float64) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+eps)
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] * s * g[i]
		}
		return out
	}
	rope := func(v []float64, p int) { // NeoX: pairs (i, i + hd/2) of each head
		for h := 0; h < len(v)/hd; h++ {
			x := v[h*hd : (h+1)*hd]
			for i := range hd / 2 {
				th := float64(p) * math.Pow(base, -2*float64(i)/float64(hd))
				c, s := math.Cos(th), math.Sin(th)
				x[i], x[i+hd/2] = x[i]*c-x[i+hd/2]*s, x[i]*s+x[i+hd/2]*c
			}
		}
	}
	gelu := func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}
	emb := w("token_embd.weight")
	n := len(tokens)
	xs := make([][]float64, n)
	for i, tok := range tokens {
		xs[i] = make([]float64, E)
		for j := range E {
			xs[i][j] = emb[int(tok)*E+j] * math.Sqrt(float64(E))
		}
	}
	for il := range nl {
		p := "blk." + string(rune('0'+il)) + "."
		wq, wk, wv, wo := w(p+"attn_q.weight"), w(p+"attn_k.weight"), w(p+"attn_v.weight"), w(p+"attn_output.weight")
		an, fn := w(p+"attn_norm.weight"), w(p+"ffn_norm.weight")
		wg, wu, wd := w(p+"ffn_gate.weight"), w(p+"ffn_up.weight"), w(p+"ffn_down.weight")
		qs, ks, vs := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		for i := range n {
			c := rms(xs[i], an)
			qs[i], ks[i], vs[i] = matvec(wq, c), matvec(wk, c), matvec(wv, c)
			rope(qs[i], i)
			rope(ks[i], i)
		}
		for i := range n {
			att := make([]float64, nh*hd)
			for h := range nh {
				kh := h / (nh / nkv)
				q := qs[i][h*hd : (h+1)*hd]
				sc := make([]float64, i+1)
				mx := math.Inf(-1)
				for j := range i + 1 {
					for d := range hd {
						sc[j] += q[d] * ks[j][kh*hd+d]
					}
					sc[j] /= math.Sqrt(float64(hd))
					mx = math.Max(mx, sc[j])
				}
				var sum float64
				for j := range sc {
					sc[j] = math.Exp(sc[j] - mx)
					sum += sc[j]
				}
				for j := range sc {
					for d := range hd {
						att[h*hd+d] += sc[j] / sum * vs[j][kh*hd+d]
					}
				}
			}
			o := matvec(wo, att)
			for j := range E {
				xs[i][j] += o[j]
			}
			c := rms(xs[i], fn)
			g, u := matvec(wg, c), matvec(wu, c)
			for j := range g {
				g[j] = gelu(g[j]) * u[j]
			}
			d := matvec(wd, g)
			for j := range E {
				xs[i][j] += d[j]
			}
		}
	}
	x := rms(xs[n-1], w("output_norm.weight"))
	logits := make([]float32, len(emb)/E)
	for v := range logits {
		var s float64
		for j := range E {
			s += emb[v*E+j] * x[j]
		}
		logits[v] = float32(s)
	}
	return logits
}

// gemma (no parity data from llama.cpp): the runner's logits are those of
// build_gemma written out in float64 (embedding x sqrt(embd), NeoX rope,
// queries scaled by 1/sqrt(key_length), GELU gate, tied output), with a Q
// width that is not the embedding length, in a batch and token by token.
func TestGemmaAgainstReference(t *testing.T) {
	path := smallGemma(t)
	m, err := Load(path, LoadOptions{})
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, 16, m.HeadDim)
	require.Equal(t, ggml.RopeTypeNeox, m.RopeType)
	require.Same(t, m.TokEmbd, m.Output)
	tokens := []int32{1, 5, 9, 3, 7, 2, 8}
	want := gemmaReference(t, path, tokens)
	for _, fa := range []bool{false, true} {
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 32, F32KV: true, FlashAttn: fa})
		require.NoError(t, err)
		got, err := s.Eval(context.Background(), tokens)
		require.NoError(t, err)
		t.Logf("batch, flash %v: nmse %.3g", fa, nmse(got, want))
		require.LessOrEqual(t, nmse(got, want), 1e-8, "batch, flash %v", fa)
		s.Close()
		s, err = m.NewSession(SessionOptions{Threads: 1, Context: 32, F32KV: true, FlashAttn: fa})
		require.NoError(t, err)
		for _, tok := range tokens {
			got, err = s.Eval(context.Background(), []int32{tok})
			require.NoError(t, err)
		}
		require.LessOrEqual(t, nmse(got, want), 1e-8, "token by token, flash %v", fa)
		s.Close()
	}
}

// What llama.cpp refuses of a gemma or gemma2 file is refused by name.
func TestGemmaRefused(t *testing.T) {
	llama := smallModel(t, Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 64}, false)
	// llama.cpp's gemma has no output.weight: a file with one is refused
	err := loadFails(t, reArch(t, llama, archEdit{arch: "gemma"}), "gemma with output.weight")
	require.ErrorContains(t, err, "unexpected tensor output.weight")
	// gemma2's layer count sets the attention scale: other counts are refused
	post := archEdit{arch: "gemma2", drop: map[string]bool{"output.weight": true}, add: map[string][]int64{}}
	for _, l := range []string{"0", "1"} {
		post.add["blk."+l+".post_attention_norm.weight"] = []int64{32}
		post.add["blk."+l+".post_ffw_norm.weight"] = []int64{32}
	}
	err = loadFails(t, reArch(t, llama, post), "gemma2 of 2 layers")
	require.ErrorContains(t, err, "gemma2 with 2 layers")

	c := gemma2Case(t)
	path := archModel(t, c)
	for _, k := range []struct {
		e    archEdit
		want string
	}{
		{archEdit{drop: map[string]bool{"blk.3.post_ffw_norm.weight": true}}, "missing tensor blk.3.post_ffw_norm.weight"},
		{archEdit{drop: map[string]bool{"blk.0.post_attention_norm.weight": true}}, "missing tensor blk.0.post_attention_norm.weight"},
		{archEdit{add: map[string][]int64{"output.weight": {64, 32000}}}, "unexpected tensor output.weight"},
		{archEdit{set: map[string]any{"gemma2.attn_logit_softcapping": float32(0)}}, "soft-capping 0 (attention)"},
		{archEdit{set: map[string]any{"gemma2.final_logit_softcapping": float32(-1)}}, "and -1 (final logits)"},
		{archEdit{set: map[string]any{"gemma2.attention.sliding_window": uint32(0)}}, "attention.sliding_window"},
	} {
		err := loadFails(t, reArch(t, path, k.e), k.want)
		require.ErrorContains(t, err, k.want)
	}
}

// gemma2Case is the gemma2 parity case (skips without the data).
func gemma2Case(t *testing.T) *archCase {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the gemma2 model is made by synth")
	}
	b, err := os.ReadFile(shareddata.Dir(t, "parity", "archs", "gemma2.json"))
	require.NoError(t, err)
	var c archCase
	require.NoError(t, json.Unmarshal(b, &c))
	return &c
}

// gemma2 with flash attention (soft-cap and sliding-window mask inside
// FlashAttnExt) gives the logits and greedy tokens of the path without, to
// rounding, in a batch and token by token past the window.
func TestGemma2FlashAttention(t *testing.T) {
	c := gemma2Case(t)
	m, err := Load(archModel(t, c), LoadOptions{})
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, 12, m.SlidingWindow)
	run := func(fa bool) ([]float32, []int32) {
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 128, FlashAttn: fa})
		require.NoError(t, err)
		defer s.Close()
		logits, err := s.Eval(context.Background(), c.PromptIDs)
		require.NoError(t, err)
		first := logits
		var gen []int32
		for range 16 {
			id := argmax(logits)
			gen = append(gen, id)
			logits, err = s.Eval(context.Background(), []int32{id})
			require.NoError(t, err)
		}
		return first, gen
	}
	l0, g0 := run(false)
	l1, g1 := run(true)
	t.Logf("flash against not: nmse %.3g", nmse(l1, l0))
	require.LessOrEqual(t, nmse(l1, l0), 1e-5)
	require.Equal(t, g0, g1)
	require.Equal(t, c.GenIDs[:16], g0)
}
