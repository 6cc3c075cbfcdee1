// ctor-copy.c - constructors of data movement: dup/cpy/cast/cont, set,
// get_rows and get_rows_back. The kernels (and the copy engine) are in
// cpu/ops-copy.c.
#include "ctor-impl.h"

bool lm_copy_supported(const struct lm_ggml_tensor * src, const struct lm_ggml_tensor * dst) {
    const enum lm_ggml_type st = src->type, dt = dst->type;
    const bool sq = lm_ggml_is_quantized(st), dq = lm_ggml_is_quantized(dt);
    if (sq && (src->nb[0] != lm_ggml_type_size(st) || dst->ne[0] % lm_ggml_blck_size(st) != 0)) return false;
    if (dq && (dst->nb[0] != lm_ggml_type_size(dt) || src->ne[0] % lm_ggml_blck_size(dt) != 0)) return false;
    if (st == dt) return true;
    return lm_type_to_f32_row(st) != NULL && lm_type_from_f32_row(dt) != NULL;
}

// (the name set's assertion has always printed)
static bool copy_supported(const struct lm_ggml_tensor * src, const struct lm_ggml_tensor * dst) {
    return lm_copy_supported(src, dst);
}

// ---------------------------------------------------------------- constructors: dup, cpy, cast, cont

static struct lm_ggml_tensor * dup_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, bool inplace) {
    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    result->op     = LM_GGML_OP_DUP;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_dup(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    return dup_impl(ctx, a, false);
}

struct lm_ggml_tensor * lm_ggml_dup_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    return dup_impl(ctx, a, true);
}

struct lm_ggml_tensor * lm_ggml_cpy(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(lm_ggml_nelements(a) == lm_ggml_nelements(b));
    // the result is a view of the destination, so later ops see the copied data
    struct lm_ggml_tensor * result = lm_ggml_view_tensor(ctx, b);
    if (strlen(b->name) > 0) {
        lm_ggml_format_name(result, "%s (copy of %s)", b->name, a->name);
    } else {
        lm_ggml_format_name(result, "%s (copy)", a->name);
    }
    result->op     = LM_GGML_OP_CPY;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct lm_ggml_tensor * lm_ggml_cast(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_type type) {
    struct lm_ggml_tensor * result = lm_ggml_new_tensor(ctx, type, LM_GGML_MAX_DIMS, a->ne);
    lm_ggml_format_name(result, "%s (copy)", a->name);
    result->op     = LM_GGML_OP_CPY;
    result->src[0] = a;
    result->src[1] = result;
    return result;
}

struct lm_ggml_tensor * lm_ggml_cont_4d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a,
        int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    LM_GGML_ASSERT(ne0 >= 0 && ne1 >= 0 && ne2 >= 0 && ne3 >= 0);
    LM_GGML_ASSERT(lm_ggml_nelements(a) == ne0 * ne1 * ne2 * ne3);
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    lm_ggml_format_name(result, "%s (cont)", a->name);
    result->op     = LM_GGML_OP_CONT;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_cont(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    return lm_ggml_cont_4d(ctx, a, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
}
struct lm_ggml_tensor * lm_ggml_cont_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0) {
    return lm_ggml_cont_4d(ctx, a, ne0, 1, 1, 1);
}
struct lm_ggml_tensor * lm_ggml_cont_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1) {
    return lm_ggml_cont_4d(ctx, a, ne0, ne1, 1, 1);
}
struct lm_ggml_tensor * lm_ggml_cont_3d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    return lm_ggml_cont_4d(ctx, a, ne0, ne1, ne2, 1);
}

// ---------------------------------------------------------------- set
//
// op_params (int32): nb1, nb2, nb3, offset, inplace — the layout the backward
// pass reads back.

static struct lm_ggml_tensor * set_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    LM_GGML_ASSERT(lm_ggml_nelements(a) >= lm_ggml_nelements(b));
    LM_GGML_ASSERT(a->type == b->type && !lm_ggml_is_quantized(a->type) && "set: a and b must have the same plain type");
    LM_GGML_ASSERT(offset < ((size_t) 1 << 30));
    LM_GGML_ASSERT(nb1 <= INT32_MAX && nb2 <= INT32_MAX && nb3 <= INT32_MAX);

    struct lm_ggml_tensor * result = inplace ? lm_ggml_view_tensor(ctx, a) : lm_ggml_dup_tensor(ctx, a);
    LM_GGML_ASSERT(copy_supported(a, result));
    lm_window_check(result, b, nb1, nb2, nb3, offset);
    return lm_window_op(result, LM_GGML_OP_SET, a, b, nb1, nb2, nb3, offset, inplace);
}

struct lm_ggml_tensor * lm_ggml_set(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return set_impl(ctx, a, b, nb1, nb2, nb3, offset, false);
}
struct lm_ggml_tensor * lm_ggml_set_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return set_impl(ctx, a, b, nb1, nb2, nb3, offset, true);
}
struct lm_ggml_tensor * lm_ggml_set_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t offset) {
    return set_impl(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, false);
}
struct lm_ggml_tensor * lm_ggml_set_1d_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t offset) {
    return set_impl(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, true);
}
struct lm_ggml_tensor * lm_ggml_set_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        size_t nb1, size_t offset) {
    return set_impl(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, false);
}
struct lm_ggml_tensor * lm_ggml_set_2d_inplace(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        size_t nb1, size_t offset) {
    return set_impl(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, true);
}

// ---------------------------------------------------------------- get_rows
//
// a: [n0, rows, ne2, ne3]; b: i32 [n, ne2, ne3'] -> [n0, n, ne2, ne3'] rows of a,
// converted to f32 (i32 data is copied as i32).

struct lm_ggml_tensor * lm_ggml_get_rows(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(a->ne[2] == b->ne[1]);
    LM_GGML_ASSERT(b->ne[3] == 1);
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_I32);
    LM_GGML_ASSERT(b->ne[2] <= a->ne[3] && "get_rows: b has more batches than a");
    LM_GGML_ASSERT((a->type == LM_GGML_TYPE_I32 || lm_type_to_f32_row(a->type) != NULL) && "get_rows: unsupported type");
    LM_GGML_ASSERT((a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_I32 || a->nb[0] == lm_ggml_type_size(a->type)) &&
                   "get_rows: rows of a must be contiguous");
    const enum lm_ggml_type type = a->type == LM_GGML_TYPE_I32 ? LM_GGML_TYPE_I32 : LM_GGML_TYPE_F32;
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_4d(ctx, type, a->ne[0], b->ne[0], b->ne[1], b->ne[2]);
    result->op     = LM_GGML_OP_GET_ROWS;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// ---------------------------------------------------------------- get_rows_back
//
// a: grad of get_rows [n0, n]; b: i32 indices [n]; c: only gives the shape
// [n0, rows] of the result.

struct lm_ggml_tensor * lm_ggml_get_rows_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        struct lm_ggml_tensor * c) {
    LM_GGML_ASSERT(lm_ggml_is_matrix(a) && lm_ggml_is_vector(b) && b->type == LM_GGML_TYPE_I32);
    LM_GGML_ASSERT(lm_ggml_is_matrix(c) && (a->ne[0] == c->ne[0]));
    LM_GGML_ASSERT(a->ne[1] >= b->ne[0] && "get_rows_back: fewer rows of grad than indices");
    LM_GGML_ASSERT((a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_F16) && "get_rows_back: a must be f32 or f16");
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, c->ne[0], c->ne[1]);
    result->op     = LM_GGML_OP_GET_ROWS_BACK;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}
