// test-ops-elem.c - unit tests of the elementwise / unary / reduce / norm /
// shape / custom-map ops against straightforward double-precision references,
// covering what the parity cases do not: broadcasting variants, strided
// inputs, f16/bf16/quantized operands, inplace views, ALiBi, f16 masks,
// custom ops with n_tasks, and the constructors' argument checks.
// Every case runs with 1, 2 and 4 threads at every available SIMD level and
// must give identical bits in all runs of a level, and the AVX-512 level
// the AVX2 level's bits.
//
// Build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-ops-elem.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- helpers

static uint64_t g_rng;
static float frand(float lo, float hi) {
    g_rng = g_rng*6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((g_rng >> 40) / 16777216.0);
}

static struct lm_ggml_tensor * rnd(struct lm_ggml_context * ctx, enum lm_ggml_type t, int64_t n0, int64_t n1, int64_t n2, int64_t n3, float lo, float hi) {
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_4d(ctx, t, n0, n1, n2, n3);
    const int64_t n = lm_ggml_nelements(x);
    float * f = malloc(sizeof(float) * n);
    for (int64_t i = 0; i < n; i++) f[i] = frand(lo, hi);
    if (t == LM_GGML_TYPE_F32) memcpy(x->data, f, n*sizeof(float));
    else lm_type_from_f32_row(t)(f, x->data, n);
    free(f);
    return x;
}

// element (i0..i3) of any float-convertible tensor
static double at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = (const char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
    switch (t->type) {
        case LM_GGML_TYPE_F32:  return *(const float *)(p + i0*t->nb[0]);
        case LM_GGML_TYPE_F16:  return lm_ggml_fp16_to_fp32(*(const lm_ggml_fp16_t *)(p + i0*t->nb[0]));
        case LM_GGML_TYPE_BF16: return lm_ggml_bf16_to_fp32(*(const lm_ggml_bf16_t *)(p + i0*t->nb[0]));
        case LM_GGML_TYPE_I32:  return *(const int32_t *)(p + i0*t->nb[0]);
        case LM_GGML_TYPE_I64:  return (double) *(const int64_t *)(p + i0*t->nb[0]);
        default: {
            float buf[4096];
            lm_type_to_f32_row(t->type)(p, buf, t->ne[0]);
            return buf[i0];
        }
    }
}

// All elements in logical order.
static double * values(const struct lm_ggml_tensor * t) {
    const int64_t n = lm_ggml_nelements(t);
    double * v = malloc(sizeof(double) * (n ? n : 1));
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++) for (int64_t i0 = 0; i0 < t->ne[0]; i0++) v[k++] = at(t, i0, i1, i2, i3);
    return v;
}

// A test builds its graph output in a fresh context and fills the expected
// values (from the inputs, before compute). Inputs are the same every call.
typedef struct lm_ggml_tensor * (*build_fn)(struct lm_ggml_context * ctx, double ** expect);

static void run(const char * name, build_fn build, double tol) {
    static const int threads[] = { 1, 2, 4 };
    const int levels[] = { LM_CPU_LEVEL_SCALAR, LM_CPU_LEVEL_AVX2, LM_CPU_LEVEL_AVX512 };
    double * first = NULL, * avx2 = NULL;
    int64_t nfirst = 0, navx2 = 0;
    double worst = 0;
    int fail = 0;
    for (int li = 0; li < 3; li++) {
        if (!lm_cpu_force_level(levels[li])) continue;
        for (int ti = 0; ti < 3; ti++) {
            g_rng = 0x1234567ull;
            struct lm_ggml_init_params ip = { 64u << 20, NULL, false };
            struct lm_ggml_context * ctx = lm_ggml_init(ip);
            double * expect = NULL;
            struct lm_ggml_tensor * out = build(ctx, &expect);
            struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
            lm_ggml_build_forward_expand(gf, out);
            lm_ggml_graph_compute_with_ctx(ctx, gf, threads[ti]);
            const int64_t n = lm_ggml_nelements(out);
            double * got = values(out);
            double num = 0, den = 0;
            for (int64_t i = 0; i < n; i++) {
                if (isnan(expect[i]) && isnan(got[i])) continue;
                if (isinf(expect[i]) && expect[i] == got[i]) continue;
                num += (got[i] - expect[i])*(got[i] - expect[i]);
                den += expect[i]*expect[i];
            }
            const double err = den > 0 ? num/den : num;
            if (err > worst) worst = err;
            if (!(err <= tol)) {
                if (!fail) printf("  %s: nmse %.3g > %.1g (threads %d level %d)\n", name, err, tol, threads[ti], levels[li]);
                fail = 1;
            }
            // bits must match the 1-thread run of the same level, and the
            // AVX-512 level the AVX2 one's
            if (ti == 0 && levels[li] == LM_CPU_LEVEL_AVX512 && avx2 != NULL &&
                (n != navx2 || memcmp(avx2, got, sizeof(double)*n) != 0)) {
                if (!fail) printf("  %s: the AVX-512 level differs from the AVX2 one\n", name);
                fail = 1;
            }
            if (ti == 0) {
                if (levels[li] == LM_CPU_LEVEL_AVX2) {
                    avx2 = malloc(sizeof(double) * (n ? n : 1));
                    memcpy(avx2, got, sizeof(double) * n);
                    navx2 = n;
                }
                free(first); first = got; nfirst = n; got = NULL;
            } else if (n != nfirst || memcmp(first, got, sizeof(double)*n) != 0) {
                if (!fail) printf("  %s: threads %d differ from 1 thread (level %d)\n", name, threads[ti], levels[li]);
                fail = 1;
            }
            free(got);
            free(expect);
            lm_ggml_free(ctx);
        }
    }
    lm_cpu_force_level(-1);
    free(first);
    free(avx2);
    if (!fail) printf("ok   %-34s worst nmse %.3g\n", name, worst);
    checkf(!fail, "%-34s worst nmse %.3g", name, worst);
}

static double * alloc_expect(const struct lm_ggml_tensor * t) { return malloc(sizeof(double) * (lm_ggml_nelements(t) + 1)); }

// expected[i] = f(a[i], b[broadcast i]) over the shape of a
static double * expect_binary(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b, double (*f)(double, double)) {
    double * e = alloc_expect(a);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++) for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < a->ne[1]; i1++) for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
        e[k++] = f(at(a, i0, i1, i2, i3), at(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]));
    }
    return e;
}
static double f_add(double x, double y) { return (float)((float) x + (float) y); }
static double f_sub(double x, double y) { return (float)((float) x - (float) y); }
static double f_mul(double x, double y) { return (float)((float) x * (float) y); }
static double f_div(double x, double y) { return (float)((float) x / (float) y); }

// ---------------------------------------------------------------- binary

static struct lm_ggml_tensor * t_add_rowbcast(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 1000, 7, 3, 2, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 1000, 1, 3, 1, -1, 1);
    *e = expect_binary(a, b, f_add);
    return lm_ggml_add(ctx, a, b);
}
static struct lm_ggml_tensor * t_mul_colbcast(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 37, 9, 2, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 1, 9, 1, 1, -1, 1);
    *e = expect_binary(a, b, f_mul);
    return lm_ggml_mul(ctx, a, b);
}
static struct lm_ggml_tensor * t_sub_partial0(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 48, 5, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 16, 5, 1, 1, -1, 1);
    *e = expect_binary(a, b, f_sub);
    return lm_ggml_sub(ctx, a, b);
}
static struct lm_ggml_tensor * t_div_strided(struct lm_ggml_context * ctx, double ** e) {
    // src0 permuted (nb[0] != 4), src1 transposed
    struct lm_ggml_tensor * a0 = rnd(ctx, LM_GGML_TYPE_F32, 6, 11, 4, 1, -1, 1);
    struct lm_ggml_tensor * b0 = rnd(ctx, LM_GGML_TYPE_F32, 4, 11, 1, 1, 0.5f, 2);
    struct lm_ggml_tensor * a = lm_ggml_permute(ctx, a0, 2, 1, 0, 3); // [4, 11, 6]
    struct lm_ggml_tensor * b = lm_ggml_cont(ctx, b0);
    *e = expect_binary(a, b0, f_div);
    (void) b;
    return lm_ggml_div(ctx, a, b0);
}
static struct lm_ggml_tensor * t_mul_src1_strided(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a  = rnd(ctx, LM_GGML_TYPE_F32, 9, 13, 1, 1, -1, 1);
    struct lm_ggml_tensor * b0 = rnd(ctx, LM_GGML_TYPE_F32, 13, 9, 1, 1, -1, 1);
    struct lm_ggml_tensor * b  = lm_ggml_transpose(ctx, b0);
    *e = expect_binary(a, b, f_mul);
    return lm_ggml_mul(ctx, a, b);
}
static struct lm_ggml_tensor * t_add_inplace(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 70, 3, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 70, 1, 1, 1, -1, 1);
    *e = expect_binary(a, b, f_add);
    struct lm_ggml_tensor * r = lm_ggml_add_inplace(ctx, a, b);
    check(r->data == a->data && r->view_src == a, "add_inplace: not a view of a");
    return r;
}
static struct lm_ggml_tensor * t_add_f16_bcast(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F16, 600, 4, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 600, 1, 1, 1, -1, 1);
    double * x = expect_binary(a, b, f_add);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) x[i] = lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16((float) x[i]));
    *e = x;
    return lm_ggml_add(ctx, a, b);
}
static struct lm_ggml_tensor * t_mul_bf16_bf16(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_BF16, 40, 4, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_BF16, 40, 4, 1, 1, -1, 1);
    double * x = expect_binary(a, b, f_mul);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) x[i] = lm_ggml_bf16_to_fp32(lm_ggml_fp32_to_bf16((float) x[i]));
    *e = x;
    return lm_ggml_mul(ctx, a, b);
}
static struct lm_ggml_tensor * t_add_q8_0(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_Q8_0, 64, 5, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 64, 5, 1, 1, -0.1f, 0.1f);
    double * x = expect_binary(a, b, f_add);
    // the reference result is the sum re-quantized: do the same per row
    float row[64], q[64];
    char qb[34*2];
    for (int r = 0; r < 5; r++) {
        for (int i = 0; i < 64; i++) row[i] = (float) x[r*64 + i];
        lm_type_from_f32_row(LM_GGML_TYPE_Q8_0)(row, qb, 64);
        lm_type_to_f32_row(LM_GGML_TYPE_Q8_0)(qb, q, 64);
        for (int i = 0; i < 64; i++) x[r*64 + i] = q[i];
    }
    *e = x;
    return lm_ggml_add(ctx, a, b);
}
static struct lm_ggml_tensor * t_add_cast_f16_f32(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F16, 33, 6, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 33, 1, 1, 1, -1, 1);
    *e = expect_binary(a, b, f_add);
    struct lm_ggml_tensor * r = lm_ggml_add_cast(ctx, a, b, LM_GGML_TYPE_F32);
    check(r->type == LM_GGML_TYPE_F32, "add_cast: wrong type");
    return r;
}
static struct lm_ggml_tensor * t_add1(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 21, 4, 3, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 1, 1, 1, 1, -1, 1);
    *e = expect_binary(a, b, f_add);
    return lm_ggml_add1(ctx, a, b);
}
static struct lm_ggml_tensor * t_add1_f16(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F16, 21, 4, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F16, 1, 1, 1, 1, -1, 1);
    double * x = expect_binary(a, b, f_add);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) x[i] = lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16((float) x[i]));
    *e = x;
    return lm_ggml_add1_inplace(ctx, a, b);
}

static struct lm_ggml_tensor * acc_common(struct lm_ggml_context * ctx, double ** e, bool inplace) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 10, 8, 3, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 4, 3, 2, 1, -1, 1);
    const size_t off = 2*a->nb[1] + 3*sizeof(float);
    double * x = values(a);
    for (int i2 = 0; i2 < 2; i2++) for (int i1 = 0; i1 < 3; i1++) for (int i0 = 0; i0 < 4; i0++) {
        const size_t byte = off + i0*4 + i1*a->nb[1] + i2*a->nb[2];
        x[byte/4] = (float)((float) x[byte/4] + (float) at(b, i0, i1, i2, 0));
    }
    *e = x;
    return inplace ? lm_ggml_acc_inplace(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off)
                   : lm_ggml_acc(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off);
}
static struct lm_ggml_tensor * t_acc(struct lm_ggml_context * ctx, double ** e) { return acc_common(ctx, e, false); }
static struct lm_ggml_tensor * t_acc_inplace(struct lm_ggml_context * ctx, double ** e) { return acc_common(ctx, e, true); }

// ---------------------------------------------------------------- unary

static double g_gelu(double x) { return 0.5*x*(1.0 + tanh(0.7978845608028654*x*(1.0 + 0.044715*x*x))); }
static double g_gelu_quick(double x) { return x/(1.0 + exp(-1.702*x)); }
static double g_silu(double x) { return x/(1.0 + exp(-x)); }
static double g_elu(double x) { return x > 0 ? x : expm1(x); }
static double g_hswish(double x) { return x*fmin(1.0, fmax(0.0, (x + 3.0)/6.0)); }

static enum lm_ggml_unary_op g_uop;
static double (*g_uref)(double);
static int64_t g_un = 1029, g_urows = 3;

static struct lm_ggml_tensor * t_unary(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, g_un, g_urows, 1, 1, -8, 8);
    double * x = values(a);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) x[i] = g_uref(x[i]);
    *e = x;
    return lm_ggml_unary(ctx, a, g_uop);
}

static struct lm_ggml_tensor * t_silu_f16(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F16, 100, 3, 1, 1, -8, 8);
    double * x = values(a);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) x[i] = g_silu(x[i]);
    *e = x;
    return lm_ggml_silu(ctx, a);
}

static struct lm_ggml_tensor * t_silu_extreme(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 24);
    static const float v[24] = { -200, -100, -90, -88, -87, -80, -50, -20, -1, -1e-30f, 0, 1e-30f,
                                 1, 20, 50, 80, 87, 88, 88.7f, 89, 100, 200, 1e30f, -1e30f };
    memcpy(a->data, v, sizeof(v));
    double * x = malloc(sizeof(double)*24);
    for (int i = 0; i < 24; i++) x[i] = (float) g_silu(v[i]);
    *e = x;
    return lm_ggml_silu(ctx, a);
}

static struct lm_ggml_tensor * t_scale_inplace(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 301, 5, 1, 1, -1, 1);
    double * x = values(a);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) x[i] = (float)((float) x[i] * 0.37f);
    *e = x;
    return lm_ggml_scale_inplace(ctx, a, 0.37f);
}
static struct lm_ggml_tensor * t_clamp_f16(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F16, 31, 5, 1, 1, -1, 1);
    double * x = values(a);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) x[i] = fmax(fmin(x[i], 0.25), -0.5);
    *e = x;
    struct lm_ggml_tensor * r = lm_ggml_clamp(ctx, a, -0.5f, 0.25f);
    check(r->view_src == a, "clamp: not a view of a");
    return r;
}
static struct lm_ggml_tensor * t_silu_back(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 70, 3, 1, 1, -5, 5);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, 70, 3, 1, 1, -1, 1);
    double * x = values(a), * d = values(b);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) {
        const double s = 1.0/(1.0 + exp(-x[i]));
        x[i] = d[i]*s*(1.0 + x[i]*(1.0 - s));
    }
    free(d);
    *e = x;
    return lm_ggml_silu_back(ctx, a, b);
}
static struct lm_ggml_tensor * t_sqrt_permuted(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a0 = rnd(ctx, LM_GGML_TYPE_F32, 7, 5, 3, 1, 0.01f, 4);
    struct lm_ggml_tensor * a = lm_ggml_permute(ctx, a0, 1, 0, 2, 3);
    double * x = values(a);
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) x[i] = sqrt(x[i]);
    *e = x;
    return lm_ggml_sqrt(ctx, a);
}

// ---------------------------------------------------------------- norms, soft_max

static struct lm_ggml_tensor * t_rms_norm_long(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 4099, 6, 1, 1, -3, 3);
    double * x = values(a);
    for (int r = 0; r < 6; r++) {
        double s = 0;
        for (int i = 0; i < 4099; i++) s += x[r*4099 + i]*x[r*4099 + i];
        const double k = 1.0/sqrt(s/4099 + 1e-5);
        for (int i = 0; i < 4099; i++) x[r*4099 + i] *= k;
    }
    *e = x;
    return lm_ggml_rms_norm(ctx, a, 1e-5f);
}
static struct lm_ggml_tensor * t_norm_long(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 3000, 4, 1, 1, -3, 5);
    double * x = values(a);
    for (int r = 0; r < 4; r++) {
        double m = 0, v = 0;
        for (int i = 0; i < 3000; i++) m += x[r*3000 + i];
        m /= 3000;
        for (int i = 0; i < 3000; i++) v += (x[r*3000 + i] - m)*(x[r*3000 + i] - m);
        const double k = 1.0/sqrt(v/3000 + 1e-5);
        for (int i = 0; i < 3000; i++) x[r*3000 + i] = (x[r*3000 + i] - m)*k;
    }
    *e = x;
    return lm_ggml_norm_inplace(ctx, a, 1e-5f);
}
static struct lm_ggml_tensor * t_group_norm(struct lm_ggml_context * ctx, double ** e) {
    const int n0 = 5, n1 = 4, n2 = 10, n3 = 2, G = 3; // 10 channels in groups of 4,4,2
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, n0, n1, n2, n3, -2, 3);
    double * x = values(a);
    const int per = (n2 + G - 1)/G;
    for (int i3 = 0; i3 < n3; i3++) for (int g = 0; g < G; g++) {
        const int c0 = g*per, c1 = c0 + per < n2 ? c0 + per : n2;
        double m = 0, v = 0; int cnt = 0;
        for (int c = c0; c < c1; c++) for (int j = 0; j < n0*n1; j++) { m += x[((i3*n2 + c)*n1*n0) + j]; cnt++; }
        m /= cnt;
        for (int c = c0; c < c1; c++) for (int j = 0; j < n0*n1; j++) { const double d = x[((i3*n2 + c)*n1*n0) + j] - m; v += d*d; }
        const double k = 1.0/sqrt(v/cnt + 1e-6);
        for (int c = c0; c < c1; c++) for (int j = 0; j < n0*n1; j++) x[((i3*n2 + c)*n1*n0) + j] = (x[((i3*n2 + c)*n1*n0) + j] - m)*k;
    }
    *e = x;
    return lm_ggml_group_norm(ctx, a, G, 1e-6f);
}
static struct lm_ggml_tensor * t_rms_norm_back(struct lm_ggml_context * ctx, double ** e) {
    const int n = 300;
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, n, 3, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, n, 3, 1, 1, -1, 1);
    double * x = values(a), * dy = values(b);
    const double eps = 1e-6;
    for (int r = 0; r < 3; r++) {
        double sxx = 0, sxd = 0;
        for (int i = 0; i < n; i++) { sxx += x[r*n + i]*x[r*n + i]; sxd += x[r*n + i]*dy[r*n + i]; }
        const double ms = sxx/n + eps, rr = 1.0/sqrt(ms);
        for (int i = 0; i < n; i++) x[r*n + i] = (dy[r*n + i] - x[r*n + i]*(sxd/n)/ms)*rr;
    }
    free(dy);
    *e = x;
    return lm_ggml_rms_norm_back(ctx, a, b, (float) eps);
}

// softmax of a row of nc values, in place, in double
static void softmax_d(double * row, int64_t nc) {
    double mx = -INFINITY, s = 0;
    for (int64_t i = 0; i < nc; i++) if (row[i] > mx) mx = row[i];
    for (int64_t i = 0; i < nc; i++) { row[i] = exp(row[i] - mx); s += row[i]; }
    for (int64_t i = 0; i < nc; i++) row[i] /= s;
}

static int g_mask_f16;
static float g_max_bias;
static struct lm_ggml_tensor * t_soft_max_ext(struct lm_ggml_context * ctx, double ** e) {
    const int nc = 77, nr = 5, nh = 6;
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, nc, nr, nh, 1, -5, 5);
    struct lm_ggml_tensor * m = rnd(ctx, g_mask_f16 ? LM_GGML_TYPE_F16 : LM_GGML_TYPE_F32, nc, nr + 3, 1, 1, -2, 0);
    // a masked-out tail, as in causal attention
    for (int r = 0; r < nr + 3; r++) for (int i = nc - 5; i < nc; i++) {
        if (g_mask_f16) ((lm_ggml_fp16_t *) m->data)[r*nc + i] = lm_ggml_fp32_to_fp16(-INFINITY);
        else ((float *) m->data)[r*nc + i] = -INFINITY;
    }
    const float scale = 0.3f;
    double * x = values(a);
    const int nlog2 = 1 << (int) floor(log2(nh));
    const double m0 = pow(2.0, -g_max_bias/nlog2), m1 = pow(2.0, -(g_max_bias/2.0)/nlog2);
    for (int h = 0; h < nh; h++) for (int r = 0; r < nr; r++) {
        const double slope = g_max_bias > 0 ? (h < nlog2 ? pow(m0, h + 1) : pow(m1, 2*(h - nlog2) + 1)) : 1.0;
        double * row = x + (h*nr + r)*nc;
        for (int i = 0; i < nc; i++) row[i] = row[i]*scale + slope*at(m, i, r, 0, 0);
        softmax_d(row, nc);
    }
    *e = x;
    return lm_ggml_soft_max_ext(ctx, a, m, scale, g_max_bias);
}

// exponents from 0 down past the float range (the vector exp's flush to 0),
// in rows of g_sm_nc: 16 k + 11 and 16 k + 8 (a half step, and a scalar
// tail, at the AVX-512 level) and 7 (the scalar tail alone)
static int64_t g_sm_nc;
static struct lm_ggml_tensor * t_soft_max_wide(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, g_sm_nc, 4, 1, 1, -150, 30);
    double * x = values(a);
    for (int r = 0; r < 4; r++) softmax_d(x + r*g_sm_nc, g_sm_nc);
    *e = x;
    return lm_ggml_soft_max(ctx, a);
}

// labels: a softmax of other logits, as in training
static struct lm_ggml_tensor * ce_labels(struct lm_ggml_context * ctx, int64_t nc, int64_t nr) {
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F32, nc, nr, 1, 1, -5, 5);
    double * y = values(b);
    for (int64_t r = 0; r < nr; r++) softmax_d(y + r*nc, nc);
    for (int64_t i = 0; i < nc*nr; i++) ((float *) b->data)[i] = (float) y[i];
    free(y);
    return b;
}

// -sum(labels * log softmax(logits)) / rows
static struct lm_ggml_tensor * t_cross_entropy(struct lm_ggml_context * ctx, double ** e) {
    const int64_t nc = g_sm_nc, nr = 5;
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, nc, nr, 1, 1, -40, 10);
    struct lm_ggml_tensor * b = ce_labels(ctx, nc, nr);
    double * x = values(a), * y = values(b), loss = 0;
    for (int64_t r = 0; r < nr; r++) {
        double * row = x + r*nc, mx = -INFINITY, s = 0;
        for (int64_t i = 0; i < nc; i++) if (row[i] > mx) mx = row[i];
        for (int64_t i = 0; i < nc; i++) s += exp(row[i] - mx);
        for (int64_t i = 0; i < nc; i++) loss -= y[r*nc + i] * (row[i] - mx - log(s));
    }
    free(x); free(y);
    *e = alloc_expect(a);
    (*e)[0] = loss / (double) nr;
    return lm_ggml_cross_entropy_loss(ctx, a, b);
}

// (softmax(logits) - labels) * dloss / rows
static struct lm_ggml_tensor * t_cross_entropy_back(struct lm_ggml_context * ctx, double ** e) {
    const int64_t nc = g_sm_nc, nr = 5;
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, nc, nr, 1, 1, -40, 10);
    struct lm_ggml_tensor * b = ce_labels(ctx, nc, nr);
    struct lm_ggml_tensor * d = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 1);
    *(float *) d->data = 0.75f;
    double * x = values(a), * y = values(b);
    for (int64_t r = 0; r < nr; r++) softmax_d(x + r*nc, nc);
    for (int64_t i = 0; i < nc*nr; i++) x[i] = (x[i] - y[i]) * 0.75 / (double) nr;
    free(y);
    *e = x;
    return lm_ggml_cross_entropy_loss_back(ctx, a, b, d);
}

static struct lm_ggml_tensor * t_soft_max_long(struct lm_ggml_context * ctx, double ** e) {
    const int nc = 5003;
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, nc, 3, 1, 1, -30, 30);
    double * x = values(a);
    for (int r = 0; r < 3; r++) softmax_d(x + r*nc, nc);
    *e = x;
    return lm_ggml_soft_max_inplace(ctx, a);
}
static struct lm_ggml_tensor * t_diag_mask_inf_inplace(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 9, 6, 2, 2, -1, 1);
    double * x = values(a);
    for (int k = 0; k < 4; k++) for (int j = 0; j < 6; j++) for (int i = 0; i < 9; i++) if (i > 2 + j) x[(k*6 + j)*9 + i] = -INFINITY;
    *e = x;
    return lm_ggml_diag_mask_inf_inplace(ctx, a, 2);
}

// ---------------------------------------------------------------- reduce / shape

static struct lm_ggml_tensor * t_sum_f16(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F16, 50, 7, 1, 1, -1, 1);
    double * x = values(a), s = 0;
    for (int i = 0; i < 350; i++) s += x[i];
    x[0] = lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16((float) s));
    *e = x;
    return lm_ggml_sum(ctx, a);
}
static struct lm_ggml_tensor * t_sum_rows_permuted(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a0 = rnd(ctx, LM_GGML_TYPE_F32, 6, 40, 3, 1, -1, 1);
    struct lm_ggml_tensor * a = lm_ggml_transpose(ctx, a0); // [40, 6, 3]
    double * x = alloc_expect(a);
    for (int i2 = 0; i2 < 3; i2++) for (int i1 = 0; i1 < 6; i1++) {
        double s = 0;
        for (int i0 = 0; i0 < 40; i0++) s += at(a, i0, i1, i2, 0);
        x[i2*6 + i1] = s;
    }
    *e = x;
    return lm_ggml_sum_rows(ctx, a);
}
static struct lm_ggml_tensor * t_count_equal_big(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, 100, 37);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, 100, 37);
    int64_t cnt = 0;
    for (int i = 0; i < 3700; i++) {
        ((int32_t *) a->data)[i] = (int32_t) frand(0, 4);
        ((int32_t *) b->data)[i] = (int32_t) frand(0, 4);
        cnt += ((int32_t *) a->data)[i] == ((int32_t *) b->data)[i];
    }
    double * x = malloc(sizeof(double));
    x[0] = (double) cnt;
    *e = x;
    return lm_ggml_count_equal(ctx, a, b);
}
static struct lm_ggml_tensor * t_argsort_long(struct lm_ggml_context * ctx, double ** e) {
    const int n = 1000;
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, n, 3, 1, 1, -1, 1);
    double * x = alloc_expect(a);
    for (int r = 0; r < 3; r++) {
        const float * v = (const float *) a->data + r*n;
        // rank of each element (values are distinct): position = #smaller
        for (int i = 0; i < n; i++) {
            int rank = 0;
            for (int j = 0; j < n; j++) rank += v[j] < v[i];
            x[r*n + rank] = i;
        }
    }
    *e = x;
    return lm_ggml_argsort(ctx, a, LM_GGML_SORT_ORDER_ASC);
}
static struct lm_ggml_tensor * t_top_k(struct lm_ggml_context * ctx, double ** e) {
    const int n = 50, k = 7;
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, n, 4, 1, 1, -1, 1);
    double * x = malloc(sizeof(double)*k*4);
    for (int r = 0; r < 4; r++) {
        const float * v = (const float *) a->data + r*n;
        for (int i = 0; i < n; i++) {
            int rank = 0;
            for (int j = 0; j < n; j++) rank += v[j] > v[i];
            if (rank < k) x[r*k + rank] = i;
        }
    }
    *e = x;
    struct lm_ggml_tensor * t = lm_ggml_top_k(ctx, a, k);
    // compute the argsort node, then read the view
    return t;
}
static struct lm_ggml_tensor * t_concat0_f16(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F16, 3, 4, 2, 1, -1, 1);
    struct lm_ggml_tensor * b = rnd(ctx, LM_GGML_TYPE_F16, 5, 4, 2, 1, -1, 1);
    double * x = malloc(sizeof(double)*8*4*2);
    for (int i2 = 0; i2 < 2; i2++) for (int i1 = 0; i1 < 4; i1++) for (int i0 = 0; i0 < 8; i0++)
        x[(i2*4 + i1)*8 + i0] = i0 < 3 ? at(a, i0, i1, i2, 0) : at(b, i0 - 3, i1, i2, 0);
    *e = x;
    return lm_ggml_concat(ctx, a, b, 0);
}
static struct lm_ggml_tensor * t_concat3_strided(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a0 = rnd(ctx, LM_GGML_TYPE_F32, 4, 3, 1, 2, -1, 1);
    struct lm_ggml_tensor * b  = rnd(ctx, LM_GGML_TYPE_F32, 3, 4, 1, 1, -1, 1);
    struct lm_ggml_tensor * a  = lm_ggml_permute(ctx, a0, 1, 0, 2, 3); // [3, 4, 1, 2]
    double * x = malloc(sizeof(double)*3*4*3);
    for (int i3 = 0; i3 < 3; i3++) for (int i1 = 0; i1 < 4; i1++) for (int i0 = 0; i0 < 3; i0++)
        x[(i3*4 + i1)*3 + i0] = i3 < 2 ? at(a, i0, i1, 0, i3) : at(b, i0, i1, 0, 0);
    *e = x;
    return lm_ggml_concat(ctx, a, b, 3);
}
static struct lm_ggml_tensor * t_repeat_f16(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F16, 3, 2, 1, 1, -1, 1);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F16, 9, 4, 2, 2);
    double * x = alloc_expect(b);
    int k = 0;
    for (int i3 = 0; i3 < 2; i3++) for (int i2 = 0; i2 < 2; i2++) for (int i1 = 0; i1 < 4; i1++) for (int i0 = 0; i0 < 9; i0++)
        x[k++] = at(a, i0 % 3, i1 % 2, 0, 0);
    *e = x;
    return lm_ggml_repeat(ctx, a, b);
}
static struct lm_ggml_tensor * t_upscale_ext(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 3, 4, 2, 1, -1, 1);
    const int N0 = 7, N1 = 5, N2 = 3, N3 = 2;
    double * x = malloc(sizeof(double)*N0*N1*N2*N3);
    int k = 0;
    for (int i3 = 0; i3 < N3; i3++) for (int i2 = 0; i2 < N2; i2++) for (int i1 = 0; i1 < N1; i1++) for (int i0 = 0; i0 < N0; i0++)
        x[k++] = at(a, (int64_t)(i0 / ((float) N0/3)), (int64_t)(i1 / ((float) N1/4)), (int64_t)(i2 / ((float) N2/2)), (int64_t)(i3 / ((float) N3/1)));
    *e = x;
    return lm_ggml_upscale_ext(ctx, a, N0, N1, N2, N3);
}
static struct lm_ggml_tensor * t_timestep_odd(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 4, 1, 1, 1, 0, 1000);
    const int dim = 9, half = 4;
    double * x = malloc(sizeof(double)*10*4);
    for (int i = 0; i < 4; i++) {
        const double t = ((float *) a->data)[i];
        for (int j = 0; j < half; j++) {
            const double f = exp(-log(10000.0)*j/half);
            x[i*10 + j] = cos(t*f); x[i*10 + j + half] = sin(t*f);
        }
        x[i*10 + 8] = 0; x[i*10 + 9] = 0;
    }
    *e = x;
    return lm_ggml_timestep_embedding(ctx, a, dim, 10000);
}
static struct lm_ggml_tensor * t_pad_strided(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a0 = rnd(ctx, LM_GGML_TYPE_F32, 4, 5, 1, 1, -1, 1);
    struct lm_ggml_tensor * a  = lm_ggml_transpose(ctx, a0); // [5, 4]
    double * x = malloc(sizeof(double)*7*5*2);
    int k = 0;
    for (int i2 = 0; i2 < 2; i2++) for (int i1 = 0; i1 < 5; i1++) for (int i0 = 0; i0 < 7; i0++)
        x[k++] = (i0 < 5 && i1 < 4 && i2 < 1) ? at(a, i0, i1, 0, 0) : 0.0;
    *e = x;
    return lm_ggml_pad(ctx, a, 2, 1, 1, 0);
}

// ---------------------------------------------------------------- custom maps

static int g_calls[8][8];
static void cust1(struct lm_ggml_tensor * dst, const struct lm_ggml_tensor * a, int ith, int nth, void * ud) {
    g_calls[ith][nth] = 1;
    const float k = *(const float *) ud;
    const int64_t n = lm_ggml_nelements(dst);
    for (int64_t i = ith; i < n; i += nth) ((float *) dst->data)[i] = ((const float *) a->data)[i] * k;
}
static struct lm_ggml_tensor * t_map_custom1(struct lm_ggml_context * ctx, double ** e) {
    static float k = 3.0f;
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 10, 3, 1, 1, -1, 1);
    double * x = values(a);
    for (int i = 0; i < 30; i++) x[i] = (float)((float) x[i] * 3.0f);
    *e = x;
    return lm_ggml_map_custom1(ctx, a, cust1, 2, &k);
}
static void unary_f32(const int n, float * y, const float * x) { for (int i = 0; i < n; i++) y[i] = x[i] + 1.0f; }
static struct lm_ggml_tensor * t_map_unary_f32(struct lm_ggml_context * ctx, double ** e) {
    struct lm_ggml_tensor * a = rnd(ctx, LM_GGML_TYPE_F32, 10, 3, 2, 1, -1, 1);
    double * x = values(a);
    for (int i = 0; i < 60; i++) x[i] = (float)((float) x[i] + 1.0f);
    *e = x;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return lm_ggml_map_unary_f32(ctx, a, unary_f32);
#pragma GCC diagnostic pop
}

// ---------------------------------------------------------------- constructor checks

static int expect_assert(const char * what, void (*fn)(struct lm_ggml_context *)) {
    struct lm_ggml_init_params ip = { 1u << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_err_frame f;
    int caught = 0;
    if (LM_GGML_TRY(&f)) {
        caught = 1;
    } else {
        fn(ctx);
        lm_ggml_err_pop(&f);
    }
    lm_ggml_free(ctx);
    if (caught) printf("ok   assert: %s -> %s\n", what, f.msg);
    checkf(caught, "assert: %s", what);
    return caught;
}
static void bad_add_shape(struct lm_ggml_context * c) { lm_ggml_add(c, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 3), lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 3, 3)); }
static void bad_add_i32(struct lm_ggml_context * c) { lm_ggml_add(c, lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_I32, 4), lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 4)); }
static void bad_add1(struct lm_ggml_context * c) { lm_ggml_add1(c, lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 4), lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 2)); }
static void bad_acc(struct lm_ggml_context * c) {
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 4);
    lm_ggml_acc(c, a, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 2, 2), a->nb[1], a->nb[2], a->nb[3], 3*a->nb[1] + 12);
}
static void bad_softmax_mask(struct lm_ggml_context * c) {
    lm_ggml_soft_max_ext(c, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 4), lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 3), 1.0f, 0.0f);
}
static void bad_softmax_alibi(struct lm_ggml_context * c) { lm_ggml_soft_max_ext(c, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 4), NULL, 1.0f, 8.0f); }
static void bad_concat(struct lm_ggml_context * c) { lm_ggml_concat(c, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 4), lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 7, 3), 1); }
static void bad_argmax(struct lm_ggml_context * c) { lm_ggml_argmax(c, lm_ggml_new_tensor_3d(c, LM_GGML_TYPE_F32, 8, 4, 2)); }
static void bad_topk(struct lm_ggml_context * c) { lm_ggml_top_k(c, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 4), 9); }
static void bad_arange(struct lm_ggml_context * c) { lm_ggml_arange(c, 3.0f, 1.0f, 0.5f); }
static void bad_unary_noncont(struct lm_ggml_context * c) { lm_ggml_silu(c, lm_ggml_transpose(c, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 4))); }
static void bad_repeat(struct lm_ggml_context * c) { lm_ggml_repeat(c, lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 3), lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 8)); }
static void bad_custom_ntasks(struct lm_ggml_context * c) { lm_ggml_map_custom1(c, lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 3), cust1, 0, NULL); }
static void bad_diag(struct lm_ggml_context * c) { lm_ggml_diag(c, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 3, 2)); }
static void bad_upscale(struct lm_ggml_context * c) { lm_ggml_upscale_ext(c, lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 3, 2), 2, 2, 1, 1); }

// ---------------------------------------------------------------- main

int main(void) {
    lm_ggml_cpu_init();

    run("add row broadcast",         t_add_rowbcast, 0);
    run("mul column broadcast",      t_mul_colbcast, 0);
    run("sub partial dim-0 bcast",   t_sub_partial0, 0);
    run("div strided src0",          t_div_strided, 0);
    run("mul strided src1",          t_mul_src1_strided, 0);
    run("add_inplace",               t_add_inplace, 0);
    run("add f16+f32 bcast",         t_add_f16_bcast, 0);
    run("mul bf16*bf16",             t_mul_bf16_bf16, 0);
    run("add q8_0+f32",              t_add_q8_0, 0);
    run("add_cast f16->f32",         t_add_cast_f16_f32, 0);
    run("add1",                      t_add1, 0);
    run("add1_inplace f16",          t_add1_f16, 0);
    run("acc",                       t_acc, 0);
    run("acc_inplace",               t_acc_inplace, 0);

    struct { const char * n; enum lm_ggml_unary_op op; double (*f)(double); double tol; } un[] = {
        { "unary silu",       LM_GGML_UNARY_OP_SILU,       g_silu,       1e-12 },
        { "unary gelu",       LM_GGML_UNARY_OP_GELU,       g_gelu,       1e-6 },
        { "unary gelu_quick", LM_GGML_UNARY_OP_GELU_QUICK, g_gelu_quick, 1e-6 },
        { "unary tanh",       LM_GGML_UNARY_OP_TANH,       tanh,         1e-12 },
        { "unary elu",        LM_GGML_UNARY_OP_ELU,        g_elu,        1e-12 },
        { "unary hardswish",  LM_GGML_UNARY_OP_HARDSWISH,  g_hswish,     1e-12 },
        { "unary exp",        LM_GGML_UNARY_OP_EXP,        exp,          1e-12 },
        { "unary abs",        LM_GGML_UNARY_OP_ABS,        fabs,         0 },
    };
    for (size_t i = 0; i < sizeof(un)/sizeof(un[0]); i++) {
        g_uop = un[i].op; g_uref = un[i].f;
        run(un[i].n, t_unary, un[i].tol);
    }
    // one long row, as a token's activations: shared out within the row
    g_un = 5643; g_urows = 1;
    for (size_t i = 0; i < sizeof(un)/sizeof(un[0]); i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s, one row", un[i].n);
        g_uop = un[i].op; g_uref = un[i].f;
        run(name, t_unary, un[i].tol);
    }
    g_un = 1029; g_urows = 3;
    run("silu f16",                  t_silu_f16, 1e-6);
    run("silu extremes",             t_silu_extreme, 1e-12);
    run("scale_inplace",             t_scale_inplace, 0);
    run("clamp f16 (view)",          t_clamp_f16, 0);
    run("silu_back",                 t_silu_back, 1e-12);
    run("sqrt permuted",             t_sqrt_permuted, 1e-14);

    run("rms_norm 4099",             t_rms_norm_long, 1e-12);
    run("norm_inplace 3000",         t_norm_long, 1e-12);
    run("group_norm uneven groups",  t_group_norm, 1e-12);
    run("rms_norm_back",             t_rms_norm_back, 1e-11);
    g_mask_f16 = 0; g_max_bias = 0;    run("soft_max_ext f32 mask",        t_soft_max_ext, 1e-12);
    g_mask_f16 = 1; g_max_bias = 0;    run("soft_max_ext f16 mask",        t_soft_max_ext, 1e-12);
    g_mask_f16 = 1; g_max_bias = 8.0f; run("soft_max_ext alibi 6 heads",   t_soft_max_ext, 1e-12);
    run("soft_max_inplace 5003",     t_soft_max_long, 1e-12);
    g_sm_nc = 16*62 + 11; run("soft_max underflow, 16k + 11",   t_soft_max_wide, 1e-12);
    g_sm_nc = 16*62 + 8;  run("soft_max underflow, 16k + 8",    t_soft_max_wide, 1e-12);
    g_sm_nc = 7;          run("soft_max underflow, 7",          t_soft_max_wide, 1e-12);
    g_sm_nc = 16*62 + 11; run("cross_entropy_loss 16k + 11",    t_cross_entropy, 1e-12);
    g_sm_nc = 16*62 + 11; run("cross_entropy_loss_back 16k + 11", t_cross_entropy_back, 1e-10);
    run("diag_mask_inf_inplace 4d",  t_diag_mask_inf_inplace, 0);

    run("sum f16",                   t_sum_f16, 0);
    run("sum_rows transposed",       t_sum_rows_permuted, 1e-14);
    run("count_equal 37 rows",       t_count_equal_big, 0);
    run("argsort 1000",              t_argsort_long, 0);
    run("top_k",                     t_top_k, 0);
    run("concat dim0 f16",           t_concat0_f16, 0);
    run("concat dim3 strided",       t_concat3_strided, 0);
    run("repeat f16",                t_repeat_f16, 0);
    run("upscale_ext 3x4x2->7x5x3x2", t_upscale_ext, 0);
    run("timestep_embedding odd",    t_timestep_odd, 1e-10);
    run("pad strided",               t_pad_strided, 0);

    memset(g_calls, 0, sizeof(g_calls));
    run("map_custom1 n_tasks=2",     t_map_custom1, 0);
    {
        // only ith 0 and 1 may have been called, always with nth = 2 (pool of 1 thread: nth 1)
        int bad = 0;
        for (int i = 0; i < 8; i++) for (int n = 0; n < 8; n++) {
            if (!g_calls[i][n]) continue;
            if (i >= 2 || n > 2 || i >= n) bad = 1;
        }
        if (!g_calls[0][2] || !g_calls[1][2] || !g_calls[0][1]) bad = 1;
        if (!bad) printf("ok   map_custom1 ith/nth honour n_tasks\n");
        check(!bad, "map_custom1 ith/nth honour n_tasks");
    }
    run("map_unary_f32",             t_map_unary_f32, 0);

    expect_assert("add: b not repeatable into a", bad_add_shape);
    expect_assert("add: i32 operand",             bad_add_i32);
    expect_assert("add1: b not a scalar",         bad_add1);
    expect_assert("acc: window outside a",        bad_acc);
    expect_assert("soft_max_ext: mask too short", bad_softmax_mask);
    expect_assert("soft_max_ext: alibi w/o mask", bad_softmax_alibi);
    expect_assert("concat: shapes differ",        bad_concat);
    expect_assert("argmax: not a matrix",         bad_argmax);
    expect_assert("top_k: k > ne0",               bad_topk);
    expect_assert("arange: stop <= start",        bad_arange);
    expect_assert("silu: rows not contiguous",    bad_unary_noncont);
    expect_assert("repeat: not repeatable",       bad_repeat);
    expect_assert("map_custom1: n_tasks 0",       bad_custom_ntasks);
    expect_assert("diag: ne1 != 1",               bad_diag);
    expect_assert("upscale_ext: downscale",       bad_upscale);

    return check_summary();
}
