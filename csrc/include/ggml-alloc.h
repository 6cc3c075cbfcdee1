// ggml-alloc.h - tensor and graph allocators over backend buffers.
// Source-compatible with upstream ggml's ggml-alloc.h (cui-llama.rn 1.3.3).
#pragma once

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_ggml_backend_buffer_type * lm_ggml_backend_buffer_type_t;
typedef struct lm_ggml_backend_buffer      * lm_ggml_backend_buffer_t;
typedef struct lm_ggml_backend             * lm_ggml_backend_t;

// Linear allocator: places tensors one after the other in a buffer.
struct lm_ggml_tallocr {
    lm_ggml_backend_buffer_t buffer;
    void * base;
    size_t alignment;
    size_t offset;
};

LM_GGML_API struct lm_ggml_tallocr lm_ggml_tallocr_new(lm_ggml_backend_buffer_t buffer);
LM_GGML_API void                   lm_ggml_tallocr_alloc(struct lm_ggml_tallocr * talloc, struct lm_ggml_tensor * tensor);

// Graph allocator: gives every node of a graph an address in one buffer per
// buffer type, reusing the memory of tensors whose last consumer has run
// (and computing ops in place where the op allows it). Tensors flagged with
// lm_ggml_set_input get addresses that no other tensor overlaps and are
// allocated first; tensors flagged with lm_ggml_set_output are never freed.
typedef struct lm_ggml_gallocr * lm_ggml_gallocr_t;

LM_GGML_API lm_ggml_gallocr_t lm_ggml_gallocr_new  (lm_ggml_backend_buffer_type_t buft);
LM_GGML_API lm_ggml_gallocr_t lm_ggml_gallocr_new_n(lm_ggml_backend_buffer_type_t * bufts, int n_bufs);
LM_GGML_API void              lm_ggml_gallocr_free (lm_ggml_gallocr_t galloc);

// Sizes the buffers for a worst-case graph without touching the graph;
// false if a buffer could not be allocated.
LM_GGML_API bool lm_ggml_gallocr_reserve  (lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph);
LM_GGML_API bool lm_ggml_gallocr_reserve_n(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph,
                                           const int * node_buffer_ids, const int * leaf_buffer_ids);

// Allocates the graph's tensors. With one buffer, a graph that no longer fits
// the reservation makes it reserve again; with several, false is returned and
// lm_ggml_gallocr_reserve_n must be called first.
LM_GGML_API bool   lm_ggml_gallocr_alloc_graph    (lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph);
LM_GGML_API size_t lm_ggml_gallocr_get_buffer_size(lm_ggml_gallocr_t galloc, int buffer_id);

// One buffer holding every tensor of ctx that has no data yet (NULL if the
// context has none to allocate, or the allocation failed).
LM_GGML_API struct lm_ggml_backend_buffer * lm_ggml_backend_alloc_ctx_tensors_from_buft(struct lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft);
LM_GGML_API struct lm_ggml_backend_buffer * lm_ggml_backend_alloc_ctx_tensors         (struct lm_ggml_context * ctx, lm_ggml_backend_t backend);

#ifdef __cplusplus
}
#endif
