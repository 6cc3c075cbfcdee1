// ctor-reduce.c - constructors of reductions and sorting: sum, sum_rows, mean,
// argmax, count_equal, argsort, top_k. The kernels are in cpu/ops-reduce.c.
#include "ctor-impl.h"

struct lm_ggml_tensor * lm_ggml_sum(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    LM_GGML_ASSERT(lm_is_plain_float(a->type));
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_1d(ctx, a->type, 1);
    result->op     = LM_GGML_OP_SUM;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_sum_rows(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    LM_GGML_ASSERT(lm_is_plain_float(a->type));
    const int64_t ne[LM_GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, ne);
    result->op     = LM_GGML_OP_SUM_ROWS;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_mean(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    LM_GGML_ASSERT(lm_is_plain_float(a->type));
    const int64_t ne[LM_GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, LM_GGML_MAX_DIMS, ne);
    result->op     = LM_GGML_OP_MEAN;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_argmax(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    LM_GGML_ASSERT(lm_ggml_is_matrix(a));
    LM_GGML_ASSERT(a->ne[0] <= INT32_MAX);
    LM_GGML_ASSERT(lm_is_plain_float(a->type));
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, a->ne[1]);
    result->op     = LM_GGML_OP_ARGMAX;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_count_equal(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b));
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_I32 && b->type == LM_GGML_TYPE_I32);
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I64, 1);
    result->op     = LM_GGML_OP_COUNT_EQUAL;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// op_params: i32 { order }
struct lm_ggml_tensor * lm_ggml_argsort(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_sort_order order) {
    LM_GGML_ASSERT(a->ne[0] <= INT32_MAX);
    LM_GGML_ASSERT(lm_is_plain_float(a->type));
    LM_GGML_ASSERT(order == LM_GGML_SORT_ORDER_ASC || order == LM_GGML_SORT_ORDER_DESC);
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_I32, LM_GGML_MAX_DIMS, a->ne);
    lm_ggml_set_op_params_i32(result, 0, (int32_t) order);
    result->op     = LM_GGML_OP_ARGSORT;
    result->src[0] = a;
    return result;
}

// indices of the k largest values of each row, largest first
struct lm_ggml_tensor * lm_ggml_top_k(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int k) {
    LM_GGML_ASSERT(k >= 0 && a->ne[0] >= k);
    struct lm_ggml_tensor * result = lm_ggml_argsort(ctx, a, LM_GGML_SORT_ORDER_DESC);
    return lm_ggml_view_4d(ctx, result, k, result->ne[1], result->ne[2], result->ne[3],
                           result->nb[1], result->nb[2], result->nb[3], 0);
}
