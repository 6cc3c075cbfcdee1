// ggml-cpu-impl.h - the contract between the compute engine (ggml-cpu.c) and
// the CPU kernels (ops-*.c). Internal.
#pragma once

#include "../base/ggml-simd.h"
#include "../quant/ggml-traits.h"
#include "ggml-cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

// Every thread of the pool calls the kernel of every node with its own ith in
// [0, nth). Kernels split their work by ith/nth; a kernel that needs a phase
// boundary (e.g. converting src1 into wdata before using it) calls
// lm_ggml_barrier(params->threadpool) — all nth threads reach it, so it is safe.
struct lm_cpu_error_slot;

struct lm_ggml_compute_params {
    int ith, nth;
    size_t wsize;   // shared work buffer (size from the op's work_size)
    void * wdata;
    struct lm_ggml_threadpool * threadpool;
    const struct lm_ggml_tensor * node;  // the node being computed (names it in errors)
    int node_index;                      // its index in the graph
    struct lm_cpu_error_slot * error;    // where lm_cpu_error records a failure
};

// Errors found while computing (bad data, such as an index out of range):
// kernels run on worker threads and must not abort or longjmp. A kernel
// records the failure with lm_cpu_error and returns normally, skipping the
// bad element (it must still reach every barrier it would have reached).
// The first error of a computation wins; the others are dropped. All threads
// stop after the node, and lm_ggml_graph_compute returns
// LM_GGML_STATUS_FAILED with the message "OP (node NAME): <message>" (given to
// a caller with an armed error frame, logged otherwise).
LM_GGML_ATTRIBUTE_FORMAT(2, 3)
void lm_cpu_error(const struct lm_ggml_compute_params * params, const char * fmt, ...);

typedef void   (*lm_cpu_kernel_t)(const struct lm_ggml_compute_params * params, struct lm_ggml_tensor * dst);
// Bytes of shared work buffer the node needs with n_threads threads (may be NULL: 0).
typedef size_t (*lm_cpu_wsize_t)(const struct lm_ggml_tensor * node, int n_threads);
// How many threads can usefully work on the node (may be NULL: all). Only used
// to size work buffers and to skip waking threads; kernels still see nth = pool size.
typedef int    (*lm_cpu_ntasks_t)(const struct lm_ggml_tensor * node, int n_threads);

// Whether the kernel can compute this node: the type and layout combinations
// it handles (may be NULL: every node the op's constructor accepts). Asked
// for each node just before it runs, on thread 0 while the others wait at a
// barrier: it must not assert (nothing catches it there) and should be cheap.
typedef bool   (*lm_cpu_supports_t)(const struct lm_ggml_tensor * node);

struct lm_cpu_op {
    lm_cpu_kernel_t   compute;
    lm_cpu_wsize_t    work_size;
    lm_cpu_ntasks_t   n_tasks;
    lm_cpu_supports_t supports;
};

// True if the engine can compute node: its op has a kernel (or needs none)
// and the kernel handles its types and layout. The CPU backend's supports_op
// asks this; lm_ggml_graph_compute asks the same of each node before it runs.
bool lm_cpu_node_supported(const struct lm_ggml_tensor * node);
// Whether several threads computing a graph leave node to thread 0 alone (a
// small row-wise node: see ggml-cpu.c).
bool lm_cpu_node_is_solo(const struct lm_ggml_tensor * node);

void lm_ggml_barrier(struct lm_ggml_threadpool * tp);

// The pool's workers asleep between jobs right now (on its condition
// variable, burning nothing), and how many times one has woken since the
// pool started: tests that idle workers stay asleep read these.
void lm_cpu_threadpool_idle(struct lm_ggml_threadpool * tp, int * sleeping, unsigned * wakeups);

// Counters for kernels that hand out work as it is taken (i < LM_CPU_COUNTERS,
// each on a cache line of its own). Every one is 0 when a node starts and
// again after every lm_ggml_barrier: a kernel needs no barrier of its own to
// reset one, so threads that start early need not wait for a late one.
#define LM_CPU_COUNTERS 4
atomic_int * lm_cpu_counter(const struct lm_ggml_compute_params * params, int i);
// Waits until *c >= target: for work that other threads have taken and are
// finishing (they are running, so a short spin, then yielding the CPU).
void lm_cpu_wait_counter(const struct lm_ggml_compute_params * params, atomic_int * c, int target);

// Rows [*ir0, *ir1) of nr for thread ith of nth.
static inline void lm_ggml_thread_range(int64_t nr, int ith, int nth, int64_t * ir0, int64_t * ir1) {
    if (nth == 1) { // one thread: no division (graphs of small nodes feel it)
        *ir0 = 0;
        *ir1 = nr;
        return;
    }
    const int64_t dr = (nr + nth - 1) / nth;
    *ir0 = dr * ith;
    *ir1 = *ir0 + dr < nr ? *ir0 + dr : nr;
    if (*ir0 > nr) *ir0 = nr;
}

// The kernel of each op (NULL: none), generated from the ops marked cpu in
// ggml.h into ggml-cpu-kernels.c: the descriptor of op LM_GGML_OP_X is
// lm_cpu_op_x, defined in the ops-*.c file that computes it.
extern const struct lm_cpu_op * const lm_cpu_kernels[LM_GGML_OP_COUNT];

// Element access with 64-bit indices (the public *_nd functions take int),
// for callers that checked the indices against ne.
float   lm_cpu_get_f32_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
void    lm_cpu_set_f32_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v);
int32_t lm_cpu_get_i32_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
void    lm_cpu_set_i32_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, int32_t v);

// Mat-vec over contiguous short rows walks them one by one (mm_get_mv_seq)
// when the matrix has at least this many bytes (mm-float.c). The setter is for
// tests, which compare both walks; it returns the previous threshold.
#define LM_MV_SEQ_MIN_BYTES_DEFAULT ((int64_t) 256 << 10)
int64_t lm_mv_seq_min_bytes(void);
int64_t lm_set_mv_seq_min_bytes(int64_t n);
// Reads the n buffers (ptrs[i], sizes[i] bytes) once, in order, rounds times,
// n_threads threads splitting each buffer and meeting after it; times[r] gets
// the seconds of round r. The ceiling of a computation that reads the same
// bytes (not a kernel; see stream-probe.c). Returns 0, or -1 for bad
// arguments (n_threads outside 1..64) or a thread that could not start.
int lm_cpu_stream_probe(const void * const * ptrs, const size_t * sizes, int n, int n_threads, int rounds,
                        double * times);

// Weights in a CPU_REPACK buffer (repack.c): whether t is stored repacked
// (only mul_mat may read it then), and the conversions of one group of 8
// rows of rowb bytes between the plain and the repacked layout.
bool lm_cpu_tensor_is_repacked(const struct lm_ggml_tensor * t);
// whether node may read t as its operand src (-1: its result): a repacked
// tensor only as mul_mat's weights, itself and not a view of it
bool lm_cpu_repacked_read_ok(const struct lm_ggml_tensor * node, int src, const struct lm_ggml_tensor * t);
// whether matrices of this type (at least 8 rows, contiguous) are repacked at this level
bool lm_cpu_repacks_type(enum lm_ggml_type type);
// whether buft is the CPU_REPACK buffer type (the engine asks this of
// buffers that are not host memory; see lm_ggml_backend_cpu_buft_is_aarch64)
bool lm_cpu_buft_is_repack(lm_ggml_backend_buffer_type_t buft);

// What a CPU backend holds beyond its struct: the worker threads of its own
// pool (created on first compute with more than one thread) and its work
// buffer's bytes; zeros for another backend. And the worker threads of all
// CPU backends' own pools alive now.
void lm_backend_cpu_held(lm_ggml_backend_t backend, int * threads, size_t * work);
int  lm_backend_cpu_own_workers(void);
// The layouts (repack-layout.c): groups of LM_CPU_REPACK_ROWS rows; one
// group of rowb bytes a row of a type lm_cpu_repacks_type names at some
// level (q8_0, q4_0, iq4_nl, q4_K), plain -> repacked and back
#define LM_CPU_REPACK_ROWS 8
void lm_cpu_repack_pack(enum lm_ggml_type type, const char * plain, size_t rowb, char * out);
void lm_cpu_repack_unpack(enum lm_ggml_type type, const char * packed, size_t rowb, char * plain);
// the plain bytes of row's block in the group block at packed
void lm_cpu_repack_block(enum lm_ggml_type type, const char * packed, int row, char * plain);
// whether the type has a repacked layout (at any level)
bool lm_cpu_repack_has_layout(enum lm_ggml_type type);
// whether a group block filled with value is the packing of plain blocks filled with it
bool lm_cpu_repack_fill_is_packed(enum lm_ggml_type type, uint8_t value);

#ifdef __cplusplus
}
#endif
