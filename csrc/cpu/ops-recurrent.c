// ops-recurrent.c - CPU kernels of the recurrent models' ops: Mamba's
// ssm_conv and ssm_scan, RWKV v6's rwkv_wkv6. The constructors are in
// graph/ctor-nn.c; see ggml-cpu-impl.h for the kernel contract.
//
// Each op splits its result into units (rows, or a head's block of value
// columns) that one thread computes whole, with no barrier: a thread with no
// unit simply has nothing to do, and a unit's bits do not depend on the
// thread count. ssm_conv and rwkv_wkv6 round every step as the scalar code
// does (a multiply, then an add, lane by lane), so every SIMD level gives the
// scalar bits; ssm_scan's exponentials and sums are vectorised, so its bits
// are those of its level (AVX-512 gives AVX2's).
#include "fp-nocontract.h"
#include "ops-vec.h"
#include "ggml-cpu-impl.h"

enum rec_level { REC_SCALAR, REC_AVX2, REC_AVX512, REC_NEON };

static enum rec_level rec_level(void) {
    const enum lm_cpu_level l = lm_cpu_level();
#if defined(LM_X86)
    if (l == LM_CPU_LEVEL_AVX512) return REC_AVX512;
    if (l == LM_CPU_LEVEL_AVX2) return REC_AVX2;
#elif defined(__aarch64__)
    if (lm_cpu_level_is_neon(l)) return REC_NEON;
#endif
    (void) l;
    return REC_SCALAR;
}

// ================================================================ ssm_conv
//
// y[t][r] = sum over k < nc of sx[r][t + k] * w[r][k], accumulated from 0 in
// order of k. Units: blocks of CONV_ROWS rows of one sequence; within a block
// the SIMD levels take 8 (AVX2), 16 (AVX-512) or 4 (NEON) rows a step, the
// taps of a step's rows transposed into one vector per k.

#define CONV_ROWS 16

struct conv_args {
    const char * s;  // sx of the sequence
    const char * w;  // conv weights
    char * y;        // dst of the sequence
    size_t snb1, wnb1, ynb1;
    int64_t nc, n_t;
};

static void conv_rows_s(const struct conv_args * a, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r++) {
        const float * s = (const float *)(a->s + r*a->snb1);
        const float * w = (const float *)(a->w + r*a->wnb1);
        for (int64_t t = 0; t < a->n_t; t++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < a->nc; k++) acc += s[t + k] * w[k];
            ((float *)(a->y + t*a->ynb1))[r] = acc;
        }
    }
}

#if defined(LM_X86)
// 8 rows starting at r: the AVX2 step. With four taps (Mamba's d_conv) the
// rows' taps are transposed from 128-bit loads; otherwise gathered.
LM_TARGET_AVX2 static void conv_rows8_avx2(const struct conv_args * a, int64_t r) {
    const float * s = (const float *)(a->s + r*a->snb1);
    const float * w = (const float *)(a->w + r*a->wnb1);
    const int64_t sst = (int64_t)(a->snb1 / sizeof(float)), wst = (int64_t)(a->wnb1 / sizeof(float));
    if (a->nc == 4) {
        // rows r and r+4 in the two halves of p[r], then a 4x4 transpose per half
#define CONV_T4(base, st, off, c0, c1, c2, c3) do {                                                            \
            __m256 p_[4];                                                                                      \
            for (int q_ = 0; q_ < 4; q_++)                                                                     \
                p_[q_] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps((base) + q_*(st) + (off))), \
                                              _mm_loadu_ps((base) + (q_ + 4)*(st) + (off)), 1);                \
            const __m256 l01 = _mm256_unpacklo_ps(p_[0], p_[1]), l23 = _mm256_unpacklo_ps(p_[2], p_[3]);       \
            const __m256 h01 = _mm256_unpackhi_ps(p_[0], p_[1]), h23 = _mm256_unpackhi_ps(p_[2], p_[3]);       \
            c0 = _mm256_shuffle_ps(l01, l23, 0x44); c1 = _mm256_shuffle_ps(l01, l23, 0xEE);                    \
            c2 = _mm256_shuffle_ps(h01, h23, 0x44); c3 = _mm256_shuffle_ps(h01, h23, 0xEE);                    \
        } while (0)
        __m256 w0, w1, w2, w3;
        CONV_T4(w, wst, 0, w0, w1, w2, w3);
        for (int64_t t = 0; t < a->n_t; t++) {
            __m256 s0, s1, s2, s3;
            CONV_T4(s, sst, t, s0, s1, s2, s3);
            __m256 acc = _mm256_setzero_ps();
            acc = _mm256_add_ps(acc, _mm256_mul_ps(s0, w0));
            acc = _mm256_add_ps(acc, _mm256_mul_ps(s1, w1));
            acc = _mm256_add_ps(acc, _mm256_mul_ps(s2, w2));
            acc = _mm256_add_ps(acc, _mm256_mul_ps(s3, w3));
            _mm256_storeu_ps((float *)(a->y + t*a->ynb1) + r, acc);
        }
#undef CONV_T4
        return;
    }
    const __m256i si = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int) sst));
    const __m256i wi = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int) wst));
    for (int64_t t = 0; t < a->n_t; t++) {
        __m256 acc = _mm256_setzero_ps();
        for (int64_t k = 0; k < a->nc; k++) {
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_i32gather_ps(s + t + k, si, 4), _mm256_i32gather_ps(w + k, wi, 4)));
        }
        _mm256_storeu_ps((float *)(a->y + t*a->ynb1) + r, acc);
    }
}

// 16 rows starting at r: rows r+q, r+q+4, r+q+8, r+q+12 in the four lanes of
// p[q], transposed per lane as in the AVX2 step.
LM_TARGET_AVX512 static void conv_rows16_avx512(const struct conv_args * a, int64_t r) {
    const float * s = (const float *)(a->s + r*a->snb1);
    const float * w = (const float *)(a->w + r*a->wnb1);
    const int64_t sst = (int64_t)(a->snb1 / sizeof(float)), wst = (int64_t)(a->wnb1 / sizeof(float));
    if (a->nc == 4) {
#define CONV_T4(base, st, off, c0, c1, c2, c3) do {                                                            \
            __m512 p_[4];                                                                                      \
            for (int q_ = 0; q_ < 4; q_++) {                                                                   \
                __m512 v_ = _mm512_castps128_ps512(_mm_loadu_ps((base) + q_*(st) + (off)));                   \
                v_ = _mm512_insertf32x4(v_, _mm_loadu_ps((base) + (q_ + 4)*(st) + (off)), 1);                 \
                v_ = _mm512_insertf32x4(v_, _mm_loadu_ps((base) + (q_ + 8)*(st) + (off)), 2);                 \
                p_[q_] = _mm512_insertf32x4(v_, _mm_loadu_ps((base) + (q_ + 12)*(st) + (off)), 3);            \
            }                                                                                                  \
            const __m512 l01 = _mm512_unpacklo_ps(p_[0], p_[1]), l23 = _mm512_unpacklo_ps(p_[2], p_[3]);       \
            const __m512 h01 = _mm512_unpackhi_ps(p_[0], p_[1]), h23 = _mm512_unpackhi_ps(p_[2], p_[3]);       \
            c0 = _mm512_shuffle_ps(l01, l23, 0x44); c1 = _mm512_shuffle_ps(l01, l23, 0xEE);                    \
            c2 = _mm512_shuffle_ps(h01, h23, 0x44); c3 = _mm512_shuffle_ps(h01, h23, 0xEE);                    \
        } while (0)
        __m512 w0, w1, w2, w3;
        CONV_T4(w, wst, 0, w0, w1, w2, w3);
        for (int64_t t = 0; t < a->n_t; t++) {
            __m512 s0, s1, s2, s3;
            CONV_T4(s, sst, t, s0, s1, s2, s3);
            __m512 acc = _mm512_setzero_ps();
            acc = _mm512_add_ps(acc, _mm512_mul_ps(s0, w0));
            acc = _mm512_add_ps(acc, _mm512_mul_ps(s1, w1));
            acc = _mm512_add_ps(acc, _mm512_mul_ps(s2, w2));
            acc = _mm512_add_ps(acc, _mm512_mul_ps(s3, w3));
            _mm512_storeu_ps((float *)(a->y + t*a->ynb1) + r, acc);
        }
#undef CONV_T4
        return;
    }
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i si = _mm512_mullo_epi32(lane, _mm512_set1_epi32((int) sst));
    const __m512i wi = _mm512_mullo_epi32(lane, _mm512_set1_epi32((int) wst));
    for (int64_t t = 0; t < a->n_t; t++) {
        __m512 acc = _mm512_setzero_ps();
        for (int64_t k = 0; k < a->nc; k++) {
            acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_i32gather_ps(si, s + t + k, 4), _mm512_i32gather_ps(wi, w + k, 4)));
        }
        _mm512_storeu_ps((float *)(a->y + t*a->ynb1) + r, acc);
    }
}
#endif

#if defined(__aarch64__)
// 4 rows starting at r: the taps of the 4 rows as one vector per k.
static inline float32x4_t conv_col_neon(const float * p, int64_t st) {
    float32x4_t v = vdupq_n_f32(p[0]);
    v = vsetq_lane_f32(p[st], v, 1);
    v = vsetq_lane_f32(p[2*st], v, 2);
    v = vsetq_lane_f32(p[3*st], v, 3);
    return v;
}

static void conv_rows4_neon(const struct conv_args * a, int64_t r) {
    const float * s = (const float *)(a->s + r*a->snb1);
    const float * w = (const float *)(a->w + r*a->wnb1);
    const int64_t sst = (int64_t)(a->snb1 / sizeof(float)), wst = (int64_t)(a->wnb1 / sizeof(float));
    if (a->nc == 4) {
        float32x4_t wc[4];
        {
            const float32x4x2_t t01 = vtrnq_f32(vld1q_f32(w), vld1q_f32(w + wst));
            const float32x4x2_t t23 = vtrnq_f32(vld1q_f32(w + 2*wst), vld1q_f32(w + 3*wst));
            wc[0] = vcombine_f32(vget_low_f32(t01.val[0]), vget_low_f32(t23.val[0]));
            wc[1] = vcombine_f32(vget_low_f32(t01.val[1]), vget_low_f32(t23.val[1]));
            wc[2] = vcombine_f32(vget_high_f32(t01.val[0]), vget_high_f32(t23.val[0]));
            wc[3] = vcombine_f32(vget_high_f32(t01.val[1]), vget_high_f32(t23.val[1]));
        }
        for (int64_t t = 0; t < a->n_t; t++) {
            const float32x4x2_t t01 = vtrnq_f32(vld1q_f32(s + t), vld1q_f32(s + sst + t));
            const float32x4x2_t t23 = vtrnq_f32(vld1q_f32(s + 2*sst + t), vld1q_f32(s + 3*sst + t));
            float32x4_t acc = vdupq_n_f32(0.0f);
            acc = vaddq_f32(acc, vmulq_f32(vcombine_f32(vget_low_f32(t01.val[0]), vget_low_f32(t23.val[0])), wc[0]));
            acc = vaddq_f32(acc, vmulq_f32(vcombine_f32(vget_low_f32(t01.val[1]), vget_low_f32(t23.val[1])), wc[1]));
            acc = vaddq_f32(acc, vmulq_f32(vcombine_f32(vget_high_f32(t01.val[0]), vget_high_f32(t23.val[0])), wc[2]));
            acc = vaddq_f32(acc, vmulq_f32(vcombine_f32(vget_high_f32(t01.val[1]), vget_high_f32(t23.val[1])), wc[3]));
            vst1q_f32((float *)(a->y + t*a->ynb1) + r, acc);
        }
        return;
    }
    for (int64_t t = 0; t < a->n_t; t++) {
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int64_t k = 0; k < a->nc; k++) acc = vaddq_f32(acc, vmulq_f32(conv_col_neon(s + t + k, sst), conv_col_neon(w + k, wst)));
        vst1q_f32((float *)(a->y + t*a->ynb1) + r, acc);
    }
}
#endif

static void lm_compute_ssm_conv(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * sx = dst->src[0];
    const struct lm_ggml_tensor * cw = dst->src[1];
    const int64_t nr = sx->ne[1], n_s = dst->ne[2];
    struct conv_args a = {
        .w = (const char *) cw->data, .snb1 = sx->nb[1], .wnb1 = cw->nb[1], .ynb1 = dst->nb[1],
        .nc = cw->ne[0], .n_t = dst->ne[1],
    };
    enum rec_level lvl = rec_level();
    // the gathers index rows with 32-bit element offsets
    if (a.nc != 4 && (a.snb1 > (size_t) INT32_MAX / 64 || a.wnb1 > (size_t) INT32_MAX / 64)) lvl = REC_SCALAR;
    const int64_t nblk = (nr + CONV_ROWS - 1) / CONV_ROWS;
    int64_t u0, u1;
    lm_ggml_thread_range(nblk * n_s, params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t is = u / nblk, b = u % nblk;
        a.s = (const char *) sx->data + is*sx->nb[2];
        a.y = (char *) dst->data + is*dst->nb[2];
        int64_t r = b*CONV_ROWS;
        const int64_t r1 = LM_GGML_MIN(r + CONV_ROWS, nr);
        switch (lvl) {
#if defined(LM_X86)
            case REC_AVX512: for (; r + 16 <= r1; r += 16) conv_rows16_avx512(&a, r); break;
            case REC_AVX2:   for (; r + 8 <= r1; r += 8) conv_rows8_avx2(&a, r); break;
#endif
#if defined(__aarch64__)
            case REC_NEON:   for (; r + 4 <= r1; r += 4) conv_rows4_neon(&a, r); break;
#endif
            default: break;
        }
        conv_rows_s(&a, r, r1);
    }
}

// ================================================================ ssm_scan
//
// Per row r of d_inner and token t, with d = softplus(dt[t][r]):
//   state[r][i] = state[r][i] * exp(d * A[r][i]) + B[t][i] * (x[t][r] * d)
//   y[t][r]     = sum over i of state[r][i] * C[t][i]
// Units: blocks of SCAN_ROWS rows of one sequence, taking the tokens in
// order and the block's rows for each (their states, and a token's x, dt
// and y, stay in a few cache lines). A row's step vectorises over i: 8
// lanes a step (AVX2; AVX-512 takes two steps at once with the same bits),
// 4 (NEON), summed lane-wise in order of the steps, then across the lanes;
// the d_state % step tail as the scalar code.

#define SCAN_ROWS 16

static inline float scan_softplus(float d) {
    return d <= 20.0f ? log1pf(expf(d)) : d;
}

// One row's step for one token, lanes [i0, nc) one by one: the new state
// into so (sp the state before), the sum of state * C returned.
static float scan_tail(int64_t i0, int64_t nc, float * so, const float * sp, const float * A, const float * B, const float * C,
                       float dsp, float xdt) {
    float acc = 0.0f;
    for (int64_t i = i0; i < nc; i++) {
        const float st = sp[i] * expf(dsp * A[i]) + B[i] * xdt;
        acc += st * C[i];
        so[i] = st;
    }
    return acc;
}

#if defined(LM_X86)
// wide: AVX-512 steps of 16 lanes first, giving the AVX2 steps' bits
LM_TARGET_AVX512 static int64_t scan_steps_avx512(int64_t nc, float * so, const float * sp, const float * A, const float * B,
                                                  const float * C, float dsp, float xdt, __m256 * acc) {
    const __m512 vd = _mm512_set1_ps(dsp), vx = _mm512_set1_ps(xdt);
    int64_t i = 0;
    for (; i + 16 <= nc; i += 16) {
        const __m512 e = lm_v_expf_avx512_as2(_mm512_mul_ps(vd, _mm512_loadu_ps(A + i)));
        const __m512 st = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(sp + i), e), _mm512_mul_ps(_mm512_loadu_ps(B + i), vx));
        _mm512_storeu_ps(so + i, st);
        const __m512 p = _mm512_mul_ps(st, _mm512_loadu_ps(C + i));
        const __m256 lo = _mm512_castps512_ps256(p), hi = _mm512_extractf32x8_ps(p, 1);
        *acc = i == 0 ? lo : _mm256_add_ps(*acc, lo);
        *acc = _mm256_add_ps(*acc, hi);
    }
    return i;
}

LM_TARGET_AVX2 static float scan_step_avx2(bool wide, int64_t nc, float * so, const float * sp, const float * A, const float * B,
                                           const float * C, float dsp, float xdt) {
    __m256 acc = _mm256_setzero_ps();
    int64_t i = wide ? scan_steps_avx512(nc, so, sp, A, B, C, dsp, xdt, &acc) : 0;
    const __m256 vd = _mm256_set1_ps(dsp), vx = _mm256_set1_ps(xdt);
    for (; i + 8 <= nc; i += 8) {
        const __m256 e = lm_v_expf_avx2(_mm256_mul_ps(vd, _mm256_loadu_ps(A + i)));
        const __m256 st = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(sp + i), e), _mm256_mul_ps(_mm256_loadu_ps(B + i), vx));
        _mm256_storeu_ps(so + i, st);
        const __m256 p = _mm256_mul_ps(st, _mm256_loadu_ps(C + i));
        acc = i == 0 ? p : _mm256_add_ps(acc, p);
    }
    const float sum = i >= 8 ? lm_hsum_avx2(acc) : 0.0f;
    return sum + scan_tail(i, nc, so, sp, A, B, C, dsp, xdt);
}
#endif

#if defined(__aarch64__)
// exp(x) for 4 lanes by lm_v_expf_avx2's steps: x = k ln2 + r, e^r by its
// Taylor series to degree 7, times 2^k built in the exponent bits; +inf
// above LM_EXPF_HI, 0 below LM_EXPF_LO, NaN stays NaN.
static inline float32x4_t scan_expf_neon(float32x4_t x) {
    const float32x4_t xc = vmaxq_f32(vminq_f32(x, vdupq_n_f32(88.7228390f)), vdupq_n_f32(-87.3365448f));
    const float32x4_t k = vrndnq_f32(vmulq_f32(xc, vdupq_n_f32(1.44269504088896341f)));
    float32x4_t r = vfmsq_f32(xc, k, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, k, vdupq_n_f32(-2.12194440e-4f));
    static const float taylor[8] = { 1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f };
    float32x4_t p = vdupq_n_f32(taylor[0]);
    for (int i = 1; i < 8; i++) p = vfmaq_f32(vdupq_n_f32(taylor[i]), p, r);
    const int32x4_t ki = vcvtq_s32_f32(k);
    const int32x4_t k1 = vshrq_n_s32(ki, 1);
    const int32x4_t k2 = vsubq_s32(ki, k1);
    const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k1, vdupq_n_s32(127)), 23));
    const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k2, vdupq_n_s32(127)), 23));
    float32x4_t res = vmulq_f32(vmulq_f32(p, s1), s2);
    res = vbslq_f32(vcgtq_f32(x, vdupq_n_f32(88.7228390f)), vdupq_n_f32(INFINITY), res);
    res = vbslq_f32(vcltq_f32(x, vdupq_n_f32(-87.3365448f)), vdupq_n_f32(0.0f), res);
    return vbslq_f32(vceqq_f32(x, x), res, x);
}

static float scan_step_neon(int64_t nc, float * so, const float * sp, const float * A, const float * B, const float * C, float dsp,
                            float xdt) {
    const float32x4_t vd = vdupq_n_f32(dsp), vx = vdupq_n_f32(xdt);
    float32x4_t acc = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 4 <= nc; i += 4) {
        const float32x4_t e = scan_expf_neon(vmulq_f32(vd, vld1q_f32(A + i)));
        const float32x4_t st = vaddq_f32(vmulq_f32(vld1q_f32(sp + i), e), vmulq_f32(vld1q_f32(B + i), vx));
        vst1q_f32(so + i, st);
        const float32x4_t p = vmulq_f32(st, vld1q_f32(C + i));
        acc = i == 0 ? p : vaddq_f32(acc, p);
    }
    const float sum = i >= 4 ? vaddvq_f32(acc) : 0.0f;
    return sum + scan_tail(i, nc, so, sp, A, B, C, dsp, xdt);
}
#endif

static void lm_compute_ssm_scan(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * s_in = dst->src[0];
    const struct lm_ggml_tensor * x    = dst->src[1];
    const struct lm_ggml_tensor * dt   = dst->src[2];
    const struct lm_ggml_tensor * B    = dst->src[4];
    const struct lm_ggml_tensor * C    = dst->src[5];
    const float * A_all = (const float *) dst->src[3]->data;
    const int64_t nc = s_in->ne[0], nr = s_in->ne[1], n_s = s_in->ne[2], n_t = x->ne[1];
    float * y_all = (float *) dst->data;
    float * s_all = y_all + lm_ggml_nelements(x);
    const enum rec_level lvl = rec_level();

    const int64_t nblk = (nr + SCAN_ROWS - 1) / SCAN_ROWS;
    int64_t u0, u1;
    lm_ggml_thread_range(nblk * n_s, params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t is = u / nblk, r0 = (u % nblk) * SCAN_ROWS, r1 = LM_GGML_MIN(r0 + SCAN_ROWS, nr);
        const float * s0 = (const float *)((const char *) s_in->data + is*s_in->nb[2]);
        float * so = s_all + is*nr*nc;
        for (int64_t t = 0; t < n_t; t++) {
            const float * dtr = (const float *)((const char *) dt->data + t*dt->nb[1] + is*dt->nb[2]);
            const float * xr  = (const float *)((const char *) x->data  + t*x->nb[1]  + is*x->nb[2]);
            const float * Bt  = (const float *)((const char *) B->data  + t*B->nb[1]  + is*B->nb[2]);
            const float * Ct  = (const float *)((const char *) C->data  + t*C->nb[1]  + is*C->nb[2]);
            float * y = y_all + (is*n_t + t)*nr;
            // the first token starts from the input state, later ones from the state just written
            const float * sp = t == 0 ? s0 : so;
            for (int64_t r = r0; r < r1; r++) {
                const float dsp = scan_softplus(dtr[r]);
                const float xdt = xr[r] * dsp;
                const float * A = A_all + r*nc;
                switch (lvl) {
#if defined(LM_X86)
                    case REC_AVX512: y[r] = scan_step_avx2(true, nc, so + r*nc, sp + r*nc, A, Bt, Ct, dsp, xdt); break;
                    case REC_AVX2:   y[r] = scan_step_avx2(false, nc, so + r*nc, sp + r*nc, A, Bt, Ct, dsp, xdt); break;
#endif
#if defined(__aarch64__)
                    case REC_NEON:   y[r] = scan_step_neon(nc, so + r*nc, sp + r*nc, A, Bt, Ct, dsp, xdt); break;
#endif
                    default:         y[r] = scan_tail(0, nc, so + r*nc, sp + r*nc, A, Bt, Ct, dsp, xdt); break;
                }
            }
        }
    }
}

// ================================================================ RWKV v6
//
// Per head h, token t (state St is S x S, i = key index, j = value index):
//   out[j] = sum_i r[i] * (k[i]*v[j]*tf[i] + St-1[i][j]);  St[i][j] = St-1[i][j]*td[i] + k[i]*v[j]
// computed as out[j] = v[j]*c + sum_i r[i]*St-1[i][j] with c = sum_i r[i]*k[i]*tf[i]
// (one value per token and head): three multiplies a state element, not
// five. Value columns j are independent, so units are blocks of WKV_COLS
// columns of one head of one sequence, each taking the sequence's tokens in
// order (its state columns stay in cache). The order of every rounding is
// fixed, the same at each level (which is why the multiply-adds are fused
// everywhere, fmaf in the scalar code): sum_i r[i]*St-1[i][j] in four
// partial sums by i mod 4, added as (q0 + q1) + (q2 + q3); c in eight by
// i mod 8, added as lm_hsum_avx2 adds its lanes.

#define WKV_COLS 16

struct wkv_args {
    const float * k, * v, * r, * tf, * td;
    int64_t S, Cn;
};

// c of head h at token offset base, from the eight partial sums p
static float wkv_bonus_sum(const float p[8]) {
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

static float wkv_bonus_s(const struct wkv_args * a, int64_t h, int64_t base) {
    float p[8] = { 0 };
    for (int64_t i = 0; i < a->S; i++) p[i & 7] = fmaf(a->r[base + i] * a->k[base + i], a->tf[h*a->S + i], p[i & 7]);
    return wkv_bonus_sum(p);
}

// Columns [j0, j1) of head h for tokens [t0, t1): sp the state before t0,
// sc the state written (head h's S x S matrix of each).
static void wkv_cols_s(const struct wkv_args * a, int64_t h, int64_t j0, int64_t j1, int64_t t0, int64_t t1, const float * sp,
                       float * sc, float * out) {
    const int64_t S = a->S;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t base = t*a->Cn + h*S;
        const float c = wkv_bonus_s(a, h, base);
        for (int64_t j = j0; j < j1; j++) {
            const float vj = a->v[base + j];
            float q[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
            for (int64_t i = 0; i < S; i++) {
                const float prev = sp[i*S + j];
                q[i & 3] = fmaf(a->r[base + i], prev, q[i & 3]);
                sc[i*S + j] = fmaf(prev, a->td[base + i], vj * a->k[base + i]);
            }
            out[base + j] = fmaf(vj, c, (q[0] + q[1]) + (q[2] + q[3]));
        }
        sp = sc;
    }
}

#if defined(LM_X86)
LM_TARGET_AVX2 static float wkv_bonus_avx2(const struct wkv_args * a, int64_t h, int64_t base) {
    const float * r = a->r + base, * k = a->k + base, * tf = a->tf + h*a->S;
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= a->S; i += 8) {
        acc = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(r + i), _mm256_loadu_ps(k + i)), _mm256_loadu_ps(tf + i), acc);
    }
    float p[8];
    _mm256_storeu_ps(p, acc);
    for (; i < a->S; i++) p[i & 7] = fmaf(r[i] * k[i], tf[i], p[i & 7]);
    return wkv_bonus_sum(p);
}

// one key row i of the AVX2 block: q += r*prev, the new state prev*td + k*v
#define WKV_ROW_AVX2(q0, q1, i) do {                                                                        \
        const __m256 p0_ = _mm256_loadu_ps(sp + (i)*S + j0), p1_ = _mm256_loadu_ps(sp + (i)*S + j0 + 8);   \
        const __m256 r_ = _mm256_set1_ps(a->r[base + (i)]), k_ = _mm256_set1_ps(a->k[base + (i)]);         \
        const __m256 d_ = _mm256_set1_ps(a->td[base + (i)]);                                               \
        q0 = _mm256_fmadd_ps(r_, p0_, q0);                                                                 \
        q1 = _mm256_fmadd_ps(r_, p1_, q1);                                                                 \
        _mm256_storeu_ps(sc + (i)*S + j0, _mm256_fmadd_ps(p0_, d_, _mm256_mul_ps(v0, k_)));                 \
        _mm256_storeu_ps(sc + (i)*S + j0 + 8, _mm256_fmadd_ps(p1_, d_, _mm256_mul_ps(v1, k_)));             \
    } while (0)

LM_TARGET_AVX2 static void wkv_cols16_avx2(const struct wkv_args * a, int64_t h, int64_t j0, int64_t t0, int64_t t1, const float * sp,
                                           float * sc, float * out) {
    const int64_t S = a->S;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t base = t*a->Cn + h*S;
        const __m256 c = _mm256_set1_ps(wkv_bonus_avx2(a, h, base));
        const __m256 v0 = _mm256_loadu_ps(a->v + base + j0), v1 = _mm256_loadu_ps(a->v + base + j0 + 8);
        __m256 q[4][2];
        for (int m = 0; m < 4; m++) q[m][0] = q[m][1] = _mm256_setzero_ps();
        int64_t i = 0;
        for (; i + 4 <= S; i += 4) {
            WKV_ROW_AVX2(q[0][0], q[0][1], i);
            WKV_ROW_AVX2(q[1][0], q[1][1], i + 1);
            WKV_ROW_AVX2(q[2][0], q[2][1], i + 2);
            WKV_ROW_AVX2(q[3][0], q[3][1], i + 3);
        }
        for (; i < S; i++) WKV_ROW_AVX2(q[i & 3][0], q[i & 3][1], i);
        const __m256 s0 = _mm256_add_ps(_mm256_add_ps(q[0][0], q[1][0]), _mm256_add_ps(q[2][0], q[3][0]));
        const __m256 s1 = _mm256_add_ps(_mm256_add_ps(q[0][1], q[1][1]), _mm256_add_ps(q[2][1], q[3][1]));
        _mm256_storeu_ps(out + base + j0, _mm256_fmadd_ps(v0, c, s0));
        _mm256_storeu_ps(out + base + j0 + 8, _mm256_fmadd_ps(v1, c, s1));
        sp = sc;
    }
}
#undef WKV_ROW_AVX2

#define WKV_ROW_AVX512(q, i) do {                                                                           \
        const __m512 p_ = _mm512_loadu_ps(sp + (i)*S + j0);                                                \
        q = _mm512_fmadd_ps(_mm512_set1_ps(a->r[base + (i)]), p_, q);                                      \
        _mm512_storeu_ps(sc + (i)*S + j0, _mm512_fmadd_ps(p_, _mm512_set1_ps(a->td[base + (i)]),           \
                                                          _mm512_mul_ps(v, _mm512_set1_ps(a->k[base + (i)])))); \
    } while (0)

LM_TARGET_AVX512 static void wkv_cols16_avx512(const struct wkv_args * a, int64_t h, int64_t j0, int64_t t0, int64_t t1, const float * sp,
                                               float * sc, float * out) {
    const int64_t S = a->S;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t base = t*a->Cn + h*S;
        const __m512 c = _mm512_set1_ps(wkv_bonus_avx2(a, h, base));
        const __m512 v = _mm512_loadu_ps(a->v + base + j0);
        __m512 q[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
        int64_t i = 0;
        for (; i + 4 <= S; i += 4) {
            WKV_ROW_AVX512(q[0], i);
            WKV_ROW_AVX512(q[1], i + 1);
            WKV_ROW_AVX512(q[2], i + 2);
            WKV_ROW_AVX512(q[3], i + 3);
        }
        for (; i < S; i++) WKV_ROW_AVX512(q[i & 3], i);
        const __m512 s = _mm512_add_ps(_mm512_add_ps(q[0], q[1]), _mm512_add_ps(q[2], q[3]));
        _mm512_storeu_ps(out + base + j0, _mm512_fmadd_ps(v, c, s));
        sp = sc;
    }
}
#undef WKV_ROW_AVX512
#endif

#if defined(__aarch64__)
static float wkv_bonus_neon(const struct wkv_args * a, int64_t h, int64_t base) {
    const float * r = a->r + base, * k = a->k + base, * tf = a->tf + h*a->S;
    float32x4_t lo = vdupq_n_f32(0.0f), hi = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 8 <= a->S; i += 8) {
        lo = vfmaq_f32(lo, vmulq_f32(vld1q_f32(r + i), vld1q_f32(k + i)), vld1q_f32(tf + i));
        hi = vfmaq_f32(hi, vmulq_f32(vld1q_f32(r + i + 4), vld1q_f32(k + i + 4)), vld1q_f32(tf + i + 4));
    }
    float p[8];
    vst1q_f32(p, lo);
    vst1q_f32(p + 4, hi);
    for (; i < a->S; i++) p[i & 7] = fmaf(r[i] * k[i], tf[i], p[i & 7]);
    return wkv_bonus_sum(p);
}

static void wkv_cols16_neon(const struct wkv_args * a, int64_t h, int64_t j0, int64_t t0, int64_t t1, const float * sp,
                            float * sc, float * out) {
    const int64_t S = a->S;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t base = t*a->Cn + h*S;
        const float c = wkv_bonus_neon(a, h, base);
        float32x4_t v[4], q[4][4];
        for (int n = 0; n < 4; n++) {
            v[n] = vld1q_f32(a->v + base + j0 + 4*n);
            for (int m = 0; m < 4; m++) q[m][n] = vdupq_n_f32(0.0f);
        }
        for (int64_t i = 0; i < S; i++) {
            const float rr = a->r[base + i], kk = a->k[base + i], td = a->td[base + i];
            const float * p = sp + i*S + j0;
            float * o = sc + i*S + j0;
            float32x4_t * qm = q[i & 3];
            for (int n = 0; n < 4; n++) {
                const float32x4_t pv = vld1q_f32(p + 4*n);
                qm[n] = vfmaq_n_f32(qm[n], pv, rr);
                vst1q_f32(o + 4*n, vfmaq_n_f32(vmulq_n_f32(v[n], kk), pv, td));
            }
        }
        for (int n = 0; n < 4; n++) {
            const float32x4_t s = vaddq_f32(vaddq_f32(q[0][n], q[1][n]), vaddq_f32(q[2][n], q[3][n]));
            vst1q_f32(out + base + j0 + 4*n, vfmaq_n_f32(s, v[n], c));
        }
        sp = sc;
    }
}
#endif

static void lm_compute_rwkv_wkv6(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const int64_t T = dst->src[1]->ne[3];
    const int64_t Cn = dst->ne[0];
    const int64_t H = dst->src[1]->ne[2];
    const int64_t n_seqs = dst->src[5]->ne[1];
    const int64_t S = Cn / H;
    const int64_t t_per_seq = T / n_seqs;
    const struct wkv_args a = {
        .k = (const float *) dst->src[0]->data, .v = (const float *) dst->src[1]->data, .r = (const float *) dst->src[2]->data,
        .tf = (const float *) dst->src[3]->data, .td = (const float *) dst->src[4]->data, .S = S, .Cn = Cn,
    };
    const float * s_init = (const float *) dst->src[5]->data;
    float * out   = (float *) dst->data;
    float * s_all = out + Cn * T;
    const enum rec_level lvl = rec_level();

    const int64_t nblk = (S + WKV_COLS - 1) / WKV_COLS;
    int64_t u0, u1;
    lm_ggml_thread_range(n_seqs * H * nblk, params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t seq = u / (H * nblk), h = (u / nblk) % H, j0 = (u % nblk) * WKV_COLS;
        const int64_t j1 = LM_GGML_MIN(j0 + WKV_COLS, S);
        const int64_t t0 = seq * t_per_seq, t1 = t0 + t_per_seq;
        const float * sp = s_init + seq*S*Cn + h*S*S;
        float * sc = s_all + seq*S*Cn + h*S*S;
        if (t0 == t1) {
            // no tokens: the state passes through
            for (int64_t i = 0; i < S; i++) memcpy(sc + i*S + j0, sp + i*S + j0, (size_t)(j1 - j0) * sizeof(float));
            continue;
        }
        if (j1 - j0 == WKV_COLS) {
            switch (lvl) {
#if defined(LM_X86)
                case REC_AVX512: wkv_cols16_avx512(&a, h, j0, t0, t1, sp, sc, out); continue;
                case REC_AVX2:   wkv_cols16_avx2(&a, h, j0, t0, t1, sp, sc, out); continue;
#endif
#if defined(__aarch64__)
                case REC_NEON:   wkv_cols16_neon(&a, h, j0, t0, t1, sp, sc, out); continue;
#endif
                default: break;
            }
        }
        wkv_cols_s(&a, h, j0, j1, t0, t1, sp, sc, out);
    }
}

// ================================================================ descriptors

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_ssm_conv  = { .compute = lm_compute_ssm_conv };
const struct lm_cpu_op lm_cpu_op_ssm_scan  = { .compute = lm_compute_ssm_scan };
const struct lm_cpu_op lm_cpu_op_rwkv_wkv6 = { .compute = lm_compute_rwkv_wkv6 };
