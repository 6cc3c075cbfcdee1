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

// The i-quant lattice search (lat_best of ggml-iquants.c): the position in a
// candidate list of the candidate with the least sum over its dim coordinates,
// in order, of w[i]*(scale*q[level] - x[i])^2, first on ties, 0 if none is
// below FLT_MAX. tlev: the candidates' levels in groups of 8, each group dim
// rows of 8 bytes; count candidates (the last group padded with copies of the
// last candidate). q: 8 level values.
int lm_lat_best_avx2(const float * x, const float * w, float scale, const float * q, int dim, const uint8_t * tlev, int count);
