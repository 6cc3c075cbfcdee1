// test-parity-nnconv.c - runs the parity cases of the rope / conv / pool /
// attention / SAM / SSM / RWKV ops against the reference outputs, with 1, 2
// and 4 threads and (on x86) scalar and AVX2 kernels.
//
// Build: cc -O2 -pthread -Icsrc tests/c/test-parity-nnconv.c csrc/*.c -lm
// Run from the project root (reads ../shared/parity/ops, or $PARITY_DIR).
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "nnconv-case.h"

#include <ctype.h>
#include <math.h>

// ---------------------------------------------------------------- a small evaluator of case.expr

enum vkind { V_T, V_NUM, V_NULL, V_BOOL, V_TYPE, V_POOL };
struct val { enum vkind k; struct lm_ggml_tensor * t; double num; };

struct ev {
    const char * s;
    struct lm_ggml_context * ctx;
    struct lm_ggml_tensor * in[16];
    int n_in;
    int err;
};

static void skip_ws(struct ev * e) { while (isspace((unsigned char) *e->s)) e->s++; }

static struct val eval(struct ev * e);

static struct val mk_t(struct lm_ggml_tensor * t) { struct val v = { V_T, t, 0 }; return v; }

#define ARG_T(i)   (a[i].t)
#define ARG_I(i)   ((int) a[i].num)
#define ARG_F(i)   ((float) a[i].num)

static struct val apply(struct ev * e, const char * op, struct val * a, int n) {
    struct lm_ggml_context * ctx = e->ctx;
    (void) n;
    if (!strcmp(op, "rope_ext"))
        return mk_t(lm_ggml_rope_ext(ctx, ARG_T(0), ARG_T(1), ARG_T(2), ARG_I(3), ARG_I(4), ARG_I(5), ARG_F(6), ARG_F(7),
                ARG_F(8), ARG_F(9), ARG_F(10), ARG_F(11)));
    if (!strcmp(op, "im2col"))
        return mk_t(lm_ggml_im2col(ctx, ARG_T(0), ARG_T(1), ARG_I(2), ARG_I(3), ARG_I(4), ARG_I(5), ARG_I(6), ARG_I(7),
                a[8].num != 0, (enum lm_ggml_type) ARG_I(9)));
    if (!strcmp(op, "conv_2d"))
        return mk_t(lm_ggml_conv_2d(ctx, ARG_T(0), ARG_T(1), ARG_I(2), ARG_I(3), ARG_I(4), ARG_I(5), ARG_I(6), ARG_I(7)));
    if (!strcmp(op, "conv_1d"))
        return mk_t(lm_ggml_conv_1d(ctx, ARG_T(0), ARG_T(1), ARG_I(2), ARG_I(3), ARG_I(4)));
    if (!strcmp(op, "pool_1d"))
        return mk_t(lm_ggml_pool_1d(ctx, ARG_T(0), (enum lm_ggml_op_pool) ARG_I(1), ARG_I(2), ARG_I(3), ARG_I(4)));
    if (!strcmp(op, "pool_2d"))
        return mk_t(lm_ggml_pool_2d(ctx, ARG_T(0), (enum lm_ggml_op_pool) ARG_I(1), ARG_I(2), ARG_I(3), ARG_I(4), ARG_I(5),
                ARG_F(6), ARG_F(7)));
    if (!strcmp(op, "pool_2d_back"))
        return mk_t(lm_ggml_pool_2d_back(ctx, ARG_T(0), ARG_T(1), (enum lm_ggml_op_pool) ARG_I(2), ARG_I(3), ARG_I(4),
                ARG_I(5), ARG_I(6), ARG_F(7), ARG_F(8)));
    if (!strcmp(op, "flash_attn_ext"))
        return mk_t(lm_ggml_flash_attn_ext(ctx, ARG_T(0), ARG_T(1), ARG_T(2), ARG_T(3), ARG_F(4), ARG_F(5), ARG_F(6)));
    if (!strcmp(op, "ssm_conv"))    return mk_t(lm_ggml_ssm_conv(ctx, ARG_T(0), ARG_T(1)));
    if (!strcmp(op, "win_part"))    return mk_t(lm_ggml_win_part(ctx, ARG_T(0), ARG_I(1)));
    if (!strcmp(op, "get_rel_pos")) return mk_t(lm_ggml_get_rel_pos(ctx, ARG_T(0), ARG_I(1), ARG_I(2)));
    if (!strcmp(op, "rwkv_wkv6"))
        return mk_t(lm_ggml_rwkv_wkv6(ctx, ARG_T(0), ARG_T(1), ARG_T(2), ARG_T(3), ARG_T(4), ARG_T(5)));
    if (!strcmp(op, "mul")) return mk_t(lm_ggml_mul(ctx, ARG_T(0), ARG_T(1)));
    fprintf(stderr, "unknown op %s\n", op);
    e->err = 1;
    struct val z = { V_NULL, NULL, 0 };
    return z;
}

static struct val eval(struct ev * e) {
    skip_ws(e);
    struct val v = { V_NULL, NULL, 0 };
    if (*e->s == '(') {
        e->s++;
        skip_ws(e);
        char op[64]; int n = 0;
        while (*e->s && !isspace((unsigned char) *e->s) && *e->s != ')') op[n++] = *e->s++;
        op[n] = 0;
        struct val a[16]; int na = 0;
        for (;;) {
            skip_ws(e);
            if (*e->s == ')') { e->s++; break; }
            if (!*e->s) { e->err = 1; return v; }
            a[na++] = eval(e);
        }
        return apply(e, op, a, na);
    }
    char tok[64]; int n = 0;
    while (*e->s && !isspace((unsigned char) *e->s) && *e->s != ')' && *e->s != '(') tok[n++] = *e->s++;
    tok[n] = 0;
    if (tok[0] == 'x' && isdigit((unsigned char) tok[1])) { v.k = V_T; v.t = e->in[atoi(tok + 1)]; return v; }
    if (!strcmp(tok, "NULL")) return v;
    if (!strcmp(tok, "true") || !strcmp(tok, "false")) { v.k = V_BOOL; v.num = tok[0] == 't'; return v; }
    if (!strcmp(tok, "F32")) { v.k = V_TYPE; v.num = LM_GGML_TYPE_F32; return v; }
    if (!strcmp(tok, "F16")) { v.k = V_TYPE; v.num = LM_GGML_TYPE_F16; return v; }
    if (!strcmp(tok, "MAX")) { v.k = V_POOL; v.num = LM_GGML_OP_POOL_MAX; return v; }
    if (!strcmp(tok, "AVG")) { v.k = V_POOL; v.num = LM_GGML_OP_POOL_AVG; return v; }
    v.k = V_NUM; v.num = atof(tok);
    return v;
}

// ---------------------------------------------------------------- comparison

static double to_f(const void * data, uint32_t type, int64_t i) {
    if (type == LM_GGML_TYPE_F32) return ((const float *) data)[i];
    if (type == LM_GGML_TYPE_F16) return lm_ggml_fp16_to_fp32(((const lm_ggml_fp16_t *) data)[i]);
    if (type == LM_GGML_TYPE_I32) return ((const int32_t *) data)[i];
    return NAN;
}

// NMSE of a contiguous tensor against reference data of the same element count
static double nmse(const struct lm_ggml_tensor * t, const struct nc_tensor * ref) {
    const int64_t n = lm_ggml_nelements(t);
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        const double a = to_f(t->data, t->type, i), b = to_f(ref->data, ref->type, i);
        num += (a - b) * (a - b);
        den += b * b;
    }
    return den > 0 ? num / den : num;
}

static bool same_shape(const struct lm_ggml_tensor * t, const struct nc_tensor * ref) {
    for (int d = 0; d < 4; d++) if (t->ne[d] != ref->ne[d]) return false;
    return true;
}

// ---------------------------------------------------------------- one run

static int run_case(const char * dir, const char * name, double tol, int n_threads, int level, double * err_out) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s.gguf", dir, name);
    struct nc_case c;
    if (nc_load(path, &c) != 0) { printf("SKIP %s: cannot read %s\n", name, path); return -1; }
    const bool backward = !strcmp(c.kind, "backward");

    struct lm_ggml_init_params ip = { 64u << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct ev e = { 0 };
    e.ctx = ctx;
    for (int i = 0; i < 16; i++) {
        char nm[16];
        snprintf(nm, sizeof(nm), "x%d", i);
        const struct nc_tensor * pt = nc_find(&c, nm);
        if (!pt) break;
        struct lm_ggml_tensor * t = lm_ggml_new_tensor(ctx, (enum lm_ggml_type) pt->type, pt->n_dims, pt->ne);
        memcpy(t->data, pt->data, lm_ggml_nbytes(t));
        lm_ggml_set_name(t, nm);
        e.in[i] = t;
        e.n_in = i + 1;
    }
    const char * expr = strstr(c.expr, "(");
    e.s = expr;
    struct val out = eval(&e);
    if (e.err || out.k != V_T) { printf("FAIL %s: cannot build %s\n", name, c.expr); return 1; }

    struct lm_ggml_cgraph * gf = lm_ggml_new_graph_custom(ctx, 1024, backward);
    struct lm_ggml_tensor * loss = NULL;
    if (backward) {
        for (int i = 0; i < e.n_in; i++) {
            char nm[16];
            snprintf(nm, sizeof(nm), "x%d", i);
            if (strstr(c.params, nm)) lm_ggml_set_param(ctx, e.in[i]);
        }
        loss = lm_ggml_nelements(out.t) == 1 ? out.t : lm_ggml_sum(ctx, out.t);
        lm_ggml_set_loss(loss);
        lm_ggml_build_forward_expand(gf, loss);
        lm_ggml_build_backward_expand(ctx, ctx, gf, false);
        lm_ggml_graph_reset(gf);
    } else {
        lm_ggml_build_forward_expand(gf, out.t);
    }
    lm_cpu_force_level(level);
    lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads);
    lm_cpu_force_level(-1);

    int fail = 0;
    double worst = 0;
    const struct nc_tensor * ref = nc_find(&c, "out");
    struct lm_ggml_tensor * o = out.t;
    if (!lm_ggml_is_contiguous(o)) o = NULL;
    if (!ref || !o || !same_shape(out.t, ref)) {
        printf("FAIL %s: shape [%lld,%lld,%lld,%lld] vs ref\n", name, (long long) out.t->ne[0], (long long) out.t->ne[1],
               (long long) out.t->ne[2], (long long) out.t->ne[3]);
        fail = 1;
    } else {
        const double err = nmse(o, ref);
        if (!(err <= tol)) { printf("FAIL %s out nmse %.3g (tol %.1g) threads %d level %d\n", name, err, tol, n_threads, level); fail = 1; }
        worst = err;
    }
    if (backward) {
        for (int i = 0; i < e.n_in; i++) {
            char nm[32];
            snprintf(nm, sizeof(nm), "grad.x%d", i);
            const struct nc_tensor * g = nc_find(&c, nm);
            if (!g) continue;
            struct lm_ggml_tensor * gt = lm_ggml_graph_get_grad(gf, e.in[i]);
            if (!gt || !same_shape(gt, g)) { printf("FAIL %s: no/bad grad x%d\n", name, i); fail = 1; continue; }
            const double err = nmse(gt, g);
            if (!(err <= 1e-6)) { printf("FAIL %s grad x%d nmse %.3g\n", name, i, err); fail = 1; }
            if (err > worst) worst = err;
        }
    }
    *err_out = worst;
    lm_ggml_free(ctx);
    nc_free(&c);
    return fail;
}

int main(int argc, char ** argv) {
    const char * dir = getenv("PARITY_DIR");
    if (!dir) dir = "../shared/parity/ops";
    struct { const char * name; double tol; } cases[] = {
        { "rope_norm", 1e-7 }, { "rope_neox", 1e-7 }, { "rope_f16", 5e-4 },
        { "im2col_1d", 1e-7 }, { "im2col_2d", 1e-7 }, { "conv_2d", 1e-7 }, { "conv_1d", 5e-4 },
        { "pool_1d_avg", 1e-7 }, { "pool_2d_max", 1e-7 }, { "pool_2d_back", 1e-7 },
        { "flash_attn_ext", 5e-4 }, { "ssm_conv", 1e-7 }, { "win_part", 1e-7 }, { "get_rel_pos", 5e-4 },
        { "rwkv_wkv6", 1e-7 }, { "bw_im2col", 1e-7 },
    };
    const int nc = (int)(sizeof(cases) / sizeof(cases[0]));
    const int threads[] = { 1, 2, 4 };
    int n_fail = 0, n_pass = 0, n_skip = 0;
    for (int i = 0; i < nc; i++) {
        if (argc > 1 && !strstr(argv[1], cases[i].name)) continue;
        double worst = 0;
        int fails = 0, skipped = 0;
        for (int level = 0; level <= 1; level++) {
            if (level == 1 && !lm_cpu_force_level(LM_CPU_LEVEL_AVX2)) break;
            lm_cpu_force_level(-1);
            for (int ti = 0; ti < 3; ti++) {
                double err = 0;
                const int r = run_case(dir, cases[i].name, cases[i].tol, threads[ti], level, &err);
                if (r < 0) { skipped = 1; break; }
                fails += r;
                if (err > worst) worst = err;
            }
            if (skipped) break;
        }
        if (skipped) { n_skip++; continue; }
        printf("%-5s %-16s worst nmse %.3g\n", fails ? "FAIL" : "ok", cases[i].name, worst);
        if (fails) n_fail++; else n_pass++;
    }
    printf("parity: %d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
    return n_fail ? 1 : 0;
}
