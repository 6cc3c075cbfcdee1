// ops-train.c - CPU kernels of the loss and optimizer ops: cross_entropy_loss
// (+ its backward) and the AdamW step. The constructors (graph/ctor-train.c)
// check everything, so the kernels below never assert (see ggml-cpu-impl.h
// for the kernel contract).
#include "ggml-cpu-impl.h"
#include "ops-vec.h"

// ---------------------------------------------------------------- helpers

// Address of element 0 of row ir (rows counted over dims 1..3).
static inline char * row_ptr(const struct lm_ggml_tensor * t, int64_t ir) {
    const int64_t i1 = ir % t->ne[1];
    const int64_t i2 = (ir / t->ne[1]) % t->ne[2];
    const int64_t i3 = ir / (t->ne[1] * t->ne[2]);
    return (char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
}

#define ELEM(p, i, nb0) (*(float *)((char *)(p) + (size_t)(i)*(nb0)))

// ---------------------------------------------------------------- cross_entropy_loss
//
// loss = -(1/nrows) * sum_rows sum_i labels_i * log_softmax(logits)_i
//
// The per-element float operations follow ggml's order (x - max, then
// + (-log sum exp), then * label), the row sum and the sum of exponentials are
// accumulated in double, per-thread partials in float, and their total in double.

static size_t lm_wsize_cross_entropy_loss(const struct lm_ggml_tensor * node, int n_threads) {
    (void) node;
    return sizeof(float) * (size_t) (n_threads > 0 ? n_threads : 1);
}

static float cel_row(const char * s0, size_t nb00, const char * s1, size_t nb10, int64_t nc) {
    float max = -INFINITY;
    for (int64_t i = 0; i < nc; i++) {
        const float x = ELEM(s0, i, nb00);
        max = max > x ? max : x;
    }
    double sum_exp = 0.0;
    for (int64_t i = 0; i < nc; i++) {
        sum_exp += (double) expf(ELEM(s0, i, nb00) - max);
    }
    const float neg_log_sum = -(float) logf((float) sum_exp);
    double row = 0.0;
    for (int64_t i = 0; i < nc; i++) {
        float st = ELEM(s0, i, nb00) - max;
        st = st + neg_log_sum;
        st = st * ELEM(s1, i, nb10);
        row += (double) st;
    }
    return (float) row;
}

#if defined(LM_X86)
LM_TARGET_AVX2 static double hsum_pd_avx2(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// Contiguous rows. The exponentials come from the vector exp (a few ulp from
// expf); sums are still taken in double.
LM_TARGET_AVX2 static float cel_row_avx2(bool wide, const float * x, const float * y, int64_t nc) {
    const float max = lm_row_max_avx2(nc, x);
    const __m256 vmax = _mm256_set1_ps(max);
    __m256d s[2];
    int64_t i = lm_exp_sum_steps(wide, nc, x, NULL, max, s);
    double sum_exp = hsum_pd_avx2(_mm256_add_pd(s[0], s[1]));
    for (; i < nc; i++) {
        sum_exp += (double) expf(x[i] - max);
    }
    const float neg_log_sum = -(float) logf((float) sum_exp);
    const __m256 vnls = _mm256_set1_ps(neg_log_sum);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (i = 0; i + 8 <= nc; i += 8) {
        const __m256 st = _mm256_mul_ps(_mm256_add_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax), vnls), _mm256_loadu_ps(y + i));
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(st)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(st, 1)));
    }
    double row = hsum_pd_avx2(_mm256_add_pd(s0, s1));
    for (; i < nc; i++) {
        float st = x[i] - max;
        st = st + neg_log_sum;
        st = st * y[i];
        row += (double) st;
    }
    return (float) row;
}

LM_TARGET_AVX2 static void celb_row_avx2(bool wide, float * d, const float * x, const float * y, int64_t nc, float d_by_nr) {
    const float max = lm_row_max_avx2(nc, x);
    __m256d s[2];
    int64_t i = lm_exp_sum_steps(wide, nc, x, d, max, s);
    double sum = hsum_pd_avx2(_mm256_add_pd(s[0], s[1]));
    for (; i < nc; i++) {
        d[i] = expf(x[i] - max);
        sum += (double) d[i];
    }
    const float inv = (float) (1.0 / sum);
    const __m256 vinv = _mm256_set1_ps(inv), vd = _mm256_set1_ps(d_by_nr);
    for (i = 0; i + 8 <= nc; i += 8) {
        const __m256 g = _mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(d + i), vinv), _mm256_loadu_ps(y + i));
        _mm256_storeu_ps(d + i, _mm256_mul_ps(g, vd));
    }
    for (; i < nc; i++) {
        float g = d[i] * inv;
        g = g - y[i];
        d[i] = g * d_by_nr;
    }
}
#endif

static void lm_compute_cross_entropy_loss(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const int64_t nc = src0->ne[0];
    const int64_t nr = lm_ggml_nrows(src0);

    // Without a slot per thread (work buffer sized for fewer threads), thread 0 does it all.
    const bool shared = params->wdata != NULL && params->wsize >= sizeof(float) * (size_t) params->nth;
    if (!shared && params->ith != 0) {
        return;
    }
    const int ith = shared ? params->ith : 0;
    const int nth = shared ? params->nth : 1;

    int64_t ir0, ir1;
    lm_ggml_thread_range(nr, ith, nth, &ir0, &ir1);

    const bool simd = lm_vec_avx2() && src0->nb[0] == sizeof(float) && src1->nb[0] == sizeof(float);
    const bool wide = lm_vec_avx512();
    (void) simd;
    (void) wide;
    float part = 0.0f;
    for (int64_t ir = ir0; ir < ir1; ir++) {
#if defined(LM_X86)
        if (simd) {
            part += cel_row_avx2(wide, (const float *) row_ptr(src0, ir), (const float *) row_ptr(src1, ir), nc);
            continue;
        }
#endif
        part += cel_row(row_ptr(src0, ir), src0->nb[0], row_ptr(src1, ir), src1->nb[0], nc);
    }

    float * out = (float *) dst->data;
    if (!shared) {
        out[0] = part * (-1.0f / (float) nr);
        return;
    }

    float * sums = (float *) params->wdata;
    sums[ith] = part;
    lm_ggml_barrier(params->threadpool);
    if (ith == 0) {
        double total = 0.0;
        for (int t = 0; t < nth; t++) {
            total += (double) sums[t];
        }
        out[0] = (float) total;
        out[0] *= -1.0f / (float) nr;
    }
}

// ---------------------------------------------------------------- cross_entropy_loss_back
//
// d logits = (softmax(logits) - labels) * dloss / nrows

static void lm_compute_cross_entropy_loss_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const struct lm_ggml_tensor * src2 = dst->src[2];
    const int64_t nc = src0->ne[0];
    const int64_t nr = lm_ggml_nrows(src0);

    const float d_by_nr = *(const float *) src2->data / (float) nr;

    int64_t ir0, ir1;
    lm_ggml_thread_range(nr, params->ith, params->nth, &ir0, &ir1);
    const bool simd = lm_vec_avx2() && src0->nb[0] == sizeof(float) && src1->nb[0] == sizeof(float) &&
                      dst->nb[0] == sizeof(float);
    const bool wide = lm_vec_avx512();
    (void) simd;
    (void) wide;

    for (int64_t ir = ir0; ir < ir1; ir++) {
#if defined(LM_X86)
        if (simd) {
            celb_row_avx2(wide, (float *) row_ptr(dst, ir), (const float *) row_ptr(src0, ir), (const float *) row_ptr(src1, ir),
                    nc, d_by_nr);
            continue;
        }
#endif
        const char * s0 = row_ptr(src0, ir);
        const char * s1 = row_ptr(src1, ir);
        char       * d  = row_ptr(dst,  ir);
        const size_t nb00 = src0->nb[0], nb10 = src1->nb[0], nb0 = dst->nb[0];

        float max = -INFINITY;
        for (int64_t i = 0; i < nc; i++) {
            const float x = ELEM(s0, i, nb00);
            max = max > x ? max : x;
        }
        double sum = 0.0;
        for (int64_t i = 0; i < nc; i++) {
            const float e = expf(ELEM(s0, i, nb00) - max);
            sum += (double) e;
            ELEM(d, i, nb0) = e;
        }
        const float inv = (float) (1.0 / sum);
        for (int64_t i = 0; i < nc; i++) {
            float g = ELEM(d, i, nb0) * inv;
            g = g - ELEM(s1, i, nb10);
            ELEM(d, i, nb0) = g * d_by_nr;
        }
    }
}

// ---------------------------------------------------------------- opt_step_adamw
//
// Per element, in this order (decoupled weight decay, arXiv:1711.05101):
//   m = m*beta1 + g*(1 - beta1)
//   v = v*beta2 + g*g*(1 - beta2)
//   mh = m*beta1h;  vh = sqrt(v*beta2h) + eps
//   w = w*(1 - alpha*wd) - alpha*mh/vh
// beta1h and beta2h are the bias corrections 1/(1 - beta^t) chosen by the caller.

struct adamw_hp {
    float alpha, beta1, beta2, eps, wd, beta1h, beta2h;
    float omb1, omb2, keep; // 1 - beta1, 1 - beta2, 1 - alpha*wd
};

static void adamw_row_scalar(const struct adamw_hp * h, int64_t i0, int64_t n, float * w, const float * g, float * m, float * v) {
    for (int64_t i = i0; i < n; i++) {
        m[i] = m[i]*h->beta1 + g[i]*h->omb1;
        v[i] = v[i]*h->beta2 + g[i]*g[i]*h->omb2;
        const float mh = m[i]*h->beta1h;
        const float vh = sqrtf(v[i]*h->beta2h) + h->eps;
        w[i] = w[i]*h->keep - h->alpha*mh/vh;
    }
}

#if defined(LM_X86)
LM_TARGET_AVX2
static void adamw_row_avx2(const struct adamw_hp * h, int64_t n, float * w, const float * g, float * m, float * v) {
    const __m256 b1 = _mm256_set1_ps(h->beta1), b2 = _mm256_set1_ps(h->beta2);
    const __m256 o1 = _mm256_set1_ps(h->omb1),  o2 = _mm256_set1_ps(h->omb2);
    const __m256 b1h = _mm256_set1_ps(h->beta1h), b2h = _mm256_set1_ps(h->beta2h);
    const __m256 eps = _mm256_set1_ps(h->eps), keep = _mm256_set1_ps(h->keep), alpha = _mm256_set1_ps(h->alpha);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 gi = _mm256_loadu_ps(g + i);
        const __m256 mi = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(m + i), b1), _mm256_mul_ps(gi, o1));
        const __m256 vi = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(v + i), b2), _mm256_mul_ps(_mm256_mul_ps(gi, gi), o2));
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        const __m256 mh = _mm256_mul_ps(mi, b1h);
        const __m256 vh = _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(vi, b2h)), eps);
        const __m256 st = _mm256_div_ps(_mm256_mul_ps(alpha, mh), vh);
        _mm256_storeu_ps(w + i, _mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(w + i), keep), st));
    }
    adamw_row_scalar(h, i, n, w, g, m, v);
}
#endif

static void lm_compute_opt_step_adamw(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * w_t = dst->src[0];
    const struct lm_ggml_tensor * g_t = dst->src[1];
    const struct lm_ggml_tensor * m_t = dst->src[2];
    const struct lm_ggml_tensor * v_t = dst->src[3];
    const float * p = (const float *) dst->src[4]->data;

    struct adamw_hp h = { p[0], p[1], p[2], p[3], p[4], p[5], p[6], 0, 0, 0 };
    h.omb1 = 1.0f - h.beta1;
    h.omb2 = 1.0f - h.beta2;
    h.keep = 1.0f - h.alpha*h.wd;

    const int64_t nc = w_t->ne[0];
    const int64_t nr = lm_ggml_nrows(w_t);
    const bool unit = w_t->nb[0] == sizeof(float) && g_t->nb[0] == sizeof(float) &&
                      m_t->nb[0] == sizeof(float) && v_t->nb[0] == sizeof(float);
#if defined(LM_X86)
    const bool use_avx2 = unit && lm_vec_avx2();
#endif

    int64_t ir0, ir1;
    lm_ggml_thread_range(nr, params->ith, params->nth, &ir0, &ir1);

    for (int64_t ir = ir0; ir < ir1; ir++) {
        float       * w = (float       *) row_ptr(w_t, ir);
        const float * g = (const float *) row_ptr(g_t, ir);
        float       * m = (float       *) row_ptr(m_t, ir);
        float       * v = (float       *) row_ptr(v_t, ir);
        if (unit) {
#if defined(LM_X86)
            if (use_avx2) {
                adamw_row_avx2(&h, nc, w, g, m, v);
                continue;
            }
#endif
            adamw_row_scalar(&h, 0, nc, w, g, m, v);
            continue;
        }
        for (int64_t i = 0; i < nc; i++) {
            float * wi = (float *)((char *) w + i*w_t->nb[0]);
            const float * gi = (const float *)((const char *) g + i*g_t->nb[0]);
            float * mi = (float *)((char *) m + i*m_t->nb[0]);
            float * vi = (float *)((char *) v + i*v_t->nb[0]);
            adamw_row_scalar(&h, 0, 1, wi, gi, mi, vi);
        }
    }
}

// ---------------------------------------------------------------- descriptors

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_cross_entropy_loss      = { .compute = lm_compute_cross_entropy_loss, .work_size = lm_wsize_cross_entropy_loss };
const struct lm_cpu_op lm_cpu_op_cross_entropy_loss_back = { .compute = lm_compute_cross_entropy_loss_back };
const struct lm_cpu_op lm_cpu_op_opt_step_adamw          = { .compute = lm_compute_opt_step_adamw };
