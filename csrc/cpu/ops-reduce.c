// ops-reduce.c - CPU kernels of reductions and sorting: sum, sum_rows, mean,
// argmax, count_equal, argsort (top_k is an argsort view). The constructors
// are in graph/ctor-reduce.c; see ggml-cpu-impl.h for the kernel contract.
// The shape ops of this family live in ops-shape.c, norms and soft_max in
// ops-norm.c.
//
// Sums accumulate in double, as ggml's do, so that long rows stay
// within the parity tolerance whatever the summation order.
#include "ops-vec.h"
#include "ggml-cpu-impl.h"

// ---------------------------------------------------------------- kernels

// Double sum of a row of any plain float type.
static lm_float_acc lm_row_sum(const struct lm_ggml_tensor * t, const char * row) {
    lm_float_acc s = 0.0;
    if (t->type == LM_GGML_TYPE_F32 && t->nb[0] == sizeof(float)) {
        // eight chains: one chain of dependent double adds cannot keep up
        // with the memory, eight can; ggml sums in one chain,
        // which in double differs from this in the last bits at most
        // (the parity cases agree to the bit after the rounding to float)
        const float * x = (const float *) row;
        const int64_t n = t->ne[0], n8 = n & ~(int64_t) 7;
        lm_float_acc c[8] = { 0 };
        for (int64_t i = 0; i < n8; i += 8) {
            for (int j = 0; j < 8; j++) c[j] += (lm_float_acc) x[i + j];
        }
        s = ((c[0] + c[1]) + (c[2] + c[3])) + ((c[4] + c[5]) + (c[6] + c[7]));
        for (int64_t i = n8; i < n; i++) s += (lm_float_acc) x[i];
        return s;
    }
    for (int64_t i = 0; i < t->ne[0]; i++) s += (lm_float_acc) lm_load_f(t->type, row + i*t->nb[0]);
    return s;
}

static const char * lm_row_ptr(const struct lm_ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (const char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
}

static void lm_compute_sum(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    if (params->ith != 0) return;
    const struct lm_ggml_tensor * src0 = dst->src[0];
    lm_float_acc s = 0.0;
    for (int64_t i3 = 0; i3 < src0->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < src0->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < src0->ne[1]; i1++) {
        s += lm_row_sum(src0, lm_row_ptr(src0, i1, i2, i3));
    }
    lm_store_f(dst->type, (char *) dst->data, (float) s);
}

static void lm_compute_sum_rows(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const float s = (float) lm_row_sum(src0, lm_row_ptr(src0, i1, i2, i3));
        lm_store_f(dst->type, (char *) lm_row_ptr(dst, i1, i2, i3), s);
    }
}

static void lm_compute_mean(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        // ggml rounds the sum to float before dividing
        const float s = (float) lm_row_sum(src0, lm_row_ptr(src0, i1, i2, i3));
        *(float *) lm_row_ptr(dst, i1, i2, i3) = s / (float) src0->ne[0];
    }
}

#if defined(LM_X86)
// argmax of a contiguous f32 row without NaNs, by its definition below: the
// last index holding the row's maximum (compared with ==, so -0 ties +0).
// One pass finds the maximum and whether a NaN is present, a second one,
// from the end, the last index that holds it. Returns false, having found
// nothing, for a row with a NaN.
LM_TARGET_AVX2 static bool argmax_f32_avx2(int64_t n, const float * x, int32_t * out) {
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    __m256 unord = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256 a = _mm256_loadu_ps(x + i),      b = _mm256_loadu_ps(x + i + 8);
        const __m256 c = _mm256_loadu_ps(x + i + 16), d = _mm256_loadu_ps(x + i + 24);
        m0 = _mm256_max_ps(m0, a); m1 = _mm256_max_ps(m1, b);
        m2 = _mm256_max_ps(m2, c); m3 = _mm256_max_ps(m3, d);
        unord = _mm256_or_ps(unord, _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q), _mm256_cmp_ps(c, d, _CMP_UNORD_Q)));
    }
    for (; i + 8 <= n; i += 8) {
        const __m256 a = _mm256_loadu_ps(x + i);
        m0 = _mm256_max_ps(m0, a);
        unord = _mm256_or_ps(unord, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    }
    if (_mm256_movemask_ps(unord) != 0) return false;
    m0 = _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m0), _mm256_extractf128_ps(m0, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    float m = _mm_cvtss_f32(h);
    const int64_t tail = i;
    for (; i < n; i++) {
        if (x[i] != x[i]) return false;
        if (x[i] > m) m = x[i];
    }
    for (i = n - 1; i >= tail; i--) {
        if (x[i] == m) { *out = (int32_t) i; return true; }
    }
    const __m256 vm = _mm256_set1_ps(m);
    for (i = tail - 8; i >= 0; i -= 8) {
        const int bits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), vm, _CMP_EQ_OQ));
        if (bits != 0) { *out = (int32_t)(i + 31 - __builtin_clz((unsigned) bits)); return true; }
    }
    *out = 0; // not reached: the maximum is in the row
    return true;
}
#endif

// Index of the maximum; on ties the last one, and a NaN restarts the search,
// exactly like ggml's running max/compare loop. Rows of f32
// without a NaN take a vector path with the same answer.
static void lm_compute_argmax(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    int64_t ir0, ir1;
    lm_ggml_thread_range(src0->ne[1], params->ith, params->nth, &ir0, &ir1);
    const bool vec = src0->type == LM_GGML_TYPE_F32 && src0->nb[0] == sizeof(float) && src0->ne[0] > 0 && lm_vec_avx2();
    for (int64_t i1 = ir0; i1 < ir1; i1++) {
        const char * row = lm_row_ptr(src0, i1, 0, 0);
        int32_t idx = 0;
#if defined(LM_X86)
        if (vec && argmax_f32_avx2(src0->ne[0], (const float *) row, &idx)) {
            *(int32_t *)((char *) dst->data + i1*dst->nb[0]) = idx;
            continue;
        }
#else
        (void) vec;
#endif
        float m = -INFINITY;
        for (int64_t i = 0; i < src0->ne[0]; i++) {
            const float v = lm_load_f(src0->type, row + i*src0->nb[0]);
            m = LM_GGML_MAX(m, v);
            if (m == v) idx = (int32_t) i;
        }
        *(int32_t *)((char *) dst->data + i1*dst->nb[0]) = idx;
    }
}

static size_t lm_wsize_count_equal(const struct lm_ggml_tensor * node, int n_threads) {
    (void) node;
    return sizeof(int64_t) * (size_t) n_threads;
}

static void lm_compute_count_equal(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    int64_t count = 0;
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const char * a = lm_row_ptr(src0, i1, i2, i3);
        const char * b = lm_row_ptr(src1, i1, i2, i3);
        for (int64_t i = 0; i < src0->ne[0]; i++) {
            count += *(const int32_t *)(a + i*src0->nb[0]) == *(const int32_t *)(b + i*src1->nb[0]);
        }
    }
    int64_t * partial = (int64_t *) params->wdata;
    partial[params->ith] = count;
    lm_ggml_barrier(params->threadpool);
    if (params->ith == 0) {
        int64_t total = 0;
        for (int i = 0; i < params->nth; i++) total += partial[i];
        *(int64_t *) dst->data = total;
    }
}

// ---------------------------------------------------------------- argsort

// Stable merge sort of indices; ggml's exchange sort gives the same
// order whenever the row has no ties (and no NaN).
static size_t lm_wsize_argsort(const struct lm_ggml_tensor * node, int n_threads) {
    return sizeof(int32_t) * (size_t) node->src[0]->ne[0] * (size_t) n_threads + sizeof(float) * (size_t) node->src[0]->ne[0] * (size_t) n_threads;
}

static void lm_argsort_row(int32_t * idx, int32_t * tmp, const float * v, int64_t n, bool desc) {
    for (int64_t i = 0; i < n; i++) idx[i] = (int32_t) i;
    // bottom-up merge of runs of width w from idx into tmp, then swap roles
    int32_t * from = idx, * to = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2*w) {
            const int64_t mid = LM_GGML_MIN(lo + w, n), hi = LM_GGML_MIN(lo + 2*w, n);
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                // take the right element only when it strictly precedes: keeps ties stable
                const bool right = desc ? (v[from[j]] > v[from[i]]) : (v[from[j]] < v[from[i]]);
                to[k++] = right ? from[j++] : from[i++];
            }
            while (i < mid) to[k++] = from[i++];
            while (j < hi)  to[k++] = from[j++];
        }
        int32_t * t = from; from = to; to = t;
    }
    if (from != idx) memcpy(idx, from, n*sizeof(int32_t));
}

static void lm_compute_argsort(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const bool desc = lm_ggml_get_op_params_i32(dst, 0) == LM_GGML_SORT_ORDER_DESC;
    const int64_t n = src0->ne[0];
    int32_t * tmp  = (int32_t *) params->wdata + n*params->ith;
    float   * vals = (float *)((int32_t *) params->wdata + n*params->nth) + n*params->ith;

    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const char * row = lm_row_ptr(src0, i1, i2, i3);
        for (int64_t i = 0; i < n; i++) {
            vals[i] = lm_load_f(src0->type, row + i*src0->nb[0]);
        }
        int32_t * out = (int32_t *) lm_row_ptr(dst, i1, i2, i3);
        lm_argsort_row(out, tmp, vals, n, desc);
    }
}

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_sum         = { .compute = lm_compute_sum };
const struct lm_cpu_op lm_cpu_op_sum_rows    = { .compute = lm_compute_sum_rows };
const struct lm_cpu_op lm_cpu_op_mean        = { .compute = lm_compute_mean };
const struct lm_cpu_op lm_cpu_op_argmax      = { .compute = lm_compute_argmax };
const struct lm_cpu_op lm_cpu_op_count_equal = { .compute = lm_compute_count_equal, .work_size = lm_wsize_count_equal };
const struct lm_cpu_op lm_cpu_op_argsort     = { .compute = lm_compute_argsort, .work_size = lm_wsize_argsort };
