// test-iquants.c - the i-quant formats against the reference's parity data
// (../shared/parity/quant/<type>.json, or the directory given as argv[1]).
//
// Per type: reference-quantized bytes must dequantize to the reference floats
// bit for bit; our quantizers (from_float_ref where the type has one, and the
// imatrix quantizer = lm_ggml_quantize_chunk with start 0) must give the
// reference bytes. Differences are counted per block and reported with the
// RMSE of both results against the input.
//
// Build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-iquants.c $(find csrc -name '*.c') -lm
// (or, before the rest of the core exists, with -DIQ_STANDALONE and only
//  csrc/quant/ggml-iquants.c csrc/quant/ggml-iq-tables.c).
#include "ggml-iquants.h"
#include "ggml-impl.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef IQ_STANDALONE
void lm_ggml_abort(const char * file, int line, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}
#endif

typedef void   (*deq_fn)(const void * x, float * y, int64_t k);
typedef void   (*ref_fn)(const float * x, void * y, int64_t k);
typedef size_t (*qnt_fn)(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

static const struct {
    const char * name;
    enum lm_ggml_type type;
    int blck, size;
    deq_fn deq;
    ref_fn ref;
    qnt_fn qnt;
} types[] = {
    { "iq2_xxs", LM_GGML_TYPE_IQ2_XXS, 256,  66, (deq_fn) lm_dequantize_row_iq2_xxs, NULL, lm_quantize_iq2_xxs },
    { "iq2_xs",  LM_GGML_TYPE_IQ2_XS,  256,  74, (deq_fn) lm_dequantize_row_iq2_xs,  NULL, lm_quantize_iq2_xs  },
    { "iq2_s",   LM_GGML_TYPE_IQ2_S,   256,  82, (deq_fn) lm_dequantize_row_iq2_s,   (ref_fn) lm_quantize_row_iq2_s_ref,   lm_quantize_iq2_s   },
    { "iq3_xxs", LM_GGML_TYPE_IQ3_XXS, 256,  98, (deq_fn) lm_dequantize_row_iq3_xxs, (ref_fn) lm_quantize_row_iq3_xxs_ref, lm_quantize_iq3_xxs },
    { "iq3_s",   LM_GGML_TYPE_IQ3_S,   256, 110, (deq_fn) lm_dequantize_row_iq3_s,   (ref_fn) lm_quantize_row_iq3_s_ref,   lm_quantize_iq3_s   },
    { "iq1_s",   LM_GGML_TYPE_IQ1_S,   256,  50, (deq_fn) lm_dequantize_row_iq1_s,   NULL, lm_quantize_iq1_s   },
    { "iq1_m",   LM_GGML_TYPE_IQ1_M,   256,  56, (deq_fn) lm_dequantize_row_iq1_m,   NULL, lm_quantize_iq1_m   },
    { "iq4_nl",  LM_GGML_TYPE_IQ4_NL,   32,  18, (deq_fn) lm_dequantize_row_iq4_nl,  (ref_fn) lm_quantize_row_iq4_nl_ref,  lm_quantize_iq4_nl  },
    { "iq4_xs",  LM_GGML_TYPE_IQ4_XS,  256, 136, (deq_fn) lm_dequantize_row_iq4_xs,  (ref_fn) lm_quantize_row_iq4_xs_ref,  lm_quantize_iq4_xs  },
};

static char * read_file(const char * path) {
    FILE * f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char * s = malloc((size_t) n + 1);
    if (fread(s, 1, (size_t) n, f) != (size_t) n) { free(s); fclose(f); return NULL; }
    s[n] = 0;
    fclose(f);
    return s;
}

// The hex string value of "key" in a flat JSON object, decoded; NULL if absent.
static uint8_t * json_hex(const char * js, const char * key, size_t * len) {
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\"", key);
    const char * p = strstr(js, pat);
    if (!p) return NULL;
    p = strchr(p + strlen(pat), '"');
    if (!p) return NULL;
    const char * e = strchr(++p, '"');
    const size_t n = (size_t) (e - p) / 2;
    uint8_t * out = malloc(n ? n : 1);
    for (size_t i = 0; i < n; ++i) {
        unsigned v;
        sscanf(p + 2*i, "%2x", &v);
        out[i] = (uint8_t) v;
    }
    *len = n;
    return out;
}

static double rmse(const float * a, const float * b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
    return sqrt(s / n);
}

static size_t count_bad_floats(const float * a, const float * b, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    return bad;
}

static size_t count_bad_blocks(const uint8_t * a, const uint8_t * b, size_t nblocks, int size) {
    size_t bad = 0;
    for (size_t i = 0; i < nblocks; ++i) bad += memcmp(a + i*size, b + i*size, size) != 0;
    return bad;
}

int main(int argc, char ** argv) {
    const char * dirs[] = { argc > 1 ? argv[1] : NULL, "../shared/parity/quant", "../../shared/parity/quant", "../../../shared/parity/quant" };
    const char * dir = NULL;
    char path[1024];
    for (size_t i = 0; i < sizeof(dirs)/sizeof(dirs[0]) && !dir; ++i) {
        if (!dirs[i]) continue;
        snprintf(path, sizeof(path), "%s/iq4_nl.json", dirs[i]);
        FILE * f = fopen(path, "rb");
        if (f) { fclose(f); dir = dirs[i]; }
    }
    if (!dir) {
        printf("SKIP: parity data not found (expected ../shared/parity/quant relative to the project root)\n");
        return 0;
    }

    for (size_t t = 0; t < sizeof(types)/sizeof(types[0]); ++t) {
        snprintf(path, sizeof(path), "%s/%s.json", dir, types[t].name);
        char * js = read_file(path);
        if (!js) { checkf(false, "%-8s missing %s", types[t].name, path); continue; }
        const int nrows = 12, n_per_row = 512;
        const size_t nel = (size_t) nrows*n_per_row;
        const size_t nblk = nel / types[t].blck, qbytes = nblk * types[t].size;
        size_t len;
        float * input = (float *) json_hex(js, "input_f32", &len);
        float * imat  = (float *) json_hex(js, "imatrix_f32", &len);
        uint8_t * iq  = json_hex(js, "imatrix_quant", &len);
        float * ideq  = (float *) json_hex(js, "imatrix_dequant_f32", &len);
        uint8_t * rq  = json_hex(js, "ref_quant", &len);
        float * rdeq  = (float *) json_hex(js, "ref_dequant_f32", &len);

        uint8_t * ours = calloc(qbytes, 1);
        float * deq = malloc(nel * sizeof(float));
        float * deq2 = malloc(nel * sizeof(float));
        bool ok = true;

        // dequantization of the reference's bytes
        size_t bad_deq = 0;
        types[t].deq(iq, deq, (int64_t) nel);
        bad_deq += count_bad_floats(deq, ideq, nel);
        if (rq) {
            types[t].deq(rq, deq, (int64_t) nel);
            bad_deq += count_bad_floats(deq, rdeq, nel);
        }
        ok &= bad_deq == 0;
        printf("%-8s dequant: %s (%zu floats differ)\n", types[t].name, bad_deq ? "FAIL" : "bit-exact", bad_deq);

        lm_ggml_iquants_init(types[t].type);

        if (rq && types[t].ref) {
            for (int r = 0; r < nrows; ++r) {
                types[t].ref(input + (size_t) r*n_per_row, ours + (size_t) r*(qbytes/nrows), n_per_row);
            }
            const size_t bad = count_bad_blocks(ours, rq, nblk, types[t].size);
            types[t].deq(ours, deq2, (int64_t) nel);
            printf("%-8s ref quant:     %3zu/%zu blocks differ, rmse ours %.6g ref %.6g\n", types[t].name,
                   bad, nblk, rmse(deq2, input, nel), rmse(rdeq, input, nel));
            ok &= bad == 0;
        }

        memset(ours, 0, qbytes);
        const size_t wrote = types[t].qnt(input, ours, nrows, n_per_row, imat);
        const size_t bad = count_bad_blocks(ours, iq, nblk, types[t].size);
        types[t].deq(ours, deq2, (int64_t) nel);
        printf("%-8s imatrix quant: %3zu/%zu blocks differ, rmse ours %.6g ref %.6g\n", types[t].name,
               bad, nblk, rmse(deq2, input, nel), rmse(ideq, input, nel));
        if (bad) {
            for (size_t b = 0; b < nblk; ++b) {
                if (memcmp(ours + b*types[t].size, iq + b*types[t].size, types[t].size)) {
                    printf("  first differing block %zu (row %zu)\n", b, b / (nblk/nrows));
                    break;
                }
            }
        }
        ok &= bad == 0 && wrote == qbytes;

        check(ok, types[t].name);
        free(js); free(input); free(imat); free(iq); free(ideq); free(rq); free(rdeq);
        free(ours); free(deq); free(deq2);
    }
    lm_ggml_iquants_free();
    return check_summary();
}
