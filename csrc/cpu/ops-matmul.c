// ops-matmul.c - CPU kernels of mul_mat, mul_mat_id and out_prod (the
// constructors are in graph/ctor-matmul.c). The inner kernels live in
// mm-float.c (f32/f16/bf16 tiles), mm-bf16.c (bf16 with AVX512_BF16) and
// mm-quant.c (quantized dot products).
//
// mul_mat computes dst[i, j] = dot(row i of src0, row j of src1) over K =
// ne00. Each node runs in two phases: (1) src1 is rewritten into the work
// buffer in the form the src0 type dots against (dense f32, bf16 for the
// AVX512_BF16 kernels, or the q8 activation format of integer kernels),
// threads taking groups of its rows from a shared counter; (2) threads take
// blocks of (src0 rows x src1 columns) from another. No barrier between
// them: a thread waits only for the groups others are converting, not for a
// thread that starts late.
#include "mm-kernels.h"

#include <pthread.h>
#include <stdatomic.h>

// ---------------------------------------------------------------- type checks

// f32, f16, bf16 and the quantized types with a dequantizer (the repacked
// layouts have none: they are computed from their CPU_REPACK buffer)
static bool mm_weight_type_ok(enum lm_ggml_type t) { return lm_type_to_f32_row(t) != NULL; }

static bool mm_act_type_ok(enum lm_ggml_type t) {
    return t == LM_GGML_TYPE_F32 || t == LM_GGML_TYPE_F16 || t == LM_GGML_TYPE_BF16;
}

// What the kernels handle (the constructors check shapes only, as ggml's
// do; a node of other types is refused when computing).
static bool lm_supports_mul_mat(const struct lm_ggml_tensor * node) {
    const struct lm_ggml_tensor * a = node->src[0], * b = node->src[1];
    return mm_weight_type_ok(a->type) && a->nb[0] == lm_ggml_type_size(a->type) && mm_act_type_ok(b->type) &&
           node->type == LM_GGML_TYPE_F32;
}

static bool lm_supports_mul_mat_id(const struct lm_ggml_tensor * node) {
    return lm_supports_mul_mat(node) && node->src[2] != NULL && node->src[2]->type == LM_GGML_TYPE_I32;
}

static bool lm_supports_out_prod(const struct lm_ggml_tensor * node) {
    const struct lm_ggml_tensor * a = node->src[0], * b = node->src[1];
    return mm_weight_type_ok(a->type) && (a->type == LM_GGML_TYPE_F32 || a->nb[0] == lm_ggml_type_size(a->type)) &&
           b->type == LM_GGML_TYPE_F32 && node->type == LM_GGML_TYPE_F32;
}

// ---------------------------------------------------------------- plan: how src0 meets src1

enum mm_path {
    MM_FLOAT, // f32/f16/bf16 rows against dense f32 columns
    MM_QUANT, // integer dot against src1 quantized to vdt
    MM_DEQ,   // quantized rows dequantized to f32 in blocks, then as MM_FLOAT
};

#define MM_ALIGN    64
#define MM_DEQ_ROWS 16  // rows dequantized at once (a multiple of MM_TILE_R and MM_MV_R)
#define MM_MAX_COLS MM_QGEMM_MAX_COLS // columns per block (at most)
struct mm_plan {
    enum mm_path      path;
    enum mm_xtype     xt;
    lm_ggml_vec_dot_t vd;
    mm_qgemm_fn       qg;  // MM_QUANT: the level's GEMM, else per-pair dots vd
    enum lm_ggml_type vdt;
    lm_ggml_from_float_t act; // MM_QUANT: quantizes src1 columns as vd takes them
    int64_t K;
    bool    convert;      // src1 is rewritten into the work buffer
    bool    act_bf16;     // MM_FLOAT of bf16 rows with vdpbf16ps: columns rounded to bf16 (mm_bf16_dot)
    size_t  col_size;     // bytes per converted column
    size_t  conv_bytes;
    size_t  scratch;      // per thread
    bool    repack;       // src0 is repacked (repack.c): the first rp_bytes of scratch take a plain group
    size_t  rp_bytes;
    enum lm_ggml_type rp_type; // repack: src0's type
    mm_qgemm_fn rqg;      // repack: the level's GEMM over the repacked layout, or NULL
};

static size_t mm_pad(size_t n) { return (n + MM_ALIGN - 1) & ~(size_t)(MM_ALIGN - 1); }

static void mm_make_plan(const struct lm_ggml_tensor * src0, const struct lm_ggml_tensor * src1, bool mul_mat_id, struct mm_plan * p) {
    memset(p, 0, sizeof(*p));
    p->K = src0->ne[0];
    const int64_t ncols = src1->ne[1] * src1->ne[2] * src1->ne[3];
    const int64_t ncols_blk = mul_mat_id ? MM_MAX_COLS : src1->ne[1]; // columns a block can hold
    switch (src0->type) {
        case LM_GGML_TYPE_F32:  p->path = MM_FLOAT; p->xt = MM_X_F32;  break;
        case LM_GGML_TYPE_F16:  p->path = MM_FLOAT; p->xt = MM_X_F16;  break;
        case LM_GGML_TYPE_BF16: p->path = MM_FLOAT; p->xt = MM_X_BF16; break;
        default:
            p->vd = mm_quant_dot_mm(src0->type, &p->vdt, &p->act);
            p->path = p->vd != NULL ? MM_QUANT : MM_DEQ;
            p->qg = p->vd != NULL ? mm_qgemm(src0->type) : NULL;
            p->xt = MM_X_F32;
            break;
    }
    if (p->path == MM_QUANT) {
        p->convert  = true;
        p->col_size = lm_ggml_row_size(p->vdt, p->K);
        // staging of non-f32 / strided columns (phase 1), then the GEMM's panels (phase 2)
        p->scratch  = mm_pad(LM_GGML_MAX((size_t) p->K * sizeof(float), p->qg ? (size_t) MM_QGEMM_SCRATCH : 0));
    } else if (p->path == MM_FLOAT && mm_bf16_dot(p->xt)) {
        // ggml's vec_dot_type of bf16 is bf16: columns rounded once per call, padded
        // with zeros to whole steps of the kernels (a multiple of 64 bytes)
        p->act_bf16 = true;
        p->convert  = true;
        p->col_size = (size_t) mm_bf16_col_len(p->K) * sizeof(lm_ggml_bf16_t);
    } else {
        p->convert  = !(src1->type == LM_GGML_TYPE_F32 && src1->nb[0] == sizeof(float));
        p->col_size = (size_t) p->K * sizeof(float);
        // dequantized rows (MM_DEQ), then the accumulators of the blocked GEMM
        p->scratch  = (p->path == MM_DEQ ? mm_pad((size_t) MM_DEQ_ROWS * p->K * sizeof(float)) : 0) +
                      mm_pad(mm_gemm_scratch(p->xt, ncols_blk));
    }
    p->conv_bytes = p->convert ? mm_pad(p->col_size * (size_t) ncols) : 0;
    if (!mul_mat_id && lm_cpu_tensor_is_repacked(src0)) {
        p->repack   = true;
        p->rp_bytes = mm_pad(8 * src0->nb[1]);
        p->rp_type  = src0->type;
        p->scratch += p->rp_bytes;
        p->rqg      = p->path == MM_QUANT && p->qg != NULL ? mm_qgemm_repacked(src0->type) : NULL;
    }
}

// Work buffer: [converted src1 | per-thread scratch | extra].
static size_t mm_layout_size(const struct mm_plan * p, int nth) {
    return p->conv_bytes + (size_t) nth * p->scratch;
}
static char * mm_conv_base(const struct lm_ggml_compute_params * params) {
    return (char *) params->wdata;
}
static float * mm_scratch(const struct lm_ggml_compute_params * params, const struct mm_plan * p) {
    return (float *)(mm_conv_base(params) + p->conv_bytes + (size_t) params->ith * p->scratch);
}
static char * mm_extra(const struct lm_ggml_compute_params * params, const struct mm_plan * p) {
    return mm_conv_base(params) + p->conv_bytes + (size_t) params->nth * p->scratch;
}
// The engine's counters (lm_cpu_counter: 0 at the start of each node).
enum { MM_CTR_CHUNK, MM_CTR_CONV, MM_CTR_CONV_DONE };

static inline float mm_load_f32(const char * p, enum lm_ggml_type t) {
    switch (t) {
        case LM_GGML_TYPE_F16:  return LM_GGML_FP16_TO_FP32(*(const lm_ggml_fp16_t *) p);
        case LM_GGML_TYPE_BF16: return LM_GGML_BF16_TO_FP32(*(const lm_ggml_bf16_t *) p);
        default:                return *(const float *) p;
    }
}

// One src1 row (K elements, stride nb0) as dense f32 into out.
static void mm_row_to_f32(const char * s, enum lm_ggml_type t, size_t nb0, int64_t K, float * out) {
    if (nb0 == lm_ggml_type_size(t)) {
        lm_type_to_f32_row(t)(s, out, K);
    } else {
        for (int64_t k = 0; k < K; k++) out[k] = mm_load_f32(s + k * nb0, t);
    }
}

// One src1 row (K elements, stride nb0) rounded to bf16 (lm_ggml_compute_fp32_to_bf16's
// bits; bf16 rows copied as they are), zero up to mm_bf16_col_len(K).
static void mm_row_to_bf16(const char * s, enum lm_ggml_type t, size_t nb0, int64_t K, lm_ggml_bf16_t * out) {
    if (t == LM_GGML_TYPE_F32 && nb0 == sizeof(float)) {
        lm_ggml_fp32_to_bf16_row((const float *) s, out, K);
    } else if (t == LM_GGML_TYPE_BF16) {
        for (int64_t k = 0; k < K; k++) memcpy(&out[k], s + k * nb0, sizeof(lm_ggml_bf16_t));
    } else {
        for (int64_t k = 0; k < K; k++) out[k] = lm_ggml_compute_fp32_to_bf16(mm_load_f32(s + k * nb0, t));
    }
    memset(out + K, 0, (size_t)(mm_bf16_col_len(K) - K) * sizeof(lm_ggml_bf16_t));
}

static void mm_convert_rows(const struct lm_ggml_compute_params * params, const struct mm_plan * p,
                            const struct lm_ggml_tensor * src1, int64_t r0, int64_t r1) {
    const int64_t n1 = src1->ne[1], n2 = src1->ne[2];
    char * conv = mm_conv_base(params);
    const lm_ggml_from_float_t q = p->path == MM_QUANT ? p->act : NULL;
    float * stage = p->path == MM_QUANT ? mm_scratch(params, p) : NULL;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % n1, i2 = (r / n1) % n2, i3 = r / (n1 * n2);
        const char * s = (const char *) src1->data + i1 * src1->nb[1] + i2 * src1->nb[2] + i3 * src1->nb[3];
        char * d = conv + (size_t) r * p->col_size;
        if (p->act_bf16) {
            mm_row_to_bf16(s, src1->type, src1->nb[0], p->K, (lm_ggml_bf16_t *) d);
        } else if (q == NULL) {
            mm_row_to_f32(s, src1->type, src1->nb[0], p->K, (float *) d);
        } else if (src1->type == LM_GGML_TYPE_F32 && src1->nb[0] == sizeof(float)) {
            q((const float *) s, d, p->K);
        } else {
            mm_row_to_f32(s, src1->type, src1->nb[0], p->K, stage);
            q(stage, d, p->K);
        }
    }
}

// Phase 1: src1 rows into the work buffer, MM_CONV_ROWS at a time, taken
// from a counter; returns when all are converted.
#define MM_CONV_ROWS 4
static void mm_convert_src1(const struct lm_ggml_compute_params * params, const struct mm_plan * p,
                            const struct lm_ggml_tensor * src1) {
    if (!p->convert) return;
    const int64_t nrows = src1->ne[1] * src1->ne[2] * src1->ne[3];
    const int64_t ngroups = (nrows + MM_CONV_ROWS - 1) / MM_CONV_ROWS;
    atomic_int * next = lm_cpu_counter(params, MM_CTR_CONV), * done = lm_cpu_counter(params, MM_CTR_CONV_DONE);
    for (int64_t g; (g = atomic_fetch_add_explicit(next, 1, memory_order_relaxed)) < ngroups;) {
        mm_convert_rows(params, p, src1, g * MM_CONV_ROWS, LM_GGML_MIN((g + 1) * MM_CONV_ROWS, nrows));
        atomic_fetch_add_explicit(done, 1, memory_order_release);
    }
    lm_cpu_wait_counter(params, done, (int) ngroups);
}
// ---------------------------------------------------------------- blocks

struct mm_kern {
    const struct mm_plan * p;
    mm_tile_fn tile;
    mm_mv_fn   mv;
    mm_mv_fn   mv_seq; // mv's bits, rows one after the other (or NULL)
    bool       mv_long_pf; // mv takes the next group as pf for long rows too
    mm_gemm_fn gemm;  // blocked float GEMM of the level, or NULL
    size_t     xes;   // bytes per element of the rows the float kernels read
    lm_ggml_to_float_t deq;
};

static void mm_kern_init(struct mm_kern * k, const struct mm_plan * p, enum lm_ggml_type t0) {
    k->p = p;
    k->tile = mm_get_tile(p->xt);
    k->mv = mm_get_mv(p->xt);
    k->mv_seq = mm_get_mv_seq(p->xt);
    k->mv_long_pf = mm_mv_long_pf(p->xt);
    k->gemm = mm_get_gemm(p->xt);
    k->xes = p->path == MM_FLOAT ? lm_ggml_type_size(t0) : sizeof(float);
    k->deq = p->path == MM_DEQ ? lm_type_to_f32_row(t0) : NULL;
}

// dcol[c][r] = dot(row r of x, ycol[c]) for r in [r0, r1), c < ncol.
// x rows are xrs bytes apart; columns are f32 (bf16 where p->act_bf16).
// Every pair is one dot over the whole of K in the kernels' fixed order (the
// tile and the mat-vec kernel of a level sum alike), so a column's bits do
// not depend on which kernel, tile position or thread computed it.
// Rows below rlim (>= r1) exist and may be prefetched.
static void mm_float_block(const struct mm_kern * k, const char * x, size_t xrs, int64_t r0, int64_t r1, int64_t rlim,
                           const void * const * ycol, float * const * dcol, int ncol, void * scratch) {
    const int64_t K = k->p->K;
    const void * xs[MM_MV_R];
    float out[MM_TILE_R * MM_TILE_C];
    if (ncol == 1) { // matrix-vector: stream the rows once
        const size_t rowb = (size_t) K * k->xes;
        const bool contig = xrs == rowb, short_rows = rowb <= MM_PF_ROW;
        // contiguous short rows of a matrix too large to be in L2 are walked in
        // memory order (see mm_get_mv_seq); rlim * xrs is the whole matrix
        const mm_mv_fn mv = k->mv_seq && short_rows && contig && (int64_t)(rlim * xrs) >= lm_mv_seq_min_bytes() ? k->mv_seq : k->mv;
        const float * y = (const float *) ycol[0];
        float * d = dcol[0];
        for (int64_t r = r0; r < r1; r += MM_MV_R) {
            const int nr = (int) LM_GGML_MIN(MM_MV_R, r1 - r);
            for (int i = 0; i < MM_MV_R; i++) xs[i] = x + (r + LM_GGML_MIN(i, nr - 1)) * xrs;
            // short rows run out before the hardware prefetchers catch up: the next group is
            // prefetched, by the kernel in pace with its loads where the rows are contiguous
            const char * pf = NULL;
            if (contig && r + 2 * MM_MV_R <= rlim && (short_rows || k->mv_long_pf)) {
                pf = x + (r + MM_MV_R) * xrs;
            } else if (short_rows) {
                const int64_t pe = LM_GGML_MIN(r + 2 * MM_MV_R, r1);
                for (const char * row = x + (r + MM_MV_R) * xrs; row < x + pe * xrs; row += xrs) {
                    for (size_t o = 0; o < rowb; o += 64) __builtin_prefetch(row + o);
                }
            }
            if (nr == MM_MV_R) { // a whole group: its results go straight to the column
                mv(K, xs, y, d + r, pf);
                continue;
            }
            mv(K, xs, y, out, pf);
            for (int i = 0; i < nr; i++) d[r + i] = out[i];
        }
        return;
    }
    if (k->gemm) {
        float * dshift[MM_MAX_COLS];
        for (int c = 0; c < ncol; c++) dshift[c] = dcol[c] + r0;
        k->gemm(K, x + r0 * xrs, xrs, r1 - r0, ycol, dshift, ncol, scratch);
        return;
    }
    const mm_tile_fn tile = k->tile;
    for (int64_t r = r0; r < r1; r += MM_TILE_R) {
        const int nr = (int) LM_GGML_MIN(MM_TILE_R, r1 - r);
        for (int i = 0; i < MM_TILE_R; i++) xs[i] = x + (r + LM_GGML_MIN(i, nr - 1)) * xrs;
        for (int c = 0; c < ncol; c += MM_TILE_C) {
            const float * ys[MM_TILE_C];
            const int nc = LM_GGML_MIN(MM_TILE_C, ncol - c);
            for (int j = 0; j < MM_TILE_C; j++) ys[j] = (const float *) ycol[c + LM_GGML_MIN(j, nc - 1)];
            tile(K, xs, ys, out);
            for (int i = 0; i < nr; i++) for (int j = 0; j < nc; j++) dcol[c + j][r + i] = out[i * MM_TILE_C + j];
        }
    }
}

static void mm_block(const struct mm_kern * k, const char * x, size_t xrs, int64_t r0, int64_t r1, int64_t rlim,
                     const void * const * ycol, float * const * dcol, int ncol, float * scratch) {
    const int64_t K = k->p->K;
    switch (k->p->path) {
        case MM_FLOAT:
            mm_float_block(k, x, xrs, r0, r1, rlim, ycol, dcol, ncol, scratch);
            break;
        case MM_QUANT:
            if (k->p->qg) {
                k->p->qg(K, x, xrs, r0, r1, ycol, dcol, ncol, scratch);
                break;
            }
            for (int c = 0; c < ncol; c++) {
                float * d = dcol[c];
                for (int64_t r = r0; r < r1; r++) k->p->vd((int) K, d + r, 0, x + r * xrs, 0, ycol[c], 0, 1);
            }
            break;
        case MM_DEQ:
            for (int64_t r = r0; r < r1; r += MM_DEQ_ROWS) {
                const int64_t n = LM_GGML_MIN(MM_DEQ_ROWS, r1 - r);
                for (int64_t i = 0; i < n; i++) k->deq(x + (r + i) * xrs, scratch + i * K, K);
                float * dshift[MM_MAX_COLS];
                for (int c = 0; c < ncol; c++) dshift[c] = dcol[c] + r;
                mm_float_block(k, (const char *) scratch, (size_t) K * sizeof(float), 0, n, n, ycol, dshift, ncol,
                               (char *) scratch + mm_pad((size_t) MM_DEQ_ROWS * K * sizeof(float)));
            }
            break;
    }
}

// Rows [r0, r1) of a repacked slice (repack.c): its whole groups of 8 by
// the level's GEMM over the repacked layout, or each group unpacked into
// scratch for the other kernels; the plain rows after the last group as
// usual. The rows are shared out in units of 16, so r0 starts a group (a
// group entered in its middle is unpacked all the same).
static void mm_block_repacked(const struct mm_kern * k, const char * x, size_t xrs, int64_t r0, int64_t r1, int64_t rlim,
                              const void * const * ycol, float * const * dcol, int ncol, float * scratch) {
    const int64_t re = LM_GGML_MIN(r1, rlim / 8 * 8);
    char * plain = (char *) scratch;
    float * rest = (float *)(plain + k->p->rp_bytes);
    int64_t r = r0;
    if (r < re && r % 8 == 0 && k->p->rqg != NULL) {
        k->p->rqg(k->p->K, x, xrs, r, re, ycol, dcol, ncol, rest);
        r = re;
    }
    while (r < re) {
        const int64_t g = r / 8 * 8, e = LM_GGML_MIN(re, g + 8);
        lm_cpu_repack_unpack(k->p->rp_type, x + g * xrs, xrs, plain);
        float * dshift[MM_MAX_COLS];
        for (int c = 0; c < ncol; c++) dshift[c] = dcol[c] + g;
        mm_block(k, plain, xrs, r - g, e - g, 8, ycol, dshift, ncol, rest);
        r = e;
    }
    if (r < r1) mm_block(k, x, xrs, r, r1, rlim, ycol, dcol, ncol, rest);
}

// Rows per block: enough blocks for load balance, few enough to amortize.
static int64_t mm_rows_per_block(int64_t nrows, int64_t nblocks_other, int nth) {
    int64_t br = 64;
    while (br > 16 && nblocks_other * ((nrows + br - 1) / br) < 4 * (int64_t) nth) br /= 2;
    return br;
}

// ---------------------------------------------------------------- mul_mat

// The rows of a column block are shared out in units of MM_UNIT rows (one
// 64-byte line of f32 results per column, so threads never write the same
// line). mm_grab takes the next chunk: up to maxu units while much is left,
// then smaller ones, down to one unit, so that the threads run out of work
// together (64-row chunks to the end left one thread idle for up to a
// chunk's time). A chunk stays within a run of nru units (one column
// block). Returns its first unit and sets *n, or returns -1 when none is left.
#define MM_UNIT 16
static int64_t mm_grab(atomic_int * ctr, int64_t nunits, int64_t nru, int64_t maxu, int nth, int64_t * n) {
    int cur = atomic_load_explicit(ctr, memory_order_relaxed);
    for (;;) {
        if (cur >= nunits) return -1;
        // one thread has nobody to balance against: its chunks are whole column blocks
        int64_t g = nth == 1 ? nru : LM_GGML_MAX(1, LM_GGML_MIN((nunits - cur) / (2 * (int64_t) nth), maxu));
        g = LM_GGML_MIN(g, nru - cur % nru);
        if (atomic_compare_exchange_weak_explicit(ctr, &cur, (int)(cur + g), memory_order_relaxed, memory_order_relaxed)) {
            *n = g;
            return cur;
        }
    }
}

static size_t lm_wsize_mul_mat(const struct lm_ggml_tensor * node, int n_threads) {
    struct mm_plan p;
    mm_make_plan(node->src[0], node->src[1], node->op == LM_GGML_OP_MUL_MAT_ID, &p);
    return mm_layout_size(&p, n_threads);
}

// Rows [row0, row1) of batch `batch` and column block cb (columns of bc).
static void mm_chunk(const struct lm_ggml_compute_params * params, const struct mm_plan * p, const struct mm_kern * kern,
                     struct lm_ggml_tensor * dst, int64_t batch, int64_t cb, int64_t bc, int64_t row0, int64_t row1,
                     float * scratch) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    const int64_t ne11 = src1->ne[1], ne12 = src1->ne[2];
    const int64_t r2 = ne12 / src0->ne[2], r3 = src1->ne[3] / src0->ne[3];
    const int64_t i12 = batch % ne12, i13 = batch / ne12;
    const char * x = (const char *) src0->data + (i12 / r2) * src0->nb[2] + (i13 / r3) * src0->nb[3];
    const void * ycol[MM_MAX_COLS];
    float * dcol[MM_MAX_COLS];
    const int64_t c0 = cb * bc, c1 = LM_GGML_MIN(c0 + bc, ne11);
    for (int64_t c = c0; c < c1; c++) {
        ycol[c - c0] = p->convert
            ? (const void *)(mm_conv_base(params) + (size_t)((i13 * ne12 + i12) * ne11 + c) * p->col_size)
            : (const void *)((const char *) src1->data + c * src1->nb[1] + i12 * src1->nb[2] + i13 * src1->nb[3]);
        dcol[c - c0] = (float *)((char *) dst->data + c * dst->nb[1] + i12 * dst->nb[2] + i13 * dst->nb[3]);
    }
    if (p->repack) {
        mm_block_repacked(kern, x, src0->nb[1], row0, row1, src0->ne[1], ycol, dcol, (int)(c1 - c0), scratch);
    } else {
        mm_block(kern, x, src0->nb[1], row0, row1, src0->ne[1], ycol, dcol, (int)(c1 - c0), scratch);
    }
}

static void lm_compute_mul_mat(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * src0 = dst->src[0];
    const struct lm_ggml_tensor * src1 = dst->src[1];
    struct mm_plan p;
    mm_make_plan(src0, src1, false, &p);
    struct mm_kern kern;
    mm_kern_init(&kern, &p, src0->type);

    mm_convert_src1(params, &p, src1);

    const int64_t ne01 = src0->ne[1], ne11 = src1->ne[1];
    const int64_t nbatch = src1->ne[2] * src1->ne[3];
    const int64_t bc = LM_GGML_MIN(p.path != MM_QUANT || p.qg ? MM_MAX_COLS : 16, LM_GGML_MAX(ne11, 1));
    const int64_t ncb = (ne11 + bc - 1) / bc;
    const int64_t br = mm_rows_per_block(ne01, nbatch * ncb, params->nth);
    float * scratch = mm_scratch(params, &p);

    // One pass over the weights (one batch, one column block, as in decoding):
    // each thread first streams a contiguous share of the rows, so that the
    // hardware prefetchers see long runs; the last eighth or so is shared out
    // in chunks, which absorbs a thread that runs late. Interleaved chunks
    // made two threads no faster than one on a matrix read from memory.
    // Which thread computes a row does not change its bits.
    int64_t own = 0;
    if (nbatch == 1 && ncb == 1 && params->nth > 1) {
        own = (ne01 - ne01 / 8) / params->nth / br * br;
    }
    if (own > 0) {
        mm_chunk(params, &p, &kern, dst, 0, 0, bc, params->ith * own, (params->ith + 1) * own, scratch);
    }
    const int64_t first = own * params->nth; // rows from here on are shared out
    const int64_t nru = (ne01 - first + MM_UNIT - 1) / MM_UNIT;
    const int64_t nunits = nbatch * ncb * nru;
    int64_t u, n;
    while ((u = mm_grab(lm_cpu_counter(params, MM_CTR_CHUNK), nunits, nru, br / MM_UNIT, params->nth, &n)) >= 0) {
        // consecutive units walk the rows of one column block: its columns stay in cache
        const int64_t ru = u % nru, cb = (u / nru) % ncb, batch = u / (nru * ncb);
        const int64_t row0 = first + ru * MM_UNIT;
        mm_chunk(params, &p, &kern, dst, batch, cb, bc, row0, LM_GGML_MIN(row0 + n * MM_UNIT, ne01), scratch);
    }
}

// ---------------------------------------------------------------- mul_mat_id
//
// Once b is converted, thread 0 groups the (slot, token) pairs by expert, so
// each expert's matrix is streamed once per block of its pairs; a barrier,
// then the chunks.
// Extra area: int32 counts[n_as + 1] (prefix offsets), int64 chunk_start[n_as + 1],
// int32 pairs[n_used * n_tokens] (pair = token * n_used + slot).

static size_t mmid_extra_size(const struct lm_ggml_tensor * node) {
    const int64_t n_as = node->src[0]->ne[2];
    const int64_t npairs = node->src[2]->ne[0] * node->src[2]->ne[1];
    return mm_pad((size_t)(n_as + 1) * sizeof(int32_t)) + mm_pad((size_t)(n_as + 1) * sizeof(int64_t)) +
           mm_pad((size_t) npairs * sizeof(int32_t));
}

static size_t lm_wsize_mul_mat_id(const struct lm_ggml_tensor * node, int n_threads) {
    struct mm_plan p;
    mm_make_plan(node->src[0], node->src[1], node->op == LM_GGML_OP_MUL_MAT_ID, &p);
    return mm_layout_size(&p, n_threads) + mmid_extra_size(node);
}

static void lm_compute_mul_mat_id(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * as  = dst->src[0];
    const struct lm_ggml_tensor * b   = dst->src[1];
    const struct lm_ggml_tensor * ids = dst->src[2];
    struct mm_plan p;
    mm_make_plan(as, b, true, &p);
    struct mm_kern kern;
    mm_kern_init(&kern, &p, as->type);

    const int64_t n_as = as->ne[2], N = as->ne[1];
    const int64_t n_used = ids->ne[0], n_tok = ids->ne[1], n_b = b->ne[1];
    const int64_t npairs = n_used * n_tok;
    char * extra = mm_extra(params, &p);
    int32_t * offs  = (int32_t *) extra;
    int64_t * cstart = (int64_t *)(extra + mm_pad((size_t)(n_as + 1) * sizeof(int32_t)));
    int32_t * pairs = (int32_t *)((char *) cstart + mm_pad((size_t)(n_as + 1) * sizeof(int64_t)));
    const int64_t bc = MM_MAX_COLS;
    const int64_t br = mm_rows_per_block(N, LM_GGML_MAX(1, npairs / bc), params->nth);
    const int64_t nrb = (N + br - 1) / br;

    mm_convert_src1(params, &p, b);
    if (params->ith == 0) {
        for (int64_t x = 0; x <= n_as; x++) offs[x] = 0;
        for (int64_t t = 0; t < n_tok; t++) {
            for (int64_t e = 0; e < n_used; e++) {
                const int32_t x = *(const int32_t *)((const char *) ids->data + e * ids->nb[0] + t * ids->nb[1]);
                if (x >= 0 && x < n_as) {
                    offs[x + 1]++;
                } else { // ids are data: a bad one fails the computation, its column stays zero
                    lm_cpu_error(params, "expert id %d (slot %lld of token %lld in %s) is out of range [0, %lld)", (int) x,
                                 (long long) e, (long long) t, ids->name, (long long) n_as);
                    memset((char *) dst->data + e * dst->nb[1] + t * dst->nb[2], 0, (size_t) N * sizeof(float));
                }
            }
        }
        for (int64_t x = 0; x < n_as; x++) offs[x + 1] += offs[x];
        // counting-sort placement: walk again, using cstart as the running cursor
        for (int64_t x = 0; x < n_as; x++) cstart[x] = offs[x];
        for (int64_t t = 0; t < n_tok; t++) {
            for (int64_t e = 0; e < n_used; e++) {
                const int32_t x = *(const int32_t *)((const char *) ids->data + e * ids->nb[0] + t * ids->nb[1]);
                if (x >= 0 && x < n_as) pairs[cstart[x]++] = (int32_t)(t * n_used + e);
            }
        }
        // chunks of expert x: nrb row blocks times its column blocks
        int64_t acc = 0;
        for (int64_t x = 0; x < n_as; x++) {
            cstart[x] = acc;
            acc += nrb * ((offs[x + 1] - offs[x] + bc - 1) / bc);
        }
        cstart[n_as] = acc;
    }
    lm_ggml_barrier(params->threadpool);

    const int64_t nchunks = cstart[n_as];
    float * scratch = mm_scratch(params, &p);
    int64_t x = 0;
    for (;;) {
        const int64_t ch = atomic_fetch_add(lm_cpu_counter(params, MM_CTR_CHUNK), 1);
        if (ch >= nchunks) break;
        while (x > 0 && cstart[x] > ch) x--;
        while (cstart[x + 1] <= ch) x++;
        const int64_t local = ch - cstart[x];
        const int64_t rb = local % nrb, cb = local / nrb;
        const int64_t p0 = offs[x] + cb * bc, p1 = LM_GGML_MIN(p0 + bc, (int64_t) offs[x + 1]);
        const void * ycol[MM_MAX_COLS];
        float * dcol[MM_MAX_COLS];
        for (int64_t i = p0; i < p1; i++) {
            const int64_t t = pairs[i] / n_used, e = pairs[i] % n_used;
            const int64_t i11 = e % n_b;
            ycol[i - p0] = p.convert
                ? (const void *)(mm_conv_base(params) + (size_t)(t * n_b + i11) * p.col_size)
                : (const void *)((const char *) b->data + i11 * b->nb[1] + t * b->nb[2]);
            dcol[i - p0] = (float *)((char *) dst->data + e * dst->nb[1] + t * dst->nb[2]);
        }
        const int64_t row0 = rb * br, row1 = LM_GGML_MIN(row0 + br, N);
        mm_block(&kern, (const char *) as->data + x * as->nb[2], as->nb[1], row0, row1, N, ycol, dcol, (int)(p1 - p0), scratch);
    }
}

// ---------------------------------------------------------------- out_prod
//
// dst row (i1, i2, i3) = sum over j of b[i1, j, i2, i3] * (row j of a's batch).
// Threads own blocks of dst rows of one batch; a's row j is converted once per
// block when it is not dense f32.

#define OP_BLOCK 16

static size_t lm_wsize_out_prod(const struct lm_ggml_tensor * node, int n_threads) {
    return (size_t) n_threads * mm_pad((size_t) node->src[0]->ne[0] * sizeof(float));
}

static void lm_compute_out_prod(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst) {
    const struct lm_ggml_tensor * a = dst->src[0];
    const struct lm_ggml_tensor * b = dst->src[1];
    const int64_t m = dst->ne[0], p = dst->ne[1], n = a->ne[1];
    const int64_t d2 = dst->ne[2];
    const int64_t r2 = d2 / a->ne[2], r3 = dst->ne[3] / a->ne[3];
    const bool dense = a->type == LM_GGML_TYPE_F32 && a->nb[0] == sizeof(float);
    const bool contig_rows = a->nb[0] == lm_ggml_type_size(a->type);
    float * row = (float *)((char *) params->wdata + (size_t) params->ith * mm_pad((size_t) m * sizeof(float)));

    const int64_t nblk_per_batch = (p + OP_BLOCK - 1) / OP_BLOCK;
    const int64_t nblk = nblk_per_batch * d2 * dst->ne[3];
    int64_t b0, b1;
    lm_ggml_thread_range(nblk, params->ith, params->nth, &b0, &b1);
    for (int64_t blk = b0; blk < b1; blk++) {
        const int64_t batch = blk / nblk_per_batch;
        const int64_t i2 = batch % d2, i3 = batch / d2;
        const int64_t i1a = (blk % nblk_per_batch) * OP_BLOCK, i1b = LM_GGML_MIN(i1a + OP_BLOCK, p);
        for (int64_t i1 = i1a; i1 < i1b; i1++) {
            memset((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3], 0, (size_t) m * sizeof(float));
        }
        const char * abase = (const char *) a->data + (i2 / r2) * a->nb[2] + (i3 / r3) * a->nb[3];
        for (int64_t j = 0; j < n; j++) {
            const char * arow = abase + j * a->nb[1];
            const float * x;
            if (dense) {
                x = (const float *) arow;
            } else {
                if (contig_rows) lm_type_to_f32_row(a->type)(arow, row, m);
                else for (int64_t k = 0; k < m; k++) row[k] = mm_load_f32(arow + k * a->nb[0], a->type);
                x = row;
            }
            for (int64_t i1 = i1a; i1 < i1b; i1++) {
                const float v = *(const float *)((const char *) b->data + i1 * b->nb[0] + j * b->nb[1] + i2 * b->nb[2] + i3 * b->nb[3]);
                mm_axpy_f32(m, (float *)((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3]), v, x);
            }
        }
    }
}

// ---------------------------------------------------------------- descriptors

// The ops this file computes (the enum lines in ggml.h marked cpu name them).
const struct lm_cpu_op lm_cpu_op_mul_mat    = { .compute = lm_compute_mul_mat, .work_size = lm_wsize_mul_mat, .supports = lm_supports_mul_mat };
const struct lm_cpu_op lm_cpu_op_mul_mat_id = { .compute = lm_compute_mul_mat_id, .work_size = lm_wsize_mul_mat_id, .supports = lm_supports_mul_mat_id };
const struct lm_cpu_op lm_cpu_op_out_prod   = { .compute = lm_compute_out_prod, .work_size = lm_wsize_out_prod, .supports = lm_supports_out_prod };
