// mm-quant-neon.h - what the two sets of arm64 integer dots share
// (mm-quant-neon.c: ARMv8.0; mm-quant-neon-dot.c: with SDOT): the kernel
// signature and the unpacking of block scales and high bits. Internal.
#pragma once

#include "mm-kernels.h"

#if defined(LM_ARM64)
#include "ggml-common.h"
#include <arm_neon.h>
#include <string.h>

#define VD_ARGS int n, float * restrict s, size_t bs, const void * restrict vx, size_t bx, const void * restrict vy, size_t by, int nrc
#define VD_UNUSED (void) bs; (void) bx; (void) by; (void) nrc
#define H2F(x) LM_GGML_FP16_TO_FP32(x)

// The 32 fifth bits of a q5 block, as 0x10 / 0 bytes: byte i of *lo is the
// bit of element e (e < 16) found at byte idx[i] and mask bit[i] of qh;
// *hi the same for e + 16. The tables give the elements' order.
static inline void q5_high_bits_in(const uint8_t * qh, const uint8_t * idx, const uint8_t * bit,
                                   uint8x16_t * lo, uint8x16_t * hi) {
    uint32_t w;
    memcpy(&w, qh, 4);
    const uint8x16_t b = vreinterpretq_u8_u32(vdupq_n_u32(w));
    const uint8x16_t il = vld1q_u8(idx), m = vld1q_u8(bit), h = vdupq_n_u8(0x10);
    *lo = vandq_u8(vtstq_u8(vqtbl1q_u8(b, il), m), h);
    *hi = vandq_u8(vtstq_u8(vqtbl1q_u8(b, vaddq_u8(il, vdupq_n_u8(2))), m), h);
}

// sum over 8 sub-blocks of 32 of mn[j] * (the two bsums of sub-block j)
static inline int32_t mins_dot_8(const uint8_t * mn, const int16_t * bsums) {
    const int16x8_t b = vpaddq_s16(vld1q_s16(bsums), vld1q_s16(bsums + 8));
    const int16x8_t m = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(mn)));
    return vaddvq_s32(vmlal_high_s16(vmull_s16(vget_low_s16(m), vget_low_s16(b)), m, b));
}

// q2_K: sum over 16 sub-blocks of 16 of min j (high nibble of scales byte j,
// the 16 bytes in scv) * bsums[j]
static inline int32_t q2k_mins_dot(uint8x16_t scv, const int16_t * bsums) {
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
static inline void k4_scales(const uint8_t * q, uint8_t * sc, uint8_t * mn) {
    uint32_t a, b, c;
    memcpy(&a, q, 4); memcpy(&b, q + 4, 4); memcpy(&c, q + 8, 4);
    const uint32_t s_lo = a & 0x3f3f3f3fu, m_lo = b & 0x3f3f3f3fu;
    const uint32_t s_hi = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
    const uint32_t m_hi = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
    memcpy(sc, &s_lo, 4); memcpy(sc + 4, &s_hi, 4);
    memcpy(mn, &m_lo, 4); memcpy(mn + 4, &m_hi, 4);
}

// The 16 6-bit scales of q3_K (stored +32): low nibbles in bytes 0-7 (sub-blocks
// 0-7 low nibble, 8-15 high nibble), the top 2 bits in bytes 8-11 (sub-block
// j at bits 2 * (j / 4) of byte 8 + j % 4).
static inline void q3k_scales(const uint8_t * q, int8_t * sc) {
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

// The iq4_xs scale of sub-block ib (6 bits stored +32: the low 4 in
// scales_l, two per byte; the top 2 in scales_h).
static inline int16_t iq4xs_scale_of(const block_iq4_xs * x, int ib) {
    return (int16_t) ((((x->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | ((x->scales_h >> (2 * ib)) & 3) << 4) - 32);
}
#endif
