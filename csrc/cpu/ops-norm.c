// ops-norm.c - row normalisations: norm, rms_norm, rms_norm_back, group_norm,
// soft_max (+ext, +back) and the causal masks diag_mask_inf/zero: CPU
// kernels. The constructors are in graph/ctor-norm.c; see ggml-cpu-impl.h for
// the kernel contract.
//
// Row statistics accumulate in double as in ggml; the per-element
// arithmetic is in float in ggml's order.
#include "ops-vec.h"
#include "ggml-cpu-impl.h"

// ---------------------------------------------------------------- row kernels

static lm_float_acc lm_sum_sq_s(int64_t n, const float * x) {
    lm_float_acc s = 0.0;
    for (int64_t i = 0; i < n; i++) s += (lm_float_acc)(x[i]*x[i]);
    return s;
}

#if defined(LM_X86)
// Squares in float (as in ggml), sums in double.
LM_TARGET_AVX2 static lm_float_acc lm_sum_sq_avx2(int64_t n, const float * x) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 q = _mm256_mul_ps(v, v);
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(q)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(q, 1)));
    }
    a0 = _mm256_add_pd(a0, a1);
    double t[4];
    _mm256_storeu_pd(t, a0);
    lm_float_acc s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; i < n; i++) s += (lm_float_acc)(x[i]*x[i]);
    return s;
}
#endif

static void lm_compute_norm(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const float eps = lm_ggml_get_op_params_f32(dst, 0);
    const int64_t n = src0->ne[0];
    const bool simd = lm_vec_avx2();
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const float * x = (const float *)((const char *) src0->data + i1*src0->nb[1] + i2*src0->nb[2] + i3*src0->nb[3]);
        float       * y = (float *)((char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]);
        lm_float_acc sum = 0.0;
        for (int64_t i = 0; i < n; i++) sum += (lm_float_acc) x[i];
        const float mean = (float)(sum / n);
        lm_float_acc sum2 = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const float v = x[i] - mean;
            y[i] = v;
            sum2 += (lm_float_acc)(v*v);
        }
        const float variance = (float)(sum2 / n);
        lm_vec_scale(simd, n, y, y, 1.0f/sqrtf(variance + eps));
    }
}

static void lm_compute_rms_norm(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const float eps = lm_ggml_get_op_params_f32(dst, 0);
    const int64_t n = src0->ne[0];
    const bool simd = lm_vec_avx2();
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const float * x = (const float *)((const char *) src0->data + i1*src0->nb[1] + i2*src0->nb[2] + i3*src0->nb[3]);
        float       * y = (float *)((char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]);
#if defined(LM_X86)
        const lm_float_acc sum = simd ? lm_sum_sq_avx2(n, x) : lm_sum_sq_s(n, x);
#else
        const lm_float_acc sum = lm_sum_sq_s(n, x);
#endif
        const float mean = (float)(sum / n);
        lm_vec_scale(simd, n, y, x, 1.0f/sqrtf(mean + eps));
    }
}

// dx = (dy - x * sum(x*dy) / (sum(x*x) + n*eps)) / rms(x)
static void lm_compute_rms_norm_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const float eps = lm_ggml_get_op_params_f32(dst, 0);
    const int64_t n = src0->ne[0];
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const float * x  = (const float *)((const char *) src0->data + i1*src0->nb[1] + i2*src0->nb[2] + i3*src0->nb[3]);
        const float * dz = (const float *)((const char *) src1->data + i1*src1->nb[1] + i2*src1->nb[2] + i3*src1->nb[3]);
        float       * dx = (float *)((char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]);
        lm_float_acc sum_xx = 0.0, sum_xdz = 0.0;
        for (int64_t i = 0; i < n; i++) {
            sum_xx  += (lm_float_acc)(x[i]*x[i]);
            sum_xdz += (lm_float_acc)(x[i]*dz[i]);
        }
        const float mean_eps = (float) sum_xx / n + eps;
        const float sum_eps  = (float) sum_xx + eps*n;
        const float rrms = 1.0f/sqrtf(mean_eps);
        const float k = (float)(-sum_xdz) / sum_eps;
        for (int64_t i = 0; i < n; i++) {
            dx[i] = (x[i]*k + dz[i]) * rrms;
        }
    }
}

// ---------------------------------------------------------------- group_norm

// The sum of a row in double, and the sum of squares of x - mean (stored in
// y): 8 elements a step at the SIMD levels (AVX-512 in AVX2's order: the
// same bits), 4 on NEON, one by one at the scalar level.
static lm_float_acc lm_row_sum_s(int64_t n, const float * x) {
    lm_float_acc s = 0.0;
    for (int64_t i = 0; i < n; i++) s += (lm_float_acc) x[i];
    return s;
}
static lm_float_acc lm_row_center_s(int64_t n, float * y, const float * x, float mean) {
    lm_float_acc s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i] - mean;
        y[i] = v;
        s += (lm_float_acc)(v*v);
    }
    return s;
}

#if defined(LM_X86)
// lanes 0-3 of each step in a[0], 4-7 in a[1]; y NULL: sums x, else sums
// (x - mean)^2 and stores x - mean in y
LM_TARGET_AVX2 static int64_t lm_gn_steps_avx2(int64_t n, float * y, const float * x, float mean, lm_float_acc * out) {
    const __m256 vm = _mm256_set1_ps(mean);
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (y) {
            v = _mm256_sub_ps(v, vm);
            _mm256_storeu_ps(y + i, v);
            v = _mm256_mul_ps(v, v);
        }
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    double t[4];
    _mm256_storeu_pd(t, _mm256_add_pd(a0, a1));
    *out = (t[0] + t[1]) + (t[2] + t[3]);
    return i;
}
// lm_gn_steps_avx2 with the eight lanes in one register
LM_TARGET_AVX512 static int64_t lm_gn_steps_avx512(int64_t n, float * y, const float * x, float mean, lm_float_acc * out) {
    const __m256 vm = _mm256_set1_ps(mean);
    __m512d a = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (y) {
            v = _mm256_sub_ps(v, vm);
            _mm256_storeu_ps(y + i, v);
            v = _mm256_mul_ps(v, v);
        }
        a = _mm512_add_pd(a, _mm512_cvtps_pd(v));
    }
    double t[4];
    _mm256_storeu_pd(t, _mm256_add_pd(_mm512_castpd512_pd256(a), _mm512_extractf64x4_pd(a, 1)));
    *out = (t[0] + t[1]) + (t[2] + t[3]);
    return i;
}
#endif

#if defined(__aarch64__)
static int64_t lm_gn_steps_neon(int64_t n, float * y, const float * x, float mean, lm_float_acc * out) {
    const float32x4_t vm = vdupq_n_f32(mean);
    float64x2_t a0 = vdupq_n_f64(0.0), a1 = vdupq_n_f64(0.0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        if (y) {
            v = vsubq_f32(v, vm);
            vst1q_f32(y + i, v);
            v = vmulq_f32(v, v);
        }
        a0 = vaddq_f64(a0, vcvt_f64_f32(vget_low_f32(v)));
        a1 = vaddq_f64(a1, vcvt_high_f64_f32(v));
    }
    *out = vaddvq_f64(vaddq_f64(a0, a1));
    return i;
}
#endif

// level: lm_cpu_level(), asked once per op
static lm_float_acc lm_gn_row(enum lm_cpu_level level, int64_t n, float * y, const float * x, float mean) {
    lm_float_acc s = 0.0;
    int64_t i = 0;
#if defined(LM_X86)
    if (level == LM_CPU_LEVEL_AVX512) i = lm_gn_steps_avx512(n, y, x, mean, &s);
    else if (level == LM_CPU_LEVEL_AVX2) i = lm_gn_steps_avx2(n, y, x, mean, &s);
#elif defined(__aarch64__)
    if (lm_cpu_level_is_neon(level)) i = lm_gn_steps_neon(n, y, x, mean, &s);
#endif
    (void) level;
    return s + (y ? lm_row_center_s(n - i, y + i, x + i, mean) : lm_row_sum_s(n - i, x + i));
}

// Groups of channels (dim 2) are normalised together over dims 0, 1 and the
// group's channels, separately for each index of dim 3. A group's channel
// planes (i02, i03) follow one another in plane order, so threads split
// planes, not groups (a model may have fewer groups than threads): each
// plane's sum goes to the work buffer; after a barrier each thread adds up,
// in plane order, the sums of the groups its planes are in, for their means;
// the same again for the variances. A group's statistics are thus the same
// sums, added in the same order, whatever the thread count. A plane whose
// rows are adjacent in x and y is summed as one row (rows can be short).
static size_t lm_wsize_group_norm(const struct lm_ggml_tensor * node, int n_threads) {
    (void) n_threads;
    return 2 * sizeof(double) * (size_t)(node->src[0]->ne[2] * node->src[0]->ne[3]) + sizeof(double);
}

// The group statistic of the planes [g0, g1): their partial sums in order, over count.
static float lm_gn_stat(const double * part, int64_t g0, int64_t g1, double count) {
    lm_float_acc s = 0.0;
    for (int64_t r = g0; r < g1; r++) s += part[r];
    return (float)(s / count);
}

static void lm_compute_group_norm(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    LM_GGML_TENSOR_UNARY_OP_LOCALS
    const int   n_groups = lm_ggml_get_op_params_i32(dst, 0);
    const float eps      = lm_ggml_get_op_params_f32(dst, 1);
    const int64_t per_group = (ne02 + n_groups - 1) / n_groups;
    const enum lm_cpu_level level = lm_cpu_level();
    const bool simd = lm_vec_avx2();
    const int64_t np = ne02*ne03;
    double * sum1 = (double *)(((uintptr_t) params->wdata + 7) & ~(uintptr_t) 7);
    double * sum2 = sum1 + np;
    // a plane as one row of ne00*ne01, or ne01 rows of ne00
    const bool flat = nb01 == (size_t) ne00*sizeof(float) && nb1 == (size_t) ne00*sizeof(float);
    const int64_t rows = flat ? 1 : ne01, n = flat ? ne00*ne01 : ne00;

    int64_t p0, p1;
    lm_ggml_thread_range(np, params->ith, params->nth, &p0, &p1);
    for (int64_t p = p0; p < p1; p++) {
        const int64_t i2 = p % ne02, i3 = p / ne02;
        lm_float_acc s = 0.0;
        for (int64_t i1 = 0; i1 < rows; i1++) {
            s += lm_gn_row(level, n, NULL, (const float *)((const char *) src0->data + i1*nb01 + i2*nb02 + i3*nb03), 0.0f);
        }
        sum1[p] = s;
    }
    lm_ggml_barrier(params->threadpool);

    // the planes [g0, g1) of the group that plane (i2, i3) is in, and its element count
#define GN_GROUP_OF(i2, i3) do {                                                       \
        const int64_t c0_ = ((i2) / per_group) * per_group;                            \
        const int64_t c1_ = LM_GGML_MIN(c0_ + per_group, ne02);                        \
        g0 = c0_ + ne02*(i3); g1 = c1_ + ne02*(i3);                                    \
        count = (double)(ne00*ne01*(c1_ - c0_));                                       \
    } while (0)
    int64_t g0 = 0, g1 = 0;
    double count = 1.0;
    float mean = 0.0f;
    for (int64_t p = p0; p < p1; p++) {
        const int64_t i2 = p % ne02, i3 = p / ne02;
        if (p == p0 || p >= g1) {
            GN_GROUP_OF(i2, i3);
            mean = lm_gn_stat(sum1, g0, g1, count);
        }
        lm_float_acc s = 0.0;
        for (int64_t i1 = 0; i1 < rows; i1++) {
            const float * x = (const float *)((const char *) src0->data + i1*nb01 + i2*nb02 + i3*nb03);
            float       * y = (float *)((char *) dst->data + i1*nb1 + i2*nb2 + i3*nb3);
            s += lm_gn_row(level, n, y, x, mean);
        }
        sum2[p] = s;
    }
    lm_ggml_barrier(params->threadpool);

    float scale = 1.0f;
    g1 = 0;
    for (int64_t p = p0; p < p1; p++) {
        const int64_t i2 = p % ne02, i3 = p / ne02;
        if (p == p0 || p >= g1) {
            GN_GROUP_OF(i2, i3);
            scale = 1.0f/sqrtf(lm_gn_stat(sum2, g0, g1, count) + eps);
        }
        for (int64_t i1 = 0; i1 < rows; i1++) {
            float * y = (float *)((char *) dst->data + i1*nb1 + i2*nb2 + i3*nb3);
            lm_vec_scale(simd, n, y, y, scale);
        }
    }
#undef GN_GROUP_OF
}

// ---------------------------------------------------------------- soft_max

static float lm_row_max_s(int64_t n, const float * x) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; i++) m = LM_GGML_MAX(m, x[i]);
    return m;
}

// y[i] = exp(y[i] - m); returns the sum in double
static lm_float_acc lm_row_exp_sum_s(int64_t n, float * y, float m) {
    lm_float_acc s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float v = expf(y[i] - m);
        s += (lm_float_acc) v;
        y[i] = v;
    }
    return s;
}

#if defined(LM_X86)
// (in AVX-512 steps where wide: the same bits)
LM_TARGET_AVX2 static lm_float_acc lm_row_exp_sum_avx2(bool wide, int64_t n, float * y, float m) {
    __m256d a[2];
    const int64_t i = lm_exp_sum_steps(wide, n, y, y, m, a);
    double t[4];
    _mm256_storeu_pd(t, _mm256_add_pd(a[0], a[1]));
    lm_float_acc s = (t[0] + t[1]) + (t[2] + t[3]);
    return s + lm_row_exp_sum_s(n - i, y + i, m);
}
#endif

// One soft_max row in place in y (y already holds the scaled, masked logits).
// simd and wide: lm_vec_avx2() and lm_vec_avx512().
static void lm_soft_max_row(bool simd, bool wide, int64_t n, float * y) {
#if defined(LM_X86)
    if (simd) {
        const float m = lm_row_max_avx2(n, y);
        const lm_float_acc s = lm_row_exp_sum_avx2(wide, n, y, m);
        lm_vec_scale_avx2(n, y, y, (float)(1.0/s));
        return;
    }
#endif
    (void) simd;
    (void) wide;
    const float m = lm_row_max_s(n, y);
    const lm_float_acc s = lm_row_exp_sum_s(n, y, m);
    lm_vec_scale_s(n, y, y, (float)(1.0/s));
}

static void lm_compute_soft_max(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const float scale    = lm_ggml_get_op_params_f32(dst, 0);
    const float max_bias = lm_ggml_get_op_params_f32(dst, 1);

    const int64_t nc = src0->ne[0], ne01 = src0->ne[1], ne02 = src0->ne[2];
    // ALiBi: head h = index in dim 2 gets slope m0^(h+1) or m1^(2(h-n)+1)
    const uint32_t n_head = (uint32_t) ne02;
    const uint32_t n_head_log2 = 1u << (uint32_t) floor(log2(n_head));
    const float m0 = powf(2.0f, -(max_bias       ) / n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / n_head_log2);

    const bool simd = lm_vec_avx2(), wide = lm_vec_avx512();
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t i1 = ir0; i1 < ir1; i1++) {
        const uint32_t h = (uint32_t)((i1/ne01) % ne02);
        const float slope = (max_bias > 0.0f) ? (h < n_head_log2 ? powf(m0, h + 1) : powf(m1, 2*(h - n_head_log2) + 1)) : 1.0f;

        const float * sp = (const float *)((const char *) src0->data + i1*src0->nb[1]);
        float       * dp = (float *)((char *) dst->data + i1*dst->nb[1]);

        lm_vec_scale(simd, nc, dp, sp, scale);
        if (src1) {
            const char * mrow = (const char *) src1->data + (i1 % ne01)*src1->nb[1];
            if (src1->type == LM_GGML_TYPE_F16) {
                const lm_ggml_fp16_t * mp = (const lm_ggml_fp16_t *) mrow;
                for (int64_t i = 0; i < nc; i++) dp[i] += slope*LM_GGML_FP16_TO_FP32(mp[i]);
            } else {
                const float * mp = (const float *) mrow;
                for (int64_t i = 0; i < nc; i++) dp[i] += slope*mp[i];
            }
        }
        lm_soft_max_row(simd, wide, nc, dp);
    }
}

// dx = y * (dy - dot(y, dy)); src0 = dy, src1 = y
static void lm_compute_soft_max_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const int64_t nc = src0->ne[0];
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const float * dy = (const float *)((const char *) src0->data + i1*src0->nb[1] + i2*src0->nb[2] + i3*src0->nb[3]);
        const float * y  = (const float *)((const char *) src1->data + i1*src1->nb[1] + i2*src1->nb[2] + i3*src1->nb[3]);
        float       * dx = (float *)((char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]);
        lm_float_acc dot = 0.0;
        for (int64_t i = 0; i < nc; i++) dot += (lm_float_acc)(y[i]*dy[i]);
        const float d = (float) dot;
        for (int64_t i = 0; i < nc; i++) dx[i] = (dy[i] - d)*y[i];
    }
}

// element (i, j) of each matrix becomes `value` where i > n_past + j
static void lm_diag_mask(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst, float value) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const int n_past = lm_ggml_get_op_params_i32(dst, 0);
    const enum lm_ggml_type t = dst->type;
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t j, i2, i3;
        lm_row_index(src0, ir, &j, &i2, &i3);
        const char * s = (const char *) src0->data + j*src0->nb[1] + i2*src0->nb[2] + i3*src0->nb[3];
        char       * d = (char *) dst->data + j*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
        for (int64_t i = 0; i < src0->ne[0]; i++) {
            const float v = (i > n_past + j) ? value : lm_load_f(t, s + i*src0->nb[0]);
            lm_store_f(t, d + i*dst->nb[0], v);
        }
    }
}
static void lm_compute_diag_mask_inf(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    lm_diag_mask(params, dst, -INFINITY);
}
static void lm_compute_diag_mask_zero(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    lm_diag_mask(params, dst, 0.0f);
}

// What the kernels read and write (the constructors' type checks, for nodes
// made some other way): f32 rows of unit stride, soft_max on contiguous
// tensors with an f16/f32 mask that covers the rows.
static bool lm_f32_rows(const struct lm_ggml_tensor * t) {
    return t != NULL && t->type == LM_GGML_TYPE_F32 && t->nb[0] == sizeof(float);
}
static bool lm_supports_norm(const struct lm_ggml_tensor * node) {
    return lm_f32_rows(node->src[0]) && lm_f32_rows(node) && lm_ggml_are_same_shape(node->src[0], node);
}
static bool lm_supports_norm2(const struct lm_ggml_tensor * node) {
    return lm_supports_norm(node) && lm_f32_rows(node->src[1]) && lm_ggml_are_same_shape(node->src[0], node->src[1]);
}
static bool lm_supports_soft_max(const struct lm_ggml_tensor * node) {
    const struct lm_ggml_tensor * a = node->src[0], * m = node->src[1];
    if (a == NULL || a->type != LM_GGML_TYPE_F32 || node->type != LM_GGML_TYPE_F32 || !lm_ggml_is_contiguous(a) ||
        !lm_ggml_is_contiguous(node) || !lm_ggml_are_same_shape(a, node)) return false;
    return m == NULL || ((m->type == LM_GGML_TYPE_F16 || m->type == LM_GGML_TYPE_F32) && lm_ggml_is_contiguous(m) &&
                         m->ne[0] == a->ne[0] && m->ne[1] >= a->ne[1]);
}
static bool lm_supports_diag_mask(const struct lm_ggml_tensor * node) {
    const struct lm_ggml_tensor * a = node->src[0];
    return a != NULL && lm_is_plain_float(a->type) && node->type == a->type && lm_ggml_are_same_shape(a, node);
}

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_norm           = { .compute = lm_compute_norm, .supports = lm_supports_norm };
const struct lm_cpu_op lm_cpu_op_rms_norm       = { .compute = lm_compute_rms_norm, .supports = lm_supports_norm };
const struct lm_cpu_op lm_cpu_op_rms_norm_back  = { .compute = lm_compute_rms_norm_back, .supports = lm_supports_norm2 };
const struct lm_cpu_op lm_cpu_op_group_norm     = { .compute = lm_compute_group_norm, .work_size = lm_wsize_group_norm, .supports = lm_supports_norm };
const struct lm_cpu_op lm_cpu_op_soft_max       = { .compute = lm_compute_soft_max, .supports = lm_supports_soft_max };
const struct lm_cpu_op lm_cpu_op_soft_max_back  = { .compute = lm_compute_soft_max_back, .supports = lm_supports_norm2 };
const struct lm_cpu_op lm_cpu_op_diag_mask_inf  = { .compute = lm_compute_diag_mask_inf, .supports = lm_supports_diag_mask };
const struct lm_cpu_op lm_cpu_op_diag_mask_zero = { .compute = lm_compute_diag_mask_zero, .supports = lm_supports_diag_mask };
