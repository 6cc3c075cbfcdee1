// mm-kernels.h - the inner kernels of mul_mat / mul_mat_id / out_prod
// (mm-float.c: f32/f16/bf16 dot tiles; mm-quant.c: activation quantizers and
// quantized dot products). Internal to the matmul files.
#pragma once

#include "ggml-cpu-impl.h"

// Row sources of the float tiles: f32, f16 or bf16 elements.
enum mm_xtype { MM_X_F32 = 0, MM_X_F16 = 1, MM_X_BF16 = 2 };

// Tile geometry: rows of src0 x columns of src1 computed by one call.
#define MM_TILE_R  4
#define MM_TILE_C  4
#define MM_MV_R    8

// Element size in bytes of the row type.
static inline int xt_size(enum mm_xtype xt) { return xt == MM_X_F32 ? 4 : 2; }

// The quantized mat-vecs' software prefetch of weights they stream once:
// into L2, not L1. An L1 prefetch holds one of the core's few line-fill
// buffers until its line arrives from memory, and the kernel's own loads
// then wait for one. (The float kernels, which do less per byte, keep
// theirs into L1: they read memory faster that way.)
#define MM_PF(p) __builtin_prefetch((p), 0, 2)

// The mat-vec kernels' prefetch of pf: the next group (MM_MV_R rows of K
// elements, contiguous) is prefetched while this one is summed: a step of
// nel elements of every row covers nel*MM_MV_R elements of the group, so the
// prefetches keep pace with the loads; MV_PF_TAIL covers [k0, K) at the end.
#define MV_PF(pf, k, nel, xt) if (pf) { \
    const char * p_ = (pf) + (k) * MM_MV_R * xt_size(xt); \
    for (int l_ = 0; l_ < (nel) * MM_MV_R * xt_size(xt); l_ += 64) __builtin_prefetch(p_ + l_); }
#define MV_PF_TAIL(pf, k0, K, xt) if (pf) { \
    for (int64_t o_ = (k0) * MM_MV_R * xt_size(xt); o_ < (K) * MM_MV_R * xt_size(xt); o_ += 64) __builtin_prefetch((pf) + o_); }

// Long rows (over MM_PF_ROW bytes) are each fetched MV_AHEAD bytes before
// the kernel reads them: eight rows 8-16 KB apart are eight streams, more
// than the hardware prefetchers keep ahead of. In a row's last MV_AHEAD
// bytes the prefetch runs on into the starts of the next group's rows (pf,
// contiguous rows: row i + MM_MV_R is 7 rows past the end of row i), which
// would otherwise start eight cold streams at once. A row or two at a time,
// ggml's order, is slower still: too few loads in flight. MV_PF_AHEAD(o,
// rowb, pf) is one line of each of the rows x0..x7 (in scope), for the
// kernel at byte o of rows of rowb bytes; call it once per 64 bytes.
#define MV_AHEAD 1024
#define MV_PF_ROWS(o) { \
    __builtin_prefetch((const char *) x0 + (o)); __builtin_prefetch((const char *) x1 + (o)); \
    __builtin_prefetch((const char *) x2 + (o)); __builtin_prefetch((const char *) x3 + (o)); \
    __builtin_prefetch((const char *) x4 + (o)); __builtin_prefetch((const char *) x5 + (o)); \
    __builtin_prefetch((const char *) x6 + (o)); __builtin_prefetch((const char *) x7 + (o)); }
#define MV_PF_AHEAD(o, rowb, pf) { \
    const int64_t a_ = (o) + MV_AHEAD; \
    if (a_ < (rowb)) { \
        MV_PF_ROWS(a_) \
    } else if (pf) { \
        MV_PF_ROWS(a_ + 7 * (rowb)) \
    } }

// out[r*MM_TILE_C + c] = dot(x[r], y[c]) over K, for every r < MM_TILE_R and
// c < MM_TILE_C (callers repeat pointers to fill a partial tile).
typedef void (*mm_tile_fn)(int64_t K, const void * const * x, const float * const * y, float * out);
// out[r] = dot(x[r], y) for r < MM_MV_R. pf, when not NULL, starts the
// next MM_MV_R contiguous rows: the kernel prefetches them a few lines per
// step, so short rows stream from memory without bursts of prefetches.
typedef void (*mm_mv_fn)(int64_t K, const void * const * x, const float * y, float * out, const char * pf);

// Blocked GEMM of rows [0, nrows) of x (xrs bytes apart) against ncol
// (at most MM_MAX_COLS_FLOAT) f32 columns, with the mat-vec kernel's bits
// per pair; scratch: MM_GEMM_SCRATCH bytes. NULL where the level has none
// (the tiles then serve).
#define MM_MAX_COLS_FLOAT 64
typedef void (*mm_gemm_fn)(int64_t K, const char * x, size_t xrs, int64_t nrows, const void * const * ycol,
                           float * const * dcol, int ncol, void * scratch);
mm_gemm_fn mm_get_gemm(enum mm_xtype xt);
// scratch bytes mm_get_gemm's kernel needs for up to ncol columns (0: none)
size_t     mm_gemm_scratch(enum mm_xtype xt, int64_t ncol);

mm_tile_fn mm_get_tile(enum mm_xtype xt);
mm_mv_fn   mm_get_mv  (enum mm_xtype xt);
// Mat-vec rows up to MM_PF_ROW bytes are short: the caller passes the next
// group as pf and the kernel prefetches it in pace (MV_PF). Longer rows get
// pf only where mm_mv_long_pf(xt): that kernel prefetches each row ahead and,
// as its rows end, the starts of the next group's.
#define MM_PF_ROW 2048
bool       mm_mv_long_pf(enum mm_xtype xt);
// The mat-vec kernel with mm_get_mv's bits that walks its rows one after the
// other (one sequential stream over contiguous rows), or NULL where the level
// has none. mul_mat takes it for contiguous short rows of matrices of
// lm_mv_seq_min_bytes() and more, which are read from memory in a model's
// decoding; smaller ones are likely in cache, where mm_get_mv's is faster.
mm_mv_fn   mm_get_mv_seq(enum mm_xtype xt);

// bf16 rows at the AVX-512 level where the CPU has AVX512_BF16
// (mm-bf16.c): mm_bf16_dot(xt) is true, mm_get_tile/mm_get_mv return the
// vdpbf16ps kernels, and their column pointers y point at the column rounded
// to bf16 (lm_ggml_bf16_t, as the scalar lm_ggml_compute_fp32_to_bf16 rounds),
// mm_bf16_col_len(K) elements, zero from K on: mul_mat writes them into its
// work buffer once per call.
#define MM_BF16_STEP 32
static inline int64_t mm_bf16_col_len(int64_t K) {
    return (K + MM_BF16_STEP - 1) & ~(int64_t)(MM_BF16_STEP - 1);
}
bool mm_bf16_dot(enum mm_xtype xt);
#if defined(LM_X86)
void mm_tile_bf16dot(int64_t K, const void * const * x, const float * const * y, float * out);
void mm_mv_bf16dot(int64_t K, const void * const * x, const float * y, float * out, const char * pf);
#endif

// Plain dot products (the vec_dot of the CPU type traits).
void mm_vec_dot_f32 (int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc);
void mm_vec_dot_f16 (int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc);
void mm_vec_dot_bf16(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc);

// y += v * x over n floats.
void mm_axpy_f32(int64_t n, float * y, float v, const float * x);

// Quantized side. mm_quant_dot returns the integer-dot kernel of a weight
// type (NULL when the type is handled by dequantizing to f32) and its
// activation type; mm_quant_from_float the activation quantizer.
lm_ggml_vec_dot_t    mm_quant_dot(enum lm_ggml_type type, enum lm_ggml_type * vec_dot_type);
lm_ggml_from_float_t mm_act_quantizer(enum lm_ggml_type vec_dot_type); // q8_0, q8_1, q8_K
// The matmul's pair: the kernel of a weight type and the quantizer of the
// activations it takes (*act), which may store them in a private order (the
// dotprod level); else as mm_quant_dot and mm_act_quantizer. NULL as mm_quant_dot.
lm_ggml_vec_dot_t    mm_quant_dot_mm(enum lm_ggml_type type, enum lm_ggml_type * vec_dot_type, lm_ggml_from_float_t * act);
// vec_dot for every quantized type (integer kernels where we have them, else
// dequantizing both sides); what lm_ggml_get_type_traits_cpu reports.
lm_ggml_vec_dot_t    mm_traits_vec_dot(enum lm_ggml_type type, enum lm_ggml_type * vec_dot_type);

// Quantized GEMM: dcol[c][r] = dot(row r of x, ycol[c]) for r in [r0, r1)
// and c < ncol (at most MM_QGEMM_MAX_COLS), the columns quantized to the
// type's activation format; weight blocks are decoded once for all columns.
// scratch: MM_QGEMM_SCRATCH bytes per thread. mm_qgemm returns the kernel of
// the current level, or NULL where the level has none (the per-pair dots of
// mm_quant_dot then serve).
#define MM_QGEMM_MAX_COLS 64
#define MM_QGEMM_SCRATCH  (18 * 1024)
typedef void (*mm_qgemm_fn)(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * const * ycol,
                            float * const * dcol, int ncol, void * scratch);
mm_qgemm_fn mm_qgemm(enum lm_ggml_type type);

// The GEMM over repacked weights (repack.c): mm_qgemm_fn's contract, the
// bits of the level's mm_qgemm, with x in the repacked layout (row r's
// group at x + r * xrs as in the plain one) and [r0, r1) whole groups of 8.
// NULL where the level has none (mul_mat then unpacks the groups for its
// other kernels).
mm_qgemm_fn mm_qgemm_repacked(enum lm_ggml_type type);
// one column of it: d[r] = dot(row r, y) for r in [r0, r1)
typedef void (*mm_qmv_rp_fn)(int64_t K, const char * x, size_t xrs, int64_t r0, int64_t r1, const void * y, float * d);

// SIMD integer dots (mm-quant-x86.c: AVX2; mm-quant-neon.c: NEON): the
// kernel for a weight type, or NULL where there is none; the activation type
// is the scalar kernel's.
#if defined(LM_X86)
lm_ggml_vec_dot_t mm_quant_dot_avx2(enum lm_ggml_type type);
mm_qgemm_fn       mm_qgemm_avx2(enum lm_ggml_type type); // mm-qgemm-x86.c
// 8 rows x 1 column in the GEMM's form: acc/accm (8 floats, the rows) take
// nb blocks of rows[r] against the column y. pf, when not NULL, is the start
// of the next 8 rows (contiguous, 8 * nb blocks): the kernel prefetches them
// in step with its blocks, as mm_mv_fn does.
typedef void (*mm_qmv_fn)(int64_t nb, const char * const * rows, const void * y, float * acc, float * accm,
                          const char * pf);
mm_qmv_fn         mm_qmv_avx2(enum lm_ggml_type type);
// the repacked layouts' mat-vec and GEMM at the AVX2 level (the AVX2 kernels' bits)
mm_qmv_rp_fn      mm_qmv_repacked_avx2(enum lm_ggml_type type);
mm_qgemm_fn       mm_qgemm_repacked_avx2(enum lm_ggml_type type);
// AVX512_VNNI forms with the AVX2 kernels' bits (mm-quant-vnni.c; the GEMM's
// in mm-qgemm-x86.c): NULL for types that have none (the AVX2 ones serve).
// Call only where the CPU has AVX512_VNNI (lm_cpu_vnni).
lm_ggml_vec_dot_t mm_quant_dot_vnni(enum lm_ggml_type type);
mm_qmv_fn         mm_qmv_vnni(enum lm_ggml_type type);
mm_qgemm_fn       mm_qgemm_vnni(enum lm_ggml_type type);
mm_qmv_rp_fn      mm_qmv_repacked_vnni(enum lm_ggml_type type);
mm_qgemm_fn       mm_qgemm_repacked_vnni(enum lm_ggml_type type);
#endif
#if defined(LM_ARM64)
lm_ggml_vec_dot_t mm_quant_dot_neon(enum lm_ggml_type type);
// 8 rows x 1 column (mm-quant-neon.h): out[r] = the level's per-row kernel's
// result for rows[r] (nb blocks) against the column y, bit for bit. pf as
// mm_qmv_fn's. mm_qmv8_neon: ARMv8.0; mm_qmv8_neon_dotprod: with SDOT, the
// activations in lane order (mm_act_quantizer_dotprod). NULL: no such kernel.
typedef void (*mm_qmv8_fn)(int64_t nb, const char * const * rows, const void * y, float * out, const char * pf);
mm_qmv8_fn        mm_qmv8_neon(enum lm_ggml_type type);
mm_qmv8_fn        mm_qmv8_neon_dotprod(enum lm_ggml_type type);
mm_qgemm_fn       mm_qgemm_neon(enum lm_ggml_type type, bool dotprod); // mm-qgemm-neon.c
// mm-quant-neon-dot.c: with SDOT, the same bits as mm_quant_dot_neon's
// kernels; call only where the CPU has the dot product extension. The _pre
// kernels take activations from mm_act_quantizer_dotprod, whose quants are
// reordered (mm_act_permute_dotprod) as the kernels' lanes take them.
lm_ggml_vec_dot_t    mm_quant_dot_neon_dotprod(enum lm_ggml_type type);
lm_ggml_vec_dot_t    mm_quant_dot_neon_dotprod_pre(enum lm_ggml_type type);
lm_ggml_from_float_t mm_act_quantizer_dotprod(enum lm_ggml_type vec_dot_type);
void                 mm_act_permute_dotprod(enum lm_ggml_type vec_dot_type, void * y, int64_t nb);
#endif
