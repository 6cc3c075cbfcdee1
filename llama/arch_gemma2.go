package llama

import (
	"fmt"
	"math"

	"github.com/ggml-go/ggml"
)

// gemma2: Gemma 2 as llama.cpp 1.3.3 loads and builds LLM_ARCH_GEMMA2:
// gemma's block (arch_gemma.go) with RMS norms of the attention's and the
// feed-forward's outputs (post_attention_norm, post_ffw_norm) before their
// residuals, the attention scores soft-capped (c*tanh(s/c), c =
// attn_logit_softcapping, default 50) and so the logits (final_logit_
// softcapping, default 30), and a sliding window of
// attention.sliding_window positions (default 4096) on the even layers.
//
// llama.cpp 1.3.3 does not read query_pre_attn_scalar: it scales the
// queries by the model size it infers from the layer count, by
// 1/sqrt(key_length) with 26 layers (2B) or 42 (9B), by
// 1/sqrt(embedding_length/head_count) with 46 (27B), and aborts with any
// other count. Such a file is refused here by its layer count.
func init() {
	registerArch(&architecture{
		name: "gemma2",
		hparams: withKeys(
			hparamKey{key: "attention.sliding_window", min: 1, field: hpInt(func(h *Hparams) *int { return &h.SlidingWindow }),
				def: func(h *Hparams) { h.SlidingWindow = 4096 }},
			keyRMSEps,
			hparamKey{key: "attn_logit_softcapping", field: hpFloat(func(h *Hparams) *float32 { return &h.AttnSoftCap }),
				def: func(h *Hparams) { h.AttnSoftCap = 50 }},
			hparamKey{key: "final_logit_softcapping", field: hpFloat(func(h *Hparams) *float32 { return &h.FinalSoftCap }),
				def: func(h *Hparams) { h.FinalSoftCap = 30 }},
		),
		check:    checkGemma2,
		ropeType: ggml.RopeTypeNeox,
		tensors: []tensorSpec{
			tTokEmbd,
			tAttnNorm, tWq, tWk, tWv, tWo, tAttnPostNorm,
			tFFNNorm, tWGate, tWUp, tWDown, tFFNPostNorm,
			tOutNorm, tOutputTied,
		},
		graph: &decoder{norm: normRMS, ffn: ffnGeGLU, embdScale: true, scaleQ: true, kqScale: gemma2KQScale,
			swa:   func(_ *Hparams, il int) bool { return il%2 == 0 },
			nodes: 64},
	})
}

var (
	tAttnPostNorm = perLayer("post_attention_norm.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.AttnPostNorm })
	tFFNPostNorm  = perLayer("post_ffw_norm.weight", roleNorm, embd, func(L *Layer) **ggml.Tensor { return &L.FFNPostNorm })
)

func checkGemma2(h *Hparams) error {
	switch h.NLayer {
	case 26, 42, 46:
	default:
		return fmt.Errorf("gemma2 with %d layers: llama.cpp 1.3.3 runs only the 2B, 9B and 27B shapes (26, 42 or 46 layers), whose layer count sets the attention scale", h.NLayer)
	}
	for _, c := range []float32{h.AttnSoftCap, h.FinalSoftCap} {
		if !(c > 0) || math.IsInf(float64(c), 1) {
			return fmt.Errorf("gemma2 soft-capping %g (attention) and %g (final logits): both must be positive and finite", h.AttnSoftCap, h.FinalSoftCap)
		}
	}
	return checkDecoder(h, false)
}

// gemma2KQScale is the queries' scale llama.cpp's gemma2 graph takes by
// model size (checkGemma2 lets through only the sizes it knows).
func gemma2KQScale(h *Hparams) float32 {
	if h.NLayer == 46 { // 27B
		return invSqrt32(h.NEmbd / h.NHead)
	}
	return invSqrt32(h.HeadDim)
}
