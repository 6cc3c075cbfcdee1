// test-ops-conv.c - im2col (+ back), conv_1d/_ph, conv_2d/_sk_p0/_s1_ph,
// conv_depthwise_2d, conv_transpose_1d/2d, pool_1d/2d (+ back) against direct
// double-precision convolutions, with 1/2/4 threads and scalar/AVX2 kernels.
//
// Build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-ops-conv.c $(find csrc -name '*.c') -lm
#include "nnconv-util.h"

#include <float.h>

// x: [W, H, IC, N], w: [KW, KH, IC, OC] -> ref [OW, OH, OC, N]
static void ref_conv2d(const struct lm_ggml_tensor * x, const struct lm_ggml_tensor * w, int s0, int s1, int p0, int p1,
        int d0, int d1, int64_t OW, int64_t OH, double * out) {
    const int64_t W = x->ne[0], H = x->ne[1], IC = x->ne[2], N = x->ne[3], KW = w->ne[0], KH = w->ne[1], OC = w->ne[3];
    int64_t o = 0;
    for (int64_t n = 0; n < N; n++) for (int64_t oc = 0; oc < OC; oc++)
    for (int64_t oh = 0; oh < OH; oh++) for (int64_t ow = 0; ow < OW; ow++, o++) {
        double acc = 0;
        for (int64_t ic = 0; ic < IC; ic++) for (int64_t kh = 0; kh < KH; kh++) for (int64_t kw = 0; kw < KW; kw++) {
            const int64_t ih = oh * s1 + kh * d1 - p1, iw = ow * s0 + kw * d0 - p0;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            acc += u_get(x, iw, ih, ic, n) * u_get(w, kw, kh, ic, oc);
        }
        out[o] = acc;
    }
}

static int64_t osz(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

static void t_im2col(int nth) {
    for (int is2d = 0; is2d <= 1; is2d++)
    for (int out16 = 0; out16 <= 1; out16++) {
        struct lm_ggml_context * ctx = u_ctx();
        const int s0 = 2, s1 = 1, p0 = 1, p1 = is2d ? 2 : 0, d0 = 2, d1 = 1;
        struct lm_ggml_tensor * k = is2d ? lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F16, 3, 2, 3, 5) : lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 3, 3, 5);
        struct lm_ggml_tensor * x = is2d ? lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 11, 6, 3, 2) : lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 11, 3, 2);
        u_fill(x, -1, 1);
        struct lm_ggml_tensor * y = lm_ggml_im2col(ctx, k, x, s0, s1, p0, p1, d0, d1, is2d, out16 ? LM_GGML_TYPE_F16 : LM_GGML_TYPE_F32);
        u_compute(ctx, y, nth);
        const int64_t KW = 3, KH = is2d ? 2 : 1, IC = 3, N = 2, W = 11, H = is2d ? 6 : 1;
        const int64_t OW = osz(W, KW, s0, p0, d0), OH = is2d ? osz(H, KH, s1, p1, d1) : 1;
        check(y->ne[0] == IC * KH * KW && y->ne[1] == OW && y->ne[2] == (is2d ? OH : N) && y->ne[3] == (is2d ? N : 1), "im2col shape");
        double * ref = malloc(sizeof(double) * lm_ggml_nelements(y));
        int64_t o = 0;
        for (int64_t n = 0; n < N; n++) for (int64_t oh = 0; oh < OH; oh++) for (int64_t ow = 0; ow < OW; ow++)
        for (int64_t ic = 0; ic < IC; ic++) for (int64_t kh = 0; kh < KH; kh++) for (int64_t kw = 0; kw < KW; kw++, o++) {
            // 1D uses p1 too (as the reference): any p1 != 0 zeroes the 1D result
            const int64_t ih = is2d ? oh * s1 + kh * d1 - p1 : -p1, iw = ow * s0 + kw * d0 - p0;
            double v = 0;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = is2d ? u_get(x, iw, ih, ic, n) : u_get(x, iw, ic, n, 0);
            ref[o] = out16 ? lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16((float) v)) : v;
        }
        u_check(is2d ? "im2col 2d" : "im2col 1d", y, ref, 0);

        // im2col_back of a random gradient of y's shape
        struct lm_ggml_tensor * g = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, y->ne);
        u_fill(g, -1, 1);
        struct lm_ggml_tensor * b = lm_ggml_im2col_back(ctx, k, g, x->ne, s0, s1, p0, p1, d0, d1, is2d);
        u_compute(ctx, b, nth);
        double * rb = calloc((size_t) lm_ggml_nelements(x), sizeof(double));
        o = 0;
        for (int64_t n = 0; n < N; n++) for (int64_t oh = 0; oh < OH; oh++) for (int64_t ow = 0; ow < OW; ow++)
        for (int64_t ic = 0; ic < IC; ic++) for (int64_t kh = 0; kh < KH; kh++) for (int64_t kw = 0; kw < KW; kw++, o++) {
            const int64_t ih = is2d ? oh * s1 + kh * d1 - p1 : 0, iw = ow * s0 + kw * d0 - p0;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) rb[((n * IC + ic) * H + ih) * W + iw] += ((float *) g->data)[o];
        }
        u_check("im2col_back", b, rb, 1e-12);
        free(ref); free(rb);
        lm_ggml_free(ctx);
    }
}

static void t_conv2d(int nth) {
    for (int v = 0; v < 4; v++) {
        struct lm_ggml_context * ctx = u_ctx();
        const bool k16 = v == 1;
        struct lm_ggml_tensor * w = lm_ggml_new_tensor_4d(ctx, k16 ? LM_GGML_TYPE_F16 : LM_GGML_TYPE_F32, 3, 3, 4, 5);
        struct lm_ggml_tensor * x = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 9, 8, 4, 2);
        u_fill(w, -1, 1); u_fill(x, -1, 1);
        int s0 = 2, s1 = 1, p0 = 1, p1 = 0, d0 = 1, d1 = 2;
        struct lm_ggml_tensor * y;
        if (v == 2)      { y = lm_ggml_conv_2d_sk_p0(ctx, w, x); s0 = 3; s1 = 3; p0 = p1 = 0; d0 = d1 = 1; }
        else if (v == 3) { y = lm_ggml_conv_2d_s1_ph(ctx, w, x); s0 = s1 = 1; p0 = p1 = 1; d0 = d1 = 1; }
        else             { y = lm_ggml_conv_2d(ctx, w, x, s0, s1, p0, p1, d0, d1); }
        u_compute(ctx, y, nth);
        const int64_t OW = osz(9, 3, s0, p0, d0), OH = osz(8, 3, s1, p1, d1);
        checkf(y->ne[0] == OW && y->ne[1] == OH && y->ne[2] == 5 && y->ne[3] == 2, "conv_2d shape v%d", v);
        double * ref = malloc(sizeof(double) * OW * OH * 5 * 2);
        ref_conv2d(x, w, s0, s1, p0, p1, d0, d1, OW, OH, ref);
        u_check("conv_2d", y, ref, k16 ? 2e-6 : 1e-10);
        free(ref);
        lm_ggml_free(ctx);
    }
}

static void t_conv1d(int nth) {
    for (int v = 0; v < 2; v++) {
        struct lm_ggml_context * ctx = u_ctx();
        struct lm_ggml_tensor * w = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 5, 3, 4); // [K, IC, OC]
        struct lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 17, 3);    // [L, IC]
        u_fill(w, -1, 1); u_fill(x, -1, 1);
        const int s = 2, d = v ? 1 : 2, p = v ? 2 : 3;
        struct lm_ggml_tensor * y = v ? lm_ggml_conv_1d_ph(ctx, w, x, s, d) : lm_ggml_conv_1d(ctx, w, x, s, p, d);
        u_compute(ctx, y, nth);
        const int64_t OL = osz(17, 5, s, p, d);
        check(y->ne[0] == OL && y->ne[1] == 4, "conv_1d shape");
        // as a 2D conv with H = KH = 1
        struct lm_ggml_tensor * x4 = lm_ggml_reshape_4d(ctx, x, 17, 1, 3, 1);
        struct lm_ggml_tensor * w4 = lm_ggml_reshape_4d(ctx, w, 5, 1, 3, 4);
        double * ref = malloc(sizeof(double) * OL * 4);
        ref_conv2d(x4, w4, s, 1, p, 0, d, 1, OL, 1, ref);
        u_check("conv_1d", y, ref, 2e-6);
        free(ref);
        lm_ggml_free(ctx);
    }
}

static void t_conv_dw(int nth) {
    struct lm_ggml_context * ctx = u_ctx();
    const int C = 3, N = 2;
    struct lm_ggml_tensor * w = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F16, 3, 3, 1, C);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 8, 7, C, N);
    u_fill(w, -1, 1); u_fill(x, -1, 1);
    struct lm_ggml_tensor * y = lm_ggml_conv_depthwise_2d(ctx, w, x, 1, 2, 1, 1, 1, 1);
    u_compute(ctx, y, nth);
    const int64_t OW = osz(8, 3, 1, 1, 1), OH = osz(7, 3, 2, 1, 1);
    check(y->ne[0] == OW && y->ne[1] == OH && y->ne[2] == C && y->ne[3] == N, "depthwise shape");
    double * ref = malloc(sizeof(double) * OW * OH * C * N);
    int64_t o = 0;
    for (int n = 0; n < N; n++) for (int c = 0; c < C; c++) for (int oh = 0; oh < OH; oh++) for (int ow = 0; ow < OW; ow++, o++) {
        double acc = 0;
        for (int kh = 0; kh < 3; kh++) for (int kw = 0; kw < 3; kw++) {
            const int ih = oh * 2 + kh - 1, iw = ow + kw - 1;
            if (ih < 0 || ih >= 7 || iw < 0 || iw >= 8) continue;
            acc += u_get(x, iw, ih, c, n) * u_get(w, kw, kh, 0, c);
        }
        ref[o] = acc;
    }
    u_check("conv_depthwise_2d", y, ref, 2e-6);
    free(ref);
    lm_ggml_free(ctx);
}

static void t_conv_transpose(int nth) {
    for (int k16 = 0; k16 <= 1; k16++) {
        struct lm_ggml_context * ctx = u_ctx();
        const enum lm_ggml_type kt = k16 ? LM_GGML_TYPE_F16 : LM_GGML_TYPE_F32;
        // 1D: w [K, OC, IC], x [L, IC]
        const int K = 4, OC = 3, IC = 5, L = 7, s = 3;
        struct lm_ggml_tensor * w = lm_ggml_new_tensor_3d(ctx, kt, K, OC, IC);
        struct lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, L, IC);
        u_fill(w, -1, 1); u_fill(x, -1, 1);
        struct lm_ggml_tensor * y = lm_ggml_conv_transpose_1d(ctx, w, x, s, 0, 1);
        u_compute(ctx, y, nth);
        const int OL = (L - 1) * s + K;
        double * ref = calloc((size_t) OL * OC, sizeof(double));
        for (int oc = 0; oc < OC; oc++) for (int ic = 0; ic < IC; ic++) for (int l = 0; l < L; l++) for (int k = 0; k < K; k++)
            ref[oc * OL + l * s + k] += u_get(x, l, ic, 0, 0) * u_get(w, k, oc, ic, 0);
        check(y->ne[0] == OL && y->ne[1] == OC, "conv_transpose_1d shape");
        u_check("conv_transpose_1d", y, ref, 1e-12);
        free(ref);

        // 2D: w [KW, KH, OC, IC], x [W, H, IC, N]
        const int KW = 3, KH = 2, W = 5, H = 4, N = 2, st = 2;
        struct lm_ggml_tensor * w2 = lm_ggml_new_tensor_4d(ctx, kt, KW, KH, OC, IC);
        struct lm_ggml_tensor * x2 = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, W, H, IC, N);
        u_fill(w2, -1, 1); u_fill(x2, -1, 1);
        struct lm_ggml_tensor * y2 = lm_ggml_conv_transpose_2d_p0(ctx, w2, x2, st);
        u_compute(ctx, y2, nth);
        const int OW = (W - 1) * st + KW, OH = (H - 1) * st + KH;
        double * r2 = calloc((size_t) OW * OH * OC * N, sizeof(double));
        for (int n = 0; n < N; n++) for (int oc = 0; oc < OC; oc++) for (int ic = 0; ic < IC; ic++)
        for (int iy = 0; iy < H; iy++) for (int ix = 0; ix < W; ix++) for (int ky = 0; ky < KH; ky++) for (int kx = 0; kx < KW; kx++)
            r2[((n * OC + oc) * OH + iy * st + ky) * OW + ix * st + kx] += u_get(x2, ix, iy, ic, n) * u_get(w2, kx, ky, oc, ic);
        check(y2->ne[0] == OW && y2->ne[1] == OH && y2->ne[2] == OC && y2->ne[3] == N, "conv_transpose_2d shape");
        check(y2->op_params[0] == st, "conv_transpose_2d params");
        u_check("conv_transpose_2d_p0", y2, r2, 1e-12);
        free(r2);
        lm_ggml_free(ctx);
    }
}

// generic pooling reference: out-of-range taps skipped, AVG divides by the full window
static double ref_pool(const struct lm_ggml_tensor * x, enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, int p0, int p1,
        int64_t ox, int64_t oy, int64_t i2, int64_t i3, bool is2d) {
    double acc = op == LM_GGML_OP_POOL_AVG ? 0 : -FLT_MAX;
    for (int ky = 0; ky < k1; ky++) for (int kx = 0; kx < k0; kx++) {
        const int64_t ix = ox * s0 - p0 + kx, iy = is2d ? oy * s1 - p1 + ky : oy;
        if (ix < 0 || ix >= x->ne[0] || iy < 0 || iy >= x->ne[1]) continue;
        const double v = u_get(x, ix, iy, i2, i3);
        if (op == LM_GGML_OP_POOL_AVG) acc += v; else if (v > acc) acc = v;
    }
    return op == LM_GGML_OP_POOL_AVG ? acc / (k0 * k1) : acc;
}

static void t_pool(int nth) {
    for (int op = 0; op <= 1; op++)
    for (int x16 = 0; x16 <= 1; x16++) {
        struct lm_ggml_context * ctx = u_ctx();
        struct lm_ggml_tensor * x = lm_ggml_new_tensor_4d(ctx, x16 ? LM_GGML_TYPE_F16 : LM_GGML_TYPE_F32, 11, 9, 3, 2);
        u_fill(x, -1, 1);
        const int k0 = 3, k1 = 2, s0 = 2, s1 = 2, p0 = 1, p1 = 1;
        struct lm_ggml_tensor * y1 = lm_ggml_pool_1d(ctx, x, (enum lm_ggml_op_pool) op, k0, s0, p0);
        struct lm_ggml_tensor * y2 = lm_ggml_pool_2d(ctx, x, (enum lm_ggml_op_pool) op, k0, k1, s0, s1, (float) p0, (float) p1);
        u_compute(ctx, y1, nth);
        u_compute(ctx, y2, nth);
        double * r = malloc(sizeof(double) * 11 * 9 * 3 * 2);
        int64_t o = 0;
        for (int64_t i3 = 0; i3 < 2; i3++) for (int64_t i2 = 0; i2 < 3; i2++) for (int64_t i1 = 0; i1 < y1->ne[1]; i1++)
        for (int64_t i0 = 0; i0 < y1->ne[0]; i0++) r[o++] = ref_pool(x, (enum lm_ggml_op_pool) op, k0, 1, s0, 1, p0, 0, i0, i1, i2, i3, false);
        u_check("pool_1d", y1, r, 1e-12);
        o = 0;
        for (int64_t i3 = 0; i3 < 2; i3++) for (int64_t i2 = 0; i2 < 3; i2++) for (int64_t i1 = 0; i1 < y2->ne[1]; i1++)
        for (int64_t i0 = 0; i0 < y2->ne[0]; i0++) r[o++] = ref_pool(x, (enum lm_ggml_op_pool) op, k0, k1, s0, s1, p0, p1, i0, i1, i2, i3, true);
        u_check("pool_2d", y2, r, 1e-12);

        // pool_2d_back
        struct lm_ggml_tensor * g = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, y2->ne);
        u_fill(g, -1, 1);
        struct lm_ggml_tensor * b = lm_ggml_pool_2d_back(ctx, g, x, (enum lm_ggml_op_pool) op, k0, k1, s0, s1, (float) p0, (float) p1);
        u_compute(ctx, b, nth);
        double * rb = calloc(11 * 9 * 3 * 2, sizeof(double));
        for (int64_t i3 = 0; i3 < 2; i3++) for (int64_t i2 = 0; i2 < 3; i2++)
        for (int64_t oy = 0; oy < g->ne[1]; oy++) for (int64_t ox = 0; ox < g->ne[0]; ox++) {
            const double gv = u_get(g, ox, oy, i2, i3);
            double best = -FLT_MAX; int64_t bx = -1, by = -1;
            for (int ky = 0; ky < k1; ky++) for (int kx = 0; kx < k0; kx++) {
                const int64_t ix = ox * s0 - p0 + kx, iy = oy * s1 - p1 + ky;
                if (ix < 0 || ix >= 11 || iy < 0 || iy >= 9) continue;
                double * cell = &rb[((i3 * 3 + i2) * 9 + iy) * 11 + ix];
                if (op == LM_GGML_OP_POOL_AVG) { *cell += gv / (k0 * k1); continue; }
                const double v = u_get(x, ix, iy, i2, i3);
                if (v > best) { best = v; bx = ix; by = iy; }
            }
            if (op == LM_GGML_OP_POOL_MAX && bx >= 0) rb[((i3 * 3 + i2) * 9 + by) * 11 + bx] += gv;
        }
        u_check("pool_2d_back", b, rb, 1e-12);
        free(r); free(rb);
        lm_ggml_free(ctx);
    }
}

int main(int argc, char ** argv) {
    const struct u_test tests[] = {
        { "im2col", t_im2col }, { "conv_2d", t_conv2d }, { "conv_1d", t_conv1d }, { "conv_depthwise_2d", t_conv_dw },
        { "conv_transpose", t_conv_transpose }, { "pool", t_pool },
    };
    return u_main(tests, (int)(sizeof(tests) / sizeof(tests[0])), argc, argv);
}
