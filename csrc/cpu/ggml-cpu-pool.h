// ggml-cpu-pool.h - the thread pool's state, shared by the compute engine
// (ggml-cpu.c), which runs jobs on it, and ggml-cpu-sync.c, the barrier,
// counters and error reporting the kernels call while a job runs. The
// kernels (ops-*.c) see only ggml-cpu-impl.h. Internal.
#pragma once

#include "ggml-cpu-impl.h"

#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define LM_CACHE_LINE 64

// ---------------------------------------------------------------- compute errors

// Why a job stops early. A thread that decides to stop the job at node i
// (thread 0 after the abort callback, a kernel through lm_cpu_error) lowers
// stop_node to i before the barrier that ends node i; every thread leaves
// after the barrier of node i if stop_node <= i. A value set during a later
// node is not <= i, so threads that are still at an earlier barrier do not
// leave before the others: all leave after the same node.
#define CPU_ERROR_MSG_SIZE 400
struct lm_cpu_error_slot {
    atomic_int state;     // 0: none, 1: being written, 2: set
    atomic_int stop_node; // INT_MAX: run to the end
    char msg[CPU_ERROR_MSG_SIZE];
};

static void stop_job_at(struct lm_cpu_error_slot * e, int node) {
    int cur = atomic_load(&e->stop_node);
    while (node < cur && !atomic_compare_exchange_weak(&e->stop_node, &cur, node)) {
    }
}

// ---------------------------------------------------------------- thread pool

// The barrier's tree: groups of 4 threads; for LM_GGML_MAX_N_THREADS threads
// its levels below the root hold 128 + 32 + 8 + 2 counters.
#define LM_BARRIER_FANIN 4
#define LM_BARRIER_NODES 170
_Static_assert(LM_GGML_MAX_N_THREADS <= 512, "LM_BARRIER_NODES counts the tree of 512 threads");

struct lm_ggml_threadpool {
    pthread_mutex_t mutex;
    pthread_cond_t  cond;
    pthread_mutex_t compute_lock; // one graph at a time per pool

    struct lm_ggml_threadpool_params params;
    int         n_threads;   // size of the pool (including the caller as thread 0)
    pthread_t * workers;     // n_threads - 1 of them

    // current job (written by the caller before bumping job_gen)
    struct lm_ggml_cgraph * cgraph;
    struct lm_ggml_cplan  * cplan;
    atomic_int  n_threads_cur;
    atomic_uint job_gen;

    // barrier: threads arrive up a tree of counters (lm_ggml_barrier); the
    // root's shares a line with the generation that releases everyone, so a
    // barrier of up to LM_BARRIER_FANIN threads moves one line
    char        barrier_pad0[LM_CACHE_LINE];
    atomic_int  barrier_root;
    atomic_uint barrier_gen;
    char        barrier_pad1[LM_CACHE_LINE];
    struct { atomic_int count; char pad[LM_CACHE_LINE - sizeof(atomic_int)]; } barrier_nodes[LM_BARRIER_NODES];
    pthread_mutex_t barrier_mutex;
    pthread_cond_t  barrier_cond;
    atomic_int  barrier_sleepers; // changed under barrier_mutex, read without it
    int         n_cpus;           // CPUs we may run on (online_cpus): no spinning when oversubscribed

    // lm_cpu_counter's: zeroed by the last thread into a barrier, and after a
    // node at one thread; padded so that no two share a cache line
    struct { char pad0[LM_CACHE_LINE]; atomic_int v; char pad1[LM_CACHE_LINE]; } counters[LM_CPU_COUNTERS];

    atomic_bool stop;
    atomic_bool pause;
    atomic_uint abort_gen;   // job_gen of the job an abort callback stopped

    // workers asleep between jobs now, and how often one woke (lm_cpu_threadpool_idle)
    atomic_int  idle_sleeping;
    atomic_uint idle_wakeups;

    struct lm_cpu_error_slot error; // of the current job (reset before it starts)
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// Only the counters in use are written: a store would take the line from
// the other cores' caches at every barrier, even between nodes that never
// touch it.
static void reset_counters(struct lm_ggml_threadpool * tp) {
    for (int i = 0; i < LM_CPU_COUNTERS; i++) {
        atomic_int * c = &tp->counters[i].v;
        if (atomic_load_explicit(c, memory_order_relaxed) != 0) atomic_store_explicit(c, 0, memory_order_relaxed);
    }
}

// Tells ggml-cpu-sync.c the index of the calling thread in the job it is
// about to compute (lm_ggml_barrier's signature has no room for it).
void lm_cpu_set_thread_index(int ith);
