// test-rpc.c - the RPC backend end to end on loopback: an in-process server
// over the CPU backend, our client, buffers, tensors, graphs, memory
// accounting, hostile requests on raw sockets, a server that stops.
#include "ggml-rpc.h"
#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "rpc-sock.h"
#include "test-check.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <winsock2.h>
#else
#include <signal.h>
#include <sys/socket.h>
#endif
#include <unistd.h>

// ---------------------------------------------------------------- an in-process server

struct test_server {
    struct lm_rpc_server * srv;
    lm_ggml_backend_t cpu;
    int lfd;
    pthread_t th;
    char endpoint[64];
    volatile bool stop;
};

struct conn_arg { struct lm_rpc_server * srv; int fd; };

static void * conn_thread(void * p) {
    struct conn_arg a = *(struct conn_arg *) p;
    free(p);
    lm_rpc_server_serve(a.srv, a.fd);
    return NULL;
}

static void * accept_thread(void * p) {
    struct test_server * ts = p;
    for (;;) {
#ifdef _WIN32
        const int fd = (int) (intptr_t) accept((SOCKET) (intptr_t) ts->lfd, NULL, NULL);
#else
        const int fd = accept(ts->lfd, NULL, NULL);
#endif
        if (fd < 0) {
            if (ts->stop) return NULL;
            continue;
        }
        struct conn_arg * a = malloc(sizeof(*a));
        a->srv = ts->srv;
        a->fd = fd;
        pthread_t th;
        pthread_create(&th, NULL, conn_thread, a);
        pthread_detach(th);
    }
}

static void server_start(struct test_server * ts, size_t mem) {
    memset(ts, 0, sizeof(*ts));
    lm_rpc_why why;
    ts->lfd = lm_rpc_listen("127.0.0.1:0", why);
    CHECK(ts->lfd >= 0);
    snprintf(ts->endpoint, sizeof(ts->endpoint), "127.0.0.1:%d", lm_rpc_local_port(ts->lfd));
    ts->cpu = lm_ggml_backend_cpu_init();
    ts->srv = lm_rpc_server_new(ts->cpu, mem, mem);
    pthread_create(&ts->th, NULL, accept_thread, ts);
}

static void server_stop(struct test_server * ts) {
    ts->stop = true;
    lm_rpc_shutdown(ts->lfd);
    lm_rpc_close(ts->lfd);
    pthread_join(ts->th, NULL);
    lm_rpc_server_stop(ts->srv);
    // the connection threads are detached: wait until they have let go
    for (int i = 0; i < 200 && lm_rpc_server_used(ts->srv) != 0; i++) usleep(10000);
    usleep(50000);
    lm_rpc_server_free(ts->srv);
    lm_ggml_backend_free(ts->cpu);
}

// ---------------------------------------------------------------- tests

static void test_tensors_and_graph(const char * ep) {
    lm_ggml_backend_t rpc = lm_ggml_backend_rpc_init(ep);
    CHECK(rpc != NULL && lm_ggml_backend_is_rpc(rpc));
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_rpc_buffer_type(ep);
    CHECK(buft != NULL && lm_ggml_backend_get_default_buffer_type(rpc) == buft);
    CHECK(lm_ggml_backend_buft_get_alignment(buft) >= 16);

    struct lm_ggml_init_params ip = { .mem_size = 64 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 33, 7);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 33, 5);
    struct lm_ggml_tensor * y = lm_ggml_soft_max(ctx, lm_ggml_scale(ctx, lm_ggml_mul_mat(ctx, a, b), 0.1f));
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    CHECK(buf != NULL);

    float av[33 * 7], bv[33 * 5], got[7 * 5], back[33 * 7];
    for (int i = 0; i < 33 * 7; i++) av[i] = sinf((float) i);
    for (int i = 0; i < 33 * 5; i++) bv[i] = cosf((float) i * 0.3f);
    lm_ggml_backend_tensor_set(a, av, 0, sizeof(av));
    lm_ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
    lm_ggml_backend_tensor_get(a, back, 0, sizeof(back));
    CHECK(memcmp(av, back, sizeof(av)) == 0);
    // partial reads and writes at offsets
    lm_ggml_backend_tensor_get(a, back, 40, 64);
    CHECK(memcmp((char *) av + 40, back, 64) == 0);

    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, y);
    CHECK(lm_ggml_backend_graph_compute(rpc, g) == LM_GGML_STATUS_SUCCESS);
    lm_ggml_backend_tensor_get(y, got, 0, sizeof(got));

    // the same on the CPU
    struct lm_ggml_init_params lp = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct lm_ggml_context * lc = lm_ggml_init(lp);
    struct lm_ggml_tensor * la = lm_ggml_new_tensor_2d(lc, LM_GGML_TYPE_F32, 33, 7);
    struct lm_ggml_tensor * lb = lm_ggml_new_tensor_2d(lc, LM_GGML_TYPE_F32, 33, 5);
    memcpy(la->data, av, sizeof(av));
    memcpy(lb->data, bv, sizeof(bv));
    struct lm_ggml_tensor * ly = lm_ggml_soft_max(lc, lm_ggml_scale(lc, lm_ggml_mul_mat(lc, la, lb), 0.1f));
    struct lm_ggml_cgraph * lg = lm_ggml_new_graph(lc);
    lm_ggml_build_forward_expand(lg, ly);
    lm_ggml_graph_compute_with_ctx(lc, lg, 2);
    CHECK(memcmp(ly->data, got, sizeof(got)) == 0);

    // copies between tensors of one server, memset, clear
    lm_ggml_backend_tensor_copy(a, a); // same tensor
    lm_ggml_backend_tensor_memset(b, 0, 0, lm_ggml_nbytes(b));
    lm_ggml_backend_tensor_get(b, bv, 0, sizeof(bv));
    CHECK(bv[0] == 0.0f && bv[33 * 5 - 1] == 0.0f);
    lm_ggml_backend_buffer_clear(buf, 0);
    lm_ggml_backend_tensor_get(a, back, 0, sizeof(back));
    CHECK(back[0] == 0.0f && back[33 * 7 - 1] == 0.0f);

    // an out-of-range access is refused on the client, before the wire
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        CHECK(strstr(f.msg, "out of") != NULL || strstr(f.msg, "range") != NULL || f.msg[0] != '\0');
    } else {
        lm_ggml_backend_tensor_get(a, back, 4, sizeof(back));
        lm_ggml_err_pop(&f);
        CHECK(!"an out-of-range read succeeded");
    }

    size_t fr = 0, tot = 0;
    lm_ggml_backend_rpc_get_device_memory(ep, &fr, &tot);
    CHECK(tot == 64 << 20 && fr == tot - lm_ggml_backend_buffer_get_size(buf));

    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_rpc_get_device_memory(ep, &fr, &tot);
    CHECK(fr == tot);
    lm_ggml_free(lc);
    lm_ggml_free(ctx);
    lm_ggml_backend_free(rpc);
}

static void test_limits(const char * ep) {
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_rpc_buffer_type(ep);
    // more than the server hands out: NULL, not an abort
    lm_ggml_backend_buffer_t big = lm_ggml_backend_buft_alloc_buffer(buft, (size_t) 65 << 20);
    CHECK(big == NULL);
    lm_ggml_backend_buffer_t b1 = lm_ggml_backend_buft_alloc_buffer(buft, (size_t) 40 << 20);
    lm_ggml_backend_buffer_t b2 = lm_ggml_backend_buft_alloc_buffer(buft, (size_t) 40 << 20);
    CHECK(b1 != NULL && b2 == NULL);
    lm_ggml_backend_buffer_free(b1);
    b2 = lm_ggml_backend_buft_alloc_buffer(buft, (size_t) 40 << 20);
    CHECK(b2 != NULL);
    lm_ggml_backend_buffer_free(b2);
    CHECK(lm_ggml_backend_rpc_buffer_type("127.0.0.1") == NULL);   // no port
    CHECK(lm_ggml_backend_rpc_init("nonsense") == NULL);
}

// Raw requests (header + payload), then whether the server still answers on that socket.
static bool still_served(const char * ep, const uint8_t * msg, size_t n) {
    lm_rpc_why why;
    const int fd = lm_rpc_connect(ep, 2000, why);
    if (fd < 0) return false;
    (void) lm_rpc_send_all(fd, msg, n, 2000, why);
    const uint8_t ask[9] = { LM_RPC_GET_ALIGNMENT, 0, 0, 0, 0, 0, 0, 0, 0 };
    uint8_t rsp[16];
    const bool ok = lm_rpc_send_all(fd, ask, sizeof(ask), 2000, why) && lm_rpc_recv_all(fd, rsp, 16, 2000, why);
    lm_rpc_close(fd);
    return ok;
}

static void test_hostile(const char * ep) {
    uint8_t m[9 + 2 * LM_RPC_TENSOR_SIZE];
    memset(m, 0, sizeof(m));
    // a well-formed request is answered and the connection stays
    m[0] = LM_RPC_GET_DEVICE_MEMORY;
    CHECK(still_served(ep, m, 9));
    // unknown command
    m[0] = 200;
    CHECK(!still_served(ep, m, 9));
    // a size that would be a huge allocation
    m[0] = LM_RPC_GRAPH_COMPUTE;
    lm_rpc_put_u64(m + 1, UINT64_MAX);
    CHECK(!still_served(ep, m, 9));
    // buffers that are not the client's
    m[0] = LM_RPC_FREE_BUFFER;
    lm_rpc_put_u64(m + 1, 8);
    lm_rpc_put_u64(m + 9, 0x5250430000000001ULL);
    CHECK(!still_served(ep, m, 17));
    m[0] = LM_RPC_BUFFER_GET_BASE;
    CHECK(!still_served(ep, m, 17));
    // a tensor pointing nowhere
    m[0] = LM_RPC_GET_TENSOR;
    lm_rpc_put_u64(m + 1, LM_RPC_TENSOR_SIZE + 16);
    struct lm_rpc_tensor t;
    memset(&t, 0, sizeof(t));
    t.id = 1; t.buffer = 0x5250430000000001ULL; t.data = 0x100000000ULL;
    t.ne[0] = t.ne[1] = t.ne[2] = t.ne[3] = 1; t.nb[0] = 4; t.nb[1] = t.nb[2] = t.nb[3] = 4;
    lm_rpc_tensor_encode(m + 9, &t);
    lm_rpc_put_u64(m + 9 + LM_RPC_TENSOR_SIZE + 8, 4);
    CHECK(!still_served(ep, m, 9 + LM_RPC_TENSOR_SIZE + 16));
    // after all that, the server still serves
    m[0] = LM_RPC_GET_DEVICE_MEMORY;
    lm_rpc_put_u64(m + 1, 0);
    CHECK(still_served(ep, m, 9));
}

// A server that goes away: requests fail (no abort, no hang), a new server on
// the same endpoint is picked up.
#ifndef _WIN32
static void on_signal(int s) { (void) s; }

struct kicker {
    pthread_t target;
    atomic_bool stop;
    long sent;
};

static void * kick(void * p) {
    struct kicker * k = p;
    while (!atomic_load(&k->stop)) {
        pthread_kill(k->target, SIGUSR1);
        k->sent++;
    }
    return NULL;
}

// Signals (the Go runtime preempts threads with them) that land while the
// client checks whether its idle connection still stands must not make it
// connect again: buffers allocated before and after share one connection, so
// one graph can use both.
static void test_signals_keep_connection(const char * ep) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; // as Go's handlers; poll fails with EINTR regardless
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);

    lm_ggml_backend_t rpc = lm_ggml_backend_rpc_init(ep);
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_rpc_buffer_type(ep);
    lm_ggml_backend_buffer_t before = lm_ggml_backend_buft_alloc_buffer(buft, 4096);
    CHECK(before != NULL);
    struct kicker k = { .target = pthread_self() };
    atomic_init(&k.stop, false);
    pthread_t th;
    pthread_create(&th, NULL, kick, &k);
    for (int i = 0; i < 3000; i++) {
        size_t fr, tot;
        lm_ggml_backend_rpc_get_device_memory(ep, &fr, &tot);
    }
    atomic_store(&k.stop, true);
    pthread_join(th, NULL);
    CHECK(k.sent > 0);
    lm_ggml_backend_buffer_t after = lm_ggml_backend_buft_alloc_buffer(buft, 4096);
    CHECK(after != NULL);

    struct lm_ggml_init_params ip = { .mem_size = 8 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 16);
    struct lm_ggml_tensor * y = lm_ggml_sqr(ctx, a);
    struct lm_ggml_tallocr ta = lm_ggml_tallocr_new(before);
    lm_ggml_tallocr_alloc(&ta, a);
    struct lm_ggml_tallocr ty = lm_ggml_tallocr_new(after);
    lm_ggml_tallocr_alloc(&ty, y);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, y);
    const enum lm_ggml_status st = lm_ggml_backend_graph_compute(rpc, g);
    CHECK(st == LM_GGML_STATUS_SUCCESS);
    if (st != LM_GGML_STATUS_SUCCESS) fprintf(stderr, "  %s\n", lm_backend_last_error());

    lm_ggml_free(ctx);
    lm_ggml_backend_buffer_free(after);
    lm_ggml_backend_buffer_free(before);
    lm_ggml_backend_free(rpc);
    sigaction(SIGUSR1, &old, NULL);
}
#endif

static void test_server_gone(void) {
    struct test_server ts;
    server_start(&ts, 16 << 20);
    char ep[64];
    snprintf(ep, sizeof(ep), "%s", ts.endpoint);
    lm_ggml_backend_t rpc = lm_ggml_backend_rpc_init(ep);
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_rpc_buffer_type(ep);
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, 4096);
    CHECK(buf != NULL);
    struct lm_ggml_init_params ip = { .mem_size = 8 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 16);
    struct lm_ggml_tensor * y = lm_ggml_sqr(ctx, a);
    struct lm_ggml_tallocr ta = lm_ggml_tallocr_new(buf);
    lm_ggml_tallocr_alloc(&ta, a);
    lm_ggml_tallocr_alloc(&ta, y);
    struct lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, y);
    CHECK(lm_ggml_backend_graph_compute(rpc, g) == LM_GGML_STATUS_SUCCESS);

    server_stop(&ts);
    CHECK(lm_ggml_backend_graph_compute(rpc, g) == LM_GGML_STATUS_FAILED);
    CHECK(strstr(lm_backend_last_error(), "RPC[") != NULL);
    CHECK(lm_ggml_backend_graph_compute(rpc, g) == LM_GGML_STATUS_FAILED);
    size_t fr = 1, tot = 1;
    lm_ggml_backend_rpc_get_device_memory(ep, &fr, &tot);
    CHECK(fr == 0 && tot == 0);
    lm_ggml_backend_buffer_free(buf); // on a lost connection: local cleanup only

    lm_ggml_backend_free(rpc);
    lm_ggml_free(ctx);
}

int main(void) {
    lm_ggml_backend_rpc_set_timeouts(2000, 10000);
    struct test_server ts;
    server_start(&ts, 64 << 20);
    test_tensors_and_graph(ts.endpoint);
    test_limits(ts.endpoint);
    test_hostile(ts.endpoint);
    test_tensors_and_graph(ts.endpoint); // the hostile clients left no trace
#ifndef _WIN32
    test_signals_keep_connection(ts.endpoint);
#endif
    server_stop(&ts);
    test_server_gone();
    if (g_fail) {
        fprintf(stderr, "%d failures\n", g_fail);
        return 1;
    }
    printf("rpc: loopback buffers, tensors, graphs, limits, hostile requests, signals, lost server ok\n");
    return 0;
}
