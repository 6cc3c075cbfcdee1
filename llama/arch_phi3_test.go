package llama

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/stretchr/testify/require"
)

// phi3Small is a small phi3 of synth's: 2 layers, 4 heads of 16 (2 K/V
// heads), ff 96, a context of 64 and a sliding window of 8.
func phi3Small(t *testing.T) string {
	return synthModel(t, "ggml-vocab-phi-3.gguf", "-arch", "phi3", "-embd", "64", "-layers", "2", "-heads", "4", "-kv-heads", "2",
		"-ff", "96", "-ctx", "64", "-swa", "8", "-weights", "decisive", "-seed", "11")
}

// phi3 files whose fused tensors are missing or misshapen, or that hold
// what llama.cpp's phi3 does not read, are refused with the first
// difference; so are the keys its graph cannot take.
func TestPhi3TensorList(t *testing.T) {
	good := phi3Small(t)
	for _, c := range []struct {
		what string
		e    archEdit
		want string
	}{
		{"missing attn_qkv", archEdit{drop: map[string]bool{"blk.0.attn_qkv.weight": true}}, "missing tensor blk.0.attn_qkv.weight"},
		{"attn_qkv shape", archEdit{drop: map[string]bool{"blk.1.attn_qkv.weight": true}, add: map[string][]int64{"blk.1.attn_qkv.weight": {64, 96}}},
			"tensor blk.1.attn_qkv.weight has shape [64 96], want [64 128]"},
		{"ffn_up without the gate", archEdit{drop: map[string]bool{"blk.0.ffn_up.weight": true}, add: map[string][]int64{"blk.0.ffn_up.weight": {64, 96}}},
			"tensor blk.0.ffn_up.weight has shape [64 96], want [64 192]"},
		{"separate Q", archEdit{add: map[string][]int64{"blk.0.attn_q.weight": {64, 64}}}, "unexpected tensor blk.0.attn_q.weight"},
		{"separate gate", archEdit{add: map[string][]int64{"blk.1.ffn_gate.weight": {64, 96}}}, "unexpected tensor blk.1.ffn_gate.weight"},
		{"missing output", archEdit{drop: map[string]bool{"output.weight": true}}, "missing tensor output.weight"},
		{"output bias", archEdit{add: map[string][]int64{"output.bias": {32064}}}, "unexpected tensor output.bias"},
		{"rope factors shape", archEdit{add: map[string][]int64{"rope_factors_long.weight": {4}}}, "tensor rope_factors_long.weight has shape [4], want [8]"},
		{"per-layer rope factors", archEdit{add: map[string][]int64{"blk.0.rope_factors_short.weight": {8}}}, "unexpected tensor blk.0.rope_factors_short.weight"},
		{"sliding window 0", archEdit{set: map[string]any{"phi3.attention.sliding_window": uint32(0)}}, "phi3.attention.sliding_window"},
		{"key length", archEdit{set: map[string]any{"phi3.attention.key_length": uint32(8), "phi3.attention.value_length": uint32(8),
			"phi3.rope.dimension_count": uint32(8)}},
			"attention.key_length 8 times the head count 4 is not the embedding length 64"},
		{"rope scaling su", archEdit{set: map[string]any{"phi3.rope.scaling.type": "su"}}, `rope scaling type "su"`},
	} {
		t.Run(c.what, func(t *testing.T) {
			err := loadFails(t, reArch(t, good, c.e), c.what)
			require.ErrorContains(t, err, c.want)
		})
	}
}

// A phi3 file computes the same memory-mapped, and saved and loaded
// again; its fused matrices are bound as Layer.Wqkv and Layer.WGateUp.
func TestPhi3LoadsAndSaves(t *testing.T) {
	good := phi3Small(t)
	tokens := []int32{1, 450, 301, 18919, 1709, 29871, 13, 4013, 338, 263, 1243, 310}
	eval := func(m *Model) []float32 {
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 32})
		require.NoError(t, err)
		defer s.Close()
		out, err := s.EvalAll(context.Background(), tokens)
		require.NoError(t, err)
		return out
	}
	m, err := Load(good, LoadOptions{})
	require.NoError(t, err)
	defer m.Close()
	require.NotNil(t, m.Layers[1].Wqkv)
	require.NotNil(t, m.Layers[1].WGateUp)
	require.Equal(t, 8, m.SlidingWindow)
	require.NotSame(t, m.Output, m.TokEmbd)
	want := eval(m)

	mm, err := Load(good, LoadOptions{Mmap: true})
	require.NoError(t, err)
	require.Equal(t, want, eval(mm))
	mm.Close()

	saved := filepath.Join(t.TempDir(), "saved.gguf")
	require.NoError(t, m.Save(saved, "phi3"))
	m2, err := Load(saved, LoadOptions{})
	require.NoError(t, err)
	defer m2.Close()
	require.Equal(t, m.Hparams, m2.Hparams)
	require.Equal(t, want, eval(m2))
}

// Files written before attention.sliding_window existed get llama.cpp's
// windows of the Phi-3 models.
func TestPhi3SlidingWindowDefaults(t *testing.T) {
	for _, c := range []struct {
		h    Hparams
		want int
	}{
		{Hparams{NLayer: 32, NCtxTrain: 4096, NHeadKV: 32}, 2047},
		{Hparams{NLayer: 40, NCtxTrain: 4096, NHeadKV: 10}, 2047},
		{Hparams{NLayer: 32, NCtxTrain: 131072, NHeadKV: 32}, 262144},
		{Hparams{NLayer: 40, NCtxTrain: 131072, NHeadKV: 10}, 131072},
		{Hparams{NLayer: 2, NCtxTrain: 4096, NHeadKV: 2}, 0}, // refused by checkPhi3
	} {
		h := c.h
		phi3SlidingWindow.def(&h)
		require.Equal(t, c.want, h.SlidingWindow, "%+v", c.h)
	}
}

// LongRoPE: with long factors of 2 and short ones of 1, a session whose
// context (padded as llama.cpp pads it: 32 positions, 256 with flash
// attention) exceeds the original context computes what linear rope
// scaling by 2 does, and a shorter one what no factors do.
func TestPhi3LongRoPE(t *testing.T) {
	base := phi3Small(t)
	factors := reArch(t, base, archEdit{add: map[string][]int64{"rope_factors_long.weight": {8}, "rope_factors_short.weight": {8}},
		fill: map[string]float32{"rope_factors_long.weight": 2, "rope_factors_short.weight": 1}})
	linear := reArch(t, base, archEdit{set: map[string]any{"phi3.rope.scaling.factor": float32(2)}})
	tokens := []int32{1, 450, 301, 18919, 1709, 29871, 13, 4013, 338, 263, 1243, 310, 278, 13, 29879, 6915, 3474, 29889}
	logits := func(path string, opts SessionOptions) []float32 {
		m, err := Load(path, LoadOptions{})
		require.NoError(t, err)
		defer m.Close()
		opts.Threads = 2
		s, err := m.NewSession(opts)
		require.NoError(t, err)
		defer s.Close()
		out, err := s.EvalAll(context.Background(), tokens)
		require.NoError(t, err)
		return out
	}
	for _, c := range []struct {
		what string
		opts SessionOptions
		same string // the model computing the same
	}{
		{"short (64 positions)", SessionOptions{Context: 64}, base},
		{"short (33 positions, padded to 64)", SessionOptions{Context: 33}, base},
		{"long (65 positions)", SessionOptions{Context: 65}, linear},
		{"long (flash attention pads 32 to 256)", SessionOptions{Context: 32, FlashAttn: true}, linear},
	} {
		t.Run(c.what, func(t *testing.T) {
			got, want := logits(factors, c.opts), logits(c.same, c.opts)
			require.Equal(t, want, got)
			other := base
			if c.same == base {
				other = linear
			}
			require.NotEqual(t, logits(other, c.opts), got, "the factors changed nothing")
		})
	}

	// the factors chosen, and rope_freqs first where a file has it
	h := &Hparams{NCtxTrain: 4096, NCtxOrigYarn: 4096}
	set := ropeFactorSet{long: &ggml.Tensor{}, short: &ggml.Tensor{}}
	require.Same(t, set.short, set.choose(h, 4096, false))
	require.Same(t, set.long, set.choose(h, 4097, false))
	require.Same(t, set.short, set.choose(h, 4096, true))
	require.Same(t, set.long, set.choose(&Hparams{NCtxTrain: 3980}, 3970, false)) // padded to 4000
	set.freqs = &ggml.Tensor{}
	require.Same(t, set.freqs, set.choose(h, 8192, false))
	require.Nil(t, ropeFactorSet{}.choose(h, 8192, false))
}

// The factors go with the layers to an RPC server: a split model computes
// the bits of the local one, with the long factors.
func TestPhi3SplitRopeFactors(t *testing.T) {
	base := phi3Small(t)
	path := reArch(t, base, archEdit{add: map[string][]int64{"rope_factors_long.weight": {8}, "rope_factors_short.weight": {8}}})
	prompt := []int32{1, 450, 301, 18919, 1709, 29871, 13, 4013, 338, 263, 1243}
	opts := SessionOptions{Threads: 2, Context: 80, Batch: 4}
	local, err := Load(path, LoadOptions{})
	require.NoError(t, err)
	require.NotNil(t, local.RopeFactorsLong)
	wantToks, wantLogits := greedyTraceOpts(t, local, prompt, opts)
	local.Close()

	a := startRPCServer(t, "127.0.0.1:0", 256<<20)
	m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{a.addr}, TensorSplit: []float64{1, 1}}})
	require.NoError(t, err)
	defer m.Close()
	require.True(t, m.Layers[1].rope != nil && m.Layers[1].rope.long != nil && m.Layers[1].rope.long != m.RopeFactorsLong,
		"the server's layer does not read its own copy of the factors")
	gotToks, gotLogits := greedyTraceOpts(t, m, prompt, opts)
	require.True(t, slices.Equal(gotToks, wantToks), "tokens %v, local %v", gotToks, wantToks)
	for i := range wantLogits {
		require.True(t, slices.Equal(gotLogits[i], wantLogits[i]), "logits of evaluation %d differ", i)
	}
}
