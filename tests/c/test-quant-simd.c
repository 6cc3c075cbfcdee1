// test-quant-simd.c - every weight quantizer at the best SIMD level of this
// CPU against the same quantizer forced to the scalar level, byte for byte,
// on rows built to hit the corners of the scale searches: ties (integer and
// half-integer values, repeated maxima of either sign), signed zeros, all-zero
// and constant groups, sparse rows, tiny and huge magnitudes, and rows mixing
// all of these per 16 values. Modes: from_float_ref row by row, and
// lm_ggml_quantize_chunk without and with importance matrices (one of them
// with zero weights where the type allows it).
//
// The scalar level is the one checked against the reference's parity data
// (test-quants, test-iquants), so equality here extends that parity to the
// SIMD paths over many more inputs. On a CPU without SIMD both runs take the
// scalar path and the test is trivially true.
//
//   cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-quant-simd.c $(find csrc -name '*.c') -lm -o /tmp/test-quant-simd
//   /tmp/test-quant-simd [rows]
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "test-check.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng = 0x9E3779B97F4A7C15ull;

static double urand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double) (rng >> 11) * (1.0 / 9007199254740992.0);
}

static double gauss(void) {
    const double u1 = urand() + 1e-300, u2 = urand();
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

enum { N_KINDS = 14 };

// One value of kind k; c is the group's constant or scale.
static float value(int k, int j, float c) {
    switch (k) {
        case 0:  return (float) gauss();
        case 1:  return (float) (2 * urand() - 1);
        case 2:  return (float) (urand() < 0.02 ? 50 * gauss() : gauss());   // outliers
        case 3:  return 0.0f;
        case 4:  return c;                                                   // constant
        case 5:  return (float) gauss() * c;                                 // tiny or huge scale
        case 6:  return (float) fabs(gauss());                               // all positive
        case 7:  return (j & 1) ? (float) gauss() : -(float) fabs(gauss());
        case 8:  return (float) ((int) (urand() * 17) - 8) * c;              // integers: ties
        case 9:  return urand() < 0.33 ? -c : urand() < 0.5 ? 0.0f : c;      // three values
        case 10: return urand() < 0.9 ? 0.0f : (float) gauss();              // sparse
        case 11: return urand() < 0.5 ? (urand() < 0.5 ? -0.0f : 0.0f) : (float) ((int) (urand() * 5) - 2) * 0.25f;
        case 12: return (float) ((int) (urand() * 9) - 4) * 0.5f + (urand() < 0.5 ? 0.0f : 0.25f);
        default: return urand() < 0.5 ? c : -c;                              // tied maxima
    }
}

static void fill(float * x, int nrows, int npr) {
    for (int r = 0; r < nrows; ++r) {
        const int kind = (int) (urand() * (N_KINDS + 2)); // the last two: mixed per 16 values
        const float c = (float) gauss();
        float * xr = x + (size_t) r * npr;
        for (int b = 0; b < npr; b += 16) {
            int k = kind;
            float cc = c;
            if (kind >= N_KINDS) {
                k = (int) (urand() * N_KINDS);
                cc = (float) gauss();
            }
            if (k == 5) cc = (float) pow(10.0, (2 * urand() - 1) * 30);
            if (kind == N_KINDS + 1 && urand() < 0.3) cc *= 1e-20f;
            for (int j = 0; j < 16; ++j) xr[b + j] = value(k, b + j, cc);
        }
    }
}

static void quantize(enum lm_ggml_type type, int mode, const float * x, int nrows, int npr, const float * im, unsigned char * q) {
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(type);
    const size_t rsz = lm_ggml_row_size(type, npr);
    if (mode == 0) {
        for (int r = 0; r < nrows; ++r) tt->from_float_ref(x + (size_t) r * npr, q + r * rsz, npr);
    } else {
        lm_ggml_quantize_chunk(type, x, q, 0, nrows, npr, mode == 1 ? NULL : im + (size_t) (mode - 2) * npr);
    }
}

// Types whose quantizers cannot take zero importance weights (the reference aborts).
static int needs_positive_weights(enum lm_ggml_type t) {
    return t == LM_GGML_TYPE_IQ2_XXS || t == LM_GGML_TYPE_IQ2_XS || t == LM_GGML_TYPE_IQ1_S || t == LM_GGML_TYPE_IQ1_M;
}

static void test_type(enum lm_ggml_type type, const float * x, int nrows, int npr, const float * im) {
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(type);
    const size_t bytes = lm_ggml_row_size(type, npr) * (size_t) nrows;
    unsigned char * a = malloc(bytes);
    unsigned char * b = malloc(bytes);
    static const char * names[] = {"from_float_ref", "chunk", "chunk imatrix", "chunk imatrix with zeros", "chunk imatrix ones"};
    for (int mode = 0; mode < 5; ++mode) {
        if (mode == 0 && !tt->from_float_ref) continue;
        if (mode == 1 && lm_ggml_quantize_requires_imatrix(type)) continue;
        if (mode == 3 && needs_positive_weights(type)) continue;
        memset(a, 0x55, bytes);
        memset(b, 0xaa, bytes);
        lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
        quantize(type, mode, x, nrows, npr, im, a);
        lm_cpu_force_level(-1);
        quantize(type, mode, x, nrows, npr, im, b);
        int bad = 0;
        for (size_t i = 0; i < bytes; i += tt->type_size) bad += memcmp(a + i, b + i, tt->type_size) != 0;
        if (!bad) printf("  %-8s %-26s ok    %d/%zu blocks differ\n", tt->type_name, names[mode], bad, bytes / tt->type_size);
        checkf(!bad, " %-8s %-26s %d/%zu blocks differ", tt->type_name, names[mode], bad, bytes / tt->type_size);
    }
    free(a);
    free(b);
}

// Cold start from several threads at once: the lattice tables are built by
// whichever thread comes first, the others wait for them; all must get the
// bytes of a warm single-threaded run.
enum { N_THREADS = 4 };

struct cold_job {
    enum lm_ggml_type type;
    const float * x, * im;
    int nrows, npr;
    unsigned char * out;
};

static void * cold_run(void * p) {
    const struct cold_job * j = p;
    lm_ggml_quantize_chunk(j->type, j->x, j->out, 0, j->nrows, j->npr, j->im);
    return NULL;
}

static void test_cold_start(const float * x, const float * im) {
    static const enum lm_ggml_type types[] = {LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_IQ3_S, LM_GGML_TYPE_IQ1_S};
    const int nrows = 4, npr = 512;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
        const size_t bytes = lm_ggml_row_size(types[t], npr) * (size_t) nrows;
        unsigned char * want = malloc(bytes);
        unsigned char * got[N_THREADS];
        lm_ggml_quantize_chunk(types[t], x, want, 0, nrows, npr, im);
        lm_ggml_quantize_free();
        pthread_t th[N_THREADS];
        struct cold_job jobs[N_THREADS];
        for (int i = 0; i < N_THREADS; ++i) {
            got[i] = malloc(bytes);
            jobs[i] = (struct cold_job) {types[t], x, im, nrows, npr, got[i]};
            pthread_create(&th[i], NULL, cold_run, &jobs[i]);
        }
        int ok = 1;
        for (int i = 0; i < N_THREADS; ++i) {
            pthread_join(th[i], NULL);
            ok &= memcmp(want, got[i], bytes) == 0;
            free(got[i]);
        }
        free(want);
        if (ok) printf("  %-8s %-26s ok\n", lm_ggml_type_name(types[t]), "cold start, 4 threads");
        checkf(ok, " %-8s %-26s", lm_ggml_type_name(types[t]), "cold start, 4 threads");
    }
}

int main(int argc, char ** argv) {
    const int nrows = argc > 1 ? atoi(argv[1]) : 48;
    const int npr = 512;
    lm_ggml_cpu_init();
    float * x = malloc(sizeof(float) * (size_t) nrows * npr);
    float * im = malloc(sizeof(float) * 3 * npr);
    fill(x, nrows, npr);
    for (int i = 0; i < npr; ++i) {
        im[i] = (float) (0.01 + 4 * urand() * urand());
        im[npr + i] = urand() < 0.1 ? 0.0f : (float) urand();
        im[2 * npr + i] = 1.0f;
    }
    static const enum lm_ggml_type types[] = {
        LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0,
        LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K,
        LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0, LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_IQ3_S,
        LM_GGML_TYPE_IQ3_XXS, LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_IQ2_XS, LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_IQ1_S,
        LM_GGML_TYPE_IQ1_M,
    };
    printf("best level %d vs scalar, %d rows of %d\n", (int) lm_cpu_level(), nrows, npr);
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) test_type(types[t], x, nrows, npr, im);
    // a row of 96 values: legacy types in batches that do not fill the vectors
    static const enum lm_ggml_type legacy[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                               LM_GGML_TYPE_IQ4_NL};
    for (size_t t = 0; t < sizeof(legacy) / sizeof(legacy[0]); ++t) test_type(legacy[t], x, nrows, 96, im);
    test_cold_start(x, im);
    free(x);
    free(im);
    return check_summary();
}
