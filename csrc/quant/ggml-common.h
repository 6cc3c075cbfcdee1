// ggml-common.h - the block layouts of the quantized tensor types.
//
// These structs ARE the on-disk / in-memory format of GGUF tensor data, so
// every size and field order follows ggml's format exactly (the sizes are
// checked below against ggml's type traits). Internal.
// The layouts are those of ggml (MIT License, Copyright (c) 2023-2024 The
// ggml authors; the notice is in ggml-iq-tables.c).
#pragma once

#include <stdint.h>
#include <assert.h>

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef lm_ggml_fp16_t lm_ggml_half;

// Elements per block. LM_-prefixed names are ours; the short names used by
// the format documentation are provided too unless something else owns them.
#define LM_QK_K     256
#define LM_QK4_0    32
#define LM_QK4_1    32
#define LM_QK5_0    32
#define LM_QK5_1    32
#define LM_QK8_0    32
#define LM_QK8_1    32
#define LM_QK4_NL   32
#define LM_K_SCALE_SIZE 12
#define LM_IQ3S_N_SCALE (LM_QK_K / 64)

#ifndef QK_K
#define QK_K     LM_QK_K
#endif
#ifndef QK4_0
#define QK4_0    LM_QK4_0
#endif
#ifndef QK4_1
#define QK4_1    LM_QK4_1
#endif
#ifndef QK5_0
#define QK5_0    LM_QK5_0
#endif
#ifndef QK5_1
#define QK5_1    LM_QK5_1
#endif
#ifndef QK8_0
#define QK8_0    LM_QK8_0
#endif
#ifndef QK8_1
#define QK8_1    LM_QK8_1
#endif
#ifndef QK4_NL
#define QK4_NL   LM_QK4_NL
#endif
#ifndef K_SCALE_SIZE
#define K_SCALE_SIZE LM_K_SCALE_SIZE
#endif
#ifndef IQ3S_N_SCALE
#define IQ3S_N_SCALE LM_IQ3S_N_SCALE
#endif

// ---------------------------------------------------------------- legacy 32-element blocks

// 4-bit, symmetric: x = d * (q - 8). Low nibbles hold elements 0..15, high nibbles 16..31.
typedef struct {
    lm_ggml_half d;
    uint8_t qs[LM_QK4_0 / 2];
} block_q4_0;

// 4-bit, with minimum: x = d * q + m.
typedef struct {
    lm_ggml_half d;
    lm_ggml_half m;
    uint8_t qs[LM_QK4_1 / 2];
} block_q4_1;

// 5-bit symmetric: fifth bits of the 32 elements in qh (little-endian u32).
typedef struct {
    lm_ggml_half d;
    uint8_t qh[4];
    uint8_t qs[LM_QK5_0 / 2];
} block_q5_0;

typedef struct {
    lm_ggml_half d;
    lm_ggml_half m;
    uint8_t qh[4];
    uint8_t qs[LM_QK5_1 / 2];
} block_q5_1;

typedef struct {
    lm_ggml_half d;
    int8_t qs[LM_QK8_0];
} block_q8_0;

// s = d * sum(qs), kept for the dot products against q4_1/q5_1.
typedef struct {
    lm_ggml_half d;
    lm_ggml_half s;
    int8_t qs[LM_QK8_1];
} block_q8_1;

// ---------------------------------------------------------------- ternary (BitNet) 256-element blocks

// 5 trits per byte in qs (first 240 elements), 4 trits per byte in qh (last 16).
typedef struct {
    uint8_t qs[(LM_QK_K - 4 * LM_QK_K / 64) / 5];
    uint8_t qh[LM_QK_K / 64];
    lm_ggml_half d;
} block_tq1_0;

// 2 bits per element, value = q - 1.
typedef struct {
    uint8_t qs[LM_QK_K / 4];
    lm_ggml_half d;
} block_tq2_0;

// ---------------------------------------------------------------- K-quants: 256-element super-blocks

// 16 sub-blocks of 16: 4-bit scale | 4-bit min per sub-block, 2-bit quants.
typedef struct {
    uint8_t scales[LM_QK_K / 16];
    uint8_t qs[LM_QK_K / 4];
    lm_ggml_half d;
    lm_ggml_half dmin;
} block_q2_K;

// 16 sub-blocks of 16: 6-bit scales packed in 12 bytes; 2 low bits in qs, high bit in hmask.
typedef struct {
    uint8_t hmask[LM_QK_K / 8];
    uint8_t qs[LM_QK_K / 4];
    uint8_t scales[12];
    lm_ggml_half d;
} block_q3_K;

// 8 sub-blocks of 32: 6-bit scales and mins packed in 12 bytes.
typedef struct {
    lm_ggml_half d;
    lm_ggml_half dmin;
    uint8_t scales[LM_K_SCALE_SIZE];
    uint8_t qs[LM_QK_K / 2];
} block_q4_K;

typedef struct {
    lm_ggml_half d;
    lm_ggml_half dmin;
    uint8_t scales[LM_K_SCALE_SIZE];
    uint8_t qh[LM_QK_K / 8];
    uint8_t qs[LM_QK_K / 2];
} block_q5_K;

// 16 sub-blocks of 16 with signed 8-bit scales; 4 low bits in ql, 2 high in qh.
typedef struct {
    uint8_t ql[LM_QK_K / 2];
    uint8_t qh[LM_QK_K / 4];
    int8_t  scales[LM_QK_K / 16];
    lm_ggml_half d;
} block_q6_K;

// Activation format for the K-quant dot products: f32 scale, sums per 16.
typedef struct {
    float   d;
    int8_t  qs[LM_QK_K];
    int16_t bsums[LM_QK_K / 16];
} block_q8_K;

// ---------------------------------------------------------------- i-quants (codebooks live in the i-quant files)

typedef struct {
    lm_ggml_half d;
    uint16_t qs[LM_QK_K / 8];
} block_iq2_xxs;

typedef struct {
    lm_ggml_half d;
    uint16_t qs[LM_QK_K / 8];
    uint8_t  scales[LM_QK_K / 32];
} block_iq2_xs;

// qs: first half grid indices (low 8 bits), second half signs.
typedef struct {
    lm_ggml_half d;
    uint8_t qs[LM_QK_K / 4];
    uint8_t qh[LM_QK_K / 32];
    uint8_t scales[LM_QK_K / 32];
} block_iq2_s;

typedef struct {
    lm_ggml_half d;
    uint8_t qs[3 * LM_QK_K / 8];
} block_iq3_xxs;

typedef struct {
    lm_ggml_half d;
    uint8_t qs[LM_QK_K / 4];
    uint8_t qh[LM_QK_K / 32];
    uint8_t signs[LM_QK_K / 8];
    uint8_t scales[LM_IQ3S_N_SCALE];
} block_iq3_s;

typedef struct {
    lm_ggml_half d;
    uint8_t  qs[LM_QK_K / 8];
    uint16_t qh[LM_QK_K / 32];
} block_iq1_s;

// No separate scale field: the fp16 super-block scale is spread over the top
// nibbles of the four 16-bit words of scales.
typedef struct {
    uint8_t qs[LM_QK_K / 8];
    uint8_t qh[LM_QK_K / 16];
    uint8_t scales[LM_QK_K / 32];
} block_iq1_m;

typedef union {
    lm_ggml_half f16;
    uint16_t     u16;
} iq1m_scale_t;

typedef struct {
    lm_ggml_half d;
    uint8_t qs[LM_QK4_NL / 2];
} block_iq4_nl;

typedef struct {
    lm_ggml_half d;
    uint16_t scales_h;
    uint8_t  scales_l[LM_QK_K / 64];
    uint8_t  qs[LM_QK_K / 2];
} block_iq4_xs;

// ---------------------------------------------------------------- interleaved repacks (CPU matmul only)

typedef struct {
    lm_ggml_half d[4];
    uint8_t qs[LM_QK4_0 * 2];
} block_q4_0x4;

typedef struct {
    lm_ggml_half d[8];
    uint8_t qs[LM_QK4_0 * 4];
} block_q4_0x8;

typedef struct {
    lm_ggml_half d[4];
    int8_t qs[LM_QK8_0 * 4];
} block_q8_0x4;

typedef struct {
    lm_ggml_half d[8];
    int8_t qs[LM_QK8_0 * 8];
} block_q8_0x8;

typedef struct {
    lm_ggml_half d[4];
    uint8_t qs[LM_QK4_NL * 2];
} block_iq4_nlx4;

// ---------------------------------------------------------------- sizes fixed by the format

#define LM_CHECK_BLOCK(T, n) _Static_assert(sizeof(T) == (n), "wrong size of " #T)
LM_CHECK_BLOCK(block_q4_0,    18);
LM_CHECK_BLOCK(block_q4_1,    20);
LM_CHECK_BLOCK(block_q5_0,    22);
LM_CHECK_BLOCK(block_q5_1,    24);
LM_CHECK_BLOCK(block_q8_0,    34);
LM_CHECK_BLOCK(block_q8_1,    36);
LM_CHECK_BLOCK(block_q2_K,    84);
LM_CHECK_BLOCK(block_q3_K,   110);
LM_CHECK_BLOCK(block_q4_K,   144);
LM_CHECK_BLOCK(block_q5_K,   176);
LM_CHECK_BLOCK(block_q6_K,   210);
LM_CHECK_BLOCK(block_q8_K,   292);
LM_CHECK_BLOCK(block_iq2_xxs, 66);
LM_CHECK_BLOCK(block_iq2_xs,  74);
LM_CHECK_BLOCK(block_iq2_s,   82);
LM_CHECK_BLOCK(block_iq3_xxs, 98);
LM_CHECK_BLOCK(block_iq3_s,  110);
LM_CHECK_BLOCK(block_iq1_s,   50);
LM_CHECK_BLOCK(block_iq1_m,   56);
LM_CHECK_BLOCK(block_iq4_nl,  18);
LM_CHECK_BLOCK(block_iq4_xs, 136);
LM_CHECK_BLOCK(block_tq1_0,   54);
LM_CHECK_BLOCK(block_tq2_0,   66);
LM_CHECK_BLOCK(block_q4_0x4,  72);
LM_CHECK_BLOCK(block_q4_0x8, 144);
LM_CHECK_BLOCK(block_q8_0x4, 136);
LM_CHECK_BLOCK(block_q8_0x8, 272);
LM_CHECK_BLOCK(block_iq4_nlx4, 72);
#undef LM_CHECK_BLOCK

#ifdef __cplusplus
}
#endif
