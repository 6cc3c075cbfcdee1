// ggml-quants-x86.c - AVX2 versions of the hot block conversions, selected at
// run time by ggml-quants.c. Each gives the same bits as its scalar
// counterpart: the same float operations per element, no fused multiply-add
// (the pragma below keeps the compiler from fusing the mul/sub intrinsics,
// which GCC lowers to plain vector arithmetic).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "ggml-quants.h"
#include "ggml-cpu-impl.h"

#if defined(LM_X86)
#include <immintrin.h>

// 8 bytes (unsigned) -> 8 floats
LM_TARGET_AVX2 static inline __m256 u8x8_to_ps(__m128i v) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
}

// 8 bytes (signed) -> 8 floats
LM_TARGET_AVX2 static inline __m256 i8x8_to_ps(__m128i v) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
}

LM_TARGET_AVX2 void lm_dequantize_row_q4_0_avx2(const block_q4_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb) {
    const __m128i mask = _mm_set1_epi8(0x0F);
    const __m128i off  = _mm_set1_epi8(8);
    for (int64_t i = 0; i < nb; ++i, y += LM_QK4_0) {
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(x[i].d));
        const __m128i q  = _mm_loadu_si128((const __m128i *) x[i].qs);
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(q, mask), off);                     // elements 0..15
        const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), mask), off);  // elements 16..31
        _mm256_storeu_ps(y +  0, _mm256_mul_ps(i8x8_to_ps(lo), d));
        _mm256_storeu_ps(y +  8, _mm256_mul_ps(i8x8_to_ps(_mm_srli_si128(lo, 8)), d));
        _mm256_storeu_ps(y + 16, _mm256_mul_ps(i8x8_to_ps(hi), d));
        _mm256_storeu_ps(y + 24, _mm256_mul_ps(i8x8_to_ps(_mm_srli_si128(hi, 8)), d));
    }
}

LM_TARGET_AVX2 void lm_dequantize_row_q8_0_avx2(const block_q8_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += LM_QK8_0) {
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(x[i].d));
        const __m128i a = _mm_loadu_si128((const __m128i *) x[i].qs);
        const __m128i b = _mm_loadu_si128((const __m128i *) (x[i].qs + 16));
        _mm256_storeu_ps(y +  0, _mm256_mul_ps(i8x8_to_ps(a), d));
        _mm256_storeu_ps(y +  8, _mm256_mul_ps(i8x8_to_ps(_mm_srli_si128(a, 8)), d));
        _mm256_storeu_ps(y + 16, _mm256_mul_ps(i8x8_to_ps(b), d));
        _mm256_storeu_ps(y + 24, _mm256_mul_ps(i8x8_to_ps(_mm_srli_si128(b, 8)), d));
    }
}

// y[0..32) = d * q - m for 32 unsigned levels held in the bytes of q.
LM_TARGET_AVX2 static inline void scale_sub_32(__m256i q, float d, float m, float * y) {
    const __m256 dv = _mm256_set1_ps(d), mv = _mm256_set1_ps(m);
    const __m128i a = _mm256_castsi256_si128(q), b = _mm256_extracti128_si256(q, 1);
    _mm256_storeu_ps(y +  0, _mm256_sub_ps(_mm256_mul_ps(u8x8_to_ps(a), dv), mv));
    _mm256_storeu_ps(y +  8, _mm256_sub_ps(_mm256_mul_ps(u8x8_to_ps(_mm_srli_si128(a, 8)), dv), mv));
    _mm256_storeu_ps(y + 16, _mm256_sub_ps(_mm256_mul_ps(u8x8_to_ps(b), dv), mv));
    _mm256_storeu_ps(y + 24, _mm256_sub_ps(_mm256_mul_ps(u8x8_to_ps(_mm_srli_si128(b, 8)), dv), mv));
}

static inline void scale_min_k4(int j, const uint8_t * q, int * d, int * m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

LM_TARGET_AVX2 void lm_dequantize_row_q4_K_avx2(const block_q4_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb) {
    const __m256i mask = _mm256_set1_epi8(0x0F);
    for (int64_t i = 0; i < nb; ++i) {
        const float d = _cvtsh_ss(x[i].d), min = _cvtsh_ss(x[i].dmin);
        const uint8_t * q = x[i].qs;
        for (int is = 0; is < 8; is += 2, q += 32, y += 64) {
            int sc, m;
            const __m256i qv = _mm256_loadu_si256((const __m256i *) q);
            scale_min_k4(is, x[i].scales, &sc, &m);
            scale_sub_32(_mm256_and_si256(qv, mask), d * sc, min * m, y);
            scale_min_k4(is + 1, x[i].scales, &sc, &m);
            scale_sub_32(_mm256_and_si256(_mm256_srli_epi16(qv, 4), mask), d * sc, min * m, y + 32);
        }
    }
}

LM_TARGET_AVX2 void lm_dequantize_row_q6_K_avx2(const block_q6_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(3), off = _mm256_set1_epi8(32);
    for (int64_t i = 0; i < nb; ++i) {
        const float d = _cvtsh_ss(x[i].d);
        const uint8_t * ql = x[i].ql;
        const uint8_t * qh = x[i].qh;
        const int8_t  * sc = x[i].scales;
        for (int n = 0; n < LM_QK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            const __m256i l0 = _mm256_loadu_si256((const __m256i *) ql);
            const __m256i l1 = _mm256_loadu_si256((const __m256i *) (ql + 32));
            const __m256i h  = _mm256_loadu_si256((const __m256i *) qh);
            // the four 32-element groups of this half, as signed bytes in [-32, 31]
            __m256i q[4];
            q[0] = _mm256_and_si256(l0, m4);
            q[1] = _mm256_and_si256(l1, m4);
            q[2] = _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4);
            q[3] = _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4);
            for (int g = 0; g < 4; ++g) {
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(h, 2 * g), m2);
                q[g] = _mm256_sub_epi8(_mm256_or_si256(q[g], _mm256_slli_epi16(hb, 4)), off);
                const __m128i a = _mm256_castsi256_si128(q[g]), b = _mm256_extracti128_si256(q[g], 1);
                const __m256 s0 = _mm256_set1_ps(d * sc[2 * g]);     // elements 0..15 of the group
                const __m256 s1 = _mm256_set1_ps(d * sc[2 * g + 1]); // elements 16..31
                float * yg = y + 32 * g;
                _mm256_storeu_ps(yg +  0, _mm256_mul_ps(s0, i8x8_to_ps(a)));
                _mm256_storeu_ps(yg +  8, _mm256_mul_ps(s0, i8x8_to_ps(_mm_srli_si128(a, 8))));
                _mm256_storeu_ps(yg + 16, _mm256_mul_ps(s1, i8x8_to_ps(b)));
                _mm256_storeu_ps(yg + 24, _mm256_mul_ps(s1, i8x8_to_ps(_mm_srli_si128(b, 8))));
            }
        }
    }
}

#else
typedef int lm_quants_x86_unused; // ISO C forbids an empty translation unit
#endif
