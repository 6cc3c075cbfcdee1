// ctor-train.c - constructors of the loss and optimizer ops:
// cross_entropy_loss (+ its backward) and the AdamW step. They check
// everything, so the kernels in cpu/ops-train.c never assert.
#include "ctor-impl.h"

struct lm_ggml_tensor * lm_ggml_cross_entropy_loss(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 && b->type == LM_GGML_TYPE_F32 && "cross_entropy_loss: logits and labels must be f32");
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b) && "cross_entropy_loss: logits and labels must have the same shape");
    LM_GGML_ASSERT(lm_ggml_nelements(a) > 0);

    struct lm_ggml_tensor * result = lm_ggml_new_tensor_1d(ctx, a->type, 1);
    result->op     = LM_GGML_OP_CROSS_ENTROPY_LOSS;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct lm_ggml_tensor * lm_ggml_cross_entropy_loss_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, struct lm_ggml_tensor * c) {
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 && b->type == LM_GGML_TYPE_F32 && c->type == LM_GGML_TYPE_F32 &&
            "cross_entropy_loss_back: operands must be f32");
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b) && "cross_entropy_loss_back: logits and labels must have the same shape");
    LM_GGML_ASSERT(lm_ggml_is_scalar(c) && "cross_entropy_loss_back: the loss gradient must be a scalar");

    struct lm_ggml_tensor * result = lm_ggml_dup_tensor(ctx, a);
    result->op     = LM_GGML_OP_CROSS_ENTROPY_LOSS_BACK;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = c;
    return result;
}

struct lm_ggml_tensor * lm_ggml_opt_step_adamw(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * grad, struct lm_ggml_tensor * m, struct lm_ggml_tensor * v,
        struct lm_ggml_tensor * adamw_params) {
    LM_GGML_ASSERT((a->flags & LM_GGML_TENSOR_FLAG_PARAM) && "opt_step_adamw: the tensor is not a trainable parameter");
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 && grad->type == LM_GGML_TYPE_F32 &&
            m->type == LM_GGML_TYPE_F32 && v->type == LM_GGML_TYPE_F32 && "opt_step_adamw: tensors must be f32");
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, grad) && lm_ggml_are_same_shape(a, m) && lm_ggml_are_same_shape(a, v) &&
            "opt_step_adamw: param, grad, m and v must have the same shape");
    LM_GGML_ASSERT(adamw_params->type == LM_GGML_TYPE_F32 && lm_ggml_nelements(adamw_params) == 7 &&
            lm_ggml_is_contiguous(adamw_params) && "opt_step_adamw: adamw_params must be 7 contiguous f32");

    // the step updates a, m and v in place; the node itself is a view of a
    struct lm_ggml_tensor * result = lm_ggml_view_tensor(ctx, a);
    result->op     = LM_GGML_OP_OPT_STEP_ADAMW;
    result->src[0] = a;
    result->src[1] = grad;
    result->src[2] = m;
    result->src[3] = v;
    result->src[4] = adamw_params;
    return result;
}
