// ops-attn.c - CPU kernels of fused attention: flash_attn_ext (online-softmax
// attention over the KV rows, one query row at a time). The constructors are
// in graph/ctor-attn.c; see ggml-cpu-impl.h for the kernel contract.
//
// op_params of FLASH_ATTN_EXT: f32 [0] scale, [1] max_bias, [2] logit_softcap; i32 [3] prec
#include "ggml-cpu-impl.h"

#if defined(LM_X86)
#include <immintrin.h>
#endif

// ---------------------------------------------------------------- row primitives

// The K and V rows FA_PF positions ahead are asked for while a row is
// summed. In a KV cache each position's rows of a head are a few lines
// apart from the next position's (a row of all the heads between them),
// which the hardware prefetchers do not follow: without this, decoding
// waits on memory for every position.
#define FA_PF 8
static inline void fa_prefetch(const char * k, size_t kbytes, const char * v, size_t vbytes) {
    for (size_t o = 0; o < kbytes; o += 64) __builtin_prefetch(k + o);
    for (size_t o = 0; o < vbytes; o += 64) __builtin_prefetch(v + o);
}

static float fa_dot_f32_s(int64_t n, const void * k, const float * q) {
    const float * x = (const float *) k;
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += x[i] * q[i];
    return s;
}
static float fa_dot_f16_s(int64_t n, const void * k, const float * q) {
    const lm_ggml_fp16_t * x = (const lm_ggml_fp16_t *) k;
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += lm_ggml_table_f32_f16[x[i]] * q[i];
    return s;
}
static void fa_mad_f32_s(int64_t n, float * acc, const void * v, float w) {
    const float * x = (const float *) v;
    for (int64_t i = 0; i < n; i++) acc[i] += x[i] * w;
}
static void fa_mad_f16_s(int64_t n, float * acc, const void * v, float w) {
    const lm_ggml_fp16_t * x = (const lm_ggml_fp16_t *) v;
    for (int64_t i = 0; i < n; i++) acc[i] += lm_ggml_table_f32_f16[x[i]] * w;
}
static void fa_scale_s(int64_t n, float * acc, float w) {
    for (int64_t i = 0; i < n; i++) acc[i] *= w;
}

#if defined(LM_X86)
LM_TARGET_AVX2 static inline float fa_hsum256(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
}
LM_TARGET_AVX2 static float fa_dot_f32_avx2(int64_t n, const void * k, const float * q) {
    const float * x = (const float *) k;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i +  0), _mm256_loadu_ps(q + i +  0), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i +  8), _mm256_loadu_ps(q + i +  8), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(q + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(q + i + 24), a3);
    }
    for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(q + i), a0);
    float s = fa_hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; i < n; i++) s += x[i] * q[i];
    return s;
}
LM_TARGET_AVX2 static float fa_dot_f16_avx2(int64_t n, const void * k, const float * q) {
    const lm_ggml_fp16_t * x = (const lm_ggml_fp16_t *) k;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int64_t i = 0;
#define FA_H(off) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i + (off))))
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(FA_H(0),  _mm256_loadu_ps(q + i +  0), a0);
        a1 = _mm256_fmadd_ps(FA_H(8),  _mm256_loadu_ps(q + i +  8), a1);
        a2 = _mm256_fmadd_ps(FA_H(16), _mm256_loadu_ps(q + i + 16), a2);
        a3 = _mm256_fmadd_ps(FA_H(24), _mm256_loadu_ps(q + i + 24), a3);
    }
    for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(FA_H(0), _mm256_loadu_ps(q + i), a0);
#undef FA_H
    float s = fa_hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; i < n; i++) s += lm_ggml_table_f32_f16[x[i]] * q[i];
    return s;
}
LM_TARGET_AVX2 static void fa_mad_f32_avx2(int64_t n, float * acc, const void * v, float w) {
    const float * x = (const float *) v;
    const __m256 vw = _mm256_set1_ps(w);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), vw, _mm256_loadu_ps(acc + i)));
    for (; i < n; i++) acc[i] += x[i] * w;
}
LM_TARGET_AVX2 static void fa_mad_f16_avx2(int64_t n, float * acc, const void * v, float w) {
    const lm_ggml_fp16_t * x = (const lm_ggml_fp16_t *) v;
    const __m256 vw = _mm256_set1_ps(w);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
        _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(xv, vw, _mm256_loadu_ps(acc + i)));
    }
    for (; i < n; i++) acc[i] += lm_ggml_table_f32_f16[x[i]] * w;
}
LM_TARGET_AVX2 static void fa_scale_avx2(int64_t n, float * acc, float w) {
    const __m256 vw = _mm256_set1_ps(w);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(acc + i, _mm256_mul_ps(_mm256_loadu_ps(acc + i), vw));
    for (; i < n; i++) acc[i] *= w;
}
#endif

typedef float (*fa_dot_t)  (int64_t n, const void * k, const float * q);
typedef void  (*fa_mad_t)  (int64_t n, float * acc, const void * v, float w);
typedef void  (*fa_scale_t)(int64_t n, float * acc, float w);

#if defined(LM_X86)
// Four query rows that share their K/V head (consecutive tokens of one head,
// or heads of one GQA group in decoding): every K and V row is loaded and converted once for all four, which halves
// the memory traffic of prefill.
struct fa_blk4 {
    int64_t DK, DV, n_kv;
    const float * q[4];
    const lm_ggml_fp16_t * m[4];  // mask rows or NULL
    const char * kbase, * vbase;
    size_t kstride, vstride;
    size_t kbytes, vbytes;        // a row's bytes
    bool k16, v16;
    float scale, softcap;
    float slope[4];
    float * acc;                  // 4*DV scratch
    float * out[4];
};

// Two accumulators per row (16 elements a step) so that eight independent FMA
// chains hide the FMA latency.
LM_TARGET_AVX2 static void fa_dot4_avx2(int64_t n, const void * k, bool k16, const float * const * q, float * s) {
    __m256 a[8];
    for (int r = 0; r < 8; r++) a[r] = _mm256_setzero_ps();
    int64_t i = 0;
#define FA_D4(kv, off)                                                              \
    a[0 + (off)] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q[0] + i + 8*(off)), a[0 + (off)]); \
    a[2 + (off)] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q[1] + i + 8*(off)), a[2 + (off)]); \
    a[4 + (off)] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q[2] + i + 8*(off)), a[4 + (off)]); \
    a[6 + (off)] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q[3] + i + 8*(off)), a[6 + (off)]);
    if (k16) {
        const lm_ggml_fp16_t * x = (const lm_ggml_fp16_t *) k;
        for (; i + 16 <= n; i += 16) {
            const __m256 k0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
            const __m256 k1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i + 8)));
            FA_D4(k0, 0)
            FA_D4(k1, 1)
        }
        for (; i + 8 <= n; i += 8) {
            const __m256 k0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
            FA_D4(k0, 0)
        }
    } else {
        const float * x = (const float *) k;
        for (; i + 16 <= n; i += 16) {
            const __m256 k0 = _mm256_loadu_ps(x + i), k1 = _mm256_loadu_ps(x + i + 8);
            FA_D4(k0, 0)
            FA_D4(k1, 1)
        }
        for (; i + 8 <= n; i += 8) {
            const __m256 k0 = _mm256_loadu_ps(x + i);
            FA_D4(k0, 0)
        }
    }
#undef FA_D4
    for (int r = 0; r < 4; r++) s[r] = fa_hsum256(_mm256_add_ps(a[2*r], a[2*r + 1]));
    for (; i < n; i++) {
        const float kv = k16 ? lm_ggml_table_f32_f16[((const lm_ggml_fp16_t *) k)[i]] : ((const float *) k)[i];
        for (int r = 0; r < 4; r++) s[r] += kv * q[r][i];
    }
}

LM_TARGET_AVX2 static void fa_mad4_avx2(int64_t n, float * acc, int64_t stride, const void * v, bool v16, const float * w) {
    const __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(w[1]), w2 = _mm256_set1_ps(w[2]), w3 = _mm256_set1_ps(w[3]);
    float * c0 = acc, * c1 = acc + stride, * c2 = acc + 2*stride, * c3 = acc + 3*stride;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 vv = v16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const lm_ggml_fp16_t *) v + i)))
                              : _mm256_loadu_ps((const float *) v + i);
        _mm256_storeu_ps(c0 + i, _mm256_fmadd_ps(vv, w0, _mm256_loadu_ps(c0 + i)));
        _mm256_storeu_ps(c1 + i, _mm256_fmadd_ps(vv, w1, _mm256_loadu_ps(c1 + i)));
        _mm256_storeu_ps(c2 + i, _mm256_fmadd_ps(vv, w2, _mm256_loadu_ps(c2 + i)));
        _mm256_storeu_ps(c3 + i, _mm256_fmadd_ps(vv, w3, _mm256_loadu_ps(c3 + i)));
    }
    for (; i < n; i++) {
        const float vv = v16 ? lm_ggml_table_f32_f16[((const lm_ggml_fp16_t *) v)[i]] : ((const float *) v)[i];
        c0[i] += vv * w[0]; c1[i] += vv * w[1]; c2[i] += vv * w[2]; c3[i] += vv * w[3];
    }
}

LM_TARGET_AVX2 static void fa_block4_avx2(const struct fa_blk4 * b) {
    const int64_t DV = b->DV;
    float M[4] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
    float S[4] = { 0, 0, 0, 0 };
    for (int64_t d = 0; d < 4*DV; d++) b->acc[d] = 0.0f;
    const fa_mad_t mad1 = b->v16 ? fa_mad_f16_avx2 : fa_mad_f32_avx2;

    for (int64_t ic = 0; ic < b->n_kv; ic++) {
        if (ic + FA_PF < b->n_kv) {
            fa_prefetch(b->kbase + (ic + FA_PF)*b->kstride, b->kbytes, b->vbase + (ic + FA_PF)*b->vstride, b->vbytes);
        }
        float mv[4];
        int n_live = 0;
        for (int r = 0; r < 4; r++) {
            mv[r] = b->m[r] ? b->slope[r] * lm_ggml_table_f32_f16[b->m[r][ic]] : 0.0f;
            n_live += mv[r] != -INFINITY;
        }
        if (n_live == 0) continue;
        float s[4];
        fa_dot4_avx2(b->DK, b->kbase + ic*b->kstride, b->k16, b->q, s);
        float w[4];
        for (int r = 0; r < 4; r++) {
            if (mv[r] == -INFINITY) { w[r] = 0.0f; continue; }
            float x = s[r] * b->scale;
            if (b->softcap != 0.0f) x = b->softcap * tanhf(x);
            x += mv[r];
            float ms = 1.0f, vs = 1.0f;
            if (x > M[r]) {
                const float Mold = M[r];
                M[r] = x;
                if (Mold != -INFINITY) { ms = expf(Mold - x); fa_scale_avx2(DV, b->acc + r*DV, ms); }
                else                   { ms = 0.0f; }
            } else {
                vs = expf(x - M[r]);
            }
            S[r] = S[r]*ms + vs;
            w[r] = vs;
        }
        const char * vr = b->vbase + ic*b->vstride;
        if (n_live == 4) {
            fa_mad4_avx2(DV, b->acc, DV, vr, b->v16, w);
        } else {
            // masked rows must not touch V: it may hold garbage (e.g. unused cache slots)
            for (int r = 0; r < 4; r++) if (mv[r] != -INFINITY) mad1(DV, b->acc + r*DV, vr, w[r]);
        }
    }
    for (int r = 0; r < 4; r++) {
        const float S_inv = 1.0f / S[r];
        for (int64_t d = 0; d < DV; d++) b->out[r][d] = b->acc[r*DV + d] * S_inv;
    }
}
#endif

// ---------------------------------------------------------------- kernel

// Per-thread scratch, in floats: converted K row (DK), converted V row (DV),
// accumulators of up to four rows (4*DV), plus padding so threads do not share cache lines.
static size_t fa_scratch_floats(const struct lm_ggml_tensor * node) {
    return (size_t)(node->src[1]->ne[0] + 5 * node->src[2]->ne[0] + 32);
}

static size_t lm_wsize_flash_attn_ext(const struct lm_ggml_tensor * node, int n_threads) {
    return sizeof(float) * fa_scratch_floats(node) * (size_t) n_threads;
}

// Everything the kernel needs about query row ir (rows ordered token, head, batch).
struct fa_rows {
    const struct lm_ggml_tensor * q, * k, * v, * mask, * dst;
    int64_t nq1, nq2, rk2, rk3, rv2, rv3;
    float max_bias, m0, m1;
    uint32_t n_head_log2;
};
struct fa_row {
    const float * q;
    const lm_ggml_fp16_t * m;
    const char * kbase, * vbase;
    float * out;
    float slope;
};

static void fa_row_get(const struct fa_rows * f, int64_t ir, struct fa_row * r) {
    const int64_t iq3 = ir / (f->nq2 * f->nq1);
    const int64_t iq2 = (ir / f->nq1) % f->nq2;
    const int64_t iq1 = ir % f->nq1;
    // ALiBi slopes: geometric per head, with a second interleaved series past the largest power of two
    const uint32_t h = (uint32_t) iq2;
    r->slope = f->max_bias > 0.0f
        ? (h < f->n_head_log2 ? powf(f->m0, (float)(h + 1)) : powf(f->m1, (float)(2*(h - f->n_head_log2) + 1)))
        : 1.0f;
    r->q = (const float *)((const char *) f->q->data + iq1*f->q->nb[1] + iq2*f->q->nb[2] + iq3*f->q->nb[3]);
    r->m = f->mask ? (const lm_ggml_fp16_t *)((const char *) f->mask->data + iq1*f->mask->nb[1]) : NULL;
    r->kbase = (const char *) f->k->data + (iq2 / f->rk2)*f->k->nb[2] + (iq3 / f->rk3)*f->k->nb[3];
    r->vbase = (const char *) f->v->data + (iq2 / f->rv2)*f->v->nb[2] + (iq3 / f->rv3)*f->v->nb[3];
    // the result is permuted: [DV, head, token, batch]
    r->out = (float *)((char *) f->dst->data + iq2*f->dst->nb[1] + iq1*f->dst->nb[2] + iq3*f->dst->nb[3]);
}

static void lm_compute_flash_attn_ext(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * q    = dst->src[0];
    const struct lm_ggml_tensor * k    = dst->src[1];
    const struct lm_ggml_tensor * v    = dst->src[2];
    const struct lm_ggml_tensor * mask = dst->src[3];
    const int64_t DK = k->ne[0], DV = v->ne[0], n_kv = k->ne[1];
    const int64_t nq1 = q->ne[1], nq2 = q->ne[2], nq3 = q->ne[3];

    float scale = lm_ggml_get_op_params_f32(dst, 0);
    const float max_bias = lm_ggml_get_op_params_f32(dst, 1);
    const float softcap  = lm_ggml_get_op_params_f32(dst, 2);
    if (softcap != 0.0f) scale /= softcap;

    const uint32_t n_head = (uint32_t) nq2;
    const uint32_t n_head_log2 = 1u << (uint32_t) floor(log2((double) n_head));
    const float m0 = powf(2.0f, -(max_bias) / n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / n_head_log2);

    const int64_t rk2 = nq2 / k->ne[2], rk3 = nq3 / k->ne[3];
    const int64_t rv2 = nq2 / v->ne[2], rv3 = nq3 / v->ne[3];

    fa_dot_t dot = fa_dot_f32_s;
    fa_mad_t mad = fa_mad_f32_s;
    fa_scale_t scl = fa_scale_s;
    bool k_direct = k->type == LM_GGML_TYPE_F32 || k->type == LM_GGML_TYPE_F16;
    bool v_direct = v->type == LM_GGML_TYPE_F32 || v->type == LM_GGML_TYPE_F16;
    const bool k16 = k->type == LM_GGML_TYPE_F16, v16 = v->type == LM_GGML_TYPE_F16;
#if defined(LM_X86)
    const enum lm_cpu_level lvl = lm_cpu_level();
    const bool avx2 = lvl == LM_CPU_LEVEL_AVX2 || lvl == LM_CPU_LEVEL_AVX512;
    if (avx2) {
        dot = k16 ? fa_dot_f16_avx2 : fa_dot_f32_avx2;
        mad = v16 ? fa_mad_f16_avx2 : fa_mad_f32_avx2;
        scl = fa_scale_avx2;
    } else
#endif
    {
        dot = k16 ? fa_dot_f16_s : fa_dot_f32_s;
        mad = v16 ? fa_mad_f16_s : fa_mad_f32_s;
    }
    // converted rows are f32
    fa_dot_t dot_conv = dot;
    fa_mad_t mad_conv = mad;
    if (!k_direct) {
#if defined(LM_X86)
        dot_conv = avx2 ? fa_dot_f32_avx2 : fa_dot_f32_s;
#else
        dot_conv = fa_dot_f32_s;
#endif
    }
    if (!v_direct) {
#if defined(LM_X86)
        mad_conv = avx2 ? fa_mad_f32_avx2 : fa_mad_f32_s;
#else
        mad_conv = fa_mad_f32_s;
#endif
    }
    const lm_ggml_to_float_t k_to_f32 = k_direct ? NULL : lm_ggml_get_type_traits(k->type)->to_float;
    const lm_ggml_to_float_t v_to_f32 = v_direct ? NULL : lm_ggml_get_type_traits(v->type)->to_float;

    const size_t krow = lm_ggml_row_size(k->type, DK), vrow = lm_ggml_row_size(v->type, DV);
    const struct fa_rows fr = { q, k, v, mask, dst, nq1, nq2, rk2, rk3, rv2, rv3, max_bias, m0, m1, n_head_log2 };

    float * kbuf = (float *) params->wdata + (size_t) params->ith * fa_scratch_floats(dst);
    float * vbuf = kbuf + DK;
    float * acc  = vbuf + DV;

    int64_t ir0, ir1;
    lm_ggml_thread_range(nq1 * nq2 * nq3, params->ith, params->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        struct fa_row r0;
        fa_row_get(&fr, ir, &r0);
        const float slope = r0.slope;
        const float * qr = r0.q;
        const lm_ggml_fp16_t * mr = r0.m;
        const char * kbase = r0.kbase;
        const char * vbase = r0.vbase;

#if defined(LM_X86)
        if (avx2 && k_direct && v_direct && ir + 4 <= ir1) {
            // the next three rows must read the same K/V head
            struct fa_row rr[4];
            rr[0] = r0;
            int same = 1;
            for (int r = 1; r < 4; r++) {
                fa_row_get(&fr, ir + r, &rr[r]);
                same += rr[r].kbase == kbase && rr[r].vbase == vbase;
            }
            if (same == 4) {
                struct fa_blk4 b;
                b.DK = DK; b.DV = DV; b.n_kv = n_kv;
                for (int r = 0; r < 4; r++) {
                    b.q[r] = rr[r].q; b.m[r] = rr[r].m; b.out[r] = rr[r].out; b.slope[r] = rr[r].slope;
                }
                b.kbase = kbase; b.vbase = vbase;
                b.kstride = k->nb[1]; b.vstride = v->nb[1];
                b.kbytes = krow; b.vbytes = vrow;
                b.k16 = k16; b.v16 = v16;
                b.scale = scale; b.softcap = softcap;
                b.acc = acc;
                fa_block4_avx2(&b);
                ir += 3;
                continue;
            }
        }
#endif

        for (int64_t d = 0; d < DV; d++) acc[d] = 0.0f;
        float S = 0.0f;       // running sum of exp(s - M)
        float M = -INFINITY;  // running maximum

        for (int64_t ic = 0; ic < n_kv; ic++) {
            if (ic + FA_PF < n_kv) fa_prefetch(kbase + (ic + FA_PF)*k->nb[1], krow, vbase + (ic + FA_PF)*v->nb[1], vrow);
            const float mv = mr ? slope * lm_ggml_table_f32_f16[mr[ic]] : 0.0f;
            if (mv == -INFINITY) continue;

            const char * kr = kbase + ic*k->nb[1];
            float s;
            if (k_to_f32) { k_to_f32(kr, kbuf, DK); s = dot_conv(DK, kbuf, qr); }
            else          { s = dot(DK, kr, qr); }
            s *= scale;
            if (softcap != 0.0f) s = softcap * tanhf(s);
            s += mv;

            float ms = 1.0f; // rescale of the old accumulator when the maximum grows
            float vs = 1.0f; // weight of this row: exp(s - M)
            if (s > M) {
                const float Mold = M;
                M = s;
                if (Mold != -INFINITY) {
                    ms = expf(Mold - M);
                    scl(DV, acc, ms);
                } else {
                    ms = 0.0f; // acc and S are still zero
                }
            } else {
                vs = expf(s - M);
            }

            const char * vr = vbase + ic*v->nb[1];
            if (v_to_f32) { v_to_f32(vr, vbuf, DV); mad_conv(DV, acc, vbuf, vs); }
            else          { mad(DV, acc, vr, vs); }
            S = S*ms + vs;
        }

        // as in ggml, a fully masked row gives 0 * inf = NaN
        const float S_inv = 1.0f / S;
        for (int64_t d = 0; d < DV; d++) r0.out[d] = acc[d] * S_inv;
    }
}

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_flash_attn_ext = { .compute = lm_compute_flash_attn_ext, .work_size = lm_wsize_flash_attn_ext };
