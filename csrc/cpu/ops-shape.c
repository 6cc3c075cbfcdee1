// ops-shape.c - ops that move or generate elements: repeat, repeat_back,
// concat, diag, pad, upscale(_ext), arange, timestep_embedding: CPU kernels.
// The constructors are in graph/ctor-shape.c; see ggml-cpu-impl.h for the
// kernel contract.
//
// The pure data-movement kernels work for any non-block type by element size.
#include "ops-vec.h"
#include "ggml-cpu-impl.h"

// ---------------------------------------------------------------- kernels

static inline void lm_copy_elem(char * d, const char * s, size_t es) {
    switch (es) {
        case 1: *d = *s; break;
        case 2: memcpy(d, s, 2); break;
        case 4: memcpy(d, s, 4); break;
        case 8: memcpy(d, s, 8); break;
        default: memcpy(d, s, es); break;
    }
}

// n elements from s (stride snb) to d (stride dnb)
static void lm_copy_row(char * d, size_t dnb, const char * s, size_t snb, int64_t n, size_t es) {
    if (dnb == es && snb == es) {
        memcpy(d, s, n*es);
        return;
    }
    for (int64_t i = 0; i < n; i++) lm_copy_elem(d + i*dnb, s + i*snb, es);
}

static char * lm_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
}

static void lm_compute_repeat(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    if (lm_ggml_is_empty(dst)) return;
    const size_t es = lm_ggml_type_size(dst->type);
    const int64_t ne00 = src0->ne[0];
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(dst), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(dst, ir, &i1, &i2, &i3);
        const char * s = lm_at(src0, 0, i1 % src0->ne[1], i2 % src0->ne[2], i3 % src0->ne[3]);
        char * d = lm_at(dst, 0, i1, i2, i3);
        for (int64_t r = 0; r < dst->ne[0]/ne00; r++) {
            lm_copy_row(d + r*ne00*dst->nb[0], dst->nb[0], s, src0->nb[0], ne00, es);
        }
    }
}

static void lm_compute_repeat_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    LM_GGML_TENSOR_UNARY_OP_LOCALS
    if (lm_ggml_is_empty(dst)) return;
    const int64_t nr0 = ne00/ne0, nr1 = ne01/ne1, nr2 = ne02/ne2, nr3 = ne03/ne3;

    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(dst), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t k1, k2, k3;
        lm_row_index(dst, ir, &k1, &k2, &k3);
        float * d = (float *) lm_at(dst, 0, k1, k2, k3);
        for (int64_t k0 = 0; k0 < ne0; k0++) *(float *)((char *) d + k0*nb0) = 0.0f;
        // same accumulation order per element as ggml: (i3, i2, i1, i0)
        for (int64_t i3 = 0; i3 < nr3; i3++)
        for (int64_t i2 = 0; i2 < nr2; i2++)
        for (int64_t i1 = 0; i1 < nr1; i1++)
        for (int64_t i0 = 0; i0 < nr0; i0++) {
            const char * s = lm_at(src0, i0*ne0, i1*ne1 + k1, i2*ne2 + k2, i3*ne3 + k3);
            for (int64_t k0 = 0; k0 < ne0; k0++) {
                *(float *)((char *) d + k0*nb0) += *(const float *)(s + k0*nb00);
            }
        }
    }
}

static void lm_compute_concat(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const int dim = lm_ggml_get_op_params_i32(dst, 0);
    const size_t es = lm_ggml_type_size(dst->type);

    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(dst), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i[4] = { 0 };
        lm_row_index(dst, ir, &i[1], &i[2], &i[3]);
        char * d = lm_at(dst, 0, i[1], i[2], i[3]);
        if (dim == 0) {
            lm_copy_row(d, dst->nb[0], lm_at(src0, 0, i[1], i[2], i[3]), src0->nb[0], src0->ne[0], es);
            lm_copy_row(d + src0->ne[0]*dst->nb[0], dst->nb[0], lm_at(src1, 0, i[1], i[2], i[3]), src1->nb[0], src1->ne[0], es);
            continue;
        }
        const struct lm_ggml_tensor * s = src0;
        if (i[dim] >= src0->ne[dim]) {
            i[dim] -= src0->ne[dim];
            s = src1;
        }
        lm_copy_row(d, dst->nb[0], lm_at(s, 0, i[1], i[2], i[3]), s->nb[0], dst->ne[0], es);
    }
}

static void lm_compute_diag(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const size_t es = lm_ggml_type_size(dst->type);
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(dst), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(dst, ir, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            char * d = lm_at(dst, i0, i1, i2, i3);
            if (i0 == i1) lm_copy_elem(d, lm_at(src0, i0, 0, i2, i3), es);
            else          memset(d, 0, es);
        }
    }
}

static void lm_compute_pad(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const size_t es = lm_ggml_type_size(dst->type);
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(dst), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(dst, ir, &i1, &i2, &i3);
        char * d = lm_at(dst, 0, i1, i2, i3);
        int64_t n = 0;
        if (i1 < src0->ne[1] && i2 < src0->ne[2] && i3 < src0->ne[3]) {
            n = LM_GGML_MIN(src0->ne[0], dst->ne[0]);
            lm_copy_row(d, dst->nb[0], lm_at(src0, 0, i1, i2, i3), src0->nb[0], n, es);
        }
        for (int64_t i0 = n; i0 < dst->ne[0]; i0++) memset(d + i0*dst->nb[0], 0, es);
    }
}

static void lm_compute_upscale(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const size_t es = lm_ggml_type_size(dst->type);
    // ggml maps dst index i to src index (int64)(i / (float)(ne/ne_src))
    const float sf0 = (float) dst->ne[0] / src0->ne[0];
    const float sf1 = (float) dst->ne[1] / src0->ne[1];
    const float sf2 = (float) dst->ne[2] / src0->ne[2];
    const float sf3 = (float) dst->ne[3] / src0->ne[3];
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(dst), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(dst, ir, &i1, &i2, &i3);
        const int64_t i01 = (int64_t)(i1 / sf1), i02 = (int64_t)(i2 / sf2), i03 = (int64_t)(i3 / sf3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const int64_t i00 = (int64_t)(i0 / sf0);
            lm_copy_elem(lm_at(dst, i0, i1, i2, i3), lm_at(src0, i00, i01, i02, i03), es);
        }
    }
}

static void lm_compute_arange(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const float start = lm_ggml_get_op_params_f32(dst, 0);
    const float step  = lm_ggml_get_op_params_f32(dst, 2);
    float * d = (float *) dst->data;
    for (int64_t i = params->ith; i < dst->ne[0]; i += params->nth) {
        d[i] = start + step * (float) i;
    }
}

static void lm_compute_timestep_embedding(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const int dim        = lm_ggml_get_op_params_i32(dst, 0);
    const int max_period = lm_ggml_get_op_params_i32(dst, 1);
    const int half = dim / 2;
    const float neg_log_p = -logf((float) max_period);
    for (int64_t i = 0; i < src0->ne[0]; i++) {
        float * e = (float *)((char *) dst->data + i*dst->nb[1]);
        const float t = *(const float *)((const char *) src0->data + i*src0->nb[0]);
        for (int64_t j = params->ith; j < half; j += params->nth) {
            const float freq = expf(neg_log_p * (float) j / (float) half);
            const float arg = t * freq;
            e[j]        = cosf(arg);
            e[j + half] = sinf(arg);
        }
        // odd dim: the padding column(s) past the cos/sin halves are zero
        if (params->ith == 0) {
            for (int64_t k = 2*(int64_t) half; k < dst->ne[0]; k++) e[k] = 0.0f;
        }
    }
}

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_repeat             = { .compute = lm_compute_repeat };
const struct lm_cpu_op lm_cpu_op_repeat_back        = { .compute = lm_compute_repeat_back };
const struct lm_cpu_op lm_cpu_op_concat             = { .compute = lm_compute_concat };
const struct lm_cpu_op lm_cpu_op_diag               = { .compute = lm_compute_diag };
const struct lm_cpu_op lm_cpu_op_pad                = { .compute = lm_compute_pad };
const struct lm_cpu_op lm_cpu_op_upscale            = { .compute = lm_compute_upscale };
const struct lm_cpu_op lm_cpu_op_arange             = { .compute = lm_compute_arange };
const struct lm_cpu_op lm_cpu_op_timestep_embedding = { .compute = lm_compute_timestep_embedding };
