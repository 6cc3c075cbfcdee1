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
#include "ggml-common.h"
#include "ggml-quants.h"
#include "ops-vec.h"

#include <immintrin.h>
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

// 16 packed nibbles -> 32 bytes: the low nibbles, then the high ones (the
// element order of the 32-quant blocks).
LM_TARGET_AVX2 static inline __m256i nibbles32(const uint8_t * p) {
    const __m128i q = _mm_loadu_si128((const __m128i *) p);
    const __m128i m4 = _mm_set1_epi8(0xF);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m4), _mm_and_si128(q, m4));
}

// 32 bits -> 32 bytes, byte j 0xFF when bit j is set: byte j first gets byte
// j/8 of the word, then only bit j%8 of it is kept and compared.
LM_TARGET_AVX2 static inline __m256i bits_to_bytes(const uint8_t * p) {
    uint32_t w;
    memcpy(&w, p, 4);
    const __m256i spread = _mm256_setr_epi64x(0, 0x0101010101010101ll, 0x0202020202020202ll, 0x0303030303030303ll);
    const __m256i sel = _mm256_set1_epi64x((long long) 0x8040201008040201ull);
    const __m256i v = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32((int) w), spread), sel);
    return _mm256_cmpeq_epi8(v, sel);
}

// q4_K / q5_K: 8 scales and 8 mins of 6 bits packed in 12 bytes (bytes 0-3:
// scales 0-3 | top bits of scales 4-7; 4-7: mins 0-3 | top bits of mins 4-7;
// 8-11: low nibbles of scales 4-7, high nibbles of mins 4-7), unpacked with
// 32-bit word ops into bytes 0-7 scales, 8-15 mins.
static inline __m128i k4_scales_mins(const uint8_t * q) {
    uint32_t a, b, c;
    memcpy(&a, q, 4);
    memcpy(&b, q + 4, 4);
    memcpy(&c, q + 8, 4);
    const uint32_t m6 = 0x3F3F3F3Fu, m4 = 0x0F0F0F0Fu, top = 0x30303030u;
    return _mm_setr_epi32((int)(a & m6), (int)((c & m4) | ((a >> 2) & top)),
                          (int)(b & m6), (int)(((c >> 4) & m4) | ((b >> 2) & top)));
}

// int16 element e of v (the same in both lanes) in every position of its lane
LM_TARGET_AVX2 static inline __m256i bcast16(__m256i v, int e) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16((short)((2 * e) | (2 * e + 1) << 8)));
}

// The mins of a q4_K/q5_K block against the activation sums of its 8
// sub-blocks of 32: 4 int32 partial sums.
LM_TARGET_AVX2 static inline __m128i k4_min_dot(__m256i sm16, const int16_t * bsums) {
    const __m256i bs = _mm256_loadu_si256((const __m256i *) bsums);
    const __m128i pair = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
    return _mm_madd_epi16(_mm256_extracti128_si256(sm16, 1), pair);
}

LM_TARGET_AVX2 static inline float hsum4(__m128 s) {
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
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
// wait on each other's FMA (measured: a small gain for q8_0 only; the others
// are bound by their ~20 uops per block). A block function adds its block
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

LM_TARGET_AVX2 static void vd_q4_K_q8_K_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q4_K * x = vx; const block_q8_K * y = vy;
    const __m256i m4 = _mm256_set1_epi8(0xF);
    __m256 acc = _mm256_setzero_ps();
    __m128 accm = _mm_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        const __m256i sm16 = _mm256_cvtepu8_epi16(k4_scales_mins(x[i].scales)); // lane 0 scales, lane 1 mins
        const __m256i sc = _mm256_permute2x128_si256(sm16, sm16, 0x00);
        accm = _mm_fmadd_ps(_mm_set1_ps(y[i].d * H2F(x[i].dmin)), _mm_cvtepi32_ps(k4_min_dot(sm16, y[i].bsums)), accm);
        __m256i ai = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            const __m256i q  = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * j));
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * j));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * j + 32));
            const __m256i p0 = _mm256_maddubs_epi16(_mm256_and_si256(q, m4), y0);
            const __m256i p1 = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), y1);
            ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p0, bcast16(sc, 2 * j)));
            ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p1, bcast16(sc, 2 * j + 1)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * H2F(x[i].d)), _mm256_cvtepi32_ps(ai), acc);
    }
    *s = lm_hsum_avx2(acc) - hsum4(accm);
}

// q5_K: q4_K plus a fifth bit; qh is shifted down 2 bits per 64 quants so
// its bits 0 and 1 always belong to the current low and high nibbles.
LM_TARGET_AVX2 static void vd_q5_K_q8_K_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q5_K * x = vx; const block_q8_K * y = vy;
    const __m256i m4 = _mm256_set1_epi8(0xF), b4 = _mm256_set1_epi8(0x10);
    __m256 acc = _mm256_setzero_ps();
    __m128 accm = _mm_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        const __m256i sm16 = _mm256_cvtepu8_epi16(k4_scales_mins(x[i].scales));
        const __m256i sc = _mm256_permute2x128_si256(sm16, sm16, 0x00);
        accm = _mm_fmadd_ps(_mm_set1_ps(y[i].d * H2F(x[i].dmin)), _mm_cvtepi32_ps(k4_min_dot(sm16, y[i].bsums)), accm);
        __m256i hb = _mm256_loadu_si256((const __m256i *) x[i].qh);
        __m256i ai = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            const __m256i q  = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * j));
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * j));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 64 * j + 32));
            const __m256i v0 = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), b4));
            const __m256i v1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), _mm256_and_si256(_mm256_slli_epi16(hb, 3), b4));
            hb = _mm256_srli_epi16(hb, 2);
            ai = _mm256_add_epi32(ai, _mm256_madd_epi16(_mm256_maddubs_epi16(v0, y0), bcast16(sc, 2 * j)));
            ai = _mm256_add_epi32(ai, _mm256_madd_epi16(_mm256_maddubs_epi16(v1, y1), bcast16(sc, 2 * j + 1)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * H2F(x[i].d)), _mm256_cvtepi32_ps(ai), acc);
    }
    *s = lm_hsum_avx2(acc) - hsum4(accm);
}

// q6_K: quants biased to 0..63, the -32 returned through the block sums.
LM_TARGET_AVX2 static void vd_q6_K_q8_K_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q6_K * x = vx; const block_q8_K * y = vy;
    const __m256i m4 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3);
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        const __m128i sc8 = _mm_loadu_si128((const __m128i *) x[i].scales);
        const __m256i s16 = scales16_by_lane(sc8);
        const __m256i bsum = _mm256_loadu_si256((const __m256i *) y[i].bsums);
        __m256i ai = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), bsum), 5));
        for (int h = 0; h < 2; h++) {
            const uint8_t * ql = x[i].ql + 64 * h;
            const int8_t * a = y[i].qs + 128 * h;
            const __m256i l0 = _mm256_loadu_si256((const __m256i *) ql);
            const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
            const __m256i hb = _mm256_loadu_si256((const __m256i *)(x[i].qh + 32 * h));
            __m256i v[4];
            v[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(hb, m3), 4));
            v[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), m3), 4));
            v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), m3), 4));
            v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), m3), 4));
            for (int k = 0; k < 4; k++) {
                const __m256i p = _mm256_maddubs_epi16(v[k], _mm256_loadu_si256((const __m256i *)(a + 32 * k)));
                ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p, scale_pair(s16, 4 * h + k)));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(H2F(x[i].d) * y[i].d), _mm256_cvtepi32_ps(ai), acc);
    }
    *s = lm_hsum_avx2(acc);
}

// q3_K: the 16 signed 6-bit scales as int8 (low 4 bits in bytes 0-7, two
// per byte; high 2 bits in bytes 8-11, four per byte), with 64-bit word ops.
static inline __m128i q3k_scales8(const uint8_t * p) {
    uint64_t lo;
    uint32_t hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, p + 8, 4);
    const uint64_t n4 = 0x0F0F0F0F0F0F0F0Full;
    const uint32_t b2 = 0x03030303u;
    // scales 4g..4g+3 take their high bits from bits 2g..2g+1 of bytes 8-11
    const uint64_t h01 = (uint64_t)(hi & b2) | (uint64_t)((hi >> 2) & b2) << 32;
    const uint64_t h23 = (uint64_t)((hi >> 4) & b2) | (uint64_t)((hi >> 6) & b2) << 32;
    const __m128i u = _mm_set_epi64x((long long)(((lo >> 4) & n4) | h23 << 4), (long long)((lo & n4) | h01 << 4));
    return _mm_sub_epi8(u, _mm_set1_epi8(32));
}

// q3_K: quants biased to 0..7 (2 low bits | high bit << 2), the -4 returned
// through the block sums. Both qs and hmask are shifted down as the walk goes.
LM_TARGET_AVX2 static void vd_q3_K_q8_K_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q3_K * x = vx; const block_q8_K * y = vy;
    const __m256i m3 = _mm256_set1_epi8(3), m1 = _mm256_set1_epi8(1);
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        const __m128i sc8 = q3k_scales8(x[i].scales);
        const __m256i s16 = scales16_by_lane(sc8);
        const __m256i bsum = _mm256_loadu_si256((const __m256i *) y[i].bsums);
        __m256i ai = _mm256_slli_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), bsum), 2);
        ai = _mm256_sub_epi32(_mm256_setzero_si256(), ai);
        __m256i hm = _mm256_loadu_si256((const __m256i *) x[i].hmask);
        const int8_t * a = y[i].qs;
        for (int h = 0; h < 2; h++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * h));
            for (int k = 0; k < 4; k++, a += 32) {
                const __m256i u = _mm256_or_si256(_mm256_and_si256(q, m3), _mm256_slli_epi16(_mm256_and_si256(hm, m1), 2));
                q = _mm256_srli_epi16(q, 2);
                hm = _mm256_srli_epi16(hm, 1);
                const __m256i p = _mm256_maddubs_epi16(u, _mm256_loadu_si256((const __m256i *) a));
                ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p, scale_pair(s16, 4 * h + k)));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(H2F(x[i].d) * y[i].d), _mm256_cvtepi32_ps(ai), acc);
    }
    *s = lm_hsum_avx2(acc);
}

LM_TARGET_AVX2 static void vd_q2_K_q8_K_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_q2_K * x = vx; const block_q8_K * y = vy;
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m128i m4 = _mm_set1_epi8(0xF);
    __m256 acc = _mm256_setzero_ps(), accm = _mm256_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        const __m128i sm = _mm_loadu_si128((const __m128i *) x[i].scales);
        const __m256i s16 = scales16_by_lane(_mm_and_si128(sm, m4));
        const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), m4));
        const __m256i mi = _mm256_madd_epi16(mn16, _mm256_loadu_si256((const __m256i *) y[i].bsums));
        accm = _mm256_fmadd_ps(_mm256_set1_ps(H2F(x[i].dmin) * y[i].d), _mm256_cvtepi32_ps(mi), accm);
        __m256i ai = _mm256_setzero_si256();
        const int8_t * a = y[i].qs;
        for (int h = 0; h < 2; h++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * h));
            for (int k = 0; k < 4; k++, a += 32) {
                const __m256i p = _mm256_maddubs_epi16(_mm256_and_si256(q, m3), _mm256_loadu_si256((const __m256i *) a));
                q = _mm256_srli_epi16(q, 2);
                ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p, scale_pair(s16, 4 * h + k)));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(H2F(x[i].d) * y[i].d), _mm256_cvtepi32_ps(ai), acc);
    }
    *s = lm_hsum_avx2(acc) - lm_hsum_avx2(accm);
}

// iq4_xs: two sub-blocks of 32 per 32 bytes of qs; their low nibbles sit in
// lanes 0 and 1 of one vector and the high ones likewise, so each sub-block
// is one lane of each, joined by a cross-lane permute.
LM_TARGET_AVX2 static void vd_iq4_xs_q8_K_avx2(VD_ARGS) {
    VD_UNUSED;
    const block_iq4_xs * x = vx; const block_q8_K * y = vy;
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl));
    const __m256i m4 = _mm256_set1_epi8(0xF);
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        __m256i ai = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K / 32; ib += 2) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 16 * ib));
            const __m256i lo = _mm256_shuffle_epi8(tbl, _mm256_and_si256(q, m4));
            const __m256i hi = _mm256_shuffle_epi8(tbl, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
            const __m256i x0 = _mm256_permute2x128_si256(lo, hi, 0x20);
            const __m256i x1 = _mm256_permute2x128_si256(lo, hi, 0x31);
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * ib));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * ib + 32));
            const __m256i p0 = _mm256_maddubs_epi16(_mm256_sign_epi8(x0, x0), _mm256_sign_epi8(y0, x0));
            const __m256i p1 = _mm256_maddubs_epi16(_mm256_sign_epi8(x1, x1), _mm256_sign_epi8(y1, x1));
            const int ls0 = (((x[i].scales_l[ib / 2] & 0xF) | ((x[i].scales_h >> (2 * ib)) & 3) << 4)) - 32;
            const int ls1 = (((x[i].scales_l[ib / 2] >> 4) | ((x[i].scales_h >> (2 * ib + 2)) & 3) << 4)) - 32;
            ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p0, _mm256_set1_epi16((short) ls0)));
            ai = _mm256_add_epi32(ai, _mm256_madd_epi16(p1, _mm256_set1_epi16((short) ls1)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(H2F(x[i].d) * y[i].d), _mm256_cvtepi32_ps(ai), acc);
    }
    *s = lm_hsum_avx2(acc);
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
