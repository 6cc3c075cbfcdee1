// ctor-attn.c - constructors of fused attention: flash_attn_ext with its
// precision flag, and flash_attn_back. The kernel is in cpu/ops-attn.c.
#include "ctor-impl.h"

// op_params of FLASH_ATTN_EXT: f32 [0] scale, [1] max_bias, [2] logit_softcap; i32 [3] prec
#define FA_PREC_SLOT 3

static bool fa_kv_type_ok(const struct lm_ggml_tensor * t) {
    if (t->type == LM_GGML_TYPE_F32 || t->type == LM_GGML_TYPE_F16) return true;
    // other types go through their row converter, a row at a time
    return lm_ggml_get_type_traits(t->type)->to_float != NULL && t->ne[0] % lm_ggml_blck_size(t->type) == 0;
}

struct lm_ggml_tensor * lm_ggml_flash_attn_ext(struct lm_ggml_context * ctx, struct lm_ggml_tensor * q, struct lm_ggml_tensor * k,
        struct lm_ggml_tensor * v, struct lm_ggml_tensor * mask, float scale, float max_bias, float logit_softcap) {
    // k and q must be multipliable (k rows against q rows, heads broadcast)
    LM_GGML_ASSERT(k->ne[0] == q->ne[0] && q->ne[2] % k->ne[2] == 0 && q->ne[3] % k->ne[3] == 0);
    if (mask) {
        LM_GGML_ASSERT(lm_ggml_is_contiguous(mask));
        LM_GGML_ASSERT(mask->ne[2] == 1);
        LM_GGML_ASSERT(mask->ne[3] == 1);
        LM_GGML_ASSERT(mask->ne[1] >= LM_GGML_PAD(q->ne[1], LM_GGML_KQ_MASK_PAD) &&
                "the Flash-Attention kernel requires the mask to be padded to LM_GGML_KQ_MASK_PAD and at least n_queries big");
        // read by the kernel as f16, one value per KV row
        LM_GGML_ASSERT(mask->type == LM_GGML_TYPE_F16);
        LM_GGML_ASSERT(mask->ne[0] >= k->ne[1]);
    }
    if (max_bias > 0.0f) {
        LM_GGML_ASSERT(mask);
    }
    // checked by ggml's kernel
    LM_GGML_ASSERT(q->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(q->nb[0] == lm_ggml_type_size(q->type));
    LM_GGML_ASSERT(k->nb[0] == lm_ggml_type_size(k->type));
    LM_GGML_ASSERT(v->nb[0] == lm_ggml_type_size(v->type));
    LM_GGML_ASSERT(v->ne[1] == k->ne[1]);
    LM_GGML_ASSERT(q->ne[2] % v->ne[2] == 0 && q->ne[3] % v->ne[3] == 0);
    LM_GGML_ASSERT(fa_kv_type_ok(k) && fa_kv_type_ok(v));

    // the result is permuted: [n_embd_v, n_head, n_batch, ne3]
    const int64_t ne[4] = { v->ne[0], q->ne[2], q->ne[1], q->ne[3] };
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    const float p[3] = { scale, max_bias, logit_softcap };
    lm_ggml_set_op_params(r, p, sizeof(p));
    r->op = LM_GGML_OP_FLASH_ATTN_EXT;
    r->src[0] = q;
    r->src[1] = k;
    r->src[2] = v;
    r->src[3] = mask;
    return r;
}

void lm_ggml_flash_attn_ext_set_prec(struct lm_ggml_tensor * a, enum lm_ggml_prec prec) {
    LM_GGML_ASSERT(a->op == LM_GGML_OP_FLASH_ATTN_EXT);
    lm_ggml_set_op_params_i32(a, FA_PREC_SLOT, (int32_t) prec);
}

enum lm_ggml_prec lm_ggml_flash_attn_ext_get_prec(const struct lm_ggml_tensor * a) {
    LM_GGML_ASSERT(a->op == LM_GGML_OP_FLASH_ATTN_EXT);
    return (enum lm_ggml_prec) lm_ggml_get_op_params_i32(a, FA_PREC_SLOT);
}

// Upstream ggml stops here too: its flash_attn_back was never adapted to
// flash_attn_ext, and its constructor aborts unconditionally. Kept as a
// (recoverable) abort so that code written against the API links and fails the same way.
struct lm_ggml_tensor * lm_ggml_flash_attn_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * q, struct lm_ggml_tensor * k,
        struct lm_ggml_tensor * v, struct lm_ggml_tensor * d, bool masked) {
    (void) ctx; (void) q; (void) k; (void) v; (void) d; (void) masked;
    LM_GGML_ABORT("flash_attn_back: not supported (ggml has no backward pass of flash_attn_ext)");
}
