// ggml-simd.h - run-time SIMD dispatch shared by every layer that has SIMD
// paths (fp16 rows, quantization, the CPU kernels): the CPU's level, the
// target attributes of each level's functions, and streamed row conversion.
// Internal.
#pragma once

#include "ggml-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------- run-time SIMD dispatch

// Two ladders above scalar: x86-64 (avx2 < avx512) and arm64 (neon <
// neon_dotprod); a level of the other architecture is never available.
enum lm_cpu_level {
    LM_CPU_LEVEL_SCALAR       = 0,
    LM_CPU_LEVEL_AVX2         = 1, // AVX2 + FMA + F16C
    LM_CPU_LEVEL_AVX512       = 2, // AVX-512 F/BW/VL/DQ
    LM_CPU_LEVEL_NEON         = 3, // arm64, ARMv8.0 Advanced SIMD
    LM_CPU_LEVEL_NEON_DOTPROD = 4, // arm64 with the ARMv8.2 dot product (SDOT); else as NEON
};
// Best level the CPU supports, possibly lowered by lm_cpu_force_level or the
// LM_GGML_CPU_LEVEL environment variable ("scalar", "avx2", "avx512", "neon",
// "dotprod").
enum lm_cpu_level lm_cpu_level(void);
// The NEON kernels serve both arm64 levels (the dotprod one replaces some).
static inline bool lm_cpu_level_is_neon(enum lm_cpu_level l) {
    return l == LM_CPU_LEVEL_NEON || l == LM_CPU_LEVEL_NEON_DOTPROD;
}
// Forces a level (for tests); returns false if the CPU lacks it. -1 restores auto.
bool lm_cpu_force_level(int level);

// True at LM_CPU_LEVEL_AVX512 where the CPU also has AVX512_VNNI (CPUID
// leaf 7 ECX bit 11; the OS saves the ZMM state, as the level needs): the
// quantized integer dots then take their vpdpbusd forms, which give the AVX2
// kernels' bits. Follows lm_cpu_force_level and LM_GGML_CPU_LEVEL.
bool lm_cpu_vnni(void);
// True at LM_CPU_LEVEL_AVX512 where the CPU also has AVX512_BF16 (CPUID
// leaf 7 subleaf 1 EAX bit 5; ZMM state saved by the OS): mul_mat with bf16
// weights then rounds its columns to bf16 and dots with vdpbf16ps (its own
// bits, see mm-float.c). Follows lm_cpu_force_level and LM_GGML_CPU_LEVEL.
bool lm_cpu_avx512bf16(void);
// True on x86-64 CPUs whose vector gathers cost more than the scalar loads
// they replace: AMD's (CPUID vendor "AuthenticAMD"). The AVX-512 mat-vecs
// of the i-quants that look their grids up by gathers then give way to the
// AVX2 ones compiled for that level, which load them one by one (the same
// bits either way).
bool lm_cpu_slow_gather(void);
// For tests: 0 or 1 forces lm_cpu_slow_gather's answer, -1 restores the CPU's.
void lm_cpu_force_slow_gather(int v);

#if defined(__x86_64__) || defined(_M_X64)
#define LM_X86 1
#define LM_TARGET_AVX2   __attribute__((target("avx2,fma,f16c")))
#define LM_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define LM_TARGET_VNNI   __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define LM_TARGET_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")))
#endif
#if defined(__aarch64__)
#define LM_ARM64 1
// Functions that may use SDOT/UDOT; called only at LM_CPU_LEVEL_NEON_DOTPROD.
// GCC inlines its dotprod intrinsics only into armv8.2-a code ("+dotprod"
// alone is refused); every CPU with the extension implements 8.2.
#if defined(__clang__)
#define LM_TARGET_DOTPROD __attribute__((target("dotprod")))
#else
#define LM_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
// fp16 <-> fp32 by the FPU: FCVT between half and single is base ARMv8.0
// (no FEAT_FP16 needed). With the FPCR Linux and the Go runtime leave (round
// to nearest even, FZ and DN off; FZ16 does not apply to conversions) it
// gives the bits of lm_ggml_compute_fp32_to_fp16 for every input, and of
// lm_ggml_compute_fp16_to_fp32 for every input but signaling NaNs, which
// come out quiet (as from F16C and ggml's __fp16 casts). Two
// instructions (load, FCVT) instead of a dozen with branches: for the
// per-block scales of the NEON kernels and quantizers.
static inline float lm_h2f_hw(lm_ggml_fp16_t h) {
    const union { lm_ggml_fp16_t u; __fp16 f; } v = { h };
    return (float) v.f;
}
static inline lm_ggml_fp16_t lm_f2h_hw(float x) {
    const union { __fp16 f; lm_ggml_fp16_t u; } v = { (__fp16) x };
    return v.u;
}
#endif

// Rows whose f32 (or, for fp32->fp16, fp16) output is at least this many bytes
// are written with non-temporal stores from the AVX2 level up: such a row does not
// stay in cache for its reader anyway (weights converted at load, whole-tensor
// copies), and bypassing the cache saves the read-for-ownership of every output
// line. Rows of a graph are far smaller and keep the cached path, so their
// consumer finds them in cache. The default is 32 MiB, about a large L3:
// streaming stores are slower than stores that hit L3, so an output that
// still fits in L3 loses when streamed, while larger ones gain. At the
// AVX-512 level the default is never: there ordinary stores of large outputs
// outran streamed ones.
#define LM_STREAM_MIN_BYTES_DEFAULT ((int64_t) 32 << 20)
int64_t lm_stream_min_bytes(void);
// Sets the threshold (clamped to at least 64 KiB; a negative n restores the
// level's default); returns the previous setting, which restores it.
// For tests, which exercise the streamed path on small rows.
int64_t lm_set_stream_min_bytes(int64_t n);
// Converts k elements (blocks of blck elements, bsize bytes each, from x) with
// fn into y through an L1-resident buffer and streaming stores, and returns
// true, if the row is that large and the level has streaming stores; returns
// false without writing anything otherwise. Same bits as fn(x, y, k).
// (to-float-stream.c)
bool lm_to_float_stream(lm_ggml_to_float_t fn, int64_t blck, size_t bsize, const void * x, float * y, int64_t k);
#ifdef __cplusplus
}
#endif
