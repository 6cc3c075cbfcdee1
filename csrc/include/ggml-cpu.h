// ggml-cpu.h - CPU compute API and CPU backend of the ggml-go core
// (source-compatible with upstream ggml's ggml-cpu.h).
#pragma once

#include "ggml.h"
#include "ggml-backend.h"

#ifdef  __cplusplus
extern "C" {
#endif

// The compute plan: lm_ggml_graph_plan fills it, the caller provides work_data.
struct lm_ggml_cplan {
    size_t    work_size;
    uint8_t * work_data;

    int n_threads;
    struct lm_ggml_threadpool * threadpool;

    lm_ggml_abort_callback abort_callback;
    void *                 abort_callback_data;
};

enum lm_ggml_numa_strategy {
    LM_GGML_NUMA_STRATEGY_DISABLED   = 0,
    LM_GGML_NUMA_STRATEGY_DISTRIBUTE = 1,
    LM_GGML_NUMA_STRATEGY_ISOLATE    = 2,
    LM_GGML_NUMA_STRATEGY_NUMACTL    = 3,
    LM_GGML_NUMA_STRATEGY_MIRROR     = 4,
    LM_GGML_NUMA_STRATEGY_COUNT
};

LM_GGML_BACKEND_API void lm_ggml_numa_init(enum lm_ggml_numa_strategy numa);
LM_GGML_BACKEND_API bool lm_ggml_is_numa(void);

LM_GGML_BACKEND_API struct lm_ggml_tensor * lm_ggml_new_i32(struct lm_ggml_context * ctx, int32_t value);
LM_GGML_BACKEND_API struct lm_ggml_tensor * lm_ggml_new_f32(struct lm_ggml_context * ctx, float value);
LM_GGML_BACKEND_API struct lm_ggml_tensor * lm_ggml_set_i32(struct lm_ggml_tensor * tensor, int32_t value);
LM_GGML_BACKEND_API struct lm_ggml_tensor * lm_ggml_set_f32(struct lm_ggml_tensor * tensor, float value);

LM_GGML_BACKEND_API int32_t lm_ggml_get_i32_1d(const struct lm_ggml_tensor * tensor, int i);
LM_GGML_BACKEND_API void    lm_ggml_set_i32_1d(const struct lm_ggml_tensor * tensor, int i, int32_t value);
LM_GGML_BACKEND_API int32_t lm_ggml_get_i32_nd(const struct lm_ggml_tensor * tensor, int i0, int i1, int i2, int i3);
LM_GGML_BACKEND_API void    lm_ggml_set_i32_nd(const struct lm_ggml_tensor * tensor, int i0, int i1, int i2, int i3, int32_t value);
LM_GGML_BACKEND_API float   lm_ggml_get_f32_1d(const struct lm_ggml_tensor * tensor, int i);
LM_GGML_BACKEND_API void    lm_ggml_set_f32_1d(const struct lm_ggml_tensor * tensor, int i, float value);
LM_GGML_BACKEND_API float   lm_ggml_get_f32_nd(const struct lm_ggml_tensor * tensor, int i0, int i1, int i2, int i3);
LM_GGML_BACKEND_API void    lm_ggml_set_f32_nd(const struct lm_ggml_tensor * tensor, int i0, int i1, int i2, int i3, float value);

LM_GGML_BACKEND_API struct lm_ggml_threadpool * lm_ggml_threadpool_new          (struct lm_ggml_threadpool_params * params);
LM_GGML_BACKEND_API void                        lm_ggml_threadpool_free         (struct lm_ggml_threadpool * threadpool);
LM_GGML_BACKEND_API int                         lm_ggml_threadpool_get_n_threads(struct lm_ggml_threadpool * threadpool);
LM_GGML_BACKEND_API void                        lm_ggml_threadpool_pause        (struct lm_ggml_threadpool * threadpool);
LM_GGML_BACKEND_API void                        lm_ggml_threadpool_resume       (struct lm_ggml_threadpool * threadpool);

// Must be called before lm_ggml_graph_compute; when work_size > 0 the caller
// allocates work_data.
LM_GGML_BACKEND_API struct lm_ggml_cplan lm_ggml_graph_plan(const struct lm_ggml_cgraph * cgraph, int n_threads,
        struct lm_ggml_threadpool * threadpool);
LM_GGML_BACKEND_API enum lm_ggml_status lm_ggml_graph_compute(struct lm_ggml_cgraph * cgraph, struct lm_ggml_cplan * cplan);
// Like lm_ggml_graph_compute, with the work buffer allocated in ctx.
LM_GGML_BACKEND_API enum lm_ggml_status lm_ggml_graph_compute_with_ctx(struct lm_ggml_context * ctx, struct lm_ggml_cgraph * cgraph, int n_threads);

// An addition of ours to ggml's API. A computation whose plan has no
// threadpool (every lm_ggml_graph_compute_with_ctx) runs on a process-wide
// cached pool instead of starting threads for the call: it takes the pool if
// it is idle and has n_threads threads (else starts one of its own) and puts
// it back afterwards, where it replaces the one cached before. Idle, its workers sleep; a forked child does
// not use its parent's. This stops the cached pool's threads and frees it
// (a computation using it meanwhile puts it back when it ends).
LM_GGML_BACKEND_API void lm_cpu_release_cached_threadpool(void);

// x86
LM_GGML_BACKEND_API int lm_ggml_cpu_has_sse3       (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_ssse3      (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_avx        (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_avx_vnni   (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_avx2       (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_f16c       (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_fma        (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_avx512     (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_avx512_vbmi(void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_avx512_vnni(void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_avx512_bf16(void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_amx_int8   (void);
// ARM
LM_GGML_BACKEND_API int lm_ggml_cpu_has_neon       (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_arm_fma    (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_fp16_va    (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_dotprod    (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_matmul_int8(void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_sve        (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_get_sve_cnt    (void);
// other
LM_GGML_BACKEND_API int lm_ggml_cpu_has_riscv_v    (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_vsx        (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_wasm_simd  (void);
LM_GGML_BACKEND_API int lm_ggml_cpu_has_llamafile  (void);

typedef void (*lm_ggml_from_float_to_mat_t)(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t nr, int64_t k, int64_t bs);
typedef void (*lm_ggml_vec_dot_t)(int n, float * LM_GGML_RESTRICT s, size_t bs, const void * LM_GGML_RESTRICT x, size_t bx,
                                  const void * LM_GGML_RESTRICT y, size_t by, int nrc);
typedef void (*lm_ggml_gemv_t)(int n, float * LM_GGML_RESTRICT s, size_t bs, const void * LM_GGML_RESTRICT x,
                               const void * LM_GGML_RESTRICT y, int nr, int nc);
typedef void (*lm_ggml_gemm_t)(int n, float * LM_GGML_RESTRICT s, size_t bs, const void * LM_GGML_RESTRICT x,
                               const void * LM_GGML_RESTRICT y, int nr, int nc);

struct lm_ggml_type_traits_cpu {
    lm_ggml_from_float_t        from_float;
    lm_ggml_from_float_to_mat_t from_float_to_mat;
    lm_ggml_vec_dot_t           vec_dot;
    enum lm_ggml_type           vec_dot_type;
    int64_t                     nrows;
    int64_t                     ncols;
    lm_ggml_gemv_t              gemv;
    lm_ggml_gemm_t              gemm;
};

LM_GGML_BACKEND_API const struct lm_ggml_type_traits_cpu * lm_ggml_get_type_traits_cpu(enum lm_ggml_type type);

LM_GGML_BACKEND_API void lm_ggml_cpu_init(void);

// ---------------------------------------------------------------- CPU backend

LM_GGML_BACKEND_API lm_ggml_backend_t lm_ggml_backend_cpu_init(void);

LM_GGML_BACKEND_API bool lm_ggml_backend_is_cpu                (lm_ggml_backend_t backend);
LM_GGML_BACKEND_API void lm_ggml_backend_cpu_set_n_threads     (lm_ggml_backend_t backend_cpu, int n_threads);
LM_GGML_BACKEND_API void lm_ggml_backend_cpu_set_threadpool    (lm_ggml_backend_t backend_cpu, lm_ggml_threadpool_t threadpool);
LM_GGML_BACKEND_API void lm_ggml_backend_cpu_set_abort_callback(lm_ggml_backend_t backend_cpu, lm_ggml_abort_callback abort_callback, void * abort_callback_data);

LM_GGML_BACKEND_API lm_ggml_backend_reg_t lm_ggml_backend_cpu_reg(void);

#ifdef LM_GGML_USE_CPU_HBM
LM_GGML_BACKEND_API lm_ggml_backend_buffer_type_t lm_ggml_backend_cpu_hbm_buffer_type(void);
#endif

// The CPU's extra buffer type for weights (named "CPU_REPACK"; upstream ggml
// calls its own "CPU_AARCH64"): mul_mat weights the CPU has a faster kernel
// for in another layout are stored in it (q8_0, q4_0, iq4_nl, q4_K and q6_K
// on x86-64 at the AVX2 and AVX-512 levels), the rest as in a CPU buffer. tensor_get/set/memset read and write
// the plain bytes; only mul_mat (as src0) may compute from a repacked tensor.
// Not a host buffer type (lm_ggml_backend_buft_is_host is false).
LM_GGML_BACKEND_API lm_ggml_backend_buffer_type_t lm_ggml_backend_cpu_aarch64_buffer_type(void);
LM_GGML_BACKEND_API bool lm_ggml_backend_cpu_buft_is_aarch64(lm_ggml_backend_buffer_type_t buft);

#ifdef __cplusplus
}
#endif
