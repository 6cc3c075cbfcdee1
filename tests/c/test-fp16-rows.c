// test-fp16-rows.c - the fp16 and bf16 row converters at every SIMD level the
// CPU has give the bits of the scalar definitions: every fp16 and bf16
// pattern, f32 inputs around every rounding boundary (halfway cases, the
// fp16 subnormal and overflow ranges, infinities, NaNs), row lengths with
// every tail length of the vector widths, and a row long enough for the
// streaming path.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-fp16-rows.c $(find csrc -name '*.c') -lm
// usage: test-fp16-rows [level]  (0 scalar, 1 AVX2, 2 AVX-512, 3 NEON, 4 NEON with dotprod; default all)
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "test-check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

// Widened NaNs: F16C (AVX2 and AVX-512 levels) quiets a signaling fp16 NaN,
// the scalar definition keeps its bits; both are NaNs of the same sign, which
// is what the format defines. Everything else must match bit for bit.
static bool same_f32(float a, float b) {
    const uint32_t ua = f2u(a), ub = f2u(b);
    if ((ua & 0x7fffffffu) > 0x7f800000u && (ub & 0x7fffffffu) > 0x7f800000u) return (ua >> 31) == (ub >> 31);
    return ua == ub;
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd32(void) {
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 32);
}

// f32 patterns where a conversion can go wrong: for every f32 exponent, the
// mantissas next to the fp16 and bf16 rounding points (halfway, just above
// and below, odd and even neighbours), plus random ones; both signs.
static int64_t make_f32(uint32_t * u, int64_t cap) {
    int64_t n = 0;
    static const uint32_t fp16_tails[] = { 0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x3001, 0x17ff };
    static const uint32_t bf16_tails[] = { 0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x18000, 0x17fff, 0x40 };
    for (uint32_t e = 0; e < 256; e++) {
        for (int s = 0; s < 2; s++) {
            for (int j = 0; j < 24 && n < cap; j++) {
                const uint32_t hi = j < 4 ? (uint32_t) j : (rnd32() & 0x7fffff);
                uint32_t m;
                if (j % 2 == 0) m = (hi & ~0x1fffu) | fp16_tails[(j / 2) % 10];
                else            m = (hi & ~0x1ffffu) | bf16_tails[(j / 2) % 9];
                u[n++] = ((uint32_t) s << 31) | (e << 23) | (m & 0x7fffff);
            }
        }
    }
    while (n < cap) u[n++] = rnd32();
    return n;
}

static void check_bits(bool ok, const char * what, int level, int64_t n, int64_t i, uint32_t in, uint32_t got, uint32_t want) {
    checkf(ok, "%s level %d n=%lld i=%lld: input 0x%08x gives 0x%08x, scalar 0x%08x", what, level, (long long) n,
           (long long) i, in, got, want);
}

// Each row converter over x[0..n) at this level against the same at the scalar
// level (bits), starting at offset off of the buffers (unaligned rows).
static void test_rows(int level, const uint32_t * src, int64_t n, int64_t off) {
    float * x = malloc((size_t)(n + off) * 4), * y = malloc((size_t)(n + off) * 4), * yr = malloc((size_t)(n + off) * 4);
    lm_ggml_fp16_t * h = malloc((size_t)(n + off) * 2), * hr = malloc((size_t)(n + off) * 2);
    lm_ggml_bf16_t * b = malloc((size_t)(n + off) * 2), * br = malloc((size_t)(n + off) * 2);
    memcpy(x + off, src, (size_t) n * 4);
    x += off; y += off; yr += off; h += off; hr += off; b += off; br += off;

    lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
    lm_ggml_fp32_to_fp16_row(x, hr, n);
    lm_ggml_fp32_to_bf16_row(x, br, n);
    lm_cpu_force_level(level);
    lm_ggml_fp32_to_fp16_row(x, h, n);
    lm_ggml_fp32_to_bf16_row(x, b, n);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; i++) {
        const bool ok = h[i] == hr[i];
        check_bits(ok, "fp32_to_fp16_row", level, n, i, f2u(x[i]), h[i], hr[i]);
        bad += !ok;
    }
    for (int64_t i = 0; i < n && bad < 6; i++) {
        const bool ok = b[i].bits == br[i].bits;
        check_bits(ok, "fp32_to_bf16_row", level, n, i, f2u(x[i]), b[i].bits, br[i].bits);
        bad += !ok;
    }
    // back to f32 from the scalar level's halves (all levels read the same input)
    lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
    lm_ggml_fp16_to_fp32_row(hr, yr, n);
    lm_cpu_force_level(level);
    lm_ggml_fp16_to_fp32_row(hr, y, n);
    for (int64_t i = 0; i < n && bad < 9; i++) {
        const bool ok = same_f32(y[i], yr[i]);
        check_bits(ok, "fp16_to_fp32_row", level, n, i, hr[i], f2u(y[i]), f2u(yr[i]));
        bad += !ok;
    }
    lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
    lm_ggml_bf16_to_fp32_row(br, yr, n);
    lm_cpu_force_level(level);
    lm_ggml_bf16_to_fp32_row(br, y, n);
    for (int64_t i = 0; i < n && bad < 12; i++) {
        const bool ok = same_f32(y[i], yr[i]);
        check_bits(ok, "bf16_to_fp32_row", level, n, i, br[i].bits, f2u(y[i]), f2u(yr[i]));
        bad += !ok;
    }
    free(x - off); free(y - off); free(yr - off); free(h - off); free(hr - off); free(b - off); free(br - off);
}

// Every 16-bit pattern through both widening converters.
static void test_all_halves(int level) {
    const int64_t n = 65536;
    lm_ggml_fp16_t * h = malloc(n * 2);
    lm_ggml_bf16_t * b = malloc(n * 2);
    float * y = malloc(n * 4), * yr = malloc(n * 4);
    for (int64_t i = 0; i < n; i++) { h[i] = (lm_ggml_fp16_t) i; b[i].bits = (uint16_t) i; }
    int bad = 0;
    lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
    lm_ggml_fp16_to_fp32_row(h, yr, n);
    lm_cpu_force_level(level);
    lm_ggml_fp16_to_fp32_row(h, y, n);
    for (int64_t i = 0; i < n && bad < 3; i++) {
        const bool ok = same_f32(y[i], yr[i]);
        check_bits(ok, "fp16_to_fp32_row (all patterns)", level, n, i, (uint32_t) i, f2u(y[i]), f2u(yr[i]));
        bad += !ok;
    }
    lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
    lm_ggml_bf16_to_fp32_row(b, yr, n);
    lm_cpu_force_level(level);
    lm_ggml_bf16_to_fp32_row(b, y, n);
    for (int64_t i = 0; i < n && bad < 6; i++) {
        const bool ok = same_f32(y[i], yr[i]);
        check_bits(ok, "bf16_to_fp32_row (all patterns)", level, n, i, (uint32_t) i, f2u(y[i]), f2u(yr[i]));
        bad += !ok;
    }
    free(h); free(b); free(y); free(yr);
}

int main(int argc, char ** argv) {
    g_check_max_shown = 20;
    setvbuf(stdout, NULL, _IOLBF, 0);
    const int only_level = argc > 1 ? atoi(argv[1]) : -1;
    lm_ggml_cpu_init();
    const int64_t cap = 16384;
    uint32_t * src = malloc(cap * 4);
    const int64_t n = make_f32(src, cap);
    // a row long enough for the streaming path, whose threshold is lowered to
    // its minimum to keep the test small (fp16 output bytes, f32 input 2x)
    const int64_t old_min = lm_set_stream_min_bytes(0);
    const int64_t nlong = lm_stream_min_bytes() + 77;
    uint32_t * lsrc = malloc((size_t) nlong * 4);
    for (int64_t i = 0; i < nlong; i++) lsrc[i] = src[i % n] ^ (uint32_t)(i / n);
    for (int level = 0; level <= 4; level++) {
        if (only_level >= 0 && level != only_level) continue;
        if (!lm_cpu_force_level(level)) { printf("level %d not available here: skipped\n", level); continue; }
        const int before = g_fail;
        test_all_halves(level);
        for (int64_t len = 0; len <= 70; len++) test_rows(level, src + len * 13, len, len % 3);
        test_rows(level, src, n, 0);
        test_rows(level, src, n - 5, 1);
        test_rows(level, lsrc, nlong, 0);
        printf("level %d: %s\n", level, g_fail == before ? "ok" : "FAILED");
    }
    lm_cpu_force_level(-1);
    lm_set_stream_min_bytes(old_min);
    free(src); free(lsrc);
    return check_summary();
}
