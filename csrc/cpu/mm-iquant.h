// mm-iquant.h - the integer form in which the i-quants (iq2_xxs, iq2_xs,
// iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m) and the ternary types (tq1_0, tq2_0)
// meet q8_K activations. Internal to the matmul files.
//
// Every one of these types decodes a 256-value block into 256 small signed
// integers q, 16 integer scales sc (one per 16 values) and the block's float
// scale d, so that value j of the block is
//
//     d * factor * sc[j / 16] * q[j]
//
// with a per-type power of two factor (mm_iq_traits). The codebook grids
// give the magnitudes and the sign bits their signs; iq1's offset of +-1/8
// per group is folded in by counting in eighths (q = 8 * grid +- 1).
// |q| <= 63 and 1 <= sc <= 31 for every type.
//
// The dot of a row of n / 256 blocks x with a q8_K row y is, on every SIMD
// level and in the GEMM:
//
//     sumf = 0
//     for each block i:
//         sumi = sum over g < 16 of sc[g] * (sum over k < 16 of q[16g+k] * y[i].qs[16g+k])
//         sumf += (d * y[i].d) * (float) sumi
//     result = factor * sumf
//
// sumi is an exact int32 (at most 256 * 31 * 63 * 128 in magnitude), so
// kernels may form it in any order and by any exact means (for instance
// with u = q + 64 in [1, 127] as the unsigned operand of u8 x s8 products,
// taking 64 * y's block sums back), and every level gives the same bits.
#pragma once

#include "mm-kernels.h"
#include "../quant/ggml-common.h"

#define MM_IQ_GROUPS (QK_K / 16)

typedef struct {
    int8_t  q[QK_K];
    int16_t sc[MM_IQ_GROUPS];
    float   d;
} mm_iq_block;

typedef void (*mm_iq_decode_fn)(const void * block, mm_iq_block * out);

struct mm_iq_traits {
    float           factor;
    mm_iq_decode_fn decode; // the scalar decoder: the definition the SIMD kernels match
};

// NULL for types that are not decoded this way.
const struct mm_iq_traits * mm_iq_traits(enum lm_ggml_type type);

// The scalar integer dot of mm_quant_dot's contract (vec_dot_type q8_K).
lm_ggml_vec_dot_t mm_iq_dot_scalar(enum lm_ggml_type type);

// SIMD forms with the scalar kernels' bits, or NULL where there is none:
// mm-iquant-x86.c (AVX2), mm-iquant-avx512.c (AVX-512 with VNNI: only
// where lm_cpu_vnni() holds), mm-iquant-neon.c (NEON, and with SDOT where the
// CPU has the dot product extension).
// The mm_qgemm_fn forms (mm-kernels.h) decode each weight block once for
// all columns and give each pair the bits of the level's dot.
#if defined(LM_X86)
lm_ggml_vec_dot_t mm_iq_dot_avx2(enum lm_ggml_type type);
mm_qgemm_fn       mm_iq_qgemm_avx2(enum lm_ggml_type type);
lm_ggml_vec_dot_t mm_iq_dot_avx512(enum lm_ggml_type type);
mm_qgemm_fn       mm_iq_qgemm_avx512(enum lm_ggml_type type);
// the AVX2 forms compiled for the AVX-512 level (mm-iquant-x86-evex.c):
// call only at LM_CPU_LEVEL_AVX512
lm_ggml_vec_dot_t mm_iq_dot_avx2_evex(enum lm_ggml_type type);
mm_qgemm_fn       mm_iq_qgemm_avx2_evex(enum lm_ggml_type type);
#endif
#if defined(LM_ARM64)
lm_ggml_vec_dot_t mm_iq_dot_neon(enum lm_ggml_type type, bool dotprod);
mm_qgemm_fn       mm_iq_qgemm_neon(enum lm_ggml_type type, bool dotprod);
#endif
