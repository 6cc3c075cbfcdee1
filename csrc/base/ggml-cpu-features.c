// ggml-cpu-features.c - run-time CPU feature detection: the SIMD level every
// dispatching kernel asks for, and the lm_ggml_cpu_has_* answers.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ggml-simd.h"
#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

// ---------------------------------------------------------------- CPU level

static int g_level_forced = -1;
static int g_level_detected = -1;

// Levels of one ladder (scalar belongs to both).
static bool same_ladder(int a, int b) {
    return a == LM_CPU_LEVEL_SCALAR || b == LM_CPU_LEVEL_SCALAR ||
           (a >= LM_CPU_LEVEL_NEON) == (b >= LM_CPU_LEVEL_NEON);
}

// LM_GGML_CPU_LEVEL caps the detected level; a name of the other ladder, or
// an unknown one, caps nothing.
static int env_cap(int level) {
    static const struct { const char * name; int level; } names[] = {
        { "scalar", LM_CPU_LEVEL_SCALAR }, { "avx2", LM_CPU_LEVEL_AVX2 }, { "avx512", LM_CPU_LEVEL_AVX512 },
        { "neon", LM_CPU_LEVEL_NEON }, { "dotprod", LM_CPU_LEVEL_NEON_DOTPROD },
    };
    const char * env = getenv("LM_GGML_CPU_LEVEL");
    if (env == NULL) return level;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(env, names[i].name) == 0 && same_ladder(names[i].level, level) && names[i].level < level) {
            return names[i].level;
        }
    }
    return level;
}

#if defined(LM_X86)
#include <cpuid.h>
// x86 features read from CPUID and XCR0 directly rather than through
// __builtin_cpu_supports: compilers differ in which names it knows (clang
// has no "f16c" or "avxvnni"), and whether a given libgcc or compiler-rt
// checks the OS's register state before it reports an AVX or AVX-512
// extension is theirs to decide. Each feature: CPUID leaf, subleaf,
// register, bit, and the XCR0 state bits the OS must save for it.
enum { CPUID_EAX, CPUID_EBX, CPUID_ECX };
enum x86_feature {
    X86_SSE3, X86_SSSE3, X86_FMA, X86_AVX, X86_F16C, X86_AVX2, X86_AVX_VNNI,
    X86_AVX512F, X86_AVX512DQ, X86_AVX512BW, X86_AVX512VL, X86_AVX512VBMI,
    X86_AVX512VNNI, X86_AVX512BF16, X86_FEATURE_COUNT
};
#define XCR0_AVX    0x06u // SSE and AVX (YMM) state
#define XCR0_AVX512 0xE6u // and opmask, ZMM_Hi256, Hi16_ZMM state
static const struct { unsigned leaf, sub; int reg, bit; unsigned xcr0; } x86_features[X86_FEATURE_COUNT] = {
    [X86_SSE3]       = { 1, 0, CPUID_ECX,  0, 0 },
    [X86_SSSE3]      = { 1, 0, CPUID_ECX,  9, 0 },
    [X86_FMA]        = { 1, 0, CPUID_ECX, 12, XCR0_AVX },
    [X86_AVX]        = { 1, 0, CPUID_ECX, 28, XCR0_AVX },
    [X86_F16C]       = { 1, 0, CPUID_ECX, 29, XCR0_AVX },
    [X86_AVX2]       = { 7, 0, CPUID_EBX,  5, XCR0_AVX },
    [X86_AVX_VNNI]   = { 7, 1, CPUID_EAX,  4, XCR0_AVX },
    [X86_AVX512F]    = { 7, 0, CPUID_EBX, 16, XCR0_AVX512 },
    [X86_AVX512DQ]   = { 7, 0, CPUID_EBX, 17, XCR0_AVX512 },
    [X86_AVX512BW]   = { 7, 0, CPUID_EBX, 30, XCR0_AVX512 },
    [X86_AVX512VL]   = { 7, 0, CPUID_EBX, 31, XCR0_AVX512 },
    [X86_AVX512VBMI] = { 7, 0, CPUID_ECX,  1, XCR0_AVX512 },
    [X86_AVX512VNNI] = { 7, 0, CPUID_ECX, 11, XCR0_AVX512 },
    [X86_AVX512BF16] = { 7, 1, CPUID_EAX,  5, XCR0_AVX512 },
};

static bool x86_detect(enum x86_feature f) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    if (x86_features[f].xcr0 != 0) {
        if (!(c & (1u << 27))) return false; // OSXSAVE: XGETBV usable
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        (void) hi;
        if ((lo & x86_features[f].xcr0) != x86_features[f].xcr0) return false;
    }
    const unsigned leaf = x86_features[f].leaf, sub = x86_features[f].sub;
    if (leaf != 1) {
        if (__get_cpuid_max(0, NULL) < leaf) return false;
        __cpuid_count(leaf, 0, a, b, c, d);
        if (sub > a) return false; // subleaf 0's EAX: the highest subleaf
        if (sub != 0) __cpuid_count(leaf, sub, a, b, c, d);
    }
    const unsigned r = x86_features[f].reg == CPUID_EAX ? a : x86_features[f].reg == CPUID_EBX ? b : c;
    return (r >> x86_features[f].bit) & 1;
}

// x86_has caches each answer: CPUID can take hundreds of cycles, and under
// a hypervisor it traps.
static bool x86_has(enum x86_feature f) {
    static int cache[X86_FEATURE_COUNT];
    int h = __atomic_load_n(&cache[f], __ATOMIC_RELAXED);
    if (h == 0) {
        h = x86_detect(f) ? 1 : -1;
        __atomic_store_n(&cache[f], h, __ATOMIC_RELAXED);
    }
    return h > 0;
}
#endif

static int detect_level(void) {
#if defined(LM_X86)
    int level = LM_CPU_LEVEL_SCALAR;
    if (x86_has(X86_AVX2) && x86_has(X86_FMA) && x86_has(X86_F16C)) {
        level = LM_CPU_LEVEL_AVX2;
        if (x86_has(X86_AVX512F) && x86_has(X86_AVX512BW) && x86_has(X86_AVX512VL) && x86_has(X86_AVX512DQ)) {
            level = LM_CPU_LEVEL_AVX512;
        }
    }
    return env_cap(level);
#elif defined(LM_ARM64)
    return env_cap(lm_ggml_cpu_has_dotprod() ? LM_CPU_LEVEL_NEON_DOTPROD : LM_CPU_LEVEL_NEON);
#else
    return env_cap(LM_CPU_LEVEL_SCALAR);
#endif
}

static int detected_level(void) {
    int l = __atomic_load_n(&g_level_detected, __ATOMIC_ACQUIRE);
    if (l < 0) {
        l = detect_level();
        __atomic_store_n(&g_level_detected, l, __ATOMIC_RELEASE);
    }
    return l;
}

enum lm_cpu_level lm_cpu_level(void) {
    const int forced = __atomic_load_n(&g_level_forced, __ATOMIC_RELAXED);
    return (enum lm_cpu_level)(forced >= 0 ? forced : detected_level());
}

bool lm_cpu_force_level(int level) {
    if (level < 0) {
        __atomic_store_n(&g_level_forced, -1, __ATOMIC_RELAXED);
        return true;
    }
    const int best = detect_level(); // ignores nothing but the environment cap
    if (level != LM_CPU_LEVEL_SCALAR && !(same_ladder(level, best) && level <= best)) return false;
    __atomic_store_n(&g_level_forced, level, __ATOMIC_RELAXED);
    return true;
}

#if defined(LM_X86)
// VNNI and BF16 forms run only at the AVX-512 level.
bool lm_cpu_vnni(void)       { return x86_has(X86_AVX512VNNI) && lm_cpu_level() == LM_CPU_LEVEL_AVX512; }
bool lm_cpu_avx512bf16(void) { return x86_has(X86_AVX512BF16) && lm_cpu_level() == LM_CPU_LEVEL_AVX512; }
static int g_slow_gather_forced = -1;
void lm_cpu_force_slow_gather(int v) { __atomic_store_n(&g_slow_gather_forced, v < 0 ? -1 : v != 0, __ATOMIC_RELAXED); }
bool lm_cpu_slow_gather(void) {
    const int f = __atomic_load_n(&g_slow_gather_forced, __ATOMIC_RELAXED);
    if (f >= 0) return f != 0;
    static int cache; // 1 yes, -1 no, 0 not asked yet (as x86_has)
    int h = __atomic_load_n(&cache, __ATOMIC_RELAXED);
    if (h == 0) {
        unsigned a, b, c, d;
        // leaf 0: the vendor string in EBX, EDX, ECX ("Auth" "enti" "cAMD")
        const bool amd = __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;
        h = amd ? 1 : -1;
        __atomic_store_n(&cache, h, __ATOMIC_RELAXED);
    }
    return h > 0;
}
#else
bool lm_cpu_vnni(void) { return false; }
bool lm_cpu_avx512bf16(void) { return false; }
bool lm_cpu_slow_gather(void) { return false; }
void lm_cpu_force_slow_gather(int v) { (void) v; }
#endif

#if defined(LM_X86)
int lm_ggml_cpu_has_sse3       (void) { return x86_has(X86_SSE3); }
int lm_ggml_cpu_has_ssse3      (void) { return x86_has(X86_SSSE3); }
int lm_ggml_cpu_has_avx        (void) { return x86_has(X86_AVX); }
int lm_ggml_cpu_has_avx_vnni   (void) { return x86_has(X86_AVX_VNNI); }
int lm_ggml_cpu_has_avx2       (void) { return x86_has(X86_AVX2); }
int lm_ggml_cpu_has_f16c       (void) { return x86_has(X86_F16C); }
int lm_ggml_cpu_has_fma        (void) { return x86_has(X86_FMA); }
int lm_ggml_cpu_has_avx512     (void) { return x86_has(X86_AVX512F); }
int lm_ggml_cpu_has_avx512_vbmi(void) { return x86_has(X86_AVX512VBMI); }
int lm_ggml_cpu_has_avx512_vnni(void) { return x86_has(X86_AVX512VNNI); }
int lm_ggml_cpu_has_avx512_bf16(void) { return x86_has(X86_AVX512BF16); }
#else
int lm_ggml_cpu_has_sse3       (void) { return 0; }
int lm_ggml_cpu_has_ssse3      (void) { return 0; }
int lm_ggml_cpu_has_avx        (void) { return 0; }
int lm_ggml_cpu_has_avx_vnni   (void) { return 0; }
int lm_ggml_cpu_has_avx2       (void) { return 0; }
int lm_ggml_cpu_has_f16c       (void) { return 0; }
int lm_ggml_cpu_has_fma        (void) { return 0; }
int lm_ggml_cpu_has_avx512     (void) { return 0; }
int lm_ggml_cpu_has_avx512_vbmi(void) { return 0; }
int lm_ggml_cpu_has_avx512_vnni(void) { return 0; }
int lm_ggml_cpu_has_avx512_bf16(void) { return 0; }
#endif
int lm_ggml_cpu_has_amx_int8(void) { return 0; }
#if defined(LM_ARM64)
int lm_ggml_cpu_has_neon   (void) { return 1; }
int lm_ggml_cpu_has_arm_fma(void) { return 1; }
#else
int lm_ggml_cpu_has_neon   (void) { return 0; }
int lm_ggml_cpu_has_arm_fma(void) { return 0; }
#endif
int lm_ggml_cpu_has_fp16_va    (void) { return 0; }
#if defined(LM_ARM64) && defined(__linux__)
#include <sys/auxv.h>
int lm_ggml_cpu_has_dotprod(void) {
    return (getauxval(AT_HWCAP) & (1ul << 20)) != 0; // HWCAP_ASIMDDP
}
#elif defined(LM_ARM64) && defined(__APPLE__)
#include <sys/sysctl.h>
int lm_ggml_cpu_has_dotprod(void) {
    int v = 0;
    size_t n = sizeof(v);
    if (sysctlbyname("hw.optional.arm.FEAT_DotProd", &v, &n, NULL, 0) == 0) return v != 0;
    return 1; // macOS before 12 does not name the feature; every arm64 Mac has it
}
#else
int lm_ggml_cpu_has_dotprod(void) { return 0; }
#endif
int lm_ggml_cpu_has_matmul_int8(void) { return 0; }
int lm_ggml_cpu_has_sve        (void) { return 0; }
int lm_ggml_cpu_get_sve_cnt    (void) { return 0; }
int lm_ggml_cpu_has_riscv_v    (void) { return 0; }
int lm_ggml_cpu_has_vsx        (void) { return 0; }
int lm_ggml_cpu_has_wasm_simd  (void) { return 0; }
int lm_ggml_cpu_has_llamafile  (void) { return 0; }

