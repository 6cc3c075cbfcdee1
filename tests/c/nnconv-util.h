// nnconv-util.h - helpers for test-ops-nn.c / test-ops-conv.c / test-ops-attn.c:
// random fills, strided reads, NMSE checks against double-precision references
// and a driver that runs every test with 1, 2, 4 threads on each SIMD level
// (a test fails when a check of test-check.h fails during it).
#pragma once

#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t u_seed = 12345;
static float u_rand(float lo, float hi) {
    u_seed = u_seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)((u_seed >> 8) * (1.0 / 16777216.0));
}

static void u_fill(struct lm_ggml_tensor * t, float lo, float hi) {
    const int64_t n = lm_ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        const float v = u_rand(lo, hi);
        if (t->type == LM_GGML_TYPE_F32) ((float *) t->data)[i] = v;
        else if (t->type == LM_GGML_TYPE_F16) ((lm_ggml_fp16_t *) t->data)[i] = lm_ggml_fp32_to_fp16(v);
        else if (t->type == LM_GGML_TYPE_I32) ((int32_t *) t->data)[i] = (int32_t) v;
    }
    if (lm_ggml_is_quantized(t->type)) { // contiguous rows of quantized blocks
        const int64_t nrows = n / t->ne[0];
        float * f = malloc(sizeof(float) * (size_t) n);
        for (int64_t i = 0; i < n; i++) f[i] = u_rand(lo, hi);
        lm_ggml_quantize_chunk(t->type, f, t->data, 0, nrows, t->ne[0], NULL);
        free(f);
    }
}

static double u_get(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = (const char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
    switch (t->type) {
        case LM_GGML_TYPE_F32: return *(const float *) p;
        case LM_GGML_TYPE_F16: return lm_ggml_fp16_to_fp32(*(const lm_ggml_fp16_t *) p);
        case LM_GGML_TYPE_I32: return *(const int32_t *) p;
        default: break;
    }
    if (lm_ggml_is_quantized(t->type)) { // the element's block, dequantized
        const int64_t bs = lm_ggml_blck_size(t->type);
        float blk[256];
        const char * row = (const char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
        lm_ggml_get_type_traits(t->type)->to_float(row + (i0 / bs) * lm_ggml_type_size(t->type), blk, bs);
        return blk[i0 % bs];
    }
    switch (t->type) {
        default: return NAN;
    }
}

// Compares t (any strides) with ref laid out in ne order.
static void u_check(const char * what, const struct lm_ggml_tensor * t, const double * ref, double tol) {
    double num = 0, den = 0, maxd = 0;
    int64_t i = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++, i++) {
        const double a = u_get(t, i0, i1, i2, i3), b = ref[i];
        num += (a - b) * (a - b);
        den += b * b;
        if (fabs(a - b) > maxd || a != a) maxd = a != a ? INFINITY : fabs(a - b);
    }
    const double e = den > 0 ? num / den : num;
    checkf(e <= tol, "%s: nmse %.3g (tol %.1g), max abs diff %.3g", what, e, tol, maxd);
}

static struct lm_ggml_context * u_ctx(void) {
    struct lm_ggml_init_params ip = { 128u << 20, NULL, false };
    return lm_ggml_init(ip);
}

static void u_compute(struct lm_ggml_context * ctx, struct lm_ggml_tensor * t, int nth) {
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, t);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
}

typedef void (*u_test_fn)(int nth);
struct u_test { const char * name; u_test_fn fn; };

// Runs every test on each SIMD level the CPU has (scalar, AVX2, AVX-512; NEON
// and dotprod on arm64) with 1, 2, 4 threads.
static int u_main(const struct u_test * tests, int n, int argc, char ** argv) {
    int fails = 0, runs = 0;
    for (int i = 0; i < n; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        const int before = g_fail;
        for (int level = 0; level <= 4; level++) {
            if (!lm_cpu_force_level(level)) continue;
            for (int nth = 1; nth <= 4; nth *= 2) {
                const int run_before = g_fail;
                tests[i].fn(nth);
                if (g_fail != run_before) printf("  (%s: level %d, %d threads)\n", tests[i].name, level, nth);
                runs++;
            }
        }
        lm_cpu_force_level(-1);
        printf("%-4s %s\n", g_fail != before ? "FAIL" : "ok", tests[i].name);
        fails += g_fail != before;
    }
    printf("%d tests failed (%d runs)\n", fails, runs);
    return fails ? 1 : 0;
}
