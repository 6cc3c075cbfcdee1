// quantize-x86.c - AVX2 versions of the weight quantizers of ggml-quants.c:
// the legacy reference quantizers (q4_0, q4_1, q5_0, q5_1) and the scale
// searches of the K-quants (make_qkx_quants_lanes, make_qx_quants_lanes).
//
// Every function gives the bits of its scalar counterpart: the same float
// operations per element in the same order (sums over a group stay in index
// order; a vector lane holds one group, never a part of one), and no fused
// multiply-add: the pragma keeps the compiler from contracting the mul/add
// intrinsics, which GCC lowers to plain vector arithmetic.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "quantize-simd.h"
#include "../base/ggml-impl.h"
#include "../base/ggml-simd.h"

#if defined(LM_X86)
#include <float.h>
#include <immintrin.h>
#include <string.h>

// ---------------------------------------------------------------- helpers

LM_TARGET_AVX2 static inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

LM_TARGET_AVX2 static inline float hmax_ps(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}

LM_TARGET_AVX2 static inline float hmin_ps(__m256 v) {
    __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_min_ss(s, _mm_movehdup_ps(s)));
}

// x[j] for the least j with x[j] == t (as floats: -0 == +0); t itself if none.
LM_TARGET_AVX2 static inline float first_equal32(const float * x, const __m256 * v, float t, bool magnitude) {
    const __m256 tv = _mm256_set1_ps(t);
    for (int k = 0; k < 4; ++k) {
        const int hit = _mm256_movemask_ps(_mm256_cmp_ps(magnitude ? abs_ps(v[k]) : v[k], tv, _CMP_EQ_OQ));
        if (hit) return x[8 * k + __builtin_ctz((unsigned) hit)];
    }
    return t;
}

// The scalar signed_absmax of 32 values: the first value of the largest
// magnitude, +0 if all are zero. NaNs never win (max_ps returns its second
// operand when the first is NaN), as in the scalar compare.
LM_TARGET_AVX2 static inline float signed_absmax32(const float * x, const __m256 * v) {
    __m256 m = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) m = _mm256_max_ps(abs_ps(v[k]), m);
    const float amax = hmax_ps(m);
    return amax > 0 ? first_equal32(x, v, amax, true) : 0.0f;
}

// The scalar min_max of 32 values. The lane reductions may return either
// zero for a mix of -0 and +0; the scalar loop keeps the first one it saw.
LM_TARGET_AVX2 static inline void min_max32(const float * x, const __m256 * v, float * mn, float * mx) {
    __m256 lo = _mm256_set1_ps(FLT_MAX), hi = _mm256_set1_ps(-FLT_MAX);
    for (int k = 0; k < 4; ++k) {
        lo = _mm256_min_ps(v[k], lo);
        hi = _mm256_max_ps(v[k], hi);
    }
    float l = hmin_ps(lo), h = hmax_ps(hi);
    if (l == 0) l = first_equal32(x, v, l, false);
    if (h == 0) h = first_equal32(x, v, h, false);
    *mn = l;
    *mx = h;
}

// (int8_t) of a float, as the scalar code compiles it: truncate to int32
// (0x80000000 when out of range), keep the low byte, sign-extended.
LM_TARGET_AVX2 static inline __m256i trunc_i8(__m256 v) {
    return _mm256_srai_epi32(_mm256_slli_epi32(_mm256_cvttps_epi32(v), 24), 24);
}

// 16 bytes, byte j = low byte of (a[j] | b[j] << 4) for the int32 lanes of
// a = a0:a1 and b = b0:b1.
LM_TARGET_AVX2 static inline void store_nibbles(__m256i a0, __m256i a1, __m256i b0, __m256i b1, uint8_t * out) {
    const __m256i lo = _mm256_set1_epi32(0xFF);
    const __m256i c0 = _mm256_and_si256(_mm256_or_si256(a0, _mm256_slli_epi32(b0, 4)), lo);
    const __m256i c1 = _mm256_and_si256(_mm256_or_si256(a1, _mm256_slli_epi32(b1, 4)), lo);
    const __m256i p  = _mm256_permute4x64_epi64(_mm256_packus_epi32(c0, c1), 0xD8);
    _mm_storeu_si128((__m128i *) out, _mm_packus_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
}

// q5 packing: low nibbles of the 32 levels as store_nibbles, bit 4 of each
// level (byte) into qh, element j at bit j.
LM_TARGET_AVX2 static inline void store_q5(const __m256i * l, uint8_t * qs, uint8_t * qh) {
    const __m256i m4 = _mm256_set1_epi32(0x0F);
    store_nibbles(_mm256_and_si256(l[0], m4), _mm256_and_si256(l[1], m4), l[2], l[3], qs);
    uint32_t h = 0;
    for (int k = 0; k < 4; ++k) {
        h |= (uint32_t) _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(l[k], 27))) << 8 * k;
    }
    memcpy(qh, &h, sizeof(h));
}

LM_TARGET_AVX2 static inline void load32(const float * x, __m256 * v) {
    for (int k = 0; k < 4; ++k) v[k] = _mm256_loadu_ps(x + 8 * k);
}

// ---------------------------------------------------------------- legacy blocks

LM_TARGET_AVX2 void lm_quantize_row_q4_0_avx2(const float * x, block_q4_0 * y, int64_t nb) {
    const __m256i top = _mm256_set1_epi32(15);
    for (int64_t i = 0; i < nb; ++i, x += QK4_0) {
        __m256 v[4];
        load32(x, v);
        const float d  = signed_absmax32(x, v) / -8;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = LM_GGML_FP32_TO_FP16(d);
        const __m256 idv = _mm256_set1_ps(id), off = _mm256_set1_ps(8.5f);
        __m256i q[4];
        for (int k = 0; k < 4; ++k) q[k] = _mm256_min_epi32(trunc_i8(_mm256_add_ps(_mm256_mul_ps(v[k], idv), off)), top);
        store_nibbles(q[0], q[1], q[2], q[3], y[i].qs);
    }
}

LM_TARGET_AVX2 void lm_quantize_row_q4_1_avx2(const float * x, block_q4_1 * y, int64_t nb) {
    const __m256i top = _mm256_set1_epi32(15);
    for (int64_t i = 0; i < nb; ++i, x += QK4_1) {
        __m256 v[4];
        load32(x, v);
        float mn, mx;
        min_max32(x, v, &mn, &mx);
        const float d  = (mx - mn) / 15;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = LM_GGML_FP32_TO_FP16(d);
        y[i].m = LM_GGML_FP32_TO_FP16(mn);
        const __m256 idv = _mm256_set1_ps(id), mnv = _mm256_set1_ps(mn), off = _mm256_set1_ps(0.5f);
        __m256i q[4];
        for (int k = 0; k < 4; ++k) {
            q[k] = _mm256_min_epi32(trunc_i8(_mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v[k], mnv), idv), off)), top);
        }
        store_nibbles(q[0], q[1], q[2], q[3], y[i].qs);
    }
}

LM_TARGET_AVX2 void lm_quantize_row_q5_0_avx2(const float * x, block_q5_0 * y, int64_t nb) {
    const __m256i top = _mm256_set1_epi32(31);
    for (int64_t i = 0; i < nb; ++i, x += QK5_0) {
        __m256 v[4];
        load32(x, v);
        const float d  = signed_absmax32(x, v) / -16;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = LM_GGML_FP32_TO_FP16(d);
        const __m256 idv = _mm256_set1_ps(id), off = _mm256_set1_ps(16.5f);
        __m256i q[4];
        for (int k = 0; k < 4; ++k) q[k] = _mm256_min_epi32(trunc_i8(_mm256_add_ps(_mm256_mul_ps(v[k], idv), off)), top);
        store_q5(q, y[i].qs, y[i].qh);
    }
}

LM_TARGET_AVX2 void lm_quantize_row_q5_1_avx2(const float * x, block_q5_1 * y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += QK5_1) {
        __m256 v[4];
        load32(x, v);
        float mn, mx;
        min_max32(x, v, &mn, &mx);
        const float d  = (mx - mn) / 31;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = LM_GGML_FP32_TO_FP16(d);
        y[i].m = LM_GGML_FP32_TO_FP16(mn);
        const __m256 idv = _mm256_set1_ps(id), mnv = _mm256_set1_ps(mn), off = _mm256_set1_ps(0.5f);
        __m256i q[4];
        for (int k = 0; k < 4; ++k) {
            // (uint8_t) of the float: the low byte of the truncation
            q[k] = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v[k], mnv), idv), off));
        }
        store_q5(q, y[i].qs, y[i].qh);
    }
}

// ---------------------------------------------------------------- K-quant scale searches, eight groups per vector

enum { LANES = 8, MAXN = 32 };

// ggml's nearest_int (ties to even through the float adder, valid
// below 2^22), clamped to [lo, hi], as a float.
LM_TARGET_AVX2 static inline __m256 round_clamp(__m256 v, __m256i lo, __m256i hi) {
    const __m256i b = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12582912.f)));
    const __m256i i = _mm256_sub_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
    return _mm256_cvtepi32_ps(_mm256_min_epi32(_mm256_max_epi32(i, lo), hi));
}

// Element i of the nl (<= 8) groups of n values at x, one group per lane;
// lanes past nl repeat group 0 (computed, never stored).
LM_TARGET_AVX2 static inline __m256i group_offsets(int nl, int n) {
    int off[LANES];
    for (int l = 0; l < LANES; ++l) off[l] = l < nl ? l * n : 0;
    return _mm256_loadu_si256((const __m256i *) off);
}

// Levels (floats in lanes, element i of lane l in t[i]) + bias to bytes at
// L + l*n; lanes with zero set in keep get 0.
LM_TARGET_AVX2 static void store_levels(int nl, int n, const __m256 * t, int bias, __m256 keep, uint8_t * L) {
    int32_t buf[MAXN][LANES];
    const __m256i b = _mm256_set1_epi32(bias);
    const __m256i k = _mm256_castps_si256(keep);
    for (int i = 0; i < n; ++i) {
        _mm256_storeu_si256((__m256i *) buf[i], _mm256_and_si256(_mm256_add_epi32(_mm256_cvtps_epi32(t[i]), b), k));
    }
    for (int l = 0; l < nl; ++l) {
        for (int i = 0; i < n; ++i) L[l * n + i] = (uint8_t) buf[i][l];
    }
}

LM_TARGET_AVX2 static inline void store_lanes(int nl, __m256 v, float * out) {
    float buf[LANES];
    _mm256_storeu_ps(buf, v);
    memcpy(out, buf, sizeof(float) * (size_t) nl);
}

LM_TARGET_AVX2 static void qkx_batch(int nl, int n, int nmax, const float * x, const float * weights, uint8_t * L,
                                     float * mins, float * scales, float rmin, float rdelta, int nstep, bool use_mad) {
    __m256 xv[MAXN], wv[MAXN], Lt[MAXN], La[MAXN];
    const __m256i off = group_offsets(nl, n);
    int i = 0;
    do { // n >= 1
        xv[i] = _mm256_i32gather_ps(x + i, off, 4);
        wv[i] = weights ? _mm256_i32gather_ps(weights + i, off, 4) : _mm256_mul_ps(xv[i], xv[i]);
    } while (++i < n);
    const __m256 zero = _mm256_setzero_ps(), sign = _mm256_set1_ps(-0.0f);
    const __m256i lo = _mm256_setzero_si256(), hi = _mm256_set1_epi32(nmax);
    __m256 mn = xv[0], mx = xv[0], sw = wv[0], sx = _mm256_mul_ps(wv[0], xv[0]);
    for (int i = 1; i < n; ++i) {
        mn = _mm256_min_ps(xv[i], mn);
        mx = _mm256_max_ps(xv[i], mx);
        sw = _mm256_add_ps(sw, wv[i]);
        sx = _mm256_add_ps(_mm256_mul_ps(wv[i], xv[i]), sx);
    }
    mn = _mm256_blendv_ps(mn, zero, _mm256_cmp_ps(mn, zero, _CMP_GT_OQ));
    const __m256 mn0 = mn;
    const __m256 nmaxf = _mm256_set1_ps((float) nmax);
    __m256 isc  = _mm256_div_ps(nmaxf, _mm256_sub_ps(mx, mn));
    __m256 sc   = _mm256_div_ps(_mm256_set1_ps(1.0f), isc);
    __m256 best = zero;
    for (int i = 0; i < n; ++i) {
        const __m256 l = round_clamp(_mm256_mul_ps(isc, _mm256_sub_ps(xv[i], mn)), lo, hi);
        Lt[i] = l;
        __m256 diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(sc, l), mn), xv[i]);
        diff = use_mad ? _mm256_andnot_ps(sign, diff) : _mm256_mul_ps(diff, diff);
        best = _mm256_add_ps(_mm256_mul_ps(wv[i], diff), best);
    }
    for (int is = 0; nstep >= 1 && is <= nstep; ++is) {
        const float step = rdelta * (float) is + rmin;
        isc = _mm256_div_ps(_mm256_set1_ps(step + (float) nmax), _mm256_sub_ps(mx, mn));
        __m256 s_l = zero, s_l2 = zero, s_xl = zero;
        for (int i = 0; i < n; ++i) {
            const __m256 l = round_clamp(_mm256_mul_ps(isc, _mm256_sub_ps(xv[i], mn)), lo, hi);
            La[i] = l;
            const __m256 wl = _mm256_mul_ps(wv[i], l);
            s_l  = _mm256_add_ps(s_l, wl);
            s_l2 = _mm256_add_ps(_mm256_mul_ps(wl, l), s_l2);
            s_xl = _mm256_add_ps(_mm256_mul_ps(wl, xv[i]), s_xl);
        }
        const __m256 D  = _mm256_sub_ps(_mm256_mul_ps(sw, s_l2), _mm256_mul_ps(s_l, s_l));
        const __m256 ok = _mm256_cmp_ps(D, zero, _CMP_GT_OQ);
        __m256 ts = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sw, s_xl), _mm256_mul_ps(sx, s_l)), D);
        __m256 tm = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(s_l2, sx), _mm256_mul_ps(s_l, s_xl)), D);
        const __m256 pos = _mm256_cmp_ps(tm, zero, _CMP_GT_OQ);
        tm = _mm256_blendv_ps(tm, zero, pos);
        ts = _mm256_blendv_ps(ts, _mm256_div_ps(s_xl, s_l2), pos);
        __m256 mad = zero;
        for (int i = 0; i < n; ++i) {
            __m256 diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(ts, La[i]), tm), xv[i]);
            diff = use_mad ? _mm256_andnot_ps(sign, diff) : _mm256_mul_ps(diff, diff);
            mad = _mm256_add_ps(_mm256_mul_ps(wv[i], diff), mad);
        }
        const __m256 upd = _mm256_and_ps(ok, _mm256_cmp_ps(mad, best, _CMP_LT_OQ));
        if (_mm256_movemask_ps(upd)) {
            for (int i = 0; i < n; ++i) Lt[i] = _mm256_blendv_ps(Lt[i], La[i], upd);
            best = _mm256_blendv_ps(best, mad, upd);
            sc   = _mm256_blendv_ps(sc, ts, upd);
            mn   = _mm256_blendv_ps(mn, tm, upd);
        }
    }
    // a constant group (max == min) gets zero levels, zero scale, its own min
    const __m256 flat = _mm256_cmp_ps(mx, mn0, _CMP_NGT_UQ);
    store_levels(nl, n, Lt, 0, _mm256_xor_ps(flat, _mm256_castsi256_ps(_mm256_set1_epi32(-1))), L);
    store_lanes(nl, _mm256_xor_ps(_mm256_blendv_ps(mn, mn0, flat), sign), mins);
    store_lanes(nl, _mm256_blendv_ps(sc, zero, flat), scales);
}

void lm_qkx_lanes_avx2(int nl, int n, int nmax, const float * x, const float * weights, uint8_t * L,
                       float * mins, float * scales, float rmin, float rdelta, int nstep, bool use_mad) {
    for (int l0 = 0; l0 < nl; l0 += LANES) {
        const int m = nl - l0 < LANES ? nl - l0 : LANES;
        qkx_batch(m, n, nmax, x + l0 * n, weights ? weights + l0 * n : NULL, L + l0 * n, mins + l0, scales + l0,
                  rmin, rdelta, nstep, use_mad);
    }
}

LM_TARGET_AVX2 static void qx_batch(int nl, int n, int nmax, const float * x, const float * qw, int8_t * L, float * scales) {
    __m256 xv[MAXN], wv[MAXN], Lt[MAXN], La[MAXN];
    const __m256i off = group_offsets(nl, n);
    int i = 0;
    do { // n >= 1
        xv[i] = _mm256_i32gather_ps(x + i, off, 4);
        wv[i] = qw ? _mm256_i32gather_ps(qw + i, off, 4) : _mm256_mul_ps(xv[i], xv[i]);
    } while (++i < n);
    const __m256 zero = _mm256_setzero_ps();
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    // the first value of the largest magnitude
    __m256 amax = zero, mx = zero;
    for (int i = 0; i < n; ++i) {
        const __m256 a = abs_ps(xv[i]);
        const __m256 gt = _mm256_cmp_ps(a, amax, _CMP_GT_OQ);
        amax = _mm256_blendv_ps(amax, a, gt);
        mx   = _mm256_blendv_ps(mx, xv[i], gt);
    }
    __m256 isc = _mm256_div_ps(_mm256_set1_ps((float) -nmax), mx);
    __m256 slx = zero, sl2 = zero;
    for (int i = 0; i < n; ++i) {
        const __m256 l = round_clamp(_mm256_mul_ps(isc, xv[i]), lo, hi);
        Lt[i] = l;
        slx = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(wv[i], xv[i]), l), slx);
        sl2 = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(wv[i], l), l), sl2);
    }
    __m256 sc   = _mm256_and_ps(_mm256_cmp_ps(sl2, zero, _CMP_NEQ_UQ), _mm256_div_ps(slx, sl2));
    __m256 best = _mm256_mul_ps(sc, slx);
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        const float s = 0.1f * (float) is + (float) nmax;
        isc = _mm256_div_ps(_mm256_set1_ps(-s), mx);
        slx = sl2 = zero;
        for (int i = 0; i < n; ++i) {
            const __m256 l = round_clamp(_mm256_mul_ps(isc, xv[i]), lo, hi);
            La[i] = l;
            slx = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(wv[i], xv[i]), l), slx);
            sl2 = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(wv[i], l), l), sl2);
        }
        const __m256 upd = _mm256_and_ps(_mm256_cmp_ps(sl2, zero, _CMP_GT_OQ),
                                         _mm256_cmp_ps(_mm256_mul_ps(slx, slx), _mm256_mul_ps(best, sl2), _CMP_GT_OQ));
        if (_mm256_movemask_ps(upd)) {
            for (int i = 0; i < n; ++i) Lt[i] = _mm256_blendv_ps(Lt[i], La[i], upd);
            const __m256 nsc = _mm256_div_ps(slx, sl2);
            sc   = _mm256_blendv_ps(sc, nsc, upd);
            best = _mm256_blendv_ps(best, _mm256_mul_ps(nsc, slx), upd);
        }
    }
    // groups below the threshold get zero levels (not nmax) and a zero scale
    const __m256 live = _mm256_cmp_ps(amax, _mm256_set1_ps(1e-15f), _CMP_NLT_UQ);
    store_levels(nl, n, Lt, nmax, live, (uint8_t *) L);
    store_lanes(nl, _mm256_and_ps(live, sc), scales);
}

void lm_qx_lanes_avx2(int nl, int n, int nmax, const float * x, const float * qw, int8_t * L, float * scales) {
    for (int l0 = 0; l0 < nl; l0 += LANES) {
        const int m = nl - l0 < LANES ? nl - l0 : LANES;
        qx_batch(m, n, nmax, x + l0 * n, qw ? qw + l0 * n : NULL, L + l0 * n, scales + l0);
    }
}

LM_TARGET_AVX2 static void q3_batch(int nl, int n, int nmax, const float * x, int8_t * L, float * scales) {
    __m256 xv[MAXN], Lv[MAXN];
    const __m256i off = group_offsets(nl, n);
    int i = 0;
    do { // n >= 1
        xv[i] = _mm256_i32gather_ps(x + i, off, 4);
    } while (++i < n);
    const __m256 zero = _mm256_setzero_ps();
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    __m256 amax = zero, mx = zero;
    for (i = 0; i < n; ++i) {
        const __m256 a = abs_ps(xv[i]);
        const __m256 gt = _mm256_cmp_ps(a, amax, _CMP_GT_OQ);
        amax = _mm256_blendv_ps(amax, a, gt);
        mx   = _mm256_blendv_ps(mx, xv[i], gt);
    }
    const __m256 isc = _mm256_div_ps(_mm256_set1_ps((float) -nmax), mx);
    __m256 sumlx = zero, suml2 = zero;
    for (i = 0; i < n; ++i) {
        const __m256 l = round_clamp(_mm256_mul_ps(isc, xv[i]), lo, hi);
        const __m256 w = _mm256_mul_ps(xv[i], xv[i]);
        Lv[i] = l;
        sumlx = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(w, xv[i]), l), sumlx);
        suml2 = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(w, l), l), suml2);
    }
    // Coordinate descent, one element at a time per lane. A lane whose pass
    // changed nothing would break out of the scalar loop; running it through
    // the remaining passes changes nothing either, so all lanes go on while
    // any lane changed.
    for (int itry = 0; itry < 5; ++itry) {
        __m256 changed = zero;
        for (i = 0; i < n; ++i) {
            const __m256 w  = _mm256_mul_ps(xv[i], xv[i]);
            const __m256 wx = _mm256_mul_ps(w, xv[i]);
            __m256 slx = _mm256_sub_ps(sumlx, _mm256_mul_ps(wx, Lv[i]));
            const __m256 pos = _mm256_cmp_ps(slx, zero, _CMP_GT_OQ);
            if (!_mm256_movemask_ps(pos)) continue;
            __m256 sl2 = _mm256_sub_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, Lv[i]), Lv[i]));
            const __m256 nl_ = round_clamp(_mm256_div_ps(_mm256_mul_ps(xv[i], sl2), slx), lo, hi);
            const __m256 diff = _mm256_cmp_ps(nl_, Lv[i], _CMP_NEQ_OQ);
            slx = _mm256_add_ps(_mm256_mul_ps(wx, nl_), slx);
            sl2 = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(w, nl_), nl_), sl2);
            const __m256 better = _mm256_cmp_ps(_mm256_mul_ps(_mm256_mul_ps(slx, slx), suml2),
                                                _mm256_mul_ps(_mm256_mul_ps(sumlx, sumlx), sl2), _CMP_GT_OQ);
            const __m256 upd = _mm256_and_ps(_mm256_and_ps(pos, diff),
                                             _mm256_and_ps(_mm256_cmp_ps(sl2, zero, _CMP_GT_OQ), better));
            Lv[i]   = _mm256_blendv_ps(Lv[i], nl_, upd);
            sumlx   = _mm256_blendv_ps(sumlx, slx, upd);
            suml2   = _mm256_blendv_ps(suml2, sl2, upd);
            changed = _mm256_or_ps(changed, upd);
        }
        if (!_mm256_movemask_ps(changed)) break;
    }
    const __m256 live = _mm256_cmp_ps(amax, _mm256_set1_ps(1e-15f), _CMP_NLT_UQ);
    store_levels(nl, n, Lv, nmax, live, (uint8_t *) L);
    store_lanes(nl, _mm256_and_ps(live, _mm256_div_ps(sumlx, suml2)), scales);
}

void lm_q3_lanes_avx2(int nl, int n, int nmax, const float * x, int8_t * L, float * scales) {
    for (int l0 = 0; l0 < nl; l0 += LANES) {
        const int m = nl - l0 < LANES ? nl - l0 : LANES;
        q3_batch(m, n, nmax, x + l0 * n, L + l0 * n, scales + l0);
    }
}

// ---------------------------------------------------------------- final levels from the stored scales

LM_TARGET_AVX2 void lm_requantize_avx2(const float * x, int n, float d, float m, bool add_m, int lo, int hi, int bias, uint8_t * L) {
    const __m256 dv = _mm256_set1_ps(d), mv = _mm256_set1_ps(m);
    const __m256i lov = _mm256_set1_epi32(lo), hiv = _mm256_set1_epi32(hi), b = _mm256_set1_epi32(bias);
    for (int i = 0; i < n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (add_m) v = _mm256_add_ps(v, mv);
        const __m256i l = _mm256_add_epi32(_mm256_cvtps_epi32(round_clamp(_mm256_div_ps(v, dv), lov, hiv)), b);
        const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(l), _mm256_extracti128_si256(l, 1));
        _mm_storel_epi64((__m128i *) (L + i), _mm_packus_epi16(w, w));
    }
}

#else
typedef int lm_quantize_x86_unused; // ISO C forbids an empty translation unit
#endif
