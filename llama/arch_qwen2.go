package llama

import "github.com/ggml-go/ggml"

// qwen2: Qwen2 and Qwen2.5 as llama.cpp 1.3.3 builds LLM_ARCH_QWEN2:
// llama's block with biases on Q, K and V (required) and NeoX rope.
func init() {
	registerArch(&architecture{
		name:     "qwen2",
		hparams:  withKeys(keyRMSEps),
		check:    func(h *Hparams) error { return checkDecoder(h, true) },
		ropeType: ggml.RopeTypeNeox,
		tensors: []tensorSpec{
			tTokEmbd,
			tAttnNorm, tWq, tWk, tWv, tBq, tBk, tBv, tWo,
			tFFNNorm, tWGate, tWUp, tWDown,
			tOutNorm, tOutput,
		},
		graph: &decoder{norm: normRMS, ffn: ffnSwiGLU},
		is70B: func(h *Hparams) bool { return h.NLayer == 80 },
	})
}
