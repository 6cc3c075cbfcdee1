package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// starcoder2: StarCoder2 (and the granite code models of its
// architecture) as llama.cpp 1.3.3 builds LLM_ARCH_STARCODER2: LayerNorm
// with biases, biases on every projection (all required), NeoX rope, a
// GELU feed-forward without gate, the output tied to the token embedding
// where the file has no output matrix.
func init() {
	registerArch(&architecture{
		name:     "starcoder2",
		hparams:  withKeys(keyNormEps),
		check:    checkStarcoder2,
		ropeType: ggml.RopeTypeNeox,
		tensors: []tensorSpec{
			tTokEmbd,
			tAttnNorm, tAttnNormB, tWq, tWk, tWv, tBq, tBk, tBv, tWo, tBo,
			tFFNNorm, tFFNNormB, tWUp, tBUp, tWDown, tBDown,
			tOutNorm, tOutNormB, tOutput,
		},
		graph: &decoder{norm: normLayer, ffn: ffnGELU},
	})
}

func checkStarcoder2(h *Hparams) error {
	if err := checkDecoder(h, true); err != nil {
		return err
	}
	if h.NEmbdQ() != h.NEmbd {
		// llama.cpp's Q and output matrices are NEmbd square
		return fmt.Errorf("attention.key_length %d times the head count %d is not the embedding length %d (starcoder2)", h.HeadDim, h.NHead, h.NEmbd)
	}
	return nil
}
