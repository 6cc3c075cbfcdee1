// test-ops-nn.c - rope (all variants), win_part/unpart, get_rel_pos,
// add_rel_pos, ssm_conv, ssm_scan, rwkv_wkv6 against double-precision
// references, with 1/2/4 threads and scalar/AVX2 kernels.
//
// Build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-ops-nn.c $(find csrc -name '*.c') -lm
#include "nnconv-util.h"

// ---------------------------------------------------------------- rope

struct rope_p {
    int n_dims, mode, n_ctx_orig;
    float base, fscale, ext, attn, bf, bs;
};

static void ref_rope(const struct lm_ggml_tensor * x, const int32_t * pos, const float * ff, const struct rope_p * p,
        bool fwd, double * out) {
    const int half = p->n_dims / 2;
    double lo = 0, hi = 0;
    if (p->ext != 0) {
        const double d_fast = p->n_dims * log(p->n_ctx_orig / (p->bf * 2 * M_PI)) / (2 * log(p->base));
        const double d_slow = p->n_dims * log(p->n_ctx_orig / (p->bs * 2 * M_PI)) / (2 * log(p->base));
        lo = fmax(0, floor(d_fast));
        hi = fmin(p->n_dims - 1, ceil(d_slow));
    }
    int64_t o = 0;
    for (int64_t i3 = 0; i3 < x->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < x->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < x->ne[1]; i1++, o += x->ne[0]) {
        for (int64_t i0 = 0; i0 < x->ne[0]; i0++) out[o + i0] = u_get(x, i0, i1, i2, i3);
        for (int i = 0; i < half; i++) {
            const double ext = pos[i2] * pow(p->base, -2.0 * i / p->n_dims) / (ff ? ff[i] : 1.0);
            const double itp = p->fscale * ext;
            double th = itp, msc = p->attn;
            if (p->ext != 0) {
                const double y = (i - lo) / fmax(0.001, hi - lo);
                const double mix = (1 - fmin(1, fmax(0, y))) * p->ext;
                th = itp * (1 - mix) + ext * mix;
                msc *= 1 + 0.1 * log(1.0 / p->fscale);
            }
            const double c = cos(th) * msc, s = sin(th) * msc * (fwd ? 1 : -1);
            const int j0 = (p->mode & 2) ? i : 2*i, j1 = (p->mode & 2) ? i + half : 2*i + 1;
            const double a = u_get(x, j0, i1, i2, i3), b = u_get(x, j1, i1, i2, i3);
            out[o + j0] = a*c - b*s;
            out[o + j1] = a*s + b*c;
        }
    }
}

// variant: 0 rope_ext, 1 rope_ext_inplace, 2 rope_back, 3 rope (defaults), 4 rope_custom, 5 strided view input
static void rope_case(int nth, enum lm_ggml_type type, int mode, int variant, bool with_ff, bool yarn) {
    struct lm_ggml_context * ctx = u_ctx();
    const int64_t ne0 = 40, nh = 3, nt = 5, nb = 2;
    struct rope_p p = { 32, mode, 64, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f };
    if (yarn) { p.fscale = 0.25f; p.ext = 1.0f; p.attn = 0.9f; }
    if (variant == 3) { p.n_ctx_orig = 0; p.bf = 0; p.bs = 0; with_ff = false; yarn = false; }
    struct lm_ggml_tensor * x;
    if (variant == 5) {
        struct lm_ggml_tensor * big = lm_ggml_new_tensor_4d(ctx, type, ne0 + 8, nh + 1, nt, nb);
        u_fill(big, -1, 1);
        x = lm_ggml_view_4d(ctx, big, ne0, nh, nt, nb, big->nb[1], big->nb[2], big->nb[3], big->nb[1]);
    } else {
        x = lm_ggml_new_tensor_4d(ctx, type, ne0, nh, nt, nb);
        u_fill(x, -1, 1);
    }
    struct lm_ggml_tensor * pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, nt);
    u_fill(pos, 0, 200);
    struct lm_ggml_tensor * ff = NULL;
    if (with_ff) { ff = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, p.n_dims / 2); u_fill(ff, 0.5f, 2.0f); }

    double * ref = malloc(sizeof(double) * lm_ggml_nelements(x));
    ref_rope(x, (const int32_t *) pos->data, ff ? (const float *) ff->data : NULL, &p, variant != 2, ref);

    struct lm_ggml_tensor * y;
    switch (variant) {
        case 1:  y = lm_ggml_rope_ext_inplace(ctx, x, pos, ff, p.n_dims, mode, p.n_ctx_orig, p.base, p.fscale, p.ext, p.attn, p.bf, p.bs); break;
        case 2:  y = lm_ggml_rope_back(ctx, x, pos, ff, p.n_dims, mode, p.n_ctx_orig, p.base, p.fscale, p.ext, p.attn, p.bf, p.bs); break;
        case 3:  y = lm_ggml_rope(ctx, x, pos, p.n_dims, mode); break;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        case 4:  y = lm_ggml_rope_custom(ctx, x, pos, p.n_dims, mode, p.n_ctx_orig, p.base, p.fscale, p.ext, p.attn, p.bf, p.bs); break;
#pragma GCC diagnostic pop
        default: y = lm_ggml_rope_ext(ctx, x, pos, ff, p.n_dims, mode, p.n_ctx_orig, p.base, p.fscale, p.ext, p.attn, p.bf, p.bs); break;
    }
    check(variant != 1 || (y->view_src == x && y->data == x->data), "inplace rope is not a view");
    check(y->op == (variant == 2 ? LM_GGML_OP_ROPE_BACK : LM_GGML_OP_ROPE) && y->op_params[1] == p.n_dims &&
          y->op_params[2] == mode && y->op_params[4] == p.n_ctx_orig && lm_ggml_get_op_params_f32(y, 5) == p.base &&
          lm_ggml_get_op_params_f32(y, 10) == p.bs, "rope op_params layout");
    u_compute(ctx, y, nth);
    char what[96];
    snprintf(what, sizeof(what), "rope type %d mode %d variant %d ff %d yarn %d", type, mode, variant, with_ff, yarn);
    u_check(what, y, ref, type == LM_GGML_TYPE_F16 ? 2e-6 : 1e-9);
    free(ref);
    lm_ggml_free(ctx);
}

static void t_rope(int nth) {
    const enum lm_ggml_type types[2] = { LM_GGML_TYPE_F32, LM_GGML_TYPE_F16 };
    for (int ti = 0; ti < 2; ti++)
    for (int mode = 0; mode <= 2; mode += 2) {
        for (int v = 0; v <= 5; v++) rope_case(nth, types[ti], mode, v, v == 0 || v == 2, v == 0 || v == 1 || v == 4);
        rope_case(nth, types[ti], mode, 0, false, false);
    }
}

static void t_rope_corr_dims(int nth) {
    (void) nth;
    float d[2];
    lm_ggml_rope_yarn_corr_dims(128, 4096, 10000.0f, 32.0f, 1.0f, d);
    const double lo = floor(128 * log(4096 / (32 * 2 * M_PI)) / (2 * log(10000.0)));
    const double hi = ceil (128 * log(4096 / (1 * 2 * M_PI)) / (2 * log(10000.0)));
    checkf(d[0] == (float) lo && d[1] == (float) fmin(127, hi), "corr dims %g %g", d[0], d[1]);
}

// ---------------------------------------------------------------- SAM windows

static void t_win(int nth) {
    struct lm_ggml_context * ctx = u_ctx();
    const int w = 3;
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 4, 7, 5);
    u_fill(a, -1, 1);
    struct lm_ggml_tensor * p = lm_ggml_win_part(ctx, a, w);
    struct lm_ggml_tensor * u = lm_ggml_win_unpart(ctx, p, 7, 5, w);
    check(p->ne[0] == 4 && p->ne[1] == w && p->ne[2] == w && p->ne[3] == 3 * 2, "win_part shape");
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, u);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
    double * ref = malloc(sizeof(double) * lm_ggml_nelements(p));
    int64_t o = 0;
    for (int64_t i3 = 0; i3 < p->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < w; i2++)
    for (int64_t i1 = 0; i1 < w; i1++)
    for (int64_t i0 = 0; i0 < 4; i0++, o++) {
        const int64_t py = i3 / 3, px = i3 % 3, y = py * w + i2, x = px * w + i1;
        ref[o] = (y < 5 && x < 7) ? u_get(a, i0, x, y, 0) : 0.0;
    }
    u_check("win_part", p, ref, 0);
    double * ra = malloc(sizeof(double) * lm_ggml_nelements(a));
    for (int64_t i = 0; i < lm_ggml_nelements(a); i++) ra[i] = ((float *) a->data)[i];
    u_check("win_unpart(win_part)", u, ra, 0);
    free(ref); free(ra);
    lm_ggml_free(ctx);
}

static void t_rel_pos(int nth) {
    struct lm_ggml_context * ctx = u_ctx();
    // get_rel_pos
    const int kh = 5;
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, 6, 2 * kh - 1);
    u_fill(a, -1, 1);
    struct lm_ggml_tensor * g = lm_ggml_get_rel_pos(ctx, a, kh, kh);
    u_compute(ctx, g, nth);
    double ref[6 * 5 * 5];
    int64_t o = 0;
    for (int q = 0; q < kh; q++) for (int k = 0; k < kh; k++) for (int i = 0; i < 6; i++) ref[o++] = u_get(a, i, (kh - k - 1) + q, 0, 0);
    u_check("get_rel_pos", g, ref, 0);

    // add_rel_pos: attn [K*K, qh*qw, B], pw/ph [K, qw, qh, B]
    const int K = 4, qw = 3, qh = 2, B = 2;
    for (int inplace = 0; inplace <= 1; inplace++) {
        struct lm_ggml_tensor * at = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, K * K, qw * qh, B);
        struct lm_ggml_tensor * pw = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, K, qw, qh, B);
        struct lm_ggml_tensor * ph = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, K, qw, qh, B);
        u_fill(at, -1, 1); u_fill(pw, -1, 1); u_fill(ph, -1, 1);
        double * r = malloc(sizeof(double) * lm_ggml_nelements(at));
        for (int b = 0; b < B; b++) for (int q = 0; q < qw * qh; q++) for (int rr = 0; rr < K; rr++) for (int c = 0; c < K; c++) {
            const int64_t i = ((int64_t) b * qw * qh + q) * K * K + rr * K + c;
            r[i] = ((float *) at->data)[i] + ((float *) ph->data)[(b * qw * qh + q) * K + rr] + ((float *) pw->data)[(b * qw * qh + q) * K + c];
        }
        struct lm_ggml_tensor * y = inplace ? lm_ggml_add_rel_pos_inplace(ctx, at, pw, ph) : lm_ggml_add_rel_pos(ctx, at, pw, ph);
        check(!inplace || y->view_src == at, "add_rel_pos_inplace not a view");
        u_compute(ctx, y, nth);
        u_check(inplace ? "add_rel_pos_inplace" : "add_rel_pos", y, r, 1e-12);
        free(r);
    }
    lm_ggml_free(ctx);
}

// ---------------------------------------------------------------- Mamba

static void t_ssm(int nth) {
    struct lm_ggml_context * ctx = u_ctx();
    const int d_conv = 4, d_inner = 13, n_t = 5, n_s = 3, d_state = 6;
    struct lm_ggml_tensor * sx = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_conv - 1 + n_t, d_inner, n_s);
    struct lm_ggml_tensor * cw = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, d_conv, d_inner);
    u_fill(sx, -1, 1); u_fill(cw, -1, 1);
    struct lm_ggml_tensor * y = lm_ggml_ssm_conv(ctx, sx, cw);
    u_compute(ctx, y, nth);
    double * r = malloc(sizeof(double) * d_inner * n_t * n_s);
    for (int s = 0; s < n_s; s++) for (int t = 0; t < n_t; t++) for (int i = 0; i < d_inner; i++) {
        double acc = 0;
        for (int k = 0; k < d_conv; k++) acc += u_get(sx, t + k, i, s, 0) * u_get(cw, k, i, 0, 0);
        r[(s * n_t + t) * d_inner + i] = acc;
    }
    u_check("ssm_conv", y, r, 1e-12);
    free(r);

    struct lm_ggml_tensor * st = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_state, d_inner, n_s);
    struct lm_ggml_tensor * x  = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_inner, n_t, n_s);
    struct lm_ggml_tensor * dt = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_inner, n_t, n_s);
    struct lm_ggml_tensor * A  = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, d_state, d_inner);
    struct lm_ggml_tensor * B  = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_state, n_t, n_s);
    struct lm_ggml_tensor * C  = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_state, n_t, n_s);
    u_fill(st, -1, 1); u_fill(x, -1, 1); u_fill(dt, -2, 25); u_fill(A, -1, 0); u_fill(B, -1, 1); u_fill(C, -1, 1);
    struct lm_ggml_tensor * ys = lm_ggml_ssm_scan(ctx, st, x, dt, A, B, C);
    u_compute(ctx, ys, nth);
    const int64_t ny = lm_ggml_nelements(x);
    double * rs = malloc(sizeof(double) * (ny + lm_ggml_nelements(st)));
    for (int s = 0; s < n_s; s++) {
        double * state = rs + ny + (int64_t) s * d_inner * d_state;
        for (int i = 0; i < d_inner * d_state; i++) state[i] = ((float *) st->data)[s * d_inner * d_state + i];
        for (int t = 0; t < n_t; t++) for (int i = 0; i < d_inner; i++) {
            const double d = u_get(dt, i, t, s, 0);
            const double sp = d <= 20 ? log1p(exp(d)) : d;
            const double xd = u_get(x, i, t, s, 0) * sp;
            double acc = 0;
            for (int j = 0; j < d_state; j++) {
                double * v = &state[i * d_state + j];
                *v = *v * exp(sp * u_get(A, j, i, 0, 0)) + u_get(B, j, t, s, 0) * xd;
                acc += *v * u_get(C, j, t, s, 0);
            }
            rs[(s * n_t + t) * d_inner + i] = acc;
        }
    }
    u_check("ssm_scan", ys, rs, 1e-11);
    free(rs);
    lm_ggml_free(ctx);
}

// ---------------------------------------------------------------- RWKV

static void t_rwkv(int nth) {
    struct lm_ggml_context * ctx = u_ctx();
    const int S = 8, H = 3, T = 6, NS = 2;
    struct lm_ggml_tensor * k  = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, S, 1, H, T);
    struct lm_ggml_tensor * v  = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 1, S, H, T);
    struct lm_ggml_tensor * r  = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 1, S, H, T);
    struct lm_ggml_tensor * tf = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, S, H);
    struct lm_ggml_tensor * td = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 1, S, H, T);
    struct lm_ggml_tensor * st = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, S * S * H, NS);
    u_fill(k, -1, 1); u_fill(v, -1, 1); u_fill(r, -1, 1); u_fill(tf, -1, 1); u_fill(td, 0, 1); u_fill(st, -1, 1);
    struct lm_ggml_tensor * y = lm_ggml_rwkv_wkv6(ctx, k, v, r, tf, td, st);
    u_compute(ctx, y, nth);
    const int Cn = S * H;
    double * ref = calloc((size_t) Cn * (T + S * NS), sizeof(double));
    double * state = ref + Cn * T;
    const float * K = k->data, * V = v->data, * R = r->data, * TF = tf->data, * TD = td->data, * S0 = st->data;
    for (int i = 0; i < S * Cn * NS; i++) state[i] = S0[i];
    for (int t = 0; t < T; t++) {
        const int seq = t / (T / NS);
        for (int h = 0; h < H; h++) for (int j = 0; j < S; j++) {
            double acc = 0;
            for (int i = 0; i < S; i++) {
                const int b = t * Cn + h * S;
                const double kv = (double) K[b + i] * V[b + j];
                const double prev = state[seq * S * Cn + h * S * S + i * S + j];
                acc += (kv * TF[h * S + i] + prev) * R[b + i];
            }
            ref[t * Cn + h * S + j] = acc;
        }
        for (int h = 0; h < H; h++) for (int i = 0; i < S; i++) for (int j = 0; j < S; j++) {
            const int b = t * Cn + h * S;
            double * sv = &state[seq * S * Cn + h * S * S + i * S + j];
            *sv = *sv * TD[b + i] + (double) K[b + i] * V[b + j];
        }
    }
    u_check("rwkv_wkv6", y, ref, 1e-11);
    free(ref);
    lm_ggml_free(ctx);
}

int main(int argc, char ** argv) {
    const struct u_test tests[] = {
        { "rope", t_rope }, { "rope_yarn_corr_dims", t_rope_corr_dims }, { "win_part_unpart", t_win },
        { "rel_pos", t_rel_pos }, { "ssm", t_ssm }, { "rwkv_wkv6", t_rwkv },
    };
    return u_main(tests, (int)(sizeof(tests) / sizeof(tests[0])), argc, argv);
}
