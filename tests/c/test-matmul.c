// test-matmul.c - mul_mat, mul_mat_id and out_prod against a naive
// double-precision reference: every weight type, odd sizes, single rows and
// columns, batched broadcast, permuted and transposed src1, 1/2/4 threads and
// every SIMD level the CPU has. Also the vec_dot of the CPU type traits.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-matmul.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "ggml-common.h"
#include "test-check.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "type-list.h"

static uint64_t g_rng = 88172645463325252ull;
static float frand(void) { // uniform [-1, 1)
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

// Fills t (any type, contiguous) from random floats; returns the values the
// tensor really holds, as f32 (dequantized), dense [ne0, nrows].
static float * fill_tensor(struct lm_ggml_tensor * t) {
    const int64_t n = lm_ggml_nelements(t), k = t->ne[0], nr = n / k;
    float * src = malloc(n * sizeof(float)), * back = malloc(n * sizeof(float));
    for (int64_t i = 0; i < n; i++) src[i] = frand();
    switch (t->type) {
        case LM_GGML_TYPE_F32: memcpy(t->data, src, n * 4); break;
        case LM_GGML_TYPE_F16: lm_ggml_fp32_to_fp16_row(src, t->data, n); break;
        case LM_GGML_TYPE_BF16: lm_ggml_fp32_to_bf16_row_ref(src, t->data, n); break;
        default: {
            float * imat = malloc(k * sizeof(float));
            for (int64_t i = 0; i < k; i++) imat[i] = 1.0f + 0.5f * frand();
            lm_ggml_quantize_chunk(t->type, src, t->data, 0, nr, k, imat);
            free(imat);
        }
    }
    if (t->type == LM_GGML_TYPE_F32) memcpy(back, src, n * 4);
    else lm_ggml_get_type_traits(t->type)->to_float(t->data, back, n);
    free(src);
    return back;
}

// With mag (sum of |a_k * b_k| per output), the error is measured against
// the magnitude of the terms: a single dot of random data can cancel to near
// zero, and the q8 rounding of activations is relative to the terms.
static double nmse_mag(const float * a, const double * ref, const double * mag, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += (a[i] - ref[i]) * (a[i] - ref[i]);
        den += mag ? mag[i] * mag[i] : ref[i] * ref[i];
    }
    return den > 0 ? num / den : num;
}
static double nmse(const float * a, const double * ref, int64_t n) { return nmse_mag(a, ref, NULL, n); }

static void check_nmse(const char * what, double e, double tol) {
    checkf(e <= tol, "%s: nmse %.3g > %.1g", what, e, tol);
}

// Types whose mul_mat quantizes the activations (integer dots) for few
// columns: the q8 rounding of the activations bounds their accuracy.
static bool is_int_path(enum lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q4_0: case LM_GGML_TYPE_Q4_1: case LM_GGML_TYPE_Q5_0: case LM_GGML_TYPE_Q5_1:
        case LM_GGML_TYPE_Q8_0: case LM_GGML_TYPE_Q2_K: case LM_GGML_TYPE_Q3_K: case LM_GGML_TYPE_Q4_K:
        case LM_GGML_TYPE_Q5_K: case LM_GGML_TYPE_Q6_K: case LM_GGML_TYPE_IQ4_NL: case LM_GGML_TYPE_IQ4_XS:
        case LM_GGML_TYPE_IQ2_XXS: case LM_GGML_TYPE_IQ2_XS: case LM_GGML_TYPE_IQ2_S: case LM_GGML_TYPE_IQ3_XXS:
        case LM_GGML_TYPE_IQ3_S: case LM_GGML_TYPE_IQ1_S: case LM_GGML_TYPE_IQ1_M: case LM_GGML_TYPE_TQ1_0:
        case LM_GGML_TYPE_TQ2_0:
            return true;
        default:
            return false;
    }
}

// bf16 weights at the AVX512_BF16 kernels' level dot with the columns
// rounded to bf16 (as the reference's vec_dot_type bf16 does): the exact
// result the tolerances measure against is then that of the rounded columns.
static bool g_round_act;
static double act(float v) { return g_round_act ? lm_ggml_bf16_to_fp32(lm_ggml_fp32_to_bf16(v)) : v; }

static const char * g_only_types; // argv[2]: the weight types to test, or NULL for all

// b layouts: 0 plain, 1 permuted (stored [K, ne2, N, ne3] and permuted 0 2 1 3), 2 transposed (stored [N, K])
static void test_mul_mat(enum lm_ggml_type ta, enum lm_ggml_type tb, int64_t K, int64_t M, int64_t N,
                         int64_t a2, int64_t a3, int64_t f2, int64_t f3, int layout, int nth) {
    if (!type_selected(g_only_types, lm_ggml_type_name(ta))) return;
    const int64_t b2 = a2 * f2, b3 = a3 * f3;
    struct lm_ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_4d(ctx, ta, K, M, a2, a3);
    float * av = fill_tensor(a);
    struct lm_ggml_tensor * bs, * b;
    if (layout == 1) {
        bs = lm_ggml_new_tensor_4d(ctx, tb, K, b2, N, b3);
    } else if (layout == 2) {
        bs = lm_ggml_new_tensor_4d(ctx, tb, N, K, b2, b3);
    } else {
        bs = lm_ggml_new_tensor_4d(ctx, tb, K, N, b2, b3);
    }
    float * bv = fill_tensor(bs);
    b = layout == 1 ? lm_ggml_permute(ctx, bs, 0, 2, 1, 3) : layout == 2 ? lm_ggml_transpose(ctx, bs) : bs;
    struct lm_ggml_tensor * d = lm_ggml_mul_mat(ctx, a, b);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, d);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
    g_round_act = ta == LM_GGML_TYPE_BF16 && lm_cpu_avx512bf16();

    const int64_t nd = M * N * b2 * b3;
    double * ref = malloc(nd * sizeof(double)), * mag = malloc(nd * sizeof(double));
    for (int64_t i3 = 0; i3 < b3; i3++)
    for (int64_t i2 = 0; i2 < b2; i2++)
    for (int64_t j = 0; j < N; j++)
    for (int64_t i = 0; i < M; i++) {
        const float * ar = av + ((i3 / f3) * a2 * M + (i2 / f2) * M + i) * K;
        double s = 0, sa = 0;
        for (int64_t k = 0; k < K; k++) {
            // element (k, j, i2, i3) of b in its storage
            int64_t idx;
            if (layout == 1)      idx = ((i3 * N + j) * b2 + i2) * K + k;
            else if (layout == 2) idx = ((i3 * b2 + i2) * K + k) * N + j;
            else                  idx = ((i3 * b2 + i2) * N + j) * K + k;
            s += (double) ar[k] * act(bv[idx]);
            sa += fabs((double) ar[k] * act(bv[idx]));
        }
        ref[((i3 * b2 + i2) * N + j) * M + i] = s;
        mag[((i3 * b2 + i2) * N + j) * M + i] = sa;
    }
    const bool ip_ = is_int_path(ta);
    const double tol = ip_ ? 1e-5 : (ta == LM_GGML_TYPE_F32 && tb == LM_GGML_TYPE_F32 ? 1e-10 : 1e-9);
    char what[256];
    snprintf(what, sizeof(what), "mul_mat %s x %s K=%lld M=%lld N=%lld a=[%lld,%lld] bcast=[%lld,%lld] layout=%d nth=%d level=%d",
             lm_ggml_type_name(ta), lm_ggml_type_name(tb), (long long) K, (long long) M, (long long) N, (long long) a2,
             (long long) a3, (long long) f2, (long long) f3, layout, nth, (int) lm_cpu_level());
    // against the size of the terms: a single dot of random data can cancel to near zero
    check_nmse(what, nmse_mag((const float *) d->data, ref, mag, nd), tol);
    free(ref); free(mag); free(av); free(bv);
    lm_ggml_free(ctx);
}

static void test_mul_mat_id(enum lm_ggml_type ta, int64_t K, int64_t M, int64_t n_as, int64_t n_used, int64_t n_b, int64_t n_tok, int nth) {
    if (!type_selected(g_only_types, lm_ggml_type_name(ta))) return;
    struct lm_ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * as = lm_ggml_new_tensor_3d(ctx, ta, K, M, n_as);
    float * av = fill_tensor(as);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, K, n_b, n_tok);
    float * bv = fill_tensor(b);
    struct lm_ggml_tensor * ids = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, n_used, n_tok);
    int32_t * id = ids->data;
    for (int64_t t = 0; t < n_tok; t++)
        for (int64_t e = 0; e < n_used; e++) id[t * n_used + e] = (int32_t)((t * 7 + e * 3 + (t % 3)) % n_as);
    struct lm_ggml_tensor * d = lm_ggml_mul_mat_id(ctx, as, b, ids);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, d);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
    g_round_act = ta == LM_GGML_TYPE_BF16 && lm_cpu_avx512bf16();
    const int64_t nd = M * n_used * n_tok;
    double * ref = malloc(nd * sizeof(double));
    for (int64_t t = 0; t < n_tok; t++)
        for (int64_t e = 0; e < n_used; e++)
            for (int64_t i = 0; i < M; i++) {
                const float * ar = av + (id[t * n_used + e] * M + i) * K;
                const float * br = bv + (t * n_b + e % n_b) * K;
                double s = 0;
                for (int64_t k = 0; k < K; k++) s += (double) ar[k] * act(br[k]);
                ref[(t * n_used + e) * M + i] = s;
            }
    char what[200];
    snprintf(what, sizeof(what), "mul_mat_id %s K=%lld M=%lld n_as=%lld used=%lld n_b=%lld tok=%lld nth=%d level=%d",
             lm_ggml_type_name(ta), (long long) K, (long long) M, (long long) n_as, (long long) n_used, (long long) n_b,
             (long long) n_tok, nth, (int) lm_cpu_level());
    check_nmse(what, nmse((const float *) d->data, ref, nd), is_int_path(ta) ? 5e-4 : 1e-9);
    free(ref); free(av); free(bv);
    lm_ggml_free(ctx);
}

static void test_out_prod(enum lm_ggml_type ta, int64_t m, int64_t n, int64_t p, int64_t a2, int64_t f2, bool bt, int nth) {
    if (!type_selected(g_only_types, lm_ggml_type_name(ta))) return;
    struct lm_ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_3d(ctx, ta, m, n, a2);
    float * av = fill_tensor(a);
    struct lm_ggml_tensor * bs = bt ? lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, n, p, a2 * f2)
                                    : lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, p, n, a2 * f2);
    float * bv = fill_tensor(bs);
    struct lm_ggml_tensor * b = bt ? lm_ggml_transpose(ctx, bs) : bs;
    struct lm_ggml_tensor * d = lm_ggml_out_prod(ctx, a, b);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, d);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
    const int64_t nd = m * p * a2 * f2;
    double * ref = malloc(nd * sizeof(double));
    for (int64_t i2 = 0; i2 < a2 * f2; i2++)
        for (int64_t i1 = 0; i1 < p; i1++)
            for (int64_t i0 = 0; i0 < m; i0++) {
                double s = 0;
                for (int64_t j = 0; j < n; j++) {
                    const double bj = bt ? bv[(i2 * p + i1) * n + j] : bv[(i2 * n + j) * p + i1];
                    s += (double) av[((i2 / f2) * n + j) * m + i0] * bj;
                }
                ref[(i2 * p + i1) * m + i0] = s;
            }
    char what[160];
    snprintf(what, sizeof(what), "out_prod %s m=%lld n=%lld p=%lld a2=%lld f2=%lld bt=%d nth=%d", lm_ggml_type_name(ta),
             (long long) m, (long long) n, (long long) p, (long long) a2, (long long) f2, bt, nth);
    check_nmse(what, nmse((const float *) d->data, ref, nd), 1e-10);
    free(ref); free(av); free(bv);
    lm_ggml_free(ctx);
}

// vec_dot of the CPU traits: weights x activations quantized with the
// traits' from_float of vec_dot_type, against the dequantized weights.
static void test_traits_vec_dot(enum lm_ggml_type t) {
    const struct lm_ggml_type_traits_cpu * tc = lm_ggml_get_type_traits_cpu(t);
    if (tc->vec_dot == NULL) return;
    const int64_t K = 1024;
    struct lm_ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, t, K);
    float * av = fill_tensor(a);
    float * y = malloc(K * 4);
    for (int64_t i = 0; i < K; i++) y[i] = frand();
    const struct lm_ggml_type_traits_cpu * tv = lm_ggml_get_type_traits_cpu(tc->vec_dot_type);
    void * yq = malloc(lm_ggml_row_size(tc->vec_dot_type, K));
    tv->from_float(y, yq, K);
    float s = 0;
    tc->vec_dot((int) K, &s, 0, a->data, 0, yq, 0, 1);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < K; i++) { ref += (double) av[i] * y[i]; mag += fabs((double) av[i] * y[i]); }
    char what[128];
    snprintf(what, sizeof(what), "traits vec_dot %s (vdt %s) level=%d", lm_ggml_type_name(t), lm_ggml_type_name(tc->vec_dot_type), (int) lm_cpu_level());
    const double err = fabs(s - ref) / (mag > 0 ? mag : 1);
    checkf(err < 2e-2, "%s: %g vs %g", what, s, ref);
    free(y); free(yq); free(av);
    lm_ggml_free(ctx);
}

// ---------------------------------------------------------------- integer dots against the format definition
//
// The traits vec_dot of each integer-kernel type against the weights as the
// format defines them (the type's to_float) times the activations as
// quantized, in double: only float rounding separates the two, so the
// tolerance is tight. Weights are random bytes (every bit pattern a block
// can hold) with sane fp16 scales written over the scale fields, plus
// quantizer output; odd block counts and activations of large range.

struct int_type { enum lm_ggml_type t; int f16_off[2]; }; // offsets of the fp16 fields (-1: none)
static const struct int_type g_int_types[] = {
    { LM_GGML_TYPE_Q4_0,   { offsetof(block_q4_0, d),   -1 } },
    { LM_GGML_TYPE_Q4_1,   { offsetof(block_q4_1, d),   offsetof(block_q4_1, m) } },
    { LM_GGML_TYPE_Q5_0,   { offsetof(block_q5_0, d),   -1 } },
    { LM_GGML_TYPE_Q5_1,   { offsetof(block_q5_1, d),   offsetof(block_q5_1, m) } },
    { LM_GGML_TYPE_Q8_0,   { offsetof(block_q8_0, d),   -1 } },
    { LM_GGML_TYPE_Q2_K,   { offsetof(block_q2_K, d),   offsetof(block_q2_K, dmin) } },
    { LM_GGML_TYPE_Q3_K,   { offsetof(block_q3_K, d),   -1 } },
    { LM_GGML_TYPE_Q4_K,   { offsetof(block_q4_K, d),   offsetof(block_q4_K, dmin) } },
    { LM_GGML_TYPE_Q5_K,   { offsetof(block_q5_K, d),   offsetof(block_q5_K, dmin) } },
    { LM_GGML_TYPE_Q6_K,   { offsetof(block_q6_K, d),   -1 } },
    { LM_GGML_TYPE_IQ4_NL, { offsetof(block_iq4_nl, d), -1 } },
    { LM_GGML_TYPE_IQ4_XS, { offsetof(block_iq4_xs, d), -1 } },
    { LM_GGML_TYPE_IQ2_XXS, { offsetof(block_iq2_xxs, d), -1 } },
    { LM_GGML_TYPE_IQ2_XS, { offsetof(block_iq2_xs, d), -1 } },
    { LM_GGML_TYPE_IQ2_S,  { offsetof(block_iq2_s, d),  -1 } },
    { LM_GGML_TYPE_IQ3_XXS, { offsetof(block_iq3_xxs, d), -1 } },
    { LM_GGML_TYPE_IQ3_S,  { offsetof(block_iq3_s, d),  -1 } },
    { LM_GGML_TYPE_IQ1_S,  { offsetof(block_iq1_s, d),  -1 } },
    { LM_GGML_TYPE_IQ1_M,  { -1, -1 } }, // its fp16 scale is spread over the scales field (iq1m_set_scale)
    { LM_GGML_TYPE_TQ1_0,  { offsetof(block_tq1_0, d),  -1 } },
    { LM_GGML_TYPE_TQ2_0,  { offsetof(block_tq2_0, d),  -1 } },
};

// iq1_m keeps its fp16 scale in the top nibbles of the four 16-bit words of scales.
static void iq1m_set_scale(block_iq1_m * b, lm_ggml_fp16_t h) {
    for (int i = 0; i < 4; i++) {
        const uint16_t w = (uint16_t)((b->scales[2 * i] | b->scales[2 * i + 1] << 8) & 0x0FFF) | (uint16_t)(((h >> 4 * i) & 0xF) << 12);
        b->scales[2 * i] = (uint8_t) w;
        b->scales[2 * i + 1] = (uint8_t)(w >> 8);
    }
}

static uint8_t rand_byte(void) {
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (uint8_t)(g_rng >> 32);
}

// Activation element j of a quantized row, and (q8_1) the correction that
// makes the reference use the stored block sum s as the kernels do: x = d*q
// + m meets y through m * s, and s is d_y*sum(q_y) rounded to fp16.
static double act_value(enum lm_ggml_type vdt, const void * y, int64_t j) {
    switch (vdt) {
        case LM_GGML_TYPE_Q8_0: { const block_q8_0 * b = (const block_q8_0 *) y + j / QK8_0;
                                  return (double) LM_GGML_FP16_TO_FP32(b->d) * b->qs[j % QK8_0]; }
        case LM_GGML_TYPE_Q8_1: { const block_q8_1 * b = (const block_q8_1 *) y + j / QK8_1;
                                  return (double) LM_GGML_FP16_TO_FP32(b->d) * b->qs[j % QK8_1]; }
        default:                { const block_q8_K * b = (const block_q8_K *) y + j / QK_K;
                                  return (double) b->d * b->qs[j % QK_K]; }
    }
}

static double q8_1_sum_correction(const struct int_type * it, const void * x, const void * y, int64_t nblk) {
    double c = 0;
    const size_t ts = lm_ggml_type_size(it->t);
    for (int64_t ib = 0; ib < nblk; ib++) {
        const block_q8_1 * b = (const block_q8_1 *) y + ib;
        int sq = 0;
        for (int j = 0; j < QK8_1; j++) sq += b->qs[j];
        const double m = LM_GGML_FP16_TO_FP32(*(const lm_ggml_fp16_t *)((const char *) x + ib * ts + it->f16_off[1]));
        c += m * ((double) LM_GGML_FP16_TO_FP32(b->s) - (double) LM_GGML_FP16_TO_FP32(b->d) * sq);
    }
    return c;
}

static void test_int_dot(const struct int_type * it, int64_t nblk, bool random_bytes, float yscale) {
    const enum lm_ggml_type t = it->t;
    const struct lm_ggml_type_traits_cpu * tc = lm_ggml_get_type_traits_cpu(t);
    const enum lm_ggml_type vdt = tc->vec_dot_type;
    const int64_t K = nblk * lm_ggml_blck_size(t);
    const size_t ts = lm_ggml_type_size(t);
    uint8_t * x = malloc(nblk * ts);
    float * xf = malloc(K * sizeof(float)), * yf = malloc(K * sizeof(float));
    void * y = malloc(lm_ggml_row_size(vdt, K));
    if (random_bytes) {
        for (size_t i = 0; i < nblk * ts; i++) x[i] = rand_byte();
        if (t == LM_GGML_TYPE_Q8_0) { // -128 is outside what the q8_0 kernels accept (quantizers never write it)
            for (size_t i = 0; i < nblk * ts; i++) if (x[i] == 0x80) x[i] = 0x81;
        }
        for (int64_t ib = 0; ib < nblk; ib++)
            for (int f = 0; f < 2; f++)
                if (it->f16_off[f] >= 0) {
                    const lm_ggml_fp16_t h = LM_GGML_FP32_TO_FP16(0.01f + 0.02f * (frand() + 1.0f));
                    memcpy(x + ib * ts + it->f16_off[f], &h, sizeof(h));
                }
        if (t == LM_GGML_TYPE_IQ1_M)
            for (int64_t ib = 0; ib < nblk; ib++)
                iq1m_set_scale((block_iq1_m *)(x + ib * ts), LM_GGML_FP32_TO_FP16(0.01f + 0.02f * (frand() + 1.0f)));
    } else {
        for (int64_t i = 0; i < K; i++) xf[i] = frand();
        float * imat = malloc(K * sizeof(float)); // the i-quants need one
        for (int64_t i = 0; i < K; i++) imat[i] = 1.0f + 0.5f * frand();
        lm_ggml_quantize_chunk(t, xf, x, 0, 1, K, imat);
        free(imat);
    }
    lm_ggml_get_type_traits(t)->to_float(x, xf, K);
    for (int64_t i = 0; i < K; i++) yf[i] = yscale * frand();
    lm_ggml_get_type_traits_cpu(vdt)->from_float(yf, y, K);
    float got = 0;
    tc->vec_dot((int) K, &got, 0, x, 0, y, 0, 1);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < K; i++) {
        const double p = (double) xf[i] * act_value(vdt, y, i);
        ref += p;
        mag += fabs(p);
    }
    if (vdt == LM_GGML_TYPE_Q8_1) ref += q8_1_sum_correction(it, x, y, nblk);
    const double err = fabs(got - ref) / (mag > 0 ? mag : 1);
    checkf(err < 2e-6, "int dot %s x %s blocks=%lld %s yscale=%g level=%d: %.9g vs %.9g (rel %.3g)", lm_ggml_type_name(t),
           lm_ggml_type_name(vdt), (long long) nblk, random_bytes ? "random-bytes" : "quantized", yscale,
           (int) lm_cpu_level(), got, ref, err);
    free(x); free(xf); free(yf); free(y);
}

static void test_int_dots(void) {
    // a stream of its own: the other tests see the same data as without this one
    const uint64_t saved = g_rng;
    g_rng = 0x9E3779B97F4A7C15ull;
    const int64_t nblks[] = { 1, 3, 8, 17 };
    for (size_t i = 0; i < sizeof(g_int_types) / sizeof(g_int_types[0]); i++)
        for (size_t b = 0; b < sizeof(nblks) / sizeof(nblks[0]); b++)
            for (int rep = 0; rep < 4; rep++) {
                // large activations: q8_1's fp16 block sum s must stay finite (|s| <= 32 * 1e3)
                test_int_dot(&g_int_types[i], nblks[b], true, rep == 3 ? 1e3f : 1.0f);
                test_int_dot(&g_int_types[i], nblks[b], false, rep == 3 ? 1e-3f : 1.0f);
            }
    g_rng = saved;
}

// usage: test-matmul [level [types]]   (level: 0 scalar, 1 AVX2, 2 AVX-512, 3 NEON, 4 NEON with dotprod, -1 all
//        (default); types: comma-separated weight type names, e.g. f32,f16,bf16; default all)
int main(int argc, char ** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const int only_level = argc > 1 ? atoi(argv[1]) : -1;
    g_only_types = argc > 2 ? argv[2] : NULL;
    const enum lm_ggml_type types[] = {
        LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16, LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0,
        LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K,
        LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_IQ3_S, LM_GGML_TYPE_IQ2_XXS,
        LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0,
    };
    const int ntypes = sizeof(types) / sizeof(types[0]);
    for (int level = 0; level <= 4; level++) { // scalar, AVX2, AVX-512, NEON, NEON+dotprod
        if (only_level >= 0 && level != only_level) continue;
        if (!lm_cpu_force_level(level)) { printf("level %d not available, skipped\n", level); continue; }
        if (g_only_types == NULL) test_int_dots();
        for (int ti = 0; ti < ntypes; ti++) {
            const enum lm_ggml_type t = types[ti];
            if (!type_selected(g_only_types, lm_ggml_type_name(t))) continue;
            const int64_t bk = lm_ggml_blck_size(t);
            const int64_t K1 = bk == 1 ? 37 : bk * 2, K2 = bk == 1 ? 256 : bk * 4;
            test_traits_vec_dot(t);
            for (int nth = 1; nth <= 4; nth *= 2) {
                test_mul_mat(t, LM_GGML_TYPE_F32, K1, 13, 7, 1, 1, 1, 1, 0, nth);
                test_mul_mat(t, LM_GGML_TYPE_F32, K2, 1, 1, 1, 1, 1, 1, 0, nth);
                test_mul_mat(t, LM_GGML_TYPE_F32, K2, 70, 1, 1, 1, 1, 1, 0, nth);
                test_mul_mat(t, LM_GGML_TYPE_F32, K1, 9, 19, 2, 1, 3, 2, 0, nth);
                test_mul_mat(t, LM_GGML_TYPE_F32, K2, 33, 6, 1, 2, 2, 1, 1, nth);
                test_mul_mat(t, LM_GGML_TYPE_F32, K1, 5, 4, 1, 1, 2, 1, 2, nth);
                test_mul_mat(t, LM_GGML_TYPE_F16, K1, 6, 5, 1, 1, 1, 1, 0, nth);
                test_mul_mat(t, LM_GGML_TYPE_BF16, K1, 6, 3, 1, 1, 1, 1, 2, nth);
                test_mul_mat(t, LM_GGML_TYPE_F32, K1, 5, 33, 1, 1, 1, 1, 0, nth); // many columns in one call
                test_mul_mat_id(t, K1, 11, 4, 3, 1, 5, nth);
                test_mul_mat_id(t, K2, 17, 6, 2, 2, 9, nth);
            }
        }
        for (int nth = 1; nth <= 4; nth *= 2) {
            test_mul_mat(LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, 512, 257, 67, 1, 1, 1, 1, 0, nth);
            test_mul_mat(LM_GGML_TYPE_F16, LM_GGML_TYPE_F32, 512, 130, 45, 1, 1, 1, 1, 0, nth);
            // long rows (over MM_PF_ROW bytes: prefetched ahead) ending in a
            // half step of 16 elements and a tail, as a mat-vec and in a batch
            for (int fi = 0; fi < 3; fi++) {
                const enum lm_ggml_type ft[3] = { LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16 };
                test_mul_mat(ft[fi], LM_GGML_TYPE_F32, 1077, 19, 1, 1, 1, 1, 1, 0, nth);
                test_mul_mat(ft[fi], LM_GGML_TYPE_F32, 1077, 19, 3, 1, 1, 1, 1, 0, nth);
            }
            test_mul_mat(LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_F32, 1024, 96, 33, 1, 1, 1, 1, 0, nth);
            test_mul_mat(LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_F32, 256, 70, 45, 2, 1, 2, 1, 1, nth);
            test_mul_mat(LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_F32, 512, 19, 64, 1, 1, 1, 1, 2, nth);
            test_out_prod(LM_GGML_TYPE_F32, 12, 7, 9, 1, 1, false, nth);
            test_out_prod(LM_GGML_TYPE_F32, 33, 20, 18, 2, 2, true, nth);
            test_out_prod(LM_GGML_TYPE_F16, 16, 5, 3, 1, 1, false, nth);
            test_out_prod(LM_GGML_TYPE_Q8_0, 64, 5, 4, 1, 2, true, nth);
        }
    }
    lm_cpu_force_level(-1);
    return check_summary();
}
