// mm-quant-x86.c - AVX2 integer dot products of quantized weight blocks
// against the activation formats (q8_0, q8_1, q8_K), x86-64 only. Each kernel
// computes what its scalar counterpart in mm-quant.c computes; only the float
// summation order differs.
//
// Unsigned quants go straight into maddubs (u8 x s8); signed ones either use
// the sign trick of dot_s8 or are biased to unsigned, the bias being taken
// back through the activation block sums (q8_K bsums).
#include "mm-kernels.h"

#if defined(LM_X86)
#include "../quant/ggml-common.h"
#include "../quant/ggml-quants.h"
#include "ops-vec.h"
#include "mm-quant-x86.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

// F16C (part of the AVX2 target): exact like LM_GGML_FP16_TO_FP32, without its branches
#define H2F(x) _cvtsh_ss(x)

#define VD_ARGS int n, float * restrict s, size_t bs, const void * restrict vx, size_t bx, const void * restrict vy, size_t by, int nrc
#define VD_UNUSED (void) bs; (void) bx; (void) by; (void) nrc

// ---------------------------------------------------------------- helpers

// signed x signed bytes -> 8 int32 sums (x must not hold -128)
LM_TARGET_AVX2 static inline __m256i dot_s8(__m256i xv, __m256i yv) {
    const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(xv, xv), _mm256_sign_epi8(yv, xv));
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// unsigned x signed bytes -> 8 int32 sums
LM_TARGET_AVX2 static inline __m256i dot_u8(__m256i xv, __m256i yv) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(xv, yv), _mm256_set1_epi16(1));
}

// int16 element e of v (the same in both lanes) in every position of its lane
LM_TARGET_AVX2 static inline __m256i bcast16(__m256i v, int e) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16((short)((2 * e) | (2 * e + 1) << 8)));
}

// The 16-scale K-quants (q2_K, q3_K) walk their block in 8 steps of 32
// quants: step t covers sub-blocks 2t (first 16 quants) and 2t+1. From 16
// int8 scales this builds int16 vectors whose lane 0 holds the even
// scales and lane 1 the odd ones, so step t takes its pair with one shuffle.
LM_TARGET_AVX2 static inline __m256i scales16_by_lane(__m128i sc8) {
    const __m128i even_odd = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, even_odd));
}

LM_TARGET_AVX2 static inline __m256i scale_pair(__m256i s16, int t) {
    return bcast16(s16, t);
}

// ---------------------------------------------------------------- 32-quant blocks
//
// One block is a single dot of 32 bytes scaled by d_x*d_y. The kernels share
// one loop that alternates two accumulators, so consecutive blocks do not
// wait on each other's FMA (it helps q8_0; the others are bound by their
// uops per block). A block function adds its block
// into acc and, for the types with a min, m*s into *ms.

#define DOT32_KERNEL(name, XT, YT, blk)                                                   \
LM_TARGET_AVX2 static void name(VD_ARGS) {                                                \
    VD_UNUSED;                                                                            \
    const XT * x = vx; const YT * y = vy;                                                 \
    const int nb = n / 32;                                                                \
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();                            \
    float m0 = 0.0f, m1 = 0.0f;                                                           \
    int i = 0;                                                                            \
    for (; i + 1 < nb; i += 2) {                                                          \
        a0 = blk(x + i, y + i, a0, &m0);                                                  \
        a1 = blk(x + i + 1, y + i + 1, a1, &m1);                                          \
    }                                                                                     \
    if (i < nb) a0 = blk(x + i, y + i, a0, &m0);                                          \
    *s = lm_hsum_avx2(_mm256_add_ps(a0, a1)) + (m0 + m1);                                        \
}

LM_TARGET_AVX2 static inline __m256 fma_block(float d, __m256i isum, __m256 acc) {
    return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc);
}

LM_TARGET_AVX2 static inline __m256 blk_q4_0(const block_q4_0 * x, const block_q8_0 * y, __m256 acc, float * ms) {
    (void) ms;
    const __m256i xv = _mm256_sub_epi8(nibbles32(x->qs), _mm256_set1_epi8(8));
    return fma_block(H2F(x->d) * H2F(y->d), dot_s8(xv, _mm256_loadu_si256((const __m256i *) y->qs)), acc);
}

// x = d*q + m: the m part meets y through y's s = d_y * sum(q_y)
LM_TARGET_AVX2 static inline __m256 blk_q4_1(const block_q4_1 * x, const block_q8_1 * y, __m256 acc, float * ms) {
    *ms += H2F(x->m) * H2F(y->s);
    return fma_block(H2F(x->d) * H2F(y->d), dot_u8(nibbles32(x->qs), _mm256_loadu_si256((const __m256i *) y->qs)), acc);
}

// q5_0: (nibble | bit << 4) - 16 = nibble - 16 where the bit is clear
LM_TARGET_AVX2 static inline __m256 blk_q5_0(const block_q5_0 * x, const block_q8_0 * y, __m256 acc, float * ms) {
    (void) ms;
    const __m256i xv = _mm256_sub_epi8(nibbles32(x->qs), _mm256_andnot_si256(bits_to_bytes(x->qh), _mm256_set1_epi8(0x10)));
    return fma_block(H2F(x->d) * H2F(y->d), dot_s8(xv, _mm256_loadu_si256((const __m256i *) y->qs)), acc);
}

LM_TARGET_AVX2 static inline __m256 blk_q5_1(const block_q5_1 * x, const block_q8_1 * y, __m256 acc, float * ms) {
    *ms += H2F(x->m) * H2F(y->s);
    const __m256i xv = _mm256_or_si256(nibbles32(x->qs), _mm256_and_si256(bits_to_bytes(x->qh), _mm256_set1_epi8(0x10)));
    return fma_block(H2F(x->d) * H2F(y->d), dot_u8(xv, _mm256_loadu_si256((const __m256i *) y->qs)), acc);
}

// -128 would break the sign trick; weights come from quantizers that clamp
// to 127, but foreign files may hold it, so it is clamped here too.
LM_TARGET_AVX2 static inline __m256 blk_q8_0(const block_q8_0 * x, const block_q8_0 * y, __m256 acc, float * ms) {
    (void) ms;
    const __m256i xv = _mm256_max_epi8(_mm256_loadu_si256((const __m256i *) x->qs), _mm256_set1_epi8(-127));
    return fma_block(H2F(x->d) * H2F(y->d), dot_s8(xv, _mm256_loadu_si256((const __m256i *) y->qs)), acc);
}

// iq4_nl: a 16-entry codebook of int8 (never -128), looked up by pshufb.
LM_TARGET_AVX2 static inline __m256 blk_iq4_nl(const block_iq4_nl * x, const block_q8_0 * y, __m256 acc, float * ms) {
    (void) ms;
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl));
    const __m256i xv = _mm256_shuffle_epi8(tbl, nibbles32(x->qs));
    return fma_block(H2F(x->d) * H2F(y->d), dot_s8(xv, _mm256_loadu_si256((const __m256i *) y->qs)), acc);
}

DOT32_KERNEL(vd_q4_0_q8_0_avx2,   block_q4_0,   block_q8_0, blk_q4_0)
DOT32_KERNEL(vd_q4_1_q8_1_avx2,   block_q4_1,   block_q8_1, blk_q4_1)
DOT32_KERNEL(vd_q5_0_q8_0_avx2,   block_q5_0,   block_q8_0, blk_q5_0)
DOT32_KERNEL(vd_q5_1_q8_1_avx2,   block_q5_1,   block_q8_1, blk_q5_1)
DOT32_KERNEL(vd_q8_0_q8_0_avx2,   block_q8_0,   block_q8_0, blk_q8_0)
DOT32_KERNEL(vd_iq4_nl_q8_0_avx2, block_iq4_nl, block_q8_0, blk_iq4_nl)

// ---------------------------------------------------------------- 256-quant super-blocks
//
// kd_T returns the integer dot of one super-block with its activations (8
// int32 partial sums, the sub-block scales applied and any bias taken back
// through the block sums) and, for the types with mins, the integer dot of
// the mins with the block sums in *mi. The 1-row kernels below and the
// 8-row mat-vec kernels (mm_qmv_avx2) share them.

// byte e of v (the same in both lanes), zero-extended, in every int16 of its lane
LM_TARGET_AVX2 static inline __m256i bcast8to16(__m256i v, int e) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16((short)(e | 0x80 << 8)));
}

// q4_K and q5_K walk a super-block in 4 steps of 64 quants: the low nibbles
// are sub-block 2j, the high ones 2j+1. The steps are unrolled by hand (j a
// constant: the compiler left the loop rolled and built shuffle masks at run
// time).
LM_TARGET_AVX2 static inline __attribute__((always_inline)) void q4k_quants(const block_q4_K * x, int j, __m256i * lo,
                                                                           __m256i * hi) {
    const __m256i m4 = _mm256_set1_epi8(0xF);
    __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * j));
    __asm__("" : "+x"(q)); // one load: folded into both ands it would be two, a quarter of them split
    *lo = _mm256_and_si256(q, m4);
    *hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
}

// q5_K: the fifth bits of step j are bits 2j (low half) and 2j+1 (high
// half) of each qh byte, moved to bit 4 by one 16-bit shift each (the mask
// drops what crosses from the neighbouring byte).
LM_TARGET_AVX2 static inline __m256i sh16(__m256i v, int n) {
    return n >= 0 ? _mm256_slli_epi16(v, n) : _mm256_srli_epi16(v, -n);
}

LM_TARGET_AVX2 static inline __attribute__((always_inline)) void q5k_quants(const block_q5_K * x, int j, __m256i * lo,
                                                                           __m256i * hi) {
    const __m256i m4 = _mm256_set1_epi8(0xF), b4 = _mm256_set1_epi8(0x10);
    const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * j));
    const __m256i hb = _mm256_loadu_si256((const __m256i *) x->qh);
    *lo = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_and_si256(sh16(hb, 4 - 2 * j), b4));
    *hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), _mm256_and_si256(sh16(hb, 3 - 2 * j), b4));
}

// 1 row: each sub-block's scale broadcast from sc (bytes 0-7, both lanes)
#define K4_ISUM(XT, quants)                                                                              \
LM_TARGET_AVX2 static inline __attribute__((always_inline)) __m256i quants##_step(__m256i ai, const XT * x, \
                                                                                 const int8_t * yq, __m256i sc, int j) { \
    __m256i lo, hi;                                                                                      \
    quants(x, j, &lo, &hi);                                                                              \
    const __m256i y0 = _mm256_loadu_si256((const __m256i *)(yq + 64 * j));                              \
    const __m256i y1 = _mm256_loadu_si256((const __m256i *)(yq + 64 * j + 32));                          \
    return _mm256_add_epi32(ai, _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), bcast8to16(sc, 2 * j)), \
                                                 _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), bcast8to16(sc, 2 * j + 1)))); \
}                                                                                                        \
LM_TARGET_AVX2 static inline __m256i quants##_isum(const XT * x, const int8_t * yq, __m128i sm) {        \
    const __m256i sc = _mm256_broadcastsi128_si256(sm);                                                  \
    const __m256i a0 = quants##_step(_mm256_setzero_si256(), x, yq, sc, 0);                              \
    const __m256i a1 = quants##_step(a0, x, yq, sc, 1);                                                  \
    return quants##_step(quants##_step(a1, x, yq, sc, 2), x, yq, sc, 3);                                 \
}
K4_ISUM(block_q4_K, q4k_quants)
K4_ISUM(block_q5_K, q5k_quants)

// the 8 activation sums of the sub-blocks of 32 (int16) in both lanes
LM_TARGET_AVX2 static inline __m256i k4_bsum32(const block_q8_K * y) {
    const __m256i bs = _mm256_loadu_si256((const __m256i *) y->bsums);
    return _mm256_broadcastsi128_si256(_mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
}

LM_TARGET_AVX2 static inline __m256i kd_q4_K(const block_q4_K * x, const block_q8_K * y, __m256i * mi) {
    const __m128i sm = k4_scales_mins(x->scales);
    *mi = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpackhi_epi64(sm, _mm_setzero_si128())), k4_bsum32(y));
    return q4k_quants_isum(x, y->qs, sm);
}

LM_TARGET_AVX2 static inline __m256i kd_q5_K(const block_q5_K * x, const block_q8_K * y, __m256i * mi) {
    const __m128i sm = k4_scales_mins(x->scales);
    *mi = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpackhi_epi64(sm, _mm_setzero_si128())), k4_bsum32(y));
    return q5k_quants_isum(x, y->qs, sm);
}

// One step of the 16-scale walks (q6_K, q3_K, q2_K): 32 quants v against
// the activations at a, the scales of sub-blocks 2t, 2t+1. The walks are
// written out (t constant): rolled loops built the masks at run time.
// K16_MADD_ADD(ai, p, sc): ai plus the pair sums of the int16 products p * sc;
// the VNNI instances (q6_K's) take one vpdpwssd, the same exact int32 sums.
#define K16_PAIR(name, TARGET, MADD_ADD)                                                                 \
TARGET static inline __m256i name(__m256i ai, __m256i v, const int8_t * a, __m256i s16, int t) {         \
    const __m256i p = _mm256_maddubs_epi16(v, _mm256_loadu_si256((const __m256i *) a));                  \
    return MADD_ADD(ai, p, scale_pair(s16, t));                                                          \
}
#define K16_MADD_ADD_AVX2(ai, p, sc) _mm256_add_epi32(ai, _mm256_madd_epi16(p, sc))
#define K16_MADD_ADD_VNNI(ai, p, sc) _mm256_dpwssd_epi32(ai, p, sc)
K16_PAIR(k16_pair, LM_TARGET_AVX2, K16_MADD_ADD_AVX2)
K16_PAIR(k16_pair_vnni, LM_TARGET_VNNI, K16_MADD_ADD_VNNI)

// q6_K: quants biased to 0..63, the -32 returned through the block sums;
// half h is 128 quants. The high bits (2 per quant, in hb) go to bits 4-5
// by one shift and one mask each: hb << 4, hb << 2, hb, hb >> 2, each & 0x30
// (a 16-bit shift's bits from the neighbouring byte fall outside 0x30).
#define Q6K_KD(kd, half, TARGET, pair)                                                                   \
TARGET static inline __attribute__((always_inline)) __m256i half(__m256i ai, const block_q6_K * x, const int8_t * yq, \
                                                                __m256i s16, int h) {                    \
    const __m256i m4 = _mm256_set1_epi8(0xF), m30 = _mm256_set1_epi8(0x30);                              \
    const uint8_t * ql = x->ql + 64 * h;                                                                 \
    const int8_t * a = yq + 128 * h;                                                                     \
    const __m256i l0 = _mm256_loadu_si256((const __m256i *) ql);                                         \
    const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));                                   \
    const __m256i hb = _mm256_loadu_si256((const __m256i *)(x->qh + 32 * h));                            \
    ai = pair(ai, _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), m30)), a, s16, 4 * h); \
    ai = pair(ai, _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), m30)), \
              a + 32, s16, 4 * h + 1);                                                                   \
    ai = pair(ai, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(hb, m30)), \
              a + 64, s16, 4 * h + 2);                                                                   \
    return pair(ai, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),                      \
                                    _mm256_and_si256(_mm256_srli_epi16(hb, 2), m30)), a + 96, s16, 4 * h + 3); \
}                                                                                                        \
TARGET static inline __m256i kd(const block_q6_K * x, const block_q8_K * y, __m256i * mi) {              \
    const __m128i sc8 = _mm_loadu_si128((const __m128i *) x->scales);                                    \
    const __m256i s16 = scales16_by_lane(sc8);                                                           \
    const __m256i bsum = _mm256_loadu_si256((const __m256i *) y->bsums);                                 \
    const __m256i ai = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), bsum), 5)); \
    *mi = _mm256_setzero_si256();                                                                        \
    return half(half(ai, x, y->qs, s16, 0), x, y->qs, s16, 1);                                           \
}
Q6K_KD(kd_q6_K, q6k_half, LM_TARGET_AVX2, k16_pair)
Q6K_KD(kd_q6_K_vnni, q6k_half_vnni, LM_TARGET_VNNI, k16_pair_vnni)

// q3_K: quants biased to 0..7 (2 low bits | high bit << 2), the -4 returned
// through the block sums. Step t (32 quants) takes bits 2(t%4) of qs half
// t/4 and bit t of hmask; written out so that shifts and masks are constants.
#define Q3K_KD(kd, step, TARGET, pair)                                                                   \
TARGET static inline __attribute__((always_inline)) __m256i step(__m256i ai, __m256i q, __m256i hm, const int8_t * yq, \
                                                                __m256i s16, int t) {                    \
    const __m256i m3 = _mm256_set1_epi8(3), m1 = _mm256_set1_epi8(1);                                    \
    const __m256i u = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * (t & 3)), m3),          \
                                      _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hm, t), m1), 2)); \
    return pair(ai, u, yq + 32 * t, s16, t);                                                             \
}                                                                                                        \
TARGET static inline __m256i kd(const block_q3_K * x, const block_q8_K * y, __m256i * mi) {              \
    const __m128i sc8 = q3k_scales8(x->scales);                                                          \
    const __m256i s16 = scales16_by_lane(sc8);                                                           \
    const __m256i bsum = _mm256_loadu_si256((const __m256i *) y->bsums);                                 \
    __m256i ai = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), bsum), 2)); \
    const __m256i hm = _mm256_loadu_si256((const __m256i *) x->hmask);                                   \
    const __m256i q0 = _mm256_loadu_si256((const __m256i *) x->qs), q1 = _mm256_loadu_si256((const __m256i *)(x->qs + 32)); \
    ai = step(ai, q0, hm, y->qs, s16, 0); ai = step(ai, q0, hm, y->qs, s16, 1);                          \
    ai = step(ai, q0, hm, y->qs, s16, 2); ai = step(ai, q0, hm, y->qs, s16, 3);                          \
    ai = step(ai, q1, hm, y->qs, s16, 4); ai = step(ai, q1, hm, y->qs, s16, 5);                          \
    ai = step(ai, q1, hm, y->qs, s16, 6); ai = step(ai, q1, hm, y->qs, s16, 7);                          \
    *mi = _mm256_setzero_si256();                                                                        \
    return ai;                                                                                           \
}
Q3K_KD(kd_q3_K, q3k_step, LM_TARGET_AVX2, k16_pair)
Q3K_KD(kd_q3_K_vnni, q3k_step_vnni, LM_TARGET_VNNI, k16_pair_vnni)

#define Q2K_KD(kd, step, TARGET, pair)                                                                   \
TARGET static inline __attribute__((always_inline)) __m256i step(__m256i ai, __m256i q, const int8_t * yq, __m256i s16, int t) { \
    return pair(ai, _mm256_and_si256(_mm256_srli_epi16(q, 2 * (t & 3)), _mm256_set1_epi8(3)), yq + 32 * t, s16, t); \
}                                                                                                        \
TARGET static inline __m256i kd(const block_q2_K * x, const block_q8_K * y, __m256i * mi) {              \
    const __m128i m4 = _mm_set1_epi8(0xF);                                                               \
    const __m128i sm = _mm_loadu_si128((const __m128i *) x->scales);                                     \
    const __m256i s16 = scales16_by_lane(_mm_and_si128(sm, m4));                                         \
    const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), m4));                 \
    *mi = _mm256_madd_epi16(mn16, _mm256_loadu_si256((const __m256i *) y->bsums));                       \
    const __m256i q0 = _mm256_loadu_si256((const __m256i *) x->qs), q1 = _mm256_loadu_si256((const __m256i *)(x->qs + 32)); \
    __m256i ai = step(_mm256_setzero_si256(), q0, y->qs, s16, 0);                                        \
    ai = step(ai, q0, y->qs, s16, 1); ai = step(ai, q0, y->qs, s16, 2); ai = step(ai, q0, y->qs, s16, 3); \
    ai = step(ai, q1, y->qs, s16, 4); ai = step(ai, q1, y->qs, s16, 5);                                  \
    ai = step(ai, q1, y->qs, s16, 6); ai = step(ai, q1, y->qs, s16, 7);                                  \
    return ai;                                                                                           \
}
Q2K_KD(kd_q2_K, q2k_step, LM_TARGET_AVX2, k16_pair)
Q2K_KD(kd_q2_K_vnni, q2k_step_vnni, LM_TARGET_VNNI, k16_pair_vnni)

// iq4_xs: two sub-blocks of 32 per 32 bytes of qs; their low nibbles sit in
// lanes 0 and 1 of one vector and the high ones likewise, so each sub-block
// is one lane of each, joined by a cross-lane permute.
#define IQ4XS_KD(kd, TARGET, MADD_ADD)                                                                   \
TARGET static inline __m256i kd(const block_iq4_xs * x, const block_q8_K * y, __m256i * mi) {            \
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl)); \
    const __m256i m4 = _mm256_set1_epi8(0xF);                                                            \
    __m256i ai = _mm256_setzero_si256();                                                                 \
    for (int ib = 0; ib < QK_K / 32; ib += 2) {                                                          \
        const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 16 * ib));                        \
        const __m256i lo = _mm256_shuffle_epi8(tbl, _mm256_and_si256(q, m4));                            \
        const __m256i hi = _mm256_shuffle_epi8(tbl, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));      \
        const __m256i x0 = _mm256_permute2x128_si256(lo, hi, 0x20);                                      \
        const __m256i x1 = _mm256_permute2x128_si256(lo, hi, 0x31);                                      \
        const __m256i y0 = _mm256_loadu_si256((const __m256i *)(y->qs + 32 * ib));                       \
        const __m256i y1 = _mm256_loadu_si256((const __m256i *)(y->qs + 32 * ib + 32));                  \
        const __m256i p0 = _mm256_maddubs_epi16(_mm256_sign_epi8(x0, x0), _mm256_sign_epi8(y0, x0));     \
        const __m256i p1 = _mm256_maddubs_epi16(_mm256_sign_epi8(x1, x1), _mm256_sign_epi8(y1, x1));     \
        const int ls0 = (((x->scales_l[ib / 2] & 0xF) | ((x->scales_h >> (2 * ib)) & 3) << 4)) - 32;      \
        const int ls1 = (((x->scales_l[ib / 2] >> 4) | ((x->scales_h >> (2 * ib + 2)) & 3) << 4)) - 32;   \
        ai = MADD_ADD(ai, p0, _mm256_set1_epi16((short) ls0));                                           \
        ai = MADD_ADD(ai, p1, _mm256_set1_epi16((short) ls1));                                           \
    }                                                                                                    \
    *mi = _mm256_setzero_si256();                                                                        \
    return ai;                                                                                           \
}
IQ4XS_KD(kd_iq4_xs, LM_TARGET_AVX2, K16_MADD_ADD_AVX2)
IQ4XS_KD(kd_iq4_xs_vnni, LM_TARGET_VNNI, K16_MADD_ADD_VNNI)

// 1 row: lane-wise float sums of the blocks (MIN: minus the mins' sums).
#define KDOT_KERNEL(name, XT, kd, MIN, TARGET)                                                          \
TARGET static void name(VD_ARGS) {                                                              \
    VD_UNUSED;                                                                                          \
    const XT * x = vx; const block_q8_K * y = vy;                                                       \
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();                                       \
    for (int i = 0; i < n / QK_K; i++) {                                                                \
        __m256i mi;                                                                                     \
        const __m256i ai = kd(x + i, y + i, &mi);                                                       \
        acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * H2F(x[i].d)), _mm256_cvtepi32_ps(ai), acc);       \
        KDOT_MIN_##MIN                                                                                  \
    }                                                                                                   \
    *s = lm_hsum_avx2(acc) - lm_hsum_avx2(accm);                                                        \
}
#define KDOT_MIN_0 (void) mi;
#define KDOT_MIN_1 accm = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * H2F(x[i].dmin)), _mm256_cvtepi32_ps(mi), accm);
KDOT_KERNEL(vd_q2_K_q8_K_avx2,   block_q2_K,   kd_q2_K,   1, LM_TARGET_AVX2)
KDOT_KERNEL(vd_q3_K_q8_K_avx2,   block_q3_K,   kd_q3_K,   0, LM_TARGET_AVX2)
KDOT_KERNEL(vd_q4_K_q8_K_avx2,   block_q4_K,   kd_q4_K,   1, LM_TARGET_AVX2)
KDOT_KERNEL(vd_q5_K_q8_K_avx2,   block_q5_K,   kd_q5_K,   1, LM_TARGET_AVX2)
KDOT_KERNEL(vd_q6_K_q8_K_avx2,   block_q6_K,   kd_q6_K,   0, LM_TARGET_AVX2)
KDOT_KERNEL(vd_iq4_xs_q8_K_avx2, block_iq4_xs, kd_iq4_xs, 0, LM_TARGET_AVX2)
KDOT_KERNEL(vd_q2_K_q8_K_vnni,   block_q2_K,   kd_q2_K_vnni,   1, LM_TARGET_VNNI)
KDOT_KERNEL(vd_q3_K_q8_K_vnni,   block_q3_K,   kd_q3_K_vnni,   0, LM_TARGET_VNNI)
KDOT_KERNEL(vd_q6_K_q8_K_vnni,   block_q6_K,   kd_q6_K_vnni,   0, LM_TARGET_VNNI)
KDOT_KERNEL(vd_iq4_xs_q8_K_vnni, block_iq4_xs, kd_iq4_xs_vnni, 0, LM_TARGET_VNNI)

// ---------------------------------------------------------------- 8-row mat-vec kernels
//
// The quantized GEMM's form of the sums (see mm-qgemm-x86.c): rows are the
// lanes, each block's exact integer dot is added with one FMA, so these give
// the GEMM's bits for one column without decoding into a panel first.

// Pairwise lane sums without hadd (a ymm hadd can hold its pipes, the
// multipliers' too, for more than a cycle): two blends and one in-lane shuffle per
// level. qmv_fold2: even dwords a's pair sums, odd ones b's. qmv_fold4 on
// two such: dwords 0-3 of each lane a0 b0 a1 b1's partial sums.
LM_TARGET_AVX2 static inline __m256i qmv_fold2(__m256i a, __m256i b) {
    return _mm256_add_epi32(_mm256_blend_epi32(a, b, 0xAA), _mm256_shuffle_epi32(_mm256_blend_epi32(a, b, 0x55), 0xB1));
}
LM_TARGET_AVX2 static inline __m256i qmv_fold4(__m256i a, __m256i b) {
    return _mm256_add_epi32(_mm256_blend_epi32(a, b, 0xCC), _mm256_shuffle_epi32(_mm256_blend_epi32(a, b, 0x33), 0x4E));
}

// lane i = the sum of the 8 int32 lanes of v[i] (reduce8 of an array)
LM_TARGET_AVX2 static inline __m256i qmv_reduce(const __m256i * v) {
    return reduce8(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
}
LM_TARGET_AVX2 static inline __m256i qmv_reduce_blend(const __m256i * v) {
    const __m256i u0 = qmv_fold4(qmv_fold2(v[0], v[1]), qmv_fold2(v[2], v[3]));
    const __m256i u1 = qmv_fold4(qmv_fold2(v[4], v[5]), qmv_fold2(v[6], v[7]));
    return _mm256_add_epi32(_mm256_blend_epi32(u0, u1, 0xF0), _mm256_permute2x128_si256(u0, u1, 0x21));
}

#define QMV_K(name, XT, kd, MIN, TARGET)                                                                 \
TARGET static void name(int64_t nb, const char * const * rows, const void * vy, float * acc, float * accm, \
                                const char * pf) {                                                       \
    const block_q8_K * y = vy;                                                                           \
    __m256 a = _mm256_loadu_ps(acc), am = _mm256_loadu_ps(accm);                                         \
    for (int64_t i = 0; i < nb; i++) {                                                                   \
        QMV_PF(pf, i, XT)                                                                                \
        const char * bl[8];                                                                              \
        __m256i ai[8], mi[8];                                                                            \
        for (int r = 0; r < 8; r++) {                                                                    \
            bl[r] = rows[r] + i * sizeof(XT);                                                            \
            __asm__("" : "+r"(bl[r])); /* kept scalar: see QMV_K4 */                                     \
            ai[r] = kd((const XT *) bl[r], y + i, &mi[r]);                                               \
        }                                                                                                \
        const __m256 dy = _mm256_set1_ps(y[i].d);                                                        \
        QMV_KMIN_##MIN(XT)                                                                               \
        a = _mm256_fmadd_ps(_mm256_mul_ps(qmv_f16(bl, offsetof(XT, d)), dy), _mm256_cvtepi32_ps(qmv_reduce(ai)), a); \
    }                                                                                                    \
    _mm256_storeu_ps(acc, a);                                                                            \
    _mm256_storeu_ps(accm, am);                                                                          \
}
#define QMV_KMIN_0(XT)
#define QMV_KMIN_1(XT) am = _mm256_fmadd_ps(_mm256_mul_ps(qmv_f16(bl, offsetof(XT, dmin)), dy), _mm256_cvtepi32_ps(qmv_reduce(mi)), am);
QMV_K(qmv_q2_K,   block_q2_K,   kd_q2_K,   1, LM_TARGET_AVX2)
QMV_K(qmv_q3_K,   block_q3_K,   kd_q3_K,   0, LM_TARGET_AVX2)
QMV_K(qmv_q6_K,   block_q6_K,   kd_q6_K,   0, LM_TARGET_AVX2)
QMV_K(qmv_iq4_xs, block_iq4_xs, kd_iq4_xs, 0, LM_TARGET_AVX2)
QMV_K(qmv_q2_K_vnni,   block_q2_K,   kd_q2_K_vnni,   1, LM_TARGET_VNNI)
QMV_K(qmv_q3_K_vnni,   block_q3_K,   kd_q3_K_vnni,   0, LM_TARGET_VNNI)
QMV_K(qmv_q6_K_vnni,   block_q6_K,   kd_q6_K_vnni,   0, LM_TARGET_VNNI)
QMV_K(qmv_iq4_xs_vnni, block_iq4_xs, kd_iq4_xs_vnni, 0, LM_TARGET_VNNI)


// q4_K and q5_K, 8 rows. Per block, the scales of rows t and t+4 are
// unpacked together (lane 0 row t, lane 1 row t+4) into a table of int16
// pairs (s, s) that the madds take by broadcast loads (a load, no vector
// ALU op, where a shuffle would compete with the nibble shifts);
// their mins share one madd with the activation sums. The quants are walked
// step by step over the 8 rows, so a step's activations are loaded once and
// the 8 row sums stay in registers; the empty asm pins each sum after its
// step (else the compiler re-associates the adds and spills the products).
// Integer sums are exact, so the order of their additions is free; the
// float steps are QMV_K's.
#define K4_SC(r, k) _mm256_set1_epi32(tab[16 * ((r) & 3) + 8 * ((k) >> 2) + 4 * ((r) >> 2) + ((k) & 3)])
#define K4_ROW(c, r, j, XT, quants, ACC2) {                                                              \
        __m256i lo_, hi_;                                                                                \
        quants((const XT *) bl[r], j, &lo_, &hi_);                                                       \
        c = ACC2(c, _mm256_maddubs_epi16(lo_, y0), K4_SC(r, 2 * (j)), _mm256_maddubs_epi16(hi_, y1), K4_SC(r, 2 * (j) + 1)); \
        __asm__("" : "+x"(c)); }
#define K4_STEP(j, XT, quants, ACC2) {                                                                         \
        const __m256i y0 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * (j)));                    \
        const __m256i y1 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * (j) + 32));               \
        K4_ROW(c0, 0, j, XT, quants, ACC2) K4_ROW(c1, 1, j, XT, quants, ACC2)                            \
        K4_ROW(c2, 2, j, XT, quants, ACC2) K4_ROW(c3, 3, j, XT, quants, ACC2)                            \
        K4_ROW(c4, 4, j, XT, quants, ACC2) K4_ROW(c5, 5, j, XT, quants, ACC2)                            \
        K4_ROW(c6, 6, j, XT, quants, ACC2) K4_ROW(c7, 7, j, XT, quants, ACC2) }
#define K4_PASS(XT, quants, ACC2) {                                                                            \
        __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0; \
        K4_STEP(0, XT, quants, ACC2) K4_STEP(1, XT, quants, ACC2)                                        \
        K4_STEP(2, XT, quants, ACC2) K4_STEP(3, XT, quants, ACC2)                                        \
        ai[0] = c0; ai[1] = c1; ai[2] = c2; ai[3] = c3; ai[4] = c4; ai[5] = c5; ai[6] = c6; ai[7] = c7; }
#define QMV_K4(name, XT, quants, TARGET, ACC2)                                                           \
TARGET static void name(int64_t nb, const char * const * rows, const void * vy, float * acc, float * accm, \
                                const char * pf) {                                                       \
    const block_q8_K * y = vy;                                                                           \
    __m256 a = _mm256_loadu_ps(acc), am = _mm256_loadu_ps(accm);                                         \
    int32_t tab[64] __attribute__((aligned(32)));                                                        \
    for (int64_t i = 0; i < nb; i++) {                                                                   \
        QMV_PF(pf, i, XT)                                                                                \
        const char * bl[8];                                                                              \
        for (int r = 0; r < 8; r++) {                                                                    \
            bl[r] = rows[r] + i * sizeof(XT);                                                            \
            /* kept scalar: vectorised, they went through a 32-byte store whose 8-byte */                \
            /* reloads missed store forwarding at the start of every block */                            \
            __asm__("" : "+r"(bl[r]));                                                                   \
        }                                                                                                \
        const __m256i bs32 = k4_bsum32(y + i);                                                           \
        __m256i mn[4], ai[8];                                                                            \
        for (int t = 0; t < 4; t++) {                                                                    \
            const __m256i v = k4_scales_mins2(((const XT *) bl[t])->scales, ((const XT *) bl[t + 4])->scales); \
            const __m256i s16 = _mm256_unpacklo_epi8(v, _mm256_setzero_si256());                         \
            _mm256_store_si256((__m256i *)(tab + 16 * t), _mm256_unpacklo_epi16(s16, s16));              \
            _mm256_store_si256((__m256i *)(tab + 16 * t + 8), _mm256_unpackhi_epi16(s16, s16));          \
            mn[t] = _mm256_madd_epi16(_mm256_unpackhi_epi8(v, _mm256_setzero_si256()), bs32);            \
        }                                                                                                \
        /* the table must be read back from memory: left to itself the compiler kept it in */            \
        /* registers and broadcast each scale by a shift and a register broadcast, two vector ops */     \
        __asm__("" : "+m"(tab));                                                                         \
        K4_PASS(XT, quants, ACC2)                                                                        \
        const __m256i ms = qmv_fold4(qmv_fold2(mn[0], mn[1]), qmv_fold2(mn[2], mn[3]));    \
        __m256 d, dmin;                                                                                  \
        qmv_dm(bl, &d, &dmin);                                                                           \
        const __m256 dy = _mm256_set1_ps(y[i].d);                                                        \
        am = _mm256_fmadd_ps(_mm256_mul_ps(dmin, dy), _mm256_cvtepi32_ps(ms), am);                       \
        a = _mm256_fmadd_ps(_mm256_mul_ps(d, dy), _mm256_cvtepi32_ps(qmv_reduce_blend(ai)), a);          \
    }                                                                                                    \
    _mm256_storeu_ps(acc, a);                                                                            \
    _mm256_storeu_ps(accm, am);                                                                          \
}
// ACC2(c, p0, s0, p1, s1): c plus the pair sums of p0 * s0 and p1 * s1 (int16
// products); with VNNI two vpdpwssd, the same exact int32 sums.
#define K4_ACC2_AVX2(c, p0, s0, p1, s1) _mm256_add_epi32(c, _mm256_add_epi32(_mm256_madd_epi16(p0, s0), _mm256_madd_epi16(p1, s1)))
#define K4_ACC2_VNNI(c, p0, s0, p1, s1) _mm256_dpwssd_epi32(_mm256_dpwssd_epi32(c, p0, s0), p1, s1)
QMV_K4(qmv_q4_K, block_q4_K, q4k_quants, LM_TARGET_AVX2, K4_ACC2_AVX2)
QMV_K4(qmv_q5_K, block_q5_K, q5k_quants, LM_TARGET_AVX2, K4_ACC2_AVX2)
QMV_K4(qmv_q4_K_vnni, block_q4_K, q4k_quants, LM_TARGET_VNNI, K4_ACC2_VNNI)
QMV_K4(qmv_q5_K_vnni, block_q5_K, q5k_quants, LM_TARGET_VNNI, K4_ACC2_VNNI)

// the VNNI instances of the templates above (mm_qmv_vnni and mm_quant_dot_vnni serve them)
mm_qmv_fn mm_qmv_k_vnni(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q2_K:   return qmv_q2_K_vnni;
        case LM_GGML_TYPE_Q3_K:   return qmv_q3_K_vnni;
        case LM_GGML_TYPE_Q4_K:   return qmv_q4_K_vnni;
        case LM_GGML_TYPE_Q5_K:   return qmv_q5_K_vnni;
        case LM_GGML_TYPE_Q6_K:   return qmv_q6_K_vnni;
        case LM_GGML_TYPE_IQ4_XS: return qmv_iq4_xs_vnni;
        default:                  return NULL;
    }
}

lm_ggml_vec_dot_t mm_quant_dot_k_vnni(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q2_K:   return vd_q2_K_q8_K_vnni;
        case LM_GGML_TYPE_Q3_K:   return vd_q3_K_q8_K_vnni;
        case LM_GGML_TYPE_Q6_K:   return vd_q6_K_q8_K_vnni;
        case LM_GGML_TYPE_IQ4_XS: return vd_iq4_xs_q8_K_vnni;
        default:                  return NULL;
    }
}
_Static_assert(offsetof(block_q4_K, dmin) == 2 && offsetof(block_q5_K, dmin) == 2, "qmv_dm: d, dmin lead the block");
_Static_assert(offsetof(block_q4_1, m) == 2 && offsetof(block_q5_1, m) == 2, "qmv_dm: d, m lead the block");

// 32-quant blocks of signed quants (q8_0, iq4_nl): W decodes a block's
// quants, summed by the sign trick; the 4- and 5-bit types are QMV_P's.
#define QMV_32(name, XT, YT, W)                                                                          \
LM_TARGET_AVX2 static void name(int64_t nb, const char * const * rows, const void * vy, float * acc, float * accm, \
                                const char * pf) {                                                       \
    (void) accm; /* no mins: it stays as it is */                                                        \
    const YT * y = vy;                                                                                   \
    __m256 a = _mm256_loadu_ps(acc);                                                                     \
    for (int64_t i = 0; i < nb; i++) {                                                                   \
        QMV_PF(pf, i, XT)                                                                                \
        const char * bl[8];                                                                              \
        __m256i ai[8];                                                                                   \
        const __m256i yv = _mm256_loadu_si256((const __m256i *) y[i].qs);                                \
        for (int r = 0; r < 8; r++) {                                                                    \
            bl[r] = rows[r] + i * sizeof(XT);                                                            \
            ai[r] = dot_s8(W((const XT *) bl[r]), yv);                                                   \
        }                                                                                                \
        const __m256 d = _mm256_mul_ps(qmv_f16(bl, offsetof(XT, d)), _mm256_set1_ps(H2F(y[i].d)));      \
        a = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(qmv_reduce(ai)), a);                                   \
    }                                                                                                    \
    _mm256_storeu_ps(acc, a);                                                                            \
}

LM_TARGET_AVX2 static inline __m256i w_q8_0(const block_q8_0 * x) { return _mm256_loadu_si256((const __m256i *) x->qs); }
LM_TARGET_AVX2 static inline __m256i w_iq4_nl(const block_iq4_nl * x) {
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl));
    return _mm256_shuffle_epi8(tbl, nibbles32(x->qs));
}
QMV_32(qmv_q8_0,   block_q8_0,   block_q8_0, w_q8_0)
QMV_32(qmv_iq4_nl, block_iq4_nl, block_q8_0, w_iq4_nl)

// q4_0, q4_1, q5_0, q5_1: quants of 4 or 5 bits, taken unsigned (q4_0 and
// q5_0 with their offset, 8 or 16, taken off once per block for all rows).
// Rows r and r+4 share a vector, lane 0 row r and lane 1 row r+4: their 16
// bytes of quants give, in two ops, the low nibbles (quants 0-15) of both
// rows and the high ones (16-31), against the activations' halves
// broadcast to both lanes. The products are small enough to be summed in
// 16 bits up to 8 of them (31 * 128 * 8 = 31744), so the pairs reduce to
// the 8 row sums in three horizontal adds and two madds, which leave the
// rows in lane order. The offset's share of such a sum of 8 is taken off
// in 16 bits too: wrapping or not, the difference is the signed dot of 8
// products (|16 * 128 * 8| <= 16384), so the integer sums are exact and the
// float steps are QMV_32's.
//
// q5's fifth bits: the word qh of row r in lane 0's 4 dwords and row r+4's
// in lane 1's, each dword shifted right by its index i, puts bit j of qh at
// bit 0 (j/4 even) or 4 (odd) of byte j/8 of dword j%4; one shuffle takes
// those bytes to quant order, a 32-bit shift lifts the quants whose bit is
// at 0 (j/4 even: the even dwords) and a mask keeps bit 4.
LM_TARGET_AVX2 static inline __attribute__((always_inline)) __m256i q5_hbits(const char * a, const char * b, __m256i ctl) {
    const __m256i h = _mm256_blend_epi32(_mm256_set1_epi32((int) ld32(a)), _mm256_set1_epi32((int) ld32(b)), 0xF0);
    const __m256i v = _mm256_srlv_epi32(h, _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3));
    return _mm256_and_si256(_mm256_sllv_epi32(_mm256_shuffle_epi8(v, ctl), _mm256_setr_epi32(4, 0, 4, 0, 4, 0, 4, 0)),
                            _mm256_set1_epi8(0x10));
}
// the 16-bit pair sums of rows a (lane 0) and b (lane 1); QH < 0: no fifth bits
LM_TARGET_AVX2 static inline __attribute__((always_inline)) __m256i qmv_pair(const char * a, const char * b, size_t qs,
                                                                            ptrdiff_t qh, __m256i ylo, __m256i yhi) {
    const __m256i m4 = _mm256_set1_epi8(0xF);
    const __m256i q = _mm256_loadu2_m128i((const __m128i *)(b + qs), (const __m128i *)(a + qs));
    __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    if (qh >= 0) {
        // byte j of lane: quant j (lo) or 16 + j (hi) at byte (j/8 + 2 hi) of dword j%4
        const __m256i clo = _mm256_setr_epi8(0, 4, 8, 12, 0, 4, 8, 12, 1, 5, 9, 13, 1, 5, 9, 13,
                                             0, 4, 8, 12, 0, 4, 8, 12, 1, 5, 9, 13, 1, 5, 9, 13);
        const __m256i chi = _mm256_add_epi8(clo, _mm256_set1_epi8(2));
        lo = _mm256_or_si256(lo, q5_hbits(a + qh, b + qh, clo));
        hi = _mm256_or_si256(hi, q5_hbits(a + qh, b + qh, chi));
    }
    return _mm256_add_epi16(_mm256_maddubs_epi16(lo, ylo), _mm256_maddubs_epi16(hi, yhi));
}
// QH: offset of the fifth bits in the block, or -1; OFF: the quants' offset;
// MIN: m_x * s_y into accm (the fp16 m follows d: both from one load per row)
#define QMV_P(name, XT, YT, QH, OFF, MIN)                                                                \
LM_TARGET_AVX2 static void name(int64_t nb, const char * const * rows, const void * vy, float * acc, float * accm, \
                                const char * pf) {                                                       \
    const YT * y = vy;                                                                                   \
    __m256 a = _mm256_loadu_ps(acc), am = _mm256_loadu_ps(accm);                                         \
    const __m256i one = _mm256_set1_epi16(1);                                                            \
    const size_t qs = offsetof(XT, qs);                                                                  \
    const ptrdiff_t qh = QH;                                                                             \
    const char * x0 = rows[0], * x1 = rows[1], * x2 = rows[2], * x3 = rows[3];                           \
    const char * x4 = rows[4], * x5 = rows[5], * x6 = rows[6], * x7 = rows[7];                           \
    for (int64_t i = 0; i < nb; i++) {                                                                   \
        QMV_PF(pf, i, XT)                                                                                \
        const __m256i ylo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) y[i].qs));    \
        const __m256i yhi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(y[i].qs + 16))); \
        const __m256i p0 = qmv_pair(x0, x4, qs, qh, ylo, yhi), p1 = qmv_pair(x1, x5, qs, qh, ylo, yhi);  \
        const __m256i p2 = qmv_pair(x2, x6, qs, qh, ylo, yhi), p3 = qmv_pair(x3, x7, qs, qh, ylo, yhi);  \
        __m256i h01 = _mm256_hadd_epi16(p0, p1), h23 = _mm256_hadd_epi16(p2, p3);                        \
        if (OFF) {                                                                                       \
            const __m256i off = _mm256_set1_epi8(OFF);                                                   \
            const __m256i t2 = _mm256_add_epi16(_mm256_maddubs_epi16(off, ylo), _mm256_maddubs_epi16(off, yhi)); \
            const __m256i o = _mm256_hadd_epi16(t2, t2);                                                 \
            h01 = _mm256_sub_epi16(h01, o);                                                              \
            h23 = _mm256_sub_epi16(h23, o);                                                              \
        }                                                                                                \
        const __m256i si = _mm256_hadd_epi32(_mm256_madd_epi16(h01, one), _mm256_madd_epi16(h23, one));  \
        const char * const bl[8] = { x0, x1, x2, x3, x4, x5, x6, x7 };                                   \
        QMV_P_ACC(XT, MIN, bl, si)                                                                       \
        x0 += sizeof(XT); x1 += sizeof(XT); x2 += sizeof(XT); x3 += sizeof(XT);                          \
        x4 += sizeof(XT); x5 += sizeof(XT); x6 += sizeof(XT); x7 += sizeof(XT);                          \
    }                                                                                                    \
    _mm256_storeu_ps(acc, a);                                                                            \
    _mm256_storeu_ps(accm, am);                                                                          \
}
QMV_P(qmv_q4_0, block_q4_0, block_q8_0, -1, 8, 0)
QMV_P(qmv_q4_1, block_q4_1, block_q8_1, -1, 0, 1)
QMV_P(qmv_q5_0, block_q5_0, block_q8_0, (ptrdiff_t) offsetof(block_q5_0, qh), 16, 0)
QMV_P(qmv_q5_1, block_q5_1, block_q8_1, (ptrdiff_t) offsetof(block_q5_1, qh), 0, 1)

// ---------------------------------------------------------------- repacked (repack.c)
//
// The same integer sums and float steps as the plain kernels above (so the
// same bits), read from a group block: the 8 fp16 scales in one 16-byte
// load, and each row's quants at a fixed place in one sequential stream.
//
// q8_0: row r's 32 bytes at slot (r % 4) * 2 + r / 4 after the scales;
// QMV_32's sums.
LM_TARGET_AVX2 static void qmv_q8_0_rp_group_avx2(int64_t nb, const char * g, const block_q8_0 * y, float * d,
                                                 const char * pf) {
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += 8 * sizeof(block_q8_0)) {
        QMV_PF(pf, i, block_q8_0) // a group block is 8 plain blocks' bytes
        const __m256i yv = _mm256_loadu_si256((const __m256i *) y[i].qs);
        __m256i ai[8];
        for (int r = 0; r < 8; r++) {
            ai[r] = dot_s8(_mm256_loadu_si256((const __m256i *)(g + 16 + 32 * ((r % 4) * 2 + r / 4))), yv);
        }
        const __m256 dx = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g)), _mm256_set1_ps(H2F(y[i].d)));
        a = _mm256_fmadd_ps(dx, _mm256_cvtepi32_ps(qmv_reduce(ai)), a);
    }
    _mm256_storeu_ps(d, a);
}

// q4_0: rows 2k and 2k + 1 are one 32-byte load, the pair QMV_P builds for
// rows k and k + 4 with an insert: the same 16-bit sums, so QMV_P's integer
// dots come out in the row order 0, 2, 4, 6, 1, 3, 5, 7, which one permute
// puts back.
// The bias's side, 8 . y summed as the quants' pairs are (hadd of the
// maddubs), depends on the column alone: made once per call (QMV_RP_YS).
LM_TARGET_AVX2 static inline __m256i q4_0_rp_o_avx2(const block_q8_0 * y) {
    const __m256i off = _mm256_set1_epi8(8);
    const __m256i ylo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) y->qs));
    const __m256i yhi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(y->qs + 16)));
    const __m256i t2 = _mm256_add_epi16(_mm256_maddubs_epi16(off, ylo), _mm256_maddubs_epi16(off, yhi));
    return _mm256_hadd_epi16(t2, t2);
}
LM_TARGET_AVX2 static void q4_0_rp_fill_avx2(int64_t nb, const void * vy, __m256i * ys) {
    const block_q8_0 * y = vy;
    for (int64_t i = 0; i < nb; i++) ys[i] = q4_0_rp_o_avx2(y + i);
}
LM_TARGET_AVX2 static void qmv_q4_0_rp_group_avx2(int64_t nb, const char * g, const block_q8_0 * y, float * d,
                                                 const char * pf, const __m256i * ys) {
    const __m256i m4 = _mm256_set1_epi8(0xF), one = _mm256_set1_epi16(1);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += 8 * sizeof(block_q4_0)) {
        QMV_PF(pf, i, block_q4_0)
        const __m256i ylo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) y[i].qs));
        const __m256i yhi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(y[i].qs + 16)));
        __m256i p[4];
        for (int k = 0; k < 4; k++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(g + 16 + 32 * k));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            p[k] = _mm256_add_epi16(_mm256_maddubs_epi16(lo, ylo), _mm256_maddubs_epi16(hi, yhi));
        }
        const __m256i o = ys ? _mm256_load_si256(ys + i) : q4_0_rp_o_avx2(y + i);
        const __m256i h01 = _mm256_sub_epi16(_mm256_hadd_epi16(p[0], p[1]), o);
        const __m256i h23 = _mm256_sub_epi16(_mm256_hadd_epi16(p[2], p[3]), o);
        const __m256i si = _mm256_hadd_epi32(_mm256_madd_epi16(h01, one), _mm256_madd_epi16(h23, one));
        const __m256 dx = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g)), _mm256_set1_ps(H2F(y[i].d)));
        a = _mm256_fmadd_ps(dx, _mm256_cvtepi32_ps(_mm256_permutevar8x32_epi32(si, order)), a);
    }
    _mm256_storeu_ps(d, a);
}

// iq4_nl: rows 2k and 2k + 1 are one 32-byte load as for q4_0, their
// nibbles looked up in the table. The sign trick runs the other way round:
// |y| (shared by the rows) times the values signed by y, which is exact
// because no table value is -128. The int32 sums are QMV_32's, so are the
// bits; they come out in the row order 0, 2, 4, 6, 1, 3, 5, 7.
LM_TARGET_AVX2 static void qmv_iq4_nl_rp_group_avx2(int64_t nb, const char * g, const block_q8_0 * y, float * d,
                                                   const char * pf) {
    const __m256i m4 = _mm256_set1_epi8(0xF), one = _mm256_set1_epi16(1);
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl));
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += 8 * sizeof(block_iq4_nl)) {
        QMV_PF(pf, i, block_iq4_nl)
        const __m256i ylo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) y[i].qs));
        const __m256i yhi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(y[i].qs + 16)));
        const __m256i alo = _mm256_abs_epi8(ylo), ahi = _mm256_abs_epi8(yhi);
        __m256i p[4];
        for (int k = 0; k < 4; k++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(g + 16 + 32 * k));
            const __m256i lo = _mm256_shuffle_epi8(tbl, _mm256_and_si256(q, m4));
            const __m256i hi = _mm256_shuffle_epi8(tbl, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
            p[k] = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(alo, _mm256_sign_epi8(lo, ylo)), one),
                                    _mm256_madd_epi16(_mm256_maddubs_epi16(ahi, _mm256_sign_epi8(hi, yhi)), one));
        }
        const __m256i si = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
        const __m256 dx = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g)), _mm256_set1_ps(H2F(y[i].d)));
        a = _mm256_fmadd_ps(dx, _mm256_cvtepi32_ps(_mm256_permutevar8x32_epi32(si, order)), a);
    }
    _mm256_storeu_ps(d, a);
}

// q4_K: per block the 8 d, the 8 dmin, the three words of the 8 rows'
// packed scales and mins (word w of row r at 32 + 32 w + 4 r), then each 32
// bytes j of quants (sub-blocks 2j and 2j + 1) of the rows in pair order,
// their nibbles placed (repack.c) so that the low nibbles meet the 16-bit
// interleave of the two sub-blocks' activations (unpacklo_epi16) and the
// high nibbles the other half (unpackhi_epi16): each 16-bit sum of a
// maddubs is then of one sub-block, alternately 2j and 2j + 1, and the two
// maddubs of a row add in 16 bits before one madd by the pair (s_2j,
// s_2j+1). One set of vector ops unpacks the scales and mins of all 8 rows
// (the expressions of k4_unpack_scales on the words). Integer sums are
// exact, so the sums and the float steps are QMV_K4's and so are the bits.
LM_TARGET_AVX2 static void qmv_q4_K_rp_group_avx2(int64_t nb, const char * g, const block_q8_K * y, float * d,
                                                 const char * pf) {
    const __m256i m4 = _mm256_set1_epi8(0xF);
    // byte k and k + 1 of each dword to its two 16-bit halves, zero-extended
    const __m256i sel01 = _mm256_setr_epi32(0x80018000, 0x80058004, 0x80098008, 0x800D800C,
                                            0x80018000, 0x80058004, 0x80098008, 0x800D800C);
    const __m256i sel23 = _mm256_add_epi32(sel01, _mm256_set1_epi32(0x00020002));
    int32_t tab[32] __attribute__((aligned(32))); // tab[8j + r]: row r's scales of sub-blocks 2j, 2j + 1 as 16-bit pair
    __m256 a = _mm256_setzero_ps(), am = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += 8 * sizeof(block_q4_K)) {
        QMV_PF(pf, i, block_q4_K)
        __m256i sc03, sc47;
        const __m256i ms = q4k_rp_scales_mins(g, y + i, &sc03, &sc47);
        _mm256_store_si256((__m256i *)(tab + 0), _mm256_shuffle_epi8(sc03, sel01));
        _mm256_store_si256((__m256i *)(tab + 8), _mm256_shuffle_epi8(sc03, sel23));
        _mm256_store_si256((__m256i *)(tab + 16), _mm256_shuffle_epi8(sc47, sel01));
        _mm256_store_si256((__m256i *)(tab + 24), _mm256_shuffle_epi8(sc47, sel23));
        __asm__("" : "+m"(tab)); // broadcast loads, not register shuffles (see QMV_K4)
        __m256i c[8];
        for (int r = 0; r < 8; r++) c[r] = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            const __m256i ya = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * j));
            const __m256i yb = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * j + 32));
            const __m256i y0 = _mm256_unpacklo_epi16(ya, yb), y1 = _mm256_unpackhi_epi16(ya, yb);
            for (int r = 0; r < 8; r++) {
                const __m256i q = _mm256_loadu_si256((const __m256i *)(g + 128 + 256 * j + 32 * ((r % 4) * 2 + r / 4)));
                const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, y0), _mm256_maddubs_epi16(hi, y1));
                c[r] = _mm256_add_epi32(c[r], _mm256_madd_epi16(p, _mm256_set1_epi32(tab[8 * j + r])));
                __asm__("" : "+x"(c[r])); // see K4_ROW
            }
        }
        q4k_rp_acc(g, y[i].d, qmv_reduce_blend(c), ms, &a, &am);
    }
    _mm256_storeu_ps(d, _mm256_sub_ps(a, am));
}

// q6_K: the 8 d, then each row's block without its d, which kd_q6_K reads
// as a block (it does not read d); QMV_K's sums and float steps.
LM_TARGET_AVX2 static void qmv_q6_K_rp_group_avx2(int64_t nb, const char * g, const block_q8_K * y, float * d,
                                                 const char * pf) {
    _Static_assert(offsetof(block_q6_K, d) == 208, "q6_K: d ends the block");
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++, g += 8 * sizeof(block_q6_K)) {
        QMV_PF(pf, i, block_q6_K)
        __m256i ai[8], mi[8];
        for (int r = 0; r < 8; r++) {
            ai[r] = kd_q6_K((const block_q6_K *)(g + 16 + 208 * r), y + i, &mi[r]);
        }
        const __m256 dy = _mm256_set1_ps(y[i].d);
        a = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g)), dy),
                            _mm256_cvtepi32_ps(qmv_reduce(ai)), a);
    }
    _mm256_storeu_ps(d, a);
}

QMV_RP(qmv_q8_0_rp_avx2,   qmv_q8_0_rp_group_avx2, 32, LM_TARGET_AVX2, RP_PF_BYTES)
QMV_RP_YS(qmv_q4_0_rp_avx2, qmv_q4_0_rp_group_avx2, 32, LM_TARGET_AVX2, __m256i, q4_0_rp_fill_avx2)
QMV_RP(qmv_iq4_nl_rp_avx2, qmv_iq4_nl_rp_group_avx2, 32, LM_TARGET_AVX2, RP_PF_BYTES)
QMV_RP(qmv_q4_K_rp_avx2,   qmv_q4_K_rp_group_avx2, 256, LM_TARGET_AVX2, 0)
QMV_RP(qmv_q6_K_rp_avx2,   qmv_q6_K_rp_group_avx2, 256, LM_TARGET_AVX2, 0)

mm_qmv_rp_fn mm_qmv_repacked_avx2(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q8_0:   return qmv_q8_0_rp_avx2;
        case LM_GGML_TYPE_Q4_0:   return qmv_q4_0_rp_avx2;
        case LM_GGML_TYPE_IQ4_NL: return qmv_iq4_nl_rp_avx2;
        case LM_GGML_TYPE_Q4_K:   return qmv_q4_K_rp_avx2;
        case LM_GGML_TYPE_Q6_K:   return qmv_q6_K_rp_avx2;
        default:                  return NULL;
    }
}

mm_qmv_fn mm_qmv_avx2(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0:   return qmv_q4_0;
        case LM_GGML_TYPE_Q4_1:   return qmv_q4_1;
        case LM_GGML_TYPE_Q5_0:   return qmv_q5_0;
        case LM_GGML_TYPE_Q5_1:   return qmv_q5_1;
        case LM_GGML_TYPE_Q8_0:   return qmv_q8_0;
        case LM_GGML_TYPE_IQ4_NL: return qmv_iq4_nl;
        case LM_GGML_TYPE_Q2_K:   return qmv_q2_K;
        case LM_GGML_TYPE_Q3_K:   return qmv_q3_K;
        case LM_GGML_TYPE_Q4_K:   return qmv_q4_K;
        case LM_GGML_TYPE_Q5_K:   return qmv_q5_K;
        case LM_GGML_TYPE_Q6_K:   return qmv_q6_K;
        case LM_GGML_TYPE_IQ4_XS: return qmv_iq4_xs;
        default:                  return NULL;
    }
}

// ---------------------------------------------------------------- lookup

lm_ggml_vec_dot_t mm_quant_dot_avx2(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0:   return vd_q4_0_q8_0_avx2;
        case LM_GGML_TYPE_Q4_1:   return vd_q4_1_q8_1_avx2;
        case LM_GGML_TYPE_Q5_0:   return vd_q5_0_q8_0_avx2;
        case LM_GGML_TYPE_Q5_1:   return vd_q5_1_q8_1_avx2;
        case LM_GGML_TYPE_Q8_0:   return vd_q8_0_q8_0_avx2;
        case LM_GGML_TYPE_Q2_K:   return vd_q2_K_q8_K_avx2;
        case LM_GGML_TYPE_Q3_K:   return vd_q3_K_q8_K_avx2;
        case LM_GGML_TYPE_Q4_K:   return vd_q4_K_q8_K_avx2;
        case LM_GGML_TYPE_Q5_K:   return vd_q5_K_q8_K_avx2;
        case LM_GGML_TYPE_Q6_K:   return vd_q6_K_q8_K_avx2;
        case LM_GGML_TYPE_IQ4_NL: return vd_iq4_nl_q8_0_avx2;
        case LM_GGML_TYPE_IQ4_XS: return vd_iq4_xs_q8_K_avx2;
        default: return NULL;
    }
}
#else
typedef int mm_quant_x86_unused; // ISO C forbids an empty translation unit
#endif
