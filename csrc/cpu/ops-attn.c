// ops-attn.c - CPU kernels of fused attention: flash_attn_ext (online-softmax
// attention over the KV rows): at the AVX2 and AVX-512 levels tiles of rows
// through blocks of keys, elsewhere one row and one key at a time. The
// constructors are in graph/ctor-attn.c; see ggml-cpu-impl.h for the kernel
// contract.
//
// op_params of FLASH_ATTN_EXT: f32 [0] scale, [1] max_bias, [2] logit_softcap; i32 [3] prec
#include "fp-nocontract.h"
#include "ggml-cpu-impl.h"
#include "ops-vec.h"
#include "../quant/ggml-common.h"

#if defined(LM_X86)
#include <immintrin.h>
#endif

// ---------------------------------------------------------------- row primitives

// The K and V rows FA_PF positions ahead are asked for while a row is
// summed. In a KV cache each position's rows of a head are a few lines
// apart from the next position's (a row of all the heads between them),
// which the hardware prefetchers do not follow: without this, decoding
// waits on memory for every position.
#define FA_PF 8
static inline void fa_prefetch(const char * k, size_t kbytes, const char * v, size_t vbytes) {
    for (size_t o = 0; o < kbytes; o += 64) __builtin_prefetch(k + o);
    for (size_t o = 0; o < vbytes; o += 64) __builtin_prefetch(v + o);
}

static float fa_dot_f32_s(int64_t n, const void * k, const float * q) {
    const float * x = (const float *) k;
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += x[i] * q[i];
    return s;
}
static float fa_dot_f16_s(int64_t n, const void * k, const float * q) {
    const lm_ggml_fp16_t * x = (const lm_ggml_fp16_t *) k;
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += lm_ggml_table_f32_f16[x[i]] * q[i];
    return s;
}
static void fa_mad_f32_s(int64_t n, float * acc, const void * v, float w) {
    const float * x = (const float *) v;
    for (int64_t i = 0; i < n; i++) acc[i] += x[i] * w;
}
static void fa_mad_f16_s(int64_t n, float * acc, const void * v, float w) {
    const lm_ggml_fp16_t * x = (const lm_ggml_fp16_t *) v;
    for (int64_t i = 0; i < n; i++) acc[i] += lm_ggml_table_f32_f16[x[i]] * w;
}
static void fa_scale_s(int64_t n, float * acc, float w) {
    for (int64_t i = 0; i < n; i++) acc[i] *= w;
}

#if defined(LM_X86)
LM_TARGET_AVX2 static inline float fa_hsum256(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
}
#endif

typedef float (*fa_dot_t)(int64_t n, const void * k, const float * q);
typedef void  (*fa_mad_t)(int64_t n, float * acc, const void * v, float w);

// How the tile kernels read a K or V row: f32, f16, or q8_0 converted in
// the loads (each element d * q, the product dequantize_row_q8_0 gives, so
// the same bits as converting the row first); other types are converted a
// block of rows at a time into f32.
enum { FA_F32, FA_F16, FA_Q8 };

#if defined(LM_X86)
// ---------------------------------------------------------------- tiles of rows and key blocks (AVX-512, AVX2)
//
// Up to four query rows that share their K/V head go through the keys
// FA_KB at a time. Per block: the scores of every row and key, then per row
// the block's maximum, one rescale of the accumulators and S, exp over the
// block's 16 lanes at once, and the V rows added in key order. A row is
// computed by the same steps whatever rows share its tile, and the blocks
// start at key 0 for every row, so a row's bits do not depend on the batch
// or on the thread count. Keys a row's mask hides take no part: not in the
// maximum, and their V rows (possibly garbage, e.g. unused cache slots) are
// not touched for that row.
#define FA_KB 16

struct fa_tile {
    int R;                        // rows, 1-4
    int64_t DK, DV, n_kv;
    const float * q[4];
    const lm_ggml_fp16_t * m[4];  // mask rows or NULL
    float slope[4];
    float * out[4];
    const char * kbase, * vbase;
    size_t kstride, vstride, kbytes, vbytes;
    int kk, vk;                   // FA_F32, FA_F16 or FA_Q8 rows (after any conversion)
    lm_ggml_to_float_t k_to_f32, v_to_f32; // non-NULL: a block's rows are converted first
    lm_ggml_to_float_t k_conv;    // K's converter, for kernels that convert f16 or q8_0 K rows too
    float * kbuf, * vbuf;         // FA_KB rows of f32 each
    float scale, softcap;
    float * acc;                  // R*DV
    float M[4], S[4];             // running maximum and sum of exp(x - M)
};

// 16 elements from i (a multiple of 16) of a q8_0 row.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m512 fa_q8_x512(const void * p, int64_t i) {
    const block_q8_0 * b = (const block_q8_0 *) p + i / LM_QK8_0;
    const __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b->qs + i % LM_QK8_0))));
    return _mm512_mul_ps(q, _mm512_set1_ps(_cvtsh_ss(b->d)));
}

// 16 lanes of a row from i, those of k read and the rest 0. A q8_0 row
// is whole blocks, so its k is all lanes or none. No load at all for an
// empty k: past a row's end, a masked load that reads nothing still waited
// for memory (the next head's row) here.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m512 fa_ld_x512(const void * p, int64_t i, int kind, __mmask16 k) {
    if (!k) return _mm512_setzero_ps();
    switch (kind) {
        case FA_F16: return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, (const lm_ggml_fp16_t *) p + i));
        case FA_Q8:  return fa_q8_x512(p, i);
        default:     return _mm512_maskz_loadu_ps(k, (const float *) p + i);
    }
}

// The first two steps of the 16-lane sum of four vectors (one per key):
// 256-bit halves, then 128-bit halves. Lane 4L+i of the result is part i
// of key L's sum.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m512 fa_fold4_x512(__m512 a, __m512 b, __m512 c, __m512 d) {
    const __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(3, 2, 3, 2)));
    return _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));
}

// The last two steps over four fold4 results (keys 0-3, 4-7, 8-11, 12-15):
// lanes (0,1) + (2,3), then lane 0 + lane 1, leaving key L+4i in lane
// 4L+i; the permute puts key j in lane j. Every key's sum is the tree of
// reduce16 in mm-float.c: halves of 8, 4, 2, then 1.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) __m512 fa_fold16_x512(const __m512 * u) {
    const __m512 v01 = _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512 v23 = _mm512_add_ps(_mm512_shuffle_ps(u[2], u[3], _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_ps(u[2], u[3], _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512 f = _mm512_add_ps(_mm512_shuffle_ps(v01, v23, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(v01, v23, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), f);
}

// s[16r + j] = q_r . K row j for j < nk (lanes past nk are left as they come).
// Each (row, key) sums the row in 16 lanes in order, then folds them.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) void fa_scores_x512(
        const int R, const struct fa_tile * t, int64_t kb, const char * kp, size_t ks, int kk, int nk, float * s) {
    const int64_t DK = t->DK;
    const int64_t nfull = DK / 16;
    const __mmask16 tail = (__mmask16)((1u << (DK % 16)) - 1);
    __m512 u[4][4];
    for (int g = 0; g < 4; g++) {
        if (4*g >= nk) {
            for (int r = 0; r < R; r++) u[r][g] = _mm512_setzero_ps();
            continue;
        }
        // rows FA_PF positions ahead, a few at a time: a whole block's at once
        // would be more misses in flight than the core keeps
        for (int jj = 4*g + FA_PF; jj < 4*g + FA_PF + 4 && kb + jj < t->n_kv; jj++) {
            fa_prefetch(t->kbase + (kb + jj)*t->kstride, t->kbytes, t->vbase + (kb + jj)*t->vstride, t->vbytes);
        }
        const char * kr[4];
        for (int jj = 0; jj < 4; jj++) kr[jj] = kp + (size_t)(4*g + jj < nk ? 4*g + jj : nk - 1) * ks;
        __m512 a[4][4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) for (int jj = 0; jj < 4; jj++) a[r][jj] = _mm512_setzero_ps();
        for (int64_t c = 0; c < nfull; c++) {
#pragma GCC unroll 4
            for (int jj = 0; jj < 4; jj++) {
                const __m512 kv = kk == FA_F16 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const lm_ggml_fp16_t *) kr[jj] + 16*c)))
                                : kk == FA_Q8  ? fa_q8_x512(kr[jj], 16*c)
                                               : _mm512_loadu_ps((const float *) kr[jj] + 16*c);
#pragma GCC unroll 4
                for (int r = 0; r < R; r++) a[r][jj] = _mm512_fmadd_ps(kv, _mm512_loadu_ps(t->q[r] + 16*c), a[r][jj]);
            }
        }
        if (tail) {
            for (int jj = 0; jj < 4; jj++) {
                const __m512 kv = fa_ld_x512(kr[jj], 16*nfull, kk, tail);
                for (int r = 0; r < R; r++) a[r][jj] = _mm512_fmadd_ps(kv, _mm512_maskz_loadu_ps(tail, t->q[r] + 16*nfull), a[r][jj]);
            }
        }
        for (int r = 0; r < R; r++) u[r][g] = fa_fold4_x512(a[r][0], a[r][1], a[r][2], a[r][3]);
    }
    for (int r = 0; r < R; r++) _mm512_storeu_ps(s + 16*r, fa_fold16_x512(u[r]));
}

// Which keys of block kb row r sees (its mask is not -inf), as bits, and
// in mv the mask values scaled by the row's slope.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) unsigned fa_live_x512(const struct fa_tile * t, int r, int64_t kb, int nk, float * mv) {
    const __mmask16 kin = nk >= 16 ? (__mmask16) 0xFFFF : (__mmask16)((1u << nk) - 1);
    if (!t->m[r]) {
        _mm512_storeu_ps(mv, _mm512_setzero_ps());
        return kin;
    }
    const __m512 m = _mm512_mul_ps(_mm512_set1_ps(t->slope[r]), _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(kin, t->m[r] + kb)));
    _mm512_storeu_ps(mv, m);
    return _mm512_mask_cmp_ps_mask(kin, m, _mm512_set1_ps(-INFINITY), _CMP_NEQ_UQ);
}

// The online softmax of one row over one block: s holds the scores and
// leaves with the weights exp(x - M) (0 for hidden keys); *sc is what the
// row's accumulators are multiplied by before the block's V rows are added.
LM_TARGET_AVX512 static inline __attribute__((always_inline)) void fa_softmax_x512(
        const struct fa_tile * t, unsigned live, const float * mv, float * s, float * M, float * S, float * sc) {
    if (!live) {
        *sc = 1.0f;
        return;
    }
    __m512 x = _mm512_mul_ps(_mm512_loadu_ps(s), _mm512_set1_ps(t->scale));
    if (t->softcap != 0.0f) {
        float xs[16];
        _mm512_storeu_ps(xs, x);
        for (int j = 0; j < 16; j++) xs[j] = t->softcap * tanhf(xs[j]);
        x = _mm512_loadu_ps(xs);
    }
    x = _mm512_add_ps(x, _mm512_loadu_ps(mv));
    const float bm = _mm512_mask_reduce_max_ps((__mmask16) live, x);
    const float Mn = bm > *M ? bm : *M;
    *sc = _mm512_cvtss_f32(lm_v_expf_avx512(_mm512_set1_ps(*M - Mn)));
    const __m512 p = _mm512_maskz_mov_ps((__mmask16) live, lm_v_expf_avx512(_mm512_sub_ps(x, _mm512_set1_ps(Mn))));
    *S = *S * *sc + _mm512_reduce_add_ps(p);
    *M = Mn;
    _mm512_storeu_ps(s, p);
}

// How many of n vectors of w lanes from column c hold columns of a DV-wide
// row: w, fewer for the one the row ends in, 0 past it.
static inline void fa_lanes_left(int64_t DV, int64_t c, int w, int n, int * left) {
    for (int h = 0; h < n; h++) {
        const int64_t l = DV - c - (int64_t) w*h;
        left[h] = l >= w ? w : l <= 0 ? 0 : (int) l;
    }
}

// The keys some row of the tile sees, and those every row sees.
static inline void fa_live_union(int R, const unsigned * live, unsigned * any, unsigned * all) {
    *any = 0;
    *all = 0xFFFF;
    for (int r = 0; r < R; r++) { *any |= live[r]; *all &= live[r]; }
}

// acc_r = acc_r * sc_r + sum over the block's keys (in order) of p_rj V_j,
// for the keys row r sees. CH vectors of each row at a time (8/R, so that
// eight independent FMA chains hide the FMA latency at any R; fewer for a
// row shorter than that).
LM_TARGET_AVX512 static inline __attribute__((always_inline)) void fa_vacc_x512_ch(
        const int R, const int CH, const struct fa_tile * t, const char * vp, size_t vs, int vk, int nk,
        const float * p, const unsigned * live, const float * sc) {
    const int64_t DV = t->DV;
    unsigned any, all;
    fa_live_union(R, live, &any, &all);
    for (int64_t c = 0; c < DV; c += 16*CH) {
        int left[8];
        __mmask16 km[8];
        fa_lanes_left(DV, c, 16, CH, left);
        for (int h = 0; h < CH; h++) km[h] = (__mmask16)((1u << left[h]) - 1);
        __m512 o[4][8];
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) for (int h = 0; h < CH; h++) {
            o[r][h] = _mm512_mul_ps(_mm512_maskz_loadu_ps(km[h], t->acc + r*DV + c + 16*h), _mm512_set1_ps(sc[r]));
        }
        for (int j = 0; j < nk; j++) {
            if (!(any >> j & 1)) continue;
            const char * vr = vp + (size_t) j*vs;
            if (all >> j & 1) {
#pragma GCC unroll 8
                for (int h = 0; h < CH; h++) {
                    const __m512 vv = fa_ld_x512(vr, c + 16*h, vk, km[h]);
                    for (int r = 0; r < R; r++) o[r][h] = _mm512_fmadd_ps(vv, _mm512_set1_ps(p[16*r + j]), o[r][h]);
                }
            } else {
                for (int h = 0; h < CH; h++) {
                    const __m512 vv = fa_ld_x512(vr, c + 16*h, vk, km[h]);
                    for (int r = 0; r < R; r++) {
                        o[r][h] = _mm512_mask3_fmadd_ps(vv, _mm512_set1_ps(p[16*r + j]), o[r][h], (__mmask16)(live[r] >> j & 1 ? 0xFFFF : 0));
                    }
                }
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) for (int h = 0; h < CH; h++) _mm512_mask_storeu_ps(t->acc + r*DV + c + 16*h, km[h], o[r][h]);
    }
}

LM_TARGET_AVX512 static inline __attribute__((always_inline)) void fa_vacc_x512(
        const int R, const struct fa_tile * t, const char * vp, size_t vs, int vk, int nk,
        const float * p, const unsigned * live, const float * sc) {
    if (R == 1 && t->DV <= 64) fa_vacc_x512_ch(1, 4, t, vp, vs, vk, nk, p, live, sc);
    else fa_vacc_x512_ch(R, R == 1 ? 8 : R == 2 ? 4 : 2, t, vp, vs, vk, nk, p, live, sc);
}

// ---------------------------------------------------------------- AVX2: the same tiles
// A block's 16 lanes are two halves (lanes 0-7 and 8-15), and every (row,
// key) score takes the AVX-512 kernel's steps lane for lane.

// Lanes 0-7 set where bits 0-7 are.
LM_TARGET_AVX2 static inline __attribute__((always_inline)) __m256 fa_lanes_avx2(unsigned bits) {
    const __m256i b = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int) bits), b), b));
}

// Lanes below n (0-8) set.
LM_TARGET_AVX2 static inline __attribute__((always_inline)) __m256i fa_first_avx2(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// 8 lanes of a row (FA_F32, FA_F16 or FA_Q8) from p + i, of which the first
// n (0-8) are read and the rest are 0 (a q8_0 row is whole blocks: n is 8 or 0).
LM_TARGET_AVX2 static inline __attribute__((always_inline)) __m256 fa_ld8_avx2(const void * p, int64_t i, int kind, int n) {
    if (n <= 0) return _mm256_setzero_ps(); // no load past a row's end (see fa_ld_x512)
    if (kind == FA_Q8) {
        const block_q8_0 * b = (const block_q8_0 *) p + i / LM_QK8_0;
        const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b->qs + i % LM_QK8_0))));
        return _mm256_mul_ps(q, _mm256_set1_ps(_cvtsh_ss(b->d)));
    }
    const bool f16 = kind == FA_F16;
    if (n >= 8) {
        return f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const lm_ggml_fp16_t *) p + i)))
                   : _mm256_loadu_ps((const float *) p + i);
    }
    if (!f16) return _mm256_maskload_ps((const float *) p + i, fa_first_avx2(n > 0 ? n : 0));
    float tmp[8] = { 0 };
    for (int e = 0; e < n; e++) tmp[e] = lm_ggml_table_f32_f16[((const lm_ggml_fp16_t *) p)[i + e]];
    return _mm256_loadu_ps(tmp);
}

// As fa_scores_x512: the halves summed, then 128-bit halves of four keys,
// lanes (0,1) + (2,3), lane 0 + lane 1, the permute putting key j in lane j.
LM_TARGET_AVX2 static inline __attribute__((always_inline)) void fa_scores_avx2(
        const int R, const struct fa_tile * t, int64_t kb, const char * kp, size_t ks, int kk, int nk, float * s) {
    const int64_t DK = t->DK;
    float part[4][4][8];
    for (int g = 0; g < 4; g++) {
        if (4*g >= nk) {
            for (int r = 0; r < R; r++) _mm256_storeu_ps(part[r][g], _mm256_setzero_ps());
            continue;
        }
        for (int jj = 4*g + FA_PF; jj < 4*g + FA_PF + 4 && kb + jj < t->n_kv; jj++) {
            fa_prefetch(t->kbase + (kb + jj)*t->kstride, t->kbytes, t->vbase + (kb + jj)*t->vstride, t->vbytes);
        }
        const char * kr[4];
        for (int jj = 0; jj < 4; jj++) kr[jj] = kp + (size_t)(4*g + jj < nk ? 4*g + jj : nk - 1) * ks;
        for (int r = 0; r < R; r++) {
            __m256 a[4][2];
            for (int jj = 0; jj < 4; jj++) a[jj][0] = a[jj][1] = _mm256_setzero_ps();
            for (int64_t c = 0; c < DK; c += 16) {
                const int n0 = DK - c >= 8 ? 8 : (int)(DK - c), n1 = DK - c >= 16 ? 8 : (int)(DK - c - 8);
                const __m256 q0 = fa_ld8_avx2(t->q[r], c, FA_F32, n0), q1 = fa_ld8_avx2(t->q[r], c + 8, FA_F32, n1);
#pragma GCC unroll 4
                for (int jj = 0; jj < 4; jj++) {
                    a[jj][0] = _mm256_fmadd_ps(fa_ld8_avx2(kr[jj], c, kk, n0), q0, a[jj][0]);
                    a[jj][1] = _mm256_fmadd_ps(fa_ld8_avx2(kr[jj], c + 8, kk, n1), q1, a[jj][1]);
                }
            }
            __m256 x[4];
            for (int jj = 0; jj < 4; jj++) x[jj] = _mm256_add_ps(a[jj][0], a[jj][1]);
            const __m256 yab = _mm256_add_ps(_mm256_permute2f128_ps(x[0], x[1], 0x20), _mm256_permute2f128_ps(x[0], x[1], 0x31));
            const __m256 ycd = _mm256_add_ps(_mm256_permute2f128_ps(x[2], x[3], 0x20), _mm256_permute2f128_ps(x[2], x[3], 0x31));
            _mm256_storeu_ps(part[r][g], _mm256_add_ps(_mm256_shuffle_ps(yab, ycd, _MM_SHUFFLE(1, 0, 1, 0)),
                                                       _mm256_shuffle_ps(yab, ycd, _MM_SHUFFLE(3, 2, 3, 2))));
        }
    }
    const __m256i nat = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int r = 0; r < R; r++) {
        for (int h = 0; h < 2; h++) {
            const __m256 z0 = _mm256_loadu_ps(part[r][2*h]), z1 = _mm256_loadu_ps(part[r][2*h + 1]);
            const __m256 f = _mm256_add_ps(_mm256_shuffle_ps(z0, z1, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(z0, z1, _MM_SHUFFLE(3, 1, 3, 1)));
            _mm256_storeu_ps(s + 16*r + 8*h, _mm256_permutevar8x32_ps(f, nat));
        }
    }
}

LM_TARGET_AVX2 static inline __attribute__((always_inline)) unsigned fa_live_avx2(const struct fa_tile * t, int r, int64_t kb, int nk, float * mv) {
    const unsigned kin = nk >= 16 ? 0xFFFFu : (1u << nk) - 1;
    if (!t->m[r]) {
        _mm256_storeu_ps(mv, _mm256_setzero_ps());
        _mm256_storeu_ps(mv + 8, _mm256_setzero_ps());
        return kin;
    }
    const __m256 sl = _mm256_set1_ps(t->slope[r]), ninf = _mm256_set1_ps(-INFINITY);
    const __m256 lo = _mm256_mul_ps(sl, fa_ld8_avx2(t->m[r] + kb, 0, FA_F16, nk)), hi = _mm256_mul_ps(sl, fa_ld8_avx2(t->m[r] + kb, 8, FA_F16, nk - 8));
    _mm256_storeu_ps(mv, lo);
    _mm256_storeu_ps(mv + 8, hi);
    const unsigned bits = (unsigned) _mm256_movemask_ps(_mm256_cmp_ps(lo, ninf, _CMP_NEQ_UQ)) |
                          (unsigned) _mm256_movemask_ps(_mm256_cmp_ps(hi, ninf, _CMP_NEQ_UQ)) << 8;
    return bits & kin;
}

LM_TARGET_AVX2 static inline __attribute__((always_inline)) void fa_softmax_avx2(
        const struct fa_tile * t, unsigned live, const float * mv, float * s, float * M, float * S, float * sc) {
    if (!live) {
        *sc = 1.0f;
        return;
    }
    if (t->softcap != 0.0f) {
        for (int j = 0; j < 16; j++) s[j] = t->softcap * tanhf(s[j] * t->scale);
    } else {
        for (int j = 0; j < 16; j += 8) _mm256_storeu_ps(s + j, _mm256_mul_ps(_mm256_loadu_ps(s + j), _mm256_set1_ps(t->scale)));
    }
    const __m256 xl = _mm256_add_ps(_mm256_loadu_ps(s), _mm256_loadu_ps(mv)), xh = _mm256_add_ps(_mm256_loadu_ps(s + 8), _mm256_loadu_ps(mv + 8));
    const __m256 ml = fa_lanes_avx2(live & 0xFF), mh = fa_lanes_avx2(live >> 8), ninf = _mm256_set1_ps(-INFINITY);
    const __m256 m8 = _mm256_max_ps(_mm256_blendv_ps(ninf, xl, ml), _mm256_blendv_ps(ninf, xh, mh));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    const float bm = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    const float Mn = bm > *M ? bm : *M;
    *sc = _mm256_cvtss_f32(lm_v_expf_avx2(_mm256_set1_ps(*M - Mn)));
    const __m256 pl = _mm256_and_ps(lm_v_expf_avx2(_mm256_sub_ps(xl, _mm256_set1_ps(Mn))), ml);
    const __m256 ph = _mm256_and_ps(lm_v_expf_avx2(_mm256_sub_ps(xh, _mm256_set1_ps(Mn))), mh);
    *S = *S * *sc + fa_hsum256(_mm256_add_ps(pl, ph));
    *M = Mn;
    _mm256_storeu_ps(s, pl);
    _mm256_storeu_ps(s + 8, ph);
}

LM_TARGET_AVX2 static inline __attribute__((always_inline)) void fa_vacc_avx2(
        const int R, const struct fa_tile * t, const char * vp, size_t vs, int vk, int nk,
        const float * p, const unsigned * live, const float * sc) {
    const int NH = R == 1 ? 8 : R == 2 ? 4 : 2; // halves (8 lanes) per row at a time: eight FMA chains
    const int64_t DV = t->DV;
    unsigned any, all;
    fa_live_union(R, live, &any, &all);
    for (int64_t c = 0; c < DV; c += 8*NH) {
        int n8[8];
        fa_lanes_left(DV, c, 8, NH, n8);
        __m256 o[4][8];
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) for (int u = 0; u < NH; u++) {
            o[r][u] = _mm256_mul_ps(fa_ld8_avx2(t->acc + r*DV, c + 8*u, FA_F32, n8[u]), _mm256_set1_ps(sc[r]));
        }
        for (int j = 0; j < nk; j++) {
            if (!(any >> j & 1)) continue;
            const char * vr = vp + (size_t) j*vs;
            const bool every = all >> j & 1;
#pragma GCC unroll 8
            for (int u = 0; u < NH; u++) {
                const __m256 vv = fa_ld8_avx2(vr, c + 8*u, vk, n8[u]);
                for (int r = 0; r < R; r++) {
                    if (every || (live[r] >> j & 1)) o[r][u] = _mm256_fmadd_ps(vv, _mm256_set1_ps(p[16*r + j]), o[r][u]);
                }
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) for (int u = 0; u < NH; u++) {
            if (n8[u] == 8) _mm256_storeu_ps(t->acc + r*DV + c + 8*u, o[r][u]);
            else if (n8[u] > 0) _mm256_maskstore_ps(t->acc + r*DV + c + 8*u, fa_first_avx2(n8[u]), o[r][u]);
        }
    }
}
#endif

#if defined(LM_X86)
// One block of one tile at a SIMD level: which keys each row sees, the
// block's rows converted if K or V are neither f16 nor f32 (or CONV_K16),
// then the level's scores, softmax and V sums. fa_block_SFX picks the
// kernel made for the tile's R.
#define FA_BLOCK_KERNEL(SFX, TARGET, CONV_K16)                                                               \
TARGET static inline __attribute__((always_inline)) void fa_block_##SFX##_n(const int R, struct fa_tile * t, int64_t kb) { \
    const int64_t DK = t->DK, DV = t->DV;                                                                    \
    const int nk = t->n_kv - kb < FA_KB ? (int)(t->n_kv - kb) : FA_KB;                                       \
    float sc[4], s[4*16], mv[4*16];                                                                          \
    unsigned live[4], any = 0;                                                                               \
    for (int r = 0; r < R; r++) any |= live[r] = fa_live_##SFX(t, r, kb, nk, mv + 16*r);                      \
    if (!any) return;                                                                                        \
    const char * kp = t->kbase + kb*t->kstride, * vp = t->vbase + kb*t->vstride;                             \
    size_t ks = t->kstride, vs = t->vstride;                                                                 \
    int kk = t->kk, vk = t->vk;                                                                              \
    if (t->k_to_f32 || ((CONV_K16) && kk != FA_F32)) {                                                       \
        const lm_ggml_to_float_t conv = t->k_to_f32 ? t->k_to_f32 : t->k_conv;                                \
        for (int j = 0; j < nk; j++) conv(kp + j*ks, t->kbuf + j*DK, DK);                                    \
        kp = (const char *) t->kbuf; ks = sizeof(float) * DK; kk = FA_F32;                                   \
    }                                                                                                        \
    if (t->v_to_f32) {                                                                                       \
        for (int j = 0; j < nk; j++) t->v_to_f32(vp + j*vs, t->vbuf + j*DV, DV);                             \
        vp = (const char *) t->vbuf; vs = sizeof(float) * DV; vk = FA_F32;                                   \
    }                                                                                                        \
    fa_scores_##SFX(R, t, kb, kp, ks, kk, nk, s);                                                            \
    for (int r = 0; r < R; r++) fa_softmax_##SFX(t, live[r], mv + 16*r, s + 16*r, &t->M[r], &t->S[r], &sc[r]); \
    fa_vacc_##SFX(R, t, vp, vs, vk, nk, s, live, sc);                                                        \
}                                                                                                            \
TARGET static void fa_block_##SFX(struct fa_tile * t, int64_t kb) {                                          \
    switch (t->R) {                                                                                          \
        case 1:  fa_block_##SFX##_n(1, t, kb); break;                                                        \
        case 2:  fa_block_##SFX##_n(2, t, kb); break;                                                        \
        case 3:  fa_block_##SFX##_n(3, t, kb); break;                                                        \
        default: fa_block_##SFX##_n(4, t, kb); break;                                                        \
    }                                                                                                        \
}

// CONV_K16: f16 K rows are converted once for the tile's rows rather than
// by each row (the AVX2 scores take one row at a time; conversion is exact,
// so the scores are the same either way).
FA_BLOCK_KERNEL(x512, LM_TARGET_AVX512, 0)
FA_BLOCK_KERNEL(avx2, LM_TARGET_AVX2, R > 1)

// With side set the tiles go through the key blocks side by side: block kb
// of every tile, then block kb+1. In decoding the tiles are the heads, whose
// rows of one position are neighbours in a KV cache, so this reads the cache
// in order instead of one head's rows a cache row apart. Where each head's
// rows are apart from the others' (K laid out head by head), each tile goes
// through all its keys alone: one stream at a time, which the hardware
// prefetchers follow, where many tiles side by side would be many streams.
// A row's steps are the same either way.
//
// Side by side, the tiles' rows of a position are one span of memory, asked
// for into L2 FA_PF_BLOCKS blocks ahead as a whole, besides each tile
// asking for its own rows into L1 a few positions ahead (too late alone
// when the rows come from DRAM: between its asking and its reading only a
// few tiles' work passes; into L1 from further ahead, the span pushes out
// the rows in use).
#define FA_PF_BLOCKS 2
static void fa_prefetch_span(const char * base, size_t stride, size_t span, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; p++) {
        const char * row = base + p*stride;
        for (size_t o = 0; o < span; o += 64) __builtin_prefetch(row + o, 0, 2);
        __builtin_prefetch(row + span - 1, 0, 2);
    }
}

static void fa_tiles(struct fa_tile * tiles, int nt, void (*block)(struct fa_tile *, int64_t), bool side) {
    if (!side && nt > 1) {
        for (int i = 0; i < nt; i++) fa_tiles(&tiles[i], 1, block, true);
        return;
    }
    const char * klo = tiles[0].kbase, * khi = klo, * vlo = tiles[0].vbase, * vhi = vlo;
    for (int i = 0; i < nt; i++) {
        struct fa_tile * t = &tiles[i];
        for (int r = 0; r < t->R; r++) { t->M[r] = -INFINITY; t->S[r] = 0.0f; }
        for (int64_t d = 0; d < t->R*t->DV; d++) t->acc[d] = 0.0f;
        klo = t->kbase < klo ? t->kbase : klo; khi = t->kbase > khi ? t->kbase : khi;
        vlo = t->vbase < vlo ? t->vbase : vlo; vhi = t->vbase > vhi ? t->vbase : vhi;
    }
    const int64_t n_kv = tiles[0].n_kv;
    const size_t kspan = (size_t)(khi - klo) + tiles[0].kbytes, vspan = (size_t)(vhi - vlo) + tiles[0].vbytes;
    if (nt > 1) { // the first blocks, then each block's successors FA_PF_BLOCKS ahead
        const int64_t p1 = FA_KB*FA_PF_BLOCKS < n_kv ? FA_KB*FA_PF_BLOCKS : n_kv;
        fa_prefetch_span(klo, tiles[0].kstride, kspan, 0, p1);
        fa_prefetch_span(vlo, tiles[0].vstride, vspan, 0, p1);
    }
    for (int64_t kb = 0; kb < n_kv; kb += FA_KB) {
        const int64_t a = kb + FA_KB*FA_PF_BLOCKS, b = a + FA_KB < n_kv ? a + FA_KB : n_kv;
        if (nt > 1 && a < n_kv) {
            fa_prefetch_span(klo, tiles[0].kstride, kspan, a, b);
            fa_prefetch_span(vlo, tiles[0].vstride, vspan, a, b);
        }
        for (int i = 0; i < nt; i++) block(&tiles[i], kb);
    }
    for (int i = 0; i < nt; i++) {
        const struct fa_tile * t = &tiles[i];
        for (int r = 0; r < t->R; r++) {
            // as in ggml, a fully masked row gives 0 * inf = NaN
            const float S_inv = 1.0f / t->S[r];
            for (int64_t d = 0; d < t->DV; d++) t->out[r][d] = t->acc[r*t->DV + d] * S_inv;
        }
    }
}
#endif


// ---------------------------------------------------------------- kernel

// Rows whose tiles go through the keys side by side (their accumulators are
// in the scratch at once).
#define FA_TILE_ROWS 32

// Per-thread scratch, in floats: a block's converted K rows (16*DK) and V
// rows (16*DV), accumulators of up to FA_TILE_ROWS rows, plus padding so
// threads do not share cache lines.
static size_t fa_scratch_floats(const struct lm_ggml_tensor * node) {
    return (size_t)(16 * node->src[1]->ne[0] + (16 + FA_TILE_ROWS) * node->src[2]->ne[0] + 32);
}

static size_t lm_wsize_flash_attn_ext(const struct lm_ggml_tensor * node, int n_threads) {
    return sizeof(float) * fa_scratch_floats(node) * (size_t) n_threads;
}

// Everything the kernel needs about query row ir (rows ordered token, head, batch).
struct fa_rows {
    const struct lm_ggml_tensor * q, * k, * v, * mask, * dst;
    int64_t nq1, nq2, rk2, rk3, rv2, rv3;
    float max_bias, m0, m1;
    uint32_t n_head_log2;
};
struct fa_row {
    const float * q;
    const lm_ggml_fp16_t * m;
    const char * kbase, * vbase;
    float * out;
    float slope;
};

static void fa_row_get(const struct fa_rows * f, int64_t ir, struct fa_row * r) {
    const int64_t iq3 = ir / (f->nq2 * f->nq1);
    const int64_t iq2 = (ir / f->nq1) % f->nq2;
    const int64_t iq1 = ir % f->nq1;
    // ALiBi slopes: geometric per head, with a second interleaved series past the largest power of two
    const uint32_t h = (uint32_t) iq2;
    r->slope = f->max_bias > 0.0f
        ? (h < f->n_head_log2 ? powf(f->m0, (float)(h + 1)) : powf(f->m1, (float)(2*(h - f->n_head_log2) + 1)))
        : 1.0f;
    r->q = (const float *)((const char *) f->q->data + iq1*f->q->nb[1] + iq2*f->q->nb[2] + iq3*f->q->nb[3]);
    r->m = f->mask ? (const lm_ggml_fp16_t *)((const char *) f->mask->data + iq1*f->mask->nb[1]) : NULL;
    r->kbase = (const char *) f->k->data + (iq2 / f->rk2)*f->k->nb[2] + (iq3 / f->rk3)*f->k->nb[3];
    r->vbase = (const char *) f->v->data + (iq2 / f->rv2)*f->v->nb[2] + (iq3 / f->rv3)*f->v->nb[3];
    // the result is permuted: [DV, head, token, batch]
    r->out = (float *)((char *) f->dst->data + iq2*f->dst->nb[1] + iq1*f->dst->nb[2] + iq3*f->dst->nb[3]);
}

static void lm_compute_flash_attn_ext(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * q    = dst->src[0];
    const struct lm_ggml_tensor * k    = dst->src[1];
    const struct lm_ggml_tensor * v    = dst->src[2];
    const struct lm_ggml_tensor * mask = dst->src[3];
    const int64_t DK = k->ne[0], DV = v->ne[0], n_kv = k->ne[1];
    const int64_t nq1 = q->ne[1], nq2 = q->ne[2], nq3 = q->ne[3];

    float scale = lm_ggml_get_op_params_f32(dst, 0);
    const float max_bias = lm_ggml_get_op_params_f32(dst, 1);
    const float softcap  = lm_ggml_get_op_params_f32(dst, 2);
    if (softcap != 0.0f) scale /= softcap;

    const uint32_t n_head = (uint32_t) nq2;
    const uint32_t n_head_log2 = 1u << (uint32_t) floor(log2((double) n_head));
    const float m0 = powf(2.0f, -(max_bias) / n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / n_head_log2);

    const int64_t rk2 = nq2 / k->ne[2], rk3 = nq3 / k->ne[3];
    const int64_t rv2 = nq2 / v->ne[2], rv3 = nq3 / v->ne[3];

    const bool k_direct = k->type == LM_GGML_TYPE_F32 || k->type == LM_GGML_TYPE_F16;
    const bool v_direct = v->type == LM_GGML_TYPE_F32 || v->type == LM_GGML_TYPE_F16;
    const bool k16 = k->type == LM_GGML_TYPE_F16, v16 = v->type == LM_GGML_TYPE_F16;
    const bool kq8 = k->type == LM_GGML_TYPE_Q8_0, vq8 = v->type == LM_GGML_TYPE_Q8_0;
    const lm_ggml_to_float_t k_to_f32 = k_direct ? NULL : lm_ggml_get_type_traits(k->type)->to_float;
    const lm_ggml_to_float_t v_to_f32 = v_direct ? NULL : lm_ggml_get_type_traits(v->type)->to_float;

    const size_t krow = lm_ggml_row_size(k->type, DK), vrow = lm_ggml_row_size(v->type, DV);
    const struct fa_rows fr = { q, k, v, mask, dst, nq1, nq2, rk2, rk3, rv2, rv3, max_bias, m0, m1, n_head_log2 };

    float * kbuf = (float *) params->wdata + (size_t) params->ith * fa_scratch_floats(dst);
    float * vbuf = kbuf + 16*DK;
    float * acc  = vbuf + 16*DV;

    int64_t ir0, ir1;
    lm_ggml_thread_range(nq1 * nq2 * nq3, params->ith, params->nth, &ir0, &ir1);

#if defined(LM_X86)
    const enum lm_cpu_level lvl = lm_cpu_level();
    if (lvl == LM_CPU_LEVEL_AVX2 || lvl == LM_CPU_LEVEL_AVX512) {
        void (*block)(struct fa_tile *, int64_t) = lvl == LM_CPU_LEVEL_AVX512 ? fa_block_x512 : fa_block_avx2;
        const int kkind = k16 ? FA_F16 : kq8 ? FA_Q8 : FA_F32, vkind = v16 ? FA_F16 : vq8 ? FA_Q8 : FA_F32;
        const lm_ggml_to_float_t k_conv = lm_ggml_get_type_traits(k->type)->to_float;
        for (int64_t ir = ir0; ir < ir1; ) {
            // tiles of up to four rows that follow one another and read the
            // same K/V head, as many as FA_TILE_ROWS rows
            struct fa_tile tiles[FA_TILE_ROWS];
            int nt = 0, rows = 0;
            while (ir < ir1 && rows + 4 <= FA_TILE_ROWS) {
                struct fa_tile * t = &tiles[nt++];
                struct fa_row rr;
                fa_row_get(&fr, ir, &rr);
                t->R = 0;
                t->kbase = rr.kbase; t->vbase = rr.vbase;
                for (;;) {
                    t->q[t->R] = rr.q; t->m[t->R] = rr.m; t->out[t->R] = rr.out; t->slope[t->R] = rr.slope;
                    t->R++; ir++;
                    if (t->R == 4 || ir >= ir1) break;
                    fa_row_get(&fr, ir, &rr);
                    if (rr.kbase != t->kbase || rr.vbase != t->vbase) break;
                }
                t->DK = DK; t->DV = DV; t->n_kv = n_kv;
                t->kstride = k->nb[1]; t->vstride = v->nb[1];
                t->kbytes = krow; t->vbytes = vrow;
                t->kk = kkind; t->vk = vkind;
                t->k_to_f32 = kq8 ? NULL : k_to_f32; t->v_to_f32 = vq8 ? NULL : v_to_f32;
                t->k_conv = k_conv;
                t->kbuf = kbuf; t->vbuf = vbuf;
                t->scale = scale; t->softcap = softcap;
                t->acc = acc + (int64_t) rows * DV;
                rows += t->R;
            }
            fa_tiles(tiles, nt, block, k->nb[2] < k->nb[1]);
        }
        return;
    }
#endif

    // one row at a time, one key at a time (the scalar and NEON levels)
    const fa_dot_t dot = k16 ? fa_dot_f16_s : fa_dot_f32_s;
    const fa_mad_t mad = v16 ? fa_mad_f16_s : fa_mad_f32_s;
    for (int64_t ir = ir0; ir < ir1; ir++) {
        struct fa_row r0;
        fa_row_get(&fr, ir, &r0);
        for (int64_t d = 0; d < DV; d++) acc[d] = 0.0f;
        float S = 0.0f;       // running sum of exp(s - M)
        float M = -INFINITY;  // running maximum

        for (int64_t ic = 0; ic < n_kv; ic++) {
            if (ic + FA_PF < n_kv) fa_prefetch(r0.kbase + (ic + FA_PF)*k->nb[1], krow, r0.vbase + (ic + FA_PF)*v->nb[1], vrow);
            const float mv = r0.m ? r0.slope * lm_ggml_table_f32_f16[r0.m[ic]] : 0.0f;
            if (mv == -INFINITY) continue;

            const char * kr = r0.kbase + ic*k->nb[1];
            float s;
            if (k_to_f32) { k_to_f32(kr, kbuf, DK); s = fa_dot_f32_s(DK, kbuf, r0.q); }
            else          { s = dot(DK, kr, r0.q); }
            s *= scale;
            if (softcap != 0.0f) s = softcap * tanhf(s);
            s += mv;

            float ms = 1.0f; // rescale of the old accumulator when the maximum grows
            float vs = 1.0f; // weight of this row: exp(s - M)
            if (s > M) {
                const float Mold = M;
                M = s;
                if (Mold != -INFINITY) {
                    ms = expf(Mold - M);
                    fa_scale_s(DV, acc, ms);
                } else {
                    ms = 0.0f; // acc and S are still zero
                }
            } else {
                vs = expf(s - M);
            }

            const char * vr = r0.vbase + ic*v->nb[1];
            if (v_to_f32) { v_to_f32(vr, vbuf, DV); fa_mad_f32_s(DV, acc, vbuf, vs); }
            else          { mad(DV, acc, vr, vs); }
            S = S*ms + vs;
        }

        // as in ggml, a fully masked row gives 0 * inf = NaN
        const float S_inv = 1.0f / S;
        for (int64_t d = 0; d < DV; d++) r0.out[d] = acc[d] * S_inv;
    }
}

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_flash_attn_ext = { .compute = lm_compute_flash_attn_ext, .work_size = lm_wsize_flash_attn_ext };
