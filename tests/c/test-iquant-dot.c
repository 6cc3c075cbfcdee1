// test-iquant-dot.c - the integer dots of the i-quants and the ternary types
// against q8_K (mm-iquant.h) at every SIMD level the CPU has: (a) each
// level's kernel gives the scalar kernel's bits; (b) the level's GEMM gives
// its dot's bits for every pair, 1..64 columns, row ranges with odd starts;
// (c) the scalar dot against a double-precision dot of the dequantized
// weights and activations. Weights from random bytes (with sane fp16
// scales) and from the quantizers (with an importance matrix); activations
// from the q8_K quantizer, including rows full of -128. At the AVX-512
// level both kernel sets run: its own forms (CPUs with fast gathers) and the
// AVX2 ones compiled for it (lm_cpu_slow_gather).
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-iquant-dot.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "ggml-common.h"
#include "mm-kernels.h"
#include "test-check.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static uint64_t next64(void) {
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return g_rng;
}
static float frand(void) { // uniform [-1, 1)
    return (float)((next64() >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static const struct { enum lm_ggml_type t; ptrdiff_t d_off; } g_types[] = {
    { LM_GGML_TYPE_IQ2_XXS, offsetof(block_iq2_xxs, d) },
    { LM_GGML_TYPE_IQ2_XS,  offsetof(block_iq2_xs, d) },
    { LM_GGML_TYPE_IQ2_S,   offsetof(block_iq2_s, d) },
    { LM_GGML_TYPE_IQ3_XXS, offsetof(block_iq3_xxs, d) },
    { LM_GGML_TYPE_IQ3_S,   offsetof(block_iq3_s, d) },
    { LM_GGML_TYPE_IQ1_S,   offsetof(block_iq1_s, d) },
    { LM_GGML_TYPE_IQ1_M,   -1 }, // the fp16 scale is spread over the scales field
    { LM_GGML_TYPE_TQ1_0,   offsetof(block_tq1_0, d) },
    { LM_GGML_TYPE_TQ2_0,   offsetof(block_tq2_0, d) },
};
#define NTYPES (int)(sizeof(g_types) / sizeof(g_types[0]))

static void iq1m_set_scale(block_iq1_m * b, lm_ggml_fp16_t h) {
    for (int i = 0; i < 4; i++) {
        const uint16_t w = (uint16_t)((b->scales[2 * i] | b->scales[2 * i + 1] << 8) & 0x0FFF) | (uint16_t)(((h >> 4 * i) & 0xF) << 12);
        b->scales[2 * i] = (uint8_t) w;
        b->scales[2 * i + 1] = (uint8_t)(w >> 8);
    }
}

// nrows rows of nblk blocks of type g_types[ti]
static void make_weights(int ti, int64_t nrows, int64_t nblk, bool random_bytes, uint8_t * x) {
    const enum lm_ggml_type t = g_types[ti].t;
    const size_t ts = lm_ggml_type_size(t);
    const int64_t K = nblk * QK_K, nb = nrows * nblk;
    if (random_bytes) {
        for (size_t i = 0; i < (size_t) nb * ts; i++) x[i] = (uint8_t)(next64() >> 40);
        for (int64_t ib = 0; ib < nb; ib++) {
            const lm_ggml_fp16_t h = LM_GGML_FP32_TO_FP16(0.01f + 0.02f * (frand() + 1.0f));
            if (g_types[ti].d_off >= 0) memcpy(x + ib * ts + g_types[ti].d_off, &h, sizeof(h));
            else iq1m_set_scale((block_iq1_m *)(x + ib * ts), h);
        }
        return;
    }
    float * src = malloc((size_t)(nrows * K) * sizeof(float)), * imat = malloc((size_t) K * sizeof(float));
    for (int64_t i = 0; i < nrows * K; i++) src[i] = frand() * (1.0f + 3.0f * (i % 97 == 0));
    for (int64_t i = 0; i < K; i++) imat[i] = 0.25f + frand() * frand() + 1.0f;
    lm_ggml_quantize_chunk(t, src, x, 0, nrows, K, imat);
    free(src);
    free(imat);
}

// ncols activation columns of K: kind 0 random, 1 many elements at the
// block's largest magnitude (they all quantize to -128 or 127), 2 large
// values with one negative maximum per block
static void make_acts(lm_ggml_from_float_t q, int64_t K, int ncols, int kind, void * y, size_t ys) {
    float * f = malloc((size_t) K * sizeof(float));
    for (int c = 0; c < ncols; c++) {
        const int k = (kind + c) % 3;
        for (int64_t i = 0; i < K; i++) {
            if (k == 0) f[i] = frand();
            else if (k == 1) f[i] = frand() < 0.3f ? 1.0f : (frand() < 0.5f ? -1.0f : frand());
            else f[i] = (i % QK_K == 17) ? -1e3f : 900.0f * frand();
        }
        q(f, (char *) y + c * ys, K);
    }
    free(f);
}

static bool same_bits(float a, float b) { return memcmp(&a, &b, sizeof(a)) == 0; }

// (c): the scalar dot against a double-precision one
static void check_reference(int ti, lm_ggml_vec_dot_t vd0, const uint8_t * x, const void * y, int64_t nblk, const char * what) {
    const enum lm_ggml_type t = g_types[ti].t;
    const int64_t K = nblk * QK_K;
    float * xf = malloc((size_t) K * sizeof(float));
    lm_ggml_get_type_traits(t)->to_float(x, xf, K);
    const block_q8_K * yb = y;
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < K; i++) {
        const double p = (double) xf[i] * ((double) yb[i / QK_K].d * yb[i / QK_K].qs[i % QK_K]);
        ref += p;
        mag += fabs(p);
    }
    float got;
    vd0((int) K, &got, 0, x, 0, y, 0, 1);
    const double err = fabs(got - ref) / (mag > 0 ? mag : 1);
    checkf(err < 2e-6, "reference %s %s blocks=%lld: %.9g vs %.9g (rel %.3g)", lm_ggml_type_name(t), what, (long long) nblk,
           got, ref, err);
    free(xf);
}

static lm_ggml_vec_dot_t g_scalar[NTYPES];

static void test_type(int ti, int64_t nblk, bool random_bytes, bool all_cols, int level) {
    const enum lm_ggml_type t = g_types[ti].t;
    const char * what = random_bytes ? "random-bytes" : "quantized";
    const int64_t K = nblk * QK_K, nrows = 13;
    const size_t xrs = lm_ggml_row_size(t, K), ys = lm_ggml_row_size(LM_GGML_TYPE_Q8_K, K);
    uint8_t * x = malloc((size_t) nrows * xrs);
    make_weights(ti, nrows, nblk, random_bytes, x);

    // (a) and (c): the level's kernel against the scalar one, standard q8_K activations
    enum lm_ggml_type vdt;
    const lm_ggml_vec_dot_t vd = mm_quant_dot(t, &vdt);
    checkf(vd != NULL && vdt == LM_GGML_TYPE_Q8_K, "%s: no q8_K kernel", lm_ggml_type_name(t));
    if (vd == NULL) { free(x); return; }
    const int nact = 6;
    void * y = malloc((size_t) nact * ys);
    make_acts(mm_act_quantizer(LM_GGML_TYPE_Q8_K), K, nact, (int)(next64() % 3), y, ys);
    for (int c = 0; c < nact; c++)
        for (int64_t r = 0; r < nrows; r++) {
            const uint8_t * xr = x + r * xrs;
            const void * yc = (const char *) y + c * ys;
            float a, b;
            vd((int) K, &a, 0, xr, 0, yc, 0, 1);
            g_scalar[ti]((int) K, &b, 0, xr, 0, yc, 0, 1);
            checkf(same_bits(a, b), "level %d %s %s blocks=%lld row %lld col %d: %.9g, scalar %.9g", level, lm_ggml_type_name(t),
                   what, (long long) nblk, (long long) r, c, a, b);
            if (r < 2) check_reference(ti, g_scalar[ti], xr, yc, nblk, what);
        }
    free(y);

    // (b): the GEMM against the dot of the matmul's pair, per pair
    lm_ggml_from_float_t act;
    const lm_ggml_vec_dot_t vdm = mm_quant_dot_mm(t, &vdt, &act);
    const mm_qgemm_fn qg = mm_qgemm(t);
    if (qg != NULL) {
        const int maxc = MM_QGEMM_MAX_COLS;
        void * yc = malloc((size_t) maxc * ys);
        make_acts(act, K, maxc, (int)(next64() % 3), yc, ys);
        float * out = malloc((size_t) maxc * nrows * sizeof(float)), * want = malloc((size_t) maxc * nrows * sizeof(float));
        for (int c = 0; c < maxc; c++)
            for (int64_t r = 0; r < nrows; r++) vdm((int) K, want + c * nrows + r, 0, x + r * xrs, 0, (char *) yc + c * ys, 0, 1);
        void * scratch = malloc(MM_QGEMM_SCRATCH); // the GEMM aligns its panel itself
        const void * ycol[MM_QGEMM_MAX_COLS];
        float * dcol[MM_QGEMM_MAX_COLS];
        static const int some[] = { 1, 2, 3, 7, 8, 9, 17, 33, 64 };
        const int ncases = all_cols ? maxc : (int)(sizeof(some) / sizeof(some[0]));
        static const int64_t ranges[][2] = { { 0, 13 }, { 1, 13 }, { 3, 12 }, { 5, 6 }, { 7, 13 } };
        int bad = 0;
        for (int k = 0; k < ncases; k++) {
            const int ncol = all_cols ? k + 1 : some[k];
            const int64_t r0 = ranges[k % 5][0], r1 = ranges[k % 5][1];
            // the columns in a shuffled order, to catch a kernel that reads the wrong one
            for (int c = 0; c < ncol; c++) {
                const int src = (c * 7 + k) % maxc;
                ycol[c] = (const char *) yc + src * ys;
                dcol[c] = out + c * nrows;
            }
            for (size_t i = 0; i < (size_t) maxc * nrows; i++) out[i] = NAN;
            qg(K, (const char *) x, xrs, r0, r1, ycol, dcol, ncol, scratch);
            for (int c = 0; c < ncol && bad < 5; c++) {
                const int src = (c * 7 + k) % maxc;
                for (int64_t r = 0; r < nrows; r++) {
                    const bool in = r >= r0 && r < r1;
                    const float w = want[src * nrows + r], g = out[c * nrows + r];
                    const bool ok = in ? same_bits(g, w) : isnan(g);
                    if (!ok) bad++;
                    checkf(ok, "gemm level %d %s %s blocks=%lld ncol=%d rows [%lld,%lld) row %lld col %d: %.9g, dot %.9g", level,
                           lm_ggml_type_name(t), what, (long long) nblk, ncol, (long long) r0, (long long) r1, (long long) r, c, g,
                           in ? w : NAN);
                }
            }
        }
        free(scratch);
        free(out);
        free(want);
        free(yc);
    }
    free(x);
}

// usage: test-iquant-dot [level]   (0 scalar, 1 AVX2, 2 AVX-512, 3 NEON, 4 NEON with dotprod; default all)
int main(int argc, char ** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const int only_level = argc > 1 ? atoi(argv[1]) : -1;
    lm_ggml_cpu_init();
    if (!lm_cpu_force_level(0)) { printf("FAILED: no scalar level\n"); return 1; }
    for (int ti = 0; ti < NTYPES; ti++) {
        enum lm_ggml_type vdt;
        g_scalar[ti] = mm_quant_dot(g_types[ti].t, &vdt);
        checkf(g_scalar[ti] != NULL, "%s: no scalar kernel", lm_ggml_type_name(g_types[ti].t));
        if (g_scalar[ti] == NULL) return 1;
    }
    static const int64_t nblks[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 31 };
    const uint64_t seed = g_rng;
    for (int level = 0; level <= 4; level++) {
        if (only_level >= 0 && level != only_level) continue;
        if (!lm_cpu_force_level(level)) { printf("level %d not available, skipped\n", level); continue; }
        // AVX-512: both of the kernel sets lm_cpu_slow_gather chooses between, on any CPU
        for (int sg = 0; sg <= (level == 2); sg++) {
            if (level == 2) lm_cpu_force_slow_gather(sg);
            g_rng = seed; // every level sees the same data
            for (int ti = 0; ti < NTYPES; ti++)
                for (size_t b = 0; b < sizeof(nblks) / sizeof(nblks[0]); b++) {
                    const bool all_cols = nblks[b] == 1 || nblks[b] == 3 || nblks[b] == 9;
                    test_type(ti, nblks[b], true, all_cols, level);
                    test_type(ti, nblks[b], false, all_cols, level);
                }
            printf("level %d%s done\n", level, level == 2 ? (sg ? " (slow gathers)" : " (fast gathers)") : "");
        }
        lm_cpu_force_slow_gather(-1);
    }
    lm_cpu_force_level(-1);
    return check_summary();
}
