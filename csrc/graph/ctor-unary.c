// ctor-unary.c - constructors of the one-input elementwise ops: sqr, sqrt,
// log, sin, cos, scale, clamp, leaky_relu, the LM_GGML_OP_UNARY family and
// silu_back. The kernels are in cpu/ops-unary.c.
#include "ctor-impl.h"

static struct lm_ggml_tensor * lm_unary_like(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        enum lm_ggml_op op, bool inplace) {
    LM_GGML_ASSERT(lm_is_plain_float(a->type));
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    result->op     = op;
    result->src[0] = a;
    return result;
}

#define LM_UNARY_LIKE(name, OP) \
    struct lm_ggml_tensor * lm_ggml_##name(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) { \
        return lm_unary_like(ctx, a, OP, false); \
    } \
    struct lm_ggml_tensor * lm_ggml_##name##_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) { \
        return lm_unary_like(ctx, a, OP, true); \
    }
LM_UNARY_LIKE(sqr,  LM_GGML_OP_SQR)
LM_UNARY_LIKE(sqrt, LM_GGML_OP_SQRT)
LM_UNARY_LIKE(log,  LM_GGML_OP_LOG)
LM_UNARY_LIKE(sin,  LM_GGML_OP_SIN)
LM_UNARY_LIKE(cos,  LM_GGML_OP_COS)

// op_params: f32 { s }
static struct lm_ggml_tensor * lm_scale_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float s, bool inplace) {
    LM_GGML_ASSERT(lm_is_padded_1d(a));
    struct lm_ggml_tensor * result = lm_unary_like(ctx, a, LM_GGML_OP_SCALE, inplace);
    lm_ggml_set_op_params(result, &s, sizeof(s));
    return result;
}
struct lm_ggml_tensor * lm_ggml_scale(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float s) {
    return lm_scale_impl(ctx, a, s, false);
}
struct lm_ggml_tensor * lm_ggml_scale_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float s) {
    return lm_scale_impl(ctx, a, s, true);
}

// op_params: f32 { min, max }. As in ggml, the result is always a
// view of a (clamp works in place).
struct lm_ggml_tensor * lm_ggml_clamp(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float min, float max) {
    struct lm_ggml_tensor * result = lm_unary_like(ctx, a, LM_GGML_OP_CLAMP, true);
    const float params[] = { min, max };
    lm_ggml_set_op_params(result, params, sizeof(params));
    return result;
}

// op_params: f32 { negative_slope }
struct lm_ggml_tensor * lm_ggml_leaky_relu(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, float negative_slope, bool inplace) {
    struct lm_ggml_tensor * result = lm_unary_like(ctx, a, LM_GGML_OP_LEAKY_RELU, inplace);
    lm_ggml_set_op_params(result, &negative_slope, sizeof(negative_slope));
    return result;
}

// op_params: i32 { op }
static struct lm_ggml_tensor * lm_unary_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        enum lm_ggml_unary_op op, bool inplace) {
    LM_GGML_ASSERT(lm_ggml_is_contiguous_1(a));
    LM_GGML_ASSERT(op >= 0 && op < LM_GGML_UNARY_OP_COUNT);
    struct lm_ggml_tensor * result = lm_unary_like(ctx, a, LM_GGML_OP_UNARY, inplace);
    lm_ggml_set_op_params_i32(result, 0, (int32_t) op);
    return result;
}
struct lm_ggml_tensor * lm_ggml_unary(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_unary_op op) {
    return lm_unary_impl(ctx, a, op, false);
}
struct lm_ggml_tensor * lm_ggml_unary_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_unary_op op) {
    return lm_unary_impl(ctx, a, op, true);
}

#define LM_NAMED_UNARY(name, OP) \
    struct lm_ggml_tensor * lm_ggml_##name(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) { \
        return lm_unary_impl(ctx, a, OP, false); \
    }
#define LM_NAMED_UNARY_INPLACE(name, OP) \
    LM_NAMED_UNARY(name, OP) \
    struct lm_ggml_tensor * lm_ggml_##name##_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) { \
        return lm_unary_impl(ctx, a, OP, true); \
    }
LM_NAMED_UNARY_INPLACE(abs,        LM_GGML_UNARY_OP_ABS)
LM_NAMED_UNARY_INPLACE(sgn,        LM_GGML_UNARY_OP_SGN)
LM_NAMED_UNARY_INPLACE(neg,        LM_GGML_UNARY_OP_NEG)
LM_NAMED_UNARY_INPLACE(step,       LM_GGML_UNARY_OP_STEP)
LM_NAMED_UNARY_INPLACE(tanh,       LM_GGML_UNARY_OP_TANH)
LM_NAMED_UNARY_INPLACE(elu,        LM_GGML_UNARY_OP_ELU)
LM_NAMED_UNARY_INPLACE(relu,       LM_GGML_UNARY_OP_RELU)
LM_NAMED_UNARY_INPLACE(sigmoid,    LM_GGML_UNARY_OP_SIGMOID)
LM_NAMED_UNARY_INPLACE(gelu,       LM_GGML_UNARY_OP_GELU)
LM_NAMED_UNARY_INPLACE(gelu_quick, LM_GGML_UNARY_OP_GELU_QUICK)
LM_NAMED_UNARY_INPLACE(silu,       LM_GGML_UNARY_OP_SILU)
LM_NAMED_UNARY_INPLACE(exp,        LM_GGML_UNARY_OP_EXP)
LM_NAMED_UNARY(hardswish,          LM_GGML_UNARY_OP_HARDSWISH)
LM_NAMED_UNARY(hardsigmoid,        LM_GGML_UNARY_OP_HARDSIGMOID)

// a: x, b: dy
struct lm_ggml_tensor * lm_ggml_silu_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b));
    LM_GGML_ASSERT(lm_is_plain_float(b->type));
    struct lm_ggml_tensor * result = lm_unary_like(ctx, a, LM_GGML_OP_SILU_BACK, false);
    result->src[1] = b;
    return result;
}
