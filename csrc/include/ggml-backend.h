// ggml-backend.h - buffers, backends, devices, the registry and the scheduler.
// Source-compatible with upstream ggml's ggml-backend.h (cui-llama.rn 1.3.3).
//
// Where upstream ggml aborts on a failure it cannot report (a void function
// whose backend lost its connection, say), this core calls lm_ggml_abort with
// the reason: plain C programs abort as with ggml, while callers that
// arm error capture (the Go bindings) get the message back as an error.
#pragma once

#include "ggml.h"
#include "ggml-alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_ggml_backend_buffer_type * lm_ggml_backend_buffer_type_t;
typedef struct lm_ggml_backend_buffer      * lm_ggml_backend_buffer_t;
typedef struct lm_ggml_backend_event       * lm_ggml_backend_event_t;
typedef struct lm_ggml_backend             * lm_ggml_backend_t;
typedef void                               * lm_ggml_backend_graph_plan_t;
typedef struct lm_ggml_backend_reg         * lm_ggml_backend_reg_t;
typedef struct lm_ggml_backend_device      * lm_ggml_backend_dev_t;

// ---------------------------------------------------------------- buffer types

LM_GGML_API const char *             lm_ggml_backend_buft_name          (lm_ggml_backend_buffer_type_t buft);
LM_GGML_API lm_ggml_backend_buffer_t lm_ggml_backend_buft_alloc_buffer  (lm_ggml_backend_buffer_type_t buft, size_t size);
LM_GGML_API size_t                   lm_ggml_backend_buft_get_alignment (lm_ggml_backend_buffer_type_t buft);
LM_GGML_API size_t                   lm_ggml_backend_buft_get_max_size  (lm_ggml_backend_buffer_type_t buft);
LM_GGML_API size_t                   lm_ggml_backend_buft_get_alloc_size(lm_ggml_backend_buffer_type_t buft, struct lm_ggml_tensor * tensor);
LM_GGML_API bool                     lm_ggml_backend_buft_is_host       (lm_ggml_backend_buffer_type_t buft);
LM_GGML_API lm_ggml_backend_dev_t    lm_ggml_backend_buft_get_device    (lm_ggml_backend_buffer_type_t buft);

// ---------------------------------------------------------------- buffers

enum lm_ggml_backend_buffer_usage {
    LM_GGML_BACKEND_BUFFER_USAGE_ANY     = 0,
    LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS = 1,
    LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE = 2,
};

LM_GGML_API const char *                      lm_ggml_backend_buffer_name          (lm_ggml_backend_buffer_t buffer);
LM_GGML_API void                              lm_ggml_backend_buffer_free          (lm_ggml_backend_buffer_t buffer);
LM_GGML_API void *                            lm_ggml_backend_buffer_get_base      (lm_ggml_backend_buffer_t buffer);
LM_GGML_API size_t                            lm_ggml_backend_buffer_get_size      (lm_ggml_backend_buffer_t buffer);
LM_GGML_API void                              lm_ggml_backend_buffer_init_tensor   (lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor);
LM_GGML_API size_t                            lm_ggml_backend_buffer_get_alignment (lm_ggml_backend_buffer_t buffer);
LM_GGML_API size_t                            lm_ggml_backend_buffer_get_max_size  (lm_ggml_backend_buffer_t buffer);
LM_GGML_API size_t                            lm_ggml_backend_buffer_get_alloc_size(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor);
LM_GGML_API void                              lm_ggml_backend_buffer_clear         (lm_ggml_backend_buffer_t buffer, uint8_t value);
LM_GGML_API bool                              lm_ggml_backend_buffer_is_host       (lm_ggml_backend_buffer_t buffer);
LM_GGML_API void                              lm_ggml_backend_buffer_set_usage     (lm_ggml_backend_buffer_t buffer, enum lm_ggml_backend_buffer_usage usage);
LM_GGML_API enum lm_ggml_backend_buffer_usage lm_ggml_backend_buffer_get_usage     (lm_ggml_backend_buffer_t buffer);
LM_GGML_API lm_ggml_backend_buffer_type_t     lm_ggml_backend_buffer_get_type      (lm_ggml_backend_buffer_t buffer);
LM_GGML_API void                              lm_ggml_backend_buffer_reset         (lm_ggml_backend_buffer_t buffer);

// Copies src's data into dst, whatever buffers (and backends) hold them.
LM_GGML_API void lm_ggml_backend_tensor_copy(struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst);

// ---------------------------------------------------------------- backends (streams)

LM_GGML_API lm_ggml_guid_t lm_ggml_backend_guid(lm_ggml_backend_t backend);
LM_GGML_API const char *   lm_ggml_backend_name(lm_ggml_backend_t backend);
LM_GGML_API void           lm_ggml_backend_free(lm_ggml_backend_t backend);

LM_GGML_API lm_ggml_backend_buffer_type_t lm_ggml_backend_get_default_buffer_type(lm_ggml_backend_t backend);
LM_GGML_API lm_ggml_backend_buffer_t      lm_ggml_backend_alloc_buffer(lm_ggml_backend_t backend, size_t size);
LM_GGML_API size_t                        lm_ggml_backend_get_alignment(lm_ggml_backend_t backend);
LM_GGML_API size_t                        lm_ggml_backend_get_max_size(lm_ggml_backend_t backend);

LM_GGML_API void lm_ggml_backend_tensor_set_async(lm_ggml_backend_t backend,       struct lm_ggml_tensor * tensor, const void * data, size_t offset, size_t size);
LM_GGML_API void lm_ggml_backend_tensor_get_async(lm_ggml_backend_t backend, const struct lm_ggml_tensor * tensor,       void * data, size_t offset, size_t size);

// offset is a byte offset into the tensor's data.
LM_GGML_API void lm_ggml_backend_tensor_set   (      struct lm_ggml_tensor * tensor, const void * data, size_t offset, size_t size);
LM_GGML_API void lm_ggml_backend_tensor_get   (const struct lm_ggml_tensor * tensor,       void * data, size_t offset, size_t size);
LM_GGML_API void lm_ggml_backend_tensor_memset(      struct lm_ggml_tensor * tensor,     uint8_t value, size_t offset, size_t size);

LM_GGML_API void lm_ggml_backend_synchronize(lm_ggml_backend_t backend);

LM_GGML_API lm_ggml_backend_graph_plan_t lm_ggml_backend_graph_plan_create(lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph);
LM_GGML_API void                         lm_ggml_backend_graph_plan_free  (lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan);

LM_GGML_API enum lm_ggml_status lm_ggml_backend_graph_plan_compute (lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan);
LM_GGML_API enum lm_ggml_status lm_ggml_backend_graph_compute      (lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph);
LM_GGML_API enum lm_ggml_status lm_ggml_backend_graph_compute_async(lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph);

// The backend forms of the device queries below.
LM_GGML_API bool lm_ggml_backend_supports_op  (lm_ggml_backend_t backend, const struct lm_ggml_tensor * op);
LM_GGML_API bool lm_ggml_backend_supports_buft(lm_ggml_backend_t backend, lm_ggml_backend_buffer_type_t buft);
LM_GGML_API bool lm_ggml_backend_offload_op   (lm_ggml_backend_t backend, const struct lm_ggml_tensor * op);

// Copies after the work queued on backend_src; backend_dst waits for it.
// Falls back to a synchronous copy where the backends cannot do better.
LM_GGML_API void lm_ggml_backend_tensor_copy_async(lm_ggml_backend_t backend_src, lm_ggml_backend_t backend_dst,
                                                   struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst);

LM_GGML_API lm_ggml_backend_dev_t lm_ggml_backend_get_device(lm_ggml_backend_t backend);

// ---------------------------------------------------------------- events

LM_GGML_API lm_ggml_backend_event_t lm_ggml_backend_event_new        (lm_ggml_backend_dev_t device);
LM_GGML_API void                    lm_ggml_backend_event_free       (lm_ggml_backend_event_t event);
LM_GGML_API void                    lm_ggml_backend_event_record     (lm_ggml_backend_event_t event, lm_ggml_backend_t backend);
LM_GGML_API void                    lm_ggml_backend_event_synchronize(lm_ggml_backend_event_t event);
LM_GGML_API void                    lm_ggml_backend_event_wait       (lm_ggml_backend_t backend, lm_ggml_backend_event_t event);

// ---------------------------------------------------------------- devices

enum lm_ggml_backend_dev_type {
    LM_GGML_BACKEND_DEVICE_TYPE_CPU,   // system memory
    LM_GGML_BACKEND_DEVICE_TYPE_GPU,   // its own memory
    LM_GGML_BACKEND_DEVICE_TYPE_ACCEL, // works beside the CPU backend (BLAS, AMX)
};

struct lm_ggml_backend_dev_caps {
    bool async;
    bool host_buffer;
    bool buffer_from_host_ptr;
    bool events;
};

struct lm_ggml_backend_dev_props {
    const char * name;
    const char * description;
    size_t memory_free;
    size_t memory_total;
    enum lm_ggml_backend_dev_type type;
    struct lm_ggml_backend_dev_caps caps;
};

LM_GGML_API const char *                  lm_ggml_backend_dev_name(lm_ggml_backend_dev_t device);
LM_GGML_API const char *                  lm_ggml_backend_dev_description(lm_ggml_backend_dev_t device);
LM_GGML_API void                          lm_ggml_backend_dev_memory(lm_ggml_backend_dev_t device, size_t * free, size_t * total);
LM_GGML_API enum lm_ggml_backend_dev_type lm_ggml_backend_dev_type(lm_ggml_backend_dev_t device);
LM_GGML_API void                          lm_ggml_backend_dev_get_props(lm_ggml_backend_dev_t device, struct lm_ggml_backend_dev_props * props);
LM_GGML_API lm_ggml_backend_reg_t         lm_ggml_backend_dev_backend_reg(lm_ggml_backend_dev_t device);
LM_GGML_API lm_ggml_backend_t             lm_ggml_backend_dev_init(lm_ggml_backend_dev_t device, const char * params);
LM_GGML_API lm_ggml_backend_buffer_type_t lm_ggml_backend_dev_buffer_type(lm_ggml_backend_dev_t device);
LM_GGML_API lm_ggml_backend_buffer_type_t lm_ggml_backend_dev_host_buffer_type(lm_ggml_backend_dev_t device);
LM_GGML_API lm_ggml_backend_buffer_t      lm_ggml_backend_dev_buffer_from_host_ptr(lm_ggml_backend_dev_t device, void * ptr, size_t size, size_t max_tensor_size);

LM_GGML_API bool lm_ggml_backend_dev_supports_op  (lm_ggml_backend_dev_t device, const struct lm_ggml_tensor * op);
LM_GGML_API bool lm_ggml_backend_dev_supports_buft(lm_ggml_backend_dev_t device, lm_ggml_backend_buffer_type_t buft);
LM_GGML_API bool lm_ggml_backend_dev_offload_op   (lm_ggml_backend_dev_t device, const struct lm_ggml_tensor * op);

// ---------------------------------------------------------------- registries

LM_GGML_API const char *          lm_ggml_backend_reg_name(lm_ggml_backend_reg_t reg);
LM_GGML_API size_t                lm_ggml_backend_reg_dev_count(lm_ggml_backend_reg_t reg);
LM_GGML_API lm_ggml_backend_dev_t lm_ggml_backend_reg_dev_get(lm_ggml_backend_reg_t reg, size_t index);
LM_GGML_API void *                lm_ggml_backend_reg_get_proc_address(lm_ggml_backend_reg_t reg, const char * name);

// Signatures of functions a registry may hand out by name
// (lm_ggml_backend_reg_get_proc_address).
typedef lm_ggml_backend_buffer_type_t   (*lm_ggml_backend_split_buffer_type_t)(int main_device, const float * tensor_split);
typedef void                            (*lm_ggml_backend_set_n_threads_t)(lm_ggml_backend_t backend, int n_threads);
typedef lm_ggml_backend_buffer_type_t * (*lm_ggml_backend_dev_get_extra_bufts_t)(lm_ggml_backend_dev_t device); // NULL-terminated
typedef void                            (*lm_ggml_backend_set_abort_callback_t)(lm_ggml_backend_t backend, lm_ggml_abort_callback abort_callback, void * abort_callback_data);
struct lm_ggml_backend_feature {
    const char * name;
    const char * value;
};
typedef struct lm_ggml_backend_feature * (*lm_ggml_backend_get_features_t)(lm_ggml_backend_reg_t reg); // ends with a NULL name

LM_GGML_API size_t                lm_ggml_backend_reg_count(void);
LM_GGML_API lm_ggml_backend_reg_t lm_ggml_backend_reg_get(size_t index);
LM_GGML_API lm_ggml_backend_reg_t lm_ggml_backend_reg_by_name(const char * name);

LM_GGML_API size_t                lm_ggml_backend_dev_count(void);
LM_GGML_API lm_ggml_backend_dev_t lm_ggml_backend_dev_get(size_t index);
LM_GGML_API lm_ggml_backend_dev_t lm_ggml_backend_dev_by_name(const char * name);
LM_GGML_API lm_ggml_backend_dev_t lm_ggml_backend_dev_by_type(enum lm_ggml_backend_dev_type type);

// lm_ggml_backend_dev_init of the device found by name / by type.
LM_GGML_API lm_ggml_backend_t lm_ggml_backend_init_by_name(const char * name, const char * params);
LM_GGML_API lm_ggml_backend_t lm_ggml_backend_init_by_type(enum lm_ggml_backend_dev_type type, const char * params);
// A GPU device if there is one, else the CPU.
LM_GGML_API lm_ggml_backend_t lm_ggml_backend_init_best(void);

// This core links its backends in: there are no backend libraries to load.
// lm_ggml_backend_load returns NULL (with a log line), load_all only makes
// sure the built-in registries are registered, unload unregisters.
LM_GGML_API lm_ggml_backend_reg_t lm_ggml_backend_load(const char * path);
LM_GGML_API void                  lm_ggml_backend_unload(lm_ggml_backend_reg_t reg);
LM_GGML_API void                  lm_ggml_backend_load_all(void);

// ---------------------------------------------------------------- scheduler
//
// Runs one graph over several backends: each node goes to the first backend
// (lowest index) that supports it, preferring the backend whose buffer holds
// its weights (buffers with USAGE_WEIGHTS); the graph is cut into splits of
// consecutive nodes on one backend, and the inputs a split needs from another
// backend are copied into its compute buffer. Compute buffers come from one
// graph allocator per backend; lm_ggml_backend_sched_reserve sizes them once
// from a worst-case graph.

typedef struct lm_ggml_backend_sched * lm_ggml_backend_sched_t;

// Called for each node while computing: with ask == true the scheduler asks
// whether the caller wants to see the node (the graph is split so that it
// can); with ask == false it hands the computed node over, and a false
// return stops the compute.
typedef bool (*lm_ggml_backend_sched_eval_callback)(struct lm_ggml_tensor * t, bool ask, void * user_data);

LM_GGML_API lm_ggml_backend_sched_t lm_ggml_backend_sched_new(lm_ggml_backend_t * backends, lm_ggml_backend_buffer_type_t * bufts,
                                                              int n_backends, size_t graph_size, bool parallel);
LM_GGML_API void                    lm_ggml_backend_sched_free(lm_ggml_backend_sched_t sched);

LM_GGML_API bool                    lm_ggml_backend_sched_reserve(lm_ggml_backend_sched_t sched, struct lm_ggml_cgraph * measure_graph);

LM_GGML_API int                     lm_ggml_backend_sched_get_n_backends(lm_ggml_backend_sched_t sched);
LM_GGML_API lm_ggml_backend_t       lm_ggml_backend_sched_get_backend(lm_ggml_backend_sched_t sched, int i);

// Of the last graph.
LM_GGML_API int                     lm_ggml_backend_sched_get_n_splits(lm_ggml_backend_sched_t sched);
LM_GGML_API int                     lm_ggml_backend_sched_get_n_copies(lm_ggml_backend_sched_t sched);

LM_GGML_API size_t                  lm_ggml_backend_sched_get_buffer_size(lm_ggml_backend_sched_t sched, lm_ggml_backend_t backend);

LM_GGML_API void                    lm_ggml_backend_sched_set_tensor_backend(lm_ggml_backend_sched_t sched, struct lm_ggml_tensor * node, lm_ggml_backend_t backend);
LM_GGML_API lm_ggml_backend_t       lm_ggml_backend_sched_get_tensor_backend(lm_ggml_backend_sched_t sched, struct lm_ggml_tensor * node);

LM_GGML_API bool                    lm_ggml_backend_sched_alloc_graph(lm_ggml_backend_sched_t sched, struct lm_ggml_cgraph * graph);
LM_GGML_API enum lm_ggml_status     lm_ggml_backend_sched_graph_compute(lm_ggml_backend_sched_t sched, struct lm_ggml_cgraph * graph);
LM_GGML_API enum lm_ggml_status     lm_ggml_backend_sched_graph_compute_async(lm_ggml_backend_sched_t sched, struct lm_ggml_cgraph * graph);
LM_GGML_API void                    lm_ggml_backend_sched_synchronize(lm_ggml_backend_sched_t sched);

// Forgets assignments and allocations; the tensors of the previous graph are
// left pointing at memory that will be reused: build a new graph.
LM_GGML_API void                    lm_ggml_backend_sched_reset(lm_ggml_backend_sched_t sched);

LM_GGML_API void                    lm_ggml_backend_sched_set_eval_callback(lm_ggml_backend_sched_t sched, lm_ggml_backend_sched_eval_callback callback, void * user_data);

// ---------------------------------------------------------------- utilities

struct lm_ggml_backend_graph_copy {
    lm_ggml_backend_buffer_t buffer;
    struct lm_ggml_context * ctx_allocated;
    struct lm_ggml_context * ctx_unallocated;
    struct lm_ggml_cgraph  * graph;
};

// A copy of graph (tensors and data) in a buffer of backend.
LM_GGML_API struct lm_ggml_backend_graph_copy lm_ggml_backend_graph_copy(lm_ggml_backend_t backend, struct lm_ggml_cgraph * graph);
LM_GGML_API void                              lm_ggml_backend_graph_copy_free(struct lm_ggml_backend_graph_copy copy);

typedef bool (*lm_ggml_backend_eval_callback)(int node_index, struct lm_ggml_tensor * t1, struct lm_ggml_tensor * t2, void * user_data);

// Computes graph on both backends node by node, handing each pair of results
// to callback (which returns false to stop).
LM_GGML_API bool lm_ggml_backend_compare_graph_backend(lm_ggml_backend_t backend1, lm_ggml_backend_t backend2, struct lm_ggml_cgraph * graph,
                                                       lm_ggml_backend_eval_callback callback, void * user_data);

// Gives tensor the address addr inside buffer / gives a view its source's buffer and address.
LM_GGML_API void lm_ggml_backend_tensor_alloc(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor, void * addr);
LM_GGML_API void lm_ggml_backend_view_init(struct lm_ggml_tensor * tensor);

// CPU buffers are always available.
LM_GGML_API lm_ggml_backend_buffer_t      lm_ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size);
LM_GGML_API lm_ggml_backend_buffer_type_t lm_ggml_backend_cpu_buffer_type(void);

#ifdef __cplusplus
}
#endif
