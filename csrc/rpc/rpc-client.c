// rpc-client.c - the RPC backend: buffers, graphs and devices on a server
// (see ggml-rpc.h).
//
// One endpoint ("host:port") is one device, one buffer type and, at any time,
// one connection, shared by every backend and buffer of that endpoint: the
// server ties buffers to the connection that allocated them. Requests on a
// connection are serialized. When a request fails (the server went away,
// stalled past the timeout, or broke the protocol) the connection is closed
// and marked lost: the buffers allocated on it fail from then on, and the
// next use of the endpoint connects again (a restarted server is picked up).
#include "ggml-rpc.h"
#include "../backend/ggml-backend-impl.h"
#include "../cpu/ggml-cpu-impl.h"
#include "rpc-graph.h"
#include "rpc-sock.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int g_connect_ms = 10000;
static atomic_int g_io_ms = 300000;

void lm_ggml_backend_rpc_set_timeouts(int connect_ms, int io_ms) {
    if (connect_ms > 0) atomic_store(&g_connect_ms, connect_ms);
    if (io_ms > 0) atomic_store(&g_io_ms, io_ms);
}

// ---------------------------------------------------------------- connections

struct rpc_conn {
    pthread_mutex_t mu; // one exchange at a time; guards fd
    int fd;             // -1 once lost
    atomic_int refs;    // the endpoint's current connection, and each buffer on it
    const char * endpoint;
};

static void conn_unref(struct rpc_conn * c) {
    if (c == NULL || atomic_fetch_sub(&c->refs, 1) != 1) return;
    if (c->fd >= 0) lm_rpc_close(c->fd);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

// Closes a connection that failed, so that it is never used again. mu held.
static bool conn_lost(struct rpc_conn * c, const char * what, const char * why) {
    if (c->fd >= 0) {
        lm_rpc_close(c->fd);
        c->fd = -1;
    }
    LM_GGML_LOG_WARN("RPC[%s]: %s: %s; connection closed\n", c->endpoint, what, why);
    return lm_backend_fail("RPC[%s]: %s: %s", c->endpoint, what, why);
}

// One request and its reply: header and req, then extra (SET_TENSOR's data);
// the reply must be exactly rsp_len bytes.
static bool rpc_call(struct rpc_conn * c, enum lm_rpc_cmd cmd, const void * req, size_t req_len,
                     const void * extra, size_t extra_len, void * rsp, size_t rsp_len) {
    const char * what = lm_rpc_cmds[cmd].name;
    const int io = atomic_load(&g_io_ms);
    lm_rpc_why why;
    uint8_t head[9 + 2 * LM_RPC_TENSOR_SIZE];
    pthread_mutex_lock(&c->mu);
    if (c->fd < 0) {
        pthread_mutex_unlock(&c->mu);
        return lm_backend_fail("RPC[%s]: %s: the connection to the server was lost", c->endpoint, what);
    }
    // small requests go out in one write
    head[0] = (uint8_t) cmd;
    lm_rpc_put_u64(head + 1, (uint64_t) req_len + extra_len);
    const bool merged = req_len <= sizeof(head) - 9;
    if (merged && req_len > 0) memcpy(head + 9, req, req_len);
    bool ok = lm_rpc_send_all(c->fd, head, merged ? 9 + req_len : 9, io, why) &&
              (merged || lm_rpc_send_all(c->fd, req, req_len, io, why)) &&
              (extra_len == 0 || lm_rpc_send_all(c->fd, extra, extra_len, io, why));
    uint8_t sz[8];
    ok = ok && lm_rpc_recv_all(c->fd, sz, sizeof(sz), io, why);
    if (ok && lm_rpc_get_u64(sz) != rsp_len) {
        snprintf(why, LM_RPC_WHY, "reply of %llu bytes, expected %zu", (unsigned long long) lm_rpc_get_u64(sz), rsp_len);
        ok = false;
    }
    ok = ok && (rsp_len == 0 || lm_rpc_recv_all(c->fd, rsp, rsp_len, io, why));
    if (!ok) conn_lost(c, what, why);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

// A connection that is idle and readable was closed by the server (it never
// speaks unasked): a restarted server needs a new one.
static bool conn_alive(struct rpc_conn * c) {
    pthread_mutex_lock(&c->mu);
    const bool alive = c->fd >= 0 && !lm_rpc_readable_now(c->fd);
    pthread_mutex_unlock(&c->mu);
    return alive;
}

// ---------------------------------------------------------------- endpoints

struct rpc_ep {
    char endpoint[256];
    char name[272];
    struct lm_ggml_backend_device dev;
    struct lm_ggml_backend_buffer_type buft;
    pthread_mutex_t mu;    // conn and the server's properties
    struct rpc_conn * conn;
    size_t alignment, max_size;
    struct rpc_ep * next;
};

static pthread_mutex_t g_eps_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rpc_ep * g_eps;

static const struct lm_backend_dev_ops rpc_dev_ops;
static const struct lm_backend_buft_ops rpc_buft_ops;
static const struct lm_backend_buffer_ops rpc_buffer_ops;

// The endpoint object of endpoint (made on first use, never freed), NULL if it does not parse.
static struct rpc_ep * ep_get(const char * endpoint) {
    char host[256], port[16];
    if (endpoint == NULL || strlen(endpoint) >= sizeof(((struct rpc_ep *) 0)->endpoint) ||
        !lm_rpc_split_endpoint(endpoint, host, sizeof(host), port, sizeof(port))) {
        lm_backend_fail("RPC: endpoint '%s' is not host:port", endpoint ? endpoint : "(null)");
        return NULL;
    }
    pthread_mutex_lock(&g_eps_mu);
    struct rpc_ep * e = g_eps;
    while (e != NULL && strcmp(e->endpoint, endpoint) != 0) e = e->next;
    if (e == NULL && (e = calloc(1, sizeof(*e))) != NULL) {
        snprintf(e->endpoint, sizeof(e->endpoint), "%s", endpoint);
        snprintf(e->name, sizeof(e->name), "RPC[%s]", endpoint);
        e->dev = (struct lm_ggml_backend_device) { .ops = &rpc_dev_ops, .reg = lm_ggml_backend_rpc_reg(), .ctx = e };
        e->buft = (struct lm_ggml_backend_buffer_type) { .ops = &rpc_buft_ops, .device = &e->dev, .ctx = e };
        pthread_mutex_init(&e->mu, NULL);
        e->next = g_eps;
        g_eps = e;
    }
    pthread_mutex_unlock(&g_eps_mu);
    if (e == NULL) lm_backend_fail("RPC: out of memory");
    // the registry lists "RPC" once it is in use (lm_ggml_backend_reg_by_name)
    lm_backend_register(lm_ggml_backend_rpc_reg());
    return e;
}

// The endpoint's connection (a reference the caller drops with conn_unref),
// connecting first if there is none or the last one was lost. NULL (with
// lm_backend_fail) if the server cannot be reached.
static struct rpc_conn * ep_conn(struct rpc_ep * e) {
    pthread_mutex_lock(&e->mu);
    if (e->conn != NULL && !conn_alive(e->conn)) {
        conn_unref(e->conn);
        e->conn = NULL;
    }
    if (e->conn == NULL) {
        lm_rpc_why why;
        const int fd = lm_rpc_connect(e->endpoint, atomic_load(&g_connect_ms), why);
        struct rpc_conn * c = fd >= 0 ? calloc(1, sizeof(*c)) : NULL;
        if (c == NULL) {
            if (fd >= 0) lm_rpc_close(fd);
            pthread_mutex_unlock(&e->mu);
            lm_backend_fail("RPC[%s]: cannot connect: %s", e->endpoint, fd >= 0 ? "out of memory" : why);
            return NULL;
        }
        pthread_mutex_init(&c->mu, NULL);
        c->fd = fd;
        c->endpoint = e->endpoint;
        atomic_init(&c->refs, 1);
        // the buffer type's properties, from this server
        uint8_t a[8], m[8];
        if (!rpc_call(c, LM_RPC_GET_ALIGNMENT, NULL, 0, NULL, 0, a, 8) || !rpc_call(c, LM_RPC_GET_MAX_SIZE, NULL, 0, NULL, 0, m, 8)) {
            conn_unref(c);
            pthread_mutex_unlock(&e->mu);
            return NULL;
        }
        const uint64_t align = lm_rpc_get_u64(a);
        e->alignment = align > 0 && align <= 4096 && (align & (align - 1)) == 0 ? (size_t) align : 32;
        e->max_size = lm_rpc_get_u64(m) > SIZE_MAX ? SIZE_MAX : (size_t) lm_rpc_get_u64(m);
        e->conn = c;
    }
    struct rpc_conn * c = e->conn;
    atomic_fetch_add(&c->refs, 1);
    pthread_mutex_unlock(&e->mu);
    return c;
}

// ---------------------------------------------------------------- buffers

struct rpc_buffer {
    struct rpc_conn * conn;
    uint64_t handle; // the server's name for it
    uint64_t base;   // its first byte, in the server's addresses
};

static struct rpc_buffer * rbuf(lm_ggml_backend_buffer_t b) { return b->ctx; }

static void rpc_buffer_free(lm_ggml_backend_buffer_t b) {
    struct rpc_buffer * rb = rbuf(b);
    uint8_t req[8];
    lm_rpc_put_u64(req, rb->handle);
    lm_backend_clear_error();
    if (!rpc_call(rb->conn, LM_RPC_FREE_BUFFER, req, 8, NULL, 0, NULL, 0)) {
        // nothing to give back on a lost connection: the server freed it when the connection ended
        lm_backend_clear_error();
    }
    conn_unref(rb->conn);
    free(rb);
}

static void * rpc_buffer_base(lm_ggml_backend_buffer_t b) { return (void *)(uintptr_t) rbuf(b)->base; }

static bool wire_tensor(uint8_t out[LM_RPC_TENSOR_SIZE], const struct lm_ggml_tensor * t, uint64_t handle) {
    struct lm_rpc_tensor w;
    lm_rpc_why why;
    if (!lm_rpc_tensor_from(&w, t, handle, why)) return lm_backend_fail("RPC: %s", why);
    lm_rpc_tensor_encode(out, &w);
    return true;
}

static bool rpc_buffer_set(lm_ggml_backend_buffer_t b, struct lm_ggml_tensor * t, const void * data, size_t offset, size_t size) {
    uint8_t req[LM_RPC_SET_TENSOR_HEADER];
    if (!wire_tensor(req, t, rbuf(b)->handle)) return false;
    lm_rpc_put_u64(req + LM_RPC_TENSOR_SIZE, offset);
    return rpc_call(rbuf(b)->conn, LM_RPC_SET_TENSOR, req, sizeof(req), data, size, NULL, 0);
}

static bool rpc_buffer_get(lm_ggml_backend_buffer_t b, const struct lm_ggml_tensor * t, void * data, size_t offset, size_t size) {
    uint8_t req[LM_RPC_TENSOR_SIZE + 16];
    if (!wire_tensor(req, t, rbuf(b)->handle)) return false;
    lm_rpc_put_u64(req + LM_RPC_TENSOR_SIZE, offset);
    lm_rpc_put_u64(req + LM_RPC_TENSOR_SIZE + 8, size);
    return rpc_call(rbuf(b)->conn, LM_RPC_GET_TENSOR, req, sizeof(req), NULL, 0, data, size);
}

// The protocol has no memset: sent as writes of a filled block.
static bool rpc_buffer_memset(lm_ggml_backend_buffer_t b, struct lm_ggml_tensor * t, uint8_t value, size_t offset, size_t size) {
    const size_t block = size < (1 << 20) ? size : (1 << 20);
    uint8_t * fill = malloc(block ? block : 1);
    if (fill == NULL) return lm_backend_fail("RPC: out of memory");
    memset(fill, value, block);
    bool ok = true;
    for (size_t done = 0; ok && done < size; done += block) {
        ok = rpc_buffer_set(b, t, fill, offset + done, size - done < block ? size - done : block);
    }
    free(fill);
    return ok;
}

// Direct only between buffers of the same connection.
static bool rpc_buffer_cpy(lm_ggml_backend_buffer_t b, const struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst, bool * done) {
    *done = false;
    lm_ggml_backend_buffer_t sb = src->view_src != NULL && src->view_src->buffer != NULL ? src->view_src->buffer : src->buffer;
    if (sb == NULL || sb->ops != &rpc_buffer_ops || rbuf(sb)->conn != rbuf(b)->conn) return true;
    uint8_t req[2 * LM_RPC_TENSOR_SIZE], rsp[1];
    if (!wire_tensor(req, src, rbuf(sb)->handle) || !wire_tensor(req + LM_RPC_TENSOR_SIZE, dst, rbuf(b)->handle)) return false;
    if (!rpc_call(rbuf(b)->conn, LM_RPC_COPY_TENSOR, req, sizeof(req), NULL, 0, rsp, 1)) return false;
    *done = rsp[0] != 0;
    return true;
}

static bool rpc_buffer_clear(lm_ggml_backend_buffer_t b, uint8_t value) {
    uint8_t req[9];
    lm_rpc_put_u64(req, rbuf(b)->handle);
    req[8] = value;
    return rpc_call(rbuf(b)->conn, LM_RPC_BUFFER_CLEAR, req, sizeof(req), NULL, 0, NULL, 0);
}

static const struct lm_backend_buffer_ops rpc_buffer_ops = {
    .free          = rpc_buffer_free,
    .base          = rpc_buffer_base,
    .memset_tensor = rpc_buffer_memset,
    .set_tensor    = rpc_buffer_set,
    .get_tensor    = rpc_buffer_get,
    .cpy_tensor    = rpc_buffer_cpy,
    .clear         = rpc_buffer_clear,
};

// ---------------------------------------------------------------- buffer type

static struct rpc_ep * buft_ep(lm_ggml_backend_buffer_type_t t) { return t->ctx; }

static const char * rpc_buft_name(lm_ggml_backend_buffer_type_t t) { return buft_ep(t)->name; }

static lm_ggml_backend_buffer_t rpc_buft_alloc(lm_ggml_backend_buffer_type_t t, size_t size) {
    struct rpc_ep * e = buft_ep(t);
    struct rpc_conn * c = ep_conn(e);
    if (c == NULL) return NULL;
    uint8_t req[8], rsp[16], base[8];
    lm_rpc_put_u64(req, size);
    struct rpc_buffer * rb = NULL;
    lm_ggml_backend_buffer_t b = NULL;
    if (!rpc_call(c, LM_RPC_ALLOC_BUFFER, req, 8, NULL, 0, rsp, 16)) goto fail;
    if (lm_rpc_get_u64(rsp) == 0) {
        lm_backend_fail("RPC[%s]: the server cannot allocate %zu bytes", e->endpoint, size);
        goto fail;
    }
    if (lm_rpc_get_u64(rsp + 8) < size) {
        lm_backend_fail("RPC[%s]: the server allocated %llu bytes of the %zu asked for", e->endpoint,
                        (unsigned long long) lm_rpc_get_u64(rsp + 8), size);
        goto fail; // the server's buffer goes when the connection does
    }
    // the base now, so that the base() entry cannot fail later
    if (!rpc_call(c, LM_RPC_BUFFER_GET_BASE, rsp, 8, NULL, 0, base, 8)) goto fail;
    rb = malloc(sizeof(*rb));
    if (rb != NULL) {
        *rb = (struct rpc_buffer) { .conn = c, .handle = lm_rpc_get_u64(rsp), .base = lm_rpc_get_u64(base) };
        b = lm_backend_buffer_new(t, &rpc_buffer_ops, rb, size);
    }
    if (b == NULL) {
        free(rb);
        rpc_call(c, LM_RPC_FREE_BUFFER, rsp, 8, NULL, 0, NULL, 0);
        lm_backend_fail("RPC: out of memory");
        goto fail;
    }
    return b; // the buffer keeps c's reference
fail:
    conn_unref(c);
    return NULL;
}

static size_t rpc_buft_alignment(lm_ggml_backend_buffer_type_t t) { return buft_ep(t)->alignment ? buft_ep(t)->alignment : 32; }
static size_t rpc_buft_max_size(lm_ggml_backend_buffer_type_t t)  { return buft_ep(t)->max_size ? buft_ep(t)->max_size : SIZE_MAX; }

static const struct lm_backend_buft_ops rpc_buft_ops = {
    .name      = rpc_buft_name,
    .alloc     = rpc_buft_alloc,
    .alignment = rpc_buft_alignment,
    .max_size  = rpc_buft_max_size,
};

lm_ggml_backend_buffer_type_t lm_ggml_backend_rpc_buffer_type(const char * endpoint) {
    struct rpc_ep * e = ep_get(endpoint);
    struct rpc_conn * c = e ? ep_conn(e) : NULL; // the server's alignment and max size are needed
    if (c == NULL) {
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, lm_backend_last_error());
        return NULL;
    }
    conn_unref(c);
    return &e->buft;
}

// ---------------------------------------------------------------- backend

// Guid of this core's RPC backend (our own value; guids only identify a
// backend kind inside one process).
static lm_ggml_guid rpc_guid = { 0x6c, 0x6d, 0x2d, 0x72, 0x70, 0x63, 0x2d, 0x62, 0x61, 0x63, 0x6b, 0x65, 0x6e, 0x64, 0x00, 0x01 };

static struct rpc_ep * backend_ep(lm_ggml_backend_t b) { return b->ctx; }

static const char * rpc_backend_name(lm_ggml_backend_t b) { return backend_ep(b)->name; }
static void rpc_backend_free(lm_ggml_backend_t b) { free(b); }

// Tensors of a graph name their buffer by the server's handle; all must be
// buffers of one connection, which is the one the graph goes to.
struct graph_conn {
    struct rpc_conn * conn;
};

static bool graph_buffer_of(void * user, const struct lm_ggml_tensor * t, uint64_t * handle, lm_rpc_why why) {
    struct graph_conn * gc = user;
    lm_ggml_backend_buffer_t b = t->view_src != NULL && t->view_src->buffer != NULL ? t->view_src->buffer : t->buffer;
    *handle = 0;
    if (b == NULL) {
        if (t->data == NULL || lm_ggml_nbytes(t) == 0) return true;
        snprintf(why, LM_RPC_WHY, "tensor '%s' is not in a buffer of this server", t->name);
        return false;
    }
    if (b->ops != &rpc_buffer_ops) {
        snprintf(why, LM_RPC_WHY, "tensor '%s' is in buffer %s, not in one of this server", t->name, lm_ggml_backend_buffer_name(b));
        return false;
    }
    if (gc->conn == NULL) gc->conn = rbuf(b)->conn;
    if (rbuf(b)->conn != gc->conn) {
        snprintf(why, LM_RPC_WHY, "tensor '%s' is in a buffer of another connection (the server restarted?)", t->name);
        return false;
    }
    *handle = rbuf(b)->handle;
    return true;
}

static enum lm_ggml_status rpc_graph_compute(lm_ggml_backend_t backend, struct lm_ggml_cgraph * g) {
    struct rpc_ep * e = backend_ep(backend);
    struct graph_conn gc = { NULL };
    lm_rpc_why why;
    size_t len = 0;
    uint8_t * msg = lm_rpc_graph_encode(g, graph_buffer_of, &gc, &len, why);
    if (msg == NULL) {
        lm_backend_fail("%s: %s", e->name, why);
        return LM_GGML_STATUS_FAILED;
    }
    struct rpc_conn * c = gc.conn;
    if (c != NULL) {
        atomic_fetch_add(&c->refs, 1);
    } else if ((c = ep_conn(e)) == NULL) { // a graph without data (all empty)
        free(msg);
        return LM_GGML_STATUS_FAILED;
    }
    uint8_t status = 0;
    const bool ok = rpc_call(c, LM_RPC_GRAPH_COMPUTE, msg, len, NULL, 0, &status, 1);
    free(msg);
    conn_unref(c);
    if (!ok) return LM_GGML_STATUS_FAILED;
    const enum lm_ggml_status st = (enum lm_ggml_status)(int8_t) status;
    if (st != LM_GGML_STATUS_SUCCESS) lm_backend_fail("%s: the server's compute says: %s", e->name, lm_ggml_status_to_string(st));
    return st;
}

static const struct lm_backend_ops rpc_backend_ops = {
    .name          = rpc_backend_name,
    .free          = rpc_backend_free,
    .graph_compute = rpc_graph_compute,
};

lm_ggml_backend_t lm_ggml_backend_rpc_init(const char * endpoint) {
    struct rpc_ep * e = ep_get(endpoint);
    if (e == NULL) {
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, lm_backend_last_error());
        return NULL;
    }
    lm_ggml_backend_t b = malloc(sizeof(*b));
    if (b == NULL) return NULL;
    *b = (struct lm_ggml_backend) { .guid = &rpc_guid, .ops = &rpc_backend_ops, .device = &e->dev, .ctx = e };
    return b;
}

bool lm_ggml_backend_is_rpc(lm_ggml_backend_t backend) {
    return backend != NULL && lm_ggml_guid_matches(backend->guid, &rpc_guid);
}

void lm_ggml_backend_rpc_get_device_memory(const char * endpoint, size_t * free_mem, size_t * total_mem) {
    *free_mem = 0;
    *total_mem = 0;
    struct rpc_ep * e = ep_get(endpoint);
    struct rpc_conn * c = e ? ep_conn(e) : NULL;
    uint8_t rsp[16];
    if (c != NULL && rpc_call(c, LM_RPC_GET_DEVICE_MEMORY, NULL, 0, NULL, 0, rsp, 16)) {
        *free_mem = lm_rpc_get_u64(rsp) > SIZE_MAX ? SIZE_MAX : (size_t) lm_rpc_get_u64(rsp);
        *total_mem = lm_rpc_get_u64(rsp + 8) > SIZE_MAX ? SIZE_MAX : (size_t) lm_rpc_get_u64(rsp + 8);
    }
    conn_unref(c);
}

// ---------------------------------------------------------------- device

static struct rpc_ep * dev_ep(lm_ggml_backend_dev_t d) { return d->ctx; }

static const char * rpc_dev_name(lm_ggml_backend_dev_t d) { return dev_ep(d)->name; }
static void rpc_dev_memory(lm_ggml_backend_dev_t d, size_t * free_mem, size_t * total_mem) {
    lm_ggml_backend_rpc_get_device_memory(dev_ep(d)->endpoint, free_mem, total_mem);
}
// as in ggml: a device with memory of its own
static enum lm_ggml_backend_dev_type rpc_dev_type(lm_ggml_backend_dev_t d) { (void) d; return LM_GGML_BACKEND_DEVICE_TYPE_GPU; }
static lm_ggml_backend_t rpc_dev_init(lm_ggml_backend_dev_t d, const char * params) {
    (void) params;
    return lm_ggml_backend_rpc_init(dev_ep(d)->endpoint);
}
// The endpoint's buffer type even while the server is unreachable (its
// allocations fail then); connecting first if its properties are unknown.
static lm_ggml_backend_buffer_type_t rpc_dev_buft(lm_ggml_backend_dev_t d) {
    struct rpc_ep * e = dev_ep(d);
    pthread_mutex_lock(&e->mu);
    const bool known = e->alignment != 0;
    pthread_mutex_unlock(&e->mu);
    if (!known) conn_unref(ep_conn(e));
    return &e->buft;
}
// the ops our server rebuilds (rpc-graph.c) and its CPU engine has kernels
// for (ggml rpc-server serves the CPU backend); the server decides on shapes
static bool rpc_dev_supports_op(lm_ggml_backend_dev_t d, const struct lm_ggml_tensor * op) {
    (void) d;
    return lm_rpc_op_supported(op) && lm_cpu_node_supported(op);
}
static bool rpc_dev_supports_buft(lm_ggml_backend_dev_t d, lm_ggml_backend_buffer_type_t t) { return t == &dev_ep(d)->buft; }

static const struct lm_backend_dev_ops rpc_dev_ops = {
    .name          = rpc_dev_name,
    .description   = rpc_dev_name,
    .memory        = rpc_dev_memory,
    .type          = rpc_dev_type,
    .init_backend  = rpc_dev_init,
    .buffer_type   = rpc_dev_buft,
    .supports_op   = rpc_dev_supports_op,
    .supports_buft = rpc_dev_supports_buft,
};

lm_ggml_backend_dev_t lm_ggml_backend_rpc_add_device(const char * endpoint) {
    struct rpc_ep * e = ep_get(endpoint);
    return e ? &e->dev : NULL;
}

// ---------------------------------------------------------------- registry

static const char * rpc_reg_name(lm_ggml_backend_reg_t r) { (void) r; return "RPC"; }
// devices are added by endpoint (lm_ggml_backend_rpc_add_device), not enumerated
static size_t rpc_reg_dev_count(lm_ggml_backend_reg_t r) { (void) r; return 0; }
static lm_ggml_backend_dev_t rpc_reg_dev_get(lm_ggml_backend_reg_t r, size_t i) {
    (void) r;
    lm_backend_fail("RPC: no enumerated devices (index %zu); use lm_ggml_backend_rpc_add_device", i);
    return NULL;
}
static void * rpc_reg_proc(lm_ggml_backend_reg_t r, const char * name) {
    (void) r;
    if (name != NULL && (strcmp(name, "lm_ggml_backend_rpc_add_device") == 0 || strcmp(name, "ggml_backend_rpc_add_device") == 0)) {
        return (void *) lm_ggml_backend_rpc_add_device;
    }
    return NULL;
}

static const struct lm_backend_reg_ops rpc_reg_ops = {
    .name         = rpc_reg_name,
    .dev_count    = rpc_reg_dev_count,
    .dev_get      = rpc_reg_dev_get,
    .proc_address = rpc_reg_proc,
};

lm_ggml_backend_reg_t lm_ggml_backend_rpc_reg(void) {
    static struct lm_ggml_backend_reg reg = { .api_version = LM_BACKEND_API_VERSION, .ops = &rpc_reg_ops, .ctx = NULL };
    return &reg;
}
