// ggml-fp16.c - fp16 and bf16 row converters, with SIMD paths chosen at run
// time. Every path gives the same bits as the scalar definitions in
// ggml-impl.h (round to nearest even) for every value but a signalling NaN:
// NaNs stay NaNs of the same sign, but the hardware converters (F16C on x86,
// FCVT on arm64) quiet a signalling one (fp16 0x7c01 gives 0x7fc02000 where
// the scalar path keeps 0x7f802000), as ggml's do.
#include "ggml-simd.h"

#include <pthread.h>

#if defined(LM_X86)
#include <immintrin.h>
#endif
#if defined(LM_ARM64)
#include <arm_neon.h>
#endif

// ---------------------------------------------------------------- scalars

float lm_ggml_table_f32_f16[1 << 16];

static void fp16_table_fill(void) {
    for (uint32_t i = 0; i < (1u << 16); i++) {
        lm_ggml_table_f32_f16[i] = lm_ggml_compute_fp16_to_fp32((lm_ggml_fp16_t) i);
    }
}

void lm_ggml_fp16_table_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fp16_table_fill);
}

float          lm_ggml_fp16_to_fp32(lm_ggml_fp16_t x) { return lm_ggml_compute_fp16_to_fp32(x); }
lm_ggml_fp16_t lm_ggml_fp32_to_fp16(float x)          { return lm_ggml_compute_fp32_to_fp16(x); }
float          lm_ggml_bf16_to_fp32(lm_ggml_bf16_t x) { return lm_ggml_compute_bf16_to_fp32(x); }
lm_ggml_bf16_t lm_ggml_fp32_to_bf16(float x)          { return lm_ggml_compute_fp32_to_bf16(x); }

// ---------------------------------------------------------------- scalar rows

static void fp16_to_fp32_scalar(const lm_ggml_fp16_t * x, float * y, int64_t i, int64_t n) {
    for (; i < n; i++) y[i] = lm_ggml_compute_fp16_to_fp32(x[i]);
}
static void fp32_to_fp16_scalar(const float * x, lm_ggml_fp16_t * y, int64_t i, int64_t n) {
    for (; i < n; i++) y[i] = lm_ggml_compute_fp32_to_fp16(x[i]);
}
static void bf16_to_fp32_scalar(const lm_ggml_bf16_t * x, float * y, int64_t i, int64_t n) {
    for (; i < n; i++) y[i] = lm_ggml_compute_bf16_to_fp32(x[i]);
}
static void fp32_to_bf16_scalar(const float * x, lm_ggml_bf16_t * y, int64_t i, int64_t n) {
    for (; i < n; i++) y[i] = lm_ggml_compute_fp32_to_bf16(x[i]);
}

// ---------------------------------------------------------------- x86-64

#if defined(LM_X86)
LM_TARGET_AVX2 static int64_t fp16_to_fp32_avx2(const lm_ggml_fp16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
    }
    return i;
}
// Rows whose fp16 output is at least lm_stream_min_bytes() are written with
// non-temporal stores (see ggml-simd.h).
// 32 floats per step: two 32-byte stores instead of four 16-byte ones, and few
// enough loop instructions that the loop runs at the same speed wherever the
// linker places it.
LM_TARGET_AVX2 static inline __m256i fp32x16_to_fp16_avx2(const float * x) {
    const __m128i lo = _mm256_cvtps_ph(_mm256_loadu_ps(x),     _MM_FROUND_TO_NEAREST_INT);
    const __m128i hi = _mm256_cvtps_ph(_mm256_loadu_ps(x + 8), _MM_FROUND_TO_NEAREST_INT);
    return _mm256_set_m128i(hi, lo);
}
LM_TARGET_AVX2 static int64_t fp32_to_fp16_avx2(const float * x, lm_ggml_fp16_t * y, int64_t n) {
    int64_t i = 0;
    if (n * (int64_t) sizeof(lm_ggml_fp16_t) >= lm_stream_min_bytes() && ((uintptr_t) y & 1) == 0) {
        // scalar head up to the first 32-byte boundary of y (streaming stores need it)
        for (; ((uintptr_t)(y + i) & 31) != 0; i++) y[i] = lm_ggml_compute_fp32_to_fp16(x[i]);
        for (; i + 32 <= n; i += 32) {
            _mm256_stream_si256((__m256i *)(y + i),      fp32x16_to_fp16_avx2(x + i));
            _mm256_stream_si256((__m256i *)(y + i + 16), fp32x16_to_fp16_avx2(x + i + 16));
        }
        _mm_sfence(); // order the streamed lines before anything the caller publishes
    }
    for (; i + 32 <= n; i += 32) {
        _mm256_storeu_si256((__m256i *)(y + i),      fp32x16_to_fp16_avx2(x + i));
        _mm256_storeu_si256((__m256i *)(y + i + 16), fp32x16_to_fp16_avx2(x + i + 16));
    }
    for (; i + 8 <= n; i += 8) {
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}
LM_TARGET_AVX2 static int64_t bf16_to_fp32_avx2(const lm_ggml_bf16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(x + i)));
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_slli_epi32(v, 16));
    }
    return i;
}
// Round to nearest even on the integer bits; NaNs become quiet NaNs.
LM_TARGET_AVX2 static inline __m256i bf16_round_avx2(__m256i u) {
    __asm__("" : "+x"(u)); // one load (see bf16_round_avx512)
    const __m256i abs  = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    const __m256i nan  = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
    const __m256i lsb  = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rnd  = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    const __m256i qnan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(64));
    return _mm256_blendv_epi8(rnd, qnan, nan);
}
LM_TARGET_AVX2 static int64_t fp32_to_bf16_avx2(const float * x, lm_ggml_bf16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = bf16_round_avx2(_mm256_loadu_si256((const __m256i *)(x + i)));
        __m256i b = bf16_round_avx2(_mm256_loadu_si256((const __m256i *)(x + i + 8)));
        // packus works per 128-bit lane: fix the order afterwards
        __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
        _mm256_storeu_si256((__m256i *)(y + i), p);
    }
    return i;
}

LM_TARGET_AVX512 static int64_t fp16_to_fp32_avx512(const lm_ggml_fp16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
    }
    return i;
}
// 32 floats to 32 halves, one 64-byte store.
LM_TARGET_AVX512 static inline __m512i fp32x32_to_fp16_avx512(const float * x) {
    const __m256i lo = _mm512_cvtps_ph(_mm512_loadu_ps(x),      _MM_FROUND_TO_NEAREST_INT);
    const __m256i hi = _mm512_cvtps_ph(_mm512_loadu_ps(x + 16), _MM_FROUND_TO_NEAREST_INT);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
LM_TARGET_AVX512 static int64_t bf16_to_fp32_avx512(const lm_ggml_bf16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + i)));
        _mm512_storeu_si512((void *)(y + i), _mm512_slli_epi32(v, 16));
    }
    return i;
}
// Round to nearest even on the bits (NaN: quieted), 32 at a time: the high
// halves of two vectors picked by one vpermt2w. Each vector is loaded once
// and pinned in a register: gcc otherwise folds the load into each of the
// four instructions that read it, and four loads of every 64 bytes slow
// rows from memory badly. The
// AVX512_BF16 instruction is not used: it reads and writes subnormals as
// zero, which are other bits.
LM_TARGET_AVX512 static inline __m512i bf16_round_avx512(__m512i u) {
    __asm__("" : "+v"(u));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
}
LM_TARGET_AVX512 static inline __m512i fp32x32_to_bf16_avx512(const float * x) {
    const __m512i odd = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33,
                                         31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i a = bf16_round_avx512(_mm512_loadu_si512((const void *)x));
    const __m512i b = bf16_round_avx512(_mm512_loadu_si512((const void *)(x + 16)));
    return _mm512_permutex2var_epi16(a, odd, b);
}

// f32 rows to 16-bit ones, 32 at a time; conv is one of the two above,
// inlined. Ordinary stores: non-temporal ones, which help the AVX2 fp16
// path, are slower at this level.
#define NARROW_AVX512(name, T, conv)                                                     \
    LM_TARGET_AVX512 static int64_t name(const float * x, T * y, int64_t n) {            \
        int64_t i = 0;                                                                   \
        for (; i + 32 <= n; i += 32) _mm512_storeu_si512((void *) (y + i), conv(x + i)); \
        return i;                                                                        \
    }
NARROW_AVX512(fp32_to_fp16_avx512, lm_ggml_fp16_t, fp32x32_to_fp16_avx512)
NARROW_AVX512(fp32_to_bf16_avx512, lm_ggml_bf16_t, fp32x32_to_bf16_avx512)

// Where the CPU has AVX512_BF16: vcvtne2ps2bf16 rounds to nearest even and
// quiets NaNs as bf16_round_avx512 does, in one instruction for 32 elements
// instead of about fifteen, but reads subnormal inputs as zero; 32 elements
// with a subnormal among them (vfpclassps: one instruction per 16) take the
// exact path. The row is memory-bound all the same; the fewer instructions
// let more of it be in flight.
LM_TARGET_AVX512BF16 static int64_t fp32_to_bf16_avx512bf16(const float * x, lm_ggml_bf16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 lo = _mm512_loadu_ps(x + i), hi = _mm512_loadu_ps(x + i + 16);
        const __mmask16 sub = _mm512_fpclass_ps_mask(lo, 0x20) | _mm512_fpclass_ps_mask(hi, 0x20); // denormal
        const __m512i v = sub ? fp32x32_to_bf16_avx512(x + i) : (__m512i) _mm512_cvtne2ps_pbh(hi, lo);
        _mm512_storeu_si512((void *) (y + i), v);
    }
    return i;
}
#endif

// ---------------------------------------------------------------- arm64

#if defined(LM_ARM64)
static int64_t fp16_to_fp32_neon(const lm_ggml_fp16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vst1q_f32(y + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(x + i))));
    }
    return i;
}
static int64_t fp32_to_fp16_neon(const float * x, lm_ggml_fp16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vst1_u16(y + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    }
    return i;
}
static int64_t bf16_to_fp32_neon(const lm_ggml_bf16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32x4_t v = vshll_n_u16(vld1_u16((const uint16_t *)(x + i)), 16);
        vst1q_u32((uint32_t *)(y + i), v);
    }
    return i;
}
static int64_t fp32_to_bf16_neon(const float * x, lm_ggml_bf16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const uint32x4_t u = vld1q_u32((const uint32_t *)(x + i));
        const uint32x4_t nan = vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
        const uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
        const uint32x4_t rnd = vshrq_n_u32(vaddq_u32(u, vaddq_u32(lsb, vdupq_n_u32(0x7fff))), 16);
        const uint32x4_t qnan = vorrq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(64));
        vst1_u16((uint16_t *)(y + i), vmovn_u32(vbslq_u32(nan, qnan, rnd)));
    }
    return i;
}
#endif

// ---------------------------------------------------------------- dispatch

static void fp16_to_fp32_cached(const void * vx, float * y, int64_t n) {
    const lm_ggml_fp16_t * x = vx;
    int64_t i = 0;
    switch (lm_cpu_level()) {
#if defined(LM_X86)
        case LM_CPU_LEVEL_AVX512: i = fp16_to_fp32_avx512(x, y, n); break;
        case LM_CPU_LEVEL_AVX2:   i = fp16_to_fp32_avx2(x, y, n); break;
#endif
#if defined(LM_ARM64)
        case LM_CPU_LEVEL_NEON:
        case LM_CPU_LEVEL_NEON_DOTPROD: i = fp16_to_fp32_neon(x, y, n); break;
#endif
        default: break;
    }
    fp16_to_fp32_scalar(x, y, i, n);
}

// Large rows go to memory through streaming stores where the level streams
// (lm_stream_min_bytes), the rest as they are.
void lm_ggml_fp16_to_fp32_row(const lm_ggml_fp16_t * x, float * y, int64_t n) {
    if (!lm_to_float_stream(fp16_to_fp32_cached, 1, sizeof(*x), x, y, n)) fp16_to_fp32_cached(x, y, n);
}

void lm_ggml_fp32_to_fp16_row(const float * x, lm_ggml_fp16_t * y, int64_t n) {
    int64_t i = 0;
    switch (lm_cpu_level()) {
#if defined(LM_X86)
        case LM_CPU_LEVEL_AVX512: i = fp32_to_fp16_avx512(x, y, n); break;
        case LM_CPU_LEVEL_AVX2:   i = fp32_to_fp16_avx2(x, y, n); break;
#endif
#if defined(LM_ARM64)
        case LM_CPU_LEVEL_NEON:
        case LM_CPU_LEVEL_NEON_DOTPROD: i = fp32_to_fp16_neon(x, y, n); break;
#endif
        default: break;
    }
    fp32_to_fp16_scalar(x, y, i, n);
}

static void bf16_to_fp32_cached(const void * vx, float * y, int64_t n) {
    const lm_ggml_bf16_t * x = vx;
    int64_t i = 0;
    switch (lm_cpu_level()) {
#if defined(LM_X86)
        case LM_CPU_LEVEL_AVX512: i = bf16_to_fp32_avx512(x, y, n); break;
        case LM_CPU_LEVEL_AVX2:   i = bf16_to_fp32_avx2(x, y, n); break;
#endif
#if defined(LM_ARM64)
        case LM_CPU_LEVEL_NEON:
        case LM_CPU_LEVEL_NEON_DOTPROD: i = bf16_to_fp32_neon(x, y, n); break;
#endif
        default: break;
    }
    bf16_to_fp32_scalar(x, y, i, n);
}

// Large rows go to memory through streaming stores where the level streams
// (lm_stream_min_bytes), the rest as they are.
void lm_ggml_bf16_to_fp32_row(const lm_ggml_bf16_t * x, float * y, int64_t n) {
    if (!lm_to_float_stream(bf16_to_fp32_cached, 1, sizeof(*x), x, y, n)) bf16_to_fp32_cached(x, y, n);
}

void lm_ggml_fp32_to_bf16_row_ref(const float * x, lm_ggml_bf16_t * y, int64_t n) {
    fp32_to_bf16_scalar(x, y, 0, n);
}

void lm_ggml_fp32_to_bf16_row(const float * x, lm_ggml_bf16_t * y, int64_t n) {
    int64_t i = 0;
    switch (lm_cpu_level()) {
#if defined(LM_X86)
        case LM_CPU_LEVEL_AVX512: i = lm_cpu_avx512bf16() ? fp32_to_bf16_avx512bf16(x, y, n) : fp32_to_bf16_avx512(x, y, n); break;
        case LM_CPU_LEVEL_AVX2:   i = fp32_to_bf16_avx2(x, y, n); break;
#endif
#if defined(LM_ARM64)
        case LM_CPU_LEVEL_NEON:
        case LM_CPU_LEVEL_NEON_DOTPROD: i = fp32_to_bf16_neon(x, y, n); break;
#endif
        default: break;
    }
    fp32_to_bf16_scalar(x, y, i, n);
}
