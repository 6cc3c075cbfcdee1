// mm-quant.c - the quantized side of mul_mat: quantizers of the activation
// formats (q8_0, q8_1, q8_K), scalar integer dot products of weight blocks
// against them, and the choice of kernel per SIMD level (the SIMD kernels
// are in mm-quant-x86.c and mm-quant-neon.c). Block layouts are those of
// ggml-common.h (the file format).
#include "mm-kernels.h"
#include "mm-iquant.h"
#include "../quant/ggml-common.h"
#include "../quant/ggml-quants.h"

#define H2F(x) LM_GGML_FP16_TO_FP32(x)
#define F2H(x) LM_GGML_FP32_TO_FP16(x)

// ---------------------------------------------------------------- activation quantizers

// The CPU quantizers of the activation formats (ggml-quants.c): the same
// bits as ggml's, so the integer dots see the operands ggml's do.
lm_ggml_from_float_t mm_act_quantizer(enum lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q8_0: return lm_quantize_row_q8_0;
        case LM_GGML_TYPE_Q8_1: return lm_quantize_row_q8_1;
        case LM_GGML_TYPE_Q8_K: return lm_quantize_row_q8_K;
        default: return NULL;
    }
}

// ---------------------------------------------------------------- scalar dots

#define VD_ARGS int n, float * restrict s, size_t bs, const void * restrict vx, size_t bx, const void * restrict vy, size_t by, int nrc
#define VD_UNUSED (void) bs; (void) bx; (void) by; (void) nrc

static void vd_q4_0_q8_0(VD_ARGS) {
    VD_UNUSED;
    const block_q4_0 * x = vx; const block_q8_0 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK4_0; i++) {
        int acc = 0;
        for (int j = 0; j < QK4_0 / 2; j++) {
            acc += ((x[i].qs[j] & 0xF) - 8) * y[i].qs[j] + ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + 16];
        }
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d);
    }
    *s = sum;
}

static void vd_q4_1_q8_1(VD_ARGS) {
    VD_UNUSED;
    const block_q4_1 * x = vx; const block_q8_1 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK4_1; i++) {
        int acc = 0;
        for (int j = 0; j < QK4_1 / 2; j++) {
            acc += (x[i].qs[j] & 0xF) * y[i].qs[j] + (x[i].qs[j] >> 4) * y[i].qs[j + 16];
        }
        // x = d*q + m, and y's s holds d_y * sum(q_y)
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d) + H2F(x[i].m) * H2F(y[i].s);
    }
    *s = sum;
}

static inline uint32_t qh_bits(const uint8_t * qh) {
    return (uint32_t) qh[0] | (uint32_t) qh[1] << 8 | (uint32_t) qh[2] << 16 | (uint32_t) qh[3] << 24;
}

static void vd_q5_0_q8_0(VD_ARGS) {
    VD_UNUSED;
    const block_q5_0 * x = vx; const block_q8_0 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK5_0; i++) {
        const uint32_t qh = qh_bits(x[i].qh);
        int acc = 0;
        for (int j = 0; j < QK5_0 / 2; j++) {
            const int v0 = ((x[i].qs[j] & 0xF) | ((qh >> j) & 1) << 4) - 16;
            const int v1 = ((x[i].qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4) - 16;
            acc += v0 * y[i].qs[j] + v1 * y[i].qs[j + 16];
        }
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d);
    }
    *s = sum;
}

static void vd_q5_1_q8_1(VD_ARGS) {
    VD_UNUSED;
    const block_q5_1 * x = vx; const block_q8_1 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK5_1; i++) {
        const uint32_t qh = qh_bits(x[i].qh);
        int acc = 0;
        for (int j = 0; j < QK5_1 / 2; j++) {
            const int v0 = (x[i].qs[j] & 0xF) | ((qh >> j) & 1) << 4;
            const int v1 = (x[i].qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4;
            acc += v0 * y[i].qs[j] + v1 * y[i].qs[j + 16];
        }
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d) + H2F(x[i].m) * H2F(y[i].s);
    }
    *s = sum;
}

static void vd_q8_0_q8_0(VD_ARGS) {
    VD_UNUSED;
    const block_q8_0 * x = vx; const block_q8_0 * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK8_0; i++) {
        int acc = 0;
        for (int j = 0; j < QK8_0; j++) acc += x[i].qs[j] * y[i].qs[j];
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d);
    }
    *s = sum;
}

// q4_K: 8 sub-blocks of 32 with 6-bit scale and min packed in 12 bytes.
static inline void q4k_scales(const uint8_t * q, uint8_t * sc, uint8_t * mn) {
    for (int j = 0; j < 4; j++) {
        sc[j] = q[j] & 63;
        mn[j] = q[j + 4] & 63;
    }
    for (int j = 4; j < 8; j++) {
        sc[j] = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        mn[j] = (q[j + 4] >> 4)  | ((q[j] >> 6) << 4);
    }
}

static inline int q4k_min_term(const uint8_t * mn, const int16_t * bsums) {
    int m = 0;
    for (int j = 0; j < 8; j++) m += mn[j] * (bsums[2 * j] + bsums[2 * j + 1]);
    return m;
}

static void vd_q4_K_q8_K(VD_ARGS) {
    VD_UNUSED;
    const block_q4_K * x = vx; const block_q8_K * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], mn[8];
        q4k_scales(x[i].scales, sc, mn);
        int acc = 0;
        for (int j = 0; j < 4; j++) {
            const uint8_t * q = x[i].qs + 32 * j;
            const int8_t  * a = y[i].qs + 64 * j;
            int s0 = 0, s1 = 0;
            for (int l = 0; l < 32; l++) { s0 += (q[l] & 0xF) * a[l]; s1 += (q[l] >> 4) * a[l + 32]; }
            acc += sc[2 * j] * s0 + sc[2 * j + 1] * s1;
        }
        sum += y[i].d * (H2F(x[i].d) * (float) acc - H2F(x[i].dmin) * (float) q4k_min_term(mn, y[i].bsums));
    }
    *s = sum;
}

// q6_K: per half of 128, element l of each 32-quarter takes 4 bits of ql and 2 of qh.
static void vd_q6_K_q8_K(VD_ARGS) {
    VD_UNUSED;
    const block_q6_K * x = vx; const block_q8_K * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        const uint8_t * ql = x[i].ql, * qh = x[i].qh;
        const int8_t * sc = x[i].scales, * a = y[i].qs;
        int acc = 0;
        for (int h = 0; h < 2; h++) {
            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                const int q1 = ((ql[l]      & 0xF) | ((qh[l]        & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l]      >> 4)  | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4)  | (((qh[l] >> 6) & 3) << 4)) - 32;
                acc += sc[is] * q1 * a[l] + sc[is + 2] * q2 * a[l + 32] + sc[is + 4] * q3 * a[l + 64] + sc[is + 6] * q4 * a[l + 96];
            }
            ql += 64; qh += 32; sc += 8; a += 128;
        }
        sum += H2F(x[i].d) * y[i].d * (float) acc;
    }
    *s = sum;
}

// q5_K: q4_K's layout plus a fifth bit per quant in qh (bit 2j / 2j+1 of
// qh[l] for the low / high nibbles of the j-th 32 bytes of qs).
static void vd_q5_K_q8_K(VD_ARGS) {
    VD_UNUSED;
    const block_q5_K * x = vx; const block_q8_K * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        uint8_t sc[8], mn[8];
        q4k_scales(x[i].scales, sc, mn);
        const uint8_t * qh = x[i].qh;
        int acc = 0;
        for (int j = 0; j < 4; j++) {
            const uint8_t * q = x[i].qs + 32 * j;
            const int8_t  * a = y[i].qs + 64 * j;
            int s0 = 0, s1 = 0;
            for (int l = 0; l < 32; l++) {
                s0 += ((q[l] & 0xF) | ((qh[l] >> (2 * j)) & 1) << 4) * a[l];
                s1 += ((q[l] >> 4)  | ((qh[l] >> (2 * j + 1)) & 1) << 4) * a[l + 32];
            }
            acc += sc[2 * j] * s0 + sc[2 * j + 1] * s1;
        }
        sum += y[i].d * (H2F(x[i].d) * (float) acc - H2F(x[i].dmin) * (float) q4k_min_term(mn, y[i].bsums));
    }
    *s = sum;
}

// q3_K: 16 signed 6-bit scales, low 4 bits in bytes 0-7 (two per byte), high
// 2 bits in bytes 8-11 (four per byte).
static inline void q3k_scales(const uint8_t * s, int * sc) {
    for (int j = 0; j < 16; j++) {
        const int lo = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
        sc[j] = (lo | ((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) - 32;
    }
}

// q3_K and q2_K share the walk: half h of 128 takes qs[32h..32h+31], and its
// k-th quarter the bits 2k..2k+1 of those bytes; sub-block 8h+2k+part covers
// the part-th 16 bytes. q3_K adds bit 4h+k of hmask[l] (clear means -4).
static void vd_q3_K_q8_K(VD_ARGS) {
    VD_UNUSED;
    const block_q3_K * x = vx; const block_q8_K * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        int sc[16];
        q3k_scales(x[i].scales, sc);
        int acc = 0;
        for (int h = 0; h < 2; h++) {
            const uint8_t * q = x[i].qs + 32 * h;
            for (int k = 0; k < 4; k++) {
                const int8_t * a = y[i].qs + 128 * h + 32 * k;
                const int hbit = 4 * h + k;
                for (int part = 0; part < 2; part++) {
                    int sp = 0;
                    for (int l = 16 * part; l < 16 * part + 16; l++) {
                        const int v = ((q[l] >> (2 * k)) & 3) - (((x[i].hmask[l] >> hbit) & 1) ? 0 : 4);
                        sp += v * a[l];
                    }
                    acc += sc[8 * h + 2 * k + part] * sp;
                }
            }
        }
        sum += H2F(x[i].d) * y[i].d * (float) acc;
    }
    *s = sum;
}

// q2_K: scale (low nibble) and min (high nibble) per sub-block of 16;
// the mins meet the activations through their block sums.
static void vd_q2_K_q8_K(VD_ARGS) {
    VD_UNUSED;
    const block_q2_K * x = vx; const block_q8_K * y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        int acc = 0, mins = 0;
        for (int h = 0; h < 2; h++) {
            const uint8_t * q = x[i].qs + 32 * h;
            for (int k = 0; k < 4; k++) {
                const int8_t * a = y[i].qs + 128 * h + 32 * k;
                for (int part = 0; part < 2; part++) {
                    int sp = 0;
                    for (int l = 16 * part; l < 16 * part + 16; l++) sp += ((q[l] >> (2 * k)) & 3) * a[l];
                    acc += (x[i].scales[8 * h + 2 * k + part] & 0xF) * sp;
                }
            }
        }
        for (int j = 0; j < QK_K / 16; j++) mins += (x[i].scales[j] >> 4) * y[i].bsums[j];
        sum += y[i].d * (H2F(x[i].d) * (float) acc - H2F(x[i].dmin) * (float) mins);
    }
    *s = sum;
}

static void vd_iq4_nl_q8_0(VD_ARGS) {
    VD_UNUSED;
    const block_iq4_nl * x = vx; const block_q8_0 * y = vy;
    const int8_t * kv = lm_kvalues_iq4nl;
    float sum = 0.0f;
    for (int i = 0; i < n / QK4_NL; i++) {
        int acc = 0;
        for (int j = 0; j < QK4_NL / 2; j++) acc += kv[x[i].qs[j] & 0xF] * y[i].qs[j] + kv[x[i].qs[j] >> 4] * y[i].qs[j + 16];
        sum += (float) acc * H2F(x[i].d) * H2F(y[i].d);
    }
    *s = sum;
}

// iq4_xs: 8 sub-blocks of 32 with 6-bit scales (stored +32): low 4 bits in
// scales_l (two per byte), high 2 bits in scales_h.
static inline int iq4xs_scale(const block_iq4_xs * b, int ib) {
    return (((b->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | ((b->scales_h >> (2 * ib)) & 3) << 4) - 32;
}

static void vd_iq4_xs_q8_K(VD_ARGS) {
    VD_UNUSED;
    const block_iq4_xs * x = vx; const block_q8_K * y = vy;
    const int8_t * kv = lm_kvalues_iq4nl;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        int acc = 0;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const uint8_t * q = x[i].qs + 16 * ib;
            const int8_t  * a = y[i].qs + 32 * ib;
            int sp = 0;
            for (int j = 0; j < 16; j++) sp += kv[q[j] & 0xF] * a[j] + kv[q[j] >> 4] * a[j + 16];
            acc += iq4xs_scale(&x[i], ib) * sp;
        }
        sum += H2F(x[i].d) * y[i].d * (float) acc;
    }
    *s = sum;
}

// ---------------------------------------------------------------- level dispatch

static lm_ggml_vec_dot_t scalar_dot_kernel(enum lm_ggml_type type, enum lm_ggml_type * vdt) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0:   *vdt = LM_GGML_TYPE_Q8_0; return vd_q4_0_q8_0;
        case LM_GGML_TYPE_Q4_1:   *vdt = LM_GGML_TYPE_Q8_1; return vd_q4_1_q8_1;
        case LM_GGML_TYPE_Q5_0:   *vdt = LM_GGML_TYPE_Q8_0; return vd_q5_0_q8_0;
        case LM_GGML_TYPE_Q5_1:   *vdt = LM_GGML_TYPE_Q8_1; return vd_q5_1_q8_1;
        case LM_GGML_TYPE_Q8_0:   *vdt = LM_GGML_TYPE_Q8_0; return vd_q8_0_q8_0;
        case LM_GGML_TYPE_Q2_K:   *vdt = LM_GGML_TYPE_Q8_K; return vd_q2_K_q8_K;
        case LM_GGML_TYPE_Q3_K:   *vdt = LM_GGML_TYPE_Q8_K; return vd_q3_K_q8_K;
        case LM_GGML_TYPE_Q4_K:   *vdt = LM_GGML_TYPE_Q8_K; return vd_q4_K_q8_K;
        case LM_GGML_TYPE_Q5_K:   *vdt = LM_GGML_TYPE_Q8_K; return vd_q5_K_q8_K;
        case LM_GGML_TYPE_Q6_K:   *vdt = LM_GGML_TYPE_Q8_K; return vd_q6_K_q8_K;
        case LM_GGML_TYPE_IQ4_NL: *vdt = LM_GGML_TYPE_Q8_0; return vd_iq4_nl_q8_0;
        case LM_GGML_TYPE_IQ4_XS: *vdt = LM_GGML_TYPE_Q8_K; return vd_iq4_xs_q8_K;
        default: {
            const lm_ggml_vec_dot_t k = mm_iq_dot_scalar(type); // mm-iquant.c
            if (k != NULL) *vdt = LM_GGML_TYPE_Q8_K;
            return k;
        }
    }
}

// The SIMD kernel the current level allows for a weight type, or NULL.
static lm_ggml_vec_dot_t simd_dot_kernel(enum lm_ggml_type type) {
    const enum lm_cpu_level lv = lm_cpu_level();
    if (mm_iq_traits(type) != NULL) {
#if defined(LM_X86)
        const lm_ggml_vec_dot_t v = lv == LM_CPU_LEVEL_AVX512 && lm_cpu_vnni() ? mm_iq_dot_avx512(type) : NULL;
        if (v != NULL) return v;
        if (lv == LM_CPU_LEVEL_AVX512) return mm_iq_dot_avx2_evex(type);
        if (lv == LM_CPU_LEVEL_AVX2) return mm_iq_dot_avx2(type);
#elif defined(LM_ARM64)
        if (lm_cpu_level_is_neon(lv)) return mm_iq_dot_neon(type, lv == LM_CPU_LEVEL_NEON_DOTPROD);
#endif
        return NULL;
    }
#if defined(LM_X86)
    const lm_ggml_vec_dot_t v = lv == LM_CPU_LEVEL_AVX512 && lm_cpu_vnni() ? mm_quant_dot_vnni(type) : NULL;
    if (v != NULL) return v;
    if (lv == LM_CPU_LEVEL_AVX2 || lv == LM_CPU_LEVEL_AVX512) return mm_quant_dot_avx2(type);
#elif defined(LM_ARM64)
    const lm_ggml_vec_dot_t d = lv == LM_CPU_LEVEL_NEON_DOTPROD ? mm_quant_dot_neon_dotprod(type) : NULL;
    if (d != NULL) return d;
    if (lm_cpu_level_is_neon(lv)) return mm_quant_dot_neon(type);
#endif
    (void) lv;
    (void) type;
    return NULL;
}

mm_qgemm_fn mm_qgemm(enum lm_ggml_type type) {
#if defined(LM_X86)
    const enum lm_cpu_level lv = lm_cpu_level();
    if (mm_iq_traits(type) != NULL) {
        const mm_qgemm_fn g = lv == LM_CPU_LEVEL_AVX512 && lm_cpu_vnni() ? mm_iq_qgemm_avx512(type) : NULL;
        if (g != NULL) return g;
        if (lv == LM_CPU_LEVEL_AVX512) return mm_iq_qgemm_avx2_evex(type);
        return lv == LM_CPU_LEVEL_AVX2 ? mm_iq_qgemm_avx2(type) : NULL;
    }
    if (lv == LM_CPU_LEVEL_AVX512 && lm_cpu_vnni()) return mm_qgemm_vnni(type);
    if (lv == LM_CPU_LEVEL_AVX2 || lv == LM_CPU_LEVEL_AVX512) return mm_qgemm_avx2(type);
#elif defined(LM_ARM64)
    const enum lm_cpu_level lv = lm_cpu_level();
    if (mm_iq_traits(type) != NULL) return lm_cpu_level_is_neon(lv) ? mm_iq_qgemm_neon(type, lv == LM_CPU_LEVEL_NEON_DOTPROD) : NULL;
    if (lm_cpu_level_is_neon(lv)) return mm_qgemm_neon(type, lv == LM_CPU_LEVEL_NEON_DOTPROD);
#endif
    (void) type;
    return NULL;
}

mm_qgemm_fn mm_qgemm_repacked(enum lm_ggml_type type) {
#if defined(LM_X86)
    if (lm_cpu_vnni()) return mm_qgemm_repacked_vnni(type);
    const enum lm_cpu_level lv = lm_cpu_level();
    if (lv == LM_CPU_LEVEL_AVX2 || lv == LM_CPU_LEVEL_AVX512) return mm_qgemm_repacked_avx2(type);
#endif
    (void) type;
    return NULL;
}

lm_ggml_vec_dot_t mm_quant_dot(enum lm_ggml_type type, enum lm_ggml_type * vdt) {
    const lm_ggml_vec_dot_t k = scalar_dot_kernel(type, vdt);
    const lm_ggml_vec_dot_t v = k ? simd_dot_kernel(type) : NULL;
    return v ? v : k;
}

lm_ggml_vec_dot_t mm_quant_dot_mm(enum lm_ggml_type type, enum lm_ggml_type * vdt, lm_ggml_from_float_t * act) {
#if defined(LM_ARM64)
    // both from one reading of the level
    if (lm_cpu_level() == LM_CPU_LEVEL_NEON_DOTPROD && scalar_dot_kernel(type, vdt) != NULL) {
        const lm_ggml_vec_dot_t k = mm_quant_dot_neon_dotprod_pre(type);
        if (k != NULL) {
            *act = mm_act_quantizer_dotprod(*vdt);
            return k;
        }
    }
#endif
    const lm_ggml_vec_dot_t k = mm_quant_dot(type, vdt);
    *act = k != NULL ? mm_act_quantizer(*vdt) : NULL;
    return k;
}

// ---------------------------------------------------------------- type-traits vec_dot
//
// The traits table is built once, so its entries re-check the level per call.

#define LEVEL_DISPATCH(T) \
static void td_##T(VD_ARGS) { enum lm_ggml_type vdt; mm_quant_dot(LM_GGML_TYPE_##T, &vdt)(n, s, bs, vx, bx, vy, by, nrc); }
LEVEL_DISPATCH(Q4_0)
LEVEL_DISPATCH(Q4_1)
LEVEL_DISPATCH(Q5_0)
LEVEL_DISPATCH(Q5_1)
LEVEL_DISPATCH(Q8_0)
LEVEL_DISPATCH(Q2_K)
LEVEL_DISPATCH(Q3_K)
LEVEL_DISPATCH(Q4_K)
LEVEL_DISPATCH(Q5_K)
LEVEL_DISPATCH(Q6_K)
LEVEL_DISPATCH(IQ4_NL)
LEVEL_DISPATCH(IQ4_XS)

LEVEL_DISPATCH(IQ2_XXS)
LEVEL_DISPATCH(IQ2_XS)
LEVEL_DISPATCH(IQ2_S)
LEVEL_DISPATCH(IQ3_XXS)
LEVEL_DISPATCH(IQ3_S)
LEVEL_DISPATCH(IQ1_S)
LEVEL_DISPATCH(IQ1_M)
LEVEL_DISPATCH(TQ1_0)
LEVEL_DISPATCH(TQ2_0)

static const lm_ggml_vec_dot_t traits_dot[LM_GGML_TYPE_COUNT] = {
    [LM_GGML_TYPE_Q4_0]    = td_Q4_0,    [LM_GGML_TYPE_Q4_1]   = td_Q4_1,   [LM_GGML_TYPE_Q5_0]   = td_Q5_0,
    [LM_GGML_TYPE_Q5_1]    = td_Q5_1,    [LM_GGML_TYPE_Q8_0]   = td_Q8_0,   [LM_GGML_TYPE_Q2_K]   = td_Q2_K,
    [LM_GGML_TYPE_Q3_K]    = td_Q3_K,    [LM_GGML_TYPE_Q4_K]   = td_Q4_K,   [LM_GGML_TYPE_Q5_K]   = td_Q5_K,
    [LM_GGML_TYPE_Q6_K]    = td_Q6_K,    [LM_GGML_TYPE_IQ4_NL] = td_IQ4_NL, [LM_GGML_TYPE_IQ4_XS] = td_IQ4_XS,
    [LM_GGML_TYPE_IQ2_XXS] = td_IQ2_XXS, [LM_GGML_TYPE_IQ2_XS] = td_IQ2_XS, [LM_GGML_TYPE_IQ3_XXS] = td_IQ3_XXS,
    [LM_GGML_TYPE_IQ1_S]   = td_IQ1_S,   [LM_GGML_TYPE_IQ1_M]  = td_IQ1_M,  [LM_GGML_TYPE_IQ3_S]   = td_IQ3_S,
    [LM_GGML_TYPE_IQ2_S]   = td_IQ2_S,   [LM_GGML_TYPE_TQ1_0]  = td_TQ1_0,  [LM_GGML_TYPE_TQ2_0]   = td_TQ2_0,
};

lm_ggml_vec_dot_t mm_traits_vec_dot(enum lm_ggml_type type, enum lm_ggml_type * vdt) {
    if ((unsigned) type >= LM_GGML_TYPE_COUNT || traits_dot[type] == NULL) return NULL;
    (void) scalar_dot_kernel(type, vdt);
    return traits_dot[type];
}
