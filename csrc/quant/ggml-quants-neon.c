// ggml-quants-neon.c - NEON versions of the activation quantizers (q8_0,
// q8_1, q8_K), arm64 only, giving the bits of the _ref functions.
//
// Rounding: the q8_0/q8_1 references use roundf (ties away from zero), which
// is what FCVTAS does; q8_K's nearest_int rounds ties to even, as FCVTNS.
// Only multiplies feed the conversions, so FMA contraction cannot change a bit.
// The fp16 scales are rounded by FCVT (lm_f2h_hw): the bits of the software
// conversion for every input.
#include "ggml-quants.h"
#include "../base/ggml-simd.h"

#if defined(LM_ARM64)
#include <arm_neon.h>
#include <string.h>

// Four int32x4 -> 16 int8 (values known to be in range, so truncating narrows
// give the same bits as ggml's int8_t casts).
static inline int8x16_t narrow_16(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
    const int16x8_t lo = vcombine_s16(vmovn_s32(a), vmovn_s32(b));
    const int16x8_t hi = vcombine_s16(vmovn_s32(c), vmovn_s32(d));
    return vcombine_s8(vmovn_s16(lo), vmovn_s16(hi));
}

// One block of 32: the quants in qs, the scale returned, their sum in *sum.
static inline float q8_block32(const float * x, int8_t * qs, int * sum) {
    float32x4_t v[8];
    float32x4_t m = vdupq_n_f32(0.0f);
    for (int k = 0; k < 8; k++) {
        v[k] = vld1q_f32(x + 4 * k);
        m = vmaxq_f32(m, vabsq_f32(v[k]));
    }
    const float amax = vmaxvq_f32(m);
    const float d  = amax / 127;
    const float id = d ? 1.0f / d : 0.0f;
    int32x4_t q[8];
    for (int k = 0; k < 8; k++) q[k] = vcvtaq_s32_f32(vmulq_n_f32(v[k], id));
    vst1q_s8(qs,      narrow_16(q[0], q[1], q[2], q[3]));
    vst1q_s8(qs + 16, narrow_16(q[4], q[5], q[6], q[7]));
    if (sum) {
        const int32x4_t s = vaddq_s32(vaddq_s32(vaddq_s32(q[0], q[1]), vaddq_s32(q[2], q[3])),
                                      vaddq_s32(vaddq_s32(q[4], q[5]), vaddq_s32(q[6], q[7])));
        *sum = vaddvq_s32(s);
    }
    return d;
}

void lm_quantize_row_q8_0_neon(const float * LM_GGML_RESTRICT x, block_q8_0 * LM_GGML_RESTRICT y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += LM_QK8_0) {
        y[i].d = lm_f2h_hw(q8_block32(x, y[i].qs, NULL));
    }
}

void lm_quantize_row_q8_1_neon(const float * LM_GGML_RESTRICT x, block_q8_1 * LM_GGML_RESTRICT y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += LM_QK8_1) {
        int sum;
        const float d = q8_block32(x, y[i].qs, &sum);
        y[i].d = lm_f2h_hw(d);
        y[i].s = lm_f2h_hw(sum * d);
    }
}

// Index of the first element whose magnitude is amax (one exists).
static inline int first_of_magnitude(const float * x, float amax) {
    const float32x4_t a = vdupq_n_f32(amax);
    for (int j = 0; j < LM_QK_K; j += 4) {
        const uint32x4_t hit = vceqq_f32(vabsq_f32(vld1q_f32(x + j)), a);
        if (vmaxvq_u32(hit)) {
            uint32_t h[4];
            vst1q_u32(h, hit);
            return j + (h[0] ? 0 : h[1] ? 1 : h[2] ? 2 : 3);
        }
    }
    return 0;
}

void lm_quantize_row_q8_K_neon(const float * LM_GGML_RESTRICT x, block_q8_K * LM_GGML_RESTRICT y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        float32x4_t m0 = vdupq_n_f32(0.0f), m1 = m0;
        for (int j = 0; j < LM_QK_K; j += 8) {
            m0 = vmaxq_f32(m0, vabsq_f32(vld1q_f32(x + j)));
            m1 = vmaxq_f32(m1, vabsq_f32(vld1q_f32(x + j + 4)));
        }
        const float amax = vmaxvq_f32(vmaxq_f32(m0, m1));
        if (!amax) {
            memset(&y[i], 0, sizeof(y[i]));
            continue;
        }
        // the sign of the first element of largest magnitude, as ggml keeps it
        const float iscale = -127.f / x[first_of_magnitude(x, amax)];
        const int32x4_t top = vdupq_n_s32(127);
        for (int h = 0; h < 2; h++) {
            // pairwise sums of each 16-group, folded until one lane per group
            int16x8_t g[8];
            for (int k = 0; k < 8; k++) {
                const float * xs = x + 128 * h + 16 * k;
                int32x4_t q[4];
                for (int r = 0; r < 4; r++) {
                    q[r] = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(xs + 4 * r), iscale)), top);
                }
                const int8x16_t qv = narrow_16(q[0], q[1], q[2], q[3]);
                vst1q_s8(y[i].qs + 128 * h + 16 * k, qv);
                g[k] = vpaddlq_s8(qv);
            }
            const int16x8_t u0 = vpaddq_s16(vpaddq_s16(g[0], g[1]), vpaddq_s16(g[2], g[3]));
            const int16x8_t u1 = vpaddq_s16(vpaddq_s16(g[4], g[5]), vpaddq_s16(g[6], g[7]));
            vst1q_s16(y[i].bsums + 8 * h, vpaddq_s16(u0, u1));
        }
        y[i].d = 1 / iscale;
    }
}
#else
typedef int lm_quants_neon_unused; // ISO C forbids an empty translation unit
#endif
