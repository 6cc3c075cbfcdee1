// ops-nn.c - CPU kernels of the "neural network" ops that do not fit
// elsewhere: rotary embeddings (rope, rope_back), SAM windowing
// (win_part/unpart, get_rel_pos, add_rel_pos). The recurrent models' ops
// are in ops-recurrent.c. The constructors are in graph/ctor-nn.c; see
// ggml-cpu-impl.h for the kernel contract.
#include "ggml-cpu-impl.h"

#if defined(LM_X86)
#include <immintrin.h>
#endif

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static inline bool nn_avx2(void) {
#if defined(LM_X86)
    const enum lm_cpu_level l = lm_cpu_level();
    return l == LM_CPU_LEVEL_AVX2 || l == LM_CPU_LEVEL_AVX512;
#else
    return false;
#endif
}

// ================================================================ rope
//
// op_params of ROPE / ROPE_BACK (written by graph/ctor-nn.c):
//   i32 [0] n_past (unused, 0)  [1] n_dims  [2] mode  [3] n_ctx (unused, 0)  [4] n_ctx_orig
//   f32 [5] freq_base [6] freq_scale [7] ext_factor [8] attn_factor [9] beta_fast [10] beta_slow

// YaRN: the dimension index at which a rotation completes n_rot turns over
// the original context; dimensions below 'low' extrapolate, above 'high' interpolate.
static float rope_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float) M_PI)) / (2 * logf(base));
}

void lm_ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]) {
    const float lo = floorf(rope_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
    const float hi = ceilf (rope_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
    dims[0] = lo > 0.0f ? lo : 0.0f;
    dims[1] = hi < (float)(n_dims - 1) ? hi : (float)(n_dims - 1);
}

struct rope_cfg {
    int   n_dims;
    bool  neox;
    float freq_scale, ext_factor, attn_factor;
    float theta_scale;
    float corr[2];
    float sin_sign;
    const float * ff; // freq factors or NULL
};

// Fills cos/sin of the n_dims/2 rotation angles at position pos. Layout:
// interleaved (cos, sin) pairs for normal mode, [cos...][sin...] halves for NeoX,
// so that both SIMD loops read contiguous vectors.
static void rope_fill_cache(const struct rope_cfg * c, float pos, float * cache) {
    const int half = c->n_dims / 2;
    float theta = pos;
    for (int i = 0; i < half; i++) {
        const float extrap = theta / (c->ff ? c->ff[i] : 1.0f);
        const float interp = c->freq_scale * extrap;
        float th = interp;
        float msc = c->attn_factor;
        if (c->ext_factor != 0.0f) {
            const float y = ((float) i - c->corr[0]) / LM_GGML_MAX(0.001f, c->corr[1] - c->corr[0]);
            const float ramp = 1.0f - LM_GGML_MIN(1.0f, LM_GGML_MAX(0.0f, y));
            const float mix = ramp * c->ext_factor;
            th = interp * (1 - mix) + extrap * mix;
            msc *= 1.0f + 0.1f * logf(1.0f / c->freq_scale);
        }
        const float cs = cosf(th) * msc;
        const float sn = sinf(th) * msc * c->sin_sign;
        if (c->neox) { cache[i] = cs; cache[half + i] = sn; }
        else         { cache[2*i] = cs; cache[2*i + 1] = sn; }
        theta *= c->theta_scale;
    }
}

// One row: rotate the first n_dims values, copy the rest.
static void rope_row_f32_s(const struct rope_cfg * c, const float * cache, const float * x, float * y, int i0) {
    const int nd = c->n_dims, half = nd / 2;
    if (c->neox) {
        for (int i = i0 / 2; i < half; i++) {
            const float a = x[i], b = x[i + half];
            const float cs = cache[i], sn = cache[half + i];
            y[i]        = a*cs - b*sn;
            y[i + half] = a*sn + b*cs;
        }
    } else {
        for (int i = i0; i < nd; i += 2) {
            const float a = x[i], b = x[i + 1];
            const float cs = cache[i], sn = cache[i + 1];
            y[i]     = a*cs - b*sn;
            y[i + 1] = a*sn + b*cs;
        }
    }
}

static void rope_row_f16_s(const struct rope_cfg * c, const float * cache, const lm_ggml_fp16_t * x, lm_ggml_fp16_t * y, int i0) {
    const int nd = c->n_dims, half = nd / 2;
    if (c->neox) {
        for (int i = i0 / 2; i < half; i++) {
            const float a = LM_GGML_FP16_TO_FP32(x[i]), b = LM_GGML_FP16_TO_FP32(x[i + half]);
            const float cs = cache[i], sn = cache[half + i];
            y[i]        = LM_GGML_FP32_TO_FP16(a*cs - b*sn);
            y[i + half] = LM_GGML_FP32_TO_FP16(a*sn + b*cs);
        }
    } else {
        for (int i = i0; i < nd; i += 2) {
            const float a = LM_GGML_FP16_TO_FP32(x[i]), b = LM_GGML_FP16_TO_FP32(x[i + 1]);
            const float cs = cache[i], sn = cache[i + 1];
            y[i]     = LM_GGML_FP32_TO_FP16(a*cs - b*sn);
            y[i + 1] = LM_GGML_FP32_TO_FP16(a*sn + b*cs);
        }
    }
}

#if defined(LM_X86)
// Returns how many leading dims were done (a multiple of 16 for normal mode,
// 2*multiple of 8 for NeoX); the scalar row routine finishes the rest.
LM_TARGET_AVX2 static int rope_row_f32_avx2(const struct rope_cfg * c, const float * cache, const float * x, float * y) {
    const int nd = c->n_dims, half = nd / 2;
    if (c->neox) {
        int i = 0;
        for (; i + 8 <= half; i += 8) {
            const __m256 a  = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + half);
            const __m256 cs = _mm256_loadu_ps(cache + i), sn = _mm256_loadu_ps(cache + half + i);
            _mm256_storeu_ps(y + i,        _mm256_sub_ps(_mm256_mul_ps(a, cs), _mm256_mul_ps(b, sn)));
            _mm256_storeu_ps(y + i + half, _mm256_add_ps(_mm256_mul_ps(a, sn), _mm256_mul_ps(b, cs)));
        }
        return 2 * i;
    }
    int i = 0;
    for (; i + 8 <= nd; i += 8) {
        // pairs (a,b) with (cos,sin): even lanes a*cos - b*sin, odd lanes b*cos + a*sin
        const __m256 v  = _mm256_loadu_ps(x + i);
        const __m256 cz = _mm256_loadu_ps(cache + i);
        const __m256 cc = _mm256_moveldup_ps(cz);
        const __m256 ss = _mm256_movehdup_ps(cz);
        const __m256 vs = _mm256_permute_ps(v, 0xB1);
        _mm256_storeu_ps(y + i, _mm256_addsub_ps(_mm256_mul_ps(v, cc), _mm256_mul_ps(vs, ss)));
    }
    return i;
}

LM_TARGET_AVX2 static int rope_row_f16_avx2(const struct rope_cfg * c, const float * cache, const lm_ggml_fp16_t * x, lm_ggml_fp16_t * y) {
    const int nd = c->n_dims, half = nd / 2;
    if (c->neox) {
        int i = 0;
        for (; i + 8 <= half; i += 8) {
            const __m256 a  = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
            const __m256 b  = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i + half)));
            const __m256 cs = _mm256_loadu_ps(cache + i), sn = _mm256_loadu_ps(cache + half + i);
            const __m256 r0 = _mm256_sub_ps(_mm256_mul_ps(a, cs), _mm256_mul_ps(b, sn));
            const __m256 r1 = _mm256_add_ps(_mm256_mul_ps(a, sn), _mm256_mul_ps(b, cs));
            _mm_storeu_si128((__m128i *)(y + i),        _mm256_cvtps_ph(r0, _MM_FROUND_TO_NEAREST_INT));
            _mm_storeu_si128((__m128i *)(y + i + half), _mm256_cvtps_ph(r1, _MM_FROUND_TO_NEAREST_INT));
        }
        return 2 * i;
    }
    int i = 0;
    for (; i + 8 <= nd; i += 8) {
        const __m256 v  = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
        const __m256 cz = _mm256_loadu_ps(cache + i);
        const __m256 r  = _mm256_addsub_ps(_mm256_mul_ps(v, _mm256_moveldup_ps(cz)),
                                           _mm256_mul_ps(_mm256_permute_ps(v, 0xB1), _mm256_movehdup_ps(cz)));
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}
#endif

static void rope_compute(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst, bool forward) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const struct lm_ggml_tensor * src2 = dst->src[2];
    LM_GGML_TENSOR_UNARY_OP_LOCALS

    struct rope_cfg c;
    c.n_dims = lm_ggml_get_op_params_i32(dst, 1);
    const int mode       = lm_ggml_get_op_params_i32(dst, 2);
    const int n_ctx_orig = lm_ggml_get_op_params_i32(dst, 4);
    const float freq_base = lm_ggml_get_op_params_f32(dst, 5);
    c.freq_scale  = lm_ggml_get_op_params_f32(dst, 6);
    c.ext_factor  = lm_ggml_get_op_params_f32(dst, 7);
    c.attn_factor = lm_ggml_get_op_params_f32(dst, 8);
    const float beta_fast = lm_ggml_get_op_params_f32(dst, 9);
    const float beta_slow = lm_ggml_get_op_params_f32(dst, 10);
    lm_ggml_rope_yarn_corr_dims(c.n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow, c.corr);
    c.theta_scale = powf(freq_base, -2.0f / c.n_dims);
    c.neox = (mode & LM_GGML_ROPE_TYPE_NEOX) != 0;
    c.sin_sign = forward ? 1.0f : -1.0f;
    c.ff = src2 ? (const float *) src2->data : NULL;

    const int32_t * pos = (const int32_t *) src1->data;
    float * cache = (float *) params->wdata + (size_t) params->ith * (size_t)(c.n_dims + 16);
    const bool is_f16 = src0->type == LM_GGML_TYPE_F16;
    const size_t ts = lm_ggml_type_size(src0->type);
#if defined(LM_X86)
    const bool simd = nn_avx2();
#endif

    int64_t ir0, ir1;
    lm_ggml_thread_range(ne1 * ne2 * ne3, params->ith, params->nth, &ir0, &ir1);

    for (int64_t i3 = 0; i3 < ne3; i3++) {
        for (int64_t i2 = 0; i2 < ne2; i2++) {
            const int64_t rbase = (i3 * ne2 + i2) * ne1;
            const int64_t r0 = LM_GGML_MAX(ir0, rbase), r1 = LM_GGML_MIN(ir1, rbase + ne1);
            if (r0 >= r1) continue;
            rope_fill_cache(&c, (float) pos[i2], cache);
            for (int64_t i1 = r0 - rbase; i1 < r1 - rbase; i1++) {
                const char * xs = (const char *) src0->data + i1*nb01 + i2*nb02 + i3*nb03;
                char       * ys = (char *) dst->data + i1*nb1 + i2*nb2 + i3*nb3;
                int done = 0;
                if (is_f16) {
#if defined(LM_X86)
                    if (simd) done = rope_row_f16_avx2(&c, cache, (const lm_ggml_fp16_t *) xs, (lm_ggml_fp16_t *) ys);
#endif
                    rope_row_f16_s(&c, cache, (const lm_ggml_fp16_t *) xs, (lm_ggml_fp16_t *) ys, done);
                } else {
#if defined(LM_X86)
                    if (simd) done = rope_row_f32_avx2(&c, cache, (const float *) xs, (float *) ys);
#endif
                    rope_row_f32_s(&c, cache, (const float *) xs, (float *) ys, done);
                }
                if (xs != ys && ne0 > c.n_dims) {
                    for (int64_t i0 = c.n_dims; i0 < ne0; i0++) {
                        memcpy(ys + i0*nb0, xs + i0*nb00, ts);
                    }
                }
            }
        }
    }
}

static void lm_compute_rope(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) { rope_compute(params, dst, true); }
static void lm_compute_rope_back(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) { rope_compute(params, dst, false); }

static size_t lm_wsize_rope(const struct lm_ggml_tensor * node, int n_threads) {
    return sizeof(float) * (size_t)(lm_ggml_get_op_params_i32(node, 1) + 16) * (size_t) n_threads;
}

// ================================================================ SAM windowing

static void lm_compute_win_part(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    LM_GGML_TENSOR_UNARY_OP_LOCALS
    const int npx = lm_ggml_get_op_params_i32(dst, 0);
    const int w   = lm_ggml_get_op_params_i32(dst, 2);
    // one row of w elements (ne0 floats each) per (window, i2)
    int64_t r0, r1;
    lm_ggml_thread_range(ne3 * ne2, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i3 = r / ne2, i2 = r % ne2;
        const int64_t wy = i3 / npx, wx = i3 % npx;
        const int64_t sy = wy * w + i2;
        for (int64_t i1 = 0; i1 < ne1; i1++) {
            const int64_t sx = wx * w + i1;
            float * y = (float *)((char *) dst->data + i1*nb1 + i2*nb2 + i3*nb3);
            if (sy >= ne02 || sx >= ne01) {
                for (int64_t i0 = 0; i0 < ne0; i0++) y[i0] = 0.0f;
                continue;
            }
            const char * x = (const char *) src0->data + sx*nb01 + sy*nb02;
            for (int64_t i0 = 0; i0 < ne0; i0++) y[i0] = *(const float *)(x + i0*nb00);
        }
    }
}

static void lm_compute_win_unpart(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    LM_GGML_TENSOR_UNARY_OP_LOCALS
    const int w = lm_ggml_get_op_params_i32(dst, 0);
    const int64_t npx = (ne1 + w - 1) / w;
    int64_t r0, r1;
    lm_ggml_thread_range(ne2 * ne1, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i2 = r / ne1, i1 = r % ne1;
        const int64_t win = (i2 / w) * npx + (i1 / w);
        const char * x = (const char *) src0->data + (i1 % w)*nb01 + (i2 % w)*nb02 + win*nb03;
        float * y = (float *)((char *) dst->data + i1*nb1 + i2*nb2);
        for (int64_t i0 = 0; i0 < ne0; i0++) y[i0] = *(const float *)(x + i0*nb00);
    }
}

// dst[q][k] = a[(kh - 1 - k) + q]: a 2-byte copy (bf16 bits are copied as is, as in ggml)
static void lm_compute_get_rel_pos(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    LM_GGML_TENSOR_UNARY_OP_LOCALS
    int64_t r0, r1;
    lm_ggml_thread_range(ne2 * ne1, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i2 = r / ne1, i1 = r % ne1;
        const int64_t p = (ne1 - i1 - 1) + i2;
        const char * x = (const char *) src0->data + p*nb01;
        char * y = (char *) dst->data + i1*nb1 + i2*nb2;
        for (int64_t i0 = 0; i0 < ne0; i0++) memcpy(y + i0*nb0, x + i0*nb00, 2);
    }
}

// a: attention [K*K, Q, B] viewed per batch b as a [q][kh][kw] block (q = (qh, qw));
// adds ph[b][q][kh] along kw and pw[b][q][kw] along kh (decomposed relative
// positions of SAM). Every batch plane is independent, so threads split planes
// and copy their own plane first when not in place.
static void lm_compute_add_rel_pos(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * pw   = dst->src[1];
    const struct lm_ggml_tensor * ph   = dst->src[2];
    const bool inplace = lm_ggml_get_op_params_i32(dst, 0) != 0;
    const int64_t K = pw->ne[0], n1 = pw->ne[1], n2 = pw->ne[2], np = pw->ne[3];
    const int64_t plane = src0->ne[0] * src0->ne[1];
    const float * w_data = (const float *) pw->data;
    const float * h_data = (const float *) ph->data;
    float * y = (float *) dst->data;

    // planes beyond np (a->ne[3] > 1) are only copied, as in ggml
    const int64_t n_planes = lm_ggml_nelements(src0) / plane;
    int64_t p0, p1;
    lm_ggml_thread_range(n_planes, params->ith, params->nth, &p0, &p1);
    for (int64_t ip = p0; ip < p1; ip++) {
        if (!inplace && dst->data != src0->data) {
            memcpy(y + ip*plane, (const float *) src0->data + ip*plane, (size_t) plane * sizeof(float));
        }
        if (ip >= np) continue;
        for (int64_t i2 = 0; i2 < n2; i2++) {
            for (int64_t i1 = 0; i1 < n1; i1++) {
                const int64_t q = (ip*n2 + i2)*n1 + i1; // row of pw/ph
                float * blk = y + q*K*K;                // [kh][kw] block of this query
                for (int64_t k = 0; k < K; k++) {
                    const float vh = h_data[q*K + k];
                    const float vw = w_data[q*K + k];
                    for (int64_t j = 0; j < K; j++) {
                        blk[k*K + j] += vh; // row kh = k
                        blk[j*K + k] += vw; // column kw = k
                    }
                }
            }
        }
    }
}

// ================================================================ descriptors

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_rope        = { .compute = lm_compute_rope, .work_size = lm_wsize_rope };
const struct lm_cpu_op lm_cpu_op_rope_back   = { .compute = lm_compute_rope_back, .work_size = lm_wsize_rope };
const struct lm_cpu_op lm_cpu_op_win_part    = { .compute = lm_compute_win_part };
const struct lm_cpu_op lm_cpu_op_win_unpart  = { .compute = lm_compute_win_unpart };
const struct lm_cpu_op lm_cpu_op_get_rel_pos = { .compute = lm_compute_get_rel_pos };
const struct lm_cpu_op lm_cpu_op_add_rel_pos = { .compute = lm_compute_add_rel_pos };
