// ctor-elementwise.c - constructors of the binary elementwise ops: add
// (+cast), add1, acc, sub, mul, div. The kernels are in cpu/ops-elementwise.c.
//
// src1 broadcasts over src0 wherever lm_ggml_can_repeat(src1, src0) holds.
#include "ctor-impl.h"

static void lm_check_bin_operands(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(lm_ggml_can_repeat(b, a));
    LM_GGML_ASSERT(lm_type_rows_rw(a->type));
    LM_GGML_ASSERT(lm_is_plain_float(b->type));
    // block types are read and written a whole row at a time
    LM_GGML_ASSERT(!lm_ggml_is_quantized(a->type) || a->nb[0] == lm_ggml_type_size(a->type));
}

static struct lm_ggml_tensor * lm_bin_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, enum lm_ggml_op op, bool inplace) {
    lm_check_bin_operands(a, b);
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    result->op     = op;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct lm_ggml_tensor * lm_ggml_add(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_bin_impl(ctx, a, b, LM_GGML_OP_ADD, false);
}
struct lm_ggml_tensor * lm_ggml_add_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_bin_impl(ctx, a, b, LM_GGML_OP_ADD, true);
}
struct lm_ggml_tensor * lm_ggml_sub(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_bin_impl(ctx, a, b, LM_GGML_OP_SUB, false);
}
struct lm_ggml_tensor * lm_ggml_sub_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_bin_impl(ctx, a, b, LM_GGML_OP_SUB, true);
}
struct lm_ggml_tensor * lm_ggml_mul(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_bin_impl(ctx, a, b, LM_GGML_OP_MUL, false);
}
struct lm_ggml_tensor * lm_ggml_mul_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_bin_impl(ctx, a, b, LM_GGML_OP_MUL, true);
}
struct lm_ggml_tensor * lm_ggml_div(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_bin_impl(ctx, a, b, LM_GGML_OP_DIV, false);
}
struct lm_ggml_tensor * lm_ggml_div_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_bin_impl(ctx, a, b, LM_GGML_OP_DIV, true);
}

// a + b stored as `type`; as in ggml, only for f16/bf16/quantized a
// and b broadcasting whole rows.
struct lm_ggml_tensor * lm_ggml_add_cast(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, enum lm_ggml_type type) {
    LM_GGML_ASSERT(b->ne[0] == a->ne[0] && lm_ggml_can_repeat(b, a));
    LM_GGML_ASSERT(lm_ggml_is_quantized(a->type) || a->type == LM_GGML_TYPE_F16 || a->type == LM_GGML_TYPE_BF16);
    lm_check_bin_operands(a, b);
    LM_GGML_ASSERT(lm_type_rows_rw(type)); // also refuses numbers outside the type table
    LM_GGML_ASSERT(a->ne[0] % lm_ggml_blck_size(type) == 0);
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, type, LM_GGML_MAX_DIMS, a->ne);
    result->op     = LM_GGML_OP_ADD;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

static struct lm_ggml_tensor * lm_add1_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, bool inplace) {
    LM_GGML_ASSERT(lm_ggml_is_scalar(b));
    LM_GGML_ASSERT(lm_is_padded_1d(a));
    LM_GGML_ASSERT(lm_type_rows_rw(a->type));
    LM_GGML_ASSERT(lm_is_plain_float(b->type));
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    result->op     = LM_GGML_OP_ADD1;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}
struct lm_ggml_tensor * lm_ggml_add1(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_add1_impl(ctx, a, b, false);
}
struct lm_ggml_tensor * lm_ggml_add1_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_add1_impl(ctx, a, b, true);
}

// op_params: i32 { nb1, nb2, nb3, offset, inplace } (ggml's layout,
// strides truncated to 32 bits as there).
static struct lm_ggml_tensor * lm_acc_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        struct lm_ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    LM_GGML_ASSERT(lm_ggml_nelements(b) <= lm_ggml_nelements(a));
    LM_GGML_ASSERT(lm_ggml_is_contiguous(a));
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(nb1 <= INT32_MAX && nb2 <= INT32_MAX && nb3 <= INT32_MAX && offset <= INT32_MAX);
    lm_window_check(a, b, nb1, nb2, nb3, offset); // a is contiguous f32: the same window in the result
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    return lm_window_op(result, LM_GGML_OP_ACC, a, b, nb1, nb2, nb3, offset, inplace);
}
struct lm_ggml_tensor * lm_ggml_acc(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return lm_acc_impl(ctx, a, b, nb1, nb2, nb3, offset, false);
}
struct lm_ggml_tensor * lm_ggml_acc_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return lm_acc_impl(ctx, a, b, nb1, nb2, nb3, offset, true);
}
