// ops-conv.c - convolution and pooling: im2col (+ back), the conv_* graph
// builders (im2col + mul_mat + reshapes, laid out as in the reference so that
// shapes and node sequences match), conv_transpose_1d/2d and pool_1d/2d (+ back).
// See ggml-cpu-impl.h for the kernel contract.
#include "ggml-cpu-impl.h"

#include <float.h>

// Reads element i of a row of f32 or f16 values.
static inline float cv_load(const void * row, int64_t i, enum lm_ggml_type t) {
    return t == LM_GGML_TYPE_F32 ? ((const float *) row)[i] : lm_ggml_table_f32_f16[((const lm_ggml_fp16_t *) row)[i]];
}

static int64_t conv_out_size(int64_t ins, int64_t ks, int s, int p, int d) {
    return (ins + 2 * p - d * (ks - 1) - 1) / s + 1;
}

// ================================================================ im2col

// op_params of IM2COL / IM2COL_BACK: s0, s1, p0, p1, d0, d1, is_2D
static void im2col_set_params(struct lm_ggml_tensor * t, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D) {
    const int32_t p[7] = { s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0 };
    lm_ggml_set_op_params(t, p, sizeof(p));
}

// a: kernel [KW, KH, IC, OC] (2D) or [K, IC, OC] (1D), only its shape is used
// b: input  [IW, IH, IC, N]  (2D) or [L, IC, N]    (1D)
// result:   [IC*KH*KW, OW, OH, N] (2D) or [IC*K, OL, N] (1D)
struct lm_ggml_tensor * lm_ggml_im2col(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D, enum lm_ggml_type dst_type) {
    if (is_2D) {
        LM_GGML_ASSERT(a->ne[2] == b->ne[2]);
    } else {
        LM_GGML_ASSERT(a->ne[1] == b->ne[1]);
        LM_GGML_ASSERT(b->ne[3] == 1);
    }
    // checked by the reference's kernels (or divisions by them)
    LM_GGML_ASSERT(s0 > 0 && (!is_2D || s1 > 0));
    LM_GGML_ASSERT(dst_type == LM_GGML_TYPE_F32 || dst_type == LM_GGML_TYPE_F16);
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_F32 || b->type == LM_GGML_TYPE_F16);

    const int64_t OH = is_2D ? conv_out_size(b->ne[1], a->ne[1], s1, p1, d1) : 0;
    const int64_t OW = conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    LM_GGML_ASSERT((!is_2D || OH > 0) && "b too small compared to a");
    LM_GGML_ASSERT((OW > 0) && "b too small compared to a");

    const int64_t ne[4] = {
        is_2D ? (a->ne[2] * a->ne[1] * a->ne[0]) : a->ne[1] * a->ne[0],
        OW,
        is_2D ? OH : b->ne[2],
        is_2D ? b->ne[3] : 1,
    };
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, dst_type, 4, ne);
    im2col_set_params(r, s0, s1, p0, p1, d0, d1, is_2D);
    r->op = LM_GGML_OP_IM2COL;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

struct im2col_geom {
    int s0, s1, p0, p1, d0, d1;
    bool is_2D;
    int64_t N, IC, IH, IW, KH, KW, OH, OW;
    size_t sn, sc, sh, sw; // byte strides of the image (sh unused in 1D)
};

// image: the input of im2col (or the output of im2col_back); kernel gives KH, KW.
static void im2col_geom_init(struct im2col_geom * g, const struct lm_ggml_tensor * op, const struct lm_ggml_tensor * kernel,
        const struct lm_ggml_tensor * image, int64_t OW, int64_t OH) {
    g->s0 = lm_ggml_get_op_params_i32(op, 0);
    g->s1 = lm_ggml_get_op_params_i32(op, 1);
    g->p0 = lm_ggml_get_op_params_i32(op, 2);
    g->p1 = lm_ggml_get_op_params_i32(op, 3);
    g->d0 = lm_ggml_get_op_params_i32(op, 4);
    g->d1 = lm_ggml_get_op_params_i32(op, 5);
    g->is_2D = lm_ggml_get_op_params_i32(op, 6) == 1;
    g->N  = g->is_2D ? image->ne[3] : image->ne[2];
    g->IC = g->is_2D ? image->ne[2] : image->ne[1];
    g->IH = g->is_2D ? image->ne[1] : 1;
    g->IW = image->ne[0];
    g->KH = g->is_2D ? kernel->ne[1] : 1;
    g->KW = kernel->ne[0];
    g->OH = OH;
    g->OW = OW;
    g->sn = g->is_2D ? image->nb[3] : image->nb[2];
    g->sc = g->is_2D ? image->nb[2] : image->nb[1];
    g->sh = g->is_2D ? image->nb[1] : 0;
    g->sw = image->nb[0];
}

static void im2col_kernel(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const bool is_2D = lm_ggml_get_op_params_i32(dst, 6) == 1;
    struct im2col_geom g;
    im2col_geom_init(&g, dst, src0, src1, dst->ne[1], is_2D ? dst->ne[2] : 1);
    const bool out_f16 = dst->type == LM_GGML_TYPE_F16;
    const enum lm_ggml_type it = src1->type;

    // one dst row per output position (n, oh, ow)
    int64_t r0, r1;
    lm_ggml_thread_range(g.N * g.OH * g.OW, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t iow = r % g.OW;
        const int64_t ioh = (r / g.OW) % g.OH;
        const int64_t in  = r / (g.OW * g.OH);
        char * row = (char *) dst->data + r * dst->nb[1];
        for (int64_t ic = 0; ic < g.IC; ic++) {
            const char * plane = (const char *) src1->data + in * g.sn + ic * g.sc;
            for (int64_t kh = 0; kh < g.KH; kh++) {
                const int64_t ih = ioh * g.s1 + kh * g.d1 - g.p1;
                const bool h_ok = ih >= 0 && ih < g.IH;
                for (int64_t kw = 0; kw < g.KW; kw++) {
                    const int64_t iw = iow * g.s0 + kw * g.d0 - g.p0;
                    float v = 0.0f;
                    if (h_ok && iw >= 0 && iw < g.IW) {
                        v = cv_load(plane + ih * g.sh + iw * g.sw, 0, it);
                    }
                    const int64_t j = (ic * g.KH + kh) * g.KW + kw;
                    if (out_f16) ((lm_ggml_fp16_t *) row)[j] = LM_GGML_FP32_TO_FP16(v);
                    else         ((float *) row)[j] = v;
                }
            }
        }
    }
}

// a: the convolution kernel (shape only), b: gradient of the im2col result,
// ne: shape of the im2col input (the result's shape)
struct lm_ggml_tensor * lm_ggml_im2col_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        int64_t * ne, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D) {
    // not checked by the reference's constructor, but its kernel relies on them
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_F32 || b->type == LM_GGML_TYPE_F16);
    LM_GGML_ASSERT(s0 > 0 && (!is_2D || s1 > 0));
    const int64_t IC = is_2D ? ne[2] : ne[1];
    const int64_t KH = is_2D ? a->ne[1] : 1;
    LM_GGML_ASSERT(b->ne[0] == IC * KH * a->ne[0]);
    LM_GGML_ASSERT(b->ne[1] == conv_out_size(ne[0], a->ne[0], s0, p0, d0));
    if (is_2D) {
        LM_GGML_ASSERT(b->ne[2] == conv_out_size(ne[1], a->ne[1], s1, p1, d1));
        LM_GGML_ASSERT(b->ne[3] == ne[3]);
    } else {
        LM_GGML_ASSERT(b->ne[2] == ne[2]);
    }
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    im2col_set_params(r, s0, s1, p0, p1, d0, d1, is_2D);
    r->op = LM_GGML_OP_IM2COL_BACK;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// Gathers, for every input pixel, the gradients of the im2col entries that copied it.
static void im2col_back_kernel(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * kern = dst->src[0];
    const struct lm_ggml_tensor * grad = dst->src[1];
    const bool is_2D = lm_ggml_get_op_params_i32(dst, 6) == 1;
    struct im2col_geom g;
    im2col_geom_init(&g, dst, kern, dst, grad->ne[1], is_2D ? grad->ne[2] : 1);
    const size_t gs_w = grad->nb[1], gs_h = is_2D ? grad->nb[2] : 0, gs_n = is_2D ? grad->nb[3] : grad->nb[2];
    const enum lm_ggml_type gt = grad->type;

    int64_t p0, p1;
    lm_ggml_thread_range(g.N * g.IC, params->ith, params->nth, &p0, &p1);
    for (int64_t pl = p0; pl < p1; pl++) {
        const int64_t in = pl / g.IC, ic = pl % g.IC;
        char * plane = (char *) dst->data + in * g.sn + ic * g.sc;
        for (int64_t ih = 0; ih < g.IH; ih++) {
            for (int64_t iw = 0; iw < g.IW; iw++) {
                float acc = 0.0f;
                for (int64_t kh = 0; kh < g.KH; kh++) {
                    const int64_t th = ih + g.p1 - kh * g.d1;
                    if (is_2D && th % g.s1 != 0) continue;
                    const int64_t oh = is_2D ? th / g.s1 : 0;
                    if (oh < 0 || oh >= g.OH) continue;
                    for (int64_t kw = 0; kw < g.KW; kw++) {
                        const int64_t tw = iw + g.p0 - kw * g.d0;
                        if (tw % g.s0 != 0) continue;
                        const int64_t ow = tw / g.s0;
                        if (ow < 0 || ow >= g.OW) continue;
                        const char * grow = (const char *) grad->data + ow * gs_w + oh * gs_h + in * gs_n;
                        acc += cv_load(grow, (ic * g.KH + kh) * g.KW + kw, gt);
                    }
                }
                *(float *)(plane + ih * g.sh + iw * g.sw) = acc;
            }
        }
    }
}

// ================================================================ conv builders

// a: [K, IC, OC], b: [L, IC, N] -> [OL, OC, N]
struct lm_ggml_tensor * lm_ggml_conv_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s0, int p0, int d0) {
    struct lm_ggml_tensor * im = lm_ggml_im2col(ctx, a, b, s0, 0, p0, 0, d0, 0, false, LM_GGML_TYPE_F16); // [IC*K, OL, N]
    struct lm_ggml_tensor * r = lm_ggml_mul_mat(ctx,
            lm_ggml_reshape_2d(ctx, im, im->ne[0], im->ne[2] * im->ne[1]), // [IC*K, N*OL]
            lm_ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1], a->ne[2]));    // [IC*K, OC]
    return lm_ggml_reshape_3d(ctx, r, im->ne[1], a->ne[2], im->ne[2]);
}

// "half padding": the output keeps the input length for odd kernels and s = 1
struct lm_ggml_tensor * lm_ggml_conv_1d_ph(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int s, int d) {
    return lm_ggml_conv_1d(ctx, a, b, s, (int)(a->ne[0] / 2), d);
}

// a: [KW, KH, IC, OC], b: [W, H, IC, N] -> [OW, OH, OC, N]
struct lm_ggml_tensor * lm_ggml_conv_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        int s0, int s1, int p0, int p1, int d0, int d1) {
    struct lm_ggml_tensor * im = lm_ggml_im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, true, a->type); // [IC*KH*KW, OW, OH, N]
    struct lm_ggml_tensor * r = lm_ggml_mul_mat(ctx,
            lm_ggml_reshape_2d(ctx, im, im->ne[0], im->ne[3] * im->ne[2] * im->ne[1]), // [IC*KH*KW, N*OH*OW]
            lm_ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2], a->ne[3]));     // [IC*KH*KW, OC]
    r = lm_ggml_reshape_4d(ctx, r, im->ne[1], im->ne[2], im->ne[3], a->ne[3]);        // [OW, OH, N, OC]
    return lm_ggml_cont(ctx, lm_ggml_permute(ctx, r, 0, 1, 3, 2));                     // [OW, OH, OC, N]
}

// kernel-sized stride, no padding
struct lm_ggml_tensor * lm_ggml_conv_2d_sk_p0(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_ggml_conv_2d(ctx, a, b, (int) a->ne[0], (int) a->ne[1], 0, 0, 1, 1);
}

// stride 1, half padding
struct lm_ggml_tensor * lm_ggml_conv_2d_s1_ph(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b) {
    return lm_ggml_conv_2d(ctx, a, b, 1, 1, (int)(a->ne[0] / 2), (int)(a->ne[1] / 2), 1, 1);
}

// a: [KW, KH, 1, C], b: [W, H, C, N] -> [OW, OH, C, N]: every channel with its own kernel
struct lm_ggml_tensor * lm_ggml_conv_depthwise_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        int s0, int s1, int p0, int p1, int d0, int d1) {
    struct lm_ggml_tensor * ka = lm_ggml_reshape_4d(ctx, a, a->ne[0], a->ne[1], 1, a->ne[2] * a->ne[3]);
    struct lm_ggml_tensor * im = lm_ggml_im2col(ctx, ka,
            lm_ggml_reshape_4d(ctx, b, b->ne[0], b->ne[1], 1, b->ne[2] * b->ne[3]),
            s0, s1, p0, p1, d0, d1, true, LM_GGML_TYPE_F16);                                      // [KH*KW, OW, OH, N*C]
    struct lm_ggml_tensor * ib = lm_ggml_reshape_4d(ctx, im, im->ne[0], im->ne[2] * im->ne[1], b->ne[2], b->ne[3]); // [KH*KW, OH*OW, C, N]
    ka = lm_ggml_reshape_4d(ctx, ka, ka->ne[0] * ka->ne[1], ka->ne[2], ka->ne[3], 1);           // [KH*KW, 1, C, 1]
    struct lm_ggml_tensor * r = lm_ggml_mul_mat(ctx, ka, ib);                                    // [1, OH*OW, C, N]
    return lm_ggml_reshape_4d(ctx, r, im->ne[1], im->ne[2], b->ne[2], b->ne[3]);
}

// ================================================================ transposed convolutions

// a: [K, OC, IC], b: [L, IC] -> [(L-1)*s0 + K, OC]
struct lm_ggml_tensor * lm_ggml_conv_transpose_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        int s0, int p0, int d0) {
    LM_GGML_ASSERT(lm_ggml_is_matrix(b));
    LM_GGML_ASSERT(a->ne[2] == b->ne[1]);
    LM_GGML_ASSERT(a->ne[3] == 1);
    LM_GGML_ASSERT(p0 == 0);
    LM_GGML_ASSERT(d0 == 1);
    // kernel checks of the reference
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_F16);
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(s0 > 0);
    const int64_t ne[4] = { (b->ne[0] - 1) * s0 + (a->ne[0] - 1) + 1, a->ne[1], b->ne[2], 1 };
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    const int32_t p[3] = { s0, p0, d0 };
    lm_ggml_set_op_params(r, p, sizeof(p));
    r->op = LM_GGML_OP_CONV_TRANSPOSE_1D;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

// Each thread owns output channels; every input sample scatters a scaled kernel row.
static void conv_transpose_1d_kernel(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * w = dst->src[0];
    const struct lm_ggml_tensor * x = dst->src[1];
    const int s0 = lm_ggml_get_op_params_i32(dst, 0);
    const int64_t K = w->ne[0], OC = w->ne[1], IC = w->ne[2], L = x->ne[0];
    int64_t c0, c1;
    lm_ggml_thread_range(OC, params->ith, params->nth, &c0, &c1);
    for (int64_t oc = c0; oc < c1; oc++) {
        float * y = (float *)((char *) dst->data + oc * dst->nb[1]);
        for (int64_t i = 0; i < dst->ne[0]; i++) y[i] = 0.0f;
        for (int64_t ic = 0; ic < IC; ic++) {
            const char * wr = (const char *) w->data + oc * w->nb[1] + ic * w->nb[2];
            const float * xr = (const float *)((const char *) x->data + ic * x->nb[1]);
            for (int64_t l = 0; l < L; l++) {
                const float v = xr[l];
                float * yo = y + l * s0;
                for (int64_t k = 0; k < K; k++) yo[k] += v * cv_load(wr, k, w->type);
            }
        }
    }
}

// a: [KW, KH, OC, IC], b: [W, H, IC, N] -> [(W-1)*s + KW, (H-1)*s + KH, OC, N]
struct lm_ggml_tensor * lm_ggml_conv_transpose_2d_p0(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, int stride) {
    LM_GGML_ASSERT(a->ne[3] == b->ne[2]);
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_F16);
    LM_GGML_ASSERT(b->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(stride > 0);
    const int64_t ne[4] = {
        (b->ne[0] - 1) * stride + a->ne[0],
        (b->ne[1] - 1) * stride + a->ne[1],
        a->ne[2], b->ne[3],
    };
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    lm_ggml_set_op_params_i32(r, 0, stride);
    r->op = LM_GGML_OP_CONV_TRANSPOSE_2D;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

static void conv_transpose_2d_kernel(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * w = dst->src[0];
    const struct lm_ggml_tensor * x = dst->src[1];
    const int s = lm_ggml_get_op_params_i32(dst, 0);
    const int64_t KW = w->ne[0], KH = w->ne[1], OC = w->ne[2], IC = w->ne[3];
    const int64_t W = x->ne[0], H = x->ne[1], N = x->ne[3];
    int64_t p0, p1;
    lm_ggml_thread_range(N * OC, params->ith, params->nth, &p0, &p1);
    for (int64_t pl = p0; pl < p1; pl++) {
        const int64_t n = pl / OC, oc = pl % OC;
        char * yp = (char *) dst->data + oc * dst->nb[2] + n * dst->nb[3];
        for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
            float * yr = (float *)(yp + i1 * dst->nb[1]);
            for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) yr[i0] = 0.0f;
        }
        for (int64_t ic = 0; ic < IC; ic++) {
            const char * wp = (const char *) w->data + oc * w->nb[2] + ic * w->nb[3];
            const char * xp = (const char *) x->data + ic * x->nb[2] + n * x->nb[3];
            for (int64_t iy = 0; iy < H; iy++) {
                const float * xr = (const float *)(xp + iy * x->nb[1]);
                for (int64_t ky = 0; ky < KH; ky++) {
                    float * yr = (float *)(yp + (iy * s + ky) * dst->nb[1]);
                    const char * wr = wp + ky * w->nb[1];
                    for (int64_t ix = 0; ix < W; ix++) {
                        const float v = xr[ix];
                        float * yo = yr + ix * s;
                        for (int64_t kx = 0; kx < KW; kx++) yo[kx] += v * cv_load(wr, kx, w->type);
                    }
                }
            }
        }
    }
}

// ================================================================ pooling

// Output length as the reference computes it: in float (p may be fractional
// in pool_2d), truncated toward zero.
static int64_t pool_out_size(int64_t ins, int ks, int s, float p) {
    return (int64_t)((ins + 2 * p - ks) / s + 1);
}

// op_params of POOL_1D: op, k0, s0, p0
struct lm_ggml_tensor * lm_ggml_pool_1d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_op_pool op, int k0, int s0, int p0) {
    LM_GGML_ASSERT(op == LM_GGML_OP_POOL_MAX || op == LM_GGML_OP_POOL_AVG);
    LM_GGML_ASSERT(k0 > 0 && s0 > 0 && p0 >= 0);
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_F16);
    const int64_t ne[4] = { pool_out_size(a->ne[0], k0, s0, (float) p0), a->ne[1], a->ne[2], a->ne[3] };
    LM_GGML_ASSERT(ne[0] > 0);
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    const int32_t p[4] = { op, k0, s0, p0 };
    lm_ggml_set_op_params(r, p, sizeof(p));
    r->op = LM_GGML_OP_POOL_1D;
    r->src[0] = a;
    return r;
}

// The reference only computes k0 == s0 and p0 == 0; this is the general form
// (out-of-range taps skipped, AVG divides by k0 as pool_2d does), identical there.
static void pool_1d_kernel(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src = dst->src[0];
    const enum lm_ggml_op_pool op = (enum lm_ggml_op_pool) lm_ggml_get_op_params_i32(dst, 0);
    const int k0 = lm_ggml_get_op_params_i32(dst, 1);
    const int s0 = lm_ggml_get_op_params_i32(dst, 2);
    const int p0 = lm_ggml_get_op_params_i32(dst, 3);
    const int64_t nr = dst->ne[1] * dst->ne[2] * dst->ne[3];
    int64_t r0, r1;
    lm_ggml_thread_range(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        const char * x = (const char *) src->data + i1 * src->nb[1] + i2 * src->nb[2] + i3 * src->nb[3];
        float * y = (float *)((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3]);
        for (int64_t o = 0; o < dst->ne[0]; o++) {
            float acc = op == LM_GGML_OP_POOL_AVG ? 0.0f : -FLT_MAX;
            for (int k = 0; k < k0; k++) {
                const int64_t j = o * s0 - p0 + k;
                if (j < 0 || j >= src->ne[0]) continue;
                const float v = cv_load(x, j, src->type);
                if (op == LM_GGML_OP_POOL_AVG) acc += v;
                else if (v > acc) acc = v;
            }
            if (op == LM_GGML_OP_POOL_AVG) acc /= k0;
            y[o] = acc;
        }
    }
}

// op_params of POOL_2D / POOL_2D_BACK: op, k0, k1, s0, s1, p0, p1 (paddings truncated to int)
static void pool_2d_set_params(struct lm_ggml_tensor * t, enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1) {
    const int32_t p[7] = { op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1 };
    lm_ggml_set_op_params(t, p, sizeof(p));
}

struct lm_ggml_tensor * lm_ggml_pool_2d(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, enum lm_ggml_op_pool op,
        int k0, int k1, int s0, int s1, float p0, float p1) {
    LM_GGML_ASSERT(op == LM_GGML_OP_POOL_MAX || op == LM_GGML_OP_POOL_AVG);
    LM_GGML_ASSERT(k0 > 0 && k1 > 0 && s0 > 0 && s1 > 0);
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_F16);
    const int64_t ne[4] = {
        pool_out_size(a->ne[0], k0, s0, p0),
        pool_out_size(a->ne[1], k1, s1, p1),
        a->ne[2], a->ne[3],
    };
    LM_GGML_ASSERT(ne[0] > 0 && ne[1] > 0);
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    pool_2d_set_params(r, op, k0, k1, s0, s1, p0, p1);
    r->op = LM_GGML_OP_POOL_2D;
    r->src[0] = a;
    return r;
}

struct pool2d_cfg { enum lm_ggml_op_pool op; int k0, k1, s0, s1, p0, p1; };

static struct pool2d_cfg pool2d_cfg_get(const struct lm_ggml_tensor * t) {
    struct pool2d_cfg c;
    c.op = (enum lm_ggml_op_pool) lm_ggml_get_op_params_i32(t, 0);
    c.k0 = lm_ggml_get_op_params_i32(t, 1);
    c.k1 = lm_ggml_get_op_params_i32(t, 2);
    c.s0 = lm_ggml_get_op_params_i32(t, 3);
    c.s1 = lm_ggml_get_op_params_i32(t, 4);
    c.p0 = lm_ggml_get_op_params_i32(t, 5);
    c.p1 = lm_ggml_get_op_params_i32(t, 6);
    return c;
}

static void pool_2d_kernel(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src = dst->src[0];
    const struct pool2d_cfg c = pool2d_cfg_get(dst);
    const int ka = c.k0 * c.k1;
    const int64_t np = dst->ne[2] * dst->ne[3];
    int64_t q0, q1;
    lm_ggml_thread_range(np, params->ith, params->nth, &q0, &q1);
    for (int64_t pl = q0; pl < q1; pl++) {
        const int64_t i2 = pl % dst->ne[2], i3 = pl / dst->ne[2];
        const char * xp = (const char *) src->data + i2 * src->nb[2] + i3 * src->nb[3];
        char * yp = (char *) dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
        for (int64_t oy = 0; oy < dst->ne[1]; oy++) {
            float * yr = (float *)(yp + oy * dst->nb[1]);
            for (int64_t ox = 0; ox < dst->ne[0]; ox++) {
                const int64_t ix = ox * c.s0 - c.p0, iy = oy * c.s1 - c.p1;
                float acc = c.op == LM_GGML_OP_POOL_AVG ? 0.0f : -FLT_MAX;
                for (int ky = 0; ky < c.k1; ky++) {
                    if (iy + ky < 0 || iy + ky >= src->ne[1]) continue;
                    const char * xr = xp + (iy + ky) * src->nb[1];
                    for (int kx = 0; kx < c.k0; kx++) {
                        const int64_t j = ix + kx;
                        if (j < 0 || j >= src->ne[0]) continue;
                        const float v = cv_load(xr, j, src->type);
                        if (c.op == LM_GGML_OP_POOL_AVG) acc += v;
                        else if (v > acc) acc = v;
                    }
                }
                if (c.op == LM_GGML_OP_POOL_AVG) acc /= ka;
                yr[ox] = acc;
            }
        }
    }
}

// a: gradient of the pooled output, af: the pooling input -> gradient of af
struct lm_ggml_tensor * lm_ggml_pool_2d_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * af,
        enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1) {
    LM_GGML_ASSERT(op == LM_GGML_OP_POOL_MAX || op == LM_GGML_OP_POOL_AVG);
    LM_GGML_ASSERT(a->type == LM_GGML_TYPE_F32);
    LM_GGML_ASSERT(af->type == LM_GGML_TYPE_F32 || af->type == LM_GGML_TYPE_F16);
    LM_GGML_ASSERT(a->ne[2] == af->ne[2] && a->ne[3] == af->ne[3]);
    struct lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, af->ne);
    pool_2d_set_params(r, op, k0, k1, s0, s1, p0, p1);
    r->op = LM_GGML_OP_POOL_2D_BACK;
    r->src[0] = a;
    r->src[1] = af;
    return r;
}

// MAX routes each gradient to the first maximum of its window; AVG spreads it evenly.
static void pool_2d_back_kernel(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * g  = dst->src[0];
    const struct lm_ggml_tensor * xf = dst->src[1];
    const struct pool2d_cfg c = pool2d_cfg_get(dst);
    const int ka = c.k0 * c.k1;
    const int64_t np = dst->ne[2] * dst->ne[3];
    int64_t q0, q1;
    lm_ggml_thread_range(np, params->ith, params->nth, &q0, &q1);
    for (int64_t pl = q0; pl < q1; pl++) {
        const int64_t i2 = pl % dst->ne[2], i3 = pl / dst->ne[2];
        char * yp = (char *) dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
        const char * xp = (const char *) xf->data + i2 * xf->nb[2] + i3 * xf->nb[3];
        const char * gp = (const char *) g->data + i2 * g->nb[2] + i3 * g->nb[3];
        for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
            float * yr = (float *)(yp + i1 * dst->nb[1]);
            for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) yr[i0] = 0.0f;
        }
        for (int64_t oy = 0; oy < g->ne[1]; oy++) {
            const float * gr = (const float *)(gp + oy * g->nb[1]);
            for (int64_t ox = 0; ox < g->ne[0]; ox++) {
                const float gv = gr[ox];
                const int64_t ix = ox * c.s0 - c.p0, iy = oy * c.s1 - c.p1;
                if (c.op == LM_GGML_OP_POOL_MAX) {
                    float best = -FLT_MAX;
                    int64_t bx = ix, by = iy;
                    for (int ky = 0; ky < c.k1; ky++) {
                        if (iy + ky < 0 || iy + ky >= dst->ne[1]) continue;
                        const char * xr = xp + (iy + ky) * xf->nb[1];
                        for (int kx = 0; kx < c.k0; kx++) {
                            const int64_t j = ix + kx;
                            if (j < 0 || j >= dst->ne[0]) continue;
                            const float v = cv_load(xr, j, xf->type);
                            if (v <= best) continue;
                            best = v; bx = j; by = iy + ky;
                        }
                    }
                    if (best == -FLT_MAX) continue;
                    ((float *)(yp + by * dst->nb[1]))[bx] += gv;
                } else {
                    const float gs = gv / ka;
                    for (int ky = 0; ky < c.k1; ky++) {
                        if (iy + ky < 0 || iy + ky >= dst->ne[1]) continue;
                        float * yr = (float *)(yp + (iy + ky) * dst->nb[1]);
                        for (int kx = 0; kx < c.k0; kx++) {
                            const int64_t j = ix + kx;
                            if (j < 0 || j >= dst->ne[0]) continue;
                            yr[j] += gs;
                        }
                    }
                }
            }
        }
    }
}

// ================================================================ registration

void lm_cpu_register_conv(struct lm_cpu_op * table) {
    table[LM_GGML_OP_IM2COL]            = (struct lm_cpu_op) { im2col_kernel, NULL, NULL, NULL };
    table[LM_GGML_OP_IM2COL_BACK]       = (struct lm_cpu_op) { im2col_back_kernel, NULL, NULL, NULL };
    table[LM_GGML_OP_CONV_TRANSPOSE_1D] = (struct lm_cpu_op) { conv_transpose_1d_kernel, NULL, NULL, NULL };
    table[LM_GGML_OP_CONV_TRANSPOSE_2D] = (struct lm_cpu_op) { conv_transpose_2d_kernel, NULL, NULL, NULL };
    table[LM_GGML_OP_POOL_1D]           = (struct lm_cpu_op) { pool_1d_kernel, NULL, NULL, NULL };
    table[LM_GGML_OP_POOL_2D]           = (struct lm_cpu_op) { pool_2d_kernel, NULL, NULL, NULL };
    table[LM_GGML_OP_POOL_2D_BACK]      = (struct lm_cpu_op) { pool_2d_back_kernel, NULL, NULL, NULL };
}
