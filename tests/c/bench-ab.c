// bench-ab.c - the kernel rows of ../shared/tools/bench.c, timed with two or
// more builds of the C API loaded into one process and run in turn, call by
// call. On a shared machine the memory bandwidth and the clock move by up to
// 2x from one minute to the next; separate processes run minutes apart then
// compare minutes as much as cores. Interleaved, both sides see the same
// minutes, and the ratio of medians holds where separate runs' does not.
//
// Each library is a shared object exporting the lm_ggml C API (this core:
// `./build.sh so`; another core built by hand with -fPIC -shared). They are
// opened RTLD_LOCAL, so each keeps its own symbols, thread pool and state.
//
//   cc -O2 $(find csrc -type d -printf '-I%p ') tests/c/bench-ab.c -ldl -lm -o bench-ab
//   bench-ab [-r ROUNDS] [-t THREADS] [-i 1] A.so B.so ...
//
// -i 1 (or env BENCH_IQ=1): the i-quant and ternary mul_mat rows only (a
// mat-vec and a GEMM shape per type) instead of the default rows;
// BENCH_IQ_TYPES=iq2_xxs,tq1_0 narrows them to those types.
//
// -k 768,2048 (row lengths): the mul_mat rows of a K sweep only, for each K a
// mat-vec (M = 4096, N = 1) and a GEMM (M = 1024, N = 64) of each type of
// -y (type names, default f16,bf16,q8_0,q4_0,q4_K,iq4_xs).
//
// -raw 1: after each row, one line per library with every round's rate in
// the order run: "raw<TAB>row<TAB>library index<TAB>rate rate ..." (what
// ./build.sh perfguard reads).
//
// Per row: the median over ROUNDS (rate: GB/s or GFLOPS, higher is better)
// and its quartiles, per library, then the speed of A over each other one.
// A round runs the libraries in turn, in reverse order every other round,
// so that neither always runs first.
#include "ggml.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "type-list.h"

#define MAX_LIBS 4
#define MAX_ROUNDS 256

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

// The entry points a row needs, looked up in one library.
struct lib {
    const char * path;
    void * h;
    struct lm_ggml_context * (*init)(struct lm_ggml_init_params);
    void (*free_ctx)(struct lm_ggml_context *);
    struct lm_ggml_tensor * (*new_2d)(struct lm_ggml_context *, enum lm_ggml_type, int64_t, int64_t);
    struct lm_ggml_tensor * (*mul_mat)(struct lm_ggml_context *, struct lm_ggml_tensor *, struct lm_ggml_tensor *);
    struct lm_ggml_tensor * (*add)(struct lm_ggml_context *, struct lm_ggml_tensor *, struct lm_ggml_tensor *);
    struct lm_ggml_cgraph * (*new_graph_custom)(struct lm_ggml_context *, size_t, bool);
    void (*expand)(struct lm_ggml_cgraph *, struct lm_ggml_tensor *);
    enum lm_ggml_status (*compute)(struct lm_ggml_context *, struct lm_ggml_cgraph *, int);
    void (*f32_f16)(const float *, lm_ggml_fp16_t *, int64_t);
    void (*f16_f32)(const lm_ggml_fp16_t *, float *, int64_t);
    void (*f32_bf16)(const float *, lm_ggml_bf16_t *, int64_t);
    void (*bf16_f32)(const lm_ggml_bf16_t *, float *, int64_t);
    size_t (*quantize)(enum lm_ggml_type, const float *, void *, int64_t, int64_t, int64_t, const float *);
    const struct lm_ggml_type_traits * (*traits)(enum lm_ggml_type);
    bool (*requires_imatrix)(enum lm_ggml_type); // optional
};

static void * need(struct lib * l, const char * name) {
    void * p = dlsym(l->h, name);
    if (p == NULL) {
        fprintf(stderr, "bench-ab: %s has no %s\n", l->path, name);
        exit(2);
    }
    return p;
}

static void open_lib(struct lib * l, const char * path) {
    l->path = path;
    l->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (l->h == NULL) {
        fprintf(stderr, "bench-ab: %s\n", dlerror());
        exit(2);
    }
    void (*cpu_init)(void) = (void (*)(void)) dlsym(l->h, "lm_ggml_cpu_init");
    if (cpu_init) cpu_init();
    *(void **) &l->init = need(l, "lm_ggml_init");
    *(void **) &l->free_ctx = need(l, "lm_ggml_free");
    *(void **) &l->new_2d = need(l, "lm_ggml_new_tensor_2d");
    *(void **) &l->mul_mat = need(l, "lm_ggml_mul_mat");
    *(void **) &l->add = need(l, "lm_ggml_add");
    *(void **) &l->new_graph_custom = need(l, "lm_ggml_new_graph_custom");
    *(void **) &l->expand = need(l, "lm_ggml_build_forward_expand");
    *(void **) &l->compute = need(l, "lm_ggml_graph_compute_with_ctx");
    *(void **) &l->f32_f16 = need(l, "lm_ggml_fp32_to_fp16_row");
    *(void **) &l->f16_f32 = need(l, "lm_ggml_fp16_to_fp32_row");
    *(void **) &l->f32_bf16 = need(l, "lm_ggml_fp32_to_bf16_row");
    *(void **) &l->bf16_f32 = need(l, "lm_ggml_bf16_to_fp32_row");
    *(void **) &l->quantize = need(l, "lm_ggml_quantize_chunk");
    *(void **) &l->traits = need(l, "lm_ggml_get_type_traits");
    *(void **) &l->requires_imatrix = dlsym(l->h, "lm_ggml_quantize_requires_imatrix");
}

static int g_nl, g_rounds = 15, g_nth = 1, g_iq, g_raw;
static struct lib g_libs[MAX_LIBS];
static double g_t[MAX_LIBS][MAX_ROUNDS]; // seconds per call, per library and round

// work / time of each library's median, its quartiles, and A's speed over the others
static void report(const char * name, const char * unit, double work) {
    double med[MAX_LIBS];
    for (int l = 0; g_raw && l < g_nl; l++) {
        printf("raw\t%s\t%d\t", name, l);
        for (int r = 0; r < g_rounds; r++) printf("%s%.6g", r ? " " : "", work / g_t[l][r]);
        printf("\n");
    }
    printf("%-34s", name);
    for (int l = 0; l < g_nl; l++) {
        double * t = g_t[l];
        qsort(t, (size_t) g_rounds, sizeof(double), cmp_double);
        med[l] = t[g_rounds / 2];
        printf("  %8.2f [%.2f-%.2f]", work / med[l], work / t[3 * g_rounds / 4], work / t[g_rounds / 4]);
    }
    printf(" %s", unit);
    for (int l = 1; l < g_nl; l++) printf("  A/%c %.2f", 'A' + l, med[l] / med[0]);
    printf("\n");
    fflush(stdout);
}

enum conv { F32_F16, F16_F32, F32_BF16, BF16_F32 };

static void row_convert(enum conv c, const float * x, float * y, void * h) {
    const int64_t n = (int64_t) 1 << 24;
    for (int r = 0; r < g_rounds; r++) {
        for (int l = 0; l < g_nl; l++) {
            const struct lib * L = &g_libs[l];
            const double t0 = now();
            switch (c) {
                case F32_F16:  L->f32_f16(x, h, n); break;
                case F16_F32:  L->f16_f32(h, y, n); break;
                case F32_BF16: L->f32_bf16(x, h, n); break;
                case BF16_F32: L->bf16_f32(h, y, n); break;
            }
            g_t[l][r] = now() - t0;
        }
    }
    static const char * names[] = { "fp32->fp16 row (f32 side)", "fp16->fp32 row (f32 side)", "fp32->bf16 row (f32 side)", "bf16->fp32 row (f32 side)" };
    report(names[c], "GB/s", n * 4 / 1e9);
}

static void row_dequant(enum lm_ggml_type type, const float * x, float * y) {
    const int64_t n = (int64_t) 1 << 22;
    void * q[MAX_LIBS];
    for (int l = 0; l < g_nl; l++) {
        q[l] = malloc((size_t) n * 2);
        g_libs[l].quantize(type, x, q[l], 0, n / 4096, 4096, NULL);
    }
    for (int r = 0; r < g_rounds; r++) {
        for (int l = 0; l < g_nl; l++) {
            const lm_ggml_to_float_t f = g_libs[l].traits(type)->to_float;
            const double t0 = now();
            f(q[l], y, n);
            g_t[l][r] = now() - t0;
        }
    }
    char name[64];
    snprintf(name, sizeof name, "dequantize %s (f32 out)", g_libs[0].traits(type)->type_name);
    report(name, "GB/s", n * 4 / 1e9);
    for (int l = 0; l < g_nl; l++) free(q[l]);
}

// One mul_mat node per library; each round runs `reps` computes of each
// library in turn and keeps their mean (mat-vecs are a fraction of a ms).
static void row_mul_mat(enum lm_ggml_type type, int K, int M, int N, int reps) {
    struct lm_ggml_context * ctx[MAX_LIBS];
    struct lm_ggml_cgraph * g[MAX_LIBS];
    float * tmp = malloc((size_t) K * M * sizeof(float)), * ones = malloc((size_t) K * sizeof(float));
    for (int64_t i = 0; i < (int64_t) K * M; i++) tmp[i] = cosf((float) i * 0.37f);
    for (int64_t i = 0; i < K; i++) ones[i] = 1.0f; // the importance matrix of the types that need one
    for (int l = 0; l < g_nl; l++) {
        const struct lib * L = &g_libs[l];
        struct lm_ggml_init_params ip = { (size_t) K * M * 4 + (size_t) K * N * 4 + (size_t) M * N * 4 + (64u << 20), NULL, false };
        ctx[l] = L->init(ip);
        struct lm_ggml_tensor * a = L->new_2d(ctx[l], type, K, M), * b = L->new_2d(ctx[l], LM_GGML_TYPE_F32, K, N);
        if (type == LM_GGML_TYPE_F32) memcpy(a->data, tmp, (size_t) K * M * 4);
        else if (type == LM_GGML_TYPE_F16) L->f32_f16(tmp, a->data, (int64_t) K * M);
        else L->quantize(type, tmp, a->data, 0, M, K, L->requires_imatrix && L->requires_imatrix(type) ? ones : NULL);
        for (int64_t i = 0; i < (int64_t) K * N; i++) ((float *) b->data)[i] = sinf((float) i * 0.11f);
        g[l] = L->new_graph_custom(ctx[l], 16, false);
        L->expand(g[l], L->mul_mat(ctx[l], a, b));
        L->compute(ctx[l], g[l], g_nth); // the work buffer and the pool, before timing
    }
    for (int r = 0; r < g_rounds; r++) {
        for (int j = 0; j < g_nl; j++) {
            const int l = r % 2 ? g_nl - 1 - j : j;
            const double t0 = now();
            for (int i = 0; i < reps; i++) g_libs[l].compute(ctx[l], g[l], g_nth);
            g_t[l][r] = (now() - t0) / reps;
        }
    }
    char name[64];
    snprintf(name, sizeof name, "mul_mat %s K=%d M=%d N=%d", g_libs[0].traits(type)->type_name, K, M, N);
    report(name, "GFLOPS", 2.0 * K * M * N / 1e9);
    for (int l = 0; l < g_nl; l++) g_libs[l].free_ctx(ctx[l]);
    free(tmp);
    free(ones);
}

static void row_graph(void) {
    struct lm_ggml_context * ctx[MAX_LIBS];
    struct lm_ggml_cgraph * g[MAX_LIBS];
    for (int l = 0; l < g_nl; l++) {
        const struct lib * L = &g_libs[l];
        struct lm_ggml_init_params ip = { (size_t) 64 << 20, NULL, false };
        ctx[l] = L->init(ip);
        struct lm_ggml_tensor * a = L->new_2d(ctx[l], LM_GGML_TYPE_F32, 64, 1), * c = a;
        memset(a->data, 0, 256);
        for (int i = 0; i < 2000; i++) c = L->add(ctx[l], c, a);
        g[l] = L->new_graph_custom(ctx[l], 4096, false);
        L->expand(g[l], c);
        L->compute(ctx[l], g[l], g_nth);
    }
    for (int r = 0; r < g_rounds; r++) {
        for (int l = 0; l < g_nl; l++) {
            const double t0 = now();
            g_libs[l].compute(ctx[l], g[l], g_nth);
            g_t[l][r] = now() - t0;
        }
    }
    report("graph of 2000 tiny adds (nodes/us)", "nodes/us", 2000 / 1e6);
    for (int l = 0; l < g_nl; l++) g_libs[l].free_ctx(ctx[l]);
}

// The type named name in library A, or LM_GGML_TYPE_COUNT.
static enum lm_ggml_type type_named(const char * name) {
    for (int t = 0; t < LM_GGML_TYPE_COUNT; t++) {
        const struct lm_ggml_type_traits * tt = g_libs[0].traits((enum lm_ggml_type) t);
        if (tt != NULL && tt->type_name != NULL && tt->blck_size > 0 && strcmp(tt->type_name, name) == 0) return (enum lm_ggml_type) t;
    }
    return LM_GGML_TYPE_COUNT;
}

// The K sweep: a mat-vec and a GEMM per type and row length, each timed
// over enough calls to be a few tens of millions of weights.
static int sweep(const char * ks, const char * types) {
    char tbuf[256];
    snprintf(tbuf, sizeof tbuf, "%s", types);
    for (char * tn = tbuf, * next; tn != NULL && *tn != '\0'; tn = next) {
        next = strchr(tn, ',');
        if (next != NULL) *next++ = '\0';
        const enum lm_ggml_type type = type_named(tn);
        if (type == LM_GGML_TYPE_COUNT) {
            fprintf(stderr, "bench-ab: -y: no type %s in %s\n", tn, g_libs[0].path);
            return 2;
        }
        for (const char * p = ks; *p != '\0';) {
            char * end;
            const long K = strtol(p, &end, 10);
            const int64_t bs = g_libs[0].traits(type)->blck_size;
            if (end == p || K <= 0 || K > (1 << 20) || K % bs != 0) {
                fprintf(stderr, "bench-ab: -k: %s is not a row length of %s (a multiple of %lld)\n", p, tn, (long long) bs);
                return 2;
            }
            row_mul_mat(type, (int) K, 4096, 1, (int) (1 + (64l << 20) / (K * 4096)));
            row_mul_mat(type, (int) K, 1024, 64, (int) (1 + (8l << 20) / (K * 1024)));
            p = *end == ',' ? end + 1 : end;
        }
    }
    return 0;
}

int main(int argc, char ** argv) {
    const char * ks = NULL, * types = "f16,bf16,q8_0,q4_0,q4_K,iq4_xs";
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (i + 1 >= argc) break;
        if (strcmp(argv[i], "-r") == 0) g_rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-t") == 0) g_nth = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-i") == 0) g_iq = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-k") == 0) ks = argv[i + 1];
        else if (strcmp(argv[i], "-y") == 0) types = argv[i + 1];
        else if (strcmp(argv[i], "-raw") == 0) g_raw = atoi(argv[i + 1]);
        else break;
    }
    g_nl = argc - i;
    if (g_nl < 1 || g_nl > MAX_LIBS || g_rounds < 1 || g_rounds > MAX_ROUNDS || g_nth < 1) {
        fprintf(stderr, "usage: bench-ab [-r ROUNDS (1-%d)] [-t THREADS] [-i 1] [-k K,K... [-y TYPE,TYPE...]] [-raw 1] A.so [B.so ...] (up to %d)\n", MAX_ROUNDS, MAX_LIBS);
        return 2;
    }
    for (int l = 0; l < g_nl; l++) open_lib(&g_libs[l], argv[i + l]);
    printf("%d rounds, %d thread(s); per library: median [quartiles]", g_rounds, g_nth);
    for (int l = 0; l < g_nl; l++) printf("; %c = %s", 'A' + l, g_libs[l].path);
    printf("\n");
    if (ks != NULL) return sweep(ks, types);
    if (getenv("BENCH_IQ") != NULL && atoi(getenv("BENCH_IQ")) != 0) g_iq = 1;
    if (g_iq) {
        const enum lm_ggml_type iq[] = {
            LM_GGML_TYPE_IQ2_XXS, LM_GGML_TYPE_IQ2_XS, LM_GGML_TYPE_IQ2_S, LM_GGML_TYPE_IQ3_XXS, LM_GGML_TYPE_IQ3_S,
            LM_GGML_TYPE_IQ1_S,   LM_GGML_TYPE_IQ1_M,  LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0,
        };
        const char * only = getenv("BENCH_IQ_TYPES"); // comma-separated type names, default all
        for (size_t k = 0; k < sizeof iq / sizeof iq[0]; k++) {
            const char * name = g_libs[0].traits(iq[k])->type_name;
            if (!type_selected(only, name)) continue;
            row_mul_mat(iq[k], 4096, 4096, 1, 5);
            row_mul_mat(iq[k], 1024, 1024, 256, 1);
        }
        return 0;
    }

    const int64_t n = (int64_t) 1 << 24;
    float * x = malloc((size_t) n * 4), * y = malloc((size_t) n * 4);
    void * h = malloc((size_t) n * 2);
    if (x == NULL || y == NULL || h == NULL) return 1;
    for (int64_t k = 0; k < n; k++) x[k] = sinf((float) k * 0.001f) * 3;
    memset(y, 0, (size_t) n * 4); // every output page mapped before timing
    memset(h, 0, (size_t) n * 2);
    row_convert(F32_F16, x, y, h);
    row_convert(F16_F32, x, y, h);
    row_convert(F32_BF16, x, y, h);
    row_convert(BF16_F32, x, y, h);
    const enum lm_ggml_type dq[] = { LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K };
    for (size_t k = 0; k < sizeof dq / sizeof dq[0]; k++) row_dequant(dq[k], x, y);
    free(x); free(y); free(h);

    const struct { enum lm_ggml_type type; int K, M, N, reps; } mm[] = {
        { LM_GGML_TYPE_F32,  4096, 4096, 1, 5 }, { LM_GGML_TYPE_F16, 4096, 4096, 1, 5 },
        { LM_GGML_TYPE_Q4_0, 4096, 4096, 1, 5 }, { LM_GGML_TYPE_Q8_0, 4096, 4096, 1, 5 },
        { LM_GGML_TYPE_Q4_K, 4096, 4096, 1, 5 },
        { LM_GGML_TYPE_F32,  1024, 1024, 256, 1 }, { LM_GGML_TYPE_F16, 1024, 1024, 256, 1 },
        { LM_GGML_TYPE_Q4_0, 1024, 1024, 256, 1 }, { LM_GGML_TYPE_Q4_K, 1024, 1024, 256, 1 },
    };
    for (size_t k = 0; k < sizeof mm / sizeof mm[0]; k++) row_mul_mat(mm[k].type, mm[k].K, mm[k].M, mm[k].N, mm[k].reps);
    row_graph();
    return 0;
}
