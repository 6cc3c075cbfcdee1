// mm-iquant-x86.c - AVX2 integer dots of the i-quants and the ternary types
// against q8_K (mm-iquant.h), x86-64 only: the scalar kernels' bits.
//
// Each type decodes 32 quants at a time straight into a register as
// u = q + B (B a per-type bias, u in [0, 127]), the unsigned operand of
// maddubs; the activations stay as they are (they hold -128, which the
// sign trick on them would get wrong). A block's integer dot is then
//
//     sumi = sum over chunks c of  madd(maddubs(u_c, y_c), S_c)  +  madd(C, bsums)
//
// with S_c the int16 scales of the chunk's two groups of 16 (lane 0 the
// first, lane 1 the second) and C the per-group coefficients that take the
// bias back through y's group sums (-B * sc, or iq1_s's form below). Every
// step is exact, so sumi is the scalar decoders' integer; the float steps
// are the scalar ones, (d * d_y) * (float) sumi added block by block and
// the per-type factor applied at the end, so the bits are the scalar's.
// The GEMM stores u, S and C of 8 rows once per block and runs every
// column over them with the same sums; with one column it decodes in
// registers, 8 rows at a time in the lanes (no horizontal sum per row).
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

// mm-iquant-x86-evex.c compiles this file once more for the AVX-512 level:
// the same source and bits, in EVEX encodings with 32 vector registers.
#if defined(MM_IQ_X86_EVEX)
#undef LM_TARGET_AVX2
#define LM_TARGET_AVX2 LM_TARGET_AVX512
#define mm_iq_dot_avx2   mm_iq_dot_avx2_evex
#define mm_iq_qgemm_avx2 mm_iq_qgemm_avx2_evex
#endif

#include "mm-quant-x86.h"
#include "mm-iquant-x86.h"

#define H2F(x) _cvtsh_ss(x)

static inline uint32_t rd32(const void * p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t rd64(const void * p) { uint64_t v; memcpy(&v, p, 8); return v; }

// ---------------------------------------------------------------- helpers

// 4 table entries of 8 bytes in one vector, by broadcast loads and blends:
// inserts would all queue on the one shuffle port.
LM_TARGET_AVX2 static inline __m256i ld4q(const uint64_t * t, unsigned a, unsigned b, unsigned c, unsigned d) {
    const __m256i va = _mm256_set1_epi64x((long long) t[a]), vb = _mm256_set1_epi64x((long long) t[b]);
    const __m256i vc = _mm256_set1_epi64x((long long) t[c]), vd = _mm256_set1_epi64x((long long) t[d]);
    return _mm256_blend_epi32(_mm256_blend_epi32(va, vb, 0x0C), _mm256_blend_epi32(vc, vd, 0xC0), 0xF0);
}

// 8 table entries of 4 bytes in one vector, by broadcast loads and blends
// as ld4q (a gather is slow where it is microcoded).
LM_TARGET_AVX2 static inline __m256i ld8d(const uint32_t * t, unsigned a, unsigned b, unsigned c, unsigned d,
                                          unsigned e, unsigned f, unsigned g, unsigned h) {
#define B_(i) _mm256_set1_epi32((int) t[i])
    const __m256i lo = _mm256_blend_epi32(_mm256_blend_epi32(B_(a), B_(b), 0x02), _mm256_blend_epi32(B_(c), B_(d), 0x08), 0x0C);
    const __m256i hi = _mm256_blend_epi32(_mm256_blend_epi32(B_(e), B_(f), 0x20), _mm256_blend_epi32(B_(g), B_(h), 0x80), 0xC0);
#undef B_
    return _mm256_blend_epi32(lo, hi, 0xF0);
}

// u = sign(g) + 64 from magnitudes g and 0x00/0xFF masks m
LM_TARGET_AVX2 static inline __m256i bias_mask(__m256i g, __m256i m) {
    return _mm256_add_epi8(_mm256_sub_epi8(_mm256_xor_si256(g, m), m), _mm256_set1_epi8(64));
}

// u = sign(g) + 64 with the signs as bits (bits_to_bytes' order) at p: at
// the AVX-512 level they go straight into a mask register
LM_TARGET_AVX2 static inline __m256i bias_bits(__m256i g, const uint8_t * p) {
#if defined(MM_IQ_X86_EVEX)
    const __m256i c = _mm256_set1_epi8(64);
    return _mm256_mask_sub_epi8(_mm256_add_epi8(g, c), _cvtu32_mask32(rd32(p)), c, g);
#else
    return bias_mask(g, bits_to_bytes(p));
#endif
}

// the int16 element e of each lane in all of that lane
LM_TARGET_AVX2 static inline __m256i bc16(__m256i v, int e) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16((short)((2 * e) | (2 * e + 1) << 8)));
}

// Per-chunk values (8 dwords, chunk order) used for both groups of a chunk:
// *s the S form (chunk c's value at int16 c of both lanes), *g the group
// order (16 int16, groups 2c and 2c+1 the value of chunk c).
LM_TARGET_AVX2 static inline void chunk_vals(__m256i c32, __m256i * s, __m256i * g) {
    const __m256i p = _mm256_packs_epi32(c32, c32); // lane 0: c0-3 c0-3, lane 1: c4-7 c4-7
    *s = _mm256_permute4x64_epi64(p, 0 | 2 << 2 | 0 << 4 | 2 << 6);
    *g = _mm256_unpacklo_epi16(p, p);
}
// Per-group values given as the first groups of the chunks (e) and the second (o), int16 in chunk order.
LM_TARGET_AVX2 static inline void pair_vals(__m128i e, __m128i o, __m256i * s, __m256i * g) {
    *s = _mm256_set_m128i(o, e);
    *g = _mm256_set_m128i(_mm_unpackhi_epi16(e, o), _mm_unpacklo_epi16(e, o));
}
LM_TARGET_AVX2 static inline __m128i odd16(__m128i n) { // 2n + 1
    return _mm_add_epi16(_mm_add_epi16(n, n), _mm_set1_epi16(1));
}

// scales 2n + 1 of the nibbles of 8 bytes: low nibbles the first groups of the chunks, high the second
LM_TARGET_AVX2 static inline void nib_scales(const uint8_t * p, int bias, __m256i * s, __m256i * c) {
    const __m128i b = _mm_loadl_epi64((const __m128i *) p);
    const __m128i m4 = _mm_set1_epi8(0xF);
    __m256i g;
    pair_vals(odd16(_mm_cvtepu8_epi16(_mm_and_si128(b, m4))), odd16(_mm_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(b, 4), m4))), s, &g);
    *c = _mm256_mullo_epi16(g, _mm256_set1_epi16((short) -bias));
}

// scales 2n + 1 of the top nibbles of 8 words (chunk order), the same for both groups
LM_TARGET_AVX2 static inline void top_nib_scales(__m256i w, int bias, __m256i * s, __m256i * c) {
    const __m256i n = _mm256_srli_epi32(w, 28);
    __m256i g;
    chunk_vals(_mm256_add_epi32(_mm256_add_epi32(n, n), _mm256_set1_epi32(1)), s, &g);
    *c = _mm256_mullo_epi16(g, _mm256_set1_epi16((short) -bias));
}

LM_TARGET_AVX2 static inline int hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
    return _mm_cvtsi128_si32(s);
}


#define INL LM_TARGET_AVX2 static inline __attribute__((always_inline))

// 16 n grid indices of 8 low bits from lo and high bits from the bytes of
// qh: word e of pass k takes byte (sh + k step)[e] of qh (sh's words 0x80xx),
// whose bits for it mul moves to bit 8 and up, where mask keeps them.
#define IX_B4(w) (short)(w), (short)(w), (short)(w), (short)(w)
INL void ix_lanes(const uint8_t * lo, const uint8_t * qh, __m256i sh, int step, __m256i mul, short mask, int n, uint16_t * ix) {
    const __m256i h = _mm256_set1_epi64x((long long) rd64(qh));
    for (int k = 0; k < n; k++) {
        const __m256i hb = _mm256_shuffle_epi8(h, _mm256_add_epi16(sh, _mm256_set1_epi16((short)(k * step))));
        const __m256i hi = _mm256_and_si256(_mm256_mullo_epi16(hb, mul), _mm256_set1_epi16(mask));
        const __m256i l = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(lo + 16 * k)));
        _mm256_store_si256((__m256i *)(ix + 16 * k), _mm256_or_si256(l, hi));
    }
}

// ---------------------------------------------------------------- the types
//
// T_prep(x, &S, &C): a block's scales and bias coefficients (see the top);
// T_ix(x, ix): what the block's chunks look up, made all at once in the
// lanes into ix: the grid indices of the types that build them from two
// fields, or the sign bytes of those with 7 stored sign bits (the others
// build none);
// T_u(x, ib, ix): chunk ib's 32 biased quants; T_h(x): the block's fp16 scale.
#define NO_IX(T) INL void T##_ix(const void * vx, uint16_t * ix) { (void) vx; (void) ix; }
NO_IX(iq1_s) NO_IX(iq1_m) NO_IX(tq1_0) NO_IX(tq2_0)

// the 7-bit fields of 32 bytes with their parity in bit 7: each byte the
// 8 signs of its entry, a set bit a negative quant, as bits_to_bytes reads
INL __m256i with_parity7(__m256i f) {
    const __m256i odd = _mm256_setr_epi8(0, -128, -128, 0, -128, 0, 0, -128, -128, 0, 0, -128, 0, -128, -128, 0,
                                         0, -128, -128, 0, -128, 0, 0, -128, -128, 0, 0, -128, 0, -128, -128, 0);
    const __m256i m4 = _mm256_set1_epi8(0xF);
    const __m256i p = _mm256_xor_si256(_mm256_shuffle_epi8(odd, _mm256_and_si256(f, m4)),
                                       _mm256_shuffle_epi8(odd, _mm256_and_si256(_mm256_srli_epi16(f, 4), m4)));
    return _mm256_or_si256(f, p);
}

// The sign bytes (with_parity7) of 8 words of four 7-bit sign fields
// (bits 0-27; the top nibble is left out) into ix: the fields of word i in
// bytes 4i to 4i + 3.
INL void signs7x4_bytes(__m256i w, uint16_t * ix) {
    // fields 2 and 3 up by 2 bits, then 1 and 3 up by 1
    const __m256i h = _mm256_or_si256(_mm256_and_si256(w, _mm256_set1_epi32(0x3FFF)),
                                      _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0xFFFC000)), 2));
    const __m256i f = _mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi32(0x007F007F)),
                                      _mm256_slli_epi32(_mm256_and_si256(h, _mm256_set1_epi32(0x3F803F80)), 1));
    _mm256_store_si256((__m256i *) ix, with_parity7(f));
}

// iq2_xxs: per chunk two words: 4 grid indices; 4 x 7 sign bits and the
// scale nibble. The signs of the block's 32 entries are made all at once,
// a byte each, into ix.
INL __m256i iq2_xxs_odd(const block_iq2_xxs * x) { // the odd words, in chunk order
    const __m256 w0 = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *) x->qs));
    const __m256 w1 = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(x->qs + 16)));
    // lane 0 chunks 0 1 4 5, lane 1 chunks 2 3 6 7
    const __m256i odd = _mm256_castps_si256(_mm256_shuffle_ps(w0, w1, 1 | 3 << 2 | 1 << 4 | 3 << 6));
    return _mm256_permutevar8x32_epi32(odd, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
}
INL void iq2_xxs_prep(const void * vx, __m256i * s, __m256i * c) {
    top_nib_scales(iq2_xxs_odd(vx), 64, s, c);
}
INL void iq2_xxs_ix(const void * vx, uint16_t * ix) {
    signs7x4_bytes(iq2_xxs_odd(vx), ix);
}
INL __m256i iq2_xxs_u(const void * vx, int ib, const uint16_t * ix) {
    const uint8_t * q = (const uint8_t *)((const block_iq2_xxs *) vx)->qs + 8 * ib;
    return bias_bits(ld4q(lm_iq2xxs_grid, q[0], q[1], q[2], q[3]), (const uint8_t *) ix + 4 * ib);
}
INL uint16_t iq2_xxs_h(const void * vx) { return ((const block_iq2_xxs *) vx)->d; }

// iq2_xs: 16-bit entries, 9 bits grid index and 7 sign bits. The signs of
// the block's 32 entries are made all at once, a byte each, into ix.
INL void iq2_xs_prep(const void * vx, __m256i * s, __m256i * c) {
    nib_scales(((const block_iq2_xs *) vx)->scales, 64, s, c);
}
INL void iq2_xs_ix(const void * vx, uint16_t * ix) {
    const uint16_t * q = ((const block_iq2_xs *) vx)->qs;
    const __m256i a = _mm256_srli_epi16(_mm256_loadu_si256((const __m256i *) q), 9);
    const __m256i b = _mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(q + 16)), 9);
    const __m256i f = _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0 | 2 << 2 | 1 << 4 | 3 << 6);
    _mm256_store_si256((__m256i *) ix, with_parity7(f));
}
INL __m256i iq2_xs_u(const void * vx, int ib, const uint16_t * ix) {
    const uint64_t v = rd64(((const block_iq2_xs *) vx)->qs + 4 * ib);
    const __m256i g = ld4q(lm_iq2xs_grid, v & 511, (v >> 16) & 511, (v >> 32) & 511, (v >> 48) & 511);
    return bias_bits(g, (const uint8_t *) ix + 4 * ib);
}
INL uint16_t iq2_xs_h(const void * vx) { return ((const block_iq2_xs *) vx)->d; }

// iq2_s: 8 + 2 bits of grid index, 8 sign bits stored as they are
INL void iq2_s_prep(const void * vx, __m256i * s, __m256i * c) {
    nib_scales(((const block_iq2_s *) vx)->scales, 64, s, c);
}
INL void iq2_s_ix(const void * vx, uint16_t * ix) {
    const block_iq2_s * x = vx;
    // bits 2j and 2j+1 of qh[e / 4] (j = e % 4)
    ix_lanes(x->qs, x->qh, _mm256_setr_epi16(IX_B4(0x8000), IX_B4(0x8001), IX_B4(0x8002), IX_B4(0x8003)), 4,
             _mm256_setr_epi16(256, 64, 16, 4, 256, 64, 16, 4, 256, 64, 16, 4, 256, 64, 16, 4), 0x300, 2, ix);
}
INL __m256i iq2_s_u(const void * vx, int ib, const uint16_t * ix) {
    const block_iq2_s * x = vx;
    const uint16_t * i = ix + 4 * ib;
    const __m256i g = ld4q(lm_iq2s_grid, i[0], i[1], i[2], i[3]);
    return bias_bits(g, x->qs + QK_K / 8 + 4 * ib);
}
INL uint16_t iq2_s_h(const void * vx) { return ((const block_iq2_s *) vx)->d; }

// iq3_xxs: 8 grid indices of 4 magnitudes per chunk, then the words of signs and scale
INL void iq3_xxs_prep(const void * vx, __m256i * s, __m256i * c) {
    top_nib_scales(_mm256_loadu_si256((const __m256i *)(((const block_iq3_xxs *) vx)->qs + QK_K / 4)), 64, s, c);
}
INL void iq3_xxs_ix(const void * vx, uint16_t * ix) {
    signs7x4_bytes(_mm256_loadu_si256((const __m256i *)(((const block_iq3_xxs *) vx)->qs + QK_K / 4)), ix);
}
INL __m256i iq3_xxs_u(const void * vx, int ib, const uint16_t * ix) {
    const uint8_t * q = ((const block_iq3_xxs *) vx)->qs + 8 * ib;
    const __m256i g = ld8d(lm_iq3xxs_grid, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
    return bias_bits(g, (const uint8_t *) ix + 4 * ib);
}
INL uint16_t iq3_xxs_h(const void * vx) { return ((const block_iq3_xxs *) vx)->d; }

// iq3_s: 8 + 1 bits of grid index, 8 sign bits as they are, one scale nibble per chunk
INL void iq3_s_ix(const void * vx, uint16_t * ix) {
    const block_iq3_s * x = vx;
    // bit j of qh[e / 8] (j = e % 8)
    ix_lanes(x->qs, x->qh, _mm256_setr_epi16(IX_B4(0x8000), IX_B4(0x8000), IX_B4(0x8001), IX_B4(0x8001)), 2,
             _mm256_setr_epi16(256, 128, 64, 32, 16, 8, 4, 2, 256, 128, 64, 32, 16, 8, 4, 2), 0x100, 4, ix);
}
INL void iq3_s_prep(const void * vx, __m256i * s, __m256i * c) {
    const __m128i b = _mm_cvtsi32_si128((int) rd32(((const block_iq3_s *) vx)->scales));
    const __m128i m4 = _mm_set1_epi8(0xF);
    const __m128i n = _mm_unpacklo_epi8(_mm_and_si128(b, m4), _mm_and_si128(_mm_srli_epi16(b, 4), m4));
    const __m256i n32 = _mm256_cvtepu8_epi32(n);
    __m256i g;
    chunk_vals(_mm256_add_epi32(_mm256_add_epi32(n32, n32), _mm256_set1_epi32(1)), s, &g);
    *c = _mm256_mullo_epi16(g, _mm256_set1_epi16(-64));
}
INL __m256i iq3_s_u(const void * vx, int ib, const uint16_t * ix) {
    const block_iq3_s * x = vx;
    const uint16_t * i = ix + 8 * ib;
    const __m256i g = ld8d(lm_iq3s_grid, i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7]);
    return bias_bits(g, x->signs + 4 * ib);
}
INL uint16_t iq3_s_h(const void * vx) { return ((const block_iq3_s *) vx)->d; }

// iq1_s: q = 8g + delta with g in {-1, 0, 1} and delta = +-1 per chunk. With
// u = g + 1 and the scales taken 8 times, a group sums to 8 sc (sum u y) +
// sc (delta - 8) (sum y): C = sc (delta - 8).
INL void iq1_s_prep(const void * vx, __m256i * s, __m256i * c) {
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const block_iq1_s *) vx)->qh));
    const __m256i n = _mm256_and_si256(_mm256_srli_epi32(h, 12), _mm256_set1_epi32(7));
    const __m256i sc = _mm256_add_epi32(_mm256_add_epi32(n, n), _mm256_set1_epi32(1));
    const __m256i delta = _mm256_or_si256(_mm256_srai_epi32(_mm256_slli_epi32(h, 16), 31), _mm256_set1_epi32(1));
    __m256i sg, dg, ds;
    chunk_vals(_mm256_slli_epi32(sc, 3), s, &sg);
    chunk_vals(_mm256_mullo_epi32(sc, _mm256_sub_epi32(delta, _mm256_set1_epi32(8))), &ds, &dg);
    (void) ds;
    *c = dg;
}
INL __m256i iq1_s_u(const void * vx, int ib, const uint16_t * ix) {
    (void) ix;
    const block_iq1_s * x = vx;
    const uint8_t * q = x->qs + 4 * ib;
    const unsigned h = x->qh[ib];
    const __m256i g = ld4q(lm_iq1s_grid, q[0] | ((h << 8) & 0x700), q[1] | ((h << 5) & 0x700), q[2] | ((h << 2) & 0x700),
                           q[3] | ((h >> 1) & 0x700));
    return _mm256_add_epi8(g, _mm256_set1_epi8(1));
}
INL uint16_t iq1_s_h(const void * vx) { return ((const block_iq1_s *) vx)->d; }

// iq1_m: delta per 8 quants, so it goes into u: u = q + 9 = 8 (g + 1) + (delta + 1)
INL void iq1_m_prep(const void * vx, __m256i * s, __m256i * c) {
    // the four 16-bit words twice in each half, each group's 3-bit field moved to the top
    const __m128i w = _mm_loadl_epi64((const __m128i *)((const block_iq1_m *) vx)->scales);
    const __m128i w2 = _mm_shuffle_epi8(w, _mm_setr_epi8(0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7));
    // first groups of the chunks: fields 0 and 2 of a word; second: 1 and 3
    const __m128i e = _mm_srli_epi16(_mm_mullo_epi16(w2, _mm_setr_epi16(1 << 13, 1 << 7, 1 << 13, 1 << 7, 1 << 13, 1 << 7, 1 << 13, 1 << 7)), 13);
    const __m128i o = _mm_srli_epi16(_mm_mullo_epi16(w2, _mm_setr_epi16(1 << 10, 1 << 4, 1 << 10, 1 << 4, 1 << 10, 1 << 4, 1 << 10, 1 << 4)), 13);
    __m256i g;
    pair_vals(odd16(e), odd16(o), s, &g);
    *c = _mm256_mullo_epi16(g, _mm256_set1_epi16(-9));
}
INL __m256i iq1_m_u(const void * vx, int ib, const uint16_t * ix) {
    (void) ix;
    const block_iq1_m * x = vx;
    const uint8_t * q = x->qs + 4 * ib;
    const unsigned h = x->qh[2 * ib] | (unsigned) x->qh[2 * ib + 1] << 8;
    const __m256i g = ld4q(lm_iq1s_grid, q[0] | ((h << 8) & 0x700), q[1] | ((h << 4) & 0x700), q[2] | (h & 0x700),
                           q[3] | ((h >> 4) & 0x700));
    // each 8 quants' delta bit (bit 3 of its nibble) tested in both dwords of its quarter
    const __m256i bit = _mm256_setr_epi32(0x8, 0x8, 0x80, 0x80, 0x800, 0x800, 0x8000, 0x8000);
    const __m256i clear = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int) h), bit), _mm256_setzero_si256());
    const __m256i g8 = _mm256_slli_epi16(_mm256_add_epi8(g, _mm256_set1_epi8(1)), 3); // (g + 1) * 8 <= 16: stays in its byte
    return _mm256_or_si256(g8, _mm256_and_si256(clear, _mm256_set1_epi8(2)));
}
INL uint16_t iq1_m_h(const void * vx) {
    const block_iq1_m * x = vx;
    uint16_t w[4];
    memcpy(w, x->scales, sizeof(w));
    return (uint16_t)((w[0] >> 12) | ((w[1] >> 8) & 0x00F0) | ((w[2] >> 4) & 0x0F00) | (w[3] & 0xF000));
}

// the ternary types: u = q + 1 in {0, 1, 2}, every scale 1
INL void tern_prep(const void * vx, __m256i * s, __m256i * c) {
    (void) vx;
    *s = _mm256_set1_epi16(1);
    *c = _mm256_set1_epi16(-1);
}

// tq2_0: chunk ib is the 2-bit field ib % 4 of the 32 bytes ib / 4
#define tq2_0_prep tern_prep
INL __m256i tq2_0_u(const void * vx, int ib, const uint16_t * ix) {
    (void) ix;
    const __m256i v = _mm256_loadu_si256((const __m256i *)(((const block_tq2_0 *) vx)->qs + 32 * (ib / 4)));
    return _mm256_and_si256(_mm256_srli_epi16(v, 2 * (ib % 4)), _mm256_set1_epi8(3));
}
INL uint16_t tq2_0_h(const void * vx) { return ((const block_tq2_0 *) vx)->d; }

// tq1_0: trit n of byte v is the top trit of t = v * 3^n mod 256, (3 t) >> 8:
// 0 below 86, 1 below 171, 2 from there. The bytes are multiplied by 3 in
// the byte lanes (t + 2 t wraps as the mod wants) with their top bit flipped
// first, which multiplying by an odd number keeps (3 (t + 128) = 3 t + 128
// mod 256), so that signed compares order them as unsigned.
INL __m256i x3(__m256i t) { return _mm256_add_epi8(t, _mm256_add_epi8(t, t)); }
INL __m256i x3n(__m256i t, int n) {
    for (int k = 0; k < n; k++) t = x3(t);
    return t;
}
// GCC turns one of two compares of the same bytes into a min and a compare
// for equality; the asm keeps each a single vpcmpgtb.
INL __m256i cmpgt_i8(__m256i a, __m256i b) {
    __m256i r;
    __asm__("vpcmpgtb %2, %1, %0" : "=x"(r) : "x"(a), "x"(b));
    return r;
}
INL __m256i top_trit(__m256i t) {
    const __m256i ge86 = cmpgt_i8(t, _mm256_set1_epi8(85 - 128));
    const __m256i ge171 = cmpgt_i8(t, _mm256_set1_epi8(170 - 128));
    return _mm256_sub_epi8(_mm256_setzero_si256(), _mm256_add_epi8(ge86, ge171));
}
#define tq1_0_prep tern_prep
// chunks 0-4: trit ib of bytes 0-31; 5, 6: trits 0-3 of bytes 32-47 (two
// per chunk); 7: trit 4 of bytes 32-47, then trits 0-3 of the 4 bytes of qh
// (byte j's trit n at 16 + 4 n + j)
INL __m256i tq1_0_u(const void * vx, int ib, const uint16_t * ix) {
    (void) ix;
    const block_tq1_0 * x = vx;
    const __m256i flip = _mm256_set1_epi8((char) 0x80);
    if (ib < 5) return top_trit(x3n(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *) x->qs), flip), ib));
    const __m256i w = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(x->qs + 32))), flip);
    const __m256i c5 = _mm256_blend_epi32(w, x3(w), 0xF0); // 1, 3
    if (ib == 5) return top_trit(c5);
    const __m256i c6 = x3n(c5, 2); // 9, 27
    if (ib == 6) return top_trit(c6);
    // qh's bytes times 1, 3, 9, 27 per dword, even and odd bytes apart in 16-bit products
    const __m256i h = _mm256_set1_epi32((int)(rd32(x->qh) ^ 0x80808080u));
    const __m256i m = _mm256_setr_epi16(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3, 3, 9, 9, 27, 27);
    const __m256i lo = _mm256_set1_epi16(0xFF);
    const __m256i he = _mm256_and_si256(_mm256_mullo_epi16(_mm256_and_si256(h, lo), m), lo);
    const __m256i ho = _mm256_mullo_epi16(_mm256_andnot_si256(lo, h), m);
    return top_trit(_mm256_blend_epi32(x3n(c6, 2), _mm256_or_si256(he, ho), 0xF0)); // 81
}
INL uint16_t tq1_0_h(const void * vx) { return ((const block_tq1_0 *) vx)->d; }

// ---------------------------------------------------------------- the dot (1 row)

// the 8 chunks written out: ib must be a constant for the shuffles
#define IQ_CHUNKS(STEP) STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)

// a block's exact integer dot as 8 int32 lanes; ONE: every scale is 1, the
// maddubs pairs (at most 8 x 2 x 2 x 128 in magnitude) summed in 16 bits
#define IQ_BLOCK(T, ONE)                                                                                  \
INL __m256i T##_isum_ix(const void * x, const block_q8_K * y, const uint16_t * ix) {                     \
    __m256i s, c;                                                                                        \
    T##_prep(x, &s, &c);                                                                                 \
    const __m256i a0 = _mm256_madd_epi16(c, _mm256_loadu_si256((const __m256i *) y->bsums));              \
    __m256i a = _mm256_setzero_si256();                                                                  \
    IQ_CHUNKS(T##_STEP_##ONE)                                                                            \
    return ONE ? _mm256_add_epi32(a0, _mm256_madd_epi16(a, _mm256_set1_epi16(1))) : _mm256_add_epi32(a0, a); \
}
#define IQ_P(T, ib) _mm256_maddubs_epi16(T##_u(x, ib, ix), _mm256_loadu_si256((const __m256i *)(y->qs + 32 * (ib))))

#define IQ_VD(T, TT) IQ_VD_TMPL(LM_TARGET_AVX2, hsum_i32, T, TT)

#define IQ_MV8(T, TT, ROWS) IQ_MV8_TMPL(LM_TARGET_AVX2, T, TT, ROWS)

#define IQ_TYPE(T, TT, ONE, ROWS)                                                                         \
    IQ_BLOCK(T, ONE)                                                                                     \
    IQ_VD(T, TT)                                                                                         \
    IQ_MV8(T, TT, ROWS)

#define STEP_S(T, ib) a = _mm256_add_epi32(a, _mm256_madd_epi16(IQ_P(T, ib), bc16(s, ib)));
#define STEP_1(T, ib) a = _mm256_add_epi16(a, IQ_P(T, ib));
#define iq2_xxs_STEP_0(ib) STEP_S(iq2_xxs, ib)
#define iq2_xs_STEP_0(ib)  STEP_S(iq2_xs, ib)
#define iq2_s_STEP_0(ib)   STEP_S(iq2_s, ib)
#define iq3_xxs_STEP_0(ib) STEP_S(iq3_xxs, ib)
#define iq3_s_STEP_0(ib)   STEP_S(iq3_s, ib)
#define iq1_s_STEP_0(ib)   STEP_S(iq1_s, ib)
#define iq1_m_STEP_0(ib)   STEP_S(iq1_m, ib)
#define tq1_0_STEP_1(ib)   STEP_1(tq1_0, ib)
#define tq2_0_STEP_1(ib)   STEP_1(tq2_0, ib)

IQ_TYPE(iq2_xxs, IQ2_XXS, 0, AUTO)
IQ_TYPE(iq2_xs,  IQ2_XS,  0, AUTO)
IQ_TYPE(iq2_s,   IQ2_S,   0, AUTO)
IQ_TYPE(iq3_xxs, IQ3_XXS, 0, AUTO)
IQ_TYPE(iq3_s,   IQ3_S,   0, AUTO)
IQ_TYPE(iq1_s,   IQ1_S,   0, AUTO)
IQ_TYPE(iq1_m,   IQ1_M,   0, AUTO)
IQ_TYPE(tq1_0,   TQ1_0,   1, ALL)
IQ_TYPE(tq2_0,   TQ2_0,   1, AUTO)

lm_ggml_vec_dot_t mm_iq_dot_avx2(enum lm_ggml_type type) {
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
// A panel holds IQG_KC blocks of 8 rows decoded: u, the chunks' scale pairs
// already broadcast (sb[ib] = the S_c of the top) and C; the scales d of
// the 8 rows of a block side by side. Each column then runs over the panel
// with the 8 rows in the 8 lanes of its float sums: per pair the scalar
// sequence of float steps, whatever the column count or the row's place.

#define IQG_R  8
#define IQG_KC 3
struct iqg_blk {
    uint8_t u[QK_K];
    int16_t sb[QK_K / 32][16];
    int16_t c[16];
};
struct iqg_panel {
    struct iqg_blk b[IQG_KC][IQG_R];
    float d[IQG_KC][IQG_R];
};
_Static_assert(sizeof(struct iqg_blk) % 32 == 0, "aligned loads");
_Static_assert(sizeof(struct iqg_panel) + 64 + MM_QGEMM_MAX_COLS * IQG_R * sizeof(float) <= MM_QGEMM_SCRATCH, "scratch");

typedef void (*iqg_dec_fn)(const char * x, struct iqg_blk * out, float * d);
typedef void (*iqg_mv8_fn)(int64_t nb, const char * x, size_t xrs, int nr, const block_q8_K * y, float * out);

#define IQG_DEC(T)                                                                                        \
LM_TARGET_AVX2 static void iqg_dec_##T(const char * x, struct iqg_blk * o, float * d) {                   \
    __m256i s, c;                                                                                        \
    T##_prep(x, &s, &c);                                                                                 \
    _mm256_store_si256((__m256i *) o->c, c);                                                             \
    _Alignas(32) uint16_t ix[QK_K / 4];                                                                  \
    T##_ix(x, ix);                                                                                       \
    IQ_CHUNKS(IQG_DEC_STEP_##T)                                                                          \
    *d = H2F(T##_h(x));                                                                                       \
}
#define IQG_DEC_STEP(T, ib)                                                                              \
    _mm256_store_si256((__m256i *)(o->u + 32 * (ib)), T##_u(x, ib, ix));                                 \
    _mm256_store_si256((__m256i *) o->sb[ib], bc16(s, ib));
#define IQG_DEC_STEP_iq2_xxs(ib) IQG_DEC_STEP(iq2_xxs, ib)
#define IQG_DEC_STEP_iq2_xs(ib)  IQG_DEC_STEP(iq2_xs, ib)
#define IQG_DEC_STEP_iq2_s(ib)   IQG_DEC_STEP(iq2_s, ib)
#define IQG_DEC_STEP_iq3_xxs(ib) IQG_DEC_STEP(iq3_xxs, ib)
#define IQG_DEC_STEP_iq3_s(ib)   IQG_DEC_STEP(iq3_s, ib)
#define IQG_DEC_STEP_iq1_s(ib)   IQG_DEC_STEP(iq1_s, ib)
#define IQG_DEC_STEP_iq1_m(ib)   IQG_DEC_STEP(iq1_m, ib)
#define IQG_DEC_STEP_tq1_0(ib)   IQG_DEC_STEP(tq1_0, ib)
#define IQG_DEC_STEP_tq2_0(ib)   IQG_DEC_STEP(tq2_0, ib)
IQG_DEC(iq2_xxs)
IQG_DEC(iq2_xs)
IQG_DEC(iq2_s)
IQG_DEC(iq3_xxs)
IQG_DEC(iq3_s)
IQG_DEC(iq1_s)
IQG_DEC(iq1_m)
IQG_DEC(tq1_0)
IQG_DEC(tq2_0)

INL __m256i iqg_cbs(const struct iqg_blk * b, const block_q8_K * y) { // the bias through y's group sums
    return _mm256_madd_epi16(_mm256_load_si256((const __m256i *) b->c), _mm256_loadu_si256((const __m256i *) y->bsums));
}
// one column over n decoded blocks of the panel: acc (8 rows) takes them in
// order. ONE (the types whose scales are all 1, sb ones): the maddubs pairs
// summed in 16 bits as IQ_BLOCK's ONE does, one madd a block.
INL void iqg_col_t(const struct iqg_panel * p, int n, const block_q8_K * y, float * acc, const int one) {
    __m256 sf = _mm256_loadu_ps(acc);
    for (int k = 0; k < n; k++) {
        const struct iqg_blk * b = p->b[k];
        __m256i a[IQG_R];
        for (int r = 0; r < IQG_R; r++) a[r] = one ? _mm256_setzero_si256() : iqg_cbs(&b[r], &y[k]);
#pragma GCC unroll 1 // unrolled, GCC spills the sums
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const __m256i yv = _mm256_loadu_si256((const __m256i *)(y[k].qs + 32 * ib));
            for (int r = 0; r < IQG_R; r++) {
                const __m256i pr = _mm256_maddubs_epi16(_mm256_load_si256((const __m256i *)(b[r].u + 32 * ib)), yv);
                a[r] = one ? _mm256_add_epi16(a[r], pr)
                           : _mm256_add_epi32(a[r], _mm256_madd_epi16(pr, _mm256_load_si256((const __m256i *) b[r].sb[ib])));
            }
        }
        for (int r = 0; r < IQG_R && one; r++) a[r] = _mm256_add_epi32(iqg_cbs(&b[r], &y[k]), _mm256_madd_epi16(a[r], _mm256_set1_epi16(1)));
        const __m256i si = reduce8(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
        const __m256 dd = _mm256_mul_ps(_mm256_load_ps(p->d[k]), _mm256_set1_ps(y[k].d));
        sf = _mm256_add_ps(sf, _mm256_mul_ps(dd, _mm256_cvtepi32_ps(si)));
    }
    _mm256_storeu_ps(acc, sf);
}
LM_TARGET_AVX2 static void iqg_col(const struct iqg_panel * p, int n, const block_q8_K * y, float * acc) {
    iqg_col_t(p, n, y, acc, 0);
}
LM_TARGET_AVX2 static void iqg_col_one(const struct iqg_panel * p, int n, const block_q8_K * y, float * acc) {
    iqg_col_t(p, n, y, acc, 1);
}
typedef void (*iqg_col_fn)(const struct iqg_panel * p, int n, const block_q8_K * y, float * acc);

static void iqg_run(enum lm_ggml_type t, iqg_mv8_fn mv8, iqg_dec_fn dec, iqg_col_fn col, int64_t K, const char * x, size_t xrs,
                    int64_t r0, int64_t r1, const void * const * ycol, float * const * dcol, int ncol, void * scratch) {
    const int64_t nb = K / QK_K;
    if (ncol == 1) { // one column: decoding into a panel would not pay, the 8-row dot sums alike
        float out[IQG_R];
        for (int64_t r = r0; r < r1; r += IQG_R) {
            const int nr = (int) LM_GGML_MIN(IQG_R, r1 - r);
            mv8(nb, x + r * xrs, xrs, nr, ycol[0], out);
            for (int i = 0; i < nr; i++) dcol[0][r + i] = out[i];
        }
        return;
    }
    const size_t ts = lm_ggml_type_size(t);
    const float factor = mm_iq_traits(t)->factor;
    struct iqg_panel * p = (struct iqg_panel *)(((uintptr_t) scratch + 63) & ~(uintptr_t) 63);
    float * acc = (float *)(p + 1);
    for (int64_t r = r0; r < r1; r += IQG_R) {
        const int nr = (int) LM_GGML_MIN(IQG_R, r1 - r);
        memset(acc, 0, (size_t) ncol * IQG_R * sizeof(float));
        for (int64_t b0 = 0; b0 < nb; b0 += IQG_KC) {
            const int n = (int) LM_GGML_MIN(IQG_KC, nb - b0);
            // rows past the end repeat the last one: their lanes are not stored
            for (int i = 0; i < IQG_R; i++) {
                const char * xr = x + (r + LM_GGML_MIN(i, nr - 1)) * xrs + b0 * ts;
                for (int k = 0; k < n; k++) dec(xr + k * ts, &p->b[k][i], &p->d[k][i]);
            }
            for (int c = 0; c < ncol; c++) col(p, n, (const block_q8_K *) ycol[c] + b0, acc + c * IQG_R);
        }
        for (int c = 0; c < ncol; c++)
            for (int i = 0; i < nr; i++) dcol[c][r + i] = factor * acc[c * IQG_R + i];
    }
}

#define IQG_ENTRY(T, TT, COL)                                                                             \
static void qg_##T(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * const * ycol, \
                   float * const * dcol, int ncol, void * scratch) {                                     \
    iqg_run(LM_GGML_TYPE_##TT, mv8_##T, iqg_dec_##T, COL, K, x, xrs, r0, r1, ycol, dcol, ncol, scratch);  \
}
IQG_ENTRY(iq2_xxs, IQ2_XXS, iqg_col)
IQG_ENTRY(iq2_xs,  IQ2_XS,  iqg_col)
IQG_ENTRY(iq2_s,   IQ2_S,   iqg_col)
IQG_ENTRY(iq3_xxs, IQ3_XXS, iqg_col)
IQG_ENTRY(iq3_s,   IQ3_S,   iqg_col)
IQG_ENTRY(iq1_s,   IQ1_S,   iqg_col)
IQG_ENTRY(iq1_m,   IQ1_M,   iqg_col)
IQG_ENTRY(tq1_0,   TQ1_0,   iqg_col_one)
IQG_ENTRY(tq2_0,   TQ2_0,   iqg_col_one)

mm_qgemm_fn mm_iq_qgemm_avx2(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS: return qg_iq2_xxs;
        case LM_GGML_TYPE_IQ2_XS:  return qg_iq2_xs;
        case LM_GGML_TYPE_IQ2_S:   return qg_iq2_s;
        case LM_GGML_TYPE_IQ3_XXS: return qg_iq3_xxs;
        case LM_GGML_TYPE_IQ3_S:   return qg_iq3_s;
        case LM_GGML_TYPE_IQ1_S:   return qg_iq1_s;
        case LM_GGML_TYPE_IQ1_M:   return qg_iq1_m;
        case LM_GGML_TYPE_TQ1_0:   return qg_tq1_0;
        case LM_GGML_TYPE_TQ2_0:   return qg_tq2_0;
        default:                   return NULL;
    }
}
#else
typedef int mm_iquant_x86_unused; // ISO C forbids an empty translation unit
#endif
