// ops-copy.c - CPU kernels of data movement: dup/cpy/cast/cont, set,
// get_rows, get_rows_back; types change through the quant layer's row
// converters (quant/ggml-traits.h). The constructors are in graph/ctor-copy.c.
#include "ggml-cpu-impl.h"
#include "../quant/ggml-quants.h"
#include "../graph/ggml-op-params.h"

#include <limits.h>

// Scalar element conversion for strided (non-unit stride) f32/f16/bf16 data.
static inline float load_as_f32(const char * p, enum lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_F16:  return LM_GGML_FP16_TO_FP32(*(const lm_ggml_fp16_t *) p);
        case LM_GGML_TYPE_BF16: return LM_GGML_BF16_TO_FP32(*(const lm_ggml_bf16_t *) p);
        default:                return *(const float *) p;
    }
}
static inline void store_from_f32(char * p, enum lm_ggml_type t, float v) {
    switch (t) {
        case LM_GGML_TYPE_F16:  *(lm_ggml_fp16_t *) p = LM_GGML_FP32_TO_FP16(v); break;
        case LM_GGML_TYPE_BF16: *(lm_ggml_bf16_t *) p = LM_GGML_FP32_TO_BF16(v); break;
        default:                *(float *) p = v; break;
    }
}

// ---------------------------------------------------------------- the copy engine
//
// Copies elements in logical order (dim 0 fastest) from src to dst, which must
// hold the same number of elements but may differ in shape, strides and type.
// Both are walked as a stream of rows; each step moves the longest span that
// stays inside the current row of both sides. Quantized sides move whole
// blocks: the constructors guarantee every row length is a block multiple.

#define COPY_SPAN 1024 // f32 staging per step; a multiple of every block size

static inline char * row_addr(const struct lm_ggml_tensor * t, int64_t r) {
    const int64_t i1 = r % t->ne[1]; r /= t->ne[1];
    const int64_t i2 = r % t->ne[2];
    const int64_t i3 = r / t->ne[2];
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

static void copy_bytes_strided(char * d, size_t dnb, const char * s, size_t snb, int64_t n, size_t es) {
    switch (es) {
        case 1: for (int64_t i = 0; i < n; i++) d[i * dnb] = s[i * snb]; break;
        case 2: for (int64_t i = 0; i < n; i++) *(uint16_t *)(d + i * dnb) = *(const uint16_t *)(s + i * snb); break;
        case 4: for (int64_t i = 0; i < n; i++) *(uint32_t *)(d + i * dnb) = *(const uint32_t *)(s + i * snb); break;
        case 8: for (int64_t i = 0; i < n; i++) *(uint64_t *)(d + i * dnb) = *(const uint64_t *)(s + i * snb); break;
        default: for (int64_t i = 0; i < n; i++) memcpy(d + i * dnb, s + i * snb, es); break;
    }
}

// n elements from s (type st, element/block stride snb) to d.
static void copy_span(char * d, enum lm_ggml_type dt, size_t dnb,
                      const char * s, enum lm_ggml_type st, size_t snb, int64_t n) {
    const size_t dts = lm_ggml_type_size(dt), sts = lm_ggml_type_size(st);
    if (dt == st) {
        if (lm_ggml_is_quantized(st) || (dnb == dts && snb == sts)) {
            memmove(d, s, (size_t)(n / lm_ggml_blck_size(st)) * sts);
        } else {
            copy_bytes_strided(d, dnb, s, snb, n, sts);
        }
        return;
    }
    const bool s_unit = lm_ggml_is_quantized(st) || snb == sts;
    const bool d_unit = lm_ggml_is_quantized(dt) || dnb == dts;
    if (!s_unit && !d_unit) {
        for (int64_t i = 0; i < n; i++) store_from_f32(d + i * dnb, dt, load_as_f32(s + i * snb, st));
        return;
    }
    float buf[COPY_SPAN];
    const float * f;
    if (st == LM_GGML_TYPE_F32 && s_unit) {
        f = (const float *) s;
    } else if (dt == LM_GGML_TYPE_F32 && d_unit && s_unit) {
        lm_type_to_f32_row(st)(s, (float *) d, n); // straight into the destination
        return;
    } else {
        if (s_unit) {
            lm_type_to_f32_row(st)(s, buf, n);
        } else {
            for (int64_t i = 0; i < n; i++) buf[i] = load_as_f32(s + i * snb, st);
        }
        f = buf;
    }
    if (d_unit) {
        lm_type_from_f32_row(dt)(f, d, n);
    } else {
        for (int64_t i = 0; i < n; i++) store_from_f32(d + i * dnb, dt, f[i]);
    }
}

// Elements [e0, e1) of the logical stream.
static void copy_range(struct lm_ggml_tensor * dst, const struct lm_ggml_tensor * src, int64_t e0, int64_t e1) {
    const int64_t sn0 = src->ne[0], dn0 = dst->ne[0];
    const int64_t sbk = lm_ggml_blck_size(src->type), dbk = lm_ggml_blck_size(dst->type);
    int64_t sr = e0 / sn0, sc = e0 % sn0;
    int64_t dr = e0 / dn0, dc = e0 % dn0;
    while (e0 < e1) {
        int64_t n = LM_GGML_MIN(sn0 - sc, dn0 - dc);
        n = LM_GGML_MIN(n, e1 - e0);
        n = LM_GGML_MIN(n, COPY_SPAN);
        const char * s = row_addr(src, sr) + (sc / sbk) * src->nb[0];
        char * d = row_addr(dst, dr) + (dc / dbk) * dst->nb[0];
        copy_span(d, dst->type, dst->nb[0], s, src->type, src->nb[0], n);
        e0 += n;
        sc += n; if (sc == sn0) { sc = 0; sr++; }
        dc += n; if (dc == dn0) { dc = 0; dr++; }
    }
}

static bool same_layout(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b) {
    if (a->data != b->data || a->type != b->type) return false;
    if (lm_ggml_is_contiguous(a) && lm_ggml_is_contiguous(b)) return true;
    return lm_ggml_are_same_shape(a, b) && lm_ggml_are_same_stride(a, b);
}

// o: t's data, type and elements in the same logical order, with fewer
// dims: dims of one element dropped, and a dim that continues its
// predecessor in memory merged into it. The spans of the copy engine then
// run as long as the memory allows: a transposed one-token row stored into
// the V cache ([1, n] to [1, n] with a long row stride) is one strided span
// of n elements instead of n rows of one.
static void flatten_dims(const struct lm_ggml_tensor * t, struct lm_ggml_tensor * o) {
    const int64_t bk = lm_ggml_blck_size(t->type);
    int n = 0;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (t->ne[i] == 1 && (i > 0 || bk == 1)) continue;
        if (n > 0 && t->nb[i] == o->nb[n - 1] * (size_t)(n == 1 ? o->ne[0] / bk : o->ne[n - 1])) {
            o->ne[n - 1] *= t->ne[i];
            continue;
        }
        o->ne[n] = t->ne[i];
        o->nb[n] = t->nb[i];
        n++;
    }
    if (n == 0) { // one element
        o->ne[0] = 1;
        o->nb[0] = t->nb[0];
        n = 1;
    }
    for (int i = n; i < LM_GGML_MAX_DIMS; i++) {
        o->ne[i] = 1;
        o->nb[i] = o->nb[i - 1] * (size_t)(i == 1 ? o->ne[0] / bk : o->ne[i - 1]);
    }
    o->type = t->type;
    o->data = t->data;
}

// The share of the copy src -> dst that thread ith of nth does.
static void copy_tensor_part(struct lm_ggml_tensor * dst, const struct lm_ggml_tensor * src, int ith, int nth) {
    if (same_layout(dst, src)) return;
    const int64_t unit = LM_GGML_MAX(lm_ggml_blck_size(src->type), lm_ggml_blck_size(dst->type));
    const int64_t nunits = lm_ggml_nelements(src) / unit;
    int64_t u0, u1;
    lm_ggml_thread_range(nunits, ith, nth, &u0, &u1);
    if (u0 >= u1) return;
    struct lm_ggml_tensor d, s;
    flatten_dims(dst, &d);
    flatten_dims(src, &s);
    copy_range(&d, &s, u0 * unit, u1 * unit);
}

static void lm_compute_dup(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    copy_tensor_part(dst, dst->src[0], params->ith, params->nth);
}

static bool lm_supports_dup(const struct lm_ggml_tensor * node) {
    return node->src[0] != NULL && lm_ggml_nelements(node->src[0]) == lm_ggml_nelements(node) && lm_copy_supported(node->src[0], node);
}

// ---------------------------------------------------------------- set
//
// op_params (int32): nb1, nb2, nb3, offset, inplace — the layout the backward
// pass reads back. The kernel copies a into dst unless inplace, then writes b
// into the strided view of dst.

static void lm_compute_set(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * a = dst->src[0];
    const struct lm_ggml_tensor * b = dst->src[1];
    const size_t nb1 = (size_t) lm_ggml_get_op_params_i32(dst, 0);
    const size_t nb2 = (size_t) lm_ggml_get_op_params_i32(dst, 1);
    const size_t nb3 = (size_t) lm_ggml_get_op_params_i32(dst, 2);
    const size_t off = (size_t) lm_ggml_get_op_params_i32(dst, 3);
    const bool inplace = lm_ggml_get_op_params_i32(dst, 4) != 0;

    if (!inplace) {
        copy_tensor_part(dst, a, params->ith, params->nth);
        lm_ggml_barrier(params->threadpool); // b's writes must follow every thread's share of the copy
    }

    const size_t es = lm_ggml_type_size(b->type);
    const int64_t nr = lm_ggml_nrows(b);
    int64_t r0, r1;
    lm_ggml_thread_range(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % b->ne[1], i2 = (r / b->ne[1]) % b->ne[2], i3 = r / (b->ne[1] * b->ne[2]);
        char * d = (char *) dst->data + off + i1 * nb1 + i2 * nb2 + i3 * nb3;
        const char * s = (const char *) b->data + i1 * b->nb[1] + i2 * b->nb[2] + i3 * b->nb[3];
        if (dst->nb[0] == es && b->nb[0] == es) {
            memcpy(d, s, (size_t) b->ne[0] * es);
        } else {
            copy_bytes_strided(d, dst->nb[0], s, b->nb[0], b->ne[0], es);
        }
    }
}

// ---------------------------------------------------------------- get_rows
//
// a: [n0, rows, ne2, ne3]; b: i32 [n, ne2, ne3'] -> [n0, n, ne2, ne3'] rows of a,
// converted to f32 (i32 data is copied as i32). Index k of b's column (i11, i12)
// picks a's row k of batch (i11, i12). Indices are data: an out-of-range one
// fails the computation (lm_cpu_error) and its row is left zero.

static void lm_compute_get_rows(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * a = dst->src[0];
    const struct lm_ggml_tensor * b = dst->src[1];
    const int64_t n0 = a->ne[0];
    const int64_t nr = b->ne[0] * b->ne[1] * b->ne[2];
    const bool plain = a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_I32;
    const lm_ggml_to_float_t to_f32 = lm_type_to_f32_row(a->type);
    int64_t r0, r1;
    lm_ggml_thread_range(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i10 = r % b->ne[0], i11 = (r / b->ne[0]) % b->ne[1], i12 = r / (b->ne[0] * b->ne[1]);
        const int32_t k = *(const int32_t *)((const char *) b->data + i10 * b->nb[0] + i11 * b->nb[1] + i12 * b->nb[2]);
        char * d = (char *) dst->data + i10 * dst->nb[1] + i11 * dst->nb[2] + i12 * dst->nb[3];
        if (k < 0 || k >= a->ne[1]) {
            lm_cpu_error(params, "row index %d (element %lld of %s) is out of range [0, %lld)", (int) k,
                         (long long) r, b->name, (long long) a->ne[1]);
            memset(d, 0, (size_t) n0 * 4);
            continue;
        }
        const char * s = (const char *) a->data + k * a->nb[1] + i11 * a->nb[2] + i12 * a->nb[3];
        if (plain) {
            if (a->nb[0] == 4) memcpy(d, s, (size_t) n0 * 4);
            else copy_bytes_strided(d, 4, s, a->nb[0], n0, 4);
        } else {
            to_f32(s, (float *) d, n0);
        }
    }
}

// ---------------------------------------------------------------- get_rows_back
//
// a: grad of get_rows [n0, n]; b: i32 indices [n]; c: only gives the shape
// [n0, rows]. dst row k = sum of a's rows i with b[i] == k. Threads split the
// columns so duplicate indices never race.

static void lm_compute_get_rows_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * a = dst->src[0];
    const struct lm_ggml_tensor * b = dst->src[1];
    int64_t c0, c1;
    lm_ggml_thread_range(dst->ne[0], params->ith, params->nth, &c0, &c1);
    if (c0 >= c1) return;
    for (int64_t r = 0; r < dst->ne[1]; r++) {
        float * d = (float *)((char *) dst->data + r * dst->nb[1]);
        for (int64_t c = c0; c < c1; c++) d[c] = 0.0f;
    }
    for (int64_t i = 0; i < b->ne[0]; i++) {
        const int32_t k = *(const int32_t *)((const char *) b->data + i * b->nb[0]);
        if (k < 0 || k >= dst->ne[1]) {
            lm_cpu_error(params, "row index %d (element %lld of %s) is out of range [0, %lld)", (int) k,
                         (long long) i, b->name, (long long) dst->ne[1]);
            continue;
        }
        float * d = (float *)((char *) dst->data + k * dst->nb[1]);
        const char * s = (const char *) a->data + i * a->nb[1];
        for (int64_t c = c0; c < c1; c++) d[c] += load_as_f32(s + c * a->nb[0], a->type);
    }
}

// ---------------------------------------------------------------- descriptors

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_dup           = { .compute = lm_compute_dup, .supports = lm_supports_dup };
const struct lm_cpu_op lm_cpu_op_cpy           = { .compute = lm_compute_dup, .supports = lm_supports_dup };
const struct lm_cpu_op lm_cpu_op_cont          = { .compute = lm_compute_dup, .supports = lm_supports_dup };
const struct lm_cpu_op lm_cpu_op_set           = { .compute = lm_compute_set };
const struct lm_cpu_op lm_cpu_op_get_rows      = { .compute = lm_compute_get_rows };
const struct lm_cpu_op lm_cpu_op_get_rows_back = { .compute = lm_compute_get_rows_back };
