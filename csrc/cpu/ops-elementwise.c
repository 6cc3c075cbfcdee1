// ops-elementwise.c - CPU kernels of the binary elementwise ops: add (+cast),
// add1, acc, sub, mul, div. The constructors are in graph/ctor-elementwise.c;
// see ggml-cpu-impl.h for the kernel contract.
//
// src1 broadcasts over src0 wherever lm_ggml_can_repeat(src1, src0) holds.
// All-f32 rows with unit element strides take the SIMD path; every other type
// combination (f16/bf16/quantized src0, f16/bf16 src1, strided rows, cast
// destinations) goes through f32 scratch chunks, which gives the same value
// ggml computes: convert to f32, operate, convert to the dst type.
#include "ops-vec.h"
#include "ggml-cpu-impl.h"

enum lm_bin { LM_BIN_ADD, LM_BIN_SUB, LM_BIN_MUL, LM_BIN_DIV };

// ---------------------------------------------------------------- kernels

static void lm_bin_row(enum lm_bin op, bool simd, int64_t n, float * z, const float * x, const float * y) {
    switch (op) {
        case LM_BIN_ADD: lm_vec_add(simd, n, z, x, y); return;
        case LM_BIN_MUL: lm_vec_mul(simd, n, z, x, y); return;
#if defined(LM_X86)
        case LM_BIN_SUB: if (simd) lm_vec_sub_avx2(n, z, x, y); else lm_vec_sub_s(n, z, x, y); return;
        case LM_BIN_DIV: if (simd) lm_vec_div_avx2(n, z, x, y); else lm_vec_div_s(n, z, x, y); return;
#else
        case LM_BIN_SUB: lm_vec_sub_s(n, z, x, y); return;
        case LM_BIN_DIV: lm_vec_div_s(n, z, x, y); return;
#endif
    }
}

// z = x op v for one scalar v (src1 rows of length 1).
static void lm_bin_row_scalar(enum lm_bin op, int64_t n, float * z, const float * x, float v) {
    switch (op) {
        case LM_BIN_ADD: for (int64_t i = 0; i < n; i++) z[i] = x[i] + v; return;
        case LM_BIN_SUB: for (int64_t i = 0; i < n; i++) z[i] = x[i] - v; return;
        case LM_BIN_MUL: for (int64_t i = 0; i < n; i++) z[i] = x[i] * v; return;
        case LM_BIN_DIV: for (int64_t i = 0; i < n; i++) z[i] = x[i] / v; return;
    }
}

// f32 elements that follow one another without gaps.
static inline bool lm_packed_f32(const struct lm_ggml_tensor * t) {
    return t->type == LM_GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->nb[1] == (size_t) t->ne[0]*sizeof(float) &&
           t->nb[2] == t->nb[1]*(size_t) t->ne[1] && t->nb[3] == t->nb[2]*(size_t) t->ne[2];
}

// Three packed f32 tensors of one shape: one run over all elements (a graph
// of small nodes feels every step of the row walk in lm_compute_binary).
static inline bool lm_binary_flat(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst, enum lm_bin op) {
    const struct lm_ggml_tensor * a = dst->src[0], * b = dst->src[1];
    if (!lm_packed_f32(dst) || !lm_packed_f32(a) || !lm_packed_f32(b) || !lm_shape_eq(a, b) || !lm_shape_eq(a, dst)) {
        return false;
    }
    // Threads take whole blocks of 1024 elements (4 KiB): a small tensor
    // stays with thread 0, in the cache that wrote its operands, instead of
    // being shared out a few cache lines per thread.
    const int64_t n = dst->ne[0]*dst->ne[1]*dst->ne[2]*dst->ne[3];
    int64_t i0 = 0, i1 = n;
    if (params->nth > 1) {
        const int64_t block = 1024;
        const int64_t per = ((n + params->nth - 1)/params->nth + block - 1)/block*block;
        i0 = LM_GGML_MIN(n, per*params->ith);
        i1 = LM_GGML_MIN(n, i0 + per);
    }
    if (i1 > i0) {
        lm_bin_row(op, lm_vec_avx2(), i1 - i0, (float *) dst->data + i0, (const float *) a->data + i0, (const float *) b->data + i0);
    }
    return true;
}

static void lm_compute_binary(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst, enum lm_bin op) {
    if (lm_binary_flat(params, dst, op)) return;
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    LM_GGML_TENSOR_BINARY_OP_LOCALS
    if (lm_shape_has_zero(dst)) return; // also keeps the broadcast modulos away from 0

    const bool simd = lm_vec_avx2();
    const bool fast = src0->type == LM_GGML_TYPE_F32 && src1->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 &&
                      nb00 == sizeof(float) && nb10 == sizeof(float) && nb0 == sizeof(float);

    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);

    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i01, i02, i03;
        lm_row_index(src0, ir, &i01, &i02, &i03);
        const int64_t i11 = lm_bcast(i01, ne11), i12 = lm_bcast(i02, ne12), i13 = lm_bcast(i03, ne13);

        char       * d = (char *) dst->data + i01*nb1 + i02*nb2 + i03*nb3;
        const char * x = (const char *) src0->data + i01*nb01 + i02*nb02 + i03*nb03;
        const char * y = (const char *) src1->data + i11*nb11 + i12*nb12 + i13*nb13;

        if (fast) {
            if (ne10 == ne00) {
                lm_bin_row(op, simd, ne00, (float *) d, (const float *) x, (const float *) y);
            } else if (ne10 == 1) {
                lm_bin_row_scalar(op, ne00, (float *) d, (const float *) x, *(const float *) y);
            } else {
                for (int64_t r = 0; r < ne00/ne10; r++) {
                    lm_bin_row(op, simd, ne10, (float *) d + r*ne10, (const float *) x + r*ne10, (const float *) y);
                }
            }
            continue;
        }

        float bx[LM_ROW_CHUNK], by[LM_ROW_CHUNK];
        for (int64_t c0 = 0; c0 < ne00; c0 += LM_ROW_CHUNK) {
            const int64_t n = LM_GGML_MIN(LM_ROW_CHUNK, ne00 - c0);
            lm_load_row_f32(src0, x, c0, n, bx);
            if (ne10 == ne00) {
                lm_load_row_f32(src1, y, c0, n, by);
            } else {
                for (int64_t i = 0; i < n; i++) by[i] = lm_load_f(src1->type, y + ((c0 + i) % ne10)*nb10);
            }
            lm_bin_row(op, simd, n, bx, bx, by);
            lm_store_row_f32(dst, d, c0, n, bx);
        }
    }
}

static void lm_compute_add(const struct lm_ggml_compute_params * p, struct lm_ggml_tensor * dst) { lm_compute_binary(p, dst, LM_BIN_ADD); }
static void lm_compute_sub(const struct lm_ggml_compute_params * p, struct lm_ggml_tensor * dst) { lm_compute_binary(p, dst, LM_BIN_SUB); }
static void lm_compute_mul(const struct lm_ggml_compute_params * p, struct lm_ggml_tensor * dst) { lm_compute_binary(p, dst, LM_BIN_MUL); }
static void lm_compute_div(const struct lm_ggml_compute_params * p, struct lm_ggml_tensor * dst) { lm_compute_binary(p, dst, LM_BIN_DIV); }

static void lm_compute_add1(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    LM_GGML_TENSOR_UNARY_OP_LOCALS

    const float v = lm_load_f(src1->type, (const char *) src1->data);
    const bool fast = src0->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 && nb00 == sizeof(float) && nb0 == sizeof(float);

    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i01, i02, i03;
        lm_row_index(src0, ir, &i01, &i02, &i03);
        char       * d = (char *) dst->data + i01*nb1 + i02*nb2 + i03*nb3;
        const char * x = (const char *) src0->data + i01*nb01 + i02*nb02 + i03*nb03;
        if (fast) {
            lm_bin_row_scalar(LM_BIN_ADD, ne00, (float *) d, (const float *) x, v);
            continue;
        }
        float bx[LM_ROW_CHUNK];
        for (int64_t c0 = 0; c0 < ne00; c0 += LM_ROW_CHUNK) {
            const int64_t n = LM_GGML_MIN(LM_ROW_CHUNK, ne00 - c0);
            lm_load_row_f32(src0, x, c0, n, bx);
            lm_bin_row_scalar(LM_BIN_ADD, n, bx, bx, v);
            lm_store_row_f32(dst, d, c0, n, bx);
        }
    }
}

static void lm_compute_acc(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];

    const size_t nb1    = (size_t) lm_ggml_get_op_params_i32(dst, 0);
    const size_t nb2    = (size_t) lm_ggml_get_op_params_i32(dst, 1);
    const size_t nb3    = (size_t) lm_ggml_get_op_params_i32(dst, 2);
    const size_t offset = (size_t) lm_ggml_get_op_params_i32(dst, 3);
    const bool inplace  = lm_ggml_get_op_params_i32(dst, 4) != 0;

    if (!inplace && dst->data != src0->data) {
        // dst = src0 (both contiguous), split between threads
        const size_t nbytes = lm_ggml_nbytes(dst);
        const size_t per = (nbytes + params->nth - 1) / params->nth;
        const size_t b0 = LM_GGML_MIN(nbytes, per * params->ith);
        const size_t b1 = LM_GGML_MIN(nbytes, b0 + per);
        if (b1 > b0) memcpy((char *) dst->data + b0, (const char *) src0->data + b0, b1 - b0);
        lm_ggml_barrier(params->threadpool);
    }

    const bool simd = lm_vec_avx2();
    const int64_t nc = src1->ne[0];
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src1), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src1, ir, &i1, &i2, &i3);
        const size_t off = offset + i1*nb1 + i2*nb2 + i3*nb3;
        float * d = (float *)((char *) dst->data + off);
        const char * y = (const char *) src1->data + i1*src1->nb[1] + i2*src1->nb[2] + i3*src1->nb[3];
        if (src1->nb[0] == sizeof(float)) {
            lm_vec_add(simd, nc, d, d, (const float *) y);
        } else {
            for (int64_t i = 0; i < nc; i++) d[i] += *(const float *)(y + i*src1->nb[0]);
        }
    }
}

// The type combinations the kernels handle (the constructors' type checks,
// for nodes made some other way).
static bool lm_rows_ok(const struct lm_ggml_tensor * t) {
    // plain floats first: asked for every node of every graph before it runs
    return lm_is_plain_float(t->type) || (lm_type_rows_rw(t->type) && t->nb[0] == lm_ggml_type_size(t->type));
}
static bool lm_supports_binary(const struct lm_ggml_tensor * node) {
    const struct lm_ggml_tensor * a = node->src[0], * b = node->src[1];
    return a != NULL && b != NULL && lm_rows_ok(a) && lm_is_plain_float(b->type) && lm_rows_ok(node) &&
           lm_shape_repeats(b, a) && lm_shape_eq(a, node);
}
static bool lm_supports_acc(const struct lm_ggml_tensor * node) {
    const struct lm_ggml_tensor * a = node->src[0], * b = node->src[1];
    return a != NULL && b != NULL && a->type == LM_GGML_TYPE_F32 && b->type == LM_GGML_TYPE_F32 &&
           node->type == LM_GGML_TYPE_F32 && lm_ggml_is_contiguous(a) && lm_ggml_is_contiguous(node);
}

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_add  = { .compute = lm_compute_add, .supports = lm_supports_binary };
const struct lm_cpu_op lm_cpu_op_sub  = { .compute = lm_compute_sub, .supports = lm_supports_binary };
const struct lm_cpu_op lm_cpu_op_mul  = { .compute = lm_compute_mul, .supports = lm_supports_binary };
const struct lm_cpu_op lm_cpu_op_div  = { .compute = lm_compute_div, .supports = lm_supports_binary };
const struct lm_cpu_op lm_cpu_op_add1 = { .compute = lm_compute_add1, .supports = lm_supports_binary };
const struct lm_cpu_op lm_cpu_op_acc  = { .compute = lm_compute_acc, .supports = lm_supports_acc };
