// mm-quant-vnni.c - AVX512_VNNI forms of the quantized integer dots (x86-64
// only), taken at the AVX-512 level where the CPU has VNNI (lm_cpu_vnni).
// Each one gives its AVX2 counterpart's bits (mm-quant-x86.c) for every
// input: the same exact integer sums (see the VNNI notes of mm-quant-x86.h),
// the sign trick kept where the AVX2 kernel has it (wrap included), and the
// AVX2 kernel's float operations in its order. Types without a form here
// keep their AVX2 kernels at this level.
#include "mm-kernels.h"

#if defined(LM_X86)
#include "ggml-common.h"
#include "ggml-quants.h"
#include "ops-vec.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "mm-quant-x86.h"

#define H2F(x) _cvtsh_ss(x)
#define LD(p)  _mm256_loadu_si256((const __m256i *)(p))

#define VD_ARGS int n, float * restrict s, size_t bs, const void * restrict vx, size_t bx, const void * restrict vy, size_t by, int nrc
#define VD_UNUSED (void) bs; (void) bx; (void) by; (void) nrc

// ---------------------------------------------------------------- 1 row (the type traits' vec_dot)
//
// The AVX2 kernel sums even blocks into one accumulator of 8 lanes and odd
// ones into another; here a block pair is one zmm, the even block in lanes
// 0-7 and the odd one in 8-15, so one FMA does the AVX2 kernel's two. An
// odd last block goes to the even accumulator, as there.

// the sign trick of dot_s8 on a ymm: vpsignb exists there
LM_TARGET_VNNI static inline __m256i dot_s8_ymm(__m256i w, __m256i y) {
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(w, w), _mm256_sign_epi8(y, w));
}

// q8_0: clamped to -127 as blk_q8_0 does
LM_TARGET_VNNI static inline __m256i w1_q8_0(const block_q8_0 * x) {
    return _mm256_max_epi8(LD(x->qs), _mm256_set1_epi8(-127));
}
LM_TARGET_VNNI static inline __m512i w2_q8_0(const block_q8_0 * x) {
    return _mm512_max_epi8(ld_pair(x[0].qs, x[1].qs), _mm512_set1_epi8(-127));
}

// q4_0: nibbles32 - 8 of each block; the pair's 16-byte fields go to lanes
// 0, 1 (block 0) and 2, 3 (block 1), the odd lanes shifted by 4
LM_TARGET_VNNI static inline __m256i w1_q4_0(const block_q4_0 * x) {
    return _mm256_sub_epi8(nibbles32(x->qs), _mm256_set1_epi8(8));
}
LM_TARGET_VNNI static inline __m512i w2_q4_0(const block_q4_0 * x) {
    const __m256i q = _mm256_loadu2_m128i((const __m128i *) x[1].qs, (const __m128i *) x[0].qs);
    const __m512i d = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3), _mm512_castsi256_si512(q));
    const __m512i v = _mm512_and_si512(_mm512_srlv_epi64(d, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)), _mm512_set1_epi8(0xF));
    return _mm512_sub_epi8(v, _mm512_set1_epi8(8));
}

// the AVX2 kernel ends with hsum(a0 + a1) + (m0 + m1), its min sums being
// +0 for these types: the + 0.0f is kept (it turns a -0 sum into +0)
#define DOT32_VNNI(name, XT, w1, w2)                                                                     \
LM_TARGET_VNNI static void name(VD_ARGS) {                                                               \
    VD_UNUSED;                                                                                           \
    const XT * x = vx; const block_q8_0 * y = vy;                                                        \
    const int nb = n / 32;                                                                               \
    __m512 a = _mm512_setzero_ps();                                                                      \
    int i = 0;                                                                                           \
    for (; i + 1 < nb; i += 2) {                                                                         \
        const __m512i p = dot_s8_zmm(w2(x + i), ld_pair(y[i].qs, y[i + 1].qs));                          \
        const __m512 d = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(H2F(x[i].d) * H2F(y[i].d))), \
                                            _mm256_set1_ps(H2F(x[i + 1].d) * H2F(y[i + 1].d)), 1);      \
        a = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), a);                                                \
    }                                                                                                    \
    __m256 a0 = _mm512_castps512_ps256(a);                                                               \
    const __m256 a1 = _mm512_extractf32x8_ps(a, 1);                                                      \
    if (i < nb) {                                                                                        \
        const __m256i p = dot_s8_ymm(w1(x + i), LD(y[i].qs));                                            \
        a0 = _mm256_fmadd_ps(_mm256_set1_ps(H2F(x[i].d) * H2F(y[i].d)), _mm256_cvtepi32_ps(p), a0);      \
    }                                                                                                    \
    *s = lm_hsum_avx2(_mm256_add_ps(a0, a1)) + 0.0f;                                                     \
}
DOT32_VNNI(vd_q8_0_q8_0_vnni, block_q8_0, w1_q8_0, w2_q8_0)
DOT32_VNNI(vd_q4_0_q8_0_vnni, block_q4_0, w1_q4_0, w2_q4_0)

// ---------------------------------------------------------------- 8-row mat-vec (mm_qmv_fn)

// q8_0 (QMV_32 with the raw quants, -128 not clamped): rows r and r+4 share a zmm
LM_TARGET_VNNI static void qmv_q8_0_vnni(int64_t nb, const char * const * rows, const void * vy, float * acc, float * accm,
                                         const char * pf) {
    (void) accm; // no mins: it stays as it is
    const block_q8_0 * y = vy;
    __m256 a = _mm256_loadu_ps(acc);
    for (int64_t i = 0; i < nb; i++) {
        QMV_PF(pf, i, block_q8_0)
        const char * bl[8];
        for (int r = 0; r < 8; r++) bl[r] = rows[r] + i * sizeof(block_q8_0);
        const __m512i yv = _mm512_broadcast_i64x4(LD(y[i].qs));
        const size_t qs = offsetof(block_q8_0, qs);
        __m512i p[4];
        for (int r = 0; r < 4; r++) p[r] = dot_s8_zmm(ld_pair(bl[r] + qs, bl[r + 4] + qs), yv);
        const __m256 d = _mm256_mul_ps(qmv_f16(bl, offsetof(block_q8_0, d)), _mm256_set1_ps(H2F(y[i].d)));
        a = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(reduce_pairs(p)), a);
    }
    _mm256_storeu_ps(acc, a);
}

// q4_0 (QMV_P: the exact dot of the quants minus 8). Four rows' 16 bytes of
// quants fill a zmm, row r+k in lane k; its low nibbles meet the
// activations' first 16 bytes in every lane, the high ones the last 16. The
// 8 * sum(y) of the offset starts every row's sums (one per 4 bytes), so
// each lane holds (q - 8) . y over its 4 + 4 quants.
LM_TARGET_VNNI static inline __m512i ld_quad16(const char * const * bl, size_t off) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(bl[0] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(bl[1] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(bl[2] + off)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(bl[3] + off)), 3);
}

// a: rows 0-3 (row k in lane k), b: rows 4-7 -> the 8 row sums in row order
LM_TARGET_VNNI static inline __m256i reduce_quads(__m512i a, __m512i b) {
    // lane k: half sums of rows k, 4+k, k, 4+k
    const __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    const __m512i v = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, (_MM_PERM_ENUM)(2 | 3 << 2 | 0 << 4 | 1 << 6)));
    return _mm512_castsi512_si256(_mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0), v));
}

LM_TARGET_VNNI static void qmv_q4_0_vnni(int64_t nb, const char * const * rows, const void * vy, float * acc, float * accm,
                                         const char * pf) {
    (void) accm;
    const block_q8_0 * y = vy;
    const __m512i m4 = _mm512_set1_epi8(0xF), eight = _mm512_set1_epi8(8);
    const size_t qs = offsetof(block_q4_0, qs);
    __m256 a = _mm256_loadu_ps(acc);
    for (int64_t i = 0; i < nb; i++) {
        QMV_PF(pf, i, block_q4_0)
        const char * bl[8];
        for (int r = 0; r < 8; r++) bl[r] = rows[r] + i * sizeof(block_q4_0);
        const __m512i ylo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) y[i].qs));
        const __m512i yhi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(y[i].qs + 16)));
        const __m512i off = _mm512_sub_epi32(_mm512_setzero_si512(),
                                             _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, ylo), eight, yhi));
        const __m512i q0 = ld_quad16(bl, qs), q1 = ld_quad16(bl + 4, qs);
        const __m512i s0 = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(off, _mm512_and_si512(q0, m4), ylo),
                                               _mm512_and_si512(_mm512_srli_epi16(q0, 4), m4), yhi);
        const __m512i s1 = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(off, _mm512_and_si512(q1, m4), ylo),
                                               _mm512_and_si512(_mm512_srli_epi16(q1, 4), m4), yhi);
        const __m256 d = _mm256_mul_ps(qmv_f16(bl, offsetof(block_q4_0, d)), _mm256_set1_ps(H2F(y[i].d)));
        a = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(reduce_quads(s0, s1)), a);
    }
    _mm256_storeu_ps(acc, a);
}

// ---------------------------------------------------------------- lookup

lm_ggml_vec_dot_t mm_quant_dot_vnni(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0: return vd_q4_0_q8_0_vnni;
        case LM_GGML_TYPE_Q8_0: return vd_q8_0_q8_0_vnni;
        default:                return mm_quant_dot_k_vnni(type); // mm-quant-x86.c
    }
}

mm_qmv_fn mm_qmv_vnni(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0: return qmv_q4_0_vnni;
        case LM_GGML_TYPE_Q8_0: return qmv_q8_0_vnni;
        default:                return mm_qmv_k_vnni(type); // mm-quant-x86.c
    }
}
#else
typedef int mm_quant_vnni_unused; // ISO C forbids an empty translation unit
#endif
