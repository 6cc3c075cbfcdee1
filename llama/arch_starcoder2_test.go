package llama

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// starcoder2Small is a small starcoder2 of synth's: 2 layers, 4 heads of
// 16 (2 K/V heads), ff 96; tied: no output.weight.
func starcoder2Small(t *testing.T, tied bool) string {
	args := []string{"-arch", "starcoder2", "-embd", "64", "-layers", "2", "-heads", "4", "-kv-heads", "2",
		"-ff", "96", "-ctx", "64", "-weights", "decisive", "-seed", "12"}
	if tied {
		args = append(args, "-tied")
	}
	return synthModel(t, "ggml-vocab-starcoder.gguf", args...)
}

// starcoder2 files without one of their biases, with a gate, or with
// shapes or keys its graph cannot take are refused with the first
// difference.
func TestStarcoder2TensorList(t *testing.T) {
	good := starcoder2Small(t, false)
	for _, c := range []struct {
		what string
		e    archEdit
		want string
	}{
		{"missing Q bias", archEdit{drop: map[string]bool{"blk.0.attn_q.bias": true}}, "missing tensor blk.0.attn_q.bias"},
		{"missing output projection bias", archEdit{drop: map[string]bool{"blk.1.attn_output.bias": true}}, "missing tensor blk.1.attn_output.bias"},
		{"missing norm bias", archEdit{drop: map[string]bool{"blk.0.attn_norm.bias": true}}, "missing tensor blk.0.attn_norm.bias"},
		{"missing output norm bias", archEdit{drop: map[string]bool{"output_norm.bias": true}}, "missing tensor output_norm.bias"},
		{"missing down bias", archEdit{drop: map[string]bool{"blk.1.ffn_down.bias": true}}, "missing tensor blk.1.ffn_down.bias"},
		{"gate", archEdit{add: map[string][]int64{"blk.0.ffn_gate.weight": {64, 96}}}, "unexpected tensor blk.0.ffn_gate.weight"},
		{"fused QKV", archEdit{add: map[string][]int64{"blk.0.attn_qkv.weight": {64, 128}}}, "unexpected tensor blk.0.attn_qkv.weight"},
		{"K bias shape", archEdit{drop: map[string]bool{"blk.0.attn_k.bias": true}, add: map[string][]int64{"blk.0.attn_k.bias": {64}}},
			"tensor blk.0.attn_k.bias has shape [64], want [32]"},
		{"up bias shape", archEdit{drop: map[string]bool{"blk.1.ffn_up.bias": true}, add: map[string][]int64{"blk.1.ffn_up.bias": {64}}},
			"tensor blk.1.ffn_up.bias has shape [64], want [96]"},
		{"partial rope", archEdit{set: map[string]any{"starcoder2.rope.dimension_count": uint32(8)}}, "rope dimension count 8 differs from the head size 16"},
		{"key length", archEdit{set: map[string]any{"starcoder2.attention.key_length": uint32(8), "starcoder2.attention.value_length": uint32(8),
			"starcoder2.rope.dimension_count": uint32(8)}}, "attention.key_length 8 times the head count 4 is not the embedding length 64"},
		{"norm epsilon not a number", archEdit{set: map[string]any{"starcoder2.attention.layer_norm_epsilon": "x"}}, "layer_norm_epsilon"},
	} {
		t.Run(c.what, func(t *testing.T) {
			err := loadFails(t, reArch(t, good, c.e), c.what)
			require.ErrorContains(t, err, c.want)
		})
	}
}

// Without output.weight the output is the token embedding; the biases
// fused with Q, K and V give the bits of the unfused and memory-mapped
// loads.
func TestStarcoder2TiedAndFused(t *testing.T) {
	path := starcoder2Small(t, true)
	tokens := []int32{1338, 475, 36917, 3973, 12409, 30, 203, 5}
	var ref []float32
	for _, o := range []LoadOptions{{}, {NoFuse: true}, {Mmap: true}} {
		m, err := Load(path, o)
		require.NoError(t, err)
		require.Same(t, m.TokEmbd, m.Output)
		require.NotNil(t, m.OutNormB)
		if o == (LoadOptions{}) {
			require.NotNil(t, m.Layers[0].Wqkv)
			require.NotNil(t, m.Layers[0].Bqkv)
		}
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 32})
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
}
