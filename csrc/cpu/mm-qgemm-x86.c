// mm-qgemm-x86.c - quantized GEMM for AVX2: weights against q8-quantized
// activations, with each weight block decoded once for all the columns of a
// call (x86-64 only).
//
// A panel holds 8 rows of weights, decoded for a stretch of K into one of
// two forms: 32-quant blocks (int8 quants, f32 scale and min) or 256-quant
// super-blocks (unsigned quants, int16 sub-block scales, bias and min
// factors, f32 scales). One micro-kernel per form then runs each column
// over the panel.
//
// Batch invariance: for each (row, column) pair the kernels compute the
// exact integer dot of every block (any order of integer additions gives
// the same sum), then accumulate the blocks in order with one FMA each:
//   acc  = fma(fl(d_x * d_y), (float) isum_b, acc)
//   accm = fma(fl(m_x * s_y), 1, ...) / fma(fl(dmin_x * d_y), (float) msum_b, accm)
// and finish with acc + accm (q4_1, q5_1) or acc - accm (K-quants with
// mins); types without a min keep accm = +0. The 8 rows of a panel are the 8
// lanes of a vector, so a pair's result is the same scalar sequence
// whatever the number of columns, the panel position or the thread.
#include "mm-kernels.h"

#if defined(LM_X86)
#include "../quant/ggml-common.h"
#include "../quant/ggml-quants.h"

#include <immintrin.h>
#include <string.h>

#include "mm-quant-x86.h"

#define H2F(x) _cvtsh_ss(x)
#define QG_R   8   // rows per panel: the lanes of a float vector
#define QG_KC  16  // 32-quant blocks decoded per panel stretch (1024 quants)
#define QG_KCS 2   // super-blocks decoded per panel stretch (1024 quants)
#define QG_MV_COLS 1 // up to this many columns, no panel: mm_qmv_avx2 per column
// Mat-vec: contiguous rows up to QG_PF_ROW bytes have the group QG_PF_AHEAD
// on prefetched (into L2, MM_PF) in step with the blocks; longer ones the
// next group, itself 32 KB or more ahead. With no prefetch eight rows start
// cold at every group.
#define QG_PF_AHEAD 2
#define QG_PF_ROW   4096

// 32-quant blocks, 8 rows. q4_1/q5_1 keep unsigned quants in w.
// The decoders write w row by row (w[r] = row r's 32 quants); for the AVX2
// micro-kernels pa_interleave then turns each block into 8 vectors of 4
// quants of every row (w[g] = quants 4g..4g+3 of rows 0-7, aw[g] their |w|),
// so that a column's 4 quants broadcast against them leave each row's dot
// in its own lane: no horizontal sums (vphaddd costs several unpacks, and
// reducing 8 rows that way takes as long as their products).
// The VNNI micro-kernels of these panels take the same interleaved form.
struct qg_pa {
    int8_t  w[QG_R][32];
    uint8_t aw[QG_R][32]; // |w| (the sign trick of the signed forms), interleaved
    float   d[QG_R];
    float   m[QG_R];
};

// 256-quant super-blocks, 8 rows: quants unsigned (iq4_xs: signed, with aw),
// sc[r][g] the int16 scales of group g's 32 quants (lanes 0-7 the first 16,
// 8-15 the second), bias[r] and mn[r] per 16 quants against the
// activations' block sums (bias: folded into the integer dot; mn: the mins).
struct qg_pk {
    uint8_t w[QG_R][256];
    uint8_t aw[QG_R][256];
    int16_t sc[QG_R][8][16];
    int16_t bias[QG_R][16];
    int16_t mn[QG_R][16];
    float   d[QG_R];
    float   dmin[QG_R];
};

_Static_assert(sizeof(struct qg_pa) % 64 == 0 && sizeof(struct qg_pk) % 64 == 0, "panel blocks keep 64-byte alignment");
_Static_assert(QG_KC * sizeof(struct qg_pa) + 2 * MM_QGEMM_MAX_COLS * QG_R * sizeof(float) <= MM_QGEMM_SCRATCH, "scratch");
_Static_assert(QG_KCS * sizeof(struct qg_pk) + 2 * MM_QGEMM_MAX_COLS * QG_R * sizeof(float) <= MM_QGEMM_SCRATCH, "scratch");

// ---------------------------------------------------------------- decoders: row r of a panel, n blocks

#define LD(p)     _mm256_loadu_si256((const __m256i *)(p))
#define ST(p, v)  _mm256_store_si256((__m256i *)(p), v)
#define LDA(p)    _mm256_load_si256((const __m256i *)(p))

LM_TARGET_AVX2 static inline void pa_put(struct qg_pa * p, int r, __m256i w, float d, float m) {
    ST(p->w[r], w);
    p->d[r] = d;
    p->m[r] = m;
}

// n blocks of 8 rows -> the interleaved form (an 8x8 transpose of 32-bit
// words per block), with |w| when the micro-kernel takes the sign trick
LM_TARGET_AVX2 static void pa_interleave(struct qg_pa * p, int n, bool aw) {
    for (int i = 0; i < n; i++) {
        __m256i t[8], u[8];
        for (int r = 0; r < 8; r += 2) {
            const __m256i a = LDA(p[i].w[r]), b = LDA(p[i].w[r + 1]);
            t[r] = _mm256_unpacklo_epi32(a, b);     // words 0 1 | 4 5 of rows r, r+1
            t[r + 1] = _mm256_unpackhi_epi32(a, b); // words 2 3 | 6 7
        }
        for (int h = 0; h < 8; h += 4) {            // rows 0-3, then 4-7
            u[h]     = _mm256_unpacklo_epi64(t[h], t[h + 2]);     // word 0 | 4 of the 4 rows
            u[h + 1] = _mm256_unpackhi_epi64(t[h], t[h + 2]);     // 1 | 5
            u[h + 2] = _mm256_unpacklo_epi64(t[h + 1], t[h + 3]); // 2 | 6
            u[h + 3] = _mm256_unpackhi_epi64(t[h + 1], t[h + 3]); // 3 | 7
        }
        for (int g = 0; g < 4; g++) {
            const __m256i lo = _mm256_permute2x128_si256(u[g], u[g + 4], 0x20);
            const __m256i hi = _mm256_permute2x128_si256(u[g], u[g + 4], 0x31);
            ST(p[i].w[g], lo);
            ST(p[i].w[g + 4], hi);
            if (aw) {
                ST(p[i].aw[g], _mm256_sign_epi8(lo, lo));
                ST(p[i].aw[g + 4], _mm256_sign_epi8(hi, hi));
            }
        }
    }
}

LM_TARGET_AVX2 static void dec_q4_0(const void * vx, int n, int r, void * vp) {
    const block_q4_0 * x = vx; struct qg_pa * p = vp;
    for (int i = 0; i < n; i++) pa_put(p + i, r, _mm256_sub_epi8(nibbles32(x[i].qs), _mm256_set1_epi8(8)), H2F(x[i].d), 0.0f);
}

LM_TARGET_AVX2 static void dec_q4_1(const void * vx, int n, int r, void * vp) {
    const block_q4_1 * x = vx; struct qg_pa * p = vp;
    for (int i = 0; i < n; i++) {
        ST(p[i].w[r], nibbles32(x[i].qs));
        p[i].d[r] = H2F(x[i].d);
        p[i].m[r] = H2F(x[i].m);
    }
}

LM_TARGET_AVX2 static void dec_q5_0(const void * vx, int n, int r, void * vp) {
    const block_q5_0 * x = vx; struct qg_pa * p = vp;
    for (int i = 0; i < n; i++) {
        // (nibble | bit << 4) - 16 = nibble - 16 where the bit is clear
        const __m256i w = _mm256_sub_epi8(nibbles32(x[i].qs), _mm256_andnot_si256(bits_to_bytes(x[i].qh), _mm256_set1_epi8(0x10)));
        pa_put(p + i, r, w, H2F(x[i].d), 0.0f);
    }
}

LM_TARGET_AVX2 static void dec_q5_1(const void * vx, int n, int r, void * vp) {
    const block_q5_1 * x = vx; struct qg_pa * p = vp;
    for (int i = 0; i < n; i++) {
        ST(p[i].w[r], _mm256_or_si256(nibbles32(x[i].qs), _mm256_and_si256(bits_to_bytes(x[i].qh), _mm256_set1_epi8(0x10))));
        p[i].d[r] = H2F(x[i].d);
        p[i].m[r] = H2F(x[i].m);
    }
}

LM_TARGET_AVX2 static void dec_q8_0(const void * vx, int n, int r, void * vp) {
    const block_q8_0 * x = vx; struct qg_pa * p = vp;
    for (int i = 0; i < n; i++) pa_put(p + i, r, LD(x[i].qs), H2F(x[i].d), 0.0f);
}

// n blocks of a repacked group of 8 rows (repack.c: per block the 8 scales,
// then the quants; q8_0's of rows 0,4,1,5,2,6,3,7, the others' in row
// order) -> the panel, all rows
LM_TARGET_AVX2 static void dec_q8_0_rp(const char * g, int n, void * vp) {
    struct qg_pa * p = vp;
    for (int i = 0; i < n; i++, g += QG_R * sizeof(block_q8_0)) {
        for (int r = 0; r < QG_R; r++) ST(p[i].w[r], LD(g + 16 + 32 * ((r % 4) * 2 + r / 4)));
        _mm256_store_ps(p[i].d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g)));
        _mm256_store_ps(p[i].m, _mm256_setzero_ps());
    }
}

LM_TARGET_AVX2 static inline void dec_q4_rp(const char * g, int n, void * vp, bool nl) {
    struct qg_pa * p = vp;
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl));
    for (int i = 0; i < n; i++, g += QG_R * sizeof(block_q4_0)) {
        for (int r = 0; r < QG_R; r++) {
            const __m256i q = nibbles32((const uint8_t *)(g + 16 + 16 * r));
            ST(p[i].w[r], nl ? _mm256_shuffle_epi8(tbl, q) : _mm256_sub_epi8(q, _mm256_set1_epi8(8)));
        }
        _mm256_store_ps(p[i].d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g)));
        _mm256_store_ps(p[i].m, _mm256_setzero_ps());
    }
}

LM_TARGET_AVX2 static void dec_iq4_nl(const void * vx, int n, int r, void * vp) {
    const block_iq4_nl * x = vx; struct qg_pa * p = vp;
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl));
    for (int i = 0; i < n; i++) pa_put(p + i, r, _mm256_shuffle_epi8(tbl, nibbles32(x[i].qs)), H2F(x[i].d), 0.0f);
}

// Scales of a super-block: 16 int16 per 16 quants -> sc[r][g] (group g takes
// entries 2g and 2g+1), and bias = -b * scale.
LM_TARGET_AVX2 static inline void pk_scales16(struct qg_pk * p, int r, __m256i s16, int b) {
    const __m128i lo = _mm256_castsi256_si128(s16), hi = _mm256_extracti128_si256(s16, 1);
    for (int g = 0; g < 8; g++) {
        const __m128i h = g < 4 ? lo : hi;
        const int e = 2 * (g & 3);
        const __m128i a = _mm_shuffle_epi8(h, _mm_set1_epi16((short)((2 * e) | (2 * e + 1) << 8)));
        const __m128i c = _mm_shuffle_epi8(h, _mm_set1_epi16((short)((2 * e + 2) | (2 * e + 3) << 8)));
        ST(p->sc[r][g], _mm256_set_m128i(c, a));
    }
    ST(p->bias[r], _mm256_mullo_epi16(s16, _mm256_set1_epi16((short) -b)));
}

// 8 scales per 32 quants (bytes) -> the same scale for both halves of group g.
LM_TARGET_AVX2 static inline void pk_scales8(struct qg_pk * p, int r, const uint8_t * sc8, const int8_t * ssc8) {
    for (int g = 0; g < 8; g++) ST(p->sc[r][g], _mm256_set1_epi16(sc8 ? (short) sc8[g] : (short) ssc8[g]));
    ST(p->bias[r], _mm256_setzero_si256());
}

LM_TARGET_AVX2 static inline void pk_mins8(struct qg_pk * p, int r, __m128i mn8) {
    // mins per 32 quants, each repeated for the two block sums of 16 it covers
    const __m128i dup = _mm_unpacklo_epi8(mn8, mn8);
    ST(p->mn[r], _mm256_cvtepu8_epi16(dup));
}

// q4_K's and q5_K's 12 bytes of packed scales and mins -> row r of p
LM_TARGET_AVX2 static inline void pk_scales_mins12(struct qg_pk * p, int r, const uint8_t * scales) {
    const __m128i sm = k4_scales_mins(scales); // bytes 0-7 scales, 8-15 mins
    uint8_t s8[16];
    _mm_storeu_si128((__m128i *) s8, sm);
    pk_scales8(p, r, s8, NULL);
    pk_mins8(p, r, _mm_srli_si128(sm, 8));
}

LM_TARGET_AVX2 static void dec_q4_K(const void * vx, int n, int r, void * vp) {
    const block_q4_K * x = vx; struct qg_pk * p = vp;
    const __m256i m4 = _mm256_set1_epi8(0xF);
    for (int i = 0; i < n; i++) {
        pk_scales_mins12(p + i, r, x[i].scales);
        for (int j = 0; j < 4; j++) {
            const __m256i q = LD(x[i].qs + 32 * j);
            ST(p[i].w[r] + 64 * j, _mm256_and_si256(q, m4));
            ST(p[i].w[r] + 64 * j + 32, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
        }
        p[i].d[r] = H2F(x[i].d);
        p[i].dmin[r] = H2F(x[i].dmin);
    }
}

// n blocks of a repacked q4_K group (repack.c: the 8 d, the 8 dmin, the
// scale words of the 8 rows, then per 32 bytes j the rows in pair order,
// their 16-bit words alternately of sub-block 2j and 2j + 1, low nibbles
// the first 8 of each 16 quants and high nibbles the next 8) -> the panel,
// all rows
LM_TARGET_AVX2 static void dec_q4_K_rp(const char * g, int n, void * vp) {
    struct qg_pk * p = vp;
    const __m256i m4 = _mm256_set1_epi8(0xF);
    // per 128-bit lane: the even 16-bit words to bytes 0-7, the odd to 8-15
    const __m256i sep = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                         0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    for (int i = 0; i < n; i++, g += QG_R * sizeof(block_q4_K)) {
        for (int r = 0; r < QG_R; r++) {
            uint8_t sc[16] = { 0 }; // k4_scales_mins loads 16 bytes
            for (int w = 0; w < 3; w++) memcpy(sc + 4 * w, g + 32 + 32 * w + 4 * r, 4);
            pk_scales_mins12(p + i, r, sc);
            for (int j = 0; j < 4; j++) {
                const __m256i q = LD(g + 128 + 256 * j + 32 * ((r % 4) * 2 + r / 4));
                const __m256i lo = _mm256_shuffle_epi8(_mm256_and_si256(q, m4), sep);
                const __m256i hi = _mm256_shuffle_epi8(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), sep);
                ST(p[i].w[r] + 64 * j, _mm256_unpacklo_epi64(lo, hi));
                ST(p[i].w[r] + 64 * j + 32, _mm256_unpackhi_epi64(lo, hi));
            }
            lm_ggml_fp16_t d, dmin;
            memcpy(&d, g + 2 * r, 2);
            memcpy(&dmin, g + 16 + 2 * r, 2);
            p[i].d[r] = H2F(d);
            p[i].dmin[r] = H2F(dmin);
        }
    }
}

LM_TARGET_AVX2 static void dec_q5_K(const void * vx, int n, int r, void * vp) {
    const block_q5_K * x = vx; struct qg_pk * p = vp;
    const __m256i m4 = _mm256_set1_epi8(0xF), b4 = _mm256_set1_epi8(0x10);
    for (int i = 0; i < n; i++) {
        pk_scales_mins12(p + i, r, x[i].scales);
        // qh bits 2j and 2j+1 of byte l are the fifth bits of quants 64j+l and 64j+32+l
        __m256i hb = LD(x[i].qh);
        for (int j = 0; j < 4; j++) {
            const __m256i q = LD(x[i].qs + 32 * j);
            ST(p[i].w[r] + 64 * j, _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), b4)));
            ST(p[i].w[r] + 64 * j + 32,
               _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), _mm256_and_si256(_mm256_slli_epi16(hb, 3), b4)));
            hb = _mm256_srli_epi16(hb, 2);
        }
        p[i].d[r] = H2F(x[i].d);
        p[i].dmin[r] = H2F(x[i].dmin);
    }
}

// q6_K: quants 0..63 (value + 32), the -32 through the bias.
LM_TARGET_AVX2 static void dec_q6_K(const void * vx, int n, int r, void * vp) {
    const block_q6_K * x = vx; struct qg_pk * p = vp;
    const __m256i m4 = _mm256_set1_epi8(0xF), m3 = _mm256_set1_epi8(3);
    for (int i = 0; i < n; i++) {
        pk_scales16(p + i, r, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) x[i].scales)), 32);
        _mm256_store_si256((__m256i *) p[i].mn[r], _mm256_setzero_si256());
        for (int h = 0; h < 2; h++) {
            const uint8_t * ql = x[i].ql + 64 * h;
            const __m256i l0 = LD(ql), l1 = LD(ql + 32), hb = LD(x[i].qh + 32 * h);
            uint8_t * w = p[i].w[r] + 128 * h;
            ST(w,      _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(hb, m3), 4)));
            ST(w + 32, _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), m3), 4)));
            ST(w + 64, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                       _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), m3), 4)));
            ST(w + 96, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                       _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), m3), 4)));
        }
        p[i].d[r] = H2F(x[i].d);
        p[i].dmin[r] = 0.0f;
    }
}

// q3_K: quants 0..7 (2 low bits | high bit << 2 = value + 4), the -4 through the bias.
LM_TARGET_AVX2 static void dec_q3_K(const void * vx, int n, int r, void * vp) {
    const block_q3_K * x = vx; struct qg_pk * p = vp;
    const __m256i m3 = _mm256_set1_epi8(3), m1 = _mm256_set1_epi8(1);
    for (int i = 0; i < n; i++) {
        pk_scales16(p + i, r, _mm256_cvtepi8_epi16(q3k_scales8(x[i].scales)), 4);
        _mm256_store_si256((__m256i *) p[i].mn[r], _mm256_setzero_si256());
        __m256i hm = LD(x[i].hmask);
        uint8_t * w = p[i].w[r];
        for (int h = 0; h < 2; h++) {
            __m256i q = LD(x[i].qs + 32 * h);
            for (int k = 0; k < 4; k++, w += 32) {
                ST(w, _mm256_or_si256(_mm256_and_si256(q, m3), _mm256_slli_epi16(_mm256_and_si256(hm, m1), 2)));
                q = _mm256_srli_epi16(q, 2);
                hm = _mm256_srli_epi16(hm, 1);
            }
        }
        p[i].d[r] = H2F(x[i].d);
        p[i].dmin[r] = 0.0f;
    }
}

LM_TARGET_AVX2 static void dec_q2_K(const void * vx, int n, int r, void * vp) {
    const block_q2_K * x = vx; struct qg_pk * p = vp;
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m128i m4 = _mm_set1_epi8(0xF);
    for (int i = 0; i < n; i++) {
        const __m128i sm = _mm_loadu_si128((const __m128i *) x[i].scales);
        pk_scales16(p + i, r, _mm256_cvtepu8_epi16(_mm_and_si128(sm, m4)), 0);
        ST(p[i].mn[r], _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), m4)));
        uint8_t * w = p[i].w[r];
        for (int h = 0; h < 2; h++) {
            __m256i q = LD(x[i].qs + 32 * h);
            for (int k = 0; k < 4; k++, w += 32) {
                ST(w, _mm256_and_si256(q, m3));
                q = _mm256_srli_epi16(q, 2);
            }
        }
        p[i].d[r] = H2F(x[i].d);
        p[i].dmin[r] = H2F(x[i].dmin);
    }
}

// iq4_xs: signed codebook values (kept with |w| for the sign trick).
LM_TARGET_AVX2 static void dec_iq4_xs(const void * vx, int n, int r, void * vp) {
    const block_iq4_xs * x = vx; struct qg_pk * p = vp;
    const __m256i tbl = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) lm_kvalues_iq4nl));
    const __m256i m4 = _mm256_set1_epi8(0xF);
    for (int i = 0; i < n; i++) {
        int8_t ls[8];
        for (int ib = 0; ib < 8; ib++) {
            ls[ib] = (int8_t)((((x[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | ((x[i].scales_h >> (2 * ib)) & 3) << 4) - 32);
        }
        pk_scales8(p + i, r, NULL, ls);
        _mm256_store_si256((__m256i *) p[i].mn[r], _mm256_setzero_si256());
        for (int ib = 0; ib < 8; ib += 2) {
            const __m256i q = LD(x[i].qs + 16 * ib);
            const __m256i lo = _mm256_shuffle_epi8(tbl, _mm256_and_si256(q, m4));
            const __m256i hi = _mm256_shuffle_epi8(tbl, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
            const __m256i w0 = _mm256_permute2x128_si256(lo, hi, 0x20), w1 = _mm256_permute2x128_si256(lo, hi, 0x31);
            ST(p[i].w[r] + 32 * ib, w0);
            ST(p[i].w[r] + 32 * ib + 32, w1);
            ST(p[i].aw[r] + 32 * ib, _mm256_sign_epi8(w0, w0));
            ST(p[i].aw[r] + 32 * ib + 32, _mm256_sign_epi8(w1, w1));
        }
        p[i].d[r] = H2F(x[i].d);
        p[i].dmin[r] = 0.0f;
    }
}

// ---------------------------------------------------------------- micro-kernels: columns over a panel

// 32-quant panels (interleaved) against up to QG_NC columns at once: each
// vector of weights is loaded once for all of them. SGN: signed quants
// against q8_0 (the sign trick, |w| in aw); otherwise unsigned quants
// against q8_1, plus m_x * s_y in accm. A row's integer dot of a block is
// the same exact sum as the row-major kernels' (mat-vec, VNNI), and the
// float steps are theirs, so the bits are too. For speed: interleaved rows
// (no vphaddd sums), 4 columns a pass without spills, and the next stretch
// prefetched.
#define QG_NC 4
// column c's quants 4g..4g+3 against the 8 rows' (the column's variables
// are named, not arrays: GCC kept arrays of vectors on the stack)
#define PA_COL(c) if (nc > c) {                                                                          \
        const __m256i yg = _mm256_set1_epi32((int) ld32(q##c + 4 * g));                                  \
        s##c = _mm256_add_epi32(s##c, _mm256_madd_epi16(sgn ? _mm256_maddubs_epi16(aw, _mm256_sign_epi8(yg, w)) \
                                                            : _mm256_maddubs_epi16(w, yg), one)); }
// The float steps of block i for column c, from its 8 row sums t (both
// micro-kernels, mk_pa and mk_pa_vnni).
#define PA_FLOAT(c, t) {                                                                                 \
        const lm_ggml_fp16_t dy = sgn ? ((const block_q8_0 *) ys[c])[i].d : ((const block_q8_1 *) ys[c])[i].d; \
        a##c = _mm256_fmadd_ps(_mm256_mul_ps(dx, _mm256_set1_ps(H2F(dy))), _mm256_cvtepi32_ps(t), a##c);  \
        if (!sgn) m##c = _mm256_fmadd_ps(_mm256_load_ps(p[i].m), _mm256_set1_ps(H2F(((const block_q8_1 *) ys[c])[i].s)), m##c); }
#define PA_FIN(c) if (nc > c) PA_FLOAT(c, s##c)
// The columns' float sums in and out (acc, accm: QG_R per column).
#define PA_ACC_LOAD                                                                                      \
    const __m256 z = _mm256_setzero_ps();                                                                \
    __m256 a0 = _mm256_load_ps(acc), a1 = z, a2 = z, a3 = z;                                             \
    __m256 m0 = _mm256_load_ps(accm), m1 = z, m2 = z, m3 = z;                                            \
    if (nc > 1) a1 = _mm256_load_ps(acc + QG_R), m1 = _mm256_load_ps(accm + QG_R);                       \
    if (nc > 2) a2 = _mm256_load_ps(acc + 2 * QG_R), m2 = _mm256_load_ps(accm + 2 * QG_R);               \
    if (nc > 3) a3 = _mm256_load_ps(acc + 3 * QG_R), m3 = _mm256_load_ps(accm + 3 * QG_R);
#define PA_ACC_STORE                                                                                     \
    _mm256_store_ps(acc, a0);                                                                            \
    _mm256_store_ps(accm, m0);                                                                           \
    if (nc > 1) _mm256_store_ps(acc + QG_R, a1), _mm256_store_ps(accm + QG_R, m1);                       \
    if (nc > 2) _mm256_store_ps(acc + 2 * QG_R, a2), _mm256_store_ps(accm + 2 * QG_R, m2);               \
    if (nc > 3) _mm256_store_ps(acc + 3 * QG_R, a3), _mm256_store_ps(accm + 3 * QG_R, m3);
// name(panel, n, ys, nc, ...): KERN with the column count as a constant.
#define MK_PA(name, TARGET, KERN, sgn)                                                                   \
TARGET static void name(const void * p, int n, const void * const * ys, int nc, float * acc, float * accm) { \
    switch (nc) {                                                                                        \
        case 1:  KERN(p, n, ys, acc, accm, 1, sgn); break;                                               \
        case 2:  KERN(p, n, ys, acc, accm, 2, sgn); break;                                               \
        case 3:  KERN(p, n, ys, acc, accm, 3, sgn); break;                                               \
        default: KERN(p, n, ys, acc, accm, 4, sgn); break;                                               \
    }                                                                                                    \
}
LM_TARGET_AVX2 static inline __attribute__((always_inline)) void mk_pa(const struct qg_pa * p, int n, const void * const * ys,
                                                                      float * acc, float * accm, const int nc, const bool sgn) {
    const __m256i one = _mm256_set1_epi16(1);
    PA_ACC_LOAD
    const size_t ybs = sgn ? sizeof(block_q8_0) : sizeof(block_q8_1);
    const size_t qo = sgn ? offsetof(block_q8_0, qs) : offsetof(block_q8_1, qs);
    for (int i = 0; i < n; i++) {
        const char * q0 = (const char *) ys[0] + i * ybs + qo, * q1 = q0, * q2 = q0, * q3 = q0;
        if (nc > 1) q1 = (const char *) ys[1] + i * ybs + qo;
        if (nc > 2) q2 = (const char *) ys[2] + i * ybs + qo;
        if (nc > 3) q3 = (const char *) ys[3] + i * ybs + qo;
        __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
#pragma GCC unroll 2
        for (int g = 0; g < 8; g++) {
            const __m256i w = LDA(p[i].w[g]), aw = sgn ? LDA(p[i].aw[g]) : w;
            PA_COL(0) PA_COL(1) PA_COL(2) PA_COL(3)
        }
        const __m256 dx = _mm256_load_ps(p[i].d);
        PA_FIN(0) PA_FIN(1) PA_FIN(2) PA_FIN(3)
    }
    PA_ACC_STORE
}
#undef PA_COL
#undef PA_FIN
MK_PA(mk_s8, LM_TARGET_AVX2, mk_pa, true)
MK_PA(mk_u8m, LM_TARGET_AVX2, mk_pa, false)

// mk_pa with vpdpbusd in zmm: the interleaved panel's vectors g and g+1 of
// a block in one zmm (rows in lanes 0-7 for g, 8-15 for g+1), against the
// column's words g and g+1 (one vpermd), so a block takes 4 vpdpbusd per
// column where mk_pa takes 8 maddubs + madd; the halves are added at the end
// (exact int32 sums, see dot_s8_zmm), then mk_pa's float steps: the same bits.
// Faster than the row-major VNNI kernel (one column a pass, then
// reduce_pairs), which pays a reduction per column.
#define PV_COL(c) if (nc > c) {                                                                            \
        const __m512i yg = _mm512_permutexvar_epi32(sel, y##c);                                            \
        s##c = _mm512_dpbusd_epi32(s##c, aw, sgn ? _mm512_mask_sub_epi8(yg, neg, _mm512_setzero_si512(), yg) : yg); }
#define PV_Y(c) if (nc > c) y##c = _mm512_castsi256_si512(LD((const char *) ys[c] + i * ybs + qo));
#define PV_FIN(c) if (nc > c) { /* the two halves' sums, then mk_pa's float steps */                  \
        const __m256i t = _mm256_add_epi32(_mm512_castsi512_si256(s##c), _mm512_extracti64x4_epi64(s##c, 1)); \
        PA_FLOAT(c, t) }
LM_TARGET_VNNI static inline __attribute__((always_inline)) void mk_pa_vnni(const struct qg_pa * p, int n, const void * const * ys,
                                                                           float * acc, float * accm, const int nc, const bool sgn) {
    PA_ACC_LOAD
    const size_t ybs = sgn ? sizeof(block_q8_0) : sizeof(block_q8_1);
    const size_t qo = sgn ? offsetof(block_q8_0, qs) : offsetof(block_q8_1, qs);
    for (int i = 0; i < n; i++) {
        __m512i y0 = _mm512_setzero_si512(), y1 = y0, y2 = y0, y3 = y0;
        PV_Y(0) PV_Y(1) PV_Y(2) PV_Y(3)
        __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
        for (int g = 0; g < 8; g += 2) {
            const __m512i w = _mm512_load_si512((const void *) p[i].w[g]);
            const __m512i aw = sgn ? _mm512_load_si512((const void *) p[i].aw[g]) : w;
            const __mmask64 neg = _mm512_movepi8_mask(w);
            const __m512i sel = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi32(g)), _mm256_set1_epi32(g + 1), 1);
            PV_COL(0) PV_COL(1) PV_COL(2) PV_COL(3)
        }
        const __m256 dx = _mm256_load_ps(p[i].d);
        PV_FIN(0) PV_FIN(1) PV_FIN(2) PV_FIN(3)
    }
    PA_ACC_STORE
}
#undef PV_COL
#undef PV_Y
#undef PV_FIN
MK_PA(mk_s8_nvnni, LM_TARGET_VNNI, mk_pa_vnni, true)
MK_PA(mk_u8m_nvnni, LM_TARGET_VNNI, mk_pa_vnni, false)
#undef PA_FLOAT
#undef PA_ACC_LOAD
#undef PA_ACC_STORE
#undef MK_PA

// super-blocks x q8_K. SGN: signed quants (sign trick); MIN: mins present.
// MADD_ADD(acc, p, sc): acc + the pair sums of the int16 products p * sc
// (madd then add; one vpdpwssd with VNNI: the same exact int32 sums).
#define MK_BIAS(r) _mm256_madd_epi16(LDA(p[i].bias[r]), bs)
#define MK_G(MADD_ADD, r) s##r = MADD_ADD(s##r, sgn                                                     \
        ? _mm256_maddubs_epi16(LDA(p[i].aw[r] + 32 * g), _mm256_sign_epi8(yg, LDA(p[i].w[r] + 32 * g))) \
        : _mm256_maddubs_epi16(LDA(p[i].w[r] + 32 * g), yg), LDA(p[i].sc[r][g]));
#define MK_K(name, TARGET, MADD_ADD)                                                                    \
TARGET static inline __attribute__((always_inline)) void name(const struct qg_pk * p, int n, const block_q8_K * y, \
                                                             float * acc, float * accm, const bool sgn, const bool min) { \
    __m256 a = _mm256_load_ps(acc), am = _mm256_load_ps(accm);                                          \
    for (int i = 0; i < n; i++) {                                                                       \
        const __m256i bs = LD(y[i].bsums);                                                              \
        const __m256 dy = _mm256_set1_ps(y[i].d);                                                       \
        if (min) {                                                                                      \
            const __m256i ms = reduce8(_mm256_madd_epi16(LDA(p[i].mn[0]), bs), _mm256_madd_epi16(LDA(p[i].mn[1]), bs), \
                                       _mm256_madd_epi16(LDA(p[i].mn[2]), bs), _mm256_madd_epi16(LDA(p[i].mn[3]), bs), \
                                       _mm256_madd_epi16(LDA(p[i].mn[4]), bs), _mm256_madd_epi16(LDA(p[i].mn[5]), bs), \
                                       _mm256_madd_epi16(LDA(p[i].mn[6]), bs), _mm256_madd_epi16(LDA(p[i].mn[7]), bs)); \
            am = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_load_ps(p[i].dmin), dy), _mm256_cvtepi32_ps(ms), am);   \
        }                                                                                               \
        __m256i s0, s1, s2, s3, s4, s5, s6, s7;                                                         \
        if (sgn) {                                                                                      \
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = _mm256_setzero_si256();                             \
        } else {                                                                                        \
            s0 = MK_BIAS(0); s1 = MK_BIAS(1); s2 = MK_BIAS(2); s3 = MK_BIAS(3);                         \
            s4 = MK_BIAS(4); s5 = MK_BIAS(5); s6 = MK_BIAS(6); s7 = MK_BIAS(7);                         \
        }                                                                                               \
        for (int g = 0; g < 8; g++) {                                                                   \
            const __m256i yg = LD(y[i].qs + 32 * g);                                                    \
            MK_G(MADD_ADD, 0) MK_G(MADD_ADD, 1) MK_G(MADD_ADD, 2) MK_G(MADD_ADD, 3)                     \
            MK_G(MADD_ADD, 4) MK_G(MADD_ADD, 5) MK_G(MADD_ADD, 6) MK_G(MADD_ADD, 7)                     \
        }                                                                                               \
        const __m256i s = reduce8(s0, s1, s2, s3, s4, s5, s6, s7);                                      \
        a = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_load_ps(p[i].d), dy), _mm256_cvtepi32_ps(s), a);       \
    }                                                                                                   \
    _mm256_store_ps(acc, a);                                                                            \
    _mm256_store_ps(accm, am);                                                                          \
}                                                                                                       \
TARGET static void name##_u(const void * vp, int n, const void * vy, float * acc, float * accm) {       \
    name(vp, n, vy, acc, accm, false, false);                                                           \
}                                                                                                       \
TARGET static void name##_um(const void * vp, int n, const void * vy, float * acc, float * accm) {      \
    name(vp, n, vy, acc, accm, false, true);                                                            \
}                                                                                                       \
TARGET static void name##_s(const void * vp, int n, const void * vy, float * acc, float * accm) {       \
    name(vp, n, vy, acc, accm, true, false);                                                            \
}
#define MADD_ADD_AVX2(acc, p, sc) _mm256_add_epi32(acc, _mm256_madd_epi16(p, sc))
MK_K(mk_k, LM_TARGET_AVX2, MADD_ADD_AVX2)
#define MADD_ADD_VNNI(acc, p, sc) _mm256_dpwssd_epi32(acc, p, sc)
MK_K(mk_k_vnni, LM_TARGET_VNNI, MADD_ADD_VNNI)

// ---------------------------------------------------------------- driver

typedef void (*qg_dec_fn)(const void * x, int n, int r, void * panel);
typedef void (*qg_mk_fn)(const void * panel, int n, const void * y, float * acc, float * accm);
typedef void (*qg_mkn_fn)(const void * panel, int n, const void * const * ys, int nc, float * acc, float * accm);

enum qg_fin { FIN_ACC, FIN_ADD, FIN_SUB }; // result: acc, acc + accm, acc - accm

struct qg_type {
    qg_dec_fn dec;
    qg_mk_fn  mk;      // AVX2, one column (super-block panels)
    qg_mkn_fn mkn;     // AVX2, up to QG_NC columns (32-quant panels, interleaved)
    qg_mk_fn  mkv;     // AVX512_VNNI, one column (super-block panels; the same bits)
    qg_mkn_fn mknv;    // AVX512_VNNI, up to QG_NC columns (32-quant panels, interleaved)
    int       bk;      // quants per block
    int       kc;      // blocks per panel stretch
    size_t    pbytes;  // bytes per panel block
    enum qg_fin fin;
};

static const struct qg_type * qg_lookup(enum lm_ggml_type t) {
#define PA(dec, mk, fin) { dec, NULL, mk, NULL, mk##_nvnni, 32, QG_KC, sizeof(struct qg_pa), fin }
#define PK(dec, mk, fin) { dec, mk, NULL, VNNI_##mk, NULL, 256, QG_KCS, sizeof(struct qg_pk), fin }
#define VNNI_mk_k_u  mk_k_vnni_u
#define VNNI_mk_k_um mk_k_vnni_um
#define VNNI_mk_k_s  mk_k_vnni_s
    static const struct qg_type q4_0 = PA(dec_q4_0, mk_s8, FIN_ACC), q4_1 = PA(dec_q4_1, mk_u8m, FIN_ADD);
    static const struct qg_type q5_0 = PA(dec_q5_0, mk_s8, FIN_ACC), q5_1 = PA(dec_q5_1, mk_u8m, FIN_ADD);
    static const struct qg_type q8_0 = PA(dec_q8_0, mk_s8, FIN_ACC), iq4_nl = PA(dec_iq4_nl, mk_s8, FIN_ACC);
    static const struct qg_type q2_K = PK(dec_q2_K, mk_k_um, FIN_SUB), q3_K = PK(dec_q3_K, mk_k_u, FIN_ACC);
    static const struct qg_type q4_K = PK(dec_q4_K, mk_k_um, FIN_SUB), q5_K = PK(dec_q5_K, mk_k_um, FIN_SUB);
    static const struct qg_type q6_K = PK(dec_q6_K, mk_k_u, FIN_ACC), iq4_xs = PK(dec_iq4_xs, mk_k_s, FIN_ACC);
#undef PA
#undef PK
#undef VNNI_mk_k_u
#undef VNNI_mk_k_um
#undef VNNI_mk_k_s
    switch (t) {
        case LM_GGML_TYPE_Q4_0:   return &q4_0;
        case LM_GGML_TYPE_Q4_1:   return &q4_1;
        case LM_GGML_TYPE_Q5_0:   return &q5_0;
        case LM_GGML_TYPE_Q5_1:   return &q5_1;
        case LM_GGML_TYPE_Q8_0:   return &q8_0;
        case LM_GGML_TYPE_IQ4_NL: return &iq4_nl;
        case LM_GGML_TYPE_Q2_K:   return &q2_K;
        case LM_GGML_TYPE_Q3_K:   return &q3_K;
        case LM_GGML_TYPE_Q4_K:   return &q4_K;
        case LM_GGML_TYPE_Q5_K:   return &q5_K;
        case LM_GGML_TYPE_Q6_K:   return &q6_K;
        case LM_GGML_TYPE_IQ4_XS: return &iq4_xs;
        default:                  return NULL;
    }
}

// d[r] = row r of x . y for r in [r0, r1): one column's mat-vec, 8 rows a
// kernel call (so what a call costs besides the kernel counts).
LM_TARGET_AVX2 static void qmv_run(const struct qg_type * qt, mm_qmv_fn mv, int64_t nb, size_t xbs, const char * x,
                                   size_t xrs, int64_t r0, int64_t r1, const void * y, float * d) {
    const size_t rowb = (size_t) nb * xbs;
    const int64_t pf_rows = xrs != rowb ? 0 : rowb <= QG_PF_ROW ? QG_PF_AHEAD * QG_R : QG_R;
    // rows run out before the hardware prefetchers catch up: the group pf_rows
    // rows on (contiguous rows) is prefetched by the kernel in step with its
    // blocks. It may lie past r1 (the next block of rows, another thread's,
    // or past the matrix's end): a prefetch never faults, and a thread's next block
    // usually follows; rows of another stride would only fetch lines nobody reads.
    for (int64_t r = r0; r < r1; r += QG_R) {
        const int nr = (int) LM_GGML_MIN(QG_R, r1 - r);
        // zeroed by whole-vector stores: the kernel loads them as one vector, and a
        // load that narrower stores (or memset's) must be merged for waits for them
        // to retire.
        float acc[QG_R], accm[QG_R];
        _mm256_storeu_ps(acc, _mm256_setzero_ps());
        _mm256_storeu_ps(accm, _mm256_setzero_ps());
        const char * rows[QG_R];
        for (int i = 0; i < QG_R; i++) rows[i] = x + (r + LM_GGML_MIN(i, nr - 1)) * xrs;
        mv(nb, rows, y, acc, accm, pf_rows ? x + (r + pf_rows) * xrs : NULL);
        switch (qt->fin) {
            case FIN_ACC: for (int i = 0; i < nr; i++) d[r + i] = acc[i]; break;
            case FIN_ADD: for (int i = 0; i < nr; i++) d[r + i] = acc[i] + accm[i]; break;
            case FIN_SUB: for (int i = 0; i < nr; i++) d[r + i] = acc[i] - accm[i]; break;
        }
    }
}

// The other repacked types: each row's block put back together (repack.c),
// then the plain decoder.
static void dec_rp_plain(const struct qg_type * qt, enum lm_ggml_type t, const char * g, int n, char * panel) {
    const size_t xbs = lm_ggml_type_size(t);
    char blk[256] __attribute__((aligned(32)));
    for (int i = 0; i < n; i++, g += QG_R * xbs) {
        for (int r = 0; r < QG_R; r++) {
            lm_cpu_repack_block(t, g, r, blk);
            qt->dec(blk, 1, r, panel + (size_t) i * qt->pbytes);
        }
    }
}

// vnni: the AVX512_VNNI kernels where a type has them (the same bits)
// rp: x is repacked (repack.c) and [r0, r1) whole groups of 8 rows
static void qgemm_run(const struct qg_type * qt, bool vnni, bool rp, enum lm_ggml_type t, enum lm_ggml_type vdt, int64_t K,
                      const char * x, size_t xrs, int64_t r0, int64_t r1, const void * const * ycol, float * const * dcol,
                      int ncol, void * scratch) {
    const int64_t nb = K / qt->bk;
    const size_t xbs = lm_ggml_type_size(t), ybs = lm_ggml_type_size(vdt);
    char * panel = (char *)(((uintptr_t) scratch + 63) & ~(uintptr_t) 63);
    float * acc  = (float *)(panel + (size_t) qt->kc * qt->pbytes);
    float * accm = acc + MM_QGEMM_MAX_COLS * QG_R;
    if (rp && ncol <= QG_MV_COLS) {
        const mm_qmv_rp_fn mv = vnni ? mm_qmv_repacked_vnni(t) : mm_qmv_repacked_avx2(t);
        for (int c = 0; c < ncol; c++) mv(K, x, xrs, r0, r1, ycol[c], dcol[c]);
        return;
    }
    if (ncol <= QG_MV_COLS) { // decoding into a panel would not pay; the mat-vec kernel sums alike
        const mm_qmv_fn mv = vnni && mm_qmv_vnni(t) ? mm_qmv_vnni(t) : mm_qmv_avx2(t);
        for (int c = 0; c < ncol; c++) qmv_run(qt, mv, nb, xbs, x, xrs, r0, r1, ycol[c], dcol[c]);
        return;
    }
    const qg_mk_fn mk = vnni ? qt->mkv : qt->mk;
    const qg_mkn_fn mkn = vnni ? qt->mknv : qt->mkn;
    for (int64_t r = r0; r < r1; r += QG_R) {
        const int nr = (int) LM_GGML_MIN(QG_R, r1 - r);
        memset(acc, 0, (size_t) ncol * QG_R * sizeof(float));
        memset(accm, 0, (size_t) ncol * QG_R * sizeof(float));
        for (int64_t b0 = 0; b0 < nb; b0 += qt->kc) {
            const int n = (int) LM_GGML_MIN(qt->kc, nb - b0);
            // the next stretch of these rows (or the first of the next rows) comes in
            // while the columns run: the decoders would otherwise wait on memory
            const int64_t nb0 = b0 + qt->kc < nb ? b0 + qt->kc : 0, nr0 = nb0 ? r : r + QG_R;
            const size_t len = (size_t) LM_GGML_MIN(qt->kc, nb - nb0) * xbs;
            if (rp) { // a group's stretch is contiguous
                const char * g = x + r * xrs + b0 * QG_R * xbs;
                if (t == LM_GGML_TYPE_Q8_0) dec_q8_0_rp(g, n, panel);
                else if (t == LM_GGML_TYPE_Q4_0 || t == LM_GGML_TYPE_IQ4_NL) dec_q4_rp(g, n, panel, t == LM_GGML_TYPE_IQ4_NL);
                else if (t == LM_GGML_TYPE_Q4_K) dec_q4_K_rp(g, n, panel);
                else dec_rp_plain(qt, t, g, n, panel);
                if (nr0 < r1) {
                    const char * pf = x + nr0 * xrs + nb0 * QG_R * xbs;
                    for (size_t o = 0; o < QG_R * len; o += 64) _mm_prefetch(pf + o, _MM_HINT_T0);
                }
            } else {
                // rows past the end repeat the last one: their lanes are not stored
                for (int i = 0; i < QG_R; i++) qt->dec(x + (r + LM_GGML_MIN(i, nr - 1)) * xrs + b0 * xbs, n, i, panel);
                for (int i = 0; i < QG_R && nr0 + i < r1; i++) {
                    const char * pf = x + (nr0 + i) * xrs + nb0 * xbs;
                    for (size_t o = 0; o < len; o += 64) _mm_prefetch(pf + o, _MM_HINT_T0);
                }
            }
            if (mkn) {
                pa_interleave((struct qg_pa *) panel, n, mkn == mk_s8 || mkn == mk_s8_nvnni);
                const void * ys[MM_QGEMM_MAX_COLS];
                for (int c = 0; c < ncol; c++) ys[c] = (const char *) ycol[c] + b0 * ybs;
                for (int c = 0; c < ncol; c += QG_NC) {
                    mkn(panel, n, ys + c, LM_GGML_MIN(QG_NC, ncol - c), acc + c * QG_R, accm + c * QG_R);
                }
                continue;
            }
            for (int c = 0; c < ncol; c++) {
                mk(panel, n, (const char *) ycol[c] + b0 * ybs, acc + c * QG_R, accm + c * QG_R);
            }
        }
        for (int c = 0; c < ncol; c++) {
            const float * a = acc + c * QG_R, * m = accm + c * QG_R;
            float * d = dcol[c] + r;
            switch (qt->fin) {
                case FIN_ACC: for (int i = 0; i < nr; i++) d[i] = a[i]; break;
                case FIN_ADD: for (int i = 0; i < nr; i++) d[i] = a[i] + m[i]; break;
                case FIN_SUB: for (int i = 0; i < nr; i++) d[i] = a[i] - m[i]; break;
            }
        }
    }
}

#define QG_ENTRY(T, VDT)                                                                                          \
static void qgemm_##T(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * const * ycol, \
                      float * const * dcol, int ncol, void * scratch) {                                          \
    qgemm_run(qg_lookup(LM_GGML_TYPE_##T), false, false, LM_GGML_TYPE_##T, LM_GGML_TYPE_##VDT, K, x, xrs, r0, r1, ycol,  \
              dcol, ncol, scratch);                                                                               \
}                                                                                                                 \
static void qgemm_vnni_##T(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * const * ycol, \
                           float * const * dcol, int ncol, void * scratch) {                                     \
    qgemm_run(qg_lookup(LM_GGML_TYPE_##T), true, false, LM_GGML_TYPE_##T, LM_GGML_TYPE_##VDT, K, x, xrs, r0, r1, ycol,   \
              dcol, ncol, scratch);                                                                               \
}
QG_ENTRY(Q4_0, Q8_0)
QG_ENTRY(Q4_1, Q8_1)
QG_ENTRY(Q5_0, Q8_0)
QG_ENTRY(Q5_1, Q8_1)
QG_ENTRY(Q8_0, Q8_0)
QG_ENTRY(IQ4_NL, Q8_0)
QG_ENTRY(Q2_K, Q8_K)
QG_ENTRY(Q3_K, Q8_K)
QG_ENTRY(Q4_K, Q8_K)
QG_ENTRY(Q5_K, Q8_K)
QG_ENTRY(Q6_K, Q8_K)
QG_ENTRY(IQ4_XS, Q8_K)

static const struct { mm_qgemm_fn avx2, vnni; } qg_entries[LM_GGML_TYPE_COUNT] = {
#define E(T) [LM_GGML_TYPE_##T] = { qgemm_##T, qgemm_vnni_##T }
    E(Q4_0), E(Q4_1), E(Q5_0), E(Q5_1), E(Q8_0), E(IQ4_NL), E(Q2_K), E(Q3_K), E(Q4_K), E(Q5_K), E(Q6_K), E(IQ4_XS),
#undef E
};

mm_qgemm_fn mm_qgemm_avx2(enum lm_ggml_type type) {
    return (unsigned) type < LM_GGML_TYPE_COUNT ? qg_entries[type].avx2 : NULL;
}

// The AVX512_VNNI kernels of a type where it has them, the AVX2 ones elsewhere.
mm_qgemm_fn mm_qgemm_vnni(enum lm_ggml_type type) {
    return (unsigned) type < LM_GGML_TYPE_COUNT ? qg_entries[type].vnni : NULL;
}

#define QG_RP_ENTRY(T, VDT)                                                                                       \
static void qgemm_rp_##T(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * const * ycol, \
                         float * const * dcol, int ncol, void * scratch) {                                       \
    qgemm_run(qg_lookup(LM_GGML_TYPE_##T), false, true, LM_GGML_TYPE_##T, LM_GGML_TYPE_##VDT, K, x, xrs, r0, r1, ycol,   \
              dcol, ncol, scratch);                                                                               \
}                                                                                                                 \
static void qgemm_vnni_rp_##T(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * const * ycol, \
                              float * const * dcol, int ncol, void * scratch) {                                  \
    qgemm_run(qg_lookup(LM_GGML_TYPE_##T), true, true, LM_GGML_TYPE_##T, LM_GGML_TYPE_##VDT, K, x, xrs, r0, r1, ycol,    \
              dcol, ncol, scratch);                                                                               \
}
QG_RP_ENTRY(Q8_0, Q8_0)
QG_RP_ENTRY(Q4_0, Q8_0)
QG_RP_ENTRY(IQ4_NL, Q8_0)
QG_RP_ENTRY(Q4_K, Q8_K)
QG_RP_ENTRY(Q6_K, Q8_K)

static const struct { mm_qgemm_fn avx2, vnni; } qg_rp_entries[LM_GGML_TYPE_COUNT] = {
#define E(T) [LM_GGML_TYPE_##T] = { qgemm_rp_##T, qgemm_vnni_rp_##T }
    E(Q8_0), E(Q4_0), E(IQ4_NL), E(Q4_K), E(Q6_K),
#undef E
};

mm_qgemm_fn mm_qgemm_repacked_avx2(enum lm_ggml_type type) {
    return (unsigned) type < LM_GGML_TYPE_COUNT ? qg_rp_entries[type].avx2 : NULL;
}

mm_qgemm_fn mm_qgemm_repacked_vnni(enum lm_ggml_type type) {
    return (unsigned) type < LM_GGML_TYPE_COUNT ? qg_rp_entries[type].vnni : NULL;
}
#else
typedef int mm_qgemm_x86_unused; // ISO C forbids an empty translation unit
#endif
