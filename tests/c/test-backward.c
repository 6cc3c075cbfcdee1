// test-backward.c - automatic differentiation, loss and optimizer ops.
//
//  1. parity: the backward cases of ../shared/parity/ops (kind=backward), built
//     by hand here, compared with the reference's out, loss and grad.xN (NMSE);
//  2. finite differences: for every parity case and for extra cases (rules
//     without a parity case, and the beyond-reference broadcasts of mul /
//     sub / div / mul_mat), the gradient of every parameter element against a
//     five-point central difference of the forward graph, judged like the
//     reference's test-backend-ops grad mode by the mean absolute asymmetry
//     |a-b|/(|a|+|b|) over elements;
//  3. accumulate=true over micro-batches equals one big batch, graph_reset;
//     a computed tensor as a parameter (accepted, as ggml does); graph_reset
//     of a graph never allocated;
//  4. AdamW against a hand computation, and a small training run;
//  5. misuse: no params, no loss, an op without a backward rule, no grads.
//
// Build (from the project root):
//   python3 tests/c/bw-parity2bin.py ../shared/parity/ops /tmp/lm-bw-parity
//   cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-backward.c $(find csrc -name '*.c') -lm -o /tmp/test-backward
//   /tmp/test-backward [/tmp/lm-bw-parity] [-v]     (LM_TEST_THREADS=n: threads, default 2)
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-impl.h"
#include "ggml-cpu-impl.h"
#include "ggml-backend-impl.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int N_THREADS = 2; // LM_TEST_THREADS overrides

static int g_skip;
static int g_verbose;

static void report(bool ok, const char * fmt, ...) LM_GGML_ATTRIBUTE_FORMAT(2, 3);
// A check; with -v, passed checks are listed too.
static void report(bool ok, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (ok && g_verbose) {
        va_list aq;
        va_copy(aq, ap);
        printf("  ok   ");
        vprintf(fmt, aq);
        printf("\n");
        va_end(aq);
    }
    vcheck_at(ok, NULL, 0, fmt, ap);
    va_end(ap);
}

// ---------------------------------------------------------------- random

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static float frand(float lo, float hi) {
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (float) ((g_rng >> 40) * (1.0 / 16777216.0));
}

// ---------------------------------------------------------------- parity files

struct ptensor {
    char name[64];
    uint32_t type;
    int64_t ne[4];
    uint64_t nbytes;
    void * data;
};

struct pcase {
    int n;
    struct ptensor t[24];
    char params[256];
};

static bool load_case(const char * dir, const char * name, struct pcase * c) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s.bin", dir, name);
    FILE * f = fopen(path, "rb");
    if (!f) return false;
    uint32_t n;
    bool ok = fread(&n, 4, 1, f) == 1 && n <= 24;
    c->n = ok ? (int) n : 0;
    for (int i = 0; ok && i < c->n; i++) {
        struct ptensor * t = &c->t[i];
        ok = fread(t->name, 64, 1, f) == 1 && fread(&t->type, 4, 1, f) == 1 &&
             fread(t->ne, 8, 4, f) == 4 && fread(&t->nbytes, 8, 1, f) == 1;
        t->name[63] = '\0';
        t->data = ok ? malloc(t->nbytes ? t->nbytes : 1) : NULL;
        ok = ok && fread(t->data, 1, t->nbytes, f) == t->nbytes;
    }
    fclose(f);
    snprintf(path, sizeof(path), "%s/%s.txt", dir, name);
    f = fopen(path, "r");
    c->params[0] = '\0';
    if (f) {
        char expr[4096];
        if (!fgets(expr, sizeof(expr), f) || !fgets(c->params, sizeof(c->params), f)) c->params[0] = '\0';
        c->params[strcspn(c->params, "\r\n")] = '\0';
        fclose(f);
    }
    return ok;
}

static struct ptensor * pfind(struct pcase * c, const char * name) {
    for (int i = 0; i < c->n; i++) {
        if (strcmp(c->t[i].name, name) == 0) return &c->t[i];
    }
    return NULL;
}

static void free_case(struct pcase * c) {
    for (int i = 0; i < c->n; i++) free(c->t[i].data);
    c->n = 0;
}

static bool param_listed(const char * params, int i) {
    char want[16];
    snprintf(want, sizeof(want), "x%d", i);
    const char * p = params;
    while (*p) {
        const size_t len = strcspn(p, ",");
        if (len == strlen(want) && strncmp(p, want, len) == 0) return true;
        p += len;
        if (*p == ',') p++;
    }
    return false;
}

// ---------------------------------------------------------------- helpers

static void to_f32(const struct lm_ggml_tensor * t, float * out) {
    // t is contiguous here (results and grads of these graphs)
    const int64_t n = lm_ggml_nelements(t);
    if (t->type == LM_GGML_TYPE_F32) {
        if (lm_ggml_is_contiguous(t)) {
            memcpy(out, t->data, n * sizeof(float));
        } else {
            int64_t k = 0;
            for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
            for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                out[k++] = *(const float *)((const char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3]);
            }
        }
    } else if (t->type == LM_GGML_TYPE_F16) {
        for (int64_t i = 0; i < n; i++) out[i] = lm_ggml_fp16_to_fp32(((const lm_ggml_fp16_t *) t->data)[i]);
    } else {
        for (int64_t i = 0; i < n; i++) out[i] = NAN;
    }
}

static double nmse(const float * a, const float * ref, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double) a[i] - (double) ref[i];
        num += d*d;
        den += (double) ref[i] * ref[i];
    }
    if (den == 0) return num == 0 ? 0 : INFINITY;
    return num / den;
}

static float get_elem(struct lm_ggml_tensor * t, int64_t i) {
    if (t->type == LM_GGML_TYPE_F16) return lm_ggml_fp16_to_fp32(((lm_ggml_fp16_t *) t->data)[i]);
    return ((float *) t->data)[i];
}
static void set_elem(struct lm_ggml_tensor * t, int64_t i, float v) {
    if (t->type == LM_GGML_TYPE_F16) ((lm_ggml_fp16_t *) t->data)[i] = lm_ggml_fp32_to_fp16(v);
    else ((float *) t->data)[i] = v;
}

static struct lm_ggml_context * new_ctx(size_t mb) {
    struct lm_ggml_init_params ip = { mb * 1024 * 1024, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    LM_GGML_ASSERT(ctx != NULL);
    return ctx;
}

static void compute(struct lm_ggml_context * ctx, struct lm_ggml_cgraph * g) {
    const enum lm_ggml_status st = lm_ggml_graph_compute_with_ctx(ctx, g, N_THREADS);
    LM_GGML_ASSERT(st == LM_GGML_STATUS_SUCCESS);
}

// ---------------------------------------------------------------- graph cases

typedef struct lm_ggml_tensor * (*build_fn)(struct lm_ggml_context * ctx, struct lm_ggml_tensor ** x);

#define BUILD(name) static struct lm_ggml_tensor * name(struct lm_ggml_context * ctx, struct lm_ggml_tensor ** x)

BUILD(b_add) { return lm_ggml_add(ctx, x[0], x[1]); }
BUILD(b_sub) { return lm_ggml_sub(ctx, x[0], x[1]); }
BUILD(b_mul) { return lm_ggml_mul(ctx, x[0], x[1]); }
BUILD(b_div) { return lm_ggml_div(ctx, x[0], x[1]); }
BUILD(b_sqr_sqrt_log) {
    return lm_ggml_add(ctx, lm_ggml_sqr(ctx, x[0]), lm_ggml_add(ctx, lm_ggml_sqrt(ctx, x[0]), lm_ggml_log(ctx, x[0])));
}
BUILD(b_sin_cos) { return lm_ggml_mul(ctx, lm_ggml_sin(ctx, x[0]), lm_ggml_cos(ctx, x[0])); }
BUILD(b_repeat) { return lm_ggml_mul(ctx, lm_ggml_repeat(ctx, x[0], x[1]), x[1]); }
BUILD(b_rms_norm) { return lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, x[0], 1e-6f), x[1]); }
BUILD(b_mul_mat) { return lm_ggml_mul_mat(ctx, x[0], x[1]); }
BUILD(b_scale) { return lm_ggml_scale(ctx, lm_ggml_sqr(ctx, x[0]), 0.3f); }
BUILD(b_set) {
    return lm_ggml_sqr(ctx, lm_ggml_set(ctx, x[0], x[1], x[0]->nb[1], x[0]->nb[2], x[0]->nb[3], x[0]->nb[1] + 4));
}
BUILD(b_cpy) { return lm_ggml_sqr(ctx, lm_ggml_cpy(ctx, x[0], x[1])); }
BUILD(b_reshape_view_permute) {
    struct lm_ggml_tensor * a = lm_ggml_sum(ctx, lm_ggml_sqr(ctx, lm_ggml_cont(ctx,
            lm_ggml_permute(ctx, lm_ggml_reshape_3d(ctx, x[0], 3, 2, 4), 1, 0, 2, 3))));
    struct lm_ggml_tensor * b = lm_ggml_sum(ctx, lm_ggml_sqr(ctx, lm_ggml_view_1d(ctx, x[0], 5, 12)));
    return lm_ggml_add1(ctx, a, b);
}
BUILD(b_transpose) { return lm_ggml_mul(ctx, lm_ggml_cont(ctx, lm_ggml_transpose(ctx, x[0])), x[1]); }
BUILD(b_get_rows) { return lm_ggml_sqr(ctx, lm_ggml_get_rows(ctx, x[0], x[1])); }
BUILD(b_diag_mask) {
    return lm_ggml_add(ctx, lm_ggml_sqr(ctx, lm_ggml_diag_mask_zero(ctx, x[0], 1)),
                            lm_ggml_soft_max(ctx, lm_ggml_diag_mask_inf(ctx, x[0], 0)));
}
BUILD(b_soft_max) { return lm_ggml_mul(ctx, lm_ggml_soft_max(ctx, x[0]), x[1]); }
BUILD(b_im2col) {
    return lm_ggml_mul(ctx, lm_ggml_im2col(ctx, x[0], x[1], 1, 1, 0, 0, 1, 1, true, LM_GGML_TYPE_F32), x[2]);
}
BUILD(b_unary) {
    return lm_ggml_add(ctx, lm_ggml_add(ctx, lm_ggml_abs(ctx, x[0]), lm_ggml_neg(ctx, lm_ggml_relu(ctx, x[0]))),
                            lm_ggml_add(ctx, lm_ggml_silu(ctx, x[0]), lm_ggml_exp(ctx, x[0])));
}
BUILD(b_cross_entropy) { return lm_ggml_cross_entropy_loss(ctx, x[0], x[1]); }
BUILD(b_mlp) {
    struct lm_ggml_tensor * h = lm_ggml_relu(ctx, lm_ggml_add(ctx, lm_ggml_mul_mat(ctx, x[0], x[4]), x[1]));
    return lm_ggml_cross_entropy_loss(ctx, lm_ggml_add(ctx, lm_ggml_mul_mat(ctx, x[2], h), x[3]), x[5]);
}

// extra cases (finite differences only)
BUILD(b_sqr_mul) { return lm_ggml_sqr(ctx, lm_ggml_mul(ctx, x[0], x[1])); }
BUILD(b_sqr_mul_mat) { return lm_ggml_sqr(ctx, lm_ggml_mul_mat(ctx, x[0], x[1])); }
BUILD(b_sub_div) { return lm_ggml_sqr(ctx, lm_ggml_add(ctx, lm_ggml_sub(ctx, x[0], x[1]), lm_ggml_div(ctx, x[0], x[2]))); }
BUILD(b_acc) {
    return lm_ggml_sqr(ctx, lm_ggml_acc(ctx, x[0], x[1], x[0]->nb[1], x[0]->nb[2], x[0]->nb[3], x[0]->nb[1] + 8));
}
BUILD(b_sum_rows_mean) {
    return lm_ggml_add(ctx, lm_ggml_sqr(ctx, lm_ggml_sum_rows(ctx, x[0])), lm_ggml_sqr(ctx, lm_ggml_mean(ctx, x[0])));
}
BUILD(b_mean_scalar) { return lm_ggml_sqr(ctx, lm_ggml_mean(ctx, lm_ggml_sqr(ctx, x[0]))); }
BUILD(b_repeat_back) { return lm_ggml_sqr(ctx, lm_ggml_repeat_back(ctx, x[0], x[1])); }
BUILD(b_dup_add1) { return lm_ggml_sqr(ctx, lm_ggml_add1(ctx, lm_ggml_dup(ctx, x[0]), x[1])); }
BUILD(b_cos_sqrt) { return lm_ggml_mul(ctx, lm_ggml_cos(ctx, x[0]), lm_ggml_sqrt(ctx, x[1])); }
BUILD(b_view_2d) {
    // a 3x2 window at row 1, column 2 of a [6,5] matrix, used twice
    struct lm_ggml_tensor * v = lm_ggml_view_2d(ctx, x[0], 3, 2, x[0]->nb[1], x[0]->nb[1] + 2*x[0]->nb[0]);
    return lm_ggml_add(ctx, lm_ggml_sqr(ctx, lm_ggml_cont(ctx, v)), lm_ggml_mul(ctx, lm_ggml_cont(ctx, v), x[1]));
}
BUILD(b_permute4) {
    return lm_ggml_mul(ctx, lm_ggml_sqr(ctx, lm_ggml_cont(ctx, lm_ggml_permute(ctx, x[0], 2, 0, 3, 1))), x[1]);
}
BUILD(b_cpy_reshape) { return lm_ggml_mul(ctx, lm_ggml_cpy(ctx, lm_ggml_sqr(ctx, x[0]), x[1]), x[2]); }
BUILD(b_soft_max_ext) { return lm_ggml_mul(ctx, lm_ggml_soft_max_ext(ctx, x[0], NULL, 0.5f, 0.0f), x[1]); }
BUILD(b_sgn_step) {
    return lm_ggml_add(ctx, lm_ggml_mul(ctx, lm_ggml_sgn(ctx, x[0]), lm_ggml_sqr(ctx, x[0])),
                            lm_ggml_mul(ctx, lm_ggml_step(ctx, x[0]), x[0]));
}
BUILD(b_rope) { return lm_ggml_mul(ctx, lm_ggml_rope(ctx, x[0], x[1], 8, 0), x[2]); }
BUILD(b_rope_neox) { return lm_ggml_mul(ctx, lm_ggml_rope(ctx, x[0], x[1], 8, LM_GGML_ROPE_TYPE_NEOX), x[2]); }
BUILD(b_rope_ext) {
    return lm_ggml_mul(ctx, lm_ggml_rope_ext(ctx, x[0], x[1], NULL, 8, 0, 32, 10000.0f, 0.5f, 1.0f, 1.0f, 32.0f, 1.0f), x[2]);
}
BUILD(b_pool_avg) { return lm_ggml_sqr(ctx, lm_ggml_pool_2d(ctx, x[0], LM_GGML_OP_POOL_AVG, 2, 2, 2, 2, 0, 0)); }
BUILD(b_pool_max) { return lm_ggml_mul(ctx, lm_ggml_pool_2d(ctx, x[0], LM_GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0), x[1]); }
BUILD(b_transpose_mm) {
    // mul_mat with a transposed (non-contiguous) operand, and its grad through cont
    return lm_ggml_sqr(ctx, lm_ggml_mul_mat(ctx, lm_ggml_cont(ctx, lm_ggml_transpose(ctx, x[0])), x[1]));
}
BUILD(b_get_rows_mul) { return lm_ggml_mul(ctx, lm_ggml_get_rows(ctx, x[0], x[1]), x[2]); }

struct case_opts {
    float eps;       // finite-difference step
    float kink;      // skip elements with |x| < kink (non-differentiable points)
    double maa_tol;  // tolerance on the mean absolute asymmetry
    bool lowp;       // goes through mul_mat / f16 operands: looser NMSE
    bool no_fd;      // the reference's gradient is not the derivative (see below)
};

struct parity_case {
    const char * name;
    build_fn build;
    struct case_opts o;
};

static const struct parity_case k_parity[] = {
    { "bw_add",                  b_add,                  { 0.05f, 0, 1e-4, false, false } },
    { "bw_sub",                  b_sub,                  { 0.05f, 0, 1e-4, false, false } },
    { "bw_mul",                  b_mul,                  { 0.05f, 0, 1e-4, false, false } },
    { "bw_div",                  b_div,                  { 0.05f, 0, 1e-4, false, false } },
    { "bw_sqr_sqrt_log",         b_sqr_sqrt_log,         { 0.02f, 0, 1e-4, false, false } },
    { "bw_sin_cos",              b_sin_cos,              { 0.05f, 0, 1e-4, false, false } },
    { "bw_repeat",               b_repeat,               { 0.05f, 0, 1e-4, false, false } },
    { "bw_rms_norm",             b_rms_norm,             { 0.02f, 0, 1e-3, false, false } },
    { "bw_mul_mat",              b_mul_mat,              { 0.05f, 0, 1e-4, true,  false } },
    { "bw_mul_mat_batched",      b_mul_mat,              { 0.05f, 0, 1e-4, true,  false } },
    { "bw_scale",                b_scale,                { 0.05f, 0, 1e-4, false, false } },
    { "bw_set",                  b_set,                  { 0.05f, 0, 1e-4, false, false } },
    { "bw_cpy",                  b_cpy,                  { 0.05f, 0, 1e-4, false, false } },
    { "bw_reshape_view_permute", b_reshape_view_permute, { 0.05f, 0, 1e-4, false, false } },
    { "bw_transpose",            b_transpose,            { 0.05f, 0, 1e-4, false, false } },
    { "bw_get_rows",             b_get_rows,             { 0.05f, 0, 1e-4, false, false } },
    { "bw_diag_mask",            b_diag_mask,            { 0.05f, 0, 1e-4, false, false } },
    { "bw_soft_max",             b_soft_max,             { 0.05f, 0, 1e-3, false, false } },
    { "bw_im2col",               b_im2col,               { 0.05f, 0, 1e-4, true,  false } },
    { "bw_unary",                b_unary,                { 0.02f, 0.05f, 1e-4, false, false } },
    // The labels of these two cases are uniform[0,1), not distributions. The
    // reference's cross_entropy_loss_back computes softmax - labels, which is
    // the derivative only when each row of labels sums to 1; parity holds, and
    // the finite-difference checks run on normalized labels in ce_* below.
    { "bw_cross_entropy",        b_cross_entropy,        { 0.05f, 0, 1e-3, false, true } },
    { "bw_mlp",                  b_mlp,                  { 0.01f, 0, 2e-3, true,  true } },
};

// input spec for generated cases: type, shape, value range, param?; an I32
// input holds indices in [0, hi)
struct in_spec {
    enum lm_ggml_type type;
    int64_t ne[4];
    float lo, hi;
    bool param;
    int fill;        // FILL_*
};
enum { FILL_UNIFORM, FILL_ROWS_SUM1, FILL_DISTINCT };

struct extra_case {
    const char * name;
    build_fn build;
    struct case_opts o;
    int n_in;
    struct in_spec in[6];
};

#define F32 LM_GGML_TYPE_F32
#define I32 LM_GGML_TYPE_I32
static const struct extra_case k_extra[] = {
    // beyond the reference: broadcast src1 in mul, sub, div and broadcast batches in mul_mat
    { "bc_mul_rows",      b_sqr_mul,     { 0.25f, 0, 1e-4, false, false }, 2, {
        { F32, { 6, 4, 3, 2 }, -1, 1, true, FILL_UNIFORM }, { F32, { 6, 1, 3, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "bc_mul_scalar",    b_sqr_mul,     { 0.25f, 0, 1e-4, false, false }, 2, {
        { F32, { 5, 3, 2, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 1, 1, 1, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "bc_mul_cols",      b_sqr_mul,     { 0.25f, 0, 1e-4, false, false }, 2, {
        { F32, { 4, 6, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 1, 6, 1, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "bc_sub_div",       b_sub_div,     { 0.02f, 0, 1e-4, false, false }, 3, {
        { F32, { 6, 4, 2, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 6, 1, 2, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 1, 4, 1, 1 }, 0.5f, 2, true, FILL_UNIFORM } } },
    { "bc_mul_mat_d2",    b_sqr_mul_mat, { 0.25f, 0, 1e-4, true, false }, 2, {
        { F32, { 8, 6, 2, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 8, 5, 6, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "bc_mul_mat_d3",    b_sqr_mul_mat, { 0.25f, 0, 1e-4, true, false }, 2, {
        { F32, { 8, 6, 1, 2 }, -1, 1, true, FILL_UNIFORM }, { F32, { 8, 5, 1, 4 }, -1, 1, true, FILL_UNIFORM } } },
    { "bc_mul_mat_d23",   b_sqr_mul_mat, { 0.25f, 0, 1e-4, true, false }, 2, {
        { F32, { 8, 6, 2, 3 }, -1, 1, true, FILL_UNIFORM }, { F32, { 8, 5, 4, 6 }, -1, 1, true, FILL_UNIFORM } } },
    { "bc_mul_mat_1",     b_sqr_mul_mat, { 0.25f, 0, 1e-4, true, false }, 2, {
        { F32, { 8, 6, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 8, 5, 3, 2 }, -1, 1, false, FILL_UNIFORM } } },
    // rules without a parity case
    { "acc",              b_acc,          { 0.05f, 0, 1e-4, false, false }, 2, {
        { F32, { 6, 5, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 3, 2, 1, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "sum_rows_mean",    b_sum_rows_mean,{ 0.05f, 0, 1e-4, false, false }, 1, {
        { F32, { 7, 3, 2, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "mean_scalar",      b_mean_scalar,  { 0.05f, 0, 1e-4, false, false }, 1, {
        { F32, { 9, 1, 1, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "repeat_back",      b_repeat_back,  { 0.05f, 0, 1e-4, false, false }, 2, {
        { F32, { 6, 4, 2, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 3, 2, 1, 1 }, -1, 1, false, FILL_UNIFORM } } },
    { "dup_add1",         b_dup_add1,     { 0.05f, 0, 1e-4, false, false }, 2, {
        { F32, { 5, 3, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 1, 1, 1, 1 }, -1, 1, false, FILL_UNIFORM } } },
    { "add1_scalar",      b_dup_add1,     { 0.05f, 0, 1e-4, false, false }, 2, {
        { F32, { 1, 1, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 1, 1, 1, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "cos_sqrt",         b_cos_sqrt,     { 0.02f, 0, 1e-4, false, false }, 2, {
        { F32, { 5, 4, 1, 1 }, -3, 3, true, FILL_UNIFORM }, { F32, { 5, 4, 1, 1 }, 0.5f, 2, true, FILL_UNIFORM } } },
    { "view_2d",          b_view_2d,      { 0.05f, 0, 1e-4, false, false }, 2, {
        { F32, { 6, 5, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 3, 2, 1, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "permute_4d",       b_permute4,     { 0.05f, 0, 1e-4, false, false }, 2, {
        { F32, { 2, 3, 4, 5 }, -1, 1, true, FILL_UNIFORM }, { F32, { 3, 5, 2, 4 }, -1, 1, true, FILL_UNIFORM } } },
    { "cpy_reshape",      b_cpy_reshape,  { 0.05f, 0, 1e-4, false, false }, 3, {
        { F32, { 6, 5, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 30, 1, 1, 1 }, -1, 1, false, FILL_UNIFORM }, { F32, { 30, 1, 1, 1 }, -1, 1, false, FILL_UNIFORM } } },
    { "soft_max_ext",     b_soft_max_ext, { 0.05f, 0, 1e-3, false, false }, 2, {
        { F32, { 8, 3, 1, 1 }, -3, 3, true, FILL_UNIFORM }, { F32, { 8, 3, 1, 1 }, -1, 1, false, FILL_UNIFORM } } },
    { "sgn_step",         b_sgn_step,     { 0.02f, 0.05f, 1e-4, false, false }, 1, {
        { F32, { 12, 2, 1, 1 }, -2, 2, true, FILL_UNIFORM } } },
    { "transpose_mm",     b_transpose_mm, { 0.25f, 0, 1e-4, true, false }, 2, {
        { F32, { 6, 8, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 8, 5, 1, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "get_rows_dup_idx", b_get_rows_mul,  { 0.05f, 0, 1e-4, false, false }, 3, {
        { F32, { 4, 5, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { I32, { 9, 1, 1, 1 }, 0, 5, false, FILL_UNIFORM }, { F32, { 4, 9, 1, 1 }, -1, 1, false, FILL_UNIFORM } } },
    { "ce_normalized",    b_cross_entropy,{ 0.05f, 0, 1e-3, false, false }, 2, {
        { F32, { 10, 4, 1, 1 }, -3, 3, true, FILL_UNIFORM }, { F32, { 10, 4, 1, 1 }, 0, 1, false, FILL_ROWS_SUM1 } } },
    { "ce_mlp_normalized",b_mlp,          { 0.01f, 0, 5e-3, true, false }, 6, {
        { F32, { 8, 16, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 16, 1, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 16, 3, 1, 1 }, -1, 1, true, FILL_UNIFORM },
        { F32, { 3, 1, 1, 1 }, -1, 1, true, FILL_UNIFORM }, { F32, { 8, 5, 1, 1 }, -1, 1, false, FILL_UNIFORM },
        { F32, { 3, 5, 1, 1 }, 0, 1, false, FILL_ROWS_SUM1 } } },
    { "rope",             b_rope,         { 0.05f, 0, 1e-4, false, false }, 3, {
        { F32, { 8, 2, 5, 1 }, -1, 1, true, FILL_UNIFORM }, { I32, { 5, 1, 1, 1 }, 0, 50, false, FILL_UNIFORM }, { F32, { 8, 2, 5, 1 }, -1, 1, false, FILL_UNIFORM } } },
    { "rope_neox",        b_rope_neox,    { 0.05f, 0, 1e-4, false, false }, 3, {
        { F32, { 8, 2, 5, 1 }, -1, 1, true, FILL_UNIFORM }, { I32, { 5, 1, 1, 1 }, 0, 50, false, FILL_UNIFORM }, { F32, { 8, 2, 5, 1 }, -1, 1, false, FILL_UNIFORM } } },
    { "rope_ext_yarn",    b_rope_ext,     { 0.05f, 0, 1e-4, false, false }, 3, {
        { F32, { 8, 2, 5, 1 }, -1, 1, true, FILL_UNIFORM }, { I32, { 5, 1, 1, 1 }, 0, 50, false, FILL_UNIFORM },
        { F32, { 8, 2, 5, 1 }, -1, 1, false, FILL_UNIFORM } } },
    { "pool_2d_avg",      b_pool_avg,     { 0.05f, 0, 1e-4, false, false }, 1, {
        { F32, { 6, 4, 2, 1 }, -1, 1, true, FILL_UNIFORM } } },
    { "pool_2d_max",      b_pool_max,     { 0.005f, 0, 1e-4, false, false }, 2, {
        { F32, { 6, 4, 2, 1 }, -1, 1, true, FILL_DISTINCT }, { F32, { 3, 2, 2, 1 }, -1, 1, false, FILL_UNIFORM } } },
};

// ---------------------------------------------------------------- the driver

// The loss, with the final sum taken in double: less rounding noise in the
// difference quotients than the f32 sum node.
static double objective(struct lm_ggml_tensor * out, struct lm_ggml_tensor * loss, float * buf) {
    if (out == loss) return *(float *) loss->data;
    const int64_t n = lm_ggml_nelements(out);
    to_f32(out, buf);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) sum += buf[i];
    return sum;
}


// Builds out = build(x), loss, the backward graph; computes it and, if ref is
// given, compares with the reference; then checks every param gradient against
// finite differences of the forward graph.
static void run_case(const char * name, struct lm_ggml_context * ctx, struct lm_ggml_tensor ** x, int n_in,
        build_fn build, const struct case_opts * o, struct pcase * ref) {
    struct lm_ggml_tensor * out = build(ctx, x);
    struct lm_ggml_tensor * loss = lm_ggml_nelements(out) == 1 ? out : lm_ggml_sum(ctx, out);
    lm_ggml_set_loss(loss);

    struct lm_ggml_cgraph * gf = lm_ggml_new_graph_custom(ctx, 1024, false);
    lm_ggml_build_forward_expand(gf, loss);
    struct lm_ggml_cgraph * gb = lm_ggml_new_graph_custom(ctx, 1024, true);
    lm_ggml_build_forward_expand(gb, loss);
    lm_ggml_build_backward_expand(ctx, ctx, gb, false);
    lm_ggml_graph_reset(gb);
    compute(ctx, gb);

    if (ref) {
        const double tv = o->lowp ? 5e-4 : 1e-7, tg = o->lowp ? 5e-4 : 1e-6;
        struct cmp_item { const char * n; struct lm_ggml_tensor * t; double tol; } cmp[12];
        int nc = 0;
        cmp[nc++] = (struct cmp_item) { "out", out, tv };
        cmp[nc++] = (struct cmp_item) { "loss", loss, tv };
        for (int i = 0; i < n_in; i++) {
            if (x[i]->flags & LM_GGML_TENSOR_FLAG_PARAM) {
                static char names[8][24];
                snprintf(names[i], sizeof(names[i]), "grad.x%d", i);
                cmp[nc++] = (struct cmp_item) { names[i], lm_ggml_graph_get_grad(gb, x[i]), tg };
            }
        }
        for (int k = 0; k < nc; k++) {
            struct ptensor * pt = pfind(ref, cmp[k].n);
            if (!pt || !cmp[k].t) {
                report(false, "%-26s %-8s missing (%s)", name, cmp[k].n, pt ? "no gradient computed" : "not in parity file");
                continue;
            }
            const int64_t n = lm_ggml_nelements(cmp[k].t);
            if ((uint64_t) n * 4 != pt->nbytes || pt->type != 0) {
                report(false, "%-26s %-8s size mismatch", name, cmp[k].n);
                continue;
            }
            float * a = malloc(n * sizeof(float));
            if (k >= 2 && cmp[k].t->type == LM_GGML_TYPE_F32) {
                // The reference's files hold the raw bytes of each gradient tensor
                // from its data pointer: a gradient that is a view (transpose,
                // permute) is stored in its source's layout. Read it the same way.
                memcpy(a, cmp[k].t->data, n * sizeof(float));
            } else {
                to_f32(cmp[k].t, a);
            }
            const double e = nmse(a, (const float *) pt->data, n);
            report(e <= cmp[k].tol, "%-26s parity %-8s nmse %.2e (tol %.0e)", name, cmp[k].n, e, cmp[k].tol);
            free(a);
        }
    }

    // finite differences (five-point stencil) on every parameter element
    float * obuf = malloc(lm_ggml_nelements(out) * sizeof(float));
    for (int i = 0; i < n_in && !o->no_fd; i++) {
        if (!(x[i]->flags & LM_GGML_TENSOR_FLAG_PARAM)) continue;
        struct lm_ggml_tensor * g = lm_ggml_graph_get_grad(gb, x[i]);
        if (!g) {
            report(false, "%-26s fd x%d: no gradient", name, i);
            continue;
        }
        const int64_t n = lm_ggml_nelements(x[i]);
        float * ga = malloc(n * sizeof(float));
        to_f32(g, ga);
        // Elements whose gradient is tiny against the largest one are judged on
        // an absolute floor: there the difference quotient is mostly f32 noise.
        double gmax = 0;
        for (int64_t k = 0; k < n; k++) gmax = fmax(gmax, fabs(ga[k]));
        const double floor_ = 1e-3 * gmax;
        double maa = 0, worst = 0;
        int64_t used = 0, skipped = 0, worst_i = -1;
        double worst_num = 0;
        for (int64_t k = 0; k < n; k++) {
            const float x0 = get_elem(x[i], k);
            if (o->kink > 0 && fabsf(x0) < o->kink) { skipped++; continue; }
            const float h = o->eps;
            double f[4];
            const float dx[4] = { -2*h, -h, h, 2*h };
            for (int s = 0; s < 4; s++) {
                set_elem(x[i], k, x0 + dx[s]);
                compute(ctx, gf);
                f[s] = objective(out, loss, obuf);
            }
            set_elem(x[i], k, x0);
            const double num = (f[0] - 8.0*f[1] + 8.0*f[2] - f[3]) / (12.0 * h);
            const double a = ga[k];
            const double d = fmax(fabs(a) + fabs(num), floor_);
            const double asym = d == 0 ? 0 : fabs(a - num) / d;
            maa += asym;
            used++;
            if (asym > worst) { worst = asym; worst_i = k; worst_num = num; }
        }
        maa = used ? maa / used : 0;
        report(maa <= o->maa_tol, "%-26s fd x%d: maa %.2e (tol %.0e) over %lld elems%s; worst %.2e at %lld (bw %.5g fd %.5g)",
                name, i, maa, o->maa_tol, (long long) used, skipped ? " (kinks skipped)" : "", worst, (long long) worst_i,
                worst_i >= 0 ? ga[worst_i] : 0.0, worst_num);
        free(ga);
    }
    free(obuf);
}

static bool run_try(void (*fn)(void *), void * arg, char * msg, size_t msg_size) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        snprintf(msg, msg_size, "%s", f.msg);
        return false;
    }
    fn(arg);
    lm_ggml_err_pop(&f);
    msg[0] = '\0';
    return true;
}

struct parity_arg { const char * dir; const struct parity_case * pc; };

static void parity_one(void * p) {
    struct parity_arg * a = p;
    struct pcase c;
    if (!load_case(a->dir, a->pc->name, &c)) {
        printf("skip  %s: parity file not found\n", a->pc->name);
        g_skip++;
        return;
    }
    struct lm_ggml_context * ctx = new_ctx(64);
    struct lm_ggml_tensor * x[8] = { 0 };
    int n_in = 0;
    for (int i = 0; i < 8; i++) {
        char nm[8];
        snprintf(nm, sizeof(nm), "x%d", i);
        struct ptensor * pt = pfind(&c, nm);
        if (!pt) break;
        x[i] = lm_ggml_new_tensor(ctx, (enum lm_ggml_type) pt->type, 4, pt->ne);
        LM_GGML_ASSERT(lm_ggml_nbytes(x[i]) == pt->nbytes);
        memcpy(x[i]->data, pt->data, pt->nbytes);
        lm_ggml_format_name(x[i], "x%d", i);
        if (param_listed(c.params, i)) lm_ggml_set_param(ctx, x[i]);
        n_in++;
    }
    run_case(a->pc->name, ctx, x, n_in, a->pc->build, &a->pc->o, &c);
    lm_ggml_free(ctx);
    free_case(&c);
}

static void extra_one(void * p) {
    const struct extra_case * ec = p;
    struct lm_ggml_context * ctx = new_ctx(64);
    struct lm_ggml_tensor * x[6];
    for (int i = 0; i < ec->n_in; i++) {
        const struct in_spec * s = &ec->in[i];
        x[i] = lm_ggml_new_tensor(ctx, s->type, 4, s->ne);
        lm_ggml_format_name(x[i], "x%d", i);
        const int64_t n = lm_ggml_nelements(x[i]);
        for (int64_t k = 0; k < n; k++) {
            if (s->type == LM_GGML_TYPE_I32) ((int32_t *) x[i]->data)[k] = (int32_t) frand(s->lo, s->hi);
            else set_elem(x[i], k, frand(s->lo, s->hi));
        }
        if (s->fill == FILL_ROWS_SUM1) {
            const int64_t nc = x[i]->ne[0];
            for (int64_t r = 0; r < n / nc; r++) {
                float sum = 0;
                for (int64_t k = 0; k < nc; k++) sum += get_elem(x[i], r*nc + k);
                for (int64_t k = 0; k < nc; k++) set_elem(x[i], r*nc + k, get_elem(x[i], r*nc + k) / sum);
            }
        } else if (s->fill == FILL_DISTINCT) {
            // a shuffled ramp: no two values closer than (hi-lo)/n (no ties for max pooling)
            for (int64_t k = 0; k < n; k++) set_elem(x[i], k, s->lo + (s->hi - s->lo) * (float) k / (float) n);
            for (int64_t k = n - 1; k > 0; k--) {
                const int64_t j = (int64_t) frand(0, (float) (k + 1)) % (k + 1);
                const float t = get_elem(x[i], k);
                set_elem(x[i], k, get_elem(x[i], j));
                set_elem(x[i], j, t);
            }
        }
        if (s->param) lm_ggml_set_param(ctx, x[i]);
    }
    run_case(ec->name, ctx, x, ec->n_in, ec->build, &ec->o, NULL);
    lm_ggml_free(ctx);
}

// ---------------------------------------------------------------- accumulate over micro-batches

struct mlp {
    struct lm_ggml_tensor * w1, * b1, * w2, * b2, * xin, * y, * loss;
    struct lm_ggml_cgraph * gb;
};

static void mlp_build(struct lm_ggml_context * ctx_static, struct lm_ggml_context * ctx, struct mlp * m, int batch, bool accumulate,
        const struct mlp * share) {
    if (share) {
        m->w1 = share->w1; m->b1 = share->b1; m->w2 = share->w2; m->b2 = share->b2;
    } else {
        m->w1 = lm_ggml_new_tensor_2d(ctx_static, F32, 8, 16); lm_ggml_set_name(m->w1, "w1");
        m->b1 = lm_ggml_new_tensor_1d(ctx_static, F32, 16);    lm_ggml_set_name(m->b1, "b1");
        m->w2 = lm_ggml_new_tensor_2d(ctx_static, F32, 16, 3); lm_ggml_set_name(m->w2, "w2");
        m->b2 = lm_ggml_new_tensor_1d(ctx_static, F32, 3);     lm_ggml_set_name(m->b2, "b2");
        struct lm_ggml_tensor * ps[4] = { m->w1, m->b1, m->w2, m->b2 };
        for (int i = 0; i < 4; i++) {
            for (int64_t k = 0; k < lm_ggml_nelements(ps[i]); k++) ((float *) ps[i]->data)[k] = frand(-0.5f, 0.5f);
            lm_ggml_set_param(ctx_static, ps[i]);
        }
    }
    m->xin = lm_ggml_new_tensor_2d(ctx_static, F32, 8, batch);
    m->y   = lm_ggml_new_tensor_2d(ctx_static, F32, 3, batch);
    struct lm_ggml_tensor * h = lm_ggml_relu(ctx, lm_ggml_add(ctx, lm_ggml_mul_mat(ctx, m->w1, m->xin), m->b1));
    m->loss = lm_ggml_cross_entropy_loss(ctx, lm_ggml_add(ctx, lm_ggml_mul_mat(ctx, m->w2, h), m->b2), m->y);
    lm_ggml_set_loss(m->loss);
    m->gb = lm_ggml_new_graph_custom(ctx, 1024, true);
    lm_ggml_build_forward_expand(m->gb, m->loss);
    lm_ggml_build_backward_expand(ctx_static, ctx, m->gb, accumulate);
}

static void make_data(float * xs, float * ys, int n) {
    // 3 classes: which of three fixed directions the point is closest to
    for (int i = 0; i < n; i++) {
        float * xi = xs + 8*i;
        for (int k = 0; k < 8; k++) xi[k] = frand(-1, 1);
        const float s0 = xi[0] + xi[1] - xi[2], s1 = xi[3] - xi[4] + xi[5], s2 = xi[6] + xi[7] - xi[0];
        const int c = s0 > s1 ? (s0 > s2 ? 0 : 2) : (s1 > s2 ? 1 : 2);
        for (int k = 0; k < 3; k++) ys[3*i + k] = k == c ? 1.0f : 0.0f;
    }
}

static void test_accumulate(void * unused) {
    (void) unused;
    struct lm_ggml_context * cs = new_ctx(16), * cc = new_ctx(16);
    struct mlp big, micro;
    const int n_micro = 4, mb = 5;
    mlp_build(cs, cc, &big, n_micro*mb, false, NULL);
    mlp_build(cs, cc, &micro, mb, true, &big);

    float xs[8*20], ys[3*20];
    make_data(xs, ys, n_micro*mb);

    struct lm_ggml_tensor * ps[4] = { big.w1, big.b1, big.w2, big.b2 };
    report(lm_ggml_graph_get_grad_acc(big.gb, big.w1) == NULL && lm_ggml_graph_get_grad(big.gb, big.w1) != NULL &&
           lm_ggml_graph_get_grad_acc(big.gb, big.loss) != NULL,
           "accumulate=false: params have a gradient but no accumulator; the loss has one");
    report(lm_ggml_graph_get_grad_acc(micro.gb, big.w1) != NULL &&
           strcmp(lm_ggml_graph_get_grad_acc(micro.gb, big.w1)->name, "grad acc for w1") == 0,
           "accumulate=true: params have an accumulator named 'grad acc for w1' (got '%s')",
           lm_ggml_graph_get_grad_acc(micro.gb, big.w1) ? lm_ggml_graph_get_grad_acc(micro.gb, big.w1)->name : "(none)");
    {
        // every gradient node is named after its tensor
        struct lm_ggml_tensor * g = lm_ggml_graph_get_grad(big.gb, big.b2);
        report(g && strncmp(g->name, "grad for ", 9) == 0, "gradient names: '%s'", g ? g->name : "(none)");
    }

    memcpy(big.xin->data, xs, sizeof(xs));
    memcpy(big.y->data, ys, sizeof(ys));
    lm_ggml_graph_reset(big.gb);
    compute(cc, big.gb);
    const float big_loss = *(float *) big.loss->data;
    {
        // graph_dup carries the gradients along
        struct lm_ggml_cgraph * d = lm_ggml_graph_dup(cc, big.gb);
        bool same = d->n_nodes == big.gb->n_nodes;
        for (int i = 0; i < 4; i++) {
            same = same && lm_ggml_graph_get_grad(d, ps[i]) == lm_ggml_graph_get_grad(big.gb, ps[i]) &&
                   lm_ggml_graph_get_grad_acc(d, big.loss) == lm_ggml_graph_get_grad_acc(big.gb, big.loss);
        }
        struct lm_ggml_cgraph v = lm_ggml_graph_view(big.gb, 0, big.gb->n_nodes);
        report(same && lm_ggml_graph_get_grad(&v, big.w1) == NULL,
               "graph_dup keeps grads and grad_accs; a graph view has none");
    }

    for (int rep = 0; rep < 2; rep++) {
        // the second round checks that graph_reset really clears the accumulators
        lm_ggml_graph_reset(micro.gb);
        float loss_sum = 0;
        for (int b = 0; b < n_micro; b++) {
            memcpy(micro.xin->data, xs + 8*mb*b, sizeof(float)*8*mb);
            memcpy(micro.y->data, ys + 3*mb*b, sizeof(float)*3*mb);
            compute(cc, micro.gb);
            loss_sum += *(float *) micro.loss->data;
        }
        report(fabsf(loss_sum / n_micro - big_loss) < 1e-5f * fabsf(big_loss) + 1e-6f,
               "accumulate round %d: mean micro loss %.7f vs big-batch loss %.7f", rep, loss_sum / n_micro, big_loss);
        for (int i = 0; i < 4; i++) {
            struct lm_ggml_tensor * ga = lm_ggml_graph_get_grad_acc(micro.gb, ps[i]);
            struct lm_ggml_tensor * gb = lm_ggml_graph_get_grad(big.gb, ps[i]);
            const int64_t n = lm_ggml_nelements(ps[i]);
            float * a = malloc(n * sizeof(float)), * b = malloc(n * sizeof(float));
            to_f32(ga, a);
            to_f32(gb, b);
            for (int64_t k = 0; k < n; k++) a[k] /= n_micro; // cross entropy averages over rows
            const double e = nmse(a, b, n);
            report(e < 1e-10, "accumulate round %d: %s sum of %d micro-batch grads / %d vs big batch: nmse %.2e",
                   rep, ps[i]->name, n_micro, n_micro, e);
            free(a); free(b);
        }
    }
    lm_ggml_free(cc);
    lm_ggml_free(cs);
}

// ---------------------------------------------------------------- a computed tensor as a parameter
//
// ggml accepts set_param on any tensor (its test-opt marks the model's output
// f = x*a + b). Its gradient is the loss's gradient with respect to it, and
// when accumulating, each micro-batch passes its own gradient on to a and b
// (not the running sum in f's accumulator).

struct lin {
    struct lm_ggml_tensor * x, * t, * a, * b, * f, * loss;
    struct lm_ggml_cgraph * g;
};

static void lin_build(struct lm_ggml_context * cs, struct lm_ggml_context * cc, struct lin * l, int n, bool accumulate) {
    l->x = lm_ggml_new_tensor_1d(cs, F32, n);
    l->t = lm_ggml_new_tensor_1d(cs, F32, n);
    l->a = lm_ggml_new_tensor_1d(cs, F32, 1); lm_ggml_set_name(l->a, "a"); lm_ggml_set_param(cs, l->a);
    l->b = lm_ggml_new_tensor_1d(cs, F32, 1); lm_ggml_set_name(l->b, "b"); lm_ggml_set_param(cs, l->b);
    l->f = lm_ggml_add(cc, lm_ggml_mul(cc, l->x, l->a), l->b);
    lm_ggml_set_name(l->f, "f");
    lm_ggml_set_param(cs, l->f);
    l->loss = lm_ggml_sum(cc, lm_ggml_sqr(cc, lm_ggml_sub(cc, l->f, l->t)));
    lm_ggml_set_loss(l->loss);
    l->g = lm_ggml_new_graph_custom(cc, 256, true);
    lm_ggml_build_forward_expand(l->g, l->loss);
    lm_ggml_build_backward_expand(cs, cc, l->g, accumulate);
}

static void test_computed_param(void * unused) {
    (void) unused;
    enum { N = 5 };
    const float xs[2][N] = { { 1, 2, 3, 4, 5 }, { -1, 0.5f, 2, -3, 1.5f } };
    const float ts[2][N] = { { 2, 1, 0, 3, 4 }, { 1, 1, -2, 0, 2 } };
    const float a0 = 0.75f, b0 = -0.5f;
    // by hand, per micro-batch: df_i = 2(f_i - t_i), da = sum df_i x_i, db = sum df_i
    double df[2][N], da[2] = { 0, 0 }, db[2] = { 0, 0 };
    for (int m = 0; m < 2; m++) {
        for (int i = 0; i < N; i++) {
            df[m][i] = 2.0 * ((double) xs[m][i]*a0 + b0 - ts[m][i]);
            da[m] += df[m][i] * xs[m][i];
            db[m] += df[m][i];
        }
    }
    for (int accumulate = 0; accumulate <= 1; accumulate++) {
        struct lm_ggml_context * cs = new_ctx(1), * cc = new_ctx(1);
        struct lin l;
        lin_build(cs, cc, &l, N, accumulate);
        *(float *) l.a->data = a0;
        *(float *) l.b->data = b0;
        lm_ggml_graph_reset(l.g);
        const int rounds = accumulate ? 2 : 1;
        for (int m = 0; m < rounds; m++) {
            memcpy(l.x->data, xs[m], sizeof(xs[m]));
            memcpy(l.t->data, ts[m], sizeof(ts[m]));
            compute(cc, l.g);
        }
        struct lm_ggml_tensor * gf = lm_ggml_graph_get_grad(l.g, l.f);
        struct lm_ggml_tensor * ga = lm_ggml_graph_get_grad(l.g, l.a);
        struct lm_ggml_tensor * gb = lm_ggml_graph_get_grad(l.g, l.b);
        report(gf && ga && gb && (lm_ggml_graph_get_grad_acc(l.g, l.f) != NULL) == (accumulate != 0),
               "computed param (accumulate=%d): f, a and b have gradients%s", accumulate,
               accumulate ? " and f an accumulator" : "");
        if (!gf || !ga || !gb) {
            lm_ggml_free(cc); lm_ggml_free(cs);
            continue;
        }
        double err = 0;
        for (int i = 0; i < N; i++) {
            const double want = df[0][i] + (accumulate ? df[1][i] : 0);
            err = fmax(err, fabs(((float *) gf->data)[i] - want));
        }
        const double want_a = da[0] + (accumulate ? da[1] : 0), want_b = db[0] + (accumulate ? db[1] : 0);
        err = fmax(err, fabs(*(float *) ga->data - want_a));
        err = fmax(err, fabs(*(float *) gb->data - want_b));
        report(err < 1e-4, "computed param (accumulate=%d, %d micro-batches): grads of f, a, b as by hand (max error %.2e; da %.4f want %.4f)",
               accumulate, rounds, err, *(float *) ga->data, want_a);
        lm_ggml_free(cc);
        lm_ggml_free(cs);
    }
}

// A graph whose allocation never happened (the allocating call was refused):
// graph_reset skips the accumulators without memory and says so, without
// aborting; computing the graph then fails with a status.
static void test_reset_unallocated(void) {
    struct lm_ggml_init_params ip = { 1024 * 1024, NULL, true };
    struct lm_ggml_context * cs = lm_ggml_init(ip), * cc = lm_ggml_init(ip);
    struct lin l;
    lin_build(cs, cc, &l, 4, true);
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    lm_ggml_log_set(quiet_log, NULL);
    lm_ggml_graph_reset(l.g);
    const bool said = strstr(lm_backend_last_error(), "has no memory") != NULL;
    const enum lm_ggml_status st = lm_ggml_backend_graph_compute(cpu, l.g);
    lm_ggml_log_set(NULL, NULL);
    report(said, "graph_reset of an unallocated graph returns and says why: \"%s\"", lm_backend_last_error());
    report(st != LM_GGML_STATUS_SUCCESS, "computing the unallocated graph then fails with a status (%d)", (int) st);
    lm_ggml_backend_free(cpu);
    lm_ggml_free(cc);
    lm_ggml_free(cs);
}

// ---------------------------------------------------------------- AdamW

static void adamw_ref(float * w, const float * g, float * m, float * v, int64_t n, const float * p) {
    // the same float operations in the same order as the kernel's scalar path
    for (int64_t i = 0; i < n; i++) {
        m[i] = m[i]*p[1] + g[i]*(1.0f - p[1]);
        v[i] = v[i]*p[2] + g[i]*g[i]*(1.0f - p[2]);
        const float mh = m[i]*p[5];
        const float vh = sqrtf(v[i]*p[6]) + p[3];
        w[i] = w[i]*(1.0f - p[0]*p[4]) - p[0]*mh/vh;
    }
}

static void test_adamw_level(int level) {
    if (!lm_cpu_force_level(level)) {
        printf("skip  adamw at cpu level %d: not supported here\n", level);
        g_skip++;
        return;
    }
    struct lm_ggml_context * ctx = new_ctx(16);
    const int64_t n0 = 37, n1 = 3;
    struct lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx, F32, n0, n1);
    struct lm_ggml_tensor * g = lm_ggml_new_tensor_2d(ctx, F32, n0, n1);
    struct lm_ggml_tensor * m = lm_ggml_new_tensor_2d(ctx, F32, n0, n1);
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_2d(ctx, F32, n0, n1);
    struct lm_ggml_tensor * p = lm_ggml_new_tensor_1d(ctx, F32, 7);
    lm_ggml_set_param(ctx, w);
    const int64_t n = n0*n1;
    float rw[111], rm[111], rv[111];
    for (int64_t i = 0; i < n; i++) {
        rw[i] = ((float *) w->data)[i] = frand(-1, 1);
        rm[i] = ((float *) m->data)[i] = 0;
        rv[i] = ((float *) v->data)[i] = 0;
    }
    struct lm_ggml_tensor * step = lm_ggml_opt_step_adamw(ctx, w, g, m, v, p);
    report(step->op == LM_GGML_OP_OPT_STEP_ADAMW && step->view_src == w && step->data == w->data,
           "adamw: the step node is a view of the parameter");
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, step);

    double max_rel = 0;
    bool bitexact = true;
    for (int t = 1; t <= 3; t++) {
        const float alpha = 1e-2f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, wd = 0.1f;
        const float hp[7] = { alpha, beta1, beta2, eps, wd,
                              1.0f / (1.0f - powf(beta1, (float) t)), 1.0f / (1.0f - powf(beta2, (float) t)) };
        memcpy(p->data, hp, sizeof(hp));
        float rg[111];
        for (int64_t i = 0; i < n; i++) rg[i] = ((float *) g->data)[i] = frand(-2, 2);
        compute(ctx, gf);
        adamw_ref(rw, rg, rm, rv, n, hp);

        // independent double-precision check of the first step: m = (1-b1) g,
        // v = (1-b2) g^2, so the update is alpha * g/(|g| + eps) after bias correction
        for (int64_t i = 0; i < n; i++) {
            const float * wd_ = (float *) w->data;
            if (wd_[i] != rw[i] || ((float *) m->data)[i] != rm[i] || ((float *) v->data)[i] != rv[i]) bitexact = false;
            const double rel = fabs((double) wd_[i] - rw[i]) / (fabs(rw[i]) + 1e-6);
            if (rel > max_rel) max_rel = rel;
        }
    }
    report(max_rel < 1e-5, "adamw level %d: 3 steps vs hand computation: max rel err %.2e (%s)", level, max_rel,
           bitexact ? "bit exact" : "not bit exact");
    if (level == 0) report(bitexact, "adamw scalar path: bit exact against the hand computation");

    // graph_reset clears the moments of every AdamW node
    struct lm_ggml_cgraph * gr = lm_ggml_new_graph_custom(ctx, 64, true);
    lm_ggml_build_forward_expand(gr, step);
    lm_ggml_graph_reset(gr);
    bool zero = true;
    for (int64_t i = 0; i < n; i++) zero = zero && ((float *) m->data)[i] == 0 && ((float *) v->data)[i] == 0;
    report(zero, "adamw: graph_reset clears m and v");
    lm_ggml_free(ctx);
    lm_cpu_force_level(-1);
}

static void test_adamw_first_step(void) {
    // Step 1 with wd = 0: w -= alpha * g / (|g| + eps') exactly (in double)
    struct lm_ggml_context * ctx = new_ctx(4);
    struct lm_ggml_tensor * w = lm_ggml_new_tensor_1d(ctx, F32, 5);
    struct lm_ggml_tensor * g = lm_ggml_new_tensor_1d(ctx, F32, 5);
    struct lm_ggml_tensor * m = lm_ggml_new_tensor_1d(ctx, F32, 5);
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_1d(ctx, F32, 5);
    struct lm_ggml_tensor * p = lm_ggml_new_tensor_1d(ctx, F32, 7);
    lm_ggml_set_param(ctx, w);
    const float w0[5] = { 1, -2, 0.5f, 3, -0.25f }, g0[5] = { 0.1f, -3, 2, 0, 1e-3f };
    memcpy(w->data, w0, sizeof(w0)); memcpy(g->data, g0, sizeof(g0));
    lm_ggml_set_zero(m); lm_ggml_set_zero(v);
    const float hp[7] = { 0.1f, 0.9f, 0.999f, 1e-8f, 0.5f, 1.0f/(1.0f - 0.9f), 1.0f/(1.0f - 0.999f) };
    memcpy(p->data, hp, sizeof(hp));
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, lm_ggml_opt_step_adamw(ctx, w, g, m, v, p));
    compute(ctx, gf);
    double worst = 0;
    for (int i = 0; i < 5; i++) {
        const double gi = g0[i];
        const double want = w0[i] * (1.0 - 0.1*0.5) - 0.1 * gi / (fabs(gi) + 1e-8);
        const double err = fabs(((float *) w->data)[i] - want);
        if (err > worst) worst = err;
    }
    report(worst < 2e-5, "adamw step 1 (decoupled wd 0.5) vs closed form w*(1-alpha*wd) - alpha*sign(g): max abs err %.2e", worst);
    lm_ggml_free(ctx);
}

static void test_training(void) {
    // A few hundred full-batch AdamW steps on the MLP through the graph API.
    struct lm_ggml_context * cs = new_ctx(16), * cc = new_ctx(32);
    struct mlp net;
    const int n = 200;
    mlp_build(cs, cc, &net, n, false, NULL);
    struct lm_ggml_tensor * ps[4] = { net.w1, net.b1, net.w2, net.b2 };
    struct lm_ggml_tensor * hp = lm_ggml_new_tensor_1d(cs, F32, 7);
    for (int i = 0; i < 4; i++) {
        struct lm_ggml_tensor * m = lm_ggml_dup_tensor(cs, ps[i]);
        struct lm_ggml_tensor * v = lm_ggml_dup_tensor(cs, ps[i]);
        lm_ggml_build_forward_expand(net.gb, lm_ggml_opt_step_adamw(cc, ps[i], lm_ggml_graph_get_grad(net.gb, ps[i]), m, v, hp));
    }
    float * xs = malloc(sizeof(float)*8*n), * ys = malloc(sizeof(float)*3*n);
    make_data(xs, ys, n);
    memcpy(net.xin->data, xs, sizeof(float)*8*n);
    memcpy(net.y->data, ys, sizeof(float)*3*n);
    lm_ggml_graph_reset(net.gb);
    float first = 0, last = 0;
    const int steps = 300;
    const clock_t t0 = clock();
    for (int t = 1; t <= steps; t++) {
        const float b1 = 0.9f, b2 = 0.999f;
        const float h[7] = { 1e-2f, b1, b2, 1e-8f, 0.0f, 1.0f/(1.0f - powf(b1, t)), 1.0f/(1.0f - powf(b2, t)) };
        memcpy(hp->data, h, sizeof(h));
        compute(cc, net.gb);
        if (t == 1) first = *(float *) net.loss->data;
        last = *(float *) net.loss->data;
    }
    const double secs = (double) (clock() - t0) / CLOCKS_PER_SEC;
    report(last < 0.5f * first, "training: loss %.4f -> %.4f after %d AdamW steps (%.1f ms cpu)", first, last, steps, secs * 1e3);
    free(xs); free(ys);
    lm_ggml_free(cc);
    lm_ggml_free(cs);
}

// ---------------------------------------------------------------- misuse

struct misuse { int kind; int n_nodes_before; struct lm_ggml_cgraph * g; struct lm_ggml_context * ctx; };

static void misuse_run(void * p) {
    struct misuse * mu = p;
    struct lm_ggml_context * ctx = mu->ctx = new_ctx(4);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, F32, 4);
    lm_ggml_set_zero(x);
    if (mu->kind != 0) lm_ggml_set_param(ctx, x);
    struct lm_ggml_tensor * y;
    switch (mu->kind) {
        case 2:  y = lm_ggml_sum(ctx, lm_ggml_tanh(ctx, x)); break;
        case 3:  y = lm_ggml_sum(ctx, lm_ggml_norm(ctx, x, 1e-5f)); break;
        default: y = lm_ggml_sum(ctx, lm_ggml_sqr(ctx, x)); break;
    }
    if (mu->kind != 1) lm_ggml_set_loss(y);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx, 64, mu->kind != 4);
    lm_ggml_build_forward_expand(g, y);
    mu->n_nodes_before = g->n_nodes;
    mu->g = g;
    // on error the caller frees the context after looking at g
    lm_ggml_build_backward_expand(ctx, ctx, g, false);
    mu->g = NULL;
}

static void test_misuse(void) {
    const char * want[5] = { "no trainable parameters", "no training loss", "TANH", "NORM", "grads" };
    const char * what[5] = { "no params", "no loss", "unsupported unary op", "unsupported op", "graph without grads" };
    for (int k = 0; k < 5; k++) {
        struct misuse mu = { k, -1, NULL, NULL };
        char msg[600];
        const bool ok = run_try(misuse_run, &mu, msg, sizeof(msg));
        report(!ok && strstr(msg, want[k]) != NULL, "misuse (%s) -> error \"%s\"", what[k], msg);
        if (k >= 2 && k <= 3) {
            report(mu.g != NULL && mu.g->n_nodes == mu.n_nodes_before, "misuse (%s): failed before adding nodes", what[k]);
        }
        if (mu.ctx) lm_ggml_free(mu.ctx);
    }
}

// ---------------------------------------------------------------- main

int main(int argc, char ** argv) {
    const char * dir = "/tmp/lm-bw-parity";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) g_verbose = 1;
        else dir = argv[i];
    }
    lm_ggml_cpu_init();
    if (getenv("LM_TEST_THREADS")) N_THREADS = atoi(getenv("LM_TEST_THREADS"));

    char msg[600];
    printf("== parity (%s) + finite differences\n", dir);
    for (size_t i = 0; i < sizeof(k_parity)/sizeof(k_parity[0]); i++) {
        struct parity_arg a = { dir, &k_parity[i] };
        if (!run_try(parity_one, &a, msg, sizeof(msg))) report(false, "%-26s error: %s", k_parity[i].name, msg);
    }
    printf("== finite differences: extra rules and beyond-reference broadcasts\n");
    for (size_t i = 0; i < sizeof(k_extra)/sizeof(k_extra[0]); i++) {
        if (!run_try(extra_one, (void *) &k_extra[i], msg, sizeof(msg))) report(false, "%-26s error: %s", k_extra[i].name, msg);
    }
    printf("== accumulate\n");
    if (!run_try(test_accumulate, NULL, msg, sizeof(msg))) report(false, "accumulate error: %s", msg);
    printf("== a computed tensor as a parameter\n");
    if (!run_try(test_computed_param, NULL, msg, sizeof(msg))) report(false, "computed param error: %s", msg);
    test_reset_unallocated();
    printf("== adamw\n");
    test_adamw_level(LM_CPU_LEVEL_SCALAR);
    test_adamw_level(LM_CPU_LEVEL_AVX2);
    test_adamw_first_step();
    test_training();
    printf("== misuse\n");
    test_misuse();

    printf("\n%d skipped\n", g_skip);
    return check_summary();
}
