package llama

import "github.com/ggml-go/ggml"

// llama: Llama 1/2/3, Mistral, CodeLlama, ... as llama.cpp 1.3.3 loads and
// builds LLM_ARCH_LLAMA (dense; its mixture-of-experts form is not run):
// RMS norms, normal rope with the optional per-dimension factors of Llama
// 3.1 (rope_freqs.weight), GQA, optional biases on every projection,
// SwiGLU, output tied to the token embedding when output.weight is absent.
func init() {
	registerArch(&architecture{
		name:     "llama",
		hparams:  withKeys(keyRMSEps),
		check:    func(h *Hparams) error { return checkDecoder(h, true) },
		ropeType: ggml.RopeTypeNorm,
		tensors: []tensorSpec{
			tTokEmbd, tRopeFreqs.opt(),
			tAttnNorm, tWq, tWk, tWv, tBq.opt(), tBk.opt(), tBv.opt(), tWo, tBo.opt(),
			tFFNNorm, tWGate, tWUp, tBGate.opt(), tBUp.opt(), tWDown, tBDown.opt(),
			tOutNorm, tOutput,
		},
		graph:     &decoder{norm: normRMS, ffn: ffnSwiGLU},
		trainable: true,
		// llama.cpp's MODEL_70B (which its quantization mixtures treat
		// apart): 80 layers with grouped K/V heads
		is70B: func(h *Hparams) bool { return h.NLayer == 80 && h.NHead != h.NHeadKV },
	})
}
