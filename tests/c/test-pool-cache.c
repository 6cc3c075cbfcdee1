// test-pool-cache.c - the cached thread pool of computations that bring none
// (lm_ggml_graph_compute with cplan->threadpool == NULL): results at every
// thread count and in any order of counts, a larger (user) pool given fewer
// threads, an aborted and a failed computation followed by good ones,
// computations from several threads at once, no CPU used while idle, a
// forked child computing on its own threads, and the release function.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-pool-cache.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "test-check.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// A chain y = (((x + x) * 1.5 + x) * 1.5 ...): n_nodes ops over rows long
// enough that every thread gets some.
struct chain {
    struct lm_ggml_context * ctx;
    struct lm_ggml_tensor  * x, * y;
    struct lm_ggml_cgraph  * g;
    int n_ops;
};

static struct chain chain_new(int n_ops, int64_t n) {
    struct chain c = {0};
    struct lm_ggml_init_params ip = { (size_t) 16 << 20, NULL, false };
    c.ctx = lm_ggml_init(ip);
    c.n_ops = n_ops;
    c.x = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, n);
    struct lm_ggml_tensor * y = c.x;
    for (int i = 0; i < n_ops; i++) {
        y = (i % 2 == 0) ? lm_ggml_add(c.ctx, y, c.x) : lm_ggml_scale(c.ctx, y, 0.5f);
    }
    c.y = y;
    c.g = lm_ggml_new_graph(c.ctx);
    lm_ggml_build_forward_expand(c.g, c.y);
    return c;
}

// The chain's value for input v, computed the same way in f32.
static float chain_expect(const struct chain * c, float v) {
    float y = v;
    for (int i = 0; i < c->n_ops; i++) y = (i % 2 == 0) ? y + v : y * 0.5f;
    return y;
}

// The chain at n_threads on tp (NULL: the cached pool), checked.
static bool chain_run_on(struct chain * c, int n_threads, struct lm_ggml_threadpool * tp, float v) {
    const int64_t n = lm_ggml_nelements(c->x);
    float * xd = c->x->data;
    for (int64_t i = 0; i < n; i++) xd[i] = v + (float) (i % 7);
    struct lm_ggml_cplan plan = lm_ggml_graph_plan(c->g, n_threads, tp);
    uint8_t * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    const enum lm_ggml_status st = lm_ggml_graph_compute(c->g, &plan);
    free(work);
    if (st != LM_GGML_STATUS_SUCCESS) return false;
    const float * yd = c->y->data;
    for (int64_t i = 0; i < n; i++) {
        if (yd[i] != chain_expect(c, v + (float) (i % 7))) return false;
    }
    return true;
}

static bool chain_run(struct chain * c, int n_threads, float v) { return chain_run_on(c, n_threads, NULL, v); }

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double) ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double) ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

// CPU time of the whole process over 200 ms of sleep after a computation.
static double idle_cpu_after(struct chain * c, int n_threads) {
    chain_run(c, n_threads, 1.0f);
    const double t0 = cpu_seconds();
    struct timespec ts = { 0, 200 * 1000 * 1000 };
    while (nanosleep(&ts, &ts) != 0) {}
    return cpu_seconds() - t0;
}

static int g_abort_after, g_abort_calls;
static bool abort_cb(void * data) {
    (void) data;
    return ++g_abort_calls > g_abort_after;
}

struct worker_arg { int id; int ok; };

static void * concurrent_worker(void * p) {
    struct worker_arg * a = p;
    struct chain c = chain_new(40, 4096 + a->id);
    a->ok = 1;
    for (int k = 0; k < 60; k++) {
        const int nth = 1 + (a->id + k) % 4;
        if (!chain_run(&c, nth, (float) (a->id + k))) a->ok = 0;
    }
    lm_ggml_free(c.ctx);
    return NULL;
}

int main(void) {
    lm_ggml_cpu_init();
    struct chain c = chain_new(30, 10000);

    // every count, then counts in an order that replaces the cached pool often
    const int order[] = { 1, 2, 3, 4, 2, 1, 3, 8, 2, 4, 2, 2, 5, 1 };
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        char what[64];
        snprintf(what, sizeof(what), "chain at %d threads (step %zu)", order[i], i);
        check(chain_run(&c, order[i], (float) i), what);
    }

    // an aborted computation, then a good one on the same (cached) pool
    {
        struct lm_ggml_cplan p = lm_ggml_graph_plan(c.g, 2, NULL);
        p.work_data = p.work_size ? malloc(p.work_size) : NULL;
        p.abort_callback = abort_cb;
        g_abort_after = 3;
        g_abort_calls = 0;
        check(lm_ggml_graph_compute(c.g, &p) == LM_GGML_STATUS_ABORTED, "abort callback stops the computation");
        check(g_abort_calls == 4, "abort callback asked until it said stop");
        g_abort_after = 1 << 30;
        check(lm_ggml_graph_compute(c.g, &p) == LM_GGML_STATUS_SUCCESS, "the next computation is not aborted");
        free(p.work_data);
        check(chain_run(&c, 2, 3.0f), "chain after an aborted computation");
    }

    // a node failing mid-graph (a tensor without data), then good graphs
    {
        lm_ggml_log_set(quiet_log, NULL);
        struct lm_ggml_init_params np = { 4 * lm_ggml_tensor_overhead(), NULL, true };
        struct lm_ggml_context * nctx = lm_ggml_init(np);
        struct lm_ggml_tensor * nodata = lm_ggml_new_tensor_1d(nctx, LM_GGML_TYPE_F32, 10000);
        struct lm_ggml_init_params ip = { (size_t) 8 << 20, NULL, false };
        struct lm_ggml_context * ctx = lm_ggml_init(ip);
        struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 10000);
        memset(a->data, 0, lm_ggml_nbytes(a));
        struct lm_ggml_tensor * b = lm_ggml_add(ctx, a, a);
        struct lm_ggml_tensor * d = lm_ggml_add(ctx, b, nodata);
        struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
        lm_ggml_build_forward_expand(g, d);
        for (int nth = 2; nth <= 4; nth++) {
            check(lm_ggml_graph_compute_with_ctx(ctx, g, nth) == LM_GGML_STATUS_FAILED, "a node without data fails");
            check(chain_run(&c, nth, 5.0f), "chain after a failed computation");
        }
        lm_ggml_log_set(NULL, NULL);
        lm_ggml_free(ctx);
        lm_ggml_free(nctx);
    }

    // several threads computing at once, each with its own mix of counts
    {
        enum { N = 4 };
        pthread_t th[N];
        struct worker_arg args[N];
        for (int i = 0; i < N; i++) {
            args[i].id = i;
            pthread_create(&th[i], NULL, concurrent_worker, &args[i]);
        }
        for (int i = 0; i < N; i++) {
            pthread_join(th[i], NULL);
            check(args[i].ok, "concurrent computations");
        }
    }

    // idle workers sleep: the cached pool, and a pool of 4 given 2 threads (its
    // workers left out of the jobs must not poll for the next)
    {
        const double at2 = idle_cpu_after(&c, 2);
        check(at2 < 0.02, "idle after 2 threads uses no CPU");
        struct lm_ggml_threadpool_params pp = lm_ggml_threadpool_params_default(4);
        struct lm_ggml_threadpool * tp4 = lm_ggml_threadpool_new(&pp);
        bool ok = true;
        for (int k = 0; k < 20 && ok; k++) ok = chain_run_on(&c, 2, tp4, (float) k);
        check(ok, "chain at 2 threads on a pool of 4");
        const double t0 = cpu_seconds();
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        while (nanosleep(&ts, &ts) != 0) {}
        const double at4for2 = cpu_seconds() - t0;
        lm_ggml_threadpool_free(tp4);
        check(at4for2 < 0.02, "idle after 2 threads on a 4-thread pool uses no CPU");
        printf("idle CPU over 200 ms: %.2f ms (2 threads), %.2f ms (4-thread pool, 2 used)\n", at2 * 1e3, at4for2 * 1e3);
    }

    // a forked child computes on threads of its own, not on the parent's cached
    // pool (ThreadSanitizer cannot start threads after a multithreaded fork)
#if defined(__SANITIZE_THREAD__)
    printf("fork check skipped under ThreadSanitizer\n");
#else
    {
        check(chain_run(&c, 2, 2.0f), "chain before fork");
        fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(20); // a child waiting on threads it does not have dies instead of hanging
            int ok = chain_run(&c, 2, 7.0f) && chain_run(&c, 3, 8.0f) && chain_run(&c, 2, 9.0f);
            _exit(ok ? 0 : 3);
        }
        int status = 0;
        check(pid > 0 && waitpid(pid, &status, 0) == pid, "fork and wait");
        check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child computes with 2 and 3 threads");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            printf("  child status %d (signal %d)\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        }
        check(chain_run(&c, 2, 2.5f), "parent after fork");
    }
#endif

    // release: idempotent, and computations afterwards start a new pool
    lm_cpu_release_cached_threadpool();
    lm_cpu_release_cached_threadpool();
    check(chain_run(&c, 3, 4.0f), "chain after release");
    lm_cpu_release_cached_threadpool();

    lm_ggml_free(c.ctx);
    return check_summary();
}
