// test-batch-invariance.c - a column's mul_mat result must not depend on how
// many columns share the call or on the thread count: for every weight type
// with a mul_mat path and every SIMD level the CPU has, column j of an
// N-column product (N = 1 ... 512, 1-3 threads) must be bit-identical to the
// product of the weights with column j alone (1 thread). Also mul_mat_id,
// whose columns are grouped per expert. And flash_attn_ext: a query row's
// result alone and among other tokens (any thread count), bit for bit.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-batch-invariance.c $(find csrc -name '*.c') -lm
// usage: test-batch-invariance [level [types]]  (level: 0 scalar, 1 AVX2, 2 AVX-512, 3 NEON, 4 NEON with dotprod,
//        -1 all (default); types: comma-separated names, e.g. f32,f16,bf16 or flash_attn_ext; default all)
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "test-check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "type-list.h"

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static float frand(void) { // uniform [-1, 1)
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

// with an importance matrix: some i-quants require one
static void quantize(enum lm_ggml_type t, const float * src, void * dst, int64_t nrows, int64_t K) {
    float * imat = malloc((size_t) K * sizeof(float));
    for (int64_t i = 0; i < K; i++) imat[i] = 1.0f + 0.5f * frand();
    lm_ggml_quantize_chunk(t, src, dst, 0, nrows, K, imat);
    free(imat);
}

// v (all of t's elements, as f32) into t's data in t's type.
static void set_values(struct lm_ggml_tensor * t, const float * v) {
    const int64_t n = lm_ggml_nelements(t), K = t->ne[0];
    if (t->type == LM_GGML_TYPE_F32) memcpy(t->data, v, (size_t) n * sizeof(float));
    else if (t->type == LM_GGML_TYPE_F16) lm_ggml_fp32_to_fp16_row(v, t->data, n);
    else if (t->type == LM_GGML_TYPE_BF16) lm_ggml_fp32_to_bf16_row_ref(v, t->data, n);
    else quantize(t->type, v, t->data, n / K, K);
}

#define NMAX 512

// dst = a x b[:, c0:c0+n] with nth threads; returns the [M, n] result (malloc'd).
static float * mul_cols(const struct lm_ggml_tensor * a_src, const float * bv, int64_t K, int64_t c0, int64_t n, int nth) {
    const int64_t M = a_src->ne[1];
    // the tensors alone: the work buffer is the plan's, sized by it (a margin of
    // megabytes per call cost most of this test's time under ASan)
    const size_t mem = lm_ggml_nbytes(a_src) + (size_t)(K + M) * n * sizeof(float) + 3 * lm_ggml_tensor_overhead() +
                       lm_ggml_graph_overhead() + 4096;
    struct lm_ggml_init_params ip = { mem, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, a_src->type, K, M);
    memcpy(a->data, a_src->data, lm_ggml_nbytes(a));
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, n);
    memcpy(b->data, bv + c0 * K, (size_t)(K * n) * sizeof(float));
    struct lm_ggml_tensor * d = lm_ggml_mul_mat(ctx, a, b);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, d);
    struct lm_ggml_cplan plan = lm_ggml_graph_plan(gf, nth, NULL);
    void * work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    lm_ggml_graph_compute(gf, &plan);
    free(work);
    float * out = malloc((size_t)(M * n) * sizeof(float));
    memcpy(out, d->data, (size_t)(M * n) * sizeof(float));
    lm_ggml_free(ctx);
    return out;
}

static void test_type(enum lm_ggml_type t, int64_t K, int64_t M) {
    struct lm_ggml_init_params ip = { lm_ggml_row_size(t, K) * M + 1024 * 1024, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, t, K, M);
    float * av = malloc((size_t)(K * M) * sizeof(float));
    for (int64_t i = 0; i < K * M; i++) av[i] = frand();
    set_values(a, av);
    // activations of varied scale per column, so q8 block scales differ
    float * bv = malloc((size_t)(K * NMAX) * sizeof(float));
    for (int64_t j = 0; j < NMAX; j++) {
        const float s = 0.01f + (float)(j % 7) * 0.7f;
        for (int64_t k = 0; k < K; k++) bv[j * K + k] = s * frand();
    }
    // each column alone, 1 thread: the reference bits
    float * single = malloc((size_t)(M * NMAX) * sizeof(float));
    for (int64_t j = 0; j < NMAX; j++) {
        float * o = mul_cols(a, bv, K, j, 1, 1);
        memcpy(single + j * M, o, (size_t) M * sizeof(float));
        free(o);
    }
    static const int64_t ns[] = { 1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64, 512 };
    // thread counts outermost: the process keeps one pool, so alternating counts would start one each call
    for (int nth = 1; nth <= 3; nth++) {
        for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
            const int64_t n = ns[ni];
            // different column windows for different N, so every column is seen at several positions
            const int64_t c0 = n == NMAX ? 0 : (n * 37 + nth * 11) % (NMAX - n + 1);
            float * o = mul_cols(a, bv, K, c0, n, nth);
            // the first column that differs, and its first row that does
            int64_t j = 0, i = 0;
            while (j < n && memcmp(o + j * M, single + (c0 + j) * M, (size_t) M * sizeof(float)) == 0) j++;
            while (j < n && i < M && memcmp(&o[j * M + i], &single[(c0 + j) * M + i], sizeof(float)) == 0) i++;
            checkf(j == n, "%s K=%lld M=%lld level=%d: N=%lld threads=%d column %lld row %lld: %.9g, alone %.9g",
                   lm_ggml_type_name(t), (long long) K, (long long) M, (int) lm_cpu_level(), (long long) n, nth,
                   (long long)(c0 + j), (long long) i, j < n ? o[j * M + i] : 0.0f, j < n ? single[(c0 + j) * M + i] : 0.0f);
            free(o);
        }
    }
    free(single); free(bv); free(av);
    lm_ggml_free(ctx);
}

// mul_mat_id: a token's output for an expert equals mul_mat of that expert
// with the token's column alone, however many tokens chose the expert.
static void test_mul_mat_id(enum lm_ggml_type t, int64_t K, int64_t M) {
    const int64_t n_as = 3, n_used = 2, n_tok = 37;
    struct lm_ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * as = lm_ggml_new_tensor_3d(ctx, t, K, M, n_as);
    float * av = malloc((size_t)(K * M * n_as) * sizeof(float));
    for (int64_t i = 0; i < K * M * n_as; i++) av[i] = frand();
    set_values(as, av);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, K, 1, n_tok);
    float * bv = b->data;
    for (int64_t i = 0; i < K * n_tok; i++) bv[i] = frand();
    struct lm_ggml_tensor * ids = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, n_used, n_tok);
    int32_t * id = ids->data;
    for (int64_t tk = 0; tk < n_tok; tk++)
        for (int64_t e = 0; e < n_used; e++) id[tk * n_used + e] = (int32_t)((tk * 5 + e * 2 + tk / 7) % n_as);
    struct lm_ggml_tensor * d = lm_ggml_mul_mat_id(ctx, as, b, ids);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, d);
    for (int nth = 1; nth <= 3; nth++) {
        lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
        int bad = 0;
        int64_t btk = 0, be = 0;
        for (int64_t tk = 0; tk < n_tok && !bad; tk++) {
            for (int64_t e = 0; e < n_used && !bad; e++) {
                struct lm_ggml_tensor ex = *as; // a 2-d view of expert id
                ex.ne[2] = 1;
                ex.data = (char *) as->data + id[tk * n_used + e] * as->nb[2];
                float * o = mul_cols(&ex, bv, K, tk, 1, 1);
                const float * got = (const float *)((const char *) d->data + e * d->nb[1] + tk * d->nb[2]);
                if (memcmp(o, got, (size_t) M * sizeof(float)) != 0) {
                    bad = 1;
                    btk = tk;
                    be = e;
                }
                free(o);
            }
        }
        checkf(!bad, "mul_mat_id %s level=%d threads=%d token %lld slot %lld differs from mul_mat alone",
               lm_ggml_type_name(t), (int) lm_cpu_level(), nth, (long long) btk, (long long) be);
    }
    free(av);
    lm_ggml_free(ctx);
}

// flash_attn_ext: a query row's result must not depend on the tokens that
// share the call, on which rows share a K/V head (GQA groups, tiles) or on
// the thread count. Causal masks, cache slots past every row's view holding
// +inf (no row may touch them), head sizes with tails, ALiBi and softcap,
// K/V in f16, f32 and q8_0 (converted rows).
struct fa_inv {
    int D, DV, n_q, n_kv, n_head, n_head_kv;
    enum lm_ggml_type kt, vt;
    float max_bias, softcap;
};

// rows of tokens [t0, t0+n) of the case, [DV, head, token]; K and V are copies of kc and vc
static float * fa_tokens(const struct fa_inv * c, const float * qv, const struct lm_ggml_tensor * kc, const struct lm_ggml_tensor * vc,
                         int t0, int n, int nth) {
    const int pad = LM_GGML_PAD(n, LM_GGML_KQ_MASK_PAD);
    struct lm_ggml_init_params ip = { 64u << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * q = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, c->D, n, c->n_head);
    for (int h = 0; h < c->n_head; h++) {
        for (int i = 0; i < n; i++) {
            memcpy((char *) q->data + h*q->nb[2] + i*q->nb[1], qv + ((int64_t) h*c->n_q + t0 + i)*c->D, sizeof(float) * c->D);
        }
    }
    struct lm_ggml_tensor * k = lm_ggml_new_tensor_3d(ctx, c->kt, c->D, c->n_kv, c->n_head_kv);
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_3d(ctx, c->vt, c->DV, c->n_kv, c->n_head_kv);
    memcpy(k->data, kc->data, lm_ggml_nbytes(k));
    memcpy(v->data, vc->data, lm_ggml_nbytes(v));
    struct lm_ggml_tensor * m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, c->n_kv, pad);
    // token i sees keys j <= i + 9 (a cache that held 9 positions before the batch); the last 13 slots no one sees
    for (int i = 0; i < pad; i++) {
        for (int j = 0; j < c->n_kv; j++) {
            const int tok = t0 + i;
            const float x = j <= tok + 9 && j < c->n_kv - 13 && i < n ? -0.25f * (float)((tok + j) % 3) : -INFINITY;
            ((lm_ggml_fp16_t *) m->data)[(int64_t) i*c->n_kv + j] = lm_ggml_fp32_to_fp16(x);
        }
    }
    struct lm_ggml_tensor * y = lm_ggml_flash_attn_ext(ctx, q, k, v, m, 0.3f, c->max_bias, c->softcap);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, y);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
    float * out = malloc(lm_ggml_nbytes(y));
    memcpy(out, y->data, lm_ggml_nbytes(y));
    lm_ggml_free(ctx);
    return out;
}

static void test_flash_attn(const struct fa_inv * c) {
    const int64_t nq = (int64_t) c->D * c->n_q * c->n_head;
    const int64_t nk = (int64_t) c->D * c->n_kv * c->n_head_kv, nv = (int64_t) c->DV * c->n_kv * c->n_head_kv;
    float * qv = malloc(sizeof(float) * nq), * kv = malloc(sizeof(float) * nk), * vv = malloc(sizeof(float) * nv);
    for (int64_t i = 0; i < nq; i++) qv[i] = 2.0f * frand();
    for (int64_t i = 0; i < nk; i++) kv[i] = frand();
    for (int64_t i = 0; i < nv; i++) vv[i] = frand();
    for (int h = 0; h < c->n_head_kv; h++) { // the slots no row sees
        for (int j = c->n_kv - 13; j < c->n_kv; j++) {
            for (int e = 0; e < c->DV; e++) vv[((int64_t) h*c->n_kv + j)*c->DV + e] = INFINITY;
        }
    }
    // K and V in their types once, copied into every call's context
    struct lm_ggml_init_params ip = { 2 * (size_t)(nk + nv) * sizeof(float) + 1024 * 1024, NULL, false };
    struct lm_ggml_context * kvctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * kc = lm_ggml_new_tensor_3d(kvctx, c->kt, c->D, c->n_kv, c->n_head_kv);
    struct lm_ggml_tensor * vc = lm_ggml_new_tensor_3d(kvctx, c->vt, c->DV, c->n_kv, c->n_head_kv);
    set_values(kc, kv);
    set_values(vc, vv);
    const int64_t row = (int64_t) c->DV * c->n_head; // one token's outputs
    float * alone = malloc(sizeof(float) * row * c->n_q);
    for (int i = 0; i < c->n_q; i++) {
        float * o = fa_tokens(c, qv, kc, vc, i, 1, 1);
        memcpy(alone + i*row, o, sizeof(float) * row);
        free(o);
    }
    static const int ns[] = { 2, 3, 5, 8, 0 };
    for (int nth = 1; nth <= 3; nth++) {
        for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
            const int n = ns[ni] ? ns[ni] : c->n_q;
            const int t0 = ns[ni] ? (n * 7 + nth) % (c->n_q - n + 1) : 0;
            float * o = fa_tokens(c, qv, kc, vc, t0, n, nth);
            int64_t i = 0;
            while (i < row * n && memcmp(&o[i], &alone[t0*row + i], sizeof(float)) == 0) i++;
            checkf(i == row * n, "flash_attn_ext D%d DV%d %s/%s heads %d/%d level=%d: %d tokens threads=%d token %lld head %lld elem %lld: %.9g, alone %.9g",
                   c->D, c->DV, lm_ggml_type_name(c->kt), lm_ggml_type_name(c->vt), c->n_head, c->n_head_kv, (int) lm_cpu_level(), n, nth,
                   (long long)(t0 + i / row), (long long)(i % row / c->DV), (long long)(i % c->DV),
                   i < row * n ? o[i] : 0.0f, i < row * n ? alone[t0*row + i] : 0.0f);
            free(o);
        }
    }
    free(alone); free(qv); free(kv); free(vv);
    lm_ggml_free(kvctx);
}

int main(int argc, char ** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const int only_level = argc > 1 ? atoi(argv[1]) : -1;
    const char * only_types = argc > 2 ? argv[2] : NULL;
    lm_ggml_cpu_init();
    // every weight type mul_mat takes (the repacked layouts have no mul_mat path)
    int ntypes = 0;
    enum lm_ggml_type types[LM_GGML_TYPE_COUNT];
    for (int t = 0; t < LM_GGML_TYPE_COUNT; t++) {
        const enum lm_ggml_type ty = (enum lm_ggml_type) t;
        if (lm_ggml_type_size(ty) == 0 || ty == LM_GGML_TYPE_Q8_1 || ty == LM_GGML_TYPE_Q8_K) continue;
        if (ty == LM_GGML_TYPE_Q4_0_4_4 || ty == LM_GGML_TYPE_Q4_0_4_8 || ty == LM_GGML_TYPE_Q4_0_8_8 ||
            ty == LM_GGML_TYPE_IQ4_NL_4_4) continue;
        if (ty != LM_GGML_TYPE_F32 && ty != LM_GGML_TYPE_F16 && ty != LM_GGML_TYPE_BF16 && !lm_ggml_is_quantized(ty)) continue;
        // f32 has no to_float in the traits but is the plainest mul_mat of all
        if (ty != LM_GGML_TYPE_F32 && lm_ggml_get_type_traits(ty)->to_float == NULL) continue;
        if (!type_selected(only_types, lm_ggml_type_name(ty))) continue;
        types[ntypes++] = ty;
    }
    for (int level = 0; level <= 4; level++) {
        if (only_level >= 0 && level != only_level) continue;
        if (!lm_cpu_force_level(level)) { printf("level %d not available here: skipped\n", level); continue; }
        if (type_selected(only_types, "flash_attn_ext")) {
            const enum lm_ggml_type F16 = LM_GGML_TYPE_F16, F32 = LM_GGML_TYPE_F32, Q8 = LM_GGML_TYPE_Q8_0;
            const struct fa_inv cases[] = {
                { 128, 128, 23, 60, 4, 1, F16, F16, 0.0f, 0.0f },  // GQA: four query heads a K/V head
                { 64, 64, 19, 47, 3, 3, F32, F16, 0.0f, 0.0f },
                { 40, 24, 11, 33, 4, 2, F16, F32, 8.0f, 0.0f },    // tails, DV != DK, ALiBi
                { 64, 64, 9, 30, 2, 2, Q8, Q8, 0.0f, 20.0f },      // converted rows, softcap
            };
            const int before = g_fail;
            for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) test_flash_attn(&cases[i]);
            printf("flash_attn_ext level %d: %s\n", level, g_fail == before ? "ok" : "FAILED");
        }
        for (int i = 0; i < ntypes; i++) {
            const enum lm_ggml_type t = types[i];
            const int64_t bk = lm_ggml_blck_size(t);
            // float rows: a K with a tail past every SIMD width; quantized: two super-blocks
            const int64_t K = bk == 1 ? 300 : 512;
            const int before = g_fail;
            test_type(t, K, 37);
            if (bk == 1) test_type(t, 4096 + 3, 9); // long rows: any blocking over K shows here
            test_mul_mat_id(t, K, 21);
            printf("%s level %d: %s\n", lm_ggml_type_name(t), level, g_fail == before ? "ok" : "FAILED");
        }
    }
    lm_cpu_force_level(-1);
    return check_summary();
}
