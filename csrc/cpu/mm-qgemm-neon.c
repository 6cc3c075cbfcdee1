// mm-qgemm-neon.c - the quantized GEMM entry of arm64 (mm_qgemm): rows in
// groups of 8 against each column with the 8-row kernels (mm_qmv8_fn), which
// give every (row, column) the bits of the per-row kernel of the level, so a
// column's result depends neither on the number of columns nor on how rows
// are split among threads. Types without an 8-row kernel get NULL (the
// matmul then runs the per-row kernels).
#include "mm-kernels.h"

#if defined(LM_ARM64)
#include <string.h>

#define QG_R        8    // rows per group: the kernels' rows
#define QG_PF_AHEAD 2    // groups of rows prefetched ahead
#define QG_PF_ROW   4096 // rows up to this many bytes are prefetched

static void qgemm_run(mm_qmv8_fn mv, enum lm_ggml_type t, int64_t K, const char * x, size_t xrs, int64_t r0,
                      int64_t r1, const void * const * ycol, float * const * dcol, int ncol) {
    const int64_t nb = K / lm_ggml_blck_size(t);
    const size_t rowb = (size_t) nb * lm_ggml_type_size(t);
    for (int64_t r = r0; r < r1; r += QG_R) {
        const int nr = (int) LM_GGML_MIN(QG_R, r1 - r);
        const char * rows[QG_R];
        // rows past the end repeat the last one: their results are not stored
        for (int i = 0; i < QG_R; i++) rows[i] = x + (r + LM_GGML_MIN(i, nr - 1)) * xrs;
        // short contiguous rows: the group QG_PF_AHEAD on is prefetched in step with
        // the blocks (it may lie past r1 or the matrix: a prefetch never faults)
        const char * pf = rowb <= QG_PF_ROW && xrs == rowb ? x + (r + QG_PF_AHEAD * QG_R) * xrs : NULL;
        for (int c = 0; c < ncol; c++) {
            float out[QG_R];
            mv(nb, rows, ycol[c], out, c == 0 ? pf : NULL);
            memcpy(dcol[c] + r, out, (size_t) nr * sizeof(float));
        }
    }
}

#define QG_ENTRY(T, LEVEL)                                                                                         \
static void qgemm_##T##_##LEVEL(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1,                    \
                                const void * const * ycol, float * const * dcol, int ncol, void * scratch) {     \
    (void) scratch;                                                                                                \
    qgemm_run(mm_qmv8_##LEVEL(LM_GGML_TYPE_##T), LM_GGML_TYPE_##T, K, x, xrs, r0, r1, ycol, dcol, ncol);          \
}
#define QG_ENTRIES(T) QG_ENTRY(T, neon) QG_ENTRY(T, neon_dotprod)
QG_ENTRIES(Q4_0)
QG_ENTRIES(Q4_1)
QG_ENTRIES(Q5_0)
QG_ENTRIES(Q5_1)
QG_ENTRIES(Q8_0)
QG_ENTRIES(IQ4_NL)
QG_ENTRIES(Q2_K)
QG_ENTRIES(Q3_K)
QG_ENTRIES(Q4_K)
QG_ENTRIES(Q5_K)
QG_ENTRIES(Q6_K)
QG_ENTRIES(IQ4_XS)

// dotprod: the kernels that take activations in lane order, as the matmul
// quantizes them at that level (mm_quant_dot_mm)
mm_qgemm_fn mm_qgemm_neon(enum lm_ggml_type type, bool dotprod) {
    switch (type) {
#define QG_CASE(T) case LM_GGML_TYPE_##T: return dotprod ? qgemm_##T##_neon_dotprod : qgemm_##T##_neon
        QG_CASE(Q4_0); QG_CASE(Q4_1); QG_CASE(Q5_0); QG_CASE(Q5_1); QG_CASE(Q8_0); QG_CASE(IQ4_NL);
        QG_CASE(Q2_K); QG_CASE(Q3_K); QG_CASE(Q4_K); QG_CASE(Q5_K); QG_CASE(Q6_K); QG_CASE(IQ4_XS);
#undef QG_CASE
        default: return NULL;
    }
}
#else
typedef int mm_qgemm_neon_unused; // ISO C forbids an empty translation unit
#endif
