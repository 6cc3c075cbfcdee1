// test-rpc-graph.c - graphs through the RPC encoding and the server's
// rebuilding (rpc-graph.h), without sockets or backends: a graph computed
// as built and computed again after encode -> decode -> rebuild must give the
// same bytes; tampered graphs must be refused.
#include "rpc-graph.h"
#include "ggml-cpu.h"
#include "ggml-impl.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool any_buffer(void * user, const struct lm_ggml_tensor * t, uint64_t * handle, lm_rpc_why why) {
    (void) user; (void) why;
    *handle = t->data ? 1 : 0;
    return true;
}

// The test's "server memory" is the client's: data addresses map to themselves.
static bool identity(void * user, const struct lm_rpc_tensor * t, void ** data, lm_ggml_backend_buffer_t * buf, lm_rpc_why why) {
    (void) user; (void) why;
    *data = (void *)(uintptr_t) t->data;
    *buf = NULL;
    return true;
}

static bool refuse_all(void * user, const struct lm_rpc_tensor * t, void ** data, lm_ggml_backend_buffer_t * buf, lm_rpc_why why) {
    (void) user; (void) data; (void) buf;
    snprintf(why, LM_RPC_WHY, "tensor '%s' is not ours", t->name);
    return false;
}

static enum lm_ggml_status compute_status(struct lm_ggml_cgraph * g, int n_threads) {
    struct lm_ggml_cplan plan = lm_ggml_graph_plan(g, n_threads, NULL);
    void * work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    const enum lm_ggml_status st = lm_ggml_graph_compute(g, &plan);
    free(work);
    return st;
}

static void compute(struct lm_ggml_cgraph * g, int n_threads) {
    CHECK(compute_status(g, n_threads) == LM_GGML_STATUS_SUCCESS);
}

static float frand(uint32_t * s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void fill(struct lm_ggml_tensor * t, uint32_t seed) {
    if (t->type == LM_GGML_TYPE_F32) {
        for (int64_t i = 0; i < lm_ggml_nelements(t); i++) ((float *) t->data)[i] = frand(&seed);
    } else if (t->type == LM_GGML_TYPE_F16) {
        for (int64_t i = 0; i < lm_ggml_nelements(t); i++) ((lm_ggml_fp16_t *) t->data)[i] = lm_ggml_fp32_to_fp16(frand(&seed));
    }
}

// Tensor data lives in an arena apart from the context (which holds the
// tensor structs), so that a mutated graph can scribble on all of the arena
// without touching the graph it came from.
static uint8_t * g_arena;
static size_t g_arena_size, g_arena_used;

static void place(struct lm_ggml_tensor * t) {
    const size_t n = (lm_ggml_nbytes(t) + 63) / 64 * 64;
    if (g_arena_used + n > g_arena_size) {
        fprintf(stderr, "arena too small\n");
        exit(1);
    }
    t->data = g_arena + g_arena_used;
    g_arena_used += n;
}

// Data for every tensor that has none yet, in creation order (views after their sources).
static void place_all(struct lm_ggml_context * ctx) {
    for (struct lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t != NULL; t = lm_ggml_get_next_tensor(ctx, t)) {
        if (t->data != NULL) continue;
        if (t->view_src != NULL) t->data = (char *) t->view_src->data + t->view_offs;
        else place(t);
    }
}

static struct lm_ggml_context * new_block_ctx(void) {
    g_arena_size = 4 << 20;
    g_arena_used = 0;
    free(g_arena);
    g_arena = calloc(1, g_arena_size);
    struct lm_ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = true };
    return lm_ggml_init(ip);
}

// A transformer block's worth of ops plus a few more, with views, in-place
// ops, a cast and a copy into a cache.
static struct lm_ggml_cgraph * build_block(struct lm_ggml_context * ctx) {
    const int n_embd = 64, n_head = 4, hd = 16, n_tok = 5, n_vocab = 50, n_ctx = 32;
    struct lm_ggml_tensor * tok_emb = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_vocab);
    struct lm_ggml_tensor * tokens  = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, n_tok);
    struct lm_ggml_tensor * pos     = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, n_tok);
    struct lm_ggml_tensor * norm_w  = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n_embd);
    struct lm_ggml_tensor * wq = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, n_embd, n_embd);
    struct lm_ggml_tensor * wk = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_embd);
    struct lm_ggml_tensor * wv = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_embd);
    struct lm_ggml_tensor * wo = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_embd);
    struct lm_ggml_tensor * w1 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, 96);
    struct lm_ggml_tensor * w2 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 96, n_embd);
    struct lm_ggml_tensor * w3 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, 96);
    struct lm_ggml_tensor * kcache = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F16, n_embd * n_ctx);
    struct lm_ggml_tensor * mask = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_tok, n_tok);
    struct lm_ggml_tensor * all[] = { tok_emb, norm_w, wq, wk, wv, wo, w1, w2, w3, kcache };
    place_all(ctx);
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) fill(all[i], 1234 + (uint32_t) i);
    for (int i = 0; i < n_tok; i++) {
        ((int32_t *) tokens->data)[i] = (i * 7) % n_vocab;
        ((int32_t *) pos->data)[i] = i;
        for (int j = 0; j < n_tok; j++) ((float *) mask->data)[i * n_tok + j] = j > i ? -INFINITY : 0.0f;
    }

    struct lm_ggml_tensor * x = lm_ggml_get_rows(ctx, tok_emb, tokens);
    struct lm_ggml_tensor * h = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, x, 1e-5f), norm_w);
    struct lm_ggml_tensor * q = lm_ggml_rope_ext(ctx, lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, wq, h), hd, n_head, n_tok),
                                                 pos, NULL, hd, 0, 128, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    struct lm_ggml_tensor * k = lm_ggml_rope_ext(ctx, lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, wk, h), hd, n_head, n_tok),
                                                 pos, NULL, hd, 2, 128, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    struct lm_ggml_tensor * v = lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, wv, h), hd, n_head, n_tok);
    // store k into the cache (a copy into a view), read it back as f32 through a cast
    struct lm_ggml_tensor * kview = lm_ggml_view_1d(ctx, kcache, n_embd * n_tok, 0);
    struct lm_ggml_tensor * stored = lm_ggml_cpy(ctx, k, kview);
    struct lm_ggml_tensor * kc = lm_ggml_cast(ctx, lm_ggml_reshape_3d(ctx, stored, hd, n_head, n_tok), LM_GGML_TYPE_F32);
    struct lm_ggml_tensor * qp = lm_ggml_permute(ctx, q, 0, 2, 1, 3);
    struct lm_ggml_tensor * kp = lm_ggml_cont(ctx, lm_ggml_permute(ctx, kc, 0, 2, 1, 3));
    struct lm_ggml_tensor * kq = lm_ggml_mul_mat(ctx, kp, qp);
    kq = lm_ggml_soft_max_ext(ctx, kq, mask, 0.25f, 0.0f);
    struct lm_ggml_tensor * vt = lm_ggml_cont(ctx, lm_ggml_permute(ctx, v, 1, 2, 0, 3));
    struct lm_ggml_tensor * kqv = lm_ggml_permute(ctx, lm_ggml_mul_mat(ctx, vt, kq), 0, 2, 1, 3);
    struct lm_ggml_tensor * att = lm_ggml_mul_mat(ctx, wo, lm_ggml_cont_2d(ctx, kqv, n_embd, n_tok));
    x = lm_ggml_add_inplace(ctx, att, x);
    h = lm_ggml_rms_norm(ctx, x, 1e-5f);
    struct lm_ggml_tensor * ff = lm_ggml_mul(ctx, lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, w1, h)), lm_ggml_mul_mat(ctx, w3, h));
    x = lm_ggml_add(ctx, lm_ggml_mul_mat(ctx, w2, ff), x);
    x = lm_ggml_scale_inplace(ctx, x, 0.5f);
    // a few more ops for coverage
    struct lm_ggml_tensor * extra = lm_ggml_concat(ctx, lm_ggml_sum_rows(ctx, x), lm_ggml_mean(ctx, x), 1);
    struct lm_ggml_tensor * sorted = lm_ggml_argsort(ctx, lm_ggml_soft_max(ctx, x), LM_GGML_SORT_ORDER_DESC);
    struct lm_ggml_tensor * fa = lm_ggml_flash_attn_ext(ctx, qp, lm_ggml_cast(ctx, kp, LM_GGML_TYPE_F16),
                                                        lm_ggml_cast(ctx, lm_ggml_cont(ctx, lm_ggml_permute(ctx, v, 0, 2, 1, 3)), LM_GGML_TYPE_F16),
                                                        NULL, 0.25f, 0.0f, 0.0f);

    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, x);
    lm_ggml_build_forward_expand(g, extra);
    lm_ggml_build_forward_expand(g, sorted);
    lm_ggml_build_forward_expand(g, lm_ggml_argmax(ctx, x));
    lm_ggml_build_forward_expand(g, lm_ggml_gelu(ctx, fa));
    lm_ggml_build_forward_expand(g, lm_ggml_unary(ctx, lm_ggml_norm(ctx, x, 1e-5f), LM_GGML_UNARY_OP_TANH));
    place_all(ctx);
    return g;
}

static struct lm_rpc_graph * roundtrip(const struct lm_ggml_cgraph * g) {
    lm_rpc_why why = "";
    size_t len = 0;
    uint8_t * msg = lm_rpc_graph_encode(g, any_buffer, NULL, &len, why);
    CHECK(msg != NULL);
    if (msg == NULL) return NULL;
    struct lm_rpc_graph * d = lm_rpc_graph_decode(msg, len, why);
    if (d == NULL) fprintf(stderr, "decode: %s\n", why);
    free(msg);
    return d;
}

static void test_same_bytes(int n_threads) {
    struct lm_ggml_context * ctx = new_block_ctx();
    struct lm_ggml_cgraph * g = build_block(ctx);
    const size_t size = g_arena_size;
    uint8_t * mem = g_arena;
    uint8_t * before = malloc(size), * after = malloc(size);
    memcpy(before, mem, size);
    compute(g, n_threads);
    memcpy(after, mem, size);

    struct lm_rpc_graph * d = roundtrip(g);
    CHECK(d != NULL && d->n_nodes == (uint32_t) lm_ggml_graph_n_nodes(g));
    struct lm_rpc_built b;
    lm_rpc_why why = "";
    enum lm_rpc_build_status st = d ? lm_rpc_graph_build(d, identity, NULL, &b, why) : LM_RPC_REFUSED;
    if (st != LM_RPC_BUILT) fprintf(stderr, "build: %s\n", why);
    CHECK(st == LM_RPC_BUILT);
    if (st == LM_RPC_BUILT) {
        memcpy(mem, before, size);
        compute(b.graph, n_threads);
        // the rebuilt graph wrote exactly what the original did
        CHECK(memcmp(mem, after, size) == 0);
        int n_rebuilt = 0;
        for (int i = 0; i < b.graph->n_nodes; i++) n_rebuilt += b.graph->nodes[i]->op != LM_GGML_OP_NONE;
        CHECK(n_rebuilt > 30);
        lm_rpc_built_free(&b);
    }
    CHECK(lm_rpc_graph_build(d, refuse_all, NULL, &b, why) == LM_RPC_MALFORMED && strstr(why, "not ours") != NULL);
    lm_rpc_graph_free(d);
    free(before);
    free(after);
    lm_ggml_free(ctx);
}

// One node, encoded, tampered with by edit, then built.
static enum lm_rpc_build_status tampered(struct lm_ggml_tensor * node, void (*edit)(struct lm_rpc_graph *), lm_rpc_why why) {
    struct lm_ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = true };
    struct lm_ggml_context * gctx = lm_ggml_init(ip);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph(gctx);
    lm_ggml_build_forward_expand(g, node);
    struct lm_rpc_graph * d = roundtrip(g);
    if (edit) edit(d);
    struct lm_rpc_built b;
    enum lm_rpc_build_status st = lm_rpc_graph_build(d, identity, NULL, &b, why);
    if (st == LM_RPC_BUILT) lm_rpc_built_free(&b);
    lm_rpc_graph_free(d);
    lm_ggml_free(gctx);
    return st;
}

static struct lm_rpc_tensor * last(struct lm_rpc_graph * d) { return &d->tensors[d->n_tensors - 1]; }
static void grow_ne0(struct lm_rpc_graph * d)    { last(d)->ne[0] *= 2; last(d)->nb[1] *= 2; last(d)->nb[2] *= 2; last(d)->nb[3] *= 2; }
static void set_type(struct lm_rpc_graph * d)    { last(d)->type = LM_GGML_TYPE_F16; }
static void set_stride(struct lm_rpc_graph * d)  { last(d)->nb[1] += 4; }
static void set_unary(struct lm_rpc_graph * d)   { last(d)->op_params[0] = LM_GGML_UNARY_OP_COUNT; }
static void shrink_src(struct lm_rpc_graph * d)  { d->tensors[0].ne[0] = 4; d->tensors[0].nb[1] = 16; }
static void drop_src1(struct lm_rpc_graph * d)   { last(d)->src_idx[1] = -1; }
static void set_map(struct lm_rpc_graph * d)     { last(d)->op = LM_GGML_OP_MAP_CUSTOM1; }
static void set_fa_back(struct lm_rpc_graph * d) { last(d)->op = LM_GGML_OP_FLASH_ATTN_BACK; }
static void set_prec(struct lm_rpc_graph * d)    { last(d)->op_params[0] = 7; }
static void self_src0(struct lm_rpc_graph * d)   { last(d)->src_idx[0] = (int32_t) d->n_tensors - 1; }

static void test_refusals(void) {
    struct lm_ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 4);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 4);
    lm_rpc_why why = "";

    CHECK(tampered(lm_ggml_add(ctx, a, b), NULL, why) == LM_RPC_BUILT);
    CHECK(tampered(lm_ggml_add(ctx, a, b), grow_ne0, why) == LM_RPC_REFUSED && strstr(why, "shape") != NULL);
    CHECK(tampered(lm_ggml_add(ctx, a, b), set_stride, why) == LM_RPC_REFUSED);
    CHECK(tampered(lm_ggml_add(ctx, a, b), shrink_src, why) == LM_RPC_REFUSED);  // b no longer repeats into a
    CHECK(tampered(lm_ggml_add(ctx, a, b), drop_src1, why) == LM_RPC_REFUSED && strstr(why, "missing") != NULL);
    CHECK(tampered(lm_ggml_add(ctx, a, b), set_map, why) == LM_RPC_REFUSED && strstr(why, "not computed") != NULL);
    CHECK(tampered(lm_ggml_add(ctx, a, b), set_fa_back, why) == LM_RPC_REFUSED);
    CHECK(tampered(lm_ggml_add(ctx, a, b), self_src0, why) == LM_RPC_REFUSED);
    CHECK(tampered(lm_ggml_mul_mat(ctx, a, b), NULL, why) == LM_RPC_BUILT);
    CHECK(tampered(lm_ggml_mul_mat(ctx, a, b), set_prec, why) == LM_RPC_REFUSED);
    CHECK(tampered(lm_ggml_mul_mat(ctx, a, b), shrink_src, why) == LM_RPC_REFUSED);
    CHECK(tampered(lm_ggml_silu(ctx, a), set_unary, why) == LM_RPC_REFUSED);
    CHECK(tampered(lm_ggml_silu(ctx, a), set_type, why) == LM_RPC_REFUSED);
    // a cast names itself as its second source; only a copy may
    CHECK(tampered(lm_ggml_cast(ctx, a, LM_GGML_TYPE_F16), NULL, why) == LM_RPC_BUILT);
    // views are never computed: nothing to refuse beyond their bounds
    CHECK(tampered(lm_ggml_transpose(ctx, a), grow_ne0, why) == LM_RPC_BUILT);

    // the client's supports_op
    CHECK(lm_rpc_op_supported(lm_ggml_add(ctx, a, b)));
    CHECK(lm_rpc_op_supported(lm_ggml_view_1d(ctx, a, 4, 0)));
    struct lm_ggml_tensor * custom = lm_ggml_dup_tensor(ctx, a);
    custom->op = LM_GGML_OP_MAP_CUSTOM1;
    CHECK(!lm_rpc_op_supported(custom));
    CHECK(!lm_rpc_op_supported(NULL));
    lm_ggml_free(ctx);
}

static void test_encode_limits(void) {
    struct lm_ggml_init_params ip = { .mem_size = 1 << 16, .mem_buffer = NULL, .no_alloc = true };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * big = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, (int64_t) 1 << 31, 2); // nb[1] = 8 GiB
    struct lm_rpc_tensor w;
    lm_rpc_why why = "";
    CHECK(!lm_rpc_tensor_from(&w, big, 0, why) && strstr(why, "32 bits") != NULL);
    // a deep chain encodes without deep recursion, each tensor after its source
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    struct lm_ggml_init_params ip2 = { .mem_size = 64 << 20, .mem_buffer = NULL, .no_alloc = true };
    struct lm_ggml_context * c2 = lm_ggml_init(ip2);
    for (int i = 0; i < 20000; i++) x = lm_ggml_scale(c2, x, 1.0f);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph_custom(c2, 1, false);
    lm_ggml_graph_add_node(g, x);
    size_t len = 0;
    uint8_t * msg = lm_rpc_graph_encode(g, any_buffer, NULL, &len, why);
    CHECK(msg != NULL && len == 8 + 8 + (size_t) 20001 * LM_RPC_TENSOR_SIZE);
    struct lm_rpc_graph * d = msg ? lm_rpc_graph_decode(msg, len, why) : NULL;
    CHECK(d != NULL && d->n_tensors == 20001 && d->tensors[20000].src_idx[0] == 19999);
    lm_rpc_graph_free(d);
    free(msg);
    lm_ggml_free(c2);
    lm_ggml_free(ctx);
}

// ---------------------------------------------------------------- mutated graphs

// The arena a mutated graph may use: [lo, hi) of the original context's memory.
struct arena { uint64_t lo, hi; };

static bool in_arena(void * user, const struct lm_rpc_tensor * t, void ** data, lm_ggml_backend_buffer_t * buf, lm_rpc_why why) {
    const struct arena * a = user;
    *buf = NULL;
    *data = (void *)(uintptr_t) t->data;
    if (t->extent == 0) return true;
    if (t->data < a->lo || t->data > a->hi || t->extent > a->hi - t->data) {
        snprintf(why, LM_RPC_WHY, "outside the arena");
        return false;
    }
    return true;
}

static uint32_t rnd(uint32_t * s, uint32_t n) {
    *s ^= *s << 13; *s ^= *s >> 17; *s ^= *s << 5;
    return *s % n;
}

// One random change to a tensor of the graph: a dimension, a stride, the
// type, an op parameter, a source, the op, the data address.
static void mutate(struct lm_rpc_graph * d, uint32_t * s) {
    struct lm_rpc_tensor * t = &d->tensors[rnd(s, d->n_tensors)];
    const uint32_t k = rnd(s, 4);
    switch (rnd(s, 8)) {
        case 0: t->ne[k] = rnd(s, 70); break;
        case 1: t->nb[k] = 2 * rnd(s, 300); break;
        case 2: t->type = (uint32_t[]) { LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_I32, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_K }[rnd(s, 5)]; break;
        case 3: t->op_params[rnd(s, 12)] = (int32_t) rnd(s, 70) - 5; break;
        case 4: { const int32_t j = (int32_t) rnd(s, (uint32_t)(t - d->tensors) + 1); t->src_idx[rnd(s, 3)] = j == t - d->tensors ? -1 : j; break; }
        case 5: t->op = rnd(s, LM_GGML_OP_COUNT); break;
        case 6: t->data += (uint64_t)(rnd(s, 64) * 4) - 128; break;
        default: t->view_idx = t->src_idx[0]; break;
    }
}

// Recomputes a tensor's extent after a mutation (as the decoder would).
static bool redecode(struct lm_rpc_graph * d) {
    for (uint32_t i = 0; i < d->n_tensors; i++) {
        struct lm_rpc_tensor * t = &d->tensors[i];
        uint8_t b[LM_RPC_TENSOR_SIZE];
        int32_t src_idx[LM_GGML_MAX_SRC];
        const int32_t view_idx = t->view_idx;
        memcpy(src_idx, t->src_idx, sizeof(src_idx));
        lm_rpc_tensor_encode(b, t);
        lm_rpc_why why;
        if (!lm_rpc_tensor_decode(b, t, why)) return false;
        memcpy(t->src_idx, src_idx, sizeof(src_idx));
        t->view_idx = view_idx;
    }
    return true;
}

// Whatever a client does to a graph, what builds computes inside the arena
// (run under ASan: the arena is one allocation of exactly its size).
static void test_mutations(void) {
    struct lm_ggml_context * ctx = new_block_ctx();
    struct lm_ggml_cgraph * g = build_block(ctx);
    struct arena a = { (uint64_t)(uintptr_t) g_arena, (uint64_t)(uintptr_t) g_arena + g_arena_size };
    uint32_t seed = 12345;
    int built = 0, refused = 0, malformed = 0;
    for (int iter = 0; iter < 1500; iter++) {
        struct lm_rpc_graph * d = roundtrip(g);
        if (d == NULL) break;
        const int n_mut = 1 + (int) rnd(&seed, 3);
        for (int m = 0; m < n_mut; m++) mutate(d, &seed);
        if (!redecode(d)) {
            malformed++;
            lm_rpc_graph_free(d);
            continue;
        }
        struct lm_rpc_built b;
        lm_rpc_why why;
        switch (lm_rpc_graph_build(d, in_arena, &a, &b, why)) {
            case LM_RPC_BUILT:
                built++;
                // the engine may still refuse a type pair it has no kernel for: a status, not a crash
                (void) compute_status(b.graph, 1 + iter % 2);
                lm_rpc_built_free(&b);
                break;
            case LM_RPC_REFUSED: refused++; break;
            default: malformed++; break;
        }
        lm_rpc_graph_free(d);
    }
    printf("mutations: %d built and computed, %d refused, %d outside the arena\n", built, refused, malformed);
    CHECK(built > 100 && refused > 100);
    lm_ggml_free(ctx);
}

int main(void) {
    test_same_bytes(1);
    test_same_bytes(3);
    test_refusals();
    test_encode_limits();
    test_mutations();
    free(g_arena);
    if (g_fail) {
        fprintf(stderr, "%d failures\n", g_fail);
        return 1;
    }
    printf("rpc graph: rebuilt block computes the same bytes (1 and 3 threads); tampered nodes refused\n");
    return 0;
}
