// mm-float.c - dot-product tiles for mul_mat with f32/f16/bf16 rows of src0
// against f32 columns of src1, for each SIMD level (scalar, AVX2, AVX-512,
// NEON). Both operands are contiguous along K, so a tile keeps one
// accumulator per (row, column) pair and loads each vector once per step.
#include "mm-kernels.h"

#if defined(LM_X86)
#include <immintrin.h>
#endif
#if defined(LM_ARM64)
#include <arm_neon.h>
#endif

// ---------------------------------------------------------------- scalar

static inline float ld1(const void * p, int64_t k, enum mm_xtype xt) {
    switch (xt) {
        case MM_X_F16:  return lm_ggml_table_f32_f16[((const lm_ggml_fp16_t *) p)[k]]; // filled by lm_ggml_init
        case MM_X_BF16: return LM_GGML_BF16_TO_FP32(((const lm_ggml_bf16_t *) p)[k]);
        default:        return ((const float *) p)[k];
    }
}

// One function computes every (row, column) pair of the scalar level, so a
// pair's bits cannot depend on the kernel (tile or mat-vec) that asked.
__attribute__((noinline)) static float dot_scalar(int64_t K, const void * x, enum mm_xtype xt, const float * y) {
    float s[4] = { 0, 0, 0, 0 };
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        for (int j = 0; j < 4; j++) s[j] += ld1(x, k + j, xt) * y[k + j];
    }
    for (; k < K; k++) s[0] += ld1(x, k, xt) * y[k];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

#define SCALAR_KERNELS(SUF, XT) \
static void tile_scalar_##SUF(int64_t K, const void * const * x, const float * const * y, float * out) { \
    for (int r = 0; r < MM_TILE_R; r++) \
        for (int c = 0; c < MM_TILE_C; c++) out[r * MM_TILE_C + c] = dot_scalar(K, x[r], XT, y[c]); \
} \
static void mv_scalar_##SUF(int64_t K, const void * const * x, const float * y, float * out, const char * pf) { \
    (void) pf; \
    for (int r = 0; r < MM_MV_R; r++) out[r] = dot_scalar(K, x[r], XT, y); \
}
SCALAR_KERNELS(f32, MM_X_F32)
SCALAR_KERNELS(f16, MM_X_F16)
SCALAR_KERNELS(bf16, MM_X_BF16)

// ---------------------------------------------------------------- AVX2 / AVX-512

#if defined(LM_X86)

LM_TARGET_AVX2 static inline __attribute__((always_inline)) __m256 ld8(const void * p, int64_t k, enum mm_xtype xt) {
    switch (xt) {
        case MM_X_F16:  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *) p + k)));
        case MM_X_BF16: return _mm256_castsi256_ps(_mm256_slli_epi32(
                               _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *) p + k))), 16));
        default:        return _mm256_loadu_ps((const float *) p + k);
    }
}

LM_TARGET_AVX2 static inline __attribute__((always_inline)) float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// The tile is 4x4 but AVX2 has 16 registers: it runs as two 4x2 halves so
// the 8 accumulators plus operands stay in registers. Accumulators are named
// variables (not arrays) so that they live in registers at -O2.
#define LM_INLINE inline __attribute__((always_inline))

// hsum8 of eight vectors at once: lane r of the result is hsum8(c[r]), bit
// for bit (the same additions, operands in the same order: low half + high
// half, then lanes 0,1 + lanes 2,3, then lane 0 + lane 1), in 21 operations
// instead of 8 * 6 and one store instead of 8.
LM_TARGET_AVX2 static inline __attribute__((always_inline)) __m256 hsum8x8(__m256 c0, __m256 c1, __m256 c2, __m256 c3,
                                                                           __m256 c4, __m256 c5, __m256 c6, __m256 c7) {
    // [c0 | c4] halves summed: lanes 0-3 low+high of c0, lanes 4-7 of c4
#define HALVES(a, b) _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31))
    const __m256 t04 = HALVES(c0, c4), t15 = HALVES(c1, c5), t26 = HALVES(c2, c6), t37 = HALVES(c3, c7);
#undef HALVES
    // per 128-bit lane: [a0+a2, a1+a3, b0+b2, b1+b3]
    const __m256 u0145 = _mm256_add_ps(_mm256_shuffle_ps(t04, t15, 0x44), _mm256_shuffle_ps(t04, t15, 0xEE));
    const __m256 u2367 = _mm256_add_ps(_mm256_shuffle_ps(t26, t37, 0x44), _mm256_shuffle_ps(t26, t37, 0xEE));
    // per 128-bit lane: the first pair sum of each row + its second
    return _mm256_add_ps(_mm256_shuffle_ps(u0145, u2367, 0x88), _mm256_shuffle_ps(u0145, u2367, 0xDD));
}

// The K % 8 tail of 8 rows (K >= 8): lane r goes on with row r's sum s as
// the scalar tail would (one fmaf per element, in order; a vector FMA rounds
// each lane as fmaf does). The rows' last 8 elements are transposed so that
// vector j holds element K-8+j of every row; the tail takes the last K % 8.
LM_TARGET_AVX2 static LM_INLINE __m256 mv_tail8(int64_t K, const void * const * x, const float * y, __m256 s,
                                                enum mm_xtype xt) {
    const int64_t k0 = K - 8;
    const __m256 r0 = ld8(x[0], k0, xt), r1 = ld8(x[1], k0, xt), r2 = ld8(x[2], k0, xt), r3 = ld8(x[3], k0, xt);
    const __m256 r4 = ld8(x[4], k0, xt), r5 = ld8(x[5], k0, xt), r6 = ld8(x[6], k0, xt), r7 = ld8(x[7], k0, xt);
    // pairs of rows interleaved, then quads, then the 128-bit halves
    const __m256 a0 = _mm256_unpacklo_ps(r0, r1), a1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 a2 = _mm256_unpacklo_ps(r2, r3), a3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 a4 = _mm256_unpacklo_ps(r4, r5), a5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 a6 = _mm256_unpacklo_ps(r6, r7), a7 = _mm256_unpackhi_ps(r6, r7);
    const __m256 b0 = _mm256_shuffle_ps(a0, a2, 0x44), b1 = _mm256_shuffle_ps(a0, a2, 0xEE);
    const __m256 b2 = _mm256_shuffle_ps(a1, a3, 0x44), b3 = _mm256_shuffle_ps(a1, a3, 0xEE);
    const __m256 b4 = _mm256_shuffle_ps(a4, a6, 0x44), b5 = _mm256_shuffle_ps(a4, a6, 0xEE);
    const __m256 b6 = _mm256_shuffle_ps(a5, a7, 0x44), b7 = _mm256_shuffle_ps(a5, a7, 0xEE);
    const __m256 t[8] = {
        _mm256_permute2f128_ps(b0, b4, 0x20), _mm256_permute2f128_ps(b1, b5, 0x20),
        _mm256_permute2f128_ps(b2, b6, 0x20), _mm256_permute2f128_ps(b3, b7, 0x20),
        _mm256_permute2f128_ps(b0, b4, 0x31), _mm256_permute2f128_ps(b1, b5, 0x31),
        _mm256_permute2f128_ps(b2, b6, 0x31), _mm256_permute2f128_ps(b3, b7, 0x31),
    };
    for (int j = 8 - (int)(K & 7); j < 8; j++) s = _mm256_fmadd_ps(t[j], _mm256_broadcast_ss(y + k0 + j), s);
    return s;
}

#define AVX2_MV(r) c##r = _mm256_fmadd_ps(ld8(x##r, k, xt), b, c##r);
LM_TARGET_AVX2 static LM_INLINE void mv_avx2(int64_t K, const void * const * x, const float * y, float * out, const char * pf,
                                             enum mm_xtype xt) {
    const int64_t K8 = K & ~(int64_t) 7;
    const void * x0 = x[0], * x1 = x[1], * x2 = x[2], * x3 = x[3], * x4 = x[4], * x5 = x[5], * x6 = x[6], * x7 = x[7];
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    for (int64_t k = 0; k < K8; k += 8) {
        MV_PF(pf, k, 8, xt)
        const __m256 b = _mm256_loadu_ps(y + k);
        AVX2_MV(0) AVX2_MV(1) AVX2_MV(2) AVX2_MV(3) AVX2_MV(4) AVX2_MV(5) AVX2_MV(6) AVX2_MV(7)
    }
    MV_PF_TAIL(pf, K8, K, xt)
    const __m256 s = hsum8x8(c0, c1, c2, c3, c4, c5, c6, c7);
    _mm256_storeu_ps(out, K8 < K && K >= 8 ? mv_tail8(K, x, y, s, xt) : s);
    if (K < 8) { // rows shorter than one vector: the scalar tail
        for (int r = 0; r < MM_MV_R; r++) {
            for (int64_t k = 0; k < K; k++) out[r] = __builtin_fmaf(ld1(x[r], k, xt), y[k], out[r]);
        }
    }
}

// The same dots as mv_avx2, one row after the other: one accumulator per row,
// summed over K in the same order, so the same bits. For contiguous short rows
// read from memory (the caller decides; see mm_float_block) the loads then
// form one sequential stream, which the hardware prefetchers follow across
// rows and matrices; eight interleaved streams 1 KB apart run slower there.
// In cache the single FMA chain per row costs about half of mv_avx2's speed,
// which is why it is not the only kernel. pf: the next group, as for mv_avx2;
// each row prefetches its successor one group ahead.
LM_TARGET_AVX2 static LM_INLINE void mv_seq_avx2(int64_t K, const void * const * x, const float * y, float * out, const char * pf,
                                                 enum mm_xtype xt) {
    const int64_t K8 = K & ~(int64_t) 7;
    const size_t rowb = (size_t) K * xt_size(xt);
    for (int r = 0; r < MM_MV_R; r++) {
        if (pf) {
            for (size_t o = 0; o < rowb; o += 64) __builtin_prefetch(pf + r * rowb + o);
        }
        const void * xr = x[r];
        __m256 c = _mm256_setzero_ps();
        for (int64_t k = 0; k < K8; k += 8) c = _mm256_fmadd_ps(ld8(xr, k, xt), _mm256_loadu_ps(y + k), c);
        float s = hsum8(c);
        for (int64_t k = K8; k < K; k++) s = __builtin_fmaf(ld1(xr, k, xt), y[k], s);
        out[r] = s;
    }
}

// Blocked GEMM: 4x3 tiles (12 accumulators, as many as AVX2's registers
// allow next to the operands) run over K in blocks of MM_FB_KB so that a
// tile's rows and columns stay in L1 while the row tile meets every column
// tile. The 8-lane accumulators are kept in acc between K blocks (stores
// are exact), and each pair ends as the mat-vec kernel ends: hsum8, then
// the tail with FMAs, so a pair's bits are the mat-vec kernel's.
#define MM_FB_KB 256
#define FB_R 4
#define FB_C 3

#define FB_ROW(r) { const __m256 a = ld8(x##r, k, xt); \
    c##r##0 = _mm256_fmadd_ps(a, b0, c##r##0); c##r##1 = _mm256_fmadd_ps(a, b1, c##r##1); c##r##2 = _mm256_fmadd_ps(a, b2, c##r##2); }

LM_TARGET_AVX2 static LM_INLINE void fb_tile(int64_t k0, int64_t k1, const void * const * x, const float * const * y,
                                             __m256 * acc, bool first, enum mm_xtype xt) {
    const void * x0 = x[0], * x1 = x[1], * x2 = x[2], * x3 = x[3];
    const float * y0 = y[0], * y1 = y[1], * y2 = y[2];
    __m256 c00, c01, c02, c10, c11, c12, c20, c21, c22, c30, c31, c32;
    if (first) {
        c00 = c01 = c02 = c10 = c11 = c12 = c20 = c21 = c22 = c30 = c31 = c32 = _mm256_setzero_ps();
    } else {
        c00 = acc[0]; c01 = acc[1]; c02 = acc[2]; c10 = acc[3]; c11 = acc[4]; c12 = acc[5];
        c20 = acc[6]; c21 = acc[7]; c22 = acc[8]; c30 = acc[9]; c31 = acc[10]; c32 = acc[11];
    }
    for (int64_t k = k0; k < k1; k += 8) {
        const __m256 b0 = _mm256_loadu_ps(y0 + k), b1 = _mm256_loadu_ps(y1 + k), b2 = _mm256_loadu_ps(y2 + k);
        FB_ROW(0) FB_ROW(1) FB_ROW(2) FB_ROW(3)
    }
    acc[0] = c00; acc[1] = c01; acc[2] = c02; acc[3] = c10; acc[4] = c11; acc[5] = c12;
    acc[6] = c20; acc[7] = c21; acc[8] = c22; acc[9] = c30; acc[10] = c31; acc[11] = c32;
}

LM_TARGET_AVX2 static LM_INLINE void fb_gemm(int64_t K, const char * x, size_t xrs, int64_t nrows, const void * const * ycol,
                                             float * const * dcol, int ncol, void * scratch, enum mm_xtype xt) {
    const int64_t K8 = K & ~(int64_t) 7;
    const int nct = (ncol + FB_C - 1) / FB_C;
    __m256 * accs = (__m256 *)(((uintptr_t) scratch + 31) & ~(uintptr_t) 31); // one row tile's sums, all column tiles
    const void * xs[FB_R];
    const float * ys[FB_C];
    for (int64_t r = 0; r < nrows; r += FB_R) {
        for (int i = 0; i < FB_R; i++) xs[i] = x + LM_GGML_MIN(r + i, nrows - 1) * xrs;
        // the row tile's K block stays in L1 while it meets every column tile
        for (int64_t k0 = 0; k0 < K8 || k0 == 0; k0 += MM_FB_KB) {
            const int64_t k1 = LM_GGML_MIN(k0 + MM_FB_KB, K8);
            for (int ct = 0; ct < nct; ct++) {
                for (int j = 0; j < FB_C; j++) ys[j] = (const float *) ycol[LM_GGML_MIN(ct * FB_C + j, ncol - 1)];
                fb_tile(k0, k1, xs, ys, accs + (size_t) ct * FB_R * FB_C, k0 == 0, xt);
            }
        }
        for (int ct = 0; ct < nct; ct++) {
            const __m256 * acc = accs + (size_t) ct * FB_R * FB_C;
            for (int i = 0; i < FB_R && r + i < nrows; i++) {
                for (int j = 0; j < FB_C && ct * FB_C + j < ncol; j++) {
                    const float * y = (const float *) ycol[ct * FB_C + j];
                    float s = hsum8(acc[i * FB_C + j]);
                    for (int64_t k = K8; k < K; k++) s = __builtin_fmaf(ld1(xs[i], k, xt), y[k], s);
                    dcol[ct * FB_C + j][r + i] = s;
                }
            }
        }
    }
}

LM_TARGET_AVX2 static void fb_gemm_f32(int64_t K, const char * x, size_t xrs, int64_t n, const void * const * y, float * const * d, int nc, void * s) { fb_gemm(K, x, xrs, n, y, d, nc, s, MM_X_F32); }
LM_TARGET_AVX2 static void fb_gemm_f16(int64_t K, const char * x, size_t xrs, int64_t n, const void * const * y, float * const * d, int nc, void * s) { fb_gemm(K, x, xrs, n, y, d, nc, s, MM_X_F16); }
LM_TARGET_AVX2 static void fb_gemm_bf16(int64_t K, const char * x, size_t xrs, int64_t n, const void * const * y, float * const * d, int nc, void * s) { fb_gemm(K, x, xrs, n, y, d, nc, s, MM_X_BF16); }

LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m512 ld16(const void * p, int64_t k, enum mm_xtype xt) {
    switch (xt) {
        case MM_X_F16:  return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *) p + k)));
        case MM_X_BF16: return _mm512_castsi512_ps(_mm512_slli_epi32(
                               _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)((const uint16_t *) p + k))), 16));
        default:        return _mm512_loadu_ps((const float *) p + k);
    }
}

// The 16 lanes summed in one fixed tree (the one gcc's _mm512_reduce_add_ps
// uses, written out so that no compiler picks another): the 256-bit halves,
// then the 128-bit halves, then lanes (0,1) + (2,3), then lane 0 + lane 1.
// Every AVX-512 float kernel ends its sums with this tree, through
// reduce16x16 and reduce16x8, which give its bits for many vectors at once;
// it stays as their definition (unused as code).
LM_TARGET_AVX512 static inline __attribute__((always_inline, unused)) float reduce16(__m512 v) {
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    const __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    const __m128 p = _mm_add_ps(q, _mm_shuffle_ps(q, q, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_add_ss(p, _mm_shuffle_ps(p, p, _MM_SHUFFLE(1, 1, 1, 1))));
}

// Lane j of the result is reduce16(v[j]), bit for bit: each step of the
// tree is done for all vectors at once (30 shuffles and 15 additions
// instead of 16 * 7 operations), with the operands of every addition in
// the same order. The steps pair vector i with i+8, then i+4, then i+2,
// then i+1, which leaves the sum of input m in lane PERM[m]; PERM is its
// own inverse, so the inputs are taken in that order and the sums come out
// in order. (test-batch-invariance fails if a single entry is off.)
LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m512 reduce16x16(const __m512 * v) {
    static const int perm[16] = { 0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15 };
    __m512 t[8], u[4], w[2];
    for (int i = 0; i < 8; i++) { // 256-bit halves: [lo+hi of x | lo+hi of x+8]
        const __m512 a = v[perm[i]], b = v[perm[i + 8]];
        t[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    }
    for (int i = 0; i < 4; i++) { // 128-bit halves
        u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(t[i], t[i + 4], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(t[i], t[i + 4], _MM_SHUFFLE(3, 1, 3, 1)));
    }
    for (int i = 0; i < 2; i++) { // lanes (0,1) + (2,3)
        w[i] = _mm512_add_ps(_mm512_shuffle_ps(u[i], u[i + 2], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(u[i], u[i + 2], _MM_SHUFFLE(3, 2, 3, 2)));
    }
    return _mm512_add_ps(_mm512_shuffle_ps(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)), // lane 0 + lane 1
                         _mm512_shuffle_ps(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// reduce16 of 8 vectors at once, in lanes 0-7: the same tree, pairing
// vector i with i+4, then i+2, then i+1 (25 operations instead of 8 * 7);
// the last step leaves the sums of vectors 0,1 | 4,5 | 2,3 | 6,7 in lanes
// 0,1 of the four 128-bit lanes, gathered by one permute.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m256 reduce16x8(const __m512 * v) {
    __m512 t[4], u[2];
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[i], v[i + 4], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_f32x4(v[i], v[i + 4], _MM_SHUFFLE(3, 2, 3, 2)));
    }
    for (int i = 0; i < 2; i++) {
        u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(t[i], t[i + 2], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(t[i], t[i + 2], _MM_SHUFFLE(3, 1, 3, 1)));
    }
    const __m512 w = _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512 r = _mm512_add_ps(_mm512_shuffle_ps(w, w, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(w, w, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_castps512_ps256(_mm512_permutexvar_ps(_mm512_setr_epi32(0, 1, 8, 9, 4, 5, 12, 13, 0, 0, 0, 0, 0, 0, 0, 0), r));
}

#define AVX512_MV(r) c##r = _mm512_fmadd_ps(ld16(x##r, k, xt), b, c##r);
#define AVX512_MV16(k0) { const int64_t k = (k0); const __m512 b = _mm512_loadu_ps(y + k); \
    AVX512_MV(0) AVX512_MV(1) AVX512_MV(2) AVX512_MV(3) AVX512_MV(4) AVX512_MV(5) AVX512_MV(6) AVX512_MV(7) }
LM_TARGET_AVX512 static LM_INLINE void mv_avx512(int64_t K, const void * const * x, const float * y, float * out, const char * pf,
                                                 enum mm_xtype xt) {
    const int64_t K16 = K & ~(int64_t) 15;
    const void * x0 = x[0], * x1 = x[1], * x2 = x[2], * x3 = x[3], * x4 = x[4], * x5 = x[5], * x6 = x[6], * x7 = x[7];
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    const int64_t rowb = K * xt_size(xt);
    const bool ahead = rowb > MM_PF_ROW;
    const char * const gpf = ahead ? NULL : pf; // short rows: the next group in pace with the loads
    for (int64_t k0 = 0; k0 < K16; k0 += 16) {
        MV_PF(gpf, k0, 16, xt)
        if (ahead && (k0 * xt_size(xt)) % 64 == 0) MV_PF_AHEAD(k0 * (int64_t) xt_size(xt), rowb, pf)
        AVX512_MV16(k0)
    }
    MV_PF_TAIL(gpf, K16, K, xt)
    const __m512 cs[MM_MV_R] = { c0, c1, c2, c3, c4, c5, c6, c7 };
    float sums[MM_MV_R];
    _mm256_storeu_ps(sums, reduce16x8(cs));
    for (int r = 0; r < MM_MV_R; r++) {
        float s = sums[r];
        for (int64_t k = K16; k < K; k++) s = __builtin_fmaf(ld1(x[r], k, xt), y[k], s);
        out[r] = s;
    }
}

// The GEMM of the AVX-512 level: 6x4 tiles (24 accumulators of the 32
// registers; 10 loads for 24 FMAs, where a 4x4 tile takes 8 for 16),
// each over the whole of K: blocks of K (as the AVX2 level runs) and other
// tile shapes were slower here. Pairs end as mv_avx512 ends (reduce_add, then the
// tail), so the bits are the mat-vec kernel's.
#define FB5_R  6
#define FB5_C  4
#define FB5_ROWS(F, ...) F(0, __VA_ARGS__) F(1, __VA_ARGS__) F(2, __VA_ARGS__) F(3, __VA_ARGS__) F(4, __VA_ARGS__) F(5, __VA_ARGS__)
#define FB5_COLS(G, r) G(r, 0) G(r, 1) G(r, 2) G(r, 3)
#define FB5_FMA(r, j)  c##r##_##j = _mm512_fmadd_ps(a, b##j, c##r##_##j);
#define FB5_INIT(r, j) __m512 c##r##_##j = _mm512_setzero_ps();
#define FB5_SAVE(r, j) acc[FB5_C * r + j] = c##r##_##j;
#define FB5_LDB(r, j)  const __m512 b##j = _mm512_loadu_ps(y[j] + k);
// one load of a row's vector, pinned: gcc would fold it into each FMA
#define FB5_ROW(r, u) { __m512 a = ld16(x[r], k, xt); __asm__("" : "+v"(a)); FB5_COLS(FB5_FMA, r) }
#define FB5_EACH(r, G) FB5_COLS(G, r)

LM_TARGET_AVX512 static LM_INLINE void fb5_tile(int64_t K16, const void * const * x, const float * const * y,
                                                __m512 * acc, enum mm_xtype xt) {
    FB5_ROWS(FB5_EACH, FB5_INIT)
    for (int64_t k = 0; k < K16; k += 16) {
        FB5_COLS(FB5_LDB, 0)
        FB5_ROWS(FB5_ROW, 0)
    }
    FB5_ROWS(FB5_EACH, FB5_SAVE)
}
// Each tile is finished as soon as it is computed: its sums stay in L1 (a
// row tile's sums of every column tile kept to the end, as the AVX2 level
// keeps them for its K blocks, took 24 KB of L1 from the operands).
LM_TARGET_AVX512 static LM_INLINE void fb5_gemm(int64_t K, const char * x, size_t xrs, int64_t nrows, const void * const * ycol,
                                                float * const * dcol, int ncol, void * scratch, enum mm_xtype xt) {
    (void) scratch;
    const int64_t K16 = K & ~(int64_t) 15;
    __m512 acc[FB5_R * FB5_C];
    const void * xs[FB5_R];
    const float * ys[FB5_C];
    for (int64_t r = 0; r < nrows; r += FB5_R) {
        for (int i = 0; i < FB5_R; i++) xs[i] = x + LM_GGML_MIN(r + i, nrows - 1) * xrs;
        for (int c = 0; c < ncol; c += FB5_C) {
            for (int j = 0; j < FB5_C; j++) ys[j] = (const float *) ycol[LM_GGML_MIN(c + j, ncol - 1)];
            fb5_tile(K16, xs, ys, acc, xt);
            // the 24 sums: rows 0-3, then rows 4-5 padded with zeros
            _Static_assert(FB5_R * FB5_C == 24, "two reduce16x16 per tile");
            float sums[32];
            _mm512_storeu_ps(sums, reduce16x16(acc));
            const __m512 rest[16] = { acc[16], acc[17], acc[18], acc[19], acc[20], acc[21], acc[22], acc[23] };
            _mm512_storeu_ps(sums + 16, reduce16x16(rest));
            for (int i = 0; i < FB5_R && r + i < nrows; i++) {
                for (int j = 0; j < FB5_C && c + j < ncol; j++) {
                    float s = sums[i * FB5_C + j];
                    for (int64_t k = K16; k < K; k++) s = __builtin_fmaf(ld1(xs[i], k, xt), ys[j][k], s);
                    dcol[c + j][r + i] = s;
                }
            }
        }
    }
}
LM_TARGET_AVX512 static void fb5_gemm_f32(int64_t K, const char * x, size_t xrs, int64_t n, const void * const * y, float * const * d, int nc, void * s) { fb5_gemm(K, x, xrs, n, y, d, nc, s, MM_X_F32); }
LM_TARGET_AVX512 static void fb5_gemm_f16(int64_t K, const char * x, size_t xrs, int64_t n, const void * const * y, float * const * d, int nc, void * s) { fb5_gemm(K, x, xrs, n, y, d, nc, s, MM_X_F16); }
LM_TARGET_AVX512 static void fb5_gemm_bf16(int64_t K, const char * x, size_t xrs, int64_t n, const void * const * y, float * const * d, int nc, void * s) { fb5_gemm(K, x, xrs, n, y, d, nc, s, MM_X_BF16); }

#define X86_KERNELS(SUF, XT) \
LM_TARGET_AVX2 static void mv_avx2_##SUF(int64_t K, const void * const * x, const float * y, float * out, const char * pf) { mv_avx2(K, x, y, out, pf, XT); } \
LM_TARGET_AVX2 static void mv_seq_avx2_##SUF(int64_t K, const void * const * x, const float * y, float * out, const char * pf) { mv_seq_avx2(K, x, y, out, pf, XT); } \
LM_TARGET_AVX512 static void mv_avx512_##SUF(int64_t K, const void * const * x, const float * y, float * out, const char * pf) { mv_avx512(K, x, y, out, pf, XT); }
X86_KERNELS(f32, MM_X_F32)
X86_KERNELS(f16, MM_X_F16)
X86_KERNELS(bf16, MM_X_BF16)

#endif // LM_X86

// ---------------------------------------------------------------- NEON

#if defined(LM_ARM64)

static inline float32x4_t ld4n(const void * p, int64_t k, enum mm_xtype xt) {
    switch (xt) {
        case MM_X_F16:  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *) p + k)));
        case MM_X_BF16: return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t *) p + k), 16));
        default:        return vld1q_f32((const float *) p + k);
    }
}

#define NEON_KERNELS(SUF, XT) \
static void tile_neon_##SUF(int64_t K, const void * const * x, const float * const * y, float * out) { \
    const int64_t K4 = K & ~(int64_t) 3; \
    float32x4_t acc[4][4]; \
    for (int r = 0; r < 4; r++) for (int c = 0; c < 4; c++) acc[r][c] = vdupq_n_f32(0.0f); \
    for (int64_t k = 0; k < K4; k += 4) { \
        float32x4_t b[4]; \
        for (int c = 0; c < 4; c++) b[c] = vld1q_f32(y[c] + k); \
        for (int r = 0; r < 4; r++) { \
            const float32x4_t a = ld4n(x[r], k, XT); \
            for (int c = 0; c < 4; c++) acc[r][c] = vfmaq_f32(acc[r][c], a, b[c]); \
        } \
    } \
    for (int r = 0; r < 4; r++) { \
        for (int c = 0; c < 4; c++) { \
            float s = vaddvq_f32(acc[r][c]); \
            for (int64_t k = K4; k < K; k++) s = __builtin_fmaf(ld1(x[r], k, XT), y[c][k], s); \
            out[r * MM_TILE_C + c] = s; \
        } \
    } \
} \
static void mv_neon_##SUF(int64_t K, const void * const * x, const float * y, float * out, const char * pf) { \
    (void) pf; \
    const int64_t K4 = K & ~(int64_t) 3; \
    float32x4_t acc[MM_MV_R]; \
    for (int r = 0; r < MM_MV_R; r++) acc[r] = vdupq_n_f32(0.0f); \
    for (int64_t k = 0; k < K4; k += 4) { \
        const float32x4_t b = vld1q_f32(y + k); \
        for (int r = 0; r < MM_MV_R; r++) acc[r] = vfmaq_f32(acc[r], ld4n(x[r], k, XT), b); \
    } \
    for (int r = 0; r < MM_MV_R; r++) { \
        float s = vaddvq_f32(acc[r]); \
        for (int64_t k = K4; k < K; k++) s = __builtin_fmaf(ld1(x[r], k, XT), y[k], s); \
        out[r] = s; \
    } \
}
NEON_KERNELS(f32, MM_X_F32)
NEON_KERNELS(f16, MM_X_F16)
NEON_KERNELS(bf16, MM_X_BF16)

#endif // LM_ARM64

// ---------------------------------------------------------------- selection

mm_tile_fn mm_get_tile(enum mm_xtype xt) {
    static const mm_tile_fn scalar[3] = { tile_scalar_f32, tile_scalar_f16, tile_scalar_bf16 };
    const enum lm_cpu_level lv = lm_cpu_level();
    (void) lv;
#if defined(LM_X86)
    // the AVX2 and AVX-512 levels run their GEMM (mm_get_gemm) instead, but
    // for bf16 with AVX512_BF16, which has neither GEMM nor mat-vec form
    if (lv == LM_CPU_LEVEL_AVX512 && mm_bf16_dot(xt)) return mm_tile_bf16dot;
#endif
#if defined(LM_ARM64)
    static const mm_tile_fn neon[3] = { tile_neon_f32, tile_neon_f16, tile_neon_bf16 };
    if (lm_cpu_level_is_neon(lv)) return neon[xt];
#endif
    return scalar[xt];
}

mm_mv_fn mm_get_mv(enum mm_xtype xt) {
    static const mm_mv_fn scalar[3] = { mv_scalar_f32, mv_scalar_f16, mv_scalar_bf16 };
    const enum lm_cpu_level lv = lm_cpu_level();
    (void) lv;
#if defined(LM_X86)
    static const mm_mv_fn avx2[3]   = { mv_avx2_f32, mv_avx2_f16, mv_avx2_bf16 };
    static const mm_mv_fn avx512[3] = { mv_avx512_f32, mv_avx512_f16, mv_avx512_bf16 };
    if (lv == LM_CPU_LEVEL_AVX512) return mm_bf16_dot(xt) ? mm_mv_bf16dot : avx512[xt];
    if (lv == LM_CPU_LEVEL_AVX2)   return avx2[xt];
#endif
#if defined(LM_ARM64)
    static const mm_mv_fn neon[3] = { mv_neon_f32, mv_neon_f16, mv_neon_bf16 };
    if (lm_cpu_level_is_neon(lv)) return neon[xt];
#endif
    return scalar[xt];
}

bool mm_mv_long_pf(enum mm_xtype xt) {
    (void) xt; // every type's AVX-512 kernel (mv_avx512, mm_mv_bf16dot) prefetches ahead
#if defined(LM_X86)
    return lm_cpu_level() == LM_CPU_LEVEL_AVX512;
#else
    return false;
#endif
}

mm_mv_fn mm_get_mv_seq(enum mm_xtype xt) {
#if defined(LM_X86)
    if (mm_bf16_dot(xt)) return NULL; // the AVX512_BF16 kernels have neither form
    static const mm_mv_fn avx2[3] = { mv_seq_avx2_f32, mv_seq_avx2_f16, mv_seq_avx2_bf16 };
    if (lm_cpu_level() == LM_CPU_LEVEL_AVX2) return avx2[xt];
#endif
    (void) xt;
    return NULL;
}

static _Atomic int64_t g_mv_seq_min = LM_MV_SEQ_MIN_BYTES_DEFAULT;

int64_t lm_mv_seq_min_bytes(void) { return atomic_load_explicit(&g_mv_seq_min, memory_order_relaxed); }

int64_t lm_set_mv_seq_min_bytes(int64_t n) { return atomic_exchange_explicit(&g_mv_seq_min, n, memory_order_relaxed); }

mm_gemm_fn mm_get_gemm(enum mm_xtype xt) {
#if defined(LM_X86)
    if (mm_bf16_dot(xt)) return NULL;
    static const mm_gemm_fn avx2[3] = { fb_gemm_f32, fb_gemm_f16, fb_gemm_bf16 };
    static const mm_gemm_fn avx512[3] = { fb5_gemm_f32, fb5_gemm_f16, fb5_gemm_bf16 };
    if (lm_cpu_level() == LM_CPU_LEVEL_AVX2) return avx2[xt];
    if (lm_cpu_level() == LM_CPU_LEVEL_AVX512) return avx512[xt];
#endif
    (void) xt;
    return NULL;
}

size_t mm_gemm_scratch(enum mm_xtype xt, int64_t ncol) {
    if (mm_get_gemm(xt) == NULL || ncol < 2) return 0;
#if defined(LM_X86)
    if (lm_cpu_level() != LM_CPU_LEVEL_AVX2) return 0;                 // fb5_gemm needs none
    const int64_t nct = (LM_GGML_MIN(ncol, MM_MAX_COLS_FLOAT) + 2) / 3; // column tiles of FB_C (3)
    return (size_t) nct * 4 * 3 * 32 + 32;                              // one row tile's 8-lane sums, aligned
#else
    return 0;
#endif
}

// ---------------------------------------------------------------- plain dots (type traits)

void mm_vec_dot_f32(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc) {
    (void) bs; (void) bx; (void) by; (void) nrc;
    const void * xs[MM_MV_R];
    for (int r = 0; r < MM_MV_R; r++) xs[r] = x;
    float out[MM_MV_R];
    mm_get_mv(MM_X_F32)(n, xs, (const float *) y, out, NULL);
    *s = out[0];
}

// f16 x f16 and bf16 x bf16, summed in f32 (the traits' vec_dot_type is the
// type itself for these).
void mm_vec_dot_f16(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc) {
    (void) bs; (void) bx; (void) by; (void) nrc;
    double acc = 0.0;
    const lm_ggml_fp16_t * a = x, * b = y;
    for (int i = 0; i < n; i++) acc += (double) LM_GGML_FP16_TO_FP32(a[i]) * LM_GGML_FP16_TO_FP32(b[i]);
    *s = (float) acc;
}

void mm_vec_dot_bf16(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc) {
    (void) bs; (void) bx; (void) by; (void) nrc;
    double acc = 0.0;
    const lm_ggml_bf16_t * a = x, * b = y;
    for (int i = 0; i < n; i++) acc += (double) LM_GGML_BF16_TO_FP32(a[i]) * LM_GGML_BF16_TO_FP32(b[i]);
    *s = (float) acc;
}

#if defined(LM_X86)
LM_TARGET_AVX2 static void axpy_avx2(int64_t n, float * y, float v, const float * x) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(vv, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; i++) y[i] += v * x[i];
}
#endif

void mm_axpy_f32(int64_t n, float * y, float v, const float * x) {
#if defined(LM_X86)
    if (lm_cpu_level() >= LM_CPU_LEVEL_AVX2) { axpy_avx2(n, y, v, x); return; }
#endif
    for (int64_t i = 0; i < n; i++) y[i] += v * x[i];
}
