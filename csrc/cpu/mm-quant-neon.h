// mm-quant-neon.h - what the two sets of arm64 integer dots share
// (mm-quant-neon.c: ARMv8.0; mm-quant-neon-dot.c: with SDOT): the kernel
// signature and the unpacking of block scales and high bits. Internal.
#pragma once

#include "mm-kernels.h"

#if defined(LM_ARM64)
#include "../quant/ggml-common.h"
#include "../quant/ggml-iquants.h"
#include <arm_neon.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define VD_ARGS int n, float * restrict s, size_t bs, const void * restrict vx, size_t bx, const void * restrict vy, size_t by, int nrc
#define VD_UNUSED (void) bs; (void) bx; (void) by; (void) nrc
#define H2F(x) lm_h2f_hw(x) // FCVT: see ggml-cpu-impl.h
// Every helper of the kernels is forced inline: the 8-row kernels expand
// their steps 32 times, and past GCC's unit-growth limit it would leave
// some of them (or qmv8_halves) as calls in the hot loops.
#define LM_ALWAYS_INLINE __attribute__((always_inline))

// The 32 fifth bits of a q5 block, as 0xFF / 0 bytes: byte i of *lo is the
// bit of element e (e < 16) found at byte idx[i] and mask bit[i] of qh;
// *hi the same for e + 16. The tables give the elements' order.
static inline LM_ALWAYS_INLINE void q5_high_mask(const uint8_t * qh, const uint8_t * idx, const uint8_t * bit,
                                                 uint8x16_t * lo, uint8x16_t * hi) {
    uint32_t w;
    memcpy(&w, qh, 4);
    const uint8x16_t b = vreinterpretq_u8_u32(vdupq_n_u32(w));
    const uint8x16_t il = vld1q_u8(idx), m = vld1q_u8(bit);
    *lo = vtstq_u8(vqtbl1q_u8(b, il), m);
    *hi = vtstq_u8(vqtbl1q_u8(b, vaddq_u8(il, vdupq_n_u8(2))), m);
}

// The 32 values of a q5 block from its packed low nibbles q (in the
// elements' order the tables give) and qh: nib | 16 h, less 16 for q5_0
// (sub16), i.e. nib less 16 where the fifth bit h is clear.
static inline LM_ALWAYS_INLINE void q5_values(const uint8_t * qh, uint8x16_t q, const uint8_t * idx, const uint8_t * bit, bool sub16,
                                              int8x16_t * x0, int8x16_t * x1) {
    uint8x16_t h0, h1;
    q5_high_mask(qh, idx, bit, &h0, &h1);
    const uint8x16_t lo = vandq_u8(q, vdupq_n_u8(0xF)), hi = vshrq_n_u8(q, 4), b4 = vdupq_n_u8(0x10);
    *x0 = vreinterpretq_s8_u8(sub16 ? vsubq_u8(lo, vbicq_u8(b4, h0)) : vorrq_u8(lo, vandq_u8(h0, b4)));
    *x1 = vreinterpretq_s8_u8(sub16 ? vsubq_u8(hi, vbicq_u8(b4, h1)) : vorrq_u8(hi, vandq_u8(h1, b4)));
}

// sum over 8 sub-blocks of 32 of mn[j] * (the two bsums of sub-block j)
static inline LM_ALWAYS_INLINE int32_t mins_dot_8(const uint8_t * mn, const int16_t * bsums) {
    const int16x8_t b = vpaddq_s16(vld1q_s16(bsums), vld1q_s16(bsums + 8));
    const int16x8_t m = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(mn)));
    return vaddvq_s32(vmlal_high_s16(vmull_s16(vget_low_s16(m), vget_low_s16(b)), m, b));
}

// The q2_K super-block's 16 sub-block scales (low nibbles of scales[]) into
// sc; returns the sum over the 16 of min j (high nibble of scales[j]) * bsums[j].
static inline LM_ALWAYS_INLINE int32_t q2k_scales_mins(const uint8_t * scales, const int16_t * bsums, uint8_t * sc) {
    const uint8x16_t scv = vld1q_u8(scales);
    vst1q_u8(sc, vandq_u8(scv, vdupq_n_u8(0xF)));
    const uint8x16_t mv = vshrq_n_u8(scv, 4);
    const int16x8_t b0 = vld1q_s16(bsums), b1 = vld1q_s16(bsums + 8);
    const int16x8_t mlo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mv)));
    const int16x8_t mhi = vreinterpretq_s16_u16(vmovl_high_u8(mv));
    int32x4_t mi = vmull_s16(vget_low_s16(mlo), vget_low_s16(b0));
    mi = vmlal_high_s16(mi, mlo, b0);
    mi = vmlal_s16(mi, vget_low_s16(mhi), vget_low_s16(b1));
    mi = vmlal_high_s16(mi, mhi, b1);
    return vaddvq_s32(mi);
}

// The 6-bit scales and mins of q4_K/q5_K, packed in 12 bytes: bytes 0-3 hold
// the scales of sub-blocks 0-3 (low 6 bits) and the top 2 bits of those of
// 4-7; bytes 4-7 the same for the mins; bytes 8-11 the low 4 bits of
// sub-blocks 4-7 (scale in the low nibble, min in the high one).
static inline LM_ALWAYS_INLINE void k4_scales(const uint8_t * q, uint8_t * sc, uint8_t * mn) {
    uint32_t a, b, c;
    memcpy(&a, q, 4); memcpy(&b, q + 4, 4); memcpy(&c, q + 8, 4);
    const uint32_t s_lo = a & 0x3f3f3f3fu, m_lo = b & 0x3f3f3f3fu;
    const uint32_t s_hi = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
    const uint32_t m_hi = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
    memcpy(sc, &s_lo, 4); memcpy(sc + 4, &s_hi, 4);
    memcpy(mn, &m_lo, 4); memcpy(mn + 4, &m_hi, 4);
}

// q4_K's 32 quant bytes q0, q1 of sub-blocks 2j (low nibbles) and 2j + 1
// (high nibbles) as x[0..1] and x[2..3]
static inline LM_ALWAYS_INLINE void k4_nibbles(uint8x16_t q0, uint8x16_t q1, int8x16_t * x) {
    const uint8x16_t m4 = vdupq_n_u8(0xF);
    x[0] = vreinterpretq_s8_u8(vandq_u8(q0, m4));
    x[1] = vreinterpretq_s8_u8(vandq_u8(q1, m4));
    x[2] = vreinterpretq_s8_u8(vshrq_n_u8(q0, 4));
    x[3] = vreinterpretq_s8_u8(vshrq_n_u8(q1, 4));
}

// q5_K: k4_nibbles plus the fifth bits, bit 0 of h0, h1 for x[0], x[1] and
// bit 1 for x[2], x[3], put in place by SLI / SRI
static inline LM_ALWAYS_INLINE void k5_values(uint8x16_t q0, uint8x16_t q1, uint8x16_t h0, uint8x16_t h1, int8x16_t * x) {
    const uint8x16_t b0 = vdupq_n_u8(1), b1 = vdupq_n_u8(2);
    x[0] = vreinterpretq_s8_u8(vsliq_n_u8(q0, vandq_u8(h0, b0), 4));
    x[1] = vreinterpretq_s8_u8(vsliq_n_u8(q1, vandq_u8(h1, b0), 4));
    x[2] = vreinterpretq_s8_u8(vsriq_n_u8(vshlq_n_u8(vandq_u8(h0, b1), 3), q0, 4));
    x[3] = vreinterpretq_s8_u8(vsriq_n_u8(vshlq_n_u8(vandq_u8(h1, b1), 3), q1, 4));
}

// The values (less 32) of 16 elements of each quarter k of a q6_K half: the
// low 4 bits from l0 (quarters 0, 2: low, high nibbles) or l1 (1, 3), the
// top 2 bits at bits 2k of hb. SLI / SRI put both parts in place in one op.
static inline LM_ALWAYS_INLINE void q6k_values(uint8x16_t l0, uint8x16_t l1, uint8x16_t hb, int8x16_t * v) {
    const uint8x16_t m2 = vdupq_n_u8(3), m3 = vdupq_n_u8(0x30), h2 = vshrq_n_u8(hb, 2);
    const int8x16_t off = vdupq_n_s8(32);
    v[0] = vsubq_s8(vreinterpretq_s8_u8(vsliq_n_u8(l0, vandq_u8(hb, m2), 4)), off);
    v[1] = vsubq_s8(vreinterpretq_s8_u8(vsliq_n_u8(l1, vandq_u8(h2, m2), 4)), off);
    v[2] = vsubq_s8(vreinterpretq_s8_u8(vsriq_n_u8(vandq_u8(hb, m3), l0, 4)), off);
    v[3] = vsubq_s8(vreinterpretq_s8_u8(vsriq_n_u8(vandq_u8(h2, m3), l1, 4)), off);
}

// The values of q2_K/q3_K step j (groups 2j, 2j + 1 of 16-byte halves q0,
// q1): the 2-bit fields at bit 4 (j % 2) into v[0], v[1], at 4 (j % 2) + 2
// into v[2], v[3]; with third (q3_K), less 4 where the third bit is clear
// (bit 2j of hm0, hm1 for v[0], v[1]; bit 2j + 1 for v[2], v[3]).
static inline LM_ALWAYS_INLINE void k23_values(uint8x16_t q0, uint8x16_t q1, uint8x16_t hm0, uint8x16_t hm1, bool third, int j, int8x16_t * v) {
    const int8x16_t s0 = vdupq_n_s8((int8_t) (-4 * (j & 1))), s1 = vdupq_n_s8((int8_t) (-4 * (j & 1) - 2));
    const uint8x16_t m3 = vdupq_n_u8(3), four = vdupq_n_u8(4);
    const uint8x16_t b0 = vdupq_n_u8((uint8_t) (1u << (2 * j))), b1 = vdupq_n_u8((uint8_t) (2u << (2 * j)));
    const uint8x16_t x[4] = { vandq_u8(vshlq_u8(q0, s0), m3), vandq_u8(vshlq_u8(q1, s0), m3),
                              vandq_u8(vshlq_u8(q0, s1), m3), vandq_u8(vshlq_u8(q1, s1), m3) };
    const uint8x16_t h[4] = { hm0, hm1, hm0, hm1 }, b[4] = { b0, b0, b1, b1 };
    for (int k = 0; k < 4; k++) {
        v[k] = vreinterpretq_s8_u8(third ? vsubq_u8(x[k], vbicq_u8(four, vtstq_u8(h[k], b[k]))) : x[k]);
    }
}

// The 16 6-bit scales of q3_K (stored +32): low nibbles in bytes 0-7 (sub-blocks
// 0-7 low nibble, 8-15 high nibble), the top 2 bits in bytes 8-11 (sub-block
// j at bits 2 * (j / 4) of byte 8 + j % 4).
static inline LM_ALWAYS_INLINE void q3k_scales(const uint8_t * q, int8_t * sc) {
    uint32_t a0, a1, t;
    memcpy(&a0, q, 4); memcpy(&a1, q + 4, 4); memcpy(&t, q + 8, 4);
    const uint32_t s[4] = {
        (a0 & 0x0f0f0f0fu)        | ((t << 4) & 0x30303030u),
        (a1 & 0x0f0f0f0fu)        | ((t << 2) & 0x30303030u),
        ((a0 >> 4) & 0x0f0f0f0fu) | (t & 0x30303030u),
        ((a1 >> 4) & 0x0f0f0f0fu) | ((t >> 2) & 0x30303030u),
    };
    vst1q_s8(sc, vsubq_s8(vreinterpretq_s8_u32(vld1q_u32(s)), vdupq_n_s8(32)));
}

// The iq4_nl codebook values of 32 packed codes: x[0], x[1] the low, high
// nibbles of q0; x[2], x[3] those of q1 (an iq4_xs step: sub-blocks of 32
// whose low nibbles meet the first 16 activations).
static inline LM_ALWAYS_INLINE void iq4_values(uint8x16_t q0, uint8x16_t q1, int8x16_t * x) {
    const int8x16_t values = vld1q_s8(lm_kvalues_iq4nl);
    const uint8x16_t m4 = vdupq_n_u8(0xF);
    x[0] = vqtbl1q_s8(values, vandq_u8(q0, m4));
    x[1] = vqtbl1q_s8(values, vshrq_n_u8(q0, 4));
    x[2] = vqtbl1q_s8(values, vandq_u8(q1, m4));
    x[3] = vqtbl1q_s8(values, vshrq_n_u8(q1, 4));
}

// The 8 6-bit scales of an iq4_xs block (stored +32): sub-block k has the
// nibble k % 2 of scales_l[k / 2] as its low 4 bits and bits 2k, 2k + 1 of
// scales_h as its top 2. Read as the block's first 8 bytes (d, scales_h,
// scales_l): the nibbles zipped into bytes, scales_h's byte k / 4 copied to
// byte k and shifted so that its bits 2 (k % 4), 2 (k % 4) + 1 land at bits 4, 5.
static inline LM_ALWAYS_INLINE void iq4xs_scales(const block_iq4_xs * b, int8_t * sc) {
    static const uint8_t hbyte[8] = {2, 2, 2, 2, 3, 3, 3, 3};
    static const int8_t hshift[8] = {4, 2, 0, -2, 4, 2, 0, -2};
    _Static_assert(offsetof(block_iq4_xs, scales_h) == 2 && offsetof(block_iq4_xs, scales_l) == 4, "iq4_xs layout");
    const uint8x8_t v = vld1_u8((const uint8_t *) b);
    const uint8x8_t lo = vzip2_u8(vand_u8(v, vdup_n_u8(0xF)), vshr_n_u8(v, 4)); // bytes 4-7 are scales_l
    const uint8x8_t hi = vand_u8(vshl_u8(vtbl1_u8(v, vld1_u8(hbyte)), vld1_s8(hshift)), vdup_n_u8(0x30));
    vst1_s8(sc, vsub_s8(vreinterpret_s8_u8(vorr_u8(lo, hi)), vdup_n_s8(32)));
}

// ---------------------------------------------------------------- 32-quant blocks, per row
//
// The per-row kernels of the 32-quant types at both levels: block i adds
// fl(d_x * d_y) * (the int32 lanes BLK(block, y0, y1) gives against the
// activation quants, loaded 16 at a time by LOAD) to 4 float lanes with an
// unfused multiply and add; the lanes are summed by vaddvq_f32. The types
// with a min m (q4_1, q5_1, against q8_1) also sum m * s_y per block, in a
// float of their own added last. m * s_y is exact in binary32 (two fp16
// significands of 11 bits, exponents well inside its range), so only the
// add rounds, whether or not the compiler fuses it, as in the 8-row kernels.
#define VD32_BODY(XT, BLK, LOAD)                                                                                  \
    const XT * x = vx; const block_q8_0 * y = vy;                                                                 \
    float32x4_t acc = vdupq_n_f32(0.0f);                                                                          \
    for (int i = 0; i < n / 32; i++) {                                                                            \
        const int32x4_t d = BLK(&x[i], LOAD(y[i].qs), LOAD(y[i].qs + 16));                                        \
        acc = vmlaq_n_f32(acc, vcvtq_f32_s32(d), H2F(x[i].d) * H2F(y[i].d));                                      \
    }                                                                                                             \
    *s = vaddvq_f32(acc)
#define VD32_BODY_MIN(XT, BLK, LOAD)                                                                              \
    const XT * x = vx; const block_q8_1 * y = vy;                                                                 \
    float32x4_t acc = vdupq_n_f32(0.0f);                                                                          \
    float mins = 0.0f;                                                                                            \
    for (int i = 0; i < n / 32; i++) {                                                                            \
        const int32x4_t d = BLK(&x[i], LOAD(y[i].qs), LOAD(y[i].qs + 16));                                        \
        acc = vmlaq_n_f32(acc, vcvtq_f32_s32(d), H2F(x[i].d) * H2F(y[i].d));                                      \
        /* x = d*q + m, and y's s holds d_y * sum(q_y) */                                                         \
        mins += H2F(x[i].m) * H2F(y[i].s);                                                              \
    }                                                                                                             \
    *s = vaddvq_f32(acc) + mins

// ---------------------------------------------------------------- 8 rows x 1 column
//
// mm_qmv8_fn kernels (mm-kernels.h): 8 rows of 32-quant blocks with the fp16
// scale d first against one q8_0 (q8_1) column. out[r] has the bits of the
// per-row kernel of the same level for rows[r]: row r keeps its own 4 float
// lanes, each block adds fl(d_x * d_y) * (its int32 lanes, from the same
// block function) to them with the same unfused multiply and add, and the
// lanes are summed in vaddvq_f32's order; with a min, lane r of mn sums the
// exact m_r * s_y as the per-row kernel's float does, and is added last. What is
// shared: each activation block is loaded once for the 8 rows, and the 8
// weight scales (mins) are converted with two FCVTLs and multiplied by d_y
// in two FMULs (FMLAs).

// the fp16 at byte o of each of the 8 rows, as floats (rows 0-3 in h[0])
static inline LM_ALWAYS_INLINE void qmv8_halves(const char * const * rows, size_t o, float32x4_t * h) {
    uint16x8_t v = vdupq_n_u16(0);
    v = vld1q_lane_u16((const uint16_t *) (rows[0] + o), v, 0);
    v = vld1q_lane_u16((const uint16_t *) (rows[1] + o), v, 1);
    v = vld1q_lane_u16((const uint16_t *) (rows[2] + o), v, 2);
    v = vld1q_lane_u16((const uint16_t *) (rows[3] + o), v, 3);
    v = vld1q_lane_u16((const uint16_t *) (rows[4] + o), v, 4);
    v = vld1q_lane_u16((const uint16_t *) (rows[5] + o), v, 5);
    v = vld1q_lane_u16((const uint16_t *) (rows[6] + o), v, 6);
    v = vld1q_lane_u16((const uint16_t *) (rows[7] + o), v, 7);
    const float16x8_t hf = vreinterpretq_f16_u16(v);
    h[0] = vcvt_f32_f16(vget_low_f16(hf));
    h[1] = vcvt_high_f32_f16(hf);
}

// d of block i of each of the 8 rows (blocks of xbs bytes), times dy
static inline LM_ALWAYS_INLINE void qmv8_scales(const char * const * rows, int64_t i, size_t xbs, float dy, float32x4_t * s) {
    qmv8_halves(rows, (size_t) i * xbs, s);
    s[0] = vmulq_n_f32(s[0], dy);
    s[1] = vmulq_n_f32(s[1], dy);
}

// mn[r] += (m of the 8 rows' block at byte o) * sy: exact products, one rounding each
static inline LM_ALWAYS_INLINE void qmv8_mins(const char * const * rows, size_t o, float sy, float32x4_t * mn) {
    float32x4_t m[2];
    qmv8_halves(rows, o, m);
    mn[0] = vfmaq_n_f32(mn[0], m[0], sy);
    mn[1] = vfmaq_n_f32(mn[1], m[1], sy);
}

// out[r] = the 4 lanes of acc[r] summed as vaddvq_f32 sums them: (l0 + l1) + (l2 + l3)
static inline LM_ALWAYS_INLINE void qmv8_store(const float32x4_t * acc, float * out) {
    vst1q_f32(out, vpaddq_f32(vpaddq_f32(acc[0], acc[1]), vpaddq_f32(acc[2], acc[3])));
    vst1q_f32(out + 4, vpaddq_f32(vpaddq_f32(acc[4], acc[5]), vpaddq_f32(acc[6], acc[7])));
}

// The next group's block i (8 blocks' bytes of its contiguous rows), fetched
// while this group sums block i, as the x86 mat-vec kernels do.
static inline LM_ALWAYS_INLINE void qmv8_prefetch(const char * pf, size_t bytes) {
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(pf + o, 0, 3);
}

// A kernel NAME (function attributes ATTR) for weight blocks XT against
// activation blocks YT, whose int32 lanes against the activation quants y0,
// y1 BLK(block, y0, y1) gives; MIN(XT) (QMV8_NO_MIN or QMV8_MIN) adds the
// mins of the types that have them.
#define QMV8_ROW(R, XT, BLK)                                                                                      \
    acc[R] = vmlaq_n_f32(acc[R], vcvtq_f32_s32(BLK((const XT *) (rows[R] + i * sizeof(XT)), y0, y1)),            \
                         vgetq_lane_f32(sc[(R) / 4], (R) % 4))
#define QMV8_NO_MIN(XT)
#define QMV8_MIN(XT) qmv8_mins(rows, (size_t) i * sizeof(XT) + offsetof(XT, m), H2F(y[i].s), mn)
#define QMV8_KERNEL(NAME, ATTR, XT, YT, BLK, MIN)                                                                 \
static ATTR void NAME(int64_t nb, const char * const * rows, const void * vy, float * out, const char * pf) {     \
    _Static_assert(offsetof(XT, d) == 0, "qmv8_scales reads the scale at the block's start");                    \
    const YT * y = vy;                                                                                            \
    float32x4_t acc[8], mn[2] = { vdupq_n_f32(0.0f), vdupq_n_f32(0.0f) };                                         \
    for (int r = 0; r < 8; r++) acc[r] = vdupq_n_f32(0.0f);                                                       \
    for (int64_t i = 0; i < nb; i++) {                                                                            \
        if (pf) qmv8_prefetch(pf + i * 8 * sizeof(XT), 8 * sizeof(XT));                                           \
        const int8x16_t y0 = vld1q_s8(y[i].qs), y1 = vld1q_s8(y[i].qs + 16);                                      \
        float32x4_t sc[2];                                                                                        \
        qmv8_scales(rows, i, sizeof(XT), H2F(y[i].d), sc);                                                        \
        MIN(XT);                                                                                                  \
        QMV8_ROW(0, XT, BLK); QMV8_ROW(1, XT, BLK); QMV8_ROW(2, XT, BLK); QMV8_ROW(3, XT, BLK);                   \
        QMV8_ROW(4, XT, BLK); QMV8_ROW(5, XT, BLK); QMV8_ROW(6, XT, BLK); QMV8_ROW(7, XT, BLK);                   \
    }                                                                                                             \
    qmv8_store(acc, out);                                                                                         \
    QMV8_ADD_##MIN(out, mn);                                                                                      \
}
#define QMV8_ADD_QMV8_NO_MIN(out, mn) (void) mn
#define QMV8_ADD_QMV8_MIN(out, mn)                                                                                \
    do {                                                                                                          \
        vst1q_f32(out, vaddq_f32(vld1q_f32(out), mn[0]));                                                         \
        vst1q_f32(out + 4, vaddq_f32(vld1q_f32(out + 4), mn[1]));                                                 \
    } while (0)

// ---------------------------------------------------------------- K-quants, per row
//
// The per-row q2_K..q6_K kernels at both levels: a super-block is 4 steps
// of 64 quants of the row against 64 activations (loaded 16 at a time by
// LOAD), each adding the int32 lanes STEP gives, scaled by the sub-blocks'
// integer scales (STEP(ai, block, j, a, scales of step j): 2 of 32 for
// q4_K/q5_K and iq4_xs, 4 of 16 for q2_K/q3_K); then fl(d_y * d) * (float) lanes joins
// 4 float lanes by an unfused multiply and add, and, for the types with
// mins, fl(d_y * dmin) * (float) mi (the mins against the activation sums,
// from SCALES) joins a float of its own by one fused multiply-add (fmaf:
// what the compiler made of the expression before, now pinned), subtracted
// last. The lanes are summed by vaddvq_f32.
#define VDK_BODY(XT, SCT, SCALES, STEP, SCARGS, LOAD, MINS)                                                       \
    const XT * x = vx; const block_q8_K * y = vy;                                                                 \
    float32x4_t acc = vdupq_n_f32(0.0f);                                                                          \
    float mins = 0.0f;                                                                                            \
    for (int i = 0; i < n / QK_K; i++) {                                                                          \
        SCT sc[16];                                                                                               \
        const int32_t mi = SCALES(&x[i], y[i].bsums, sc);                                                         \
        int32x4_t ai = vdupq_n_s32(0);                                                                            \
        for (int j = 0; j < 4; j++) {                                                                             \
            const int8_t * q = y[i].qs + 64 * j;                                                                  \
            const int8x16_t a[4] = { LOAD(q), LOAD(q + 16), LOAD(q + 32), LOAD(q + 48) };                         \
            ai = STEP(ai, &x[i], j, a, SCARGS(sc, j));                                                            \
        }                                                                                                         \
        acc = vmlaq_n_f32(acc, vcvtq_f32_s32(ai), y[i].d * H2F(x[i].d));                                          \
        MINS(mins, mi);                                                                                           \
    }                                                                                                             \
    *s = vaddvq_f32(acc) - mins
#define VDK_MINS(mins, mi) mins = fmaf(y[i].d * H2F(x[i].dmin), (float) (mi), mins)
#define VDK_NO_MINS(mins, mi) (void) (mi)
#define VDK_SC2(sc, j) sc[2 * (j)], sc[2 * (j) + 1]
#define VDK_SC4(sc, j) sc[4 * (j)], sc[4 * (j) + 1], sc[4 * (j) + 2], sc[4 * (j) + 3]
// SCALES(block, bsums, sc): the super-block's scales into sc; the sum of its
// mins against bsums (0 for the types without mins)
static inline LM_ALWAYS_INLINE int32_t k4_scales_mins(const uint8_t * q, const int16_t * bsums, uint8_t * sc) {
    uint8_t mn[8];
    k4_scales(q, sc, mn);
    return mins_dot_8(mn, bsums);
}
#define VDK4_SCALES(b, bs, sc) k4_scales_mins((b)->scales, bs, sc)
#define VDK2_SCALES(b, bs, sc) q2k_scales_mins((b)->scales, bs, sc)
#define VDK3_SCALES(b, bs, sc) (q3k_scales((b)->scales, sc), 0)
#define VDKX_SCALES(b, bs, sc) (iq4xs_scales(b, sc), 0)
#define VDK4_BODY(XT, STEP, LOAD) VDK_BODY(XT, uint8_t, VDK4_SCALES, STEP, VDK_SC2, LOAD, VDK_MINS)
#define VDK2_BODY(STEP, LOAD) VDK_BODY(block_q2_K, uint8_t, VDK2_SCALES, STEP, VDK_SC4, LOAD, VDK_MINS)
#define VDK3_BODY(STEP, LOAD) VDK_BODY(block_q3_K, int8_t, VDK3_SCALES, STEP, VDK_SC4, LOAD, VDK_NO_MINS)
// iq4_xs: as q4_K's steps of two sub-blocks of 32, signed scales, no mins
#define VDKX_BODY(STEP, LOAD) VDK_BODY(block_iq4_xs, int8_t, VDKX_SCALES, STEP, VDK_SC2, LOAD, VDK_NO_MINS)
// q6_K: step u of half h takes 16 bytes of each quarter (sub-blocks 8h + 2k + u)
#define VDK6_BODY(STEP, LOAD)                                                                                     \
    const block_q6_K * x = vx; const block_q8_K * y = vy;                                                         \
    float32x4_t acc = vdupq_n_f32(0.0f);                                                                          \
    for (int i = 0; i < n / QK_K; i++) {                                                                          \
        int32x4_t ai = vdupq_n_s32(0);                                                                            \
        for (int h = 0; h < 2; h++) {                                                                             \
            const int8_t * sc = x[i].scales + 8 * h;                                                              \
            for (int u = 0; u < 2; u++) {                                                                         \
                const int8_t * q = y[i].qs + 128 * h + 16 * u;                                                    \
                const int8x16_t a[4] = { LOAD(q), LOAD(q + 32), LOAD(q + 64), LOAD(q + 96) };                     \
                ai = STEP(ai, x[i].ql + 64 * h + 16 * u, x[i].qh + 32 * h + 16 * u, a,                            \
                          sc[u], sc[2 + u], sc[4 + u], sc[6 + u]);                                                \
            }                                                                                                     \
        }                                                                                                         \
        acc = vmlaq_n_f32(acc, vcvtq_f32_s32(ai), H2F(x[i].d) * y[i].d);                                          \
    }                                                                                                             \
    *s = vaddvq_f32(acc)

// ---------------------------------------------------------------- K-quants, 8 rows x 1 column
//
// mm_qmv8_fn kernels for the K-quants against one q8_K column (in lane order
// at the dotprod level), with the bits of the per-row kernels above: row r's
// super-block sums to the same int32 lanes through the same STEP (integer
// sums are exact, so it does not matter that the mins and scales are
// unpacked for 8 rows at once), each step's 64 activations are loaded once
// for the 8 rows, and the float steps are the per-row kernel's, lane for
// lane: fl(d_y * d_r) from one FMUL for 4 rows, the unfused multiply and add
// per row, the mins' fused multiply-add for 4 rows, vaddvq_f32's order.

// Bytes of 8 rows side by side: g0 holds a 32-bit word of each of rows
// 0-3, g1 of rows 4-7. Two levels of UZP gather byte 0 of the 8 words into
// bytes 0-7 of t[0] and byte 1 into bytes 8-15; t[1] the same of bytes 2, 3:
// sub-blocks' scales (or mins) with the rows as lanes, for multiplies by
// element.
static inline LM_ALWAYS_INLINE void k8_transpose(uint8x16_t g0, uint8x16_t g1, uint8x16_t * t) {
    const uint8x16_t e = vuzp1q_u8(g0, g1), o = vuzp2q_u8(g0, g1); // bytes 0, 2 / 1, 3 of each word
    t[0] = vuzp1q_u8(e, o);
    t[1] = vuzp2q_u8(e, o);
}

// The 4 words of 16 bytes at byte o of 4 rows, a row per lane: w[k] lane t
// = word k of row t (16-byte loads and a 4x4 transpose: LD3 to lanes went
// through the stack with GCC 12).
static inline LM_ALWAYS_INLINE void k8_words(const char * const * rows, size_t o, uint32x4_t * w) {
    const uint32x4_t r0 = vld1q_u32((const uint32_t *) (rows[0] + o)), r1 = vld1q_u32((const uint32_t *) (rows[1] + o));
    const uint32x4_t r2 = vld1q_u32((const uint32_t *) (rows[2] + o)), r3 = vld1q_u32((const uint32_t *) (rows[3] + o));
    const uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1)), t1 = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
    const uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3)), t3 = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
    w[0] = vreinterpretq_u32_u64(vtrn1q_u64(t0, t2));
    w[1] = vreinterpretq_u32_u64(vtrn1q_u64(t1, t3));
    w[2] = vreinterpretq_u32_u64(vtrn2q_u64(t0, t2));
    w[3] = vreinterpretq_u32_u64(vtrn2q_u64(t1, t3));
}

// q4_K/q5_K scales and mins of 4 rows' blocks at byte o (their scales
// field), as in k4_scales with a row per 32-bit lane (words a, b, c in A,
// B, C). sl: scales 0-3, sh: 4-7 (ml, mh: the mins), byte k of lane t
// sub-block k (4 + k) of row t.
static inline LM_ALWAYS_INLINE void k4_unpack4(const char * const * rows, size_t o, uint8x16_t * sl, uint8x16_t * sh, uint8x16_t * ml,
                                               uint8x16_t * mh) {
    uint32x4_t w[4];
    k8_words(rows, o, w); // the 12 bytes and 4 of qh / qs
    const uint8x16_t A = vreinterpretq_u8_u32(w[0]), B = vreinterpretq_u8_u32(w[1]), C = vreinterpretq_u8_u32(w[2]);
    const uint8x16_t m6 = vdupq_n_u8(0x3f), m4 = vdupq_n_u8(0x0f), t2 = vdupq_n_u8(0x30);
    *sl = vandq_u8(A, m6);
    *ml = vandq_u8(B, m6);
    *sh = vorrq_u8(vandq_u8(C, m4), vandq_u8(vshrq_n_u8(A, 2), t2));
    *mh = vorrq_u8(vshrq_n_u8(C, 4), vandq_u8(vshrq_n_u8(B, 2), t2));
}

// lo (rows 0-3), hi (4-7) += (the mins of sub-blocks k, k + 1 of 8 rows, side
// by side in t) * bs[k], bs[k + 1]: by element of bs
#define K8_MINS(t, bs, k)                                                                                         \
    {   const int16x8_t u_ = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(t)));                                    \
        const int16x8_t v_ = vreinterpretq_s16_u16(vmovl_high_u8(t));                                            \
        lo = vmlal_laneq_s16(lo, vget_low_s16(u_), bs, k); hi = vmlal_high_laneq_s16(hi, u_, bs, k);              \
        lo = vmlal_laneq_s16(lo, vget_low_s16(v_), bs, (k) + 1); hi = vmlal_high_laneq_s16(hi, v_, bs, (k) + 1); }

// The 8 rows' q4_K/q5_K scales, sub-block k in half k % 2 of ts[k / 2] (see
// k8_transpose), and mi[0] (rows 0-3), mi[1] (4-7): the sums over
// sub-blocks k of min k * bs[k] (bs: the activations' sums of 32).
static inline LM_ALWAYS_INLINE void k4_scales8(const char * const * rows, size_t o, int16x8_t bs, uint8x16_t * ts, int32x4_t * mi) {
    uint8x16_t sl[2], sh[2], ml[2], mh[2], tm[4];
    k4_unpack4(rows, o, &sl[0], &sh[0], &ml[0], &mh[0]);
    k4_unpack4(rows + 4, o, &sl[1], &sh[1], &ml[1], &mh[1]);
    k8_transpose(sl[0], sl[1], ts);
    k8_transpose(sh[0], sh[1], ts + 2);
    k8_transpose(ml[0], ml[1], tm);
    k8_transpose(mh[0], mh[1], tm + 2);
    int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
    K8_MINS(tm[0], bs, 0) K8_MINS(tm[1], bs, 2) K8_MINS(tm[2], bs, 4) K8_MINS(tm[3], bs, 6)
    mi[0] = lo;
    mi[1] = hi;
}

// q2_K: the 16 scales (low nibbles) of the 8 rows' blocks at byte o, scale k
// in half k % 2 of ts[k / 2], and mi as k4_scales8's of the 16 mins (high
// nibbles) against bsums (16 sums of 16).
static inline LM_ALWAYS_INLINE void q2k_scales8(const char * const * rows, size_t o, const int16_t * bsums, uint8x16_t * ts, int32x4_t * mi) {
    uint32x4_t w0[4], w1[4];
    k8_words(rows, o, w0);
    k8_words(rows + 4, o, w1);
    const int16x8_t bs0 = vld1q_s16(bsums), bs1 = vld1q_s16(bsums + 8);
    const uint8x16_t m4 = vdupq_n_u8(0xF);
    int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
    for (int k = 0; k < 4; k++) {
        uint8x16_t t[2];
        k8_transpose(vreinterpretq_u8_u32(w0[k]), vreinterpretq_u8_u32(w1[k]), t);
        ts[2 * k] = vandq_u8(t[0], m4);
        ts[2 * k + 1] = vandq_u8(t[1], m4);
        w0[k] = vreinterpretq_u32_u8(vshrq_n_u8(t[0], 4)); // the mins of scales 4k, 4k + 1
        w1[k] = vreinterpretq_u32_u8(vshrq_n_u8(t[1], 4)); // 4k + 2, 4k + 3
    }
    K8_MINS(vreinterpretq_u8_u32(w0[0]), bs0, 0) K8_MINS(vreinterpretq_u8_u32(w1[0]), bs0, 2)
    K8_MINS(vreinterpretq_u8_u32(w0[1]), bs0, 4) K8_MINS(vreinterpretq_u8_u32(w1[1]), bs0, 6)
    K8_MINS(vreinterpretq_u8_u32(w0[2]), bs1, 0) K8_MINS(vreinterpretq_u8_u32(w1[2]), bs1, 2)
    K8_MINS(vreinterpretq_u8_u32(w0[3]), bs1, 4) K8_MINS(vreinterpretq_u8_u32(w1[3]), bs1, 6)
    mi[0] = lo;
    mi[1] = hi;
}
#undef K8_MINS

// q3_K: the 16 scales (less 32) of the 8 rows' blocks whose scales field is
// at byte o, scale k in half k % 2 of ts[k / 2]; as q3k_scales with a row
// per lane. The 16 bytes read end with the 12 (the block ends 2 bytes on).
static inline LM_ALWAYS_INLINE void q3k_scales8(const char * const * rows, size_t o, uint8x16_t * ts) {
    uint8x16_t s[2][4];
    const uint8x16_t m4 = vdupq_n_u8(0x0f), m3 = vdupq_n_u8(0x30), b32 = vdupq_n_u8(32);
    for (int g = 0; g < 2; g++) {
        uint32x4_t w[4];
        k8_words(rows + 4 * g, o - 4, w);
        const uint8x16_t a0 = vreinterpretq_u8_u32(w[1]), a1 = vreinterpretq_u8_u32(w[2]), t = vreinterpretq_u8_u32(w[3]);
        s[g][0] = vsubq_u8(vorrq_u8(vandq_u8(a0, m4), vandq_u8(vshlq_n_u8(t, 4), m3)), b32);
        s[g][1] = vsubq_u8(vorrq_u8(vandq_u8(a1, m4), vandq_u8(vshlq_n_u8(t, 2), m3)), b32);
        s[g][2] = vsubq_u8(vorrq_u8(vshrq_n_u8(a0, 4), vandq_u8(t, m3)), b32);
        s[g][3] = vsubq_u8(vorrq_u8(vshrq_n_u8(a1, 4), vandq_u8(vshrq_n_u8(t, 2), m3)), b32);
    }
    for (int k = 0; k < 4; k++) k8_transpose(s[0][k], s[1][k], ts + 2 * k);
}

// The 2 words of 8 bytes at byte o of 4 rows, a row per lane: w[k] lane t =
// word k of row t (two rows a register, parted by UZP).
static inline LM_ALWAYS_INLINE void k8_words2(const char * const * rows, size_t o, uint32x4_t * w) {
    const uint32x4_t r01 = vreinterpretq_u32_u8(vcombine_u8(vld1_u8((const uint8_t *) rows[0] + o),
                                                            vld1_u8((const uint8_t *) rows[1] + o)));
    const uint32x4_t r23 = vreinterpretq_u32_u8(vcombine_u8(vld1_u8((const uint8_t *) rows[2] + o),
                                                            vld1_u8((const uint8_t *) rows[3] + o)));
    w[0] = vuzp1q_u32(r01, r23);
    w[1] = vuzp2q_u32(r01, r23);
}

// q6_K: the 8 int8 scales of a half of the 8 rows' blocks at byte o, scale k
// in half k % 2 of ts[k / 2] (k8_words2, then k8_transpose).
static inline LM_ALWAYS_INLINE void q6k_scales8(const char * const * rows, size_t o, uint8x16_t * ts) {
    uint32x4_t w0[2], w1[2];
    k8_words2(rows, o, w0);
    k8_words2(rows + 4, o, w1);
    k8_transpose(vreinterpretq_u8_u32(w0[0]), vreinterpretq_u8_u32(w1[0]), ts);
    k8_transpose(vreinterpretq_u8_u32(w0[1]), vreinterpretq_u8_u32(w1[1]), ts + 2);
}

// iq4_xs: the scales (less 32) of 4 rows' blocks at byte o, as
// iq4xs_scales with a row per 32-bit lane: byte b of *ev sub-block 2b (low
// nibble of scales_l[b]), of *od 2b + 1 (high nibble); their top 2 bits put
// in place by SLI / SRI (scales_h's byte b / 2 copied to byte b, its bits
// 4b % 8 + {0, 2} shifted to bits 0 or 4).
static inline LM_ALWAYS_INLINE void iq4xs_unpack4(const char * const * rows, size_t o, uint8x16_t * ev, uint8x16_t * od) {
    static const uint8_t hbyte[16] = {2, 2, 3, 3, 6, 6, 7, 7, 10, 10, 11, 11, 14, 14, 15, 15};
    const int8x16_t sh_ev = vreinterpretq_s8_u16(vdupq_n_u16(0xFC00)); // 0, -4 a byte pair
    const int8x16_t sh_od = vreinterpretq_s8_u16(vdupq_n_u16(0xFE02)); // 2, -2
    uint32x4_t w[2];
    k8_words2(rows, o, w); // d | scales_h << 16; scales_l
    const uint8x16_t h = vqtbl1q_u8(vreinterpretq_u8_u32(w[0]), vld1q_u8(hbyte)), l = vreinterpretq_u8_u32(w[1]);
    const uint8x16_t b32 = vdupq_n_u8(32);
    *ev = vsubq_u8(vsliq_n_u8(l, vandq_u8(vshlq_u8(h, sh_ev), vdupq_n_u8(3)), 4), b32);
    *od = vsubq_u8(vsriq_n_u8(vandq_u8(vshlq_u8(h, sh_od), vdupq_n_u8(0x30)), l, 4), b32);
}

// The 8 rows' iq4_xs scales, sub-block k in half k % 2 of ts[k / 2] (as
// q4_K's): two levels of UZP, the first giving each row's pairs of
// sub-blocks (0, 4), (2, 6) from ev and (1, 5), (3, 7) from od.
static inline LM_ALWAYS_INLINE void iq4xs_scales8(const char * const * rows, size_t o, uint8x16_t * ts) {
    uint8x16_t ev0, od0, ev1, od1;
    iq4xs_unpack4(rows, o, &ev0, &od0);
    iq4xs_unpack4(rows + 4, o, &ev1, &od1);
    const uint8x16_t e04 = vuzp1q_u8(ev0, ev1), e26 = vuzp2q_u8(ev0, ev1);
    const uint8x16_t o15 = vuzp1q_u8(od0, od1), o37 = vuzp2q_u8(od0, od1);
    ts[0] = vuzp1q_u8(e04, o15);
    ts[1] = vuzp1q_u8(e26, o37);
    ts[2] = vuzp2q_u8(e04, o15);
    ts[3] = vuzp2q_u8(e26, o37);
}

// acc[r] += fl(d[r] * dy) * (float) ai[r] (d: rows 0-3, 4-7), as the per-row kernels add
static inline LM_ALWAYS_INLINE void qmv8_kacc(float32x4_t * acc, const int32x4_t * ai, const float32x4_t * d, float dy) {
    const float32x4_t s[2] = { vmulq_n_f32(d[0], dy), vmulq_n_f32(d[1], dy) };
#define QMV8_KACC(r) acc[r] = vmlaq_n_f32(acc[r], vcvtq_f32_s32(ai[r]), vgetq_lane_f32(s[(r) / 4], (r) % 4));
    QMV8_KACC(0) QMV8_KACC(1) QMV8_KACC(2) QMV8_KACC(3) QMV8_KACC(4) QMV8_KACC(5) QMV8_KACC(6) QMV8_KACC(7)
#undef QMV8_KACC
}

// The 8 rows of one step: ai[r] = STEP(ai[r], ...) with r a constant (scale lanes)
#define K8_ROWS(X, ...) X(0, __VA_ARGS__) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) \
                        X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__)
// Each row's sum is pinned after its step, and the next row's weights and
// the activations behind it (their addresses made to depend on the pin):
// else the compiler hoists the 8 rows' loads and steps into one another
// and spills. The empty asm orders the compiler only, not the CPU.
#define K8_PIN(v, r) __asm__("" : "+w"(v), "+r"(b[((r) + 1) % 8]), "+r"(q))
// ts[k], pinned behind the last row's step (else all steps' scales are
// widened at once and spilled); K8_UW, K8_SW: its half h as int16 lanes
#define K8_TS(k) ({ uint8x16_t t_ = ts[k]; __asm__("" : "+w"(t_) : "r"(q)); t_; })
#define K8_UW(v, h) vreinterpretq_s16_u16((h) ? vmovl_high_u8(v) : vmovl_u8(vget_low_u8(v)))
#define K8_SW(v, h) ((h) ? vmovl_high_s8(vreinterpretq_s8_u8(v)) : vmovl_s8(vget_low_s8(vreinterpretq_s8_u8(v))))
// t0..t3: the step's scales with the rows as int16 lanes; SCL(t, r) row r's
// as STEP takes it
#define Q4K8_ROW(r, j, STEP, SCL)                                                                                 \
    ai[r] = STEP(ai[r], b[r], j, a, SCL(t0, r), SCL(t1, r));                                                      \
    K8_PIN(ai[r], r);
// q4_K/q5_K/iq4_xs: 2 scales a step, widened by W
#define Q4K8_STEP(j, STEP, SCL, W)                                                                                \
    {   const int8_t * qa = q + 64 * (j);                                                                         \
        const int8x16_t a[4] = { vld1q_s8(qa), vld1q_s8(qa + 16), vld1q_s8(qa + 32), vld1q_s8(qa + 48) };         \
        const uint8x16_t tp = K8_TS(j);                                                                           \
        const int16x8_t t0 = W(tp, 0), t1 = W(tp, 1);                                                             \
        K8_ROWS(Q4K8_ROW, j, STEP, SCL) }
// q2_K/q3_K: 4 scales a step, widened by W
#define Q2K8_ROW(r, j, STEP, SCL)                                                                                 \
    ai[r] = STEP(ai[r], b[r], j, a, SCL(t0, r), SCL(t1, r), SCL(t2, r), SCL(t3, r));                              \
    K8_PIN(ai[r], r);
#define Q2K8_STEP(j, STEP, SCL, W)                                                                                \
    {   const int8_t * qa = q + 64 * (j);                                                                         \
        const int8x16_t a[4] = { vld1q_s8(qa), vld1q_s8(qa + 16), vld1q_s8(qa + 32), vld1q_s8(qa + 48) };         \
        const uint8x16_t u0 = K8_TS(2 * (j)), u1 = K8_TS(2 * (j) + 1);                                            \
        const int16x8_t t0 = W(u0, 0), t1 = W(u0, 1), t2 = W(u1, 0), t3 = W(u1, 1);                               \
        K8_ROWS(Q2K8_ROW, j, STEP, SCL) }
// the mins' part of rows with a dmin: mn += fl(dmin * d_y) * (float) mi, fused
#define K8_DMIN(XT)                                                                                               \
    {   float32x4_t dm[2];                                                                                        \
        qmv8_halves(rows, o + offsetof(XT, dmin), dm);                                                            \
        mn[0] = vfmaq_f32(mn[0], vmulq_n_f32(dm[0], y[i].d), vcvtq_f32_s32(mi[0]));                               \
        mn[1] = vfmaq_f32(mn[1], vmulq_n_f32(dm[1], y[i].d), vcvtq_f32_s32(mi[1])); }
#define Q2K8_BODY(XT, STEP, SCL)                                                                                  \
    uint8x16_t ts[8];                                                                                             \
    int32x4_t mi[2];                                                                                              \
    q2k_scales8(rows, o + offsetof(XT, scales), y[i].bsums, ts, mi);                                              \
    Q2K8_STEP(0, STEP, SCL, K8_UW) Q2K8_STEP(1, STEP, SCL, K8_UW)                                                 \
    Q2K8_STEP(2, STEP, SCL, K8_UW) Q2K8_STEP(3, STEP, SCL, K8_UW)                                                 \
    K8_DMIN(XT)
#define Q3K8_BODY(XT, STEP, SCL)                                                                                  \
    uint8x16_t ts[8];                                                                                             \
    q3k_scales8(rows, o + offsetof(XT, scales), ts);                                                              \
    Q2K8_STEP(0, STEP, SCL, K8_SW) Q2K8_STEP(1, STEP, SCL, K8_SW)                                                 \
    Q2K8_STEP(2, STEP, SCL, K8_SW) Q2K8_STEP(3, STEP, SCL, K8_SW)
#define Q4K8_BODY(XT, STEP, SCL)                                                                                  \
    uint8x16_t ts[4];                                                                                             \
    int32x4_t mi[2];                                                                                              \
    k4_scales8(rows, o + offsetof(XT, scales), vpaddq_s16(vld1q_s16(y[i].bsums), vld1q_s16(y[i].bsums + 8)),      \
               ts, mi);                                                                                           \
    Q4K8_STEP(0, STEP, SCL, K8_UW) Q4K8_STEP(1, STEP, SCL, K8_UW)                                                 \
    Q4K8_STEP(2, STEP, SCL, K8_UW) Q4K8_STEP(3, STEP, SCL, K8_UW)                                                 \
    K8_DMIN(XT)
#define IQ4XS8_BODY(XT, STEP, SCL)                                                                                \
    uint8x16_t ts[4];                                                                                             \
    iq4xs_scales8(rows, o, ts);                                                                                   \
    Q4K8_STEP(0, STEP, SCL, K8_SW) Q4K8_STEP(1, STEP, SCL, K8_SW)                                                 \
    Q4K8_STEP(2, STEP, SCL, K8_SW) Q4K8_STEP(3, STEP, SCL, K8_SW)
#define Q6K8_ROW(r, h, u, STEP, SCL)                                                                              \
    ai[r] = STEP(ai[r], b[r]->ql + 64 * (h) + 16 * (u), b[r]->qh + 32 * (h) + 16 * (u), a,                        \
                 SCL(t0, r), SCL(t1, r), SCL(t2, r), SCL(t3, r));                                                 \
    K8_PIN(ai[r], r);
// the signed scale 2k + u of the 8 rows as int16 lanes
#define Q6K8_SC(k, u) K8_SW(K8_TS(k), u)
// step u of half h: the half's scales u + 2k, k = 0..3
#define Q6K8_STEP(h, u, STEP, SCL)                                                                                \
    {   const int8_t * qa = q + 128 * (h) + 16 * (u);                                                             \
        const int8x16_t a[4] = { vld1q_s8(qa), vld1q_s8(qa + 32), vld1q_s8(qa + 64), vld1q_s8(qa + 96) };         \
        const int16x8_t t0 = Q6K8_SC(0, u), t1 = Q6K8_SC(1, u), t2 = Q6K8_SC(2, u), t3 = Q6K8_SC(3, u);           \
        K8_ROWS(Q6K8_ROW, h, u, STEP, SCL) }
#define Q6K8_HALF(h, STEP, SCL)                                                                                   \
    {   uint8x16_t ts[4];                                                                                         \
        q6k_scales8(rows, o + offsetof(block_q6_K, scales) + 8 * (h), ts);                                        \
        Q6K8_STEP(h, 0, STEP, SCL) Q6K8_STEP(h, 1, STEP, SCL) }
#define Q6K8_BODY(XT, STEP, SCL) Q6K8_HALF(0, STEP, SCL) Q6K8_HALF(1, STEP, SCL)

// A kernel NAME (attributes ATTR) for XT whose super-block BODY (Q4K8_BODY,
// Q6K8_BODY, IQ4XS8_BODY, ...) sums ai[r] with STEP and SCL and, with MIN, the mins into mn.
#define K8_ZERO(r, v, z) v[r] = z;
#define K8_BLOCK(r, XT) b[r] = (const XT *) (rows[r] + o);
#define QMV8K_KERNEL(NAME, ATTR, XT, BODY, STEP, SCL, MIN)                                                        \
static ATTR void NAME(int64_t nb, const char * const * rows, const void * vy, float * out, const char * pf) {     \
    const block_q8_K * y = vy;                                                                                    \
    float32x4_t acc[8], mn[2] = { vdupq_n_f32(0.0f), vdupq_n_f32(0.0f) };                                         \
    K8_ROWS(K8_ZERO, acc, vdupq_n_f32(0.0f))                                                                      \
    for (int64_t i = 0; i < nb; i++) {                                                                            \
        if (pf) qmv8_prefetch(pf + i * 8 * sizeof(XT), 8 * sizeof(XT));                                           \
        const size_t o = (size_t) i * sizeof(XT);                                                                 \
        const XT * b[8];                                                                                          \
        K8_ROWS(K8_BLOCK, XT)                                                                                     \
        const int8_t * q = y[i].qs;                                                                               \
        int32x4_t ai[8];                                                                                          \
        K8_ROWS(K8_ZERO, ai, vdupq_n_s32(0))                                                                      \
        BODY(XT, STEP, SCL)                                                                                       \
        float32x4_t d[2];                                                                                         \
        qmv8_halves(rows, o + offsetof(XT, d), d);                                                                \
        qmv8_kacc(acc, ai, d, y[i].d);                                                                            \
    }                                                                                                             \
    qmv8_store(acc, out);                                                                                         \
    if (MIN) {                                                                                                    \
        vst1q_f32(out, vsubq_f32(vld1q_f32(out), mn[0]));                                                         \
        vst1q_f32(out + 4, vsubq_f32(vld1q_f32(out + 4), mn[1]));                                                 \
    }                                                                                                             \
}
#endif
