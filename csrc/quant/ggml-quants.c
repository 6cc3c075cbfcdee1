// ggml-quants.c - the legacy (q4_0..q8_1), K-quant (q2_K..q8_K) and ternary
// (tq1_0, tq2_0) block formats: reference quantizers, importance-weighted
// quantizers and dequantizers (the public quantize_chunk / validate API over
// every type is ggml-quants-api.c).
//
// The quantizers must reproduce ggml bit for bit, so the float arithmetic
// below keeps ggml's operation order (e.g. x * (1/d) rather than x / d
// where ggml multiplies, float accumulators summed
// in index order). Do not "simplify" an expression without re-running
// tests/c/test-quants.c.
// The parity data was produced without fused multiply-add contraction, and
// contracting a*b+c changes which levels the scale searches pick. Compilers
// contract by default where FMA is baseline (arm64) or enabled (-march), so
// turn it off for this file.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("O3", "fp-contract=off")
#endif

#include "ggml-quants.h"
#include "../base/ggml-simd.h"
#include "quantize-simd.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#define F16(x) LM_GGML_FP16_TO_FP32(x)
#define TO_F16(x) LM_GGML_FP32_TO_FP16(x)

// Groups whose largest magnitude is below this quantize to all zeros.
#define LM_GROUP_MAX_EPS 1e-15f

// Round to nearest (ties to even) for |v| < 2^22: adding 1.5*2^23 puts the
// integer part in the low mantissa bits.
static inline int nearest_int(float v) {
    const float t = v + 12582912.f;
    int32_t i;
    memcpy(&i, &t, sizeof(i));
    return (i & 0x007fffff) - 0x00400000;
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static inline bool use_avx2(void) {
#if defined(LM_X86)
    const enum lm_cpu_level lv = lm_cpu_level();
    return lv == LM_CPU_LEVEL_AVX2 || lv == LM_CPU_LEVEL_AVX512;
#else
    return false;
#endif
}

#if defined(LM_X86)
#define TRY_AVX2(fn, x, y, nb) do { if (use_avx2()) { fn(x, y, nb); return; } } while (0)
#define TRY_AVX512(fn, x, y, nb) do { if (lm_cpu_level() == LM_CPU_LEVEL_AVX512) { fn(x, y, nb); return; } } while (0)
#else
#define TRY_AVX2(fn, x, y, nb) do { (void) (nb); } while (0)
#define TRY_AVX512(fn, x, y, nb) do { (void) (nb); } while (0)
#endif
#if defined(LM_ARM64)
#define TRY_NEON(fn, x, y, nb) do { if (lm_cpu_level_is_neon(lm_cpu_level())) { fn(x, y, nb); return; } } while (0)
#else
#define TRY_NEON(fn, x, y, nb) do { (void) (nb); } while (0)
#endif

// ================================================================ legacy blocks: reference quantizers

// Value of largest magnitude (sign kept), first one on ties.
static inline float signed_absmax(const float * x, int n, float * amax_out) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max  = x[j];
        }
    }
    if (amax_out) *amax_out = amax;
    return max;
}

static inline void min_max(const float * x, int n, float * mn, float * mx) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < n; ++j) {
        if (x[j] < lo) lo = x[j];
        if (x[j] > hi) hi = x[j];
    }
    *mn = lo;
    *mx = hi;
}

void lm_quantize_row_q4_0_ref(const float * LM_GGML_RESTRICT x, block_q4_0 * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK4_0;
    TRY_AVX2(lm_quantize_row_q4_0_avx2, x, y, nb);
    for (int64_t i = 0; i < nb; ++i, x += LM_QK4_0) {
        // the extreme value maps to -8, using the full negative range
        const float d  = signed_absmax(x, LM_QK4_0, NULL) / -8;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = TO_F16(d);
        for (int j = 0; j < LM_QK4_0 / 2; ++j) {
            const float v0 = x[j] * id;
            const float v1 = x[j + LM_QK4_0 / 2] * id;
            const uint8_t q0 = (uint8_t) LM_GGML_MIN(15, (int8_t) (v0 + 8.5f));
            const uint8_t q1 = (uint8_t) LM_GGML_MIN(15, (int8_t) (v1 + 8.5f));
            y[i].qs[j] = q0 | (uint8_t) (q1 << 4);
        }
    }
}

void lm_quantize_row_q4_1_ref(const float * LM_GGML_RESTRICT x, block_q4_1 * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK4_1;
    TRY_AVX2(lm_quantize_row_q4_1_avx2, x, y, nb);
    for (int64_t i = 0; i < nb; ++i, x += LM_QK4_1) {
        float mn, mx;
        min_max(x, LM_QK4_1, &mn, &mx);
        const float d  = (mx - mn) / 15;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = TO_F16(d);
        y[i].m = TO_F16(mn);
        for (int j = 0; j < LM_QK4_1 / 2; ++j) {
            const float v0 = (x[j] - mn) * id;
            const float v1 = (x[j + LM_QK4_1 / 2] - mn) * id;
            const uint8_t q0 = (uint8_t) LM_GGML_MIN(15, (int8_t) (v0 + 0.5f));
            const uint8_t q1 = (uint8_t) LM_GGML_MIN(15, (int8_t) (v1 + 0.5f));
            y[i].qs[j] = q0 | (uint8_t) (q1 << 4);
        }
    }
}

// 5-bit packing shared by q5_0/q5_1: low nibbles in qs, fifth bits in qh.
static inline void pack_q5(const uint8_t * L, uint8_t * qs, uint8_t * qh_out) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        qs[j] = (uint8_t) ((L[j] & 0x0F) | ((L[j + 16] & 0x0F) << 4));
        qh |= (uint32_t) ((L[j] >> 4) & 1) << j;
        qh |= (uint32_t) ((L[j + 16] >> 4) & 1) << (j + 16);
    }
    memcpy(qh_out, &qh, sizeof(qh));
}

void lm_quantize_row_q5_0_ref(const float * LM_GGML_RESTRICT x, block_q5_0 * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK5_0;
    TRY_AVX2(lm_quantize_row_q5_0_avx2, x, y, nb);
    uint8_t L[LM_QK5_0];
    for (int64_t i = 0; i < nb; ++i, x += LM_QK5_0) {
        const float d  = signed_absmax(x, LM_QK5_0, NULL) / -16;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = TO_F16(d);
        for (int j = 0; j < LM_QK5_0; ++j) {
            L[j] = (uint8_t) LM_GGML_MIN(31, (int8_t) (x[j] * id + 16.5f));
        }
        pack_q5(L, y[i].qs, y[i].qh);
    }
}

void lm_quantize_row_q5_1_ref(const float * LM_GGML_RESTRICT x, block_q5_1 * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK5_1;
    TRY_AVX2(lm_quantize_row_q5_1_avx2, x, y, nb);
    uint8_t L[LM_QK5_1];
    for (int64_t i = 0; i < nb; ++i, x += LM_QK5_1) {
        float mn, mx;
        min_max(x, LM_QK5_1, &mn, &mx);
        const float d  = (mx - mn) / 31;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = TO_F16(d);
        y[i].m = TO_F16(mn);
        for (int j = 0; j < LM_QK5_1; ++j) {
            L[j] = (uint8_t) ((x[j] - mn) * id + 0.5f);
        }
        pack_q5(L, y[i].qs, y[i].qh);
    }
}

void lm_quantize_row_q8_0_ref(const float * LM_GGML_RESTRICT x, block_q8_0 * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK8_0;
    for (int64_t i = 0; i < nb; ++i, x += LM_QK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < LM_QK8_0; ++j) amax = LM_GGML_MAX(amax, fabsf(x[j]));
        const float d  = amax / 127;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = TO_F16(d);
        for (int j = 0; j < LM_QK8_0; ++j) y[i].qs[j] = (int8_t) roundf(x[j] * id);
    }
}

void lm_quantize_row_q8_1_ref(const float * LM_GGML_RESTRICT x, block_q8_1 * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK8_1;
    for (int64_t i = 0; i < nb; ++i, x += LM_QK8_1) {
        float amax = 0.0f;
        for (int j = 0; j < LM_QK8_1; ++j) amax = LM_GGML_MAX(amax, fabsf(x[j]));
        const float d  = amax / 127;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = TO_F16(d);
        int sum = 0;
        for (int j = 0; j < LM_QK8_1 / 2; ++j) {
            y[i].qs[j]               = (int8_t) roundf(x[j] * id);
            y[i].qs[j + LM_QK8_1 / 2] = (int8_t) roundf(x[j + LM_QK8_1 / 2] * id);
            sum += y[i].qs[j] + y[i].qs[j + LM_QK8_1 / 2];
        }
        y[i].s = TO_F16(sum * d);
    }
}

// ================================================================ legacy blocks: dequantization

void lm_dequantize_row_q4_0(const block_q4_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK4_0;
    TRY_AVX2(lm_dequantize_row_q4_0_avx2, x, y, nb);
    for (int64_t i = 0; i < nb; ++i, y += LM_QK4_0) {
        const float d = F16(x[i].d);
        for (int j = 0; j < LM_QK4_0 / 2; ++j) {
            y[j]                = ((x[i].qs[j] & 0x0F) - 8) * d;
            y[j + LM_QK4_0 / 2] = ((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void lm_dequantize_row_q4_1(const block_q4_1 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK4_1;
    for (int64_t i = 0; i < nb; ++i, y += LM_QK4_1) {
        const float d = F16(x[i].d);
        const float m = F16(x[i].m);
        for (int j = 0; j < LM_QK4_1 / 2; ++j) {
            y[j]                = (x[i].qs[j] & 0x0F) * d + m;
            y[j + LM_QK4_1 / 2] = (x[i].qs[j] >> 4) * d + m;
        }
    }
}

void lm_dequantize_row_q5_0(const block_q5_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK5_0;
    for (int64_t i = 0; i < nb; ++i, y += LM_QK5_0) {
        const float d = F16(x[i].d);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < LM_QK5_0 / 2; ++j) {
            const int q0 = (x[i].qs[j] & 0x0F) | (int) (((qh >> j) & 1) << 4);
            const int q1 = (x[i].qs[j] >> 4)   | (int) (((qh >> (j + 16)) & 1) << 4);
            y[j]                = (q0 - 16) * d;
            y[j + LM_QK5_0 / 2] = (q1 - 16) * d;
        }
    }
}

void lm_dequantize_row_q5_1(const block_q5_1 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK5_1;
    for (int64_t i = 0; i < nb; ++i, y += LM_QK5_1) {
        const float d = F16(x[i].d);
        const float m = F16(x[i].m);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < LM_QK5_1 / 2; ++j) {
            const int q0 = (x[i].qs[j] & 0x0F) | (int) (((qh >> j) & 1) << 4);
            const int q1 = (x[i].qs[j] >> 4)   | (int) (((qh >> (j + 16)) & 1) << 4);
            y[j]                = q0 * d + m;
            y[j + LM_QK5_1 / 2] = q1 * d + m;
        }
    }
}

void lm_dequantize_row_q8_0(const block_q8_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK8_0;
    TRY_AVX512(lm_dequantize_row_q8_0_avx512, x, y, nb);
    TRY_AVX2(lm_dequantize_row_q8_0_avx2, x, y, nb);
    for (int64_t i = 0; i < nb; ++i, y += LM_QK8_0) {
        const float d = F16(x[i].d);
        for (int j = 0; j < LM_QK8_0; ++j) y[j] = x[i].qs[j] * d;
    }
}

// ================================================================ scale search helpers (K-quants, imatrix paths)

// a*b + c as ggml evaluates it (kept in one place so the rounding
// behaviour of every such site can be checked against the parity data).
#define MAD(a, b, c) ((a) * (b) + (c))

static inline float rmse_weight(int rmse_type, float x) {
    switch (rmse_type) {
        case 1:  return x * x;
        case 2:  return 1.0f;
        case 3:  return fabsf(x);
        default: return sqrtf(fabsf(x));
    }
}

// Symmetric quantization of x to levels [-nmax, nmax-1], stored in L as
// l + nmax, with a search over 18 scales around nmax/max for the least
// weighted squared error. Weights are qw, or picked by rmse_type when qw is
// NULL (1: x^2, 2: 1, 3: |x|, else sqrt|x|). rmse_type 0 just rounds; a
// negative rmse_type stops after the first least-squares fit.
static float make_qx_quants(int n, int nmax, const float * LM_GGML_RESTRICT x, int8_t * LM_GGML_RESTRICT L,
                            int rmse_type, const float * LM_GGML_RESTRICT qw) {
    float amax;
    const float max = signed_absmax(x, n, &amax);
    if (amax < LM_GROUP_MAX_EPS) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    float iscale = -nmax / max;
    if (rmse_type == 0) {
        for (int i = 0; i < n; ++i) {
            L[i] = (int8_t) (nmax + clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1));
        }
        return 1 / iscale;
    }
    const bool early = rmse_type < 0;
    if (early) rmse_type = -rmse_type;

    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t) (l + nmax);
        const float w = qw ? qw[i] : rmse_weight(rmse_type, x[i]);
        sumlx = MAD(w * x[i], (float) l, sumlx);
        suml2 = MAD(w * l, (float) l, suml2);
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    if (early) return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;

    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -MAD(0.1f, (float) is, (float) nmax) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
            const float w = qw ? qw[i] : rmse_weight(rmse_type, x[i]);
            sumlx = MAD(w * x[i], (float) l, sumlx);
            suml2 = MAD(w * l, (float) l, suml2);
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                L[i] = (int8_t) (nmax + clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1));
            }
            scale = sumlx / suml2;
            best  = scale * sumlx;
        }
    }
    return scale;
}

// Symmetric quantization to [-nmax, nmax-1] (L = l + nmax); with do_rmse the
// levels are refined one element at a time under x^2 weights.
static float make_q3_quants(int n, int nmax, const float * LM_GGML_RESTRICT x, int8_t * LM_GGML_RESTRICT L, bool do_rmse) {
    float amax;
    const float max = signed_absmax(x, n, &amax);
    if (amax < LM_GROUP_MAX_EPS) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    const float iscale = -nmax / max;
    if (!do_rmse) {
        for (int i = 0; i < n; ++i) {
            L[i] = (int8_t) (clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1) + nmax);
        }
        return 1 / iscale;
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = clampi(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t) l;
        const float w = x[i] * x[i];
        sumlx = MAD(w * x[i], (float) l, sumlx);
        suml2 = MAD(w * l, (float) l, suml2);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * L[i] * L[i];
                const int new_l = clampi(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != L[i]) {
                    slx = MAD(w * x[i], (float) new_l, slx);
                    sl2 = MAD(w * new_l, (float) new_l, sl2);
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i]  = (int8_t) new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = (int8_t) (L[i] + nmax);
    return sumlx / suml2;
}

// Non-negative values x (scales or mins of sub-blocks) to levels [0, nmax]
// under weights qw: a scale search, then per-element refinement.
static float make_qp_quants(int n, int nmax, const float * LM_GGML_RESTRICT x, uint8_t * LM_GGML_RESTRICT L,
                            const float * LM_GGML_RESTRICT qw) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = LM_GGML_MAX(max, x[i]);
    if (!max) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    float iscale = nmax / max;
    for (int i = 0; i < n; ++i) L[i] = (uint8_t) nearest_int(iscale * x[i]);
    const float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale * L[i];
        best_mse = MAD(qw[i] * diff, diff, best_mse);
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = MAD(0.1f, (float) is, (float) nmax) / max;
        const float scale_is  = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            const int l = LM_GGML_MIN(nmax, nearest_int(iscale_is * x[i]));
            const float diff = x[i] - scale_is * l;
            mse = MAD(qw[i] * diff, diff, mse);
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale   = iscale_is;
        }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        L[i] = (uint8_t) LM_GGML_MIN(nmax, nearest_int(iscale * x[i]));
        const float w = qw[i];
        sumlx = MAD(w * x[i], (float) L[i], sumlx);
        suml2 = MAD(w * L[i], (float) L[i], suml2);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = qw[i];
            float slx = sumlx - w * x[i] * L[i];
            float sl2 = suml2 - w * L[i] * L[i];
            if (slx > 0 && sl2 > 0) {
                const int new_l = LM_GGML_MIN(nmax, nearest_int(x[i] * sl2 / slx));
                if (new_l != L[i]) {
                    slx = MAD(w * x[i], (float) new_l, slx);
                    sl2 = MAD(w * new_l, (float) new_l, sl2);
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i]  = (uint8_t) new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    return sumlx / suml2;
}

// make_q3_quants(n, nmax, x + l*n, L + l*n, true) for nl groups.
static void make_q3_quants_lanes(int nl, int n, int nmax, const float * x, int8_t * L, float * scales) {
#if defined(LM_X86)
    if (use_avx2()) {
        lm_q3_lanes_avx2(nl, n, nmax, x, L, scales);
        return;
    }
#endif
    for (int l = 0; l < nl; ++l) scales[l] = make_q3_quants(n, nmax, x + l * n, L + l * n, true);
}

// ================================================================ the same searches over several groups at once
//
// The searches are chains of dependent float additions (the sums must be
// formed in index order to give ggml's bits), so one group at a
// time leaves the CPU idle. The *_lanes versions run nl independent groups
// side by side, lane l holding group l: per lane the operations and their
// order are exactly those of ggml's single-group function, so the
// results are the same bits, but the lanes' chains overlap (and vectorize;
// quantize-x86.c has them eight lanes to an AVX2 vector).

#define LM_MAX_LANES 16
#define LM_MAX_GROUP 32

// Asymmetric quantization x ~ scale * L - min with L in [0, nmax] (ggml's
// make_qkx_quants) for nl groups of n values at x + l*n, weights
// likewise (NULL: x^2): a first guess from the range, then nstep+1 trial
// scales (rmin + rdelta*is + nmax levels over the range), each followed by a
// weighted least-squares fit of scale and min, kept if its weighted error
// (|diff| with use_mad, else diff^2) is lower. The min is never positive
// (zero is always representable). Levels to L + l*n, mins[l] = -min,
// scales[l] = scale.
// Inlined into each caller: specialized for its constant group shape, the
// lane loops vectorize with the baseline SIMD (SSE2, NEON).
#define LM_LANES_INLINE static inline __attribute__((always_inline))

static void qkx_lanes_c(int nl, int n, int nmax, const float * LM_GGML_RESTRICT x, const float * LM_GGML_RESTRICT weights,
                        uint8_t * LM_GGML_RESTRICT L, float * LM_GGML_RESTRICT mins, float * LM_GGML_RESTRICT scales,
                        float rmin, float rdelta, int nstep, bool use_mad) {
    enum { S = LM_MAX_LANES };
    float xt[LM_MAX_GROUP * S], wt[LM_MAX_GROUP * S];
    uint8_t Lt[LM_MAX_GROUP * S], La[LM_MAX_GROUP * S];
    float mn[S], mx[S], mn0[S], sw[S], sx[S], sc[S], best[S], isc[S];
    float s_l[S], s_l2[S], s_xl[S], ts[S], tm[S], mad[S];
    bool ok[S];

    for (int l = 0; l < nl; ++l) {
        for (int i = 0; i < n; ++i) {
            const float v = x[l * n + i];
            xt[i * S + l] = v;
            wt[i * S + l] = weights ? weights[l * n + i] : v * v;
        }
    }
    for (int l = 0; l < nl; ++l) {
        mn[l] = mx[l] = xt[l];
        sw[l] = wt[l];
        sx[l] = sw[l] * xt[l];
    }
    for (int i = 1; i < n; ++i) {
        for (int l = 0; l < nl; ++l) {
            const float v = xt[i * S + l], w = wt[i * S + l];
            if (v < mn[l]) mn[l] = v;
            if (v > mx[l]) mx[l] = v;
            sw[l] += w;
            sx[l] = MAD(w, v, sx[l]);
        }
    }
    for (int l = 0; l < nl; ++l) {
        if (mn[l] > 0) mn[l] = 0;
        mn0[l]  = mn[l];
        isc[l]  = nmax / (mx[l] - mn[l]);
        sc[l]   = 1 / isc[l];
        best[l] = 0;
    }
    for (int i = 0; i < n; ++i) {
        for (int l = 0; l < nl; ++l) {
            const float v = xt[i * S + l];
            const int li = clampi(nearest_int(isc[l] * (v - mn[l])), 0, nmax);
            Lt[i * S + l] = (uint8_t) li;
            float diff = MAD(sc[l], (float) li, mn[l]) - v;
            diff = use_mad ? fabsf(diff) : diff * diff;
            best[l] = MAD(wt[i * S + l], diff, best[l]);
        }
    }
    for (int is = 0; nstep >= 1 && is <= nstep; ++is) {
        for (int l = 0; l < nl; ++l) {
            isc[l] = (MAD(rdelta, (float) is, rmin) + nmax) / (mx[l] - mn[l]);
            s_l[l] = s_l2[l] = s_xl[l] = 0;
        }
        for (int i = 0; i < n; ++i) {
            for (int l = 0; l < nl; ++l) {
                const float v = xt[i * S + l];
                const int li = clampi(nearest_int(isc[l] * (v - mn[l])), 0, nmax);
                La[i * S + l] = (uint8_t) li;
                const float wl = wt[i * S + l] * li;
                s_l[l] += wl;
                s_l2[l] = MAD(wl, (float) li, s_l2[l]);
                s_xl[l] = MAD(wl, v, s_xl[l]);
            }
        }
        for (int l = 0; l < nl; ++l) {
            const float D = sw[l] * s_l2[l] - s_l[l] * s_l[l];
            ok[l] = D > 0;
            ts[l] = (sw[l] * s_xl[l] - sx[l] * s_l[l]) / D;
            tm[l] = (s_l2[l] * sx[l] - s_l[l] * s_xl[l]) / D;
            if (tm[l] > 0) {
                tm[l] = 0;
                ts[l] = s_xl[l] / s_l2[l];
            }
            mad[l] = 0;
        }
        for (int i = 0; i < n; ++i) {
            for (int l = 0; l < nl; ++l) {
                float diff = MAD(ts[l], (float) La[i * S + l], tm[l]) - xt[i * S + l];
                diff = use_mad ? fabsf(diff) : diff * diff;
                mad[l] = MAD(wt[i * S + l], diff, mad[l]);
            }
        }
        for (int l = 0; l < nl; ++l) {
            if (ok[l] && mad[l] < best[l]) {
                for (int i = 0; i < n; ++i) Lt[i * S + l] = La[i * S + l];
                best[l] = mad[l];
                sc[l]   = ts[l];
                mn[l]   = tm[l];
            }
        }
    }
    for (int l = 0; l < nl; ++l) {
        if (!(mx[l] > mn0[l])) {
            memset(L + l * n, 0, (size_t) n);
            mins[l]   = -mn0[l];
            scales[l] = 0.0f;
            continue;
        }
        for (int i = 0; i < n; ++i) L[l * n + i] = Lt[i * S + l];
        mins[l]   = -mn[l];
        scales[l] = sc[l];
    }
}

// make_qx_quants(n, nmax, x, L, 1, qw) for nl groups of n values at x + l*n
// (qw likewise, or NULL for x^2 weights); levels to L + l*n.
LM_LANES_INLINE void qx_lanes_c(int nl, int n, int nmax, const float * LM_GGML_RESTRICT x, const float * LM_GGML_RESTRICT qw,
                            int8_t * LM_GGML_RESTRICT L, float * LM_GGML_RESTRICT scales) {
    enum { S = LM_MAX_LANES };
    float xt[LM_MAX_GROUP * S], wt[LM_MAX_GROUP * S];
    int8_t Lt[LM_MAX_GROUP * S], La[LM_MAX_GROUP * S];
    float mx[S], amax[S], isc[S], slx[S], sl2[S], sc[S], best[S];

    for (int l = 0; l < nl; ++l) {
        amax[l] = mx[l] = 0;
        for (int i = 0; i < n; ++i) {
            const float v = x[l * n + i];
            xt[i * S + l] = v;
            wt[i * S + l] = qw ? qw[l * n + i] : v * v;
            if (fabsf(v) > amax[l]) {
                amax[l] = fabsf(v);
                mx[l]   = v;
            }
        }
    }
    for (int l = 0; l < nl; ++l) {
        isc[l] = -nmax / mx[l];
        slx[l] = sl2[l] = 0;
    }
    for (int i = 0; i < n; ++i) {
        for (int l = 0; l < nl; ++l) {
            const float v = xt[i * S + l];
            const int li = clampi(nearest_int(isc[l] * v), -nmax, nmax - 1);
            Lt[i * S + l] = (int8_t) (li + nmax);
            slx[l] = MAD(wt[i * S + l] * v, (float) li, slx[l]);
            sl2[l] = MAD(wt[i * S + l] * li, (float) li, sl2[l]);
        }
    }
    for (int l = 0; l < nl; ++l) {
        sc[l]   = sl2[l] ? slx[l] / sl2[l] : 0.0f;
        best[l] = sc[l] * slx[l];
    }
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        for (int l = 0; l < nl; ++l) {
            isc[l] = -MAD(0.1f, (float) is, (float) nmax) / mx[l];
            slx[l] = sl2[l] = 0;
        }
        for (int i = 0; i < n; ++i) {
            for (int l = 0; l < nl; ++l) {
                const float v = xt[i * S + l];
                const int li = clampi(nearest_int(isc[l] * v), -nmax, nmax - 1);
                La[i * S + l] = (int8_t) (li + nmax);
                slx[l] = MAD(wt[i * S + l] * v, (float) li, slx[l]);
                sl2[l] = MAD(wt[i * S + l] * li, (float) li, sl2[l]);
            }
        }
        for (int l = 0; l < nl; ++l) {
            if (sl2[l] > 0 && slx[l] * slx[l] > best[l] * sl2[l]) {
                for (int i = 0; i < n; ++i) Lt[i * S + l] = La[i * S + l];
                sc[l]   = slx[l] / sl2[l];
                best[l] = sc[l] * slx[l];
            }
        }
    }
    for (int l = 0; l < nl; ++l) {
        if (amax[l] < LM_GROUP_MAX_EPS) {
            memset(L + l * n, 0, (size_t) n);
            scales[l] = 0.0f;
            continue;
        }
        for (int i = 0; i < n; ++i) L[l * n + i] = Lt[i * S + l];
        scales[l] = sc[l];
    }
}

// The searches at the best level of this CPU (kept apart from the C
// versions so that those stay specialized for their constant arguments).
LM_LANES_INLINE void make_qkx_quants_lanes(int nl, int n, int nmax, const float * x, const float * weights, uint8_t * L,
                                         float * mins, float * scales, float rmin, float rdelta, int nstep, bool use_mad) {
#if defined(LM_X86)
    if (use_avx2()) {
        lm_qkx_lanes_avx2(nl, n, nmax, x, weights, L, mins, scales, rmin, rdelta, nstep, use_mad);
        return;
    }
#endif
    qkx_lanes_c(nl, n, nmax, x, weights, L, mins, scales, rmin, rdelta, nstep, use_mad);
}

LM_LANES_INLINE void make_qx_quants_lanes(int nl, int n, int nmax, const float * x, const float * qw, int8_t * L, float * scales) {
#if defined(LM_X86)
    if (use_avx2()) {
        lm_qx_lanes_avx2(nl, n, nmax, x, qw, L, scales);
        return;
    }
#endif
    qx_lanes_c(nl, n, nmax, x, qw, L, scales);
}

// ================================================================ K-quants: packing helpers

// Packs 2-bit levels: byte l of each 32-byte group holds elements l, l+32,
// l+64, l+96 of its 128-element half.
static void pack_2bit(const uint8_t * L, uint8_t * qs) {
    for (int j = 0; j < LM_QK_K; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j / 4 + l] = (uint8_t) (L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
        }
    }
}

// q4_K/q5_K scales: 8 six-bit scales and 8 six-bit mins in 12 bytes.
static inline void get_scale_min_k4(int j, const uint8_t * q, uint8_t * d, uint8_t * m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t) ((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t) ((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

static inline void set_scale_min_k4(int j, uint8_t * q, int ls, int lm) {
    if (j < 4) {
        q[j]     = (uint8_t) ls;
        q[j + 4] = (uint8_t) lm;
    } else {
        q[j + 4]  = (uint8_t) ((ls & 0xF) | ((lm & 0xF) << 4));
        q[j - 4] |= (uint8_t) ((ls >> 4) << 6);
        q[j]     |= (uint8_t) ((lm >> 4) << 6);
    }
}

// q3_K scales: 16 six-bit values (stored +32); low nibbles in bytes 0..7,
// high 2 bits in bytes 8..11.
static inline void set_scale_q3k(int j, uint8_t * s, int l) {
    if (j < 8) s[j] = (uint8_t) (l & 0xF);
    else       s[j - 8] |= (uint8_t) ((l & 0xF) << 4);
    s[j % 4 + 8] |= (uint8_t) ((l >> 4) << (2 * (j / 4)));
}

static inline int get_scale_q3k(int j, const uint8_t * s) {
    const int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
    return (lo | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

// The last step of every K-quant: the levels from the stored (rounded)
// scales, L[i] = clamp(nearest_int((x[i] + m) / d), lo, hi) + bias, or
// nearest_int(x[i] / d) without add_m.
static void requant_levels(const float * x, int n, float d, float m, bool add_m, int lo, int hi, int bias, uint8_t * L) {
#if defined(LM_X86)
    if (use_avx2()) {
        lm_requantize_avx2(x, n, d, m, add_m, lo, hi, bias, L);
        return;
    }
#endif
    for (int i = 0; i < n; ++i) {
        L[i] = (uint8_t) (clampi(nearest_int((add_m ? x[i] + m : x[i]) / d), lo, hi) + bias);
    }
}

// ================================================================ q2_K

// Final levels for 16-element sub-blocks, given the stored scales and mins.
static void requantize_q2k(const float * x, const block_q2_K * y, uint8_t * L) {
    for (int j = 0; j < LM_QK_K / 16; ++j) {
        const float d = F16(y->d) * (y->scales[j] & 0xF);
        if (!d) continue;
        const float dm = F16(y->dmin) * (y->scales[j] >> 4);
        requant_levels(x + 16 * j, 16, d, dm, true, 0, 3, 0, L + 16 * j);
    }
}

void lm_quantize_row_q2_K_ref(const float * LM_GGML_RESTRICT x, block_q2_K * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    uint8_t L[LM_QK_K];
    float weights[LM_QK_K], mins[LM_QK_K / 16], scales[LM_QK_K / 16];
    const float q4scale = 15.f;

    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        float max_scale = 0, max_min = 0;
        for (int l = 0; l < LM_QK_K; ++l) weights[l] = fabsf(x[l]);
        make_qkx_quants_lanes(LM_QK_K / 16, 16, 3, x, weights, L, mins, scales, -0.5f, 0.1f, 15, true);
        for (int j = 0; j < LM_QK_K / 16; ++j) {
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < LM_QK_K / 16; ++j) y[i].scales[j] = (uint8_t) nearest_int(iscale * scales[j]);
            y[i].d = TO_F16(max_scale / q4scale);
        } else {
            memset(y[i].scales, 0, sizeof(y[i].scales));
            y[i].d = TO_F16(0.f);
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < LM_QK_K / 16; ++j) y[i].scales[j] |= (uint8_t) (nearest_int(iscale * mins[j]) << 4);
            y[i].dmin = TO_F16(max_min / q4scale);
        } else {
            y[i].dmin = TO_F16(0.f);
        }
        requantize_q2k(x, &y[i], L);
        pack_2bit(L, y[i].qs);
    }
}

static void quantize_row_q2_K_impl(const float * LM_GGML_RESTRICT x, block_q2_K * LM_GGML_RESTRICT y, int64_t k,
                                   const float * LM_GGML_RESTRICT quant_weights) {
    const int64_t nb = k / LM_QK_K;
    uint8_t L[LM_QK_K], Ls[LM_QK_K / 16], Lm[LM_QK_K / 16];
    float mins[LM_QK_K / 16], scales[LM_QK_K / 16], sw[LM_QK_K / 16], weight[LM_QK_K];

    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        float sumx2 = 0;
        for (int j = 0; j < LM_QK_K; ++j) sumx2 = MAD(x[j], x[j], sumx2);
        const float sigma2 = sumx2 / LM_QK_K;
        for (int j = 0; j < LM_QK_K / 16; ++j) {
            const float * qw = quant_weights + LM_QK_K * i + 16 * j;
            float * wj = weight + 16 * j;
            for (int l = 0; l < 16; ++l) wj[l] = qw[l] * sqrtf(MAD(x[16 * j + l], x[16 * j + l], sigma2));
            sw[j] = 0;
            for (int l = 0; l < 16; ++l) sw[j] += wj[l];
        }
        make_qkx_quants_lanes(LM_QK_K / 16, 16, 3, x, weight, L, mins, scales, -0.9f, 0.05f, 36, false);
        const float dm = make_qp_quants(LM_QK_K / 16, 15, scales, Ls, sw);
        const float mm = make_qp_quants(LM_QK_K / 16, 15, mins, Lm, sw);
        y[i].d    = TO_F16(dm);
        y[i].dmin = TO_F16(mm);
        for (int j = 0; j < LM_QK_K / 16; ++j) y[i].scales[j] = (uint8_t) (Ls[j] | (Lm[j] << 4));
        requantize_q2k(x, &y[i], L);
        pack_2bit(L, y[i].qs);
    }
}

void lm_dequantize_row_q2_K(const block_q2_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const float d   = F16(x[i].d);
        const float min = F16(x[i].dmin);
        const uint8_t * q  = x[i].qs;
        const uint8_t * sc = x[i].scales;
        for (int half = 0; half < 2; ++half, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part, ++sc) {
                    const float dl = d * (*sc & 0xF);
                    const float ml = min * (*sc >> 4);
                    const uint8_t * qq = q + 16 * part;
                    for (int l = 0; l < 16; ++l) *y++ = dl * ((qq[l] >> shift) & 3) - ml;
                }
            }
        }
    }
}

// ================================================================ q3_K

// Final levels (stored +4) from the packed scales, then hmask + 2-bit packing.
static void finish_q3k(const float * x, block_q3_K * y, int8_t * L) {
    for (int j = 0; j < LM_QK_K / 16; ++j) {
        const float d = F16(y->d) * get_scale_q3k(j, y->scales);
        if (!d) continue;
        requant_levels(x + 16 * j, 16, d, 0, false, -4, 3, 4, (uint8_t *) L + 16 * j);
    }
    memset(y->hmask, 0, sizeof(y->hmask));
    int m = 0;
    uint8_t hm = 1;
    for (int j = 0; j < LM_QK_K; ++j) {
        if (L[j] > 3) {
            y->hmask[m] |= hm;
            L[j] -= 4;
        }
        if (++m == LM_QK_K / 8) {
            m = 0;
            hm <<= 1;
        }
    }
    pack_2bit((const uint8_t *) L, y->qs);
}

void lm_quantize_row_q3_K_ref(const float * LM_GGML_RESTRICT x, block_q3_K * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    int8_t L[LM_QK_K];
    float scales[LM_QK_K / 16];

    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        float max_scale = 0, amax = 0;
        make_q3_quants_lanes(LM_QK_K / 16, 16, 4, x, L, scales);
        for (int j = 0; j < LM_QK_K / 16; ++j) {
            const float s = fabsf(scales[j]);
            if (s > amax) {
                amax = s;
                max_scale = scales[j];
            }
        }
        memset(y[i].scales, 0, sizeof(y[i].scales));
        if (max_scale) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < LM_QK_K / 16; ++j) {
                set_scale_q3k(j, y[i].scales, clampi(nearest_int(iscale * scales[j]), -32, 31) + 32);
            }
            y[i].d = TO_F16(1 / iscale);
        } else {
            y[i].d = TO_F16(0.f);
        }
        finish_q3k(x, &y[i], L);
    }
}

static void quantize_row_q3_K_impl(const float * LM_GGML_RESTRICT x, block_q3_K * LM_GGML_RESTRICT y, int64_t k,
                                   const float * LM_GGML_RESTRICT quant_weights) {
    const int64_t nb = k / LM_QK_K;
    int8_t L[LM_QK_K], Ls[LM_QK_K / 16];
    float scales[LM_QK_K / 16], weight[LM_QK_K], sw[LM_QK_K / 16];

    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        float sumx2 = 0;
        for (int j = 0; j < LM_QK_K; ++j) sumx2 = MAD(x[j], x[j], sumx2);
        const float sigma2 = 2 * sumx2 / LM_QK_K;
        for (int j = 0; j < LM_QK_K / 16; ++j) {
            const float * xs = x + 16 * j;
            float * wj = weight + 16 * j;
            if (quant_weights) {
                const float * qw = quant_weights + LM_QK_K * i + 16 * j;
                for (int l = 0; l < 16; ++l) wj[l] = qw[l] * sqrtf(MAD(xs[l], xs[l], sigma2));
            } else {
                for (int l = 0; l < 16; ++l) wj[l] = xs[l] * xs[l];
            }
            float sumw = 0;
            for (int l = 0; l < 16; ++l) sumw += wj[l];
            sw[j] = sumw;
        }
        make_qx_quants_lanes(LM_QK_K / 16, 16, 4, x, weight, L, scales);
        memset(y[i].scales, 0, sizeof(y[i].scales));
        const float d_block = make_qx_quants(LM_QK_K / 16, 32, scales, Ls, 1, sw);
        for (int j = 0; j < LM_QK_K / 16; ++j) set_scale_q3k(j, y[i].scales, Ls[j]);
        y[i].d = TO_F16(d_block);
        finish_q3k(x, &y[i], L);
    }
}

void lm_dequantize_row_q3_K(const block_q3_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const float d_all = F16(x[i].d);
        const uint8_t * q  = x[i].qs;
        const uint8_t * hm = x[i].hmask;
        int is = 0;
        uint8_t m = 1;
        for (int half = 0; half < 2; ++half, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
                for (int part = 0; part < 2; ++part) {
                    const float dl = d_all * get_scale_q3k(is++, x[i].scales);
                    for (int l = 16 * part; l < 16 * part + 16; ++l) {
                        *y++ = dl * (((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
                    }
                }
            }
        }
    }
}

// ================================================================ q4_K / q5_K

// Packs the 8 sub-block scales/mins (already 6-bit levels) and sets d/dmin.
static void store_scales_k4(uint8_t * q, const uint8_t * Ls, const uint8_t * Lm) {
    for (int j = 0; j < LM_QK_K / 32; ++j) set_scale_min_k4(j, q, Ls[j], Lm[j]);
}

// Final levels in [0, nmax] from the packed scales of a q4_K/q5_K block.
static void requantize_k4(const float * x, lm_ggml_half dh, lm_ggml_half mh, const uint8_t * scales, int nmax, uint8_t * L) {
    for (int j = 0; j < LM_QK_K / 32; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, scales, &sc, &m);
        const float d = F16(dh) * sc;
        if (!d) continue;
        const float dm = F16(mh) * m;
        requant_levels(x + 32 * j, 32, d, dm, true, 0, nmax, 0, L + 32 * j);
    }
}

// Reference path: per sub-block fit with weights av_x + |x|, then the scales
// and mins rounded to 6 bits against their maxima.
static void k4_ref_scales(const float * x, int nmax, float rmin, float rdelta, int nstep, uint8_t * L,
                          lm_ggml_half * d, lm_ggml_half * dmin, uint8_t * packed) {
    uint8_t Ls[LM_QK_K / 32], Lm[LM_QK_K / 32];
    float weights[LM_QK_K], mins[LM_QK_K / 32], scales[LM_QK_K / 32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < LM_QK_K / 32; ++j) {
        const float * xs = x + 32 * j;
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 = MAD(xs[l], xs[l], sum_x2);
        const float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[32 * j + l] = av_x + fabsf(xs[l]);
    }
    make_qkx_quants_lanes(LM_QK_K / 32, 32, nmax, x, weights, L, mins, scales, rmin, rdelta, nstep, false);
    for (int j = 0; j < LM_QK_K / 32; ++j) {
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min   = max_min   > 0 ? 63.f / max_min   : 0.f;
    for (int j = 0; j < LM_QK_K / 32; ++j) {
        Ls[j] = (uint8_t) LM_GGML_MIN(63, nearest_int(inv_scale * scales[j]));
        Lm[j] = (uint8_t) LM_GGML_MIN(63, nearest_int(inv_min * mins[j]));
    }
    store_scales_k4(packed, Ls, Lm);
    *d    = TO_F16(max_scale / 63.f);
    *dmin = TO_F16(max_min / 63.f);
}

// imatrix path: weights qw*sqrt(sigma2 + x^2) (or av_x + |x| without an
// imatrix), scales and mins themselves quantized with make_qp_quants.
static void k4_impl_scales(const float * x, const float * quant_weights, int nmax, uint8_t * L,
                           lm_ggml_half * d, lm_ggml_half * dmin, uint8_t * packed) {
    uint8_t Ls[LM_QK_K / 32], Lm[LM_QK_K / 32];
    float weights[LM_QK_K], mins[LM_QK_K / 32], scales[LM_QK_K / 32], sw[LM_QK_K / 32];
    float sum_x2 = 0;
    for (int l = 0; l < LM_QK_K; ++l) sum_x2 = MAD(x[l], x[l], sum_x2);
    const float sigma2 = 2 * sum_x2 / LM_QK_K;
    const float av_x = sqrtf(sigma2);
    for (int j = 0; j < LM_QK_K / 32; ++j) {
        const float * xs = x + 32 * j;
        float * wj = weights + 32 * j;
        if (quant_weights) {
            const float * qw = quant_weights + 32 * j;
            for (int l = 0; l < 32; ++l) wj[l] = qw[l] * sqrtf(MAD(xs[l], xs[l], sigma2));
        } else {
            for (int l = 0; l < 32; ++l) wj[l] = av_x + fabsf(xs[l]);
        }
        float sumw = 0;
        for (int l = 0; l < 32; ++l) sumw += wj[l];
        sw[j] = sumw;
    }
    make_qkx_quants_lanes(LM_QK_K / 32, 32, nmax, x, weights, L, mins, scales, -0.9f, 0.05f, 36, false);
    const float d_block = make_qp_quants(LM_QK_K / 32, 63, scales, Ls, sw);
    const float m_block = make_qp_quants(LM_QK_K / 32, 63, mins, Lm, sw);
    store_scales_k4(packed, Ls, Lm);
    *d    = TO_F16(d_block);
    *dmin = TO_F16(m_block);
}

static void pack_q4k(const uint8_t * L, uint8_t * q) {
    for (int j = 0; j < LM_QK_K; j += 64, q += 32) {
        for (int l = 0; l < 32; ++l) q[l] = (uint8_t) (L[j + l] | (L[j + l + 32] << 4));
    }
}

static void pack_q5k(const uint8_t * L, uint8_t * ql, uint8_t * qh) {
    memset(qh, 0, LM_QK_K / 8);
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < LM_QK_K; n += 64, ql += 32) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j], l2 = L[n + j + 32];
            if (l1 > 15) { l1 -= 16; qh[j] |= m1; }
            if (l2 > 15) { l2 -= 16; qh[j] |= m2; }
            ql[j] = (uint8_t) (l1 | (l2 << 4));
        }
        m1 <<= 2;
        m2 <<= 2;
    }
}

void lm_quantize_row_q4_K_ref(const float * LM_GGML_RESTRICT x, block_q4_K * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    uint8_t L[LM_QK_K];
    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        memset(y[i].scales, 0, sizeof(y[i].scales));
        k4_ref_scales(x, 15, -1.f, 0.1f, 20, L, &y[i].d, &y[i].dmin, y[i].scales);
        requantize_k4(x, y[i].d, y[i].dmin, y[i].scales, 15, L);
        pack_q4k(L, y[i].qs);
    }
}

static void quantize_row_q4_K_impl(const float * LM_GGML_RESTRICT x, block_q4_K * LM_GGML_RESTRICT y, int64_t k,
                                   const float * LM_GGML_RESTRICT quant_weights) {
    const int64_t nb = k / LM_QK_K;
    uint8_t L[LM_QK_K];
    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        memset(y[i].scales, 0, sizeof(y[i].scales));
        k4_impl_scales(x, quant_weights ? quant_weights + LM_QK_K * i : NULL, 15, L, &y[i].d, &y[i].dmin, y[i].scales);
        requantize_k4(x, y[i].d, y[i].dmin, y[i].scales, 15, L);
        pack_q4k(L, y[i].qs);
    }
}

void lm_quantize_row_q5_K_ref(const float * LM_GGML_RESTRICT x, block_q5_K * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    uint8_t L[LM_QK_K];
    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        memset(y[i].scales, 0, sizeof(y[i].scales));
        k4_ref_scales(x, 31, -0.5f, 0.1f, 15, L, &y[i].d, &y[i].dmin, y[i].scales);
        requantize_k4(x, y[i].d, y[i].dmin, y[i].scales, 31, L);
        pack_q5k(L, y[i].qs, y[i].qh);
    }
}

static void quantize_row_q5_K_impl(const float * LM_GGML_RESTRICT x, block_q5_K * LM_GGML_RESTRICT y, int64_t k,
                                   const float * LM_GGML_RESTRICT quant_weights) {
    const int64_t nb = k / LM_QK_K;
    uint8_t L[LM_QK_K];
    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        memset(y[i].scales, 0, sizeof(y[i].scales));
        k4_impl_scales(x, quant_weights ? quant_weights + LM_QK_K * i : NULL, 31, L, &y[i].d, &y[i].dmin, y[i].scales);
        requantize_k4(x, y[i].d, y[i].dmin, y[i].scales, 31, L);
        pack_q5k(L, y[i].qs, y[i].qh);
    }
}

void lm_dequantize_row_q4_K(const block_q4_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    TRY_AVX512(lm_dequantize_row_q4_K_avx512, x, y, nb);
    TRY_AVX2(lm_dequantize_row_q4_K_avx2, x, y, nb);
    for (int64_t i = 0; i < nb; ++i) {
        const float d = F16(x[i].d), min = F16(x[i].dmin);
        const uint8_t * q = x[i].qs;
        for (int is = 0; is < 8; is += 2, q += 32) {
            uint8_t sc, m;
            get_scale_min_k4(is, x[i].scales, &sc, &m);
            const float d1 = d * sc, m1 = min * m;
            get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
        }
    }
}

void lm_dequantize_row_q5_K(const block_q5_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const float d = F16(x[i].d), min = F16(x[i].dmin);
        const uint8_t * ql = x[i].qs;
        const uint8_t * qh = x[i].qh;
        uint8_t u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
            uint8_t sc, m;
            get_scale_min_k4(is, x[i].scales, &sc, &m);
            const float d1 = d * sc, m1 = min * m;
            get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
        }
    }
}

// ================================================================ q6_K

static void finish_q6k(const float * x, block_q6_K * y, int8_t * L, const float * scales, float max_scale) {
    const float iscale = -128.f / max_scale;
    y->d = TO_F16(1 / iscale);
    for (int ib = 0; ib < LM_QK_K / 16; ++ib) {
        y->scales[ib] = (int8_t) LM_GGML_MIN(127, nearest_int(iscale * scales[ib]));
    }
    for (int j = 0; j < LM_QK_K / 16; ++j) {
        const float d = F16(y->d) * y->scales[j];
        if (!d) continue;
        requant_levels(x + 16 * j, 16, d, 0, false, -32, 31, 32, (uint8_t *) L + 16 * j);
    }
    uint8_t * ql = y->ql;
    uint8_t * qh = y->qh;
    for (int j = 0; j < LM_QK_K; j += 128, ql += 64, qh += 32) {
        for (int l = 0; l < 32; ++l) {
            const int a = L[j + l], b = L[j + l + 32], c = L[j + l + 64], e = L[j + l + 96];
            ql[l]      = (uint8_t) ((a & 0xF) | ((c & 0xF) << 4));
            ql[l + 32] = (uint8_t) ((b & 0xF) | ((e & 0xF) << 4));
            qh[l]      = (uint8_t) ((a >> 4) | ((b >> 4) << 2) | ((c >> 4) << 4) | ((e >> 4) << 6));
        }
    }
}

static void quantize_row_q6_K_impl(const float * LM_GGML_RESTRICT x, block_q6_K * LM_GGML_RESTRICT y, int64_t k,
                                   const float * LM_GGML_RESTRICT quant_weights) {
    const int64_t nb = k / LM_QK_K;
    int8_t L[LM_QK_K];
    float scales[LM_QK_K / 16];
    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        float max_scale = 0, max_abs_scale = 0;
        make_qx_quants_lanes(LM_QK_K / 16, 16, 32, x, quant_weights ? quant_weights + LM_QK_K * i : NULL, L, scales);
        for (int ib = 0; ib < LM_QK_K / 16; ++ib) {
            const float a = fabsf(scales[ib]);
            if (a > max_abs_scale) {
                max_abs_scale = a;
                max_scale = scales[ib];
            }
        }
        if (max_abs_scale < LM_GROUP_MAX_EPS) {
            memset(&y[i], 0, sizeof(y[i]));
            y[i].d = TO_F16(0.f);
            continue;
        }
        finish_q6k(x, &y[i], L, scales, max_scale);
    }
}

void lm_quantize_row_q6_K_ref(const float * LM_GGML_RESTRICT x, block_q6_K * LM_GGML_RESTRICT y, int64_t k) {
    quantize_row_q6_K_impl(x, y, k, NULL);
}

void lm_dequantize_row_q6_K(const block_q6_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    TRY_AVX2(lm_dequantize_row_q6_K_avx2, x, y, nb);
    for (int64_t i = 0; i < nb; ++i) {
        const float d = F16(x[i].d);
        const uint8_t * ql = x[i].ql;
        const uint8_t * qh = x[i].qh;
        const int8_t  * sc = x[i].scales;
        for (int n = 0; n < LM_QK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0xF)      | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4)       | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4)  | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l]      = d * sc[is + 0] * q1;
                y[l + 32] = d * sc[is + 2] * q2;
                y[l + 64] = d * sc[is + 4] * q3;
                y[l + 96] = d * sc[is + 6] * q4;
            }
        }
    }
}

// ================================================================ q8_K (activations of the K-quant dot products)

void lm_quantize_row_q8_K_ref(const float * LM_GGML_RESTRICT x, block_q8_K * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    for (int64_t i = 0; i < nb; ++i, x += LM_QK_K) {
        float amax;
        const float max = signed_absmax(x, LM_QK_K, &amax);
        if (!amax) {
            y[i].d = 0;
            memset(y[i].qs, 0, sizeof(y[i].qs));
            memset(y[i].bsums, 0, sizeof(y[i].bsums));
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < LM_QK_K; ++j) y[i].qs[j] = (int8_t) LM_GGML_MIN(127, nearest_int(iscale * x[j]));
        for (int j = 0; j < LM_QK_K / 16; ++j) {
            int sum = 0;
            for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[16 * j + ii];
            y[i].bsums[j] = (int16_t) sum;
        }
        y[i].d = 1 / iscale;
    }
}

void lm_dequantize_row_q8_K(const block_q8_K * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    for (int64_t i = 0; i < nb; ++i, y += LM_QK_K) {
        for (int j = 0; j < LM_QK_K; ++j) y[j] = x[i].d * x[i].qs[j];
    }
}

// ================================================================ ternary: tq1_0, tq2_0

// Trit t of a base-3 number stored as a fixed-point fraction of 256: the
// byte is ceil(value * 256 / 3^n) so multiplying by 3^t and taking the top
// bits of *3 yields digit t.
static inline uint8_t trits_to_byte(const int * t, int n, int pad) {
    unsigned q = 0;
    for (int m = 0; m < n; ++m) q = q * 3 + (unsigned) t[m];
    for (int m = 0; m < pad; ++m) q *= 3;
    return (uint8_t) ((q * 256 + 242) / 243);
}

static inline int ternary(float v, float id) { return (int) lroundf(v * id) + 1; }

void lm_quantize_row_tq1_0_ref(const float * LM_GGML_RESTRICT x, block_tq1_0 * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    enum { NQS = sizeof(y->qs), NQH = sizeof(y->qh), N32 = NQS - NQS % 32 };
    int t[5];
    for (int64_t i = 0; i < nb; ++i) {
        float amax = 0.0f;
        for (int j = 0; j < LM_QK_K; ++j) amax = LM_GGML_MAX(amax, fabsf(x[j]));
        const float d  = amax;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = TO_F16(d);
        // first 160 elements: 5 trits per byte over 32 bytes, strided by 32
        for (int j = 0; j < N32; j += 32, x += 5 * 32) {
            for (int m = 0; m < 32; ++m) {
                for (int n = 0; n < 5; ++n) t[n] = ternary(x[m + n * 32], id);
                y[i].qs[j + m] = trits_to_byte(t, 5, 0);
            }
        }
        // next 80: 5 trits per byte over 16 bytes, strided by 16
        for (int j = N32; j < NQS; j += 16, x += 5 * 16) {
            for (int m = 0; m < 16; ++m) {
                for (int n = 0; n < 5; ++n) t[n] = ternary(x[m + n * 16], id);
                y[i].qs[j + m] = trits_to_byte(t, 5, 0);
            }
        }
        // last 16: 4 trits per byte, in the most significant positions
        for (int j = 0; j < NQH; ++j) {
            for (int m = 0; m < 4; ++m) t[m] = ternary(x[j + m * NQH], id);
            y[i].qh[j] = trits_to_byte(t, 4, 1);
        }
        x += 4 * NQH;
    }
}

void lm_dequantize_row_tq1_0(const block_tq1_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    static const uint8_t pow3[6] = {1, 3, 9, 27, 81, 243};
    const int64_t nb = k / LM_QK_K;
    enum { NQS = sizeof(x->qs), NQH = sizeof(x->qh), N32 = NQS - NQS % 32 };
    for (int64_t i = 0; i < nb; ++i) {
        const float d = F16(x[i].d);
        for (int j = 0; j < N32; j += 32) {
            for (int n = 0; n < 5; ++n) {
                for (int m = 0; m < 32; ++m) {
                    const uint8_t q = (uint8_t) (x[i].qs[j + m] * pow3[n]);
                    *y++ = (float) ((((uint16_t) q * 3) >> 8) - 1) * d;
                }
            }
        }
        for (int j = N32; j < NQS; j += 16) {
            for (int n = 0; n < 5; ++n) {
                for (int m = 0; m < 16; ++m) {
                    const uint8_t q = (uint8_t) (x[i].qs[j + m] * pow3[n]);
                    *y++ = (float) ((((uint16_t) q * 3) >> 8) - 1) * d;
                }
            }
        }
        for (int n = 0; n < 4; ++n) {
            for (int j = 0; j < NQH; ++j) {
                const uint8_t q = (uint8_t) (x[i].qh[j] * pow3[n]);
                *y++ = (float) ((((uint16_t) q * 3) >> 8) - 1) * d;
            }
        }
    }
}

void lm_quantize_row_tq2_0_ref(const float * LM_GGML_RESTRICT x, block_tq2_0 * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        float amax = 0.0f;
        for (int j = 0; j < LM_QK_K; ++j) amax = LM_GGML_MAX(amax, fabsf(x[j]));
        const float d  = amax;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = TO_F16(d);
        for (int j = 0; j < (int) sizeof(y->qs); j += 32, x += 4 * 32) {
            for (int m = 0; m < 32; ++m) {
                unsigned q = 0;
                for (int n = 0; n < 4; ++n) q |= (unsigned) (ternary(x[m + n * 32], id) & 3) << (2 * n);
                y[i].qs[j + m] = (uint8_t) q;
            }
        }
    }
}

void lm_dequantize_row_tq2_0(const block_tq2_0 * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    const int64_t nb = k / LM_QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const float d = F16(x[i].d);
        for (int j = 0; j < (int) sizeof(x->qs); j += 32) {
            for (int l = 0; l < 4; ++l) {
                for (int m = 0; m < 32; ++m) {
                    const int q = (x[i].qs[j + m] >> (2 * l)) & 3;
                    *y++ = (float) (q - 1) * d;
                }
            }
        }
    }
}

// ================================================================ CPU row converters (from_float)

void lm_quantize_row_q4_0(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q4_0_ref(x, y, k); }
void lm_quantize_row_q4_1(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q4_1_ref(x, y, k); }
void lm_quantize_row_q5_0(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q5_0_ref(x, y, k); }
void lm_quantize_row_q5_1(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q5_1_ref(x, y, k); }
void lm_quantize_row_q8_0(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    TRY_AVX2(lm_quantize_row_q8_0_avx2, x, (block_q8_0 *) y, k / LM_QK8_0);
    TRY_NEON(lm_quantize_row_q8_0_neon, x, (block_q8_0 *) y, k / LM_QK8_0);
    lm_quantize_row_q8_0_ref(x, y, k);
}
void lm_quantize_row_q8_1(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    TRY_AVX2(lm_quantize_row_q8_1_avx2, x, (block_q8_1 *) y, k / LM_QK8_1);
    TRY_NEON(lm_quantize_row_q8_1_neon, x, (block_q8_1 *) y, k / LM_QK8_1);
    lm_quantize_row_q8_1_ref(x, y, k);
}
void lm_quantize_row_q2_K(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q2_K_ref(x, y, k); }
void lm_quantize_row_q3_K(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q3_K_ref(x, y, k); }
void lm_quantize_row_q4_K(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q4_K_ref(x, y, k); }
void lm_quantize_row_q5_K(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q5_K_ref(x, y, k); }
void lm_quantize_row_q6_K(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_q6_K_ref(x, y, k); }
void lm_quantize_row_q8_K(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    TRY_AVX2(lm_quantize_row_q8_K_avx2, x, (block_q8_K *) y, k / LM_QK_K);
    TRY_NEON(lm_quantize_row_q8_K_neon, x, (block_q8_K *) y, k / LM_QK_K);
    lm_quantize_row_q8_K_ref(x, y, k);
}
void lm_quantize_row_tq1_0(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_tq1_0_ref(x, y, k); }
void lm_quantize_row_tq2_0(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) { lm_quantize_row_tq2_0_ref(x, y, k); }

// ================================================================ whole-row quantizers (imatrix aware)

// Legacy imatrix path: weights qw * sqrt(sigma2 + x^2) with sigma2 the mean
// square of the whole row.
static float row_sigma2(const float * x, int64_t n) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n; ++j) sum_x2 = MAD(x[j], x[j], sum_x2);
    return sum_x2 / n;
}

static void legacy_weights(const float * xb, const float * qw, float sigma2, float * w, int n) {
    for (int j = 0; j < n; ++j) w[j] = qw[j] * sqrtf(MAD(xb[j], xb[j], sigma2));
}

// The blocks of a row are independent searches: run LM_MAX_LANES at a time
// through the lanes versions (same bits as one at a time).
static void quantize_row_q4_0_impl(const float * x, block_q4_0 * y, int64_t n_per_row, const float * qw) {
    float weight[LM_MAX_LANES * LM_QK4_0], scales[LM_MAX_LANES];
    int8_t L[LM_MAX_LANES * LM_QK4_0];
    const float sigma2 = row_sigma2(x, n_per_row);
    const int64_t nb = n_per_row / LM_QK4_0;
    for (int64_t ib = 0; ib < nb; ib += LM_MAX_LANES) {
        const int nl = (int) LM_GGML_MIN(LM_MAX_LANES, nb - ib);
        legacy_weights(x + LM_QK4_0 * ib, qw + LM_QK4_0 * ib, sigma2, weight, nl * LM_QK4_0);
        make_qx_quants_lanes(nl, LM_QK4_0, 8, x + LM_QK4_0 * ib, weight, L, scales);
        for (int l = 0; l < nl; ++l) {
            const int8_t * Lb = L + LM_QK4_0 * l;
            y[ib + l].d = TO_F16(scales[l]);
            for (int j = 0; j < 16; ++j) y[ib + l].qs[j] = (uint8_t) (Lb[j] | (Lb[j + 16] << 4));
        }
    }
}

static void quantize_row_q4_1_impl(const float * x, block_q4_1 * y, int64_t n_per_row, const float * qw) {
    float weight[LM_MAX_LANES * LM_QK4_1], scales[LM_MAX_LANES], mins[LM_MAX_LANES];
    uint8_t L[LM_MAX_LANES * LM_QK4_1];
    const float sigma2 = row_sigma2(x, n_per_row);
    const int64_t nb = n_per_row / LM_QK4_1;
    for (int64_t ib = 0; ib < nb; ib += LM_MAX_LANES) {
        const int nl = (int) LM_GGML_MIN(LM_MAX_LANES, nb - ib);
        legacy_weights(x + LM_QK4_1 * ib, qw + LM_QK4_1 * ib, sigma2, weight, nl * LM_QK4_1);
        make_qkx_quants_lanes(nl, LM_QK4_1, 15, x + LM_QK4_1 * ib, weight, L, mins, scales, -0.9f, 0.05f, 36, false);
        for (int l = 0; l < nl; ++l) {
            const uint8_t * Lb = L + LM_QK4_1 * l;
            y[ib + l].d = TO_F16(scales[l]);
            y[ib + l].m = TO_F16(-mins[l]);
            for (int j = 0; j < 16; ++j) y[ib + l].qs[j] = (uint8_t) (Lb[j] | (Lb[j + 16] << 4));
        }
    }
}

static void quantize_row_q5_0_impl(const float * x, block_q5_0 * y, int64_t n_per_row, const float * qw) {
    float weight[LM_MAX_LANES * LM_QK5_0], scales[LM_MAX_LANES];
    int8_t L[LM_MAX_LANES * LM_QK5_0];
    const float sigma2 = row_sigma2(x, n_per_row);
    const int64_t nb = n_per_row / LM_QK5_0;
    for (int64_t ib = 0; ib < nb; ib += LM_MAX_LANES) {
        const int nl = (int) LM_GGML_MIN(LM_MAX_LANES, nb - ib);
        legacy_weights(x + LM_QK5_0 * ib, qw + LM_QK5_0 * ib, sigma2, weight, nl * LM_QK5_0);
        make_qx_quants_lanes(nl, LM_QK5_0, 16, x + LM_QK5_0 * ib, weight, L, scales);
        for (int l = 0; l < nl; ++l) {
            y[ib + l].d = TO_F16(scales[l]);
            pack_q5((const uint8_t *) L + LM_QK5_0 * l, y[ib + l].qs, y[ib + l].qh);
        }
    }
}

static void quantize_row_q5_1_impl(const float * x, block_q5_1 * y, int64_t n_per_row, const float * qw) {
    float weight[LM_MAX_LANES * LM_QK5_1], scales[LM_MAX_LANES], mins[LM_MAX_LANES];
    uint8_t L[LM_MAX_LANES * LM_QK5_1];
    const float sigma2 = row_sigma2(x, n_per_row);
    const int64_t nb = n_per_row / LM_QK5_1;
    for (int64_t ib = 0; ib < nb; ib += LM_MAX_LANES) {
        const int nl = (int) LM_GGML_MIN(LM_MAX_LANES, nb - ib);
        legacy_weights(x + LM_QK5_1 * ib, qw + LM_QK5_1 * ib, sigma2, weight, nl * LM_QK5_1);
        make_qkx_quants_lanes(nl, LM_QK5_1, 31, x + LM_QK5_1 * ib, weight, L, mins, scales, -0.9f, 0.05f, 36, false);
        for (int l = 0; l < nl; ++l) {
            y[ib + l].d = TO_F16(scales[l]);
            y[ib + l].m = TO_F16(-mins[l]);
            pack_q5(L + LM_QK5_1 * l, y[ib + l].qs, y[ib + l].qh);
        }
    }
}

// Rows one at a time through impl (NULL imatrix: the reference quantizer over
// the whole span). The imatrix holds one weight per column.
#define LM_ROWWISE(t, blk, QK)                                                                            \
size_t lm_quantize_##t(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows,     \
                       int64_t n_per_row, const float * imatrix) {                                       \
    const size_t row_size = (size_t) (n_per_row / (QK)) * sizeof(blk);                                  \
    if (!imatrix) {                                                                                     \
        lm_quantize_row_##t##_ref(src, (blk *) dst, nrows * n_per_row);                                  \
        return (size_t) nrows * row_size;                                                               \
    }                                                                                                   \
    char * q = (char *) dst;                                                                            \
    for (int64_t r = 0; r < nrows; ++r, src += n_per_row, q += row_size) {                              \
        quantize_row_##t##_impl(src, (blk *) q, n_per_row, imatrix);                                     \
    }                                                                                                   \
    return (size_t) nrows * row_size;                                                                   \
}

LM_ROWWISE(q4_0, block_q4_0, LM_QK4_0)
LM_ROWWISE(q4_1, block_q4_1, LM_QK4_1)
LM_ROWWISE(q5_0, block_q5_0, LM_QK5_0)
LM_ROWWISE(q5_1, block_q5_1, LM_QK5_1)
LM_ROWWISE(q2_K, block_q2_K, LM_QK_K)
LM_ROWWISE(q3_K, block_q3_K, LM_QK_K)
LM_ROWWISE(q4_K, block_q4_K, LM_QK_K)
LM_ROWWISE(q5_K, block_q5_K, LM_QK_K)
LM_ROWWISE(q6_K, block_q6_K, LM_QK_K)
#undef LM_ROWWISE

// Types whose quantizer ignores the importance matrix.
#define LM_REFONLY(t, blk, QK)                                                                            \
size_t lm_quantize_##t(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows,     \
                       int64_t n_per_row, const float * imatrix) {                                       \
    (void) imatrix;                                                                                     \
    lm_quantize_row_##t(src, dst, nrows * n_per_row);                                                    \
    return (size_t) nrows * (size_t) (n_per_row / (QK)) * sizeof(blk);                                  \
}

LM_REFONLY(q8_0, block_q8_0, LM_QK8_0)
LM_REFONLY(tq1_0, block_tq1_0, LM_QK_K)
LM_REFONLY(tq2_0, block_tq2_0, LM_QK_K)
#undef LM_REFONLY

// ================================================================ interleaved layouts (q4_0_4x4, q4_0_4x8, q4_0_8x8, iq4_nl_4x4)

// Blocks of nr rows at the same column are merged: their nr scales first,
// then their quants taken in chunks of blck bytes, round robin over the rows.
// The q4_0 variants flip bit 3 of every nibble (xor 0x88) so that the kernels
// can use the nibbles as signed values directly.
static void interleave_blocks(const uint8_t * const * qs, const lm_ggml_half * ds, int nr, int qbytes, int blck,
                              uint8_t xor_mask, lm_ggml_half * out_d, uint8_t * out_qs) {
    for (int r = 0; r < nr; ++r) out_d[r] = ds[r];
    const int nchunks = qbytes * nr / blck;
    for (int c = 0; c < nchunks; ++c) {
        const int row = c % nr, off = (c / nr) * blck;
        for (int b = 0; b < blck; ++b) out_qs[c * blck + b] = qs[row][off + b] ^ xor_mask;
    }
}

static size_t quantize_q4_0_interleaved(const float * src, void * dst, int64_t nrows, int64_t n_per_row, int nr, int blck) {
    LM_GGML_ASSERT(n_per_row % LM_QK4_0 == 0);
    LM_GGML_ASSERT(nrows % nr == 0);
    const int64_t nb = n_per_row / LM_QK4_0;
    block_q4_0 tmp[8];
    const uint8_t * qs[8];
    lm_ggml_half ds[8];
    uint8_t * out = (uint8_t *) dst;
    const size_t out_size = (size_t) nr * sizeof(block_q4_0); // block_q4_0x4 / x8
    for (int64_t r0 = 0; r0 < nrows; r0 += nr) {
        for (int64_t b = 0; b < nb; ++b, out += out_size) {
            for (int r = 0; r < nr; ++r) {
                lm_quantize_row_q4_0_ref(src + (r0 + r) * n_per_row + b * LM_QK4_0, &tmp[r], LM_QK4_0);
                qs[r] = tmp[r].qs;
                ds[r] = tmp[r].d;
            }
            lm_ggml_half * od = (lm_ggml_half *) out;
            interleave_blocks(qs, ds, nr, LM_QK4_0 / 2, blck, 0x88, od, out + (size_t) nr * sizeof(lm_ggml_half));
        }
    }
    return (size_t) (nrows * n_per_row / LM_QK4_0) * sizeof(block_q4_0);
}

size_t lm_quantize_q4_0_4x4(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    (void) imatrix;
    return quantize_q4_0_interleaved(src, dst, nrows, n_per_row, 4, 4);
}

size_t lm_quantize_q4_0_4x8(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    (void) imatrix;
    return quantize_q4_0_interleaved(src, dst, nrows, n_per_row, 4, 8);
}

size_t lm_quantize_q4_0_8x8(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    (void) imatrix;
    return quantize_q4_0_interleaved(src, dst, nrows, n_per_row, 8, 8);
}

size_t lm_quantize_iq4_nl_4x4(const float * LM_GGML_RESTRICT src, void * LM_GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    (void) imatrix;
    LM_GGML_ASSERT(n_per_row % LM_QK4_NL == 0);
    LM_GGML_ASSERT(nrows % 4 == 0);
    const int64_t nb = n_per_row / LM_QK4_NL;
    block_iq4_nl tmp[4];
    const uint8_t * qs[4];
    lm_ggml_half ds[4];
    block_iq4_nlx4 * out = (block_iq4_nlx4 *) dst;
    for (int64_t r0 = 0; r0 < nrows; r0 += 4) {
        for (int64_t b = 0; b < nb; ++b, ++out) {
            for (int r = 0; r < 4; ++r) {
                lm_quantize_iq4_nl(src + (r0 + r) * n_per_row + b * LM_QK4_NL, &tmp[r], 1, LM_QK4_NL, NULL);
                qs[r] = tmp[r].qs;
                ds[r] = tmp[r].d;
            }
            interleave_blocks(qs, ds, 4, LM_QK4_NL / 2, 4, 0, out->d, out->qs);
        }
    }
    return (size_t) (nrows * n_per_row / LM_QK4_NL) * sizeof(block_iq4_nl);
}
