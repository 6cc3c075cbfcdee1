// mm-quant.c - the quantized side of mul_mat: quantizers of the activation
// formats (q8_0, q8_1, q8_K) and dot products of weight blocks against them,
// with integer SIMD kernels for the most used weight types. Block layouts are
// those of ggml-common.h (the file format).
#include "mm-kernels.h"
#include "ggml-common.h"
#include "ggml-quants.h"

#if defined(LM_X86)
#include <immintrin.h>
#endif

#define H2F(x) LM_GGML_FP16_TO_FP32(x)
#define F2H(x) LM_GGML_FP32_TO_FP16(x)

// ---------------------------------------------------------------- activation quantizers

// The CPU quantizers of the activation formats (ggml-quants.c): the same
// bits as the reference's, so the integer dots see the reference's operands.
lm_ggml_from_float_t mm_act_quantizer(enum lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q8_0: return lm_quantize_row_q8_0;
        case LM_GGML_TYPE_Q8_1: return lm_quantize_row_q8_1;
        case LM_GGML_TYPE_Q8_K: return lm_quantize_row_q8_K;
        default: return NULL;
    }
}

// ---------------------------------------------------------------- scalar dots

#define VD_ARGS int n, float * restrict s, size_t bs, const void * restrict vx, size_t bx, const void * restrict vy, size_t by, int nrc
#define VD_UNUSED (void) bs; (void) bx; (void) by; (void) nrc

static void vd_q4_0_q8_0(VD_ARGS) {
    VD_UNUSED;
    const block_q4_0 * x = vx; const block_q8_0 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK4_0; i++) {
        int acc = 0;
        for (int j = 0; j < QK4_0 / 2; j++) {
            acc += ((x[i].qs[j] & 0xF) - 8) * y[i].qs[j] + ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + 16];
        }
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d);
    }
    *s = sum;
}

static void vd_q4_1_q8_1(VD_ARGS) {
    VD_UNUSED;
    const block_q4_1 * x = vx; const block_q8_1 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK4_1; i++) {
        int acc = 0;
        for (int j = 0; j < QK4_1 / 2; j++) {
            acc += (x[i].qs[j] & 0xF) * y[i].qs[j] + (x[i].qs[j] >> 4) * y[i].qs[j + 16];
        }
        // x = d*q + m, and y's s holds d_y * sum(q_y)
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d) + H2F(x[i].m) * H2F(y[i].s);
    }
    *s = sum;
}

static inline uint32_t qh_bits(const uint8_t * qh) {
    return (uint32_t) qh[0] | (uint32_t) qh[1] << 8 | (uint32_t) qh[2] << 16 | (uint32_t) qh[3] << 24;
}

static void vd_q5_0_q8_0(VD_ARGS) {
    VD_UNUSED;
    const block_q5_0 * x = vx; const block_q8_0 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK5_0; i++) {
        const uint32_t qh = qh_bits(x[i].qh);
        int acc = 0;
        for (int j = 0; j < QK5_0 / 2; j++) {
            const int v0 = ((x[i].qs[j] & 0xF) | ((qh >> j) & 1) << 4) - 16;
            const int v1 = ((x[i].qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4) - 16;
            acc += v0 * y[i].qs[j] + v1 * y[i].qs[j + 16];
        }
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d);
    }
    *s = sum;
}

static void vd_q5_1_q8_1(VD_ARGS) {
    VD_UNUSED;
    const block_q5_1 * x = vx; const block_q8_1 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK5_1; i++) {
        const uint32_t qh = qh_bits(x[i].qh);
        int acc = 0;
        for (int j = 0; j < QK5_1 / 2; j++) {
            const int v0 = (x[i].qs[j] & 0xF) | ((qh >> j) & 1) << 4;
            const int v1 = (x[i].qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4;
            acc += v0 * y[i].qs[j] + v1 * y[i].qs[j + 16];
        }
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d) + H2F(x[i].m) * H2F(y[i].s);
    }
    *s = sum;
}

static void vd_q8_0_q8_0(VD_ARGS) {
    VD_UNUSED;
    const block_q8_0 * x = vx; const block_q8_0 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK8_0; i++) {
        int acc = 0;
        for (int j = 0; j < QK8_0; j++) acc += x[i].qs[j] * y[i].qs[j];
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d);
    }
    *s = sum;
}

// q4_K: 8 sub-blocks of 32 with 6-bit scale and min packed in 12 bytes.
static inline void q4k_scales(const uint8_t * q, uint8_t * sc, uint8_t * mn) {
    for (int j = 0; j < 4; j++) {
        sc[j] = q[j] & 63;
        mn[j] = q[j + 4] & 63;
    }
    for (int j = 4; j < 8; j++) {
        sc[j] = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        mn[j] = (q[j + 4] >> 4)  | ((q[j] >> 6) << 4);
    }
}

static inline int q4k_min_term(const uint8_t * mn, const int16_t * bsums) {
    int m = 0;
    for (int j = 0; j < 8; j++) m += mn[j] * (bsums[2 * j] + bsums[2 * j + 1]);
    return m;
}

static void vd_q4_K_q8_K(VD_ARGS) {
    VD_UNUSED;
    const block_q4_K * x = vx; const block_q8_K * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], mn[8];
        q4k_scales(x[i].scales, sc, mn);
        int acc = 0;
        for (int j = 0; j < 4; j++) {
            const uint8_t * q = x[i].qs + 32 * j;
            const int8_t  * a = y[i].qs + 64 * j;
            int s0 = 0, s1 = 0;
            for (int l = 0; l < 32; l++) { s0 += (q[l] & 0xF) * a[l]; s1 += (q[l] >> 4) * a[l + 32]; }
            acc += sc[2 * j] * s0 + sc[2 * j + 1] * s1;
        }
        sum += y[i].d * (H2F(x[i].d) * (float) acc - H2F(x[i].dmin) * (float) q4k_min_term(mn, y[i].bsums));
    }
    *s = sum;
}

// q6_K: per half of 128, element l of each 32-quarter takes 4 bits of ql and 2 of qh.
static void vd_q6_K_q8_K(VD_ARGS) {
    VD_UNUSED;
    const block_q6_K * x = vx; const block_q8_K * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        const uint8_t * ql = x[i].ql, * qh = x[i].qh;
        const int8_t * sc = x[i].scales, * a = y[i].qs;
        int acc = 0;
        for (int h = 0; h < 2; h++) {
            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                const int q1 = ((ql[l]      & 0xF) | ((qh[l]        & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l]      >> 4)  | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4)  | (((qh[l] >> 6) & 3) << 4)) - 32;
                acc += sc[is] * q1 * a[l] + sc[is + 2] * q2 * a[l + 32] + sc[is + 4] * q3 * a[l + 64] + sc[is + 6] * q4 * a[l + 96];
            }
            ql += 64; qh += 32; sc += 8; a += 128;
        }
        sum += H2F(x[i].d) * y[i].d * (float) acc;
    }
    *s = sum;
}

// ---------------------------------------------------------------- AVX2 dots

#if defined(LM_X86)

LM_TARGET_AVX2 static inline float hsum8q(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// signed x signed bytes -> 8 int32 sums (x must not hold -128)
LM_TARGET_AVX2 static inline __m256i dot_s8(__m256i xv, __m256i yv) {
    const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(xv, xv), _mm256_sign_epi8(yv, xv));
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

LM_TARGET_AVX2 static void vd_q4_0_q8_0_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q4_0 * x = vx; const block_q8_0 * y = vy;
    const __m128i m4 = _mm_set1_epi8(0xF);
    const __m256i off = _mm256_set1_epi8(8);
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK4_0; i++) {
        const __m128i q = _mm_loadu_si128((const __m128i *) x[i].qs);
        const __m256i xv = _mm256_sub_epi8(_mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m4), _mm_and_si128(q, m4)), off);
        const __m256i yv = _mm256_loadu_si256((const __m256i *) y[i].qs);
        const __m256 d = _mm256_set1_ps(H2F(x[i].d) * H2F(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(dot_s8(xv, yv)), acc);
    }
    *s = hsum8q(acc);
}

LM_TARGET_AVX2 static void vd_q8_0_q8_0_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q8_0 * x = vx; const block_q8_0 * y = vy;
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK8_0; i++) {
        // -128 would break the sign trick; weights come from quantizers that clamp to 127,
        // but foreign files may hold it, so clamp here too
        const __m256i xv = _mm256_max_epi8(_mm256_loadu_si256((const __m256i *) x[i].qs), _mm256_set1_epi8(-127));
        const __m256i yv = _mm256_loadu_si256((const __m256i *) y[i].qs);
        const __m256 d = _mm256_set1_ps(H2F(x[i].d) * H2F(y[i].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(dot_s8(xv, yv)), acc);
    }
    *s = hsum8q(acc);
}

LM_TARGET_AVX2 static void vd_q4_K_q8_K_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q4_K * x = vx; const block_q8_K * y = vy;
    const __m256i m4 = _mm256_set1_epi8(0xF);
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], mn[8];
        q4k_scales(x[i].scales, sc, mn);
        __m256i ai = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            const __m256i q  = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * j));
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * j));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * j + 32));
            const __m256i p0 = _mm256_maddubs_epi16(_mm256_and_si256(q, m4), y0);
            const __m256i p1 = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), y1);
            ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p0, _mm256_set1_epi16(sc[2 * j])));
            ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p1, _mm256_set1_epi16(sc[2 * j + 1])));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * H2F(x[i].d)), _mm256_cvtepi32_ps(ai), acc);
        mins += y[i].d * H2F(x[i].dmin) * (float) q4k_min_term(mn, y[i].bsums);
    }
    *s = hsum8q(acc) - mins;
}

LM_TARGET_AVX2 static void vd_q6_K_q8_K_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q6_K * x = vx; const block_q8_K * y = vy;
    const __m256i m4 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3);
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        __m256i ai = _mm256_setzero_si256();
        int corr = 0; // the -32 offset of every quant, applied once via the block sums
        for (int g = 0; g < QK_K / 16; g++) corr += x[i].scales[g] * y[i].bsums[g];
        for (int h = 0; h < 2; h++) {
            const uint8_t * ql = x[i].ql + 64 * h, * qh = x[i].qh + 32 * h;
            const int8_t * sc = x[i].scales + 8 * h, * a = y[i].qs + 128 * h;
            const __m256i l0 = _mm256_loadu_si256((const __m256i *) ql);
            const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
            const __m256i hb = _mm256_loadu_si256((const __m256i *) qh);
            __m256i v[4];
            v[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(hb, m3), 4));
            v[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), m3), 4));
            v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), m3), 4));
            v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), m3), 4));
            for (int k = 0; k < 4; k++) {
                const __m256i yv = _mm256_loadu_si256((const __m256i *)(a + 32 * k));
                const __m256i p = _mm256_maddubs_epi16(v[k], yv);
                const __m256i scv = _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]), _mm_set1_epi16(sc[2 * k]));
                ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p, scv));
            }
        }
        ai = _mm256_sub_epi32(ai, _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, 32 * corr));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(H2F(x[i].d) * y[i].d), _mm256_cvtepi32_ps(ai), acc);
    }
    *s = hsum8q(acc);
}

#endif // LM_X86

// ---------------------------------------------------------------- level dispatch

#if defined(LM_X86)
static bool use_avx2(void) {
    const enum lm_cpu_level lv = lm_cpu_level();
    return lv == LM_CPU_LEVEL_AVX2 || lv == LM_CPU_LEVEL_AVX512;
}
#define PICK(scalar, avx2) (use_avx2() ? (avx2) : (scalar))
#else
#define PICK(scalar, avx2) (scalar)
#endif

static lm_ggml_vec_dot_t quant_dot_kernel(enum lm_ggml_type type, enum lm_ggml_type * vdt) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0: *vdt = LM_GGML_TYPE_Q8_0; return PICK(vd_q4_0_q8_0, vd_q4_0_q8_0_avx2);
        case LM_GGML_TYPE_Q4_1: *vdt = LM_GGML_TYPE_Q8_1; return vd_q4_1_q8_1;
        case LM_GGML_TYPE_Q5_0: *vdt = LM_GGML_TYPE_Q8_0; return vd_q5_0_q8_0;
        case LM_GGML_TYPE_Q5_1: *vdt = LM_GGML_TYPE_Q8_1; return vd_q5_1_q8_1;
        case LM_GGML_TYPE_Q8_0: *vdt = LM_GGML_TYPE_Q8_0; return PICK(vd_q8_0_q8_0, vd_q8_0_q8_0_avx2);
        case LM_GGML_TYPE_Q4_K: *vdt = LM_GGML_TYPE_Q8_K; return PICK(vd_q4_K_q8_K, vd_q4_K_q8_K_avx2);
        case LM_GGML_TYPE_Q6_K: *vdt = LM_GGML_TYPE_Q8_K; return PICK(vd_q6_K_q8_K, vd_q6_K_q8_K_avx2);
        default: return NULL;
    }
}

#if defined(LM_ARM64)
// NEON is always there on arm64; tests lower the level to check the scalar code.
static lm_ggml_vec_dot_t neon_or(lm_ggml_vec_dot_t scalar, enum lm_ggml_type type) {
    if (scalar == NULL || lm_cpu_level() != LM_CPU_LEVEL_NEON) return scalar;
    const lm_ggml_vec_dot_t v = mm_quant_dot_neon(type);
    return v ? v : scalar;
}
#endif

lm_ggml_vec_dot_t mm_quant_dot(enum lm_ggml_type type, enum lm_ggml_type * vdt) {
    const lm_ggml_vec_dot_t k = quant_dot_kernel(type, vdt);
#if defined(LM_ARM64)
    return neon_or(k, type);
#else
    return k;
#endif
}

// ---------------------------------------------------------------- type-traits vec_dot
//
// The traits table is built once, so its entries re-check the level per call.
// Types without an integer kernel dequantize both sides block by block.

#define LEVEL_DISPATCH(name, scalar, avx2) \
static void name(VD_ARGS) { PICK(scalar, avx2)(n, s, bs, vx, bx, vy, by, nrc); }
LEVEL_DISPATCH(td_q4_0, vd_q4_0_q8_0, vd_q4_0_q8_0_avx2)
LEVEL_DISPATCH(td_q8_0, vd_q8_0_q8_0, vd_q8_0_q8_0_avx2)
LEVEL_DISPATCH(td_q4_K, vd_q4_K_q8_K, vd_q4_K_q8_K_avx2)
LEVEL_DISPATCH(td_q6_K, vd_q6_K_q8_K, vd_q6_K_q8_K_avx2)

static void deq_act_block(enum lm_ggml_type vdt, const void * y, int64_t ib, float * out) {
    if (vdt == LM_GGML_TYPE_Q8_K) {
        const block_q8_K * b = (const block_q8_K *) y + ib;
        for (int j = 0; j < QK_K; j++) out[j] = b->d * b->qs[j];
    } else {
        const block_q8_0 * b = (const block_q8_0 *) y + ib;
        const float d = H2F(b->d);
        for (int j = 0; j < QK8_0; j++) out[j] = d * b->qs[j];
    }
}

static void deq_dot(enum lm_ggml_type type, enum lm_ggml_type vdt, int n, float * s, const void * x, const void * y) {
    const lm_ggml_to_float_t to_f32 = lm_cpu_to_float(type);
    const int64_t bk = lm_ggml_blck_size(type);
    const size_t ts = lm_ggml_type_size(type);
    float xf[QK_K], yf[QK_K];
    double acc = 0.0;
    if (to_f32 == NULL) { *s = 0.0f; return; }
    for (int64_t ib = 0; ib < n / bk; ib++) {
        to_f32((const char *) x + ib * ts, xf, bk);
        deq_act_block(vdt, y, ib, yf);
        for (int64_t j = 0; j < bk; j++) acc += (double) xf[j] * yf[j];
    }
    *s = (float) acc;
}

#define DEQ_DOT(T, VDT) \
static void td_deq_##T(VD_ARGS) { VD_UNUSED; deq_dot(LM_GGML_TYPE_##T, LM_GGML_TYPE_##VDT, n, s, vx, vy); }
DEQ_DOT(Q2_K, Q8_K)
DEQ_DOT(Q3_K, Q8_K)
DEQ_DOT(Q5_K, Q8_K)
DEQ_DOT(IQ2_XXS, Q8_K)
DEQ_DOT(IQ2_XS, Q8_K)
DEQ_DOT(IQ3_XXS, Q8_K)
DEQ_DOT(IQ1_S, Q8_K)
DEQ_DOT(IQ1_M, Q8_K)
DEQ_DOT(IQ3_S, Q8_K)
DEQ_DOT(IQ2_S, Q8_K)
DEQ_DOT(IQ4_XS, Q8_K)
DEQ_DOT(TQ1_0, Q8_K)
DEQ_DOT(TQ2_0, Q8_K)
DEQ_DOT(IQ4_NL, Q8_0)

lm_ggml_vec_dot_t mm_traits_vec_dot(enum lm_ggml_type type, enum lm_ggml_type * vdt) {
#if defined(LM_ARM64)
    {
        // the traits table is built once: its NEON entries do not follow a forced level
        const lm_ggml_vec_dot_t v = lm_cpu_level() == LM_CPU_LEVEL_NEON ? mm_quant_dot_neon(type) : NULL;
        if (v && quant_dot_kernel(type, vdt)) return v;
    }
#endif
    switch (type) {
        case LM_GGML_TYPE_Q4_0:    *vdt = LM_GGML_TYPE_Q8_0; return td_q4_0;
        case LM_GGML_TYPE_Q4_1:    *vdt = LM_GGML_TYPE_Q8_1; return vd_q4_1_q8_1;
        case LM_GGML_TYPE_Q5_0:    *vdt = LM_GGML_TYPE_Q8_0; return vd_q5_0_q8_0;
        case LM_GGML_TYPE_Q5_1:    *vdt = LM_GGML_TYPE_Q8_1; return vd_q5_1_q8_1;
        case LM_GGML_TYPE_Q8_0:    *vdt = LM_GGML_TYPE_Q8_0; return td_q8_0;
        case LM_GGML_TYPE_Q4_K:    *vdt = LM_GGML_TYPE_Q8_K; return td_q4_K;
        case LM_GGML_TYPE_Q6_K:    *vdt = LM_GGML_TYPE_Q8_K; return td_q6_K;
        case LM_GGML_TYPE_Q2_K:    *vdt = LM_GGML_TYPE_Q8_K; return td_deq_Q2_K;
        case LM_GGML_TYPE_Q3_K:    *vdt = LM_GGML_TYPE_Q8_K; return td_deq_Q3_K;
        case LM_GGML_TYPE_Q5_K:    *vdt = LM_GGML_TYPE_Q8_K; return td_deq_Q5_K;
        case LM_GGML_TYPE_IQ2_XXS: *vdt = LM_GGML_TYPE_Q8_K; return td_deq_IQ2_XXS;
        case LM_GGML_TYPE_IQ2_XS:  *vdt = LM_GGML_TYPE_Q8_K; return td_deq_IQ2_XS;
        case LM_GGML_TYPE_IQ3_XXS: *vdt = LM_GGML_TYPE_Q8_K; return td_deq_IQ3_XXS;
        case LM_GGML_TYPE_IQ1_S:   *vdt = LM_GGML_TYPE_Q8_K; return td_deq_IQ1_S;
        case LM_GGML_TYPE_IQ1_M:   *vdt = LM_GGML_TYPE_Q8_K; return td_deq_IQ1_M;
        case LM_GGML_TYPE_IQ3_S:   *vdt = LM_GGML_TYPE_Q8_K; return td_deq_IQ3_S;
        case LM_GGML_TYPE_IQ2_S:   *vdt = LM_GGML_TYPE_Q8_K; return td_deq_IQ2_S;
        case LM_GGML_TYPE_IQ4_XS:  *vdt = LM_GGML_TYPE_Q8_K; return td_deq_IQ4_XS;
        case LM_GGML_TYPE_TQ1_0:   *vdt = LM_GGML_TYPE_Q8_K; return td_deq_TQ1_0;
        case LM_GGML_TYPE_TQ2_0:   *vdt = LM_GGML_TYPE_Q8_K; return td_deq_TQ2_0;
        case LM_GGML_TYPE_IQ4_NL:  *vdt = LM_GGML_TYPE_Q8_0; return td_deq_IQ4_NL;
        default: return NULL;
    }
}
