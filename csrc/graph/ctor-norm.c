// ctor-norm.c - constructors of the row normalisations: norm, rms_norm,
// rms_norm_back, group_norm, soft_max (+ext, +back) and the causal masks
// diag_mask_inf/zero. The kernels are in cpu/ops-norm.c.
#include "ctor-impl.h"

static void lm_check_f32_rows(const struct lm_ggml_tensor * a) {
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(a->nb[0] == sizeof(float));
}

static struct lm_ggml_tensor * lm_norm_like(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        enum lm_ggml_op op, float eps, bool inplace) {
    lm_check_f32_rows(a);
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    lm_ggml_set_op_params(result, &eps, sizeof(eps)); // f32 { eps }
    result->op     = op;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_norm(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float eps) {
    return lm_norm_like(ctx, a, LM_GGML_OP_NORM, eps, false);
}
struct lm_ggml_tensor * lm_ggml_norm_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float eps) {
    return lm_norm_like(ctx, a, LM_GGML_OP_NORM, eps, true);
}
struct lm_ggml_tensor * lm_ggml_rms_norm(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float eps) {
    return lm_norm_like(ctx, a, LM_GGML_OP_RMS_NORM, eps, false);
}
struct lm_ggml_tensor * lm_ggml_rms_norm_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float eps) {
    return lm_norm_like(ctx, a, LM_GGML_OP_RMS_NORM, eps, true);
}

// a: x, b: dy
struct lm_ggml_tensor * lm_ggml_rms_norm_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, float eps) {
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b));
    lm_check_f32_rows(b);
    struct lm_ggml_tensor * result = lm_norm_like(ctx, a, LM_GGML_OP_RMS_NORM_BACK, eps, false);
    result->src[1] = b;
    return result;
}

// op_params: i32 n_groups, f32 eps; groups split dimension 2
static struct lm_ggml_tensor * lm_group_norm_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        int n_groups, float eps, bool inplace) {
    lm_check_f32_rows(a);
    LM_GGML_ASSERT(n_groups > 0);
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    lm_ggml_set_op_params_i32(result, 0, n_groups);
    lm_ggml_set_op_params_f32(result, 1, eps);
    result->op     = LM_GGML_OP_GROUP_NORM;
    result->src[0] = a;
    return result;
}
struct lm_ggml_tensor * lm_ggml_group_norm(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_groups, float eps) {
    return lm_group_norm_impl(ctx, a, n_groups, eps, false);
}
struct lm_ggml_tensor * lm_ggml_group_norm_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_groups, float eps) {
    return lm_group_norm_impl(ctx, a, n_groups, eps, true);
}

// op_params: f32 { scale, max_bias }; src[1] = mask (optional)
static struct lm_ggml_tensor * lm_soft_max_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * mask, float scale, float max_bias, bool inplace) {
    LM_GGML_ASSERT(lm_ggml_is_contiguous(a));
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    if (mask) {
        LM_GGML_ASSERT(mask->type == LM_GGML_TYPE_F16 || mask->type == LM_GGML_TYPE_F32);
        LM_GGML_ASSERT(lm_ggml_is_contiguous(mask));
        LM_GGML_ASSERT(lm_ggml_is_matrix(mask));
        LM_GGML_ASSERT(mask->ne[0] == a->ne[0]);
        LM_GGML_ASSERT(mask->ne[1] >= a->ne[1]);
    }
    if (max_bias > 0.0f) {
        LM_GGML_ASSERT(mask);
    }
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    const float params[] = { scale, max_bias };
    lm_ggml_set_op_params(result, params, sizeof(params));
    result->op     = LM_GGML_OP_SOFT_MAX;
    result->src[0] = a;
    result->src[1] = mask;
    return result;
}
struct lm_ggml_tensor * lm_ggml_soft_max(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    return lm_soft_max_impl(ctx, a, NULL, 1.0f, 0.0f, false);
}
struct lm_ggml_tensor * lm_ggml_soft_max_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    return lm_soft_max_impl(ctx, a, NULL, 1.0f, 0.0f, true);
}
struct lm_ggml_tensor * lm_ggml_soft_max_ext(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * mask, float scale, float max_bias) {
    return lm_soft_max_impl(ctx, a, mask, scale, max_bias, false);
}

// a: dy, b: y = soft_max(x)
static struct lm_ggml_tensor * lm_soft_max_back_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, bool inplace) {
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b));
    lm_check_f32_rows(a);
    lm_check_f32_rows(b);
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    result->op     = LM_GGML_OP_SOFT_MAX_BACK;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}
struct lm_ggml_tensor * lm_ggml_soft_max_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_soft_max_back_impl(ctx, a, b, false);
}
struct lm_ggml_tensor * lm_ggml_soft_max_back_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_soft_max_back_impl(ctx, a, b, true);
}

// op_params: i32 { n_past }
static struct lm_ggml_tensor * lm_diag_mask_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        int n_past, enum lm_ggml_op op, bool inplace) {
    LM_GGML_ASSERT(lm_is_plain_float(a->type));
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    const int32_t params[] = { n_past };
    lm_ggml_set_op_params(result, params, sizeof(params));
    result->op     = op;
    result->src[0] = a;
    return result;
}
struct lm_ggml_tensor * lm_ggml_diag_mask_inf(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_past) {
    return lm_diag_mask_impl(ctx, a, n_past, LM_GGML_OP_DIAG_MASK_INF, false);
}
struct lm_ggml_tensor * lm_ggml_diag_mask_inf_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_past) {
    return lm_diag_mask_impl(ctx, a, n_past, LM_GGML_OP_DIAG_MASK_INF, true);
}
struct lm_ggml_tensor * lm_ggml_diag_mask_zero(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_past) {
    return lm_diag_mask_impl(ctx, a, n_past, LM_GGML_OP_DIAG_MASK_ZERO, false);
}
struct lm_ggml_tensor * lm_ggml_diag_mask_zero_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_past) {
    return lm_diag_mask_impl(ctx, a, n_past, LM_GGML_OP_DIAG_MASK_ZERO, true);
}
