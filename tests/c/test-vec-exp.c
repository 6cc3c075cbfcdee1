// test-vec-exp.c - the vector exp of ops-vec.h: lm_v_expf_avx2 and, where
// the CPU has AVX-512, lm_v_expf_avx512, against exp in double precision
// over the whole float range, bit for bit against each other wherever the
// AVX2 result is normal, and at the edges (0, +-inf, NaN, overflow, the
// subnormal range), and lm_v_expf_avx512_as2 bit for bit against
// lm_v_expf_avx2 at every input. Skips, passing, on CPUs without AVX2.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-vec-exp.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "ops-vec.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test-check.h"

#if defined(LM_X86)
LM_TARGET_AVX2 static void exp8(const float * x, float * y) {
    _mm256_storeu_ps(y, lm_v_expf_avx2(_mm256_loadu_ps(x)));
}

LM_TARGET_AVX512 static void exp16(const float * x, float * y) {
    _mm512_storeu_ps(y, lm_v_expf_avx512(_mm512_loadu_ps(x)));
}

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

LM_TARGET_AVX512 static void exp16as2(const float * x, float * y) {
    _mm512_storeu_ps(y, lm_v_expf_avx512_as2(_mm512_loadu_ps(x)));
}

// the sweep, then 2048 floats on either side of each cut of the AVX2 form
// and NaNs with payloads: lm_v_expf_avx512_as2 against lm_v_expf_avx2, bit
// for bit at every input
static int as2_differences(const float * sweep, int n) {
    enum { E = 4 * 2048 + 16 };
    static float x[E];
    int k = 0;
    const float cuts[2] = { LM_EXPF_LO, LM_EXPF_HI };
    for (int c = 0; c < 2; c++) {
        float v = cuts[c], w = cuts[c];
        for (int j = 0; j < 2048; j++) {
            x[k++] = v; v = nextafterf(v, -INFINITY);
            x[k++] = w; w = nextafterf(w, INFINITY);
        }
    }
    const uint32_t nans[4] = { 0x7fc00001u, 0xffc12345u, 0x7f800001u, 0xff812345u }; // quiet and signalling
    for (int j = 0; j < 16; j++) memcpy(&x[k++], &nans[j % 4], sizeof(float));
    int bad = 0;
    float a[16], b[16];
    for (int pass = 0; pass < 2; pass++) {
        const float * xs = pass ? x : sweep;
        const int m = pass ? E : n;
        for (int i = 0; i + 16 <= m; i += 16) {
            exp8(xs + i, a);
            exp8(xs + i + 8, a + 8);
            exp16as2(xs + i, b);
            for (int j = 0; j < 16; j++) {
                if (bits(a[j]) != bits(b[j]) && bad++ < 5) {
                    printf("  x = %.9g (0x%08x): avx2 0x%08x, avx512_as2 0x%08x\n", xs[i + j], bits(xs[i + j]), bits(a[j]), bits(b[j]));
                }
            }
        }
    }
    return bad;
}


// |y - exp(x)| within 4 ulps of the result in the normal range, and within
// one subnormal step (plus the rounding of the result) below it
static bool close_to_exp(float x, float y) {
    const double e = exp((double) x);
    if (e > (double) FLT_MAX) return isinf(y) && y > 0;
    if (e < (double) FLT_MIN) return fabs((double) y - e) <= 1.5 * 1.401298464324817e-45;
    return fabs((double) y - e) <= 4.0 * e * FLT_EPSILON;
}
#endif

int main(void) {
#if defined(LM_X86)
    const bool has512 = lm_cpu_level() >= LM_CPU_LEVEL_AVX512;
    if (lm_cpu_level() < LM_CPU_LEVEL_AVX2) {
        printf("SKIP: no AVX2: nothing to test\n");
        return 0;
    }
    // a sweep over [-110, 110] in steps that hit no value twice, then the edges
    enum { N = 16 * 8192 };
    static float x[N + 16], y8[N + 16], y16[N + 16];
    for (int i = 0; i < N; i++) x[i] = -110.0f + 220.0f * (float) i / (float) N + 1e-4f * (float)(i % 7);
    const float edges[16] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 88.7f,
                              88.73f, 89.0f, 1000.0f, -87.3f, -87.4f, -100.0f, -103.9f, -200.0f };
    memcpy(x + N, edges, sizeof edges);

    int bad_avx2 = 0, bad_512 = 0, bad_same = 0;
    for (int i = 0; i < N + 16; i += 16) {
        exp8(x + i, y8 + i);
        exp8(x + i + 8, y8 + i + 8);
        if (has512) exp16(x + i, y16 + i);
    }
    for (int i = 0; i < N + 16; i++) {
        const float xi = x[i];
        if (isnan(xi)) {
            if (!isnan(y8[i])) bad_avx2++;
            if (has512 && !isnan(y16[i])) bad_512++;
            continue;
        }
        // the AVX2 form gives 0 below the normal range
        const bool normal = exp((double) xi) >= (double) FLT_MIN;
        if (normal ? !close_to_exp(xi, y8[i]) : y8[i] != 0.0f) {
            if (bad_avx2++ < 5) printf("  avx2: exp(%.9g) = %.9g\n", xi, y8[i]);
        }
        if (!has512) continue;
        if (!close_to_exp(xi, y16[i])) {
            if (bad_512++ < 5) printf("  avx512: exp(%.9g) = %.9g\n", xi, y16[i]);
        }
        if (normal && bits(y8[i]) != bits(y16[i])) {
            if (bad_same++ < 5) printf("  x = %.9g: avx2 %.9g, avx512 %.9g\n", xi, y8[i], y16[i]);
        }
    }
    CHECKF(bad_avx2 == 0, "lm_v_expf_avx2 within bounds (%d bad)", bad_avx2);
    CHECKF(y8[N] == 1.0f && y8[N + 3] == 0.0f && isinf(y8[N + 2]), "lm_v_expf_avx2: exp(0) = 1, exp(-inf) = 0, exp(inf) = inf");
    if (has512) {
        CHECKF(bad_512 == 0, "lm_v_expf_avx512 within bounds (%d bad)", bad_512);
        CHECKF(bad_same == 0, "lm_v_expf_avx512 = lm_v_expf_avx2 bit for bit where the result is normal (%d differ)", bad_same);
        CHECKF(y16[N] == 1.0f && y16[N + 3] == 0.0f && isinf(y16[N + 2]) && isinf(y16[N + 10]),
              "lm_v_expf_avx512: exp(0) = 1, exp(-inf) = 0, exp(inf) = exp(1000) = inf");
        CHECKF(y16[N + 13] > 0.0f && y16[N + 13] < FLT_MIN, "lm_v_expf_avx512: exp(-100) is subnormal");
        const int d = as2_differences(x, N + 16);
        CHECKF(d == 0, "lm_v_expf_avx512_as2 = lm_v_expf_avx2 bit for bit everywhere (%d differ)", d);
    } else {
        printf("no AVX-512 here: lm_v_expf_avx512 not run\n");
    }
    return check_summary();
#else
    printf("SKIP: not x86-64\n");
    return 0;
#endif
}
