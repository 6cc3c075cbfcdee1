// test-sched.c - the backend scheduler (lm_ggml_backend_sched_*) and the graph
// copy utilities over two backends.
//
// Two setups:
//  - two CPU backends: they share the host buffer type, so splits happen
//    (nodes pinned with set_tensor_backend) but no copies are needed;
//  - two TEST devices (TA, TB) and the CPU: each TEST device computes with
//    the CPU engine but accepts only its own buffer type, like two GPUs, so
//    the scheduler must copy split inputs between them (counted through the
//    buffers' set calls).
// Every result is compared bit for bit with the same graph computed directly
// by lm_ggml_graph_compute on one thread.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-sched.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// ---------------------------------------------------------------- the TEST devices
//
// Two instances, TA and TB, each with a buffer type that only it accepts
// (like two GPUs). Their memory is host memory (is_host), so the CPU engine
// computes for them and the CPU backend may read it; TA and TB cannot read
// each other's or the CPU's memory, so the scheduler copies.

struct tdev {
    const char * name;
    bool refuse[LM_GGML_OP_COUNT];  // ops it does not support
    bool offload[LM_GGML_OP_COUNT]; // ops it asks for (offload_op)
    int n_set;                      // tensor writes into its buffers
    int n_compute;                  // graphs it computed
    lm_ggml_guid guid;
    struct lm_ggml_backend_buffer_type buft;
    struct lm_ggml_backend_device dev;
    struct lm_ggml_backend backend;
};
static struct tdev tdevs[2];
static lm_ggml_backend_t g_cpu; // computes for them

static struct tdev * of_buffer(lm_ggml_backend_buffer_t buf) { return buf->buft->ctx; }

static void * tbuf_base(lm_ggml_backend_buffer_t buf) { return buf->ctx; }
static void tbuf_free(lm_ggml_backend_buffer_t buf) { free(buf->ctx); }
static bool tbuf_memset(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t, uint8_t v, size_t off, size_t size) {
    (void) buf; memset((char *) t->data + off, v, size); return true;
}
static bool tbuf_set(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t, const void * data, size_t off, size_t size) {
    memcpy((char *) t->data + off, data, size); of_buffer(buf)->n_set++; return true;
}
static bool tbuf_get(lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * t, void * data, size_t off, size_t size) {
    (void) buf; memcpy(data, (const char *) t->data + off, size); return true;
}
static bool tbuf_clear(lm_ggml_backend_buffer_t buf, uint8_t v) { memset(buf->ctx, v, buf->size); return true; }

static const struct lm_backend_buffer_ops tbuf_ops = {
    .free = tbuf_free, .base = tbuf_base, .memset_tensor = tbuf_memset,
    .set_tensor = tbuf_set, .get_tensor = tbuf_get, .clear = tbuf_clear,
};

static const char * tbuft_name(lm_ggml_backend_buffer_type_t buft) { return ((struct tdev *) buft->ctx)->name; }
static size_t tbuft_alignment(lm_ggml_backend_buffer_type_t buft) { (void) buft; return 64; }
static bool tbuft_is_host(lm_ggml_backend_buffer_type_t buft) { (void) buft; return true; }
static lm_ggml_backend_buffer_t tbuft_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    void * mem = aligned_alloc(64, (size + 63) / 64 * 64 + 64);
    if (mem == NULL) { lm_backend_fail("out of memory"); return NULL; }
    lm_ggml_backend_buffer_t b = lm_backend_buffer_new(buft, &tbuf_ops, mem, size);
    if (b == NULL) { free(mem); lm_backend_fail("out of memory"); }
    return b;
}
static const struct lm_backend_buft_ops tbuft_ops = {
    .name = tbuft_name, .alloc = tbuft_alloc, .alignment = tbuft_alignment, .is_host = tbuft_is_host,
};

static const char * tb_name(lm_ggml_backend_t b) { return ((struct tdev *) b->ctx)->name; }
static void tb_free(lm_ggml_backend_t b) { (void) b; }
static enum lm_ggml_status tb_compute(lm_ggml_backend_t b, struct lm_ggml_cgraph * g) {
    ((struct tdev *) b->ctx)->n_compute++;
    return lm_ggml_backend_graph_compute(g_cpu, g);
}
static const struct lm_backend_ops tb_ops = { .name = tb_name, .free = tb_free, .graph_compute = tb_compute };

static struct tdev * of_dev(lm_ggml_backend_dev_t d) { return d->ctx; }
static const char * td_name(lm_ggml_backend_dev_t d) { return of_dev(d)->name; }
static void td_memory(lm_ggml_backend_dev_t d, size_t * f, size_t * t) { (void) d; *f = 0; *t = 0; }
static enum lm_ggml_backend_dev_type td_type(lm_ggml_backend_dev_t d) { (void) d; return LM_GGML_BACKEND_DEVICE_TYPE_GPU; }
static lm_ggml_backend_t td_init(lm_ggml_backend_dev_t d, const char * p) { (void) p; return &of_dev(d)->backend; }
static lm_ggml_backend_buffer_type_t td_buft(lm_ggml_backend_dev_t d) { return &of_dev(d)->buft; }
static bool td_supports_op(lm_ggml_backend_dev_t d, const struct lm_ggml_tensor * op) { return !of_dev(d)->refuse[op->op]; }
static bool td_supports_buft(lm_ggml_backend_dev_t d, lm_ggml_backend_buffer_type_t b) { return b == &of_dev(d)->buft; }
static bool td_offload_op(lm_ggml_backend_dev_t d, const struct lm_ggml_tensor * op) { return of_dev(d)->offload[op->op]; }
static const struct lm_backend_dev_ops td_ops = {
    .name = td_name, .description = td_name, .memory = td_memory, .type = td_type, .init_backend = td_init,
    .buffer_type = td_buft, .supports_op = td_supports_op, .supports_buft = td_supports_buft, .offload_op = td_offload_op,
};

static void tdevs_init(void) {
    for (int i = 0; i < 2; i++) {
        struct tdev * t = &tdevs[i];
        memset(t, 0, sizeof(*t));
        t->name = i == 0 ? "TA" : "TB";
        t->guid[0] = 0x7e;
        t->guid[1] = (uint8_t) i;
        t->buft = (struct lm_ggml_backend_buffer_type) { &tbuft_ops, &t->dev, t };
        t->dev = (struct lm_ggml_backend_device) { &td_ops, NULL, t };
        t->backend = (struct lm_ggml_backend) { &t->guid, &tb_ops, &t->dev, t };
    }
}

static void tdevs_reset(void) {
    for (int i = 0; i < 2; i++) {
        memset(tdevs[i].refuse, 0, sizeof(tdevs[i].refuse));
        memset(tdevs[i].offload, 0, sizeof(tdevs[i].offload));
        tdevs[i].n_set = tdevs[i].n_compute = 0;
    }
}

#define TA (&tdevs[0])
#define TB (&tdevs[1])

// ---------------------------------------------------------------- data

// Value i of the tensor named name: deterministic, in [-1, 1).
static float value(const char * name, int64_t i) {
    uint64_t h = 1469598103934665603ull;
    for (const char * p = name; *p; p++) h = (h ^ (uint8_t) *p) * 1099511628211ull;
    h ^= (uint64_t) i * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31; h *= 0xBF58476D1CE4E5B9ull; h ^= h >> 29;
    return (float) ((h >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}

static void set_bytes(struct lm_ggml_tensor * t, const void * src, size_t n) {
    CHECK(t->data != NULL);
    if (t->data == NULL) return;
    if (t->buffer != NULL) lm_ggml_backend_tensor_set(t, src, 0, n);
    else memcpy(t->data, src, n);
}

static void get_bytes(const struct lm_ggml_tensor * t, void * dst, size_t n) {
    CHECK(t->data != NULL);
    if (t->data == NULL) { memset(dst, 0xff, n); return; }
    if (t->buffer != NULL) lm_ggml_backend_tensor_get(t, dst, 0, n);
    else memcpy(dst, t->data, n);
}

// Fills a tensor by its name (f32, f16 or i32 positions 0..n-1).
static void fill(struct lm_ggml_tensor * t) {
    const int64_t n = lm_ggml_nelements(t);
    void * buf = malloc(lm_ggml_nbytes(t));
    for (int64_t i = 0; i < n; i++) {
        switch (t->type) {
            case LM_GGML_TYPE_F32: ((float *) buf)[i] = value(t->name, i); break;
            case LM_GGML_TYPE_F16: ((lm_ggml_fp16_t *) buf)[i] = lm_ggml_fp32_to_fp16(value(t->name, i)); break;
            case LM_GGML_TYPE_I32: ((int32_t *) buf)[i] = (int32_t) i; break;
            default: break;
        }
    }
    set_bytes(t, buf, lm_ggml_nbytes(t));
    free(buf);
}

// A causal mask [T, T]: 0 on and below the diagonal, -inf above.
static void fill_mask(struct lm_ggml_tensor * t) {
    const int64_t T = t->ne[0];
    float * m = malloc(lm_ggml_nbytes(t));
    for (int64_t i = 0; i < T; i++)
        for (int64_t j = 0; j < T; j++) m[i * T + j] = j <= i ? 0.0f : -INFINITY;
    set_bytes(t, m, lm_ggml_nbytes(t));
    free(m);
}

static bool same_bits(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b) {
    const size_t n = lm_ggml_nbytes(a);
    if (n != lm_ggml_nbytes(b)) return false;
    void * x = malloc(n), * y = malloc(n);
    get_bytes(a, x, n);
    get_bytes(b, y, n);
    const bool ok = memcmp(x, y, n) == 0;
    free(x); free(y);
    return ok;
}

// ---------------------------------------------------------------- models

// Weights of two groups (A and B: each group in its own buffer in the
// scheduled runs) and the inputs.
struct model {
    int kind; // 0: MLP, 1: llama-shaped block
    struct lm_ggml_tensor * w[8];
    int n_w;
};

enum { MLP_K = 32, MLP_H = 48, MLP_O = 16, MLP_B = 5 };
enum { L_EMBD = 64, L_HEAD = 4, L_HD = 16, L_FF = 96, L_T = 7 };

static struct lm_ggml_tensor * weight(struct lm_ggml_context * ctx, const char * name, enum lm_ggml_type type, int64_t n0, int64_t n1) {
    struct lm_ggml_tensor * t = n1 > 0 ? lm_ggml_new_tensor_2d(ctx, type, n0, n1) : lm_ggml_new_tensor_1d(ctx, type, n0);
    lm_ggml_set_name(t, name);
    return t;
}

// Group A weights in ctx_a, group B in ctx_b.
static void model_init(struct model * m, int kind, struct lm_ggml_context * ctx_a, struct lm_ggml_context * ctx_b) {
    m->kind = kind;
    if (kind == 0) {
        m->w[0] = weight(ctx_a, "w1", LM_GGML_TYPE_F32, MLP_K, MLP_H);
        m->w[1] = weight(ctx_a, "b1", LM_GGML_TYPE_F32, MLP_H, 0);
        m->w[2] = weight(ctx_b, "w2", LM_GGML_TYPE_F16, MLP_H, MLP_H);
        m->w[3] = weight(ctx_a, "w3", LM_GGML_TYPE_F32, MLP_H, MLP_O);
        m->n_w = 4;
    } else {
        m->w[0] = weight(ctx_a, "attn_norm", LM_GGML_TYPE_F32, L_EMBD, 0);
        m->w[1] = weight(ctx_a, "wq", LM_GGML_TYPE_F32, L_EMBD, L_EMBD);
        m->w[2] = weight(ctx_a, "wk", LM_GGML_TYPE_F16, L_EMBD, L_EMBD);
        m->w[3] = weight(ctx_a, "wv", LM_GGML_TYPE_F32, L_EMBD, L_EMBD);
        m->w[4] = weight(ctx_a, "wo", LM_GGML_TYPE_F32, L_EMBD, L_EMBD);
        m->w[5] = weight(ctx_b, "ffn_norm", LM_GGML_TYPE_F32, L_EMBD, 0);
        m->w[6] = weight(ctx_b, "w_gate_up", LM_GGML_TYPE_F32, L_EMBD, 2 * L_FF);
        m->w[7] = weight(ctx_b, "w_down", LM_GGML_TYPE_F16, L_FF, L_EMBD);
        m->n_w = 8;
    }
}

static void model_fill(struct model * m) {
    for (int i = 0; i < m->n_w; i++) fill(m->w[i]);
}

static struct lm_ggml_tensor * named(struct lm_ggml_tensor * t, const char * name) {
    lm_ggml_set_name(t, name);
    return t;
}

// The forward graph; *second_half is the first node of the part that the
// two-CPU runs pin to backend 1.
struct built {
    struct lm_ggml_cgraph * g;
    struct lm_ggml_tensor * inputs[3];
    int n_inputs;
    struct lm_ggml_tensor * out;
    int second_half; // index in g->nodes
};

static struct built model_build(const struct model * m, struct lm_ggml_context * ctx, size_t graph_size) {
    struct built b = { 0 };
    b.g = lm_ggml_new_graph_custom(ctx, graph_size, false);
    if (m->kind == 0) {
        struct lm_ggml_tensor * x = named(lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, MLP_K, MLP_B), "x");
        lm_ggml_set_input(x);
        b.inputs[b.n_inputs++] = x;
        struct lm_ggml_tensor * h = named(lm_ggml_mul_mat(ctx, m->w[0], x), "h1_mm");
        h = named(lm_ggml_relu(ctx, named(lm_ggml_add(ctx, h, m->w[1]), "h1_add")), "h1");
        lm_ggml_build_forward_expand(b.g, h);
        b.second_half = b.g->n_nodes;
        h = named(lm_ggml_silu(ctx, named(lm_ggml_mul_mat(ctx, m->w[2], h), "h2_mm")), "h2");
        h = named(lm_ggml_scale(ctx, h, 0.5f), "h2_scaled");
        lm_ggml_build_forward_expand(b.g, h);
        const int end_b = b.g->n_nodes;
        b.out = named(lm_ggml_soft_max(ctx, named(lm_ggml_mul_mat(ctx, m->w[3], h), "y_mm")), "y");
        lm_ggml_set_output(b.out);
        lm_ggml_build_forward_expand(b.g, b.out);
        (void) end_b;
        return b;
    }
    struct lm_ggml_tensor * inp = named(lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, L_EMBD, L_T), "inp");
    struct lm_ggml_tensor * pos = named(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, L_T), "pos");
    struct lm_ggml_tensor * mask = named(lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, L_T, L_T), "mask");
    lm_ggml_set_input(inp); lm_ggml_set_input(pos); lm_ggml_set_input(mask);
    b.inputs[0] = inp; b.inputs[1] = pos; b.inputs[2] = mask; b.n_inputs = 3;

    struct lm_ggml_tensor * cur = named(lm_ggml_mul(ctx, named(lm_ggml_rms_norm(ctx, inp, 1e-5f), "attn_rms"), m->w[0]), "attn_in");
    struct lm_ggml_tensor * q = lm_ggml_reshape_3d(ctx, named(lm_ggml_mul_mat(ctx, m->w[1], cur), "q"), L_HD, L_HEAD, L_T);
    struct lm_ggml_tensor * k = lm_ggml_reshape_3d(ctx, named(lm_ggml_mul_mat(ctx, m->w[2], cur), "k"), L_HD, L_HEAD, L_T);
    struct lm_ggml_tensor * v = lm_ggml_reshape_3d(ctx, named(lm_ggml_mul_mat(ctx, m->w[3], cur), "v"), L_HD, L_HEAD, L_T);
    q = named(lm_ggml_rope_ext(ctx, q, pos, NULL, L_HD, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f), "q_rope");
    k = named(lm_ggml_rope_ext(ctx, k, pos, NULL, L_HD, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f), "k_rope");
    q = lm_ggml_permute(ctx, q, 0, 2, 1, 3);
    k = lm_ggml_permute(ctx, k, 0, 2, 1, 3);
    struct lm_ggml_tensor * kq = named(lm_ggml_mul_mat(ctx, k, q), "kq");
    kq = named(lm_ggml_soft_max_ext(ctx, kq, mask, 1.0f / sqrtf((float) L_HD), 0.0f), "kq_soft");
    struct lm_ggml_tensor * vt = named(lm_ggml_cont(ctx, lm_ggml_permute(ctx, v, 1, 2, 0, 3)), "vt");
    struct lm_ggml_tensor * kqv = named(lm_ggml_mul_mat(ctx, vt, kq), "kqv");
    kqv = named(lm_ggml_cont_2d(ctx, lm_ggml_permute(ctx, kqv, 0, 2, 1, 3), L_EMBD, L_T), "kqv_merged");
    struct lm_ggml_tensor * h = named(lm_ggml_add(ctx, named(lm_ggml_mul_mat(ctx, m->w[4], kqv), "attn_out"), inp), "h");
    lm_ggml_build_forward_expand(b.g, h);
    b.second_half = b.g->n_nodes;

    cur = named(lm_ggml_mul(ctx, named(lm_ggml_rms_norm(ctx, h, 1e-5f), "ffn_rms"), m->w[5]), "ffn_in");
    struct lm_ggml_tensor * gu = named(lm_ggml_mul_mat(ctx, m->w[6], cur), "gate_up");
    struct lm_ggml_tensor * gate = lm_ggml_view_2d(ctx, gu, L_FF, L_T, gu->nb[1], 0);
    struct lm_ggml_tensor * up = lm_ggml_view_2d(ctx, gu, L_FF, L_T, gu->nb[1], L_FF * sizeof(float));
    struct lm_ggml_tensor * act = named(lm_ggml_mul(ctx, named(lm_ggml_silu(ctx, gate), "gate_silu"), up), "ffn_act");
    b.out = named(lm_ggml_add(ctx, named(lm_ggml_mul_mat(ctx, m->w[7], act), "ffn_out"), h), "out");
    lm_ggml_set_output(b.out);
    lm_ggml_build_forward_expand(b.g, b.out);
    return b;
}

static void fill_inputs(const struct built * b) {
    for (int i = 0; i < b->n_inputs; i++) {
        if (strcmp(b->inputs[i]->name, "mask") == 0) fill_mask(b->inputs[i]);
        else fill(b->inputs[i]);
    }
}

// The reference: the same graph in one allocating context, computed directly.
struct direct {
    struct lm_ggml_context * ctx;
    struct model m;
    struct built b;
};

static void direct_run(struct direct * d, int kind) {
    struct lm_ggml_init_params ip = { 32 << 20, NULL, false };
    d->ctx = lm_ggml_init(ip);
    model_init(&d->m, kind, d->ctx, d->ctx);
    model_fill(&d->m);
    d->b = model_build(&d->m, d->ctx, 512);
    fill_inputs(&d->b);
    CHECK(lm_ggml_graph_compute_with_ctx(d->ctx, d->b.g, 1) == LM_GGML_STATUS_SUCCESS);
}

// The scheduled side: weights of group A in a buffer of buft_a, group B in
// buft_b (both USAGE_WEIGHTS), the graph in a no_alloc context.
struct sched_side {
    struct lm_ggml_context * wa, * wb, * ctx;
    lm_ggml_backend_buffer_t ba, bb;
    struct model m;
    struct built b;
};

static void side_init(struct sched_side * s, int kind, lm_ggml_backend_buffer_type_t buft_a, lm_ggml_backend_buffer_type_t buft_b) {
    struct lm_ggml_init_params wp = { 16 * lm_ggml_tensor_overhead(), NULL, true };
    s->wa = lm_ggml_init(wp);
    s->wb = lm_ggml_init(wp);
    model_init(&s->m, kind, s->wa, s->wb);
    s->ba = lm_ggml_backend_alloc_ctx_tensors_from_buft(s->wa, buft_a);
    s->bb = lm_ggml_backend_alloc_ctx_tensors_from_buft(s->wb, buft_b);
    lm_ggml_backend_buffer_set_usage(s->ba, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    lm_ggml_backend_buffer_set_usage(s->bb, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    model_fill(&s->m);
    s->ctx = NULL;
}

// A fresh graph of the side's model (the previous one is freed).
static void side_build(struct sched_side * s, size_t graph_size) {
    lm_ggml_free(s->ctx);
    struct lm_ggml_init_params ip = { 256 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead_custom(graph_size, false), NULL, true };
    s->ctx = lm_ggml_init(ip);
    s->b = model_build(&s->m, s->ctx, graph_size);
}

static void side_free(struct sched_side * s) {
    lm_ggml_free(s->ctx);
    lm_ggml_free(s->wa);
    lm_ggml_free(s->wb);
    lm_ggml_backend_buffer_free(s->ba);
    lm_ggml_backend_buffer_free(s->bb);
}

// Every node of the scheduled graph equal to the direct one of that name
// (views excepted: their memory may have been reused by then); the output
// always.
static int compare_nodes(const struct built * got, const struct built * want, bool all) {
    int bad = 0;
    for (int i = 0; i < got->g->n_nodes && all; i++) {
        struct lm_ggml_tensor * t = got->g->nodes[i];
        if ((t->flags & LM_GGML_TENSOR_FLAG_OUTPUT) == 0) continue;
        struct lm_ggml_tensor * r = lm_ggml_graph_get_tensor(want->g, t->name);
        if (r == NULL || !same_bits(t, r)) { printf("  node %s differs\n", t->name); bad++; }
    }
    if (!same_bits(got->out, want->out)) { printf("  output %s differs\n", got->out->name); bad++; }
    return bad;
}

// Sources of the user's graph are left as they were (no redirection to
// the scheduler's copies survives a call).
static bool sources_untouched(const struct built * b, struct lm_ggml_context * ctx, struct lm_ggml_context * wa, struct lm_ggml_context * wb) {
    for (int i = 0; i < b->g->n_nodes; i++) {
        struct lm_ggml_tensor * n = b->g->nodes[i];
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            struct lm_ggml_tensor * s = n->src[j];
            if (s == NULL) continue;
            bool found = false;
            struct lm_ggml_context * cs[3] = { ctx, wa, wb };
            for (int c = 0; c < 3 && !found; c++)
                for (struct lm_ggml_tensor * t = lm_ggml_get_first_tensor(cs[c]); t && !found; t = lm_ggml_get_next_tensor(cs[c], t))
                    found = t == s;
            if (!found) return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------- tests

// Two CPU backends: the second half of the graph pinned to backend 1.
static void test_two_cpu(int kind) {
    struct direct d;
    direct_run(&d, kind);

    lm_ggml_backend_t be[2] = { lm_ggml_backend_cpu_init(), lm_ggml_backend_cpu_init() };
    lm_ggml_backend_sched_t s = lm_ggml_backend_sched_new(be, NULL, 2, 512, false);
    CHECK(s != NULL);
    CHECK(lm_ggml_backend_sched_get_n_backends(s) == 2);
    CHECK(lm_ggml_backend_sched_get_backend(s, 1) == be[1]);
    CHECK(lm_ggml_backend_sched_get_n_copies(s) == 1);

    struct sched_side side;
    side_init(&side, kind, lm_ggml_backend_cpu_buffer_type(), lm_ggml_backend_cpu_buffer_type());
    side_build(&side, 512);

    // unpinned: one CPU backend does it all (backend 0, the first that can)
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    CHECK(lm_ggml_backend_sched_get_n_splits(s) == 1);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, side.b.out) == be[0]);
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);

    // the second half pinned to backend 1: two splits, same bits
    lm_ggml_backend_sched_reset(s);
    side_build(&side, 512);
    int pinned = 0;
    for (int i = side.b.second_half; i < side.b.g->n_nodes; i++) {
        lm_ggml_backend_sched_set_tensor_backend(s, side.b.g->nodes[i], be[1]);
        pinned++;
    }
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, side.b.out) == be[1]);
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    CHECK(lm_ggml_backend_sched_get_n_splits(s) == 2);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, side.b.g->nodes[0]) == be[0]);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, side.b.out) == be[1]);
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    CHECK(sources_untouched(&side.b, side.ctx, side.wa, side.wb));
    // computing the same allocated graph again: same result, same splits
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    CHECK(lm_ggml_backend_sched_get_n_splits(s) == 2);
    // one compute buffer: backends of one buffer type share it (counted
    // for the first, as the reference does)
    CHECK(lm_ggml_backend_sched_get_buffer_size(s, be[0]) > 0);
    CHECK(lm_ggml_backend_sched_get_buffer_size(s, be[1]) == 0);

    // alternating pins: one split per pinned run
    lm_ggml_backend_sched_reset(s);
    side_build(&side, 512);
    int runs = 0, prev = -1;
    for (int i = 0; i < side.b.g->n_nodes; i++) {
        struct lm_ggml_tensor * n = side.b.g->nodes[i];
        if (n->op == LM_GGML_OP_VIEW || n->op == LM_GGML_OP_RESHAPE || n->op == LM_GGML_OP_PERMUTE || n->op == LM_GGML_OP_TRANSPOSE) continue;
        const int b = (i / 3) % 2;
        lm_ggml_backend_sched_set_tensor_backend(s, n, be[b]);
        if (b != prev) { runs++; prev = b; }
    }
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(lm_ggml_backend_sched_get_n_splits(s) == runs);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    printf("two CPU backends, %s: %d splits with the second half pinned, %d alternating (%d pins)\n",
           kind == 0 ? "MLP" : "llama block", 2, runs, pinned);

    lm_ggml_backend_sched_free(s);
    side_free(&side);
    lm_ggml_backend_free(be[0]);
    lm_ggml_backend_free(be[1]);
    lm_ggml_free(d.ctx);
}

// TA + TB + CPU: group A weights on TA, group B on TB; the inputs (host
// memory, the CPU's) and the intermediate results between TA and TB copied.
static void test_copies(int kind) {
    struct direct d;
    direct_run(&d, kind);
    tdevs_reset();
    const char * a_node = kind == 0 ? "h1_mm" : "q";         // reads group A weights
    const char * b_node = kind == 0 ? "h2_mm" : "gate_up";   // reads group B weights

    lm_ggml_backend_t be[3] = { &TA->backend, &TB->backend, g_cpu };
    lm_ggml_backend_sched_t s = lm_ggml_backend_sched_new(be, NULL, 3, 512, true);
    CHECK(s != NULL);
    CHECK(lm_ggml_backend_sched_get_n_copies(s) == 1);
    struct sched_side side;
    side_init(&side, kind, &TA->buft, &TB->buft);
    side_build(&side, 512);

    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    const int n_splits = lm_ggml_backend_sched_get_n_splits(s);
    fill_inputs(&side.b);
    tdevs_reset();
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    CHECK(sources_untouched(&side.b, side.ctx, side.wa, side.wb));
    // the weights decide: the MLP is A, B, A; the llama block attention on
    // A, feed-forward on B
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, lm_ggml_graph_get_tensor(side.b.g, a_node)) == be[0]);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, lm_ggml_graph_get_tensor(side.b.g, b_node)) == be[1]);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, side.b.out) == be[kind == 0 ? 0 : 1]);
    CHECK(n_splits == (kind == 0 ? 3 : 2));
    // inputs went to TA, results of TA to TB (and back, for the MLP)
    const int sets_a = TA->n_set, sets_b = TB->n_set;
    CHECK(sets_a >= (kind == 0 ? 2 : 3));
    CHECK(sets_b >= (kind == 0 ? 1 : 2));
    CHECK(TA->n_compute >= 1 && TB->n_compute >= 1);
    CHECK(lm_ggml_backend_sched_get_buffer_size(s, be[0]) > 0);
    CHECK(lm_ggml_backend_sched_get_buffer_size(s, be[1]) > 0);

    // an op TA refuses goes to the backend that reads most of its sources
    // where they are: the CPU (TA's memory is host memory)
    lm_ggml_backend_sched_reset(s);
    side_build(&side, 512);
    const enum lm_ggml_op refused = LM_GGML_OP_SOFT_MAX;
    TA->refuse[refused] = true;
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    const int n_splits_refused = lm_ggml_backend_sched_get_n_splits(s);
    // the MLP's softmax ends the graph (one split more), the block's is in
    // the middle of the attention (two more)
    CHECK(n_splits_refused == n_splits + (kind == 0 ? 1 : 2));
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, lm_ggml_graph_get_tensor(side.b.g, kind == 0 ? "y" : "kq_soft")) == g_cpu);
    TA->refuse[refused] = false;

    // pins win over weights
    lm_ggml_backend_sched_reset(s);
    side_build(&side, 512);
    struct lm_ggml_tensor * pin = lm_ggml_graph_get_tensor(side.b.g, a_node);
    lm_ggml_backend_sched_set_tensor_backend(s, pin, g_cpu);
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, pin) == g_cpu);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    lm_ggml_backend_sched_free(s);
    side_free(&side);

    // TA + CPU, group B weights on the CPU; TA asks for MUL_MAT (offload_op):
    // the matmuls with CPU weights run on TA, the weights copied there
    lm_ggml_backend_t be2[2] = { &TA->backend, g_cpu };
    s = lm_ggml_backend_sched_new(be2, NULL, 2, 512, false);
    side_init(&side, kind, &TA->buft, lm_ggml_backend_cpu_buffer_type());
    side_build(&side, 512);
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, lm_ggml_graph_get_tensor(side.b.g, b_node)) == g_cpu);
    lm_ggml_backend_sched_reset(s);
    side_build(&side, 512);
    TA->offload[LM_GGML_OP_MUL_MAT] = true;
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, lm_ggml_graph_get_tensor(side.b.g, b_node)) == be2[0]);
    TA->offload[LM_GGML_OP_MUL_MAT] = false;

    printf("TA + TB + CPU, %s: %d splits (%d with an op refused), %d + %d writes into TA/TB memory per compute\n",
           kind == 0 ? "MLP" : "llama block", n_splits, n_splits_refused, sets_a, sets_b);
    lm_ggml_backend_sched_free(s);
    side_free(&side);
    lm_ggml_free(d.ctx);
}

// One backend given twice, as ggml's test-opt does (the CPU as main and as
// host backend): accepted, one backend in effect (the first index), same
// bits. Also TA + CPU + CPU: the inputs go to the CPU's first index.
static void test_same_backend_twice(int kind) {
    struct direct d;
    direct_run(&d, kind);

    lm_ggml_backend_t be[2] = { g_cpu, g_cpu };
    lm_ggml_backend_sched_t s = lm_ggml_backend_sched_new(be, NULL, 2, 512, false);
    CHECK(s != NULL);
    CHECK(lm_ggml_backend_sched_get_n_backends(s) == 2);
    CHECK(lm_ggml_backend_sched_get_backend(s, 1) == g_cpu);
    struct sched_side side;
    side_init(&side, kind, lm_ggml_backend_cpu_buffer_type(), lm_ggml_backend_cpu_buffer_type());
    side_build(&side, 512);
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    CHECK(lm_ggml_backend_sched_get_n_splits(s) == 1);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, side.b.out) == g_cpu);
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    CHECK(sources_untouched(&side.b, side.ctx, side.wa, side.wb));
    CHECK(lm_ggml_backend_sched_get_buffer_size(s, g_cpu) > 0);
    // a pin names the backend, not an index: still one split
    lm_ggml_backend_sched_reset(s);
    side_build(&side, 512);
    lm_ggml_backend_sched_set_tensor_backend(s, side.b.g->nodes[side.b.second_half], be[1]);
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    CHECK(lm_ggml_backend_sched_get_n_splits(s) == 1);
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    lm_ggml_backend_sched_free(s);
    side_free(&side);

    // TA + CPU + CPU with group A on TA, B on the CPU: as TA + CPU
    tdevs_reset();
    lm_ggml_backend_t be3[3] = { &TA->backend, g_cpu, g_cpu };
    s = lm_ggml_backend_sched_new(be3, NULL, 3, 512, false);
    CHECK(s != NULL);
    side_init(&side, kind, &TA->buft, lm_ggml_backend_cpu_buffer_type());
    side_build(&side, 512);
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    const int n_splits = lm_ggml_backend_sched_get_n_splits(s);
    fill_inputs(&side.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    CHECK(TA->n_compute >= 1);
    lm_ggml_backend_sched_free(s);
    side_free(&side);
    printf("one backend given twice, %s: 1 split (CPU, CPU), %d splits (TA, CPU, CPU), same bits\n",
           kind == 0 ? "MLP" : "llama block", n_splits);
    lm_ggml_free(d.ctx);
}

// ---------------------------------------------------------------- eval callback

struct eval_state {
    const struct built * want;
    int asked, seen, stop_after, bad;
    char names[64][LM_GGML_MAX_NAME];
};

static bool eval_cb(struct lm_ggml_tensor * t, bool ask, void * ud) {
    struct eval_state * e = ud;
    if (ask) {
        e->asked++;
        return t->op == LM_GGML_OP_MUL_MAT || t->op == LM_GGML_OP_SOFT_MAX;
    }
    // the node is computed when we see it
    struct lm_ggml_tensor * r = lm_ggml_graph_get_tensor(e->want->g, t->name);
    if (r == NULL || !same_bits(t, r)) e->bad++;
    if (e->seen < 64) snprintf(e->names[e->seen], LM_GGML_MAX_NAME, "%s", t->name);
    e->seen++;
    return e->stop_after <= 0 || e->seen < e->stop_after;
}

static void test_eval_callback(void) {
    struct direct d;
    direct_run(&d, 1);
    tdevs_reset();
    lm_ggml_backend_t be[2] = { &TA->backend, g_cpu };
    lm_ggml_backend_sched_t s = lm_ggml_backend_sched_new(be, NULL, 2, 512, false);
    struct sched_side side;
    side_init(&side, 1, &TA->buft, lm_ggml_backend_cpu_buffer_type());
    side_build(&side, 512);

    int expect = 0;
    const char * first = NULL;
    for (int i = 0; i < side.b.g->n_nodes; i++) {
        const enum lm_ggml_op op = side.b.g->nodes[i]->op;
        if (op == LM_GGML_OP_MUL_MAT || op == LM_GGML_OP_SOFT_MAX) {
            if (expect++ == 0) first = side.b.g->nodes[i]->name;
        }
    }
    struct eval_state e = { .want = &d.b };
    lm_ggml_backend_sched_set_eval_callback(s, eval_cb, &e);
    CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
    fill_inputs(&side.b);
    TA->n_compute = 0;
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(e.seen == expect);
    CHECK(e.bad == 0);
    CHECK(e.asked == side.b.g->n_nodes);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    CHECK(first != NULL && strcmp(e.names[0], first) == 0);
    // the graph was cut after each node seen (on TEST: the attention's)
    CHECK(TA->n_compute >= 6);

    // false stops the compute: nothing more is asked or computed
    struct eval_state e2 = { .want = &d.b, .stop_after = 3 };
    lm_ggml_backend_sched_set_eval_callback(s, eval_cb, &e2);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(e2.seen == 3);
    CHECK(e2.bad == 0);
    CHECK(e2.asked < side.b.g->n_nodes);

    lm_ggml_backend_sched_set_eval_callback(s, NULL, NULL);
    CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(compare_nodes(&side.b, &d.b, false) == 0);
    printf("eval callback: %d of %d nodes observed, computed in %d pieces; stopped after 3 when asked\n", e.seen, side.b.g->n_nodes, TA->n_compute);

    lm_ggml_backend_sched_free(s);
    side_free(&side);
    lm_ggml_free(d.ctx);
}

// ---------------------------------------------------------------- reserve, reuse, overhead

static void test_reserve_reuse(void) {
    struct direct d;
    direct_run(&d, 1);
    tdevs_reset();
    lm_ggml_backend_t be[2] = { &TA->backend, g_cpu };
    lm_ggml_backend_sched_t s = lm_ggml_backend_sched_new(be, NULL, 2, 512, false);
    struct sched_side side;
    side_init(&side, 1, &TA->buft, lm_ggml_backend_cpu_buffer_type());

    side_build(&side, 512);
    CHECK(lm_ggml_backend_sched_reserve(s, side.b.g));
    const size_t size0 = lm_ggml_backend_sched_get_buffer_size(s, be[0]);
    const size_t size1 = lm_ggml_backend_sched_get_buffer_size(s, be[1]);
    CHECK(size0 > 0 && size1 > 0);
    CHECK(lm_ggml_backend_sched_get_n_splits(s) == 2);
    // reserving computes nothing and leaves the graph unallocated
    CHECK(side.b.out->data == NULL);
    CHECK(TA->n_compute == 0);

    void * out_addr = NULL;
    for (int it = 0; it < 5; it++) {
        lm_ggml_backend_sched_reset(s);
        side_build(&side, 512);
        CHECK(lm_ggml_backend_sched_alloc_graph(s, side.b.g));
        fill_inputs(&side.b);
        CHECK(lm_ggml_backend_sched_graph_compute(s, side.b.g) == LM_GGML_STATUS_SUCCESS);
        CHECK(compare_nodes(&side.b, &d.b, false) == 0);
        // same buffers, same places: nothing was reallocated
        CHECK(lm_ggml_backend_sched_get_buffer_size(s, be[0]) == size0);
        CHECK(lm_ggml_backend_sched_get_buffer_size(s, be[1]) == size1);
        if (it == 0) out_addr = side.b.out->data;
        CHECK(side.b.out->data == out_addr);
    }

    // Overhead per graph, on one CPU backend with one thread (the kernels
    // are the same either way): the llama block
    //  - computed: directly on the backend (placed once by gallocr) and
    //    through the scheduler as allocated (no new split);
    //  - placed: a new graph by gallocr, and by the scheduler (reset,
    //    assign, split, plan, place).
    // Each call is timed alone and the fastest of N kept: the machine may
    // be busy, and the fastest run is the one nothing else disturbed.
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    lm_ggml_backend_cpu_set_n_threads(cpu, 1);
    const int N = 200;
    double t_direct = 1e30, t_same = 1e30, t_galloc = 1e30, t_sched = 1e30, t0;
    {
        struct sched_side one;
        side_init(&one, 1, lm_ggml_backend_cpu_buffer_type(), lm_ggml_backend_cpu_buffer_type());
        lm_ggml_backend_sched_t s1 = lm_ggml_backend_sched_new(&cpu, NULL, 1, 512, false);
        lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
        side_build(&one, 512);
        CHECK(lm_ggml_gallocr_alloc_graph(ga, one.b.g));
        fill_inputs(&one.b);
        for (int i = 0; i < N; i++) {
            t0 = now_us();
            lm_ggml_backend_graph_compute(cpu, one.b.g);
            t_direct = fmin(t_direct, now_us() - t0);
        }
        side_build(&one, 512);
        CHECK(lm_ggml_backend_sched_alloc_graph(s1, one.b.g));
        fill_inputs(&one.b);
        for (int i = 0; i < N; i++) {
            t0 = now_us();
            lm_ggml_backend_sched_graph_compute(s1, one.b.g);
            t_same = fmin(t_same, now_us() - t0);
        }
        for (int i = 0; i < N; i++) {
            side_build(&one, 512);
            t0 = now_us();
            lm_ggml_gallocr_alloc_graph(ga, one.b.g);
            t_galloc = fmin(t_galloc, now_us() - t0);
        }
        for (int i = 0; i < N; i++) {
            side_build(&one, 512);
            t0 = now_us();
            lm_ggml_backend_sched_reset(s1);
            lm_ggml_backend_sched_alloc_graph(s1, one.b.g);
            t_sched = fmin(t_sched, now_us() - t0);
        }
        lm_ggml_gallocr_free(ga);
        lm_ggml_backend_sched_free(s1);
        side_free(&one);
    }
    lm_ggml_backend_free(cpu);
    printf("reserve: TA %zu B, CPU %zu B, kept by 5 graphs\n", size0, size1);
    printf("llama block (%d nodes), one CPU thread: compute direct %.1f us, scheduler %.1f us; "
           "placing a new graph: gallocr %.1f us, scheduler %.1f us\n",
           d.b.g->n_nodes, t_direct, t_same, t_galloc, t_sched);

    lm_ggml_backend_sched_free(s);
    side_free(&side);
    lm_ggml_free(d.ctx);
}

// A graph allocated earlier is placed afresh when computed again after
// another graph (its tensors still point into the compute buffers, where the
// other graph now lives): the llama block, the MLP, the block again, the MLP
// again, in buffers of one size. (After buffers grew, a graph placed in the
// old ones must be built again, as with the reference: its memory is gone.)
static void test_replace(void) {
    struct direct dm, dl;
    direct_run(&dm, 0);
    direct_run(&dl, 1);
    tdevs_reset();
    lm_ggml_backend_t be[2] = { &TA->backend, g_cpu };
    lm_ggml_backend_sched_t s = lm_ggml_backend_sched_new(be, NULL, 2, 512, false);
    struct sched_side mlp, blk;
    side_init(&mlp, 0, &TA->buft, lm_ggml_backend_cpu_buffer_type());
    side_init(&blk, 1, &TA->buft, lm_ggml_backend_cpu_buffer_type());
    side_build(&mlp, 512);
    side_build(&blk, 512);

    size_t size[2] = { 0, 0 };
    for (int round = 0; round < 4; round++) {
        struct sched_side * sd = round % 2 == 0 ? &blk : &mlp;
        struct direct * want = round % 2 == 0 ? &dl : &dm;
        CHECK(lm_ggml_backend_sched_alloc_graph(s, sd->b.g));
        fill_inputs(&sd->b);
        CHECK(lm_ggml_backend_sched_graph_compute(s, sd->b.g) == LM_GGML_STATUS_SUCCESS);
        CHECK(compare_nodes(&sd->b, &want->b, false) == 0);
        for (int b = 0; b < 2; b++) {
            const size_t n = lm_ggml_backend_sched_get_buffer_size(s, be[b]);
            CHECK(round == 0 || n == size[b]);
            size[b] = n;
        }
    }

    // a graph extended after it was computed is placed afresh as a whole:
    // its first nodes must not keep their old addresses, which the new
    // nodes' plan would overlap, or which the buffers, grown for the new
    // nodes, no longer hold
    struct lm_ggml_tensor * tmpl = lm_ggml_new_tensor_2d(blk.ctx, LM_GGML_TYPE_F32, L_EMBD, L_T * 64);
    struct lm_ggml_tensor * more = lm_ggml_repeat(blk.ctx, lm_ggml_silu(blk.ctx, blk.b.out), tmpl);
    lm_ggml_build_forward_expand(blk.b.g, more);
    struct lm_ggml_tensor * tmpl_d = lm_ggml_new_tensor_2d(dl.ctx, LM_GGML_TYPE_F32, L_EMBD, L_T * 64);
    struct lm_ggml_tensor * want_more = lm_ggml_repeat(dl.ctx, lm_ggml_silu(dl.ctx, dl.b.out), tmpl_d);
    struct lm_ggml_cgraph * gm = lm_ggml_new_graph(dl.ctx);
    lm_ggml_build_forward_expand(gm, want_more);
    CHECK(lm_ggml_graph_compute_with_ctx(dl.ctx, gm, 1) == LM_GGML_STATUS_SUCCESS);
    CHECK(lm_ggml_backend_sched_alloc_graph(s, blk.b.g));
    fill_inputs(&blk.b);
    CHECK(lm_ggml_backend_sched_graph_compute(s, blk.b.g) == LM_GGML_STATUS_SUCCESS);
    CHECK(same_bits(more, want_more));
    CHECK(lm_ggml_backend_sched_get_buffer_size(s, be[1]) > size[1]);
    printf("re-placing: llama block, MLP, block, MLP in the same buffers (%zu + %zu B), then the block extended: identical\n",
           size[0], size[1]);

    lm_ggml_backend_sched_free(s);
    side_free(&mlp);
    side_free(&blk);
    lm_ggml_free(dm.ctx);
    lm_ggml_free(dl.ctx);
}

// ---------------------------------------------------------------- graph copy, compare

struct cmp_state { int n, bad; };

static bool cmp_cb(int i, struct lm_ggml_tensor * t1, struct lm_ggml_tensor * t2, void * ud) {
    struct cmp_state * c = ud;
    (void) i;
    c->n++;
    if (!same_bits(t1, t2)) c->bad++;
    return true;
}

static bool cmp_stop_cb(int i, struct lm_ggml_tensor * t1, struct lm_ggml_tensor * t2, void * ud) {
    (void) i; (void) t1; (void) t2;
    return ++((struct cmp_state *) ud)->n < 2;
}

static void test_graph_copy(void) {
    struct direct d;
    direct_run(&d, 1);
    tdevs_reset();
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    lm_ggml_backend_t ta = &TA->backend;

    // the graph on the CPU backend: weights in a buffer, nodes by gallocr
    struct sched_side side;
    side_init(&side, 1, lm_ggml_backend_cpu_buffer_type(), lm_ggml_backend_cpu_buffer_type());
    side_build(&side, 512);
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    CHECK(lm_ggml_gallocr_alloc_graph(ga, side.b.g));
    fill_inputs(&side.b);

    // a copy on TA holds the same data; computed there it gives the same bits
    struct lm_ggml_backend_graph_copy c = lm_ggml_backend_graph_copy(ta, side.b.g);
    CHECK(c.graph != NULL && c.buffer != NULL && c.ctx_allocated != NULL && c.ctx_unallocated != NULL);
    if (c.graph != NULL) {
        CHECK(c.graph->n_nodes == side.b.g->n_nodes);
        CHECK(lm_ggml_backend_buffer_get_type(c.buffer) == &TA->buft);
        CHECK(lm_ggml_backend_graph_compute(ta, c.graph) == LM_GGML_STATUS_SUCCESS);
        struct lm_ggml_tensor * out = lm_ggml_graph_get_tensor(c.graph, "out");
        CHECK(out != NULL && same_bits(out, d.b.out));
        lm_ggml_backend_graph_copy_free(c);
    }

    // node by node on the CPU and on TA: every pair identical
    struct cmp_state cs = { 0 };
    CHECK(lm_ggml_backend_compare_graph_backend(cpu, ta, side.b.g, cmp_cb, &cs));
    int computing = 0;
    for (int i = 0; i < side.b.g->n_nodes; i++) {
        const enum lm_ggml_op op = side.b.g->nodes[i]->op;
        computing += !(op == LM_GGML_OP_VIEW || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_PERMUTE || op == LM_GGML_OP_TRANSPOSE);
    }
    CHECK(cs.n == computing);
    CHECK(cs.bad == 0);
    CHECK(same_bits(side.b.out, d.b.out));
    struct cmp_state stop = { 0 };
    CHECK(lm_ggml_backend_compare_graph_backend(cpu, ta, side.b.g, cmp_stop_cb, &stop));
    CHECK(stop.n == 2);

    // errors: an unallocated graph, NULL arguments
    side_build(&side, 512);
    c = lm_ggml_backend_graph_copy(cpu, side.b.g);
    CHECK(c.graph == NULL && c.buffer == NULL && c.ctx_allocated == NULL);
    c = lm_ggml_backend_graph_copy(NULL, side.b.g);
    CHECK(c.graph == NULL);
    c = lm_ggml_backend_graph_copy(cpu, NULL);
    CHECK(c.graph == NULL);
    lm_ggml_backend_graph_copy_free(c);
    CHECK(!lm_ggml_backend_compare_graph_backend(cpu, ta, side.b.g, cmp_cb, &cs));
    CHECK(!lm_ggml_backend_compare_graph_backend(cpu, ta, d.b.g, NULL, NULL));
    CHECK(!lm_ggml_backend_compare_graph_backend(NULL, ta, d.b.g, cmp_cb, &cs));
    printf("graph copy: %d nodes compared between the CPU and TA, all identical\n", cs.n);

    lm_ggml_gallocr_free(ga);
    side_free(&side);
    lm_ggml_backend_free(cpu);
    lm_ggml_free(d.ctx);
}

// ---------------------------------------------------------------- errors

static void test_errors(void) {
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    lm_ggml_backend_t be[17];
    for (int i = 0; i < 17; i++) be[i] = cpu;

    CHECK(lm_ggml_backend_sched_new(NULL, NULL, 1, 64, false) == NULL);
    CHECK(lm_ggml_backend_sched_new(be, NULL, 0, 64, false) == NULL);
    CHECK(lm_ggml_backend_sched_new(be, NULL, -1, 64, false) == NULL);
    CHECK(lm_ggml_backend_sched_new(be, NULL, 17, 64, false) == NULL);
    CHECK(lm_ggml_backend_sched_new(be, NULL, 1, 0, false) == NULL);
    lm_ggml_backend_t with_null[2] = { cpu, NULL };
    CHECK(lm_ggml_backend_sched_new(with_null, NULL, 2, 64, false) == NULL);
    lm_ggml_backend_t tb_only[1] = { &TB->backend };
    lm_ggml_backend_buffer_type_t wrong[1] = { &TA->buft }; // TB cannot use TA memory
    CHECK(lm_ggml_backend_sched_new(tb_only, wrong, 1, 64, false) == NULL);

    // NULL scheduler: nothing happens, nothing crashes
    lm_ggml_backend_sched_free(NULL);
    lm_ggml_backend_sched_reset(NULL);
    lm_ggml_backend_sched_synchronize(NULL);
    lm_ggml_backend_sched_set_eval_callback(NULL, NULL, NULL);
    lm_ggml_backend_sched_set_tensor_backend(NULL, NULL, cpu);
    CHECK(!lm_ggml_backend_sched_reserve(NULL, NULL));
    CHECK(!lm_ggml_backend_sched_alloc_graph(NULL, NULL));
    CHECK(lm_ggml_backend_sched_graph_compute(NULL, NULL) != LM_GGML_STATUS_SUCCESS);
    CHECK(lm_ggml_backend_sched_get_n_splits(NULL) == 0);
    CHECK(lm_ggml_backend_sched_get_n_backends(NULL) == 0);
    CHECK(lm_ggml_backend_sched_get_backend(NULL, 0) == NULL);
    CHECK(lm_ggml_backend_sched_get_buffer_size(NULL, cpu) == 0);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(NULL, NULL) == NULL);

    lm_ggml_backend_sched_t s = lm_ggml_backend_sched_new(be, NULL, 1, 16, false);
    CHECK(s != NULL);
    CHECK(!lm_ggml_backend_sched_reserve(s, NULL));
    CHECK(!lm_ggml_backend_sched_alloc_graph(s, NULL));
    CHECK(lm_ggml_backend_sched_graph_compute(s, NULL) == LM_GGML_STATUS_FAILED);
    CHECK(lm_ggml_backend_sched_get_backend(s, -1) == NULL);
    CHECK(lm_ggml_backend_sched_get_backend(s, 1) == NULL);
    CHECK(lm_ggml_backend_sched_get_buffer_size(s, &TA->backend) == 0);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, NULL) == NULL);

    // a graph larger than graph_size (16, i.e. 17 tensors)
    struct lm_ggml_init_params ip = { 128 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead_custom(64, false), NULL, true };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
    struct lm_ggml_tensor * y = x;
    for (int i = 0; i < 40; i++) y = lm_ggml_add(ctx, y, x);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx, 64, false);
    lm_ggml_build_forward_expand(g, y);
    CHECK(!lm_ggml_backend_sched_reserve(s, g));
    CHECK(!lm_ggml_backend_sched_alloc_graph(s, g));
    CHECK(lm_ggml_backend_sched_graph_compute(s, g) == LM_GGML_STATUS_ALLOC_FAILED);
    CHECK(lm_ggml_backend_sched_get_n_splits(s) == 0);

    // a foreign backend is refused by set_tensor_backend
    lm_ggml_backend_sched_set_tensor_backend(s, y, &TA->backend);
    CHECK(lm_ggml_backend_sched_get_tensor_backend(s, y) == NULL);

    // a weight in memory no backend of the scheduler can use (TA's, for TB)
    lm_ggml_backend_sched_t s2 = lm_ggml_backend_sched_new(tb_only, NULL, 1, 64, false);
    struct lm_ggml_context * wctx = lm_ggml_init((struct lm_ggml_init_params) { 4 * lm_ggml_tensor_overhead(), NULL, true });
    struct lm_ggml_tensor * w = lm_ggml_new_tensor_1d(wctx, LM_GGML_TYPE_F32, 8);
    lm_ggml_backend_buffer_t wb = lm_ggml_backend_alloc_ctx_tensors_from_buft(wctx, &TA->buft);
    struct lm_ggml_context * ctx2 = lm_ggml_init(ip);
    struct lm_ggml_tensor * x2 = lm_ggml_new_tensor_1d(ctx2, LM_GGML_TYPE_F32, 8);
    struct lm_ggml_cgraph * g2 = lm_ggml_new_graph_custom(ctx2, 64, false);
    lm_ggml_build_forward_expand(g2, lm_ggml_add(ctx2, x2, w));
    CHECK(!lm_ggml_backend_sched_alloc_graph(s2, g2));
    CHECK(lm_ggml_backend_sched_graph_compute(s2, g2) == LM_GGML_STATUS_ALLOC_FAILED);

    // an op no backend supports (TA alone, refusing ADD)
    tdevs_reset();
    TA->refuse[LM_GGML_OP_ADD] = true;
    lm_ggml_backend_t tonly[1] = { &TA->backend };
    lm_ggml_backend_sched_t s3 = lm_ggml_backend_sched_new(tonly, NULL, 1, 64, false);
    CHECK(s3 != NULL);
    lm_ggml_free(ctx2);
    ctx2 = lm_ggml_init(ip);
    x2 = lm_ggml_new_tensor_1d(ctx2, LM_GGML_TYPE_F32, 8);
    g2 = lm_ggml_new_graph_custom(ctx2, 64, false);
    lm_ggml_build_forward_expand(g2, lm_ggml_add(ctx2, x2, x2));
    CHECK(!lm_ggml_backend_sched_alloc_graph(s3, g2));
    TA->refuse[LM_GGML_OP_ADD] = false;
    // and then it can
    CHECK(lm_ggml_backend_sched_alloc_graph(s3, g2));

    // an empty graph computes nothing, successfully
    struct lm_ggml_cgraph * empty = lm_ggml_new_graph_custom(ctx2, 8, false);
    CHECK(lm_ggml_backend_sched_graph_compute(s3, empty) == LM_GGML_STATUS_SUCCESS);
    CHECK(lm_ggml_backend_sched_get_n_splits(s3) == 0);
    printf("errors: bad arguments, oversized graphs, unusable buffers and unsupported ops are refused\n");

    lm_ggml_backend_sched_free(s);
    lm_ggml_backend_sched_free(s2);
    lm_ggml_backend_sched_free(s3);
    lm_ggml_backend_buffer_free(wb);
    lm_ggml_free(wctx);
    lm_ggml_free(ctx);
    lm_ggml_free(ctx2);
    lm_ggml_backend_free(cpu);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    tdevs_init();
    g_cpu = lm_ggml_backend_cpu_init();
    test_two_cpu(0);
    test_two_cpu(1);
    test_copies(0);
    test_copies(1);
    test_same_backend_twice(0);
    test_same_backend_twice(1);
    test_eval_callback();
    test_reserve_reuse();
    test_replace();
    test_graph_copy();
    test_errors();
    lm_ggml_backend_free(g_cpu);
    return check_summary();
}
