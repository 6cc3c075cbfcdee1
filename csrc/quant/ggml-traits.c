// ggml-traits.c - the type traits table: names, block sizes and row
// converters of every tensor type. Sizes follow the block layouts of the file
// formats (see ggml-common.h). to_float/from_float_ref are filled in where the
// quantization code provides them (ggml-quants.h). Names and sizes are ggml's
// (MIT License, Copyright (c) 2023-2024 The ggml authors; the notice is in
// ggml-iq-tables.c).
#include "../base/ggml-impl.h"
#include "ggml-quants.h"
#include "ggml-traits.h"
#include "../base/ggml-simd.h"

#define TF(fn) ((lm_ggml_to_float_t) (fn))
#define FF(fn) ((lm_ggml_from_float_t) (fn))

// Every dequantizer of the table is entered through lm_to_float_stream, which
// writes large rows with streaming stores (to-float-stream.c); the f16 and bf16
// rows do the same inside their converters. One line per type.
#define STREAMED(t, blck) \
    static void to_float_##t(const void * x, float * y, int64_t k) { \
        if (!lm_to_float_stream(TF(lm_dequantize_row_##t), blck, sizeof(block_##t), x, y, k)) lm_dequantize_row_##t(x, y, k); \
    }

STREAMED(q4_0, QK4_0)
STREAMED(q4_1, QK4_1)
STREAMED(q5_0, QK5_0)
STREAMED(q5_1, QK5_1)
STREAMED(q8_0, QK8_0)
STREAMED(q2_K, QK_K)
STREAMED(q3_K, QK_K)
STREAMED(q4_K, QK_K)
STREAMED(q5_K, QK_K)
STREAMED(q6_K, QK_K)
STREAMED(iq2_xxs, QK_K)
STREAMED(iq2_xs, QK_K)
STREAMED(iq3_xxs, QK_K)
STREAMED(iq1_s, QK_K)
STREAMED(iq4_nl, QK4_NL)
STREAMED(iq3_s, QK_K)
STREAMED(iq2_s, QK_K)
STREAMED(iq4_xs, QK_K)
STREAMED(iq1_m, QK_K)
STREAMED(tq1_0, QK_K)
STREAMED(tq2_0, QK_K)

static void f16_to_f32_row(const void * x, float * y, int64_t k) { lm_ggml_fp16_to_fp32_row((const lm_ggml_fp16_t *) x, y, k); }
static void f32_to_f16_row(const float * x, void * y, int64_t k) { lm_ggml_fp32_to_fp16_row(x, (lm_ggml_fp16_t *) y, k); }
static void bf16_to_f32_row(const void * x, float * y, int64_t k) { lm_ggml_bf16_to_fp32_row((const lm_ggml_bf16_t *) x, y, k); }
static void f32_to_bf16_row_ref(const float * x, void * y, int64_t k) { lm_ggml_fp32_to_bf16_row_ref(x, (lm_ggml_bf16_t *) y, k); }

const struct lm_ggml_type_traits lm_ggml_type_traits_table[LM_GGML_TYPE_COUNT] = {
    [LM_GGML_TYPE_F32] = { .type_name = "f32", .blck_size = 1, .blck_size_interleave = 0, .type_size = 4, .is_quantized = false, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_F16] = { .type_name = "f16", .blck_size = 1, .blck_size_interleave = 0, .type_size = 2, .is_quantized = false, .to_float = f16_to_f32_row, .from_float_ref = f32_to_f16_row },
    [LM_GGML_TYPE_Q4_0] = { .type_name = "q4_0", .blck_size = 32, .blck_size_interleave = 0, .type_size = 18, .is_quantized = true, .to_float = to_float_q4_0, .from_float_ref = FF(lm_quantize_row_q4_0_ref) },
    [LM_GGML_TYPE_Q4_1] = { .type_name = "q4_1", .blck_size = 32, .blck_size_interleave = 0, .type_size = 20, .is_quantized = true, .to_float = to_float_q4_1, .from_float_ref = FF(lm_quantize_row_q4_1_ref) },
    [4] = { .type_name = "DEPRECATED", .blck_size = 0, .type_size = 0, .is_quantized = false },
    [5] = { .type_name = "DEPRECATED", .blck_size = 0, .type_size = 0, .is_quantized = false },
    [LM_GGML_TYPE_Q5_0] = { .type_name = "q5_0", .blck_size = 32, .blck_size_interleave = 0, .type_size = 22, .is_quantized = true, .to_float = to_float_q5_0, .from_float_ref = FF(lm_quantize_row_q5_0_ref) },
    [LM_GGML_TYPE_Q5_1] = { .type_name = "q5_1", .blck_size = 32, .blck_size_interleave = 0, .type_size = 24, .is_quantized = true, .to_float = to_float_q5_1, .from_float_ref = FF(lm_quantize_row_q5_1_ref) },
    [LM_GGML_TYPE_Q8_0] = { .type_name = "q8_0", .blck_size = 32, .blck_size_interleave = 0, .type_size = 34, .is_quantized = true, .to_float = to_float_q8_0, .from_float_ref = FF(lm_quantize_row_q8_0_ref) },
    [LM_GGML_TYPE_Q8_1] = { .type_name = "q8_1", .blck_size = 32, .blck_size_interleave = 0, .type_size = 36, .is_quantized = true, .to_float = NULL, .from_float_ref = FF(lm_quantize_row_q8_1_ref) },
    [LM_GGML_TYPE_Q2_K] = { .type_name = "q2_K", .blck_size = 256, .blck_size_interleave = 0, .type_size = 84, .is_quantized = true, .to_float = to_float_q2_K, .from_float_ref = FF(lm_quantize_row_q2_K_ref) },
    [LM_GGML_TYPE_Q3_K] = { .type_name = "q3_K", .blck_size = 256, .blck_size_interleave = 0, .type_size = 110, .is_quantized = true, .to_float = to_float_q3_K, .from_float_ref = FF(lm_quantize_row_q3_K_ref) },
    [LM_GGML_TYPE_Q4_K] = { .type_name = "q4_K", .blck_size = 256, .blck_size_interleave = 0, .type_size = 144, .is_quantized = true, .to_float = to_float_q4_K, .from_float_ref = FF(lm_quantize_row_q4_K_ref) },
    [LM_GGML_TYPE_Q5_K] = { .type_name = "q5_K", .blck_size = 256, .blck_size_interleave = 0, .type_size = 176, .is_quantized = true, .to_float = to_float_q5_K, .from_float_ref = FF(lm_quantize_row_q5_K_ref) },
    [LM_GGML_TYPE_Q6_K] = { .type_name = "q6_K", .blck_size = 256, .blck_size_interleave = 0, .type_size = 210, .is_quantized = true, .to_float = to_float_q6_K, .from_float_ref = FF(lm_quantize_row_q6_K_ref) },
    [LM_GGML_TYPE_Q8_K] = { .type_name = "q8_K", .blck_size = 256, .blck_size_interleave = 0, .type_size = 292, .is_quantized = true, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_IQ2_XXS] = { .type_name = "iq2_xxs", .blck_size = 256, .blck_size_interleave = 0, .type_size = 66, .is_quantized = true, .to_float = to_float_iq2_xxs, .from_float_ref = NULL },
    [LM_GGML_TYPE_IQ2_XS] = { .type_name = "iq2_xs", .blck_size = 256, .blck_size_interleave = 0, .type_size = 74, .is_quantized = true, .to_float = to_float_iq2_xs, .from_float_ref = NULL },
    [LM_GGML_TYPE_IQ3_XXS] = { .type_name = "iq3_xxs", .blck_size = 256, .blck_size_interleave = 0, .type_size = 98, .is_quantized = true, .to_float = to_float_iq3_xxs, .from_float_ref = FF(lm_quantize_row_iq3_xxs_ref) },
    [LM_GGML_TYPE_IQ1_S] = { .type_name = "iq1_s", .blck_size = 256, .blck_size_interleave = 0, .type_size = 50, .is_quantized = true, .to_float = to_float_iq1_s, .from_float_ref = NULL },
    [LM_GGML_TYPE_IQ4_NL] = { .type_name = "iq4_nl", .blck_size = 32, .blck_size_interleave = 0, .type_size = 18, .is_quantized = true, .to_float = to_float_iq4_nl, .from_float_ref = FF(lm_quantize_row_iq4_nl_ref) },
    [LM_GGML_TYPE_IQ3_S] = { .type_name = "iq3_s", .blck_size = 256, .blck_size_interleave = 0, .type_size = 110, .is_quantized = true, .to_float = to_float_iq3_s, .from_float_ref = FF(lm_quantize_row_iq3_s_ref) },
    [LM_GGML_TYPE_IQ2_S] = { .type_name = "iq2_s", .blck_size = 256, .blck_size_interleave = 0, .type_size = 82, .is_quantized = true, .to_float = to_float_iq2_s, .from_float_ref = FF(lm_quantize_row_iq2_s_ref) },
    [LM_GGML_TYPE_IQ4_XS] = { .type_name = "iq4_xs", .blck_size = 256, .blck_size_interleave = 0, .type_size = 136, .is_quantized = true, .to_float = to_float_iq4_xs, .from_float_ref = FF(lm_quantize_row_iq4_xs_ref) },
    [LM_GGML_TYPE_I8] = { .type_name = "i8", .blck_size = 1, .blck_size_interleave = 0, .type_size = 1, .is_quantized = false, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_I16] = { .type_name = "i16", .blck_size = 1, .blck_size_interleave = 0, .type_size = 2, .is_quantized = false, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_I32] = { .type_name = "i32", .blck_size = 1, .blck_size_interleave = 0, .type_size = 4, .is_quantized = false, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_I64] = { .type_name = "i64", .blck_size = 1, .blck_size_interleave = 0, .type_size = 8, .is_quantized = false, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_F64] = { .type_name = "f64", .blck_size = 1, .blck_size_interleave = 0, .type_size = 8, .is_quantized = false, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_IQ1_M] = { .type_name = "iq1_m", .blck_size = 256, .blck_size_interleave = 0, .type_size = 56, .is_quantized = true, .to_float = to_float_iq1_m, .from_float_ref = NULL },
    [LM_GGML_TYPE_BF16] = { .type_name = "bf16", .blck_size = 1, .blck_size_interleave = 0, .type_size = 2, .is_quantized = false, .to_float = bf16_to_f32_row, .from_float_ref = f32_to_bf16_row_ref },
    [LM_GGML_TYPE_Q4_0_4_4] = { .type_name = "q4_0_4x4", .blck_size = 32, .blck_size_interleave = 4, .type_size = 18, .is_quantized = true, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_Q4_0_4_8] = { .type_name = "q4_0_4x8", .blck_size = 32, .blck_size_interleave = 8, .type_size = 18, .is_quantized = true, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_Q4_0_8_8] = { .type_name = "q4_0_8x8", .blck_size = 32, .blck_size_interleave = 8, .type_size = 18, .is_quantized = true, .to_float = NULL, .from_float_ref = NULL },
    [LM_GGML_TYPE_TQ1_0] = { .type_name = "tq1_0", .blck_size = 256, .blck_size_interleave = 0, .type_size = 54, .is_quantized = true, .to_float = to_float_tq1_0, .from_float_ref = FF(lm_quantize_row_tq1_0_ref) },
    [LM_GGML_TYPE_TQ2_0] = { .type_name = "tq2_0", .blck_size = 256, .blck_size_interleave = 0, .type_size = 66, .is_quantized = true, .to_float = to_float_tq2_0, .from_float_ref = FF(lm_quantize_row_tq2_0_ref) },
    [LM_GGML_TYPE_IQ4_NL_4_4] = { .type_name = "iq4_nl_4x4", .blck_size = 32, .blck_size_interleave = 4, .type_size = 18, .is_quantized = true, .to_float = NULL, .from_float_ref = NULL },
};

const struct lm_ggml_type_traits * lm_ggml_get_type_traits(enum lm_ggml_type type) {
    LM_GGML_ASSERT((int) type >= 0 && type < LM_GGML_TYPE_COUNT);
    return &lm_ggml_type_traits_table[type];
}

// ---------------------------------------------------------------- row converters

bool lm_type_valid(enum lm_ggml_type type) {
    return (int) type >= 0 && type < LM_GGML_TYPE_COUNT && lm_ggml_type_traits_table[type].blck_size > 0;
}

static void f32_copy_to_f32(const void * x, float * y, int64_t k) { memcpy(y, x, (size_t) k * sizeof(float)); }
static void f32_copy_from_f32(const float * x, void * y, int64_t k) { memcpy(y, x, (size_t) k * sizeof(float)); }
static void f32_to_bf16_row(const float * x, void * y, int64_t k) { lm_ggml_fp32_to_bf16_row(x, (lm_ggml_bf16_t *) y, k); }

lm_ggml_to_float_t lm_type_to_f32_row(enum lm_ggml_type type) {
    if (!lm_type_valid(type)) return NULL;
    // the table has a dequantizer for f16, bf16 and the quantized types only
    return type == LM_GGML_TYPE_F32 ? f32_copy_to_f32 : lm_ggml_type_traits_table[type].to_float;
}

lm_ggml_from_float_t lm_type_from_f32_row(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_F32:   return f32_copy_from_f32;
        case LM_GGML_TYPE_F16:   return f32_to_f16_row;
        case LM_GGML_TYPE_BF16:  return f32_to_bf16_row;
        case LM_GGML_TYPE_Q4_0:  return lm_quantize_row_q4_0;
        case LM_GGML_TYPE_Q4_1:  return lm_quantize_row_q4_1;
        case LM_GGML_TYPE_Q5_0:  return lm_quantize_row_q5_0;
        case LM_GGML_TYPE_Q5_1:  return lm_quantize_row_q5_1;
        case LM_GGML_TYPE_Q8_0:  return lm_quantize_row_q8_0;
        case LM_GGML_TYPE_Q8_1:  return lm_quantize_row_q8_1;
        case LM_GGML_TYPE_Q2_K:  return lm_quantize_row_q2_K;
        case LM_GGML_TYPE_Q3_K:  return lm_quantize_row_q3_K;
        case LM_GGML_TYPE_Q4_K:  return lm_quantize_row_q4_K;
        case LM_GGML_TYPE_Q5_K:  return lm_quantize_row_q5_K;
        case LM_GGML_TYPE_Q6_K:  return lm_quantize_row_q6_K;
        case LM_GGML_TYPE_Q8_K:  return lm_quantize_row_q8_K;
        case LM_GGML_TYPE_TQ1_0: return lm_quantize_row_tq1_0;
        case LM_GGML_TYPE_TQ2_0: return lm_quantize_row_tq2_0;
        default: break;
    }
    // the i-quants (blockwise, so any span of whole blocks converts on its
    // own); the table has none for the integer types
    return lm_type_valid(type) ? lm_ggml_type_traits_table[type].from_float_ref : NULL;
}

bool lm_type_rows_rw(enum lm_ggml_type type) {
    return lm_type_to_f32_row(type) != NULL && lm_type_from_f32_row(type) != NULL;
}
