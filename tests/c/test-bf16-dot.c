// test-bf16-dot.c - mul_mat with bf16 weights on the AVX512_BF16 kernels
// (mm-bf16.c), through the graph at the AVX-512 level:
//   (a) batch invariance: for K = 1, 3, ..., 69, 288, 4096 and 1..17 rows,
//       column j of an N-column product (N = 1, 2, 3, 5, 8, 17, 64; 1 and 2
//       threads) has the bits of column j computed alone;
//   (b) every result against a double-precision dot of the bf16 weights and
//       the columns rounded to bf16, within the bound of the kernels' f32
//       roundings (see tol below);
//   (c) columns given transposed, permuted (strided rows), as f16 or bf16:
//       the bits of the same values given as dense f32 columns;
//   (d) subnormal weights and columns (read as zero by vdpbf16ps), infinities
//       and NaNs: no crash, the same bits alone and in a batch, and results
//       no larger than the subnormals can make them.
// Skips, passing, where the CPU has no AVX512_BF16 or the level is capped
// below avx512 (LM_GGML_CPU_LEVEL).
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-bf16-dot.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-check.h"

// The level the kernels run at (a model build of the kernels may run them at another).
#ifndef BF16DOT_LEVEL
#define BF16DOT_LEVEL LM_CPU_LEVEL_AVX512
#define BF16DOT_ONLY_AVX512 1
#endif

static uint64_t g_rng = 0x853C49E6748FEA9Bull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 32);
}

static float bits2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static float bf2f(lm_ggml_bf16_t h) { return bits2f((uint32_t) h.bits << 16); }
static float round_bf16(float v) { return bf2f(lm_ggml_fp32_to_bf16(v)); }

// A weight: bf16 of magnitude in [2^-4, 2^4) (or zero now and then), so that
// every product of a weight and a column value (magnitude >= 2^-9 after
// rounding) is a multiple of 2^-28 and no sum of them is subnormal: the
// kernels' flushing of subnormals never applies to these.
static lm_ggml_bf16_t rnd_weight(void) {
    lm_ggml_bf16_t h;
    if (rnd() % 16 == 0) { h.bits = (uint16_t)(rnd() & 0x8000); return h; }
    const uint32_t e = 127 - 4 + rnd() % 8, m = rnd() & 0x7f, s = rnd() & 1;
    h.bits = (uint16_t)((s << 15) | (e << 7) | m);
    return h;
}
// A column value: f32 of full precision, magnitude in [2^-9, 2^3) times the
// column's scale (a power of two), so that rounding to bf16 matters.
static float rnd_act(int scale_exp) {
    const uint32_t e = (uint32_t)(127 - 9 + scale_exp) + rnd() % 12, m = rnd() & 0x7fffff, s = rnd() & 1;
    return bits2f((s << 31) | (e << 23) | m);
}

// The work buffer from the heap: lm_ggml_graph_compute_with_ctx would take it
// from the context at every call.
static void compute(struct lm_ggml_cgraph * gf, int nth) {
    struct lm_ggml_cplan cp = lm_ggml_graph_plan(gf, nth, NULL);
    cp.work_data = cp.work_size ? malloc(cp.work_size) : NULL;
    lm_ggml_graph_compute(gf, &cp);
    free(cp.work_data);
}

struct mm_case {
    struct lm_ggml_context * ctx;
    struct lm_ggml_tensor * a, * b; // a: [K, M] bf16; b: [K, NMAX] f32
    int64_t K, M;
};

#define NMAX 64
#define MAX_GRAPHS 80
#define GRAPH_SIZE 8

static void case_init(struct mm_case * c, int64_t K, int64_t M) {
    // the tensors, then up to MAX_GRAPHS small graphs, each with a view and a result of up to NMAX columns
    const size_t mem = (size_t)(K * M) * 2 + (size_t)(K * NMAX) * 4 * 2 + 6 * lm_ggml_tensor_overhead() +
                       MAX_GRAPHS * (lm_ggml_graph_overhead_custom(GRAPH_SIZE, false) + 2 * lm_ggml_tensor_overhead() +
                                     (size_t)(M * NMAX) * 4 + 64) + 64 * 1024;
    struct lm_ggml_init_params ip = { mem, NULL, false };
    c->ctx = lm_ggml_init(ip);
    c->K = K;
    c->M = M;
    c->a = lm_ggml_new_tensor_2d(c->ctx, LM_GGML_TYPE_BF16, K, M);
    c->b = lm_ggml_new_tensor_2d(c->ctx, LM_GGML_TYPE_F32, K, NMAX);
    lm_ggml_bf16_t * a = c->a->data;
    for (int64_t i = 0; i < K * M; i++) a[i] = rnd_weight();
    float * b = c->b->data;
    for (int64_t j = 0; j < NMAX; j++) {
        const int se = (int)(j % 5) - 2;
        for (int64_t k = 0; k < K; k++) b[j * K + k] = rnd_act(se);
    }
}

// a x the n columns of b from column c0 (a contiguous view), nth threads; the
// [M, n] result in out.
static void mul_cols(struct mm_case * c, int64_t c0, int64_t n, int nth, float * out) {
    struct lm_ggml_tensor * bv = lm_ggml_view_2d(c->ctx, c->b, c->K, n, c->b->nb[1], (size_t) c0 * c->b->nb[1]);
    struct lm_ggml_tensor * d = lm_ggml_mul_mat(c->ctx, c->a, bv);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph_custom(c->ctx, GRAPH_SIZE, false);
    lm_ggml_build_forward_expand(gf, d);
    compute(gf, nth);
    memcpy(out, d->data, (size_t)(c->M * n) * sizeof(float));
}

// (b): the kernels round K / 16 FMAs per lane (two per 32-element step;
// bf16 x bf16 products are exact in f32) and 4 additions of the lanes, each
// by at most 2^-24 of the magnitude it sums, so |got - exact| <= (K/16 + 6)
// * 2^-24 * sum |w_k y_k| (the 6: a partial step, 4 reduction levels, 1 of
// slack for the f32 result). Nothing is flushed with these inputs.
static int check_ref(const struct mm_case * c, int64_t j, const float * got, const char * what) {
    const lm_ggml_bf16_t * a = c->a->data;
    const float * b = (const float *) c->b->data + j * c->K;
    int bad = 0;
    for (int64_t i = 0; i < c->M; i++) {
        double s = 0, mag = 0;
        for (int64_t k = 0; k < c->K; k++) {
            const double p = (double) bf2f(a[i * c->K + k]) * round_bf16(b[k]);
            s += p;
            mag += fabs(p);
        }
        const double tol = ((double) c->K / 16 + 6) * ldexp(1.0, -24) * mag;
        if (!(fabs(got[i] - s) <= tol)) {
            if (bad++ < 3) {
                printf("  %s K=%lld M=%lld column %lld row %lld: %.9g, exact %.9g (tolerance %.3g)\n", what,
                       (long long) c->K, (long long) c->M, (long long) j, (long long) i, got[i], s, tol);
            }
        }
    }
    return bad;
}

// (a) and (b) for one (K, M).
static void test_invariance(int64_t K, int64_t M) {
    static const int64_t ns[] = { 1, 2, 3, 5, 8, 17, 64 };
    struct mm_case c;
    case_init(&c, K, M);
    float * single = malloc((size_t)(M * NMAX) * sizeof(float));
    float * o = malloc((size_t)(M * NMAX) * sizeof(float));
    int bad_ref = 0;
    for (int64_t j = 0; j < NMAX; j++) {
        mul_cols(&c, j, 1, 1, single + j * M);
        bad_ref += check_ref(&c, j, single + j * M, "alone");
    }
    int bad = 0;
    for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
        for (int nth = 1; nth <= 2; nth++) {
            const int64_t n = ns[ni], c0 = (n * 7 + (int64_t) nth * 3) % (NMAX - n + 1);
            mul_cols(&c, c0, n, nth, o);
            for (int64_t j = 0; j < n; j++) {
                if (memcmp(o + j * M, single + (c0 + j) * M, (size_t) M * sizeof(float)) == 0) continue;
                int64_t i = 0;
                while (o[j * M + i] == single[(c0 + j) * M + i]) i++;
                if (bad++ < 3) {
                    printf("  K=%lld M=%lld N=%lld threads=%d column %lld row %lld: %a, alone %a\n", (long long) K,
                           (long long) M, (long long) n, nth, (long long)(c0 + j), (long long) i, o[j * M + i],
                           single[(c0 + j) * M + i]);
                }
            }
        }
    }
    char what[160];
    snprintf(what, sizeof(what), "K=%lld M=%lld: every column alone and in batches of 1..64 (1, 2 threads), same bits",
             (long long) K, (long long) M);
    check(bad == 0, what);
    snprintf(what, sizeof(what), "K=%lld M=%lld: within the f32 rounding bound of the exact bf16 dots (%d outside)",
             (long long) K, (long long) M, bad_ref);
    check(bad_ref == 0, what);
    free(single);
    free(o);
    lm_ggml_free(c.ctx);
}

// (c): src1 of type tb in layout (0 plain, 1 permuted: rows strided, 2
// transposed), holding the values of dense f32 columns ref; the result must
// be the dense f32 product's, bit for bit.
static void test_layout(int64_t K, int64_t M, int64_t N, enum lm_ggml_type tb, int layout, int nth) {
    struct mm_case c;
    case_init(&c, K, M);
    struct lm_ggml_context * ctx = c.ctx;
    float * vals = c.b->data; // [K, NMAX]; the first N columns are used
    for (int64_t i = 0; i < K * N; i++) {
        if (tb == LM_GGML_TYPE_F16) vals[i] = lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16(vals[i]));
        if (tb == LM_GGML_TYPE_BF16) vals[i] = round_bf16(vals[i]);
    }
    // stored: plain [K, N]; permuted [K, 1, N] as [K, N, 1] permuted (0 2 1 3) of a [K, 2, N] with the
    // other half unused, so rows are 2K apart; transposed [N, K]
    struct lm_ggml_tensor * bs, * b;
    if (layout == 1) {
        bs = lm_ggml_new_tensor_3d(ctx, tb, K, 2, N);
    } else if (layout == 2) {
        bs = lm_ggml_new_tensor_2d(ctx, tb, N, K);
    } else {
        bs = lm_ggml_new_tensor_2d(ctx, tb, K, N);
    }
    const size_t es = lm_ggml_type_size(tb);
    memset(bs->data, 0x7f, lm_ggml_nbytes(bs)); // the unused half: huge values (f16: NaNs) if read
    for (int64_t j = 0; j < N; j++) {
        for (int64_t k = 0; k < K; k++) {
            const float v = vals[j * K + k];
            const int64_t idx = layout == 1 ? j * 2 * K + k : layout == 2 ? k * N + j : j * K + k;
            char * p = (char *) bs->data + (size_t) idx * es;
            if (tb == LM_GGML_TYPE_F16) {
                const lm_ggml_fp16_t h = lm_ggml_fp32_to_fp16(v);
                memcpy(p, &h, 2);
            } else if (tb == LM_GGML_TYPE_BF16) {
                const lm_ggml_bf16_t h = lm_ggml_fp32_to_bf16(v);
                memcpy(p, &h, 2);
            } else {
                memcpy(p, &v, 4);
            }
        }
    }
    if (layout == 1) {
        b = lm_ggml_view_3d(ctx, bs, K, 1, N, bs->nb[1], bs->nb[2], 0);
        b = lm_ggml_permute(ctx, b, 0, 2, 1, 3); // [K, N, 1], rows nb[2] apart
    } else if (layout == 2) {
        b = lm_ggml_transpose(ctx, bs);
    } else {
        b = bs;
    }
    struct lm_ggml_tensor * d = lm_ggml_mul_mat(ctx, c.a, b);
    struct lm_ggml_tensor * bd = lm_ggml_view_2d(ctx, c.b, K, N, c.b->nb[1], 0);
    struct lm_ggml_tensor * dd = lm_ggml_mul_mat(ctx, c.a, bd);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph_custom(ctx, GRAPH_SIZE, false);
    lm_ggml_build_forward_expand(gf, d);
    lm_ggml_build_forward_expand(gf, dd);
    compute(gf, nth);
    const bool same = memcmp(d->data, dd->data, (size_t)(M * N) * sizeof(float)) == 0;
    int bad_ref = 0;
    for (int64_t j = 0; j < N; j++) bad_ref += check_ref(&c, j, (const float *) dd->data + j * M, "dense");
    char what[200];
    snprintf(what, sizeof(what), "src1 %s %s K=%lld M=%lld N=%lld threads=%d: the bits of dense f32 columns",
             lm_ggml_type_name(tb), layout == 1 ? "permuted" : layout == 2 ? "transposed" : "plain", (long long) K,
             (long long) M, (long long) N, nth);
    check(same && bad_ref == 0, what);
    lm_ggml_free(ctx);
}

// (d): subnormal, infinite and NaN values.
static void test_special(int64_t K, int64_t M) {
    struct mm_case c;
    case_init(&c, K, M);
    lm_ggml_bf16_t * a = c.a->data;
    float * b = c.b->data;
    // row 0: subnormal weights; row 1: ordinary; row 2 (if any): an infinity; row 3: a NaN
    for (int64_t k = 0; k < K; k++) a[k].bits = (uint16_t)(((rnd() & 1) << 15) | (1 + rnd() % 0x7f));
    if (M > 2) a[2 * K + K / 2].bits = 0x7f80;
    if (M > 3) a[3 * K + K / 3].bits = 0x7fc1;
    // column 0: subnormal f32 values (some round to the least normal bf16, most to subnormals);
    // column 1: ordinary; column 2: an infinity
    for (int64_t k = 0; k < K; k++) {
        const uint32_t mant = k % 2 ? 0x7fff00u + rnd() % 0x100u : rnd() % 0x800000u; // odd k: rounds to 2^-126
        b[k] = bits2f(((rnd() & 1u) << 31) | mant);
    }
    b[2 * K + K / 2] = INFINITY;
    float * single = malloc((size_t)(M * NMAX) * sizeof(float)), * o = malloc((size_t)(M * NMAX) * sizeof(float));
    for (int64_t j = 0; j < 4; j++) mul_cols(&c, j, 1, 1, single + j * M);
    mul_cols(&c, 0, 4, 2, o);
    const bool same = memcmp(o, single, (size_t)(M * 4) * sizeof(float)) == 0;
    // row 0 (weights below 2^-126, read as zero or not) against column 1 (|v| < 2^2), and column 0
    // (|v| <= 2^-126) against row 1 (|w| < 2^4): products below 2^-122
    bool small = fabsf(single[1 * M + 0]) <= (float) K * ldexpf(1.0f, -122);
    if (M > 1) small = small && fabsf(single[0 * M + 1]) <= (float) K * ldexpf(1.0f, -122);
    char what[160];
    snprintf(what, sizeof(what), "K=%lld M=%lld: subnormals, infinity, NaN: same bits alone and in a batch, small results",
             (long long) K, (long long) M);
    check(same && small, what);
    free(single);
    free(o);
    lm_ggml_free(c.ctx);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    lm_ggml_cpu_init();
#if defined(LM_X86) && defined(BF16DOT_ONLY_AVX512)
    if (lm_cpu_force_level(LM_CPU_LEVEL_AVX2)) check(!lm_cpu_avx512bf16(), "below the avx512 level: no AVX512_BF16 kernels");
#endif
    if (!lm_cpu_force_level(BF16DOT_LEVEL) || !lm_cpu_avx512bf16()) {
        lm_cpu_force_level(-1);
        printf("SKIP: no AVX512_BF16 at the avx512 level (CPU without it, or the level capped): nothing to test\n");
        return 0;
    }
    printf("AVX512_BF16 kernels at level %d\n", (int) lm_cpu_level());
    for (int64_t K = 1; K <= 69; K += 2) {
        for (int64_t M = 1; M <= 17; M++) test_invariance(K, M);
    }
    for (int64_t M = 1; M <= 17; M += 4) test_invariance(288, M);
    test_invariance(4096, 17);
    test_invariance(4096, 3);
    static const enum lm_ggml_type tbs[] = { LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16 };
    for (int ti = 0; ti < 3; ti++) {
        for (int layout = 0; layout <= 2; layout++) {
            if (tbs[ti] == LM_GGML_TYPE_F32 && layout == 0) continue; // that is the dense product itself
            test_layout(37, 13, 7, tbs[ti], layout, 1);
            test_layout(300, 9, 1, tbs[ti], layout, 2);
            test_layout(64, 20, 19, tbs[ti], layout, 2);
        }
    }
    for (int64_t K = 1; K <= 100; K += 33) test_special(K, 5);
    test_special(288, 11);
    lm_cpu_force_level(-1);
    return check_summary();
}
