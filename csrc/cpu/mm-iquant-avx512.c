// mm-iquant-avx512.c - AVX-512 (with VNNI) integer dots of the i-quants and
// the ternary types against q8_K (mm-iquant.h), x86-64 only: the scalar
// kernels' bits. Called only where lm_cpu_vnni() holds.
//
// The form is mm-iquant-x86.c's, 64 quants (two chunks, four groups of 16)
// per step: u = q + B in [0, 127] as the unsigned operand, so
//
//     sumi = sum over steps of  dpwssd(maddubs(u_s, y_s), S_s)  +  madd(C, bsums)
//
// where 128-bit lane k of S_s holds group 4s + k's scale, so no lane
// crosses. The ternary types, with every scale 1, take dpbusd straight on
// u. Every sum is exact (maddubs pairs stay under 2 * 127 * 128), so sumi
// is the scalar integer and the float steps are the scalar ones.
//
// The decoding is where the AVX2 form spends its time: here the grid
// entries come by hardware gathers of 8 or 16 entries, and signs either by
// a gather of byte masks (7 stored bits) or straight as a mask register
// (8 stored bits). The GEMM runs the AVX2 one for several columns (same
// bits, compiled for this level: mm-iquant-x86-evex.c) and for one the
// dot's steps per row.
#include "fp-nocontract.h"
#include "mm-kernels.h"
#include "mm-iquant.h"

#if defined(LM_X86)
#include "../quant/ggml-common.h"
#include "../quant/ggml-iquants.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mm-quant-x86.h"
#include "mm-iquant-x86.h"

#define H2F(x) _cvtsh_ss(x)
#define INL LM_TARGET_VNNI static inline __attribute__((always_inline))

// 7 stored sign bits (the eighth makes the parity even) -> 8 byte masks
#define SM1(i, j)  ((((i) >> (j)) & 1) ? 0xFFull : 0ull) << (8 * (j))
#define SPAR(i)    (((i) ^ (i) >> 1 ^ (i) >> 2 ^ (i) >> 3 ^ (i) >> 4 ^ (i) >> 5 ^ (i) >> 6) & 1)
#define SMK(i)     (SM1(i, 0) | SM1(i, 1) | SM1(i, 2) | SM1(i, 3) | SM1(i, 4) | SM1(i, 5) | SM1(i, 6) | \
                    (SPAR(i) ? 0xFFull : 0ull) << 56)
#define SMK4(i)    SMK(i), SMK((i) + 1), SMK((i) + 2), SMK((i) + 3)
#define SMK16(i)   SMK4(i), SMK4((i) + 4), SMK4((i) + 8), SMK4((i) + 12)
#define SMK64(i)   SMK16(i), SMK16((i) + 16), SMK16((i) + 32), SMK16((i) + 48)
static const uint64_t k_sign_mask[128] = { SMK64(0), SMK64(64) };

static inline uint16_t rd16(const void * p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t rd32(const void * p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t rd64(const void * p) { uint64_t v; memcpy(&v, p, 8); return v; }

// u = +-g + B: m byte masks (0xFF where negative), or k a bit per byte
INL __m512i bias_m(__m512i g, __m512i m, int b) {
    return _mm512_add_epi8(_mm512_sub_epi8(_mm512_xor_si512(g, m), m), _mm512_set1_epi8((char) b));
}
INL __m512i bias_k(__m512i g, __mmask64 k, int b) {
    const __m512i vb = _mm512_set1_epi8((char) b);
    return _mm512_mask_sub_epi8(_mm512_add_epi8(g, vb), k, vb, g);
}

// 8 gathered 7-bit sign fields: fields 0-3 of word a (bits 7l) to qwords 0-3, of word b to 4-7
INL __m512i signs7(__m256i ab) { // ab: a in dwords 0-3, b in 4-7
    const __m256i f = _mm256_and_si256(_mm256_srlv_epi32(ab, _mm256_setr_epi32(0, 7, 14, 21, 0, 7, 14, 21)),
                                       _mm256_set1_epi32(127));
    return _mm512_i32gather_epi64(f, (const void *) k_sign_mask, 8);
}

// scales 2n + 1 of nibbles: low then high nibble of each of 8 bytes, in group order
INL __m256i nib_sc(const uint8_t * p) {
    const __m128i b = _mm_loadl_epi64((const __m128i *) p);
    const __m128i m4 = _mm_set1_epi8(0xF);
    const __m256i n = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(_mm_and_si128(b, m4), _mm_and_si128(_mm_srli_epi16(b, 4), m4)));
    return _mm256_add_epi16(_mm256_add_epi16(n, n), _mm256_set1_epi16(1));
}
// scales 2n + 1 from the top nibbles of int16 words: group g takes word w[g / 2] of the 8 picked
INL __m256i top_sc(__m512i v, __m512i pick) {
    const __m256i n = _mm256_srli_epi16(_mm512_castsi512_si256(_mm512_permutexvar_epi16(pick, v)), 12);
    return _mm256_add_epi16(_mm256_add_epi16(n, n), _mm256_set1_epi16(1));
}

// ---------------------------------------------------------------- the types
//
// T_sc(x, &S, &C): the 16 group multipliers and bias coefficients (int16,
// group order); T_u(x, s): step s's 64 biased quants; T_h(x): fp16 scale.

// iq2_xxs: per chunk 4 grid index bytes, then a word of 4 x 7 sign bits and the scale nibble
INL void iq2_xxs_sc(const void * vx, __m256i * s, __m256i * c) {
    const __m512i q = _mm512_loadu_si512(((const block_iq2_xxs *) vx)->qs);
    const __m512i pick = _mm512_zextsi256_si512(_mm256_setr_epi16(3, 3, 7, 7, 11, 11, 15, 15, 19, 19, 23, 23, 27, 27, 31, 31));
    *s = top_sc(q, pick);
    *c = _mm256_mullo_epi16(*s, _mm256_set1_epi16(-64));
}
INL __m512i iq2_xxs_u(const void * vx, int st) {
    const __m128i v = _mm_loadu_si128((const __m128i *)((const uint8_t *)((const block_iq2_xxs *) vx)->qs + 16 * st));
    const __m256i gi = _mm256_cvtepu8_epi32(_mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1, -1, -1)));
    const __m512i g = _mm512_i32gather_epi64(gi, (const void *) lm_iq2xxs_grid, 8);
    const __m256i ab = _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(v), _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3));
    return bias_m(g, signs7(ab), 64);
}
INL uint16_t iq2_xxs_h(const void * vx) { return ((const block_iq2_xxs *) vx)->d; }

// iq2_xs: 16-bit entries, 9 bits grid index and 7 sign bits
INL void iq2_xs_sc(const void * vx, __m256i * s, __m256i * c) {
    *s = nib_sc(((const block_iq2_xs *) vx)->scales);
    *c = _mm256_mullo_epi16(*s, _mm256_set1_epi16(-64));
}
INL __m512i iq2_xs_u(const void * vx, int st) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(((const block_iq2_xs *) vx)->qs + 8 * st)));
    const __m512i g = _mm512_i32gather_epi64(_mm256_and_si256(w, _mm256_set1_epi32(511)), (const void *) lm_iq2xs_grid, 8);
    const __m512i m = _mm512_i32gather_epi64(_mm256_srli_epi32(w, 9), (const void *) k_sign_mask, 8);
    return bias_m(g, m, 64);
}
INL uint16_t iq2_xs_h(const void * vx) { return ((const block_iq2_xs *) vx)->d; }

// iq2_s: 8 + 2 bits of grid index, 8 sign bits as they are: the mask itself
INL void iq2_s_sc(const void * vx, __m256i * s, __m256i * c) {
    *s = nib_sc(((const block_iq2_s *) vx)->scales);
    *c = _mm256_mullo_epi16(*s, _mm256_set1_epi16(-64));
}
INL __m512i iq2_s_u(const void * vx, int st) {
    const block_iq2_s * x = vx;
    const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(x->qs + 8 * st)));
    const __m256i h = _mm256_set1_epi32((int) rd16(x->qh + 2 * st) << 8);
    const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(h, _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(0x300));
    const __m512i g = _mm512_i32gather_epi64(_mm256_or_si256(lo, hi), (const void *) lm_iq2s_grid, 8);
    return bias_k(g, _cvtu64_mask64(rd64(x->qs + QK_K / 8 + 8 * st)), 64);
}
INL uint16_t iq2_s_h(const void * vx) { return ((const block_iq2_s *) vx)->d; }

// iq3_xxs: 16 grid indices of 4 magnitudes per step, the sign/scale words after them
INL void iq3_xxs_sc(const void * vx, __m256i * s, __m256i * c) {
    const __m512i w = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(((const block_iq3_xxs *) vx)->qs + QK_K / 4)));
    const __m512i pick = _mm512_zextsi256_si512(_mm256_setr_epi16(1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15));
    *s = top_sc(w, pick);
    *c = _mm256_mullo_epi16(*s, _mm256_set1_epi16(-64));
}
INL __m512i iq3_xxs_u(const void * vx, int st) {
    const block_iq3_xxs * x = vx;
    const __m512i gi = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(x->qs + 16 * st)));
    const __m512i g = _mm512_i32gather_epi32(gi, (const void *) lm_iq3xxs_grid, 4);
    const __m256i ab = _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(x->qs + QK_K / 4 + 8 * st))),
                                                   _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
    return bias_m(g, signs7(ab), 64);
}
INL uint16_t iq3_xxs_h(const void * vx) { return ((const block_iq3_xxs *) vx)->d; }

// iq3_s: 8 + 1 bits of grid index (the ninth bits a mask), 8 sign bits as they are
INL void iq3_s_sc(const void * vx, __m256i * s, __m256i * c) {
    const __m128i b = _mm_cvtsi32_si128((int) rd32(((const block_iq3_s *) vx)->scales));
    const __m128i m4 = _mm_set1_epi8(0xF);
    const __m128i n = _mm_unpacklo_epi8(_mm_and_si128(b, m4), _mm_and_si128(_mm_srli_epi16(b, 4), m4)); // chunk order
    const __m256i n16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(n, n));
    *s = _mm256_add_epi16(_mm256_add_epi16(n16, n16), _mm256_set1_epi16(1));
    *c = _mm256_mullo_epi16(*s, _mm256_set1_epi16(-64));
}
INL __m512i iq3_s_u(const void * vx, int st) {
    const block_iq3_s * x = vx;
    const __m512i lo = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(x->qs + 16 * st)));
    const __m512i gi = _mm512_mask_or_epi32(lo, _cvtu32_mask16(rd16(x->qh + 2 * st)), lo, _mm512_set1_epi32(0x100));
    const __m512i g = _mm512_i32gather_epi32(gi, (const void *) lm_iq3s_grid, 4);
    return bias_k(g, _cvtu64_mask64(rd64(x->signs + 8 * st)), 64);
}
INL uint16_t iq3_s_h(const void * vx) { return ((const block_iq3_s *) vx)->d; }

// iq1_s: u = g + 1, the scales taken 8 times, C = sc (delta - 8) (as mm-iquant-x86.c)
INL void iq1_s_sc(const void * vx, __m256i * s, __m256i * c) {
    const __m128i h8 = _mm_loadu_si128((const __m128i *)((const block_iq1_s *) vx)->qh);
    const __m256i h = _mm256_set_m128i(_mm_unpackhi_epi16(h8, h8), _mm_unpacklo_epi16(h8, h8)); // group order
    const __m256i n = _mm256_and_si256(_mm256_srli_epi16(h, 12), _mm256_set1_epi16(7));
    const __m256i sc = _mm256_add_epi16(_mm256_add_epi16(n, n), _mm256_set1_epi16(1));
    const __m256i neg = _mm256_srai_epi16(h, 15); // delta -1: 0 or -1
    *s = _mm256_slli_epi16(sc, 3);
    *c = _mm256_mullo_epi16(sc, _mm256_add_epi16(_mm256_add_epi16(neg, neg), _mm256_set1_epi16(-7)));
}
INL __m512i iq1_s_u(const void * vx, int st) {
    const block_iq1_s * x = vx;
    const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(x->qs + 8 * st)));
    const __m256i h = _mm256_set1_epi32((int) rd32(x->qh + 2 * st));
    const __m256i hi = _mm256_slli_epi32(_mm256_and_si256(_mm256_srlv_epi32(h, _mm256_setr_epi32(0, 3, 6, 9, 16, 19, 22, 25)),
                                                          _mm256_set1_epi32(7)), 8);
    const __m512i g = _mm512_i32gather_epi64(_mm256_or_si256(lo, hi), (const void *) lm_iq1s_grid, 8);
    return _mm512_add_epi8(g, _mm512_set1_epi8(1));
}
INL uint16_t iq1_s_h(const void * vx) { return ((const block_iq1_s *) vx)->d; }

// iq1_m: u = q + 9 = 8 (g + 1) + (delta + 1), a nibble per 8 quants (3 index bits, delta's sign)
INL void iq1_m_sc(const void * vx, __m256i * s, __m256i * c) {
    const __m256i w = _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)((const block_iq1_m *) vx)->scales));
    // group g: bits 3 (g % 4) of word g / 4
    const __m256i wg = _mm256_permutexvar_epi16(_mm256_setr_epi16(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), w);
    const __m256i n = _mm256_and_si256(_mm256_srlv_epi16(wg, _mm256_setr_epi16(0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9)),
                                       _mm256_set1_epi16(7));
    *s = _mm256_add_epi16(_mm256_add_epi16(n, n), _mm256_set1_epi16(1));
    *c = _mm256_mullo_epi16(*s, _mm256_set1_epi16(-9));
}
INL __m512i iq1_m_u(const void * vx, int st) {
    const block_iq1_m * x = vx;
    const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(x->qs + 8 * st)));
    const __m256i nib = _mm256_srlv_epi32(_mm256_set1_epi32((int) rd32(x->qh + 4 * st)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
    const __m256i gi = _mm256_or_si256(lo, _mm256_slli_epi32(_mm256_and_si256(nib, _mm256_set1_epi32(7)), 8));
    const __m512i g = _mm512_i32gather_epi64(gi, (const void *) lm_iq1s_grid, 8);
    const __m512i g8 = _mm512_slli_epi16(_mm512_add_epi8(g, _mm512_set1_epi8(1)), 3); // (g + 1) * 8 <= 16: stays in its byte
    const __mmask8 plus = _mm256_testn_epi32_mask(nib, _mm256_set1_epi32(8)); // delta +1: add 2 to those 8 bytes
    return _mm512_mask_add_epi64(g8, plus, g8, _mm512_set1_epi8(2));
}
INL uint16_t iq1_m_h(const void * vx) {
    const block_iq1_m * x = vx;
    uint16_t w[4];
    memcpy(w, x->scales, sizeof(w));
    return (uint16_t)((w[0] >> 12) | ((w[1] >> 8) & 0x00F0) | ((w[2] >> 4) & 0x0F00) | (w[3] & 0xF000));
}

// the ternary types: u = q + 1 in {0, 1, 2}, every scale 1, C = -1
// tq2_0: chunk ib is the 2-bit field ib % 4 of the 32 bytes ib / 4
INL __m512i tq2_0_u(const void * vx, int st) {
    const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(((const block_tq2_0 *) vx)->qs + 32 * (st / 2))));
    const __m512i sh = _mm512_inserti64x4(_mm512_set1_epi16((short)(4 * (st % 2))), _mm256_set1_epi16((short)(4 * (st % 2) + 2)), 1);
    return _mm512_and_si512(_mm512_srlv_epi16(v, sh), _mm512_set1_epi8(3));
}
INL uint16_t tq2_0_h(const void * vx) { return ((const block_tq2_0 *) vx)->d; }

// tq1_0: trit n of byte v is (3 t) >> 8 with t = v * 3^n mod 256, that is
// (t >= 86) + (t >= 171). m: 3^n per 16-bit lane.
INL __m512i trits(__m512i v, __m512i m) {
    const __m512i e = _mm512_mullo_epi16(v, m); // the low bytes' products in the low bytes
    const __m512i o = _mm512_mullo_epi16(_mm512_and_si512(v, _mm512_set1_epi16((short) 0xFF00)), m);
    const __m512i t = _mm512_mask_blend_epi8((__mmask64) 0xAAAAAAAAAAAAAAAAull, e, o);
    const __m512i one = _mm512_set1_epi8(1);
    const __m512i u = _mm512_maskz_mov_epi8(_mm512_cmpge_epu8_mask(t, _mm512_set1_epi8((char) 86)), one);
    return _mm512_mask_add_epi8(u, _mm512_cmpge_epu8_mask(t, _mm512_set1_epi8((char) 171)), u, one);
}
#define M4(a, b, c, d) _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(b), _mm_set1_epi16(a))), \
                                          _mm256_set_m128i(_mm_set1_epi16(d), _mm_set1_epi16(c)), 1)
// chunks 0-4: trit ib of bytes 0-31; 5, 6: trits 0-3 of bytes 32-47 (two
// per chunk); 7: trit 4 of bytes 32-47, then trits 0-3 of the 4 bytes of qh
INL __m512i tq1_0_u(const void * vx, int st) {
    const block_tq1_0 * x = vx;
    const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) x->qs));
    const __m512i w = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(x->qs + 32)));
    switch (st) {
        case 0:  return trits(v, M4(1, 1, 3, 3));
        case 1:  return trits(v, M4(9, 9, 27, 27));
        case 2:  return trits(_mm512_mask_blend_epi64(0xF0, v, w), M4(81, 81, 1, 3));
        default: return trits(_mm512_mask_blend_epi32(0xF000, w, _mm512_set1_epi32((int) rd32(x->qh))),
                              _mm512_inserti64x4(M4(9, 27, 0, 0), _mm256_setr_epi16(81, 81, 81, 81, 81, 81, 81, 81,
                                                                                     1, 1, 3, 3, 9, 9, 27, 27), 1));
    }
}
INL uint16_t tq1_0_h(const void * vx) { return ((const block_tq1_0 *) vx)->d; }

// ---------------------------------------------------------------- the dot

// the int16 lane pattern of step s: group 4s + k in 128-bit lane k
static const int16_t k_pick[4][32] __attribute__((aligned(64))) = {
#define PK(g) g, g, g, g, g, g, g, g
    { PK(0), PK(1), PK(2), PK(3) }, { PK(4), PK(5), PK(6), PK(7) },
    { PK(8), PK(9), PK(10), PK(11) }, { PK(12), PK(13), PK(14), PK(15) },
#undef PK
};

// a block's acc and bias terms as 8 int32 lanes
INL __m256i fold(__m512i acc, __m256i bias) {
    return _mm256_add_epi32(_mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1)), bias);
}
INL int hsum8(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}

#define IQ_YS(st) _mm512_loadu_si512(y->qs + 64 * (st))
#define IQ_STEP(T, st) \
    acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(T##_u(x, st), IQ_YS(st)), \
                              _mm512_permutexvar_epi16(_mm512_load_si512(k_pick[st]), s5));
#define IQ_STEP1(T, st) acc = _mm512_dpbusd_epi32(acc, T##_u(x, st), IQ_YS(st));

// a block's exact integer dot, as 8 int32 lanes to sum
#define IQ_ISUM(T)                                                                                        \
INL __m256i T##_isum(const void * x, const block_q8_K * y) {                                                 \
    __m256i s, c;                                                                                        \
    T##_sc(x, &s, &c);                                                                                   \
    const __m512i s5 = _mm512_castsi256_si512(s);                                                        \
    __m512i acc = _mm512_setzero_si512();                                                                \
    IQ_STEP(T, 0) IQ_STEP(T, 1) IQ_STEP(T, 2) IQ_STEP(T, 3)                                              \
    return fold(acc, _mm256_madd_epi16(c, _mm256_loadu_si256((const __m256i *) y->bsums)));          \
}
#define IQ_ISUM1(T)                                                                                       \
INL __m256i T##_isum(const void * x, const block_q8_K * y) {                                                 \
    __m512i acc = _mm512_setzero_si512();                                                                \
    IQ_STEP1(T, 0) IQ_STEP1(T, 1) IQ_STEP1(T, 2) IQ_STEP1(T, 3)                                          \
    return fold(acc, _mm256_madd_epi16(_mm256_set1_epi16(-1), _mm256_loadu_si256((const __m256i *) y->bsums))); \
}

// the templates' index hooks, empty: these kernels build their indices as they go
#define IQ_VD(T, TT)                                                                                      \
    INL void T##_ix(const void * x, uint16_t * ix) { (void) x; (void) ix; }                              \
    INL __m256i T##_isum_ix(const void * x, const block_q8_K * y, const uint16_t * ix) {                 \
        (void) ix;                                                                                       \
        return T##_isum(x, y);                                                                           \
    }                                                                                                    \
    IQ_VD_TMPL(LM_TARGET_VNNI, hsum8, T, TT)

#define IQ_MV8(T, TT) IQ_MV8_TMPL(LM_TARGET_VNNI, T, TT, AUTO)

IQ_ISUM(iq2_xxs) IQ_VD(iq2_xxs, IQ2_XXS)
IQ_ISUM(iq2_xs)  IQ_VD(iq2_xs,  IQ2_XS)
IQ_ISUM(iq2_s)   IQ_VD(iq2_s,   IQ2_S)
IQ_ISUM(iq3_xxs) IQ_VD(iq3_xxs, IQ3_XXS)
IQ_ISUM(iq3_s)   IQ_VD(iq3_s,   IQ3_S)
IQ_ISUM(iq1_s)   IQ_VD(iq1_s,   IQ1_S)
IQ_ISUM(iq1_m)   IQ_VD(iq1_m,   IQ1_M)
IQ_ISUM1(tq1_0)  IQ_VD(tq1_0,   TQ1_0) IQ_MV8(tq1_0,   TQ1_0)
IQ_ISUM1(tq2_0)  IQ_VD(tq2_0,   TQ2_0) IQ_MV8(tq2_0,   TQ2_0)

lm_ggml_vec_dot_t mm_iq_dot_avx512(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS: return vd_iq2_xxs;
        case LM_GGML_TYPE_IQ2_XS:  return vd_iq2_xs;
        case LM_GGML_TYPE_IQ2_S:   return vd_iq2_s;
        case LM_GGML_TYPE_IQ3_XXS: return vd_iq3_xxs;
        case LM_GGML_TYPE_IQ3_S:   return vd_iq3_s;
        case LM_GGML_TYPE_IQ1_S:   return vd_iq1_s;
        case LM_GGML_TYPE_IQ1_M:   return vd_iq1_m;
        case LM_GGML_TYPE_TQ1_0:   return vd_tq1_0;
        case LM_GGML_TYPE_TQ2_0:   return vd_tq2_0;
        default:                   return NULL;
    }
}

// ---------------------------------------------------------------- the GEMM
//
// One column: this dot per row, or 8 rows at a time in the lanes with
// each row the dot's steps (the row's bits, as the GEMM's contract asks). More: the AVX2 GEMM, which gives every pair the AVX2 dot's bits,
// the same as these.
#define IQG_ENTRY(T, TT, MV8)                                                                             \
static void qg_##T(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * const * ycol, \
                   float * const * dcol, int ncol, void * scratch) {                                     \
    if (ncol > 1) {                                                                                      \
        mm_iq_qgemm_avx2_evex(LM_GGML_TYPE_##TT)(K, x, xrs, r0, r1, ycol, dcol, ncol, scratch);           \
        return;                                                                                          \
    }                                                                                                    \
    IQG_ONE_##MV8(T)                                                                                     \
}
#define IQG_ONE_0(T) for (int64_t r = r0; r < r1; r++) vd_##T((int) K, dcol[0] + r, 0, x + r * xrs, 0, ycol[0], 0, 1);
#define IQG_ONE_1(T)                                                                                      \
    float out[8];                                                                                        \
    for (int64_t r = r0; r < r1; r += 8) {                                                               \
        const int nr = (int) LM_GGML_MIN(8, r1 - r);                                                     \
        mv8_##T(K / QK_K, x + r * xrs, xrs, nr, ycol[0], out);                                           \
        for (int i = 0; i < nr; i++) dcol[0][r + i] = out[i];                                            \
    }
// the gather types row by row (8 rows' gathers in flight at once run slower);
// the ternary ones 8 rows at a time
IQG_ENTRY(iq2_xxs, IQ2_XXS, 0)
IQG_ENTRY(iq2_xs,  IQ2_XS,  0)
IQG_ENTRY(iq2_s,   IQ2_S,   0)
IQG_ENTRY(iq3_xxs, IQ3_XXS, 0)
IQG_ENTRY(iq3_s,   IQ3_S,   0)
IQG_ENTRY(iq1_s,   IQ1_S,   0)
IQG_ENTRY(iq1_m,   IQ1_M,   0)
IQG_ENTRY(tq1_0,   TQ1_0,   1)
IQG_ENTRY(tq2_0,   TQ2_0,   1)

// Where gathers are slow (lm_cpu_slow_gather), the AVX2 8-row mat-vecs of
// iq2_xxs, iq2_xs, iq2_s, iq3_xxs and iq3_s, which load their grid entries
// one by one, outrun these row-by-row gather forms; iq1_s and iq1_m keep
// theirs, still the faster there.
mm_qgemm_fn mm_iq_qgemm_avx512(enum lm_ggml_type type) {
    const bool g = !lm_cpu_slow_gather();
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS: return g ? qg_iq2_xxs : NULL;
        case LM_GGML_TYPE_IQ2_XS:  return g ? qg_iq2_xs : NULL;
        case LM_GGML_TYPE_IQ2_S:   return g ? qg_iq2_s : NULL;
        case LM_GGML_TYPE_IQ3_XXS: return g ? qg_iq3_xxs : NULL;
        case LM_GGML_TYPE_IQ3_S:   return g ? qg_iq3_s : NULL;
        case LM_GGML_TYPE_IQ1_S:   return qg_iq1_s;
        case LM_GGML_TYPE_IQ1_M:   return qg_iq1_m;
        case LM_GGML_TYPE_TQ1_0:   return qg_tq1_0;
        case LM_GGML_TYPE_TQ2_0:   return qg_tq2_0;
        default:                   return NULL;
    }
}
#else
typedef int mm_iquant_avx512_unused; // ISO C forbids an empty translation unit
#endif
