// rpc-graph.c - rebuilding a received graph through the op constructors (see rpc-graph.h).
#include "rpc-graph.h"
#include "rpc-ops.h"
#include "../base/ggml-impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T struct lm_ggml_tensor

// ================================================================ encoding (client)

LM_GGML_ATTRIBUTE_FORMAT(2, 3)
static bool fail(lm_rpc_why why, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, LM_RPC_WHY, fmt, ap);
    va_end(ap);
    return false;
}

static uint64_t id_of(const T * x) { return (uint64_t)(uintptr_t) x; }

bool lm_rpc_tensor_from(struct lm_rpc_tensor * w, const T * x, uint64_t buffer, lm_rpc_why why) {
    memset(w, 0, sizeof(*w));
    w->id = id_of(x);
    w->type = (uint32_t) x->type;
    w->buffer = buffer;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (x->ne[i] < 0 || (uint64_t) x->ne[i] > UINT32_MAX || x->nb[i] > UINT32_MAX) {
            return fail(why, "tensor '%s': dimension %d (%lld elements, stride %zu) does not fit the RPC protocol's 32 bits",
                        x->name, i, (long long) x->ne[i], x->nb[i]);
        }
        w->ne[i] = (uint32_t) x->ne[i];
        w->nb[i] = (uint32_t) x->nb[i];
    }
    w->op = (uint32_t) x->op;
    memcpy(w->op_params, x->op_params, sizeof(w->op_params));
    w->flags = x->flags;
    for (int i = 0; i < LM_GGML_MAX_SRC; i++) w->src[i] = id_of(x->src[i]);
    w->view_src = id_of(x->view_src);
    w->view_offs = x->view_offs;
    w->data = (uint64_t)(uintptr_t) x->data;
    snprintf(w->name, sizeof(w->name), "%s", x->name);
    return true;
}

// A set of tensor pointers (open addressing; capacity a power of two).
struct ptr_set {
    const T ** keys;
    size_t mask, n;
};

static size_t ptr_slot(const T * p, size_t mask) {
    uint64_t h = id_of(p);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL; // MurmurHash3's finalizer
    h ^= h >> 33;
    return (size_t) h & mask;
}

// Adds p; false if it was there (or if memory ran out: *oom).
static bool ptr_add(struct ptr_set * s, const T * p, bool * oom) {
    if (2 * (s->n + 1) > s->mask + 1) {
        const size_t cap = s->mask ? 2 * (s->mask + 1) : 64;
        const T ** keys = calloc(cap, sizeof(*keys));
        if (keys == NULL) {
            *oom = true;
            return false;
        }
        for (size_t i = 0; s->mask && i <= s->mask; i++) {
            if (s->keys[i] == NULL) continue;
            size_t k = ptr_slot(s->keys[i], cap - 1);
            while (keys[k] != NULL) k = (k + 1) & (cap - 1);
            keys[k] = s->keys[i];
        }
        free(s->keys);
        s->keys = keys;
        s->mask = cap - 1;
    }
    size_t k = ptr_slot(p, s->mask);
    for (; s->keys[k] != NULL; k = (k + 1) & s->mask) {
        if (s->keys[k] == p) return false;
    }
    s->keys[k] = p;
    s->n++;
    return true;
}

// A growable byte buffer.
struct bytes {
    uint8_t * p;
    size_t n, cap;
};

static uint8_t * bytes_grow(struct bytes * b, size_t k) {
    if (b->n + k > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + k) cap *= 2;
        uint8_t * p = realloc(b->p, cap);
        if (p == NULL) return NULL;
        b->p = p;
        b->cap = cap;
    }
    uint8_t * at = b->p + b->n;
    b->n += k;
    return at;
}

// Children of x in the order ggml's client visits them: sources, then the view source.
static const T * child(const T * x, int k) {
    return k < LM_GGML_MAX_SRC ? x->src[k] : x->view_src;
}

// Appends x and everything it reaches, each after what it reaches
// (depth-first, with an explicit stack: graphs can be deep).
static bool encode_from(const T * root, struct ptr_set * seen, struct bytes * out, uint32_t * count,
                        lm_rpc_buffer_fn buffer_of, void * user, lm_rpc_why why) {
    bool oom = false;
    if (root == NULL || !ptr_add(seen, root, &oom)) return !oom || fail(why, "graph: out of memory");
    struct frame { const T * x; int k; };
    size_t cap = 64, top = 0;
    struct frame * st = malloc(cap * sizeof(*st));
    if (st == NULL) return fail(why, "graph: out of memory");
    st[top++] = (struct frame) { root, 0 };
    bool ok = true;
    while (ok && top > 0) {
        struct frame * f = &st[top - 1];
        if (f->k <= LM_GGML_MAX_SRC) {
            const T * c = child(f->x, f->k++);
            if (c == NULL || !ptr_add(seen, c, &oom)) {
                if (oom) ok = fail(why, "graph: out of memory");
                continue;
            }
            if (top == cap) {
                struct frame * bigger = realloc(st, 2 * cap * sizeof(*st));
                if (bigger == NULL) {
                    ok = fail(why, "graph: out of memory");
                    break;
                }
                st = bigger;
                cap *= 2;
            }
            st[top++] = (struct frame) { c, 0 };
            continue;
        }
        // all of f->x's children are out: now f->x
        struct lm_rpc_tensor w;
        uint64_t handle = 0;
        uint8_t * at = NULL;
        ok = buffer_of(user, f->x, &handle, why) && lm_rpc_tensor_from(&w, f->x, handle, why);
        if (ok && (at = bytes_grow(out, LM_RPC_TENSOR_SIZE)) == NULL) ok = fail(why, "graph: out of memory");
        if (ok) {
            lm_rpc_tensor_encode(at, &w);
            (*count)++;
        }
        top--;
    }
    free(st);
    return ok;
}

uint8_t * lm_rpc_graph_encode(const struct lm_ggml_cgraph * g, lm_rpc_buffer_fn buffer_of, void * user, size_t * len, lm_rpc_why why) {
    const uint32_t n_nodes = (uint32_t) g->n_nodes;
    struct bytes out = { 0 };
    struct ptr_set seen = { 0 };
    uint32_t n_tensors = 0;
    bool ok = bytes_grow(&out, 8 + 8 * (size_t) n_nodes) != NULL || fail(why, "graph: out of memory");
    for (uint32_t i = 0; ok && i < n_nodes; i++) {
        lm_rpc_put_u64(out.p + 4 + 8 * (size_t) i, id_of(g->nodes[i]));
        ok = encode_from(g->nodes[i], &seen, &out, &n_tensors, buffer_of, user, why);
    }
    free(seen.keys);
    if (!ok) {
        free(out.p);
        return NULL;
    }
    lm_rpc_put_u32(out.p, n_nodes);
    lm_rpc_put_u32(out.p + 4 + 8 * (size_t) n_nodes, n_tensors);
    *len = out.n;
    return out.p;
}

// ================================================================ rebuilding (server)

// One node being rebuilt: the tensor as received and its built sources.
struct rb {
    struct lm_ggml_context * ctx;
    const struct lm_rpc_tensor * t;
    T * s[LM_GGML_MAX_SRC];
    bool self_src1; // src[1] is the node itself (a cast)
    bool inplace;   // a view of src[0], as the _inplace constructors make
};

static int32_t pi(const struct rb * r, int i) { return r->t->op_params[i]; }
static float   pf(const struct rb * r, int i) { float f; memcpy(&f, &r->t->op_params[i], sizeof(f)); return f; }
static int64_t ne(const struct rb * r, int i) { return (int64_t) r->t->ne[i]; }

// The first n sources must be there (the constructors dereference them).
static void need(const struct rb * r, int n) {
    for (int i = 0; i < n; i++) {
        if (r->s[i] == NULL) LM_GGML_ABORT("%s: source %d is missing", lm_ggml_op_name((enum lm_ggml_op) r->t->op), i);
    }
}

// A shape-only tensor with the node's own shape (for ops whose constructor takes one).
static T * shape_of_node(const struct rb * r) {
    const int64_t n[4] = { ne(r, 0), ne(r, 1), ne(r, 2), ne(r, 3) };
    return lm_ggml_new_tensor(r->ctx, (enum lm_ggml_type) r->t->type, 4, n);
}

static int param_index(const struct rb * r, int i, int lo, int hi) {
    const int32_t v = pi(r, i);
    if (v < lo || v > hi) LM_GGML_ABORT("%s: parameter %d = %d out of range", lm_ggml_op_name((enum lm_ggml_op) r->t->op), i, v);
    return v;
}

#define A (r->s[0])
#define B (r->s[1])
#define C (r->s[2])

// families: one source, or two, with or without an _inplace form
#define RB_1(name, fn) static T * rb_##name(struct rb * r) { need(r, 1); return lm_ggml_##fn(r->ctx, A); }
#define RB_2(name, fn) static T * rb_##name(struct rb * r) { need(r, 2); return lm_ggml_##fn(r->ctx, A, B); }
#define RB_1I(name, fn) static T * rb_##name(struct rb * r) { \
        need(r, 1); return r->inplace ? lm_ggml_##fn##_inplace(r->ctx, A) : lm_ggml_##fn(r->ctx, A); }
#define RB_2I(name, fn) static T * rb_##name(struct rb * r) { \
        need(r, 2); return r->inplace ? lm_ggml_##fn##_inplace(r->ctx, A, B) : lm_ggml_##fn(r->ctx, A, B); }

RB_1I(dup, dup)
RB_2I(add1, add1)
RB_2I(sub, sub)
RB_2I(mul, mul)
RB_2I(div, div)
RB_1I(sqr, sqr)
RB_1I(sqrt, sqrt)
RB_1I(log, log)
RB_1I(sin, sin)
RB_1I(cos, cos)
RB_1(sum, sum)
RB_1(sum_rows, sum_rows)
RB_1(mean, mean)
RB_1(argmax, argmax)
RB_2(count_equal, count_equal)
RB_2(silu_back, silu_back)
RB_2(out_prod, out_prod)
RB_2(get_rows, get_rows)
RB_1(diag, diag)
RB_2I(soft_max_back, soft_max_back)
RB_2(cross_entropy_loss, cross_entropy_loss)

static T * rb_add(struct rb * r) {
    need(r, 2);
    if (r->t->type != A->type) return lm_ggml_add_cast(r->ctx, A, B, (enum lm_ggml_type) r->t->type);
    return r->inplace ? lm_ggml_add_inplace(r->ctx, A, B) : lm_ggml_add(r->ctx, A, B);
}

// op_params i32 { nb1, nb2, nb3, offset, inplace }
static T * rb_acc(struct rb * r) {
    need(r, 2);
    const size_t nb1 = (uint32_t) pi(r, 0), nb2 = (uint32_t) pi(r, 1), nb3 = (uint32_t) pi(r, 2), off = (uint32_t) pi(r, 3);
    return pi(r, 4) ? lm_ggml_acc_inplace(r->ctx, A, B, nb1, nb2, nb3, off) : lm_ggml_acc(r->ctx, A, B, nb1, nb2, nb3, off);
}

static T * rb_set(struct rb * r) {
    need(r, 2);
    const size_t nb1 = (uint32_t) pi(r, 0), nb2 = (uint32_t) pi(r, 1), nb3 = (uint32_t) pi(r, 2), off = (uint32_t) pi(r, 3);
    return pi(r, 4) ? lm_ggml_set_inplace(r->ctx, A, B, nb1, nb2, nb3, off) : lm_ggml_set(r->ctx, A, B, nb1, nb2, nb3, off);
}

static T * rb_repeat(struct rb * r)      { need(r, 1); return lm_ggml_repeat(r->ctx, A, shape_of_node(r)); }
static T * rb_repeat_back(struct rb * r) { need(r, 1); return lm_ggml_repeat_back(r->ctx, A, shape_of_node(r)); }
static T * rb_concat(struct rb * r)      { need(r, 2); return lm_ggml_concat(r->ctx, A, B, param_index(r, 0, 0, LM_GGML_MAX_DIMS - 1)); }

// op_params f32 { eps }
static T * rb_norm(struct rb * r) {
    need(r, 1);
    return r->inplace ? lm_ggml_norm_inplace(r->ctx, A, pf(r, 0)) : lm_ggml_norm(r->ctx, A, pf(r, 0));
}
static T * rb_rms_norm(struct rb * r) {
    need(r, 1);
    return r->inplace ? lm_ggml_rms_norm_inplace(r->ctx, A, pf(r, 0)) : lm_ggml_rms_norm(r->ctx, A, pf(r, 0));
}
static T * rb_rms_norm_back(struct rb * r) { need(r, 2); return lm_ggml_rms_norm_back(r->ctx, A, B, pf(r, 0)); }

// op_params i32 n_groups, f32 eps
static T * rb_group_norm(struct rb * r) {
    need(r, 1);
    return r->inplace ? lm_ggml_group_norm_inplace(r->ctx, A, pi(r, 0), pf(r, 1)) : lm_ggml_group_norm(r->ctx, A, pi(r, 0), pf(r, 1));
}

// op_params i32 { prec }
static T * rb_mul_mat(struct rb * r) {
    need(r, 2);
    T * t = lm_ggml_mul_mat(r->ctx, A, B);
    lm_ggml_mul_mat_set_prec(t, (enum lm_ggml_prec) param_index(r, 0, LM_GGML_PREC_DEFAULT, LM_GGML_PREC_F32));
    return t;
}
static T * rb_mul_mat_id(struct rb * r) { need(r, 3); return lm_ggml_mul_mat_id(r->ctx, A, B, C); }

static T * rb_scale(struct rb * r) {
    need(r, 1);
    return r->inplace ? lm_ggml_scale_inplace(r->ctx, A, pf(r, 0)) : lm_ggml_scale(r->ctx, A, pf(r, 0));
}

// a copy into src[1] (a view of it), or a cast: a copy into the node itself
static T * rb_cpy(struct rb * r) {
    need(r, 1);
    if (r->self_src1) return lm_ggml_cast(r->ctx, A, (enum lm_ggml_type) r->t->type);
    need(r, 2);
    return lm_ggml_cpy(r->ctx, A, B);
}

static T * rb_cont(struct rb * r) { need(r, 1); return lm_ggml_cont_4d(r->ctx, A, ne(r, 0), ne(r, 1), ne(r, 2), ne(r, 3)); }
static T * rb_get_rows_back(struct rb * r) { need(r, 3); return lm_ggml_get_rows_back(r->ctx, A, B, C); }

// op_params i32 { n_past }
static T * rb_diag_mask_inf(struct rb * r) {
    need(r, 1);
    return r->inplace ? lm_ggml_diag_mask_inf_inplace(r->ctx, A, pi(r, 0)) : lm_ggml_diag_mask_inf(r->ctx, A, pi(r, 0));
}
static T * rb_diag_mask_zero(struct rb * r) {
    need(r, 1);
    return r->inplace ? lm_ggml_diag_mask_zero_inplace(r->ctx, A, pi(r, 0)) : lm_ggml_diag_mask_zero(r->ctx, A, pi(r, 0));
}

// op_params f32 { scale, max_bias }; src[1] the optional mask. Only the
// plain form exists in place.
static T * rb_soft_max(struct rb * r) {
    need(r, 1);
    if (r->inplace) {
        if (B != NULL || pf(r, 0) != 1.0f || pf(r, 1) != 0.0f) LM_GGML_ABORT("soft_max: only the plain form works in place");
        return lm_ggml_soft_max_inplace(r->ctx, A);
    }
    return lm_ggml_soft_max_ext(r->ctx, A, B, pf(r, 0), pf(r, 1));
}

// op_params i32 [1] n_dims [2] mode [4] n_ctx_orig, f32 [5..10] freq_base,
// freq_scale, ext_factor, attn_factor, beta_fast, beta_slow; src[2] the
// optional frequency factors
static T * rb_rope(struct rb * r) {
    need(r, 2);
    return (r->inplace ? lm_ggml_rope_ext_inplace : lm_ggml_rope_ext)(r->ctx, A, B, C, pi(r, 1), pi(r, 2), pi(r, 4),
            pf(r, 5), pf(r, 6), pf(r, 7), pf(r, 8), pf(r, 9), pf(r, 10));
}
static T * rb_rope_back(struct rb * r) {
    need(r, 2);
    return lm_ggml_rope_back(r->ctx, A, B, C, pi(r, 1), pi(r, 2), pi(r, 4), pf(r, 5), pf(r, 6), pf(r, 7), pf(r, 8), pf(r, 9), pf(r, 10));
}

// op_params f32 { min, max }
static T * rb_clamp(struct rb * r) { need(r, 1); return lm_ggml_clamp(r->ctx, A, pf(r, 0), pf(r, 1)); }

// op_params i32 { s0, s1, p0, p1, d0, d1, is_2D }
static T * rb_im2col(struct rb * r) {
    need(r, 2);
    return lm_ggml_im2col(r->ctx, A, B, pi(r, 0), pi(r, 1), pi(r, 2), pi(r, 3), pi(r, 4), pi(r, 5), pi(r, 6) != 0,
                          (enum lm_ggml_type) r->t->type);
}
static T * rb_im2col_back(struct rb * r) {
    need(r, 2);
    int64_t n[4] = { ne(r, 0), ne(r, 1), ne(r, 2), ne(r, 3) };
    return lm_ggml_im2col_back(r->ctx, A, B, n, pi(r, 0), pi(r, 1), pi(r, 2), pi(r, 3), pi(r, 4), pi(r, 5), pi(r, 6) != 0);
}

// op_params i32 { s0, p0, d0 } / { stride }
static T * rb_conv_transpose_1d(struct rb * r) { need(r, 2); return lm_ggml_conv_transpose_1d(r->ctx, A, B, pi(r, 0), pi(r, 1), pi(r, 2)); }
static T * rb_conv_transpose_2d(struct rb * r) { need(r, 2); return lm_ggml_conv_transpose_2d_p0(r->ctx, A, B, pi(r, 0)); }

// op_params i32 { op, k0, s0, p0 } / { op, k0, k1, s0, s1, p0, p1 }
static T * rb_pool_1d(struct rb * r) {
    need(r, 1);
    return lm_ggml_pool_1d(r->ctx, A, (enum lm_ggml_op_pool) param_index(r, 0, 0, LM_GGML_OP_POOL_COUNT - 1), pi(r, 1), pi(r, 2), pi(r, 3));
}
static T * rb_pool_2d(struct rb * r) {
    need(r, 1);
    return lm_ggml_pool_2d(r->ctx, A, (enum lm_ggml_op_pool) param_index(r, 0, 0, LM_GGML_OP_POOL_COUNT - 1),
                           pi(r, 1), pi(r, 2), pi(r, 3), pi(r, 4), (float) pi(r, 5), (float) pi(r, 6));
}
static T * rb_pool_2d_back(struct rb * r) {
    need(r, 2);
    return lm_ggml_pool_2d_back(r->ctx, A, B, (enum lm_ggml_op_pool) param_index(r, 0, 0, LM_GGML_OP_POOL_COUNT - 1),
                                pi(r, 1), pi(r, 2), pi(r, 3), pi(r, 4), (float) pi(r, 5), (float) pi(r, 6));
}

// the node's shape gives the sizes
static T * rb_upscale(struct rb * r) {
    need(r, 1);
    for (int i = 0; i < 4; i++) {
        if (ne(r, i) > INT32_MAX) LM_GGML_ABORT("upscale: size out of range");
    }
    return lm_ggml_upscale_ext(r->ctx, A, (int) ne(r, 0), (int) ne(r, 1), (int) ne(r, 2), (int) ne(r, 3));
}
static T * rb_pad(struct rb * r) {
    need(r, 1);
    int p[4];
    for (int i = 0; i < 4; i++) {
        const int64_t d = ne(r, i) - A->ne[i];
        if (d < 0 || d > INT32_MAX) LM_GGML_ABORT("pad: padding out of range");
        p[i] = (int) d;
    }
    return lm_ggml_pad(r->ctx, A, p[0], p[1], p[2], p[3]);
}

// op_params f32 { start, stop, step }
static T * rb_arange(struct rb * r) { return lm_ggml_arange(r->ctx, pf(r, 0), pf(r, 1), pf(r, 2)); }
// op_params i32 { dim, max_period }
static T * rb_timestep_embedding(struct rb * r) { need(r, 1); return lm_ggml_timestep_embedding(r->ctx, A, pi(r, 0), pi(r, 1)); }
// op_params i32 { order }
static T * rb_argsort(struct rb * r) {
    need(r, 1);
    return lm_ggml_argsort(r->ctx, A, (enum lm_ggml_sort_order) param_index(r, 0, LM_GGML_SORT_ORDER_ASC, LM_GGML_SORT_ORDER_DESC));
}
// op_params f32 { negative_slope }
static T * rb_leaky_relu(struct rb * r) { need(r, 1); return lm_ggml_leaky_relu(r->ctx, A, pf(r, 0), r->inplace); }

// op_params f32 { scale, max_bias, logit_softcap }, i32 [3] prec; src[3] the optional mask
static T * rb_flash_attn_ext(struct rb * r) {
    need(r, 3);
    T * t = lm_ggml_flash_attn_ext(r->ctx, A, B, C, r->s[3], pf(r, 0), pf(r, 1), pf(r, 2));
    lm_ggml_flash_attn_ext_set_prec(t, (enum lm_ggml_prec) param_index(r, 3, LM_GGML_PREC_DEFAULT, LM_GGML_PREC_F32));
    return t;
}

static T * rb_ssm_conv(struct rb * r)  { need(r, 2); return lm_ggml_ssm_conv(r->ctx, A, B); }
static T * rb_ssm_scan(struct rb * r)  { need(r, 6); return lm_ggml_ssm_scan(r->ctx, A, B, C, r->s[3], r->s[4], r->s[5]); }
static T * rb_rwkv_wkv6(struct rb * r) { need(r, 6); return lm_ggml_rwkv_wkv6(r->ctx, A, B, C, r->s[3], r->s[4], r->s[5]); }

// op_params i32 { npx, npy, w } / { w }; the node's shape gives the rest
static T * rb_win_part(struct rb * r) { need(r, 1); return lm_ggml_win_part(r->ctx, A, pi(r, 2)); }
static T * rb_win_unpart(struct rb * r) {
    need(r, 1);
    if (ne(r, 1) > INT32_MAX || ne(r, 2) > INT32_MAX) LM_GGML_ABORT("win_unpart: size out of range");
    return lm_ggml_win_unpart(r->ctx, A, (int) ne(r, 1), (int) ne(r, 2), pi(r, 0));
}
static T * rb_get_rel_pos(struct rb * r) {
    need(r, 1);
    if (ne(r, 1) > INT32_MAX || ne(r, 2) > INT32_MAX) LM_GGML_ABORT("get_rel_pos: size out of range");
    return lm_ggml_get_rel_pos(r->ctx, A, (int) ne(r, 2), (int) ne(r, 1));
}
// op_params i32 { inplace }
static T * rb_add_rel_pos(struct rb * r) {
    need(r, 3);
    return pi(r, 0) ? lm_ggml_add_rel_pos_inplace(r->ctx, A, B, C) : lm_ggml_add_rel_pos(r->ctx, A, B, C);
}

// op_params i32 { op }
static T * rb_unary(struct rb * r) {
    need(r, 1);
    const enum lm_ggml_unary_op op = (enum lm_ggml_unary_op) param_index(r, 0, 0, LM_GGML_UNARY_OP_COUNT - 1);
    return r->inplace ? lm_ggml_unary_inplace(r->ctx, A, op) : lm_ggml_unary(r->ctx, A, op);
}

static T * rb_cross_entropy_loss_back(struct rb * r) { need(r, 3); return lm_ggml_cross_entropy_loss_back(r->ctx, A, B, C); }
static T * rb_opt_step_adamw(struct rb * r) { need(r, 5); return lm_ggml_opt_step_adamw(r->ctx, A, B, C, r->s[3], r->s[4]); }

// Ops a server builds: those marked rpc in enum lm_ggml_op (ggml.h; rpc-ops.h
// is generated from it), each by its rb_ function above. Not marked: views
// (rpc=view: nothing to compute), custom ops (their op_params hold function
// pointers of the client's process) and flash_attn_back (its constructor
// refuses every call).
#define REBUILD_ENTRY(op, fn) [op] = fn,
static T * (* const rebuild[LM_GGML_OP_COUNT])(struct rb * r) = { LM_RPC_REBUILT_OPS(REBUILD_ENTRY) };
#undef REBUILD_ENTRY

static bool is_view_op(uint32_t op) {
    switch (op) {
#define VIEW_CASE(op) case op:
        LM_RPC_VIEW_OPS(VIEW_CASE)
#undef VIEW_CASE
            return true;
        default:
            return false;
    }
}

bool lm_rpc_op_supported(const struct lm_ggml_tensor * node) {
    if (node == NULL || (int) node->op < 0 || node->op >= LM_GGML_OP_COUNT) return false;
    if (is_view_op(node->op)) return true;
    if (rebuild[node->op] == NULL) return false;
    // a cast can only be sent as a copy into itself, as ggml's client sends it
    return true;
}

void lm_rpc_built_free(struct lm_rpc_built * b) {
    if (b->ctx != NULL) lm_ggml_free(b->ctx);
    b->ctx = NULL;
    b->graph = NULL;
}

static void set_received(T * x, const struct lm_rpc_tensor * t, void * data, lm_ggml_backend_buffer_t buf) {
    x->data = data;
    x->buffer = buf;
    x->flags = t->flags & (LM_GGML_TENSOR_FLAG_INPUT | LM_GGML_TENSOR_FLAG_OUTPUT | LM_GGML_TENSOR_FLAG_PARAM | LM_GGML_TENSOR_FLAG_LOSS);
    memcpy(x->name, t->name, sizeof(x->name));
}

// A plain data tensor as received: type, shape and strides, no op.
static T * plain_tensor(struct lm_ggml_context * ctx, const struct lm_rpc_tensor * t) {
    const int64_t n[4] = { t->ne[0], t->ne[1], t->ne[2], t->ne[3] };
    T * x = lm_ggml_new_tensor(ctx, (enum lm_ggml_type) t->type, 4, n);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) x->nb[i] = t->nb[i];
    return x;
}

// The node built again; aborts (caught by the caller) on any disagreement.
static T * rebuild_node(struct lm_ggml_context * ctx, const struct lm_rpc_graph * g, uint32_t i, T ** built) {
    const struct lm_rpc_tensor * t = &g->tensors[i];
    struct rb r = { .ctx = ctx, .t = t };
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        if (t->src_idx[j] < 0) continue;
        if ((uint32_t) t->src_idx[j] == i) {
            if (j != 1 || t->op != LM_GGML_OP_CPY) LM_GGML_ABORT("node '%s' is its own source %d", t->name, j);
            r.self_src1 = true;
            continue;
        }
        r.s[j] = built[t->src_idx[j]];
    }
    r.inplace = t->view_idx >= 0 && t->view_idx == t->src_idx[0];
    if (rebuild[t->op] == NULL) LM_GGML_ABORT("op %s is not computed by this server", lm_ggml_op_name((enum lm_ggml_op) t->op));
    T * x = rebuild[t->op](&r);
    if (x->op != (enum lm_ggml_op) t->op || x->type != (enum lm_ggml_type) t->type) {
        LM_GGML_ABORT("node '%s' (%s): its op and sources make a %s %s, not the %s %s sent", t->name,
                      lm_ggml_op_name((enum lm_ggml_op) t->op), lm_ggml_type_name(x->type), lm_ggml_op_name(x->op),
                      lm_ggml_type_name((enum lm_ggml_type) t->type), lm_ggml_op_name((enum lm_ggml_op) t->op));
    }
    for (int d = 0; d < LM_GGML_MAX_DIMS; d++) {
        if (x->ne[d] != (int64_t) t->ne[d] || x->nb[d] != (size_t) t->nb[d]) {
            LM_GGML_ABORT("node '%s' (%s): its sources make shape [%lld %lld %lld %lld] strides [%zu %zu %zu %zu], "
                          "not the [%u %u %u %u] [%u %u %u %u] sent", t->name, lm_ggml_op_name(x->op),
                          (long long) x->ne[0], (long long) x->ne[1], (long long) x->ne[2], (long long) x->ne[3],
                          x->nb[0], x->nb[1], x->nb[2], x->nb[3], t->ne[0], t->ne[1], t->ne[2], t->ne[3],
                          t->nb[0], t->nb[1], t->nb[2], t->nb[3]);
        }
    }
    return x;
}

enum lm_rpc_build_status lm_rpc_graph_build(const struct lm_rpc_graph * g, lm_rpc_resolve_fn resolve, void * user,
                                            struct lm_rpc_built * out, lm_rpc_why why) {
    out->ctx = NULL;
    out->graph = NULL;
    const uint32_t n = g->n_tensors;
    void ** data = calloc(n ? n : 1, sizeof(void *));
    lm_ggml_backend_buffer_t * bufs = calloc(n ? n : 1, sizeof(*bufs));
    T ** built = calloc(n ? n : 1, sizeof(T *));
    bool * is_node = calloc(n ? n : 1, sizeof(bool));
    enum lm_rpc_build_status st = LM_RPC_REFUSED;
    if (data == NULL || bufs == NULL || built == NULL || is_node == NULL) {
        snprintf(why, LM_RPC_WHY, "graph: out of memory");
        goto done;
    }
    // every tensor's data must lie in the client's buffers, whatever happens next
    for (uint32_t i = 0; i < n; i++) {
        if (!resolve(user, &g->tensors[i], &data[i], &bufs[i], why)) {
            st = LM_RPC_MALFORMED;
            goto done;
        }
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) is_node[g->nodes[i]] = true;

    const size_t n_nodes = g->n_nodes ? g->n_nodes : 1;
    struct lm_ggml_init_params ip = {
        // the received tensors, up to two helpers per rebuilt node, the graph
        .mem_size = lm_ggml_tensor_overhead() * ((size_t) n + 3 * n_nodes + 8) + lm_ggml_graph_overhead_custom(n_nodes, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    if (ctx == NULL) {
        snprintf(why, LM_RPC_WHY, "graph: out of memory");
        goto done;
    }
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        snprintf(why, LM_RPC_WHY, "%s", f.msg);
        lm_ggml_free(ctx);
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct lm_rpc_tensor * t = &g->tensors[i];
        T * x = is_node[i] && !is_view_op(t->op) ? rebuild_node(ctx, g, i, built) : plain_tensor(ctx, t);
        set_received(x, t, data[i], bufs[i]);
        built[i] = x;
    }
    struct lm_ggml_cgraph * graph = lm_ggml_new_graph_custom(ctx, n_nodes, false);
    for (uint32_t i = 0; i < g->n_nodes; i++) lm_ggml_graph_add_node(graph, built[g->nodes[i]]);
    lm_ggml_err_pop(&f);
    out->ctx = ctx;
    out->graph = graph;
    st = LM_RPC_BUILT;
done:
    free(data);
    free(bufs);
    free(built);
    free(is_node);
    return st;
}
