// rpc-server.c - serving a backend to RPC clients (see ggml-rpc.h).
//
// Each client is served on its own thread with its own table of buffers: a
// client names buffers by handles this server made up and addresses data in
// an address range this server made up per buffer (never its pointers), so it
// can neither reach nor learn of anything it did not allocate. Every request
// goes through the decoder of rpc-wire.h, sizes are bounded before anything is
// allocated, every tensor is checked against the client's buffers and every
// graph is rebuilt by rpc-graph.c before it runs. A request that breaks the
// protocol ends that client's connection (with a log line); the server and the
// other clients carry on. Graphs are computed one at a time.
// getnameinfo and NI_NUMERICHOST are POSIX, declared under -std=c11 only
// when asked for (and on macOS _POSIX_C_SOURCE alone hides the BSD names:
// _DARWIN_C_SOURCE).
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DARWIN_C_SOURCE
#define _DARWIN_C_SOURCE
#endif
#include "ggml-rpc.h"
#include "../backend/ggml-backend-impl.h"
#include "rpc-graph.h"
#include "rpc-sock.h"

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <netdb.h>
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/socket.h>
#endif
#include <unistd.h>

#define MAX_CLIENTS     64
#define IO_TIMEOUT_MS   60000  // for the rest of a request once it started, and for replies
#define CHUNK           (1 << 20) // bounce buffer for buffers that are not host memory
#define VBASE_START     ((uint64_t) 1 << 32)
#define VBASE_GAP       ((uint64_t) 1 << 20)

struct rpc_buf {
    uint64_t handle; // the client's name for it
    uint64_t vbase;  // the address of its first byte, as the client sees it
    size_t   size;
    lm_ggml_backend_buffer_t buf;
    uint8_t * host;  // its memory when it is host memory, else NULL
};

struct rpc_client {
    struct lm_rpc_server * srv;
    int fd;
    char peer[80];
    struct rpc_buf * bufs;
    size_t n_bufs, cap_bufs;
    uint64_t next_vbase;
    struct rpc_client * next; // in srv->clients
};

struct lm_rpc_server {
    lm_ggml_backend_t backend;
    lm_ggml_backend_buffer_type_t buft;
    size_t free_mem, total_mem;
    struct lm_rpc_limits lim;

    pthread_mutex_t mu; // what follows
    size_t used;
    uint64_t next_handle;
    bool stopping;
    int n_clients;
    struct rpc_client * clients;

    pthread_mutex_t compute_mu; // one graph at a time on the backend
    atomic_bool aborting;       // set by lm_rpc_server_stop: a graph being computed stops
    lm_ggml_backend_set_abort_callback_t set_abort; // the backend's, if it has one
};

static bool server_aborting(void * p) { return atomic_load(&((struct lm_rpc_server *) p)->aborting); }

// ---------------------------------------------------------------- server object

struct lm_rpc_server * lm_rpc_server_new(lm_ggml_backend_t backend, size_t free_mem, size_t total_mem) {
    if (backend == NULL) return NULL;
    struct lm_rpc_server * s = calloc(1, sizeof(*s));
    if (s == NULL) return NULL;
    s->backend = backend;
    s->buft = lm_ggml_backend_get_default_buffer_type(backend);
    s->free_mem = free_mem;
    s->total_mem = total_mem;
    // a SET_TENSOR carries at most a whole buffer, and no buffer is larger than what the server hands out
    s->lim.max_set_data = total_mem ? total_mem : (uint64_t) SIZE_MAX;
    s->lim.max_graph_bytes = LM_RPC_DEFAULT_MAX_GRAPH_BYTES;
    s->next_handle = 0x5250430000000001ULL; // 'RPC': any non-zero start will do
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->compute_mu, NULL);
    atomic_init(&s->aborting, false);
    // stopping the server stops a long graph too, where the backend allows
    lm_ggml_backend_dev_t dev = lm_ggml_backend_get_device(backend);
    lm_ggml_backend_reg_t reg = dev ? lm_ggml_backend_dev_backend_reg(dev) : NULL;
    s->set_abort = reg ? (lm_ggml_backend_set_abort_callback_t) lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_set_abort_callback") : NULL;
    if (s->set_abort) s->set_abort(backend, server_aborting, s);
    return s;
}

void lm_rpc_server_stop(struct lm_rpc_server * s) {
    if (s == NULL) return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    atomic_store(&s->aborting, true);
    for (struct rpc_client * c = s->clients; c != NULL; c = c->next) {
        lm_rpc_shutdown(c->fd); // wakes the client's thread; it closes the fd itself
    }
    pthread_mutex_unlock(&s->mu);
}

void lm_rpc_server_free(struct lm_rpc_server * s) {
    if (s == NULL) return;
    if (s->set_abort) s->set_abort(s->backend, NULL, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->compute_mu);
    free(s);
}

size_t lm_rpc_server_used(struct lm_rpc_server * s) {
    pthread_mutex_lock(&s->mu);
    const size_t u = s->used;
    pthread_mutex_unlock(&s->mu);
    return u;
}

LM_GGML_ATTRIBUTE_FORMAT(2, 3)
static bool drop(const struct rpc_client * c, const char * fmt, ...) {
    char msg[LM_RPC_WHY];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    LM_GGML_LOG_WARN("rpc-server: client %s dropped: %s\n", c->peer, msg);
    return false;
}

// ---------------------------------------------------------------- the client's buffers

static struct rpc_buf * find_buf(struct rpc_client * c, uint64_t handle) {
    for (size_t i = 0; i < c->n_bufs; i++) {
        if (c->bufs[i].handle == handle) return &c->bufs[i];
    }
    return NULL;
}

static void release_buf(struct rpc_client * c, struct rpc_buf * b) {
    lm_ggml_backend_buffer_free(b->buf);
    pthread_mutex_lock(&c->srv->mu);
    c->srv->used -= b->size;
    pthread_mutex_unlock(&c->srv->mu);
    *b = c->bufs[--c->n_bufs];
}

// Where [addr, addr + n) of buffer b lies in this process, or NULL if it is
// not inside b.
static uint64_t buf_offset(const struct rpc_buf * b, uint64_t addr, uint64_t n, bool * ok) {
    *ok = addr >= b->vbase && addr - b->vbase <= b->size && n <= b->size - (addr - b->vbase);
    return *ok ? addr - b->vbase : 0;
}

// A received tensor that must lie inside one of the client's buffers (the one it names).
static struct rpc_buf * tensor_buf(struct rpc_client * c, const struct lm_rpc_tensor * t, lm_rpc_why why) {
    struct rpc_buf * b = find_buf(c, t->buffer);
    if (b == NULL) {
        snprintf(why, LM_RPC_WHY, "tensor '%s' names buffer %#llx, which is not one of this client's", t->name,
                 (unsigned long long) t->buffer);
        return NULL;
    }
    bool ok;
    (void) buf_offset(b, t->data, t->extent, &ok);
    if (!ok) {
        snprintf(why, LM_RPC_WHY, "tensor '%s' ([%#llx, +%llu)) is not inside its buffer ([%#llx, +%zu))", t->name,
                 (unsigned long long) t->data, (unsigned long long) t->extent, (unsigned long long) b->vbase, b->size);
        return NULL;
    }
    return b;
}

// A tensor of this process for a checked received one (data in b).
static void local_tensor(struct lm_ggml_tensor * x, const struct lm_rpc_tensor * t, const struct rpc_buf * b) {
    memset(x, 0, sizeof(*x));
    x->type = (enum lm_ggml_type) t->type;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        x->ne[i] = t->ne[i];
        x->nb[i] = t->nb[i];
    }
    x->buffer = b->buf;
    x->data = (char *) lm_ggml_backend_buffer_get_base(b->buf) + (t->data - b->vbase);
    memcpy(x->name, t->name, sizeof(x->name));
}

// The graph builder's view of the client's buffers.
static bool resolve(void * user, const struct lm_rpc_tensor * t, void ** data, lm_ggml_backend_buffer_t * buf, lm_rpc_why why) {
    struct rpc_client * c = user;
    if (t->buffer == 0) {
        // only a tensor with no bytes may have no memory
        if (t->extent != 0) {
            snprintf(why, LM_RPC_WHY, "tensor '%s' has data but no buffer", t->name);
            return false;
        }
        *data = NULL;
        *buf = NULL;
        return true;
    }
    struct rpc_buf * b = tensor_buf(c, t, why);
    if (b == NULL) return false;
    *data = (char *) lm_ggml_backend_buffer_get_base(b->buf) + (t->data - b->vbase);
    *buf = b->buf;
    return true;
}

// ---------------------------------------------------------------- replies

static bool reply(struct rpc_client * c, const void * p, size_t n) {
    uint8_t hdr[8];
    lm_rpc_put_u64(hdr, n);
    lm_rpc_why why;
    if (!lm_rpc_send_all(c->fd, hdr, sizeof(hdr), IO_TIMEOUT_MS, why) || !lm_rpc_send_all(c->fd, p, n, IO_TIMEOUT_MS, why)) {
        return drop(c, "reply: %s", why);
    }
    return true;
}

static bool reply_u64(struct rpc_client * c, uint64_t v) {
    uint8_t b[8];
    lm_rpc_put_u64(b, v);
    return reply(c, b, sizeof(b));
}

static bool reply_u64x2(struct rpc_client * c, uint64_t a, uint64_t b) {
    uint8_t p[16];
    lm_rpc_put_u64(p, a);
    lm_rpc_put_u64(p + 8, b);
    return reply(c, p, sizeof(p));
}

static bool reply_u8(struct rpc_client * c, uint8_t v) { return reply(c, &v, 1); }

// ---------------------------------------------------------------- commands

static bool do_alloc(struct rpc_client * c, uint64_t size) {
    struct lm_rpc_server * s = c->srv;
    bool fits;
    pthread_mutex_lock(&s->mu);
    fits = size <= SIZE_MAX && (s->total_mem == 0 || (s->used <= s->total_mem && size <= s->total_mem - s->used));
    if (fits) s->used += (size_t) size;
    const uint64_t handle = s->next_handle++;
    pthread_mutex_unlock(&s->mu);

    lm_ggml_backend_buffer_t buf = NULL;
    struct rpc_buf * slot = NULL;
    if (fits && c->n_bufs == c->cap_bufs) {
        const size_t cap = c->cap_bufs ? 2 * c->cap_bufs : 16;
        struct rpc_buf * bigger = realloc(c->bufs, cap * sizeof(*bigger));
        if (bigger != NULL) {
            c->bufs = bigger;
            c->cap_bufs = cap;
        }
    }
    const size_t align = lm_ggml_backend_buft_get_alignment(s->buft);
    const uint64_t vgran = align > 4096 ? align : 4096;
    const uint64_t vbase = (c->next_vbase + vgran - 1) / vgran * vgran;
    if (fits && c->n_bufs < c->cap_bufs && vbase >= c->next_vbase && vbase + size + VBASE_GAP > vbase) {
        struct lm_ggml_err_frame f;
        if (LM_GGML_TRY(&f)) {
            LM_GGML_LOG_WARN("rpc-server: client %s: allocation of %llu bytes failed: %s\n", c->peer, (unsigned long long) size, f.msg);
            buf = NULL;
        } else {
            buf = lm_ggml_backend_buft_alloc_buffer(s->buft, (size_t) size);
            lm_ggml_err_pop(&f);
        }
    }
    if (buf == NULL) {
        if (fits) {
            pthread_mutex_lock(&s->mu);
            s->used -= (size_t) size;
            pthread_mutex_unlock(&s->mu);
        }
        LM_GGML_LOG_INFO("rpc-server: client %s: cannot allocate %llu bytes\n", c->peer, (unsigned long long) size);
        return reply_u64x2(c, 0, 0); // the protocol's "allocation failed"
    }
    slot = &c->bufs[c->n_bufs++];
    slot->handle = handle;
    slot->vbase = vbase;
    slot->size = (size_t) size;
    slot->buf = buf;
    slot->host = lm_ggml_backend_buffer_is_host(buf) ? lm_ggml_backend_buffer_get_base(buf) : NULL;
    c->next_vbase = vbase + size + VBASE_GAP;
    return reply_u64x2(c, handle, size);
}

static bool do_buffer_cmd(struct rpc_client * c, const struct lm_rpc_request * r) {
    struct rpc_buf * b = find_buf(c, r->u64);
    if (b == NULL) return drop(c, "%s: buffer %#llx is not one of this client's", lm_rpc_cmds[r->cmd].name, (unsigned long long) r->u64);
    switch (r->cmd) {
        case LM_RPC_BUFFER_GET_BASE:
            return reply_u64(c, b->vbase);
        case LM_RPC_FREE_BUFFER:
            release_buf(c, b);
            return reply(c, NULL, 0);
        default: { // BUFFER_CLEAR
            struct lm_ggml_err_frame f;
            if (LM_GGML_TRY(&f)) return drop(c, "BUFFER_CLEAR: %s", f.msg);
            lm_ggml_backend_buffer_clear(b->buf, r->value);
            lm_ggml_err_pop(&f);
            return reply(c, NULL, 0);
        }
    }
}

// The checked target of SET_TENSOR / GET_TENSOR: [data + offset, + size) inside
// the tensor's buffer, as ggml's server requires.
static struct rpc_buf * access_target(struct rpc_client * c, const struct lm_rpc_request * r, uint64_t * at, lm_rpc_why why) {
    struct rpc_buf * b = tensor_buf(c, &r->tensor, why);
    if (b == NULL) return NULL;
    bool ok;
    const uint64_t start = r->tensor.data + r->offset;
    *at = start >= r->tensor.data ? buf_offset(b, start, r->size, &ok) : (ok = false, 0);
    if (!ok) {
        snprintf(why, LM_RPC_WHY, "tensor '%s': %llu bytes at offset %llu are outside its buffer", r->tensor.name,
                 (unsigned long long) r->size, (unsigned long long) r->offset);
        return NULL;
    }
    return b;
}

// Moves n bytes between the socket and buffer b at offset off, through a
// bounce buffer unless b is host memory.
static bool stream(struct rpc_client * c, struct rpc_buf * b, uint64_t off, uint64_t n, bool into_buffer, lm_rpc_why why) {
    if (b->host != NULL) {
        return into_buffer ? lm_rpc_recv_all(c->fd, b->host + off, (size_t) n, IO_TIMEOUT_MS, why)
                           : lm_rpc_send_all(c->fd, b->host + off, (size_t) n, IO_TIMEOUT_MS, why);
    }
    uint8_t * tmp = malloc(n < CHUNK ? (n ? n : 1) : CHUNK);
    if (tmp == NULL) {
        snprintf(why, LM_RPC_WHY, "out of memory");
        return false;
    }
    // a flat byte view of the buffer for the backend's tensor functions
    struct lm_ggml_tensor flat;
    memset(&flat, 0, sizeof(flat));
    flat.type = LM_GGML_TYPE_I8;
    flat.ne[0] = (int64_t) b->size;
    flat.ne[1] = flat.ne[2] = flat.ne[3] = 1;
    flat.nb[0] = 1;
    flat.nb[1] = flat.nb[2] = flat.nb[3] = b->size;
    flat.buffer = b->buf;
    flat.data = lm_ggml_backend_buffer_get_base(b->buf);
    bool ok = true;
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        snprintf(why, LM_RPC_WHY, "%s", f.msg);
        free(tmp);
        return false;
    }
    for (uint64_t done = 0; ok && done < n;) {
        const size_t k = n - done < CHUNK ? (size_t)(n - done) : CHUNK;
        if (into_buffer) {
            ok = lm_rpc_recv_all(c->fd, tmp, k, IO_TIMEOUT_MS, why);
            if (ok) lm_ggml_backend_tensor_set(&flat, tmp, (size_t)(off + done), k);
        } else {
            lm_ggml_backend_tensor_get(&flat, tmp, (size_t)(off + done), k);
            ok = lm_rpc_send_all(c->fd, tmp, k, IO_TIMEOUT_MS, why);
        }
        done += k;
    }
    lm_ggml_err_pop(&f);
    free(tmp);
    return ok;
}

static bool do_set_tensor(struct rpc_client * c, const struct lm_rpc_request * r) {
    lm_rpc_why why;
    uint64_t at;
    struct rpc_buf * b = access_target(c, r, &at, why);
    if (b == NULL) return drop(c, "SET_TENSOR: %s", why);
    if (!stream(c, b, at, r->size, true, why)) return drop(c, "SET_TENSOR: %s", why);
    return reply(c, NULL, 0);
}

static bool do_get_tensor(struct rpc_client * c, const struct lm_rpc_request * r) {
    lm_rpc_why why;
    uint64_t at;
    struct rpc_buf * b = access_target(c, r, &at, why);
    if (b == NULL) return drop(c, "GET_TENSOR: %s", why);
    uint8_t hdr[8];
    lm_rpc_put_u64(hdr, r->size);
    if (!lm_rpc_send_all(c->fd, hdr, sizeof(hdr), IO_TIMEOUT_MS, why) || !stream(c, b, at, r->size, false, why)) {
        return drop(c, "GET_TENSOR: %s", why);
    }
    return true;
}

// ggml's server copies all of src's bytes to dst's address; done = 0 when
// that does not fit (the client then copies through itself).
static bool do_copy_tensor(struct rpc_client * c, const struct lm_rpc_request * r) {
    lm_rpc_why why;
    struct rpc_buf * sb = tensor_buf(c, &r->tensor, why);
    struct rpc_buf * db = sb ? tensor_buf(c, &r->dst, why) : NULL;
    if (db == NULL) return drop(c, "COPY_TENSOR: %s", why);
    struct lm_ggml_tensor src, dst;
    local_tensor(&src, &r->tensor, sb);
    local_tensor(&dst, &r->dst, db);
    const size_t n = lm_ggml_nbytes(&src);
    bool fits;
    (void) buf_offset(db, r->dst.data, n, &fits);
    if (!fits || sb->host == NULL || db->host == NULL) return reply_u8(c, 0);
    memmove(dst.data, src.data, n);
    return reply_u8(c, 1);
}

static bool do_graph_compute(struct rpc_client * c, const uint8_t * p, size_t n) {
    lm_rpc_why why;
    struct lm_rpc_graph * g = lm_rpc_graph_decode(p, n, why);
    if (g == NULL) return drop(c, "GRAPH_COMPUTE: %s", why);
    struct lm_rpc_built b;
    const enum lm_rpc_build_status st = lm_rpc_graph_build(g, resolve, c, &b, why);
    const uint32_t n_nodes = g->n_nodes;
    lm_rpc_graph_free(g);
    if (st == LM_RPC_MALFORMED) return drop(c, "GRAPH_COMPUTE: %s", why);
    if (st == LM_RPC_REFUSED) {
        LM_GGML_LOG_WARN("rpc-server: client %s: graph of %u nodes refused: %s\n", c->peer, n_nodes, why);
        return reply_u8(c, (uint8_t)(int8_t) LM_GGML_STATUS_FAILED);
    }
    enum lm_ggml_status status = LM_GGML_STATUS_FAILED;
    pthread_mutex_lock(&c->srv->compute_mu);
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        LM_GGML_LOG_WARN("rpc-server: client %s: graph compute failed: %s\n", c->peer, f.msg);
    } else {
        status = lm_ggml_backend_graph_compute(c->srv->backend, b.graph);
        lm_ggml_err_pop(&f);
    }
    pthread_mutex_unlock(&c->srv->compute_mu);
    lm_rpc_built_free(&b);
    return reply_u8(c, (uint8_t)(int8_t) status);
}

static bool do_device_memory(struct rpc_client * c) {
    struct lm_rpc_server * s = c->srv;
    pthread_mutex_lock(&s->mu);
    size_t free_mem = s->free_mem;
    if (s->total_mem != 0) {
        const size_t left = s->used < s->total_mem ? s->total_mem - s->used : 0;
        if (left < free_mem) free_mem = left;
    }
    pthread_mutex_unlock(&s->mu);
    return reply_u64x2(c, free_mem, s->total_mem);
}

// One request (after its 9-byte header); false ends the connection.
static bool serve_one(struct rpc_client * c, uint8_t cmd, uint64_t size) {
    struct lm_rpc_server * s = c->srv;
    lm_rpc_why why;
    uint64_t prefix;
    if (!lm_rpc_check_header(cmd, size, &s->lim, &prefix, why)) return drop(c, "%s", why);
    uint8_t small[2 * LM_RPC_TENSOR_SIZE];
    uint8_t * p = prefix <= sizeof(small) ? small : malloc((size_t) prefix);
    if (p == NULL) return drop(c, "%s: out of memory for %llu bytes", lm_rpc_cmds[cmd].name, (unsigned long long) prefix);
    bool ok = lm_rpc_recv_all(c->fd, p, (size_t) prefix, IO_TIMEOUT_MS, why) || drop(c, "%s: %s", lm_rpc_cmds[cmd].name, why);
    struct lm_rpc_request r;
    if (ok && cmd != LM_RPC_GRAPH_COMPUTE) {
        ok = lm_rpc_request_decode(cmd, p, (size_t) prefix, size, &r, why) || drop(c, "%s", why);
    }
    if (ok) {
        switch ((enum lm_rpc_cmd) cmd) {
            case LM_RPC_ALLOC_BUFFER:      ok = do_alloc(c, r.u64); break;
            case LM_RPC_GET_ALIGNMENT:     ok = reply_u64(c, lm_ggml_backend_buft_get_alignment(s->buft)); break;
            case LM_RPC_GET_MAX_SIZE: {
                size_t m = lm_ggml_backend_buft_get_max_size(s->buft);
                if (s->total_mem != 0 && s->total_mem < m) m = s->total_mem;
                ok = reply_u64(c, m);
                break;
            }
            case LM_RPC_BUFFER_GET_BASE:
            case LM_RPC_FREE_BUFFER:
            case LM_RPC_BUFFER_CLEAR:      ok = do_buffer_cmd(c, &r); break;
            case LM_RPC_SET_TENSOR:        ok = do_set_tensor(c, &r); break;
            case LM_RPC_GET_TENSOR:        ok = do_get_tensor(c, &r); break;
            case LM_RPC_COPY_TENSOR:       ok = do_copy_tensor(c, &r); break;
            case LM_RPC_GRAPH_COMPUTE:     ok = do_graph_compute(c, p, (size_t) prefix); break;
            case LM_RPC_GET_DEVICE_MEMORY: ok = do_device_memory(c); break;
            default:                       ok = drop(c, "unknown command %u", cmd); break;
        }
    }
    if (p != small) free(p);
    return ok;
}

static void peer_name(int fd, char * out, size_t n) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[64] = "?", port[16] = "?";
#ifdef _WIN32
    if (getpeername((SOCKET) (intptr_t) fd, (struct sockaddr *) &ss, &len) == 0) {
#else
    if (getpeername(fd, (struct sockaddr *) &ss, &len) == 0) {
#endif
        getnameinfo((struct sockaddr *) &ss, len, host, sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
    }
    snprintf(out, n, "%s:%s", host, port);
}

void lm_rpc_server_serve(struct lm_rpc_server * s, int fd) {
    if (s == NULL || fd < 0) {
        if (fd >= 0) lm_rpc_close(fd);
        return;
    }
    lm_rpc_sock_setup(fd);
    struct rpc_client c = { .srv = s, .fd = fd, .next_vbase = VBASE_START };
    peer_name(fd, c.peer, sizeof(c.peer));

    pthread_mutex_lock(&s->mu);
    const bool admit = !s->stopping && s->n_clients < MAX_CLIENTS;
    if (admit) {
        c.next = s->clients;
        s->clients = &c;
        s->n_clients++;
    }
    pthread_mutex_unlock(&s->mu);
    if (!admit) {
        LM_GGML_LOG_WARN("rpc-server: client %s refused: %s\n", c.peer, s->stopping ? "stopping" : "too many clients");
        lm_rpc_close(fd);
        return;
    }
    LM_GGML_LOG_INFO("rpc-server: client %s connected\n", c.peer);

    for (;;) {
        uint8_t hdr[9];
        lm_rpc_why why;
        // between requests a client may idle as long as it likes
        if (!lm_rpc_recv_all(fd, hdr, 1, 0, why)) {
            LM_GGML_LOG_INFO("rpc-server: client %s left (%s)\n", c.peer, why);
            break;
        }
        if (!lm_rpc_recv_all(fd, hdr + 1, 8, IO_TIMEOUT_MS, why)) {
            drop(&c, "request header: %s", why);
            break;
        }
        if (!serve_one(&c, hdr[0], lm_rpc_get_u64(hdr + 1))) break;
    }

    while (c.n_bufs > 0) release_buf(&c, &c.bufs[c.n_bufs - 1]);
    free(c.bufs);
    pthread_mutex_lock(&s->mu);
    for (struct rpc_client ** pp = &s->clients; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == &c) {
            *pp = c.next;
            break;
        }
    }
    s->n_clients--;
    pthread_mutex_unlock(&s->mu);
    lm_rpc_close(fd);
}

// ---------------------------------------------------------------- ggml's entry point

struct serve_arg {
    struct lm_rpc_server * srv;
    int fd;
};

static void * serve_thread(void * p) {
    struct serve_arg a = *(struct serve_arg *) p;
    free(p);
    lm_rpc_server_serve(a.srv, a.fd);
    return NULL;
}

void lm_ggml_backend_rpc_start_server(lm_ggml_backend_t backend, const char * endpoint, size_t free_mem, size_t total_mem) {
    lm_rpc_why why;
    const int lfd = lm_rpc_listen(endpoint, why);
    if (lfd < 0) {
        LM_GGML_LOG_ERROR("rpc-server: %s\n", why);
        return;
    }
    struct lm_rpc_server * s = lm_rpc_server_new(backend, free_mem, total_mem);
    if (s == NULL) {
        lm_rpc_close(lfd);
        return;
    }
    LM_GGML_LOG_INFO("rpc-server: listening on %s (port %d), %zu MiB\n", endpoint, lm_rpc_local_port(lfd), total_mem >> 20);
    for (;;) {
#ifdef _WIN32
        const int fd = (int) (intptr_t) accept((SOCKET) (intptr_t) lfd, NULL, NULL);
#else
        const int fd = accept(lfd, NULL, NULL);
#endif
        if (fd < 0) continue; // EINTR, a connection reset before accept, out of fds: keep serving
        struct serve_arg * a = malloc(sizeof(*a));
        pthread_t th;
        if (a == NULL) {
            lm_rpc_close(fd);
            continue;
        }
        a->srv = s;
        a->fd = fd;
        if (pthread_create(&th, NULL, serve_thread, a) != 0) {
            free(a);
            lm_rpc_close(fd);
            continue;
        }
        pthread_detach(th);
    }
}
