// mm-iquant-x86.h - the per-type vec_dot and 8-row mat-vec of the x86
// i-quant kernels (mm-iquant-x86.c: AVX2; mm-iquant-avx512.c: AVX-512),
// written once: TARGET is the level's target attribute, HSUM its horizontal
// sum of 8 int32 lanes, and the including file gives each type T its
// T##_ix (what a block's chunks look up, grid indices or sign bytes, into
// a buffer of QK_K / 4 uint16, or nothing), T##_isum_ix (the block's 8 int32 partial sums of sumi, given
// that buffer) and T##_h (the block's fp16 scale). The float steps are
// mm-iquant.h's. Include after <immintrin.h>, mm-quant-x86.h (reduce8) and
// a definition of H2F.
#pragma once

// The dot of mm-iquant.h over n / QK_K blocks. The ix of block i + 1 is
// written while block i is summed, so that reading it back never
// waits on the stores that just wrote it.
#define IQ_VD_TMPL(TARGET, HSUM, T, TT)                                                                                      \
TARGET static void vd_##T(int n, float * restrict s, size_t bs, const void * restrict vx, size_t bx, \
                                  const void * restrict vy, size_t by, int nrc) {                         \
    (void) bs; (void) bx; (void) by; (void) nrc;                                                          \
    const block_##T * x = vx;                                                                            \
    const block_q8_K * y = vy;                                                                           \
    const int nb = n / QK_K;                                                                             \
    _Alignas(32) uint16_t ix[2][QK_K / 4];                                                               \
    if (nb > 0) T##_ix(x, ix[0]);                                                                        \
    float sumf = 0.0f;                                                                                   \
    for (int i = 0; i < nb; i++) {                                                                       \
        if (i + 1 < nb) T##_ix(x + i + 1, ix[(i + 1) & 1]);                                              \
        const int sumi = HSUM(T##_isum_ix(x + i, y + i, ix[i & 1]));                                     \
        sumf += (H2F(T##_h(x + i)) * y[i].d) * (float) sumi;                                                  \
    }                                                                                                    \
    *s = mm_iq_traits(LM_GGML_TYPE_##TT)->factor * sumf;                                                 \
}

#define IQ_PRAGMA(x) _Pragma(#x)
#define IQ_ROWS_AUTO
#define IQ_ROWS_ALL IQ_PRAGMA(GCC unroll 8)

// 8 rows x 1 column, the rows in the lanes: per row the dot's float steps
// (the factor too), one horizontal reduction for the 8 rows' blocks. Rows
// past nr repeat the last one. The indices as in the dot, one block ahead.
// ROWS: AUTO leaves the loop over the rows' block sums to the compiler,
// ALL unrolls it, for a block sum that leaves registers for other rows'.
#define IQ_MV8_TMPL(TARGET, T, TT, ROWS)                                                                             \
TARGET static void mv8_##T(int64_t nb, const char * x, size_t xrs, int nr, const block_q8_K * y, float * out) { \
    const char * rows[8];                                                                                \
    for (int r = 0; r < 8; r++) rows[r] = x + (size_t) LM_GGML_MIN(r, nr - 1) * xrs;                    \
    _Alignas(32) uint16_t ix[2][8][QK_K / 4];                                                            \
    for (int r = 0; r < 8 && nb > 0; r++) T##_ix(rows[r], ix[0][r]);                                    \
    __m256 sf = _mm256_setzero_ps();                                                                     \
    for (int64_t i = 0; i < nb; i++) {                                                                   \
        const size_t o = (size_t) i * sizeof(block_##T);                                                 \
        if (i + 1 < nb) {                                                                                \
            for (int r = 0; r < 8; r++) T##_ix(rows[r] + o + sizeof(block_##T), ix[(i + 1) & 1][r]);     \
        }                                                                                                \
        __m256i a[8];                                                                                    \
        IQ_ROWS_##ROWS for (int r = 0; r < 8; r++) a[r] = T##_isum_ix(rows[r] + o, y + i, ix[i & 1][r]); \
        __m128i h = _mm_cvtsi32_si128(T##_h(rows[0] + o));                                               \
        h = _mm_insert_epi16(h, T##_h(rows[1] + o), 1); h = _mm_insert_epi16(h, T##_h(rows[2] + o), 2);   \
        h = _mm_insert_epi16(h, T##_h(rows[3] + o), 3); h = _mm_insert_epi16(h, T##_h(rows[4] + o), 4);   \
        h = _mm_insert_epi16(h, T##_h(rows[5] + o), 5); h = _mm_insert_epi16(h, T##_h(rows[6] + o), 6);   \
        h = _mm_insert_epi16(h, T##_h(rows[7] + o), 7);                                                  \
        const __m256 dd = _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(y[i].d));                      \
        const __m256i si = reduce8(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);                      \
        sf = _mm256_add_ps(sf, _mm256_mul_ps(dd, _mm256_cvtepi32_ps(si)));                               \
    }                                                                                                    \
    _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_set1_ps(mm_iq_traits(LM_GGML_TYPE_##TT)->factor), sf));   \
}
