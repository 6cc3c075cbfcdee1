// ggml-quants.h - quantization and dequantization of the block formats.
// Internal. Function names carry the lm_ prefix so that this core can share a
// binary with another copy of ggml.
//
// Per type <t>:
//   lm_dequantize_row_<t>(blocks, y, k)     k floats out (k a multiple of the block size)
//   lm_quantize_row_<t>_ref(x, blocks, k)   the reference quantizer (file-format exact)
//   lm_quantize_row_<t>(x, vy, k)           the CPU row converter (same bits as _ref)
//   lm_quantize_<t>(src, dst, nrows, n_per_row, imatrix)
//                                           whole rows, importance-weighted when
//                                           imatrix != NULL; returns bytes written
#pragma once

#include "../base/ggml-impl.h"
#include "ggml-common.h"
#include "ggml-iquants.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_QUANT_DECL(t)                                                                     \
    void   lm_quantize_row_##t##_ref(const float * LM_GGML_RESTRICT x, block_##t * LM_GGML_RESTRICT y, int64_t k); \
    void   lm_quantize_row_##t(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k);            \
    size_t lm_quantize_##t(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows,         \
                           int64_t n_per_row, const float * imatrix);

#define LM_DEQUANT_DECL(t) \
    void lm_dequantize_row_##t(const block_##t * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);

LM_QUANT_DECL(q4_0)
LM_QUANT_DECL(q4_1)
LM_QUANT_DECL(q5_0)
LM_QUANT_DECL(q5_1)
LM_QUANT_DECL(q8_0)
LM_QUANT_DECL(q2_K)
LM_QUANT_DECL(q3_K)
LM_QUANT_DECL(q4_K)
LM_QUANT_DECL(q5_K)
LM_QUANT_DECL(q6_K)
LM_QUANT_DECL(tq1_0)
LM_QUANT_DECL(tq2_0)

// q8_1 and q8_K are activation formats: no whole-row quantizer.
void lm_quantize_row_q8_1_ref(const float * LM_GGML_RESTRICT x, block_q8_1 * LM_GGML_RESTRICT y, int64_t k);
void lm_quantize_row_q8_1(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k);
void lm_quantize_row_q8_K_ref(const float * LM_GGML_RESTRICT x, block_q8_K * LM_GGML_RESTRICT y, int64_t k);
void lm_quantize_row_q8_K(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k);

LM_DEQUANT_DECL(q4_0)
LM_DEQUANT_DECL(q4_1)
LM_DEQUANT_DECL(q5_0)
LM_DEQUANT_DECL(q5_1)
LM_DEQUANT_DECL(q8_0)
LM_DEQUANT_DECL(q2_K)
LM_DEQUANT_DECL(q3_K)
LM_DEQUANT_DECL(q4_K)
LM_DEQUANT_DECL(q5_K)
LM_DEQUANT_DECL(q6_K)
LM_DEQUANT_DECL(q8_K)
LM_DEQUANT_DECL(tq1_0)
LM_DEQUANT_DECL(tq2_0)

// Interleaved q4_0 / iq4_nl layouts used by the CPU matmul repacks. Each
// group of nrows_interleaved rows becomes one row of interleaved blocks.
size_t lm_quantize_q4_0_4x4(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_q4_0_4x8(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_q4_0_8x8(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq4_nl_4x4(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

// AVX2 kernels (ggml-quants-x86.c, x86-64 only); nb = number of blocks. Same
// bits as the scalar code; callers check lm_cpu_level() first.
void lm_dequantize_row_q4_0_avx2(const block_q4_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb);
void lm_dequantize_row_q8_0_avx2(const block_q8_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb);
void lm_dequantize_row_q4_K_avx2(const block_q4_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb);
void lm_dequantize_row_q8_0_avx512(const block_q8_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb);
void lm_dequantize_row_q4_K_avx512(const block_q4_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb);
void lm_dequantize_row_q6_K_avx2(const block_q6_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb);
void lm_quantize_row_q8_0_avx2(const float * LM_GGML_RESTRICT x, block_q8_0 * LM_GGML_RESTRICT y, int64_t nb);
void lm_quantize_row_q8_1_avx2(const float * LM_GGML_RESTRICT x, block_q8_1 * LM_GGML_RESTRICT y, int64_t nb);
void lm_quantize_row_q8_K_avx2(const float * LM_GGML_RESTRICT x, block_q8_K * LM_GGML_RESTRICT y, int64_t nb);

// NEON versions (ggml-quants-neon.c, arm64 only), same contract.
void lm_quantize_row_q8_0_neon(const float * LM_GGML_RESTRICT x, block_q8_0 * LM_GGML_RESTRICT y, int64_t nb);
void lm_quantize_row_q8_1_neon(const float * LM_GGML_RESTRICT x, block_q8_1 * LM_GGML_RESTRICT y, int64_t nb);
void lm_quantize_row_q8_K_neon(const float * LM_GGML_RESTRICT x, block_q8_K * LM_GGML_RESTRICT y, int64_t nb);

#undef LM_QUANT_DECL
#undef LM_DEQUANT_DECL

#ifdef __cplusplus
}
#endif
