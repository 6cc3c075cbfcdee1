// bench-matmul.c - GFLOP/s of mul_mat for f32/f16/bf16/q4_0/q8_0/q4_K/q6_K
// weights, matrix-vector and matrix-matrix, per SIMD level and thread count.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/bench-matmul.c $(find csrc -name '*.c') -lm
// usage: bench-matmul [quick|full] [type] [shape index] [level]
//        bench-matmul best [reps] [type...]
//   "best": 4096x4096 weights times 1 and 16 columns, 1 thread, best of reps
//   runs in ms (a shared machine inflates averages, not minima); every
//   quantized type with an integer kernel unless types are named.
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// A mul_mat ta[K, M] x f32[K, N] graph with deterministic data, planned for
// nth threads and computed once to warm up.
struct mm_case {
    struct lm_ggml_context * ctx;
    struct lm_ggml_cgraph * gf;
    struct lm_ggml_threadpool * tp;
    struct lm_ggml_cplan plan;
};

static void case_init(struct mm_case * c, enum lm_ggml_type ta, int64_t K, int64_t M, int64_t N, int nth) {
    struct lm_ggml_init_params ip = { (size_t) 1 << 30, NULL, false };
    c->ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(c->ctx, ta, K, M);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(c->ctx, LM_GGML_TYPE_F32, K, N);
    float * tmp = malloc(K * M * sizeof(float));
    for (int64_t i = 0; i < K * M; i++) tmp[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    lm_ggml_quantize_chunk(ta, tmp, a->data, 0, M, K, NULL);
    if (ta == LM_GGML_TYPE_F32) memcpy(a->data, tmp, K * M * 4);
    for (int64_t i = 0; i < K * N; i++) ((float *) b->data)[i] = (float)((i * 40503u) % 1000) / 500.0f - 1.0f;
    free(tmp);
    struct lm_ggml_tensor * d = lm_ggml_mul_mat(c->ctx, a, b);
    c->gf = lm_ggml_new_graph(c->ctx);
    lm_ggml_build_forward_expand(c->gf, d);
    struct lm_ggml_threadpool_params tpp = lm_ggml_threadpool_params_default(nth);
    c->tp = lm_ggml_threadpool_new(&tpp);
    c->plan = lm_ggml_graph_plan(c->gf, nth, c->tp);
    c->plan.work_data = c->plan.work_size ? malloc(c->plan.work_size) : NULL;
    lm_ggml_graph_compute(c->gf, &c->plan); // warm up
}

static void case_free(struct mm_case * c) {
    free(c->plan.work_data);
    lm_ggml_threadpool_free(c->tp);
    lm_ggml_free(c->ctx);
}

// The machine may be shared: besides wall-clock GFLOP/s, *cpu_gflops gets
// the rate per CPU-second used by the process (per thread), which is what a
// kernel achieves when it has the cores to itself.
static double bench(enum lm_ggml_type ta, int64_t K, int64_t M, int64_t N, int nth, double min_time, double * cpu_gflops) {
    struct mm_case c;
    case_init(&c, ta, K, M, N, nth);
    int iters = 0;
    const double t0 = now(), c0 = cpu_now();
    double t1;
    do {
        lm_ggml_graph_compute(c.gf, &c.plan);
        iters++;
        t1 = now();
    } while (t1 - t0 < min_time);
    const double c1 = cpu_now();
    *cpu_gflops = 2.0 * K * M * N * iters / ((c1 - c0) / nth) / 1e9;
    case_free(&c);
    return 2.0 * K * M * N * iters / (t1 - t0) / 1e9;
}

// Best single-run time (ms) of mul_mat ta[K, M] x f32[K, N] on one thread.
static double best_ms(enum lm_ggml_type ta, int64_t K, int64_t M, int64_t N, int reps) {
    struct mm_case c;
    case_init(&c, ta, K, M, N, 1);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        lm_ggml_graph_compute(c.gf, &c.plan);
        const double t = now() - t0;
        if (t < best) best = t;
    }
    case_free(&c);
    return best * 1e3;
}

static int main_best(int argc, char ** argv) {
    const int reps = argc > 2 ? atoi(argv[2]) : 20;
    const enum lm_ggml_type all[] = { LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                      LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K,
                                      LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS };
    printf("best of %d, 1 thread, level %d: ms for 4096x4096 weights x N columns\n%-8s %9s %9s\n", reps,
           (int) lm_cpu_level(), "type", "N=1", "N=16");
    for (size_t t = 0; t < sizeof(all) / sizeof(all[0]); t++) {
        bool want = argc <= 3;
        for (int i = 3; i < argc; i++) want |= strcmp(argv[i], lm_ggml_type_name(all[t])) == 0;
        if (!want) continue;
        const double m1 = best_ms(all[t], 4096, 4096, 1, reps);
        const double m16 = best_ms(all[t], 4096, 4096, 16, reps);
        printf("%-8s %9.3f %9.3f\n", lm_ggml_type_name(all[t]), m1, m16);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char ** argv) {
    if (argc > 1 && strcmp(argv[1], "best") == 0) return main_best(argc, argv);
    const double min_time = argc > 1 && strcmp(argv[1], "quick") == 0 ? 0.2 : 1.0;
    const enum lm_ggml_type types[] = { LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16, LM_GGML_TYPE_Q4_0,
                                        LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K };
    const char * lvname[] = { "scalar", "avx2", "avx512", "neon", "dotprod" };
    const struct { int64_t K, M, N; const char * name; } shapes[] = {
        { 4096, 4096, 1,    "mat-vec 4096x4096 * 4096x1" },
        { 1024, 1024, 1024, "mat-mat 1024x1024 * 1024x1024" },
    };
    printf("GFLOP/s (wall clock), 1 and 2 threads\n%-32s %-7s %-7s %8s %8s\n", "shape", "type", "level", "1 thr", "2 thr");
    const char * only_type = argc > 2 ? argv[2] : NULL;
    const int only_shape = argc > 3 ? atoi(argv[3]) : -1;
    const int only_level = argc > 4 ? atoi(argv[4]) : -1;
    for (int s = 0; s < 2; s++) {
        if (only_shape >= 0 && s != only_shape) continue;
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            if (only_type && strcmp(only_type, lm_ggml_type_name(types[t])) != 0) continue;
            for (int lv = 0; lv <= 4; lv++) {
                if (only_level >= 0 && lv != only_level) continue;
                if (!lm_cpu_force_level(lv)) continue;
                double c1, c2;
                const double g1 = bench(types[t], shapes[s].K, shapes[s].M, shapes[s].N, 1, min_time, &c1);
                const double g2 = bench(types[t], shapes[s].K, shapes[s].M, shapes[s].N, 2, min_time, &c2);
                printf("%-32s %-7s %-7s %8.1f %8.1f   (per cpu-second: %6.1f %6.1f)\n", shapes[s].name,
                       lm_ggml_type_name(types[t]), lvname[lv], g1, g2, c1, c2);
                fflush(stdout);
            }
        }
    }
    lm_cpu_force_level(-1);
    return 0;
}
