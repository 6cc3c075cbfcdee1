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
//   cc -O2 -pthread -Icsrc tests/c/test-quants.c csrc/*.c -lm -o /tmp/test-quants
//   /tmp/test-quants [/tmp/lm-quant-parity] [bench] [type...]
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-quants.h"

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

static int n_fail = 0, n_pass = 0;

static void check(const char * tname, const char * what, int bad, int total, double e_ours, double e_ref) {
    const int ok = bad == 0;
    if (ok) n_pass++; else n_fail++;
    if (e_ours >= 0) {
        printf("  %-8s %-13s %s  %4d/%-4d differ   rmse ours %.6g ref %.6g\n", tname, what, ok ? "ok  " : "FAIL", bad, total, e_ours, e_ref);
    } else {
        printf("  %-8s %-13s %s  %4d/%-4d differ\n", tname, what, ok ? "ok  " : "FAIL", bad, total);
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
            printf("  %-8s ref quant     FAIL  no from_float_ref\n", tt->type_name);
            n_fail++;
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
            check(tt->type_name, "ref quant", blocks_differing(q, pd->ref_quant.p, qbytes, tt->type_size), (int) nblocks, e_ours, e_ref);
        }
        if (tt->to_float && pd->ref_dequant.present) {
            tt->to_float(pd->ref_quant.p, y, (int64_t) n);
            check(tt->type_name, "ref dequant", floats_differing(y, (const float *) pd->ref_dequant.p, n), (int) n, -1, -1);
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
        check(tt->type_name, "imat quant", bad, (int) nblocks, e_ours, e_ref);
        if (tt->to_float && pd->imat_dequant.present) {
            tt->to_float(pd->imat_quant.p, y, (int64_t) n);
            check(tt->type_name, "imat dequant", floats_differing(y, (const float *) pd->imat_dequant.p, n), (int) n, -1, -1);
        }
    }
    (void) yref;
    free(q);
    free(y);
    free(yref);
}

// Throughput over a 4 Mi-float buffer (f32 bytes per second, like the reference figures).
static void bench_type(enum lm_ggml_type type) {
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(type);
    if (!tt->to_float || !tt->from_float_ref) return;
    const int64_t n = 1 << 22;
    float * x = malloc((size_t) n * sizeof(float));
    float * y = malloc((size_t) n * sizeof(float));
    void * q = malloc((size_t) (n / tt->blck_size) * tt->type_size);
    unsigned s = 12345;
    for (int64_t i = 0; i < n; ++i) {
        s = s * 1103515245u + 12345u;
        x[i] = ((float) (s >> 8) / 16777216.0f - 0.5f) * 2.0f;
    }
    const lm_ggml_from_float_t from = tt->from_float_ref;
    double t0 = now_s();
    int iq = 0;
    do { from(x, q, n); iq++; } while (now_s() - t0 < 0.3);
    const double tq = (now_s() - t0) / iq;
    t0 = now_s();
    int id = 0;
    do { tt->to_float(q, y, n); id++; } while (now_s() - t0 < 0.3);
    const double td = (now_s() - t0) / id;
    printf("  bench %-8s quantize %8.1f MB/s   dequantize %8.1f MB/s\n", tt->type_name,
           (double) n * 4 / tq / 1e6, (double) n * 4 / td / 1e6);
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
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
