// test-robust.c - bad arguments and bad data through the plain C API: views
// outside their source and sizes that overflow are assertions (caught here
// with LM_GGML_TRY), and data errors found while computing (indices out of
// range, tensors without memory, writes into read-only memory) make
// lm_ggml_graph_compute return LM_GGML_STATUS_FAILED with a message, after
// which the next computation works.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-robust.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-impl.h"
#include "test-check.h"

#include <stdio.h>
#include <string.h>

// Computes t with n threads; the status, and the message in msg.
static enum lm_ggml_status compute(struct lm_ggml_context * ctx, struct lm_ggml_tensor * t, int n, char * msg) {
    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, t);
    struct lm_ggml_cplan plan = lm_ggml_graph_plan(g, n, NULL);
    static char work[1 << 20];
    plan.work_data = plan.work_size > 0 ? (uint8_t *) work : NULL;
    struct lm_ggml_err_frame f;
    msg[0] = '\0';
    if (LM_GGML_TRY(&f)) {
        snprintf(msg, 512, "assert: %.500s", f.msg);
        return LM_GGML_STATUS_FAILED;
    }
    enum lm_ggml_status s = lm_ggml_graph_compute(g, &plan);
    lm_ggml_err_pop(&f);
    memcpy(msg, f.msg, 512);
    return s;
}

int main(void) {
    struct lm_ggml_init_params ip = { 8 << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 16);

    // views
    check(ASSERTS(lm_ggml_view_1d(ctx, a, 4, (size_t) -16)), "view_1d with a wrapped negative offset");
    check(ASSERTS(lm_ggml_view_2d(ctx, a, 1, 2, (size_t) 1 << 40, 0)), "view_2d with a huge stride");
    check(ASSERTS(lm_ggml_view_2d(ctx, a, 4, 2, 64, 0)), "view_2d whose second row is past the end");
    check(ASSERTS(lm_ggml_view_4d(ctx, a, 2, 2, 2, 2, 8, 16, SIZE_MAX / 2, 0)), "view_4d with an overflowing extent");
    check(!ASSERTS(lm_ggml_view_2d(ctx, a, 4, 4, 16, 0)), "view_2d of the whole tensor");
    // sizes
    check(ASSERTS(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, ((int64_t) 1 << 62) + 1)), "row size overflow");
    check(ASSERTS(lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 0, (int64_t) 1 << 40, (int64_t) 1 << 40, 2)), "element count overflow");
    check(ASSERTS(lm_ggml_row_size(LM_GGML_TYPE_F64, (int64_t) 1 << 62)), "lm_ggml_row_size overflow");

    char msg[512];
    // get_rows with an index out of range, on 1 and 4 threads
    for (int n = 1; n <= 4; n += 3) {
        struct lm_ggml_tensor * m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 4, 3);
        lm_ggml_set_f32(m, 1.0f);
        struct lm_ggml_tensor * idx = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 2);
        lm_ggml_set_i32_1d(idx, 0, 1);
        lm_ggml_set_i32_1d(idx, 1, 3);
        struct lm_ggml_tensor * r = lm_ggml_get_rows(ctx, m, idx);
        lm_ggml_set_name(r, "rows");
        struct lm_ggml_tensor * out = lm_ggml_scale(ctx, r, 2.0f);
        check(compute(ctx, out, n, msg) == LM_GGML_STATUS_FAILED, "get_rows out of range fails");
        check(strstr(msg, "GET_ROWS (node rows)") != NULL && strstr(msg, "row index 3") != NULL, "get_rows message");
        lm_ggml_set_i32_1d(idx, 1, 2);
        check(compute(ctx, out, n, msg) == LM_GGML_STATUS_SUCCESS, "get_rows in range succeeds afterwards");
        check(lm_ggml_get_f32_1d(out, 7) == 2.0f, "get_rows result");
    }
    // tensors without memory
    struct lm_ggml_init_params np = { 1 << 20, NULL, true };
    struct lm_ggml_context * na = lm_ggml_init(np);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_1d(na, LM_GGML_TYPE_F32, 8);
    lm_ggml_set_name(x, "x");
    check(compute(ctx, lm_ggml_neg(ctx, x), 2, msg) == LM_GGML_STATUS_FAILED && strstr(msg, "operand x has no data") != NULL,
          "an operand without memory");
    // read-only memory
    struct lm_ggml_tensor * ro = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
    lm_ggml_set_name(ro, "weights");
    ro->flags |= LM_TENSOR_FLAG_READONLY;
    check(compute(ctx, lm_ggml_neg(ctx, ro), 2, msg) == LM_GGML_STATUS_SUCCESS, "reading read-only memory");
    check(compute(ctx, lm_ggml_neg_inplace(ctx, ro), 2, msg) == LM_GGML_STATUS_FAILED && strstr(msg, "weights") != NULL,
          "an in-place op on read-only memory");
    check(compute(ctx, lm_ggml_cpy(ctx, lm_ggml_view_1d(ctx, a, 8, 0), lm_ggml_view_1d(ctx, ro, 8, 0)), 2, msg) == LM_GGML_STATUS_FAILED,
          "a copy into a view of read-only memory");

    // A bad node in the middle of a graph (nodes are checked just before they
    // run): the graph fails naming it, nothing after it is computed, and the
    // next graph computes. The bad node comes after views (nodes that compute
    // nothing), at its start, in the middle and at the end, on 1, 2 and 4 threads.
    for (int n = 1; n <= 4; n *= 2) {
        for (int where = 0; where < 3; where++) {
            struct lm_ggml_tensor * v = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
            lm_ggml_set_f32(v, 1.0f);
            struct lm_ggml_tensor * h = v;
            for (int k = 0; k < where * 3; k++) h = lm_ggml_scale(ctx, h, 2.0f);
            struct lm_ggml_tensor * before = h;
            h = lm_ggml_reshape_2d(ctx, lm_ggml_view_1d(ctx, h, 8, 0), 4, 2);
            struct lm_ggml_tensor * bad = lm_ggml_add(ctx, h, lm_ggml_reshape_2d(ctx, x, 4, 2)); // x has no memory
            lm_ggml_set_name(bad, "bad");
            struct lm_ggml_tensor * after = lm_ggml_scale(ctx, bad, 3.0f);
            lm_ggml_set_f32(after, -7.0f);
            char what[96];
            snprintf(what, sizeof(what), "bad node after %d nodes, %d threads", where * 3, n);
            check(compute(ctx, where == 2 ? bad : after, n, msg) == LM_GGML_STATUS_FAILED &&
                  strstr(msg, "(node bad)") != NULL && strstr(msg, "operand x") != NULL, what);
            check(lm_ggml_get_f32_1d(after, 0) == -7.0f, "nothing after the bad node is computed");
            check(where == 0 || lm_ggml_get_f32_1d(before, 0) == (float) (1 << (where * 3)), "the nodes before the bad one are computed");
            check(compute(ctx, lm_ggml_scale(ctx, before, 0.5f), n, msg) == LM_GGML_STATUS_SUCCESS, "the next graph computes");
        }
        // an op with no kernel for its types, between good nodes
        struct lm_ggml_tensor * q = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
        lm_ggml_set_f32(q, 1.0f);
        struct lm_ggml_tensor * u = lm_ggml_scale(ctx, q, 2.0f);
        struct lm_ggml_tensor * w = lm_ggml_neg(ctx, u);
        struct lm_ggml_tensor * top = lm_ggml_scale(ctx, w, 2.0f);
        w->type = LM_GGML_TYPE_I32; // changed by hand: no kernel negates into int32
        lm_ggml_set_name(w, "untyped");
        check(compute(ctx, top, n, msg) == LM_GGML_STATUS_FAILED && strstr(msg, "(node untyped)") != NULL &&
              strstr(msg, "not supported") != NULL, "a node no kernel handles");
    }

    lm_ggml_free(na);
    lm_ggml_free(ctx);
    return check_summary();
}
