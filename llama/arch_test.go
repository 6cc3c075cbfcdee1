package llama

import (
	"context"
	"errors"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/require"
)

// archEdit is how reArch rewrites a model file.
type archEdit struct {
	arch string             // general.architecture and the <arch>.* keys renamed to it ("": unchanged)
	set  map[string]any     // keys set (after the renaming)
	drop map[string]bool    // tensors left out
	add  map[string][]int64 // f32 tensors added (random values), by shape
	fill map[string]float32 // the value of every element of an added tensor named here
}

// reArch writes a copy of the model at path changed as e says.
func reArch(t *testing.T, path string, e archEdit) string {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := filepath.Join(t.TempDir(), "edited.gguf")
	w, err := gguf.Create(out)
	require.NoError(t, err)
	defer w.Abort()
	require.NoError(t, w.CopyKVs(f))
	if old, _ := f.String("general.architecture"); e.arch != "" {
		require.NoError(t, w.Set("general.architecture", e.arch))
		for _, key := range f.Keys() {
			if rest, ok := strings.CutPrefix(key, old+"."); ok {
				v, err := f.Value(key)
				require.NoError(t, err)
				require.NoError(t, w.Remove(key))
				require.NoError(t, w.Set(e.arch+"."+rest, v))
			}
		}
	}
	for k, v := range e.set {
		_ = w.Remove(k)
		require.NoError(t, w.Set(k, v))
	}
	for _, info := range f.Tensors() {
		if e.drop[info.Name] {
			continue
		}
		data, err := f.TensorData(info.Name)
		require.NoError(t, err)
		require.NoError(t, w.AddTensor(info.Name, info.Type, info.Shape, data))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for name, shape := range e.add {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.5)
			if c, ok := e.fill[name]; ok {
				v[i] = c
			}
		}
		require.NoError(t, w.AddTensor(name, gguf.TensorF32, shape, v))
	}
	require.NoError(t, w.Close())
	return out
}

// synthModel writes a small model of synth's (../shared/tools/synth) with
// the vocabulary vocab (a file of ../shared/vocab) and synth's arguments
// args; it skips the test without the shared data.
func synthModel(t *testing.T, vocab string, args ...string) string {
	t.Helper()
	v := vocabFile(t, vocab)
	out := filepath.Join(t.TempDir(), "synth.gguf")
	args = append([]string{"-vocab", v, "-o", out}, args...)
	if b, err := exec.Command(synthTool(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("synth %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// A file of an architecture the package does not run is refused by name,
// with the supported ones listed, before its tensors are looked at.
func TestArchUnsupportedRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "falcon.gguf")
	w, err := gguf.Create(path)
	require.NoError(t, err)
	require.NoError(t, w.SetString("general.architecture", "falcon"))
	require.NoError(t, w.SetUint32("falcon.block_count", 1))
	require.NoError(t, w.AddTensor("token_embd.weight", gguf.TensorF32, []int64{4, 2}, make([]float32, 8)))
	require.NoError(t, w.Close())
	_, err = Load(path, LoadOptions{})
	require.Error(t, err)
	require.ErrorIs(t, err, ErrUnsupportedArchitecture)
	require.Contains(t, err.Error(), `architecture "falcon" is not supported (supported: `+strings.Join(SupportedArchitectures(), ", ")+")")
	require.Contains(t, SupportedArchitectures(), "llama")
	require.Contains(t, SupportedArchitectures(), "qwen2")

	// no general.architecture at all
	path = filepath.Join(t.TempDir(), "none.gguf")
	w, err = gguf.Create(path)
	require.NoError(t, err)
	require.NoError(t, w.SetUint32("llama.block_count", 1))
	require.NoError(t, w.Close())
	_, err = Load(path, LoadOptions{})
	require.ErrorContains(t, err, "general.architecture")
}

// A file whose tensors are not its architecture's list is refused with
// the first difference.
func TestArchTensorListMismatch(t *testing.T) {
	good := smallModel(t, Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 64}, false)
	for _, c := range []struct {
		what string
		e    archEdit
		want string
	}{
		{"missing required", archEdit{drop: map[string]bool{"blk.1.ffn_up.weight": true}}, "missing tensor blk.1.ffn_up.weight"},
		{"missing norm", archEdit{drop: map[string]bool{"output_norm.weight": true}}, "missing tensor output_norm.weight"},
		{"extra", archEdit{add: map[string][]int64{"blk.0.attn_q_norm.weight": {8}}}, "unexpected tensor blk.0.attn_q_norm.weight"},
		{"extra layer", archEdit{add: map[string][]int64{"blk.2.attn_norm.weight": {32}}}, "unexpected tensor blk.2.attn_norm.weight"},
		{"bias shape", archEdit{add: map[string][]int64{"blk.0.attn_k.bias": {32}}}, "tensor blk.0.attn_k.bias has shape [32], want [16]"},
		{"rope factors shape", archEdit{add: map[string][]int64{"rope_freqs.weight": {3}}}, "tensor rope_freqs.weight has shape [3], want [4]"},
		{"qwen2 without biases", archEdit{arch: "qwen2"}, "missing tensor blk.0.attn_q.bias"},
	} {
		t.Run(c.what, func(t *testing.T) {
			err := loadFails(t, reArch(t, good, c.e), c.what)
			require.ErrorContains(t, err, c.want)
		})
	}
}

// qwen2's Q/K/V biases are fused with the matrices by default: the logits
// are those of the unfused and the memory-mapped (never fused) loads. A
// llama file with one optional bias takes the path that adds the biases
// apart.
func TestArchBiasesFusedAndApart(t *testing.T) {
	h := Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 64}
	good := smallModel(t, h, false)
	qwen := archEdit{arch: "qwen2", add: map[string][]int64{}}
	for _, l := range []string{"0", "1"} {
		qwen.add["blk."+l+".attn_q.bias"] = []int64{32}
		qwen.add["blk."+l+".attn_k.bias"] = []int64{16}
		qwen.add["blk."+l+".attn_v.bias"] = []int64{16}
	}
	partial := archEdit{add: map[string][]int64{"blk.0.attn_k.bias": {16}, "blk.1.attn_output.bias": {32}, "blk.1.ffn_up.bias": {48}}}
	for name, e := range map[string]archEdit{"qwen2": qwen, "llama partial biases": partial} {
		t.Run(name, func(t *testing.T) {
			path := reArch(t, good, e)
			tokens := []int32{1, 5, 9, 3, 7, 2}
			var ref []float32
			for _, o := range []LoadOptions{{}, {NoFuse: true}, {Mmap: true}} {
				m, err := Load(path, o)
				require.NoError(t, err)
				if o == (LoadOptions{}) {
					require.NotNil(t, m.Layers[0].Wqkv)
					if name == "qwen2" {
						require.NotNil(t, m.Layers[0].Bqkv)
						require.Equal(t, ggml.RopeTypeNeox, m.RopeType)
					}
				}
				s, err := m.NewSession(SessionOptions{Threads: 1, Context: 16})
				require.NoError(t, err)
				got, err := s.EvalAll(context.Background(), tokens)
				require.NoError(t, err)
				if ref == nil {
					ref = got
				} else if e := nmse(got, ref); e > 1e-10 {
					t.Errorf("%+v: logits nmse %g against the fused load", o, e)
				}
				s.Close()
				m.Close()
			}
		})
	}
}

// The rope scaling keys as llama.cpp reads them: the factor divides the
// positions for linear and yarn, never for none; yarn turns on the
// extrapolation mix, with the original context and attention factor of
// the file.
func TestArchRopeScaling(t *testing.T) {
	good := smallModel(t, Hparams{NEmbd: 32, NLayer: 1, NHead: 4, NFF: 48, NCtxTrain: 64}, false)
	load := func(set map[string]any) (*Model, error) {
		return Load(reArch(t, good, archEdit{set: set}), LoadOptions{})
	}
	m, err := load(map[string]any{"llama.rope.scaling.type": "yarn", "llama.rope.scaling.factor": float32(4),
		"llama.rope.scaling.original_context_length": uint32(16), "llama.rope.scaling.attn_factor": float32(1.5)})
	require.NoError(t, err)
	p := m.ropeParams()
	require.Equal(t, float32(0.25), p.FreqScale)
	require.Equal(t, float32(1), p.ExtFactor)
	require.Equal(t, 16, p.NCtxOrig)
	require.Equal(t, float32(1.5), p.AttnFactor)
	m.Close()

	m, err = load(map[string]any{"llama.rope.scaling.type": "none", "llama.rope.scaling.factor": float32(4)})
	require.NoError(t, err)
	require.Equal(t, float32(1), m.ropeParams().FreqScale)
	m.Close()

	m, err = load(map[string]any{"llama.rope.scale_linear": float32(2)}) // the older key, type linear by default
	require.NoError(t, err)
	require.Equal(t, float32(0.5), m.ropeParams().FreqScale)
	require.Equal(t, float32(0), m.ropeParams().ExtFactor)
	m.Close()

	// Save keeps them
	m, err = load(map[string]any{"llama.rope.scaling.type": "yarn", "llama.rope.scaling.factor": float32(4),
		"llama.rope.scaling.original_context_length": uint32(16)})
	require.NoError(t, err)
	saved := filepath.Join(t.TempDir(), "saved.gguf")
	require.NoError(t, m.Save(saved, "yarn"))
	m2, err := Load(saved, LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, m.Hparams, m2.Hparams)
	m2.Close()
	m.Close()

	_, err = load(map[string]any{"llama.rope.scaling.type": "longrope"})
	require.ErrorContains(t, err, `rope scaling type "longrope"`)
	_, err = load(map[string]any{"llama.attention.layer_norm_rms_epsilon": "x"})
	require.ErrorContains(t, err, "layer_norm_rms_epsilon")
}

// Every registered architecture's description is whole: unique tensor
// names with shapes and fields, required keys, a graph builder.
func TestArchDescriptions(t *testing.T) {
	for _, name := range SupportedArchitectures() {
		a := archs[name]
		require.Equal(t, name, a.name)
		require.NotNil(t, a.graph, name)
		seen := map[string]bool{}
		h := &Hparams{NEmbd: 8, NFF: 16, NHead: 2, NHeadKV: 1, HeadDim: 4, HeadDimV: 4, NRot: 4, NVocab: 10, NLayer: 1}
		for _, s := range a.tensors {
			key := s.name
			if s.layer {
				key = "blk.N." + key
			}
			require.False(t, seen[key], "%s: %s listed twice", name, key)
			seen[key] = true
			require.NotNil(t, s.shape, "%s: %s", name, key)
			require.NotEmpty(t, s.shape(h), "%s: %s", name, key)
			m := &Model{}
			require.NotNil(t, s.bind(m, &Layer{}), "%s: %s", name, key)
		}
		var keys []string
		for _, k := range a.hparams {
			keys = append(keys, k.key)
			require.NotNil(t, k.field(&Hparams{}), "%s: %s", name, k.key)
		}
		require.Contains(t, keys, "block_count", name)
	}
	require.True(t, errors.Is(&unsupportedArchError{"x"}, ErrUnsupportedArchitecture))
}

// The shared tensors and keys an architecture file lists each bind a field
// of their own.
func TestArchSharedBlocks(t *testing.T) {
	m, L, h := &Model{}, &Layer{}, &Hparams{}
	fields := map[any]string{}
	for _, s := range decoderTensors {
		p := s.bind(m, L)
		prev, dup := fields[p]
		require.False(t, dup, "%s binds the field of %s", s.name, prev)
		fields[p] = s.name
	}
	keys := map[any]string{}
	for _, k := range append(append([]hparamKey(nil), decoderHparams...), decoderKeys...) {
		p := k.field(h)
		if prev, dup := keys[p]; dup {
			// the older spelling of a key sets the same field
			require.True(t, k.legacy || hparamLegacy(prev), "%s sets the field of %s", k.key, prev)
		}
		keys[p] = k.key
	}
	require.Equal(t, "KV cache", stateKV.String())
	require.Equal(t, "recurrent state", stateRecurrent.String())
	require.Equal(t, "no state", stateNone.String())
}

func hparamLegacy(key string) bool {
	for _, k := range decoderHparams {
		if k.key == key {
			return k.legacy
		}
	}
	return false
}

// The sliding-window mask hides, as llama.cpp's, the positions nSWA or
// more before each token as well as the later ones.
func TestSlidingWindowMask(t *testing.T) {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 16})
	require.NoError(t, err)
	defer ctx.Close()
	n, nKV := 2, 5
	b := &batchGraph{n: n, nPast: 2, nKV: nKV, nSWA: 2,
		tokens:  ctx.NewTensor1D(ggml.TypeI32, n),
		pos:     ctx.NewTensor1D(ggml.TypeI32, n),
		mask:    ctx.NewTensor2D(ggml.TypeF32, nKV, n),
		maskSWA: ctx.NewTensor2D(ggml.TypeF32, nKV, n)}
	require.NoError(t, b.setInputs([]int32{1, 2}))
	got, err := b.maskSWA.Float32s()
	require.NoError(t, err)
	seen := func(row []float32) (out []bool) {
		for _, v := range row {
			out = append(out, v == 0)
		}
		return out
	}
	require.Equal(t, []bool{false, true, true, false, false}, seen(got[:nKV])) // token at 2 sees 1, 2
	require.Equal(t, []bool{false, false, true, true, false}, seen(got[nKV:])) // token at 3 sees 2, 3
	full, err := b.mask.Float32s()
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, true, true, false}, seen(full[nKV:]))
}
