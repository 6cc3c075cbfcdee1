// ggml-cpu.c - the CPU compute engine: thread pool, graph plan and compute,
// run-time CPU feature detection and the element accessors. Below it, the
// kernels (ggml-cpu-kernels.c's table) and what they call back while a job
// runs (the barrier, counters and errors: ggml-cpu-sync.c).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ggml-cpu-pool.h"
#include "../backend/ggml-backend-impl.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <windows.h>
#endif


void lm_ggml_numa_init(enum lm_ggml_numa_strategy numa) { LM_GGML_UNUSED(numa); }
bool lm_ggml_is_numa(void) { return false; }

// ---------------------------------------------------------------- kernels

// The kernels are lm_cpu_kernels (ggml-cpu-kernels.c, generated from the ops
// marked cpu in ggml.h): nothing to fill at run time.

static atomic_bool g_cpu_ready; // set once everything below has run: later calls cost one load

void lm_ggml_cpu_init(void) {
    if (atomic_load_explicit(&g_cpu_ready, memory_order_acquire)) return;
    lm_ggml_fp16_table_init();
    (void) lm_cpu_level(); // detects the CPU once, before any worker asks
    atomic_store_explicit(&g_cpu_ready, true, memory_order_release);
}

// Ops that only reinterpret memory: nothing to compute.
static inline bool op_is_noop(const struct lm_ggml_tensor * node) {
    switch (node->op) {
        case LM_GGML_OP_NONE:
        case LM_GGML_OP_RESHAPE:
        case LM_GGML_OP_VIEW:
        case LM_GGML_OP_PERMUTE:
        case LM_GGML_OP_TRANSPOSE:
            return true;
        default:
            return lm_shape_has_zero(node);
    }
}

bool lm_cpu_node_supported(const struct lm_ggml_tensor * node) {
    if (node == NULL || (int) node->op < 0 || node->op >= LM_GGML_OP_COUNT) return false;
    if (op_is_noop(node)) return true;
    lm_ggml_cpu_init();
    const struct lm_cpu_op * op = lm_cpu_kernels[node->op];
    return op != NULL && op->compute != NULL && (op->supports == NULL || op->supports(node));
}

// ---------------------------------------------------------------- compute errors

// (lm_cpu_error and the error slot: ggml-cpu-sync.c, ggml-cpu-pool.h)

// The memory a node writes belongs to this tensor (the node itself or the
// tensor it is a view of).
static const struct lm_ggml_tensor * data_owner(const struct lm_ggml_tensor * t) {
    return t->view_src != NULL ? t->view_src : t;
}

// The read-only tensor a node would write into, or NULL: its result, and
// for the optimizer step the moments it updates in place.
static const struct lm_ggml_tensor * readonly_target(const struct lm_ggml_tensor * node) {
    const struct lm_ggml_tensor * owner = data_owner(node);
    if (owner->flags & LM_TENSOR_FLAG_READONLY) return owner;
    if (node->op != LM_GGML_OP_OPT_STEP_ADAMW) return NULL;
    for (int j = 2; j <= 3; j++) {
        if (node->src[j] == NULL) continue;
        owner = data_owner(node->src[j]);
        if (owner->flags & LM_TENSOR_FLAG_READONLY) return owner;
    }
    return NULL;
}

// Whether t (the result when src < 0, else operand src) has memory of this
// process; see node_ready. Tensors without elements need none; asking that
// costs four loads, so it is asked only of those that fail the other checks.
static inline bool tensor_ready(const struct lm_ggml_tensor * node, struct lm_ggml_tensor * t, int src,
                                lm_ggml_backend_buffer_t * host, char * msg, size_t n) {
    if (t->data == NULL) {
        if (lm_shape_has_zero(t)) return true;
        if (t->view_src == NULL || t->view_src->data == NULL) {
            if (src < 0) snprintf(msg, n, "the result has no data (not allocated: a tensor of a no-alloc context that no buffer backs)");
            else snprintf(msg, n, "operand %s has no data (not allocated: a tensor of a no-alloc context that no buffer backs)", t->name);
            return false;
        }
        t->data = (char *) t->view_src->data + t->view_offs;
    }
    lm_ggml_backend_buffer_t buf = data_owner(t)->buffer;
    if (buf != NULL && buf != *host && !lm_shape_has_zero(t)) {
        if (!lm_ggml_backend_buffer_is_host(buf)) {
            // CPU_REPACK: this process's memory; its plain tensors are read as any,
            // a repacked one only by mul_mat as its weights (never cached in *host)
            if (lm_cpu_buft_is_repack(buf->buft)) {
                if (lm_cpu_repacked_read_ok(node, src, t)) return true;
                snprintf(msg, n, "%s is stored repacked (a CPU_REPACK buffer): only mul_mat reads it, as its weights, "
                         "not through a view", t->name);
                return false;
            }
            snprintf(msg, n, "tensor %s is in a buffer that is not in host memory", t->name);
            return false;
        }
        *host = buf;
    }
    return true;
}

// Whether node can be computed; if not, why (in msg). A kernel must exist
// for its op and types; every tensor it touches needs memory of this
// process (a view made before its source got memory gets its address now,
// where view_init would put it); nothing it writes may be read-only.
// *host is a buffer already known to be in host memory (graphs use few
// buffers: asking each tensor's buffer type costs an indirect call per source).
enum node_state { NODE_BAD, NODE_NOOP, NODE_COMPUTES };
static enum node_state node_ready(struct lm_ggml_tensor * node, lm_ggml_backend_buffer_t * host, char * msg, size_t n) {
    if (!lm_cpu_node_supported(node)) {
        snprintf(msg, n, "is not supported on the CPU (no kernel for this op and these types)");
        return NODE_BAD;
    }
    if (op_is_noop(node)) return NODE_NOOP;
    if (!tensor_ready(node, node, -1, host, msg, n)) return NODE_BAD;
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        if (node->src[j] != NULL && !tensor_ready(node, node->src[j], j, host, msg, n)) return NODE_BAD;
    }
    const struct lm_ggml_tensor * ro = readonly_target(node);
    if (ro != NULL) {
        snprintf(msg, n, "writes into %s, whose memory is read-only (a mapped file)", ro->name);
        return NODE_BAD;
    }
    return NODE_COMPUTES;
}

// Nodes are checked just before they are computed (by the caller's thread,
// thread 0, while the others wait at the barrier of the node before), when
// they are in the cache anyway: a separate pass over a graph of small nodes
// cost as much as computing it. check_ahead checks the nodes from `from` up
// to and including the next one that computes something; on a bad node it
// returns false with its index in *bad and the reason in why.
static bool check_ahead(struct lm_ggml_tensor ** nodes, int n_nodes, int from, lm_ggml_backend_buffer_t * host,
                        int * bad, char * why, size_t n) {
    for (int j = from; j < n_nodes; j++) {
        const enum node_state st = node_ready(nodes[j], host, why, n);
        if (st == NODE_BAD) {
            *bad = j;
            return false;
        }
        if (st == NODE_COMPUTES) return true;
    }
    return true;
}

// The message of a node that cannot be computed: "OP (node NAME): why", as
// lm_cpu_error words kernel failures.
static void node_error(char * out, size_t n, const struct lm_ggml_tensor * node, const char * why) {
    snprintf(out, n, "%s (node %s): %s", node ? lm_ggml_op_desc(node) : "?", node ? node->name : "?", why);
}

// A bad node found during a job: the job stops after node `at` (the one
// computed last), as for a kernel error. The first error of the job wins.
static void job_fail(struct lm_cpu_error_slot * e, int at, const struct lm_ggml_tensor * node, const char * why) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&e->state, &expected, 1)) return;
    node_error(e->msg, sizeof(e->msg), node, why);
    atomic_store(&e->state, 2);
    stop_job_at(e, at);
}

// ---------------------------------------------------------------- thread pool

// (its state: ggml-cpu-pool.h; the barrier and counters: ggml-cpu-sync.c)

// The CPUs this process may run on: those of its affinity mask where the
// system says (a process started by taskset -c 0 has one, whatever the
// machine has), else the online ones. Asked once per process: glibc answers
// sysconf(_SC_NPROCESSORS_ONLN) by opening and parsing a sysfs file, which
// cost a few microseconds on every pool started.
static int online_cpus(void) {
    static atomic_int cached;
    int n = atomic_load_explicit(&cached, memory_order_relaxed);
    if (n > 0) return n;
    n = 0;
#if defined(__linux__) && defined(CPU_COUNT)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
#endif
#if defined(_WIN32)
    // the process's affinity mask (one processor group), else all processors
    DWORD_PTR mask = 0, system_mask = 0;
    if (GetProcessAffinityMask(GetCurrentProcess(), &mask, &system_mask) && mask != 0) {
        n = __builtin_popcountll((unsigned long long) mask);
    }
    if (n <= 0) n = (int) GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
#endif
#if defined(_SC_NPROCESSORS_ONLN)
    if (n <= 0) {
        const long v = sysconf(_SC_NPROCESSORS_ONLN);
        n = v > 0 ? (int) v : 1;
    }
#endif
    if (n <= 0) n = 1;
    atomic_store_explicit(&cached, n, memory_order_relaxed);
    return n;
}




// Small row-wise nodes ("solo" nodes) run on thread 0 alone when several
// threads compute a graph: split, each share is a fraction of a microsecond,
// less than the barrier after it. The others skip them, and a run of
// consecutive solo nodes ends with one barrier instead of one per node. In a
// one-token llama graph the norms, ropes, KV stores, soft_max and the
// residual adds between the matrix products make such runs, so a token
// takes markedly fewer barriers.
// Only kernels that need no other thread qualify (no barrier or counter
// inside), and only ops whose results do not depend on how the work is split
// (each row, or each element, is computed the same by whichever thread), so
// the bits are those of the split computation.
// A copy counts its destination's lines as well: one whose rows are not
// adjacent (a KV cache's transposed V store: one element a row, each row in
// a line of its own) writes a line per row, which costs far more than its
// element count says.
#define SOLO_MAX_ELEMENTS 4096
#define SOLO_MAX_LINES    64
static bool copy_is_small(const struct lm_ggml_tensor * dst) {
    const int64_t lines = lm_ggml_is_contiguous(dst) ? (int64_t)(lm_ggml_nbytes(dst) / 64) : lm_ggml_nrows(dst);
    return lm_ggml_nelements(dst) <= SOLO_MAX_ELEMENTS && lines <= SOLO_MAX_LINES;
}

bool lm_cpu_node_is_solo(const struct lm_ggml_tensor * node) {
    switch (node->op) {
        case LM_GGML_OP_ADD:
        case LM_GGML_OP_SUB:
        case LM_GGML_OP_MUL:
        case LM_GGML_OP_DIV:
        case LM_GGML_OP_SCALE:
        case LM_GGML_OP_NORM:
        case LM_GGML_OP_RMS_NORM:
        case LM_GGML_OP_ROPE:
        case LM_GGML_OP_SOFT_MAX:
        case LM_GGML_OP_UNARY:
        case LM_GGML_OP_GET_ROWS:
            return lm_ggml_nelements(node) <= SOLO_MAX_ELEMENTS;
        case LM_GGML_OP_CPY:
        case LM_GGML_OP_DUP:
        case LM_GGML_OP_CONT:
            return copy_is_small(node);
        default:
            return false;
    }
}

// Whether the next node that computes after i is solo (all threads agree).
static bool next_is_solo(struct lm_ggml_tensor * const * nodes, int n_nodes, int i) {
    for (int j = i + 1; j < n_nodes; j++) {
        if (!op_is_noop(nodes[j])) return lm_cpu_node_is_solo(nodes[j]);
    }
    return false;
}

static void compute_graph_thread(struct lm_ggml_threadpool * tp, struct lm_ggml_cgraph * cgraph,
                                 struct lm_ggml_cplan * cplan, int ith, unsigned gen) {
    const int nth = atomic_load(&tp->n_threads_cur);
    lm_cpu_set_thread_index(ith);
    struct lm_ggml_compute_params params = {
        .ith = ith, .nth = nth,
        .wsize = cplan->work_size, .wdata = cplan->work_data,
        .threadpool = tp,
        .error = &tp->error,
    };
    // n_nodes is read once: after the last barrier the caller may free the
    // graph's context while this worker is still leaving the loop.
    const int n_nodes = cgraph->n_nodes;
    struct lm_ggml_tensor ** nodes = cgraph->nodes;
    const lm_ggml_abort_callback abort_cb = cplan->abort_callback;
    void * const abort_data = cplan->abort_callback_data;
    lm_ggml_backend_buffer_t host = NULL; // see node_ready
    char why[320];
    for (int i = 0; i < n_nodes; i++) {
        struct lm_ggml_tensor * node = nodes[i];
        if (op_is_noop(node)) continue;
        const bool solo = nth > 1 && lm_cpu_node_is_solo(node);
        // Inside a run of solo nodes thread 0 meets no barrier: it stops
        // computing once the job stops at an earlier node, and leaves at the
        // run's barrier with the others (see struct lm_cpu_error_slot).
        const bool run = !solo || ith == 0;
        if (run && (!solo || atomic_load_explicit(&tp->error.stop_node, memory_order_relaxed) >= i)) {
            params.node = node;
            params.node_index = i;
            params.ith = solo ? 0 : ith;
            params.nth = solo ? 1 : nth;
            lm_cpu_kernels[node->op]->compute(&params, node);
            params.ith = ith;
            params.nth = nth;
            if (ith == 0) {
                if (abort_cb != NULL && abort_cb(abort_data)) {
                    atomic_store(&tp->abort_gen, gen);
                    stop_job_at(&tp->error, i);
                }
                int bad;
                if (!check_ahead(nodes, n_nodes, i + 1, &host, &bad, why, sizeof(why))) {
                    job_fail(&tp->error, i, nodes[bad], why);
                }
            }
        }
        if (solo && next_is_solo(nodes, n_nodes, i)) continue; // the run goes on
        if (nth > 1) lm_ggml_barrier(tp);
        else reset_counters(tp);
        if (atomic_load_explicit(&tp->error.stop_node, memory_order_relaxed) <= i) break; // see struct lm_cpu_error_slot
    }
    // Nobody leaves before everyone has read the job: with a graph of no-op
    // nodes (no barrier above) the caller could otherwise return, and free
    // or reuse the graph, while a late worker is about to read it.
    if (nth > 1) lm_ggml_barrier(tp);
}

void lm_cpu_threadpool_idle(struct lm_ggml_threadpool * tp, int * sleeping, unsigned * wakeups) {
    *sleeping = atomic_load(&tp->idle_sleeping);
    *wakeups = atomic_load(&tp->idle_wakeups);
}

static void * worker_main(void * arg) {
    void ** a = arg;
    struct lm_ggml_threadpool * tp = a[0];
    const int ith = (int)(intptr_t) a[1];
    free(arg);
#if defined(__APPLE__)
    (void) pthread_setname_np("ggml-worker"); // see lm_ggml_threadpool_new
#endif

    unsigned seen = 0;
    bool took_part = true; // in the last job: only then may the next follow at once
    for (;;) {
        // Wait for a new job (or stop), polling a little first. A worker
        // left out of the last job (a pool whose plan asked for fewer threads
        // than it has) goes straight to sleep; so does everyone when the job's
        // threads outnumber the CPUs.
        const int active = atomic_load(&tp->n_threads_cur);
        const uint32_t spins = took_part && active <= tp->n_cpus ? tp->params.poll * 64 : 0;
        uint32_t i = 0;
        while (i < spins && atomic_load(&tp->job_gen) == seen && !atomic_load(&tp->stop)) {
            cpu_relax();
            i++;
        }
        pthread_mutex_lock(&tp->mutex);
        while ((atomic_load(&tp->job_gen) == seen || atomic_load(&tp->pause)) && !atomic_load(&tp->stop)) {
            atomic_fetch_add(&tp->idle_sleeping, 1);
            pthread_cond_wait(&tp->cond, &tp->mutex);
            atomic_fetch_sub(&tp->idle_sleeping, 1);
            atomic_fetch_add(&tp->idle_wakeups, 1);
        }
        // The job's thread count is read with the job: a worker left out of
        // it that reads it late might otherwise see the next job's count and
        // join that one with this one's graph.
        seen = atomic_load(&tp->job_gen);
        struct lm_ggml_cgraph * cgraph = tp->cgraph;
        struct lm_ggml_cplan  * cplan  = tp->cplan;
        took_part = ith < atomic_load(&tp->n_threads_cur);
        pthread_mutex_unlock(&tp->mutex);
        if (atomic_load(&tp->stop)) break;
        if (took_part) {
            compute_graph_thread(tp, cgraph, cplan, ith, seen);
        }
    }
    return NULL;
}

struct lm_ggml_threadpool_params lm_ggml_threadpool_params_default(int n_threads) {
    struct lm_ggml_threadpool_params p;
    lm_ggml_threadpool_params_init(&p, n_threads);
    return p;
}

void lm_ggml_threadpool_params_init(struct lm_ggml_threadpool_params * p, int n_threads) {
    p->n_threads = n_threads;
    p->prio = LM_GGML_SCHED_PRIO_NORMAL;
    p->poll = 50;
    p->strict_cpu = false;
    p->paused = false;
    memset(p->cpumask, 0, LM_GGML_MAX_N_THREADS);
}

bool lm_ggml_threadpool_params_match(const struct lm_ggml_threadpool_params * p0, const struct lm_ggml_threadpool_params * p1) {
    if (p0->n_threads != p1->n_threads) return false;
    if (p0->prio != p1->prio) return false;
    if (p0->poll != p1->poll) return false;
    if (p0->strict_cpu != p1->strict_cpu) return false;
    return memcmp(p0->cpumask, p1->cpumask, LM_GGML_MAX_N_THREADS) == 0;
}

static void apply_affinity(pthread_t th, const struct lm_ggml_threadpool_params * p, int ith) {
#if defined(__linux__) && !defined(__ANDROID__)
    int any = 0;
    for (int i = 0; i < LM_GGML_MAX_N_THREADS; i++) any |= p->cpumask[i];
    if (!any) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (p->strict_cpu) {
        // one CPU per thread: the ith set bit (wrapping)
        int count = 0, pick = -1;
        for (int i = 0; i < LM_GGML_MAX_N_THREADS && i < CPU_SETSIZE; i++) if (p->cpumask[i]) count++;
        int want = ith % count;
        for (int i = 0; i < LM_GGML_MAX_N_THREADS && i < CPU_SETSIZE; i++) {
            if (p->cpumask[i] && want-- == 0) { pick = i; break; }
        }
        if (pick >= 0) CPU_SET(pick, &set);
    } else {
        for (int i = 0; i < LM_GGML_MAX_N_THREADS && i < CPU_SETSIZE; i++) if (p->cpumask[i]) CPU_SET(i, &set);
    }
    pthread_setaffinity_np(th, sizeof(set), &set);
#else
    LM_GGML_UNUSED(th); LM_GGML_UNUSED(p); LM_GGML_UNUSED(ith);
#endif
}

struct lm_ggml_threadpool * lm_ggml_threadpool_new(struct lm_ggml_threadpool_params * params) {
    if (params == NULL || params->n_threads < 1 || params->n_threads > LM_GGML_MAX_N_THREADS) {
        LM_GGML_LOG_ERROR("%s: invalid number of threads\n", __func__);
        return NULL;
    }
    lm_ggml_cpu_init();
    struct lm_ggml_threadpool * tp = calloc(1, sizeof(*tp));
    if (tp == NULL) return NULL;
    tp->params = *params;
    tp->n_threads = params->n_threads;
    atomic_init(&tp->n_threads_cur, params->n_threads);
    atomic_init(&tp->job_gen, 0);
    atomic_init(&tp->barrier_root, 0);
    for (int i = 0; i < LM_BARRIER_NODES; i++) atomic_init(&tp->barrier_nodes[i].count, 0);
    atomic_init(&tp->barrier_gen, 0);
    atomic_init(&tp->stop, false);
    atomic_init(&tp->pause, params->paused);
    atomic_init(&tp->abort_gen, 0);
    atomic_init(&tp->error.state, 0);
    atomic_init(&tp->error.stop_node, INT_MAX);
    pthread_mutex_init(&tp->mutex, NULL);
    pthread_mutex_init(&tp->compute_lock, NULL);
    pthread_cond_init(&tp->cond, NULL);
    pthread_mutex_init(&tp->barrier_mutex, NULL);
    pthread_cond_init(&tp->barrier_cond, NULL);
    atomic_init(&tp->barrier_sleepers, 0);
    atomic_init(&tp->idle_sleeping, 0);
    atomic_init(&tp->idle_wakeups, 0);
    for (int i = 0; i < LM_CPU_COUNTERS; i++) atomic_init(&tp->counters[i].v, 0);
    tp->n_cpus = online_cpus();

    if (tp->n_threads > 1) {
        tp->workers = calloc((size_t) tp->n_threads - 1, sizeof(pthread_t));
        if (tp->workers == NULL) {
            free(tp);
            return NULL;
        }
    }
    for (int i = 1; i < tp->n_threads; i++) {
        void ** arg = malloc(2 * sizeof(void *));
        int rc = -1;
        if (arg != NULL) {
            arg[0] = tp;
            arg[1] = (void *)(intptr_t) i;
            rc = pthread_create(&tp->workers[i - 1], NULL, worker_main, arg);
            if (rc != 0) free(arg);
        }
        if (rc != 0) {
            LM_GGML_LOG_ERROR("%s: failed to create thread %d\n", __func__, i);
            tp->n_threads = i; // join what was started
            lm_ggml_threadpool_free(tp);
            return NULL;
        }
        apply_affinity(tp->workers[i - 1], params, i);
        // A name tells the pool's threads from the rest of the process (for
        // tools, and tests that measure only the pools' CPU time and thread
        // count). Set here on Linux, so that it is in place when the pool is
        // returned; macOS names only the calling thread (worker_main).
#if defined(__linux__)
        (void) pthread_setname_np(tp->workers[i - 1], "ggml-worker");
#endif
    }
    return tp;
}

void lm_ggml_threadpool_free(struct lm_ggml_threadpool * tp) {
    if (tp == NULL) return;
    pthread_mutex_lock(&tp->mutex);
    atomic_store(&tp->stop, true);
    atomic_store(&tp->pause, false);
    pthread_cond_broadcast(&tp->cond);
    pthread_mutex_unlock(&tp->mutex);
    for (int i = 1; i < tp->n_threads; i++) {
        pthread_join(tp->workers[i - 1], NULL);
    }
    free(tp->workers);
    pthread_mutex_destroy(&tp->mutex);
    pthread_mutex_destroy(&tp->compute_lock);
    pthread_mutex_destroy(&tp->barrier_mutex);
    pthread_cond_destroy(&tp->barrier_cond);
    pthread_cond_destroy(&tp->cond);
    free(tp);
}

int lm_ggml_threadpool_get_n_threads(struct lm_ggml_threadpool * tp) { return tp->n_threads; }

void lm_ggml_threadpool_pause(struct lm_ggml_threadpool * tp) {
    pthread_mutex_lock(&tp->mutex);
    atomic_store(&tp->pause, true);
    pthread_mutex_unlock(&tp->mutex);
}

void lm_ggml_threadpool_resume(struct lm_ggml_threadpool * tp) {
    pthread_mutex_lock(&tp->mutex);
    atomic_store(&tp->pause, false);
    pthread_cond_broadcast(&tp->cond);
    pthread_mutex_unlock(&tp->mutex);
}

// ---------------------------------------------------------------- the cached pool
//
// A computation that brings no pool borrows the process's cached one instead
// of starting and joining threads for the call (about 70 us at two threads,
// more than a small graph costs). Taking it empties the slot, so a pool
// serves one computation at a time and nothing is locked while it computes;
// a computation that finds the slot empty, or a pool of another size in it,
// starts its own, and the slot keeps the pool that came back last. Only an
// exact size is taken: every job wakes all of a pool's workers (those left
// out go back to sleep), so after one Compute(64) a pool of 64 would cost
// 63 wake-ups on each later Compute(2).
// Its workers poll briefly after a job, as any pool's, then sleep on the
// pool's condition variable: an idle cached pool costs no CPU.

static _Atomic(struct lm_ggml_threadpool *) g_cached_pool;

// The child of a fork has none of the parent's threads: it forgets the pool
// (leaking its memory) and starts its own when it computes.
static void cached_pool_forget(void) {
    atomic_store(&g_cached_pool, NULL);
}

static void cached_pool_register_fork_handler(void) {
#ifdef _WIN32
    (void) cached_pool_forget; // no fork (winpthreads' pthread_atfork does nothing)
#else
    pthread_atfork(NULL, NULL, cached_pool_forget);
#endif
}

static void cached_pool_put(struct lm_ggml_threadpool * tp) {
    while (tp != NULL) {
        struct lm_ggml_threadpool * empty = NULL;
        if (atomic_compare_exchange_strong(&g_cached_pool, &empty, tp)) return;
        // Another came back meanwhile: take it out (it is then ours alone),
        // free it and try again with this one, the latest.
        lm_ggml_threadpool_free(atomic_exchange(&g_cached_pool, NULL));
    }
}

// A pool of n_threads with no job, or NULL if none can be started.
// One thread needs no workers: a fresh pool costs less than waking the cached one's.
static struct lm_ggml_threadpool * cached_pool_take(int n_threads) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (n_threads > 1) {
        pthread_once(&once, cached_pool_register_fork_handler);
        struct lm_ggml_threadpool * tp = atomic_exchange(&g_cached_pool, NULL);
        if (tp != NULL && tp->n_threads == n_threads) return tp;
        lm_ggml_threadpool_free(tp); // another size: this computation's pool replaces it
    }
    struct lm_ggml_threadpool_params p = lm_ggml_threadpool_params_default(n_threads);
    return lm_ggml_threadpool_new(&p);
}

static void cached_pool_give_back(struct lm_ggml_threadpool * tp) {
    if (tp->n_threads > 1) cached_pool_put(tp);
    else lm_ggml_threadpool_free(tp);
}

void lm_cpu_release_cached_threadpool(void) {
    lm_ggml_threadpool_free(atomic_exchange(&g_cached_pool, NULL));
}

// ---------------------------------------------------------------- plan and compute

struct lm_ggml_cplan lm_ggml_graph_plan(const struct lm_ggml_cgraph * cgraph, int n_threads, struct lm_ggml_threadpool * threadpool) {
    lm_ggml_cpu_init();
    if (threadpool != NULL) {
        n_threads = threadpool->n_threads;
    }
    if (n_threads <= 0) {
        n_threads = LM_GGML_DEFAULT_N_THREADS;
    }
    if (n_threads > LM_GGML_MAX_N_THREADS) {
        n_threads = LM_GGML_MAX_N_THREADS;
    }
    size_t work_size = 0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct lm_ggml_tensor * node = cgraph->nodes[i];
        const struct lm_cpu_op * op = op_is_noop(node) ? NULL : lm_cpu_kernels[node->op];
        if (op == NULL || op->work_size == NULL || !lm_cpu_node_supported(node)) continue;
        const size_t w = op->work_size(node, n_threads);
        work_size = w > work_size ? w : work_size;
    }
    if (work_size > 0) {
        work_size += LM_CACHE_LINE * (size_t) n_threads;
    }
    struct lm_ggml_cplan cplan;
    memset(&cplan, 0, sizeof(cplan));
    cplan.threadpool = threadpool;
    cplan.n_threads = n_threads;
    cplan.work_size = work_size;
    cplan.work_data = NULL;
    return cplan;
}

enum lm_ggml_status lm_ggml_graph_compute(struct lm_ggml_cgraph * cgraph, struct lm_ggml_cplan * cplan) {
    lm_ggml_cpu_init();
    LM_GGML_ASSERT(cplan != NULL);
    LM_GGML_ASSERT(cplan->n_threads > 0);
    LM_GGML_ASSERT(cplan->work_size == 0 || cplan->work_data != NULL);

    // Failures are reported to the caller's error frame, if it armed one.
    // An assert inside a kernel must not longjmp out of a barrier that other
    // threads are waiting on: the kernels run with error capture disarmed.
    struct lm_ggml_err_frame ** top = lm_ggml_err_top();
    struct lm_ggml_err_frame * saved = *top;

    // The nodes up to the first that computes are checked before any thread
    // starts (a graph that fails there has computed nothing); compute_graph_thread
    // checks the others one by one.
    {
        char why[320];
        lm_ggml_backend_buffer_t host = NULL;
        int bad;
        if (!check_ahead(cgraph->nodes, cgraph->n_nodes, 0, &host, &bad, why, sizeof(why))) {
            char msg[CPU_ERROR_MSG_SIZE];
            node_error(msg, sizeof(msg), cgraph->nodes[bad], why);
            lm_backend_fail("%s", msg);
            lm_ggml_err_report(saved, "%s", msg);
            return LM_GGML_STATUS_FAILED;
        }
    }

    struct lm_ggml_threadpool * tp = cplan->threadpool;
    const bool borrowed = tp == NULL;
    if (borrowed) {
        tp = cached_pool_take(cplan->n_threads);
        if (tp == NULL) {
            lm_ggml_err_report(saved, "cannot start %d threads", cplan->n_threads);
            return LM_GGML_STATUS_ALLOC_FAILED;
        }
    }
    int n_threads = cplan->n_threads < tp->n_threads ? cplan->n_threads : tp->n_threads;

    *top = NULL;
    pthread_mutex_lock(&tp->compute_lock);
    pthread_mutex_lock(&tp->mutex);
    tp->cgraph = cgraph;
    tp->cplan = cplan;
    atomic_store(&tp->error.state, 0);
    atomic_store(&tp->error.stop_node, INT_MAX);
    atomic_store(&tp->n_threads_cur, n_threads);
    atomic_store(&tp->pause, false);
    reset_counters(tp);
    const unsigned gen = atomic_fetch_add(&tp->job_gen, 1) + 1;
    pthread_cond_broadcast(&tp->cond);
    pthread_mutex_unlock(&tp->mutex);

    compute_graph_thread(tp, cgraph, cplan, 0, gen);

    *top = saved;
    const bool aborted = atomic_load(&tp->abort_gen) == gen;
    const bool failed = atomic_load(&tp->error.state) == 2;
    if (failed) {
        lm_backend_fail("%s", tp->error.msg);
        lm_ggml_err_report(saved, "%s", tp->error.msg);
    }
    pthread_mutex_unlock(&tp->compute_lock);
    if (borrowed) {
        cached_pool_give_back(tp);
    }
    return failed ? LM_GGML_STATUS_FAILED : aborted ? LM_GGML_STATUS_ABORTED : LM_GGML_STATUS_SUCCESS;
}

enum lm_ggml_status lm_ggml_graph_compute_with_ctx(struct lm_ggml_context * ctx, struct lm_ggml_cgraph * cgraph, int n_threads) {
    struct lm_ggml_cplan cplan = lm_ggml_graph_plan(cgraph, n_threads, NULL);
    if (cplan.work_size > 0) {
        cplan.work_data = lm_ggml_new_buffer(ctx, cplan.work_size);
    }
    return lm_ggml_graph_compute(cgraph, &cplan);
}

// ---------------------------------------------------------------- element access

static void * element_ptr(const struct lm_ggml_tensor * t, int i0, int i1, int i2, int i3) {
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

static float load_f32(const struct lm_ggml_tensor * t, const void * p) {
    switch (t->type) {
        case LM_GGML_TYPE_I8:   return *(const int8_t *) p;
        case LM_GGML_TYPE_I16:  return *(const int16_t *) p;
        case LM_GGML_TYPE_I32:  return (float) *(const int32_t *) p;
        case LM_GGML_TYPE_F16:  return LM_GGML_FP16_TO_FP32(*(const lm_ggml_fp16_t *) p);
        case LM_GGML_TYPE_BF16: return LM_GGML_BF16_TO_FP32(*(const lm_ggml_bf16_t *) p);
        case LM_GGML_TYPE_F32:  return *(const float *) p;
        case LM_GGML_TYPE_I64:  return (float) *(const int64_t *) p;
        case LM_GGML_TYPE_F64:  return (float) *(const double *) p;
        default: LM_GGML_ABORT("element access is not supported for type %s", lm_ggml_type_name(t->type));
    }
}

static void store_f32(const struct lm_ggml_tensor * t, void * p, float v) {
    switch (t->type) {
        case LM_GGML_TYPE_I8:   *(int8_t *) p = (int8_t) v; break;
        case LM_GGML_TYPE_I16:  *(int16_t *) p = (int16_t) v; break;
        case LM_GGML_TYPE_I32:  *(int32_t *) p = (int32_t) v; break;
        case LM_GGML_TYPE_F16:  *(lm_ggml_fp16_t *) p = LM_GGML_FP32_TO_FP16(v); break;
        case LM_GGML_TYPE_BF16: *(lm_ggml_bf16_t *) p = LM_GGML_FP32_TO_BF16(v); break;
        case LM_GGML_TYPE_F32:  *(float *) p = v; break;
        case LM_GGML_TYPE_I64:  *(int64_t *) p = (int64_t) v; break;
        case LM_GGML_TYPE_F64:  *(double *) p = v; break;
        default: LM_GGML_ABORT("element access is not supported for type %s", lm_ggml_type_name(t->type));
    }
}

static int32_t load_i32(const struct lm_ggml_tensor * t, const void * p) {
    switch (t->type) {
        case LM_GGML_TYPE_I8:  return *(const int8_t *) p;
        case LM_GGML_TYPE_I16: return *(const int16_t *) p;
        case LM_GGML_TYPE_I32: return *(const int32_t *) p;
        case LM_GGML_TYPE_I64: return (int32_t) *(const int64_t *) p;
        case LM_GGML_TYPE_F64: return (int32_t) *(const double *) p;
        default: return (int32_t) load_f32(t, p);
    }
}

static void store_i32(const struct lm_ggml_tensor * t, void * p, int32_t v) {
    switch (t->type) {
        case LM_GGML_TYPE_I8:  *(int8_t *) p = (int8_t) v; break;
        case LM_GGML_TYPE_I16: *(int16_t *) p = (int16_t) v; break;
        case LM_GGML_TYPE_I32: *(int32_t *) p = v; break;
        case LM_GGML_TYPE_I64: *(int64_t *) p = v; break;
        case LM_GGML_TYPE_F64: *(double *) p = v; break;
        default: store_f32(t, p, (float) v); break;
    }
}

// Flat index i of a contiguous tensor; for non-contiguous ones, i is unravelled.
static void * flat_ptr(const struct lm_ggml_tensor * t, int64_t i) {
    LM_GGML_ASSERT(i >= 0 && i < lm_ggml_nelements(t) && "index out of range");
    if (lm_ggml_is_contiguous(t)) {
        return (char *) t->data + (size_t) i * t->nb[0];
    }
    int64_t i0, i1, i2, i3;
    lm_ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

static void * element_ptr64(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i0 * (int64_t) t->nb[0] + i1 * (int64_t) t->nb[1] + i2 * (int64_t) t->nb[2] + i3 * (int64_t) t->nb[3];
}
float lm_cpu_get_f32_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return load_f32(t, element_ptr64(t, i0, i1, i2, i3));
}
void lm_cpu_set_f32_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    store_f32(t, element_ptr64(t, i0, i1, i2, i3), v);
}
int32_t lm_cpu_get_i32_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return load_i32(t, element_ptr64(t, i0, i1, i2, i3));
}
void lm_cpu_set_i32_at(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, int32_t v) {
    store_i32(t, element_ptr64(t, i0, i1, i2, i3), v);
}

int32_t lm_ggml_get_i32_1d(const struct lm_ggml_tensor * t, int i) { return load_i32(t, flat_ptr(t, i)); }
void    lm_ggml_set_i32_1d(const struct lm_ggml_tensor * t, int i, int32_t v) { store_i32(t, flat_ptr(t, i), v); }
float   lm_ggml_get_f32_1d(const struct lm_ggml_tensor * t, int i) { return load_f32(t, flat_ptr(t, i)); }
void    lm_ggml_set_f32_1d(const struct lm_ggml_tensor * t, int i, float v) { store_f32(t, flat_ptr(t, i), v); }

int32_t lm_ggml_get_i32_nd(const struct lm_ggml_tensor * t, int i0, int i1, int i2, int i3) { return load_i32(t, element_ptr(t, i0, i1, i2, i3)); }
void    lm_ggml_set_i32_nd(const struct lm_ggml_tensor * t, int i0, int i1, int i2, int i3, int32_t v) { store_i32(t, element_ptr(t, i0, i1, i2, i3), v); }
float   lm_ggml_get_f32_nd(const struct lm_ggml_tensor * t, int i0, int i1, int i2, int i3) { return load_f32(t, element_ptr(t, i0, i1, i2, i3)); }
void    lm_ggml_set_f32_nd(const struct lm_ggml_tensor * t, int i0, int i1, int i2, int i3, float v) { store_f32(t, element_ptr(t, i0, i1, i2, i3), v); }

struct lm_ggml_tensor * lm_ggml_set_i32(struct lm_ggml_tensor * t, int32_t value) {
    const int64_t n = lm_ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) store_i32(t, flat_ptr(t, i), value);
    return t;
}

struct lm_ggml_tensor * lm_ggml_set_f32(struct lm_ggml_tensor * t, float value) {
    const int64_t n = lm_ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) store_f32(t, flat_ptr(t, i), value);
    return t;
}

struct lm_ggml_tensor * lm_ggml_new_i32(struct lm_ggml_context * ctx, int32_t value) {
    bool no_alloc = ctx->no_alloc;
    ctx->no_alloc = false;
    struct lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 1);
    ctx->no_alloc = no_alloc;
    return lm_ggml_set_i32(t, value);
}

struct lm_ggml_tensor * lm_ggml_new_f32(struct lm_ggml_context * ctx, float value) {
    bool no_alloc = ctx->no_alloc;
    ctx->no_alloc = false;
    struct lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 1);
    ctx->no_alloc = no_alloc;
    return lm_ggml_set_f32(t, value);
}
