// quantize-simd.h - SIMD versions of the weight quantizers and of the scale
// searches behind them (internal). Each gives the bits of its scalar
// counterpart in ggml-quants.c / ggml-iquants.c: per element (or per lane)
// the same float operations in the same order, no fused multiply-add.
// Callers check lm_cpu_level() first.
#pragma once

#include "ggml-common.h"

#include <stdbool.h>
#include <stdint.h>

// ---------------------------------------------------------------- quantize-x86.c (AVX2)

// The legacy reference quantizers, nb blocks.
void lm_quantize_row_q4_0_avx2(const float * x, block_q4_0 * y, int64_t nb);
void lm_quantize_row_q4_1_avx2(const float * x, block_q4_1 * y, int64_t nb);
void lm_quantize_row_q5_0_avx2(const float * x, block_q5_0 * y, int64_t nb);
void lm_quantize_row_q5_1_avx2(const float * x, block_q5_1 * y, int64_t nb);

// make_qkx_quants_lanes / make_qx_quants_lanes of ggml-quants.c (same
// arguments): nl groups of n <= 32 values, any nl, eight groups per vector.
void lm_qkx_lanes_avx2(int nl, int n, int nmax, const float * x, const float * weights, uint8_t * L,
                       float * mins, float * scales, float rmin, float rdelta, int nstep, bool use_mad);
void lm_qx_lanes_avx2(int nl, int n, int nmax, const float * x, const float * qw, int8_t * L, float * scales);

// make_q3_quants(n, nmax, x + l*n, L + l*n, true) of ggml-quants.c for nl groups.
void lm_q3_lanes_avx2(int nl, int n, int nmax, const float * x, int8_t * L, float * scales);

// L[i] = clamp(nearest_int((x[i] + m) / d), lo, hi) + bias for i < n (a
// multiple of 8); without add_m, nearest_int(x[i] / d). Levels must fit a byte.
void lm_requantize_avx2(const float * x, int n, float d, float m, bool add_m, int lo, int hi, int bias, uint8_t * L);

// ---------------------------------------------------------------- iquantize-x86.c (AVX2)

// An i-quant lattice as built by ggml-iquants.c. A quantizer rounds a
// sub-vector of dim magnitudes to levels and packs them into a code of bits
// bits per coordinate; map sends a code to its grid index, or, for a code off
// the grid, to a list of candidate grid points.
typedef struct {
    int        n;      // grid points
    int        dim;    // coordinates per point
    int        bits;   // bits per coordinate in a code
    int        maxlev; // largest level a quantizer produces
    uint8_t  * lev;    // n*dim levels
    int32_t  * map;    // code -> index >= 0, or -(1 + offset of its list in nbr)
    uint16_t * nbr;    // lists: a header of LM_LAT_HDR slots (the length first),
                       // then the grid indices, padded to a multiple of
                       // LM_LAT_GROUP slots with copies of the last one
    uint8_t  * tlev;   // dim bytes per slot of nbr: the levels of the candidates
                       // in groups of LM_LAT_GROUP, coordinate-major (group g of
                       // a list: dim rows of LM_LAT_GROUP levels)
} lm_iq_lattice;

enum { LM_LAT_HDR = 8, LM_LAT_GROUP = 8 };

// The trial loop of iq_search_scale (ggml-iquants.c) for ntrial <= 32 inverse
// scales ids[t]: per trial, the n (16 or 32) magnitudes xv rounded to levels
// and snapped to the lattice sub-vector by sub-vector (candidates scored with
// weights sw at scale 1/ids[t]), the levels to Lt[32*t + i] (Lt holds
// 32*32 + 4 bytes), the on-grid flags to on[8*t + k], and the sums
// sum(w*x*q), sum(w*q*q) with q = 2*level + 1 to sqx[t], sq2[t].
void lm_iq_trials_avx2(const lm_iq_lattice * lat, int n, const float * xv, const float * w, const float * sw,
                       const float * ids, int ntrial, int8_t * Lt, bool * on, float * sqx, float * sq2);

// The i-quant lattice search (lat_best of ggml-iquants.c): the position in a
// candidate list of the candidate with the least sum over its dim coordinates,
// in order, of w[i]*(scale*q[level] - x[i])^2, first on ties, 0 if none is
// below FLT_MAX. tlev: the candidates' levels in groups of 8, each group dim
// rows of 8 bytes; count candidates (the last group padded with copies of the
// last candidate). q: 8 level values.
int lm_lat_best_avx2(const float * x, const float * w, float scale, const float * q, int dim, const uint8_t * tlev, int count);

// iq4_nl / iq4_xs (iq4_quantize_super of ggml-iquants.c); v: the 16 levels as
// floats. lm_iq4_levels_avx2: L[j] = iq4_nearest(id*x[j]) for j < n (a
// multiple of 8). lm_iq4_search_avx2: the scale fits of one block of 32 with
// weights w: the first at d0 (its levels to L), then for ntry > 0 the trials
// (itry + v[0])/max, itry in [-ntry, ntry] (ntry <= 7); returns the chosen d.
void  lm_iq4_levels_avx2(const float * x, int n, float id, const float * v, uint8_t * L);
float lm_iq4_search_avx2(const float * x, const float * w, float max, float d0, int ntry, const float * v, uint8_t * L);

// iq1_s / iq1_m split searches (iq1s_split, iq1m_split of ggml-iquants.c):
// the best fit so far and where it was found, updated in place.
typedef struct {
    float best, scale;
    int   i1, i2, v; // the split and the variant of the level values
} lm_iq1_split;

// sumx, sumw: 33 prefix sums, readable (zero) up to index 39.
void lm_iq1s_split_avx2(const float * sumx, const float * sumw, const float * x_p, const float * x_m, lm_iq1_split * r);
// t: the terms of the 16 sorted values, t[(j*3 + segment)*8 + k] the w*q*x of
// variant k (k < 4) and t[... + 4 + k] its w*q*q.
void lm_iq1m_split_avx2(const float * t, lm_iq1_split * r);
