// test-ops-elem-parity.c - runs the op parity cases (../shared/parity/ops,
// or $PARITY_DIR) that the s-expression interpreter of elem-parity.h can
// build, with 1, 2 and 4 threads and (on x86) scalar and AVX2 kernels, and
// checks the reference's tolerances and that every run gives the same bits.
//
// Build: cc -O2 -pthread -Icsrc tests/c/test-ops-elem-parity.c csrc/*.c -lm
// Usage: a.out [substring of case names]
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "elem-parity.h"

// Ops computed through f16/bf16/quantized operands or matmul-like kernels get
// the looser tolerance (see the parity README).
static int pc_loose(const struct pc_case * c) {
    static const char * words[] = { "mul_mat", "out_prod", "flash_attn", "im2col", "conv_" };
    for (size_t i = 0; i < sizeof(words)/sizeof(words[0]); i++) if (strstr(c->expr, words[i])) return 1;
    for (int i = 0; i < c->n_tensors; i++) {
        if (!strncmp(c->t[i].name, "x", 1) && c->t[i].type != LM_GGML_TYPE_F32 && c->t[i].type != LM_GGML_TYPE_I32) return 1;
    }
    return 0;
}

struct run_out { double worst; int fail; void * bits; size_t nbits; };

// Returns 0 ok, 1 fail, 2 could not build (unknown op).
static int run_case(const char * path, int n_threads, int level, struct run_out * ro, char * why, size_t why_n) {
    struct pc_case c;
    if (pc_load(path, &c) != 0) { snprintf(why, why_n, "cannot read"); return 1; }
    const int backward = !strcmp(c.kind, "backward");
    const double tol  = pc_loose(&c) ? 5e-4 : 1e-7;
    const double gtol = pc_loose(&c) ? 5e-4 : 1e-6;

    struct lm_ggml_init_params ip = { 64u << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct pc_env e = { 0 };
    e.ctx = ctx;
    for (int i = 0; i < PC_MAX_T; i++) {
        char nm[16];
        snprintf(nm, sizeof(nm), "x%d", i);
        const struct pc_tensor * pt = pc_find(&c, nm);
        if (!pt) break;
        struct lm_ggml_tensor * t = lm_ggml_new_tensor(ctx, (enum lm_ggml_type) pt->type, pt->n_dims, pt->ne);
        memcpy(t->data, pt->data, lm_ggml_nbytes(t));
        lm_ggml_set_name(t, nm);
        e.x[i] = t;
        e.n_x = i + 1;
    }
    e.s = c.expr;
    struct pc_val out = pc_eval(&e);
    if (e.err || out.k != PC_T || !out.t) {
        snprintf(why, why_n, "cannot build (%s)", e.unknown[0] ? e.unknown : "syntax");
        lm_ggml_free(ctx); pc_free(&c);
        return 2;
    }
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph_custom(ctx, 2048, backward);
    struct lm_ggml_tensor * loss = NULL;
    if (backward) {
        for (int i = 0; i < e.n_x; i++) {
            char nm[16];
            snprintf(nm, sizeof(nm), "x%d", i);
            if (strstr(c.params, nm)) lm_ggml_set_param(ctx, e.x[i]);
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
    why[0] = 0;
    // collect: out, loss, grads (compared against the reference and across runs)
    struct { const char * ref; struct lm_ggml_tensor * t; double tol; } chk[PC_MAX_T + 2];
    int nchk = 0;
    chk[nchk].ref = "out"; chk[nchk].t = out.t; chk[nchk].tol = tol; nchk++;
    static char gnames[PC_MAX_T][24];
    if (backward) {
        chk[nchk].ref = "loss"; chk[nchk].t = loss; chk[nchk].tol = tol; nchk++;
        for (int i = 0; i < e.n_x; i++) {
            snprintf(gnames[i], sizeof(gnames[i]), "grad.x%d", i);
            if (!pc_find(&c, gnames[i])) continue;
            chk[nchk].ref = gnames[i]; chk[nchk].t = lm_ggml_graph_get_grad(gf, e.x[i]); chk[nchk].tol = gtol; nchk++;
        }
    }
    size_t total = 0;
    for (int k = 0; k < nchk; k++) if (chk[k].t) total += lm_ggml_nbytes(chk[k].t);
    ro->bits = malloc(total + 1);
    ro->nbits = 0;
    for (int k = 0; k < nchk; k++) {
        const struct pc_tensor * ref = pc_find(&c, chk[k].ref);
        struct lm_ggml_tensor * t = chk[k].t;
        if (!ref || !t) { snprintf(why, why_n, "missing %s", chk[k].ref); fail = 1; continue; }
        int same = ref->type == (int) t->type;
        for (int d = 0; d < 4; d++) same = same && ref->ne[d] == t->ne[d];
        if (!same) { snprintf(why, why_n, "%s: shape/type differs", chk[k].ref); fail = 1; continue; }
        // compare a contiguous copy
        const int64_t n = lm_ggml_nelements(t);
        const size_t es = lm_ggml_type_size(t->type);
        char * tmp = malloc(lm_ggml_nbytes(t) + 1);
        // the reference wrote `out` contiguous but every other tensor (grads
        // that are views, e.g. through transpose) as its raw memory
        const int raw = strcmp(chk[k].ref, "out") != 0;
        if (raw || lm_ggml_is_contiguous(t) || lm_ggml_is_quantized(t->type)) {
            memcpy(tmp, t->data, lm_ggml_nbytes(t));
        } else {
            int64_t q = 0;
            for (int64_t i3 = 0; i3 < t->ne[3]; i3++) for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                memcpy(tmp + es*q++, (char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3], es);
            }
        }
        const size_t nbytes = (size_t) n * es / (size_t) lm_ggml_blck_size(t->type);
        memcpy((char *) ro->bits + ro->nbits, tmp, nbytes);
        ro->nbits += nbytes;
        double * a = pc_to_f64(tmp, t->type, n);
        double * b = pc_to_f64(ref->data, ref->type, n);
        const int is_int = t->type == LM_GGML_TYPE_I32 || t->type == LM_GGML_TYPE_I64;
        double ktol = chk[k].tol;
        if (t->type != LM_GGML_TYPE_F32 && !is_int) ktol = 5e-4;
        const double err = pc_nmse(a, b, n, is_int);
        if (!(err <= ktol)) { snprintf(why, why_n, "%s nmse %.3g > %.1g", chk[k].ref, err, ktol); fail = 1; }
        if (getenv("PC_VERBOSE")) printf("    %s t%d l%d %s nmse %.3g first %.9g\n", c.name, n_threads, level, chk[k].ref, err, a[0]);
        if (err > worst) worst = err;
        free(a); free(b); free(tmp);
    }
    ro->worst = worst;
    ro->fail = fail;
    lm_ggml_free(ctx);
    pc_free(&c);
    return fail;
}

int main(int argc, char ** argv) {
    const char * dir = getenv("PARITY_DIR");
    if (!dir) dir = "../shared/parity/ops";
    char idx[512];
    snprintf(idx, sizeof(idx), "%s/INDEX.tsv", dir);
    FILE * f = fopen(idx, "r");
    if (!f) { printf("SKIP: parity data not found at %s (set PARITY_DIR)\n", dir); return 0; }
    lm_ggml_cpu_init();

    const int threads[] = { 1, 2, 4 };
    int levels[2] = { LM_CPU_LEVEL_SCALAR, -1 };
    int n_levels = 1;
    if (lm_cpu_force_level(LM_CPU_LEVEL_AVX2)) { levels[n_levels++] = LM_CPU_LEVEL_AVX2; }
    lm_cpu_force_level(-1);

    char line[4096];
    int n_ok = 0, n_fail = 0, n_skip = 0;
    if (!fgets(line, sizeof(line), f)) { fclose(f); return 1; }
    while (fgets(line, sizeof(line), f)) {
        char name[128];
        if (sscanf(line, "%127s", name) != 1) continue;
        if (argc > 1 && !strstr(name, argv[1])) continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s.gguf", dir, name);
        double worst = 0;
        int fail = 0, skipped = 0, differs = 0;
        char why[256] = "";
        void * first = NULL;
        size_t nfirst = 0;
        for (int li = 0; li < n_levels && !skipped; li++)
        for (int ti = 0; ti < 3 && !skipped; ti++) {
            struct run_out ro = { 0 };
            char w[256];
            const int r = run_case(path, threads[ti], levels[li], &ro, w, sizeof(w));
            if (r == 2) { skipped = 1; snprintf(why, sizeof(why), "%s", w); break; }
            if (r) { fail = 1; snprintf(why, sizeof(why), "%s (threads %d level %d)", w, threads[ti], levels[li]); }
            if (ro.worst > worst) worst = ro.worst;
            // same bits for every thread count at a given level
            if (ti == 0) { free(first); first = ro.bits; nfirst = ro.nbits; ro.bits = NULL; }
            else if (ro.nbits != nfirst || memcmp(first, ro.bits, nfirst) != 0) differs = 1;
            free(ro.bits);
        }
        free(first);
        if (skipped) { n_skip++; printf("skip  %-26s %s\n", name, why); continue; }
        if (differs) { fail = 1; snprintf(why, sizeof(why), "results differ between thread counts"); }
        if (fail) n_fail++; else n_ok++;
        printf("%-5s %-26s worst nmse %.3g %s\n", fail ? "FAIL" : "ok", name, worst, why);
    }
    fclose(f);
    printf("parity: %d ok, %d failed, %d not buildable here\n", n_ok, n_fail, n_skip);
    return n_fail != 0;
}
