// host-buffer.c - lm_backend_host_buffer_alloc: the memory of the CPU's
// buffer types (ggml-backend-cpu.c's and CPU_REPACK's, repack.c), below both.
#include "../backend/ggml-backend-impl.h"

// Host buffers are aligned for the widest SIMD loads (and cache lines).
#define CPU_BUFFER_ALIGNMENT 64

lm_ggml_backend_buffer_t lm_backend_host_buffer_alloc(lm_ggml_backend_buffer_type_t buft,
                                                      const struct lm_backend_buffer_ops * ops, size_t size) {
    // rounded up so that a tensor ending the buffer can be read a SIMD register at a time
    const size_t padded = (size + CPU_BUFFER_ALIGNMENT - 1) & ~(size_t)(CPU_BUFFER_ALIGNMENT - 1);
    void * mem = NULL;
    // weights and KV caches stream through mat-vec: big buffers get huge pages
    if (padded < size || lm_big_alloc(&mem, padded) != 0) {
        lm_backend_fail("cannot allocate a %s buffer of %zu bytes", lm_ggml_backend_buft_name(buft), size);
        return NULL;
    }
    lm_ggml_backend_buffer_t buf = lm_backend_buffer_new(buft, ops, mem, size);
    if (buf == NULL) {
        lm_big_free(mem);
        lm_backend_fail("out of memory");
    }
    return buf;
}
