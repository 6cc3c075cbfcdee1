// ggml-backend-impl.h - what a backend implements. Internal: not part of the
// public API (upstream ggml has a header of this name with other contents;
// programs must not include either).
//
// Each object of ggml-backend.h is a small struct holding a pointer to a
// table of operations (one `const struct ..._ops` per backend, like
// struct lm_cpu_op for kernels) and the backend's own context. ggml-backend.c
// implements the public functions once, over these tables: it checks the
// arguments, fills in defaults for optional entries (NULL), and turns a
// failed operation into an error.
//
// Failures. Operations that can fail (a remote backend losing its
// connection, a bad offset) return false (or NULL, or a failed status) after
// calling lm_backend_fail() with the reason. The public functions then report
// it the way ggml's API allows: a status, NULL or false where the
// signature has one, otherwise lm_ggml_abort(reason) — which aborts a plain C
// program, as ggml does, and returns the message as an error to a
// caller that armed error capture (LM_GGML_TRY, the Go bindings).
#pragma once

#include "ggml-backend.h"
#include "../base/ggml-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_BACKEND_API_VERSION 1

// ---------------------------------------------------------------- errors

// Records why the current operation failed (per thread) and returns false.
LM_GGML_ATTRIBUTE_FORMAT(1, 2)
bool lm_backend_fail(const char * fmt, ...);
// The last reason recorded on this thread ("" if none); cleared by lm_backend_clear_error.
const char * lm_backend_last_error(void);
void lm_backend_clear_error(void);
// Logs the reason recorded on this thread as the failure of func, for a
// function whose caller sees the failure as NULL/false.
void lm_backend_report(const char * func);
// Checks an argument; on failure records why, logs it and returns ret.
#define LM_BACKEND_CHECK_RET(cond, ret, ...) \
    do { if (!(cond)) { lm_backend_fail(__VA_ARGS__); lm_backend_report(__func__); return ret; } } while (0)

// ---------------------------------------------------------------- buffer types

struct lm_backend_buft_ops {
    const char *             (*name)      (lm_ggml_backend_buffer_type_t buft);
    lm_ggml_backend_buffer_t (*alloc)     (lm_ggml_backend_buffer_type_t buft, size_t size); // NULL + lm_backend_fail on failure
    size_t                   (*alignment) (lm_ggml_backend_buffer_type_t buft);
    size_t                   (*max_size)  (lm_ggml_backend_buffer_type_t buft);  // optional: SIZE_MAX
    size_t                   (*alloc_size)(lm_ggml_backend_buffer_type_t buft, const struct lm_ggml_tensor * t); // optional: lm_ggml_nbytes
    bool                     (*is_host)   (lm_ggml_backend_buffer_type_t buft);  // optional: false; true = data in this process's memory, plain layout
};

struct lm_ggml_backend_buffer_type {
    const struct lm_backend_buft_ops * ops;
    lm_ggml_backend_dev_t device; // may be NULL
    void * ctx;
};

// ---------------------------------------------------------------- buffers

// Offsets and sizes are checked by ggml-backend.c (against the tensor and the
// buffer) before these are called.
struct lm_backend_buffer_ops {
    void   (*free)         (lm_ggml_backend_buffer_t buf); // optional; releases ctx and the memory
    void * (*base)         (lm_ggml_backend_buffer_t buf); // first byte (an address of the remote side for remote buffers)
    bool   (*init_tensor)  (lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t); // optional
    bool   (*memset_tensor)(lm_ggml_backend_buffer_t buf,       struct lm_ggml_tensor * t, uint8_t value, size_t offset, size_t size);
    bool   (*set_tensor)   (lm_ggml_backend_buffer_t buf,       struct lm_ggml_tensor * t, const void * data, size_t offset, size_t size);
    bool   (*get_tensor)   (lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * t, void * data, size_t offset, size_t size);
    // optional: dst is in buf, src anywhere. *done = false (and true returned)
    // when this buffer cannot do it: the caller then copies through the host.
    bool   (*cpy_tensor)   (lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst, bool * done);
    bool   (*clear)        (lm_ggml_backend_buffer_t buf, uint8_t value);
    void   (*reset)        (lm_ggml_backend_buffer_t buf); // optional: forget per-tensor state
};

struct lm_ggml_backend_buffer {
    const struct lm_backend_buffer_ops * ops;
    lm_ggml_backend_buffer_type_t buft;
    void * ctx;
    size_t size;
    enum lm_ggml_backend_buffer_usage usage;
};

// A buffer object over ops/ctx (NULL if out of memory; ops->free is not called then).
lm_ggml_backend_buffer_t lm_backend_buffer_new(lm_ggml_backend_buffer_type_t buft, const struct lm_backend_buffer_ops * ops,
                                               void * ctx, size_t size);
// A buffer of size bytes of this process's memory (ctx: its first byte; big
// ones on huge pages), rounded up to 64 so that a tensor ending it can be
// read a SIMD register at a time; NULL + lm_backend_fail on failure. The
// CPU buffer types' alloc (cpu/host-buffer.c).
lm_ggml_backend_buffer_t lm_backend_host_buffer_alloc(lm_ggml_backend_buffer_type_t buft,
                                                      const struct lm_backend_buffer_ops * ops, size_t size);

// A buffer made of several buffers (when a context's tensors exceed the
// buffer type's max size): freeing it frees them, set_usage and clear reach
// them all. Takes ownership of bufs[0..n) (the array itself is copied).
lm_ggml_backend_buffer_t lm_backend_multi_buffer_new(lm_ggml_backend_buffer_t * bufs, size_t n);
bool                     lm_backend_buffer_is_multi(lm_ggml_backend_buffer_t buf);
// The parts of a multi-buffer (at most cap of them into out); their number,
// 0 for another buffer.
size_t                   lm_backend_multi_buffer_parts(lm_ggml_backend_buffer_t buf, lm_ggml_backend_buffer_t * out, size_t cap);

// The host memory of a host buffer (is_host), for copies through the host.
static inline bool lm_backend_tensor_is_host(const struct lm_ggml_tensor * t) {
    return t->buffer == NULL || lm_ggml_backend_buffer_is_host(t->buffer);
}

// ---------------------------------------------------------------- backends (streams)

struct lm_backend_ops {
    const char * (*name)(lm_ggml_backend_t backend);
    void         (*free)(lm_ggml_backend_t backend); // releases ctx and the struct

    // optional: asynchronous tensor access and copies; the sync forms of the
    // buffer are used when NULL. cpy_tensor_async sets *done = false when it
    // cannot do that pair.
    bool (*set_tensor_async)(lm_ggml_backend_t backend,       struct lm_ggml_tensor * t, const void * data, size_t offset, size_t size);
    bool (*get_tensor_async)(lm_ggml_backend_t backend, const struct lm_ggml_tensor * t, void * data, size_t offset, size_t size);
    bool (*cpy_tensor_async)(lm_ggml_backend_t src_backend, lm_ggml_backend_t dst_backend,
                             const struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst, bool * done);
    bool (*synchronize)     (lm_ggml_backend_t backend); // optional: nothing is ever pending

    // optional: plans (a graph prepared once, computed many times)
    lm_ggml_backend_graph_plan_t (*plan_create) (lm_ggml_backend_t backend, const struct lm_ggml_cgraph * g); // NULL + lm_backend_fail on failure
    void                         (*plan_free)   (lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan);
    enum lm_ggml_status          (*plan_compute)(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan);

    // May return before the work is done where the backend is asynchronous.
    enum lm_ggml_status (*graph_compute)(lm_ggml_backend_t backend, struct lm_ggml_cgraph * g);

    // optional: events
    bool (*event_record)(lm_ggml_backend_t backend, lm_ggml_backend_event_t event);
    bool (*event_wait)  (lm_ggml_backend_t backend, lm_ggml_backend_event_t event);
};

struct lm_ggml_backend {
    lm_ggml_guid_t guid;
    const struct lm_backend_ops * ops;
    lm_ggml_backend_dev_t device;
    void * ctx;
};

struct lm_ggml_backend_event {
    lm_ggml_backend_dev_t device;
    void * ctx;
};

// ---------------------------------------------------------------- devices

struct lm_backend_dev_ops {
    const char *                  (*name)       (lm_ggml_backend_dev_t dev);
    const char *                  (*description)(lm_ggml_backend_dev_t dev);
    void                          (*memory)     (lm_ggml_backend_dev_t dev, size_t * free, size_t * total);
    enum lm_ggml_backend_dev_type (*type)       (lm_ggml_backend_dev_t dev);
    void                          (*props)      (lm_ggml_backend_dev_t dev, struct lm_ggml_backend_dev_props * props); // optional: from the above
    lm_ggml_backend_t             (*init_backend)(lm_ggml_backend_dev_t dev, const char * params); // NULL + lm_backend_fail on failure
    lm_ggml_backend_buffer_type_t (*buffer_type)(lm_ggml_backend_dev_t dev);
    lm_ggml_backend_buffer_type_t (*host_buffer_type)(lm_ggml_backend_dev_t dev); // optional
    lm_ggml_backend_buffer_t      (*buffer_from_host_ptr)(lm_ggml_backend_dev_t dev, void * ptr, size_t size, size_t max_tensor_size); // optional
    bool                          (*supports_op)  (lm_ggml_backend_dev_t dev, const struct lm_ggml_tensor * op);
    bool                          (*supports_buft)(lm_ggml_backend_dev_t dev, lm_ggml_backend_buffer_type_t buft);
    bool                          (*offload_op)   (lm_ggml_backend_dev_t dev, const struct lm_ggml_tensor * op); // optional: false
    lm_ggml_backend_event_t       (*event_new)    (lm_ggml_backend_dev_t dev); // optional (all three or none)
    void                          (*event_free)   (lm_ggml_backend_dev_t dev, lm_ggml_backend_event_t event);
    bool                          (*event_synchronize)(lm_ggml_backend_dev_t dev, lm_ggml_backend_event_t event);
};

struct lm_ggml_backend_device {
    const struct lm_backend_dev_ops * ops;
    lm_ggml_backend_reg_t reg;
    void * ctx;
};

// ---------------------------------------------------------------- registries

struct lm_backend_reg_ops {
    const char *          (*name)     (lm_ggml_backend_reg_t reg);
    size_t                (*dev_count)(lm_ggml_backend_reg_t reg);
    lm_ggml_backend_dev_t (*dev_get)  (lm_ggml_backend_reg_t reg, size_t index);
    void *                (*proc_address)(lm_ggml_backend_reg_t reg, const char * name); // optional
};

struct lm_ggml_backend_reg {
    int api_version; // LM_BACKEND_API_VERSION
    const struct lm_backend_reg_ops * ops;
    void * ctx;
};

// Adds a registry (and its devices) to the global list; registering the same
// registry twice is a no-op. Thread-safe. The CPU registry is always present.
void lm_backend_register(lm_ggml_backend_reg_t reg);

// ---------------------------------------------------------------- helpers for backends

// True if [offset, offset+size) lies inside t's data (overflow-safe).
bool lm_backend_tensor_range_ok(const struct lm_ggml_tensor * t, size_t offset, size_t size);

#ifdef __cplusplus
}
#endif
