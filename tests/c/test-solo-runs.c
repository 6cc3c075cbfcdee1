// test-solo-runs.c - small row-wise nodes computed by thread 0 alone (runs of
// them end with one barrier; see lm_cpu_node_is_solo in csrc/cpu/ggml-cpu.c): the same
// bits at 1 to 4 threads for a decode-like graph that mixes them with matrix
// products, and a job that stops inside a run (a kernel error, an abort
// callback) stops there at every thread count: it returns, the nodes after
// the stop are not computed, the ones before are. Which copies count as
// small: not a store whose rows each take a line of their own.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-solo-runs.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(struct lm_ggml_tensor * t, float scale, int seed) {
    float * d = t->data;
    for (int64_t i = 0; i < lm_ggml_nelements(t); i++) d[i] = scale * sinf(0.37f * (float) (i + 13 * seed));
}

static enum lm_ggml_status run(struct lm_ggml_cgraph * g, int nth, lm_ggml_abort_callback cb) {
    struct lm_ggml_cplan p = lm_ggml_graph_plan(g, nth, NULL);
    uint8_t * work = p.work_size ? malloc(p.work_size) : NULL;
    p.work_data = work;
    p.abort_callback = cb;
    const enum lm_ggml_status st = lm_ggml_graph_compute(g, &p);
    free(work);
    return st;
}

// One llama-like block on a single token: norm, projections (matrix
// products: not solo), rope, soft_max over a few positions, SiLU gate,
// residual adds; its output bits at nth threads against nth = 1.
static void test_bits(void) {
    struct lm_ggml_init_params ip = { (size_t) 32 << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    const int d = 96, hd = 16, heads = 6, ff = 200, nkv = 16; // nkv * heads == d
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, d, 1);
    struct lm_ggml_tensor * wn = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, d);
    struct lm_ggml_tensor * wq = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, d, d);
    struct lm_ggml_tensor * kc = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, hd, nkv, heads);
    struct lm_ggml_tensor * wg = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, d, ff);
    struct lm_ggml_tensor * wu = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, d, ff);
    struct lm_ggml_tensor * wd = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, ff, d);
    struct lm_ggml_tensor * pos = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 1);
    fill(x, 1.0f, 1); fill(wn, 0.5f, 2); fill(wq, 0.1f, 3); fill(kc, 0.3f, 4); fill(wu, 0.1f, 6); fill(wd, 0.07f, 7);
    for (int64_t i = 0; i < lm_ggml_nelements(wg); i++) ((lm_ggml_fp16_t *) wg->data)[i] = lm_ggml_fp32_to_fp16(0.1f * cosf((float) i));
    ((int32_t *) pos->data)[0] = 5;

    struct lm_ggml_tensor * h = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, x, 1e-5f), wn);
    struct lm_ggml_tensor * q = lm_ggml_rope(ctx, lm_ggml_reshape_3d(ctx, lm_ggml_mul_mat(ctx, wq, h), hd, heads, 1), pos, hd, 0);
    struct lm_ggml_tensor * kq = lm_ggml_mul_mat(ctx, kc, lm_ggml_permute(ctx, q, 0, 2, 1, 3)); // [nkv, 1, heads]
    kq = lm_ggml_soft_max_ext(ctx, kq, NULL, 0.25f, 0.0f);
    struct lm_ggml_tensor * att = lm_ggml_cont(ctx, lm_ggml_reshape_2d(ctx, kq, nkv * heads, 1));
    struct lm_ggml_tensor * x1 = lm_ggml_add(ctx, x, lm_ggml_scale(ctx, att, 0.5f));
    struct lm_ggml_tensor * h2 = lm_ggml_mul(ctx, lm_ggml_rms_norm(ctx, x1, 1e-5f), wn);
    struct lm_ggml_tensor * g = lm_ggml_mul(ctx, lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, wg, h2)), lm_ggml_mul_mat(ctx, wu, h2));
    struct lm_ggml_tensor * out = lm_ggml_add(ctx, x1, lm_ggml_mul_mat(ctx, wd, g));
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, out);

    float want[96];
    check(run(gf, 1, NULL) == LM_GGML_STATUS_SUCCESS, "block at 1 thread");
    memcpy(want, out->data, sizeof(want));
    for (int nth = 2; nth <= 4; nth++) {
        for (int rep = 0; rep < 3; rep++) {
            memset(out->data, 0xff, sizeof(want));
            char what[64];
            snprintf(what, sizeof(what), "block at %d threads: the bits of 1 thread", nth);
            check(run(gf, nth, NULL) == LM_GGML_STATUS_SUCCESS && memcmp(out->data, want, sizeof(want)) == 0, what);
        }
    }
    lm_ggml_free(ctx);
}

static int g_abort_after, g_abort_calls;
static bool abort_cb(void * data) {
    (void) data;
    return ++g_abort_calls > g_abort_after;
}

// A chain of 24 small adds (one run of solo nodes) with a get_rows of an
// index out of range at step 10, or an abort after step 6.
static void test_stops(void) {
    lm_ggml_log_set(quiet_log, NULL);
    struct lm_ggml_init_params ip = { (size_t) 8 << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    const int n = 64, steps = 24, bad_at = 10;
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n, 2);
    struct lm_ggml_tensor * idx = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 2);
    for (int i = 0; i < 2 * n; i++) ((float *) a->data)[i] = 1.0f;
    struct lm_ggml_tensor * t[24];
    struct lm_ggml_tensor * c = a;
    for (int s = 0; s < steps; s++) {
        c = s == bad_at ? lm_ggml_get_rows(ctx, c, idx) : lm_ggml_add(ctx, c, a);
        t[s] = c;
    }
    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, c);
    for (int nth = 1; nth <= 4; nth++) {
        for (int mode = 0; mode < 3; mode++) { // 0: fine, 1: bad index, 2: abort
            ((int32_t *) idx->data)[0] = 0;
            ((int32_t *) idx->data)[1] = mode == 1 ? 7 : 1;
            for (int s = 0; s < steps; s++) for (int i = 0; i < 2 * n; i++) ((float *) t[s]->data)[i] = -1.0f;
            g_abort_after = mode == 2 ? 6 : 1 << 30;
            g_abort_calls = 0;
            const enum lm_ggml_status st = run(g, nth, mode == 2 ? abort_cb : NULL);
            const enum lm_ggml_status want = mode == 0 ? LM_GGML_STATUS_SUCCESS : mode == 1 ? LM_GGML_STATUS_FAILED : LM_GGML_STATUS_ABORTED;
            const int last = mode == 0 ? steps - 1 : mode == 1 ? bad_at : 6; // the last node computed
            bool ok = st == want;
            for (int s = 0; s < steps && ok; s++) {
                // step s holds s + 2 (s <= bad_at: each add adds 1 to 1) or s + 1 after the get_rows
                const float expect = s <= last ? (float) (s < bad_at ? s + 2 : s + 1) : -1.0f;
                if (s == bad_at && mode == 1) continue; // the failing node itself: partly written
                for (int i = 0; i < 2 * n; i++) ok = ok && ((float *) t[s]->data)[i] == expect;
            }
            char what[80];
            snprintf(what, sizeof(what), "chain at %d threads, mode %d: stops after node %d", nth, mode, last);
            check(ok, what);
        }
    }
    lm_ggml_log_set(NULL, NULL);
    lm_ggml_free(ctx);
}

// The solo rule for copies counts lines as well as elements: a one-token
// row stored transposed into a V cache (one element a row, rows a cache
// row apart) writes a line per element and is shared out; the same
// elements stored contiguously (a K cache row) stay with thread 0.
static void test_copy_rule(void) {
    struct lm_ggml_init_params ip = { (size_t) 64 << 20, NULL, true };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    const int64_t d = 2048, nctx = 512;
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, d, 1);
    struct lm_ggml_tensor * kc = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F16, d * nctx);
    struct lm_ggml_tensor * vc = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, nctx, d);
    struct lm_ggml_tensor * kst = lm_ggml_cpy(ctx, v, lm_ggml_view_1d(ctx, kc, d, 5 * d * sizeof(lm_ggml_fp16_t)));
    struct lm_ggml_tensor * vdst = lm_ggml_view_2d(ctx, vc, 1, d, vc->nb[1], 5 * sizeof(lm_ggml_fp16_t));
    struct lm_ggml_tensor * vst = lm_ggml_cpy(ctx, lm_ggml_transpose(ctx, v), vdst);
    check(lm_cpu_node_is_solo(kst), "a 2048-element contiguous KV store is solo");
    check(!lm_cpu_node_is_solo(vst), "a 2048-element transposed V store (a line per element) is shared out");
    struct lm_ggml_tensor * few = lm_ggml_cpy(ctx, lm_ggml_view_2d(ctx, lm_ggml_transpose(ctx, v), 1, 32, v->nb[0], 0),
                                              lm_ggml_view_2d(ctx, vc, 1, 32, vc->nb[1], 0));
    check(lm_cpu_node_is_solo(few), "a 32-element transposed store is solo");
    check(!lm_cpu_node_is_solo(lm_ggml_cont(ctx, lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8192))), "an 8192-element copy is shared out");
    lm_ggml_free(ctx);
}

int main(void) {
    lm_ggml_cpu_init();
    test_bits();
    test_stops();
    test_copy_rule();
    return check_summary();
}
