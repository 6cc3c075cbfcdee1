// ggml.c - contexts, tensors, views and type helpers (logging and errors are
// in base/ggml-base.c). Graph construction lives in ggml-graph.c, the op
// constructors in graph/ctor-*.c, and compute in cpu/ggml-cpu.c (the kernels
// in cpu/ops-*.c).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../base/ggml-impl.h"
#include "../quant/ggml-traits.h"

extern const struct lm_ggml_type_traits lm_ggml_type_traits_table[LM_GGML_TYPE_COUNT];
extern const char * const lm_ggml_op_name_table[LM_GGML_OP_COUNT];
extern const char * const lm_ggml_op_symbol_table[LM_GGML_OP_COUNT];
extern const char * const lm_ggml_unary_op_name_table[LM_GGML_UNARY_OP_COUNT];

// ---------------------------------------------------------------- types

int64_t lm_ggml_blck_size(enum lm_ggml_type type) {
    return ((int) type >= 0 && type < LM_GGML_TYPE_COUNT) ? lm_ggml_type_traits_table[type].blck_size : 0;
}

size_t lm_ggml_type_size(enum lm_ggml_type type) {
    return ((int) type >= 0 && type < LM_GGML_TYPE_COUNT) ? lm_ggml_type_traits_table[type].type_size : 0;
}

size_t lm_ggml_row_size(enum lm_ggml_type type, int64_t ne) {
    LM_GGML_ASSERT(lm_type_valid(type));
    LM_GGML_ASSERT(ne >= 0 && ne % lm_ggml_blck_size(type) == 0);
    size_t size;
    LM_GGML_ASSERT(lm_size_mul(lm_ggml_type_size(type), (size_t)(ne / lm_ggml_blck_size(type)), &size) && "row size overflows");
    return size;
}

double lm_ggml_type_sizef(enum lm_ggml_type type) {
    return (double) lm_ggml_type_size(type) / (double) lm_ggml_blck_size(type);
}

const char * lm_ggml_type_name(enum lm_ggml_type type) {
    return ((int) type >= 0 && type < LM_GGML_TYPE_COUNT && lm_ggml_type_traits_table[type].type_name)
        ? lm_ggml_type_traits_table[type].type_name : "NONE";
}

bool lm_ggml_is_quantized(enum lm_ggml_type type) {
    return ((int) type >= 0 && type < LM_GGML_TYPE_COUNT) && lm_ggml_type_traits_table[type].is_quantized;
}

const char * lm_ggml_op_name(enum lm_ggml_op op) {
    return ((int) op >= 0 && op < LM_GGML_OP_COUNT) ? lm_ggml_op_name_table[op] : "NONE";
}

const char * lm_ggml_op_symbol(enum lm_ggml_op op) {
    return ((int) op >= 0 && op < LM_GGML_OP_COUNT) ? lm_ggml_op_symbol_table[op] : "NONE";
}

const char * lm_ggml_unary_op_name(enum lm_ggml_unary_op op) {
    return ((int) op >= 0 && op < LM_GGML_UNARY_OP_COUNT) ? lm_ggml_unary_op_name_table[op] : "NONE";
}

enum lm_ggml_unary_op lm_ggml_get_unary_op(const struct lm_ggml_tensor * tensor) {
    LM_GGML_ASSERT(tensor->op == LM_GGML_OP_UNARY);
    return (enum lm_ggml_unary_op) lm_ggml_get_op_params_i32(tensor, 0);
}

const char * lm_ggml_op_desc(const struct lm_ggml_tensor * t) {
    if (t->op == LM_GGML_OP_UNARY) {
        return lm_ggml_unary_op_name(lm_ggml_get_unary_op(t));
    }
    return lm_ggml_op_name(t->op);
}

enum lm_ggml_type lm_ggml_ftype_to_lm_ggml_type(enum lm_ggml_ftype ftype) {
    switch (ftype) {
        case LM_GGML_FTYPE_ALL_F32:        return LM_GGML_TYPE_F32;
        case LM_GGML_FTYPE_MOSTLY_F16:     return LM_GGML_TYPE_F16;
        case LM_GGML_FTYPE_MOSTLY_BF16:    return LM_GGML_TYPE_BF16;
        case LM_GGML_FTYPE_MOSTLY_Q4_0:    return LM_GGML_TYPE_Q4_0;
        case LM_GGML_FTYPE_MOSTLY_Q4_1:    return LM_GGML_TYPE_Q4_1;
        case LM_GGML_FTYPE_MOSTLY_Q5_0:    return LM_GGML_TYPE_Q5_0;
        case LM_GGML_FTYPE_MOSTLY_Q5_1:    return LM_GGML_TYPE_Q5_1;
        case LM_GGML_FTYPE_MOSTLY_Q8_0:    return LM_GGML_TYPE_Q8_0;
        case LM_GGML_FTYPE_MOSTLY_Q2_K:    return LM_GGML_TYPE_Q2_K;
        case LM_GGML_FTYPE_MOSTLY_Q3_K:    return LM_GGML_TYPE_Q3_K;
        case LM_GGML_FTYPE_MOSTLY_Q4_K:    return LM_GGML_TYPE_Q4_K;
        case LM_GGML_FTYPE_MOSTLY_Q5_K:    return LM_GGML_TYPE_Q5_K;
        case LM_GGML_FTYPE_MOSTLY_Q6_K:    return LM_GGML_TYPE_Q6_K;
        case LM_GGML_FTYPE_MOSTLY_IQ2_XXS: return LM_GGML_TYPE_IQ2_XXS;
        case LM_GGML_FTYPE_MOSTLY_IQ2_XS:  return LM_GGML_TYPE_IQ2_XS;
        case LM_GGML_FTYPE_MOSTLY_IQ3_XXS: return LM_GGML_TYPE_IQ3_XXS;
        case LM_GGML_FTYPE_MOSTLY_IQ1_S:   return LM_GGML_TYPE_IQ1_S;
        case LM_GGML_FTYPE_MOSTLY_IQ1_M:   return LM_GGML_TYPE_IQ1_M;
        case LM_GGML_FTYPE_MOSTLY_IQ4_NL:  return LM_GGML_TYPE_IQ4_NL;
        case LM_GGML_FTYPE_MOSTLY_IQ4_XS:  return LM_GGML_TYPE_IQ4_XS;
        case LM_GGML_FTYPE_MOSTLY_IQ3_S:   return LM_GGML_TYPE_IQ3_S;
        case LM_GGML_FTYPE_MOSTLY_IQ2_S:   return LM_GGML_TYPE_IQ2_S;
        case LM_GGML_FTYPE_MOSTLY_Q4_0_4_4: return LM_GGML_TYPE_Q4_0_4_4;
        case LM_GGML_FTYPE_MOSTLY_Q4_0_4_8: return LM_GGML_TYPE_Q4_0_4_8;
        case LM_GGML_FTYPE_MOSTLY_Q4_0_8_8: return LM_GGML_TYPE_Q4_0_8_8;
        case LM_GGML_FTYPE_UNKNOWN:
        case LM_GGML_FTYPE_MOSTLY_Q4_1_SOME_F16: break;
    }
    return LM_GGML_TYPE_COUNT;
}

// ---------------------------------------------------------------- tensor shape predicates

int64_t lm_ggml_nelements(const struct lm_ggml_tensor * t) {
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

int64_t lm_ggml_nrows(const struct lm_ggml_tensor * t) {
    return t->ne[1] * t->ne[2] * t->ne[3];
}

size_t lm_ggml_nbytes(const struct lm_ggml_tensor * t) {
    // one pass without calls or early exits: callers put it in loop conditions
    // (for (i = 0; i < lm_ggml_nbytes(t); i++)), so it is as hot as a loop body
    const unsigned ty = (unsigned) t->type;
    const int64_t ne0 = t->ne[0], ne1 = t->ne[1], ne2 = t->ne[2], ne3 = t->ne[3];
    const int64_t blck = ty < LM_GGML_TYPE_COUNT ? lm_ggml_type_traits_table[ty].blck_size : 0;
    if ((ne0 <= 0) | (ne1 <= 0) | (ne2 <= 0) | (ne3 <= 0) | (blck <= 0)) return 0;
    // bytes spanned from the first to one past the last element
    const size_t row0 = blck == 1 ? lm_ggml_type_traits_table[ty].type_size + (size_t)(ne0 - 1) * t->nb[0]
                                  : (size_t) ne0 * t->nb[0] / (size_t) blck;
    return row0 + (size_t)(ne1 - 1) * t->nb[1] + (size_t)(ne2 - 1) * t->nb[2] + (size_t)(ne3 - 1) * t->nb[3];
}

size_t lm_ggml_nbytes_pad(const struct lm_ggml_tensor * t) {
    return LM_GGML_PAD(lm_ggml_nbytes(t), LM_GGML_MEM_ALIGN);
}

size_t lm_ggml_element_size(const struct lm_ggml_tensor * t) {
    return lm_ggml_type_size(t->type);
}

bool lm_ggml_is_transposed(const struct lm_ggml_tensor * t) { return t->nb[0] > t->nb[1]; }

bool lm_ggml_is_permuted(const struct lm_ggml_tensor * t) {
    return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

bool lm_ggml_is_empty(const struct lm_ggml_tensor * t) { return lm_shape_has_zero(t); }

bool lm_ggml_is_scalar(const struct lm_ggml_tensor * t) { return t->ne[0] == 1 && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool lm_ggml_is_vector(const struct lm_ggml_tensor * t) { return t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool lm_ggml_is_matrix(const struct lm_ggml_tensor * t) { return t->ne[2] == 1 && t->ne[3] == 1; }
bool lm_ggml_is_3d    (const struct lm_ggml_tensor * t) { return t->ne[3] == 1; }

int lm_ggml_n_dims(const struct lm_ggml_tensor * t) {
    for (int i = LM_GGML_MAX_DIMS - 1; i >= 1; --i) {
        if (t->ne[i] > 1) return i + 1;
    }
    return 1;
}

// Dimensions of size 1 never matter. Dimension 0 must be packed (or a single
// block); dimensions above n must follow the one below without gaps; dimensions
// 1..n may have any stride.
static bool is_contiguous_n(const struct lm_ggml_tensor * t, int n) {
    size_t expect = lm_ggml_type_size(t->type);
    if (t->ne[0] != lm_ggml_blck_size(t->type) && t->nb[0] != expect) {
        return false;
    }
    expect *= t->ne[0] / lm_ggml_blck_size(t->type);
    for (int i = 1; i < LM_GGML_MAX_DIMS; i++) {
        if (t->ne[i] == 1) continue;
        if (i > n) {
            if (t->nb[i] != expect) return false;
            expect *= t->ne[i];
        } else {
            expect = t->ne[i] * t->nb[i];
        }
    }
    return true;
}

bool lm_ggml_is_contiguous  (const struct lm_ggml_tensor * t) { return is_contiguous_n(t, 0); }
bool lm_ggml_is_contiguous_0(const struct lm_ggml_tensor * t) { return is_contiguous_n(t, 0); }
bool lm_ggml_is_contiguous_1(const struct lm_ggml_tensor * t) { return is_contiguous_n(t, 1); }
bool lm_ggml_is_contiguous_2(const struct lm_ggml_tensor * t) { return is_contiguous_n(t, 2); }

bool lm_ggml_are_same_shape(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1) { return lm_shape_eq(t0, t1); }

bool lm_ggml_are_same_stride(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1) {
    return t0->nb[0] == t1->nb[0] && t0->nb[1] == t1->nb[1] && t0->nb[2] == t1->nb[2] && t0->nb[3] == t1->nb[3];
}

bool lm_ggml_can_repeat(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1) { return lm_shape_repeats(t0, t1); }

void lm_ggml_unravel_index(const struct lm_ggml_tensor * t, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3) {
    const int64_t ne0 = t->ne[0], ne1 = t->ne[1], ne2 = t->ne[2];
    const int64_t j3 = i / (ne2 * ne1 * ne0);
    const int64_t j2 = (i - j3 * ne2 * ne1 * ne0) / (ne1 * ne0);
    const int64_t j1 = (i - j3 * ne2 * ne1 * ne0 - j2 * ne1 * ne0) / ne0;
    const int64_t j0 = i - j3 * ne2 * ne1 * ne0 - j2 * ne1 * ne0 - j1 * ne0;
    if (i0) *i0 = j0;
    if (i1) *i1 = j1;
    if (i2) *i2 = j2;
    if (i3) *i3 = j3;
}

size_t lm_ggml_tensor_overhead(void) {
    return LM_GGML_OBJECT_SIZE + LM_GGML_TENSOR_SIZE;
}

// ---------------------------------------------------------------- contexts

_Static_assert(sizeof(struct lm_ggml_tensor) % LM_GGML_MEM_ALIGN == 0, "tensor size must be a multiple of LM_GGML_MEM_ALIGN");
_Static_assert(sizeof(struct lm_ggml_object) % LM_GGML_MEM_ALIGN == 0, "object size must be a multiple of LM_GGML_MEM_ALIGN");

struct lm_ggml_context * lm_ggml_init(struct lm_ggml_init_params params) {
    lm_ggml_fp16_table_init();

    if (params.mem_size == 0) {
        params.mem_size = LM_GGML_MEM_ALIGN;
    }
    struct lm_ggml_context * ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        return NULL;
    }
    const size_t mem_size = params.mem_buffer ? params.mem_size : LM_GGML_PAD(params.mem_size, LM_GGML_MEM_ALIGN);
    if (mem_size < params.mem_size) { // overflow when padding
        free(ctx);
        return NULL;
    }
    ctx->mem_size = mem_size;
    ctx->no_alloc = params.no_alloc;
    if (params.mem_buffer) {
        ctx->mem_buffer = params.mem_buffer;
        ctx->mem_buffer_owned = false;
    } else {
        void * p = NULL;
        if (lm_big_alloc(&p, mem_size) != 0) {
            LM_GGML_LOG_ERROR("%s: failed to allocate %.2f MB\n", __func__, mem_size / (1024.0 * 1024.0));
            free(ctx);
            return NULL;
        }
        ctx->mem_buffer = p;
        ctx->mem_buffer_owned = true;
    }
    LM_GGML_ASSERT(((uintptr_t) ctx->mem_buffer) % LM_GGML_MEM_ALIGN == 0);
    return ctx;
}

void lm_ggml_reset(struct lm_ggml_context * ctx) {
    if (ctx == NULL) return;
    ctx->n_objects = 0;
    ctx->objects_begin = NULL;
    ctx->objects_end = NULL;
}

void lm_ggml_free(struct lm_ggml_context * ctx) {
    if (ctx == NULL) return;
    if (ctx->mem_buffer_owned) {
        lm_big_free(ctx->mem_buffer);
    }
    free(ctx);
}

size_t lm_ggml_used_mem(const struct lm_ggml_context * ctx) {
    return ctx->objects_end == NULL ? 0 : ctx->objects_end->offs + ctx->objects_end->size;
}

bool lm_ggml_get_no_alloc(struct lm_ggml_context * ctx) { return ctx->no_alloc; }
void lm_ggml_set_no_alloc(struct lm_ggml_context * ctx, bool no_alloc) { ctx->no_alloc = no_alloc; }
void * lm_ggml_get_mem_buffer(const struct lm_ggml_context * ctx) { return ctx->mem_buffer; }
size_t lm_ggml_get_mem_size(const struct lm_ggml_context * ctx) { return ctx->mem_size; }

size_t lm_ggml_get_max_tensor_size(const struct lm_ggml_context * ctx) {
    size_t max_size = 0;
    for (struct lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t != NULL; t = lm_ggml_get_next_tensor(ctx, t)) {
        size_t bytes = lm_ggml_nbytes(t);
        max_size = bytes > max_size ? bytes : max_size;
    }
    return max_size;
}

struct lm_ggml_object * lm_ggml_new_object(struct lm_ggml_context * ctx, enum lm_ggml_object_type type, size_t size) {
    struct lm_ggml_object * last = ctx->objects_end;
    const size_t cur_end = last == NULL ? 0 : last->offs + last->size;
    const size_t size_needed = LM_GGML_PAD(size, LM_GGML_MEM_ALIGN);
    if (size_needed < size || cur_end + LM_GGML_OBJECT_SIZE + size_needed < size_needed ||
        cur_end + LM_GGML_OBJECT_SIZE + size_needed > ctx->mem_size) {
        LM_GGML_ABORT("not enough space in the context's memory pool: this object needs %zu bytes, %zu of %zu are free "
                      "(a context of at least %zu bytes would hold it)",
                      LM_GGML_OBJECT_SIZE + size_needed, ctx->mem_size - cur_end, ctx->mem_size,
                      size_needed < size ? SIZE_MAX : cur_end + LM_GGML_OBJECT_SIZE + size_needed);
    }
    struct lm_ggml_object * obj = (struct lm_ggml_object *)((char *) ctx->mem_buffer + cur_end);
    *obj = (struct lm_ggml_object) {
        .offs = cur_end + LM_GGML_OBJECT_SIZE,
        .size = size_needed,
        .next = NULL,
        .type = type,
    };
    if (last != NULL) {
        last->next = obj;
    } else {
        ctx->objects_begin = obj;
    }
    ctx->objects_end = obj;
    ctx->n_objects++;
    return obj;
}

void * lm_ggml_new_buffer(struct lm_ggml_context * ctx, size_t nbytes) {
    struct lm_ggml_object * obj = lm_ggml_new_object(ctx, LM_GGML_OBJECT_TYPE_WORK_BUFFER, nbytes);
    return (char *) ctx->mem_buffer + obj->offs;
}

// ---------------------------------------------------------------- tensors

struct lm_ggml_tensor * lm_ggml_new_tensor_impl(struct lm_ggml_context * ctx, enum lm_ggml_type type, int n_dims,
        const int64_t * ne, struct lm_ggml_tensor * view_src, size_t view_offs) {
    LM_GGML_ASSERT(ctx != NULL);
    LM_GGML_ASSERT(lm_type_valid(type) && "invalid tensor type");
    LM_GGML_ASSERT(n_dims >= 1 && n_dims <= LM_GGML_MAX_DIMS);

    int64_t shape[LM_GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    for (int i = 0; i < n_dims; i++) {
        LM_GGML_ASSERT(ne[i] >= 0 && "negative tensor dimension");
        shape[i] = ne[i];
    }
    LM_GGML_ASSERT(shape[0] % lm_ggml_blck_size(type) == 0 && "row length must be a multiple of the block size");

    // Sizes, refusing anything that overflows: the element count and the byte
    // size of the shape with empty dimensions counted as 1 (kernels derive
    // rows and strides from every dimension, even of an empty tensor), then
    // the actual byte size.
    int64_t nelem = 1;
    size_t full = lm_ggml_row_size(type, shape[0] > 0 ? shape[0] : lm_ggml_blck_size(type));
    size_t data_size = lm_ggml_row_size(type, shape[0]);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        const int64_t d = shape[i] > 0 ? shape[i] : 1;
        LM_GGML_ASSERT(!__builtin_mul_overflow(nelem, d, &nelem) && "tensor element count overflows");
        if (i > 0) {
            LM_GGML_ASSERT(lm_size_mul(full, (size_t) d, &full) && lm_size_mul(data_size, (size_t) shape[i], &data_size) &&
                           "tensor size overflows");
        }
    }
    LM_GGML_ASSERT(full <= SIZE_MAX / 2 && "tensor size overflows");

    if (view_src != NULL && view_src->view_src != NULL) {
        LM_GGML_ASSERT(lm_size_add(view_offs, view_src->view_offs, &view_offs) && "view offset overflows");
        view_src   = view_src->view_src;
    }
    size_t view_end;
    LM_GGML_ASSERT((view_src == NULL || data_size == 0 ||
                    (lm_size_add(data_size, view_offs, &view_end) && view_end <= lm_ggml_nbytes(view_src))) &&
                   "view is out of bounds of its source");

    void * data = view_src != NULL && view_src->data != NULL ? (char *) view_src->data + view_offs : NULL;
    const size_t obj_alloc_size = (view_src == NULL && !ctx->no_alloc) ? data_size : 0;

    struct lm_ggml_object * obj = lm_ggml_new_object(ctx, LM_GGML_OBJECT_TYPE_TENSOR, LM_GGML_TENSOR_SIZE + obj_alloc_size);
    struct lm_ggml_tensor * result = (struct lm_ggml_tensor *)((char *) ctx->mem_buffer + obj->offs);

    memset(result, 0, sizeof(*result));
    result->type = type;
    result->op = LM_GGML_OP_NONE;
    result->view_src = view_src;
    result->view_offs = view_offs;
    result->data = obj_alloc_size > 0 ? (void *)(result + 1) : data;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        result->ne[i] = shape[i];
    }
    result->nb[0] = lm_ggml_type_size(type);
    result->nb[1] = result->nb[0] * (result->ne[0] / lm_ggml_blck_size(type));
    for (int i = 2; i < LM_GGML_MAX_DIMS; i++) {
        result->nb[i] = result->nb[i - 1] * result->ne[i - 1];
    }
    return result;
}

struct lm_ggml_tensor * lm_ggml_new_tensor(struct lm_ggml_context * ctx, enum lm_ggml_type type, int n_dims, const int64_t * ne) {
    return lm_ggml_new_tensor_impl(ctx, type, n_dims, ne, NULL, 0);
}

struct lm_ggml_tensor * lm_ggml_new_tensor_1d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0) {
    return lm_ggml_new_tensor(ctx, type, 1, &ne0);
}

struct lm_ggml_tensor * lm_ggml_new_tensor_2d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return lm_ggml_new_tensor(ctx, type, 2, ne);
}

struct lm_ggml_tensor * lm_ggml_new_tensor_3d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return lm_ggml_new_tensor(ctx, type, 3, ne);
}

struct lm_ggml_tensor * lm_ggml_new_tensor_4d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return lm_ggml_new_tensor(ctx, type, 4, ne);
}

struct lm_ggml_tensor * lm_ggml_dup_tensor(struct lm_ggml_context * ctx, const struct lm_ggml_tensor * src) {
    return lm_ggml_new_tensor(ctx, src->type, LM_GGML_MAX_DIMS, src->ne);
}

struct lm_ggml_tensor * lm_ggml_view_tensor(struct lm_ggml_context * ctx, struct lm_ggml_tensor * src) {
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_impl(ctx, src->type, LM_GGML_MAX_DIMS, src->ne, src, 0);
    lm_ggml_format_name(result, "%s (view)", src->name);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        result->nb[i] = src->nb[i];
    }
    return result;
}

struct lm_ggml_tensor * lm_ggml_get_first_tensor(const struct lm_ggml_context * ctx) {
    for (struct lm_ggml_object * obj = ctx->objects_begin; obj != NULL; obj = obj->next) {
        if (obj->type == LM_GGML_OBJECT_TYPE_TENSOR) {
            return (struct lm_ggml_tensor *)((char *) ctx->mem_buffer + obj->offs);
        }
    }
    return NULL;
}

struct lm_ggml_tensor * lm_ggml_get_next_tensor(const struct lm_ggml_context * ctx, struct lm_ggml_tensor * tensor) {
    struct lm_ggml_object * obj = (struct lm_ggml_object *)((char *) tensor - LM_GGML_OBJECT_SIZE);
    for (obj = obj->next; obj != NULL; obj = obj->next) {
        if (obj->type == LM_GGML_OBJECT_TYPE_TENSOR) {
            return (struct lm_ggml_tensor *)((char *) ctx->mem_buffer + obj->offs);
        }
    }
    return NULL;
}

struct lm_ggml_tensor * lm_ggml_get_tensor(struct lm_ggml_context * ctx, const char * name) {
    for (struct lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t != NULL; t = lm_ggml_get_next_tensor(ctx, t)) {
        if (strcmp(t->name, name) == 0) {
            return t;
        }
    }
    return NULL;
}

void * lm_ggml_get_data(const struct lm_ggml_tensor * tensor) { return tensor->data; }

float * lm_ggml_get_data_f32(const struct lm_ggml_tensor * tensor) {
    LM_GGML_ASSERT(tensor->type == LM_GGML_TYPE_F32);
    return (float *) tensor->data;
}

const char * lm_ggml_get_name(const struct lm_ggml_tensor * tensor) { return tensor->name; }

struct lm_ggml_tensor * lm_ggml_set_name(struct lm_ggml_tensor * tensor, const char * name) {
    size_t i = 0;
    for (; i < sizeof(tensor->name) - 1 && name[i] != '\0'; i++) {
        tensor->name[i] = name[i];
    }
    tensor->name[i] = '\0';
    return tensor;
}

struct lm_ggml_tensor * lm_ggml_format_name(struct lm_ggml_tensor * tensor, const char * fmt, ...) {
    char buf[LM_GGML_MAX_NAME * 2];
    va_list args;
    va_start(args, fmt);
    vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    return lm_ggml_set_name(tensor, buf);
}

void lm_ggml_set_input (struct lm_ggml_tensor * tensor) { tensor->flags |= LM_GGML_TENSOR_FLAG_INPUT; }
void lm_ggml_set_output(struct lm_ggml_tensor * tensor) { tensor->flags |= LM_GGML_TENSOR_FLAG_OUTPUT; }

// Any tensor may be a parameter, as in ggml: for a computed one (ggml's
// test-opt marks its model's output) the backward pass gives its gradient,
// and an optimizer step updates the computed values, which the next forward
// pass recomputes.
void lm_ggml_set_param(struct lm_ggml_context * ctx, struct lm_ggml_tensor * tensor) {
    LM_GGML_UNUSED(ctx);
    tensor->flags |= LM_GGML_TENSOR_FLAG_PARAM;
}

void lm_ggml_set_loss(struct lm_ggml_tensor * tensor) {
    LM_GGML_ASSERT(lm_ggml_is_scalar(tensor) && "the loss must be a scalar");
    LM_GGML_ASSERT(tensor->type == LM_GGML_TYPE_F32 && "the loss must be f32");
    tensor->flags |= LM_GGML_TENSOR_FLAG_LOSS;
}

void lm_ggml_print_object(const struct lm_ggml_object * obj) {
    LM_GGML_LOG_INFO(" - lm_ggml_object: type = %d, offset = %zu, size = %zu, next = %p\n",
                     obj->type, obj->offs, obj->size, (const void *) obj->next);
}

void lm_ggml_print_objects(const struct lm_ggml_context * ctx) {
    LM_GGML_LOG_INFO("%s: objects in context %p:\n", __func__, (const void *) ctx);
    for (struct lm_ggml_object * obj = ctx->objects_begin; obj != NULL; obj = obj->next) {
        lm_ggml_print_object(obj);
    }
    LM_GGML_LOG_INFO("%s: --- end ---\n", __func__);
}

// ---------------------------------------------------------------- views

// A view of a with shape ne and strides nb1..nb3 (NULL: packed) at byte offset
// of a. Every element must lie inside the memory of a's root (the tensor that
// owns the data), checked before anything is allocated.
static struct lm_ggml_tensor * view_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_dims,
        const int64_t * ne, const size_t * nb_in, size_t offset) {
    int64_t shape[LM_GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    for (int i = 0; i < n_dims; i++) {
        LM_GGML_ASSERT(ne[i] >= 0 && "negative view dimension");
        shape[i] = ne[i];
    }
    LM_GGML_ASSERT(shape[0] % lm_ggml_blck_size(a->type) == 0 && "row length must be a multiple of the block size");
    size_t nb[LM_GGML_MAX_DIMS];
    nb[0] = lm_ggml_type_size(a->type);
    nb[1] = lm_ggml_row_size(a->type, shape[0]);
    for (int i = 1; i < LM_GGML_MAX_DIMS; i++) {
        if (nb_in != NULL && i < n_dims) {
            nb[i] = nb_in[i - 1];
        } else if (i > 1) {
            LM_GGML_ASSERT(lm_size_mul(nb[i - 1], (size_t) shape[i - 1], &nb[i]) && "view stride overflows");
        }
    }
    const struct lm_ggml_tensor * root = a->view_src != NULL ? a->view_src : a;
    size_t offs = offset, span, end;
    LM_GGML_ASSERT((a->view_src == NULL || lm_size_add(offs, a->view_offs, &offs)) && "view offset overflows");
    LM_GGML_ASSERT(lm_span_bytes(a->type, shape, nb, &span) && lm_size_add(offs, span, &end) && "view extent overflows");
    if (end > lm_ggml_nbytes(root)) {
        LM_GGML_ABORT("the view must lie inside its source: it ends at byte %zu, the source has %zu", end, lm_ggml_nbytes(root));
    }

    struct lm_ggml_tensor * result = lm_ggml_new_tensor_impl(ctx, a->type, n_dims, ne, a, offset);
    for (int i = 1; i < LM_GGML_MAX_DIMS; i++) {
        result->nb[i] = nb[i];
    }
    lm_ggml_format_name(result, "%s (view)", a->name);
    lm_ggml_set_op_params(result, &offset, sizeof(offset));
    result->op = LM_GGML_OP_VIEW;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_view_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, size_t offset) {
    return view_impl(ctx, a, 1, &ne0, NULL, offset);
}

struct lm_ggml_tensor * lm_ggml_view_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1,
        size_t nb1, size_t offset) {
    const int64_t ne[2] = { ne0, ne1 };
    const size_t nb[1] = { nb1 };
    return view_impl(ctx, a, 2, ne, nb, offset);
}

struct lm_ggml_tensor * lm_ggml_view_3d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1,
        int64_t ne2, size_t nb1, size_t nb2, size_t offset) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    const size_t nb[2] = { nb1, nb2 };
    return view_impl(ctx, a, 3, ne, nb, offset);
}

struct lm_ggml_tensor * lm_ggml_view_4d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1,
        int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    const size_t nb[3] = { nb1, nb2, nb3 };
    return view_impl(ctx, a, 4, ne, nb, offset);
}

static struct lm_ggml_tensor * reshape_impl(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int n_dims, const int64_t * ne) {
    LM_GGML_ASSERT(lm_ggml_is_contiguous(a) && "reshape needs a contiguous tensor");
    int64_t n = 1;
    for (int i = 0; i < n_dims; i++) {
        LM_GGML_ASSERT(ne[i] >= 0 && !__builtin_mul_overflow(n, ne[i], &n) && "reshape: invalid shape");
    }
    if (lm_ggml_nelements(a) != n) {
        LM_GGML_ABORT("a reshape keeps the number of elements: a has %lld, the new shape %lld",
                      (long long) lm_ggml_nelements(a), (long long) n);
    }
    struct lm_ggml_tensor * result = lm_ggml_new_tensor_impl(ctx, a->type, n_dims, ne, a, 0);
    lm_ggml_format_name(result, "%s (reshaped)", a->name);
    result->op = LM_GGML_OP_RESHAPE;
    result->src[0] = a;
    return result;
}

struct lm_ggml_tensor * lm_ggml_reshape(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    LM_GGML_ASSERT(lm_ggml_is_contiguous(a));
    // b only provides the shape (as in ggml); it may be non-contiguous
    return reshape_impl(ctx, a, LM_GGML_MAX_DIMS, b->ne);
}

struct lm_ggml_tensor * lm_ggml_reshape_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0) {
    return reshape_impl(ctx, a, 1, &ne0);
}

struct lm_ggml_tensor * lm_ggml_reshape_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return reshape_impl(ctx, a, 2, ne);
}

struct lm_ggml_tensor * lm_ggml_reshape_3d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return reshape_impl(ctx, a, 3, ne);
}

struct lm_ggml_tensor * lm_ggml_reshape_4d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int64_t ne0, int64_t ne1,
        int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return reshape_impl(ctx, a, 4, ne);
}

struct lm_ggml_tensor * lm_ggml_permute(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, int axis0, int axis1, int axis2, int axis3) {
    const int axes[4] = { axis0, axis1, axis2, axis3 };
    for (int i = 0; i < 4; i++) {
        LM_GGML_ASSERT(axes[i] >= 0 && axes[i] < LM_GGML_MAX_DIMS && "permute axis out of range");
        for (int j = 0; j < i; j++) {
            LM_GGML_ASSERT(axes[i] != axes[j] && "permute axes must be distinct");
        }
    }
    struct lm_ggml_tensor * result = lm_ggml_view_tensor(ctx, a);
    lm_ggml_format_name(result, "%s (permuted)", a->name);
    // source dimension i becomes result dimension axes[i]
    for (int i = 0; i < 4; i++) {
        result->ne[axes[i]] = a->ne[i];
        result->nb[axes[i]] = a->nb[i];
    }
    result->op = LM_GGML_OP_PERMUTE;
    result->src[0] = a;
    lm_ggml_set_op_params(result, axes, sizeof(axes));
    return result;
}

struct lm_ggml_tensor * lm_ggml_transpose(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a) {
    struct lm_ggml_tensor * result = lm_ggml_view_tensor(ctx, a);
    lm_ggml_format_name(result, "%s (transposed)", a->name);
    result->ne[0] = a->ne[1];
    result->ne[1] = a->ne[0];
    result->nb[0] = a->nb[1];
    result->nb[1] = a->nb[0];
    result->op = LM_GGML_OP_TRANSPOSE;
    result->src[0] = a;
    return result;
}
