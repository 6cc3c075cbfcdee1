// test-ops-attn.c - flash_attn_ext against a double-precision softmax
// attention (f16/f32/q8_0 K and V, masks with -inf, GQA broadcast, ALiBi,
// logit softcap, ne3 > 1), its precision flag and constructor checks, the
// same bits from q8_0 as from its f32 values and from a KV cache's layout as
// from heads one after the other; 1/2/4
// threads, every SIMD level (AVX2 and AVX-512 compute tiles of rows).
//
// Build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-ops-attn.c $(find csrc -name '*.c') -lm
#include "nnconv-util.h"

struct fa_case {
    int D, DV, n_q, n_kv, n_head, n_head_kv, ne3;
    enum lm_ggml_type kt, vt;
    bool mask, inf_mask;
    float scale, max_bias, softcap;
};

static void fa_run(int nth, const struct fa_case * c) {
    struct lm_ggml_context * ctx = u_ctx();
    struct lm_ggml_tensor * q = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, c->D, c->n_q, c->n_head, c->ne3);
    struct lm_ggml_tensor * k = lm_ggml_new_tensor_4d(ctx, c->kt, c->D, c->n_kv, c->n_head_kv, c->ne3);
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_4d(ctx, c->vt, c->DV, c->n_kv, c->n_head_kv, c->ne3);
    u_fill(q, -1, 1); u_fill(k, -1, 1); u_fill(v, -1, 1);
    struct lm_ggml_tensor * m = NULL;
    if (c->mask) {
        m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, c->n_kv, LM_GGML_PAD(c->n_q, LM_GGML_KQ_MASK_PAD));
        u_fill(m, -2, 0);
        if (c->inf_mask) { // causal-style: query i sees kv j <= i + n_kv - n_q
            for (int i = 0; i < c->n_q; i++) for (int j = 0; j < c->n_kv; j++)
                if (j > i + c->n_kv - c->n_q) ((lm_ggml_fp16_t *) m->data)[i * c->n_kv + j] = lm_ggml_fp32_to_fp16(-INFINITY);
        }
    }
    struct lm_ggml_tensor * y = lm_ggml_flash_attn_ext(ctx, q, k, v, m, c->scale, c->max_bias, c->softcap);
    check(y->ne[0] == c->DV && y->ne[1] == c->n_head && y->ne[2] == c->n_q && y->ne[3] == c->ne3, "fa shape");
    check(lm_ggml_flash_attn_ext_get_prec(y) == LM_GGML_PREC_DEFAULT, "default prec");
    lm_ggml_flash_attn_ext_set_prec(y, LM_GGML_PREC_F32);
    check(lm_ggml_flash_attn_ext_get_prec(y) == LM_GGML_PREC_F32 && y->op_params[3] == LM_GGML_PREC_F32 &&
          lm_ggml_get_op_params_f32(y, 0) == c->scale && lm_ggml_get_op_params_f32(y, 1) == c->max_bias &&
          lm_ggml_get_op_params_f32(y, 2) == c->softcap, "fa op_params");
    u_compute(ctx, y, nth);

    const uint32_t nhl = 1u << (uint32_t) floor(log2(c->n_head));
    const double m0 = pow(2.0, -c->max_bias / nhl), m1 = pow(2.0, -(c->max_bias / 2.0) / nhl);
    double * ref = malloc(sizeof(double) * c->DV * c->n_head * c->n_q * c->ne3);
    double * s = malloc(sizeof(double) * c->n_kv);
    for (int i3 = 0; i3 < c->ne3; i3++) for (int iq = 0; iq < c->n_q; iq++) for (int h = 0; h < c->n_head; h++) {
        const int hk = h / (c->n_head / c->n_head_kv);
        const double slope = c->max_bias > 0 ? (h < (int) nhl ? pow(m0, h + 1) : pow(m1, 2 * (h - (int) nhl) + 1)) : 1.0;
        double mx = -INFINITY;
        for (int j = 0; j < c->n_kv; j++) {
            double d = 0;
            for (int e = 0; e < c->D; e++) d += u_get(q, e, iq, h, i3) * u_get(k, e, j, hk, i3);
            d *= c->scale;
            if (c->softcap != 0) d = c->softcap * tanh(d / c->softcap);
            if (m) d += slope * u_get(m, j, iq, 0, 0);
            s[j] = d;
            if (d > mx) mx = d;
        }
        double sum = 0;
        for (int j = 0; j < c->n_kv; j++) { s[j] = exp(s[j] - mx); sum += s[j]; }
        double * o = ref + (((int64_t) i3 * c->n_q + iq) * c->n_head + h) * c->DV;
        for (int e = 0; e < c->DV; e++) {
            double acc = 0;
            for (int j = 0; j < c->n_kv; j++) acc += s[j] * u_get(v, e, j, hk, i3);
            o[e] = acc / sum;
        }
    }
    char what[128];
    snprintf(what, sizeof(what), "flash_attn_ext D%d DV%d kt%d vt%d mask%d bias%g cap%g", c->D, c->DV, c->kt, c->vt, c->mask, c->max_bias, c->softcap);
    u_check(what, y, ref, 1e-9);
    free(ref); free(s);
    lm_ggml_free(ctx);
}

static void t_fa(int nth) {
    const enum lm_ggml_type F16 = LM_GGML_TYPE_F16, F32 = LM_GGML_TYPE_F32, Q8 = LM_GGML_TYPE_Q8_0;
    const struct fa_case cases[] = {
        { 64, 64, 5, 32, 4, 2, 1, F16, F16, true, false, 0.125f, 0.0f, 0.0f },
        { 64, 64, 7, 40, 4, 4, 1, F32, F32, true, true, 0.125f, 0.0f, 0.0f },
        { 40, 40, 3, 19, 6, 3, 2, F16, F32, true, true, 0.15f, 8.0f, 0.0f },
        { 72, 72, 4, 33, 5, 5, 1, F32, F16, false, false, 0.1f, 0.0f, 20.0f },
        { 128, 128, 1, 300, 8, 2, 1, F16, F16, true, true, 0.088f, 0.0f, 30.0f },
        { 48, 24, 3, 17, 2, 1, 1, F16, F16, true, false, 0.2f, 0.0f, 0.0f }, // DV != DK (beyond the reference)
        { 17, 9, 2, 5, 3, 3, 1, F32, F16, true, true, 0.3f, 2.0f, 0.0f },   // odd sizes: scalar tails
        { 64, 64, 6, 37, 4, 2, 1, Q8, Q8, true, true, 0.125f, 0.0f, 0.0f }, // rows converted to f32
        { 32, 32, 9, 21, 2, 2, 1, Q8, F16, true, false, 0.2f, 0.0f, 5.0f },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) fa_run(nth, &cases[i]);
}

// Bits that must not depend on how K and V are held: q8_0 rows give the
// bits of the same values in f32 (the kernels convert q8_0 in their loads,
// each element the product dequantization gives), and a KV cache's layout
// (a position's heads side by side, read block by block across the heads)
// gives the bits of K and V laid out head by head (read one head at a time).
static void fa_bits(int nth, const char * what, struct lm_ggml_context * ctx, struct lm_ggml_tensor * q,
                    struct lm_ggml_tensor * k1, struct lm_ggml_tensor * v1, struct lm_ggml_tensor * k2, struct lm_ggml_tensor * v2,
                    struct lm_ggml_tensor * m) {
    struct lm_ggml_tensor * y1 = lm_ggml_flash_attn_ext(ctx, q, k1, v1, m, 0.125f, 0.0f, 0.0f);
    struct lm_ggml_tensor * y2 = lm_ggml_flash_attn_ext(ctx, q, k2, v2, m, 0.125f, 0.0f, 0.0f);
    u_compute(ctx, y1, nth);
    u_compute(ctx, y2, nth);
    check(memcmp(y1->data, y2->data, lm_ggml_nbytes(y1)) == 0, what);
}

static void t_fa_bits(int nth) {
    const int D = 64, n_q = 3, n_kv = 70, n_head = 8, n_head_kv = 4;
    struct lm_ggml_context * ctx = u_ctx();
    struct lm_ggml_tensor * q = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, D, n_q, n_head);
    struct lm_ggml_tensor * m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, n_kv, LM_GGML_PAD(n_q, LM_GGML_KQ_MASK_PAD));
    u_fill(q, -1, 1); u_fill(m, -2, 0);
    struct lm_ggml_tensor * kq = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_Q8_0, D, n_kv, n_head_kv);
    struct lm_ggml_tensor * vq = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_Q8_0, D, n_kv, n_head_kv);
    struct lm_ggml_tensor * kf = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, D, n_kv, n_head_kv);
    struct lm_ggml_tensor * vf = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, D, n_kv, n_head_kv);
    u_fill(kf, -1, 1); u_fill(vf, -1, 1);
    const lm_ggml_to_float_t deq = lm_ggml_get_type_traits(LM_GGML_TYPE_Q8_0)->to_float;
    lm_ggml_quantize_chunk(LM_GGML_TYPE_Q8_0, kf->data, kq->data, 0, n_kv * n_head_kv, D, NULL);
    lm_ggml_quantize_chunk(LM_GGML_TYPE_Q8_0, vf->data, vq->data, 0, n_kv * n_head_kv, D, NULL);
    deq(kq->data, kf->data, lm_ggml_nelements(kf));
    deq(vq->data, vf->data, lm_ggml_nelements(vf));
    fa_bits(nth, "q8_0 K/V = their f32 values, bit for bit", ctx, q, kq, vq, kf, vf, m);
    struct lm_ggml_tensor * v16 = lm_ggml_cast(ctx, vf, LM_GGML_TYPE_F16);
    fa_bits(nth, "q8_0 K, f16 V = f32 K, f16 V", ctx, q, kq, v16, kf, v16, m);
    // the cache layout: [D, head, position] stored, viewed as [D, position, head]
    struct lm_ggml_tensor * kc = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, D, n_head_kv, n_kv);
    struct lm_ggml_tensor * vc = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, D, n_head_kv, n_kv);
    u_fill(kc, -1, 1); u_fill(vc, -1, 1);
    struct lm_ggml_tensor * kp = lm_ggml_permute(ctx, kc, 0, 2, 1, 3), * vp = lm_ggml_permute(ctx, vc, 0, 2, 1, 3);
    check(kp->nb[2] < kp->nb[1], "the view has a position's heads side by side");
    struct lm_ggml_tensor * kh = lm_ggml_cont(ctx, kp), * vh = lm_ggml_cont(ctx, vp);
    u_compute(ctx, kh, 1);
    u_compute(ctx, vh, 1);
    fa_bits(nth, "a KV cache's layout = head by head, bit for bit", ctx, q, kp, vp, kh, vh, m);
    lm_ggml_free(ctx);
}

// Constructor checks must reject what the kernel cannot compute (recoverably).
static void t_fa_asserts(int nth) {
    (void) nth;
    struct lm_ggml_context * ctx = u_ctx();
    struct lm_ggml_tensor * q = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 64, 5, 4);
    struct lm_ggml_tensor * k = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 64, 32, 3);
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 64, 32, 3);
    struct lm_ggml_tensor * m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, 32, 8); // not padded to 32
    EXPECT_ABORT("an assert (GQA: 4 heads not a multiple of 3)", "", lm_ggml_flash_attn_ext(ctx, q, k, v, NULL, 1, 0, 0));
    k = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 64, 32, 2);
    v = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F16, 64, 32, 2);
    EXPECT_ABORT("an assert (mask pad)", "", lm_ggml_flash_attn_ext(ctx, q, k, v, m, 1, 0, 0));
    EXPECT_ABORT("an assert (alibi w/o mask)", "", lm_ggml_flash_attn_ext(ctx, q, k, v, NULL, 1, 8.0f, 0));
    EXPECT_ABORT("flash_attn_back aborts", "", lm_ggml_flash_attn_back(ctx, q, k, v, q, false));
    lm_ggml_free(ctx);
}

int main(int argc, char ** argv) {
    const struct u_test tests[] = { { "flash_attn_ext", t_fa }, { "flash_attn_bits", t_fa_bits }, { "flash_attn_asserts", t_fa_asserts } };
    return u_main(tests, (int)(sizeof(tests) / sizeof(tests[0])), argc, argv);
}
