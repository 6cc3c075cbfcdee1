// mm-quant-x86.h - AVX2 decoding of quantized weight blocks shared by the
// integer dots (mm-quant-x86.c) and the quantized GEMM (mm-qgemm-x86.c).
// x86-64 only; include after <immintrin.h> and ggml-common.h.
#pragma once

// 16 packed nibbles -> 32 bytes: the low nibbles, then the high ones (the
// element order of the 32-quant blocks).
// The 16 bytes go to both lanes by a broadcast load (no ALU work) and
// lane 1 is shifted by 4: two operations instead of four.
LM_TARGET_AVX2 static inline __m256i nibbles32(const uint8_t * p) {
    const __m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) p));
    return _mm256_and_si256(_mm256_srlv_epi32(q, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(0xF));
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
// 8-11: low nibbles of scales 4-7, high nibbles of mins 4-7), unpacked into
// bytes 0-7 scales, 8-15 mins. With the 32-bit words a, b, c of the field:
// result words a&0x3F.., (c&0x0F..)|((a>>2)&0x30..), b&0x3F..,
// ((c>>4)&0x0F..)|((b>>2)&0x30..), built as vectors [a c b c] and [. a . b]
// (a dozen scalar ops and three inserts before, once per block and row).
// Reads 16 bytes at q: the field is followed by the block's quants.
LM_TARGET_AVX2 static inline __m256i k4_unpack_scales(__m256i v) {
    const __m256i lo = _mm256_shuffle_epi32(v, 0 | 2 << 2 | 1 << 4 | 2 << 6); // a c b c
    const __m256i hi = _mm256_shuffle_epi32(v, 0 | 0 << 2 | 0 << 4 | 1 << 6); // . a . b
    const __m256i l = _mm256_and_si256(_mm256_srlv_epi32(lo, _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4)),
                                       _mm256_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F,
                                                         0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F));
    const __m256i h = _mm256_and_si256(_mm256_srli_epi32(hi, 2), _mm256_setr_epi32(0, 0x30303030, 0, 0x30303030,
                                                                                  0, 0x30303030, 0, 0x30303030));
    return _mm256_or_si256(l, h);
}
LM_TARGET_AVX2 static inline __m128i k4_scales_mins(const uint8_t * q) {
    return _mm256_castsi256_si128(k4_unpack_scales(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) q))));
}
// the same for two blocks at once: lane 0 from q0, lane 1 from q1
LM_TARGET_AVX2 static inline __m256i k4_scales_mins2(const uint8_t * q0, const uint8_t * q1) {
    return k4_unpack_scales(_mm256_loadu2_m128i((const __m128i *) q1, (const __m128i *) q0));
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

// The scales and mins of block i of a repacked q4_K group (repack.c: the 8
// rows' three words of packed scales at 32, 64 and 96, row r's at 4 r; the
// expressions of k4_unpack_scales on them): dword r of *sc03 and *sc47 is
// row r's 6-bit scales 0-3 and 4-7; returns the 8 rows' mins dotted with
// the activations' sums of 32 (int32, row order).
LM_TARGET_AVX2 static inline __m256i q4k_rp_scales_mins(const char * g, const block_q8_K * y, __m256i * sc03, __m256i * sc47) {
    const __m256i m3f = _mm256_set1_epi8(0x3F), m0f = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    const __m256i wa = _mm256_loadu_si256((const __m256i *)(g + 32));
    const __m256i wb = _mm256_loadu_si256((const __m256i *)(g + 64));
    const __m256i wc = _mm256_loadu_si256((const __m256i *)(g + 96));
    *sc03 = _mm256_and_si256(wa, m3f);
    *sc47 = _mm256_or_si256(_mm256_and_si256(wc, m0f), _mm256_and_si256(_mm256_srli_epi32(wa, 2), m30));
    const __m256i mn03 = _mm256_and_si256(wb, m3f);
    const __m256i mn47 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(wc, 4), m0f),
                                         _mm256_and_si256(_mm256_srli_epi32(wb, 2), m30));
    // rows 0-3 (m0) and 4-7 (m1), two partials each
    const __m128i bs = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *) y->bsums),
                                      _mm_loadu_si128((const __m128i *)(y->bsums + 8)));
    const __m256i b03 = _mm256_broadcastq_epi64(bs), b47 = _mm256_broadcastq_epi64(_mm_unpackhi_epi64(bs, bs));
    const __m256i m0 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(mn03)), b03),
                                        _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(mn47)), b47));
    const __m256i m1 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm256_extracti128_si256(mn03, 1)), b03),
                                        _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm256_extracti128_si256(mn47, 1)), b47));
    // hadd gives rows 0, 1, 4, 5 | 2, 3, 6, 7
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(m0, m1), 0 | 2 << 2 | 1 << 4 | 3 << 6);
}

// The float steps of block i of a repacked q4_K group, one piece for both
// levels' kernels so that their bits agree: a += (d * d_y) * si and am +=
// (dmin * d_y) * ms, with the 8 rows' fp16 d at g and dmin at g + 16.
LM_TARGET_AVX2 static inline void q4k_rp_acc(const char * g, float dy, __m256i si, __m256i ms, __m256 * a, __m256 * am) {
    const __m256 vdy = _mm256_set1_ps(dy);
    const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) g));
    const __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + 16)));
    *am = _mm256_fmadd_ps(_mm256_mul_ps(dm, vdy), _mm256_cvtepi32_ps(ms), *am);
    *a = _mm256_fmadd_ps(_mm256_mul_ps(dx, vdy), _mm256_cvtepi32_ps(si), *a);
}

// ---------------------------------------------------------------- 8-row mat-vec (mm-quant-x86.c, mm-quant-vnni.c)

static inline uint32_t ld32(const char * p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t ld16(const char * p) { uint16_t v; memcpy(&v, p, 2); return v; }

// The float steps of block i of the 32-quant 8-row mat-vecs (QMV_P and its
// VNNI form), si the 8 rows' integer dots: a += d_x * d_y * si and, with
// MIN, am += m_x * s_y (the fp16 m follows d: both from one load per row).
// Uses a, am, y, i and H2F of the kernel it is expanded in.
#define QMV_P_ACC(XT, MIN, bl, si) {                                                                      \
        __m256 dx_, mx_;                                                                                 \
        if (MIN) qmv_dm(bl, &dx_, &mx_); else dx_ = qmv_f16(bl, offsetof(XT, d)), mx_ = dx_;              \
        a = _mm256_fmadd_ps(_mm256_mul_ps(dx_, _mm256_set1_ps(H2F(y[i].d))), _mm256_cvtepi32_ps(si), a); \
        if (MIN) am = _mm256_fmadd_ps(mx_, _mm256_set1_ps(H2F(((const block_q8_1 *) y)[i].s)), am); }

// lane i = the sum of the 8 int32 lanes of v[i]
LM_TARGET_AVX2 static inline __m256i reduce8(__m256i v0, __m256i v1, __m256i v2, __m256i v3,
                                             __m256i v4, __m256i v5, __m256i v6, __m256i v7) {
    const __m256i u0 = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
    const __m256i u1 = _mm256_hadd_epi32(_mm256_hadd_epi32(v4, v5), _mm256_hadd_epi32(v6, v7));
    return _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
}

// the fp16 field at byte offset off of block b of each of the 8 rows, as f32
// (built in a register by inserts: eight 2-byte stores read back as one
// vector stall on store forwarding, which is what the compiler made of an array)
LM_TARGET_AVX2 static inline __m256 qmv_f16(const char * const * rows, size_t off) {
    __m128i h = _mm_cvtsi32_si128(ld16(rows[0] + off));
    h = _mm_insert_epi16(h, ld16(rows[1] + off), 1);
    h = _mm_insert_epi16(h, ld16(rows[2] + off), 2);
    h = _mm_insert_epi16(h, ld16(rows[3] + off), 3);
    h = _mm_insert_epi16(h, ld16(rows[4] + off), 4);
    h = _mm_insert_epi16(h, ld16(rows[5] + off), 5);
    h = _mm_insert_epi16(h, ld16(rows[6] + off), 6);
    return _mm256_cvtph_ps(_mm_insert_epi16(h, ld16(rows[7] + off), 7));
}

// d and dmin (the fp16 pair at the start of a q4_K/q5_K block) of the 8 rows:
// one 32-bit load per row, the halves parted by a shuffle and a permute
LM_TARGET_AVX2 static inline void qmv_dm(const char * const * bl, __m256 * d, __m256 * dmin) {
    const __m256i w = _mm256_setr_epi32((int) ld32(bl[0]), (int) ld32(bl[1]), (int) ld32(bl[2]), (int) ld32(bl[3]),
                                        (int) ld32(bl[4]), (int) ld32(bl[5]), (int) ld32(bl[6]), (int) ld32(bl[7]));
    const __m256i part = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                          0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    const __m256i v = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(w, part), 0 | 2 << 2 | 1 << 4 | 3 << 6);
    *d = _mm256_cvtph_ps(_mm256_castsi256_si128(v));
    *dmin = _mm256_cvtph_ps(_mm256_extracti128_si256(v, 1));
}

// The next group's block i (8 blocks' bytes of the contiguous rows) is
// prefetched while block i of this group is summed: 8 rows of a few blocks
// each are too short for the hardware prefetchers to get ahead of.
#define QMV_PF(pf, i, XT) if (pf) {                                                                      \
    const char * p_ = (pf) + (i) * 8 * sizeof(XT);                                                       \
    for (size_t o_ = 0; o_ < 8 * sizeof(XT); o_ += 64) MM_PF(p_ + o_); }

// The repacked mat-vecs (repack.c) walk a slice group by group: group(nb,
// g, y, d, pf) sums the 8 rows (nb blocks of BK quants) of the group at g
// into d[0..7], prefetching the group at pf (if not NULL) in step with its
// blocks. PF is how far ahead: RP_PF_BYTES, in whole groups (nearer leaves
// the stream waiting on memory), or 0 for none. The K-quants take 0: their
// group blocks are 1-2 KB read in order, which the hardware prefetchers
// follow alone, and software prefetches only compete with them for the
// misses the core can have in flight.
#define RP_PF_BYTES (64 * 1024)
#define RP_AHEAD(xrs, bytes) (8 * LM_GGML_MAX(1, (int64_t)((bytes) / (8 * (xrs)))))
#define QMV_RP(name, group, BK, TARGET, PF)                                                              \
TARGET static void name(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * y, float * d) { \
    const int64_t nb = K / (BK);                                                                         \
    const int64_t ahead = RP_AHEAD(xrs, PF);                                                             \
    /* a prefetch past the matrix never faults; it only fetches lines nobody reads */                    \
    for (int64_t r = r0; r < r1; r += 8) group(nb, x + r * xrs, y, d + r, (PF) ? x + (r + ahead) * xrs : NULL); \
}

// The same for group kernels that also take, per block, a value of the
// column alone (YT, made by fill(nb, y, ys)): it is made once per call
// for every group, not by each group. Past QMV_RP_YS_MAX blocks the
// groups get NULL and make their own.
#define QMV_RP_YS_MAX 512
#define QMV_RP_YS(name, group, BK, TARGET, YT, fill)                                                     \
TARGET static void name(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * y, float * d) { \
    const int64_t nb = K / (BK);                                                                         \
    const int64_t ahead = RP_AHEAD(xrs, RP_PF_BYTES);                                                    \
    YT ys[QMV_RP_YS_MAX];                                                                                \
    const YT * yp = NULL;                                                                                \
    if (nb <= QMV_RP_YS_MAX) {                                                                           \
        fill(nb, y, ys);                                                                                 \
        yp = ys;                                                                                         \
    }                                                                                                    \
    for (int64_t r = r0; r < r1; r += 8) group(nb, x + r * xrs, y, d + r, x + (r + ahead) * xrs, yp);    \
}

// the VNNI instances of mm-quant-x86.c's templates, or NULL: 8 rows (the
// K-quants, iq4_xs) and 1 row (q2_K, q3_K, q6_K, iq4_xs)
mm_qmv_fn         mm_qmv_k_vnni(enum lm_ggml_type type);
lm_ggml_vec_dot_t mm_quant_dot_k_vnni(enum lm_ggml_type type);

// ---------------------------------------------------------------- AVX512_VNNI (mm-quant-vnni.c, mm-qgemm-x86.c)
//
// vpdpbusd sums 4 u8 x s8 products into an int32 with no 16-bit step. The
// AVX2 kernels' madd(maddubs(u, s), 1) gives the same int32 lane for lane:
// their unsigned operand is at most 128 (|w| of the sign trick, or quants
// of up to 6 bits), so a maddubs pair lies in [-32768, 32512] and never
// saturates. So the VNNI forms below compute the AVX2 integer sums exactly,
// and their callers repeat the AVX2 float steps.
// The sign trick of dot_s8 without vpsignb (none for zmm): |w| by vpabsb
// (0x80 for -128, as vpsignb gives) against y negated where w < 0 (wrapping:
// -(-128) stays -128, as in vpsignb); where w is 0, |w| is 0.
LM_TARGET_VNNI static inline __m512i dot_s8_zmm(__m512i w, __m512i y) {
    const __m512i ny = _mm512_mask_sub_epi8(y, _mm512_movepi8_mask(w), _mm512_setzero_si512(), y);
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(w), ny);
}

// two 32-byte rows in one vector: a in the low half, b in the high one
LM_TARGET_VNNI static inline __m512i ld_pair(const void * a, const void * b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) a)),
                              _mm256_loadu_si256((const __m256i *) b), 1);
}

// p[k]: rows k (dwords 0-7) and k+4 (8-15) -> the 8 row sums in row order
LM_TARGET_VNNI static inline __m256i reduce_pairs(const __m512i * p) {
    // per 128-bit lane j: rows k, k+1 (j < 2) or k+4, k+5 (j >= 2), half sums
    const __m512i t01 = _mm512_add_epi32(_mm512_unpacklo_epi32(p[0], p[1]), _mm512_unpackhi_epi32(p[0], p[1]));
    const __m512i t23 = _mm512_add_epi32(_mm512_unpacklo_epi32(p[2], p[3]), _mm512_unpackhi_epi32(p[2], p[3]));
    // lanes 0, 1: quarter sums of rows 0-3; lanes 2, 3: of rows 4-7
    const __m512i u = _mm512_add_epi32(_mm512_unpacklo_epi64(t01, t23), _mm512_unpackhi_epi64(t01, t23));
    const __m512i v = _mm512_add_epi32(u, _mm512_shuffle_i32x4(u, u, 1 | 0 << 2 | 3 << 4 | 2 << 6));
    return _mm512_castsi512_si256(_mm512_shuffle_i32x4(v, v, 0 | 2 << 2));
}
