// mm-quant-neon-dot.c - the integer dots of mm-quant-neon.c with the ARMv8.2
// dot product (SDOT), arm64 only. Each function is compiled for that
// extension alone (LM_TARGET_DOTPROD) and is chosen at run time
// (LM_CPU_LEVEL_NEON_DOTPROD), so one binary still runs on ARMv8.0.
//
// Same bits as the NEON kernels. Those end each block (or super-block) with
// float ops on 4 int32 lanes, so a lane's value, i.e. which products it sums,
// is part of the result. SDOT sums 4 adjacent byte products into a lane; both
// operands are first permuted (TBL, one index vector per kernel) so that each
// group of 4 holds the bytes the NEON kernel gives that lane:
//   32-element blocks (SMULL/SMLAL, then SADDLP): lane j of every 16 bytes
//     takes bytes 2j, 2j+1, 2j+8, 2j+9 (pair4 below);
//   K-quants (SMULL/SMLAL, then SMLAL by the sub-block scale): lane j takes
//     bytes j, j+4, j+8, j+12 (trans4 below).
// Weights are permuted as packed bytes (one TBL serves both nibbles, or all
// four 2-bit fields). Activations are permuted 16 bytes at a time by the
// kernels the type traits' vec_dot gives (_dot), or once per column by the
// matmul's quantizer for the kernels it uses (_dotpre). The integer sums are
// exact in both kernels; the float ops are the NEON kernel's, in its order.
#include "mm-quant-neon.h"

#if defined(LM_ARM64)
#include "../quant/ggml-iquants.h"
#include "../quant/ggml-quants.h"

static const uint8_t pair4[16]  = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};
static const uint8_t trans4[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};

// The fifth bits of q5 elements in pair4's order: element pair4[i] is bit
// pair4[i] % 8 of qh byte pair4[i] / 8.
static const uint8_t q5_idx_pair4[16] = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
static const uint8_t q5_bit_pair4[16] = {1, 2, 1, 2, 4, 8, 4, 8, 16, 32, 16, 32, 64, 128, 64, 128};

// 16 activation bytes at p, in the order idx gives; pre: they are in it already
// (activations quantized for the matmul by mm_act_quantizer_dotprod).
static inline LM_ALWAYS_INLINE int8x16_t act16(const int8_t * p, uint8x16_t idx, bool pre) {
    return pre ? vld1q_s8(p) : vqtbl1q_s8(vld1q_s8(p), idx);
}

// a0 . b0 + a1 . b1, 4 bytes per lane.
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t dot2(int8x16_t a0, int8x16_t b0, int8x16_t a1, int8x16_t b1) {
    return vdotq_s32(vdotq_s32(vdupq_n_s32(0), a0, b0), a1, b1);
}

// acc + sc * (a . b), 4 bytes per lane.
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t dot_scaled(int32x4_t acc, int8x16_t a, int8x16_t b, int32_t sc) {
    return vmlaq_n_s32(acc, vdotq_s32(vdupq_n_s32(0), a, b), sc);
}

// ---------------------------------------------------------------- 32-element blocks

// The int32 lanes of one block against the 32 activation quants y0, y1 (in
// pair4 order): the per-row and the 8-row kernels' (VD32_BODY, QMV8_KERNEL).
// The weights' 16 bytes are permuted once for both nibbles.

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t blk_q4_0(const block_q4_0 * b, int8x16_t y0, int8x16_t y1) {
    const uint8x16_t q = vqtbl1q_u8(vld1q_u8(b->qs), vld1q_u8(pair4)), m4 = vdupq_n_u8(0xF);
    const int8x16_t off = vdupq_n_s8(8);
    const int8x16_t x0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, m4)), off);
    const int8x16_t x1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), off);
    return dot2(x0, y0, x1, y1);
}

// q4_1: the min is the caller's
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t blk_q4_1(const block_q4_1 * b, int8x16_t y0, int8x16_t y1) {
    const uint8x16_t q = vqtbl1q_u8(vld1q_u8(b->qs), vld1q_u8(pair4)), m4 = vdupq_n_u8(0xF);
    return dot2(vreinterpretq_s8_u8(vandq_u8(q, m4)), y0, vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), y1);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t blk_q5_0(const block_q5_0 * b, int8x16_t y0, int8x16_t y1) {
    int8x16_t x0, x1;
    q5_values(b->qh, vqtbl1q_u8(vld1q_u8(b->qs), vld1q_u8(pair4)), q5_idx_pair4, q5_bit_pair4, true, &x0, &x1);
    return dot2(x0, y0, x1, y1);
}

// q5_1: the min is the caller's
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t blk_q5_1(const block_q5_1 * b, int8x16_t y0, int8x16_t y1) {
    int8x16_t x0, x1;
    q5_values(b->qh, vqtbl1q_u8(vld1q_u8(b->qs), vld1q_u8(pair4)), q5_idx_pair4, q5_bit_pair4, false, &x0, &x1);
    return dot2(x0, y0, x1, y1);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t blk_q8_0(const block_q8_0 * b, int8x16_t y0, int8x16_t y1) {
    const uint8x16_t pp = vld1q_u8(pair4);
    return dot2(vqtbl1q_s8(vld1q_s8(b->qs), pp), y0, vqtbl1q_s8(vld1q_s8(b->qs + 16), pp), y1);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t blk_iq4_nl(const block_iq4_nl * b, int8x16_t y0, int8x16_t y1) {
    const int8x16_t values = vld1q_s8(lm_kvalues_iq4nl);
    const uint8x16_t q = vqtbl1q_u8(vld1q_u8(b->qs), vld1q_u8(pair4)), m4 = vdupq_n_u8(0xF);
    return dot2(vqtbl1q_s8(values, vandq_u8(q, m4)), y0, vqtbl1q_s8(values, vshrq_n_u8(q, 4)), y1);
}

// 16 activation bytes at p in pair4 order (pp, pre: as act16)
#define ACT_PAIR4(p) act16(p, pp, pre)
// the per-row kernel k_T of weight type B (BODY: VD32_BODY or VD32_BODY_MIN)
#define K32(T, B, BODY)                                                                                   \
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD void k_##T(VD_ARGS, bool pre) {                         \
    VD_UNUSED;                                                                                            \
    const uint8x16_t pp = vld1q_u8(pair4);                                                                \
    BODY(block_##B, blk_##B, ACT_PAIR4);                                                                  \
}
K32(q4_0_q8_0, q4_0, VD32_BODY)
K32(q4_1_q8_1, q4_1, VD32_BODY_MIN)
K32(q5_0_q8_0, q5_0, VD32_BODY)
K32(q5_1_q8_1, q5_1, VD32_BODY_MIN)
K32(q8_0_q8_0, q8_0, VD32_BODY)
K32(iq4_nl_q8_0, iq4_nl, VD32_BODY)

// ---------------------------------------------------------------- K-quants (256-element super-blocks)

// the K-quant steps of mm-quant-neon.c, weights permuted to trans4 order
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t k4_step_sum(int32x4_t ai, const int8x16_t * x, const int8x16_t * a, int32_t s0, int32_t s1) {
    return vmlaq_n_s32(vmlaq_n_s32(ai, dot2(x[0], a[0], x[1], a[1]), s0), dot2(x[2], a[2], x[3], a[3]), s1);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t q4k_step(int32x4_t ai, const block_q4_K * b, int j, const int8x16_t * a, int32_t s0, int32_t s1) {
    const uint8x16_t tt = vld1q_u8(trans4);
    int8x16_t x[4];
    k4_nibbles(vqtbl1q_u8(vld1q_u8(b->qs + 32 * j), tt), vqtbl1q_u8(vld1q_u8(b->qs + 32 * j + 16), tt), x);
    return k4_step_sum(ai, x, a, s0, s1);
}

// iq4_xs step j: sub-blocks 2j, 2j + 1 (as in mm-quant-neon.c)
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t iq4xs_step(int32x4_t ai, const block_iq4_xs * b, int j, const int8x16_t * a, int32_t s0, int32_t s1) {
    const uint8x16_t tt = vld1q_u8(trans4);
    int8x16_t x[4];
    iq4_values(vqtbl1q_u8(vld1q_u8(b->qs + 32 * j), tt), vqtbl1q_u8(vld1q_u8(b->qs + 32 * j + 16), tt), x);
    return k4_step_sum(ai, x, a, s0, s1);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t q5k_step(int32x4_t ai, const block_q5_K * b, int j, const int8x16_t * a, int32_t s0, int32_t s1) {
    const uint8x16_t tt = vld1q_u8(trans4);
    const int8x16_t sh = vdupq_n_s8((int8_t) (-2 * j));
    int8x16_t x[4];
    k5_values(vqtbl1q_u8(vld1q_u8(b->qs + 32 * j), tt), vqtbl1q_u8(vld1q_u8(b->qs + 32 * j + 16), tt),
              vqtbl1q_u8(vshlq_u8(vld1q_u8(b->qh), sh), tt), vqtbl1q_u8(vshlq_u8(vld1q_u8(b->qh + 16), sh), tt), x);
    return k4_step_sum(ai, x, a, s0, s1);
}

// ai + 4 sub-blocks of 16: v[k] against a[k], scaled by s0..s3 (q2_K, q3_K, q6_K)
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t k16_step_sum(int32x4_t ai, const int8x16_t * v, const int8x16_t * a,
                                                                        int32_t s0, int32_t s1, int32_t s2, int32_t s3) {
    ai = dot_scaled(ai, v[0], a[0], s0);
    ai = dot_scaled(ai, v[1], a[1], s1);
    ai = dot_scaled(ai, v[2], a[2], s2);
    return dot_scaled(ai, v[3], a[3], s3);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t q6k_step(int32x4_t ai, const uint8_t * ql, const uint8_t * qh, const int8x16_t * a,
                                                                    int32_t s0, int32_t s1, int32_t s2, int32_t s3) {
    const uint8x16_t tt = vld1q_u8(trans4);
    int8x16_t v[4];
    q6k_values(vqtbl1q_u8(vld1q_u8(ql), tt), vqtbl1q_u8(vld1q_u8(ql + 32), tt), vqtbl1q_u8(vld1q_u8(qh), tt), v);
    return k16_step_sum(ai, v, a, s0, s1, s2, s3);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t k23_step(int32x4_t ai, const uint8_t * qs, const uint8_t * hm, bool third, int j, const int8x16_t * a,
                                                                    int32_t s0, int32_t s1, int32_t s2, int32_t s3) {
    const uint8x16_t tt = vld1q_u8(trans4), z = vdupq_n_u8(0);
    const uint8_t * q = qs + 32 * (j / 2);
    int8x16_t v[4];
    k23_values(vqtbl1q_u8(vld1q_u8(q), tt), vqtbl1q_u8(vld1q_u8(q + 16), tt), third ? vqtbl1q_u8(vld1q_u8(hm), tt) : z,
               third ? vqtbl1q_u8(vld1q_u8(hm + 16), tt) : z, third, j, v);
    return k16_step_sum(ai, v, a, s0, s1, s2, s3);
}
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t q2k_step(int32x4_t ai, const block_q2_K * b, int j, const int8x16_t * a,
                                                                    int32_t s0, int32_t s1, int32_t s2, int32_t s3) {
    return k23_step(ai, b->qs, NULL, false, j, a, s0, s1, s2, s3);
}
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t q3k_step(int32x4_t ai, const block_q3_K * b, int j, const int8x16_t * a,
                                                                    int32_t s0, int32_t s1, int32_t s2, int32_t s3) {
    return k23_step(ai, b->qs, b->hmask, true, j, a, s0, s1, s2, s3);
}

// 16 activation bytes at p in trans4 order (tt, pre: as act16)
#define ACT_TRANS4(p) act16(p, tt, pre)

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD void k_q4_K_q8_K(VD_ARGS, bool pre) {
    VD_UNUSED;
    const uint8x16_t tt = vld1q_u8(trans4);
    VDK4_BODY(block_q4_K, q4k_step, ACT_TRANS4);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD void k_q5_K_q8_K(VD_ARGS, bool pre) {
    VD_UNUSED;
    const uint8x16_t tt = vld1q_u8(trans4);
    VDK4_BODY(block_q5_K, q5k_step, ACT_TRANS4);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD void k_iq4_xs_q8_K(VD_ARGS, bool pre) {
    VD_UNUSED;
    const uint8x16_t tt = vld1q_u8(trans4);
    VDKX_BODY(iq4xs_step, ACT_TRANS4);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD void k_q6_K_q8_K(VD_ARGS, bool pre) {
    VD_UNUSED;
    const uint8x16_t tt = vld1q_u8(trans4);
    VDK6_BODY(q6k_step, ACT_TRANS4);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD void k_q2_K_q8_K(VD_ARGS, bool pre) {
    VD_UNUSED;
    const uint8x16_t tt = vld1q_u8(trans4);
    VDK2_BODY(q2k_step, ACT_TRANS4);
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD void k_q3_K_q8_K(VD_ARGS, bool pre) {
    VD_UNUSED;
    const uint8x16_t tt = vld1q_u8(trans4);
    VDK3_BODY(q3k_step, ACT_TRANS4);
}

// ---------------------------------------------------------------- entry points

// Each kernel twice: against activations as the format has them (the type
// traits' vec_dot), and against ones already in its lanes' order (the matmul).
#define DOT_ENTRIES(T)                                                                                    \
static LM_TARGET_DOTPROD void vd_##T##_dot(VD_ARGS)    { k_##T(n, s, bs, vx, bx, vy, by, nrc, false); }     \
static LM_TARGET_DOTPROD void vd_##T##_dotpre(VD_ARGS) { k_##T(n, s, bs, vx, bx, vy, by, nrc, true); }
DOT_ENTRIES(q4_0_q8_0)
DOT_ENTRIES(q4_1_q8_1)
DOT_ENTRIES(q5_0_q8_0)
DOT_ENTRIES(q5_1_q8_1)
DOT_ENTRIES(q8_0_q8_0)
DOT_ENTRIES(iq4_nl_q8_0)
DOT_ENTRIES(iq4_xs_q8_K)
DOT_ENTRIES(q2_K_q8_K)
DOT_ENTRIES(q3_K_q8_K)
DOT_ENTRIES(q4_K_q8_K)
DOT_ENTRIES(q5_K_q8_K)
DOT_ENTRIES(q6_K_q8_K)

static const struct { enum lm_ggml_type type; lm_ggml_vec_dot_t std, pre; } dot_kernels[] = {
    { LM_GGML_TYPE_Q4_0, vd_q4_0_q8_0_dot, vd_q4_0_q8_0_dotpre },       { LM_GGML_TYPE_Q4_1, vd_q4_1_q8_1_dot, vd_q4_1_q8_1_dotpre },
    { LM_GGML_TYPE_Q5_0, vd_q5_0_q8_0_dot, vd_q5_0_q8_0_dotpre },       { LM_GGML_TYPE_Q5_1, vd_q5_1_q8_1_dot, vd_q5_1_q8_1_dotpre },
    { LM_GGML_TYPE_Q8_0, vd_q8_0_q8_0_dot, vd_q8_0_q8_0_dotpre },       { LM_GGML_TYPE_IQ4_NL, vd_iq4_nl_q8_0_dot, vd_iq4_nl_q8_0_dotpre },
    { LM_GGML_TYPE_IQ4_XS, vd_iq4_xs_q8_K_dot, vd_iq4_xs_q8_K_dotpre }, { LM_GGML_TYPE_Q2_K, vd_q2_K_q8_K_dot, vd_q2_K_q8_K_dotpre },
    { LM_GGML_TYPE_Q3_K, vd_q3_K_q8_K_dot, vd_q3_K_q8_K_dotpre },       { LM_GGML_TYPE_Q4_K, vd_q4_K_q8_K_dot, vd_q4_K_q8_K_dotpre },
    { LM_GGML_TYPE_Q5_K, vd_q5_K_q8_K_dot, vd_q5_K_q8_K_dotpre },       { LM_GGML_TYPE_Q6_K, vd_q6_K_q8_K_dot, vd_q6_K_q8_K_dotpre },
};

static lm_ggml_vec_dot_t find_kernel(enum lm_ggml_type type, bool pre) {
    for (size_t i = 0; i < sizeof(dot_kernels) / sizeof(dot_kernels[0]); i++) {
        if (dot_kernels[i].type == type) return pre ? dot_kernels[i].pre : dot_kernels[i].std;
    }
    return NULL;
}

// the matmul's 8-row kernels: activations in lane order (as the _pre kernels)
QMV8_KERNEL(qmv8_q4_0_dot, LM_TARGET_DOTPROD, block_q4_0, block_q8_0, blk_q4_0, QMV8_NO_MIN)
QMV8_KERNEL(qmv8_q4_1_dot, LM_TARGET_DOTPROD, block_q4_1, block_q8_1, blk_q4_1, QMV8_MIN)
QMV8_KERNEL(qmv8_q5_0_dot, LM_TARGET_DOTPROD, block_q5_0, block_q8_0, blk_q5_0, QMV8_NO_MIN)
QMV8_KERNEL(qmv8_q5_1_dot, LM_TARGET_DOTPROD, block_q5_1, block_q8_1, blk_q5_1, QMV8_MIN)
QMV8_KERNEL(qmv8_q8_0_dot, LM_TARGET_DOTPROD, block_q8_0, block_q8_0, blk_q8_0, QMV8_NO_MIN)
QMV8_KERNEL(qmv8_iq4_nl_dot, LM_TARGET_DOTPROD, block_iq4_nl, block_q8_0, blk_iq4_nl, QMV8_NO_MIN)
// row r's scale of the int16 lanes t as an int32 lane, for MLA by element
#define SCL_DOT(t, r) vgetq_lane_s32((r) < 4 ? vmovl_s16(vget_low_s16(t)) : vmovl_high_s16(t), (r) & 3)
QMV8K_KERNEL(qmv8_q2_K_dot, LM_TARGET_DOTPROD, block_q2_K, Q2K8_BODY, q2k_step, SCL_DOT, 1)
QMV8K_KERNEL(qmv8_q3_K_dot, LM_TARGET_DOTPROD, block_q3_K, Q3K8_BODY, q3k_step, SCL_DOT, 0)
QMV8K_KERNEL(qmv8_q4_K_dot, LM_TARGET_DOTPROD, block_q4_K, Q4K8_BODY, q4k_step, SCL_DOT, 1)
QMV8K_KERNEL(qmv8_q5_K_dot, LM_TARGET_DOTPROD, block_q5_K, Q4K8_BODY, q5k_step, SCL_DOT, 1)
QMV8K_KERNEL(qmv8_q6_K_dot, LM_TARGET_DOTPROD, block_q6_K, Q6K8_BODY, q6k_step, SCL_DOT, 0)
QMV8K_KERNEL(qmv8_iq4_xs_dot, LM_TARGET_DOTPROD, block_iq4_xs, IQ4XS8_BODY, iq4xs_step, SCL_DOT, 0)

mm_qmv8_fn mm_qmv8_neon_dotprod(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0:   return qmv8_q4_0_dot;
        case LM_GGML_TYPE_Q4_1:   return qmv8_q4_1_dot;
        case LM_GGML_TYPE_Q5_0:   return qmv8_q5_0_dot;
        case LM_GGML_TYPE_Q5_1:   return qmv8_q5_1_dot;
        case LM_GGML_TYPE_Q8_0:   return qmv8_q8_0_dot;
        case LM_GGML_TYPE_IQ4_NL: return qmv8_iq4_nl_dot;
        case LM_GGML_TYPE_Q2_K:   return qmv8_q2_K_dot;
        case LM_GGML_TYPE_Q3_K:   return qmv8_q3_K_dot;
        case LM_GGML_TYPE_Q4_K:   return qmv8_q4_K_dot;
        case LM_GGML_TYPE_Q5_K:   return qmv8_q5_K_dot;
        case LM_GGML_TYPE_Q6_K:   return qmv8_q6_K_dot;
        case LM_GGML_TYPE_IQ4_XS: return qmv8_iq4_xs_dot;
        default: return NULL;
    }
}

lm_ggml_vec_dot_t mm_quant_dot_neon_dotprod(enum lm_ggml_type type)     { return find_kernel(type, false); }
lm_ggml_vec_dot_t mm_quant_dot_neon_dotprod_pre(enum lm_ggml_type type) { return find_kernel(type, true); }

// ---------------------------------------------------------------- activations in lane order

// The permutation the kernels against an activation type apply to each 16
// quants (q8_0/q8_1: pair4; q8_K: trans4), or NULL.
static const uint8_t * act_order(enum lm_ggml_type vdt) {
    switch (vdt) {
        case LM_GGML_TYPE_Q8_0: case LM_GGML_TYPE_Q8_1: return pair4;
        case LM_GGML_TYPE_Q8_K: return trans4;
        default: return NULL;
    }
}

// Reorders the quants of nb blocks of vdt in place; the scales and sums stay
// valid, as each 16 keeps its bytes.
void mm_act_permute_dotprod(enum lm_ggml_type vdt, void * y, int64_t nb) {
    const uint8_t * ord = act_order(vdt);
    if (ord == NULL) return;
    const uint8x16_t idx = vld1q_u8(ord);
    for (int64_t i = 0; i < nb; i++) {
        int8_t * qs; int nq;
        switch (vdt) {
            case LM_GGML_TYPE_Q8_0: qs = ((block_q8_0 *) y)[i].qs; nq = QK8_0; break;
            case LM_GGML_TYPE_Q8_1: qs = ((block_q8_1 *) y)[i].qs; nq = QK8_1; break;
            default:                qs = ((block_q8_K *) y)[i].qs; nq = QK_K; break;
        }
        for (int j = 0; j < nq; j += 16) vst1q_s8(qs + j, vqtbl1q_s8(vld1q_s8(qs + j), idx));
    }
}

static void act_q8_0(const float * restrict x, void * restrict y, int64_t k) {
    lm_quantize_row_q8_0(x, y, k);
    mm_act_permute_dotprod(LM_GGML_TYPE_Q8_0, y, k / QK8_0);
}
static void act_q8_1(const float * restrict x, void * restrict y, int64_t k) {
    lm_quantize_row_q8_1(x, y, k);
    mm_act_permute_dotprod(LM_GGML_TYPE_Q8_1, y, k / QK8_1);
}
static void act_q8_K(const float * restrict x, void * restrict y, int64_t k) {
    lm_quantize_row_q8_K(x, y, k);
    mm_act_permute_dotprod(LM_GGML_TYPE_Q8_K, y, k / QK_K);
}

lm_ggml_from_float_t mm_act_quantizer_dotprod(enum lm_ggml_type vdt) {
    switch (vdt) {
        case LM_GGML_TYPE_Q8_0: return act_q8_0;
        case LM_GGML_TYPE_Q8_1: return act_q8_1;
        case LM_GGML_TYPE_Q8_K: return act_q8_K;
        default: return NULL;
    }
}
#else
typedef int mm_quant_neon_dot_unused; // ISO C forbids an empty translation unit
#endif
