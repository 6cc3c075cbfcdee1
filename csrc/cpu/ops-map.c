// ops-map.c - CPU kernels of the user-function ops: map_custom1/2/3
// (+_inplace) and the deprecated map_unary_f32, map_binary_f32,
// map_custom{1,2,3}_f32 forms. The constructors are in graph/ctor-map.c; see
// ggml-cpu-impl.h for the kernel contract.
//
// op_params layouts are ggml's, since other code reads them back:
// - deprecated forms: the function pointer itself at op_params[0..];
// - map_custom{1,2,3}: struct lm_map_custom{1,2,3}_params (graph/ggml-op-params.h).
#include "ops-vec.h"
#include "ggml-cpu-impl.h"

// ---------------------------------------------------------------- kernels

// The deprecated f32 forms are not thread-aware: thread 0 does the work.
static void lm_compute_map_unary(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    if (params->ith != 0) return;
    const struct lm_ggml_tensor * src0 = dst->src[0];
    lm_ggml_unary_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    const int64_t nr = lm_ggml_nrows(src0);
    for (int64_t ir = 0; ir < nr; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        fun((int) src0->ne[0],
            (float *)((char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]),
            (const float *)((const char *) src0->data + i1*src0->nb[1] + i2*src0->nb[2] + i3*src0->nb[3]));
    }
}

static void lm_compute_map_binary(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    if (params->ith != 0) return;
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    lm_ggml_binary_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    const int64_t nr = lm_ggml_nrows(src0);
    for (int64_t ir = 0; ir < nr; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        fun((int) src0->ne[0],
            (float *)((char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]),
            (const float *)((const char *) src0->data + i1*src0->nb[1] + i2*src0->nb[2] + i3*src0->nb[3]),
            (const float *)((const char *) src1->data + i1*src1->nb[1] + i2*src1->nb[2] + i3*src1->nb[3]));
    }
}

static void lm_compute_map_custom1_f32(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    if (params->ith != 0) return;
    lm_ggml_custom1_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    fun(dst, dst->src[0]);
}
static void lm_compute_map_custom2_f32(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    if (params->ith != 0) return;
    lm_ggml_custom2_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    fun(dst, dst->src[0], dst->src[1]);
}
static void lm_compute_map_custom3_f32(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    if (params->ith != 0) return;
    lm_ggml_custom3_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    fun(dst, dst->src[0], dst->src[1], dst->src[2]);
}

// Threads [0, n_tasks) call the user function with nth = n_tasks (capped at
// the pool size); the others skip.
static int lm_custom_nth(int n_tasks, int nth) {
    return (n_tasks == LM_GGML_N_TASKS_MAX || n_tasks > nth) ? nth : n_tasks;
}

static void lm_compute_map_custom1(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    struct lm_map_custom1_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    const int nth = lm_custom_nth(p.n_tasks, params->nth);
    if (params->ith >= nth) return;
    p.fun(dst, dst->src[0], params->ith, nth, p.userdata);
}
static void lm_compute_map_custom2(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    struct lm_map_custom2_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    const int nth = lm_custom_nth(p.n_tasks, params->nth);
    if (params->ith >= nth) return;
    p.fun(dst, dst->src[0], dst->src[1], params->ith, nth, p.userdata);
}
static void lm_compute_map_custom3(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    struct lm_map_custom3_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    const int nth = lm_custom_nth(p.n_tasks, params->nth);
    if (params->ith >= nth) return;
    p.fun(dst, dst->src[0], dst->src[1], dst->src[2], params->ith, nth, p.userdata);
}

static int lm_ntasks_one(const struct lm_ggml_tensor * node, int n_threads) {
    (void) node; (void) n_threads;
    return 1;
}
// n_tasks sits right after the function pointer in all three layouts
static int lm_ntasks_custom(const struct lm_ggml_tensor * node, int n_threads) {
    struct lm_map_custom1_params p;
    memcpy(&p, node->op_params, sizeof(p));
    return lm_custom_nth(p.n_tasks, n_threads);
}

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_map_unary       = { .compute = lm_compute_map_unary, .n_tasks = lm_ntasks_one };
const struct lm_cpu_op lm_cpu_op_map_binary      = { .compute = lm_compute_map_binary, .n_tasks = lm_ntasks_one };
const struct lm_cpu_op lm_cpu_op_map_custom1_f32 = { .compute = lm_compute_map_custom1_f32, .n_tasks = lm_ntasks_one };
const struct lm_cpu_op lm_cpu_op_map_custom2_f32 = { .compute = lm_compute_map_custom2_f32, .n_tasks = lm_ntasks_one };
const struct lm_cpu_op lm_cpu_op_map_custom3_f32 = { .compute = lm_compute_map_custom3_f32, .n_tasks = lm_ntasks_one };
const struct lm_cpu_op lm_cpu_op_map_custom1     = { .compute = lm_compute_map_custom1, .n_tasks = lm_ntasks_custom };
const struct lm_cpu_op lm_cpu_op_map_custom2     = { .compute = lm_compute_map_custom2, .n_tasks = lm_ntasks_custom };
const struct lm_cpu_op lm_cpu_op_map_custom3     = { .compute = lm_compute_map_custom3, .n_tasks = lm_ntasks_custom };
