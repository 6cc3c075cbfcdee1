// elem-parity.h - test-only: an s-expression interpreter that builds a parity
// case's graph from its `case.expr` (covering the elementwise/reduce ops and
// the view ops their cases use), plus value comparison helpers.
#pragma once

#include "parity-case.h"

// ---------------------------------------------------------------- expression interpreter

enum pc_kind { PC_NONE, PC_T, PC_NUM, PC_SYM };
struct pc_val { enum pc_kind k; struct lm_ggml_tensor * t; double num; char sym[64]; };

struct pc_env {
    struct lm_ggml_context * ctx;
    struct lm_ggml_tensor * x[PC_MAX_T];
    int n_x;
    const char * s;
    int err;
    char unknown[64];
};

static void pc_ws(struct pc_env * e) { while (*e->s && isspace((unsigned char) *e->s)) e->s++; }

static int pc_type_of(const char * s) {
    for (int t = 0; t < LM_GGML_TYPE_COUNT; t++) {
        const char * n = lm_ggml_type_name((enum lm_ggml_type) t);
        if (n && !strcasecmp(n, s)) return t;
    }
    return -1;
}

static struct pc_val pc_eval(struct pc_env * e);

#define PC_T0 (a[0].t)
#define PC_T1 (a[1].t)
#define PC_T2 (a[2].t)
#define PC_N(i) (a[i].num)
#define PC_I(i) ((int) a[i].num)

static struct lm_ggml_tensor * pc_apply(struct pc_env * e, const char * op, struct pc_val * a, int n) {
    struct lm_ggml_context * ctx = e->ctx;
    (void) n;
#define U(name) if (!strcmp(op, #name)) return lm_ggml_##name(ctx, PC_T0);
#define B(name) if (!strcmp(op, #name)) return lm_ggml_##name(ctx, PC_T0, PC_T1);
    U(sqr) U(sqrt) U(log) U(sin) U(cos) U(sum) U(sum_rows) U(mean) U(argmax)
    U(abs) U(sgn) U(neg) U(step) U(tanh) U(elu) U(relu) U(sigmoid) U(gelu) U(gelu_quick) U(silu)
    U(hardswish) U(hardsigmoid) U(exp) U(soft_max) U(diag) U(cont) U(transpose) U(dup)
    U(sqr_inplace) U(sqrt_inplace) U(log_inplace) U(sin_inplace) U(cos_inplace) U(abs_inplace) U(neg_inplace)
    U(relu_inplace) U(silu_inplace) U(gelu_inplace) U(exp_inplace) U(tanh_inplace) U(soft_max_inplace)
    B(add) B(add1) B(sub) B(mul) B(div) B(count_equal) B(repeat) B(repeat_back) B(silu_back) B(soft_max_back)
    B(add_inplace) B(sub_inplace) B(mul_inplace) B(div_inplace) B(add1_inplace) B(soft_max_back_inplace)
    B(mul_mat) B(cpy) B(get_rows)
#undef U
#undef B
    if (!strcmp(op, "concat"))           return lm_ggml_concat(ctx, PC_T0, PC_T1, PC_I(2));
    if (!strcmp(op, "leaky_relu"))       return lm_ggml_leaky_relu(ctx, PC_T0, (float) PC_N(1), a[2].num != 0);
    if (!strcmp(op, "norm"))             return lm_ggml_norm(ctx, PC_T0, (float) PC_N(1));
    if (!strcmp(op, "rms_norm"))         return lm_ggml_rms_norm(ctx, PC_T0, (float) PC_N(1));
    if (!strcmp(op, "rms_norm_back"))    return lm_ggml_rms_norm_back(ctx, PC_T0, PC_T1, (float) PC_N(2));
    if (!strcmp(op, "group_norm"))       return lm_ggml_group_norm(ctx, PC_T0, PC_I(1), (float) PC_N(2));
    if (!strcmp(op, "scale"))            return lm_ggml_scale(ctx, PC_T0, (float) PC_N(1));
    if (!strcmp(op, "clamp"))            return lm_ggml_clamp(ctx, PC_T0, (float) PC_N(1), (float) PC_N(2));
    if (!strcmp(op, "diag_mask_inf"))    return lm_ggml_diag_mask_inf(ctx, PC_T0, PC_I(1));
    if (!strcmp(op, "diag_mask_zero"))   return lm_ggml_diag_mask_zero(ctx, PC_T0, PC_I(1));
    if (!strcmp(op, "soft_max_ext"))     return lm_ggml_soft_max_ext(ctx, PC_T0, PC_T1, (float) PC_N(2), (float) PC_N(3));
    if (!strcmp(op, "upscale"))          return lm_ggml_upscale(ctx, PC_T0, PC_I(1));
    if (!strcmp(op, "upscale_ext"))      return lm_ggml_upscale_ext(ctx, PC_T0, PC_I(1), PC_I(2), PC_I(3), PC_I(4));
    if (!strcmp(op, "pad"))              return lm_ggml_pad(ctx, PC_T0, PC_I(1), PC_I(2), PC_I(3), PC_I(4));
    if (!strcmp(op, "arange"))           return lm_ggml_arange(ctx, (float) PC_N(0), (float) PC_N(1), (float) PC_N(2));
    if (!strcmp(op, "timestep_embedding")) return lm_ggml_timestep_embedding(ctx, PC_T0, PC_I(1), PC_I(2));
    if (!strcmp(op, "argsort"))          return lm_ggml_argsort(ctx, PC_T0, !strcmp(a[1].sym, "DESC") ? LM_GGML_SORT_ORDER_DESC : LM_GGML_SORT_ORDER_ASC);
    if (!strcmp(op, "top_k"))            return lm_ggml_top_k(ctx, PC_T0, PC_I(1));
    if (!strcmp(op, "acc"))              return lm_ggml_acc(ctx, PC_T0, PC_T1, (size_t) PC_N(2), (size_t) PC_N(3), (size_t) PC_N(4), (size_t) PC_N(5));
    if (!strcmp(op, "permute"))          return lm_ggml_permute(ctx, PC_T0, PC_I(1), PC_I(2), PC_I(3), PC_I(4));
    if (!strcmp(op, "reshape_1d"))       return lm_ggml_reshape_1d(ctx, PC_T0, (int64_t) PC_N(1));
    if (!strcmp(op, "reshape_2d"))       return lm_ggml_reshape_2d(ctx, PC_T0, (int64_t) PC_N(1), (int64_t) PC_N(2));
    if (!strcmp(op, "reshape_3d"))       return lm_ggml_reshape_3d(ctx, PC_T0, (int64_t) PC_N(1), (int64_t) PC_N(2), (int64_t) PC_N(3));
    if (!strcmp(op, "view_1d"))          return lm_ggml_view_1d(ctx, PC_T0, (int64_t) PC_N(1), (size_t) PC_N(2));
    if (!strcmp(op, "view_2d"))          return lm_ggml_view_2d(ctx, PC_T0, (int64_t) PC_N(1), (int64_t) PC_N(2), (size_t) PC_N(3), (size_t) PC_N(4));
    if (!strcmp(op, "set"))              return lm_ggml_set(ctx, PC_T0, PC_T1, (size_t) PC_N(2), (size_t) PC_N(3), (size_t) PC_N(4), (size_t) PC_N(5));
    if (!strcmp(op, "cross_entropy_loss")) return lm_ggml_cross_entropy_loss(ctx, PC_T0, PC_T1);
    snprintf(e->unknown, sizeof(e->unknown), "%s", op);
    e->err = 1;
    return NULL;
}

static struct pc_val pc_eval(struct pc_env * e) {
    struct pc_val v = { 0 };
    pc_ws(e);
    if (*e->s == '(') {
        e->s++;
        pc_ws(e);
        char op[64];
        int k = 0;
        while (*e->s && !isspace((unsigned char) *e->s) && *e->s != ')' && k < 63) op[k++] = *e->s++;
        op[k] = 0;
        struct pc_val a[12];
        int n = 0;
        for (;;) {
            pc_ws(e);
            if (*e->s == ')') { e->s++; break; }
            if (!*e->s || n == 12) { e->err = 1; return v; }
            a[n++] = pc_eval(e);
            if (e->err) return v;
        }
        if (!strcmp(op, "nb")) { v.k = PC_NUM; v.num = (double) a[0].t->nb[(int) a[1].num]; return v; }
        if (!strcmp(op, "+"))  { v.k = PC_NUM; v.num = a[0].num + a[1].num; return v; }
        if (!strcmp(op, "*"))  { v.k = PC_NUM; v.num = a[0].num * a[1].num; return v; }
        v.k = PC_T;
        v.t = pc_apply(e, op, a, n);
        return v;
    }
    char tok[64];
    int k = 0;
    while (*e->s && !isspace((unsigned char) *e->s) && *e->s != ')' && *e->s != '(' && k < 63) tok[k++] = *e->s++;
    tok[k] = 0;
    if (tok[0] == 'x' && isdigit((unsigned char) tok[1])) {
        const int i = atoi(tok + 1);
        if (i >= e->n_x) { e->err = 1; return v; }
        v.k = PC_T; v.t = e->x[i];
        return v;
    }
    if (!strcmp(tok, "NULL"))  { v.k = PC_T; v.t = NULL; return v; }
    if (!strcmp(tok, "true"))  { v.k = PC_NUM; v.num = 1; return v; }
    if (!strcmp(tok, "false")) { v.k = PC_NUM; v.num = 0; return v; }
    char * endp;
    const double d = strtod(tok, &endp);
    if (*endp == 0 && endp != tok) { v.k = PC_NUM; v.num = d; return v; }
    v.k = PC_SYM;
    snprintf(v.sym, sizeof(v.sym), "%s", tok);
    const int ty = pc_type_of(tok);
    if (ty >= 0) v.num = ty;
    if (!strcmp(tok, "AVG")) v.num = LM_GGML_OP_POOL_AVG;
    return v;
}

// ---------------------------------------------------------------- comparison

// Tensor values widened to double (f32/f16/bf16/quantized through to_float, ints exact).
static double * pc_to_f64(const void * data, int type, int64_t n) {
    double * out = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (type == LM_GGML_TYPE_I32) { for (int64_t i = 0; i < n; i++) out[i] = ((const int32_t *) data)[i]; return out; }
    if (type == LM_GGML_TYPE_I64) { for (int64_t i = 0; i < n; i++) out[i] = (double)((const int64_t *) data)[i]; return out; }
    if (type == LM_GGML_TYPE_F32) { for (int64_t i = 0; i < n; i++) out[i] = ((const float *) data)[i]; return out; }
    float * f = malloc(sizeof(float) * (size_t)(n ? n : 1));
    const struct lm_ggml_type_traits * tr = lm_ggml_get_type_traits((enum lm_ggml_type) type);
    tr->to_float(data, f, n);
    for (int64_t i = 0; i < n; i++) out[i] = f[i];
    free(f);
    return out;
}

// NMSE of a against reference b; exact compare for ints (returns 0 or 1).
static double pc_nmse(const double * a, const double * b, int64_t n, int is_int) {
    if (is_int) {
        for (int64_t i = 0; i < n; i++) if (a[i] != b[i]) return 1.0;
        return 0.0;
    }
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i])) continue;
        if (isinf(a[i]) && a[i] == b[i]) continue;
        num += (a[i] - b[i])*(a[i] - b[i]);
        den += b[i]*b[i];
    }
    if (den == 0) return num == 0 ? 0 : INFINITY;
    return num/den;
}
