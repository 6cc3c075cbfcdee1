// ctor-shape.c - constructors of the ops that move or generate elements:
// repeat, repeat_back, concat, diag, pad, upscale(_ext), arange,
// timestep_embedding. The kernels are in cpu/ops-shape.c.
#include "ctor-impl.h"

struct lm_ggml_tensor * lm_ggml_repeat(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(lm_ggml_can_repeat(a, b));
    LM_GGML_ASSERT(!lm_ggml_is_quantized(a->type));
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, b->ne);
    result->op     = LM_GGML_OP_REPEAT;
    result->src[0] = a;
    return result;
}

// sums the repetitions of b's shape inside a back into b's shape
struct lm_ggml_tensor * lm_ggml_repeat_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(lm_ggml_can_repeat(b, a));
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, b->ne);
    result->op     = LM_GGML_OP_REPEAT_BACK;
    result->src[0] = a;
    return result;
}

// op_params: i32 { dim }
struct lm_ggml_tensor * lm_ggml_concat(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int dim) {
    LM_GGML_ASSERT(dim >= 0 && dim < LM_GGML_MAX_DIMS);
    LM_GGML_ASSERT(a->type == b->type);
    LM_GGML_ASSERT(!lm_ggml_is_quantized(a->type));
    int64_t ne[LM_GGML_MAX_DIMS];
    for (int d = 0; d < LM_GGML_MAX_DIMS; d++) {
        if (d == dim) {
            ne[d] = a->ne[d] + b->ne[d];
            continue;
        }
        LM_GGML_ASSERT(a->ne[d] == b->ne[d]);
        ne[d] = a->ne[d];
    }
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, ne);
    lm_ggml_set_op_params_i32(result, 0, dim);
    result->op     = LM_GGML_OP_CONCAT;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// [n, 1, c, d] -> [n, n, c, d] with the vector on the diagonal
struct lm_ggml_tensor * lm_ggml_diag(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    LM_GGML_ASSERT(a->ne[1] == 1);
    LM_GGML_ASSERT(!lm_ggml_is_quantized(a->type));
    const int64_t ne[LM_GGML_MAX_DIMS] = { a->ne[0], a->ne[0], a->ne[2], a->ne[3] };
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, a->type, LM_GGML_MAX_DIMS, ne);
    result->op     = LM_GGML_OP_DIAG;
    result->src[0] = a;
    return result;
}

// zero padding at the end of each dimension
struct lm_ggml_tensor * lm_ggml_pad(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int p0, int p1, int p2, int p3) {
    LM_GGML_ASSERT(!lm_ggml_is_quantized(a->type));
    LM_GGML_ASSERT(a->ne[0] + p0 >= 0 && a->ne[1] + p1 >= 0 && a->ne[2] + p2 >= 0 && a->ne[3] + p3 >= 0);
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_4d(ctx, a->type,
            a->ne[0] + p0, a->ne[1] + p1, a->ne[2] + p2, a->ne[3] + p3);
    result->op     = LM_GGML_OP_PAD;
    result->src[0] = a;
    return result;
}

// nearest-neighbour upscale to the given size (never smaller than a)
struct lm_ggml_tensor * lm_ggml_upscale_ext(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int ne0, int ne1, int ne2, int ne3) {
    LM_GGML_ASSERT(a->ne[0] <= ne0);
    LM_GGML_ASSERT(a->ne[1] <= ne1);
    LM_GGML_ASSERT(a->ne[2] <= ne2);
    LM_GGML_ASSERT(a->ne[3] <= ne3);
    LM_GGML_ASSERT(!lm_ggml_is_quantized(a->type));
    // an empty a has nothing to sample from
    LM_GGML_ASSERT(!lm_ggml_is_empty(a) || (int64_t) ne0*ne1*ne2*ne3 == 0);
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    result->op     = LM_GGML_OP_UPSCALE;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_upscale(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int scale_factor) {
    LM_GGML_ASSERT(scale_factor >= 1);
    return lm_ggml_upscale_ext(ctx, a, (int)(a->ne[0]*scale_factor), (int)(a->ne[1]*scale_factor), (int) a->ne[2], (int) a->ne[3]);
}

// op_params: f32 { start, stop, step }
struct lm_ggml_tensor * lm_ggml_arange(struct lm_ggml_context * ctx, float start, float stop, float step) {
    LM_GGML_ASSERT(stop > start);
    const float n = ceilf((stop - start) / step);
    LM_GGML_ASSERT(n >= 0.0f && n < 9.0e18f); // also rejects NaN (step 0, non-finite bounds)
    const int64_t steps = (int64_t) n;
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, steps);
    lm_ggml_set_op_params_f32(result, 0, start);
    lm_ggml_set_op_params_f32(result, 1, stop);
    lm_ggml_set_op_params_f32(result, 2, step);
    result->op = LM_GGML_OP_ARANGE;
    return result;
}

// op_params: i32 { dim, max_period }; result [dim rounded up to even, n]
struct lm_ggml_tensor * lm_ggml_timestep_embedding(struct lm_ggml_context * ctx, struct lm_ggml_tensor * timesteps, int dim, int max_period) {
    LM_GGML_ASSERT(timesteps->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(dim >= 0);
    const int actual_dim = (dim % 2 != 0) ? dim + 1 : dim;
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, actual_dim, timesteps->ne[0]);
    lm_ggml_set_op_params_i32(result, 0, dim);
    lm_ggml_set_op_params_i32(result, 1, max_period);
    result->op     = LM_GGML_OP_TIMESTEP_EMBEDDING;
    result->src[0] = timesteps;
    return result;
}
