// mm-iquant-neon.c - NEON integer dots of the i-quants and the ternary types
// against q8_K (mm-iquant.h), arm64 only: the scalar kernels' bits.
//
// Each type has a step decoder that builds the 32 values of sub-block ib in
// two int8x16 registers (grid entries by scalar loads, signs as 0x00/0xFF
// byte masks) and gives the two 16-value scales. A step's exact integer sum
// is then taken by one of three accumulators: one scale for the 32 values,
// one per 16, or all scales 1 (the ternary types); at the NEON level by
// widening multiplies (SMULL/SMLAL into int16, then scaled into int32), at
// the dotprod level by SDOT. Both are exact, so both give the scalar's sumi
// and, with the float steps written as in mm-iquant.c, its bits.
//
// The GEMM decodes blocks of a few rows at once into mm_iq_block form in the
// scratch and runs every column over them with the same accumulators: each
// (row, column) sums its blocks in order with the vd's float steps.
#include "fp-nocontract.h"
#include "mm-kernels.h"
#include "mm-iquant.h"

#if defined(LM_ARM64)
#include "mm-quant-neon.h"

// ---------------------------------------------------------------- decoding helpers

static const uint8_t bit8x2[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
static const uint8_t rep01[16]  = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
static const uint8_t rep23[16]  = {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};

// 16 bytes from two entries of a grid of 8 bytes each
static inline LM_ALWAYS_INLINE uint8x16_t grid8x2(const uint64_t * g, unsigned a, unsigned b) {
    return vreinterpretq_u8_u64(vcombine_u64(vld1_u64(g + a), vld1_u64(g + b)));
}

// 16 bytes from four entries of a grid of 4 bytes each
static inline LM_ALWAYS_INLINE uint8x16_t grid4x4(const uint32_t * g, unsigned a, unsigned b, unsigned c, unsigned d) {
    const uint64_t lo = (uint64_t) g[b] << 32 | g[a], hi = (uint64_t) g[d] << 32 | g[c];
    return vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(lo), vcreate_u64(hi)));
}

// sign masks of 16 values from two 7-bit fields of the even-parity sign table
static inline LM_ALWAYS_INLINE uint8x16_t signs7x2(unsigned a, unsigned b) {
    return vreinterpretq_u8_u64(vcombine_u64(vld1_u64(lm_ksigns64 + a), vld1_u64(lm_ksigns64 + b)));
}

// sign masks of 32 values from 4 sign bytes at p (bit j of byte l: value 8l + j)
static inline LM_ALWAYS_INLINE void signs8x4(const uint8_t * p, uint8x16_t * m) {
    uint32_t w;
    memcpy(&w, p, 4);
    const uint8x16_t b = vreinterpretq_u8_u32(vdupq_n_u32(w)), bits = vld1q_u8(bit8x2);
    m[0] = vtstq_u8(vqtbl1q_u8(b, vld1q_u8(rep01)), bits);
    m[1] = vtstq_u8(vqtbl1q_u8(b, vld1q_u8(rep23)), bits);
}

// magnitudes with the signs of masks m (0xFF: negative): (g ^ m) - m
static inline LM_ALWAYS_INLINE int8x16_t signed16(uint8x16_t g, uint8x16_t m) {
    return vreinterpretq_s8_u8(vsubq_u8(veorq_u8(g, m), m));
}

// iq1: grid values in {-1, 0, 1} counted in eighths, plus the offsets delta (+-1)
static inline LM_ALWAYS_INLINE int8x16_t iq1_values(uint8x16_t g, int8x16_t delta) {
    return vmlaq_s8(delta, vreinterpretq_s8_u8(g), vdupq_n_s8(8));
}

// tq1_0: the trit read from byte v * 3^n is floor(3 x / 256) - 1 for
// x = (v * 3^n) mod 256, which is -1 below 86, 1 from 171 and 0 between
static inline LM_ALWAYS_INLINE int8x16_t trits(uint8x16_t v, uint8x16_t pow3) {
    const uint8x16_t x = vmulq_u8(v, pow3);
    return vreinterpretq_s8_u8(vsubq_u8(vcltq_u8(x, vdupq_n_u8(86)), vcgeq_u8(x, vdupq_n_u8(171))));
}

// ---------------------------------------------------------------- step decoders
//
// dec_T(x, ib, q, sc): values 32 ib .. 32 ib + 31 of block x in q[0], q[1]
// and the scales of their two groups of 16 in sc[0], sc[1] (the same where
// the type has one scale per 32); d_T(x): the block's float scale.

static inline LM_ALWAYS_INLINE float d_iq2_xxs(const block_iq2_xxs * x) { return H2F(x->d); }
static inline LM_ALWAYS_INLINE void dec_iq2_xxs(const block_iq2_xxs * x, int ib, int8x16_t * q, int * sc) {
    const uint8_t * p = (const uint8_t *) x->qs + 8 * ib; // 4 grid indices, then 4 x 7 sign bits and the scale
    uint32_t w;
    memcpy(&w, p + 4, 4);
    q[0] = signed16(grid8x2(lm_iq2xxs_grid, p[0], p[1]), signs7x2(w & 127, (w >> 7) & 127));
    q[1] = signed16(grid8x2(lm_iq2xxs_grid, p[2], p[3]), signs7x2((w >> 14) & 127, (w >> 21) & 127));
    sc[0] = sc[1] = 2 * (int) (w >> 28) + 1;
}

static inline LM_ALWAYS_INLINE float d_iq2_xs(const block_iq2_xs * x) { return H2F(x->d); }
static inline LM_ALWAYS_INLINE void dec_iq2_xs(const block_iq2_xs * x, int ib, int8x16_t * q, int * sc) {
    const uint16_t * v = x->qs + 4 * ib; // 9-bit grid index, 7 sign bits
    q[0] = signed16(grid8x2(lm_iq2xs_grid, v[0] & 511, v[1] & 511), signs7x2(v[0] >> 9, v[1] >> 9));
    q[1] = signed16(grid8x2(lm_iq2xs_grid, v[2] & 511, v[3] & 511), signs7x2(v[2] >> 9, v[3] >> 9));
    sc[0] = 2 * (x->scales[ib] & 15) + 1;
    sc[1] = 2 * (x->scales[ib] >> 4) + 1;
}

static inline LM_ALWAYS_INLINE float d_iq2_s(const block_iq2_s * x) { return H2F(x->d); }
static inline LM_ALWAYS_INLINE void dec_iq2_s(const block_iq2_s * x, int ib, int8x16_t * q, int * sc) {
    const uint8_t * p = x->qs + 4 * ib;
    const unsigned h = x->qh[ib]; // 2 high index bits per entry
    uint8x16_t m[2];
    signs8x4(x->qs + QK_K / 8 + 4 * ib, m);
    q[0] = signed16(grid8x2(lm_iq2s_grid, p[0] | (h & 3) << 8, p[1] | (h & 12) << 6), m[0]);
    q[1] = signed16(grid8x2(lm_iq2s_grid, p[2] | (h & 48) << 4, p[3] | (h & 192) << 2), m[1]);
    sc[0] = 2 * (x->scales[ib] & 15) + 1;
    sc[1] = 2 * (x->scales[ib] >> 4) + 1;
}

static inline LM_ALWAYS_INLINE float d_iq3_xxs(const block_iq3_xxs * x) { return H2F(x->d); }
static inline LM_ALWAYS_INLINE void dec_iq3_xxs(const block_iq3_xxs * x, int ib, int8x16_t * q, int * sc) {
    const uint8_t * p = x->qs + 8 * ib; // 8 grid indices of 4 values
    uint32_t w; // 4 x 7 sign bits and the scale
    memcpy(&w, x->qs + QK_K / 4 + 4 * ib, 4);
    q[0] = signed16(grid4x4(lm_iq3xxs_grid, p[0], p[1], p[2], p[3]), signs7x2(w & 127, (w >> 7) & 127));
    q[1] = signed16(grid4x4(lm_iq3xxs_grid, p[4], p[5], p[6], p[7]), signs7x2((w >> 14) & 127, (w >> 21) & 127));
    sc[0] = sc[1] = 2 * (int) (w >> 28) + 1;
}

static inline LM_ALWAYS_INLINE float d_iq3_s(const block_iq3_s * x) { return H2F(x->d); }
static inline LM_ALWAYS_INLINE void dec_iq3_s(const block_iq3_s * x, int ib, int8x16_t * q, int * sc) {
    // the 8 grid indices at once: qs bytes, and bit k of qh moved to bit 8 of index k
    static const int16_t hshift[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    const uint16x8_t hb = vandq_u16(vshlq_u16(vdupq_n_u16(x->qh[ib]), vld1q_s16(hshift)), vdupq_n_u16(0x100));
    const uint16x8_t idx = vorrq_u16(vmovl_u8(vld1_u8(x->qs + 8 * ib)), hb);
    uint8x16_t m[2];
    signs8x4(x->signs + 4 * ib, m);
    q[0] = signed16(grid4x4(lm_iq3s_grid, vgetq_lane_u16(idx, 0), vgetq_lane_u16(idx, 1), vgetq_lane_u16(idx, 2), vgetq_lane_u16(idx, 3)), m[0]);
    q[1] = signed16(grid4x4(lm_iq3s_grid, vgetq_lane_u16(idx, 4), vgetq_lane_u16(idx, 5), vgetq_lane_u16(idx, 6), vgetq_lane_u16(idx, 7)), m[1]);
    sc[0] = sc[1] = 1 + 2 * ((x->scales[ib / 2] >> 4 * (ib % 2)) & 15);
}

static inline LM_ALWAYS_INLINE float d_iq1_s(const block_iq1_s * x) { return H2F(x->d); }
static inline LM_ALWAYS_INLINE void dec_iq1_s(const block_iq1_s * x, int ib, int8x16_t * q, int * sc) {
    const uint8_t * p = x->qs + 4 * ib;
    const unsigned h = x->qh[ib]; // 4 x 3 high index bits, the scale, the offset's sign
    const int8x16_t delta = vdupq_n_s8((int8_t) (h & 0x8000 ? -1 : 1));
    q[0] = iq1_values(grid8x2(lm_iq1s_grid, p[0] | (h & 7) << 8, p[1] | (h & 0x38) << 5), delta);
    q[1] = iq1_values(grid8x2(lm_iq1s_grid, p[2] | (h & 0x1C0) << 2, p[3] | (h & 0xE00) >> 1), delta);
    sc[0] = sc[1] = 2 * (int) ((h >> 12) & 7) + 1;
}

// iq1_m: the scales field as one little-endian 64-bit word of four 16-bit ones
static inline LM_ALWAYS_INLINE uint64_t iq1m_scales(const block_iq1_m * x) {
    uint64_t s;
    memcpy(&s, x->scales, 8);
    return s;
}
static inline LM_ALWAYS_INLINE float d_iq1_m(const block_iq1_m * x) {
    const uint64_t s = iq1m_scales(x); // the fp16 scale is in the top nibble of each word
    const unsigned h = (unsigned) (((s >> 12) & 0xF) | ((s >> 24) & 0xF0) | ((s >> 36) & 0xF00) | ((s >> 48) & 0xF000));
    return H2F((lm_ggml_fp16_t) h);
}
static inline LM_ALWAYS_INLINE void dec_iq1_m(const block_iq1_m * x, int ib, int8x16_t * q, int * sc) {
    static const uint8_t sign_bits[16] = {8, 8, 8, 8, 8, 8, 8, 8, 128, 128, 128, 128, 128, 128, 128, 128};
    const uint8_t * p = x->qs + 4 * ib;
    // per 8 values a nibble of 3 high index bits and the offset's sign
    const unsigned h0 = x->qh[2 * ib], h1 = x->qh[2 * ib + 1];
    const uint8x16_t sb = vld1q_u8(sign_bits), one = vdupq_n_u8(1);
    const int8x16_t d0 = vreinterpretq_s8_u8(vorrq_u8(vtstq_u8(vdupq_n_u8((uint8_t) h0), sb), one));
    const int8x16_t d1 = vreinterpretq_s8_u8(vorrq_u8(vtstq_u8(vdupq_n_u8((uint8_t) h1), sb), one));
    q[0] = iq1_values(grid8x2(lm_iq1s_grid, p[0] | (h0 & 7) << 8, p[1] | (h0 & 0x70) << 4), d0);
    q[1] = iq1_values(grid8x2(lm_iq1s_grid, p[2] | (h1 & 7) << 8, p[3] | (h1 & 0x70) << 4), d1);
    const unsigned s = (unsigned) (iq1m_scales(x) >> (16 * (ib / 2) + 6 * (ib % 2)));
    sc[0] = 2 * (int) (s & 7) + 1;
    sc[1] = 2 * (int) ((s >> 3) & 7) + 1;
}

static inline LM_ALWAYS_INLINE float d_tq1_0(const block_tq1_0 * x) { return H2F(x->d); }
// values 0-159: trit n of qs[0..31] at 32 n; 160-239: trit n of qs[32..47]
// at 160 + 16 n; 240-255: trit n of qh[m] at 240 + 4 n + m
static inline LM_ALWAYS_INLINE void dec_tq1_0(const block_tq1_0 * x, int ib, int8x16_t * q, int * sc) {
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    static const uint8_t pow3_qh[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
    if (ib < 5) {
        const uint8x16_t p = vdupq_n_u8(pow3[ib]);
        q[0] = trits(vld1q_u8(x->qs), p);
        q[1] = trits(vld1q_u8(x->qs + 16), p);
    } else if (ib < 7) {
        const uint8x16_t v = vld1q_u8(x->qs + 32);
        q[0] = trits(v, vdupq_n_u8(pow3[2 * (ib - 5)]));
        q[1] = trits(v, vdupq_n_u8(pow3[2 * (ib - 5) + 1]));
    } else {
        uint32_t w;
        memcpy(&w, x->qh, 4);
        q[0] = trits(vld1q_u8(x->qs + 32), vdupq_n_u8(pow3[4]));
        q[1] = trits(vreinterpretq_u8_u32(vdupq_n_u32(w)), vld1q_u8(pow3_qh));
    }
    sc[0] = sc[1] = 1;
}

static inline LM_ALWAYS_INLINE float d_tq2_0(const block_tq2_0 * x) { return H2F(x->d); }
// value 128 j + 32 l + m (m < 32) is bits 2l, 2l + 1 of qs[32 j + m], less 1
static inline LM_ALWAYS_INLINE void dec_tq2_0(const block_tq2_0 * x, int ib, int8x16_t * q, int * sc) {
    const uint8_t * p = x->qs + 32 * (ib / 4);
    const int8x16_t sh = vdupq_n_s8((int8_t) (-2 * (ib % 4)));
    const uint8x16_t m3 = vdupq_n_u8(3), one = vdupq_n_u8(1);
    q[0] = vreinterpretq_s8_u8(vsubq_u8(vandq_u8(vshlq_u8(vld1q_u8(p), sh), m3), one));
    q[1] = vreinterpretq_s8_u8(vsubq_u8(vandq_u8(vshlq_u8(vld1q_u8(p + 16), sh), m3), one));
    sc[0] = sc[1] = 1;
}

// ---------------------------------------------------------------- step accumulators
//
// acc + the step's exact sum against the 32 activations at y: sh, one scale
// sc[0] for the 32; sp, sc[0] and sc[1] for the two groups of 16; un, all 1.
// NEON: SMULL/SMLAL into int16 lanes, at most 4 products of |q| <= 63 and
// |y| <= 128 each (32256, no overflow), then scaled into int32 (SMLAL by
// the scale) or added pairwise (SADALP).

static inline LM_ALWAYS_INLINE int16x8_t prod16(int8x16_t q, int8x16_t y) {
    return vmlal_high_s8(vmull_s8(vget_low_s8(q), vget_low_s8(y)), q, y);
}
static inline LM_ALWAYS_INLINE int16x8_t prod32(const int8x16_t * q, const int8_t * y) {
    const int8x16_t y0 = vld1q_s8(y), y1 = vld1q_s8(y + 16);
    const int16x8_t p = vmlal_s8(prod16(q[0], y0), vget_low_s8(q[1]), vget_low_s8(y1));
    return vmlal_high_s8(p, q[1], y1);
}
static inline LM_ALWAYS_INLINE int32x4_t scaled(int32x4_t acc, int16x8_t p, int s) {
    return vmlal_high_n_s16(vmlal_n_s16(acc, vget_low_s16(p), (int16_t) s), p, (int16_t) s);
}

static inline LM_ALWAYS_INLINE int32x4_t mac_sh_neon(int32x4_t acc, const int8x16_t * q, const int8_t * y, const int * sc) {
    return scaled(acc, prod32(q, y), sc[0]);
}
static inline LM_ALWAYS_INLINE int32x4_t mac_sp_neon(int32x4_t acc, const int8x16_t * q, const int8_t * y, const int * sc) {
    acc = scaled(acc, prod16(q[0], vld1q_s8(y)), sc[0]);
    return scaled(acc, prod16(q[1], vld1q_s8(y + 16)), sc[1]);
}
static inline LM_ALWAYS_INLINE int32x4_t mac_un_neon(int32x4_t acc, const int8x16_t * q, const int8_t * y, const int * sc) {
    (void) sc;
    return vpadalq_s16(acc, prod32(q, y));
}

static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t mac_sh_dot(int32x4_t acc, const int8x16_t * q, const int8_t * y, const int * sc) {
    const int32x4_t d = vdotq_s32(vdotq_s32(vdupq_n_s32(0), q[0], vld1q_s8(y)), q[1], vld1q_s8(y + 16));
    return vmlaq_n_s32(acc, d, sc[0]);
}
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t mac_sp_dot(int32x4_t acc, const int8x16_t * q, const int8_t * y, const int * sc) {
    acc = vmlaq_n_s32(acc, vdotq_s32(vdupq_n_s32(0), q[0], vld1q_s8(y)), sc[0]);
    return vmlaq_n_s32(acc, vdotq_s32(vdupq_n_s32(0), q[1], vld1q_s8(y + 16)), sc[1]);
}
static inline LM_ALWAYS_INLINE LM_TARGET_DOTPROD int32x4_t mac_un_dot(int32x4_t acc, const int8x16_t * q, const int8_t * y, const int * sc) {
    (void) sc;
    return vdotq_s32(vdotq_s32(acc, q[0], vld1q_s8(y)), q[1], vld1q_s8(y + 16));
}

// ---------------------------------------------------------------- per-row kernels
//
// sum_T_LVL: the block's sumi, decoded step by step in registers.
// vd_T_LVL: mm-iquant.h's float steps, written as iq_dot writes them.

#define IQ_SUM(T, KIND, LVL, ATTR)                                                                     \
static inline LM_ALWAYS_INLINE ATTR int32_t sum_##T##_##LVL(const block_##T * x, const int8_t * y) {  \
    int32x4_t acc = vdupq_n_s32(0);                                                                    \
    _Pragma("GCC unroll 8")                                                                            \
    for (int ib = 0; ib < QK_K / 32; ib++) {                                                           \
        int8x16_t q[2];                                                                                \
        int sc[2];                                                                                     \
        dec_##T(x, ib, q, sc);                                                                         \
        acc = mac_##KIND##_##LVL(acc, q, y + 32 * ib, sc);                                             \
    }                                                                                                  \
    return vaddvq_s32(acc);                                                                            \
}

#define IQ_VD(T, LVL, ATTR, FACTOR)                                                                    \
static ATTR void vd_##T##_##LVL(VD_ARGS) {                                                            \
    VD_UNUSED;                                                                                         \
    const block_##T * x = vx;                                                                          \
    const block_q8_K * y = vy;                                                                         \
    float sumf = 0.0f;                                                                                 \
    for (int i = 0; i < n / QK_K; i++) {                                                               \
        const int32_t sumi = sum_##T##_##LVL(&x[i], y[i].qs);                                          \
        sumf += (d_##T(&x[i]) * y[i].d) * (float) sumi;                                                \
    }                                                                                                  \
    *s = (FACTOR) * sumf;                                                                              \
}

// the GEMM's decoder: a whole block into mm_iq_block form
#define IQ_DECB(T)                                                                                     \
static void decb_##T(const void * vx, mm_iq_block * b) {                                              \
    const block_##T * x = vx;                                                                          \
    _Pragma("GCC unroll 8")                                                                            \
    for (int ib = 0; ib < QK_K / 32; ib++) {                                                           \
        int8x16_t q[2];                                                                                \
        int sc[2];                                                                                     \
        dec_##T(x, ib, q, sc);                                                                         \
        vst1q_s8(b->q + 32 * ib, q[0]);                                                                \
        vst1q_s8(b->q + 32 * ib + 16, q[1]);                                                           \
        b->sc[2 * ib] = (int16_t) sc[0];                                                               \
        b->sc[2 * ib + 1] = (int16_t) sc[1];                                                           \
    }                                                                                                  \
    b->d = d_##T(x);                                                                                   \
}

// ---------------------------------------------------------------- GEMM
//
// Rows in tiles of QG_RT, blocks in chunks of QG_CB: a tile's chunk is
// decoded once into the scratch, then every column runs over it, its
// activation chunk staying in cache across the tile's rows. Row t keeps
// one float per column, to which the chunks add their blocks in order.

#define QG_RT 4
#define QG_CB 8
_Static_assert(QG_RT * QG_CB * sizeof(mm_iq_block) <= MM_QGEMM_SCRATCH, "the decoded chunk fits the scratch");

typedef void (*qg_cols_fn)(const mm_iq_block * b, int nr, int nbk, const void * const * ycol, int64_t i0, int ncol,
                           float (*sumf)[MM_QGEMM_MAX_COLS]);

#define IQ_QG_COLS(KIND, LVL, ATTR)                                                                    \
static ATTR void cols_##KIND##_##LVL(const mm_iq_block * b, int nr, int nbk, const void * const * ycol, \
                                    int64_t i0, int ncol, float (*sumf)[MM_QGEMM_MAX_COLS]) {        \
    for (int c = 0; c < ncol; c++) {                                                                   \
        const block_q8_K * y = (const block_q8_K *) ycol[c] + i0;                                      \
        for (int t = 0; t < nr; t++) {                                                                 \
            float s = sumf[t][c];                                                                      \
            for (int k = 0; k < nbk; k++) {                                                            \
                const mm_iq_block * bb = &b[t * QG_CB + k];                                            \
                int32x4_t acc = vdupq_n_s32(0);                                                        \
                _Pragma("GCC unroll 8")                                                                \
                for (int ib = 0; ib < QK_K / 32; ib++) {                                               \
                    const int8x16_t q[2] = { vld1q_s8(bb->q + 32 * ib), vld1q_s8(bb->q + 32 * ib + 16) }; \
                    const int sc[2] = { bb->sc[2 * ib], bb->sc[2 * ib + 1] };                          \
                    acc = mac_##KIND##_##LVL(acc, q, y[k].qs + 32 * ib, sc);                           \
                }                                                                                      \
                s += (bb->d * y[k].d) * (float) vaddvq_s32(acc);                                       \
            }                                                                                          \
            sumf[t][c] = s;                                                                            \
        }                                                                                              \
    }                                                                                                  \
}
IQ_QG_COLS(sh, neon, )
IQ_QG_COLS(sp, neon, )
IQ_QG_COLS(un, neon, )
IQ_QG_COLS(sh, dot, LM_TARGET_DOTPROD)
IQ_QG_COLS(sp, dot, LM_TARGET_DOTPROD)
IQ_QG_COLS(un, dot, LM_TARGET_DOTPROD)

static void qg_run(mm_iq_decode_fn dec, qg_cols_fn cols, size_t ts, float factor, int64_t K, const char * x, size_t xrs,
                   int64_t r0, int64_t r1, const void * const * ycol, float * const * dcol, int ncol, void * scratch) {
    mm_iq_block * b = scratch;
    const int64_t nb = K / QK_K;
    float sumf[QG_RT][MM_QGEMM_MAX_COLS];
    for (int64_t r = r0; r < r1; r += QG_RT) {
        const int nr = (int) LM_GGML_MIN(QG_RT, r1 - r);
        for (int t = 0; t < nr; t++) for (int c = 0; c < ncol; c++) sumf[t][c] = 0.0f;
        for (int64_t i0 = 0; i0 < nb; i0 += QG_CB) {
            const int nbk = (int) LM_GGML_MIN(QG_CB, nb - i0);
            for (int t = 0; t < nr; t++)
                for (int k = 0; k < nbk; k++) dec(x + (r + t) * xrs + (size_t) (i0 + k) * ts, &b[t * QG_CB + k]);
            cols(b, nr, nbk, ycol, i0, ncol, sumf);
        }
        for (int c = 0; c < ncol; c++)
            for (int t = 0; t < nr; t++) dcol[c][r + t] = factor * sumf[t][c];
    }
}

#define IQ_QG(T, KIND, LVL, FACTOR)                                                                    \
static void qg_##T##_##LVL(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1,             \
                           const void * const * ycol, float * const * dcol, int ncol, void * scratch) { \
    qg_run(decb_##T, cols_##KIND##_##LVL, sizeof(block_##T), FACTOR, K, x, xrs, r0, r1, ycol, dcol, ncol, scratch); \
}

// ---------------------------------------------------------------- the types

#define IQ_TYPE(T, KIND, FACTOR)                  \
    IQ_SUM(T, KIND, neon, )                       \
    IQ_SUM(T, KIND, dot, LM_TARGET_DOTPROD)       \
    IQ_VD(T, neon, , FACTOR)                      \
    IQ_VD(T, dot, LM_TARGET_DOTPROD, FACTOR)      \
    IQ_DECB(T)                                    \
    IQ_QG(T, KIND, neon, FACTOR)                  \
    IQ_QG(T, KIND, dot, FACTOR)

// the factors of mm_iq_traits
IQ_TYPE(iq2_xxs, sh, 0.125f)
IQ_TYPE(iq2_xs,  sp, 0.125f)
IQ_TYPE(iq2_s,   sp, 0.125f)
IQ_TYPE(iq3_xxs, sh, 0.25f)
IQ_TYPE(iq3_s,   sh, 1.0f)
IQ_TYPE(iq1_s,   sh, 0.125f)
IQ_TYPE(iq1_m,   sp, 0.125f)
IQ_TYPE(tq1_0,   un, 1.0f)
IQ_TYPE(tq2_0,   un, 1.0f)

#define IQ_CASES(X)                                                                                    \
    X(IQ2_XXS, iq2_xxs) X(IQ2_XS, iq2_xs) X(IQ2_S, iq2_s) X(IQ3_XXS, iq3_xxs) X(IQ3_S, iq3_s)          \
    X(IQ1_S, iq1_s) X(IQ1_M, iq1_m) X(TQ1_0, tq1_0) X(TQ2_0, tq2_0)

lm_ggml_vec_dot_t mm_iq_dot_neon(enum lm_ggml_type type, bool dotprod) {
    switch (type) {
#define VD_CASE(U, T) case LM_GGML_TYPE_##U: return dotprod ? vd_##T##_dot : vd_##T##_neon;
        IQ_CASES(VD_CASE)
#undef VD_CASE
        default: return NULL;
    }
}

mm_qgemm_fn mm_iq_qgemm_neon(enum lm_ggml_type type, bool dotprod) {
    switch (type) {
#define QG_CASE(U, T) case LM_GGML_TYPE_##U: return dotprod ? qg_##T##_dot : qg_##T##_neon;
        IQ_CASES(QG_CASE)
#undef QG_CASE
        default: return NULL;
    }
}
#else
typedef int mm_iquant_neon_unused; // ISO C forbids an empty translation unit
#endif
