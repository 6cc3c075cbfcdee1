// test-vnni.c - the AVX512_VNNI forms of the quantized integer dots against
// the AVX2 kernels, bit for bit: the 1-row dots (type traits), the 8-row
// mat-vec kernels and the quantized GEMM (odd row counts, 1..n blocks, one
// and many columns), then mul_mat at the AVX-512 level against the AVX2
// level. Random blocks and extreme ones (activations all -128 or 127,
// weights at their extremes, -128 in q8_0 weights). Skips, passing, where
// the CPU has no AVX512_VNNI (or the level is capped below avx512).
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-vnni.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "ggml-common.h"
#include "mm-kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-check.h"

#if defined(LM_X86)
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 32);
}

// a scale: mostly ordinary magnitudes of either sign, sometimes 0, -0, the
// largest fp16 or a subnormal
static lm_ggml_fp16_t rnd_scale(void) {
    switch (rnd() % 16) {
        case 0:  return 0x0000;
        case 1:  return 0x8000;
        case 2:  return 0x7BFF;
        case 3:  return 0x0001 + (rnd() & 0x3FF);
        default: return lm_ggml_fp32_to_fp16(((float) (rnd() % 2001) - 1000.0f) * 1e-3f);
    }
}

// Fill modes of the quant bytes: random, all 0x00, all 0xFF, all 0x80, all
// 0x7F, alternating 0x80/0x7F (for q8: -128, -1, -128, 127, both extremes).
enum { FILL_RANDOM, FILL_00, FILL_FF, FILL_80, FILL_7F, FILL_ALT, FILL_COUNT };
static void fill_bytes(void * p, size_t n, int mode) {
    uint8_t * b = p;
    for (size_t i = 0; i < n; i++) {
        switch (mode) {
            case FILL_00:  b[i] = 0x00; break;
            case FILL_FF:  b[i] = 0xFF; break;
            case FILL_80:  b[i] = 0x80; break;
            case FILL_7F:  b[i] = 0x7F; break;
            case FILL_ALT: b[i] = (i & 1) ? 0x7F : 0x80; break;
            default:       b[i] = (uint8_t) rnd(); break;
        }
    }
}

// The fp16 scale fields of a weight block (byte offsets, -1 ends the list):
// they get drawn scales, the rest of the block random or extreme bytes.
static void scale_fields(enum lm_ggml_type t, int off[3]) {
    off[0] = 0; off[1] = -1; off[2] = -1;
    switch (t) {
        case LM_GGML_TYPE_Q4_1: case LM_GGML_TYPE_Q5_1: off[1] = 2; break;              // d, m
        case LM_GGML_TYPE_Q4_K: case LM_GGML_TYPE_Q5_K: off[1] = 2; break;              // d, dmin
        case LM_GGML_TYPE_Q2_K: off[0] = (int) offsetof(block_q2_K, d); off[1] = off[0] + 2; break;
        case LM_GGML_TYPE_Q3_K: off[0] = (int) offsetof(block_q3_K, d); break;
        case LM_GGML_TYPE_Q6_K: off[0] = (int) offsetof(block_q6_K, d); break;
        default: break;                                                                  // d first
    }
}

static void fill_x(enum lm_ggml_type t, void * x, int64_t nblk) {
    const size_t bs = lm_ggml_type_size(t);
    int off[3];
    scale_fields(t, off);
    for (int64_t i = 0; i < nblk; i++) {
        uint8_t * b = (uint8_t *) x + i * bs;
        fill_bytes(b, bs, rnd() % 3 ? FILL_RANDOM : (int) (rnd() % FILL_COUNT));
        for (int k = 0; k < 3 && off[k] >= 0; k++) {
            const lm_ggml_fp16_t d = rnd_scale();
            memcpy(b + off[k], &d, 2);
        }
    }
}

// Activations (q8_0, q8_1, q8_K): quants from the whole int8 range or
// extreme blocks; q8_K's block sums are those of its quants.
static void fill_y(enum lm_ggml_type vdt, void * y, int64_t nblk) {
    for (int64_t i = 0; i < nblk; i++) {
        const int mode = rnd() % 3 ? FILL_RANDOM : (int) (rnd() % FILL_COUNT);
        if (vdt == LM_GGML_TYPE_Q8_K) {
            block_q8_K * b = (block_q8_K *) y + i;
            b->d = lm_ggml_fp16_to_fp32(rnd_scale());
            fill_bytes(b->qs, sizeof(b->qs), mode);
            for (int j = 0; j < 16; j++) {
                int sum = 0;
                for (int l = 0; l < 16; l++) sum += b->qs[16 * j + l];
                b->bsums[j] = (int16_t) sum;
            }
        } else if (vdt == LM_GGML_TYPE_Q8_1) {
            block_q8_1 * b = (block_q8_1 *) y + i;
            b->d = rnd_scale();
            b->s = rnd_scale();
            fill_bytes(b->qs, sizeof(b->qs), mode);
        } else {
            block_q8_0 * b = (block_q8_0 *) y + i;
            b->d = rnd_scale();
            fill_bytes(b->qs, sizeof(b->qs), mode);
        }
    }
}

static bool same_bits(const float * a, const float * b, int n) { return memcmp(a, b, (size_t) n * sizeof(float)) == 0; }

// 1-row dots: mm_quant_dot_vnni against mm_quant_dot_avx2.
static void test_vec_dot(enum lm_ggml_type t, int max_blocks, int reps) {
    const lm_ggml_vec_dot_t v = mm_quant_dot_vnni(t), a = mm_quant_dot_avx2(t);
    char what[160];
    snprintf(what, sizeof(what), "%s: a 1-row VNNI kernel exists", lm_ggml_type_name(t));
    check(v != NULL && a != NULL, what);
    if (v == NULL || a == NULL) return;
    enum lm_ggml_type vdt;
    check(mm_quant_dot(t, &vdt) != NULL, "activation type");
    const int64_t bk = lm_ggml_blck_size(t);
    const size_t bs = lm_ggml_type_size(t), ybs = lm_ggml_type_size(vdt);
    void * x = malloc(bs * max_blocks);
    void * y = malloc(ybs * max_blocks);
    int bad = 0, n = 0;
    for (int nb = 1; nb <= max_blocks; nb++) {
        for (int rep = 0; rep < reps; rep++, n++) {
            fill_x(t, x, nb);
            fill_y(vdt, y, nb);
            float sv, sa;
            v((int) bk * nb, &sv, 0, x, 0, y, 0, 1);
            a((int) bk * nb, &sa, 0, x, 0, y, 0, 1);
            if (!same_bits(&sv, &sa, 1) && bad++ < 5) {
                printf("  %s vec_dot nb=%d rep=%d: vnni %a, avx2 %a\n", lm_ggml_type_name(t), nb, rep, sv, sa);
            }
        }
    }
    snprintf(what, sizeof(what), "%s: 1-row dot, %d cases of 1..%d blocks, same bits (%d differ)", lm_ggml_type_name(t), n,
             max_blocks, bad);
    check(bad == 0, what);
    free(x);
    free(y);
}

// 8-row mat-vec kernels: mm_qmv_vnni against mm_qmv_avx2, from random
// accumulators (they add to them), with rows repeated as the GEMM's driver
// repeats its last row, and with and without the prefetch pointer.
static void test_qmv(enum lm_ggml_type t, int max_blocks, int reps) {
    const mm_qmv_fn v = mm_qmv_vnni(t), a = mm_qmv_avx2(t);
    char what[160];
    snprintf(what, sizeof(what), "%s: an 8-row VNNI mat-vec kernel exists", lm_ggml_type_name(t));
    check(v != NULL && a != NULL, what);
    if (v == NULL || a == NULL) return;
    enum lm_ggml_type vdt;
    check(mm_quant_dot(t, &vdt) != NULL, "activation type");
    const size_t bs = lm_ggml_type_size(t), ybs = lm_ggml_type_size(vdt);
    char * x = malloc(bs * max_blocks * 8);
    char * y = malloc(ybs * max_blocks);
    int bad = 0, n = 0;
    for (int nb = 1; nb <= max_blocks; nb++) {
        for (int rep = 0; rep < reps; rep++, n++) {
            fill_x(t, x, (int64_t) nb * 8);
            fill_y(vdt, y, nb);
            const int nrows = 1 + rep % 8; // rows past nrows repeat the last one
            const char * rows[8];
            for (int r = 0; r < 8; r++) rows[r] = x + (size_t)(r < nrows ? r : nrows - 1) * nb * bs;
            float av[8], am_v[8], aa[8], am_a[8];
            for (int r = 0; r < 8; r++) {
                av[r] = aa[r] = (rep & 1) ? 0.0f : (float) ((int) (rnd() % 2001) - 1000) * 0.25f;
                am_v[r] = am_a[r] = (float) r;
            }
            const char * pf = (rep & 2) ? x : NULL;
            v(nb, rows, y, av, am_v, pf);
            a(nb, rows, y, aa, am_a, pf);
            if ((!same_bits(av, aa, 8) || !same_bits(am_v, am_a, 8)) && bad++ < 5) {
                for (int r = 0; r < 8; r++) {
                    if (av[r] != aa[r]) printf("  %s qmv nb=%d rep=%d row %d: vnni %a, avx2 %a\n", lm_ggml_type_name(t), nb, rep, r, av[r], aa[r]);
                }
            }
        }
    }
    snprintf(what, sizeof(what), "%s: 8-row mat-vec, %d cases of 1..%d blocks, same bits (%d differ)", lm_ggml_type_name(t), n,
             max_blocks, bad);
    check(bad == 0, what);
    free(x);
    free(y);
}

// The GEMM: rows [r0, r1) of an odd-sized matrix against 1, 2, 5 and 64
// columns (1 takes the mat-vec kernels, more the panels), K past one panel
// stretch (16 blocks of 32, 2 of 256).
static void test_qgemm(enum lm_ggml_type t, const int * kblocks, int nk) {
    const mm_qgemm_fn v = mm_qgemm_vnni(t), a = mm_qgemm_avx2(t);
    char what[200];
    snprintf(what, sizeof(what), "%s: a VNNI GEMM entry exists", lm_ggml_type_name(t));
    check(v != NULL && a != NULL, what);
    if (v == NULL || a == NULL) return;
    enum lm_ggml_type vdt;
    check(mm_quant_dot(t, &vdt) != NULL, "activation type");
    const int row_counts[] = { 1, 3, 7, 8, 9, 13, 17, 31 };
    const int col_counts[] = { 1, 2, 5, MM_QGEMM_MAX_COLS };
    const int64_t bk = lm_ggml_blck_size(t);
    const size_t bs = lm_ggml_type_size(t), ybs = lm_ggml_type_size(vdt);
    void * scratch = aligned_alloc(64, MM_QGEMM_SCRATCH + 64);
    int bad = 0, n = 0;
    for (int ik = 0; ik < nk; ik++) {
        const int nb = bk == 256 ? (kblocks[ik] + 7) / 8 : kblocks[ik];
        for (size_t ir = 0; ir < sizeof(row_counts) / sizeof(row_counts[0]); ir++) {
            for (size_t ic = 0; ic < sizeof(col_counts) / sizeof(col_counts[0]); ic++, n++) {
                const int nrows = row_counts[ir], ncol = col_counts[ic];
                const int r0 = (int) (rnd() % 3), r1 = r0 + nrows;
                char * x = malloc(bs * nb * r1);
                char * y = malloc(ybs * nb * ncol);
                float * dv = malloc(sizeof(float) * r1 * ncol), * da = malloc(sizeof(float) * r1 * ncol);
                fill_x(t, x, (int64_t) nb * r1);
                fill_y(vdt, y, (int64_t) nb * ncol);
                const void * ycol[MM_QGEMM_MAX_COLS];
                float * dcv[MM_QGEMM_MAX_COLS], * dca[MM_QGEMM_MAX_COLS];
                for (int c = 0; c < ncol; c++) {
                    ycol[c] = y + ybs * nb * c;
                    dcv[c] = dv + (size_t) c * r1;
                    dca[c] = da + (size_t) c * r1;
                }
                memset(dv, 0, sizeof(float) * r1 * ncol);
                memset(da, 0, sizeof(float) * r1 * ncol);
                v(bk * nb, x, bs * nb, r0, r1, ycol, dcv, ncol, scratch);
                a(bk * nb, x, bs * nb, r0, r1, ycol, dca, ncol, scratch);
                if (!same_bits(dv, da, r1 * ncol) && bad++ < 5) {
                    printf("  %s qgemm K=%lld rows [%d,%d) cols %d differ\n", lm_ggml_type_name(t), (long long) (bk * nb), r0, r1, ncol);
                }
                free(x);
                free(y);
                free(dv);
                free(da);
            }
        }
    }
    snprintf(what, sizeof(what), "%s: GEMM, %d shapes (rows 1..31, 1..64 columns), same bits (%d differ)", lm_ggml_type_name(t),
             n, bad);
    check(bad == 0, what);
    free(scratch);
}

// mul_mat through the graph: the AVX-512 level (VNNI kernels) against the
// AVX2 level, bit for bit, 1 and 2 threads.
static void run_mul_mat(enum lm_ggml_type t, int64_t K, int64_t rows, int64_t cols, int nth, int level, float * out,
                        const float * wf, const float * af) {
    check(lm_cpu_force_level(level), "force level");
    struct lm_ggml_init_params ip = { (size_t) 64 << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx, t, K, rows);
    struct lm_ggml_tensor * act = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, cols);
    lm_ggml_quantize_chunk(t, wf, w->data, 0, rows, K, NULL);
    memcpy(act->data, af, (size_t) (K * cols) * sizeof(float));
    struct lm_ggml_tensor * r = lm_ggml_mul_mat(ctx, w, act);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, r);
    lm_ggml_graph_compute_with_ctx(ctx, g, nth);
    memcpy(out, r->data, (size_t) (rows * cols) * sizeof(float));
    lm_ggml_free(ctx);
    lm_cpu_force_level(-1);
}

static void test_mul_mat(enum lm_ggml_type t) {
    const int64_t s32[][3] = { { 32, 1, 1 }, { 96, 9, 1 }, { 256, 17, 3 }, { 1024, 33, 1 }, { 608, 13, 70 } };
    const int64_t s256[][3] = { { 256, 1, 1 }, { 512, 9, 1 }, { 256, 17, 3 }, { 1024, 33, 1 }, { 768, 13, 70 } };
    const int64_t (*shapes)[3] = lm_ggml_blck_size(t) == 256 ? s256 : s32;
    char what[200];
    for (size_t is = 0; is < sizeof(s32) / sizeof(s32[0]); is++) {
        const int64_t K = shapes[is][0], rows = shapes[is][1], cols = shapes[is][2];
        float * wf = malloc(sizeof(float) * K * rows), * af = malloc(sizeof(float) * K * cols);
        for (int64_t i = 0; i < K * rows; i++) wf[i] = (float) ((int) (rnd() % 20001) - 10000) * 1e-4f;
        for (int64_t i = 0; i < K * cols; i++) af[i] = (float) ((int) (rnd() % 20001) - 10000) * 1e-3f;
        float * o2 = malloc(sizeof(float) * rows * cols), * o5 = malloc(sizeof(float) * rows * cols);
        for (int nth = 1; nth <= 2; nth++) {
            run_mul_mat(t, K, rows, cols, nth, LM_CPU_LEVEL_AVX2, o2, wf, af);
            run_mul_mat(t, K, rows, cols, nth, LM_CPU_LEVEL_AVX512, o5, wf, af);
            snprintf(what, sizeof(what), "%s: mul_mat K=%lld rows=%lld cols=%lld %d thread(s): avx512 (VNNI) = avx2 bits",
                     lm_ggml_type_name(t), (long long) K, (long long) rows, (long long) cols, nth);
            check(same_bits(o2, o5, (int) (rows * cols)), what);
        }
        free(wf);
        free(af);
        free(o2);
        free(o5);
    }
}
#endif

int main(void) {
#if defined(LM_X86)
    if (!lm_cpu_vnni()) {
        printf("SKIP: no AVX512_VNNI here (CPU, OS or LM_GGML_CPU_LEVEL): the VNNI kernels are not tested\n");
        return 0;
    }
    // the level's choice: the VNNI forms at avx512 (this CPU), the AVX2 ones at avx2
    enum lm_ggml_type vdt;
    check(mm_quant_dot(LM_GGML_TYPE_Q8_0, &vdt) == mm_quant_dot_vnni(LM_GGML_TYPE_Q8_0), "avx512 level: q8_0 dot is the VNNI one");
    check(mm_qgemm(LM_GGML_TYPE_Q4_K) == mm_qgemm_vnni(LM_GGML_TYPE_Q4_K), "avx512 level: q4_K GEMM is the VNNI one");
    check(lm_cpu_force_level(LM_CPU_LEVEL_AVX2) && !lm_cpu_vnni(), "avx2 level: no VNNI");
    check(mm_quant_dot(LM_GGML_TYPE_Q8_0, &vdt) == mm_quant_dot_avx2(LM_GGML_TYPE_Q8_0), "avx2 level: q8_0 dot is the AVX2 one");
    check(mm_qgemm(LM_GGML_TYPE_Q4_K) == mm_qgemm_avx2(LM_GGML_TYPE_Q4_K), "avx2 level: q4_K GEMM is the AVX2 one");
    lm_cpu_force_level(-1);
    const int kblocks[] = { 1, 2, 3, 5, 16, 17, 40 };
    // the types with VNNI forms of their own: 1-row dots, 8-row mat-vec
    for (int i = 0; i < LM_GGML_TYPE_COUNT; i++) {
        const enum lm_ggml_type t = (enum lm_ggml_type) i;
        const int max_blocks = lm_ggml_blck_size(t) == 256 ? 9 : 40;
        if (mm_quant_dot_vnni(t) != NULL) test_vec_dot(t, max_blocks, 24);
        if (mm_qmv_vnni(t) != NULL) test_qmv(t, max_blocks, 24);
    }
    const enum lm_ggml_type mm_types[] = { LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0,
                                           LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_XS };
    for (size_t i = 0; i < sizeof(mm_types) / sizeof(mm_types[0]); i++) test_mul_mat(mm_types[i]);
    // every type through the GEMM entries (the VNNI micro-kernels of q4_1/q5_1 and the K-quants)
    for (int t = 0; t < LM_GGML_TYPE_COUNT; t++) {
        if (mm_qgemm_avx2((enum lm_ggml_type) t) != NULL) test_qgemm((enum lm_ggml_type) t, kblocks, (int) (sizeof(kblocks) / sizeof(kblocks[0])));
    }
    return check_summary();
#else
    printf("SKIP: not x86-64\n");
    return 0;
#endif
}
