// bench-barrier.c - what a node costs the thread pool: a chain of custom
// nodes that do nothing, each run by every thread, so that each node is
// one dispatch and one barrier. Prints the median and the best time per
// node over the rounds, per thread count.
//
// Public API only: it builds against any core with this API, so the figure
// can be compared with another core's.
//
//   bench-barrier [threads...]   (default: 1 2)
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/bench-barrier.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void nop(struct lm_ggml_tensor * dst, const struct lm_ggml_tensor * a, int ith, int nth, void * ud) {
    (void) dst; (void) a; (void) ith; (void) nth; (void) ud;
}

static int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

enum { NODES = 4000, ROUNDS = 15 };

int main(int argc, char ** argv) {
    struct lm_ggml_init_params ip = { 64 << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * y = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 16);
    for (int i = 0; i < NODES; i++) y = lm_ggml_map_custom1(ctx, y, nop, LM_GGML_N_TASKS_MAX, NULL);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph_custom(ctx, NODES + 16, false);
    lm_ggml_build_forward_expand(g, y);
    const int def[] = { 1, 2 };
    const int nt = argc > 1 ? argc - 1 : 2;
    for (int k = 0; k < nt; k++) {
        const int nth = argc > 1 ? atoi(argv[k + 1]) : def[k];
        if (nth < 1) continue;
        lm_ggml_graph_compute_with_ctx(ctx, g, nth); // the pool, before timing
        double t[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            const double t0 = now();
            lm_ggml_graph_compute_with_ctx(ctx, g, nth);
            t[r] = (now() - t0) / NODES * 1e9;
        }
        qsort(t, ROUNDS, sizeof(t[0]), cmp_double);
        printf("%3d thread(s): %6.0f ns per node (median of %d rounds of %d nodes), best %.0f ns\n", nth, t[ROUNDS / 2],
               ROUNDS, NODES, t[0]);
    }
    lm_ggml_free(ctx);
    return 0;
}
