// ops-vec.h - row primitives shared by the elementwise, unary, reduce and norm
// kernels: scalar versions plus AVX2 versions picked at run time, and for
// the exponentials AVX-512 versions. Internal.
//
// Every SIMD routine here either gives bit-identical results to its scalar
// twin (add, mul, scale, max ...) or is an approximation whose error is a few
// ulp (exp, silu), far inside the parity tolerance. The AVX-512 versions
// give their AVX2 twins' bits, except lm_v_expf_avx512 below the normal
// range (flash attention's; the row kernels take lm_v_expf_avx512_as2).
#pragma once

#include "ggml-cpu-impl.h"
#include "../base/ggml-simd-x86.h"
#include "../graph/ggml-op-params.h" // lm_is_plain_float, lm_is_padded_1d

#if defined(LM_X86)
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

typedef double lm_float_acc; // long sums in double, as ggml does, so results match it within the parity tolerance

// True when the AVX2 paths may run: on x86 only, and only when the dispatcher
// says the CPU (or a forced level) has AVX2 or better.
static inline bool lm_vec_avx2(void) {
#if defined(LM_X86)
    const enum lm_cpu_level l = lm_cpu_level();
    return l == LM_CPU_LEVEL_AVX2 || l == LM_CPU_LEVEL_AVX512;
#else
    return false;
#endif
}

// True when the AVX-512 paths may run (the dispatcher's level is AVX-512).
// Those paths give their AVX2 twins' bits, so the level changes speed only.
static inline bool lm_vec_avx512(void) {
#if defined(LM_X86)
    return lm_cpu_level() == LM_CPU_LEVEL_AVX512;
#else
    return false;
#endif
}

// ---------------------------------------------------------------- scalar

static inline void lm_vec_add_s(int64_t n, float * z, const float * x, const float * y) { for (int64_t i = 0; i < n; i++) z[i] = x[i] + y[i]; }
static inline void lm_vec_sub_s(int64_t n, float * z, const float * x, const float * y) { for (int64_t i = 0; i < n; i++) z[i] = x[i] - y[i]; }
static inline void lm_vec_mul_s(int64_t n, float * z, const float * x, const float * y) { for (int64_t i = 0; i < n; i++) z[i] = x[i] * y[i]; }
static inline void lm_vec_div_s(int64_t n, float * z, const float * x, const float * y) { for (int64_t i = 0; i < n; i++) z[i] = x[i] / y[i]; }
static inline void lm_vec_scale_s(int64_t n, float * y, const float * x, float v) { for (int64_t i = 0; i < n; i++) y[i] = x[i] * v; }

static inline float lm_silu1(float x) { return x / (1.0f + expf(-x)); }

#if defined(LM_X86)
// ---------------------------------------------------------------- AVX2

#define LM_VEC_BIN_AVX2(name, intr, sop)                                                   \
    LM_TARGET_AVX2 static inline void name(int64_t n, float * z, const float * x, const float * y) { \
        int64_t i = 0;                                                                       \
        for (; i + 32 <= n; i += 32) {                                                       \
            __m256 a0 = intr(_mm256_loadu_ps(x + i +  0), _mm256_loadu_ps(y + i +  0));      \
            __m256 a1 = intr(_mm256_loadu_ps(x + i +  8), _mm256_loadu_ps(y + i +  8));      \
            __m256 a2 = intr(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16));      \
            __m256 a3 = intr(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24));      \
            _mm256_storeu_ps(z + i +  0, a0); _mm256_storeu_ps(z + i +  8, a1);              \
            _mm256_storeu_ps(z + i + 16, a2); _mm256_storeu_ps(z + i + 24, a3);              \
        }                                                                                    \
        for (; i + 8 <= n; i += 8) {                                                         \
            _mm256_storeu_ps(z + i, intr(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));   \
        }                                                                                    \
        for (; i < n; i++) z[i] = x[i] sop y[i];                                             \
    }

LM_VEC_BIN_AVX2(lm_vec_add_avx2, _mm256_add_ps, +)
LM_VEC_BIN_AVX2(lm_vec_sub_avx2, _mm256_sub_ps, -)
LM_VEC_BIN_AVX2(lm_vec_mul_avx2, _mm256_mul_ps, *)
LM_VEC_BIN_AVX2(lm_vec_div_avx2, _mm256_div_ps, /)

LM_TARGET_AVX2 static inline void lm_vec_scale_avx2(int64_t n, float * y, const float * x, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 a0 = _mm256_mul_ps(_mm256_loadu_ps(x + i +  0), vv);
        __m256 a1 = _mm256_mul_ps(_mm256_loadu_ps(x + i +  8), vv);
        __m256 a2 = _mm256_mul_ps(_mm256_loadu_ps(x + i + 16), vv);
        __m256 a3 = _mm256_mul_ps(_mm256_loadu_ps(x + i + 24), vv);
        _mm256_storeu_ps(y + i +  0, a0); _mm256_storeu_ps(y + i +  8, a1);
        _mm256_storeu_ps(y + i + 16, a2); _mm256_storeu_ps(y + i + 24, a3);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vv));
    for (; i < n; i++) y[i] = x[i] * v;
}

// lm_v_expf_avx2's range: +inf above LM_EXPF_HI, 0 below LM_EXPF_LO
#define LM_EXPF_HI 88.7228390f
#define LM_EXPF_LO -87.3365448f

// exp(x) for 8 lanes: x = k*ln2 + r with |r| <= ln2/2, exp(r) by a degree-7
// Taylor polynomial (relative error < 1e-8 on that interval), times 2^k built
// in the exponent bits. Overflow gives +inf, underflow below the normal range
// gives 0, NaN stays NaN.
LM_TARGET_AVX2 static inline __m256 lm_v_expf_avx2(__m256 x) {
    const __m256 hi = _mm256_set1_ps(LM_EXPF_HI);
    const __m256 lo = _mm256_set1_ps(LM_EXPF_LO);
    const __m256 xc = _mm256_max_ps(_mm256_min_ps(x, hi), lo);
    const __m256 k  = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), xc);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    // k in [-126, 128]: 2^k as float; k = 128 (only reachable at x = hi) is split
    const __m256i ki = _mm256_cvtps_epi32(k);
    const __m256i k1 = _mm256_srai_epi32(ki, 1);
    const __m256i k2 = _mm256_sub_epi32(ki, k1);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, _mm256_set1_epi32(127)), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, _mm256_set1_epi32(127)), 23));
    __m256 res = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
    res = _mm256_blendv_ps(res, _mm256_set1_ps(INFINITY), _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
    res = _mm256_blendv_ps(res, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
    res = _mm256_blendv_ps(res, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return res;
}

// exp(x) for 16 lanes by lm_v_expf_avx2's steps (x = n ln2 + r, e^r by its
// Taylor series to degree 7), with 2^n applied by scalef, which also rounds
// overflow to +inf and results below the normal range to subnormals (where
// lm_v_expf_avx2 gives 0): the same bits as lm_v_expf_avx2 wherever that
// one's result is normal. exp(0) is exactly 1, below -104 (and -inf) it is
// 0, NaN stays NaN (maxps and minps return their second operand on NaN).
LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m512 lm_v_expf_avx512(__m512 x) {
    static const float taylor[8] = { 1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f };
    // past 100 (and at +inf) the result is +inf anyway; the clamp keeps n finite
    x = _mm512_min_ps(_mm512_set1_ps(100.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x));
    __m512 p = _mm512_set1_ps(taylor[0]);
    for (int i = 1; i < 8; i++) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(taylor[i]));
    return _mm512_scalef_ps(p, n);
}

// lm_v_expf_avx512 with lm_v_expf_avx2's edges: 0 below LM_EXPF_LO (where
// lm_v_expf_avx512 gives subnormals), NaN returned as it came (signalling
// ones too). Elsewhere both take the same steps and round once, and above
// LM_EXPF_HI both overflow to +inf, so this gives lm_v_expf_avx2's bits for
// every input (test-vec-exp checks): row kernels that use it match their
// AVX2 twins bit for bit.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m512 lm_v_expf_avx512_as2(__m512 x) {
    const __m512 res = lm_v_expf_avx512(x);
    const __m512 r0 = _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(x, _mm512_set1_ps(LM_EXPF_LO), _CMP_LT_OQ), _mm512_setzero_ps());
    return _mm512_mask_mov_ps(r0, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

LM_TARGET_AVX512 static inline __m512 lm_v_silu_avx512(__m512 x) {
    const __m512 e = lm_v_expf_avx512_as2(_mm512_sub_ps(_mm512_setzero_ps(), x));
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// The maximum of the soft_max and cross-entropy rows (8 lanes, then the
// rest one by one).
LM_TARGET_AVX2 static inline float lm_row_max_avx2(int64_t n, const float * x) {
    int64_t i = 0;
    float m = -INFINITY;
    if (n >= 8) {
        __m256 vm = _mm256_set1_ps(-INFINITY);
        for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + i));
        m = lm_hmax_avx2(vm);
    }
    for (; i < n; i++) m = LM_GGML_MAX(m, x[i]);
    return m;
}

// The exp sums of the soft_max and cross-entropy rows: y[i] = exp(x[i] - m)
// (y may be x, or NULL: not stored) over the row's whole steps of 8,
// summed in double: lane j of s[0] takes elements 8t + j, lane j of s[1]
// elements 8t + 4 + j, in order of t. Returns how many elements it took;
// the caller adds the lanes and the rest of the row.
LM_TARGET_AVX2 static inline int64_t lm_exp_sum_steps_avx2(int64_t n, const float * x, float * y, float m, __m256d s[2]) {
    const __m256 vm = _mm256_set1_ps(m);
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = lm_v_expf_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        if (y) _mm256_storeu_ps(y + i, v);
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    s[0] = a0;
    s[1] = a1;
    return i;
}

// lm_exp_sum_steps_avx2's bits, 16 lanes a step: one accumulator of 8
// doubles holds s[0] and s[1] and takes a step's two halves in the order
// that kernel takes two of its steps; a last half step is masked.
LM_TARGET_AVX512 static inline int64_t lm_exp_sum_steps_avx512(int64_t n, const float * x, float * y, float m, __m256d s[2]) {
    const __m512 vm = _mm512_set1_ps(m);
    __m512d a = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 16) {
        const __mmask16 k = i + 16 <= n ? (__mmask16) 0xFFFF : (__mmask16) 0x00FF;
        const __m512 v = lm_v_expf_avx512_as2(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm));
        if (y) _mm512_mask_storeu_ps(y + i, k, v);
        a = _mm512_add_pd(a, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        if (k == 0xFFFF) a = _mm512_add_pd(a, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
    }
    s[0] = _mm512_castpd512_pd256(a);
    s[1] = _mm512_extractf64x4_pd(a, 1);
    return n & ~(int64_t) 7;
}

// the two above, the AVX-512 one where wide (lm_vec_avx512(), which the
// caller asks once per op): the same bits either way
LM_TARGET_AVX2 static inline int64_t lm_exp_sum_steps(bool wide, int64_t n, const float * x, float * y, float m, __m256d s[2]) {
    return wide ? lm_exp_sum_steps_avx512(n, x, y, m, s) : lm_exp_sum_steps_avx2(n, x, y, m, s);
}

LM_TARGET_AVX2 static inline __m256 lm_v_silu_avx2(__m256 x) {
    const __m256 e = lm_v_expf_avx2(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

LM_TARGET_AVX2 static inline float lm_hsum_avx2(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#endif

// ---------------------------------------------------------------- dispatching wrappers

static inline void lm_vec_add(bool simd, int64_t n, float * z, const float * x, const float * y) {
#if defined(LM_X86)
    if (simd) { lm_vec_add_avx2(n, z, x, y); return; }
#endif
    (void) simd; lm_vec_add_s(n, z, x, y);
}
static inline void lm_vec_mul(bool simd, int64_t n, float * z, const float * x, const float * y) {
#if defined(LM_X86)
    if (simd) { lm_vec_mul_avx2(n, z, x, y); return; }
#endif
    (void) simd; lm_vec_mul_s(n, z, x, y);
}
static inline void lm_vec_scale(bool simd, int64_t n, float * y, const float * x, float v) {
#if defined(LM_X86)
    if (simd) { lm_vec_scale_avx2(n, y, x, v); return; }
#endif
    (void) simd; lm_vec_scale_s(n, y, x, v);
}

// ---------------------------------------------------------------- element access for any plain type

// Reads element i of a row of a plain (non-quantized float) type at byte stride nb0.
static inline float lm_load_f(enum lm_ggml_type t, const char * p) {
    switch (t) {
        case LM_GGML_TYPE_F32:  return *(const float *) p;
        case LM_GGML_TYPE_F16:  return LM_GGML_FP16_TO_FP32(*(const lm_ggml_fp16_t *) p);
        case LM_GGML_TYPE_BF16: return LM_GGML_BF16_TO_FP32(*(const lm_ggml_bf16_t *) p);
        default: return 0.0f;
    }
}
static inline void lm_store_f(enum lm_ggml_type t, char * p, float v) {
    switch (t) {
        case LM_GGML_TYPE_F32:  *(float *) p = v; break;
        case LM_GGML_TYPE_F16:  *(lm_ggml_fp16_t *) p = LM_GGML_FP32_TO_FP16(v); break;
        case LM_GGML_TYPE_BF16: *(lm_ggml_bf16_t *) p = LM_GGML_FP32_TO_BF16(v); break;
        default: break;
    }
}

// Loads n elements starting at element i0 of a row into out. Plain types may
// have any element stride; block types must be contiguous and i0, n
// multiples of the block size (rows always are).
static inline void lm_load_row_f32(const struct lm_ggml_tensor * t, const char * row, int64_t i0, int64_t n, float * out) {
    const size_t nb0 = t->nb[0];
    switch (t->type) {
        case LM_GGML_TYPE_F32:
            if (nb0 == sizeof(float)) { memcpy(out, row + i0*sizeof(float), n*sizeof(float)); return; }
            for (int64_t i = 0; i < n; i++) out[i] = *(const float *)(row + (i0 + i)*nb0);
            return;
        case LM_GGML_TYPE_F16:
            if (nb0 == sizeof(lm_ggml_fp16_t)) { lm_ggml_fp16_to_fp32_row((const lm_ggml_fp16_t *) row + i0, out, n); return; }
            for (int64_t i = 0; i < n; i++) out[i] = LM_GGML_FP16_TO_FP32(*(const lm_ggml_fp16_t *)(row + (i0 + i)*nb0));
            return;
        case LM_GGML_TYPE_BF16:
            if (nb0 == sizeof(lm_ggml_bf16_t)) { lm_ggml_bf16_to_fp32_row((const lm_ggml_bf16_t *) row + i0, out, n); return; }
            for (int64_t i = 0; i < n; i++) out[i] = LM_GGML_BF16_TO_FP32(*(const lm_ggml_bf16_t *)(row + (i0 + i)*nb0));
            return;
        default: {
            const int64_t bs = lm_ggml_blck_size(t->type);
            lm_type_to_f32_row(t->type)(row + (i0/bs)*lm_ggml_type_size(t->type), out, n);
            return;
        }
    }
}

// Stores n floats at element i0 of a row (same rules as lm_load_row_f32).
static inline void lm_store_row_f32(const struct lm_ggml_tensor * t, char * row, int64_t i0, int64_t n, const float * in) {
    const size_t nb0 = t->nb[0];
    switch (t->type) {
        case LM_GGML_TYPE_F32:
            if (nb0 == sizeof(float)) { memmove(row + i0*sizeof(float), in, n*sizeof(float)); return; }
            for (int64_t i = 0; i < n; i++) *(float *)(row + (i0 + i)*nb0) = in[i];
            return;
        case LM_GGML_TYPE_F16:
            if (nb0 == sizeof(lm_ggml_fp16_t)) { lm_ggml_fp32_to_fp16_row(in, (lm_ggml_fp16_t *) row + i0, n); return; }
            for (int64_t i = 0; i < n; i++) *(lm_ggml_fp16_t *)(row + (i0 + i)*nb0) = LM_GGML_FP32_TO_FP16(in[i]);
            return;
        case LM_GGML_TYPE_BF16:
            for (int64_t i = 0; i < n; i++) *(lm_ggml_bf16_t *)(row + (i0 + i)*nb0) = LM_GGML_FP32_TO_BF16(in[i]);
            return;
        default: {
            const int64_t bs = lm_ggml_blck_size(t->type);
            lm_type_from_f32_row(t->type)(in, row + (i0/bs)*lm_ggml_type_size(t->type), n);
            return;
        }
    }
}

// i % n for broadcasting, without a division when i < n (the usual case).
static inline int64_t lm_bcast(int64_t i, int64_t n) {
    return i < n ? i : i % n;
}

// Elements per chunk when a row goes through f32 scratch on the stack; a
// multiple of every block size (32 and 256).
#define LM_ROW_CHUNK 512

// Row-major decomposition of a flat row index of t.
static inline void lm_row_index(const struct lm_ggml_tensor * t, int64_t ir, int64_t * i1, int64_t * i2, int64_t * i3) {
    if (ir < t->ne[1]) { // the first matrix: no divisions
        *i1 = ir;
        *i2 = *i3 = 0;
        return;
    }
    *i3 = ir / (t->ne[2]*t->ne[1]);
    *i2 = (ir - *i3*t->ne[2]*t->ne[1]) / t->ne[1];
    *i1 = ir - *i3*t->ne[2]*t->ne[1] - *i2*t->ne[1];
}
