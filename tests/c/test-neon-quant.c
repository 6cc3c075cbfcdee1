// test-neon-quant.c - the arm64 NEON kernels of the quantized matmul path:
//   activation quantizers (q8_0, q8_1, q8_K) bit for bit against the _ref
//     functions, on data full of rounding ties, tied maxima, zeros, tiny
//     and huge values;
//   integer dot kernels (mm_quant_dot_neon) against a double-precision dot
//     of the dequantized operands, and against the scalar kernel where
//     mm-quant.c has one; weights both from the quantizers and from random
//     bytes (every bit pattern, e.g. -128 in q8_0), activations both from the
//     quantizers and raw (including -128); block counts 1 to 8, then random;
//   where the CPU has the dot product extension, the SDOT kernels
//     (mm_quant_dot_neon_dotprod) against the NEON ones bit for bit on the
//     same operands, and the dispatch at both arm64 levels;
//   the i-quants and ternary types (mm-iquant-neon.c): the NEON and SDOT
//     dots against the scalar kernel bit for bit, their GEMM against them
//     per pair for 1 to 64 columns, and the dispatch;
//   the matmul's 8-row kernels (mm_qmv8_neon, _dotprod) and the GEMM entry
//     over them (mm_qgemm_neon, row ranges with tails of 1 to 7) against the
//     per-row kernels of their level, bit for bit.
// Elsewhere than arm64 there is nothing to test and it says so. Run it with
// QEMU_CPU=cortex-a53 (no dotprod) and the default CPU (max) to see both.
// An optional argument (e.g. "q4_K,q6_K") runs only the kernel tests of those types.
//
// build: aarch64-linux-gnu-gcc -std=gnu11 -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-neon-quant.c $(find csrc -name '*.c') -lm
//        qemu-aarch64 -L /usr/aarch64-linux-gnu ./a.out
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "ggml-impl.h"
#include "ggml-common.h"
#include "ggml-quants.h"
#include "mm-kernels.h"
#include "mm-iquant.h"
#include "type-list.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A check, listed whether or not it passed.
static void report(const char * what, int bad, int total) {
    if (!bad) printf("  %-44s ok    %d/%d bad\n", what, bad, total);
    checkf(!bad, " %-44s %d/%d bad", what, bad, total);
}

#if defined(LM_ARM64)

static int g_has_dot; // the dotprod level is available

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (uint32_t) (g_rng >> 32);
}
static float frand(void) { return (float) (rnd() >> 8) / 16777216.0f * 2.0f - 1.0f; } // [-1, 1)

// ---------------------------------------------------------------- fp16 scales by FCVT

// lm_h2f_hw / lm_f2h_hw (the kernels' and quantizers' scale conversions)
// against the software ones: every half; floats at and around every
// rounding boundary (each half's value and the midpoints to its successor,
// one ulp either side) plus random bit patterns. A signaling NaN half comes
// out quiet from FCVT, the one documented difference.
static void test_fp16_hw(void) {
    int bad_h = 0, bad_f = 0, nf = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const float a = lm_h2f_hw((lm_ggml_fp16_t) h), b = lm_ggml_compute_fp16_to_fp32((lm_ggml_fp16_t) h);
        uint32_t ua, ub;
        memcpy(&ua, &a, 4); memcpy(&ub, &b, 4);
        const bool snan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0 && (h & 0x200) == 0;
        bad_h += ua != (snan ? ub | 0x400000u : ub);
        if ((h & 0x7fff) >= 0x7c00) continue;
        // b and the midpoint to the next half up in magnitude (0x7bff: to 65536)
        const float up = (h & 0x7fff) == 0x7bff ? copysignf(65536.0f, b)
                                                : lm_ggml_compute_fp16_to_fp32((lm_ggml_fp16_t) (h + 1));
        const float mid = b + (up - b) / 2; // exact: one more bit than fp16 has
        const float probe[6] = { b, nextafterf(b, up), mid, nextafterf(mid, b), nextafterf(mid, up), nextafterf(up, b) };
        for (int k = 0; k < 6; k++, nf++) bad_f += lm_f2h_hw(probe[k]) != lm_ggml_compute_fp32_to_fp16(probe[k]);
    }
    for (int i = 0; i < 1 << 20; i++, nf++) {
        const uint32_t u = rnd();
        float f;
        memcpy(&f, &u, 4);
        bad_f += lm_f2h_hw(f) != lm_ggml_compute_fp32_to_fp16(f);
    }
    report("fp16 -> fp32 by FCVT = software (sNaN quiet)", bad_h, 65536);
    report("fp32 -> fp16 by FCVT = software", bad_f, nf);
}

// ---------------------------------------------------------------- activation quantizers

// Values that put the reference's rounding on its edges: with a block
// maximum of 127 the scale is 1, so k + 0.5 are exact ties.
static void fill_act_input(float * x, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const uint32_t r = rnd();
        switch (r % 10) {
            case 0: x[i] = (float) ((int) (r >> 8) % 255 - 127) + 0.5f; break;
            case 1: x[i] = (r & 0x100) ? -0.0f : 0.0f; break;
            case 2: x[i] = (r & 0x100) ? 127.0f : -127.0f; break;
            case 3: x[i] = frand() * 1e-38f; break;                  // subnormal-ish
            case 4: x[i] = (float) ((int) (r >> 8) % 255 - 127); break;
            default: x[i] = frand() * (float) (1 << ((r >> 8) % 8));
        }
    }
    // blocks of special shapes, at the start of a 256-block each
    const int64_t nk = n / 256;
    for (int64_t b = 0; b < nk; b++) {
        float * p = x + 256 * b;
        switch (b % 8) {
            case 0: memset(p, 0, 256 * sizeof(float)); break;
            case 1: for (int j = 0; j < 256; j++) p[j] = 1e-30f * (float) (j - 128); break;
            case 2: for (int j = 0; j < 256; j++) p[j] = 1e30f * frand(); break;
            case 3: for (int j = 0; j < 256; j++) p[j] = (j == 255) ? -3.0f : frand(); break; // max last
            case 4: for (int j = 0; j < 256; j++) p[j] = (j % 37 == 5) ? ((j & 1) ? 2.0f : -2.0f) : frand(); break;
            case 5: for (int j = 0; j < 256; j++) p[j] = (float) (j % 7) - 3.0f; break; // ties at small scales
            default: break;
        }
    }
}

static int blocks_differing(const void * a, const void * b, int64_t nb, size_t bsize) {
    int bad = 0;
    for (int64_t i = 0; i < nb; i++) bad += memcmp((const char *) a + i * bsize, (const char *) b + i * bsize, bsize) != 0;
    return bad;
}

static void test_act_quant(void) {
    const int64_t n = 256 * 512;
    float * x = malloc(n * sizeof(float));
    void * a = malloc(n * 2), * b = malloc(n * 2);
    for (int round = 0; round < 4; round++) {
        fill_act_input(x, n);
        memset(a, 0x55, n * 2); memset(b, 0xaa, n * 2);
        lm_quantize_row_q8_0_ref(x, a, n); lm_quantize_row_q8_0_neon(x, b, n / QK8_0);
        int bad0 = blocks_differing(a, b, n / QK8_0, sizeof(block_q8_0));
        memset(a, 0x55, n * 2); memset(b, 0xaa, n * 2);
        lm_quantize_row_q8_1_ref(x, a, n); lm_quantize_row_q8_1_neon(x, b, n / QK8_1);
        int bad1 = blocks_differing(a, b, n / QK8_1, sizeof(block_q8_1));
        memset(a, 0x55, n * 2); memset(b, 0xaa, n * 2);
        lm_quantize_row_q8_K_ref(x, a, n); lm_quantize_row_q8_K_neon(x, b, n / QK_K);
        int badk = blocks_differing(a, b, n / QK_K, sizeof(block_q8_K));
        // and through the dispatching entry points
        memset(b, 0xaa, n * 2);
        lm_quantize_row_q8_K(x, b, n);
        badk += blocks_differing(a, b, n / QK_K, sizeof(block_q8_K));
        char what[64];
        snprintf(what, sizeof(what), "q8_0 quantize neon vs ref (round %d)", round);
        report(what, bad0, (int) (n / QK8_0));
        snprintf(what, sizeof(what), "q8_1 quantize neon vs ref (round %d)", round);
        report(what, bad1, (int) (n / QK8_1));
        snprintf(what, sizeof(what), "q8_K quantize neon vs ref (round %d)", round);
        report(what, badk, (int) (2 * n / QK_K));
    }
    free(x); free(a); free(b);
}

// ---------------------------------------------------------------- dot kernels

// Sets the fp16 scale fields of a block of random bytes to finite values
// (d; and m / dmin where the type has one). mins_only zeroes d instead, so
// that dequantizing gives the min part alone.
static void fix_scales(enum lm_ggml_type t, void * blk, int mins_only) {
    const lm_ggml_half d  = mins_only ? LM_GGML_FP32_TO_FP16(0.0f) : LM_GGML_FP32_TO_FP16(frand() * 0.5f + ((rnd() & 1) ? 0.6f : -0.6f));
    const lm_ggml_half m1 = LM_GGML_FP32_TO_FP16(frand() * 0.3f);
    switch (t) {
        case LM_GGML_TYPE_Q4_0:   ((block_q4_0 *) blk)->d = d; break;
        case LM_GGML_TYPE_Q5_0:   ((block_q5_0 *) blk)->d = d; break;
        case LM_GGML_TYPE_Q8_0:   ((block_q8_0 *) blk)->d = d; break;
        case LM_GGML_TYPE_IQ4_NL: ((block_iq4_nl *) blk)->d = d; break;
        case LM_GGML_TYPE_IQ4_XS: ((block_iq4_xs *) blk)->d = d; break;
        case LM_GGML_TYPE_Q3_K:   ((block_q3_K *) blk)->d = d; break;
        case LM_GGML_TYPE_Q6_K:   ((block_q6_K *) blk)->d = d; break;
        case LM_GGML_TYPE_Q4_1:   ((block_q4_1 *) blk)->d = d; if (!mins_only) ((block_q4_1 *) blk)->m = m1; break;
        case LM_GGML_TYPE_Q5_1:   ((block_q5_1 *) blk)->d = d; if (!mins_only) ((block_q5_1 *) blk)->m = m1; break;
        case LM_GGML_TYPE_Q2_K:   ((block_q2_K *) blk)->d = d; if (!mins_only) ((block_q2_K *) blk)->dmin = m1; break;
        case LM_GGML_TYPE_Q4_K:   ((block_q4_K *) blk)->d = d; if (!mins_only) ((block_q4_K *) blk)->dmin = m1; break;
        case LM_GGML_TYPE_Q5_K:   ((block_q5_K *) blk)->d = d; if (!mins_only) ((block_q5_K *) blk)->dmin = m1; break;
        default: break;
    }
}

static int has_min(enum lm_ggml_type t) {
    return t == LM_GGML_TYPE_Q4_1 || t == LM_GGML_TYPE_Q5_1 || t == LM_GGML_TYPE_Q2_K ||
           t == LM_GGML_TYPE_Q4_K || t == LM_GGML_TYPE_Q5_K;
}

// Raw activation blocks: random quants in [-128, 127] (or all equal to
// fixed, if in that range) and scale, with the sums (q8_1's s, q8_K's bsums)
// made consistent.
static int8_t act_q(int fixed) { return (fixed >= -128 && fixed <= 127) ? (int8_t) fixed : (int8_t) (rnd() >> 24); }

static void raw_act(enum lm_ggml_type vdt, void * y, int64_t nb, int fixed) {
    for (int64_t i = 0; i < nb; i++) {
        if (vdt == LM_GGML_TYPE_Q8_K) {
            block_q8_K * b = (block_q8_K *) y + i;
            b->d = frand() * 0.01f;
            for (int j = 0; j < QK_K; j++) b->qs[j] = act_q(fixed);
            for (int g = 0; g < QK_K / 16; g++) {
                int s = 0;
                for (int j = 0; j < 16; j++) s += b->qs[16 * g + j];
                b->bsums[g] = (int16_t) s;
            }
        } else if (vdt == LM_GGML_TYPE_Q8_1) {
            block_q8_1 * b = (block_q8_1 *) y + i;
            const float d = frand() * 0.01f;
            int s = 0;
            for (int j = 0; j < QK8_1; j++) { b->qs[j] = act_q(fixed); s += b->qs[j]; }
            b->d = LM_GGML_FP32_TO_FP16(d);
            b->s = LM_GGML_FP32_TO_FP16(LM_GGML_FP16_TO_FP32(b->d) * (float) s);
        } else {
            block_q8_0 * b = (block_q8_0 *) y + i;
            b->d = LM_GGML_FP32_TO_FP16(frand() * 0.01f);
            for (int j = 0; j < QK8_0; j++) b->qs[j] = act_q(fixed);
        }
    }
}

// The activation values, and for q8_1 per block the kernel's correction:
// it takes m * s (s rounded to fp16) where the dot has m * d * sum(q).
static void deq_act(enum lm_ggml_type vdt, const void * y, int64_t nb, float * out, double * s_err) {
    for (int64_t i = 0; i < nb; i++) {
        if (vdt == LM_GGML_TYPE_Q8_K) {
            const block_q8_K * b = (const block_q8_K *) y + i;
            for (int j = 0; j < QK_K; j++) out[QK_K * i + j] = b->d * b->qs[j];
        } else if (vdt == LM_GGML_TYPE_Q8_1) {
            const block_q8_1 * b = (const block_q8_1 *) y + i;
            const float d = LM_GGML_FP16_TO_FP32(b->d);
            double sum = 0;
            for (int j = 0; j < QK8_1; j++) { out[QK8_1 * i + j] = d * b->qs[j]; sum += (double) d * b->qs[j]; }
            s_err[i] = LM_GGML_FP16_TO_FP32(b->s) - sum;
        } else {
            const block_q8_0 * b = (const block_q8_0 *) y + i;
            const float d = LM_GGML_FP16_TO_FP32(b->d);
            for (int j = 0; j < QK8_0; j++) out[QK8_0 * i + j] = d * b->qs[j];
        }
    }
}

static float block_min_of(enum lm_ggml_type t, const void * blk) {
    if (t == LM_GGML_TYPE_Q4_1) return LM_GGML_FP16_TO_FP32(((const block_q4_1 *) blk)->m);
    if (t == LM_GGML_TYPE_Q5_1) return LM_GGML_FP16_TO_FP32(((const block_q5_1 *) blk)->m);
    return 0.0f;
}

#define MAX_K (QK_K * 8)

static void test_dot(enum lm_ggml_type t) {
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(t);
    const lm_ggml_vec_dot_t neon = mm_quant_dot_neon(t);
    const lm_ggml_vec_dot_t dot = g_has_dot ? mm_quant_dot_neon_dotprod(t) : NULL;
    const lm_ggml_vec_dot_t dot_pre = g_has_dot ? mm_quant_dot_neon_dotprod_pre(t) : NULL;
    enum lm_ggml_type vdt = LM_GGML_TYPE_COUNT;
    lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
    const lm_ggml_vec_dot_t scalar = mm_quant_dot(t, &vdt);
    enum lm_ggml_type vdt2 = LM_GGML_TYPE_COUNT, vdt3 = LM_GGML_TYPE_COUNT;
    lm_cpu_force_level(LM_CPU_LEVEL_NEON);
    const lm_ggml_vec_dot_t picked = mm_quant_dot(t, &vdt2);
    lm_ggml_from_float_t act = NULL, act_dot = NULL;
    enum lm_ggml_type vdt4 = LM_GGML_TYPE_COUNT, vdt5 = LM_GGML_TYPE_COUNT;
    const lm_ggml_vec_dot_t picked_mm = mm_quant_dot_mm(t, &vdt4, &act); // at NEON: the plain pair
    const lm_ggml_vec_dot_t picked_dot = lm_cpu_force_level(LM_CPU_LEVEL_NEON_DOTPROD) ? mm_quant_dot(t, &vdt3) : NULL;
    const lm_ggml_vec_dot_t picked_dot_mm = g_has_dot ? mm_quant_dot_mm(t, &vdt5, &act_dot) : NULL;
    lm_cpu_force_level(-1);
    if (!scalar) { // no scalar kernel yet: the activation type of the format
        vdt = (tt->blck_size == QK_K) ? LM_GGML_TYPE_Q8_K
            : (t == LM_GGML_TYPE_Q4_1 || t == LM_GGML_TYPE_Q5_1) ? LM_GGML_TYPE_Q8_1 : LM_GGML_TYPE_Q8_0;
    }
    const struct lm_ggml_type_traits * vt = lm_ggml_get_type_traits(vdt);
    const size_t xsize = tt->type_size, ysize = vt->type_size;
    const int bk = (int) tt->blck_size;

    unsigned char * wx = malloc(MAX_K / bk * xsize), * wm = malloc(MAX_K / bk * xsize);
    unsigned char * wy = malloc(MAX_K / vt->blck_size * ysize), * wyp = malloc(MAX_K / vt->blck_size * ysize);
    float * src = malloc(MAX_K * sizeof(float)), * fx = malloc(MAX_K * sizeof(float));
    float * fm = malloc(MAX_K * sizeof(float)), * fy = malloc(MAX_K * sizeof(float));
    double * s_err = calloc(MAX_K / 32, sizeof(double));

    int bad_ref = 0, bad_scalar = 0, bad_dot = 0, bad_pre = 0, trials = 0;
    double worst = 0;
    for (int trial = 0; trial < 400; trial++) {
        const int nb = trial < 8 ? 1 + trial : 1 + (int) (rnd() % (MAX_K / bk));
        const int n = nb * bk;
        const int raw_w = trial % 2, raw_y = (trial / 2) % 2;
        // one trial in 16: constant extreme bytes on both sides (the
        // int16 lane bounds: all -128 in q8_0 against all -128, and so on)
        static const unsigned char ext_w[4] = {0x80, 0xFF, 0x7F, 0x00};
        const int extreme = raw_w && raw_y && (trial / 4) % 4 == 3;
        const int fixed = extreme ? ((trial / 16) % 2 ? -128 : 127) : 1000;
        if (raw_w) {
            for (size_t i = 0; i < (size_t) nb * xsize; i++) wx[i] = extreme ? ext_w[(trial / 32) % 4] : (unsigned char) (rnd() >> 24);
            for (int i = 0; i < nb; i++) fix_scales(t, wx + i * xsize, 0);
        } else {
            const float sc = (float) (1 << (rnd() % 6));
            for (int i = 0; i < n; i++) src[i] = frand() * sc + ((rnd() % 4 == 0) ? 0.5f * sc : 0.0f);
            tt->from_float_ref(src, wx, n);
        }
        if (raw_y) {
            raw_act(vdt, wy, n / vt->blck_size, fixed);
        } else {
            for (int i = 0; i < n; i++) src[i] = frand() * (float) (1 << (rnd() % 4));
            lm_type_from_f32_row(vdt)(src, wy, n);
        }
        tt->to_float(wx, fx, n);
        deq_act(vdt, wy, n / vt->blck_size, fy, s_err);
        // the min part alone bounds the cancellation in dequantized weights
        memset(fm, 0, n * sizeof(float));
        if (has_min(t)) {
            memcpy(wm, wx, (size_t) nb * xsize);
            for (int i = 0; i < nb; i++) fix_scales(t, wm + i * xsize, 1);
            tt->to_float(wm, fm, n);
        }
        double ref = 0, mag = 0;
        for (int i = 0; i < n; i++) {
            ref += (double) fx[i] * fy[i];
            mag += (fabs((double) fx[i]) + fabs((double) fm[i])) * fabs((double) fy[i]);
        }
        if (vdt == LM_GGML_TYPE_Q8_1) {
            for (int i = 0; i < nb; i++) {
                const double m = block_min_of(t, wx + i * xsize);
                ref += m * s_err[i];
                mag += fabs(m * s_err[i]);
            }
        }
        float got = NAN, want = NAN;
        neon(n, &got, 0, wx, 0, wy, 0, 1);
        if (dot) {
            float gd = NAN;
            dot(n, &gd, 0, wx, 0, wy, 0, 1);
            if (memcmp(&gd, &got, sizeof(got)) != 0) {
                if (bad_dot < 3) printf("    %s n=%d raw_w=%d raw_y=%d: dotprod %.9g neon %.9g\n", tt->type_name, n, raw_w, raw_y, gd, got);
                bad_dot++;
            }
            // the matmul's form: activations reordered once, kernel without permutes
            memcpy(wyp, wy, (size_t) (n / vt->blck_size) * ysize);
            mm_act_permute_dotprod(vdt, wyp, n / vt->blck_size);
            gd = NAN;
            dot_pre(n, &gd, 0, wx, 0, wyp, 0, 1);
            if (memcmp(&gd, &got, sizeof(got)) != 0) {
                if (bad_pre < 3) printf("    %s n=%d raw_w=%d raw_y=%d: dotprod (pre) %.9g neon %.9g\n", tt->type_name, n, raw_w, raw_y, gd, got);
                bad_pre++;
            }
        }
        const double tol = 2e-6 * mag + 1e-30;
        const double err = fabs(got - ref);
        if (mag > 0 && err / mag > worst) worst = err / mag;
        if (!(err <= tol)) {
            if (bad_ref < 3) printf("    %s n=%d raw_w=%d raw_y=%d: neon %.9g ref %.9g mag %.3g\n", tt->type_name, n, raw_w, raw_y, got, ref, mag);
            bad_ref++;
        }
        if (scalar) {
            scalar(n, &want, 0, wx, 0, wy, 0, 1);
            if (!(fabs((double) got - want) <= tol)) {
                if (bad_scalar < 3) printf("    %s n=%d: neon %.9g scalar %.9g\n", tt->type_name, n, got, want);
                bad_scalar++;
            }
        }
        trials++;
    }
    char what[96];
    snprintf(what, sizeof(what), "%s dot neon vs dequantized ref (worst %.1e)", tt->type_name, worst);
    report(what, bad_ref, trials);
    if (dot) {
        snprintf(what, sizeof(what), "%s dot dotprod vs neon, bit for bit", tt->type_name);
        report(what, bad_dot, trials);
        snprintf(what, sizeof(what), "%s dot dotprod (lane-order act) vs neon", tt->type_name);
        report(what, bad_pre, trials);
    }
    if (scalar) {
        snprintf(what, sizeof(what), "%s dot neon vs scalar kernel", tt->type_name);
        report(what, bad_scalar, trials);
        snprintf(what, sizeof(what), "%s dispatch picks the neon kernel", tt->type_name);
        report(what, !(picked == neon && vdt2 == vdt && picked_mm == neon && vdt4 == vdt && act == mm_act_quantizer(vdt)), 1);
        if (g_has_dot) {
            snprintf(what, sizeof(what), "%s dispatch picks the dotprod kernel", tt->type_name);
            report(what, !(dot != NULL && picked_dot == dot && vdt3 == vdt && picked_dot_mm == dot_pre && vdt5 == vdt &&
                           act_dot == mm_act_quantizer_dotprod(vdt)), 1);
        }
    } else {
        printf("  %-44s (no scalar kernel in mm-quant.c yet)\n", tt->type_name);
    }
    free(wx); free(wm); free(wy); free(wyp); free(src); free(fx); free(fm); free(fy); free(s_err);
}

// ---------------------------------------------------------------- 8-row kernels

// The matmul's 8 rows x 1 column kernels (mm_qmv8_neon, _dotprod) against
// the per-row kernels of their level, bit for bit: rows from the quantizer
// and raw bytes, scales (and mins) also 0, -0, fp16 subnormals and the
// largest fp16 (whose products overflow to inf and, against a 0 scale, make
// NaN), rows repeated (the matmul's tail), with and without a prefetch
// pointer. Then the GEMM entry (mm_qgemm_neon) over row ranges of 1 to 19
// rows (tails of 1 to 7 after whole groups, or alone) and 1 to 3 columns.
// byte offset of a block's fp16 d (a min, where there is one, follows it)
static size_t d_offset(enum lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_Q2_K: return offsetof(block_q2_K, d);
        case LM_GGML_TYPE_Q3_K: return offsetof(block_q3_K, d);
        case LM_GGML_TYPE_Q6_K: return offsetof(block_q6_K, d);
        default: return 0;
    }
}

static int per_row_differs(lm_ggml_vec_dot_t vd, int n, const void * row, const void * y, float got) {
    float want;
    vd(n, &want, 0, row, 0, y, 0, 1);
    return memcmp(&want, &got, sizeof(float)) != 0;
}

static void test_qmv8(enum lm_ggml_type t) {
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(t);
    const int bk = (int) tt->blck_size; // elements per block
    const enum lm_ggml_type vdt = bk == QK_K ? LM_GGML_TYPE_Q8_K : has_min(t) ? LM_GGML_TYPE_Q8_1 : LM_GGML_TYPE_Q8_0;
    const size_t xs = tt->type_size, ys = lm_ggml_get_type_traits(vdt)->type_size;
    const size_t od = d_offset(t); // the fp16 d, and the min after it where there is one
    const int maxnb = 64, maxr = 19, ncol = 3;
    unsigned char * wx = malloc(maxr * maxnb * xs), * wy = malloc(ncol * maxnb * ys), * wyp = malloc(ncol * maxnb * ys);
    float * src = malloc((size_t) maxnb * bk * sizeof(float));
    static const lm_ggml_fp16_t special[5] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff};
    int bad[2] = {0, 0}, bad_gemm[2] = {0, 0}, trials = 0, gemm_outs = 0;
    for (int trial = 0; trial < 300; trial++, trials++) {
        const int nb = trial < 8 ? 1 + trial : 1 + (int) (rnd() % maxnb);
        const size_t rowb = (size_t) nb * xs;
        for (int r = 0; r < maxr; r++) {
            unsigned char * row = wx + (size_t) r * rowb;
            if (trial % 2) {
                for (size_t i = 0; i < rowb; i++) row[i] = (unsigned char) (rnd() >> 24);
                for (int i = 0; i < nb; i++) fix_scales(t, row + i * xs, 0);
            } else {
                for (int i = 0; i < nb * bk; i++) src[i] = frand() * (float) (1 << (rnd() % 6));
                tt->from_float_ref(src, row, nb * bk);
            }
            if (trial % 3 == 2) { // d, and the min m (the half after d) where there is one
                for (int i = 0; i < nb; i++) {
                    if (rnd() % 4 == 0) memcpy(row + i * xs + od, &special[rnd() % 5], 2);
                    if (has_min(t) && rnd() % 4 == 0) memcpy(row + i * xs + od + 2, &special[rnd() % 5], 2);
                }
            }
        }
        for (int c = 0; c < ncol; c++) {
            unsigned char * y = wy + (size_t) c * nb * ys;
            if (trial % 4 < 2) {
                raw_act(vdt, y, nb, 1000);
            } else {
                for (int i = 0; i < nb * bk; i++) src[i] = frand() * (float) (1 << (rnd() % 4));
                if (vdt == LM_GGML_TYPE_Q8_K)      lm_quantize_row_q8_K_ref(src, (block_q8_K *) y, nb * bk);
                else if (vdt == LM_GGML_TYPE_Q8_1) lm_quantize_row_q8_1_ref(src, (block_q8_1 *) y, nb * bk);
                else                               lm_quantize_row_q8_0_ref(src, (block_q8_0 *) y, nb * bk);
            }
        }
        const char * rows[8];
        for (int r = 0; r < 8; r++) rows[r] = (const char *) wx + (size_t) ((trial % 5 == 4 && r > 4) ? 4 : r) * rowb;
        const char * pf = trial % 2 ? (const char *) wx : NULL;
        memcpy(wyp, wy, (size_t) ncol * nb * ys);
        mm_act_permute_dotprod(vdt, wyp, ncol * nb);
        for (int lv = 0; lv < 1 + g_has_dot; lv++) {
            const mm_qmv8_fn mv = lv ? mm_qmv8_neon_dotprod(t) : mm_qmv8_neon(t);
            const lm_ggml_vec_dot_t vd = lv ? mm_quant_dot_neon_dotprod_pre(t) : mm_quant_dot_neon(t);
            const unsigned char * y = lv ? wyp : wy;
            float out[8];
            mv(nb, rows, y, out, pf);
            for (int r = 0; r < 8; r++) {
                if (per_row_differs(vd, nb * bk, rows[r], y, out[r])) {
                    if (bad[lv] < 3) printf("    %s nb=%d row %d: 8-row %.9g\n", tt->type_name, nb, r, out[r]);
                    bad[lv]++;
                }
            }
            // the GEMM entry: rows r0..r1 of the maxr, every column
            const int r0 = (int) (rnd() % 3), r1 = r0 + 1 + (trial < 19 ? trial % (maxr - r0) : (int) (rnd() % (maxr - r0)));
            float res[3][19];
            const void * ycol[3];
            float * dcol[3];
            for (int c = 0; c < ncol; c++) { ycol[c] = y + (size_t) c * nb * ys; dcol[c] = res[c]; }
            mm_qgemm_neon(t, lv)(nb * bk, (const char *) wx, rowb, r0, r1, ycol, dcol, 1 + trial % ncol, NULL);
            for (int c = 0; c < 1 + trial % ncol; c++) {
                for (int r = r0; r < r1; r++, gemm_outs += !lv) {
                    if (per_row_differs(vd, nb * bk, wx + (size_t) r * rowb, ycol[c], res[c][r])) {
                        if (bad_gemm[lv] < 3) printf("    %s gemm nb=%d rows %d..%d col %d row %d\n", tt->type_name, nb, r0, r1, c, r);
                        bad_gemm[lv]++;
                    }
                }
            }
        }
    }
    char what[96];
    for (int lv = 0; lv < 1 + g_has_dot; lv++) {
        const char * lname = lv ? "dotprod" : "neon";
        snprintf(what, sizeof(what), "%s 8-row kernel = per-row, %s", tt->type_name, lname);
        report(what, bad[lv], 8 * trials);
        snprintf(what, sizeof(what), "%s GEMM (1-19 rows, 1-3 cols) = per-row, %s", tt->type_name, lname);
        report(what, bad_gemm[lv], gemm_outs);
    }
    free(wx); free(wy); free(wyp); free(src);
}

// ---------------------------------------------------------------- i-quants and ternary types
//
// The NEON and the dotprod kernels of mm-iquant-neon.c against the scalar
// kernel (mm_iq_dot_scalar) bit for bit: weights from random bytes (with
// sane fp16 scales) and from the quantizers (with an importance matrix),
// and constant bytes; activations from the q8_K quantizer and raw (every
// byte, -128 included, and constant -128 / 127); 1 to 9 blocks, then up to
// 40. Then the GEMM (mm_iq_qgemm_neon) against the level's per-row kernel
// for every column count 1 to 64 and row ranges of odd starts and lengths,
// and the dispatch (mm_quant_dot, mm_qgemm) at both levels.

// iq1_m keeps its fp16 scale in the top nibbles of its four 16-bit scale words.
static void iq1m_set_scale(block_iq1_m * b, lm_ggml_fp16_t h) {
    for (int i = 0; i < 4; i++) {
        const uint16_t w = (uint16_t) (((b->scales[2 * i] | b->scales[2 * i + 1] << 8) & 0x0FFF) | ((h >> 4 * i) & 0xF) << 12);
        b->scales[2 * i] = (uint8_t) w;
        b->scales[2 * i + 1] = (uint8_t) (w >> 8);
    }
}

// random (or constant) bytes with a finite fp16 scale per block
static void iq_raw_weights(enum lm_ggml_type t, unsigned char * x, int nb, int fixed) {
    const size_t ts = lm_ggml_type_size(t);
    for (size_t i = 0; i < (size_t) nb * ts; i++) x[i] = fixed >= 0 ? (unsigned char) fixed : (unsigned char) (rnd() >> 24);
    for (int i = 0; i < nb; i++) {
        unsigned char * b = x + i * ts;
        const lm_ggml_fp16_t h = LM_GGML_FP32_TO_FP16(frand() * 0.5f + ((rnd() & 1) ? 0.6f : -0.6f));
        switch (t) {
            case LM_GGML_TYPE_IQ1_M: iq1m_set_scale((block_iq1_m *) b, h); break;
            case LM_GGML_TYPE_TQ1_0: memcpy(b + offsetof(block_tq1_0, d), &h, 2); break;
            case LM_GGML_TYPE_TQ2_0: memcpy(b + offsetof(block_tq2_0, d), &h, 2); break;
            default: memcpy(b, &h, 2); break; // d first
        }
    }
}

static void iq_quant_weights(enum lm_ggml_type t, unsigned char * x, int nb, float * src) {
    const int n = nb * QK_K;
    float * imat = malloc((size_t) n * sizeof(float));
    const float sc = (float) (1 << (rnd() % 6));
    for (int i = 0; i < n; i++) {
        src[i] = frand() * sc + ((rnd() % 4 == 0) ? 0.5f * sc : 0.0f);
        imat[i] = 1.0f + 0.9f * frand();
    }
    lm_ggml_quantize_chunk(t, src, x, 0, 1, n, imat);
    free(imat);
}

static void iq_acts(void * y, int nb, int mode, float * src) {
    if (mode == 0) {
        for (int i = 0; i < nb * QK_K; i++) src[i] = frand() * (float) (1 << (rnd() % 4));
        lm_quantize_row_q8_K_ref(src, y, nb * QK_K);
    } else {
        raw_act(LM_GGML_TYPE_Q8_K, y, nb, mode == 1 ? 1000 : mode == 2 ? -128 : 127);
    }
}

static int floats_differ(float a, float b) { return memcmp(&a, &b, sizeof(float)) != 0; }

static void test_iq(enum lm_ggml_type t) {
    const char * name = lm_ggml_type_name(t);
    const size_t ts = lm_ggml_type_size(t), ys = sizeof(block_q8_K);
    const lm_ggml_vec_dot_t scalar = mm_iq_dot_scalar(t), neon = mm_iq_dot_neon(t, false);
    const lm_ggml_vec_dot_t dot = g_has_dot ? mm_iq_dot_neon(t, true) : NULL;
    enum { MAXNB = 20, MAXR = 13, MAXC = MM_QGEMM_MAX_COLS }; // small: the i-quant quantizers are slow under qemu
    unsigned char * wx = malloc((size_t) MAXR * MAXNB * ts), * wy = malloc((size_t) MAXC * MAXNB * ys);
    float * src = malloc((size_t) MAXNB * QK_K * sizeof(float));
    void * scratch = malloc(MM_QGEMM_SCRATCH);
    int bad_neon = 0, bad_dot = 0, trials = 0;
    for (int trial = 0; trial < 120; trial++, trials++) {
        const int nb = trial < 9 ? 1 + trial : 1 + (int) (rnd() % MAXNB);
        const int wmode = trial % 3, ymode = (trial / 3) % 4;
        static const int consts[4] = {0x00, 0xFF, 0x7F, 0x80};
        if (wmode == 0) iq_quant_weights(t, wx, nb, src);
        else iq_raw_weights(t, wx, nb, wmode == 2 && ymode >= 2 ? consts[(trial / 12) % 4] : -1);
        iq_acts(wy, nb, ymode, src);
        float want = NAN, got = NAN;
        scalar(nb * QK_K, &want, 0, wx, 0, wy, 0, 1);
        neon(nb * QK_K, &got, 0, wx, 0, wy, 0, 1);
        if (floats_differ(got, want)) {
            if (bad_neon < 3) printf("    %s nb=%d w%d y%d: neon %.9g scalar %.9g\n", name, nb, wmode, ymode, got, want);
            bad_neon++;
        }
        if (dot) {
            got = NAN;
            dot(nb * QK_K, &got, 0, wx, 0, wy, 0, 1);
            if (floats_differ(got, want)) {
                if (bad_dot < 3) printf("    %s nb=%d w%d y%d: dotprod %.9g scalar %.9g\n", name, nb, wmode, ymode, got, want);
                bad_dot++;
            }
        }
    }
    char what[96];
    snprintf(what, sizeof(what), "%s dot neon = scalar, bit for bit", name);
    report(what, bad_neon, trials);
    if (dot) {
        snprintf(what, sizeof(what), "%s dot dotprod = scalar, bit for bit", name);
        report(what, bad_dot, trials);
    }

    // the GEMM: every column count, rows r0..r1 of MAXR
    int bad_gemm[2] = {0, 0}, outs[2] = {0, 0};
    float * res = malloc((size_t) MAXC * MAXR * sizeof(float));
    for (int ncol = 1; ncol <= MAXC; ncol++) {
        const int nb = 1 + (ncol < 10 ? ncol - 1 : (int) (rnd() % 20));
        for (int r = 0; r < MAXR; r++) {
            if (r % 2) iq_raw_weights(t, wx + (size_t) r * nb * ts, nb, -1);
            else iq_quant_weights(t, wx + (size_t) r * nb * ts, nb, src);
        }
        const void * ycol[MAXC];
        float * dcol[MAXC];
        for (int c = 0; c < ncol; c++) {
            iq_acts(wy + (size_t) c * nb * ys, nb, (c + ncol) % 4, src);
            ycol[c] = wy + (size_t) c * nb * ys;
            dcol[c] = res + (size_t) c * MAXR;
        }
        const int r0 = 1 + 2 * (int) (rnd() % 3), r1 = r0 + 1 + 2 * (int) (rnd() % ((MAXR - r0) / 2));
        for (int lv = 0; lv < 1 + g_has_dot; lv++) {
            const mm_qgemm_fn qg = mm_iq_qgemm_neon(t, lv);
            const lm_ggml_vec_dot_t vd = lv ? dot : neon;
            for (int i = 0; i < MAXC * MAXR; i++) res[i] = NAN;
            qg(nb * QK_K, (const char *) wx, (size_t) nb * ts, r0, r1, ycol, dcol, ncol, scratch);
            for (int c = 0; c < ncol; c++) {
                for (int r = 0; r < MAXR; r++) {
                    if (r < r0 || r >= r1) { // rows outside the range stay untouched
                        bad_gemm[lv] += !isnan(dcol[c][r]);
                        continue;
                    }
                    outs[lv]++;
                    if (per_row_differs(vd, nb * QK_K, wx + (size_t) r * nb * ts, ycol[c], dcol[c][r])) {
                        if (bad_gemm[lv] < 3) printf("    %s gemm nb=%d ncol %d rows %d..%d: col %d row %d\n", name, nb, ncol, r0, r1, c, r);
                        bad_gemm[lv]++;
                    }
                }
            }
        }
    }
    for (int lv = 0; lv < 1 + g_has_dot; lv++) {
        snprintf(what, sizeof(what), "%s GEMM (1-64 cols) = per-row, %s", name, lv ? "dotprod" : "neon");
        report(what, bad_gemm[lv], outs[lv]);
    }

    // dispatch at both levels
    enum lm_ggml_type vdt = LM_GGML_TYPE_COUNT, vdt2 = LM_GGML_TYPE_COUNT;
    lm_cpu_force_level(LM_CPU_LEVEL_NEON);
    int bad_disp = mm_quant_dot(t, &vdt) != neon || vdt != LM_GGML_TYPE_Q8_K || mm_qgemm(t) != mm_iq_qgemm_neon(t, false);
    if (g_has_dot && lm_cpu_force_level(LM_CPU_LEVEL_NEON_DOTPROD)) {
        lm_ggml_from_float_t act = NULL;
        bad_disp += mm_quant_dot(t, &vdt2) != dot || vdt2 != LM_GGML_TYPE_Q8_K || mm_qgemm(t) != mm_iq_qgemm_neon(t, true);
        bad_disp += mm_quant_dot_mm(t, &vdt2, &act) != dot || act != mm_act_quantizer(LM_GGML_TYPE_Q8_K);
    }
    lm_cpu_force_level(-1);
    snprintf(what, sizeof(what), "%s dispatch picks the neon%s kernels", name, g_has_dot ? "/dotprod" : "");
    report(what, bad_disp, 1);
    free(wx); free(wy); free(src); free(scratch); free(res);
}

int main(int argc, char ** argv) {
    const char * only_types = argc > 1 ? argv[1] : NULL;
    printf("dotprod in hwcaps: %d, cpu level: %d\n", lm_ggml_cpu_has_dotprod(), (int) lm_cpu_level());
    if (!lm_cpu_level_is_neon(lm_cpu_level())) {
        printf("cpu level is not neon (LM_GGML_CPU_LEVEL?): nothing tested\n");
        return 0;
    }
    // the dotprod level exactly when the CPU has the extension
    g_has_dot = lm_cpu_force_level(LM_CPU_LEVEL_NEON_DOTPROD);
    lm_cpu_force_level(-1);
    if (getenv("LM_GGML_CPU_LEVEL") == NULL) {
        report("dotprod level iff HWCAP_ASIMDDP", g_has_dot != (lm_ggml_cpu_has_dotprod() != 0), 1);
    }
    if (!g_has_dot) printf("no dot product extension: the dotprod kernels are not tested here\n");
    if (only_types == NULL) {
        test_fp16_hw();
        test_act_quant();
    }
    static const enum lm_ggml_type types[] = {
        LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0,
        LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K,
        LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_XS,
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (!type_selected(only_types, lm_ggml_type_name(types[i]))) continue;
        if (!mm_quant_dot_neon(types[i])) {
            report(lm_ggml_type_name(types[i]), 1, 1);
            continue;
        }
        test_dot(types[i]);
    }
    // the types with 8-row kernels, and at each level a GEMM entry for exactly those
    static const enum lm_ggml_type qmv8_types[] = {
        LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_IQ4_NL,
        LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_XS,
    };
    static const enum lm_ggml_type iq_types[] = {
        LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_IQ2_XS, LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_IQ3_XXS, LM_GGML_TYPE_IQ3_S,
        LM_GGML_TYPE_IQ1_S, LM_GGML_TYPE_IQ1_M, LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0,
    };
    for (size_t i = 0; i < sizeof(iq_types) / sizeof(iq_types[0]); i++) {
        if (!type_selected(only_types, lm_ggml_type_name(iq_types[i]))) continue;
        if (!mm_iq_dot_neon(iq_types[i], false) || !mm_iq_qgemm_neon(iq_types[i], false)) {
            report(lm_ggml_type_name(iq_types[i]), 1, 1);
            continue;
        }
        test_iq(iq_types[i]);
    }
    int n_qmv8 = 0, bad_entry = 0;
    for (size_t i = 0; i < sizeof(qmv8_types) / sizeof(qmv8_types[0]); i++) {
        if (type_selected(only_types, lm_ggml_type_name(qmv8_types[i]))) test_qmv8(qmv8_types[i]);
    }
    for (int ti = 0; ti < LM_GGML_TYPE_COUNT; ti++) {
        const bool has8 = mm_qmv8_neon((enum lm_ggml_type) ti) != NULL;
        n_qmv8 += has8;
        bad_entry += has8 != (mm_qmv8_neon_dotprod((enum lm_ggml_type) ti) != NULL);
        bad_entry += has8 != (mm_qgemm_neon((enum lm_ggml_type) ti, false) != NULL);
        bad_entry += has8 != (mm_qgemm_neon((enum lm_ggml_type) ti, true) != NULL);
    }
    report("8-row kernels and GEMM entries: the same types at both levels",
           bad_entry + (n_qmv8 != (int) (sizeof(qmv8_types) / sizeof(qmv8_types[0]))), 1);
    return check_summary();
}

#else

int main(void) {
    (void) report;
    (void) type_selected;
    printf("not arm64: nothing tested\n");
    return 0;
}

#endif
