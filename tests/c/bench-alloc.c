// bench-alloc.c - the graph allocator's memory, and the cost of computing
// through backend + gallocr against lm_ggml_graph_compute.
//
//   bench-alloc mem          gallocr's compute buffer for transformer forward
//                            and backward graphs of a few shapes, beside the
//                            sum of the sizes of the tensors it places
//   bench-alloc speed [n] [t] [e]  a transformer forward graph (embedding
//                            size e, default 512) computed n times (default
//                            20) on t threads (default 2), alternating:
//                            lm_ggml_graph_compute over an allocating context,
//                            and alloc_graph + lm_ggml_backend_graph_compute
//                            over a gallocr buffer; both on one thread pool,
//                            then each with its default pool handling
//
// Public API only: it builds against any core with this API, so the numbers
// can be compared with another core's on the same graphs.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/bench-alloc.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "graphs-util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct lm_ggml_context * new_ctx(size_t mem, bool no_alloc) {
    struct lm_ggml_init_params p = { mem, NULL, no_alloc };
    return lm_ggml_init(p);
}

// Bytes of the tensors gallocr places: nodes and leafs with no data of their own.
static size_t placed_bytes(struct lm_ggml_cgraph * g) {
    size_t s = 0;
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        struct lm_ggml_tensor * t = lm_ggml_graph_node(g, i);
        if (t->data == NULL && t->view_src == NULL) s += lm_ggml_nbytes(t);
    }
    return s;
}

static void mem_case(const struct tf_cfg * cfg, bool train) {
    struct tf_model m;
    memset(&m, 0, sizeof(m));
    m.cfg = *cfg;
    struct lm_ggml_context * wctx = new_ctx((16 * TF_MAX_LAYERS + 1) * lm_ggml_tensor_overhead(), true);
    struct lm_ggml_context * ctx = new_ctx(16384 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead_custom(8192, true), true);
    tf_weights(wctx, &m, train);
    lm_ggml_backend_buffer_t wbuf = lm_ggml_backend_alloc_ctx_tensors_from_buft(wctx, lm_ggml_backend_cpu_buffer_type());
    tf_forward(ctx, &m, train);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx, 8192, train);
    lm_ggml_build_forward_expand(g, train ? m.loss : m.out);
    if (train) lm_ggml_build_backward_expand(ctx, ctx, g, false);

    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    const bool ok = lm_ggml_gallocr_reserve(ga, g);
    // leafs without data (the inputs) are placed too
    size_t total = placed_bytes(g);
    const size_t leafs = lm_ggml_nbytes(m.tokens) + lm_ggml_nbytes(m.pos) + lm_ggml_nbytes(m.mask);
    printf("%-8s embd=%-4d head=%-2d ff=%-5d tokens=%-4d layers=%d  nodes=%-5d  buffer=%10zu  tensors=%10zu (+inputs %zu)  ratio=%.3f%s\n",
           train ? "backward" : "forward", cfg->n_embd, cfg->n_head, cfg->n_ff, cfg->n_tokens, cfg->n_layers,
           lm_ggml_graph_n_nodes(g), lm_ggml_gallocr_get_buffer_size(ga, 0), total, leafs,
           (double) lm_ggml_gallocr_get_buffer_size(ga, 0) / (double) (total + leafs), ok ? "" : "  (reserve failed)");
    total += leafs;
    lm_ggml_gallocr_free(ga);
    lm_ggml_backend_buffer_free(wbuf);
    lm_ggml_free(ctx);
    lm_ggml_free(wctx);
}

// ---------------------------------------------------------------- speed

static void fill(struct lm_ggml_tensor * t, uint64_t seed, float scale, bool direct) {
    const int64_t n = lm_ggml_nelements(t);
    float * v = malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) v[i] = scale * tf_value(seed, i);
    if (direct) memcpy(t->data, v, (size_t) n * sizeof(float));
    else lm_ggml_backend_tensor_set(t, v, 0, (size_t) n * sizeof(float));
    free(v);
}

static void fill_model(struct tf_model * m, bool direct) {
    fill(m->tok_embd, 99, 1.0f, direct);
    for (int l = 0; l < m->cfg.n_layers; l++) {
        struct lm_ggml_tensor * ws[] = { m->layers[l].attn_norm, m->layers[l].wq, m->layers[l].wk, m->layers[l].wv, m->layers[l].wo,
                                         m->layers[l].ffn_norm, m->layers[l].w1, m->layers[l].w2, m->layers[l].w3 };
        for (int k = 0; k < 9; k++) fill(ws[k], 100 + l * 16 + k, 0.05f, direct);
    }
    const int T = m->cfg.n_tokens;
    int32_t * p = malloc((size_t) T * sizeof(int32_t));
    float * mk = malloc((size_t) T * T * sizeof(float));
    for (int i = 0; i < T; i++) p[i] = (i * 7 + 3) % TF_VOCAB;
    if (direct) memcpy(m->tokens->data, p, (size_t) T * sizeof(int32_t));
    else lm_ggml_backend_tensor_set(m->tokens, p, 0, (size_t) T * sizeof(int32_t));
    for (int i = 0; i < T; i++) p[i] = i;
    for (int i = 0; i < T; i++) for (int j = 0; j < T; j++) mk[i * T + j] = j <= i ? 0.0f : -INFINITY;
    if (direct) {
        memcpy(m->pos->data, p, (size_t) T * sizeof(int32_t));
        memcpy(m->mask->data, mk, (size_t) T * T * sizeof(float));
    } else {
        lm_ggml_backend_tensor_set(m->pos, p, 0, (size_t) T * sizeof(int32_t));
        lm_ggml_backend_tensor_set(m->mask, mk, 0, (size_t) T * T * sizeof(float));
    }
    free(p);
    free(mk);
}

static int cmp_i64(const void * a, const void * b) {
    const int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

static void speed(int iters, int nth, int embd) {
    // embd 512: compute-bound; a small embd shows the per-compute overhead of each path
    const struct tf_cfg cfg = { embd, 8, embd * 43 / 16, embd >= 512 ? 64 : 8, 2 };

    // a: everything in an allocating context
    struct tf_model ma;
    memset(&ma, 0, sizeof(ma));
    ma.cfg = cfg;
    struct lm_ggml_context * actx = new_ctx(256 << 20, false);
    tf_weights(actx, &ma, false);
    tf_forward(actx, &ma, false);
    struct lm_ggml_cgraph * ga_graph = lm_ggml_new_graph_custom(actx, 4096, false);
    lm_ggml_build_forward_expand(ga_graph, ma.out);
    fill_model(&ma, true);

    // b: weights in a backend buffer, the graph in a gallocr buffer
    struct tf_model mb;
    memset(&mb, 0, sizeof(mb));
    mb.cfg = cfg;
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    lm_ggml_backend_cpu_set_n_threads(be, nth);
    struct lm_ggml_context * wctx = new_ctx((16 * TF_MAX_LAYERS + 1) * lm_ggml_tensor_overhead(), true);
    struct lm_ggml_context * bctx = new_ctx(4096 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead_custom(4096, false), true);
    tf_weights(wctx, &mb, false);
    lm_ggml_backend_buffer_t wbuf = lm_ggml_backend_alloc_ctx_tensors(wctx, be);
    tf_forward(bctx, &mb, false);
    struct lm_ggml_cgraph * gb_graph = lm_ggml_new_graph_custom(bctx, 4096, false);
    lm_ggml_build_forward_expand(gb_graph, mb.out);
    lm_ggml_gallocr_t galloc = lm_ggml_gallocr_new(lm_ggml_backend_get_default_buffer_type(be));
    lm_ggml_gallocr_reserve(galloc, gb_graph);
    lm_ggml_gallocr_alloc_graph(galloc, gb_graph);
    fill_model(&mb, false);

    for (int mode = 0; mode < 2; mode++) {
        // mode 0: one thread pool for both; mode 1: each side's default
        struct lm_ggml_threadpool_params tpp = lm_ggml_threadpool_params_default(nth);
        struct lm_ggml_threadpool * tp = mode == 0 ? lm_ggml_threadpool_new(&tpp) : NULL;
        lm_ggml_backend_cpu_set_threadpool(be, tp);
        struct lm_ggml_cplan cp = lm_ggml_graph_plan(ga_graph, nth, tp);
        void * work = malloc(cp.work_size + 1);
        cp.work_data = work;

        int64_t * ta = malloc((size_t) iters * sizeof(int64_t)), * tb = malloc((size_t) iters * sizeof(int64_t));
        for (int w = 0; w < 2; w++) { // warm-up
            if (mode == 0) lm_ggml_graph_compute(ga_graph, &cp); else lm_ggml_graph_compute_with_ctx(actx, ga_graph, nth);
            lm_ggml_gallocr_alloc_graph(galloc, gb_graph);
            lm_ggml_backend_graph_compute(be, gb_graph);
        }
        for (int i = 0; i < iters; i++) {
            int64_t t0 = lm_ggml_time_us();
            if (mode == 0) lm_ggml_graph_compute(ga_graph, &cp); else lm_ggml_graph_compute_with_ctx(actx, ga_graph, nth);
            int64_t t1 = lm_ggml_time_us();
            lm_ggml_gallocr_alloc_graph(galloc, gb_graph);
            lm_ggml_backend_graph_compute(be, gb_graph);
            int64_t t2 = lm_ggml_time_us();
            ta[i] = t1 - t0;
            tb[i] = t2 - t1;
        }
        qsort(ta, (size_t) iters, sizeof(int64_t), cmp_i64);
        qsort(tb, (size_t) iters, sizeof(int64_t), cmp_i64);
        const double ma_us = (double) ta[iters / 2], mb_us = (double) tb[iters / 2];
        printf("%-22s embd=%d nodes=%d threads=%d  graph_compute median %.0f us  backend+gallocr median %.0f us  ratio %.4f\n",
               mode == 0 ? "same thread pool:" : "default pools:", cfg.n_embd, lm_ggml_graph_n_nodes(ga_graph), nth, ma_us, mb_us, mb_us / ma_us);

        // the two results agree
        float * ra = malloc(lm_ggml_nbytes(ma.out)), * rb = malloc(lm_ggml_nbytes(mb.out));
        memcpy(ra, ma.out->data, lm_ggml_nbytes(ma.out));
        lm_ggml_backend_tensor_get(mb.out, rb, 0, lm_ggml_nbytes(mb.out));
        printf("%-22s results %s\n", "", memcmp(ra, rb, lm_ggml_nbytes(ma.out)) == 0 ? "identical" : "DIFFER");
        free(ra); free(rb);
        free(ta); free(tb);
        free(work);
        lm_ggml_backend_cpu_set_threadpool(be, NULL);
        if (tp != NULL) lm_ggml_threadpool_free(tp);
    }
    lm_ggml_gallocr_free(galloc);
    lm_ggml_backend_buffer_free(wbuf);
    lm_ggml_backend_free(be);
    lm_ggml_free(bctx);
    lm_ggml_free(wctx);
    lm_ggml_free(actx);
}

int main(int argc, char ** argv) {
    const char * what = argc > 1 ? argv[1] : "mem";
    if (strcmp(what, "mem") == 0) {
        const struct tf_cfg cfgs[] = {
            { 128, 4, 344, 24, 2 },
            { 256, 8, 688, 64, 2 },
            { 512, 8, 1376, 128, 4 },
            { 1024, 16, 2816, 256, 2 },
        };
        for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
            mem_case(&cfgs[i], false);
            mem_case(&cfgs[i], true);
        }
        return 0;
    }
    if (strcmp(what, "speed") == 0) {
        const int embd = argc > 4 ? atoi(argv[4]) : 512;
        if (embd < 8 || embd % 8 != 0) {
            fprintf(stderr, "embd must be a positive multiple of 8\n");
            return 2;
        }
        speed(argc > 2 ? atoi(argv[2]) : 20, argc > 3 ? atoi(argv[3]) : 2, embd);
        return 0;
    }
    fprintf(stderr, "usage: %s mem | speed [iterations] [threads] [embd]\n", argv[0]);
    return 2;
}
