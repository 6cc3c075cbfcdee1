// bench-rope-attn.c - timing loop for rope and flash_attn_ext, scalar vs
// AVX2 kernels (forced with lm_cpu_force_level), and flash_attn_ext's
// AVX-512 tiles where the CPU has them.
//
// Build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/bench-rope-attn.c $(find csrc -name '*.c') -lm
// Usage: bench-rope-attn [n_threads]
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// Process CPU time: robust when the machine is shared (the wall clock is not);
// with n threads it is the sum over threads (so divide by n for a wall estimate).
static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void fill(struct lm_ggml_tensor * t) {
    const int64_t n = lm_ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        const float v = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
        if (t->type == LM_GGML_TYPE_F32) ((float *) t->data)[i] = v;
        else if (t->type == LM_GGML_TYPE_F16) ((lm_ggml_fp16_t *) t->data)[i] = lm_ggml_fp32_to_fp16(v * 0.5f);
        else if (t->type == LM_GGML_TYPE_I32) ((int32_t *) t->data)[i] = (int32_t)(i % 4096);
    }
}

// Best of `reps` runs, in microseconds of process CPU time.
static double time_graph(struct lm_ggml_context * ctx, struct lm_ggml_tensor * out, int nth, int reps) {
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, out);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth); // warm-up
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        const double t0 = cpu_us();
        lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
        const double dt = cpu_us() - t0;
        if (dt < best) best = dt;
    }
    return best;
}

static void bench_rope(enum lm_ggml_type type, int mode, int nth) {
    struct lm_ggml_init_params ip = { 256u << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_3d(ctx, type, 128, 32, 512);
    struct lm_ggml_tensor * p = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 512);
    fill(x); fill(p);
    struct lm_ggml_tensor * y = lm_ggml_rope_ext(ctx, x, p, NULL, 128, mode, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    double t[2] = { 0, 0 };
    for (int level = 0; level <= 1; level++) {
        if (!lm_cpu_force_level(level)) continue;
        t[level] = time_graph(ctx, y, nth, 20);
    }
    lm_cpu_force_level(-1);
    printf("rope %-4s %-4s [128,32,512] threads %d: scalar %8.0f cpu-us  avx2 %8.0f cpu-us  (x%.2f)\n",
           lm_ggml_type_name(type), mode ? "neox" : "norm", nth, t[0], t[1], t[1] > 0 ? t[0] / t[1] : 0);
    lm_ggml_free(ctx);
}

static void bench_fa(enum lm_ggml_type kvt, int D, int n_q, int n_kv, int n_head, int n_head_kv, int nth) {
    struct lm_ggml_init_params ip = { 512u << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * q = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, D, n_q, n_head);
    struct lm_ggml_tensor * k = lm_ggml_new_tensor_3d(ctx, kvt, D, n_kv, n_head_kv);
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_3d(ctx, kvt, D, n_kv, n_head_kv);
    struct lm_ggml_tensor * m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, n_kv, LM_GGML_PAD(n_q, LM_GGML_KQ_MASK_PAD));
    fill(q); fill(k); fill(v);
    memset(m->data, 0, lm_ggml_nbytes(m));
    struct lm_ggml_tensor * y = lm_ggml_flash_attn_ext(ctx, q, k, v, m, 0.088f, 0.0f, 0.0f);
    double t[3] = { 0, 0, 0 };
    for (int level = 0; level <= 2; level++) {
        if (!lm_cpu_force_level(level)) continue;
        t[level] = time_graph(ctx, y, nth, 5);
    }
    lm_cpu_force_level(-1);
    const double flop = 4.0 * D * (double) n_kv * n_q * n_head;
    printf("flash_attn_ext %s D%d q%d kv%d h%d/%d threads %d: scalar %8.0f cpu-us  avx2 %8.0f cpu-us (x%.2f, %.1f GFLOP/s)",
           lm_ggml_type_name(kvt), D, n_q, n_kv, n_head, n_head_kv, nth, t[0], t[1], t[1] > 0 ? t[0] / t[1] : 0,
           t[1] > 0 ? flop / t[1] / 1e3 : 0);
    if (t[2] > 0) printf("  avx512 %8.0f cpu-us (x%.2f, %.1f GFLOP/s)", t[2], t[0] / t[2], flop / t[2] / 1e3);
    printf("\n");
    lm_ggml_free(ctx);
}

int main(int argc, char ** argv) {
    const int nth = argc > 1 ? atoi(argv[1]) : 1;
    lm_ggml_time_init();
    bench_rope(LM_GGML_TYPE_F32, 0, nth);
    bench_rope(LM_GGML_TYPE_F32, 2, nth);
    bench_rope(LM_GGML_TYPE_F16, 0, nth);
    bench_rope(LM_GGML_TYPE_F16, 2, nth);
    bench_fa(LM_GGML_TYPE_F16, 128, 1, 4096, 32, 8, nth);
    bench_fa(LM_GGML_TYPE_F16, 128, 64, 1024, 32, 8, nth);
    bench_fa(LM_GGML_TYPE_F32, 64, 64, 1024, 16, 16, nth);
    return 0;
}
