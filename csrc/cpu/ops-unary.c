// ops-unary.c - one-input elementwise ops: sqr, sqrt, log, sin, cos, scale,
// clamp, leaky_relu, the LM_GGML_OP_UNARY family and silu_back: CPU kernels.
// The constructors are in graph/ctor-unary.c; see ggml-cpu-impl.h for the
// kernel contract.
//
// Kernels work row by row on f32; f16/bf16 tensors and strided rows pass
// through f32 scratch chunks.
#include "ops-vec.h"
#include "ggml-cpu-impl.h"

#include <pthread.h>

// ---------------------------------------------------------------- gelu tables
//
// ggml evaluates gelu and gelu_quick on f32 data by rounding the input to
// f16 and looking the f16 result up in a 64K table (its GGML_GELU_FP16 /
// GGML_GELU_QUICK_FP16 builds, the default). The rounding error of that
// scheme is ~1e-4 relative, more than the parity tolerance allows, so the
// same scheme is used here. The tables hold the f16 results widened to f32.

#define LM_GELU_COEF_A       0.044715f
#define LM_GELU_QUICK_COEF  -1.702f
#define LM_SQRT_2_OVER_PI    0.79788456080286535587989211986876f

static inline float lm_gelu1(float x) {
    return 0.5f*x*(1.0f + tanhf(LM_SQRT_2_OVER_PI*x*(1.0f + LM_GELU_COEF_A*x*x)));
}
static inline float lm_gelu_quick1(float x) {
    return x*(1.0f/(1.0f + expf(LM_GELU_QUICK_COEF*x)));
}

static float lm_gelu_table[1 << 16];
static float lm_gelu_quick_table[1 << 16];
static pthread_once_t lm_gelu_once = PTHREAD_ONCE_INIT;

static void lm_gelu_tables_fill(void) {
    for (uint32_t i = 0; i < (1u << 16); i++) {
        const float x = LM_GGML_FP16_TO_FP32((lm_ggml_fp16_t) i);
        lm_gelu_table[i]       = LM_GGML_FP16_TO_FP32(LM_GGML_FP32_TO_FP16(lm_gelu1(x)));
        lm_gelu_quick_table[i] = LM_GGML_FP16_TO_FP32(LM_GGML_FP32_TO_FP16(lm_gelu_quick1(x)));
    }
}
static void lm_gelu_tables_init(void) { pthread_once(&lm_gelu_once, lm_gelu_tables_fill); }

// ---------------------------------------------------------------- row functions

// y[0..n) = f(x[0..n)); prm carries the op's float parameters. y may equal x.
typedef void (*lm_row_fn)(int64_t n, float * y, const float * x, const float * prm);

#define LM_ROW_FN(name, expr) \
    static void name(int64_t n, float * y, const float * x, const float * prm) { \
        (void) prm; \
        for (int64_t i = 0; i < n; i++) { const float v = x[i]; y[i] = (expr); } \
    }

LM_ROW_FN(lm_row_sqr,   v*v)
LM_ROW_FN(lm_row_sqrt,  sqrtf(v))
LM_ROW_FN(lm_row_log,   logf(v))
LM_ROW_FN(lm_row_sin,   sinf(v))
LM_ROW_FN(lm_row_cos,   cosf(v))
LM_ROW_FN(lm_row_scale, v*prm[0])
LM_ROW_FN(lm_row_clamp, LM_GGML_MAX(LM_GGML_MIN(v, prm[1]), prm[0]))
LM_ROW_FN(lm_row_leaky, ((v > 0.0f) ? v : 0.0f) + prm[0]*((v < 0.0f) ? v : 0.0f))
LM_ROW_FN(lm_row_abs,   fabsf(v))
LM_ROW_FN(lm_row_sgn,   (v > 0.0f) ? 1.0f : ((v < 0.0f) ? -1.0f : 0.0f))
LM_ROW_FN(lm_row_neg,   -v)
LM_ROW_FN(lm_row_step,  (v > 0.0f) ? 1.0f : 0.0f)
LM_ROW_FN(lm_row_tanh,  tanhf(v))
LM_ROW_FN(lm_row_elu,   (v > 0.0f) ? v : expm1f(v))
LM_ROW_FN(lm_row_relu,  (v > 0.0f) ? v : 0.0f)
LM_ROW_FN(lm_row_sigmoid, 1.0f/(1.0f + expf(-v)))
LM_ROW_FN(lm_row_silu,  lm_silu1(v))
LM_ROW_FN(lm_row_hardswish,   v*fminf(1.0f, fmaxf(0.0f, (v + 3.0f)/6.0f)))
LM_ROW_FN(lm_row_hardsigmoid, fminf(1.0f, fmaxf(0.0f, (v + 3.0f)/6.0f)))
LM_ROW_FN(lm_row_exp,   expf(v))
LM_ROW_FN(lm_row_gelu_quick, lm_gelu_quick_table[LM_GGML_FP32_TO_FP16(v)])
LM_ROW_FN(lm_row_gelu, (v <= -10.0f) ? 0.0f : ((v >= 10.0f) ? v : lm_gelu_table[LM_GGML_FP32_TO_FP16(v)]))

#if defined(LM_X86)
LM_TARGET_AVX2 static void lm_row_silu_avx2(int64_t n, float * y, const float * x, const float * prm) {
    (void) prm;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = lm_v_silu_avx2(_mm256_loadu_ps(x + i));
        const __m256 b = lm_v_silu_avx2(_mm256_loadu_ps(x + i + 8));
        _mm256_storeu_ps(y + i, a);
        _mm256_storeu_ps(y + i + 8, b);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, lm_v_silu_avx2(_mm256_loadu_ps(x + i)));
    for (; i < n; i++) y[i] = lm_silu1(x[i]);
}

// lm_row_silu_avx2's bits (lm_v_expf_avx512_as2); as there, the last n % 8
// elements are scalar
LM_TARGET_AVX512 static void lm_row_silu_avx512(int64_t n, float * y, const float * x, const float * prm) {
    (void) prm;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, lm_v_silu_avx512(_mm512_loadu_ps(x + i)));
    if (i + 8 <= n) {
        _mm512_mask_storeu_ps(y + i, 0xFF, lm_v_silu_avx512(_mm512_maskz_loadu_ps(0xFF, x + i)));
        i += 8;
    }
    for (; i < n; i++) y[i] = lm_silu1(x[i]);
}

LM_TARGET_AVX2 static void lm_row_scale_avx2(int64_t n, float * y, const float * x, const float * prm) {
    lm_vec_scale_avx2(n, y, x, prm[0]);
}

// The f16 round trip is the same F16C rounding (nearest even) as the scalar
// converter, so this matches lm_row_gelu bit for bit.
LM_TARGET_AVX2 static void lm_row_gelu_avx2(int64_t n, float * y, const float * x, const float * prm) {
    (void) prm;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256i idx = _mm256_cvtepu16_epi32(h);
        __m256 r = _mm256_i32gather_ps(lm_gelu_table, idx, 4);
        r = _mm256_blendv_ps(r, _mm256_setzero_ps(), _mm256_cmp_ps(v, _mm256_set1_ps(-10.0f), _CMP_LE_OQ));
        r = _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, _mm256_set1_ps(10.0f), _CMP_GE_OQ));
        _mm256_storeu_ps(y + i, r);
    }
    lm_row_gelu(n - i, y + i, x + i, prm);
}
#endif

static lm_row_fn lm_unary_row_fn(enum lm_ggml_unary_op op) {
    const bool simd = lm_vec_avx2();
    (void) simd;
    switch (op) {
        case LM_GGML_UNARY_OP_ABS:         return lm_row_abs;
        case LM_GGML_UNARY_OP_SGN:         return lm_row_sgn;
        case LM_GGML_UNARY_OP_NEG:         return lm_row_neg;
        case LM_GGML_UNARY_OP_STEP:        return lm_row_step;
        case LM_GGML_UNARY_OP_TANH:        return lm_row_tanh;
        case LM_GGML_UNARY_OP_ELU:         return lm_row_elu;
        case LM_GGML_UNARY_OP_RELU:        return lm_row_relu;
        case LM_GGML_UNARY_OP_SIGMOID:     return lm_row_sigmoid;
#if defined(LM_X86)
        case LM_GGML_UNARY_OP_GELU:        return simd ? lm_row_gelu_avx2 : lm_row_gelu;
        case LM_GGML_UNARY_OP_SILU:        return !simd ? lm_row_silu : lm_vec_avx512() ? lm_row_silu_avx512 : lm_row_silu_avx2;
#else
        case LM_GGML_UNARY_OP_GELU:        return lm_row_gelu;
        case LM_GGML_UNARY_OP_SILU:        return lm_row_silu;
#endif
        case LM_GGML_UNARY_OP_GELU_QUICK:  return lm_row_gelu_quick;
        case LM_GGML_UNARY_OP_HARDSWISH:   return lm_row_hardswish;
        case LM_GGML_UNARY_OP_HARDSIGMOID: return lm_row_hardsigmoid;
        case LM_GGML_UNARY_OP_EXP:         return lm_row_exp;
        default:                           return NULL;
    }
}

// ---------------------------------------------------------------- generic row driver

#define LM_MAP_RUN 256
static void lm_map_rows(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst,
        lm_row_fn fn, const float * prm) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    LM_GGML_TENSOR_UNARY_OP_LOCALS
    const bool fast = src0->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 &&
                      nb00 == sizeof(float) && nb0 == sizeof(float);

    // One row (a token's activations) is shared out in runs of LM_MAP_RUN
    // elements, not left to thread 0: the row functions compute each
    // element alone, and the runs start on multiples of every vector width
    // (the tail is the row's tail), so the bits do not depend on the split.
    if (fast && params->nth > 1 && lm_ggml_nrows(src0) == 1) {
        int64_t u0, u1;
        lm_ggml_thread_range((ne00 + LM_MAP_RUN - 1) / LM_MAP_RUN, params->ith, params->nth, &u0, &u1);
        const int64_t e0 = u0 * LM_MAP_RUN, e1 = LM_GGML_MIN(ne00, u1 * LM_MAP_RUN);
        if (e1 > e0) fn(e1 - e0, (float *) dst->data + e0, (const float *) src0->data + e0, prm);
        return;
    }
    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const char * x = (const char *) src0->data + i1*nb01 + i2*nb02 + i3*nb03;
        char       * y = (char *) dst->data + i1*nb1 + i2*nb2 + i3*nb3;
        if (fast) {
            fn(ne00, (float *) y, (const float *) x, prm);
            continue;
        }
        float buf[LM_ROW_CHUNK];
        for (int64_t c0 = 0; c0 < ne00; c0 += LM_ROW_CHUNK) {
            const int64_t n = LM_GGML_MIN(LM_ROW_CHUNK, ne00 - c0);
            lm_load_row_f32(src0, x, c0, n, buf);
            fn(n, buf, buf, prm);
            lm_store_row_f32(dst, y, c0, n, buf);
        }
    }
}

#define LM_SIMPLE_KERNEL(name, fn) \
    static void name(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) { \
        lm_map_rows(params, dst, fn, NULL); \
    }
LM_SIMPLE_KERNEL(lm_compute_sqr,  lm_row_sqr)
LM_SIMPLE_KERNEL(lm_compute_sqrt, lm_row_sqrt)
LM_SIMPLE_KERNEL(lm_compute_log,  lm_row_log)
LM_SIMPLE_KERNEL(lm_compute_sin,  lm_row_sin)
LM_SIMPLE_KERNEL(lm_compute_cos,  lm_row_cos)

static void lm_compute_scale(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const float prm[1] = { lm_ggml_get_op_params_f32(dst, 0) };
#if defined(LM_X86)
    lm_map_rows(params, dst, lm_vec_avx2() ? lm_row_scale_avx2 : lm_row_scale, prm);
#else
    lm_map_rows(params, dst, lm_row_scale, prm);
#endif
}

static void lm_compute_clamp(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const float prm[2] = { lm_ggml_get_op_params_f32(dst, 0), lm_ggml_get_op_params_f32(dst, 1) };
    lm_map_rows(params, dst, lm_row_clamp, prm);
}

static void lm_compute_leaky_relu(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const float prm[1] = { lm_ggml_get_op_params_f32(dst, 0) };
    lm_map_rows(params, dst, lm_row_leaky, prm);
}

static void lm_compute_unary(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const enum lm_ggml_unary_op op = (enum lm_ggml_unary_op) lm_ggml_get_op_params_i32(dst, 0);
    if (op == LM_GGML_UNARY_OP_GELU || op == LM_GGML_UNARY_OP_GELU_QUICK) {
        lm_gelu_tables_init();
    }
    lm_row_fn fn = lm_unary_row_fn(op);
    if (fn) lm_map_rows(params, dst, fn, NULL);
}

// dst = dy * d silu(x)/dx; src0 = x, src1 = dy.
static void lm_compute_silu_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    LM_GGML_TENSOR_BINARY_OP_LOCALS

    int64_t ir0, ir1;
    lm_ggml_thread_range(lm_ggml_nrows(src0), params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        lm_row_index(src0, ir, &i1, &i2, &i3);
        const char * x  = (const char *) src0->data + i1*nb01 + i2*nb02 + i3*nb03;
        const char * dy = (const char *) src1->data + i1*nb11 + i2*nb12 + i3*nb13;
        char       * d  = (char *) dst->data + i1*nb1 + i2*nb2 + i3*nb3;
        float bx[LM_ROW_CHUNK], bd[LM_ROW_CHUNK];
        for (int64_t c0 = 0; c0 < ne00; c0 += LM_ROW_CHUNK) {
            const int64_t n = LM_GGML_MIN(LM_ROW_CHUNK, ne00 - c0);
            lm_load_row_f32(src0, x, c0, n, bx);
            lm_load_row_f32(src1, dy, c0, n, bd);
            for (int64_t i = 0; i < n; i++) {
                const float s = 1.0f/(1.0f + expf(-bx[i]));
                bx[i] = bd[i]*s*(1.0f + bx[i]*(1.0f - s));
            }
            lm_store_row_f32(dst, d, c0, n, bx);
        }
    }
}

// The kernels work on f32/f16/bf16 rows (the constructors' type check, for
// nodes made some other way); UNARY needs one of the ops it has a row for.
static bool lm_supports_unary_like(const struct lm_ggml_tensor * node) {
    const struct lm_ggml_tensor * a = node->src[0];
    return a != NULL && lm_is_plain_float(a->type) && lm_is_plain_float(node->type) && lm_ggml_are_same_shape(a, node);
}
static bool lm_supports_unary(const struct lm_ggml_tensor * node) {
    const int32_t op = lm_ggml_get_op_params_i32(node, 0);
    return lm_supports_unary_like(node) && op >= 0 && op < LM_GGML_UNARY_OP_COUNT && lm_unary_row_fn((enum lm_ggml_unary_op) op) != NULL;
}
static bool lm_supports_silu_back(const struct lm_ggml_tensor * node) {
    return lm_supports_unary_like(node) && node->src[1] != NULL && lm_is_plain_float(node->src[1]->type) &&
           lm_ggml_are_same_shape(node->src[0], node->src[1]);
}

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_sqr        = { .compute = lm_compute_sqr, .supports = lm_supports_unary_like };
const struct lm_cpu_op lm_cpu_op_sqrt       = { .compute = lm_compute_sqrt, .supports = lm_supports_unary_like };
const struct lm_cpu_op lm_cpu_op_log        = { .compute = lm_compute_log, .supports = lm_supports_unary_like };
const struct lm_cpu_op lm_cpu_op_sin        = { .compute = lm_compute_sin, .supports = lm_supports_unary_like };
const struct lm_cpu_op lm_cpu_op_cos        = { .compute = lm_compute_cos, .supports = lm_supports_unary_like };
const struct lm_cpu_op lm_cpu_op_scale      = { .compute = lm_compute_scale, .supports = lm_supports_unary_like };
const struct lm_cpu_op lm_cpu_op_clamp      = { .compute = lm_compute_clamp, .supports = lm_supports_unary_like };
const struct lm_cpu_op lm_cpu_op_leaky_relu = { .compute = lm_compute_leaky_relu, .supports = lm_supports_unary_like };
const struct lm_cpu_op lm_cpu_op_unary      = { .compute = lm_compute_unary, .supports = lm_supports_unary };
const struct lm_cpu_op lm_cpu_op_silu_back  = { .compute = lm_compute_silu_back, .supports = lm_supports_silu_back };
