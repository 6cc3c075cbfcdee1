// mm-iquant.c - the scalar decoders of the i-quants and the ternary types
// into the integer form of mm-iquant.h, and the scalar dot against q8_K
// over that form. The decoders follow the dequantizers of ggml-iquants.c
// and ggml-quants.c (the file format); test-matmul checks the dots against
// them.
#include "fp-nocontract.h"
#include "mm-kernels.h"
#include "mm-iquant.h"
#include "../quant/ggml-iquants.h"

#include <string.h>

#define H2F(x) LM_GGML_FP16_TO_FP32(x)

// 8 quants from a grid entry of 8 unsigned magnitudes and 8 sign bits.
static inline void put8(int8_t * q, uint64_t g, unsigned signs) {
    for (int j = 0; j < 8; j++) {
        const int m = (uint8_t)(g >> 8 * j);
        q[j] = (int8_t)((signs >> j) & 1 ? -m : m);
    }
}

// 4 quants from a grid entry of 4 magnitudes; their sign bits start at bit s0.
static inline void put4(int8_t * q, uint32_t g, unsigned signs, int s0) {
    for (int j = 0; j < 4; j++) {
        const int m = (uint8_t)(g >> 8 * j);
        q[j] = (int8_t)((signs >> (s0 + j)) & 1 ? -m : m);
    }
}

// iq1: 8 grid values in {-1, 0, 1} in eighths, with the group's offset of +-1/8.
static inline void put8_iq1(int8_t * q, uint64_t g, int delta) {
    for (int j = 0; j < 8; j++) q[j] = (int8_t)(8 * (int8_t)(uint8_t)(g >> 8 * j) + delta);
}

static inline void set_sc2(int16_t * sc, int v) { sc[0] = sc[1] = (int16_t) v; }

static void dec_iq2_xxs(const void * vx, mm_iq_block * b) {
    const block_iq2_xxs * x = vx;
    b->d = H2F(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        uint32_t w[2]; // 4 grid indices; 4 x 7 sign bits and the scale
        memcpy(w, x->qs + 4 * ib, sizeof(w));
        set_sc2(b->sc + 2 * ib, 2 * (int)(w[1] >> 28) + 1);
        for (int l = 0; l < 4; l++)
            put8(b->q + 32 * ib + 8 * l, lm_iq2xxs_grid[(w[0] >> 8 * l) & 255], lm_ksigns_iq2xs[(w[1] >> 7 * l) & 127]);
    }
}

static void dec_iq2_xs(const void * vx, mm_iq_block * b) {
    const block_iq2_xs * x = vx;
    b->d = H2F(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        b->sc[2 * ib + 0] = (int16_t)(2 * (x->scales[ib] & 0xF) + 1);
        b->sc[2 * ib + 1] = (int16_t)(2 * (x->scales[ib] >> 4) + 1);
        for (int l = 0; l < 4; l++) {
            const uint16_t v = x->qs[4 * ib + l];
            put8(b->q + 32 * ib + 8 * l, lm_iq2xs_grid[v & 511], lm_ksigns_iq2xs[v >> 9]);
        }
    }
}

static void dec_iq2_s(const void * vx, mm_iq_block * b) {
    const block_iq2_s * x = vx;
    const uint8_t * signs = x->qs + QK_K / 8;
    b->d = H2F(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        b->sc[2 * ib + 0] = (int16_t)(2 * (x->scales[ib] & 0xF) + 1);
        b->sc[2 * ib + 1] = (int16_t)(2 * (x->scales[ib] >> 4) + 1);
        for (int l = 0; l < 4; l++) {
            const int idx = x->qs[4 * ib + l] | (((x->qh[ib] >> 2 * l) & 3) << 8);
            put8(b->q + 32 * ib + 8 * l, lm_iq2s_grid[idx], signs[4 * ib + l]);
        }
    }
}

static void dec_iq3_xxs(const void * vx, mm_iq_block * b) {
    const block_iq3_xxs * x = vx;
    b->d = H2F(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        uint32_t w; // 4 x 7 sign bits and the scale
        memcpy(&w, x->qs + QK_K / 4 + 4 * ib, sizeof(w));
        set_sc2(b->sc + 2 * ib, 2 * (int)(w >> 28) + 1);
        for (int l = 0; l < 4; l++) {
            const unsigned s = lm_ksigns_iq2xs[(w >> 7 * l) & 127];
            int8_t * q = b->q + 32 * ib + 8 * l;
            put4(q + 0, lm_iq3xxs_grid[x->qs[8 * ib + 2 * l + 0]], s, 0);
            put4(q + 4, lm_iq3xxs_grid[x->qs[8 * ib + 2 * l + 1]], s, 4);
        }
    }
}

static void dec_iq3_s(const void * vx, mm_iq_block * b) {
    const block_iq3_s * x = vx;
    b->d = H2F(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        set_sc2(b->sc + 2 * ib, 1 + 2 * ((x->scales[ib / 2] >> 4 * (ib % 2)) & 0xF));
        const uint8_t * qs = x->qs + 8 * ib, * sg = x->signs + 4 * ib;
        const unsigned qh = x->qh[ib];
        for (int l = 0; l < 4; l++) {
            int8_t * q = b->q + 32 * ib + 8 * l;
            put4(q + 0, lm_iq3s_grid[qs[2 * l + 0] | (((qh >> (2 * l + 0)) & 1) << 8)], sg[l], 0);
            put4(q + 4, lm_iq3s_grid[qs[2 * l + 1] | (((qh >> (2 * l + 1)) & 1) << 8)], sg[l], 4);
        }
    }
}

static void dec_iq1_s(const void * vx, mm_iq_block * b) {
    const block_iq1_s * x = vx;
    b->d = H2F(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const unsigned qh = x->qh[ib];
        set_sc2(b->sc + 2 * ib, 2 * (int)((qh >> 12) & 7) + 1);
        const int delta = qh & 0x8000 ? -1 : 1;
        for (int l = 0; l < 4; l++)
            put8_iq1(b->q + 32 * ib + 8 * l, lm_iq1s_grid[x->qs[4 * ib + l] | (((qh >> 3 * l) & 7) << 8)], delta);
    }
}

static void dec_iq1_m(const void * vx, mm_iq_block * b) {
    const block_iq1_m * x = vx;
    uint16_t w[4];
    for (int i = 0; i < 4; i++) w[i] = (uint16_t)(x->scales[2 * i] | x->scales[2 * i + 1] << 8);
    // the fp16 scale is spread over the top nibbles of the four words
    b->d = H2F((lm_ggml_fp16_t)((w[0] >> 12) | ((w[1] >> 8) & 0x00F0) | ((w[2] >> 4) & 0x0F00) | (w[3] & 0xF000)));
    for (int ib = 0; ib < QK_K / 32; ib++) {
        b->sc[2 * ib + 0] = (int16_t)(2 * ((w[ib / 2] >> (6 * (ib % 2) + 0)) & 7) + 1);
        b->sc[2 * ib + 1] = (int16_t)(2 * ((w[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1);
        for (int l = 0; l < 4; l++) {
            const unsigned h = x->qh[2 * ib + l / 2] >> 4 * (l % 2); // 3 index bits, then the offset's sign
            put8_iq1(b->q + 32 * ib + 8 * l, lm_iq1s_grid[x->qs[4 * ib + l] | ((h & 7) << 8)], h & 8 ? -1 : 1);
        }
    }
}

// tq1_0: five trits per byte in base 3, read as the top trit of byte * 3^n.
static inline int8_t trit(uint8_t v, int n) {
    static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
    return (int8_t)((((uint16_t)(uint8_t)(v * pow3[n])) * 3 >> 8) - 1);
}

static void dec_tq1_0(const void * vx, mm_iq_block * b) {
    const block_tq1_0 * x = vx;
    int8_t * q = b->q;
    b->d = H2F(x->d);
    for (int n = 0; n < 5; n++) for (int m = 0; m < 32; m++) *q++ = trit(x->qs[m], n);
    for (int n = 0; n < 5; n++) for (int m = 0; m < 16; m++) *q++ = trit(x->qs[32 + m], n);
    for (int n = 0; n < 4; n++) for (int m = 0; m < 4; m++)  *q++ = trit(x->qh[m], n);
    for (int g = 0; g < MM_IQ_GROUPS; g++) b->sc[g] = 1;
}

static void dec_tq2_0(const void * vx, mm_iq_block * b) {
    const block_tq2_0 * x = vx;
    b->d = H2F(x->d);
    for (int j = 0; j < QK_K / 4; j += 32)
        for (int l = 0; l < 4; l++)
            for (int m = 0; m < 32; m++) b->q[4 * j + 32 * l + m] = (int8_t)(((x->qs[j + m] >> 2 * l) & 3) - 1);
    for (int g = 0; g < MM_IQ_GROUPS; g++) b->sc[g] = 1;
}

const struct mm_iq_traits * mm_iq_traits(enum lm_ggml_type type) {
    static const struct mm_iq_traits t[] = {
        [LM_GGML_TYPE_IQ2_XXS] = { 0.125f, dec_iq2_xxs },
        [LM_GGML_TYPE_IQ2_XS]  = { 0.125f, dec_iq2_xs },
        [LM_GGML_TYPE_IQ2_S]   = { 0.125f, dec_iq2_s },
        [LM_GGML_TYPE_IQ3_XXS] = { 0.25f,  dec_iq3_xxs },
        [LM_GGML_TYPE_IQ3_S]   = { 1.0f,   dec_iq3_s },
        [LM_GGML_TYPE_IQ1_S]   = { 0.125f, dec_iq1_s },
        [LM_GGML_TYPE_IQ1_M]   = { 0.125f, dec_iq1_m },
        [LM_GGML_TYPE_TQ1_0]   = { 1.0f,   dec_tq1_0 },
        [LM_GGML_TYPE_TQ2_0]   = { 1.0f,   dec_tq2_0 },
    };
    if ((unsigned) type >= sizeof(t) / sizeof(t[0]) || t[type].decode == NULL) return NULL;
    return &t[type];
}

static void iq_dot(enum lm_ggml_type type, int n, float * s, const void * vx, const void * vy) {
    const struct mm_iq_traits * tr = mm_iq_traits(type);
    const size_t ts = lm_ggml_type_size(type);
    const block_q8_K * y = vy;
    mm_iq_block b;
    float sumf = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        tr->decode((const char *) vx + i * ts, &b);
        int32_t sumi = 0;
        for (int g = 0; g < MM_IQ_GROUPS; g++) {
            int32_t sg = 0;
            for (int k = 0; k < 16; k++) sg += b.q[16 * g + k] * y[i].qs[16 * g + k];
            sumi += b.sc[g] * sg;
        }
        sumf += (b.d * y[i].d) * (float) sumi;
    }
    *s = tr->factor * sumf;
}

#define VD_ARGS int n, float * restrict s, size_t bs, const void * restrict vx, size_t bx, const void * restrict vy, size_t by, int nrc
#define IQ_DOT(name, T) \
static void vd_##name##_q8_K(VD_ARGS) { (void) bs; (void) bx; (void) by; (void) nrc; iq_dot(LM_GGML_TYPE_##T, n, s, vx, vy); }
IQ_DOT(iq2_xxs, IQ2_XXS)
IQ_DOT(iq2_xs,  IQ2_XS)
IQ_DOT(iq2_s,   IQ2_S)
IQ_DOT(iq3_xxs, IQ3_XXS)
IQ_DOT(iq3_s,   IQ3_S)
IQ_DOT(iq1_s,   IQ1_S)
IQ_DOT(iq1_m,   IQ1_M)
IQ_DOT(tq1_0,   TQ1_0)
IQ_DOT(tq2_0,   TQ2_0)

lm_ggml_vec_dot_t mm_iq_dot_scalar(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS: return vd_iq2_xxs_q8_K;
        case LM_GGML_TYPE_IQ2_XS:  return vd_iq2_xs_q8_K;
        case LM_GGML_TYPE_IQ2_S:   return vd_iq2_s_q8_K;
        case LM_GGML_TYPE_IQ3_XXS: return vd_iq3_xxs_q8_K;
        case LM_GGML_TYPE_IQ3_S:   return vd_iq3_s_q8_K;
        case LM_GGML_TYPE_IQ1_S:   return vd_iq1_s_q8_K;
        case LM_GGML_TYPE_IQ1_M:   return vd_iq1_m_q8_K;
        case LM_GGML_TYPE_TQ1_0:   return vd_tq1_0_q8_K;
        case LM_GGML_TYPE_TQ2_0:   return vd_tq2_0_q8_K;
        default: return NULL;
    }
}
