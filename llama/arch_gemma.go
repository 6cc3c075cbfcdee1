package llama

import (
	"math"

	"github.com/ggml-go/ggml"
)

// gemma: Gemma as llama.cpp 1.3.3 loads and builds LLM_ARCH_GEMMA: the
// token embeddings scaled by sqrt(embedding_length), RMS norms whose
// weights are used as the file stores them (llama.cpp's converter has
// already added the 1 of Gemma's (1 + w) convention), NeoX rope, the
// queries scaled by 1/sqrt(attention.key_length) before attention (whose
// width, key_length times the head count, need not be the embedding
// length), a GELU-gated feed-forward, and the output tied to the token
// embedding (a file with output.weight is refused, as llama.cpp does: it
// has no such tensor).
func init() {
	registerArch(&architecture{
		name:     "gemma",
		hparams:  withKeys(keyRMSEps),
		check:    func(h *Hparams) error { return checkDecoder(h, false) },
		ropeType: ggml.RopeTypeNeox,
		tensors: []tensorSpec{
			tTokEmbd,
			tAttnNorm, tWq, tWk, tWv, tWo,
			tFFNNorm, tWGate, tWUp, tWDown,
			tOutNorm, tOutputTied,
		},
		graph: &decoder{norm: normRMS, ffn: ffnGeGLU, embdScale: true, scaleQ: true, kqScale: gemmaKQScale, nodes: 56},
	})
}

// tOutputTied is the output matrix of the gemmas: always the token
// embedding (llama.cpp's TENSOR_DUPLICATED token_embd).
var tOutputTied = alwaysTied(tOutput)

// gemmaKQScale is 1/sqrt(key_length) as llama.cpp computes it in f32.
func gemmaKQScale(h *Hparams) float32 { return invSqrt32(h.HeadDim) }

// invSqrt32 is C's 1.0f / sqrtf((float)n).
func invSqrt32(n int) float32 {
	return 1 / float32(math.Sqrt(float64(float32(n))))
}
