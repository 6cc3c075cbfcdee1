// test-backend.c - ggml-backend.h over the CPU backend: the registry and the
// CPU device, buffer types and buffers, tensor access with its range checks,
// copies (host, through the host, between a host and a non-host buffer),
// multi-buffers, the backend (compute, plans, abort, supports_op) and the
// error paths (NULL arguments, bad sizes: errors, never a crash).
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-backend.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "test-check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- a non-host buffer type
//
// Memory the "device" keeps to itself: tensor data are offsets into it
// (base is a fake address), so only the buffer ops may touch it.

#define FAKE_BASE ((uintptr_t) 0x100000)

struct fake_buf { uint8_t * mem; int sets, gets, cpys; };

static uint8_t * fake_ptr(lm_ggml_backend_buffer_t b, const struct lm_ggml_tensor * t, size_t off) {
    struct fake_buf * fb = b->ctx;
    return fb->mem + ((uintptr_t) t->data - FAKE_BASE) + off;
}
static void fake_free(lm_ggml_backend_buffer_t b) { struct fake_buf * fb = b->ctx; free(fb->mem); free(fb); }
static void * fake_base(lm_ggml_backend_buffer_t b) { (void) b; return (void *) FAKE_BASE; }
static bool fake_memset(lm_ggml_backend_buffer_t b, struct lm_ggml_tensor * t, uint8_t v, size_t off, size_t n) {
    memset(fake_ptr(b, t, off), v, n); return true;
}
static bool fake_set(lm_ggml_backend_buffer_t b, struct lm_ggml_tensor * t, const void * d, size_t off, size_t n) {
    ((struct fake_buf *) b->ctx)->sets++; memcpy(fake_ptr(b, t, off), d, n); return true;
}
static bool fake_get(lm_ggml_backend_buffer_t b, const struct lm_ggml_tensor * t, void * d, size_t off, size_t n) {
    ((struct fake_buf *) b->ctx)->gets++; memcpy(d, fake_ptr(b, t, off), n); return true;
}
static bool fake_cpy(lm_ggml_backend_buffer_t b, const struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst, bool * done) {
    ((struct fake_buf *) b->ctx)->cpys++;
    *done = false; // "cannot do this pair": the caller goes through the host
    (void) src; (void) dst;
    return true;
}
static bool fake_clear(lm_ggml_backend_buffer_t b, uint8_t v) {
    memset(((struct fake_buf *) b->ctx)->mem, v, b->size); return true;
}
static const struct lm_backend_buffer_ops fake_buffer_ops = {
    .free = fake_free, .base = fake_base, .memset_tensor = fake_memset, .set_tensor = fake_set,
    .get_tensor = fake_get, .cpy_tensor = fake_cpy, .clear = fake_clear,
};
static const char * fake_name(lm_ggml_backend_buffer_type_t bt) { (void) bt; return "FAKE"; }
static lm_ggml_backend_buffer_t fake_alloc(lm_ggml_backend_buffer_type_t bt, size_t size) {
    struct fake_buf * fb = calloc(1, sizeof(*fb));
    fb->mem = calloc(1, size);
    return lm_backend_buffer_new(bt, &fake_buffer_ops, fb, size);
}
static size_t fake_alignment(lm_ggml_backend_buffer_type_t bt) { (void) bt; return 32; }
static size_t fake_max(lm_ggml_backend_buffer_type_t bt) { (void) bt; return 4096; }
static const struct lm_backend_buft_ops fake_buft_ops = {
    .name = fake_name, .alloc = fake_alloc, .alignment = fake_alignment, .max_size = fake_max,
};
static struct lm_ggml_backend_buffer_type fake_buft = { &fake_buft_ops, NULL, NULL };

// ---------------------------------------------------------------- registry and device

static void test_registry(void) {
    check(lm_ggml_backend_reg_count() >= 1, "one registry at least");
    lm_ggml_backend_reg_t reg = lm_ggml_backend_reg_by_name("cpu");
    check(reg != NULL && reg == lm_ggml_backend_cpu_reg(), "reg_by_name is case-insensitive");
    check(strcmp(lm_ggml_backend_reg_name(reg), "CPU") == 0, "CPU registry name");
    check(lm_ggml_backend_reg_by_name("no such") == NULL && lm_ggml_backend_reg_by_name(NULL) == NULL, "unknown registry");
    check(lm_ggml_backend_reg_get(0) != NULL, "reg_get(0)");
    check(lm_ggml_backend_reg_get(1000) == NULL, "reg_get out of range is NULL");
    check(lm_ggml_backend_reg_dev_count(reg) == 1, "CPU registry has one device");
    check(lm_ggml_backend_reg_dev_get(reg, 1) == NULL, "reg_dev_get out of range");

    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("CPU");
    check(dev != NULL && dev == lm_ggml_backend_reg_dev_get(reg, 0), "dev_by_name");
    check(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU) == dev, "dev_by_type");
    check(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_GPU) == NULL, "no GPU");
    check(lm_ggml_backend_dev_get(lm_ggml_backend_dev_count()) == NULL, "dev_get out of range");
    check(lm_ggml_backend_dev_backend_reg(dev) == reg, "device's registry");

    struct lm_ggml_backend_dev_props props;
    lm_ggml_backend_dev_get_props(dev, &props);
    check(strcmp(props.name, "CPU") == 0 && props.description != NULL && props.description[0] != '\0', "props name/description");
    check(props.memory_total > 0 && props.memory_free <= props.memory_total, "props memory");
    check(props.type == LM_GGML_BACKEND_DEVICE_TYPE_CPU && props.caps.buffer_from_host_ptr && !props.caps.async, "props type and caps");
    size_t fr = 1, tot = 0;
    lm_ggml_backend_dev_memory(dev, &fr, &tot);
    check(tot == props.memory_total, "dev_memory");
    lm_ggml_backend_dev_memory(dev, NULL, NULL); // NULL outputs are fine
    check(lm_ggml_backend_dev_buffer_type(dev) == lm_ggml_backend_cpu_buffer_type(), "device buffer type");
    check(lm_ggml_backend_dev_host_buffer_type(dev) == NULL, "no separate host buffer type");
    check(lm_ggml_backend_event_new(dev) == NULL, "no events on the CPU");
    check(lm_ggml_backend_dev_supports_buft(dev, lm_ggml_backend_cpu_buffer_type()), "supports host buft");
    check(!lm_ggml_backend_dev_supports_buft(dev, &fake_buft), "does not support a non-host buft");

    // proc addresses
    lm_ggml_backend_set_n_threads_t set_n = (lm_ggml_backend_set_n_threads_t) lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_set_n_threads");
    lm_ggml_backend_dev_get_extra_bufts_t extra = (lm_ggml_backend_dev_get_extra_bufts_t) lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_dev_get_extra_bufts");
    lm_ggml_backend_get_features_t feats = (lm_ggml_backend_get_features_t) lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_get_features");
    check(set_n != NULL && extra != NULL && feats != NULL &&
          lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_set_abort_callback") != NULL, "proc addresses");
    check(lm_ggml_backend_reg_get_proc_address(reg, "nope") == NULL && lm_ggml_backend_reg_get_proc_address(reg, NULL) == NULL,
          "unknown proc address");
    check(extra != NULL && extra(dev)[0] == lm_ggml_backend_cpu_aarch64_buffer_type() && extra(dev)[1] == NULL,
          "one extra buffer type: CPU_REPACK");
    bool level = false;
    int n = 0;
    for (struct lm_ggml_backend_feature * f = feats(reg); f->name != NULL; f++, n++) level |= strcmp(f->name, "KERNEL_LEVEL") == 0;
    check(level && n >= 1, "features list the kernel level");

    // init by name / type / best
    lm_ggml_backend_t b1 = lm_ggml_backend_init_by_name("cpu", NULL);
    lm_ggml_backend_t b2 = lm_ggml_backend_init_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    lm_ggml_backend_t b3 = lm_ggml_backend_init_best();
    check(lm_ggml_backend_is_cpu(b1) && lm_ggml_backend_is_cpu(b2) && lm_ggml_backend_is_cpu(b3), "init by name/type/best");
    check(lm_ggml_backend_init_by_name("GPU0", NULL) == NULL, "init of an unknown device");
    set_n(b1, 3);
    lm_ggml_backend_free(b1); lm_ggml_backend_free(b2); lm_ggml_backend_free(b3);

    // load / unload / load_all
    check(lm_ggml_backend_load("libggml-cuda.so") == NULL, "load is not available");
    const size_t nr = lm_ggml_backend_reg_count(), nd = lm_ggml_backend_dev_count();
    lm_ggml_backend_unload(reg);
    check(lm_ggml_backend_reg_count() == nr - 1 && lm_ggml_backend_dev_count() == nd - 1 &&
          lm_ggml_backend_dev_by_name("CPU") == NULL, "unload removes the registry and its device");
    lm_ggml_backend_load_all();
    check(lm_ggml_backend_reg_count() == nr && lm_ggml_backend_dev_count() == nd, "load_all registers the CPU again");
    lm_backend_register(reg);
    check(lm_ggml_backend_reg_count() == nr, "registering twice is a no-op");

    // NULL everywhere
    check(strcmp(lm_ggml_backend_dev_name(NULL), "NULL") == 0 && strcmp(lm_ggml_backend_reg_name(NULL), "NULL") == 0 &&
          lm_ggml_backend_dev_init(NULL, NULL) == NULL && lm_ggml_backend_reg_dev_count(NULL) == 0 &&
          !lm_ggml_backend_dev_supports_op(NULL, NULL) && lm_ggml_backend_dev_buffer_type(NULL) == NULL,
          "NULL devices and registries");
    lm_ggml_backend_dev_get_props(NULL, NULL);
}

// ---------------------------------------------------------------- buffers

static struct lm_ggml_context * noalloc_ctx(void) {
    struct lm_ggml_init_params p = { 64 * lm_ggml_tensor_overhead(), NULL, true };
    return lm_ggml_init(p);
}

static void test_buffers(void) {
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_cpu_buffer_type();
    const size_t align = lm_ggml_backend_buft_get_alignment(buft);
    check(strcmp(lm_ggml_backend_buft_name(buft), "CPU") == 0, "buft name");
    check(align >= 32 && (align & (align - 1)) == 0, "alignment is a power of two >= 32");
    check(lm_ggml_backend_buft_get_max_size(buft) == SIZE_MAX && lm_ggml_backend_buft_is_host(buft), "max size, host");
    check(lm_ggml_backend_buft_get_device(buft) == lm_ggml_backend_dev_by_name("CPU"), "buft device");

    lm_ggml_backend_buffer_t z = lm_ggml_backend_buft_alloc_buffer(buft, 0);
    check(z != NULL && lm_ggml_backend_buffer_get_size(z) == 0 && lm_ggml_backend_buffer_get_base(z) == NULL, "zero-sized buffer");
    lm_ggml_backend_buffer_clear(z, 1);
    lm_ggml_backend_buffer_free(z);
    check(lm_ggml_backend_buft_alloc_buffer(buft, SIZE_MAX) == NULL, "an impossible size fails");
    check(lm_ggml_backend_buft_alloc_buffer(NULL, 16) == NULL, "NULL buffer type");
    check(lm_ggml_backend_buft_alloc_buffer(&fake_buft, 5000) == NULL, "beyond the type's max size");

    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(buft, 1000);
    check(b != NULL && lm_ggml_backend_buffer_get_size(b) == 1000 && ((uintptr_t) lm_ggml_backend_buffer_get_base(b) % align) == 0,
          "buffer size and aligned base");
    check(lm_ggml_backend_buffer_is_host(b) && lm_ggml_backend_buffer_get_type(b) == buft &&
          strcmp(lm_ggml_backend_buffer_name(b), "CPU") == 0, "buffer is host, type, name");
    check(lm_ggml_backend_buffer_get_usage(b) == LM_GGML_BACKEND_BUFFER_USAGE_ANY, "usage any");
    lm_ggml_backend_buffer_set_usage(b, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    check(lm_ggml_backend_buffer_get_usage(b) == LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "usage weights");
    lm_ggml_backend_buffer_clear(b, 0xab);
    const uint8_t * base = lm_ggml_backend_buffer_get_base(b);
    check(base[0] == 0xab && base[999] == 0xab, "clear");
    lm_ggml_backend_buffer_reset(b);
    lm_ggml_backend_buffer_free(b);
    lm_ggml_backend_buffer_free(NULL);

    check(lm_ggml_backend_buffer_get_size(NULL) == 0 && lm_ggml_backend_buffer_get_base(NULL) == NULL &&
          !lm_ggml_backend_buffer_is_host(NULL) && lm_ggml_backend_buffer_get_type(NULL) == NULL, "NULL buffer queries");
    EXPECT_ABORT("clear NULL buffer", "NULL", lm_ggml_backend_buffer_clear(NULL, 0));
    EXPECT_ABORT("set_usage NULL buffer", "NULL", lm_ggml_backend_buffer_set_usage(NULL, LM_GGML_BACKEND_BUFFER_USAGE_ANY));
}

static void test_tensor_access(void) {
    struct lm_ggml_context * ctx = noalloc_ctx();
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 16);
    struct lm_ggml_tensor * m = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 4, 4);
    struct lm_ggml_tensor * v = lm_ggml_view_1d(ctx, a, 4, 8 * sizeof(float)); // made before a has memory
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, lm_ggml_backend_cpu_buffer_type());
    struct lm_ggml_context * ctx2 = noalloc_ctx();
    struct lm_ggml_tensor * none = lm_ggml_new_tensor_1d(ctx2, LM_GGML_TYPE_F32, 4);
    check(buf != NULL && a->buffer == buf && v->buffer == buf && v->data == (char *) a->data + 32, "alloc_ctx_tensors and the view");

    float x[16], y[16];
    for (int i = 0; i < 16; i++) x[i] = (float) i;
    lm_ggml_backend_tensor_set(a, x, 0, sizeof(x));
    lm_ggml_backend_tensor_get(v, y, 0, 4 * sizeof(float));
    check(y[0] == 8 && y[3] == 11, "set and read back through a view");
    lm_ggml_backend_tensor_set(a, x, 4 * sizeof(float), 2 * sizeof(float));
    lm_ggml_backend_tensor_get(a, y, 0, sizeof(y));
    check(y[4] == 0 && y[5] == 1 && y[6] == 6, "set at an offset");
    lm_ggml_backend_tensor_memset(a, 0, 0, 8);
    lm_ggml_backend_tensor_get(a, y, 0, 8);
    check(y[0] == 0 && y[1] == 0, "memset");
    lm_ggml_backend_tensor_set(a, NULL, 3, 0); // size 0: nothing

    // range checks
    EXPECT_ABORT("write past the end", "out of bounds", lm_ggml_backend_tensor_set(a, x, 4, sizeof(x)));
    EXPECT_ABORT("read past the end", "out of bounds", lm_ggml_backend_tensor_get(a, y, 64, 1));
    EXPECT_ABORT("offset overflow", "out of bounds", lm_ggml_backend_tensor_get(a, y, SIZE_MAX, 2));
    EXPECT_ABORT("size overflow", "out of bounds", lm_ggml_backend_tensor_set(a, x, 8, SIZE_MAX - 4));
    EXPECT_ABORT("memset past the end", "out of bounds", lm_ggml_backend_tensor_memset(m, 0, 60, 8));
    EXPECT_ABORT("NULL tensor", "NULL", lm_ggml_backend_tensor_set(NULL, x, 0, 4));
    EXPECT_ABORT("NULL data", "NULL", lm_ggml_backend_tensor_get(a, NULL, 0, 4));
    EXPECT_ABORT("tensor without data", "no data", lm_ggml_backend_tensor_set(none, x, 0, 4));
    void * saved = m->data;
    m->data = (char *) lm_ggml_backend_buffer_get_base(buf) + lm_ggml_backend_buffer_get_size(buf) - 8;
    EXPECT_ABORT("tensor sticking out of its buffer", "outside its buffer", lm_ggml_backend_tensor_set(m, x, 0, 4));
    m->data = saved;
    EXPECT_ABORT("tensor_alloc of an allocated tensor", "already", lm_ggml_backend_tensor_alloc(buf, a, a->data));
    EXPECT_ABORT("tensor_alloc outside the buffer", "outside", lm_ggml_backend_tensor_alloc(buf, none, (char *) a->data + 1000000));
    EXPECT_ABORT("view_init of a non-view", "not a view", lm_ggml_backend_view_init(none));

    // a tensor of an allocating context (host memory, no buffer)
    struct lm_ggml_init_params p = { 1 << 16, NULL, false };
    struct lm_ggml_context * hc = lm_ggml_init(p);
    struct lm_ggml_tensor * h = lm_ggml_new_tensor_1d(hc, LM_GGML_TYPE_F32, 16);
    lm_ggml_backend_tensor_set(h, x, 0, sizeof(x));
    check(((float *) h->data)[15] == 15, "set into context memory");
    EXPECT_ABORT("context tensor range", "out of bounds", lm_ggml_backend_tensor_set(h, x, 8, sizeof(x)));

    // copies: host <-> host, with a layout check
    lm_ggml_backend_tensor_copy(h, a);
    lm_ggml_backend_tensor_get(a, y, 0, sizeof(y));
    check(memcmp(x, y, sizeof(x)) == 0, "copy from context memory into a buffer");
    EXPECT_ABORT("copy of different layouts", "layouts", lm_ggml_backend_tensor_copy(a, m));
    lm_ggml_backend_tensor_copy(a, a);

    // a non-host buffer: set/get through its ops, copies in both directions and between two of them
    struct lm_ggml_context * fctx = noalloc_ctx();
    struct lm_ggml_tensor * f1 = lm_ggml_new_tensor_1d(fctx, LM_GGML_TYPE_F32, 16);
    struct lm_ggml_tensor * f2 = lm_ggml_new_tensor_1d(fctx, LM_GGML_TYPE_F32, 16);
    lm_ggml_backend_buffer_t fb = lm_ggml_backend_alloc_ctx_tensors_from_buft(fctx, &fake_buft);
    check(fb != NULL && !lm_ggml_backend_buffer_is_host(fb) && (uintptr_t) f1->data >= FAKE_BASE, "non-host buffer");
    lm_ggml_backend_tensor_copy(a, f1);              // host -> device: set
    lm_ggml_backend_tensor_copy(f1, f2);             // device -> device: cpy_tensor says no, through the host
    memset(y, 0, sizeof(y));
    lm_ggml_backend_tensor_get(f2, y, 0, sizeof(y));
    check(memcmp(x, y, sizeof(x)) == 0, "copy device -> device through the host");
    check(((struct fake_buf *) fb->ctx)->cpys == 1, "the buffer was asked to copy first");
    lm_ggml_backend_tensor_memset(a, 0, 0, sizeof(x));
    lm_ggml_backend_tensor_copy(f2, a);              // device -> host: get
    lm_ggml_backend_tensor_get(a, y, 0, sizeof(y));
    check(memcmp(x, y, sizeof(x)) == 0, "copy device -> host");
    lm_ggml_backend_buffer_clear(fb, 0);
    lm_ggml_backend_tensor_get(f1, y, 0, 4);
    check(y[0] == 0, "clear of a non-host buffer");

    // the CPU backend must refuse to compute on non-host data
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    struct lm_ggml_tensor * s = lm_ggml_scale(fctx, f1, 2.0f);
    check(!lm_ggml_backend_supports_op(be, s), "no CPU op on non-host sources");
    lm_ggml_backend_free(be);

    lm_ggml_backend_buffer_free(fb);
    lm_ggml_free(fctx);
    lm_ggml_free(hc);
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_free(ctx);
    lm_ggml_free(ctx2);
}

static void test_from_ptr_and_tallocr(void) {
    float * mem = aligned_alloc(64, 1024);
    lm_ggml_backend_buffer_t b = lm_ggml_backend_cpu_buffer_from_ptr(mem, 1024);
    check(b != NULL && lm_ggml_backend_buffer_get_base(b) == mem && lm_ggml_backend_buffer_is_host(b), "buffer over host memory");
    check(strcmp(lm_ggml_backend_buffer_name(b), "CPU_Mapped") == 0, "mapped buffer name");
    struct lm_ggml_context * ctx = noalloc_ctx();
    struct lm_ggml_tensor * t1 = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 3);
    struct lm_ggml_tensor * t2 = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 100);
    struct lm_ggml_tensor * t3 = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 200);
    struct lm_ggml_tallocr ta = lm_ggml_tallocr_new(b);
    lm_ggml_tallocr_alloc(&ta, t1);
    lm_ggml_tallocr_alloc(&ta, t2);
    check(t1->data == (void *) mem && (char *) t2->data == (char *) mem + 32, "tallocr places aligned (32, as the reference), in order");
    const float v[3] = { 1, 2, 3 };
    lm_ggml_backend_tensor_set(t1, v, 0, sizeof(v));
    check(mem[2] == 3, "set lands in the caller's memory");
    EXPECT_ABORT("tallocr out of space", "not enough space", lm_ggml_tallocr_alloc(&ta, t3));
    lm_ggml_backend_buffer_free(b); // does not free mem
    mem[0] = 7;
    free(mem);
    check(lm_ggml_backend_cpu_buffer_from_ptr(NULL, 16) == NULL, "from_ptr(NULL)");
    struct lm_ggml_tallocr bad = lm_ggml_tallocr_new(NULL);
    EXPECT_ABORT("tallocr without a buffer", "NULL", lm_ggml_tallocr_alloc(&bad, t3));
    lm_ggml_free(ctx);
}

static void test_multi_buffer(void) {
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_cpu_buffer_type();
    lm_ggml_backend_buffer_t parts[2] = { lm_ggml_backend_buft_alloc_buffer(buft, 128), lm_ggml_backend_buft_alloc_buffer(buft, 256) };
    lm_ggml_backend_buffer_t mb = lm_backend_multi_buffer_new(parts, 2);
    check(mb != NULL && lm_backend_buffer_is_multi(mb) && !lm_backend_buffer_is_multi(parts[0]), "multi-buffer");
    check(lm_ggml_backend_buffer_get_size(mb) == 384, "multi-buffer size is the sum");
    lm_ggml_backend_buffer_set_usage(mb, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    check(lm_ggml_backend_buffer_get_usage(parts[1]) == LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "usage reaches the parts");
    lm_ggml_backend_buffer_clear(mb, 0x5a);
    check(((uint8_t *) lm_ggml_backend_buffer_get_base(parts[1]))[255] == 0x5a, "clear reaches the parts");
    lm_ggml_backend_buffer_free(mb); // frees the parts (ASan would see a leak or a double free)
    check(lm_backend_multi_buffer_new(NULL, 0) == NULL, "empty multi-buffer");
}

// ---------------------------------------------------------------- the backend

static bool abort_after_first(void * data) {
    int * n = data;
    return ++*n >= 1;
}

static void test_backend(void) {
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    check(be != NULL && lm_ggml_backend_is_cpu(be) && strcmp(lm_ggml_backend_name(be), "CPU") == 0, "CPU backend");
    check(!lm_ggml_backend_is_cpu(NULL) && strcmp(lm_ggml_backend_name(NULL), "NULL") == 0, "NULL backend queries");
    check(lm_ggml_guid_matches(lm_ggml_backend_guid(be), lm_ggml_backend_guid(be)) && lm_ggml_backend_guid(NULL) == NULL, "guid");
    check(lm_ggml_backend_get_default_buffer_type(be) == lm_ggml_backend_cpu_buffer_type(), "default buffer type");
    check(lm_ggml_backend_get_alignment(be) >= 32 && lm_ggml_backend_get_max_size(be) == SIZE_MAX, "alignment, max size");
    check(lm_ggml_backend_get_device(be) == lm_ggml_backend_dev_by_name("CPU"), "device");
    check(lm_ggml_backend_supports_buft(be, lm_ggml_backend_cpu_buffer_type()) && !lm_ggml_backend_supports_buft(be, NULL), "supports_buft");
    EXPECT_ABORT("0 threads", "invalid number of threads", lm_ggml_backend_cpu_set_n_threads(be, 0));
    EXPECT_ABORT("set_n_threads on NULL", "not a CPU backend", lm_ggml_backend_cpu_set_n_threads(NULL, 2));
    EXPECT_ABORT("synchronize NULL", "NULL", lm_ggml_backend_synchronize(NULL));
    lm_ggml_backend_synchronize(be);

    struct lm_ggml_init_params p = { 128 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), NULL, true };
    struct lm_ggml_context * ctx = lm_ggml_init(p);
    struct lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 64, 32);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 64, 8);
    struct lm_ggml_tensor * y = lm_ggml_soft_max(ctx, lm_ggml_mul_mat(ctx, w, x));
    struct lm_ggml_tensor * bad = lm_ggml_cpy(ctx, lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F16, 256),
                                              lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_IQ2_XXS, 256));
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, y);

    check(lm_ggml_backend_supports_op(be, y) && lm_ggml_backend_supports_op(be, y->src[0]), "supports softmax and mul_mat");
    check(!lm_ggml_backend_supports_op(be, bad), "cpy f16 -> iq2_xxs is not supported (no quantizer without imatrix)");
    check(!lm_ggml_backend_supports_op(NULL, y) && !lm_ggml_backend_offload_op(be, y), "supports_op(NULL), offload_op");

    // nodes made other than by the constructors (as a remote peer could send
    // them): supports_op looks at the types the kernels handle
    struct lm_ggml_tensor * q = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_Q4_0, 64);
    struct lm_ggml_tensor * i = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 64);
    struct lm_ggml_tensor * f = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 64);
    struct lm_ggml_tensor * sq = lm_ggml_sqr(ctx, f);
    struct lm_ggml_tensor * ad = lm_ggml_add(ctx, f, f);
    struct lm_ggml_tensor * sm = lm_ggml_soft_max_ext(ctx, lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 8),
                                                      lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 8), 1.0f, 0.0f);
    struct lm_ggml_tensor * un = lm_ggml_relu(ctx, f);
    check(lm_ggml_backend_supports_op(be, sq) && lm_ggml_backend_supports_op(be, ad) && lm_ggml_backend_supports_op(be, sm) &&
          lm_ggml_backend_supports_op(be, un), "well-formed nodes are supported");
    sq->src[0] = q;
    ad->src[1] = i;
    sm->src[1] = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 4); // a mask with too few rows
    lm_ggml_set_op_params_i32(un, 0, 1000);                         // no such unary op
    check(!lm_ggml_backend_supports_op(be, sq), "sqr of q4_0 is not supported");
    check(!lm_ggml_backend_supports_op(be, ad), "add of an i32 operand is not supported");
    check(!lm_ggml_backend_supports_op(be, sm), "soft_max with a short mask is not supported");
    check(!lm_ggml_backend_supports_op(be, un), "an unknown unary op is not supported");

    // computing before the tensors have memory fails cleanly
    check(lm_ggml_backend_graph_compute(be, gf) == LM_GGML_STATUS_FAILED, "compute of an unallocated graph fails");

    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors(ctx, be);
    check(buf != NULL, "alloc_ctx_tensors");
    float wv[64 * 32], xv[64 * 8];
    for (int i = 0; i < 64 * 32; i++) wv[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
    for (int i = 0; i < 64 * 8; i++) xv[i] = (float)((i * 11) % 13) / 13.0f - 0.5f;
    lm_ggml_backend_tensor_set(w, wv, 0, sizeof(wv));
    lm_ggml_backend_tensor_set_async(be, x, xv, 0, sizeof(xv));
    lm_ggml_backend_synchronize(be);

    float r1[32 * 8], r2[32 * 8], r3[32 * 8];
    lm_ggml_backend_cpu_set_n_threads(be, 1);
    check(lm_ggml_backend_graph_compute(be, gf) == LM_GGML_STATUS_SUCCESS, "compute (1 thread)");
    lm_ggml_backend_tensor_get(y, r1, 0, sizeof(r1));
    lm_ggml_backend_cpu_set_n_threads(be, 3);
    check(lm_ggml_backend_graph_compute_async(be, gf) == LM_GGML_STATUS_SUCCESS, "compute (3 threads)");
    lm_ggml_backend_tensor_get_async(be, y, r2, 0, sizeof(r2));
    check(memcmp(r1, r2, sizeof(r1)) == 0, "1 and 3 threads agree");
    float sum = 0;
    for (int i = 0; i < 32; i++) sum += r1[i];
    check(sum > 0.999f && sum < 1.001f, "a softmax column sums to 1");

    lm_ggml_backend_graph_plan_t plan = lm_ggml_backend_graph_plan_create(be, gf);
    check(plan != NULL, "plan");
    memset(r3, 0, sizeof(r3));
    lm_ggml_backend_tensor_memset(y, 0, 0, lm_ggml_nbytes(y));
    check(lm_ggml_backend_graph_plan_compute(be, plan) == LM_GGML_STATUS_SUCCESS, "plan compute");
    lm_ggml_backend_tensor_get(y, r3, 0, sizeof(r3));
    check(memcmp(r1, r3, sizeof(r1)) == 0, "plan result");
    lm_ggml_backend_graph_plan_free(be, plan);
    check(lm_ggml_backend_graph_plan_compute(be, NULL) == LM_GGML_STATUS_FAILED, "plan_compute(NULL)");

    // a thread pool of the caller's
    struct lm_ggml_threadpool_params tpp = lm_ggml_threadpool_params_default(2);
    struct lm_ggml_threadpool * tp = lm_ggml_threadpool_new(&tpp);
    lm_ggml_backend_cpu_set_threadpool(be, tp);
    check(lm_ggml_backend_graph_compute(be, gf) == LM_GGML_STATUS_SUCCESS, "compute on the caller's pool");
    lm_ggml_backend_tensor_get(y, r3, 0, sizeof(r3));
    check(memcmp(r1, r3, sizeof(r1)) == 0, "pool result");
    lm_ggml_backend_cpu_set_threadpool(be, NULL);
    lm_ggml_threadpool_free(tp);

    // abort callback: stops after the first node
    int calls = 0;
    lm_ggml_backend_cpu_set_abort_callback(be, abort_after_first, &calls);
    check(lm_ggml_backend_graph_compute(be, gf) == LM_GGML_STATUS_ABORTED && calls == 1, "abort callback");
    lm_ggml_backend_cpu_set_abort_callback(be, NULL, NULL);

    // a graph whose nodes are all no-ops, many times on the backend's pool (workers must not outlive the job)
    struct lm_ggml_tensor * r = lm_ggml_reshape_2d(ctx, x, 32, 16);
    for (int i = 0; i < 200; i++) {
        struct lm_ggml_cgraph view = lm_ggml_graph_view(gf, 0, 0);
        view.nodes = &r;
        view.n_nodes = 1;
        lm_ggml_backend_graph_compute(be, &view);
    }
    check(true, "no-op graphs");

    // copy_async between two backends (synchronous here)
    lm_ggml_backend_t be2 = lm_ggml_backend_cpu_init();
    struct lm_ggml_tensor * y2 = lm_ggml_dup_tensor(ctx, y);
    struct lm_ggml_tallocr ta = lm_ggml_tallocr_new(lm_ggml_backend_alloc_buffer(be2, lm_ggml_nbytes(y2)));
    lm_ggml_tallocr_alloc(&ta, y2);
    lm_ggml_backend_tensor_copy_async(be, be2, y, y2);
    lm_ggml_backend_tensor_get(y2, r3, 0, sizeof(r3));
    check(memcmp(r1, r3, sizeof(r1)) == 0, "copy_async");
    lm_ggml_backend_buffer_free(ta.buffer);
    lm_ggml_backend_free(be2);

    EXPECT_ABORT("event_record without events", "no events", lm_ggml_backend_event_record((lm_ggml_backend_event_t) &calls, be));
    check(lm_ggml_backend_graph_compute(NULL, gf) == LM_GGML_STATUS_FAILED && lm_ggml_backend_graph_compute(be, NULL) == LM_GGML_STATUS_FAILED,
          "compute with NULL");

    lm_ggml_backend_buffer_free(buf);
    lm_ggml_free(ctx);
    lm_ggml_backend_free(be);
    lm_ggml_backend_free(NULL);
}

// lm_ggml_graph_compute refuses graphs with nodes or sources that have no data.
static void test_graph_compute_refuses(void) {
    struct lm_ggml_init_params p = { 32 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), NULL, true };
    struct lm_ggml_context * ctx = lm_ggml_init(p);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
    struct lm_ggml_tensor * b = lm_ggml_add(ctx, a, a);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, b);
    struct lm_ggml_cplan cp = lm_ggml_graph_plan(gf, 2, NULL);
    check(lm_ggml_graph_compute(gf, &cp) == LM_GGML_STATUS_FAILED, "graph_compute of unallocated tensors fails");
    float mem[8] = { 0 };
    b->data = mem;
    check(lm_ggml_graph_compute(gf, &cp) == LM_GGML_STATUS_FAILED, "a source without data fails");
    a->data = mem;
    check(lm_ggml_graph_compute(gf, &cp) == LM_GGML_STATUS_SUCCESS, "with data it computes");
    lm_ggml_free(ctx);
}

static void test_errors(void) {
    lm_backend_clear_error();
    check(lm_backend_last_error()[0] == '\0', "no error");
    check(!lm_backend_fail("bad %d", 7) && strcmp(lm_backend_last_error(), "bad 7") == 0, "lm_backend_fail records");
    lm_backend_clear_error();
    struct lm_ggml_tensor t;
    memset(&t, 0, sizeof(t));
    t.type = LM_GGML_TYPE_F32;
    t.ne[0] = 4; t.ne[1] = t.ne[2] = t.ne[3] = 1;
    t.nb[0] = 4; t.nb[1] = t.nb[2] = t.nb[3] = 16;
    check(lm_backend_tensor_range_ok(&t, 0, 16) && lm_backend_tensor_range_ok(&t, 16, 0) && !lm_backend_tensor_range_ok(&t, 1, 16) &&
          !lm_backend_tensor_range_ok(&t, SIZE_MAX, 1) && !lm_backend_tensor_range_ok(NULL, 0, 0), "range_ok");
}

int main(void) {
    lm_ggml_log_set(quiet_log, NULL); // expected errors are logged; keep the output short
    test_registry();
    test_buffers();
    test_tensor_access();
    test_from_ptr_and_tallocr();
    test_multi_buffer();
    test_backend();
    test_graph_compute_refuses();
    test_errors();
    return check_summary();
}
