// mm-quant-vnni.c - AVX512_VNNI forms of the quantized integer dots (x86-64
// only), taken at the AVX-512 level where the CPU has VNNI (lm_cpu_vnni).
// Each one gives its AVX2 counterpart's bits (mm-quant-x86.c) for every
// input: the same exact integer sums (see the VNNI notes of mm-quant-x86.h),
// the sign trick kept where the AVX2 kernel has it (wrap included), and the
// AVX2 kernel's float operations in its order. Types without a form here
// keep their AVX2 kernels at this level.
#include "mm-kernels.h"

#if defined(LM_X86)
#include "../quant/ggml-common.h"
#include "../quant/ggml-quants.h"
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

// nibbles32 of two 16-byte fields: a's in the low half, b's in the high one
// (a's 16 bytes to lanes 0, 1 and b's to 2, 3, the odd lanes shifted by 4)
LM_TARGET_VNNI static inline __m512i nibbles32_pair(const uint8_t * a, const uint8_t * b) {
    const __m256i q = _mm256_loadu2_m128i((const __m128i *) b, (const __m128i *) a);
    const __m512i d = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3), _mm512_castsi256_si512(q));
    return _mm512_and_si512(_mm512_srlv_epi64(d, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)), _mm512_set1_epi8(0xF));
}

// q4_0: nibbles32 - 8 of each block
LM_TARGET_VNNI static inline __m256i w1_q4_0(const block_q4_0 * x) {
    return _mm256_sub_epi8(nibbles32(x->qs), _mm256_set1_epi8(8));
}
LM_TARGET_VNNI static inline __m512i w2_q4_0(const block_q4_0 * x) {
    return _mm512_sub_epi8(nibbles32_pair(x[0].qs, x[1].qs), _mm512_set1_epi8(8));
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

// The signed 32-quant types (QMV_32: the sign trick, q8_0's -128 not
// clamped): rows r and r+4 share a zmm. W decodes the quants of two rows.
#define QMV_32_VNNI(name, XT, W)                                                                         \
LM_TARGET_VNNI static void name(int64_t nb, const char * const * rows, const void * vy, float * acc, float * accm, \
                                const char * pf) {                                                       \
    (void) accm; /* no mins: it stays as it is */                                                        \
    const block_q8_0 * y = vy;                                                                           \
    __m256 a = _mm256_loadu_ps(acc);                                                                     \
    for (int64_t i = 0; i < nb; i++) {                                                                   \
        QMV_PF(pf, i, XT)                                                                                \
        const char * bl[8];                                                                              \
        for (int r = 0; r < 8; r++) bl[r] = rows[r] + i * sizeof(XT);                                    \
        const __m512i yv = _mm512_broadcast_i64x4(LD(y[i].qs));                                          \
        __m512i p[4];                                                                                    \
        for (int r = 0; r < 4; r++) p[r] = dot_s8_zmm(W((const XT *) bl[r], (const XT *) bl[r + 4]), yv); \
        const __m256 d = _mm256_mul_ps(qmv_f16(bl, offsetof(XT, d)), _mm256_set1_ps(H2F(y[i].d)));      \
        a = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(reduce_pairs(p)), a);                                  \
    }                                                                                                    \
    _mm256_storeu_ps(acc, a);                                                                            \
}
LM_TARGET_VNNI static inline __m512i wp_q8_0(const block_q8_0 * a, const block_q8_0 * b) { return ld_pair(a->qs, b->qs); }
LM_TARGET_VNNI static inline __m512i wp_iq4_nl(const block_iq4_nl * a, const block_iq4_nl * b) {
    const __m512i tbl = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl));
    return _mm512_shuffle_epi8(tbl, nibbles32_pair(a->qs, b->qs));
}
QMV_32_VNNI(qmv_q8_0_vnni,   block_q8_0,   wp_q8_0)
QMV_32_VNNI(qmv_iq4_nl_vnni, block_iq4_nl, wp_iq4_nl)

// q4_0, q4_1, q5_0, q5_1 (QMV_P: the exact dot of the quants minus their
// offset). Four rows' 16 bytes of quants fill a zmm, row r+k in lane k; its
// low nibbles meet the activations' first 16 bytes in every lane, the high
// ones the last 16. q5's fifth bits, 16 per nibble half and row, make a
// 64-bit mask each that sets bit 4 of those bytes. OFF * sum(y) starts every
// row's sums (one per 4 bytes), so each lane holds (q - OFF) . y over its
// 4 + 4 quants; the float steps are QMV_P's.
LM_TARGET_VNNI static inline __m512i ld_quad16(const char * const * bl, size_t off) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(bl[0] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(bl[1] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(bl[2] + off)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(bl[3] + off)), 3);
}

// the fifth bits of rows bl[0..3] for the low (half 0) or high (half 1)
// nibbles: bit 16k + j for byte j of lane k
static inline __mmask64 q5_mask(const char * const * bl, size_t qh, int half) {
    uint64_t m = 0;
    for (int k = 0; k < 4; k++) m |= (uint64_t)((ld32(bl[k] + qh) >> (16 * half)) & 0xFFFF) << (16 * k);
    return (__mmask64) m;
}

// a: rows 0-3 (row k in lane k), b: rows 4-7 -> the 8 row sums in row order
LM_TARGET_VNNI static inline __m256i reduce_quads(__m512i a, __m512i b) {
    // lane k: half sums of rows k, 4+k, k, 4+k
    const __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    const __m512i v = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, (_MM_PERM_ENUM)(2 | 3 << 2 | 0 << 4 | 1 << 6)));
    return _mm512_castsi512_si256(_mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0), v));
}

LM_TARGET_VNNI static inline __attribute__((always_inline)) __m512i qmv_quad(const char * const * bl, size_t qs, ptrdiff_t qh,
                                                                            __m512i off, __m512i ylo, __m512i yhi) {
    const __m512i m4 = _mm512_set1_epi8(0xF), b4 = _mm512_set1_epi8(0x10);
    const __m512i q = ld_quad16(bl, qs);
    __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
    if (qh >= 0) {
        lo = _mm512_mask_add_epi8(lo, q5_mask(bl, (size_t) qh, 0), lo, b4); // nibbles: + 16 is | 16
        hi = _mm512_mask_add_epi8(hi, q5_mask(bl, (size_t) qh, 1), hi, b4);
    }
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(off, lo, ylo), hi, yhi);
}

#define QMV_P_VNNI(name, XT, YT, QH, OFF, MIN)                                                           \
LM_TARGET_VNNI static void name(int64_t nb, const char * const * rows, const void * vy, float * acc, float * accm, \
                                const char * pf) {                                                       \
    const YT * y = vy;                                                                                   \
    const size_t qs = offsetof(XT, qs);                                                                  \
    __m256 a = _mm256_loadu_ps(acc), am = _mm256_loadu_ps(accm);                                         \
    for (int64_t i = 0; i < nb; i++) {                                                                   \
        QMV_PF(pf, i, XT)                                                                                \
        const char * bl[8];                                                                              \
        for (int r = 0; r < 8; r++) bl[r] = rows[r] + i * sizeof(XT);                                    \
        const __m512i ylo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) y[i].qs));         \
        const __m512i yhi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(y[i].qs + 16)));    \
        __m512i off = _mm512_setzero_si512();                                                            \
        if (OFF) {                                                                                       \
            const __m512i o = _mm512_set1_epi8(OFF);                                                     \
            off = _mm512_sub_epi32(off, _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(off, o, ylo), o, yhi));  \
        }                                                                                                \
        const __m256i si = reduce_quads(qmv_quad(bl, qs, QH, off, ylo, yhi), qmv_quad(bl + 4, qs, QH, off, ylo, yhi)); \
        QMV_P_ACC(XT, MIN, bl, si)                                                                       \
    }                                                                                                    \
    _mm256_storeu_ps(acc, a);                                                                            \
    _mm256_storeu_ps(accm, am);                                                                          \
}
QMV_P_VNNI(qmv_q4_0_vnni, block_q4_0, block_q8_0, -1, 8, 0)
QMV_P_VNNI(qmv_q4_1_vnni, block_q4_1, block_q8_1, -1, 0, 1)
QMV_P_VNNI(qmv_q5_0_vnni, block_q5_0, block_q8_0, (ptrdiff_t) offsetof(block_q5_0, qh), 16, 0)
QMV_P_VNNI(qmv_q5_1_vnni, block_q5_1, block_q8_1, (ptrdiff_t) offsetof(block_q5_1, qh), 0, 1)

// ---------------------------------------------------------------- repacked q8_0 (repack.c)
//
// A group's block i is 272 contiguous bytes: the 8 rows' scales, then the
// quants of rows (0,4), (1,5), (2,6), (3,7) in four 64-byte pairs, the pairs
// qmv_q8_0_vnni builds with inserts. The integer dots are the same exact
// sums, taken another way: the quants + 128 (xor 0x80: unsigned) dotted with
// the activations, minus 128 times the activations' 4-byte sums (per lane;
// |sums| < 2^24, no wrap). The float steps are qmv_q8_0_vnni's, in its order.
LM_TARGET_VNNI static void qmv_q8_0_rp_group(int64_t nb, const char * g, const block_q8_0 * y, float * d,
                                           const char * pf) {
    const __m512i x80 = _mm512_set1_epi8((char) 0x80);
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += 8 * sizeof(block_q8_0)) {
        QMV_PF(pf, i, block_q8_0) // a group block is 8 plain blocks' bytes
        const __m512i yv = _mm512_broadcast_i64x4(LD(y[i].qs));
        const __m512i nc = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), x80, yv));
        __m512i p[4];
        for (int r = 0; r < 4; r++) {
            p[r] = _mm512_dpbusd_epi32(nc, _mm512_xor_si512(_mm512_loadu_si512(g + 16 + 64 * r), x80), yv);
        }
        const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g));
        a = _mm256_fmadd_ps(_mm256_mul_ps(dx, _mm256_set1_ps(H2F(y[i].d))), _mm256_cvtepi32_ps(reduce_pairs(p)), a);
    }
    _mm256_storeu_ps(d, a);
}

// ---------------------------------------------------------------- repacked q4_0 and iq4_nl (repack.c)
//
// A group's block i is 144 bytes: the 8 rows' scales, then rows 0-3 and 4-7
// in two 64-byte loads, row k's 16 bytes of quants in lane k (the vectors
// qmv_quad builds with inserts). q4_0's sums are qmv_q4_0_vnni's. iq4_nl's
// values are looked up biased by 128 (xor 0x80: unsigned) and 128 times the
// activations' sums taken back, which is the sum of qmv_iq4_nl_vnni's sign
// trick for activations in [-127, 127], the q8_0 quantizer's range (as in
// the repacked q8_0 above). The float steps are those kernels', in their order.
// The activations' side of the bias depends on the column alone: it is made
// once per call for all the groups (QMV_RP_YS).

// minus the bias (an unsigned byte: 8, or 128 for iq4_nl) times the sums of
// y's 4 + 4 quants of each lane, the same in the 4 lanes
LM_TARGET_VNNI static inline __m512i q4_rp_off(const block_q8_0 * y, bool nl) {
    const __m512i o = _mm512_set1_epi8(nl ? (char) 0x80 : 8);
    const __m512i ylo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) y->qs));
    const __m512i yhi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(y->qs + 16)));
    return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), o, ylo), o, yhi));
}
LM_TARGET_VNNI static void q4_0_rp_fill(int64_t nb, const void * vy, __m128i * ys) {
    const block_q8_0 * y = vy;
    for (int64_t i = 0; i < nb; i++) ys[i] = _mm512_castsi512_si128(q4_rp_off(y + i, false));
}
LM_TARGET_VNNI static void iq4_nl_rp_fill(int64_t nb, const void * vy, __m128i * ys) {
    const block_q8_0 * y = vy;
    for (int64_t i = 0; i < nb; i++) ys[i] = _mm512_castsi512_si128(q4_rp_off(y + i, true));
}
LM_TARGET_VNNI static inline __attribute__((always_inline)) void qmv_q4_rp_group(int64_t nb, const char * g, const block_q8_0 * y,
                                                                                float * d, const char * pf, bool nl,
                                                                                const __m128i * ys) {
    const size_t gb = 8 * sizeof(block_q4_0);
    const __m512i m4 = _mm512_set1_epi8(0xF);
    const __m512i tbl = _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl)),
                                         _mm512_set1_epi8((char) 0x80));
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += gb) {
        QMV_PF(pf, i, block_q4_0)
        const __m512i ylo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *) y[i].qs));
        const __m512i yhi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(y[i].qs + 16)));
        const __m512i off = ys ? _mm512_broadcast_i32x4(ys[i]) : q4_rp_off(y + i, nl);
        __m512i q[2];
        for (int h = 0; h < 2; h++) {
            const __m512i v = _mm512_loadu_si512(g + 16 + 64 * h);
            __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
            if (nl) {
                lo = _mm512_shuffle_epi8(tbl, lo);
                hi = _mm512_shuffle_epi8(tbl, hi);
            }
            q[h] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(off, lo, ylo), hi, yhi);
        }
        const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g));
        a = _mm256_fmadd_ps(_mm256_mul_ps(dx, _mm256_set1_ps(H2F(y[i].d))), _mm256_cvtepi32_ps(reduce_quads(q[0], q[1])), a);
    }
    _mm256_storeu_ps(d, a);
}

LM_TARGET_VNNI static void qmv_q4_0_rp_group(int64_t nb, const char * g, const block_q8_0 * y, float * d, const char * pf,
                                           const __m128i * ys) {
    qmv_q4_rp_group(nb, g, y, d, pf, false, ys);
}
LM_TARGET_VNNI static void qmv_iq4_nl_rp_group(int64_t nb, const char * g, const block_q8_0 * y, float * d, const char * pf,
                                             const __m128i * ys) {
    qmv_q4_rp_group(nb, g, y, d, pf, true, ys);
}

// ---------------------------------------------------------------- repacked q4_K (repack.c)
//
// The layout qmv_q4_K_rp_group_avx2 reads (mm-quant-x86.c): a step's 64
// bytes at 128 + 256 j + 64 p are rows p and p + 4 (pair order), so one
// zmm does that kernel's work on two rows. A row's scale pair (s_2j,
// s_2j+1) is a byte shuffle of the scales, whose 128-bit lanes 0-1 hold
// rows 0-3 and lanes 2-3 rows 4-7: the low half gets row p's, the high half
// row p + 4's. vpdpwssd is that kernel's madd and add. Integer sums are
// exact and the float steps are its, so the bits are too.
LM_TARGET_VNNI static void qmv_q4_K_rp_group(int64_t nb, const char * g, const block_q8_K * y, float * d,
                                           const char * pf) {
    const __m512i m4 = _mm512_set1_epi8(0xF);
    __m256 a = _mm256_setzero_ps(), am = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += 8 * sizeof(block_q4_K)) {
        QMV_PF(pf, i, block_q4_K)
        __m256i sc03, sc47;
        const __m256i ms = q4k_rp_scales_mins(g, y + i, &sc03, &sc47);
        const __m512i z03 = _mm512_shuffle_i64x2(_mm512_castsi256_si512(sc03), _mm512_castsi256_si512(sc03), 0x50);
        const __m512i z47 = _mm512_shuffle_i64x2(_mm512_castsi256_si512(sc47), _mm512_castsi256_si512(sc47), 0x50);
        __m512i c[4];
        for (int p = 0; p < 4; p++) c[p] = _mm512_setzero_si512();
#pragma GCC unroll 4 // the shuffles' selectors then are constants
        for (int j = 0; j < 4; j++) {
            const __m512i ya = _mm512_broadcast_i64x4(LD(y[i].qs + 64 * j));
            const __m512i yb = _mm512_broadcast_i64x4(LD(y[i].qs + 64 * j + 32));
            const __m512i y0 = _mm512_unpacklo_epi16(ya, yb), y1 = _mm512_unpackhi_epi16(ya, yb);
            for (int p = 0; p < 4; p++) {
                const __m512i q = _mm512_loadu_si512(g + 128 + 256 * j + 64 * p);
                const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
                const __m512i s = _mm512_add_epi16(_mm512_maddubs_epi16(lo, y0), _mm512_maddubs_epi16(hi, y1));
                // bytes b and b + 1 of each lane, zero-extended to the two 16-bit halves of each dword
                const unsigned b = 4 * (unsigned) p + 2 * (unsigned)(j & 1);
                const __m512i sel = _mm512_set1_epi32((int)(0x80008000u | (b + 1) << 16 | b));
                c[p] = _mm512_dpwssd_epi32(c[p], s, _mm512_shuffle_epi8(j < 2 ? z03 : z47, sel));
            }
        }
        q4k_rp_acc(g, y[i].d, reduce_pairs(c), ms, &a, &am);
    }
    _mm256_storeu_ps(d, _mm256_sub_ps(a, am));
}

// ---------------------------------------------------------------- repacked q6_K (repack.c)
//
// The 8 d, then each row's block without its d (ql, qh and scales at their
// plain offsets, as qmv_q6_K_rp_group_avx2 reads it). One zmm holds 64
// quants of a row, kd_q6_K's vectors t and t + 1 of a half: ql's 64 bytes
// give the low 4 bits of both pairs, (t, t + 1) = (0, 1) and (2, 3), and
// the half's 32 bytes of qh, in both halves of a zmm, their high 2 bits by
// per-half shifts. A 128-bit lane is one sub-block of 16, whose scale a
// word permute puts in each of its words. The bias is kd_q6_K's (-32
// through the block sums). Integer sums are exact and the float steps are
// qmv_q6_K_rp_group_avx2's, so the bits are too.
LM_TARGET_VNNI static void qmv_q6_K_rp_group(int64_t nb, const char * g, const block_q8_K * y, float * d,
                                           const char * pf) {
    const __m512i m4 = _mm512_set1_epi8(0xF), m30 = _mm512_set1_epi8(0x30);
    // qh bits 0-1 and 2-3 to bits 4-5 (quants 0-63 of a half); bits 4-5 and 6-7 (64-127)
    const __m512i up = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i dn = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    // word w of sub-block pair (h, t): scale 8 h + 4 t + w / 8
    __m512i sidx[4];
    for (int k = 0; k < 4; k++) {
        sidx[k] = _mm512_add_epi16(_mm512_set1_epi16((short)(4 * k)),
                                   _mm512_srli_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                                                      15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 3));
    }
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += 8 * sizeof(block_q6_K)) {
        QMV_PF(pf, i, block_q6_K)
        const __m512i y0 = _mm512_loadu_si512(y[i].qs), y1 = _mm512_loadu_si512(y[i].qs + 64);
        const __m512i y2 = _mm512_loadu_si512(y[i].qs + 128), y3 = _mm512_loadu_si512(y[i].qs + 192);
        const __m256i bsum = _mm256_loadu_si256((const __m256i *) y[i].bsums);
        __m512i c[8];
        for (int r = 0; r < 8; r++) {
            const block_q6_K * x = (const block_q6_K *)(g + 16 + 208 * r);
            const __m256i s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) x->scales));
            const __m512i sz = _mm512_zextsi256_si512(s16);
            __m512i ai = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(),
                                                                 _mm256_slli_epi32(_mm256_madd_epi16(s16, bsum), 5)));
            for (int h = 0; h < 2; h++) {
                const __m512i l = _mm512_loadu_si512(x->ql + 64 * h);
                const __m512i hb = _mm512_broadcast_i64x4(LD(x->qh + 32 * h));
                const __m512i v01 = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_sllv_epi16(hb, up), m30));
                const __m512i v23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
                                                    _mm512_and_si512(_mm512_srlv_epi16(hb, dn), m30));
                ai = _mm512_dpwssd_epi32(ai, _mm512_maddubs_epi16(v01, h ? y2 : y0), _mm512_permutexvar_epi16(sidx[2 * h], sz));
                ai = _mm512_dpwssd_epi32(ai, _mm512_maddubs_epi16(v23, h ? y3 : y1), _mm512_permutexvar_epi16(sidx[2 * h + 1], sz));
            }
            c[r] = ai;
        }
        // rows k and k + 4 folded to 8 lanes each, in the halves reduce_pairs takes
        __m512i p[4];
        for (int k = 0; k < 4; k++) {
            p[k] = _mm512_add_epi32(_mm512_shuffle_i64x2(c[k], c[k + 4], 0x44), _mm512_shuffle_i64x2(c[k], c[k + 4], 0xEE));
        }
        const __m256 dy = _mm256_set1_ps(y[i].d);
        a = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g)), dy),
                            _mm256_cvtepi32_ps(reduce_pairs(p)), a);
    }
    _mm256_storeu_ps(d, a);
}

QMV_RP(qmv_q8_0_rp,      qmv_q8_0_rp_group, 32, LM_TARGET_VNNI, RP_PF_BYTES)
QMV_RP_YS(qmv_q4_0_rp,   qmv_q4_0_rp_group, 32, LM_TARGET_VNNI, __m128i, q4_0_rp_fill)
QMV_RP_YS(qmv_iq4_nl_rp, qmv_iq4_nl_rp_group, 32, LM_TARGET_VNNI, __m128i, iq4_nl_rp_fill)
QMV_RP(qmv_q4_K_rp,   qmv_q4_K_rp_group, 256, LM_TARGET_VNNI, 0)
QMV_RP(qmv_q6_K_rp,   qmv_q6_K_rp_group, 256, LM_TARGET_VNNI, 0)

mm_qmv_rp_fn mm_qmv_repacked_vnni(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q8_0:   return qmv_q8_0_rp;
        case LM_GGML_TYPE_Q4_0:   return qmv_q4_0_rp;
        case LM_GGML_TYPE_IQ4_NL: return qmv_iq4_nl_rp;
        case LM_GGML_TYPE_Q4_K:   return qmv_q4_K_rp;
        case LM_GGML_TYPE_Q6_K:   return qmv_q6_K_rp;
        default:                  return NULL;
    }
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
        case LM_GGML_TYPE_Q4_0:   return qmv_q4_0_vnni;
        case LM_GGML_TYPE_Q4_1:   return qmv_q4_1_vnni;
        case LM_GGML_TYPE_Q5_0:   return qmv_q5_0_vnni;
        case LM_GGML_TYPE_Q5_1:   return qmv_q5_1_vnni;
        case LM_GGML_TYPE_Q8_0:   return qmv_q8_0_vnni;
        case LM_GGML_TYPE_IQ4_NL: return qmv_iq4_nl_vnni;
        default:                  return mm_qmv_k_vnni(type); // mm-quant-x86.c
    }
}
#else
typedef int mm_quant_vnni_unused; // ISO C forbids an empty translation unit
#endif
