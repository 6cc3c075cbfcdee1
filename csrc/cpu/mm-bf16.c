// mm-bf16.c - mul_mat's dot kernels for bf16 rows at the AVX-512 level where
// the CPU has AVX512_BF16 (lm_cpu_avx512bf16; x86-64 only). The columns are
// rounded to bf16 first (once per call, into the work buffer: see
// mm_bf16_col_len), as ggml does for bf16 weights, and vdpbf16ps
// multiplies pairs of bf16 and adds them to f32 lanes.
//
// Every (row, column) pair, in the tile and in the mat-vec kernel alike, is
// the same sequence of operations, so its bits cannot depend on the kernel,
// the tile position, the number of columns of the call or the thread:
//   - one accumulator of 16 f32 lanes, from +0;
//   - steps over k0 = 0, 32, 64, ...: lane i takes the pair (k0+2i, k0+2i+1)
//     of the row and of the column (vdpbf16ps: lane += x[k0+2i+1]*y[k0+2i+1],
//     then lane += x[k0+2i]*y[k0+2i], each rounded to nearest even, with
//     bf16 and f32 subnormals read as zero and subnormal results flushed);
//   - where K % 32 != 0 the last step loads the row masked (its elements from
//     K on read as zero; the column is zero there by construction), so the
//     lanes past K add +0 * +0;
//   - hsum16: the 16 lanes summed in one fixed order (written once below).
#include "mm-kernels.h"

#if defined(LM_X86)
#include <immintrin.h>

#define LM_INLINE inline __attribute__((always_inline))
#define BH(v) ((__m512bh)(v))

// Lanes 0-7 + lanes 8-15, then the two halves of that, then lanes 0,1 +
// lanes 2,3, then lane 0 + lane 1.
LM_TARGET_AVX512BF16 static LM_INLINE float hsum16(__m512 v) {
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// The elements [k0, K) of the last step's 32 (K - k0 in 1..31).
static inline __mmask32 tail_mask(int64_t K, int64_t k0) {
    return (__mmask32)((1u << (unsigned)(K - k0)) - 1u);
}

LM_TARGET_AVX512BF16 static LM_INLINE __m512bh ld32(const uint16_t * p) {
    return BH(_mm512_loadu_si512((const void *) p));
}
LM_TARGET_AVX512BF16 static LM_INLINE __m512bh ld32_tail(const uint16_t * p, __mmask32 m) {
    return BH(_mm512_maskz_loadu_epi16(m, (const void *) p));
}

// 4 rows x 4 columns: 16 accumulators and 4 column vectors of the 32
// registers. y[c]: a column of mm_bf16_col_len(K) bf16 (given as float *).
#define TILE_ROW(r, LD) { const __m512bh a = LD; \
    c##r##0 = _mm512_dpbf16_ps(c##r##0, a, b0); c##r##1 = _mm512_dpbf16_ps(c##r##1, a, b1); \
    c##r##2 = _mm512_dpbf16_ps(c##r##2, a, b2); c##r##3 = _mm512_dpbf16_ps(c##r##3, a, b3); }

LM_TARGET_AVX512BF16 void mm_tile_bf16dot(int64_t K, const void * const * x, const float * const * y, float * out) {
    const int64_t K32 = K & ~(int64_t) 31;
    const uint16_t * x0 = x[0], * x1 = x[1], * x2 = x[2], * x3 = x[3];
    const uint16_t * y0 = (const uint16_t *) y[0], * y1 = (const uint16_t *) y[1];
    const uint16_t * y2 = (const uint16_t *) y[2], * y3 = (const uint16_t *) y[3];
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    __m512 c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    for (int64_t k = 0; k < K32; k += 32) {
        const __m512bh b0 = ld32(y0 + k), b1 = ld32(y1 + k), b2 = ld32(y2 + k), b3 = ld32(y3 + k);
        TILE_ROW(0, ld32(x0 + k)) TILE_ROW(1, ld32(x1 + k)) TILE_ROW(2, ld32(x2 + k)) TILE_ROW(3, ld32(x3 + k))
    }
    if (K32 < K) {
        const int64_t k = K32;
        const __mmask32 m = tail_mask(K, k);
        const __m512bh b0 = ld32(y0 + k), b1 = ld32(y1 + k), b2 = ld32(y2 + k), b3 = ld32(y3 + k);
        TILE_ROW(0, ld32_tail(x0 + k, m)) TILE_ROW(1, ld32_tail(x1 + k, m))
        TILE_ROW(2, ld32_tail(x2 + k, m)) TILE_ROW(3, ld32_tail(x3 + k, m))
    }
    out[0]  = hsum16(c00); out[1]  = hsum16(c01); out[2]  = hsum16(c02); out[3]  = hsum16(c03);
    out[4]  = hsum16(c10); out[5]  = hsum16(c11); out[6]  = hsum16(c12); out[7]  = hsum16(c13);
    out[8]  = hsum16(c20); out[9]  = hsum16(c21); out[10] = hsum16(c22); out[11] = hsum16(c23);
    out[12] = hsum16(c30); out[13] = hsum16(c31); out[14] = hsum16(c32); out[15] = hsum16(c33);
}

// 8 rows x 1 column, prefetching as mm-float.c's mat-vec kernels do: the
// next group of 8 contiguous rows (pf, when not NULL) in step with the loads
// (MV_PF) for short rows, each row MV_AHEAD bytes ahead for long ones
// (MV_PF_AHEAD).
#define MV_ROW(r, LD) c##r = _mm512_dpbf16_ps(c##r, LD, b);

LM_TARGET_AVX512BF16 void mm_mv_bf16dot(int64_t K, const void * const * x, const float * yf, float * out, const char * pf) {
    const int64_t K32 = K & ~(int64_t) 31;
    const uint16_t * y = (const uint16_t *) yf;
    const uint16_t * x0 = x[0], * x1 = x[1], * x2 = x[2], * x3 = x[3], * x4 = x[4], * x5 = x[5], * x6 = x[6], * x7 = x[7];
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    const int64_t rowb = K * 2;
    const bool ahead = rowb > MM_PF_ROW;
    const char * const gpf = ahead ? NULL : pf; // short rows: the next group in pace with the loads
    for (int64_t k = 0; k < K32; k += 32) {
        MV_PF(gpf, k, 32, MM_X_BF16)
        if (ahead) MV_PF_AHEAD(k * 2, rowb, pf) // a step is 64 bytes of each row
        const __m512bh b = ld32(y + k);
        MV_ROW(0, ld32(x0 + k)) MV_ROW(1, ld32(x1 + k)) MV_ROW(2, ld32(x2 + k)) MV_ROW(3, ld32(x3 + k))
        MV_ROW(4, ld32(x4 + k)) MV_ROW(5, ld32(x5 + k)) MV_ROW(6, ld32(x6 + k)) MV_ROW(7, ld32(x7 + k))
    }
    if (K32 < K) {
        MV_PF_TAIL(gpf, K32, K, MM_X_BF16)
        const int64_t k = K32;
        const __mmask32 m = tail_mask(K, k);
        const __m512bh b = ld32(y + k);
        MV_ROW(0, ld32_tail(x0 + k, m)) MV_ROW(1, ld32_tail(x1 + k, m)) MV_ROW(2, ld32_tail(x2 + k, m))
        MV_ROW(3, ld32_tail(x3 + k, m)) MV_ROW(4, ld32_tail(x4 + k, m)) MV_ROW(5, ld32_tail(x5 + k, m))
        MV_ROW(6, ld32_tail(x6 + k, m)) MV_ROW(7, ld32_tail(x7 + k, m))
    }
    out[0] = hsum16(c0); out[1] = hsum16(c1); out[2] = hsum16(c2); out[3] = hsum16(c3);
    out[4] = hsum16(c4); out[5] = hsum16(c5); out[6] = hsum16(c6); out[7] = hsum16(c7);
}

#endif // LM_X86

bool mm_bf16_dot(enum mm_xtype xt) {
    return xt == MM_X_BF16 && lm_cpu_avx512bf16();
}
