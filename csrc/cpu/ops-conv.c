// ops-conv.c - CPU kernels of convolution and pooling: im2col (+ back),
// conv_transpose_1d/2d and pool_1d/2d (+ back). The constructors, and the
// conv_* graph builders (im2col + mul_mat + reshapes), are in
// graph/ctor-conv.c; see ggml-cpu-impl.h for the kernel contract.
//
// op_params (i32) of IM2COL / IM2COL_BACK: s0, s1, p0, p1, d0, d1, is_2D;
// of CONV_TRANSPOSE_1D: s0, p0, d0; of CONV_TRANSPOSE_2D: stride; of POOL_1D:
// op, k0, s0, p0; of POOL_2D / POOL_2D_BACK: op, k0, k1, s0, s1, p0, p1.
#include "ggml-cpu-impl.h"

#include <float.h>

// Reads element i of a row of f32 or f16 values.
static inline float cv_load(const void * row, int64_t i, enum lm_ggml_type t) {
    return t == LM_GGML_TYPE_F32 ? ((const float *) row)[i] : lm_ggml_table_f32_f16[((const lm_ggml_fp16_t *) row)[i]];
}

// ================================================================ im2col

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

static void lm_compute_im2col(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
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

// Gathers, for every input pixel, the gradients of the im2col entries that copied it.
static void lm_compute_im2col_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
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

// ================================================================ transposed convolutions

// Each thread owns output channels; every input sample scatters a scaled kernel row.
static void lm_compute_conv_transpose_1d(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
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

static void lm_compute_conv_transpose_2d(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
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

// ggml only computes k0 == s0 and p0 == 0; this is the general form
// (out-of-range taps skipped, AVG divides by k0 as pool_2d does), identical there.
static void lm_compute_pool_1d(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
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

static void lm_compute_pool_2d(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
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

// MAX routes each gradient to the first maximum of its window; AVG spreads it evenly.
static void lm_compute_pool_2d_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
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

// ================================================================ descriptors

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_im2col            = { .compute = lm_compute_im2col };
const struct lm_cpu_op lm_cpu_op_im2col_back       = { .compute = lm_compute_im2col_back };
const struct lm_cpu_op lm_cpu_op_conv_transpose_1d = { .compute = lm_compute_conv_transpose_1d };
const struct lm_cpu_op lm_cpu_op_conv_transpose_2d = { .compute = lm_compute_conv_transpose_2d };
const struct lm_cpu_op lm_cpu_op_pool_1d           = { .compute = lm_compute_pool_1d };
const struct lm_cpu_op lm_cpu_op_pool_2d           = { .compute = lm_compute_pool_2d };
const struct lm_cpu_op lm_cpu_op_pool_2d_back      = { .compute = lm_compute_pool_2d_back };
