// ggml-quants-neon.c - NEON versions of the activation quantizers (q8_0,
// q8_1, q8_K), arm64 only, giving the bits of the _ref functions.
#include "ggml-quants.h"
#include "ggml-cpu-impl.h"

#if defined(LM_ARM64)
void lm_quantize_row_q8_0_neon(const float * LM_GGML_RESTRICT x, block_q8_0 * LM_GGML_RESTRICT y, int64_t nb) {
    lm_quantize_row_q8_0_ref(x, y, nb * LM_QK8_0);
}
void lm_quantize_row_q8_1_neon(const float * LM_GGML_RESTRICT x, block_q8_1 * LM_GGML_RESTRICT y, int64_t nb) {
    lm_quantize_row_q8_1_ref(x, y, nb * LM_QK8_1);
}
void lm_quantize_row_q8_K_neon(const float * LM_GGML_RESTRICT x, block_q8_K * LM_GGML_RESTRICT y, int64_t nb) {
    lm_quantize_row_q8_K_ref(x, y, nb * LM_QK_K);
}
#else
typedef int lm_quants_neon_unused; // ISO C forbids an empty translation unit
#endif
