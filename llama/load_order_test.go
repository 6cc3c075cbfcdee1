package llama

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// The weights are laid out in the order a token reads them: a layer's
// matrices in evaluation order, layers in turn, the output last, and names
// the runner does not know after everything else.
func TestDecodeRankOrder(t *testing.T) {
	want := []string{
		"token_embd.weight",
		"blk.0.attn_norm.weight", "blk.0.attn_qkv.weight", "blk.0.attn_output.weight",
		"blk.0.ffn_norm.weight", "blk.0.ffn_gate_up.weight", "blk.0.ffn_down.weight",
		"blk.1.attn_norm.weight", "blk.1.attn_q.weight", "blk.1.attn_k.weight", "blk.1.attn_v.weight",
		"blk.1.attn_output.weight", "blk.1.ffn_norm.weight", "blk.1.ffn_gate.weight", "blk.1.ffn_up.weight",
		"blk.1.ffn_down.weight", "blk.1.something_new.weight",
		"output_norm.weight", "output.weight",
		"blk.7.attn_q.weight", "zzz.weight",
	}
	got := append([]string(nil), want...)
	// file order: alphabetical, as many converters write it
	sort.Strings(got)
	sort.SliceStable(got, func(a, b int) bool {
		return archs["llama"].decodeRank(got[a], 2) < archs["llama"].decodeRank(got[b], 2)
	})
	require.Equal(t, want[:len(want)-2], got[:len(got)-2])
	require.ElementsMatch(t, want[len(want)-2:], got[len(got)-2:]) // unknown: file order among themselves
}
