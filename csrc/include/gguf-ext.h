// gguf-ext.h - GGUF entry points beyond ggml's API, used by the Go
// bindings and by tests. They report errors as text instead of logging, and
// give access to values that C strings cannot carry (lengths, inner NULs).
#pragma once

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

// Like lm_gguf_init_from_file, but on failure writes the reason to err
// (if err_size > 0) instead of logging it.
//
// Data checks depend on params.no_alloc: with no_alloc == false every tensor
// (including the padding after it) must lie inside the file; with
// no_alloc == true only the metadata is required, which is how files written
// with only_meta are read.
LM_GGML_API struct lm_gguf_context * lm_gguf_init_from_file_ex(const char * fname, struct lm_gguf_init_params params,
        char * err, size_t err_size);

// Parses a whole GGUF file held in memory. Everything the context keeps is
// copied, except that with params.ctx the tensors live in the new lm_ggml_context.
LM_GGML_API struct lm_gguf_context * lm_gguf_init_from_buffer_ex(const void * data, size_t size,
        struct lm_gguf_init_params params, char * err, size_t err_size);

// Parses the first `avail` bytes of a file that is `file_size` bytes long
// (params.ctx must be NULL). If the metadata extends past `avail`, returns
// NULL with *need set to the number of leading bytes required to go on (a
// lower bound; call again with more). On any other error *need is 0.
LM_GGML_API struct lm_gguf_context * lm_gguf_init_from_prefix_ex(const void * data, size_t avail, uint64_t file_size,
        struct lm_gguf_init_params params, uint64_t * need, char * err, size_t err_size);

// STRING value with its length (the value may contain NUL bytes).
LM_GGML_API const char * lm_gguf_get_val_str_n(const struct lm_gguf_context * ctx, int key_id, size_t * len);
// Array of strings: n+1 pointers; string i is [p[i], p[i+1]-1) (each is also NUL-terminated).
LM_GGML_API const char * const * lm_gguf_get_arr_strs(const struct lm_gguf_context * ctx, int key_id);

// Tensor info in one call.
struct lm_gguf_tensor_desc {
    const char * name;
    int          n_dims;
    int64_t      ne[4];
    int          type;   // enum lm_ggml_type
    uint64_t     offset; // from the start of the data section
    uint64_t     size;   // bytes
};
LM_GGML_API void     lm_gguf_get_tensor_desc(const struct lm_gguf_context * ctx, int i, struct lm_gguf_tensor_desc * out);
LM_GGML_API uint64_t lm_gguf_get_tensor_size(const struct lm_gguf_context * ctx, int i);
// Bytes of the data section, including the padding after the last tensor.
LM_GGML_API uint64_t lm_gguf_get_data_size(const struct lm_gguf_context * ctx);

// Adds a tensor described by name/type/shape without a lm_ggml_tensor.
// `data` (nbytes of the tensor, or NULL to write zeros) must stay valid until
// the file is written. Aborts (LM_GGML_ASSERT) on invalid arguments, like
// lm_gguf_add_tensor.
LM_GGML_API void lm_gguf_add_tensor_info(struct lm_gguf_context * ctx, const char * name, enum lm_ggml_type type,
        int n_dims, const int64_t * ne, const void * data);

// Like lm_gguf_write_to_file but returns false with a reason instead of aborting on I/O errors.
LM_GGML_API bool lm_gguf_write_to_file_ex(const struct lm_gguf_context * ctx, const char * fname, bool only_meta,
        char * err, size_t err_size);

#ifdef __cplusplus
}
#endif
