package llama

import "github.com/ggml-go/ggml"

// Rope frequency factors: per-dimension divisors of the rope's angles that
// some files hold. Llama 3.1 has one set (rope_freqs.weight); LongRoPE
// (phi3's "su" scaling) has two, one for contexts up to the original
// training context (rope_factors_short.weight) and one for longer contexts
// (rope_factors_long.weight). Which set a graph reads depends on the
// session's context, so the choice is made when the graph is built.

// ropeFactorSet is the factor tensors of a model, or their copies on one
// device (nil: the file has no such tensor).
type ropeFactorSet struct {
	freqs, long, short *ggml.Tensor
}

// ropeFactorTensors returns the model's own factor tensors.
func (m *Model) ropeFactorTensors() ropeFactorSet {
	return ropeFactorSet{m.RopeFreqs, m.RopeFactorsLong, m.RopeFactorsShort}
}

// ropeCtxPad is llama.cpp's KV cache padding (llama_kv_cache_get_padding):
// its context is the requested one rounded up to it, and it is that
// rounded context that decides between the long and short factors.
func ropeCtxPad(flash bool) int {
	if flash {
		return 256
	}
	return 32
}

// choose is the factors the rope reads in a session of nCtx positions, as
// llama.cpp 1.3.3's build_rope_factors chooses them (one sequence per
// context): rope_freqs where the file has it; else the long factors when
// the context exceeds the original one (rope.scaling.original_context_length,
// else context_length), else the short ones; nil when there are none.
func (s ropeFactorSet) choose(h *Hparams, nCtx int, flash bool) *ggml.Tensor {
	if s.freqs != nil {
		return s.freqs
	}
	pad := ropeCtxPad(flash)
	padded := (nCtx + pad - 1) / pad * pad
	orig := h.NCtxOrigYarn
	if orig == 0 {
		orig = h.NCtxTrain
	}
	if padded > orig {
		return s.long
	}
	return s.short
}

// ropeFactors is the factors layer L's rope reads in a session with the
// cache kv: those on the layer's device (see placement.go), else the
// model's.
func (m *Model) ropeFactors(L *Layer, kv *kvCache) *ggml.Tensor {
	set := m.ropeFactorTensors()
	if L.rope != nil {
		set = *L.rope
	}
	return set.choose(&m.Hparams, kv.nCtx, kv.flash)
}
