// test-quants.c - parity of the quantized block formats with the reference.
//
// Reads the flat binaries made by quant-json2bin.py from the parity JSON
// (shared/parity/quant/<type>.json) and checks, per type:
//   ref quant     from_float_ref of the input, byte for byte (blocks differing)
//   ref dequant   to_float of the reference's ref_quant, bit for bit
//   imat quant    lm_ggml_quantize_chunk(type, input, dst, 0, 12, 512, imatrix)
//   imat dequant  to_float of the reference's imatrix_quant, bit for bit
// and prints the RMSE against the input of our result and of the reference's.
// With "bench" as an argument it also times quantize/dequantize.
//
// Build (from the project root):
//   python3 tests/c/quant-json2bin.py ../shared/parity/quant /tmp/lm-quant-parity
//   cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-quants.c $(find csrc -name '*.c') -lm -o /tmp/test-quants
//   /tmp/test-quants [/tmp/lm-quant-parity] [bench] [type...]
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-quants.h"
#include "ggml-cpu-impl.h"
#include "ggml-impl.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct field {
    unsigned char * p;
    size_t n;
    int present;
};

struct parity {
    int type, rows, n_per_row;
    struct field input, ref_quant, ref_dequant, imatrix, imat_quant, imat_dequant;
};

static int read_field(FILE * f, struct field * fd) {
    unsigned int n;
    if (fread(&n, 4, 1, f) != 1) return 0;
    if (n == 0xffffffffu) {
        fd->present = 0;
        fd->p = NULL;
        fd->n = 0;
        return 1;
    }
    fd->p = malloc(n ? n : 1);
    fd->n = n;
    fd->present = 1;
    return fread(fd->p, 1, n, f) == n;
}

static int load(const char * path, struct parity * pd) {
    FILE * f = fopen(path, "rb");
    if (!f) return 0;
    int h[3];
    int ok = fread(h, 4, 3, f) == 3;
    pd->type = h[0];
    pd->rows = h[1];
    pd->n_per_row = h[2];
    ok = ok && read_field(f, &pd->input) && read_field(f, &pd->ref_quant) && read_field(f, &pd->ref_dequant) &&
         read_field(f, &pd->imatrix) && read_field(f, &pd->imat_quant) && read_field(f, &pd->imat_dequant);
    fclose(f);
    return ok;
}

static void free_parity(struct parity * pd) {
    free(pd->input.p);
    free(pd->ref_quant.p);
    free(pd->ref_dequant.p);
    free(pd->imatrix.p);
    free(pd->imat_quant.p);
    free(pd->imat_dequant.p);
}

static int blocks_differing(const unsigned char * a, const unsigned char * b, size_t n, size_t bs) {
    int d = 0;
    for (size_t i = 0; i < n; i += bs) d += memcmp(a + i, b + i, bs) != 0;
    return d;
}

// Values whose bits differ; any NaN matches any NaN.
static int floats_differing(const float * a, const float * b, size_t n) {
    int d = 0;
    for (size_t i = 0; i < n; ++i) {
        if (isnan(a[i]) && isnan(b[i])) continue;
        d += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    }
    return d;
}

static double rmse(const float * a, const float * b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
    return sqrt(s / (double) n);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

// A check of a count of differing blocks or values, listed whether or not it
// passed (with the RMSE of both quantizations when e_ours >= 0).
static void check_differ(const char * tname, const char * what, int bad, int total, double e_ours, double e_ref) {
    const bool ok = bad == 0;
    if (e_ours >= 0) {
        if (ok) printf("  %-8s %-13s ok    %4d/%-4d differ   rmse ours %.6g ref %.6g\n", tname, what, bad, total, e_ours, e_ref);
        checkf(ok, " %-8s %-13s %4d/%-4d differ   rmse ours %.6g ref %.6g", tname, what, bad, total, e_ours, e_ref);
    } else {
        if (ok) printf("  %-8s %-13s ok    %4d/%-4d differ\n", tname, what, bad, total);
        checkf(ok, " %-8s %-13s %4d/%-4d differ", tname, what, bad, total);
    }
}

static void test_type(const struct parity * pd) {
    const enum lm_ggml_type type = (enum lm_ggml_type) pd->type;
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(type);
    const size_t n = (size_t) pd->rows * (size_t) pd->n_per_row;
    const size_t qbytes = n / (size_t) tt->blck_size * tt->type_size;
    const size_t nblocks = n / (size_t) tt->blck_size;
    const float * input = (const float *) pd->input.p;
    unsigned char * q = malloc(qbytes);
    float * y = malloc(n * sizeof(float));
    float * yref = malloc(n * sizeof(float));

    if (pd->ref_quant.present) {
        if (!tt->from_float_ref) {
            checkf(false, " %-8s ref quant     no from_float_ref", tt->type_name);
        } else {
            memset(q, 0, qbytes);
            for (int r = 0; r < pd->rows; ++r) {
                tt->from_float_ref(input + (size_t) r * pd->n_per_row, q + (size_t) r * qbytes / pd->rows, pd->n_per_row);
            }
            double e_ours = -1, e_ref = -1;
            if (tt->to_float) {
                tt->to_float(q, y, (int64_t) n);
                e_ours = rmse(y, input, n);
                e_ref  = rmse((const float *) pd->ref_dequant.p, input, n);
            }
            check_differ(tt->type_name, "ref quant", blocks_differing(q, pd->ref_quant.p, qbytes, tt->type_size), (int) nblocks, e_ours, e_ref);
        }
        if (tt->to_float && pd->ref_dequant.present) {
            tt->to_float(pd->ref_quant.p, y, (int64_t) n);
            check_differ(tt->type_name, "ref dequant", floats_differing(y, (const float *) pd->ref_dequant.p, n), (int) n, -1, -1);
        }
    }
    if (pd->imat_quant.present) {
        memset(q, 0, qbytes);
        const size_t got = lm_ggml_quantize_chunk(type, input, q, 0, pd->rows, pd->n_per_row, (const float *) pd->imatrix.p);
        double e_ours = -1, e_ref = -1;
        if (tt->to_float) {
            tt->to_float(q, y, (int64_t) n);
            e_ours = rmse(y, input, n);
            e_ref  = rmse((const float *) pd->imat_dequant.p, input, n);
        }
        int bad = blocks_differing(q, pd->imat_quant.p, qbytes, tt->type_size);
        if (got != qbytes) {
            printf("  %-8s quantize_chunk returned %zu, want %zu\n", tt->type_name, got, qbytes);
            bad++;
        }
        check_differ(tt->type_name, "imat quant", bad, (int) nblocks, e_ours, e_ref);
        if (tt->to_float && pd->imat_dequant.present) {
            tt->to_float(pd->imat_quant.p, y, (int64_t) n);
            check_differ(tt->type_name, "imat dequant", floats_differing(y, (const float *) pd->imat_dequant.p, n), (int) n, -1, -1);
        }
    }
    (void) yref;
    free(q);
    free(y);
    free(yref);
}

// The SIMD dequantizers against the scalar ones on random blocks (random
// bytes, with the fp16 scales kept finite).
static void test_simd_dequant(void) {
    static const enum lm_ggml_type types[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                              LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K,
                                              LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0};
    const int64_t n = 256 * 64;
    unsigned s = 99;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
        const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(types[t]);
        const size_t qbytes = (size_t) (n / tt->blck_size) * tt->type_size;
        unsigned char * q = malloc(qbytes);
        float * a = malloc((size_t) n * sizeof(float));
        float * b = malloc((size_t) n * sizeof(float));
        for (size_t i = 0; i < qbytes; ++i) {
            s = s * 1103515245u + 12345u;
            q[i] = (unsigned char) (s >> 16);
        }
        // keep every 16-bit word's exponent field below 31 so scales are finite
        for (size_t i = 1; i < qbytes; i += 2) q[i] &= 0x7b;
        lm_cpu_force_level(LM_CPU_LEVEL_SCALAR);
        tt->to_float(q, a, n);
        lm_cpu_force_level(-1);
        tt->to_float(q, b, n);
        check_differ(tt->type_name, "simd dequant", floats_differing(a, b, (size_t) n), (int) n, -1, -1);
        free(q);
        free(a);
        free(b);
    }
}

// The SIMD activation quantizers (q8_0, q8_1, q8_K: used by mul_mat) against
// the _ref ones, on random rows laced with exact halves (ties for roundf),
// zeros, signed zeros and repeated maxima of either sign.
static void test_simd_act_quant(void) {
    const int64_t n = 256 * 64;
    float * x = malloc((size_t) n * sizeof(float));
    unsigned s = 7;
    for (int64_t i = 0; i < n; ++i) {
        s = s * 1103515245u + 12345u;
        const int kind = (int) ((s >> 8) % 8);
        const float r = ((float) (s >> 9) / 8388608.0f - 0.5f) * 4.0f;
        switch (kind) {
            case 0: x[i] = (float) ((int) (s >> 20) % 255 - 127) + 0.5f; break; // ties once amax is 127
            case 1: x[i] = (i & 1) ? -0.0f : 0.0f; break;
            case 2: x[i] = ((s >> 4) & 1) ? 127.0f : -127.0f; break;          // tied maxima
            default: x[i] = r * (float) (1 << ((s >> 12) % 6)); // below the 127 maxima
        }
    }
    // a few all-zero blocks, and a block of tiny values
    memset(x, 0, 256 * sizeof(float));
    for (int i = 256; i < 512; ++i) x[i] = 1e-30f * (float) (i - 384);
    static const enum lm_ggml_type types[] = {LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q8_1, LM_GGML_TYPE_Q8_K};
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); ++t) {
        const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(types[t]);
        const size_t qbytes = (size_t) (n / tt->blck_size) * tt->type_size;
        unsigned char * a = malloc(qbytes);
        unsigned char * b = malloc(qbytes);
        memset(a, 0x55, qbytes);
        memset(b, 0xaa, qbytes);
        switch (types[t]) {
            case LM_GGML_TYPE_Q8_0: lm_quantize_row_q8_0_ref(x, (block_q8_0 *) a, n); lm_quantize_row_q8_0(x, b, n); break;
            case LM_GGML_TYPE_Q8_1: lm_quantize_row_q8_1_ref(x, (block_q8_1 *) a, n); lm_quantize_row_q8_1(x, b, n); break;
            default:                lm_quantize_row_q8_K_ref(x, (block_q8_K *) a, n); lm_quantize_row_q8_K(x, b, n); break;
        }
        check_differ(tt->type_name, "simd quantize vs ref", blocks_differing(a, b, qbytes, tt->type_size),
              (int) (n / tt->blck_size), -1, -1);
        free(a);
        free(b);
    }
    free(x);
}

// A check, listed whether or not it passed.
static void expect(const char * what, int cond) {
    if (cond) printf("  %-40s ok\n", what);
    checkf(cond, " %-40s", what);
}

// lm_ggml_validate_row_data: sizes, NaN/Inf in plain values and in block scales.
static void test_validate(void) {
    block_q4_K b[2];
    memset(b, 0, sizeof(b));
    expect("validate q4_K zeros", lm_ggml_validate_row_data(LM_GGML_TYPE_Q4_K, b, sizeof(b)));
    expect("validate q4_K bad size", !lm_ggml_validate_row_data(LM_GGML_TYPE_Q4_K, b, sizeof(b) - 1));
    b[1].dmin = 0x7c00; // +inf
    expect("validate q4_K inf dmin", !lm_ggml_validate_row_data(LM_GGML_TYPE_Q4_K, b, sizeof(b)));
    block_q8_0 c[3];
    memset(c, 0, sizeof(c));
    c[2].d = 0x7e00; // nan
    expect("validate q8_0 nan d", !lm_ggml_validate_row_data(LM_GGML_TYPE_Q8_0, c, sizeof(c)));
    expect("validate q8_0 first two blocks", lm_ggml_validate_row_data(LM_GGML_TYPE_Q8_0, c, 2 * sizeof(c[0])));
    float f[4] = {1, 2, 3, 4};
    expect("validate f32 finite", lm_ggml_validate_row_data(LM_GGML_TYPE_F32, f, sizeof(f)));
    f[3] = INFINITY;
    expect("validate f32 inf", !lm_ggml_validate_row_data(LM_GGML_TYPE_F32, f, sizeof(f)));
    f[3] = NAN;
    expect("validate f32 nan", !lm_ggml_validate_row_data(LM_GGML_TYPE_F32, f, sizeof(f)));
    uint16_t h[2] = {0x3c00, 0xfc00};
    expect("validate f16 -inf", !lm_ggml_validate_row_data(LM_GGML_TYPE_F16, h, sizeof(h)));
    uint16_t bf[2] = {0x3f80, 0x7fc0};
    expect("validate bf16 nan", !lm_ggml_validate_row_data(LM_GGML_TYPE_BF16, bf, sizeof(bf)));
    double d2[2] = {1.0, NAN};
    expect("validate f64 nan", !lm_ggml_validate_row_data(LM_GGML_TYPE_F64, d2, sizeof(d2)));
    expect("validate deprecated type 4", !lm_ggml_validate_row_data((enum lm_ggml_type) 4, f, sizeof(f)));
    expect("validate i32 anything", lm_ggml_validate_row_data(LM_GGML_TYPE_I32, f, sizeof(f)));
}

// The interleaved q4_0 layouts hold the q4_0 blocks of nr rows: check that
// de-interleaving gives back lm_quantize_q4_0 of each row.
static void test_interleaved(void) {
    static const struct { enum lm_ggml_type t; int nr, blck; } cases[] = {
        {LM_GGML_TYPE_Q4_0_4_4, 4, 4}, {LM_GGML_TYPE_Q4_0_4_8, 4, 8}, {LM_GGML_TYPE_Q4_0_8_8, 8, 8}};
    const int64_t npr = 128, nrows = 8, nb = npr / 32;
    float x[128 * 8];
    unsigned s = 5;
    for (int i = 0; i < 128 * 8; ++i) {
        s = s * 1103515245u + 12345u;
        x[i] = (float) (s >> 8) / 16777216.0f - 0.5f;
    }
    block_q4_0 plain[4 * 8];
    lm_quantize_q4_0(x, plain, nrows, npr, NULL);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        unsigned char out[sizeof(plain)];
        const size_t got = lm_ggml_quantize_chunk(cases[c].t, x, out, 0, nrows, npr, NULL);
        int ok = got == sizeof(plain);
        const int nr = cases[c].nr, blck = cases[c].blck;
        const size_t gsize = (size_t) nr * sizeof(block_q4_0);
        for (int64_t g = 0; g < nrows / nr; ++g) {
            for (int64_t b = 0; b < nb; ++b) {
                const unsigned char * blk = out + (size_t) (g * nb + b) * gsize;
                for (int r = 0; r < nr; ++r) {
                    const block_q4_0 * want = &plain[(g * nr + r) * nb + b];
                    lm_ggml_half d;
                    memcpy(&d, blk + 2 * r, 2);
                    ok &= d == want->d;
                    for (int k = 0; k < 16; ++k) {
                        const int chunk = (k / blck) * nr + r; // chunk index of byte k of row r
                        ok &= (blk[2 * nr + chunk * blck + k % blck] ^ 0x88) == want->qs[k];
                    }
                }
            }
        }
        char what[64];
        snprintf(what, sizeof(what), "interleaved %s", lm_ggml_type_name(cases[c].t));
        expect(what, ok);
    }
}

// Bad arguments to quantize_chunk assert; under LM_GGML_TRY that is an error, not an abort.
static void test_chunk_asserts(void) {
    float x[64] = {0};
    unsigned char out[256];
    struct lm_ggml_err_frame f;
    volatile int caught = 0;
    if (LM_GGML_TRY(&f)) caught = 1;
    else { lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_0, x, out, 16, 1, 32, NULL); lm_ggml_err_pop(&f); }
    expect("chunk start not block-aligned asserts", caught);
    caught = 0;
    if (LM_GGML_TRY(&f)) caught = 1;
    else { lm_ggml_quantize_chunk(LM_GGML_TYPE_IQ2_XXS, x, out, 0, 1, 256, NULL); lm_ggml_err_pop(&f); }
    expect("chunk iq2_xxs without imatrix asserts", caught);
    caught = 0;
    if (LM_GGML_TRY(&f)) caught = 1;
    else { lm_ggml_quantize_chunk(LM_GGML_TYPE_Q8_1, x, out, 0, 1, 32, NULL); lm_ggml_err_pop(&f); }
    expect("chunk q8_1 (no quantizer) asserts", caught);
    caught = 0;
    if (LM_GGML_TRY(&f)) caught = 1;
    else { lm_ggml_quantize_chunk(LM_GGML_TYPE_Q4_K, x, out, 0, 1, 64, NULL); lm_ggml_err_pop(&f); }
    expect("chunk row not a whole number of blocks asserts", caught);
    expect("requires_imatrix iq1_s", lm_ggml_quantize_requires_imatrix(LM_GGML_TYPE_IQ1_S));
    expect("requires_imatrix q4_K is false", !lm_ggml_quantize_requires_imatrix(LM_GGML_TYPE_Q4_K));
}

// Throughput in f32 bytes per second (the unit of the reference figures):
// best of many short runs over 64 Ki floats, to ride out a busy machine.
static double best_time(void (*run)(const void *, void *, int64_t), const void * in, void * out, int64_t n) {
    double best = 1e30;
    const double t_end = now_s() + 0.4;
    do {
        const double t0 = now_s();
        run(in, out, n);
        const double t = now_s() - t0;
        if (t < best) best = t;
    } while (now_s() < t_end);
    return best;
}

static lm_ggml_from_float_t bench_from;
static lm_ggml_to_float_t   bench_to;
static void run_from(const void * in, void * out, int64_t n) { bench_from((const float *) in, out, n); }
static void run_to(const void * in, void * out, int64_t n) { bench_to(in, (float *) out, n); }

static void bench_type(enum lm_ggml_type type) {
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(type);
    if (!tt->to_float || !tt->from_float_ref) return;
    const int64_t n = 1 << 16;
    float * x = malloc((size_t) n * sizeof(float));
    float * y = malloc((size_t) n * sizeof(float));
    void * q = malloc((size_t) (n / tt->blck_size) * tt->type_size);
    unsigned s = 12345;
    for (int64_t i = 0; i < n; ++i) {
        s = s * 1103515245u + 12345u;
        x[i] = ((float) (s >> 8) / 16777216.0f - 0.5f) * 2.0f;
    }
    bench_from = tt->from_float_ref;
    bench_to = tt->to_float;
    const double tq = best_time(run_from, x, q, n);
    const double td = best_time(run_to, q, y, n);
    printf("  bench %-8s quantize %8.1f MB/s   dequantize %8.1f MB/s", tt->type_name,
           (double) n * 4 / tq / 1e6, (double) n * 4 / td / 1e6);
    // the CPU row quantizer (SIMD where we have one) beside the reference one
    bench_from = type == LM_GGML_TYPE_Q8_0 ? lm_quantize_row_q8_0 : NULL;
    if (bench_from) printf("   quantize (cpu) %8.1f MB/s", (double) n * 4 / best_time(run_from, x, q, n) / 1e6);
    printf("\n");
    free(x);
    free(y);
    free(q);
}

int main(int argc, char ** argv) {
    const char * dir = "/tmp/lm-quant-parity";
    int bench = 0;
    const char * only[64];
    int n_only = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "bench")) bench = 1;
        else if (strchr(argv[i], '/')) dir = argv[i];
        else if (n_only < 64) only[n_only++] = argv[i];
    }
    static const char * mine[] = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "tq1_0", "tq2_0"};
    const char ** names = n_only ? only : mine;
    const int n_names = n_only ? n_only : (int) (sizeof(mine) / sizeof(mine[0]));

    int found = 0;
    for (int i = 0; i < n_names; ++i) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s.bin", dir, names[i]);
        struct parity pd;
        memset(&pd, 0, sizeof(pd));
        if (!load(path, &pd)) {
            printf("  %-8s SKIP  cannot read %s (run quant-json2bin.py first)\n", names[i], path);
            continue;
        }
        found++;
        test_type(&pd);
        free_parity(&pd);
    }
    test_simd_dequant();
    test_simd_act_quant();
    test_validate();
    test_interleaved();
    test_chunk_asserts();
    if (bench) {
        static const enum lm_ggml_type bt[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                               LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K,
                                               LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0};
        for (size_t i = 0; i < sizeof(bt) / sizeof(bt[0]); ++i) bench_type(bt[i]);
    }
    if (!found) {
        printf("no parity data found in %s: nothing tested\n", dir);
        return 1;
    }
    return check_summary();
}
