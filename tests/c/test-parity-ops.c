// test-parity-ops.c - runs op cases of ../shared/parity/ops against the core.
//
// The GGUF case files are first converted by tests/c/parity-conv.py into a
// simple binary (expression line, tensor count, then per tensor a header
// line and raw bytes). This program reads those, evaluates the expression
// with the public API (a small s-expression interpreter covering the ops of
// the copy and matmul families plus the few others their cases use), computes
// with 1, 2 and 4 threads and compares with the reference by NMSE.
//
// usage: test-parity-ops DIR case...   (DIR holds <case>.bin)
#include "ggml.h"
#include "ggml-cpu.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 16
struct input { char name[64]; int type; int64_t ne[4]; size_t nbytes; unsigned char * data; };
static struct input g_in[MAXT];
static int g_nin;
static char g_expr[4096];
static const char * g_p;
static struct lm_ggml_tensor * g_x[MAXT];
static int g_uses_lowprec;

static bool load_case(const char * path) {
    FILE * f = fopen(path, "rb");
    if (!f) return false;
    if (!fgets(g_expr, sizeof(g_expr), f)) { fclose(f); return false; }
    g_expr[strcspn(g_expr, "\n")] = 0;
    char line[256];
    if (!fgets(line, sizeof(line), f)) { fclose(f); return false; }
    g_nin = atoi(line);
    for (int i = 0; i < g_nin; i++) {
        struct input * t = &g_in[i];
        long long ne[4]; size_t nb;
        if (!fgets(line, sizeof(line), f) ||
            sscanf(line, "%63s %d %lld %lld %lld %lld %zu", t->name, &t->type, &ne[0], &ne[1], &ne[2], &ne[3], &nb) != 7) {
            fclose(f); return false;
        }
        for (int k = 0; k < 4; k++) t->ne[k] = ne[k];
        t->nbytes = nb;
        t->data = malloc(nb);
        if (fread(t->data, 1, nb, f) != nb) { fclose(f); return false; }
    }
    fclose(f);
    return true;
}


// ---------------------------------------------------------------- expression evaluation

static void skip_ws(void) { while (isspace((unsigned char) *g_p)) g_p++; }
static void read_tok(char * buf) {
    skip_ws();
    int n = 0;
    while (*g_p && !isspace((unsigned char) *g_p) && *g_p != '(' && *g_p != ')') buf[n++] = *g_p++;
    buf[n] = 0;
}

struct val { bool is_t; struct lm_ggml_tensor * t; long long n; };

static struct val eval(struct lm_ggml_context * ctx);

static struct lm_ggml_tensor * T(struct val v) { if (!v.is_t) { fprintf(stderr, "expected tensor\n"); exit(2); } return v.t; }
static long long N(struct val v) { if (v.is_t) { fprintf(stderr, "expected number\n"); exit(2); } return v.n; }

static struct val mk_t(struct lm_ggml_tensor * t) { struct val v = { true, t, 0 }; return v; }
static struct val mk_n(long long n) { struct val v = { false, NULL, n }; return v; }

static struct val eval(struct lm_ggml_context * ctx) {
    skip_ws();
    char tok[128];
    if (*g_p != '(') {
        read_tok(tok);
        if (tok[0] == 'x' && isdigit((unsigned char) tok[1])) return mk_t(g_x[atoi(tok + 1)]);
        if (strcmp(tok, "true") == 0) return mk_n(1);
        if (strcmp(tok, "false") == 0) return mk_n(0);
        if (strcmp(tok, "F32") == 0) return mk_n(LM_GGML_TYPE_F32);
        if (strcmp(tok, "F16") == 0) return mk_n(LM_GGML_TYPE_F16);
        return mk_n(atoll(tok));
    }
    g_p++;
    read_tok(tok);
    struct val a[8];
    int na = 0;
    for (;;) {
        skip_ws();
        if (*g_p == ')') { g_p++; break; }
        a[na++] = eval(ctx);
    }
#define IS(s) (strcmp(tok, s) == 0)
    if (IS("nb")) return mk_n((long long) T(a[0])->nb[N(a[1])]);
    if (IS("+")) return mk_n(N(a[0]) + N(a[1]));
    if (IS("*")) return mk_n(N(a[0]) * N(a[1]));
    if (IS("mul_mat")) return mk_t(lm_ggml_mul_mat(ctx, T(a[0]), T(a[1])));
    if (IS("out_prod")) return mk_t(lm_ggml_out_prod(ctx, T(a[0]), T(a[1])));
    if (IS("cpy")) return mk_t(lm_ggml_cpy(ctx, T(a[0]), T(a[1])));
    if (IS("cast")) return mk_t(lm_ggml_cast(ctx, T(a[0]), (enum lm_ggml_type) N(a[1])));
    if (IS("dup")) return mk_t(lm_ggml_dup(ctx, T(a[0])));
    if (IS("cont")) return mk_t(lm_ggml_cont(ctx, T(a[0])));
    if (IS("transpose")) return mk_t(lm_ggml_transpose(ctx, T(a[0])));
    if (IS("permute")) return mk_t(lm_ggml_permute(ctx, T(a[0]), (int) N(a[1]), (int) N(a[2]), (int) N(a[3]), (int) N(a[4])));
    if (IS("view_1d")) return mk_t(lm_ggml_view_1d(ctx, T(a[0]), N(a[1]), (size_t) N(a[2])));
    if (IS("view_2d")) return mk_t(lm_ggml_view_2d(ctx, T(a[0]), N(a[1]), N(a[2]), (size_t) N(a[3]), (size_t) N(a[4])));
    if (IS("reshape_3d")) return mk_t(lm_ggml_reshape_3d(ctx, T(a[0]), N(a[1]), N(a[2]), N(a[3])));
    if (IS("set")) return mk_t(lm_ggml_set(ctx, T(a[0]), T(a[1]), (size_t) N(a[2]), (size_t) N(a[3]), (size_t) N(a[4]), (size_t) N(a[5])));
    if (IS("get_rows")) return mk_t(lm_ggml_get_rows(ctx, T(a[0]), T(a[1])));
    if (IS("get_rows_back")) return mk_t(lm_ggml_get_rows_back(ctx, T(a[0]), T(a[1]), T(a[2])));
    if (IS("sqr")) return mk_t(lm_ggml_sqr(ctx, T(a[0])));
    if (IS("sum")) return mk_t(lm_ggml_sum(ctx, T(a[0])));
    if (IS("add1")) return mk_t(lm_ggml_add1(ctx, T(a[0]), T(a[1])));
    if (IS("add")) return mk_t(lm_ggml_add(ctx, T(a[0]), T(a[1])));
    if (IS("mul")) return mk_t(lm_ggml_mul(ctx, T(a[0]), T(a[1])));
    if (IS("relu")) return mk_t(lm_ggml_relu(ctx, T(a[0])));
    if (IS("cross_entropy_loss")) return mk_t(lm_ggml_cross_entropy_loss(ctx, T(a[0]), T(a[1])));
    fprintf(stderr, "unknown op %s\n", tok);
    exit(2);
#undef IS
}

// ---------------------------------------------------------------- comparison

static void to_f32(const struct lm_ggml_tensor * t, const void * data, float * out) {
    const int64_t n = lm_ggml_nelements(t);
    if (t->type == LM_GGML_TYPE_F32) { memcpy(out, data, n * 4); return; }
    if (t->type == LM_GGML_TYPE_I32) { for (int64_t i = 0; i < n; i++) out[i] = (float) ((const int32_t *) data)[i]; return; }
    lm_ggml_get_type_traits(t->type)->to_float(data, out, n);
}

// dense copy of a (possibly strided) result tensor
static void gather(const struct lm_ggml_tensor * t, unsigned char * out) {
    const size_t rs = lm_ggml_row_size(t->type, t->ne[0]);
    size_t o = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                const char * r = (const char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
                if (t->nb[0] == lm_ggml_type_size(t->type)) memcpy(out + o, r, rs);
                else for (int64_t i0 = 0; i0 < t->ne[0]; i0++) memcpy(out + o + i0 * lm_ggml_type_size(t->type), r + i0 * t->nb[0], lm_ggml_type_size(t->type));
                o += rs;
            }
}

// raw: compare the memory at t->data as if contiguous (the reference dumped
// some gradients that are transposed views that way)
static double nmse(const struct lm_ggml_tensor * t, const struct input * ref, bool raw) {
    const int64_t n = lm_ggml_nelements(t);
    unsigned char * dense = malloc(lm_ggml_nbytes(t) + 64);
    if (raw) memcpy(dense, t->data, lm_ggml_row_size(t->type, n)); else gather(t, dense);
    float * a = malloc(n * 4), * b = malloc(n * 4);
    to_f32(t, dense, a);
    struct lm_ggml_tensor fake = *t;
    fake.type = (enum lm_ggml_type) ref->type;
    to_f32(&fake, ref->data, b);
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) { num += ((double) a[i] - b[i]) * ((double) a[i] - b[i]); den += (double) b[i] * b[i]; }
    free(dense); free(a); free(b);
    return den > 0 ? num / den : num;
}

static int run_case(const char * dir, const char * name, int nth) {
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.bin", dir, name);
    if (!load_case(path)) { printf("SKIP %s: cannot read %s\n", name, path); return 0; }
    struct lm_ggml_init_params ip = { 64 * 1024 * 1024, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    const bool backward = strncmp(name, "bw_", 3) == 0;
    for (int i = 0; i < g_nin; i++) {
        struct input * in = &g_in[i];
        if (in->name[0] != 'x') continue;
        struct lm_ggml_tensor * t = lm_ggml_new_tensor(ctx, (enum lm_ggml_type) in->type, 4, in->ne);
        memcpy(t->data, in->data, in->nbytes);
        lm_ggml_set_name(t, in->name);
        g_x[atoi(in->name + 1)] = t;
        if (in->type != LM_GGML_TYPE_F32 && in->type != LM_GGML_TYPE_I32) g_uses_lowprec = 1;
    }
    // params of backward cases: inputs whose grad is stored
    if (backward) {
        for (int i = 0; i < g_nin; i++) {
            if (strncmp(g_in[i].name, "grad.x", 6) == 0) lm_ggml_set_param(ctx, g_x[atoi(g_in[i].name + 6)]);
        }
    }
    g_p = g_expr;
    struct lm_ggml_tensor * out = T(eval(ctx));
    struct lm_ggml_tensor * loss = NULL;
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph_custom(ctx, 1024, backward);
    if (backward) {
        loss = lm_ggml_nelements(out) == 1 ? out : lm_ggml_sum(ctx, out);
        lm_ggml_set_loss(loss);
        lm_ggml_build_forward_expand(gf, loss);
        lm_ggml_build_backward_expand(ctx, ctx, gf, false);
        lm_ggml_graph_reset(gf);
    } else {
        lm_ggml_build_forward_expand(gf, out);
    }
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);

    const double tol_lo = 5e-4;
    const bool lowprec = g_uses_lowprec || strstr(g_expr, "mul_mat") || strstr(g_expr, "out_prod");
    int fails = 0;
    for (int i = 0; i < g_nin; i++) {
        struct input * in = &g_in[i];
        struct lm_ggml_tensor * t = NULL;
        double tol = lowprec ? tol_lo : 1e-7;
        if (strcmp(in->name, "out") == 0) t = out;
        else if (strcmp(in->name, "loss") == 0) t = loss;
        else if (strncmp(in->name, "grad.x", 6) == 0) {
            t = lm_ggml_graph_get_grad(gf, g_x[atoi(in->name + 6)]);
            tol = lowprec ? tol_lo : 1e-6;
        } else continue;
        if (t == NULL) { printf("FAIL %s [%d threads]: no tensor for %s\n", name, nth, in->name); fails++; continue; }
        if (lm_ggml_nelements(t) != in->ne[0] * in->ne[1] * in->ne[2] * in->ne[3]) {
            printf("FAIL %s [%d threads]: %s has %lld elements, want %lld\n", name, nth, in->name,
                   (long long) lm_ggml_nelements(t), (long long)(in->ne[0] * in->ne[1] * in->ne[2] * in->ne[3]));
            fails++; continue;
        }
        for (int k = 0; k < 4; k++) if (t->ne[k] != in->ne[k]) { printf("FAIL %s: %s shape differs in dim %d\n", name, in->name, k); fails++; }
        double e = nmse(t, in, false);
        if (!(e <= tol) && !lm_ggml_is_contiguous(t) && nmse(t, in, true) <= tol) {
            printf("note %s: %s matches the reference only as raw memory of a non-contiguous view\n", name, in->name);
            e = nmse(t, in, true);
        }
        if (!(e <= tol)) { printf("FAIL %s [%d threads]: %s nmse %.3g > %.1g\n", name, nth, in->name, e, tol); fails++; }
        else printf("ok   %s [%d threads]: %s nmse %.3g\n", name, nth, in->name, e);
    }
    for (int i = 0; i < g_nin; i++) free(g_in[i].data);
    memset(g_x, 0, sizeof(g_x));
    g_uses_lowprec = 0;
    lm_ggml_free(ctx);
    return fails;
}

int main(int argc, char ** argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s DIR case...\n", argv[0]); return 2; }
    int fails = 0;
    for (int i = 2; i < argc; i++) {
        for (int nth = 1; nth <= 4; nth *= 2) fails += run_case(argv[1], argv[i], nth);
    }
    printf("%s: %d failure(s)\n", fails ? "FAILED" : "PASSED", fails);
    return fails ? 1 : 0;
}
