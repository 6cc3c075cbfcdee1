// ggml-simd-x86.h - AVX2 helpers shared by the layers with x86 paths (the
// quantizers and the CPU kernels). Internal. Apart from ggml-simd.h because
// <immintrin.h> is slow to parse, and ggml-simd.h reaches every file of the
// CPU layer and the Go package's cgo preambles.
#pragma once

#include "ggml-simd.h"

#if defined(LM_X86)
#include <immintrin.h>
// The largest of the 8 lanes.
LM_TARGET_AVX2 static inline float lm_hmax_avx2(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#endif
