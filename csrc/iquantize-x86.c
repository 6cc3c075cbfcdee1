// iquantize-x86.c - AVX2 kernels of the i-quant quantizers (ggml-iquants.c),
// with the bits of the scalar code: per candidate (one per lane) the same
// float operations in the same order, no fused multiply-add.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "quantize-simd.h"
#include "ggml-cpu-impl.h"

#if defined(LM_X86)
#include <float.h>
#include <immintrin.h>
#include <limits.h>

// Eight candidates per vector: the error table of each coordinate is one
// vector of 8 levels, looked up with a lane permute; the sum over coordinates
// runs in coordinate order within each lane. Each lane keeps its first least
// error (strict <); across lanes the least error wins, ties going to the
// earliest position, which is the scalar loop's choice.
LM_TARGET_AVX2 int lm_lat_best_avx2(const float * x, const float * w, float scale, const float * q, int dim,
                                    const uint8_t * tlev, int count) {
    __m256 t[8];
    const __m256 qv = _mm256_loadu_ps(q), sv = _mm256_set1_ps(scale);
    const __m256 sq = _mm256_mul_ps(sv, qv);
    for (int i = 0; i < dim; ++i) {
        const __m256 diff = _mm256_sub_ps(sq, _mm256_set1_ps(x[i]));
        t[i] = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(w[i]), diff), diff);
    }
    __m256  best = _mm256_set1_ps(FLT_MAX);
    __m256i bpos = _mm256_setzero_si256();
    __m256i pos  = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i step = _mm256_set1_epi32(8);
    for (int c = 0; c < count; c += 8, tlev += 8 * dim, pos = _mm256_add_epi32(pos, step)) {
        __m256 e = _mm256_setzero_ps();
        for (int i = 0; i < dim; ++i) {
            const __m256i lv = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (tlev + 8 * i)));
            e = _mm256_add_ps(e, _mm256_permutevar8x32_ps(t[i], lv));
        }
        const __m256 lt = _mm256_cmp_ps(e, best, _CMP_LT_OQ);
        best = _mm256_blendv_ps(best, e, lt);
        bpos = _mm256_blendv_epi8(bpos, pos, _mm256_castps_si256(lt));
    }
    // least error over the lanes, then the earliest position holding it
    __m128 m4 = _mm_min_ps(_mm256_castps256_ps128(best), _mm256_extractf128_ps(best, 1));
    m4 = _mm_min_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_min_ss(m4, _mm_movehdup_ps(m4));
    const __m256 eq = _mm256_cmp_ps(best, _mm256_broadcastss_ps(m4), _CMP_EQ_OQ);
    const __m256i cand = _mm256_blendv_epi8(_mm256_set1_epi32(INT_MAX), bpos, _mm256_castps_si256(eq));
    __m128i p4 = _mm_min_epi32(_mm256_castsi256_si128(cand), _mm256_extracti128_si256(cand, 1));
    p4 = _mm_min_epi32(p4, _mm_shuffle_epi32(p4, _MM_SHUFFLE(1, 0, 3, 2)));
    p4 = _mm_min_epi32(p4, _mm_shuffle_epi32(p4, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(p4);
}

#else
typedef int lm_iquantize_x86_unused; // ISO C forbids an empty translation unit
#endif
