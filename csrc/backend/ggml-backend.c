// ggml-backend.c - the public functions of ggml-backend.h over the ops tables
// of ggml-backend-impl.h: argument checks, defaults for optional entries,
// tensor access with range checks, copies between buffers, multi-buffers,
// events and devices. The registry of built-in backends is in
// registry/, the CPU backend in cpu/, the scheduler in ggml-sched.c.
//
// Reporting: a failed check or operation records its reason with
// lm_backend_fail. Functions whose signature can say so return NULL / false /
// a status (and log the reason); void functions call lm_ggml_abort with it,
// which aborts a plain C program and returns an error to a caller that armed
// LM_GGML_TRY.
#include "ggml-backend-impl.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- errors

static _Thread_local char g_last_error[512];

bool lm_backend_fail(const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(g_last_error, sizeof(g_last_error), fmt, args);
    va_end(args);
    return false;
}

const char * lm_backend_last_error(void) { return g_last_error; }
void lm_backend_clear_error(void) { g_last_error[0] = '\0'; }

void lm_backend_report(const char * func) {
    LM_GGML_LOG_ERROR("%s: %s\n", func, g_last_error);
}

// The failure of a function that cannot return it.
#define FATAL(func) lm_ggml_abort("ggml-backend.c", __LINE__, "%s: %s", func, g_last_error)

// The same for void functions.
#define CHECK_VOID(cond, ...) do { if (!(cond)) { lm_backend_fail(__VA_ARGS__); FATAL(__func__); return; } } while (0)

// ---------------------------------------------------------------- range checks

bool lm_backend_tensor_range_ok(const struct lm_ggml_tensor * t, size_t offset, size_t size) {
    if (t == NULL) return false;
    const size_t n = lm_ggml_nbytes(t);
    return offset <= n && size <= n - offset;
}

// The buffer that holds t's data (a view's is its source's).
static lm_ggml_backend_buffer_t tensor_buffer(const struct lm_ggml_tensor * t) {
    return t->view_src != NULL && t->view_src->buffer != NULL ? t->view_src->buffer : t->buffer;
}

// Checks that t has data and that its bytes lie inside its buffer (if any);
// records the reason and returns false otherwise.
static bool tensor_placed_ok(const struct lm_ggml_tensor * t) {
    if (t->data == NULL) {
        return lm_backend_fail("tensor '%s' has no data (not allocated)", t->name);
    }
    lm_ggml_backend_buffer_t buf = tensor_buffer(t);
    if (buf == NULL || lm_backend_buffer_is_multi(buf)) {
        return true; // context memory (host), or checked by the part that holds it
    }
    const uintptr_t base = (uintptr_t) lm_ggml_backend_buffer_get_base(buf);
    const uintptr_t p = (uintptr_t) t->data;
    const size_t n = lm_ggml_nbytes(t);
    if (p < base || p - base > buf->size || n > buf->size - (p - base)) {
        return lm_backend_fail("tensor '%s' (%zu bytes) lies outside its buffer '%s' (%zu bytes)",
                               t->name, n, lm_ggml_backend_buffer_name(buf), buf->size);
    }
    return true;
}

// Common checks of tensor set/get/memset: the access [offset, offset+size)
// lies in the tensor, the tensor in its buffer.
static bool tensor_access_ok(const struct lm_ggml_tensor * t, size_t offset, size_t size, const char * what) {
    if (t == NULL) return lm_backend_fail("%s: tensor is NULL", what);
    if (!lm_backend_tensor_range_ok(t, offset, size)) {
        return lm_backend_fail("%s of tensor '%s' out of bounds (offset %zu + size %zu > %zu bytes)",
                               what, t->name, offset, size, lm_ggml_nbytes(t));
    }
    return tensor_placed_ok(t);
}

// ---------------------------------------------------------------- buffer types

const char * lm_ggml_backend_buft_name(lm_ggml_backend_buffer_type_t buft) {
    if (buft == NULL) return "NULL";
    return buft->ops->name(buft);
}

static const struct lm_backend_buffer_ops empty_buffer_ops; // a zero-sized buffer: nothing to do

lm_ggml_backend_buffer_t lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_buffer_type_t buft, size_t size) {
    LM_BACKEND_CHECK_RET(buft != NULL, NULL, "buffer type is NULL");
    if (size == 0) {
        // a placeholder, so that callers need no special case for "nothing to allocate"
        lm_ggml_backend_buffer_t buf = lm_backend_buffer_new(buft, &empty_buffer_ops, NULL, 0);
        LM_BACKEND_CHECK_RET(buf != NULL, NULL, "out of memory");
        return buf;
    }
    const size_t max = lm_ggml_backend_buft_get_max_size(buft);
    LM_BACKEND_CHECK_RET(size <= max, NULL, "%zu bytes exceed the maximum buffer size of %s (%zu)", size, lm_ggml_backend_buft_name(buft), max);
    lm_backend_clear_error();
    lm_ggml_backend_buffer_t buf = buft->ops->alloc(buft, size);
    if (buf == NULL) {
        if (g_last_error[0] == '\0') lm_backend_fail("cannot allocate a %s buffer of %zu bytes", lm_ggml_backend_buft_name(buft), size);
        lm_backend_report(__func__);
    }
    return buf;
}

size_t lm_ggml_backend_buft_get_alignment(lm_ggml_backend_buffer_type_t buft) {
    LM_BACKEND_CHECK_RET(buft != NULL, 0, "buffer type is NULL");
    return buft->ops->alignment(buft);
}

size_t lm_ggml_backend_buft_get_max_size(lm_ggml_backend_buffer_type_t buft) {
    LM_BACKEND_CHECK_RET(buft != NULL, 0, "buffer type is NULL");
    return buft->ops->max_size != NULL ? buft->ops->max_size(buft) : SIZE_MAX;
}

size_t lm_ggml_backend_buft_get_alloc_size(lm_ggml_backend_buffer_type_t buft, struct lm_ggml_tensor * tensor) {
    LM_BACKEND_CHECK_RET(buft != NULL && tensor != NULL, 0, "buffer type or tensor is NULL");
    const size_t n = lm_ggml_nbytes(tensor);
    if (buft->ops->alloc_size == NULL) return n;
    const size_t s = buft->ops->alloc_size(buft, tensor);
    return s > n ? s : n;
}

bool lm_ggml_backend_buft_is_host(lm_ggml_backend_buffer_type_t buft) {
    return buft != NULL && buft->ops->is_host != NULL && buft->ops->is_host(buft);
}

lm_ggml_backend_dev_t lm_ggml_backend_buft_get_device(lm_ggml_backend_buffer_type_t buft) {
    return buft != NULL ? buft->device : NULL;
}

// ---------------------------------------------------------------- buffers

// The parts of a multi-buffer (ctx of a buffer with multi_ops).
struct multi_ctx {
    lm_ggml_backend_buffer_t * bufs;
    size_t n;
};

lm_ggml_backend_buffer_t lm_backend_buffer_new(lm_ggml_backend_buffer_type_t buft, const struct lm_backend_buffer_ops * ops,
                                               void * ctx, size_t size) {
    lm_ggml_backend_buffer_t buf = calloc(1, sizeof(*buf));
    if (buf == NULL) return NULL;
    buf->ops = ops;
    buf->buft = buft;
    buf->ctx = ctx;
    buf->size = size;
    buf->usage = LM_GGML_BACKEND_BUFFER_USAGE_ANY;
    return buf;
}

const char * lm_ggml_backend_buffer_name(lm_ggml_backend_buffer_t buffer) {
    if (buffer == NULL) return "NULL";
    return lm_ggml_backend_buft_name(buffer->buft);
}

void lm_ggml_backend_buffer_free(lm_ggml_backend_buffer_t buffer) {
    if (buffer == NULL) return;
    if (buffer->ops->free != NULL) buffer->ops->free(buffer);
    free(buffer);
}

void * lm_ggml_backend_buffer_get_base(lm_ggml_backend_buffer_t buffer) {
    LM_BACKEND_CHECK_RET(buffer != NULL, NULL, "buffer is NULL");
    if (buffer->size == 0 || buffer->ops->base == NULL) return NULL;
    return buffer->ops->base(buffer);
}

size_t lm_ggml_backend_buffer_get_size(lm_ggml_backend_buffer_t buffer) {
    return buffer != NULL ? buffer->size : 0;
}

void lm_ggml_backend_buffer_init_tensor(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor) {
    CHECK_VOID(buffer != NULL && tensor != NULL, "buffer or tensor is NULL");
    if (buffer->ops->init_tensor == NULL) return;
    lm_backend_clear_error();
    if (!buffer->ops->init_tensor(buffer, tensor)) FATAL(__func__);
}

size_t lm_ggml_backend_buffer_get_alignment(lm_ggml_backend_buffer_t buffer) {
    LM_BACKEND_CHECK_RET(buffer != NULL, 0, "buffer is NULL");
    return lm_ggml_backend_buft_get_alignment(buffer->buft);
}

size_t lm_ggml_backend_buffer_get_max_size(lm_ggml_backend_buffer_t buffer) {
    LM_BACKEND_CHECK_RET(buffer != NULL, 0, "buffer is NULL");
    return lm_ggml_backend_buft_get_max_size(buffer->buft);
}

size_t lm_ggml_backend_buffer_get_alloc_size(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor) {
    LM_BACKEND_CHECK_RET(buffer != NULL, 0, "buffer is NULL");
    return lm_ggml_backend_buft_get_alloc_size(buffer->buft, tensor);
}

void lm_ggml_backend_buffer_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) {
    CHECK_VOID(buffer != NULL, "buffer is NULL");
    if (buffer->size == 0) return;
    CHECK_VOID(buffer->ops->clear != NULL, "buffer '%s' cannot be cleared", lm_ggml_backend_buffer_name(buffer));
    lm_backend_clear_error();
    if (!buffer->ops->clear(buffer, value)) FATAL(__func__);
}

bool lm_ggml_backend_buffer_is_host(lm_ggml_backend_buffer_t buffer) {
    return buffer != NULL && lm_ggml_backend_buft_is_host(buffer->buft);
}

void lm_ggml_backend_buffer_set_usage(lm_ggml_backend_buffer_t buffer, enum lm_ggml_backend_buffer_usage usage) {
    CHECK_VOID(buffer != NULL, "buffer is NULL");
    buffer->usage = usage;
    if (lm_backend_buffer_is_multi(buffer)) {
        const struct multi_ctx * m = buffer->ctx;
        for (size_t i = 0; i < m->n; i++) lm_ggml_backend_buffer_set_usage(m->bufs[i], usage);
    }
}

enum lm_ggml_backend_buffer_usage lm_ggml_backend_buffer_get_usage(lm_ggml_backend_buffer_t buffer) {
    return buffer != NULL ? buffer->usage : LM_GGML_BACKEND_BUFFER_USAGE_ANY;
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_buffer_get_type(lm_ggml_backend_buffer_t buffer) {
    return buffer != NULL ? buffer->buft : NULL;
}

void lm_ggml_backend_buffer_reset(lm_ggml_backend_buffer_t buffer) {
    if (buffer != NULL && buffer->ops->reset != NULL) buffer->ops->reset(buffer);
}

// ---------------------------------------------------------------- multi-buffers

// The part that holds t (tensors of a multi-buffer point at their part, but
// the tensor functions may still be handed the whole).
static lm_ggml_backend_buffer_t multi_part(lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * t) {
    const struct multi_ctx * m = buf->ctx;
    const uintptr_t p = (uintptr_t) t->data;
    for (size_t i = 0; i < m->n; i++) {
        const uintptr_t base = (uintptr_t) lm_ggml_backend_buffer_get_base(m->bufs[i]);
        if (p >= base && p - base < m->bufs[i]->size) return m->bufs[i];
    }
    lm_backend_fail("tensor '%s' is in none of the parts of its multi-buffer", t->name);
    return NULL;
}

static void multi_free(lm_ggml_backend_buffer_t buf) {
    struct multi_ctx * m = buf->ctx;
    for (size_t i = 0; i < m->n; i++) lm_ggml_backend_buffer_free(m->bufs[i]);
    free(m->bufs);
    free(m);
}

static void * multi_base(lm_ggml_backend_buffer_t buf) {
    const struct multi_ctx * m = buf->ctx;
    return m->n > 0 ? lm_ggml_backend_buffer_get_base(m->bufs[0]) : NULL;
}

static bool multi_memset(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t, uint8_t v, size_t off, size_t size) {
    lm_ggml_backend_buffer_t p = multi_part(buf, t);
    return p != NULL && p->ops->memset_tensor != NULL && p->ops->memset_tensor(p, t, v, off, size);
}

static bool multi_set(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t, const void * data, size_t off, size_t size) {
    lm_ggml_backend_buffer_t p = multi_part(buf, t);
    return p != NULL && p->ops->set_tensor(p, t, data, off, size);
}

static bool multi_get(lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * t, void * data, size_t off, size_t size) {
    lm_ggml_backend_buffer_t p = multi_part(buf, t);
    return p != NULL && p->ops->get_tensor(p, t, data, off, size);
}

static bool multi_clear(lm_ggml_backend_buffer_t buf, uint8_t value) {
    const struct multi_ctx * m = buf->ctx;
    for (size_t i = 0; i < m->n; i++) {
        if (m->bufs[i]->size > 0 && (m->bufs[i]->ops->clear == NULL || !m->bufs[i]->ops->clear(m->bufs[i], value))) {
            return lm_backend_fail("cannot clear part %zu of a multi-buffer", i);
        }
    }
    return true;
}

static void multi_reset(lm_ggml_backend_buffer_t buf) {
    const struct multi_ctx * m = buf->ctx;
    for (size_t i = 0; i < m->n; i++) lm_ggml_backend_buffer_reset(m->bufs[i]);
}

static const struct lm_backend_buffer_ops multi_ops = {
    .free          = multi_free,
    .base          = multi_base,
    .memset_tensor = multi_memset,
    .set_tensor    = multi_set,
    .get_tensor    = multi_get,
    .clear         = multi_clear,
    .reset         = multi_reset,
};

lm_ggml_backend_buffer_t lm_backend_multi_buffer_new(lm_ggml_backend_buffer_t * bufs, size_t n) {
    if (bufs == NULL || n == 0) {
        lm_backend_fail("a multi-buffer needs at least one buffer");
        return NULL;
    }
    struct multi_ctx * m = calloc(1, sizeof(*m));
    lm_ggml_backend_buffer_t * copy = malloc(n * sizeof(*copy));
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += bufs[i] != NULL ? bufs[i]->size : 0;
    lm_ggml_backend_buffer_t buf = m != NULL && copy != NULL ? lm_backend_buffer_new(bufs[0]->buft, &multi_ops, m, total) : NULL;
    if (buf == NULL) {
        free(m);
        free(copy);
        lm_backend_fail("out of memory");
        return NULL;
    }
    memcpy(copy, bufs, n * sizeof(*copy));
    m->bufs = copy;
    m->n = n;
    return buf;
}

bool lm_backend_buffer_is_multi(lm_ggml_backend_buffer_t buf) {
    return buf != NULL && buf->ops == &multi_ops;
}

size_t lm_backend_multi_buffer_parts(lm_ggml_backend_buffer_t buf, lm_ggml_backend_buffer_t * out, size_t cap) {
    if (!lm_backend_buffer_is_multi(buf)) return 0;
    const struct multi_ctx * m = buf->ctx;
    for (size_t i = 0; i < m->n && i < cap; i++) out[i] = m->bufs[i];
    return m->n;
}

// ---------------------------------------------------------------- tensor access

// Host memory with no buffer (a tensor of an allocating context).
static bool host_set(struct lm_ggml_tensor * t, const void * data, size_t offset, size_t size) {
    memcpy((char *) t->data + offset, data, size);
    return true;
}

static bool host_get(const struct lm_ggml_tensor * t, void * data, size_t offset, size_t size) {
    memcpy(data, (const char *) t->data + offset, size);
    return true;
}

// The forms with a bool result, shared by the public functions and the copies.
static bool tensor_set(struct lm_ggml_tensor * t, const void * data, size_t offset, size_t size) {
    if (!tensor_access_ok(t, offset, size, "write")) return false;
    if (size == 0) return true;
    if (data == NULL) return lm_backend_fail("write of tensor '%s': data is NULL", t->name);
    lm_ggml_backend_buffer_t buf = tensor_buffer(t);
    if (buf == NULL) return host_set(t, data, offset, size);
    return buf->ops->set_tensor(buf, t, data, offset, size);
}

static bool tensor_get(const struct lm_ggml_tensor * t, void * data, size_t offset, size_t size) {
    if (!tensor_access_ok(t, offset, size, "read")) return false;
    if (size == 0) return true;
    if (data == NULL) return lm_backend_fail("read of tensor '%s': data is NULL", t->name);
    lm_ggml_backend_buffer_t buf = tensor_buffer(t);
    if (buf == NULL) return host_get(t, data, offset, size);
    return buf->ops->get_tensor(buf, t, data, offset, size);
}

void lm_ggml_backend_tensor_set(struct lm_ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    lm_backend_clear_error();
    if (!tensor_set(tensor, data, offset, size)) FATAL(__func__);
}

void lm_ggml_backend_tensor_get(const struct lm_ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    lm_backend_clear_error();
    if (!tensor_get(tensor, data, offset, size)) FATAL(__func__);
}

void lm_ggml_backend_tensor_memset(struct lm_ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    lm_backend_clear_error();
    if (!tensor_access_ok(tensor, offset, size, "memset")) FATAL(__func__);
    if (size == 0) return;
    lm_ggml_backend_buffer_t buf = tensor_buffer(tensor);
    if (buf == NULL) {
        memset((char *) tensor->data + offset, value, size);
        return;
    }
    CHECK_VOID(buf->ops->memset_tensor != NULL, "buffer '%s' cannot memset tensors", lm_ggml_backend_buffer_name(buf));
    if (!buf->ops->memset_tensor(buf, tensor, value, offset, size)) FATAL(__func__);
}

static bool same_layout(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b) {
    if (a->type != b->type) return false;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) return false;
    }
    return true;
}

static bool tensor_copy(struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst) {
    if (src == NULL || dst == NULL) return lm_backend_fail("copy: src or dst is NULL");
    if (!same_layout(src, dst)) {
        return lm_backend_fail("copy: '%s' and '%s' have different layouts", src->name, dst->name);
    }
    if (src == dst) return true;
    if (!tensor_placed_ok(src) || !tensor_placed_ok(dst)) return false;
    const size_t n = lm_ggml_nbytes(src);
    if (n == 0) return true;
    if (lm_backend_tensor_is_host(src)) return tensor_set(dst, src->data, 0, n);
    if (lm_backend_tensor_is_host(dst)) return tensor_get(src, dst->data, 0, n);
    lm_ggml_backend_buffer_t dbuf = tensor_buffer(dst);
    if (dbuf->ops->cpy_tensor != NULL) {
        bool done = false;
        if (!dbuf->ops->cpy_tensor(dbuf, src, dst, &done)) return false;
        if (done) return true;
    }
    // neither side is host memory and the buffers cannot copy directly
    void * tmp = malloc(n);
    if (tmp == NULL) return lm_backend_fail("copy: out of memory (%zu bytes)", n);
    const bool ok = tensor_get(src, tmp, 0, n) && tensor_set(dst, tmp, 0, n);
    free(tmp);
    return ok;
}

void lm_ggml_backend_tensor_copy(struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst) {
    lm_backend_clear_error();
    if (!tensor_copy(src, dst)) FATAL(__func__);
}

// ---------------------------------------------------------------- backends

lm_ggml_guid_t lm_ggml_backend_guid(lm_ggml_backend_t backend) {
    return backend != NULL ? backend->guid : NULL;
}

const char * lm_ggml_backend_name(lm_ggml_backend_t backend) {
    if (backend == NULL) return "NULL";
    return backend->ops->name(backend);
}

void lm_ggml_backend_free(lm_ggml_backend_t backend) {
    if (backend == NULL) return;
    backend->ops->free(backend);
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_get_default_buffer_type(lm_ggml_backend_t backend) {
    LM_BACKEND_CHECK_RET(backend != NULL, NULL, "backend is NULL");
    return lm_ggml_backend_dev_buffer_type(backend->device);
}

lm_ggml_backend_buffer_t lm_ggml_backend_alloc_buffer(lm_ggml_backend_t backend, size_t size) {
    LM_BACKEND_CHECK_RET(backend != NULL, NULL, "backend is NULL");
    return lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_get_default_buffer_type(backend), size);
}

size_t lm_ggml_backend_get_alignment(lm_ggml_backend_t backend) {
    LM_BACKEND_CHECK_RET(backend != NULL, 0, "backend is NULL");
    return lm_ggml_backend_buft_get_alignment(lm_ggml_backend_get_default_buffer_type(backend));
}

size_t lm_ggml_backend_get_max_size(lm_ggml_backend_t backend) {
    LM_BACKEND_CHECK_RET(backend != NULL, 0, "backend is NULL");
    return lm_ggml_backend_buft_get_max_size(lm_ggml_backend_get_default_buffer_type(backend));
}

void lm_ggml_backend_tensor_set_async(lm_ggml_backend_t backend, struct lm_ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    CHECK_VOID(backend != NULL, "backend is NULL");
    lm_backend_clear_error();
    if (backend->ops->set_tensor_async == NULL) {
        if (!tensor_set(tensor, data, offset, size)) FATAL(__func__);
        return;
    }
    if (!tensor_access_ok(tensor, offset, size, "write")) FATAL(__func__);
    if (size == 0) return;
    CHECK_VOID(data != NULL, "data is NULL");
    if (!backend->ops->set_tensor_async(backend, tensor, data, offset, size)) FATAL(__func__);
}

void lm_ggml_backend_tensor_get_async(lm_ggml_backend_t backend, const struct lm_ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    CHECK_VOID(backend != NULL, "backend is NULL");
    lm_backend_clear_error();
    if (backend->ops->get_tensor_async == NULL) {
        if (!tensor_get(tensor, data, offset, size)) FATAL(__func__);
        return;
    }
    if (!tensor_access_ok(tensor, offset, size, "read")) FATAL(__func__);
    if (size == 0) return;
    CHECK_VOID(data != NULL, "data is NULL");
    if (!backend->ops->get_tensor_async(backend, tensor, data, offset, size)) FATAL(__func__);
}

void lm_ggml_backend_synchronize(lm_ggml_backend_t backend) {
    CHECK_VOID(backend != NULL, "backend is NULL");
    if (backend->ops->synchronize == NULL) return;
    lm_backend_clear_error();
    if (!backend->ops->synchronize(backend)) FATAL(__func__);
}

lm_ggml_backend_graph_plan_t lm_ggml_backend_graph_plan_create(lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph) {
    LM_BACKEND_CHECK_RET(backend != NULL && cgraph != NULL, NULL, "backend or graph is NULL");
    LM_BACKEND_CHECK_RET(backend->ops->plan_create != NULL, NULL, "backend %s has no graph plans", lm_ggml_backend_name(backend));
    lm_backend_clear_error();
    lm_ggml_backend_graph_plan_t plan = backend->ops->plan_create(backend, cgraph);
    if (plan == NULL) lm_backend_report(__func__);
    return plan;
}

void lm_ggml_backend_graph_plan_free(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan) {
    if (backend == NULL || plan == NULL) return;
    CHECK_VOID(backend->ops->plan_free != NULL, "backend %s has no graph plans", lm_ggml_backend_name(backend));
    backend->ops->plan_free(backend, plan);
}

enum lm_ggml_status lm_ggml_backend_graph_plan_compute(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t plan) {
    LM_BACKEND_CHECK_RET(backend != NULL && plan != NULL, LM_GGML_STATUS_FAILED, "backend or plan is NULL");
    LM_BACKEND_CHECK_RET(backend->ops->plan_compute != NULL, LM_GGML_STATUS_FAILED, "backend %s has no graph plans", lm_ggml_backend_name(backend));
    return backend->ops->plan_compute(backend, plan);
}

enum lm_ggml_status lm_ggml_backend_graph_compute_async(lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph) {
    LM_BACKEND_CHECK_RET(backend != NULL && cgraph != NULL, LM_GGML_STATUS_FAILED, "backend or graph is NULL");
    return backend->ops->graph_compute(backend, cgraph);
}

enum lm_ggml_status lm_ggml_backend_graph_compute(lm_ggml_backend_t backend, struct lm_ggml_cgraph * cgraph) {
    const enum lm_ggml_status st = lm_ggml_backend_graph_compute_async(backend, cgraph);
    if (st != LM_GGML_STATUS_SUCCESS || backend->ops->synchronize == NULL) return st;
    lm_backend_clear_error();
    if (!backend->ops->synchronize(backend)) {
        lm_backend_report(__func__);
        return LM_GGML_STATUS_FAILED;
    }
    return st;
}

bool lm_ggml_backend_supports_op(lm_ggml_backend_t backend, const struct lm_ggml_tensor * op) {
    return backend != NULL && lm_ggml_backend_dev_supports_op(backend->device, op);
}

bool lm_ggml_backend_supports_buft(lm_ggml_backend_t backend, lm_ggml_backend_buffer_type_t buft) {
    return backend != NULL && lm_ggml_backend_dev_supports_buft(backend->device, buft);
}

bool lm_ggml_backend_offload_op(lm_ggml_backend_t backend, const struct lm_ggml_tensor * op) {
    return backend != NULL && lm_ggml_backend_dev_offload_op(backend->device, op);
}

void lm_ggml_backend_tensor_copy_async(lm_ggml_backend_t backend_src, lm_ggml_backend_t backend_dst,
                                       struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst) {
    CHECK_VOID(backend_src != NULL && backend_dst != NULL, "backend is NULL");
    CHECK_VOID(src != NULL && dst != NULL, "src or dst is NULL");
    CHECK_VOID(same_layout(src, dst), "copy: '%s' and '%s' have different layouts", src->name, dst->name);
    if (src == dst) return;
    lm_backend_clear_error();
    if (backend_dst->ops->cpy_tensor_async != NULL) {
        if (!tensor_placed_ok(src) || !tensor_placed_ok(dst)) FATAL(__func__);
        bool done = false;
        if (!backend_dst->ops->cpy_tensor_async(backend_src, backend_dst, src, dst, &done)) FATAL(__func__);
        if (done) return;
    }
    // as if queued: after what both backends have pending
    lm_ggml_backend_synchronize(backend_src);
    lm_ggml_backend_synchronize(backend_dst);
    if (!tensor_copy(src, dst)) FATAL(__func__);
}

lm_ggml_backend_dev_t lm_ggml_backend_get_device(lm_ggml_backend_t backend) {
    return backend != NULL ? backend->device : NULL;
}

// ---------------------------------------------------------------- events

lm_ggml_backend_event_t lm_ggml_backend_event_new(lm_ggml_backend_dev_t device) {
    if (device == NULL || device->ops->event_new == NULL) return NULL;
    return device->ops->event_new(device);
}

void lm_ggml_backend_event_free(lm_ggml_backend_event_t event) {
    if (event == NULL) return;
    event->device->ops->event_free(event->device, event);
}

void lm_ggml_backend_event_record(lm_ggml_backend_event_t event, lm_ggml_backend_t backend) {
    CHECK_VOID(event != NULL && backend != NULL, "event or backend is NULL");
    CHECK_VOID(backend->ops->event_record != NULL, "backend %s has no events", lm_ggml_backend_name(backend));
    lm_backend_clear_error();
    if (!backend->ops->event_record(backend, event)) FATAL(__func__);
}

void lm_ggml_backend_event_synchronize(lm_ggml_backend_event_t event) {
    CHECK_VOID(event != NULL, "event is NULL");
    lm_backend_clear_error();
    if (!event->device->ops->event_synchronize(event->device, event)) FATAL(__func__);
}

void lm_ggml_backend_event_wait(lm_ggml_backend_t backend, lm_ggml_backend_event_t event) {
    CHECK_VOID(event != NULL && backend != NULL, "event or backend is NULL");
    CHECK_VOID(backend->ops->event_wait != NULL, "backend %s has no events", lm_ggml_backend_name(backend));
    lm_backend_clear_error();
    if (!backend->ops->event_wait(backend, event)) FATAL(__func__);
}

// ---------------------------------------------------------------- devices

const char * lm_ggml_backend_dev_name(lm_ggml_backend_dev_t device) {
    return device != NULL ? device->ops->name(device) : "NULL";
}

const char * lm_ggml_backend_dev_description(lm_ggml_backend_dev_t device) {
    return device != NULL ? device->ops->description(device) : "NULL";
}

void lm_ggml_backend_dev_memory(lm_ggml_backend_dev_t device, size_t * free_mem, size_t * total_mem) {
    size_t f = 0, t = 0;
    if (device != NULL) device->ops->memory(device, &f, &t);
    if (free_mem != NULL) *free_mem = f;
    if (total_mem != NULL) *total_mem = t;
}

enum lm_ggml_backend_dev_type lm_ggml_backend_dev_type(lm_ggml_backend_dev_t device) {
    return device != NULL ? device->ops->type(device) : LM_GGML_BACKEND_DEVICE_TYPE_CPU;
}

void lm_ggml_backend_dev_get_props(lm_ggml_backend_dev_t device, struct lm_ggml_backend_dev_props * props) {
    if (props == NULL) return;
    memset(props, 0, sizeof(*props));
    if (device == NULL) return;
    if (device->ops->props != NULL) {
        device->ops->props(device, props);
        return;
    }
    props->name = lm_ggml_backend_dev_name(device);
    props->description = lm_ggml_backend_dev_description(device);
    lm_ggml_backend_dev_memory(device, &props->memory_free, &props->memory_total);
    props->type = lm_ggml_backend_dev_type(device);
    props->caps.host_buffer = device->ops->host_buffer_type != NULL;
    props->caps.buffer_from_host_ptr = device->ops->buffer_from_host_ptr != NULL;
    props->caps.events = device->ops->event_new != NULL;
}

lm_ggml_backend_reg_t lm_ggml_backend_dev_backend_reg(lm_ggml_backend_dev_t device) {
    return device != NULL ? device->reg : NULL;
}

lm_ggml_backend_t lm_ggml_backend_dev_init(lm_ggml_backend_dev_t device, const char * params) {
    LM_BACKEND_CHECK_RET(device != NULL, NULL, "device is NULL");
    lm_backend_clear_error();
    lm_ggml_backend_t b = device->ops->init_backend(device, params);
    if (b == NULL) lm_backend_report(__func__);
    return b;
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_dev_buffer_type(lm_ggml_backend_dev_t device) {
    LM_BACKEND_CHECK_RET(device != NULL, NULL, "device is NULL");
    return device->ops->buffer_type(device);
}

lm_ggml_backend_buffer_type_t lm_ggml_backend_dev_host_buffer_type(lm_ggml_backend_dev_t device) {
    if (device == NULL || device->ops->host_buffer_type == NULL) return NULL;
    return device->ops->host_buffer_type(device);
}

lm_ggml_backend_buffer_t lm_ggml_backend_dev_buffer_from_host_ptr(lm_ggml_backend_dev_t device, void * ptr, size_t size, size_t max_tensor_size) {
    LM_BACKEND_CHECK_RET(device != NULL, NULL, "device is NULL");
    LM_BACKEND_CHECK_RET(device->ops->buffer_from_host_ptr != NULL, NULL, "device %s cannot wrap host memory", lm_ggml_backend_dev_name(device));
    lm_backend_clear_error();
    lm_ggml_backend_buffer_t b = device->ops->buffer_from_host_ptr(device, ptr, size, max_tensor_size);
    if (b == NULL) lm_backend_report(__func__);
    return b;
}

bool lm_ggml_backend_dev_supports_op(lm_ggml_backend_dev_t device, const struct lm_ggml_tensor * op) {
    return device != NULL && op != NULL && device->ops->supports_op(device, op);
}

bool lm_ggml_backend_dev_supports_buft(lm_ggml_backend_dev_t device, lm_ggml_backend_buffer_type_t buft) {
    return device != NULL && buft != NULL && device->ops->supports_buft(device, buft);
}

bool lm_ggml_backend_dev_offload_op(lm_ggml_backend_dev_t device, const struct lm_ggml_tensor * op) {
    return device != NULL && op != NULL && device->ops->offload_op != NULL && device->ops->offload_op(device, op);
}

// ---------------------------------------------------------------- registries

const char * lm_ggml_backend_reg_name(lm_ggml_backend_reg_t reg) {
    return reg != NULL ? reg->ops->name(reg) : "NULL";
}

size_t lm_ggml_backend_reg_dev_count(lm_ggml_backend_reg_t reg) {
    return reg != NULL ? reg->ops->dev_count(reg) : 0;
}

lm_ggml_backend_dev_t lm_ggml_backend_reg_dev_get(lm_ggml_backend_reg_t reg, size_t index) {
    LM_BACKEND_CHECK_RET(reg != NULL, NULL, "registry is NULL");
    LM_BACKEND_CHECK_RET(index < lm_ggml_backend_reg_dev_count(reg), NULL, "device index %zu out of range (registry %s has %zu)",
              index, lm_ggml_backend_reg_name(reg), lm_ggml_backend_reg_dev_count(reg));
    return reg->ops->dev_get(reg, index);
}

void * lm_ggml_backend_reg_get_proc_address(lm_ggml_backend_reg_t reg, const char * name) {
    if (reg == NULL || name == NULL || reg->ops->proc_address == NULL) return NULL;
    return reg->ops->proc_address(reg, name);
}

// ---------------------------------------------------------------- tensor data of graphs
// (ggml.h functions that write tensor data: a tensor in a buffer may live in
// another process, so they go through its buffer.)

struct lm_ggml_tensor * lm_ggml_set_zero(struct lm_ggml_tensor * tensor) {
    if (lm_ggml_is_empty(tensor)) {
        return tensor;
    }
    if (tensor->buffer != NULL) {
        // backend memory may not be this process's: through the backend, as ggml does
        lm_ggml_backend_tensor_memset(tensor, 0, 0, lm_ggml_nbytes(tensor));
    } else if (tensor->data != NULL) {
        memset(tensor->data, 0, lm_ggml_nbytes(tensor));
    }
    return tensor;
}

void lm_ggml_graph_reset(struct lm_ggml_cgraph * cgraph) {
    lm_backend_clear_error();
    if (cgraph == NULL) {
        return;
    }
    LM_GGML_ASSERT(cgraph->grads != NULL && "graph_reset: the graph has no gradients");

    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct lm_ggml_tensor * node = cgraph->nodes[i];

        if (node->op == LM_GGML_OP_OPT_STEP_ADAMW) {
            // a fresh start of the optimizer: clear the moments
            lm_ggml_set_zero(node->src[2]);
            lm_ggml_set_zero(node->src[3]);
        }

        struct lm_ggml_tensor * acc = lm_ggml_graph_get_grad_acc(cgraph, node);
        if (acc == NULL) {
            continue;
        }
        if (acc->data == NULL) {
            // never placed (an earlier call that would have allocated it
            // failed): nothing to reset, and computing the graph fails on it
            lm_backend_fail("graph_reset: the gradient accumulator '%s' has no memory (allocate the graph first)", acc->name);
            lm_backend_report(__func__);
            continue;
        }
        if (node->flags & LM_GGML_TENSOR_FLAG_LOSS) {
            // d loss / d loss = 1 seeds the backward pass
            LM_GGML_ASSERT(acc->type == LM_GGML_TYPE_F32 && lm_ggml_is_scalar(acc) && "graph_reset: the loss must be an f32 scalar");
            const float one = 1.0f;
            if (acc->buffer != NULL) {
                lm_ggml_backend_tensor_set(acc, &one, 0, sizeof(one)); // backend memory: through the backend
            } else {
                *(float *) acc->data = one;
            }
        } else {
            lm_ggml_set_zero(acc);
        }
    }
}

// ---------------------------------------------------------------- tensor placement

void lm_ggml_backend_tensor_alloc(lm_ggml_backend_buffer_t buffer, struct lm_ggml_tensor * tensor, void * addr) {
    CHECK_VOID(buffer != NULL && tensor != NULL, "buffer or tensor is NULL");
    CHECK_VOID(tensor->buffer == NULL && tensor->data == NULL && tensor->view_src == NULL,
               "tensor '%s' is already allocated or is a view", tensor->name);
    const uintptr_t base = (uintptr_t) lm_ggml_backend_buffer_get_base(buffer);
    const uintptr_t p = (uintptr_t) addr;
    const size_t need = lm_ggml_backend_buffer_get_alloc_size(buffer, tensor);
    CHECK_VOID(addr != NULL && p >= base && p - base <= buffer->size && need <= buffer->size - (p - base),
               "address for tensor '%s' (%zu bytes) is outside buffer '%s' (%zu bytes)",
               tensor->name, need, lm_ggml_backend_buffer_name(buffer), buffer->size);
    tensor->buffer = buffer;
    tensor->data = addr;
    lm_ggml_backend_buffer_init_tensor(buffer, tensor);
}

void lm_ggml_backend_view_init(struct lm_ggml_tensor * tensor) {
    CHECK_VOID(tensor != NULL, "tensor is NULL");
    CHECK_VOID(tensor->buffer == NULL, "view '%s' is already initialized", tensor->name);
    CHECK_VOID(tensor->view_src != NULL, "tensor '%s' is not a view", tensor->name);
    CHECK_VOID(tensor->view_src->buffer != NULL && tensor->view_src->data != NULL,
               "the source of view '%s' is not allocated in a buffer", tensor->name);
    tensor->buffer = tensor->view_src->buffer;
    tensor->data = (char *) tensor->view_src->data + tensor->view_offs;
    lm_ggml_backend_buffer_init_tensor(tensor->buffer, tensor);
}
