// graphs-util.h - graphs shared by the allocator test and benchmark: a
// llama-style transformer (RMS norm, RoPE attention with a causal mask, SwiGLU
// feed-forward) of a few layers, forward and backward. Public API only, so
// that the benchmark builds against any core with this API.
#pragma once

#include "ggml.h"

#include <math.h>
#include <stdint.h>

struct tf_cfg {
    int n_embd, n_head, n_ff, n_tokens, n_layers;
};

#define TF_VOCAB 64

struct tf_layer {
    struct lm_ggml_tensor * attn_norm, * wq, * wk, * wv, * wo, * ffn_norm, * w1, * w2, * w3;
};

#define TF_MAX_LAYERS 8

struct tf_model {
    struct tf_cfg cfg;
    struct lm_ggml_tensor * tok_embd;         // [n_embd, TF_VOCAB]
    struct tf_layer layers[TF_MAX_LAYERS];
    struct lm_ggml_tensor * tokens, * pos, * mask; // inputs
    struct lm_ggml_tensor * x;                // the embeddings of the tokens
    struct lm_ggml_tensor * out;              // the last layer's output
    struct lm_ggml_tensor * loss;             // sum(out^2), when built for training
};

// The weights, in wctx (f32; the matrices are params when train).
static void tf_weights(struct lm_ggml_context * wctx, struct tf_model * m, bool train) {
    const struct tf_cfg * c = &m->cfg;
    m->tok_embd = lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, c->n_embd, TF_VOCAB);
    for (int l = 0; l < c->n_layers; l++) {
        struct tf_layer * L = &m->layers[l];
        L->attn_norm = lm_ggml_new_tensor_1d(wctx, LM_GGML_TYPE_F32, c->n_embd);
        L->wq = lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, c->n_embd, c->n_embd);
        L->wk = lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, c->n_embd, c->n_embd);
        L->wv = lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, c->n_embd, c->n_embd);
        L->wo = lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, c->n_embd, c->n_embd);
        L->ffn_norm = lm_ggml_new_tensor_1d(wctx, LM_GGML_TYPE_F32, c->n_embd);
        L->w1 = lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, c->n_embd, c->n_ff);
        L->w3 = lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, c->n_embd, c->n_ff);
        L->w2 = lm_ggml_new_tensor_2d(wctx, LM_GGML_TYPE_F32, c->n_ff, c->n_embd);
        if (train) {
            // the matrices (the reference has no backward rule for a
            // broadcast multiplicand, so the norm weights stay fixed)
            struct lm_ggml_tensor * ws[] = { L->wq, L->wk, L->wv, L->wo, L->w1, L->w2, L->w3 };
            for (int i = 0; i < 7; i++) lm_ggml_set_param(wctx, ws[i]);
        }
    }
}

// The forward pass, in ctx (inputs and every intermediate). As in llama.cpp
// the inputs are the tokens (the embeddings are looked up), the positions and
// the causal mask; RMS-norm weights multiply through a repeat when training
// (the reference has no backward rule for a broadcast multiplicand).
static void tf_forward(struct lm_ggml_context * ctx, struct tf_model * m, bool train) {
    const struct tf_cfg * c = &m->cfg;
    const int hd = c->n_embd / c->n_head, T = c->n_tokens;
    m->tokens = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, T);
    m->pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, T);
    m->mask = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, T, T);
    lm_ggml_set_name(m->tokens, "tokens");
    lm_ggml_set_input(m->tokens);
    lm_ggml_set_input(m->pos);
    lm_ggml_set_input(m->mask);
    m->x = lm_ggml_get_rows(ctx, m->tok_embd, m->tokens);
    lm_ggml_set_name(m->x, "x");
    struct lm_ggml_tensor * cur = m->x;
    for (int l = 0; l < c->n_layers; l++) {
        const struct tf_layer * L = &m->layers[l];
        struct lm_ggml_tensor * n1 = lm_ggml_rms_norm(ctx, cur, 1e-5f);
        struct lm_ggml_tensor * h = lm_ggml_mul(ctx, n1, train ? lm_ggml_repeat(ctx, L->attn_norm, n1) : L->attn_norm);
        struct lm_ggml_tensor * q = lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, L->wq, h), hd, c->n_head, T);
        struct lm_ggml_tensor * k = lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, L->wk, h), hd, c->n_head, T);
        struct lm_ggml_tensor * v = lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, L->wv, h), hd, c->n_head, T);
        q = lm_ggml_rope_ext(ctx, q, m->pos, NULL, hd, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
        k = lm_ggml_rope_ext(ctx, k, m->pos, NULL, hd, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
        q = lm_ggml_permute(ctx, q, 0, 2, 1, 3);                                   // [hd, T, nh]
        k = lm_ggml_permute(ctx, k, 0, 2, 1, 3);                                   // [hd, T, nh]
        struct lm_ggml_tensor * kq = lm_ggml_mul_mat(ctx, k, q);                     // [T, T, nh]
        kq = train ? lm_ggml_soft_max(ctx, lm_ggml_add(ctx, lm_ggml_scale(ctx, kq, 1.0f / sqrtf((float) hd)), m->mask))
                   : lm_ggml_soft_max_ext(ctx, kq, m->mask, 1.0f / sqrtf((float) hd), 0.0f);
        struct lm_ggml_tensor * vt = lm_ggml_cont(ctx, lm_ggml_permute(ctx, v, 1, 2, 0, 3)); // [T, hd, nh]
        struct lm_ggml_tensor * kqv = lm_ggml_mul_mat(ctx, vt, kq);                  // [hd, T, nh]
        struct lm_ggml_tensor * merged = lm_ggml_reshape_2d(ctx, lm_ggml_cont(ctx, lm_ggml_permute(ctx, kqv, 0, 2, 1, 3)), c->n_embd, T);
        cur = lm_ggml_add(ctx, cur, lm_ggml_mul_mat(ctx, L->wo, merged));
        struct lm_ggml_tensor * n2 = lm_ggml_rms_norm(ctx, cur, 1e-5f);
        struct lm_ggml_tensor * h2 = lm_ggml_mul(ctx, n2, train ? lm_ggml_repeat(ctx, L->ffn_norm, n2) : L->ffn_norm);
        struct lm_ggml_tensor * g = lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, L->w1, h2));
        struct lm_ggml_tensor * u = lm_ggml_mul_mat(ctx, L->w3, h2);
        cur = lm_ggml_add(ctx, cur, lm_ggml_mul_mat(ctx, L->w2, lm_ggml_mul(ctx, g, u)));
    }
    m->out = cur;
    lm_ggml_set_name(m->out, "out");
    lm_ggml_set_output(m->out);
    m->loss = NULL;
    if (train) {
        m->loss = lm_ggml_sum(ctx, lm_ggml_sqr(ctx, m->out));
        lm_ggml_set_loss(m->loss);
    }
}

// Deterministic values: weights ~ U(-s, s) with s = 1/sqrt(fan-in), x ~ U(-1, 1).
static float tf_value(uint64_t seed, int64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + (uint64_t) i * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 31; z *= 0x94D049BB133111EBull; z ^= z >> 29;
    return (float)((z >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}
