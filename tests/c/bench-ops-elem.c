// bench-ops-elem.c - micro-benchmarks of the hot elementwise / norm kernels
// (add, mul, silu, soft_max, rms_norm) at the scalar and AVX2 levels.
// Each op runs on a [ne0, nrows] f32 tensor through the graph API.
//
// Build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/bench-ops-elem.c $(find csrc -name '*.c') -lm
// Usage: a.out [ne0 nrows threads]
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec*1e-9;
}

enum which { B_ADD, B_MUL, B_SILU, B_SOFT_MAX, B_RMS_NORM };
static const char * names[] = { "add", "mul", "silu", "soft_max", "rms_norm" };

static double bench(enum which w, int64_t ne0, int64_t nr, int n_threads) {
    struct lm_ggml_init_params ip = { (size_t)(ne0*nr*4*4) + (256u << 20), NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, ne0, nr);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, ne0, nr);
    for (int64_t i = 0; i < ne0*nr; i++) {
        ((float *) a->data)[i] = (float)((i*7919) % 1000) / 250.0f - 2.0f;
        ((float *) b->data)[i] = (float)((i*104729) % 1000) / 500.0f - 1.0f;
    }
    struct lm_ggml_tensor * out = NULL;
    switch (w) {
        case B_ADD:      out = lm_ggml_add(ctx, a, b); break;
        case B_MUL:      out = lm_ggml_mul(ctx, a, b); break;
        case B_SILU:     out = lm_ggml_silu(ctx, a); break;
        case B_SOFT_MAX: out = lm_ggml_soft_max(ctx, a); break;
        case B_RMS_NORM: out = lm_ggml_rms_norm(ctx, a, 1e-6f); break;
    }
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, out);
    lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads); // warm up
    // best single run: the machine may be shared, the minimum is the kernel's cost
    double best = 1e30;
    const double t0 = now_s();
    while (now_s() - t0 < 0.5) {
        const double ta = now_s();
        lm_ggml_graph_compute_with_ctx(ctx, gf, n_threads);
        const double dt = now_s() - ta;
        if (dt < best) best = dt;
    }
    lm_ggml_free(ctx);
    return best / (double)(ne0*nr) * 1e9; // ns per element
}

int main(int argc, char ** argv) {
    const int64_t ne0 = argc > 1 ? atoll(argv[1]) : 4096;
    const int64_t nr  = argc > 2 ? atoll(argv[2]) : 64;
    const int n_threads = argc > 3 ? atoi(argv[3]) : 1;
    lm_ggml_cpu_init();
    printf("rows of %lld x %lld f32, %d thread(s); ns per element (lower is better)\n", (long long) ne0, (long long) nr, n_threads);
    printf("%-10s %10s %10s %8s\n", "op", "scalar", "avx2", "speedup");
    for (int w = 0; w <= B_RMS_NORM; w++) {
        lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
        const double s = bench((enum which) w, ne0, nr, n_threads);
        double v = 0;
        if (lm_cpu_force_level(LM_CPU_LEVEL_AVX2)) v = bench((enum which) w, ne0, nr, n_threads);
        lm_cpu_force_level(-1);
        printf("%-10s %10.3f %10.3f %7.2fx\n", names[w], s, v, v > 0 ? s/v : 0.0);
    }
    return 0;
}
