// iquantize-x86.c - AVX2 kernels of the i-quant quantizers (ggml-iquants.c),
// with the bits of the scalar code: per candidate (one per lane) the same
// float operations in the same order, no fused multiply-add.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "quantize-simd.h"
#include "../base/ggml-simd.h"

#if defined(LM_X86)
#include <float.h>
#include <immintrin.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

// Eight candidates per vector: the error table of each coordinate is one
// vector of 8 levels, looked up with a lane permute; the sum over coordinates
// runs in coordinate order within each lane. Each lane keeps its first least
// error (strict <); across lanes the least error wins, ties going to the
// earliest position, which is the scalar loop's choice.
LM_TARGET_AVX2 static inline int lat_best(const float * x, const float * w, float scale, const float * q, int dim,
                                         const uint8_t * tlev, int count) {
    __m256 t[8];
    const __m256 qv = _mm256_loadu_ps(q), sv = _mm256_set1_ps(scale);
    const __m256 sq = _mm256_mul_ps(sv, qv);
    for (int i = 0; i < dim; ++i) {
        const __m256 diff = _mm256_sub_ps(sq, _mm256_set1_ps(x[i]));
        t[i] = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(w[i]), diff), diff);
    }
    __m256  best = _mm256_set1_ps(FLT_MAX);
    __m256i bpos = _mm256_setzero_si256();
    __m256i pos  = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i step = _mm256_set1_epi32(8);
    for (int c = 0; c < count; c += 8, tlev += 8 * dim, pos = _mm256_add_epi32(pos, step)) {
        __m256 e = _mm256_setzero_ps();
        for (int i = 0; i < dim; ++i) {
            const __m256i lv = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (tlev + 8 * i)));
            e = _mm256_add_ps(e, _mm256_permutevar8x32_ps(t[i], lv));
        }
        const __m256 lt = _mm256_cmp_ps(e, best, _CMP_LT_OQ);
        best = _mm256_blendv_ps(best, e, lt);
        bpos = _mm256_blendv_epi8(bpos, pos, _mm256_castps_si256(lt));
    }
    // least error over the lanes, then the earliest position holding it
    __m128 m4 = _mm_min_ps(_mm256_castps256_ps128(best), _mm256_extractf128_ps(best, 1));
    m4 = _mm_min_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_min_ss(m4, _mm_movehdup_ps(m4));
    const __m256 eq = _mm256_cmp_ps(best, _mm256_broadcastss_ps(m4), _CMP_EQ_OQ);
    const __m256i cand = _mm256_blendv_epi8(_mm256_set1_epi32(INT_MAX), bpos, _mm256_castps_si256(eq));
    __m128i p4 = _mm_min_epi32(_mm256_castsi256_si128(cand), _mm256_extracti128_si256(cand, 1));
    p4 = _mm_min_epi32(p4, _mm_shuffle_epi32(p4, _MM_SHUFFLE(1, 0, 3, 2)));
    p4 = _mm_min_epi32(p4, _mm_shuffle_epi32(p4, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(p4);
}

LM_TARGET_AVX2 int lm_lat_best_avx2(const float * x, const float * w, float scale, const float * q, int dim,
                                    const uint8_t * tlev, int count) {
    return lat_best(x, w, scale, q, dim, tlev, count);
}

// ---------------------------------------------------------------- iq2 / iq3 scale search

// Per trial, the levels of all n values come from vector rounding; the codes
// of the sub-vectors are horizontal sums of the levels shifted into place
// (their bit fields do not overlap); on-grid sub-vectors keep the rounded
// levels, the others take their best candidate's.
LM_TARGET_AVX2 void lm_iq_trials_avx2(const lm_iq_lattice * lat, int n, const float * xv, const float * w, const float * sw,
                                      const float * ids, int ntrial, int8_t * Lt, bool * on, float * sqx, float * sq2) {
    static const float odd[8] = { 1, 3, 5, 7, 9, 11, 13, 15 };
    const int dim = lat->dim, nsub = n / dim, nv = n / 8;
    const __m256i shifts = dim == 8 ? _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14) : _mm256_setr_epi32(0, 3, 6, 9, 0, 3, 6, 9);
    const __m256i top = _mm256_set1_epi32(lat->maxlev), zero = _mm256_setzero_si256();
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), magic = _mm256_set1_ps(12582912.f);
    __m256 x[4];
    for (int j = 0; j < nv; ++j) x[j] = _mm256_loadu_ps(xv + 8 * j);
    for (int t = 0; t < ntrial; ++t) {
        const float id = ids[t], scale = 1 / id;
        const __m256 idv = _mm256_set1_ps(id);
        __m256i l[4], s[4];
        for (int j = 0; j < nv; ++j) {
            const __m256 v = _mm256_mul_ps(half, _mm256_sub_ps(_mm256_mul_ps(idv, x[j]), one));
            const __m256i r = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(_mm256_add_ps(v, magic)), _mm256_set1_epi32(0x007fffff)),
                                               _mm256_set1_epi32(0x00400000));
            l[j] = _mm256_min_epi32(_mm256_max_epi32(r, zero), top);
            s[j] = _mm256_sllv_epi32(l[j], shifts);
        }
        // codes: sub-vector k of the trial in code[k]
        int32_t code[8];
        if (nv == 4) {
            const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
            if (dim == 8) {
                _mm_storeu_si128((__m128i *) code, _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
            } else {
                int32_t c[8]; // vector j's two sub-vectors: lanes j (first) and 4 + j (second)
                _mm256_storeu_si256((__m256i *) c, h);
                for (int j = 0; j < 4; ++j) { code[2 * j] = c[j]; code[2 * j + 1] = c[4 + j]; }
            }
        } else { // n == 16, dim == 8
            const __m256i h1 = _mm256_hadd_epi32(s[0], s[1]);
            const __m256i h = _mm256_hadd_epi32(h1, h1);
            _mm_storel_epi64((__m128i *) code, _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
        }
        int8_t * Lrow = Lt + 32 * t;
        for (int j = 0; j < nv; ++j) {
            const __m128i p = _mm_packs_epi32(_mm256_castsi256_si128(l[j]), _mm256_extracti128_si256(l[j], 1));
            _mm_storel_epi64((__m128i *) (Lrow + 8 * j), _mm_packs_epi16(p, p));
        }
        for (int k = 0; k < nsub; ++k) {
            const int32_t m = lat->map[code[k]];
            on[8 * t + k] = m >= 0;
            if (m >= 0) continue;
            const size_t o = (size_t) (-(int64_t) m - 1);
            const int count = lat->nbr[o];
            const int pos = lat_best(xv + dim * k, sw + dim * k, scale, odd, dim, lat->tlev + (o + LM_LAT_HDR) * (size_t) dim, count);
            const int g = lat->nbr[o + LM_LAT_HDR + pos];
            for (int i = 0; i < dim; ++i) Lrow[dim * k + i] = (int8_t) lat->lev[g * dim + i];
        }
    }
    // the sums, eight trials per vector, each over the values in order (rows
    // past the last trial are zeroed so that the gathers read defined bytes)
    for (int t = ntrial; t % 8; ++t) memset(Lt + 32 * t, 0, 32);
    const __m256i rows = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224);
    for (int t0 = 0; t0 < ntrial; t0 += 8) {
        __m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
        for (int i = 0; i < n; ++i) {
            const __m256i lv = _mm256_and_si256(_mm256_i32gather_epi32((const int *) (Lt + 32 * t0 + i), rows, 1), _mm256_set1_epi32(0xFF));
            const __m256 q = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_add_epi32(lv, lv), _mm256_set1_epi32(1)));
            const __m256 wi = _mm256_set1_ps(w[i]);
            a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_mul_ps(wi, _mm256_set1_ps(xv[i])), q));
            b = _mm256_add_ps(b, _mm256_mul_ps(_mm256_mul_ps(wi, q), q));
        }
        float fa[8], fb[8];
        _mm256_storeu_ps(fa, a);
        _mm256_storeu_ps(fb, b);
        for (int k = 0; k < 8 && t0 + k < ntrial; ++k) {
            sqx[t0 + k] = fa[k];
            sq2[t0 + k] = fb[k];
        }
    }
}

// ---------------------------------------------------------------- iq1_s / iq1_m split searches
//
// The fits of many splits at once; a vector whose fits all fail against the
// best so far is skipped, otherwise its fits are compared one by one in the
// scalar order (each against the best as it stands then). The fits' sums
// are the scalar expressions, evaluated the same way per lane.

LM_TARGET_AVX2 void lm_iq1s_split_avx2(const float * sumx, const float * sumw, const float * x_p, const float * x_m, lm_iq1_split * r) {
    enum { BS = 32 };
    const float * vs[2] = { x_p, x_m };
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 zero = _mm256_setzero_ps();
    for (int i1 = 0; i1 <= BS; ++i1) {
        const float ax = sumx[i1] - sumx[0], aw = sumw[i1] - sumw[0];
        for (int g = i1; g <= BS; g += 8) {
            const __m256 X2 = _mm256_loadu_ps(sumx + g), W2 = _mm256_loadu_ps(sumw + g);
            const __m256 bx = _mm256_sub_ps(X2, _mm256_set1_ps(sumx[i1])), cx = _mm256_sub_ps(_mm256_set1_ps(sumx[BS]), X2);
            const __m256 bw = _mm256_sub_ps(W2, _mm256_set1_ps(sumw[i1])), cw = _mm256_sub_ps(_mm256_set1_ps(sumw[BS]), W2);
            const __m256 valid = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(BS - g + 1), lane));
            __m256 qx[2], q2[2];
            int any = 0;
            for (int t = 0; t < 2; ++t) {
                const float * v = vs[t];
                const __m256 v1 = _mm256_set1_ps(v[1]), v2 = _mm256_set1_ps(v[2]);
                qx[t] = _mm256_add_ps(_mm256_add_ps(_mm256_set1_ps(ax*v[0]), _mm256_mul_ps(bx, v1)), _mm256_mul_ps(cx, v2));
                q2[t] = _mm256_add_ps(_mm256_add_ps(_mm256_set1_ps(aw*v[0]*v[0]), _mm256_mul_ps(_mm256_mul_ps(bw, v1), v1)),
                                      _mm256_mul_ps(_mm256_mul_ps(cw, v2), v2));
                const __m256 pass = _mm256_and_ps(_mm256_cmp_ps(q2[t], zero, _CMP_GT_OQ),
                                                  _mm256_cmp_ps(_mm256_mul_ps(qx[t], qx[t]), _mm256_mul_ps(_mm256_set1_ps(r->best), q2[t]), _CMP_GT_OQ));
                any |= _mm256_movemask_ps(_mm256_and_ps(pass, valid));
            }
            if (!any) continue;
            float fx[2][8], f2[2][8];
            for (int t = 0; t < 2; ++t) {
                _mm256_storeu_ps(fx[t], qx[t]);
                _mm256_storeu_ps(f2[t], q2[t]);
            }
            for (int l = 0; l < 8 && g + l <= BS; ++l) {
                for (int t = 0; t < 2; ++t) {
                    if (f2[t][l] > 0 && fx[t][l]*fx[t][l] > r->best*f2[t][l]) {
                        r->scale = fx[t][l]/f2[t][l];
                        r->best = r->scale*fx[t][l];
                        r->i1 = i1; r->i2 = g + l; r->v = t;
                    }
                }
            }
        }
    }
}

// One split per vector: lanes 0-3 hold the w*q*x sums of the four variants,
// lanes 4-7 the w*q*q sums, so each split costs one add per value.
LM_TARGET_AVX2 void lm_iq1m_split_avx2(const float * t, lm_iq1_split * r) {
    enum { BS = 16 };
    __m256 a0 = _mm256_setzero_ps();
    for (int i1 = 0; i1 <= BS; ++i1) {
        if (i1 > 0) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(t + ((i1 - 1)*3 + 0)*8));
        __m256 a1 = a0;
        for (int i2 = i1; i2 <= BS; ++i2) {
            if (i2 > i1) a1 = _mm256_add_ps(a1, _mm256_loadu_ps(t + ((i2 - 1)*3 + 1)*8));
            __m256 s = a1;
            for (int j = i2; j < BS; ++j) s = _mm256_add_ps(s, _mm256_loadu_ps(t + (j*3 + 2)*8));
            const __m128 qx = _mm256_castps256_ps128(s), q2 = _mm256_extractf128_ps(s, 1);
            const __m128 pass = _mm_and_ps(_mm_cmpgt_ps(q2, _mm_setzero_ps()),
                                           _mm_cmpgt_ps(_mm_mul_ps(qx, qx), _mm_mul_ps(_mm_set1_ps(r->best), q2)));
            if (!_mm_movemask_ps(pass)) continue;
            float f[8];
            _mm256_storeu_ps(f, s);
            for (int k = 0; k < 4; ++k) {
                if (f[4 + k] > 0 && f[k]*f[k] > r->best*f[4 + k]) {
                    r->scale = f[k]/f[4 + k];
                    r->best = r->scale*f[k];
                    r->i1 = i1; r->i2 = i2; r->v = k;
                }
            }
        }
    }
}

// ---------------------------------------------------------------- iq4_nl / iq4_xs

// v[idx] for 16 sorted levels held in two vectors (lo: 0..7, hi: 8..15).
LM_TARGET_AVX2 static inline __m256 lookup16(__m256 lo, __m256 hi, __m256i idx) {
    const __m256 is_hi = _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7)));
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, idx), _mm256_permutevar8x32_ps(hi, idx), is_hi);
}

// iq4_nearest of ggml-iquants.c in each lane: with h the number of levels
// <= x clamped to [1, 15], the lower of levels h-1 and h unless x is strictly
// nearer the upper one, compared as x - v[h-1] < v[h] - x. Below v[0] that
// compare picks 0 and from v[15] on it picks 15, as the scalar early returns
// do; NaN counts as above every level (15).
LM_TARGET_AVX2 static inline __m256i iq4_nearest8(__m256 x, const float * v, __m256 lo, __m256 hi) {
    __m256i cnt = _mm256_setzero_si256();
    for (int m = 0; m < 16; ++m) {
        cnt = _mm256_sub_epi32(cnt, _mm256_castps_si256(_mm256_cmp_ps(x, _mm256_set1_ps(v[m]), _CMP_NLT_UQ)));
    }
    const __m256i h = _mm256_min_epi32(_mm256_max_epi32(cnt, _mm256_set1_epi32(1)), _mm256_set1_epi32(15));
    const __m256i h1 = _mm256_sub_epi32(h, _mm256_set1_epi32(1));
    const __m256 below = _mm256_cmp_ps(_mm256_sub_ps(x, lookup16(lo, hi, h1)), _mm256_sub_ps(lookup16(lo, hi, h), x), _CMP_LT_OQ);
    return _mm256_add_epi32(h, _mm256_castps_si256(below));
}

LM_TARGET_AVX2 void lm_iq4_levels_avx2(const float * x, int n, float id, const float * v, uint8_t * L) {
    const __m256 lo = _mm256_loadu_ps(v), hi = _mm256_loadu_ps(v + 8), idv = _mm256_set1_ps(id);
    for (int j = 0; j < n; j += 8) {
        const __m256i l = iq4_nearest8(_mm256_mul_ps(idv, _mm256_loadu_ps(x + j)), v, lo, hi);
        const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(l), _mm256_extracti128_si256(l, 1));
        _mm_storel_epi64((__m128i *) (L + j), _mm_packus_epi16(w, w));
    }
}

// All the fits of one block side by side, one inverse scale per lane: lane 0
// the first fit (1/d0), lanes 1.. the trials (itry + v[0])/max, itry from
// -ntry to ntry. Each lane sums over the 32 values in order, as the scalar
// loops do; then the fits are compared in the scalar order.
LM_TARGET_AVX2 float lm_iq4_search_avx2(const float * x, const float * w, float max, float d0, int ntry, const float * v,
                                        uint8_t * L) {
    enum { NV = 2 };
    float ids[8 * NV];
    const int nfit = ntry > 0 ? 2 * ntry + 2 : 1;
    ids[0] = 1 / d0;
    for (int k = 1; k < 8 * NV; ++k) {
        const int itry = k - 1 - ntry;
        ids[k] = k < nfit ? (float) (itry + (int) v[0]) / max : ids[0];
    }
    const __m256 lo = _mm256_loadu_ps(v), hi = _mm256_loadu_ps(v + 8);
    const int nv = nfit > 8 ? 2 : 1;
    __m256 idv[NV], sqx[NV], sq2[NV];
    for (int k = 0; k < NV; ++k) {
        idv[k] = _mm256_loadu_ps(ids + 8 * k);
        sqx[k] = sq2[k] = _mm256_setzero_ps();
    }
    for (int j = 0; j < 32; ++j) {
        const __m256 xj = _mm256_set1_ps(x[j]), wj = _mm256_set1_ps(w[j]);
        for (int k = 0; k < nv; ++k) {
            const __m256i l = iq4_nearest8(_mm256_mul_ps(idv[k], xj), v, lo, hi);
            if (k == 0) L[j] = (uint8_t) _mm256_cvtsi256_si32(l);
            const __m256 wq = _mm256_mul_ps(wj, lookup16(lo, hi, l));
            sqx[k] = _mm256_add_ps(sqx[k], _mm256_mul_ps(wq, xj));
            sq2[k] = _mm256_add_ps(sq2[k], _mm256_mul_ps(wq, lookup16(lo, hi, l)));
        }
    }
    float a[8 * NV], b[8 * NV];
    for (int k = 0; k < NV; ++k) {
        _mm256_storeu_ps(a + 8 * k, sqx[k]);
        _mm256_storeu_ps(b + 8 * k, sq2[k]);
    }
    float d = a[0] / b[0];
    float best = d * a[0];
    for (int k = 1; k < nfit; ++k) {
        if (b[k] > 0 && a[k] * a[k] > best * b[k]) {
            d = a[k] / b[k];
            best = d * a[k];
        }
    }
    return d;
}

#else
typedef int lm_iquantize_x86_unused; // ISO C forbids an empty translation unit
#endif
