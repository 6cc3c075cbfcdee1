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
#include "../base/ggml-impl.h"
#include "../base/ggml-simd-x86.h"

#include <string.h>
#include "../base/ggml-simd.h"

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

// The q4_K row, one body for both levels: scale_sub stores 32 outputs.
#define DEQ_Q4_K(name, TARGET, scale_sub)                                                                      \
TARGET void name(const block_q4_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb) {              \
    const __m256i mask = _mm256_set1_epi8(0x0F);                                                               \
    for (int64_t i = 0; i < nb; ++i) {                                                                         \
        const float d = _cvtsh_ss(x[i].d), min = _cvtsh_ss(x[i].dmin);                                         \
        const uint8_t * q = x[i].qs;                                                                           \
        for (int is = 0; is < 8; is += 2, q += 32, y += 64) {                                                  \
            int sc, m;                                                                                         \
            const __m256i qv = _mm256_loadu_si256((const __m256i *) q);                                        \
            scale_min_k4(is, x[i].scales, &sc, &m);                                                            \
            scale_sub(_mm256_and_si256(qv, mask), d * sc, min * m, y);                                         \
            scale_min_k4(is + 1, x[i].scales, &sc, &m);                                                        \
            scale_sub(_mm256_and_si256(_mm256_srli_epi16(qv, 4), mask), d * sc, min * m, y + 32);              \
        }                                                                                                      \
    }                                                                                                          \
}
DEQ_Q4_K(lm_dequantize_row_q4_K_avx2, LM_TARGET_AVX2, scale_sub_32)

// The AVX-512 level: the same per-element operations 16 floats at a time
// (half the instructions per output line). The rows are bound by their
// stores; fewer instructions keep more of them in flight.
LM_TARGET_AVX512 void lm_dequantize_row_q8_0_avx512(const block_q8_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += LM_QK8_0) {
        const __m512 d = _mm512_set1_ps(_cvtsh_ss(x[i].d));
        const __m128i a = _mm_loadu_si128((const __m128i *) x[i].qs);
        const __m128i b = _mm_loadu_si128((const __m128i *) (x[i].qs + 16));
        _mm512_storeu_ps(y +  0, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(a)), d));
        _mm512_storeu_ps(y + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b)), d));
    }
}

// scale_sub_32 with 16 floats a vector
LM_TARGET_AVX512 static inline void scale_sub_32_avx512(__m256i q, float d, float m, float * y) {
    const __m512 dv = _mm512_set1_ps(d), mv = _mm512_set1_ps(m);
    _mm512_storeu_ps(y +  0, _mm512_sub_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(q))), dv), mv));
    _mm512_storeu_ps(y + 16, _mm512_sub_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(q, 1))), dv), mv));
}
DEQ_Q4_K(lm_dequantize_row_q4_K_avx512, LM_TARGET_AVX512, scale_sub_32_avx512)
#undef DEQ_Q4_K

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

// ---------------------------------------------------------------- activation quantizers (q8_0, q8_1, q8_K)
// These run on every mul_mat with quantized weights, so they get AVX2 too,
// giving the bits of the _ref functions. NaN inputs are skipped by the
// block maximum here (the scalar loop's result depends on where a NaN sits).

// roundf (halves away from zero) of each lane, as int32: truncate, then step
// one away from zero where the dropped fraction is at least a half. The
// fraction v - trunc(v) is exact, so this matches roundf bit for bit.
LM_TARGET_AVX2 static inline __m256i round_away_epi32(__m256 v) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 t    = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = _mm256_andnot_ps(sign, _mm256_sub_ps(v, t));
    const __m256 step = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(sign, v));
    const __m256 up   = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    return _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, step)));
}

// 32 int32 lanes (4 vectors, in order) -> 32 int8 in order, saturating.
LM_TARGET_AVX2 static inline __m256i pack_32_i8(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
    // the packs interleave 128-bit lanes: dwords come out as a0 b0 c0 d0 a1 b1 c1 d1
    return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

LM_TARGET_AVX2 static inline int hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// One 32-element block scaled to [-127, 127]: stores the quants, returns d
// and (in *sum) the sum of the quants.
LM_TARGET_AVX2 static inline float q8_block32(const float * x, int8_t * qs, int * sum) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 v[4], m = _mm256_setzero_ps();
    for (int j = 0; j < 4; ++j) {
        v[j] = _mm256_loadu_ps(x + 8 * j);
        m = _mm256_max_ps(_mm256_andnot_ps(sign, v[j]), m);
    }
    const float d  = lm_hmax_avx2(m) / 127;
    const float id = d ? 1.0f / d : 0.0f;
    const __m256 idv = _mm256_set1_ps(id);
    __m256i q[4];
    for (int j = 0; j < 4; ++j) q[j] = round_away_epi32(_mm256_mul_ps(v[j], idv));
    _mm256_storeu_si256((__m256i *) qs, pack_32_i8(q[0], q[1], q[2], q[3]));
    if (sum) *sum = hsum_epi32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    return d;
}

LM_TARGET_AVX2 void lm_quantize_row_q8_0_avx2(const float * LM_GGML_RESTRICT x, block_q8_0 * LM_GGML_RESTRICT y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += LM_QK8_0) {
        y[i].d = LM_GGML_FP32_TO_FP16(q8_block32(x, y[i].qs, NULL));
    }
}

LM_TARGET_AVX2 void lm_quantize_row_q8_1_avx2(const float * LM_GGML_RESTRICT x, block_q8_1 * LM_GGML_RESTRICT y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += LM_QK8_1) {
        int sum;
        const float d = q8_block32(x, y[i].qs, &sum);
        y[i].d = LM_GGML_FP32_TO_FP16(d);
        y[i].s = LM_GGML_FP32_TO_FP16(sum * d);
    }
}

LM_TARGET_AVX2 void lm_quantize_row_q8_K_avx2(const float * LM_GGML_RESTRICT x, block_q8_K * LM_GGML_RESTRICT y, int64_t nb) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        __m256 m = _mm256_setzero_ps();
        for (int j = 0; j < LM_QK_K; j += 8) m = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), m);
        const float amax = lm_hmax_avx2(m);
        if (!amax) {
            memset(&y[i], 0, sizeof(y[i]));
            continue;
        }
        // the sign of the first element of largest magnitude, as ggml keeps it
        int first = 0;
        for (int j = 0; j < LM_QK_K; j += 8) {
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (hit) {
                first = j + __builtin_ctz((unsigned) hit);
                break;
            }
        }
        const float iscale = -127.f / x[first];
        const __m256  is  = _mm256_set1_ps(iscale);
        const __m256i top = _mm256_set1_epi32(127);
        for (int j = 0; j < LM_QK_K; j += 32) {
            __m256i q[4];
            for (int g = 0; g < 4; ++g) {
                // the default rounding mode (nearest, ties to even) is ggml's nearest_int
                q[g] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(is, _mm256_loadu_ps(x + j + 8 * g))), top);
            }
            _mm256_storeu_si256((__m256i *) (y[i].qs + j), pack_32_i8(q[0], q[1], q[2], q[3]));
            // two bsums of 16 each: lanes of q0+q1 and of q2+q3
            y[i].bsums[j / 16]     = (int16_t) hsum_epi32(_mm256_add_epi32(q[0], q[1]));
            y[i].bsums[j / 16 + 1] = (int16_t) hsum_epi32(_mm256_add_epi32(q[2], q[3]));
        }
        y[i].d = 1 / iscale;
    }
}

#else
typedef int lm_quants_x86_unused; // ISO C forbids an empty translation unit
#endif
