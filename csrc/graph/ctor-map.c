// ctor-map.c - constructors of the user-function ops: map_custom1/2/3
// (+_inplace) and the deprecated map_unary_f32, map_binary_f32,
// map_custom{1,2,3}_f32 forms. The kernels are in cpu/ops-map.c.
//
// op_params layouts are ggml's, since other code reads them back:
// - deprecated forms: the function pointer itself at op_params[0..];
// - map_custom{1,2,3}: struct lm_map_custom{1,2,3}_params (ggml-op-params.h).
#include "ctor-impl.h"

static struct lm_ggml_tensor * lm_map_node(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, bool inplace,
        enum lm_ggml_op op, const void * prm, size_t prm_size) {
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    lm_ggml_set_op_params(result, prm, prm_size);
    result->op     = op;
    result->src[0] = a;
    return result;
}

static struct lm_ggml_tensor * lm_map_unary_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        lm_ggml_unary_op_f32_t fun, bool inplace) {
    LM_GGML_ASSERT(fun != NULL);
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 && a->nb[0] == sizeof(float));
    return lm_map_node(ctx, a, inplace, LM_GGML_OP_MAP_UNARY, &fun, sizeof(fun));
}
struct lm_ggml_tensor * lm_ggml_map_unary_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_unary_op_f32_t fun) {
    return lm_map_unary_impl(ctx, a, fun, false);
}
struct lm_ggml_tensor * lm_ggml_map_unary_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_unary_op_f32_t fun) {
    return lm_map_unary_impl(ctx, a, fun, true);
}

static struct lm_ggml_tensor * lm_map_binary_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_binary_op_f32_t fun, bool inplace) {
    LM_GGML_ASSERT(fun != NULL);
    LM_GGML_ASSERT(lm_ggml_are_same_shape(a, b));
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 && a->nb[0] == sizeof(float));
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_F32 && b->nb[0] == sizeof(float));
    struct lm_ggml_tensor * result = lm_map_node(ctx, a, inplace, LM_GGML_OP_MAP_BINARY, &fun, sizeof(fun));
    result->src[1] = b;
    return result;
}
struct lm_ggml_tensor * lm_ggml_map_binary_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_binary_op_f32_t fun) {
    return lm_map_binary_impl(ctx, a, b, fun, false);
}
struct lm_ggml_tensor * lm_ggml_map_binary_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_binary_op_f32_t fun) {
    return lm_map_binary_impl(ctx, a, b, fun, true);
}

struct lm_ggml_tensor * lm_ggml_map_custom1_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_custom1_op_f32_t fun) {
    LM_GGML_ASSERT(fun != NULL);
    return lm_map_node(ctx, a, false, LM_GGML_OP_MAP_CUSTOM1_F32, &fun, sizeof(fun));
}
struct lm_ggml_tensor * lm_ggml_map_custom1_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, lm_ggml_custom1_op_f32_t fun) {
    LM_GGML_ASSERT(fun != NULL);
    return lm_map_node(ctx, a, true, LM_GGML_OP_MAP_CUSTOM1_F32, &fun, sizeof(fun));
}

static struct lm_ggml_tensor * lm_map_custom2_f32_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_custom2_op_f32_t fun, bool inplace) {
    LM_GGML_ASSERT(fun != NULL);
    struct lm_ggml_tensor * result = lm_map_node(ctx, a, inplace, LM_GGML_OP_MAP_CUSTOM2_F32, &fun, sizeof(fun));
    result->src[1] = b;
    return result;
}
struct lm_ggml_tensor * lm_ggml_map_custom2_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_custom2_op_f32_t fun) {
    return lm_map_custom2_f32_impl(ctx, a, b, fun, false);
}
struct lm_ggml_tensor * lm_ggml_map_custom2_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_custom2_op_f32_t fun) {
    return lm_map_custom2_f32_impl(ctx, a, b, fun, true);
}

static struct lm_ggml_tensor * lm_map_custom3_f32_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_f32_t fun, bool inplace) {
    LM_GGML_ASSERT(fun != NULL);
    struct lm_ggml_tensor * result = lm_map_node(ctx, a, inplace, LM_GGML_OP_MAP_CUSTOM3_F32, &fun, sizeof(fun));
    result->src[1] = b;
    result->src[2] = c;
    return result;
}
struct lm_ggml_tensor * lm_ggml_map_custom3_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_f32_t fun) {
    return lm_map_custom3_f32_impl(ctx, a, b, c, fun, false);
}
struct lm_ggml_tensor * lm_ggml_map_custom3_inplace_f32(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_f32_t fun) {
    return lm_map_custom3_f32_impl(ctx, a, b, c, fun, true);
}

static void lm_check_n_tasks(int n_tasks) {
    LM_GGML_ASSERT(n_tasks == LM_GGML_N_TASKS_MAX || n_tasks > 0);
}

static struct lm_ggml_tensor * lm_map_custom1_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        lm_ggml_custom1_op_t fun, int n_tasks, void * userdata, bool inplace) {
    LM_GGML_ASSERT(fun != NULL);
    lm_check_n_tasks(n_tasks);
    const struct lm_map_custom1_params p = { fun, n_tasks, userdata };
    return lm_map_node(ctx, a, inplace, LM_GGML_OP_MAP_CUSTOM1, &p, sizeof(p));
}
struct lm_ggml_tensor * lm_ggml_map_custom1(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        lm_ggml_custom1_op_t fun, int n_tasks, void * userdata) {
    return lm_map_custom1_impl(ctx, a, fun, n_tasks, userdata, false);
}
struct lm_ggml_tensor * lm_ggml_map_custom1_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        lm_ggml_custom1_op_t fun, int n_tasks, void * userdata) {
    return lm_map_custom1_impl(ctx, a, fun, n_tasks, userdata, true);
}

static struct lm_ggml_tensor * lm_map_custom2_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_custom2_op_t fun, int n_tasks, void * userdata, bool inplace) {
    LM_GGML_ASSERT(fun != NULL);
    lm_check_n_tasks(n_tasks);
    const struct lm_map_custom2_params p = { fun, n_tasks, userdata };
    struct lm_ggml_tensor * result = lm_map_node(ctx, a, inplace, LM_GGML_OP_MAP_CUSTOM2, &p, sizeof(p));
    result->src[1] = b;
    return result;
}
struct lm_ggml_tensor * lm_ggml_map_custom2(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    return lm_map_custom2_impl(ctx, a, b, fun, n_tasks, userdata, false);
}
struct lm_ggml_tensor * lm_ggml_map_custom2_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, lm_ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    return lm_map_custom2_impl(ctx, a, b, fun, n_tasks, userdata, true);
}

static struct lm_ggml_tensor * lm_map_custom3_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_t fun, int n_tasks, void * userdata, bool inplace) {
    LM_GGML_ASSERT(fun != NULL);
    lm_check_n_tasks(n_tasks);
    const struct lm_map_custom3_params p = { fun, n_tasks, userdata };
    struct lm_ggml_tensor * result = lm_map_node(ctx, a, inplace, LM_GGML_OP_MAP_CUSTOM3, &p, sizeof(p));
    result->src[1] = b;
    result->src[2] = c;
    return result;
}
struct lm_ggml_tensor * lm_ggml_map_custom3(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    return lm_map_custom3_impl(ctx, a, b, c, fun, n_tasks, userdata, false);
}
struct lm_ggml_tensor * lm_ggml_map_custom3_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, struct lm_ggml_tensor * c, lm_ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    return lm_map_custom3_impl(ctx, a, b, c, fun, n_tasks, userdata, true);
}
