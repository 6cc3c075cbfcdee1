// test-alloc.c - the graph allocator and the context allocator, through the
// CPU backend: graphs computed in gallocr-planned memory give the same bits as
// lm_ggml_graph_compute over an allocating context (a transformer forward and
// backward, a chain of element-wise ops), and a checker verifies by
// construction that no tensor's bytes overlap those of another tensor that is
// live at the same time (except an in-place result taking over an operand
// that dies at that node). Also: in-place reuse happens, inputs and outputs
// survive, re-planning on topology change, a graph allocated again after
// a bigger one grew the buffer, views into a cache moving between
// allocations, several buffers, alloc_ctx_tensors
// with multi-buffers, and the error paths.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-alloc.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-op-inplace.h"
#include "ggml-cpu.h"
#include "graphs-util.h"
#include "test-check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTH 2

// ---------------------------------------------------------------- the overlap checker

static const struct lm_ggml_tensor * root_of(const struct lm_ggml_tensor * t) {
    return t->view_src != NULL ? t->view_src : t;
}

struct life {
    const struct lm_ggml_tensor * t; // a root (not a view)
    int birth, death;                 // node steps; -1 = before the graph, INT32_MAX = kept
};

static int life_index(struct life * L, int n, const struct lm_ggml_tensor * t) {
    for (int i = 0; i < n; i++) if (L[i].t == t) return i;
    return -1;
}

// the allocator's rule: the ops marked inplace in enum lm_ggml_op (ggml.h)
static bool can_inplace_op(enum lm_ggml_op op) {
    return lm_ggml_op_can_inplace(op);
}

// b (born at node step b_step) took over a's bytes in place: a (or a view of a
// at offset 0) is an operand of that node, with b's layout, at b's address.
static bool legit_inplace(const struct lm_ggml_tensor * node, const struct lm_ggml_tensor * a) {
    if (!can_inplace_op(node->op) || node->data != a->data) return false;
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        const struct lm_ggml_tensor * s = node->src[j];
        if (s != NULL && s != node && root_of(s) == a && s->data == a->data && s->type == node->type &&
            memcmp(s->ne, node->ne, sizeof(s->ne)) == 0 && memcmp(s->nb, node->nb, sizeof(s->nb)) == 0) return true;
    }
    return false;
}

// Every pair of tensors in buf whose bytes overlap must have disjoint
// lifetimes (or be a legitimate in-place hand-over). Returns the number of
// tensors that share bytes with an earlier one (reuse happened).
static int check_no_overlap(struct lm_ggml_cgraph * g, lm_ggml_backend_buffer_t buf, const char * what) {
    const int cap = 2 * (g->n_nodes + g->n_leafs) + 16;
    struct life * L = calloc((size_t) cap, sizeof(*L));
    int n = 0;
    const uintptr_t base = (uintptr_t) lm_ggml_backend_buffer_get_base(buf);
    const size_t size = lm_ggml_backend_buffer_get_size(buf);
#define IN_BUF(t) ((uintptr_t) (t)->data >= base && (uintptr_t) (t)->data < base + size)
    // roots: leafs and inputs are born before the graph; nodes at their step
    for (int i = 0; i < g->n_leafs; i++) {
        const struct lm_ggml_tensor * r = root_of(g->leafs[i]);
        if (IN_BUF(r) && life_index(L, n, r) < 0) L[n++] = (struct life) { r, -1, -1 };
    }
    for (int i = 0; i < g->n_nodes; i++) {
        struct lm_ggml_tensor * node = g->nodes[i];
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            const struct lm_ggml_tensor * s = node->src[j];
            if (s == NULL) continue;
            const struct lm_ggml_tensor * r = root_of(s);
            if (IN_BUF(r) && life_index(L, n, r) < 0) L[n++] = (struct life) { r, -1, -1 };
        }
        const struct lm_ggml_tensor * r = root_of(node);
        if (IN_BUF(r) && life_index(L, n, r) < 0) L[n++] = (struct life) { r, i, i };
    }
    // deaths: the last step that reads the root (through any view), or writes it
    for (int i = 0; i < g->n_nodes; i++) {
        struct lm_ggml_tensor * node = g->nodes[i];
        for (int j = -1; j < LM_GGML_MAX_SRC; j++) {
            const struct lm_ggml_tensor * s = j < 0 ? node : node->src[j];
            if (s == NULL) continue;
            const int k = life_index(L, n, root_of(s));
            if (k >= 0 && L[k].death < i) L[k].death = i;
        }
    }
    // kept: inputs, outputs, and nodes nothing consumes (the graph's results)
    for (int k = 0; k < n; k++) {
        const struct lm_ggml_tensor * t = L[k].t;
        bool consumed = false;
        for (int i = 0; i < g->n_nodes && !consumed; i++) {
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                if (g->nodes[i]->src[j] != NULL && g->nodes[i]->src[j] != g->nodes[i] && root_of(g->nodes[i]->src[j]) == t) consumed = true;
            }
        }
        if ((t->flags & (LM_GGML_TENSOR_FLAG_INPUT | LM_GGML_TENSOR_FLAG_OUTPUT)) || (!consumed && L[k].birth >= 0)) L[k].death = INT32_MAX;
        if (t->flags & LM_GGML_TENSOR_FLAG_INPUT) L[k].birth = -1;
    }
    int bad = 0, shared = 0;
    for (int a = 0; a < n; a++) {
        bool sh = false;
        for (int b = 0; b < n; b++) {
            if (a == b) continue;
            const struct life * A = &L[a], * B = &L[b];
            const uintptr_t a0 = (uintptr_t) A->t->data, a1 = a0 + lm_ggml_nbytes(A->t);
            const uintptr_t b0 = (uintptr_t) B->t->data, b1 = b0 + lm_ggml_nbytes(B->t);
            if (a1 <= b0 || b1 <= a0) continue; // bytes apart
            if (b < a) sh = true;
            if (A->death < B->birth || B->death < A->birth) continue; // times apart
            // touching at one step: B born where A dies, in place
            if (A->death == B->birth && B->birth >= 0 && legit_inplace(g->nodes[B->birth], A->t)) continue;
            if (B->death == A->birth && A->birth >= 0 && legit_inplace(g->nodes[A->birth], B->t)) continue;
            if (bad++ < 5) {
                printf("  %s: '%s' [%d,%d] overlaps '%s' [%d,%d]\n", what, A->t->name, A->birth, A->death, B->t->name, B->birth, B->death);
            }
        }
        shared += sh;
    }
    free(L);
    check(bad == 0, what);
    return shared;
}

static size_t sum_of_sizes(struct lm_ggml_cgraph * g, lm_ggml_backend_buffer_t buf) {
    const uintptr_t base = (uintptr_t) lm_ggml_backend_buffer_get_base(buf);
    const size_t size = lm_ggml_backend_buffer_get_size(buf);
    size_t s = 0;
    for (int i = 0; i < g->n_leafs; i++) if (IN_BUF(g->leafs[i]) && g->leafs[i]->view_src == NULL) s += lm_ggml_nbytes(g->leafs[i]);
    for (int i = 0; i < g->n_nodes; i++) if (IN_BUF(g->nodes[i]) && g->nodes[i]->view_src == NULL) s += lm_ggml_nbytes(g->nodes[i]);
    return s;
}

// ---------------------------------------------------------------- transformer: gallocr vs allocating context

static struct lm_ggml_context * new_ctx(size_t mem, bool no_alloc) {
    struct lm_ggml_init_params p = { mem, NULL, no_alloc };
    return lm_ggml_init(p);
}

static void tf_fill_weights(struct tf_model * m) {
    const int64_t ne = lm_ggml_nelements(m->tok_embd);
    float * e = malloc((size_t) ne * sizeof(float));
    for (int64_t i = 0; i < ne; i++) e[i] = tf_value(99, i);
    lm_ggml_backend_tensor_set(m->tok_embd, e, 0, (size_t) ne * sizeof(float));
    free(e);
    for (int l = 0; l < m->cfg.n_layers; l++) {
        struct lm_ggml_tensor * ws[] = { m->layers[l].attn_norm, m->layers[l].wq, m->layers[l].wk, m->layers[l].wv, m->layers[l].wo,
                                         m->layers[l].ffn_norm, m->layers[l].w1, m->layers[l].w2, m->layers[l].w3 };
        for (int k = 0; k < 9; k++) {
            const int64_t n = lm_ggml_nelements(ws[k]);
            const float s = ws[k]->ne[1] == 1 ? 1.0f : 1.0f / sqrtf((float) ws[k]->ne[0]);
            float * v = malloc((size_t) n * sizeof(float));
            for (int64_t i = 0; i < n; i++) v[i] = (ws[k]->ne[1] == 1 ? 1.0f : 0.0f) + s * tf_value(100 + l * 16 + k, i);
            lm_ggml_backend_tensor_set(ws[k], v, 0, (size_t) n * sizeof(float));
            free(v);
        }
    }
}

static void tf_fill_inputs(struct tf_model * m) {
    const int T = m->cfg.n_tokens;
    int32_t * p = calloc((size_t) T, sizeof(int32_t));
    for (int i = 0; i < T; i++) p[i] = (i * 7 + 3) % TF_VOCAB;
    lm_ggml_backend_tensor_set(m->tokens, p, 0, (size_t) T * sizeof(int32_t));
    for (int i = 0; i < T; i++) p[i] = i;
    lm_ggml_backend_tensor_set(m->pos, p, 0, (size_t) T * sizeof(int32_t));
    free(p);
    float * mk = malloc((size_t) T * T * sizeof(float));
    for (int i = 0; i < T; i++) for (int j = 0; j < T; j++) mk[i * T + j] = j <= i ? 0.0f : -INFINITY;
    lm_ggml_backend_tensor_set(m->mask, mk, 0, (size_t) T * T * sizeof(float));
    free(mk);
}

// Builds the model's graph (forward, or forward + backward) in ctx.
static struct lm_ggml_cgraph * tf_graph(struct lm_ggml_context * wctx, struct lm_ggml_context * ctx, struct tf_model * m, bool train) {
    tf_weights(wctx, m, train);
    tf_forward(ctx, m, train);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx, 4096, train);
    lm_ggml_build_forward_expand(g, train ? m->loss : m->out);
    if (train) lm_ggml_build_backward_expand(ctx, ctx, g, false);
    return g;
}

static void test_transformer(bool train) {
    const struct tf_cfg cfg = { 128, 4, 344, 24, 2 };
    const char * tag = train ? "backward" : "forward";
    char what[128];

    // reference: everything in an allocating context, lm_ggml_graph_compute
    struct tf_model rm = { .cfg = cfg };
    struct lm_ggml_context * rctx = new_ctx(256 << 20, false);
    struct lm_ggml_cgraph * rg = tf_graph(rctx, rctx, &rm, train);
    tf_fill_weights(&rm);
    tf_fill_inputs(&rm);
    if (train) lm_ggml_graph_reset(rg);
    check(lm_ggml_graph_compute_with_ctx(rctx, rg, NTH) == LM_GGML_STATUS_SUCCESS, "reference compute");

    // the same through the backend: weights in one buffer, the graph planned by gallocr
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    lm_ggml_backend_cpu_set_n_threads(be, NTH);
    struct tf_model m = { .cfg = cfg };
    struct lm_ggml_context * wctx = new_ctx(64 * lm_ggml_tensor_overhead(), true);
    struct lm_ggml_context * ctx = new_ctx(8192 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead_custom(4096, true), true);
    struct lm_ggml_cgraph * g = tf_graph(wctx, ctx, &m, train);
    lm_ggml_backend_buffer_t wbuf = lm_ggml_backend_alloc_ctx_tensors(wctx, be);
    check(wbuf != NULL, "weights buffer");
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_get_default_buffer_type(be));
    check(lm_ggml_gallocr_reserve(ga, g), "reserve");
    check(lm_ggml_gallocr_alloc_graph(ga, g), "alloc_graph");
    tf_fill_weights(&m);
    tf_fill_inputs(&m);
    if (train) {
        // what lm_ggml_graph_reset does, on backend memory: d loss = 1, the other gradients 0
        for (int i = 0; i < g->n_nodes; i++) {
            struct lm_ggml_tensor * gr = lm_ggml_graph_get_grad(g, g->nodes[i]);
            if (gr == NULL) continue;
            if (g->nodes[i] == m.loss) {
                const float one = 1.0f;
                lm_ggml_backend_tensor_set(gr, &one, 0, sizeof(one));
            } else {
                lm_ggml_backend_tensor_memset(gr, 0, 0, lm_ggml_nbytes(gr));
            }
        }
    }
    check(lm_ggml_backend_graph_compute(be, g) == LM_GGML_STATUS_SUCCESS, "backend compute");
    check(rg->n_nodes == g->n_nodes, "same graph");

    bool eq = true;
    for (int i = 0; i < g->n_nodes && eq; i++) {
        // every node that survives the compute: outputs, and results nothing consumed
        const struct lm_ggml_tensor * t = g->nodes[i];
        bool consumed = false;
        for (int k = i + 1; k < g->n_nodes && !consumed; k++) {
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) consumed |= g->nodes[k]->src[j] != NULL && root_of(g->nodes[k]->src[j]) == root_of(t);
        }
        if ((t->flags & LM_GGML_TENSOR_FLAG_OUTPUT) || !consumed) {
            eq = same_bytes(t, rg->nodes[i]);
            if (!eq) printf("  %s: node %d '%s' differs\n", tag, i, t->name);
        }
    }
    snprintf(what, sizeof(what), "%s: gallocr + backend gives the bits of lm_ggml_graph_compute", tag);
    check(eq, what);
    if (train) {
        const struct lm_ggml_tensor * gw = lm_ggml_graph_get_grad(g, m.layers[0].wq);
        snprintf(what, sizeof(what), "%s: gradient of layer 0 wq", tag);
        check(gw != NULL && same_bytes(gw, lm_ggml_graph_get_grad(rg, rm.layers[0].wq)), what);
    }

    lm_ggml_backend_buffer_t cb = NULL;
    for (int i = 0; i < g->n_nodes && cb == NULL; i++) {
        if (g->nodes[i]->buffer != NULL && g->nodes[i]->buffer != wbuf) cb = g->nodes[i]->buffer;
    }
    snprintf(what, sizeof(what), "%s: no live tensors overlap", tag);
    const int shared = check_no_overlap(g, cb, what);
    const size_t bsize = lm_ggml_gallocr_get_buffer_size(ga, 0), total = sum_of_sizes(g, cb);
    snprintf(what, sizeof(what), "%s: memory is reused (%zu of %zu bytes, %d tensors share)", tag, bsize, total, shared);
    check(shared > 0 && bsize < (train ? total * 3 / 4 : total / 2), what);

    // the inputs were not overwritten
    const int T = cfg.n_tokens;
    int32_t * tv = malloc((size_t) T * sizeof(int32_t));
    float * mv = malloc((size_t) T * T * sizeof(float));
    lm_ggml_backend_tensor_get(m.tokens, tv, 0, (size_t) T * sizeof(int32_t));
    lm_ggml_backend_tensor_get(m.mask, mv, 0, (size_t) T * T * sizeof(float));
    bool xs = true;
    for (int i = 0; i < T; i++) xs &= tv[i] == (i * 7 + 3) % TF_VOCAB;
    for (int i = 0; i < T; i++) for (int j = 0; j < T; j++) xs &= mv[i * T + j] == (j <= i ? 0.0f : -INFINITY);
    free(tv); free(mv);
    snprintf(what, sizeof(what), "%s: inputs survive", tag);
    check(xs, what);

    // computing again (same plan, alloc_graph again) gives the same result
    struct lm_ggml_tensor * probe = train ? lm_ggml_graph_get_grad(g, m.layers[0].w1) : m.out;
    const size_t pn = lm_ggml_nbytes(probe);
    void * before = malloc(pn), * after = malloc(pn);
    lm_ggml_backend_tensor_get(probe, before, 0, pn);
    check(lm_ggml_gallocr_alloc_graph(ga, g), "alloc_graph again");
    if (!train) {
        check(lm_ggml_backend_graph_compute(be, g) == LM_GGML_STATUS_SUCCESS, "compute again");
        lm_ggml_backend_tensor_get(probe, after, 0, pn);
        check(memcmp(before, after, pn) == 0, "the second compute gives the same bits");
    }
    free(before); free(after);

    lm_ggml_gallocr_free(ga);
    lm_ggml_backend_buffer_free(wbuf);
    lm_ggml_free(ctx);
    lm_ggml_free(wctx);
    lm_ggml_free(rctx);
    lm_ggml_backend_free(be);
}

// ---------------------------------------------------------------- in place, outputs, leafs

static void test_inplace_chain(void) {
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    struct lm_ggml_context * ctx = new_ctx(64 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), true);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 64, 16); // a leaf: gallocr gives it memory
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 64, 16);
    struct lm_ggml_tensor * s = lm_ggml_mul(ctx, a, b);         // a new block (a, b are leafs: never overwritten)
    struct lm_ggml_tensor * t = lm_ggml_scale(ctx, s, 0.5f);    // takes s's block
    struct lm_ggml_tensor * u = lm_ggml_silu(ctx, t);           // takes t's
    struct lm_ggml_tensor * keep = lm_ggml_sqr(ctx, u);         // an output: must survive
    lm_ggml_set_output(keep);
    struct lm_ggml_tensor * w = lm_ggml_add(ctx, keep, a);      // keep is an output: not taken over
    struct lm_ggml_tensor * r = lm_ggml_reshape_1d(ctx, w, 64 * 16);
    struct lm_ggml_tensor * z = lm_ggml_exp(ctx, r);            // takes w's block through the view
    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, z);

    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    check(lm_ggml_gallocr_alloc_graph(ga, g), "alloc_graph without reserve");
    check(t->data == s->data && u->data == s->data, "scale and silu run in place");
    check(a->data != s->data && b->data != s->data, "leafs are not overwritten in place");
    check(keep->data != w->data, "an output is not taken over");
    check(z->data == w->data, "a dying view's source is taken over");
    check(lm_ggml_gallocr_get_buffer_size(ga, 0) < 6 * lm_ggml_nbytes(a), "small buffer");

    float av[64 * 16], bv[64 * 16], zv[64 * 16], kv[64 * 16];
    for (int i = 0; i < 64 * 16; i++) { av[i] = tf_value(1, i); bv[i] = tf_value(2, i); }
    lm_ggml_backend_tensor_set(a, av, 0, sizeof(av));
    lm_ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
    check(lm_ggml_backend_graph_compute(be, g) == LM_GGML_STATUS_SUCCESS, "compute the chain");
    lm_ggml_backend_tensor_get(z, zv, 0, sizeof(zv));
    lm_ggml_backend_tensor_get(keep, kv, 0, sizeof(kv));
    bool ok = true;
    for (int i = 0; i < 64 * 16; i++) {
        const float x = av[i] * bv[i] * 0.5f;
        const float sv = x / (1.0f + expf(-x));
        ok &= fabsf(kv[i] - sv * sv) <= 1e-5f * (1 + sv * sv);
        ok &= fabsf(zv[i] - expf(sv * sv + av[i])) <= 1e-4f * expf(sv * sv + av[i]);
    }
    check(ok, "chain values (and the output survived)");
    check_no_overlap(g, t->buffer, "chain: no live tensors overlap");

    lm_ggml_gallocr_free(ga);
    lm_ggml_free(ctx);
    lm_ggml_backend_free(be);
}

// d(a - b)/da is the incoming gradient itself, which the neg of d/db would
// overwrite in place: a parameter's gradient is a result and must survive.
static void test_param_grads_survive(void) {
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    struct lm_ggml_context * ctx = new_ctx(64 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead_custom(256, true), true);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 16);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 16);
    lm_ggml_set_param(ctx, a);
    lm_ggml_set_param(ctx, b);
    struct lm_ggml_tensor * loss = lm_ggml_sum(ctx, lm_ggml_sub(ctx, a, b));
    lm_ggml_set_loss(loss);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx, 256, true);
    lm_ggml_build_forward_expand(g, loss);
    lm_ggml_build_backward_expand(ctx, ctx, g, false);
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    check(lm_ggml_gallocr_alloc_graph(ga, g), "alloc the backward graph");
    float v[16], ga_[16], gb_[16];
    for (int i = 0; i < 16; i++) v[i] = (float) i;
    lm_ggml_backend_tensor_set(a, v, 0, sizeof(v));
    lm_ggml_backend_tensor_set(b, v, 0, sizeof(v));
    lm_ggml_graph_reset(g);
    check(lm_ggml_backend_graph_compute(be, g) == LM_GGML_STATUS_SUCCESS, "compute the backward graph");
    lm_ggml_backend_tensor_get(lm_ggml_graph_get_grad(g, a), ga_, 0, sizeof(ga_));
    lm_ggml_backend_tensor_get(lm_ggml_graph_get_grad(g, b), gb_, 0, sizeof(gb_));
    bool ok = true;
    for (int i = 0; i < 16; i++) ok &= ga_[i] == 1.0f && gb_[i] == -1.0f;
    check(ok, "d/da = 1 and d/db = -1 both survive");
    lm_ggml_gallocr_free(ga);
    lm_ggml_free(ctx);
    lm_ggml_backend_free(be);
}

// ---------------------------------------------------------------- re-planning, several buffers

// A buffer type of its own (a distinct object of the CPU type's behaviour),
// optionally with a small maximum buffer size.
static size_t g_small_max = 1024;
static const char * wrap_name(lm_ggml_backend_buffer_type_t bt) { (void) bt; return "WRAP"; }
static lm_ggml_backend_buffer_t wrap_alloc(lm_ggml_backend_buffer_type_t bt, size_t size) {
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), size);
    if (b != NULL) b->buft = bt;
    return b;
}
static size_t wrap_alignment(lm_ggml_backend_buffer_type_t bt) { (void) bt; return 32; }
static size_t wrap_max(lm_ggml_backend_buffer_type_t bt) { (void) bt; return g_small_max; }
static bool wrap_host(lm_ggml_backend_buffer_type_t bt) { (void) bt; return true; }
static const struct lm_backend_buft_ops wrap_ops = { .name = wrap_name, .alloc = wrap_alloc, .alignment = wrap_alignment, .is_host = wrap_host };
static const struct lm_backend_buft_ops small_ops = { .name = wrap_name, .alloc = wrap_alloc, .alignment = wrap_alignment,
                                                      .max_size = wrap_max, .is_host = wrap_host };
static struct lm_ggml_backend_buffer_type wrap_buft = { &wrap_ops, NULL, NULL };
static struct lm_ggml_backend_buffer_type small_buft = { &small_ops, NULL, NULL };

static struct lm_ggml_cgraph * small_graph(struct lm_ggml_context * ctx, int n, struct lm_ggml_tensor ** out) {
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
    lm_ggml_set_input(a);
    struct lm_ggml_tensor * b = lm_ggml_sqr(ctx, a);
    struct lm_ggml_tensor * c = lm_ggml_sum(ctx, lm_ggml_add(ctx, b, lm_ggml_cos(ctx, b)));
    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, c);
    *out = c;
    return g;
}

static void test_replan(void) {
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    struct lm_ggml_context * c1 = new_ctx(32 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), true);
    struct lm_ggml_context * c2 = new_ctx(32 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), true);
    struct lm_ggml_tensor * o1, * o2;
    struct lm_ggml_cgraph * g1 = small_graph(c1, 16, &o1);
    struct lm_ggml_cgraph * g2 = small_graph(c2, 4096, &o2);

    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    check(lm_ggml_gallocr_reserve(ga, g1), "reserve a small graph");
    const size_t s1 = lm_ggml_gallocr_get_buffer_size(ga, 0);
    check(lm_ggml_gallocr_alloc_graph(ga, g2), "a bigger graph re-plans by itself (one buffer)");
    check(lm_ggml_gallocr_get_buffer_size(ga, 0) > s1, "and grows the buffer");
    float v[4096];
    for (int i = 0; i < 4096; i++) v[i] = 0.001f * (float) i;
    lm_ggml_backend_tensor_set(g2->nodes[0]->src[0], v, 0, sizeof(v));
    check(lm_ggml_backend_graph_compute(be, g2) == LM_GGML_STATUS_SUCCESS, "compute the re-planned graph");
    float r;
    lm_ggml_backend_tensor_get(o2, &r, 0, sizeof(r));
    double want = 0;
    for (int i = 0; i < 4096; i++) want += (double) v[i] * v[i] + cos((double) v[i] * v[i]);
    check(fabs(r - want) < 1e-3 * fabs(want), "re-planned result");
    lm_ggml_gallocr_free(ga);

    // two buffer types: nodes in buffer 1, leafs in buffer 0
    lm_ggml_backend_buffer_type_t bts[2] = { lm_ggml_backend_cpu_buffer_type(), &wrap_buft };
    ga = lm_ggml_gallocr_new_n(bts, 2);
    struct lm_ggml_context * c3 = new_ctx(32 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), true);
    struct lm_ggml_tensor * o3;
    struct lm_ggml_cgraph * g3 = small_graph(c3, 64, &o3);
    int node_ids[16], leaf_ids[16];
    for (int i = 0; i < 16; i++) { node_ids[i] = 1; leaf_ids[i] = 0; }
    check(lm_ggml_gallocr_reserve_n(ga, g3, node_ids, leaf_ids), "reserve_n with two buffers");
    check(lm_ggml_gallocr_alloc_graph(ga, g3), "alloc_graph of the reserved graph");
    check(o3->buffer != NULL && lm_ggml_backend_buffer_get_type(o3->buffer) == &wrap_buft, "nodes in buffer 1");
    check(lm_ggml_gallocr_get_buffer_size(ga, 0) > 0 && lm_ggml_gallocr_get_buffer_size(ga, 1) > 0, "both buffers sized");
    lm_ggml_log_set(quiet_log, NULL);
    check(!lm_ggml_gallocr_alloc_graph(ga, g1), "another graph with two buffers: false (reserve_n first)");
    node_ids[0] = 7;
    check(!lm_ggml_gallocr_reserve_n(ga, g3, node_ids, leaf_ids), "a bad buffer id");
    check(lm_ggml_gallocr_get_buffer_size(ga, 2) == 0 && lm_ggml_gallocr_get_buffer_size(NULL, 0) == 0, "get_buffer_size of a bad id");
    check(!lm_ggml_gallocr_reserve(NULL, g1) && !lm_ggml_gallocr_alloc_graph(ga, NULL), "NULL arguments");
    check(lm_ggml_gallocr_new_n(NULL, 1) == NULL && lm_ggml_gallocr_new(NULL) == NULL, "no buffer types");
    lm_ggml_log_set(NULL, NULL);
    lm_ggml_gallocr_free(ga);
    lm_ggml_gallocr_free(NULL);

    // the same buffer type twice shares one buffer, counted once
    lm_ggml_backend_buffer_type_t same[2] = { lm_ggml_backend_cpu_buffer_type(), lm_ggml_backend_cpu_buffer_type() };
    ga = lm_ggml_gallocr_new_n(same, 2);
    node_ids[0] = 1;
    struct lm_ggml_context * c4 = new_ctx(32 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), true);
    struct lm_ggml_tensor * o4;
    struct lm_ggml_cgraph * g4 = small_graph(c4, 64, &o4);
    check(lm_ggml_gallocr_reserve_n(ga, g4, node_ids, leaf_ids) && lm_ggml_gallocr_get_buffer_size(ga, 1) == 0 &&
          lm_ggml_gallocr_get_buffer_size(ga, 0) > 0, "shared buffer counted once");
    lm_ggml_gallocr_free(ga);

    lm_ggml_free(c1); lm_ggml_free(c2); lm_ggml_free(c3); lm_ggml_free(c4);
    lm_ggml_backend_free(be);
}

// A graph allocated again after the allocator planned a bigger one (which
// grew the buffer): its tensors' old addresses are stale and must be
// replaced, not taken for memory of their own. And a view into memory the
// allocator does not manage (a cache) may move between allocations.
static float small_result(lm_ggml_backend_t be, struct lm_ggml_cgraph * g, struct lm_ggml_tensor * out, int n, float k) {
    float * v = malloc((size_t) n * sizeof(float));
    for (int i = 0; i < n; i++) v[i] = k * (float) i;
    lm_ggml_backend_tensor_set(g->nodes[0]->src[0], v, 0, (size_t) n * sizeof(float));
    free(v);
    if (lm_ggml_backend_graph_compute(be, g) != LM_GGML_STATUS_SUCCESS) return NAN;
    float r;
    lm_ggml_backend_tensor_get(out, &r, 0, sizeof(r));
    return r;
}

static double small_want(int n, float k) {
    double want = 0;
    for (int i = 0; i < n; i++) {
        const double x = k * (float) i;
        want += x * x + cos(x * x);
    }
    return want;
}

static bool in_buffer(const struct lm_ggml_tensor * t, lm_ggml_backend_buffer_t b) {
    const char * base = lm_ggml_backend_buffer_get_base(b);
    return t->buffer == b && (const char *) t->data >= base && (const char *) t->data < base + lm_ggml_backend_buffer_get_size(b);
}

static void test_realloc_after_growth(void) {
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    struct lm_ggml_context * c1 = new_ctx(32 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), true);
    struct lm_ggml_context * c2 = new_ctx(32 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), true);
    struct lm_ggml_tensor * oa, * ob;
    struct lm_ggml_cgraph * ga = small_graph(c1, 64, &oa);
    struct lm_ggml_cgraph * gb = small_graph(c2, 8192, &ob);
    lm_ggml_gallocr_t al = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    for (int round = 0; round < 3; round++) {
        check(lm_ggml_gallocr_alloc_graph(al, ga), "alloc A");
        const float ra = small_result(be, ga, oa, 64, 0.01f);
        check(fabs(ra - small_want(64, 0.01f)) < 1e-3 * fabs(small_want(64, 0.01f)), "A computes right");
        lm_ggml_backend_buffer_t cur = oa->buffer;
        bool all = true;
        for (int i = 0; i < ga->n_nodes; i++) all &= in_buffer(ga->nodes[i], cur);
        check(all, "A's tensors lie in the allocator's current buffer");
        const size_t before = lm_ggml_gallocr_get_buffer_size(al, 0);
        check(lm_ggml_gallocr_alloc_graph(al, gb), "alloc B");
        if (round == 0) check(lm_ggml_gallocr_get_buffer_size(al, 0) > before, "B grows the buffer");
        check(ob->buffer == cur, "the grown buffer keeps its identity");
        const float rb = small_result(be, gb, ob, 8192, 0.001f);
        check(fabs(rb - small_want(8192, 0.001f)) < 1e-3 * fabs(small_want(8192, 0.001f)), "B computes right");
    }
    check(lm_ggml_gallocr_alloc_graph(al, ga), "alloc A once more");
    const float ra = small_result(be, ga, oa, 64, 0.02f);
    check(fabs(ra - small_want(64, 0.02f)) < 1e-3 * fabs(small_want(64, 0.02f)), "A computes right after B");

    // a store into a cache through a view that moves
    struct lm_ggml_context * kc = new_ctx(4 * lm_ggml_tensor_overhead(), true);
    struct lm_ggml_tensor * cache = lm_ggml_new_tensor_1d(kc, LM_GGML_TYPE_F32, 32);
    lm_ggml_backend_buffer_t cb = lm_ggml_backend_alloc_ctx_tensors(kc, be);
    lm_ggml_backend_buffer_clear(cb, 0);
    struct lm_ggml_context * c3 = new_ctx(16 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), true);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_1d(c3, LM_GGML_TYPE_F32, 4);
    lm_ggml_set_input(x);
    struct lm_ggml_tensor * dst = lm_ggml_view_1d(c3, cache, 4, 0);
    struct lm_ggml_tensor * st = lm_ggml_cpy(c3, lm_ggml_scale(c3, x, 2.0f), dst);
    struct lm_ggml_cgraph * gs = lm_ggml_new_graph(c3);
    lm_ggml_build_forward_expand(gs, st);
    for (int p = 0; p < 8; p++) {
        // moved as a C caller may: the offset only (alloc_graph places the data)
        dst->view_offs = st->view_offs = (size_t) p * 4 * sizeof(float);
        check(lm_ggml_gallocr_alloc_graph(al, p % 3 == 2 ? gb : gs) && (p % 3 != 2 || lm_ggml_gallocr_alloc_graph(al, gs)), "alloc the store");
        check(st->data == (char *) cache->data + st->view_offs && dst->data == st->data, "the moved view's data follows its offset");
        const float xv[4] = { (float) p, 1, 2, 3 };
        lm_ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
        check(lm_ggml_backend_graph_compute(be, gs) == LM_GGML_STATUS_SUCCESS, "compute the store");
    }
    float cv[32];
    lm_ggml_backend_tensor_get(cache, cv, 0, sizeof(cv));
    bool stored = true;
    for (int p = 0; p < 8; p++) stored &= cv[4*p] == 2.0f * (float) p && cv[4*p + 1] == 2 && cv[4*p + 3] == 6;
    check(stored, "every store went to its row");

    lm_ggml_gallocr_free(al);
    lm_ggml_backend_buffer_free(cb);
    lm_ggml_free(c1); lm_ggml_free(c2); lm_ggml_free(c3); lm_ggml_free(kc);
    lm_ggml_backend_free(be);
}

// ---------------------------------------------------------------- alloc_ctx_tensors

static void test_ctx_tensors(void) {
    lm_ggml_log_set(quiet_log, NULL);
    struct lm_ggml_context * ctx = new_ctx(32 * lm_ggml_tensor_overhead(), true);
    check(lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, lm_ggml_backend_cpu_buffer_type()) == NULL, "nothing to allocate: NULL");
    check(lm_ggml_backend_alloc_ctx_tensors(ctx, NULL) == NULL && lm_ggml_backend_alloc_ctx_tensors_from_buft(NULL, &wrap_buft) == NULL,
          "NULL arguments");
    struct lm_ggml_tensor * t[5];
    for (int i = 0; i < 5; i++) t[i] = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 150); // 600 bytes, 608 aligned
    struct lm_ggml_tensor * v = lm_ggml_view_1d(ctx, t[3], 10, 40);
    struct lm_ggml_tensor * e = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 0); // empty: gets an address too
    lm_ggml_backend_buffer_t b = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, &small_buft);
    check(b != NULL && lm_backend_buffer_is_multi(b), "a multi-buffer when the max size is exceeded");
    bool placed = e->data != NULL && v->data == (char *) t[3]->data + 40 && v->buffer == t[3]->buffer;
    for (int i = 0; i < 5; i++) placed &= t[i]->data != NULL && t[i]->buffer != NULL && t[i]->buffer != b;
    check(placed, "every tensor has its place, in a part");
    check(t[0]->buffer != t[2]->buffer, "tensors spread over parts");
    float x[150];
    for (int i = 0; i < 150; i++) x[i] = (float) i;
    for (int i = 0; i < 5; i++) lm_ggml_backend_tensor_set(t[i], x, 0, sizeof(x));
    float y[10];
    lm_ggml_backend_tensor_get(v, y, 0, sizeof(y));
    check(y[0] == 10 && y[9] == 19, "write and read across parts");
    lm_ggml_backend_buffer_set_usage(b, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    check(lm_ggml_backend_buffer_get_usage(t[4]->buffer) == LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "usage reaches the parts");
    lm_ggml_backend_buffer_free(b);

    struct lm_ggml_context * big = new_ctx(8 * lm_ggml_tensor_overhead(), true);
    lm_ggml_new_tensor_1d(big, LM_GGML_TYPE_F32, 1000);
    check(lm_ggml_backend_alloc_ctx_tensors_from_buft(big, &small_buft) == NULL, "a tensor bigger than the max size: NULL");
    lm_ggml_free(big);
    lm_ggml_free(ctx);
    lm_ggml_log_set(NULL, NULL);
}

int main(void) {
    test_transformer(false);
    test_transformer(true);
    test_inplace_chain();
    test_param_grads_survive();
    test_replan();
    test_realloc_after_growth();
    test_ctx_tensors();
    return check_summary();
}
