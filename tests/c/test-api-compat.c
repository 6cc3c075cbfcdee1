// test-api-compat.c - a C program written against the reference ggml API (as
// a user of cui-llama.rn's lm_ggml would write it), built with the plain
// command `cc -O2 -pthread -Icsrc/include app.c $(find csrc -name '*.c') -lm`.
#include "ggml.h"
#include "ggml-cpu.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>

int main(void) {
    struct lm_ggml_init_params params = {
        .mem_size   = 16*1024*1024,
        .mem_buffer = NULL,
        .no_alloc   = false,
    };
    struct lm_ggml_context * ctx = lm_ggml_init(params);
    CHECK(ctx != NULL);

    // f(x) = a*x^2 + b at x = 2
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 1);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 1);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 1);
    struct lm_ggml_tensor * x2 = lm_ggml_mul(ctx, x, x);
    struct lm_ggml_tensor * f  = lm_ggml_add(ctx, lm_ggml_mul(ctx, a, x2), b);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, f);
    lm_ggml_set_f32(x, 2.0f);
    lm_ggml_set_f32(a, 3.0f);
    lm_ggml_set_f32(b, 4.0f);
    CHECK(lm_ggml_graph_compute_with_ctx(ctx, gf, 2) == LM_GGML_STATUS_SUCCESS);
    CHECK(lm_ggml_get_f32_1d(f, 0) == 16.0f);
    CHECK(lm_ggml_graph_n_nodes(gf) == 3);
    CHECK(lm_ggml_graph_node(gf, -1) == f);

    // matrix product with an explicit plan and a thread pool
    struct lm_ggml_tensor * m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 3, 2); // 2 rows of 3
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 3, 1);
    for (int i = 0; i < 6; i++) lm_ggml_set_f32_1d(m, i, (float) i);
    for (int i = 0; i < 3; i++) lm_ggml_set_f32_1d(v, i, 1.0f);
    struct lm_ggml_tensor * mv = lm_ggml_mul_mat(ctx, m, v);
    CHECK(mv->ne[0] == 2 && mv->ne[1] == 1);
    struct lm_ggml_cgraph * g2 = lm_ggml_new_graph_custom(ctx, 16, false);
    lm_ggml_build_forward_expand(g2, mv);
    struct lm_ggml_threadpool_params tpp = lm_ggml_threadpool_params_default(2);
    CHECK(tpp.poll == 50 && tpp.prio == LM_GGML_SCHED_PRIO_NORMAL && !tpp.strict_cpu && !tpp.paused);
    struct lm_ggml_threadpool * tp = lm_ggml_threadpool_new(&tpp);
    struct lm_ggml_cplan plan = lm_ggml_graph_plan(g2, 2, tp);
    uint8_t * work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    CHECK(lm_ggml_graph_compute(g2, &plan) == LM_GGML_STATUS_SUCCESS);
    CHECK(lm_ggml_get_f32_1d(mv, 0) == 3.0f && lm_ggml_get_f32_1d(mv, 1) == 12.0f);
    free(work);
    lm_ggml_threadpool_free(tp);

    // names, traits, views
    CHECK(strcmp(lm_ggml_op_name(LM_GGML_OP_MUL_MAT), "MUL_MAT") == 0);
    CHECK(strcmp(lm_ggml_type_name(LM_GGML_TYPE_Q4_K), "q4_K") == 0);
    CHECK(lm_ggml_get_type_traits(LM_GGML_TYPE_Q8_0)->type_size == 34);
    CHECK(lm_ggml_row_size(LM_GGML_TYPE_Q4_0, 64) == 36);
    struct lm_ggml_tensor * t = lm_ggml_transpose(ctx, m);
    CHECK(lm_ggml_is_transposed(t) && !lm_ggml_is_contiguous(t));
    lm_ggml_set_name(t, "mt");
    CHECK(lm_ggml_get_tensor(ctx, "mt") == t);
    CHECK(sizeof(struct lm_ggml_tensor) == 336);

    lm_ggml_free(ctx);
    if (g_fail) {
        fprintf(stderr, "api-compat: %d failures\n", g_fail);
        return 1;
    }
    printf("api-compat: 1 passed, 0 failed\n");
    return 0;
}
