// ggml-backend-cpu.c - the CPU backend over the compute engine of ggml-cpu.c:
// host buffer types (aligned memory, or memory the caller owns), the CPU
// backend (threads, thread pool, abort callback, plans, a work buffer kept
// across computes), the CPU device and the CPU registry.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../backend/ggml-backend-impl.h"
#include "ggml-cpu-impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <windows.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#endif

// Tensors in CPU buffers are 32-byte aligned, as in ggml (GGUF only
// guarantees 32 for mapped data); the kernels load unaligned. Same
// alignment, same offsets: gallocr's buffers are no larger than ggml's on
// the same graph.
#define CPU_TENSOR_ALIGNMENT 32

static struct lm_ggml_backend_device g_cpu_device; // defined with the registry below

// ---------------------------------------------------------------- host buffers

// ctx is the first byte of the memory.
static void * host_base(lm_ggml_backend_buffer_t buf) { return buf->ctx; }

static void host_free(lm_ggml_backend_buffer_t buf) { lm_big_free(buf->ctx); }

static bool host_memset(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t, uint8_t value, size_t offset, size_t size) {
    (void) buf;
    memset((char *) t->data + offset, value, size);
    return true;
}

static bool host_set(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t, const void * data, size_t offset, size_t size) {
    (void) buf;
    memcpy((char *) t->data + offset, data, size);
    return true;
}

static bool host_get(lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * t, void * data, size_t offset, size_t size) {
    (void) buf;
    memcpy(data, (const char *) t->data + offset, size);
    return true;
}

static bool host_cpy(lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst, bool * done) {
    (void) buf;
    *done = lm_backend_tensor_is_host(src);
    if (*done) memcpy(dst->data, src->data, lm_ggml_nbytes(src));
    return true;
}

static bool host_clear(lm_ggml_backend_buffer_t buf, uint8_t value) {
    memset(buf->ctx, value, buf->size);
    return true;
}

static const struct lm_backend_buffer_ops host_buffer_ops = {
    .free = host_free, .base = host_base,
    .memset_tensor = host_memset, .set_tensor = host_set, .get_tensor = host_get,
    .cpy_tensor = host_cpy, .clear = host_clear,
};

// Memory the caller owns: the same, without the free.
static const struct lm_backend_buffer_ops mapped_buffer_ops = {
    .base = host_base,
    .memset_tensor = host_memset, .set_tensor = host_set, .get_tensor = host_get,
    .cpy_tensor = host_cpy, .clear = host_clear,
};

static const char * cpu_buft_name(lm_ggml_backend_buffer_type_t buft) { return buft->ctx; }
static size_t cpu_buft_alignment(lm_ggml_backend_buffer_type_t buft) { (void) buft; return CPU_TENSOR_ALIGNMENT; }
static bool cpu_buft_is_host(lm_ggml_backend_buffer_type_t buft) { (void) buft; return true; }

static lm_ggml_backend_buffer_t cpu_buft_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    return lm_backend_host_buffer_alloc(buft, &host_buffer_ops, size);
}

static const struct lm_backend_buft_ops cpu_buft_ops = {
    .name = cpu_buft_name, .alloc = cpu_buft_alloc, .alignment = cpu_buft_alignment, .is_host = cpu_buft_is_host,
};

static lm_ggml_backend_buffer_t mapped_buft_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    (void) buft;
    return cpu_buft_alloc(lm_ggml_backend_cpu_buffer_type(), size);
}

static const struct lm_backend_buft_ops mapped_buft_ops = {
    .name = cpu_buft_name, .alloc = mapped_buft_alloc, .alignment = cpu_buft_alignment, .is_host = cpu_buft_is_host,
};

static struct lm_ggml_backend_buffer_type g_cpu_buft    = { &cpu_buft_ops,    &g_cpu_device, (void *) "CPU" };
static struct lm_ggml_backend_buffer_type g_mapped_buft = { &mapped_buft_ops, &g_cpu_device, (void *) "CPU_Mapped" };

lm_ggml_backend_buffer_type_t lm_ggml_backend_cpu_buffer_type(void) {
    return &g_cpu_buft;
}

lm_ggml_backend_buffer_t lm_ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    if (ptr == NULL && size > 0) {
        LM_GGML_LOG_ERROR("%s: ptr is NULL\n", __func__);
        return NULL;
    }
    lm_ggml_backend_buffer_t buf = lm_backend_buffer_new(&g_mapped_buft, &mapped_buffer_ops, ptr, size);
    if (buf == NULL) LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
    return buf;
}

// ggml's extra CPU buffer type for repacked weights is ours too:
// CPU_REPACK (repack.c). Its memory is this process's, but a repacked
// tensor's bytes are not its plain bytes, so it is not "host" to others.
extern const struct lm_backend_buft_ops lm_cpu_repack_buft_ops;
static struct lm_ggml_backend_buffer_type g_repack_buft = { &lm_cpu_repack_buft_ops, &g_cpu_device, NULL };

lm_ggml_backend_buffer_type_t lm_ggml_backend_cpu_aarch64_buffer_type(void) {
    return &g_repack_buft;
}

bool lm_ggml_backend_cpu_buft_is_aarch64(lm_ggml_backend_buffer_type_t buft) {
    return buft == &g_repack_buft;
}

// ---------------------------------------------------------------- the backend

struct cpu_backend {
    int n_threads;
    struct lm_ggml_threadpool * user_pool; // set by the caller, not owned
    struct lm_ggml_threadpool * own_pool;  // created on first use for n_threads

    uint8_t * work;       // work buffer of graph_compute; grows, never shrinks
    size_t    work_size;

    lm_ggml_abort_callback abort_cb;
    void *                 abort_data;
};

struct cpu_plan {
    struct lm_ggml_cplan  cplan;
    struct lm_ggml_cgraph cgraph; // the caller's graph (shallow copy: its nodes array)
};

static lm_ggml_guid_t cpu_guid(void) {
    static lm_ggml_guid guid = { 0x4c, 0x4d, 0x2d, 0x43, 0x50, 0x55, 0x2d, 0x62, 0x61, 0x63, 0x6b, 0x65, 0x6e, 0x64, 0x2d, 0x31 };
    return &guid;
}

static const char * cpu_name(lm_ggml_backend_t backend) { (void) backend; return "CPU"; }

// Worker threads of the backends' own pools now alive (Go's collector
// accounting is checked against it).
static atomic_int g_own_workers;

static void own_pool_free(struct cpu_backend * ctx) {
    if (ctx->own_pool == NULL) return;
    atomic_fetch_sub(&g_own_workers, lm_ggml_threadpool_get_n_threads(ctx->own_pool) - 1);
    lm_ggml_threadpool_free(ctx->own_pool);
    ctx->own_pool = NULL;
}

static void cpu_free(lm_ggml_backend_t backend) {
    struct cpu_backend * ctx = backend->ctx;
    own_pool_free(ctx);
    free(ctx->work);
    free(ctx);
    free(backend);
}

// The pool a compute runs on: the caller's, else our own for n_threads
// (threads are kept between computes; NULL = a pool per compute).
static struct lm_ggml_threadpool * cpu_pool(struct cpu_backend * ctx) {
    if (ctx->user_pool != NULL) return ctx->user_pool;
    if (ctx->own_pool != NULL && lm_ggml_threadpool_get_n_threads(ctx->own_pool) != ctx->n_threads) {
        own_pool_free(ctx);
    }
    if (ctx->own_pool == NULL && ctx->n_threads > 1) {
        struct lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(ctx->n_threads);
        ctx->own_pool = lm_ggml_threadpool_new(&p);
        if (ctx->own_pool != NULL) atomic_fetch_add(&g_own_workers, ctx->n_threads - 1);
    }
    return ctx->own_pool;
}

static lm_ggml_backend_graph_plan_t cpu_plan_create(lm_ggml_backend_t backend, const struct lm_ggml_cgraph * g) {
    struct cpu_backend * ctx = backend->ctx;
    struct cpu_plan * plan = calloc(1, sizeof(*plan));
    if (plan == NULL) {
        lm_backend_fail("out of memory");
        return NULL;
    }
    plan->cplan = lm_ggml_graph_plan(g, ctx->n_threads, ctx->user_pool);
    plan->cgraph = *g;
    if (plan->cplan.work_size > 0) {
        plan->cplan.work_data = malloc(plan->cplan.work_size);
        if (plan->cplan.work_data == NULL) {
            lm_backend_fail("cannot allocate a work buffer of %zu bytes", plan->cplan.work_size);
            free(plan);
            return NULL;
        }
    }
    plan->cplan.abort_callback = ctx->abort_cb;
    plan->cplan.abort_callback_data = ctx->abort_data;
    return plan;
}

static void cpu_plan_free(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t p) {
    (void) backend;
    struct cpu_plan * plan = p;
    free(plan->cplan.work_data);
    free(plan);
}

static enum lm_ggml_status cpu_plan_compute(lm_ggml_backend_t backend, lm_ggml_backend_graph_plan_t p) {
    struct cpu_plan * plan = p;
    if (plan->cplan.threadpool == NULL) {
        // the backend's pool if it has the plan's size (the work buffer was sized for it)
        struct lm_ggml_threadpool * tp = cpu_pool(backend->ctx);
        if (tp != NULL && lm_ggml_threadpool_get_n_threads(tp) == plan->cplan.n_threads) {
            struct lm_ggml_cplan cp = plan->cplan;
            cp.threadpool = tp;
            return lm_ggml_graph_compute(&plan->cgraph, &cp);
        }
    }
    return lm_ggml_graph_compute(&plan->cgraph, &plan->cplan);
}

static enum lm_ggml_status cpu_graph_compute(lm_ggml_backend_t backend, struct lm_ggml_cgraph * g) {
    struct cpu_backend * ctx = backend->ctx;
    struct lm_ggml_threadpool * tp = cpu_pool(ctx);
    struct lm_ggml_cplan cplan = lm_ggml_graph_plan(g, ctx->n_threads, tp);
    if (cplan.work_size > ctx->work_size) {
        uint8_t * w = malloc(cplan.work_size);
        if (w == NULL) {
            LM_GGML_LOG_ERROR("%s: cannot allocate a work buffer of %zu bytes\n", __func__, cplan.work_size);
            return LM_GGML_STATUS_ALLOC_FAILED;
        }
        free(ctx->work);
        ctx->work = w;
        ctx->work_size = cplan.work_size;
    }
    cplan.work_data = ctx->work;
    cplan.abort_callback = ctx->abort_cb;
    cplan.abort_callback_data = ctx->abort_data;
    return lm_ggml_graph_compute(g, &cplan);
}

static const struct lm_backend_ops cpu_backend_ops = {
    .name = cpu_name,
    .free = cpu_free,
    .plan_create = cpu_plan_create,
    .plan_free = cpu_plan_free,
    .plan_compute = cpu_plan_compute,
    .graph_compute = cpu_graph_compute,
};

lm_ggml_backend_t lm_ggml_backend_cpu_init(void) {
    lm_ggml_cpu_init();
    struct cpu_backend * ctx = calloc(1, sizeof(*ctx));
    lm_ggml_backend_t backend = calloc(1, sizeof(*backend));
    if (ctx == NULL || backend == NULL) {
        free(ctx);
        free(backend);
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    ctx->n_threads = LM_GGML_DEFAULT_N_THREADS;
    backend->guid = cpu_guid();
    backend->ops = &cpu_backend_ops;
    backend->device = &g_cpu_device;
    backend->ctx = ctx;
    return backend;
}

bool lm_ggml_backend_is_cpu(lm_ggml_backend_t backend) {
    return backend != NULL && lm_ggml_guid_matches(backend->guid, cpu_guid());
}

static struct cpu_backend * cpu_ctx_or_abort(lm_ggml_backend_t backend, const char * func) {
    if (!lm_ggml_backend_is_cpu(backend)) {
        lm_ggml_abort("ggml-backend-cpu.c", __LINE__, "%s: %s is not a CPU backend", func, lm_ggml_backend_name(backend));
    }
    return backend->ctx;
}

void lm_ggml_backend_cpu_set_n_threads(lm_ggml_backend_t backend_cpu, int n_threads) {
    struct cpu_backend * ctx = cpu_ctx_or_abort(backend_cpu, __func__);
    if (n_threads < 1 || n_threads > LM_GGML_MAX_N_THREADS) {
        lm_ggml_abort("ggml-backend-cpu.c", __LINE__, "%s: invalid number of threads %d (1..%d)", __func__, n_threads, LM_GGML_MAX_N_THREADS);
    }
    ctx->n_threads = n_threads;
}

void lm_ggml_backend_cpu_set_threadpool(lm_ggml_backend_t backend_cpu, lm_ggml_threadpool_t threadpool) {
    struct cpu_backend * ctx = cpu_ctx_or_abort(backend_cpu, __func__);
    // The previous pool is left alone (ggml pauses it): it is the
    // caller's and may already be freed, and idle workers sleep anyway.
    ctx->user_pool = threadpool;
    if (threadpool != NULL) own_pool_free(ctx);
}

void lm_backend_cpu_held(lm_ggml_backend_t backend, int * threads, size_t * work) {
    *threads = 0;
    *work = 0;
    if (!lm_ggml_backend_is_cpu(backend)) return;
    const struct cpu_backend * ctx = backend->ctx;
    *threads = ctx->own_pool != NULL ? lm_ggml_threadpool_get_n_threads(ctx->own_pool) - 1 : 0;
    *work = ctx->work_size;
}

int lm_backend_cpu_own_workers(void) { return atomic_load(&g_own_workers); }

void lm_ggml_backend_cpu_set_abort_callback(lm_ggml_backend_t backend_cpu, lm_ggml_abort_callback abort_callback, void * abort_callback_data) {
    struct cpu_backend * ctx = cpu_ctx_or_abort(backend_cpu, __func__);
    ctx->abort_cb = abort_callback;
    ctx->abort_data = abort_callback_data;
}

// ---------------------------------------------------------------- the device

static const char * cpu_dev_name(lm_ggml_backend_dev_t dev) { (void) dev; return "CPU"; }

static char g_cpu_description[128] = "CPU";

// The CPU's model name from /proc/cpuinfo where there is one.
static void cpu_description_init(void) {
#if defined(__linux__)
    FILE * f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return;
    char line[256];
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char * v = strchr(line, ':');
        if (v == NULL) break;
        v++;
        while (*v == ' ' || *v == '\t') v++;
        snprintf(g_cpu_description, sizeof(g_cpu_description), "%s", v);
        g_cpu_description[strcspn(g_cpu_description, "\n")] = '\0';
        break;
    }
    fclose(f);
#elif defined(_WIN32) && (defined(__x86_64__) || defined(__i386__))
    // the brand string of CPUID leaves 0x80000002..4, without its padding
    unsigned int r[12] = { 0 };
    if (__get_cpuid_max(0x80000000u, NULL) < 0x80000004u) return;
    for (unsigned int i = 0; i < 3; i++) {
        __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    }
    char brand[sizeof(r) + 1];
    memcpy(brand, r, sizeof(r));
    brand[sizeof(r)] = '\0';
    const char * v = brand;
    while (*v == ' ') v++;
    size_t n = strlen(v);
    while (n > 0 && v[n - 1] == ' ') n--;
    if (n > 0) snprintf(g_cpu_description, sizeof(g_cpu_description), "%.*s", (int) n, v);
#endif
}

static const char * cpu_dev_description(lm_ggml_backend_dev_t dev) {
    (void) dev;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, cpu_description_init);
    return g_cpu_description;
}

static void cpu_dev_memory(lm_ggml_backend_dev_t dev, size_t * free_mem, size_t * total_mem) {
    (void) dev;
#ifdef _WIN32
    MEMORYSTATUSEX ms;
    ms.dwLength = sizeof(ms);
    if (!GlobalMemoryStatusEx(&ms)) {
        *total_mem = *free_mem = 0;
        return;
    }
    *total_mem = (size_t) ms.ullTotalPhys;
    *free_mem  = (size_t) ms.ullAvailPhys;
#else
    const long page = sysconf(_SC_PAGESIZE);
    const long total = sysconf(_SC_PHYS_PAGES);
#if defined(_SC_AVPHYS_PAGES)
    const long avail = sysconf(_SC_AVPHYS_PAGES);
#else
    const long avail = total;
#endif
    *total_mem = page > 0 && total > 0 ? (size_t) page * (size_t) total : 0;
    *free_mem  = page > 0 && avail > 0 ? (size_t) page * (size_t) avail : *total_mem;
#endif
}

static enum lm_ggml_backend_dev_type cpu_dev_type(lm_ggml_backend_dev_t dev) { (void) dev; return LM_GGML_BACKEND_DEVICE_TYPE_CPU; }

static void cpu_dev_props(lm_ggml_backend_dev_t dev, struct lm_ggml_backend_dev_props * props) {
    props->name = cpu_dev_name(dev);
    props->description = cpu_dev_description(dev);
    cpu_dev_memory(dev, &props->memory_free, &props->memory_total);
    props->type = LM_GGML_BACKEND_DEVICE_TYPE_CPU;
    props->caps.async = false;
    props->caps.host_buffer = false;
    props->caps.buffer_from_host_ptr = true;
    props->caps.events = false;
}

static lm_ggml_backend_t cpu_dev_init(lm_ggml_backend_dev_t dev, const char * params) {
    (void) dev; (void) params;
    lm_ggml_backend_t b = lm_ggml_backend_cpu_init();
    if (b == NULL) lm_backend_fail("out of memory");
    return b;
}

static lm_ggml_backend_buffer_type_t cpu_dev_buft(lm_ggml_backend_dev_t dev) { (void) dev; return lm_ggml_backend_cpu_buffer_type(); }

static lm_ggml_backend_buffer_t cpu_dev_from_ptr(lm_ggml_backend_dev_t dev, void * ptr, size_t size, size_t max_tensor_size) {
    (void) dev; (void) max_tensor_size;
    lm_ggml_backend_buffer_t b = lm_ggml_backend_cpu_buffer_from_ptr(ptr, size);
    if (b == NULL) lm_backend_fail("cannot wrap %zu bytes at %p", size, ptr);
    return b;
}

// Only what the engine has kernels for (see lm_cpu_node_supported), with
// every tensor in host memory or in a CPU_REPACK buffer (where a repacked
// tensor is only mul_mat's weights).
static bool cpu_dev_supports_op(lm_ggml_backend_dev_t dev, const struct lm_ggml_tensor * op) {
    (void) dev;
    for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
        const struct lm_ggml_tensor * s = op->src[i];
        if (s == NULL || s->buffer == NULL || lm_ggml_backend_buffer_is_host(s->buffer)) continue;
        if (s->buffer->buft != &g_repack_buft || !lm_cpu_repacked_read_ok(op, i, s)) return false;
    }
    return lm_cpu_node_supported(op);
}

static bool cpu_dev_supports_buft(lm_ggml_backend_dev_t dev, lm_ggml_backend_buffer_type_t buft) {
    (void) dev;
    return lm_ggml_backend_buft_is_host(buft) || buft == &g_repack_buft;
}

static const struct lm_backend_dev_ops cpu_dev_ops = {
    .name = cpu_dev_name,
    .description = cpu_dev_description,
    .memory = cpu_dev_memory,
    .type = cpu_dev_type,
    .props = cpu_dev_props,
    .init_backend = cpu_dev_init,
    .buffer_type = cpu_dev_buft,
    .buffer_from_host_ptr = cpu_dev_from_ptr,
    .supports_op = cpu_dev_supports_op,
    .supports_buft = cpu_dev_supports_buft,
};

// ---------------------------------------------------------------- the registry

static const char * cpu_reg_name(lm_ggml_backend_reg_t reg) { (void) reg; return "CPU"; }
static size_t cpu_reg_dev_count(lm_ggml_backend_reg_t reg) { (void) reg; return 1; }

static lm_ggml_backend_dev_t cpu_reg_dev_get(lm_ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    return index == 0 ? &g_cpu_device : NULL;
}

static lm_ggml_backend_buffer_type_t * cpu_extra_bufts(lm_ggml_backend_dev_t dev) {
    (void) dev;
    static lm_ggml_backend_buffer_type_t extra[] = { &g_repack_buft, NULL };
    return extra;
}

static void cpu_set_n_threads_proc(lm_ggml_backend_t backend, int n_threads) {
    lm_ggml_backend_cpu_set_n_threads(backend, n_threads);
}

#define MAX_FEATURES 32
static struct lm_ggml_backend_feature g_features[MAX_FEATURES + 1];

static void features_init(void) {
    static const struct { const char * name; int (*has)(void); } probes[] = {
        { "SSE3", lm_ggml_cpu_has_sse3 }, { "SSSE3", lm_ggml_cpu_has_ssse3 }, { "AVX", lm_ggml_cpu_has_avx },
        { "AVX_VNNI", lm_ggml_cpu_has_avx_vnni }, { "AVX2", lm_ggml_cpu_has_avx2 }, { "F16C", lm_ggml_cpu_has_f16c },
        { "FMA", lm_ggml_cpu_has_fma }, { "AVX512", lm_ggml_cpu_has_avx512 }, { "AVX512_VBMI", lm_ggml_cpu_has_avx512_vbmi },
        { "AVX512_VNNI", lm_ggml_cpu_has_avx512_vnni }, { "AVX512_BF16", lm_ggml_cpu_has_avx512_bf16 },
        { "AMX_INT8", lm_ggml_cpu_has_amx_int8 }, { "NEON", lm_ggml_cpu_has_neon }, { "ARM_FMA", lm_ggml_cpu_has_arm_fma },
        { "FP16_VA", lm_ggml_cpu_has_fp16_va }, { "DOTPROD", lm_ggml_cpu_has_dotprod },
        { "MATMUL_INT8", lm_ggml_cpu_has_matmul_int8 }, { "SVE", lm_ggml_cpu_has_sve }, { "RISCV_V", lm_ggml_cpu_has_riscv_v },
        { "VSX", lm_ggml_cpu_has_vsx }, { "WASM_SIMD", lm_ggml_cpu_has_wasm_simd }, { "LLAMAFILE", lm_ggml_cpu_has_llamafile },
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]) && n < MAX_FEATURES; i++) {
        if (probes[i].has()) g_features[n++] = (struct lm_ggml_backend_feature) { probes[i].name, "1" };
    }
    static const char * levels[] = { "scalar", "avx2", "avx512", "neon" };
    const int level = (int) lm_cpu_level();
    if (n < MAX_FEATURES && level >= 0 && level < 4) {
        g_features[n++] = (struct lm_ggml_backend_feature) { "KERNEL_LEVEL", levels[level] };
    }
    g_features[n] = (struct lm_ggml_backend_feature) { NULL, NULL };
}

static struct lm_ggml_backend_feature * cpu_get_features(lm_ggml_backend_reg_t reg) {
    (void) reg;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, features_init);
    return g_features;
}

static void * cpu_reg_proc_address(lm_ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    static const struct { const char * name; void * fn; } procs[] = {
        { "lm_ggml_backend_set_n_threads",         (void *) cpu_set_n_threads_proc },
        { "lm_ggml_backend_dev_get_extra_bufts",   (void *) cpu_extra_bufts },
        { "lm_ggml_backend_get_features",          (void *) cpu_get_features },
        { "lm_ggml_backend_set_abort_callback",    (void *) lm_ggml_backend_cpu_set_abort_callback },
    };
    for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
        if (strcmp(name, procs[i].name) == 0) return procs[i].fn;
    }
    return NULL;
}

static const struct lm_backend_reg_ops cpu_reg_ops = {
    .name = cpu_reg_name,
    .dev_count = cpu_reg_dev_count,
    .dev_get = cpu_reg_dev_get,
    .proc_address = cpu_reg_proc_address,
};

static struct lm_ggml_backend_reg g_cpu_reg = { LM_BACKEND_API_VERSION, &cpu_reg_ops, NULL };
static struct lm_ggml_backend_device g_cpu_device = { &cpu_dev_ops, &g_cpu_reg, NULL };

lm_ggml_backend_reg_t lm_ggml_backend_cpu_reg(void) {
    lm_ggml_cpu_init();
    return &g_cpu_reg;
}
