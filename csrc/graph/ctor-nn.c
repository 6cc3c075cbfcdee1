// ctor-nn.c - constructors of the "neural network" ops that do not fit
// elsewhere: rotary embeddings (rope, rope_back), SAM windowing
// (win_part/unpart, get_rel_pos, add_rel_pos), Mamba (ssm_conv, ssm_scan) and
// RWKV v6 (rwkv_wkv6). The kernels are in cpu/ops-nn.c, the recurrent ones
// (ssm_*, rwkv_wkv6) in cpu/ops-recurrent.c.
#include "ctor-impl.h"

// ================================================================ rope

// op_params of ROPE / ROPE_BACK (other code, e.g. the backward pass, reads them):
//   i32 [0] n_past (unused, 0)  [1] n_dims  [2] mode  [3] n_ctx (unused, 0)  [4] n_ctx_orig
//   f32 [5] freq_base [6] freq_scale [7] ext_factor [8] attn_factor [9] beta_fast [10] beta_slow
static void rope_set_params(struct lm_ggml_tensor * t, int n_dims, int mode, int n_ctx_orig,
        float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    int32_t p[11] = { 0, n_dims, mode, 0, n_ctx_orig, 0, 0, 0, 0, 0, 0 };
    const float f[6] = { freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow };
    memcpy(p + 5, f, sizeof(f));
    lm_ggml_set_op_params(t, p, sizeof(p));
}

static void rope_check(struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, int n_dims, int mode) {
    LM_GGML_ASSERT((mode & 1) == 0 && "mode & 1 == 1 is no longer supported");
    LM_GGML_ASSERT(lm_ggml_is_vector(b));
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_I32);
    LM_GGML_ASSERT(a->ne[2] == b->ne[0]);
    if (c) {
        LM_GGML_ASSERT(c->type == LM_GGML_TYPE_F32);
        LM_GGML_ASSERT(c->ne[0] >= n_dims / 2);
    }
    // ggml checks these only when computing; a built graph must compute
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_F16);
    LM_GGML_ASSERT(n_dims >= 0 && n_dims % 2 == 0 && n_dims <= a->ne[0]);
    LM_GGML_ASSERT(a->nb[0] == lm_ggml_type_size(a->type));
}

static struct lm_ggml_tensor * rope_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        struct lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
        float ext_factor, float attn_factor, float beta_fast, float beta_slow, bool inplace, enum lm_ggml_op op) {
    rope_check(a, b, c, n_dims, mode);
    struct lm_ggml_tensor * r = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    rope_set_params(r, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow);
    r->op     = op;
    r->src[0] = a;
    r->src[1] = b;
    r->src[2] = c;
    return r;
}

struct lm_ggml_tensor * lm_ggml_rope(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int n_dims, int mode) {
    return rope_impl(ctx, a, b, NULL, n_dims, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, false, LM_GGML_OP_ROPE);
}

struct lm_ggml_tensor * lm_ggml_rope_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int n_dims, int mode) {
    return rope_impl(ctx, a, b, NULL, n_dims, mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, true, LM_GGML_OP_ROPE);
}

struct lm_ggml_tensor * lm_ggml_rope_ext(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        struct lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
        float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
            beta_fast, beta_slow, false, LM_GGML_OP_ROPE);
}

struct lm_ggml_tensor * lm_ggml_rope_ext_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        struct lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
        float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
            beta_fast, beta_slow, true, LM_GGML_OP_ROPE);
}

struct lm_ggml_tensor * lm_ggml_rope_custom(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
        float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, NULL, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
            beta_fast, beta_slow, false, LM_GGML_OP_ROPE);
}

struct lm_ggml_tensor * lm_ggml_rope_custom_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
        float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, NULL, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
            beta_fast, beta_slow, true, LM_GGML_OP_ROPE);
}

struct lm_ggml_tensor * lm_ggml_rope_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        struct lm_ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
        float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_impl(ctx, a, b, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
            beta_fast, beta_slow, false, LM_GGML_OP_ROPE_BACK);
}

// ================================================================ SAM windowing

struct lm_ggml_tensor * lm_ggml_win_part(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int w) {
    LM_GGML_ASSERT(a->ne[3] == 1);
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(w > 0);
    // pad ne1/ne2 up to multiples of w
    const int px  = (w - a->ne[1] % w) % w;
    const int py  = (w - a->ne[2] % w) % w;
    const int npx = (px + a->ne[1]) / w;
    const int npy = (py + a->ne[2]) / w;
    const int64_t ne[4] = { a->ne[0], w, w, (int64_t) npx * npy };
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    const int32_t p[3] = { npx, npy, w };
    lm_ggml_set_op_params(r, p, sizeof(p));
    r->op = LM_GGML_OP_WIN_PART;
    r->src[0] = a;
    return r;
}

struct lm_ggml_tensor * lm_ggml_win_unpart(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int w0, int h0, int w) {
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(w > 0 && w0 >= 0 && h0 >= 0);
    // the kernel reads window (y/w, x/w) at offset (y%w, x%w): all must exist in a
    const int64_t npx = (w0 + w - 1) / w, npy = (h0 + w - 1) / w;
    LM_GGML_ASSERT(a->ne[1] >= w && a->ne[2] >= w && a->ne[3] >= npx * npy);
    const int64_t ne[4] = { a->ne[0], w0, h0, 1 };
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 3, ne);
    const int32_t p[1] = { w };
    lm_ggml_set_op_params(r, p, sizeof(p));
    r->op = LM_GGML_OP_WIN_UNPART;
    r->src[0] = a;
    return r;
}

struct lm_ggml_tensor * lm_ggml_get_rel_pos(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int qh, int kh) {
    LM_GGML_ASSERT(qh == kh);
    LM_GGML_ASSERT(2 * LM_GGML_MAX(qh, kh) - 1 == a->ne[1]);
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F16 || a->type == LM_GGML_TYPE_BF16);
    const int64_t ne[4] = { a->ne[0], kh, qh, 1 };
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F16, 3, ne);
    r->op = LM_GGML_OP_GET_REL_POS;
    r->src[0] = a;
    return r;
}

static struct lm_ggml_tensor * add_rel_pos_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * pw, struct lm_ggml_tensor * ph, bool inplace) {
    LM_GGML_ASSERT(lm_ggml_are_same_shape(pw, ph));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(a));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(pw));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(ph));
    LM_GGML_ASSERT(ph->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(pw->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(pw->ne[3] == a->ne[2]);
    LM_GGML_ASSERT(pw->ne[0] * pw->ne[0] == a->ne[0]);
    LM_GGML_ASSERT(pw->ne[1] * pw->ne[2] == a->ne[1]);
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    struct lm_ggml_tensor * r = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    lm_ggml_set_op_params_i32(r, 0, inplace ? 1 : 0);
    r->op = LM_GGML_OP_ADD_REL_POS;
    r->src[0] = a;
    r->src[1] = pw;
    r->src[2] = ph;
    return r;
}

struct lm_ggml_tensor * lm_ggml_add_rel_pos(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * pw, struct lm_ggml_tensor * ph) {
    return add_rel_pos_impl(ctx, a, pw, ph, false);
}

struct lm_ggml_tensor * lm_ggml_add_rel_pos_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * pw, struct lm_ggml_tensor * ph) {
    return add_rel_pos_impl(ctx, a, pw, ph, true);
}

// ================================================================ Mamba

struct lm_ggml_tensor * lm_ggml_ssm_conv(struct lm_ggml_context * ctx, struct lm_ggml_tensor * sx, struct lm_ggml_tensor * c) {
    LM_GGML_ASSERT(lm_ggml_is_3d(sx));
    LM_GGML_ASSERT(lm_ggml_is_matrix(c));
    const int64_t d_conv  = c->ne[0];
    const int64_t d_inner = c->ne[1];
    const int64_t n_t     = sx->ne[0] - d_conv + 1;
    const int64_t n_s     = sx->ne[2];
    LM_GGML_ASSERT(sx->ne[0] == d_conv - 1 + n_t);
    LM_GGML_ASSERT(sx->ne[1] == d_inner);
    LM_GGML_ASSERT(n_t >= 0);
    LM_GGML_ASSERT(sx->type == LM_GGML_TYPE_F32 && c->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(sx->nb[0] == sizeof(float) && c->nb[0] == sizeof(float));
    struct lm_ggml_tensor * r = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_inner, n_t, n_s);
    r->op = LM_GGML_OP_SSM_CONV;
    r->src[0] = sx;
    r->src[1] = c;
    return r;
}

struct lm_ggml_tensor * lm_ggml_ssm_scan(struct lm_ggml_context * ctx, struct lm_ggml_tensor * s, struct lm_ggml_tensor * x,
        struct lm_ggml_tensor * dt, struct lm_ggml_tensor * A, struct lm_ggml_tensor * B, struct lm_ggml_tensor * C) {
    LM_GGML_ASSERT(lm_ggml_is_contiguous(s));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(x));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(dt));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(A));
    LM_GGML_ASSERT(lm_ggml_is_matrix(A));
    LM_GGML_ASSERT(lm_ggml_is_3d(B));
    LM_GGML_ASSERT(lm_ggml_is_3d(s));
    LM_GGML_ASSERT(B->nb[0] == lm_ggml_type_size(B->type));
    LM_GGML_ASSERT(C->nb[0] == lm_ggml_type_size(C->type));
    LM_GGML_ASSERT(lm_ggml_are_same_shape(x, dt));
    LM_GGML_ASSERT(lm_ggml_are_same_shape(B, C));
    const int64_t d_state = s->ne[0], d_inner = s->ne[1];
    const int64_t n_seq_tokens = x->ne[1], n_seqs = x->ne[2];
    LM_GGML_ASSERT(s->ne[2] == n_seqs);
    LM_GGML_ASSERT(x->ne[0] == d_inner);
    LM_GGML_ASSERT(A->ne[0] == d_state);
    LM_GGML_ASSERT(A->ne[1] == d_inner);
    LM_GGML_ASSERT(B->ne[0] == d_state);
    LM_GGML_ASSERT(B->ne[1] == n_seq_tokens);
    LM_GGML_ASSERT(B->ne[2] == n_seqs);
    LM_GGML_ASSERT(s->type == LM_GGML_TYPE_F32 && x->type == LM_GGML_TYPE_F32 && dt->type == LM_GGML_TYPE_F32 &&
                   A->type == LM_GGML_TYPE_F32 && B->type == LM_GGML_TYPE_F32 && C->type == LM_GGML_TYPE_F32);
    // y followed by the final states
    struct lm_ggml_tensor * r = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, lm_ggml_nelements(x) + lm_ggml_nelements(s));
    r->op = LM_GGML_OP_SSM_SCAN;
    r->src[0] = s;
    r->src[1] = x;
    r->src[2] = dt;
    r->src[3] = A;
    r->src[4] = B;
    r->src[5] = C;
    return r;
}

// ================================================================ RWKV v6

struct lm_ggml_tensor * lm_ggml_rwkv_wkv6(struct lm_ggml_context * ctx, struct lm_ggml_tensor * k, struct lm_ggml_tensor * v,
        struct lm_ggml_tensor * r, struct lm_ggml_tensor * tf, struct lm_ggml_tensor * td, struct lm_ggml_tensor * state) {
    LM_GGML_ASSERT(lm_ggml_is_contiguous(k));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(v));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(r));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(tf));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(td));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(state));
    const int64_t S = k->ne[0], H = k->ne[2], n_tokens = k->ne[3];
    const int64_t n_seqs = state->ne[1];
    LM_GGML_ASSERT(k->ne[1] == 1);
    LM_GGML_ASSERT(v->ne[0] == 1 && v->ne[1] == S && v->ne[2] == H && v->ne[3] == n_tokens);
    LM_GGML_ASSERT(r->ne[0] == 1 && r->ne[1] == S && r->ne[2] == H && r->ne[3] == n_tokens);
    LM_GGML_ASSERT(td->ne[0] == 1 && td->ne[1] == S && td->ne[2] == H && td->ne[3] == n_tokens);
    LM_GGML_ASSERT(lm_ggml_nelements(state) == S * S * H * n_seqs);
    // the kernel indexes these; ggml leaves them unchecked
    LM_GGML_ASSERT(lm_ggml_nelements(tf) >= S * H);
    LM_GGML_ASSERT(n_seqs > 0 && n_tokens % n_seqs == 0);
    LM_GGML_ASSERT(k->type == LM_GGML_TYPE_F32 && v->type == LM_GGML_TYPE_F32 && r->type == LM_GGML_TYPE_F32 &&
                   tf->type == LM_GGML_TYPE_F32 && td->type == LM_GGML_TYPE_F32 && state->type == LM_GGML_TYPE_F32);
    // output rows, then the new states
    const int64_t ne[4] = { S * H, n_tokens + S * n_seqs, 1, 1 };
    struct lm_ggml_tensor * res = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    res->op = LM_GGML_OP_RWKV_WKV6;
    res->src[0] = k;
    res->src[1] = v;
    res->src[2] = r;
    res->src[3] = tf;
    res->src[4] = td;
    res->src[5] = state;
    return res;
}
