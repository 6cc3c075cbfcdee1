package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// What the decoder architectures share: the hyperparameter keys every one
// of them reads (llama.cpp 1.3.3's llm_load_hparams before its switch on the
// architecture), their tensors as values an arch_*.go file lists, and the
// checks of the attention's shape. The graph is decoder (graph.go).

// hpInt ... hpBool give an Hparams field as hparamKey.field takes it.
func hpInt(f func(h *Hparams) *int) func(h *Hparams) any { return func(h *Hparams) any { return f(h) } }
func hpFloat(f func(h *Hparams) *float32) func(h *Hparams) any {
	return func(h *Hparams) any { return f(h) }
}
func hpString(f func(h *Hparams) *string) func(h *Hparams) any {
	return func(h *Hparams) any { return f(h) }
}
func hpBool(f func(h *Hparams) *bool) func(h *Hparams) any {
	return func(h *Hparams) any { return f(h) }
}

// decoderHparams are the keys llama.cpp reads for every architecture with
// attention heads, in its order, with its defaults.
var decoderHparams = []hparamKey{
	{key: "context_length", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.NCtxTrain })},
	{key: "embedding_length", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.NEmbd })},
	{key: "block_count", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.NLayer })},
	{key: "feed_forward_length", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.NFF })},
	{key: "attention.head_count", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.NHead })},
	{key: "attention.head_count_kv", min: 1, field: hpInt(func(h *Hparams) *int { return &h.NHeadKV }),
		def: func(h *Hparams) { h.NHeadKV = h.NHead }},
	{key: "rope.scaling.finetuned", field: hpBool(func(h *Hparams) *bool { return &h.RopeFinetuned })},
	{key: "rope.scaling.original_context_length", min: 1, field: hpInt(func(h *Hparams) *int { return &h.NCtxOrigYarn }),
		def: func(h *Hparams) { h.NCtxOrigYarn = h.NCtxTrain }},
	{key: "rope.freq_base", field: hpFloat(func(h *Hparams) *float32 { return &h.RopeFreqBase }),
		def: func(h *Hparams) { h.RopeFreqBase = 10000 }},
	{key: "rope.scaling.type", field: hpString(func(h *Hparams) *string { return &h.RopeScaling }),
		def: func(h *Hparams) { h.RopeScaling = "linear" }},
	// rope.scaling.factor when present, else the older rope.scale_linear
	{key: "rope.scale_linear", legacy: true, field: hpFloat(func(h *Hparams) *float32 { return &h.RopeScalingFactor })},
	{key: "rope.scaling.factor", field: hpFloat(func(h *Hparams) *float32 { return &h.RopeScalingFactor })},
	{key: "rope.scaling.attn_factor", field: hpFloat(func(h *Hparams) *float32 { return &h.RopeAttnFactor }),
		def: func(h *Hparams) { h.RopeAttnFactor = 1 }},
	{key: "attention.key_length", min: 1, field: hpInt(func(h *Hparams) *int { return &h.HeadDim }),
		def: func(h *Hparams) { h.HeadDim = h.NEmbd / h.NHead }},
	{key: "attention.value_length", min: 1, field: hpInt(func(h *Hparams) *int { return &h.HeadDimV }),
		def: func(h *Hparams) { h.HeadDimV = h.NEmbd / h.NHead }},
	{key: "rope.dimension_count", min: 0, field: hpInt(func(h *Hparams) *int { return &h.NRot }),
		def: func(h *Hparams) { h.NRot = h.HeadDim }},
}

// keyRMSEps is attention.layer_norm_rms_epsilon, required.
var keyRMSEps = hparamKey{key: "attention.layer_norm_rms_epsilon", required: true,
	field: hpFloat(func(h *Hparams) *float32 { return &h.RMSEps })}

// keyNormEps is attention.layer_norm_epsilon, required.
var keyNormEps = hparamKey{key: "attention.layer_norm_epsilon", required: true,
	field: hpFloat(func(h *Hparams) *float32 { return &h.NormEps })}

// withKeys is decoderHparams followed by an architecture's own keys.
func withKeys(keys ...hparamKey) []hparamKey {
	return append(append([]hparamKey(nil), decoderHparams...), keys...)
}

// checkDecoder checks what the decoder graph needs of the keys read, and
// resolves the rope scaling as llama.cpp's context does: rope.scaling.type
// none never scales; linear and yarn divide the positions by the factor.
// ropeIsHead: the rope rotates whole heads (llama.cpp refuses llama files
// whose rope.dimension_count is not the head size, and asserts it in its
// qwen2 graph).
func checkDecoder(h *Hparams, ropeIsHead bool) error {
	if h.HeadDim < 1 || (h.NEmbd%h.NHead != 0 && h.HeadDim == h.NEmbd/h.NHead) {
		return fmt.Errorf("embedding length %d is not a multiple of the head count %d", h.NEmbd, h.NHead)
	}
	if h.NHead%h.NHeadKV != 0 {
		return fmt.Errorf("head count %d is not a multiple of the KV head count %d", h.NHead, h.NHeadKV)
	}
	if h.HeadDimV != h.HeadDim {
		return fmt.Errorf("attention.value_length %d differs from attention.key_length %d", h.HeadDimV, h.HeadDim)
	}
	if h.NRot > h.HeadDim || h.NRot%2 != 0 {
		return fmt.Errorf("rope dimension count %d must be even and at most the head size %d", h.NRot, h.HeadDim)
	}
	if ropeIsHead && h.NRot != h.HeadDim {
		return fmt.Errorf("rope dimension count %d differs from the head size %d (embedding_length %d / attention.head_count %d): the %s graph rotates whole heads",
			h.NRot, h.HeadDim, h.NEmbd, h.NHead, h.Arch)
	}
	h.RopeFreqScale = 1
	switch h.RopeScaling {
	case "none":
	case "linear", "yarn":
		if h.RopeScalingFactor != 0 {
			h.RopeFreqScale = 1 / h.RopeScalingFactor
		}
	default:
		return fmt.Errorf("rope scaling type %q: none, linear or yarn expected", h.RopeScaling)
	}
	return nil
}

// ropeParams are the rope parameters of h as llama.cpp 1.3.3 passes them
// (its context defaults: YaRN's extrapolation mix 1 with rope scaling yarn,
// else 0; beta fast 32, slow 1).
func (h *Hparams) ropeParams() ggml.RopeParams {
	p := ggml.DefaultRopeParams(h.NRot, h.RopeType)
	p.NCtxOrig = h.NCtxTrain
	if h.NCtxOrigYarn > 0 {
		p.NCtxOrig = h.NCtxOrigYarn
	}
	p.FreqBase = h.RopeFreqBase
	p.FreqScale = h.RopeFreqScale
	if h.RopeScaling == "yarn" {
		p.ExtFactor = 1
	}
	if h.RopeAttnFactor != 0 {
		p.AttnFactor = h.RopeAttnFactor
	}
	return p
}

// The tensors of the decoders, as their files name them (llama.cpp's
// LLM_TENSOR_NAMES), for the arch_*.go files to list. Shapes are ne0 first.

func shape(f func(h *Hparams) []int) func(h *Hparams) []int { return f }

func global(name string, role tensorRole, sh func(h *Hparams) []int, field func(m *Model) **ggml.Tensor) tensorSpec {
	return tensorSpec{name: name, role: role, shape: sh, bind: func(m *Model, _ *Layer) **ggml.Tensor { return field(m) }}
}

func perLayer(name string, role tensorRole, sh func(h *Hparams) []int, field func(L *Layer) **ggml.Tensor) tensorSpec {
	return tensorSpec{name: name, layer: true, role: role, shape: sh, bind: func(_ *Model, L *Layer) **ggml.Tensor { return field(L) }}
}

// opt is s, optional (a nil field when the file lacks it).
func (s tensorSpec) opt() tensorSpec { s.optional = true; return s }

var (
	embd    = shape(func(h *Hparams) []int { return []int{h.NEmbd} })
	embdQ   = shape(func(h *Hparams) []int { return []int{h.NEmbdQ()} })
	embdGQA = shape(func(h *Hparams) []int { return []int{h.NEmbdGQA()} })
	ff      = shape(func(h *Hparams) []int { return []int{h.NFF} })

	tTokEmbd   = global("token_embd.weight", roleEmbd, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NVocab} }), func(m *Model) **ggml.Tensor { return &m.TokEmbd })
	tRopeFreqs = global("rope_freqs.weight", roleFactors, shape(func(h *Hparams) []int { return []int{h.NRot / 2} }), func(m *Model) **ggml.Tensor { return &m.RopeFreqs })

	tAttnNorm  = perLayer("attn_norm.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.AttnNorm })
	tAttnNormB = perLayer("attn_norm.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.AttnNormB })
	tWq        = perLayer("attn_q.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NEmbdQ()} }), func(L *Layer) **ggml.Tensor { return &L.Wq })
	tWk        = perLayer("attn_k.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NEmbdGQA()} }), func(L *Layer) **ggml.Tensor { return &L.Wk })
	tWv        = perLayer("attn_v.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NEmbdGQA()} }), func(L *Layer) **ggml.Tensor { return &L.Wv })
	tBq        = perLayer("attn_q.bias", roleBias, embdQ, func(L *Layer) **ggml.Tensor { return &L.Bq })
	tBk        = perLayer("attn_k.bias", roleBias, embdGQA, func(L *Layer) **ggml.Tensor { return &L.Bk })
	tBv        = perLayer("attn_v.bias", roleBias, embdGQA, func(L *Layer) **ggml.Tensor { return &L.Bv })
	tWo        = perLayer("attn_output.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbdQ(), h.NEmbd} }), func(L *Layer) **ggml.Tensor { return &L.Wo })
	tBo        = perLayer("attn_output.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.Bo })
	tFFNNorm   = perLayer("ffn_norm.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.FFNNorm })
	tFFNNormB  = perLayer("ffn_norm.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.FFNNormB })
	tWGate     = perLayer("ffn_gate.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NFF} }), func(L *Layer) **ggml.Tensor { return &L.WGate })
	tWUp       = perLayer("ffn_up.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NFF} }), func(L *Layer) **ggml.Tensor { return &L.WUp })
	tBGate     = perLayer("ffn_gate.bias", roleBias, ff, func(L *Layer) **ggml.Tensor { return &L.BGate })
	tBUp       = perLayer("ffn_up.bias", roleBias, ff, func(L *Layer) **ggml.Tensor { return &L.BUp })
	tWDown     = perLayer("ffn_down.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NFF, h.NEmbd} }), func(L *Layer) **ggml.Tensor { return &L.WDown })
	tBDown     = perLayer("ffn_down.bias", roleBias, embd, func(L *Layer) **ggml.Tensor { return &L.BDown })

	tOutNorm  = outputOf(global("output_norm.weight", roleNorm, embd, func(m *Model) **ggml.Tensor { return &m.OutNorm }))
	tOutNormB = outputOf(global("output_norm.bias", roleBias, embd, func(m *Model) **ggml.Tensor { return &m.OutNormB }))
	// output.weight: optional; without it the output is tied to the token
	// embedding (Model.Output == Model.TokEmbd).
	tOutput = tiedOutput(global("output.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NVocab} }), func(m *Model) **ggml.Tensor { return &m.Output }))
)

// decoderTensors are all of the above, and decoderKeys the keys an
// architecture may add to decoderHparams (TestArchSharedBlocks checks that
// each binds its own field).
var (
	decoderTensors = []tensorSpec{tTokEmbd, tRopeFreqs, tAttnNorm, tAttnNormB, tWq, tWk, tWv, tBq, tBk, tBv, tWo, tBo,
		tFFNNorm, tFFNNormB, tWGate, tWUp, tBGate, tBUp, tWDown, tBDown, tOutNorm, tOutNormB, tOutput}
	decoderKeys = []hparamKey{keyRMSEps, keyNormEps}
)

func outputOf(s tensorSpec) tensorSpec { s.output = true; return s }

// alwaysTied is a tied tensor the file must not hold.
func alwaysTied(s tensorSpec) tensorSpec { s.tiedOnly = true; return s }

func tiedOutput(s tensorSpec) tensorSpec {
	s.output, s.optional, s.tie = true, true, "token_embd.weight"
	return s
}
