// ctor-conv.c - constructors of convolution and pooling: im2col (+ back), the
// conv_* graph builders (im2col + mul_mat + reshapes, laid out as in ggml
// so that shapes and node sequences match), conv_transpose_1d/2d
// and pool_1d/2d (+ back). The kernels are in cpu/ops-conv.c.
#include "ctor-impl.h"

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
    // checked by ggml's kernels (or divisions by them)
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

// a: the convolution kernel (shape only), b: gradient of the im2col result,
// ne: shape of the im2col input (the result's shape)
struct lm_ggml_tensor * lm_ggml_im2col_back(struct lm_ggml_context * ctx, struct lm_ggml_tensor * a, struct lm_ggml_tensor * b,
        int64_t * ne, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D) {
    // not checked by ggml's constructor, but its kernel relies on them
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
    // ggml's kernel checks
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

// ================================================================ pooling

// Output length as ggml computes it: in float (p may be fractional
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
