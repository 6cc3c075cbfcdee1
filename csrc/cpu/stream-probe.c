// stream-probe.c - how fast this machine can read a list of buffers once, in
// order, with no arithmetic beyond the loads: the ceiling of a memory-bound
// computation that reads the same bytes (the weights of a one-token decode).
// Not a kernel: `examples/llama -ceiling` reports it next to the decode's
// speed, so that "the decode reads its weights at X% of what plain loads
// reach" is measured in the same process, on the same buffers.
//
// Threads split each buffer into contiguous shares of whole cache lines and
// meet at a spinning barrier after it, as the threads of a graph meet after
// each matrix. They are plain pthreads, started once per call, so that the
// figure owes nothing to the graph code it is compared with.
#include "ggml-cpu-impl.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(LM_X86)
#include <immintrin.h>
#endif

#define PROBE_MAX_THREADS 64

struct probe {
    const void * const * ptrs;
    const size_t * sizes;
    int n, nth, rounds;
    double * times; // per round, written by thread 0
    _Atomic int count;
    _Atomic unsigned gen;
    _Atomic int go; // 0: wait, 1: run, -1: leave (a thread could not start)
    volatile uint64_t sink[PROBE_MAX_THREADS * 8]; // one line per thread: keeps the loads alive
};

static double probe_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void probe_barrier(struct probe * p) {
    const unsigned g = atomic_load_explicit(&p->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&p->count, 1, memory_order_acq_rel) == p->nth - 1) {
        atomic_store_explicit(&p->count, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
        return;
    }
    // spin, yielding now and then: the thread waited for may share this CPU
    for (int i = 1; atomic_load_explicit(&p->gen, memory_order_acquire) == g; i++) {
#if defined(LM_X86)
        _mm_pause();
#endif
        if ((i & 255) == 0) sched_yield();
    }
}

// Reads [b, e): four independent chains of 32-byte (AVX2) or 8-byte loads,
// so that the loads, not the additions, set the pace.
#if defined(LM_X86)
LM_TARGET_AVX2 static uint64_t read_avx2(const char * b, const char * e) {
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (; b + 128 <= e; b += 128) {
        s0 = _mm256_add_epi64(s0, _mm256_loadu_si256((const __m256i *) b));
        s1 = _mm256_add_epi64(s1, _mm256_loadu_si256((const __m256i *)(b + 32)));
        s2 = _mm256_add_epi64(s2, _mm256_loadu_si256((const __m256i *)(b + 64)));
        s3 = _mm256_add_epi64(s3, _mm256_loadu_si256((const __m256i *)(b + 96)));
    }
    s0 = _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3));
    uint64_t o[4];
    _mm256_storeu_si256((__m256i *) o, s0);
    uint64_t s = o[0] + o[1] + o[2] + o[3];
    for (; b < e; b++) s += (unsigned char) *b;
    return s;
}
#endif

static uint64_t read_words(const char * b, const char * e) {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, w[4];
    for (; b + 32 <= e; b += 32) {
        memcpy(w, b, 32);
        s0 += w[0];
        s1 += w[1];
        s2 += w[2];
        s3 += w[3];
    }
    uint64_t s = s0 + s1 + s2 + s3;
    for (; b < e; b++) s += (unsigned char) *b;
    return s;
}

static void probe_run(struct probe * p, int ith) {
#if defined(LM_X86)
    const bool avx2 = lm_cpu_level() != LM_CPU_LEVEL_SCALAR;
#endif
    uint64_t s = 0;
    for (int r = 0; r < p->rounds; r++) {
        const double t0 = ith == 0 ? probe_now() : 0;
        for (int i = 0; i < p->n; i++) {
            const size_t share = ((p->sizes[i] + (size_t) p->nth - 1) / (size_t) p->nth + 63) & ~(size_t) 63;
            const size_t b = share * (size_t) ith, e = b + share < p->sizes[i] ? b + share : p->sizes[i];
            if (b < e) {
                const char * base = (const char *) p->ptrs[i];
#if defined(LM_X86)
                s += avx2 ? read_avx2(base + b, base + e) : read_words(base + b, base + e);
#else
                s += read_words(base + b, base + e);
#endif
            }
            if (p->nth > 1) probe_barrier(p);
        }
        if (ith == 0) p->times[r] = probe_now() - t0;
    }
    p->sink[ith * 8] = s;
}

static void * probe_worker(void * arg) {
    void ** a = arg;
    struct probe * p = a[0];
    int go;
    while ((go = atomic_load_explicit(&p->go, memory_order_acquire)) == 0) sched_yield();
    if (go > 0) probe_run(p, (int)(intptr_t) a[1]);
    return NULL;
}

int lm_cpu_stream_probe(const void * const * ptrs, const size_t * sizes, int n, int n_threads, int rounds,
                        double * times) {
    if (n < 0 || rounds < 1 || n_threads < 1 || n_threads > PROBE_MAX_THREADS || (n > 0 && (!ptrs || !sizes)) || !times) {
        return -1;
    }
    static struct probe zero;
    struct probe p = zero;
    p.ptrs = ptrs;
    p.sizes = sizes;
    p.n = n;
    p.nth = n_threads;
    p.rounds = rounds;
    p.times = times;
    pthread_t th[PROBE_MAX_THREADS];
    void * args[PROBE_MAX_THREADS][2];
    int started = 1;
    for (; started < n_threads; started++) {
        args[started][0] = &p;
        args[started][1] = (void *)(intptr_t) started;
        if (pthread_create(&th[started], NULL, probe_worker, args[started]) != 0) break;
    }
    // every thread or none: with one missing, the barriers would wait forever
    atomic_store_explicit(&p.go, started == n_threads ? 1 : -1, memory_order_release);
    if (started < n_threads) {
        for (int i = 1; i < started; i++) pthread_join(th[i], NULL);
        return -1;
    }
    probe_run(&p, 0);
    for (int i = 1; i < n_threads; i++) pthread_join(th[i], NULL);
    return 0;
}
