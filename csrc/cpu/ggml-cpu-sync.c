// ggml-cpu-sync.c - what a kernel uses of the job it runs in: the barrier
// (a tree of counters, then sleep), the work counters and error reporting.
// Below the engine (ggml-cpu.c), which calls them too, and the kernels: it
// calls neither. The pool's state is in ggml-cpu-pool.h.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ggml-cpu-pool.h"

#include <sched.h>
#include <stdarg.h>

void lm_cpu_error(const struct lm_ggml_compute_params * params, const char * fmt, ...) {
    struct lm_cpu_error_slot * e = params->error;
    int expected = 0;
    if (e == NULL || !atomic_compare_exchange_strong(&e->state, &expected, 1)) {
        return; // the first error wins
    }
    const struct lm_ggml_tensor * node = params->node;
    int n = snprintf(e->msg, sizeof(e->msg), "%s (node %s): ", node ? lm_ggml_op_desc(node) : "?", node ? node->name : "?");
    if (n < 0 || (size_t) n >= sizeof(e->msg)) n = 0;
    va_list args;
    va_start(args, fmt);
    vsnprintf(e->msg + n, sizeof(e->msg) - (size_t) n, fmt, args);
    va_end(args);
    atomic_store(&e->state, 2);
    stop_job_at(e, params->node_index);
}

atomic_int * lm_cpu_counter(const struct lm_ggml_compute_params * params, int i) {
    return &params->threadpool->counters[i].v;
}

// Polls before a waiter gives up its CPU: a few microseconds when every thread
// has a core; none when there are more threads than cores, where spinning
// would only delay the thread being waited for.
static inline int spin_budget(const struct lm_ggml_threadpool * tp, int n_threads) {
    return n_threads <= tp->n_cpus ? 4000 : 0;
}

void lm_cpu_wait_counter(const struct lm_ggml_compute_params * params, atomic_int * c, int target) {
    const int spins = spin_budget(params->threadpool, params->nth);
    for (int i = 0; atomic_load_explicit(c, memory_order_acquire) < target; i++) {
        if (i < spins) cpu_relax();
        else sched_yield();
    }
}

// The index of the calling thread in the job it computes (lm_ggml_barrier's
// signature has no room for it).
static _Thread_local int tl_ith;

void lm_cpu_set_thread_index(int ith) {
    tl_ith = ith;
}

// Arrival: threads meet in groups of LM_BARRIER_FANIN, each group on a counter
// of its own cache line; the last of a group goes on up as one thread of the
// next level's groups, so a barrier of n threads costs O(log n) steps on its
// critical path and at most LM_BARRIER_FANIN atomic adds on any one line.
// True for the one thread that arrives last of all. Level l's counters
// follow those of the levels below it in barrier_nodes; the top level's one
// group counts on barrier_root.
static bool barrier_arrive(struct lm_ggml_threadpool * tp, int n, int ith) {
    int idx = ith, m = n, base = 0;
    for (;;) {
        const int groups = (m + LM_BARRIER_FANIN - 1) / LM_BARRIER_FANIN;
        const int g = idx / LM_BARRIER_FANIN;
        const int size = LM_GGML_MIN(LM_BARRIER_FANIN, m - g * LM_BARRIER_FANIN);
        if (size > 1) {
            atomic_int * c = groups == 1 ? &tp->barrier_root : &tp->barrier_nodes[base + g].count;
            if (atomic_fetch_add_explicit(c, 1, memory_order_acq_rel) != size - 1) return false;
            // the group's others are all waiting for the release: nobody adds here before it
            atomic_store_explicit(c, 0, memory_order_relaxed);
        }
        if (groups == 1) return true;
        base += groups;
        idx = g;
        m = groups;
    }
}

// Spin a little (cheap when every thread has a core), then sleep on a condition
// variable: with more threads than cores, spinning or yielding would starve
// the very thread everyone waits for.
void lm_ggml_barrier(struct lm_ggml_threadpool * tp) {
    const int n = atomic_load_explicit(&tp->n_threads_cur, memory_order_relaxed);
    if (n <= 1) {
        reset_counters(tp);
        return;
    }
    const unsigned gen = atomic_load_explicit(&tp->barrier_gen, memory_order_acquire);
    if (barrier_arrive(tp, n, tl_ith)) {
        reset_counters(tp); // everyone else is in here: nobody is using them
        // No lock unless someone sleeps. The bump and the look at sleepers
        // are sequentially consistent, as are a sleeper's count and its look
        // at gen (under the mutex): either we see the sleeper, and lock and
        // broadcast (it is then in cond_wait or has not yet checked gen), or
        // the sleeper sees the new gen and does not wait.
        atomic_fetch_add(&tp->barrier_gen, 1);
        if (atomic_load(&tp->barrier_sleepers) > 0) {
            pthread_mutex_lock(&tp->barrier_mutex);
            pthread_cond_broadcast(&tp->barrier_cond);
            pthread_mutex_unlock(&tp->barrier_mutex);
        }
        return;
    }
    const int spins = spin_budget(tp, n);
    for (int i = 0; i < spins; i++) {
        if (atomic_load_explicit(&tp->barrier_gen, memory_order_acquire) != gen) return;
        cpu_relax();
        // The thread waited for may share this CPU (another process took
        // its core): a yield now and then lets it run, where the whole
        // budget (about 100 us) would pass first. Alone on its CPU, a
        // yield returns at once, a fraction of a microsecond.
        if ((i & 255) == 255) sched_yield();
    }
    pthread_mutex_lock(&tp->barrier_mutex);
    atomic_fetch_add(&tp->barrier_sleepers, 1);
    while (atomic_load(&tp->barrier_gen) == gen) {
        pthread_cond_wait(&tp->barrier_cond, &tp->barrier_mutex);
    }
    atomic_fetch_sub(&tp->barrier_sleepers, 1);
    pthread_mutex_unlock(&tp->barrier_mutex);
}
