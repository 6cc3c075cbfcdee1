package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// phi3: Phi-3 and Phi-3.5 (mini, medium) as llama.cpp 1.3.3 builds
// LLM_ARCH_PHI3: llama's block with Q, K and V in one matrix (attn_qkv)
// and the gate and up projections in one (ffn_up, gate rows first), NeoX
// rope with LongRoPE's long and short factors where the file has them
// (ropefactors.go), the queries scaled by 1/sqrt(head size) after the rope
// and the scores not scaled again, every layer attending within the
// sliding window, and an output matrix of its own.
func init() {
	registerArch(&architecture{
		name:     "phi3",
		hparams:  withKeys(keyRMSEps, phi3SlidingWindow),
		check:    checkPhi3,
		ropeType: ggml.RopeTypeNeox,
		tensors: []tensorSpec{
			tTokEmbd, tRopeFactorsLong.opt(), tRopeFactorsShort.opt(),
			tAttnNorm, tWqkvPhi3, tWo,
			tFFNNorm, tWGateUpPhi3, tWDown,
			tOutNorm, tOutputPhi3,
		},
		graph: &decoder{norm: normRMS, ffn: ffnSwiGLU,
			scaleQ: true,
			swa:    func(*Hparams, int) bool { return true }},
	})
}

var (
	// tWqkvPhi3 is [Wq; Wk; Wv] as the file stores it (Layer.Wqkv).
	tWqkvPhi3 = perLayer("attn_qkv.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NEmbd + 2*h.NEmbdGQA()} }),
		func(L *Layer) **ggml.Tensor { return &L.Wqkv })
	// tWGateUpPhi3 is [WGate; WUp] as the file stores it, named ffn_up
	// (Layer.WGateUp).
	tWGateUpPhi3 = perLayer("ffn_up.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, 2 * h.NFF} }),
		func(L *Layer) **ggml.Tensor { return &L.WGateUp })
	// tOutputPhi3 is output.weight, required (never tied).
	tOutputPhi3 = outputOf(global("output.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, h.NVocab} }),
		func(m *Model) **ggml.Tensor { return &m.Output }))
	halfHead          = shape(func(h *Hparams) []int { return []int{h.HeadDim / 2} })
	tRopeFactorsLong  = global("rope_factors_long.weight", roleFactors, halfHead, func(m *Model) **ggml.Tensor { return &m.RopeFactorsLong })
	tRopeFactorsShort = global("rope_factors_short.weight", roleFactors, halfHead, func(m *Model) **ggml.Tensor { return &m.RopeFactorsShort })
)

// phi3SlidingWindow is attention.sliding_window, with llama.cpp's defaults
// for the files written before the key existed (Phi-3 mini and medium
// 4k: 2047; mini 128k: 262144; medium 128k: 131072).
var phi3SlidingWindow = hparamKey{key: "attention.sliding_window", field: hpInt(func(h *Hparams) *int { return &h.SlidingWindow }),
	def: func(h *Hparams) {
		switch {
		case (h.NLayer == 32 || h.NLayer == 40) && h.NCtxTrain == 4096:
			h.SlidingWindow = 2047
		case h.NLayer == 32 && h.NHeadKV == 32 && h.NCtxTrain == 131072:
			h.SlidingWindow = 262144
		case h.NLayer == 40 && h.NCtxTrain == 131072:
			h.SlidingWindow = 131072
		}
	}}

func checkPhi3(h *Hparams) error {
	if err := checkDecoder(h, false); err != nil {
		return err
	}
	if h.NEmbdQ() != h.NEmbd {
		// the graph takes the queries as NEmbd wide and the heads as
		// NEmbd / head_count
		return fmt.Errorf("attention.key_length %d times the head count %d is not the embedding length %d (phi3)", h.HeadDim, h.NHead, h.NEmbd)
	}
	if h.SlidingWindow <= 0 {
		return fmt.Errorf("hyperparameter phi3.attention.sliding_window: %d (missing or 0), a window of at least 1 position expected", h.SlidingWindow)
	}
	return nil
}
