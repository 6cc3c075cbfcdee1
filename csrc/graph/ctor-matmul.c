// ctor-matmul.c - constructors of mul_mat (+ its precision flag), mul_mat_id
// and out_prod. They check shapes only, as ggml's do; the kernels in
// cpu/ops-matmul.c refuse a node of types they do not handle when computing.
#include "ctor-impl.h"

// b's batches must repeat a's a whole number of times (a zero-sized a only
// pairs with a zero-sized b: no division by zero).
static bool mm_bcast_ok(int64_t na, int64_t nb) {
    return na == 0 ? nb == 0 : nb % na == 0;
}

struct lm_ggml_tensor * lm_ggml_mul_mat(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(a->ne[0] == b->ne[0] && mm_bcast_ok(a->ne[2], b->ne[2]) && mm_bcast_ok(a->ne[3], b->ne[3]) &&
                   "mul_mat: shapes do not match");
    LM_GGML_ASSERT(!lm_ggml_is_transposed(a));
    const int64_t ne[4] = { a->ne[1], b->ne[1], b->ne[2], b->ne[3] };
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    result->op     = LM_GGML_OP_MUL_MAT;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

void lm_ggml_mul_mat_set_prec(struct lm_ggml_tensor * a, enum lm_ggml_prec prec) {
    LM_GGML_ASSERT(a->op == LM_GGML_OP_MUL_MAT);
    lm_ggml_set_op_params_i32(a, 0, (int32_t) prec);
}

// as: [K, N, n_as] one matrix per expert; b: [K, n_b, n_tokens];
// ids: i32 [n_used, n_tokens] -> [N, n_used, n_tokens]. Slot e of token t
// multiplies expert ids[e, t] with column (e % n_b) of b for that token.
struct lm_ggml_tensor * lm_ggml_mul_mat_id(struct lm_ggml_context * ctx, struct lm_ggml_tensor * as, struct lm_ggml_tensor * b,
        struct lm_ggml_tensor * ids) {
    LM_GGML_ASSERT(!lm_ggml_is_transposed(as));
    LM_GGML_ASSERT(ids->type == LM_GGML_TYPE_I32);
    LM_GGML_ASSERT(as->ne[3] == 1);
    LM_GGML_ASSERT(b->ne[3] == 1);
    LM_GGML_ASSERT(ids->ne[2] == 1 && ids->ne[3] == 1);
    LM_GGML_ASSERT(ids->ne[1] == b->ne[2]);
    LM_GGML_ASSERT(as->ne[0] == b->ne[0]);
    LM_GGML_ASSERT(b->ne[1] > 0 ? ids->ne[0] % b->ne[1] == 0 : ids->ne[0] == 0);
    const int64_t ne[4] = { as->ne[1], ids->ne[0], b->ne[2], 1 };
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    result->op     = LM_GGML_OP_MUL_MAT_ID;
    result->src[0] = as;
    result->src[1] = b;
    result->src[2] = ids;
    return result;
}

// a: [m, n, ...], b: [p, n, ...] -> [m, p, ...]: sum over n of outer products.
struct lm_ggml_tensor * lm_ggml_out_prod(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(a->ne[1] == b->ne[1] && mm_bcast_ok(a->ne[2], b->ne[2]) && mm_bcast_ok(a->ne[3], b->ne[3]) &&
                   "out_prod: shapes do not match");
    LM_GGML_ASSERT(!lm_ggml_is_transposed(a));
    const int64_t ne[4] = { a->ne[0], b->ne[0], b->ne[2], b->ne[3] };
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    result->op     = LM_GGML_OP_OUT_PROD;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}
