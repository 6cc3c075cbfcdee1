// mm-quant-neon.c - NEON integer dot products of quantized weight blocks
// against the activation formats (q8_0, q8_1, q8_K), arm64 only. Each kernel
// computes what its scalar counterpart in mm-quant.c computes.
//
// Baseline ARMv8.0 only (no SDOT), so one binary runs on every arm64: byte
// products are widened with SMULL/SMLAL into int16 lanes and folded into
// int32 with SADALP. Each int16 lane takes at most as many products as its
// range allows: noted per kernel (activations are within [-128, 127]).
#include "mm-quant-neon.h"

#if defined(LM_ARM64)
#include "../quant/ggml-iquants.h"

// a . b over 16 bytes, as 8 int16 lanes of two products each.
static inline LM_ALWAYS_INLINE int16x8_t mul16(int8x16_t a, int8x16_t b) {
    return vmlal_high_s8(vmull_s8(vget_low_s8(a), vget_low_s8(b)), a, b);
}

// acc + a . b over 16 bytes, as 8 int16 lanes.
static inline LM_ALWAYS_INLINE int16x8_t mla16(int16x8_t acc, int8x16_t a, int8x16_t b) {
    return vmlal_high_s8(vmlal_s8(acc, vget_low_s8(a), vget_low_s8(b)), a, b);
}

// acc + sc * (the 8 int16 lanes of p), in int32.
static inline LM_ALWAYS_INLINE int32x4_t mla_scaled(int32x4_t acc, int16x8_t p, int16_t sc) {
    return vmlal_high_n_s16(vmlal_n_s16(acc, vget_low_s16(p), sc), p, sc);
}

// ---------------------------------------------------------------- 32-element blocks

// the fifth bits of elements 0-15 in order
static const uint8_t q5_idx[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
static const uint8_t q5_bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};

// The int32 lanes of one block against the 32 activation quants y0, y1:
// the per-row and the 8-row kernels' (VD32_BODY, QMV8_KERNEL).

// q4_0. lanes: 4 products of |x| <= 16
static inline LM_ALWAYS_INLINE int32x4_t blk_q4_0(const block_q4_0 * b, int8x16_t y0, int8x16_t y1) {
    const uint8x16_t q = vld1q_u8(b->qs), m4 = vdupq_n_u8(0xF);
    const int8x16_t off = vdupq_n_s8(8);
    const int8x16_t x0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, m4)), off);
    const int8x16_t x1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), off);
    return vpaddlq_s16(mla16(mul16(x0, y0), x1, y1));
}

// q4_1 (the min is the caller's). lanes: 4 products of x in [0, 15]
static inline LM_ALWAYS_INLINE int32x4_t blk_q4_1(const block_q4_1 * b, int8x16_t y0, int8x16_t y1) {
    const uint8x16_t q = vld1q_u8(b->qs), m4 = vdupq_n_u8(0xF);
    const int8x16_t x0 = vreinterpretq_s8_u8(vandq_u8(q, m4));
    const int8x16_t x1 = vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
    return vpaddlq_s16(mla16(mul16(x0, y0), x1, y1));
}

// q5_0. lanes: 4 products of x in [-16, 15]
static inline LM_ALWAYS_INLINE int32x4_t blk_q5_0(const block_q5_0 * b, int8x16_t y0, int8x16_t y1) {
    int8x16_t x0, x1;
    q5_values(b->qh, vld1q_u8(b->qs), q5_idx, q5_bit, true, &x0, &x1);
    return vpaddlq_s16(mla16(mul16(x0, y0), x1, y1));
}

// q5_1 (the min is the caller's). lanes: 4 products of x in [0, 31]
static inline LM_ALWAYS_INLINE int32x4_t blk_q5_1(const block_q5_1 * b, int8x16_t y0, int8x16_t y1) {
    int8x16_t x0, x1;
    q5_values(b->qh, vld1q_u8(b->qs), q5_idx, q5_bit, false, &x0, &x1);
    return vpaddlq_s16(mla16(mul16(x0, y0), x1, y1));
}

// q8_0. lanes: 2 products of full bytes (at most 2 * 128 * 128 in
// magnitude, which only -128 * -128 twice would exceed; foreign q8_0 data
// may hold -128 on both sides, so each 16 is widened on its own)
static inline LM_ALWAYS_INLINE int32x4_t blk_q8_0(const block_q8_0 * b, int8x16_t y0, int8x16_t y1) {
    const int8x16_t x0 = vld1q_s8(b->qs), x1 = vld1q_s8(b->qs + 16);
    int32x4_t d = vpaddlq_s16(vmull_s8(vget_low_s8(x0), vget_low_s8(y0)));
    d = vpadalq_s16(d, vmull_high_s8(x0, y0));
    d = vpadalq_s16(d, vmull_s8(vget_low_s8(x1), vget_low_s8(y1)));
    return vpadalq_s16(d, vmull_high_s8(x1, y1));
}

// iq4_nl. lanes: 2 products of x in [-127, 113] (at most 2 * 127 * 128)
static inline LM_ALWAYS_INLINE int32x4_t blk_iq4_nl(const block_iq4_nl * b, int8x16_t y0, int8x16_t y1) {
    const int8x16_t values = vld1q_s8(lm_kvalues_iq4nl);
    const uint8x16_t q = vld1q_u8(b->qs), m4 = vdupq_n_u8(0xF);
    const int8x16_t x0 = vqtbl1q_s8(values, vandq_u8(q, m4));
    const int8x16_t x1 = vqtbl1q_s8(values, vshrq_n_u8(q, 4));
    return vpadalq_s16(vpaddlq_s16(mul16(x0, y0)), mul16(x1, y1));
}

static void vd_q4_0_q8_0_neon(VD_ARGS)   { VD_UNUSED; VD32_BODY(block_q4_0, blk_q4_0, vld1q_s8); }
static void vd_q4_1_q8_1_neon(VD_ARGS)   { VD_UNUSED; VD32_BODY_MIN(block_q4_1, blk_q4_1, vld1q_s8); }
static void vd_q5_0_q8_0_neon(VD_ARGS)   { VD_UNUSED; VD32_BODY(block_q5_0, blk_q5_0, vld1q_s8); }
static void vd_q5_1_q8_1_neon(VD_ARGS)   { VD_UNUSED; VD32_BODY_MIN(block_q5_1, blk_q5_1, vld1q_s8); }
static void vd_q8_0_q8_0_neon(VD_ARGS)   { VD_UNUSED; VD32_BODY(block_q8_0, blk_q8_0, vld1q_s8); }
static void vd_iq4_nl_q8_0_neon(VD_ARGS) { VD_UNUSED; VD32_BODY(block_iq4_nl, blk_iq4_nl, vld1q_s8); }

// ---------------------------------------------------------------- K-quants (256-element super-blocks)

// ai + the scaled lanes of a q4_K/q5_K step: x[0..3] (sub-block 2j: x[0],
// x[1]; 2j + 1: x[2], x[3]) against a[0..3]. lanes: 4 products of x in [0, 31]
static inline LM_ALWAYS_INLINE int32x4_t k4_step_sum(int32x4_t ai, const int8x16_t * x, const int8x16_t * a, int16_t s0, int16_t s1) {
    ai = mla_scaled(ai, mla16(mul16(x[0], a[0]), x[1], a[1]), s0);
    return mla_scaled(ai, mla16(mul16(x[2], a[2]), x[3], a[3]), s1);
}

// q4_K step j: 32 quant bytes (sub-blocks 2j, 2j + 1) against their 64
// activations a[0..3], scales s0, s1
static inline LM_ALWAYS_INLINE int32x4_t q4k_step(int32x4_t ai, const block_q4_K * b, int j, const int8x16_t * a, int16_t s0, int16_t s1) {
    int8x16_t x[4];
    k4_nibbles(vld1q_u8(b->qs + 32 * j), vld1q_u8(b->qs + 32 * j + 16), x);
    return k4_step_sum(ai, x, a, s0, s1);
}

// q5_K step j: q4_K's with a fifth bit per element in qh (bits 2j, 2j + 1 of
// byte l for the low / high nibbles of the j-th 32 bytes of qs)
static inline LM_ALWAYS_INLINE int32x4_t q5k_step(int32x4_t ai, const block_q5_K * b, int j, const int8x16_t * a, int16_t s0, int16_t s1) {
    const int8x16_t sh = vdupq_n_s8((int8_t) (-2 * j));
    int8x16_t x[4];
    k5_values(vld1q_u8(b->qs + 32 * j), vld1q_u8(b->qs + 32 * j + 16), vshlq_u8(vld1q_u8(b->qh), sh),
              vshlq_u8(vld1q_u8(b->qh + 16), sh), x);
    return k4_step_sum(ai, x, a, s0, s1);
}

static void vd_q4_K_q8_K_neon(VD_ARGS) { VD_UNUSED; VDK4_BODY(block_q4_K, q4k_step, vld1q_s8); }
static void vd_q5_K_q8_K_neon(VD_ARGS) { VD_UNUSED; VDK4_BODY(block_q5_K, q5k_step, vld1q_s8); }

// ai + 4 sub-blocks of 16: v[k] against a[k], scaled by s0..s3 (the steps
// of q2_K, q3_K, q6_K). lanes: 2 products of x in [-32, 31]
static inline LM_ALWAYS_INLINE int32x4_t k16_step_sum(int32x4_t ai, const int8x16_t * v, const int8x16_t * a,
                                                      int16_t s0, int16_t s1, int16_t s2, int16_t s3) {
    ai = mla_scaled(ai, mul16(v[0], a[0]), s0);
    ai = mla_scaled(ai, mul16(v[1], a[1]), s1);
    ai = mla_scaled(ai, mul16(v[2], a[2]), s2);
    return mla_scaled(ai, mul16(v[3], a[3]), s3);
}

// iq4_xs: 8 sub-blocks of 32 of iq4_nl codes (16 bytes each: the low
// nibbles meet the first 16 activations, the high ones the next 16), with
// signed 6-bit scales. Step j is sub-blocks 2j (scale s0), 2j + 1 (s1).
// lanes: 2 products of x in [-127, 113] (at most 2 * 127 * 128)
static inline LM_ALWAYS_INLINE int32x4_t iq4xs_step(int32x4_t ai, const block_iq4_xs * b, int j, const int8x16_t * a, int16_t s0, int16_t s1) {
    int8x16_t x[4];
    iq4_values(vld1q_u8(b->qs + 32 * j), vld1q_u8(b->qs + 32 * j + 16), x);
    return k16_step_sum(ai, x, a, s0, s0, s1, s1);
}

static void vd_iq4_xs_q8_K_neon(VD_ARGS) { VD_UNUSED; VDKX_BODY(iq4xs_step, vld1q_s8); }

// q6_K step: per half of 128, element l of quarter k (32 each) takes 4 bits
// of ql[l + 32 * (k & 1)] (low nibble for k < 2) and bits 2k, 2k+1 of
// qh[l]; the scale of its 16 is scales[2k + l / 16]. A step is one 16 of
// each quarter: ql, qh at its first byte, scales s0..s3 of the quarters.
static inline LM_ALWAYS_INLINE int32x4_t q6k_step(int32x4_t ai, const uint8_t * ql, const uint8_t * qh, const int8x16_t * a,
                                                  int16_t s0, int16_t s1, int16_t s2, int16_t s3) {
    int8x16_t v[4];
    q6k_values(vld1q_u8(ql), vld1q_u8(ql + 32), vld1q_u8(qh), v);
    return k16_step_sum(ai, v, a, s0, s1, s2, s3);
}

static void vd_q6_K_q8_K_neon(VD_ARGS) { VD_UNUSED; VDK6_BODY(q6k_step, vld1q_s8); }

// q2_K: 16 sub-blocks of 16; sub-block 8h + 2s + p holds bits 2s..2s+1 of
// qs[32h + 16p + l] and scale | min << 4 in scales[8h + 2s + p]. Step j
// (h = j / 2) takes groups s = 2 (j % 2), 2 (j % 2) + 1. q3_K: the same
// packing of the low 2 bits; the third bit of element 16p + l of group
// (h, s) is bit 4h + s of hmask[16p + l] (hm, with third), and a clear bit
// subtracts 4. lanes: 2 products of x in [-4, 3]
static inline LM_ALWAYS_INLINE int32x4_t k23_step(int32x4_t ai, const uint8_t * qs, const uint8_t * hm, bool third, int j, const int8x16_t * a,
                                                  int16_t s0, int16_t s1, int16_t s2, int16_t s3) {
    const uint8_t * q = qs + 32 * (j / 2);
    const uint8x16_t z = vdupq_n_u8(0);
    int8x16_t v[4];
    k23_values(vld1q_u8(q), vld1q_u8(q + 16), third ? vld1q_u8(hm) : z, third ? vld1q_u8(hm + 16) : z, third, j, v);
    return k16_step_sum(ai, v, a, s0, s1, s2, s3);
}
static inline LM_ALWAYS_INLINE int32x4_t q2k_step(int32x4_t ai, const block_q2_K * b, int j, const int8x16_t * a,
                                                  int16_t s0, int16_t s1, int16_t s2, int16_t s3) {
    return k23_step(ai, b->qs, NULL, false, j, a, s0, s1, s2, s3);
}
static inline LM_ALWAYS_INLINE int32x4_t q3k_step(int32x4_t ai, const block_q3_K * b, int j, const int8x16_t * a,
                                                  int16_t s0, int16_t s1, int16_t s2, int16_t s3) {
    return k23_step(ai, b->qs, b->hmask, true, j, a, s0, s1, s2, s3);
}

static void vd_q2_K_q8_K_neon(VD_ARGS) { VD_UNUSED; VDK2_BODY(q2k_step, vld1q_s8); }
static void vd_q3_K_q8_K_neon(VD_ARGS) { VD_UNUSED; VDK3_BODY(q3k_step, vld1q_s8); }

QMV8_KERNEL(qmv8_q4_0_neon, , block_q4_0, block_q8_0, blk_q4_0, QMV8_NO_MIN)
QMV8_KERNEL(qmv8_q4_1_neon, , block_q4_1, block_q8_1, blk_q4_1, QMV8_MIN)
QMV8_KERNEL(qmv8_q5_0_neon, , block_q5_0, block_q8_0, blk_q5_0, QMV8_NO_MIN)
QMV8_KERNEL(qmv8_q5_1_neon, , block_q5_1, block_q8_1, blk_q5_1, QMV8_MIN)
QMV8_KERNEL(qmv8_q8_0_neon, , block_q8_0, block_q8_0, blk_q8_0, QMV8_NO_MIN)
QMV8_KERNEL(qmv8_iq4_nl_neon, , block_iq4_nl, block_q8_0, blk_iq4_nl, QMV8_NO_MIN)
#define SCL_NEON(t, r) vgetq_lane_s16(t, r)
QMV8K_KERNEL(qmv8_q2_K_neon, , block_q2_K, Q2K8_BODY, q2k_step, SCL_NEON, 1)
QMV8K_KERNEL(qmv8_q3_K_neon, , block_q3_K, Q3K8_BODY, q3k_step, SCL_NEON, 0)
QMV8K_KERNEL(qmv8_q4_K_neon, , block_q4_K, Q4K8_BODY, q4k_step, SCL_NEON, 1)
QMV8K_KERNEL(qmv8_q5_K_neon, , block_q5_K, Q4K8_BODY, q5k_step, SCL_NEON, 1)
QMV8K_KERNEL(qmv8_q6_K_neon, , block_q6_K, Q6K8_BODY, q6k_step, SCL_NEON, 0)
QMV8K_KERNEL(qmv8_iq4_xs_neon, , block_iq4_xs, IQ4XS8_BODY, iq4xs_step, SCL_NEON, 0)

mm_qmv8_fn mm_qmv8_neon(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0:   return qmv8_q4_0_neon;
        case LM_GGML_TYPE_Q4_1:   return qmv8_q4_1_neon;
        case LM_GGML_TYPE_Q5_0:   return qmv8_q5_0_neon;
        case LM_GGML_TYPE_Q5_1:   return qmv8_q5_1_neon;
        case LM_GGML_TYPE_Q8_0:   return qmv8_q8_0_neon;
        case LM_GGML_TYPE_IQ4_NL: return qmv8_iq4_nl_neon;
        case LM_GGML_TYPE_Q2_K:   return qmv8_q2_K_neon;
        case LM_GGML_TYPE_Q3_K:   return qmv8_q3_K_neon;
        case LM_GGML_TYPE_Q4_K:   return qmv8_q4_K_neon;
        case LM_GGML_TYPE_Q5_K:   return qmv8_q5_K_neon;
        case LM_GGML_TYPE_Q6_K:   return qmv8_q6_K_neon;
        case LM_GGML_TYPE_IQ4_XS: return qmv8_iq4_xs_neon;
        default: return NULL;
    }
}

lm_ggml_vec_dot_t mm_quant_dot_neon(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0:   return vd_q4_0_q8_0_neon;
        case LM_GGML_TYPE_Q4_1:   return vd_q4_1_q8_1_neon;
        case LM_GGML_TYPE_Q5_0:   return vd_q5_0_q8_0_neon;
        case LM_GGML_TYPE_Q5_1:   return vd_q5_1_q8_1_neon;
        case LM_GGML_TYPE_Q8_0:   return vd_q8_0_q8_0_neon;
        case LM_GGML_TYPE_IQ4_NL: return vd_iq4_nl_q8_0_neon;
        case LM_GGML_TYPE_IQ4_XS: return vd_iq4_xs_q8_K_neon;
        case LM_GGML_TYPE_Q2_K:   return vd_q2_K_q8_K_neon;
        case LM_GGML_TYPE_Q3_K:   return vd_q3_K_q8_K_neon;
        case LM_GGML_TYPE_Q4_K:   return vd_q4_K_q8_K_neon;
        case LM_GGML_TYPE_Q5_K:   return vd_q5_K_q8_K_neon;
        case LM_GGML_TYPE_Q6_K:   return vd_q6_K_q8_K_neon;
        default: return NULL;
    }
}
#else
typedef int mm_quant_neon_unused; // ISO C forbids an empty translation unit
#endif
