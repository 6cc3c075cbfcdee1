// rpc-wire.c - encoding and the validating decoder of RPC messages (see rpc-wire.h).
// strnlen is POSIX, declared under -std=c11 only when asked for (and on
// macOS _POSIX_C_SOURCE alone hides the BSD names: _DARWIN_C_SOURCE).
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DARWIN_C_SOURCE
#define _DARWIN_C_SOURCE
#endif
#include "rpc-wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct lm_rpc_cmd_info lm_rpc_cmds[LM_RPC_CMD_COUNT] = {
    [LM_RPC_ALLOC_BUFFER]      = { "ALLOC_BUFFER",      8,                     16 },
    [LM_RPC_GET_ALIGNMENT]     = { "GET_ALIGNMENT",     0,                     8 },
    [LM_RPC_GET_MAX_SIZE]      = { "GET_MAX_SIZE",      0,                     8 },
    [LM_RPC_BUFFER_GET_BASE]   = { "BUFFER_GET_BASE",   8,                     8 },
    [LM_RPC_FREE_BUFFER]       = { "FREE_BUFFER",       8,                     0 },
    [LM_RPC_BUFFER_CLEAR]      = { "BUFFER_CLEAR",      9,                     0 },
    [LM_RPC_SET_TENSOR]        = { "SET_TENSOR",        LM_RPC_VARIABLE,       0 },
    [LM_RPC_GET_TENSOR]        = { "GET_TENSOR",        LM_RPC_TENSOR_SIZE + 16, LM_RPC_VARIABLE },
    [LM_RPC_COPY_TENSOR]       = { "COPY_TENSOR",       2 * LM_RPC_TENSOR_SIZE, 1 },
    [LM_RPC_GRAPH_COMPUTE]     = { "GRAPH_COMPUTE",     LM_RPC_VARIABLE,       1 },
    [LM_RPC_GET_DEVICE_MEMORY] = { "GET_DEVICE_MEMORY", 0,                     16 },
};

LM_GGML_ATTRIBUTE_FORMAT(2, 3)
static bool fail(lm_rpc_why why, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, LM_RPC_WHY, fmt, ap);
    va_end(ap);
    return false;
}

// ---------------------------------------------------------------- tensors

enum {
    OFF_ID = 0, OFF_TYPE = 8, OFF_BUFFER = 12, OFF_NE = 20, OFF_NB = 36, OFF_OP = 52,
    OFF_PARAMS = 56, OFF_FLAGS = 120, OFF_SRC = 124, OFF_VIEW_SRC = 204, OFF_VIEW_OFFS = 212,
    OFF_DATA = 220, OFF_NAME = 228, OFF_END = 292,
};
_Static_assert(OFF_PARAMS + LM_GGML_MAX_OP_PARAMS == OFF_FLAGS, "op_params");
_Static_assert(OFF_SRC + 8 * LM_GGML_MAX_SRC == OFF_VIEW_SRC, "src");
_Static_assert(OFF_NAME + LM_GGML_MAX_NAME == OFF_END && OFF_END + 4 == LM_RPC_TENSOR_SIZE, "name");

void lm_rpc_tensor_encode(uint8_t out[LM_RPC_TENSOR_SIZE], const struct lm_rpc_tensor * t) {
    memset(out, 0, LM_RPC_TENSOR_SIZE);
    lm_rpc_put_u64(out + OFF_ID, t->id);
    lm_rpc_put_u32(out + OFF_TYPE, t->type);
    lm_rpc_put_u64(out + OFF_BUFFER, t->buffer);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        lm_rpc_put_u32(out + OFF_NE + 4 * i, t->ne[i]);
        lm_rpc_put_u32(out + OFF_NB + 4 * i, t->nb[i]);
    }
    lm_rpc_put_u32(out + OFF_OP, t->op);
    for (int i = 0; i < LM_RPC_N_OP_PARAMS; i++) {
        lm_rpc_put_u32(out + OFF_PARAMS + 4 * i, (uint32_t) t->op_params[i]);
    }
    lm_rpc_put_u32(out + OFF_FLAGS, (uint32_t) t->flags);
    for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
        lm_rpc_put_u64(out + OFF_SRC + 8 * i, t->src[i]);
    }
    lm_rpc_put_u64(out + OFF_VIEW_SRC, t->view_src);
    lm_rpc_put_u64(out + OFF_VIEW_OFFS, t->view_offs);
    lm_rpc_put_u64(out + OFF_DATA, t->data);
    memcpy(out + OFF_NAME, t->name, strnlen(t->name, LM_GGML_MAX_NAME - 1));
}

// The bytes from data a kernel may touch. Two readings of the strides are
// covered: element by element (the last element's offset plus one element),
// and rows of whole blocks read contiguously (what quantized rows and
// row-wise kernels do, whatever nb[0] says). The larger one bounds both.
static bool tensor_extent(struct lm_rpc_tensor * t, lm_rpc_why why) {
    t->extent = 0;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (t->ne[i] == 0) return true;
    }
    const uint64_t ts = lm_ggml_type_size((enum lm_ggml_type) t->type);
    const uint64_t blck = (uint64_t) lm_ggml_blck_size((enum lm_ggml_type) t->type);
    if (t->ne[0] % blck != 0) {
        return fail(why, "tensor '%s': ne[0] = %u is not a whole number of %s blocks", t->name, t->ne[0],
                    lm_ggml_type_name((enum lm_ggml_type) t->type));
    }
    // a count of elements that fits in int64 (strides of 0 keep the extent small)
    uint64_t nel = 1;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (nel > (uint64_t) INT64_MAX / t->ne[i]) return fail(why, "tensor '%s': too many elements", t->name);
        nel *= t->ne[i];
    }
    // each term below is < 2^64: products of two u32s, or of a u32 and a type size < 2^16
    const uint64_t row = t->ne[0] / blck * ts;
    const uint64_t strided = blck == 1 ? ts + (uint64_t)(t->ne[0] - 1) * t->nb[0] : (uint64_t) t->ne[0] * t->nb[0] / blck;
    uint64_t ext = row > strided ? row : strided;
    for (int i = 1; i < LM_GGML_MAX_DIMS; i++) {
        const uint64_t d = (uint64_t)(t->ne[i] - 1) * t->nb[i];
        if (ext + d < ext) return fail(why, "tensor '%s': size overflows", t->name);
        ext += d;
    }
    if (t->data + ext < t->data) return fail(why, "tensor '%s': data + size overflows", t->name);
    // kernels load elements (and the fields of blocks) as their C types: the
    // address and every stride that is used must keep them naturally aligned
    uint64_t align = 1;
    while (align < 8 && ts % (2 * align) == 0) align *= 2;
    bool aligned = t->data % align == 0;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) aligned = aligned && (t->ne[i] == 1 || t->nb[i] % align == 0);
    if (!aligned) return fail(why, "tensor '%s': data or strides not aligned to %llu bytes", t->name, (unsigned long long) align);
    t->extent = ext;
    return true;
}

bool lm_rpc_tensor_decode(const uint8_t in[LM_RPC_TENSOR_SIZE], struct lm_rpc_tensor * t, lm_rpc_why why) {
    memset(t, 0, sizeof(*t));
    t->id     = lm_rpc_get_u64(in + OFF_ID);
    t->type   = lm_rpc_get_u32(in + OFF_TYPE);
    t->buffer = lm_rpc_get_u64(in + OFF_BUFFER);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        t->ne[i] = lm_rpc_get_u32(in + OFF_NE + 4 * i);
        t->nb[i] = lm_rpc_get_u32(in + OFF_NB + 4 * i);
    }
    t->op = lm_rpc_get_u32(in + OFF_OP);
    for (int i = 0; i < LM_RPC_N_OP_PARAMS; i++) {
        t->op_params[i] = (int32_t) lm_rpc_get_u32(in + OFF_PARAMS + 4 * i);
    }
    t->flags = (int32_t) lm_rpc_get_u32(in + OFF_FLAGS);
    for (int i = 0; i < LM_GGML_MAX_SRC; i++) {
        t->src[i] = lm_rpc_get_u64(in + OFF_SRC + 8 * i);
        t->src_idx[i] = -1;
    }
    t->view_src  = lm_rpc_get_u64(in + OFF_VIEW_SRC);
    t->view_offs = lm_rpc_get_u64(in + OFF_VIEW_OFFS);
    t->data      = lm_rpc_get_u64(in + OFF_DATA);
    t->view_idx  = -1;
    memcpy(t->name, in + OFF_NAME, LM_GGML_MAX_NAME - 1); // a name without its NUL is cut, not refused
    t->name[LM_GGML_MAX_NAME - 1] = '\0';

    if (t->type >= LM_GGML_TYPE_COUNT || lm_ggml_blck_size((enum lm_ggml_type) t->type) <= 0 ||
        lm_ggml_type_size((enum lm_ggml_type) t->type) == 0) {
        return fail(why, "tensor '%s': unknown type %u", t->name, t->type);
    }
    if (t->op >= LM_GGML_OP_COUNT) {
        return fail(why, "tensor '%s': unknown op %u", t->name, t->op);
    }
    return tensor_extent(t, why);
}

// ---------------------------------------------------------------- requests

bool lm_rpc_check_header(uint8_t cmd, uint64_t size, const struct lm_rpc_limits * lim, uint64_t * prefix, lm_rpc_why why) {
    *prefix = 0;
    if (cmd >= LM_RPC_CMD_COUNT) {
        return fail(why, "unknown command %u", cmd);
    }
    const struct lm_rpc_cmd_info * c = &lm_rpc_cmds[cmd];
    if (c->request != LM_RPC_VARIABLE) {
        if (size != (uint64_t) c->request) {
            return fail(why, "%s: %llu bytes, expected %d", c->name, (unsigned long long) size, c->request);
        }
        *prefix = size;
        return true;
    }
    if (cmd == LM_RPC_SET_TENSOR) {
        if (size < LM_RPC_SET_TENSOR_HEADER || size - LM_RPC_SET_TENSOR_HEADER > lim->max_set_data) {
            return fail(why, "SET_TENSOR: %llu bytes, allowed %d to %llu", (unsigned long long) size,
                        LM_RPC_SET_TENSOR_HEADER, (unsigned long long) (lim->max_set_data + LM_RPC_SET_TENSOR_HEADER));
        }
        *prefix = LM_RPC_SET_TENSOR_HEADER;
        return true;
    }
    // GRAPH_COMPUTE: the smallest graph is two zero counts
    if (size < 8 || size > lim->max_graph_bytes) {
        return fail(why, "GRAPH_COMPUTE: %llu bytes, allowed 8 to %llu", (unsigned long long) size,
                    (unsigned long long) lim->max_graph_bytes);
    }
    *prefix = size;
    return true;
}

bool lm_rpc_request_decode(uint8_t cmd, const uint8_t * p, size_t n, uint64_t total, struct lm_rpc_request * r, lm_rpc_why why) {
    memset(r, 0, sizeof(*r));
    if (cmd >= LM_RPC_CMD_COUNT || cmd == LM_RPC_GRAPH_COMPUTE) {
        return fail(why, "command %u has no fixed layout", cmd);
    }
    r->cmd = (enum lm_rpc_cmd) cmd;
    const int32_t want = cmd == LM_RPC_SET_TENSOR ? LM_RPC_SET_TENSOR_HEADER : lm_rpc_cmds[cmd].request;
    if (n != (size_t) want || total < n) {
        return fail(why, "%s: %zu bytes, expected %d", lm_rpc_cmds[cmd].name, n, want);
    }
    switch (r->cmd) {
        case LM_RPC_ALLOC_BUFFER:
        case LM_RPC_BUFFER_GET_BASE:
        case LM_RPC_FREE_BUFFER:
            r->u64 = lm_rpc_get_u64(p);
            return true;
        case LM_RPC_BUFFER_CLEAR:
            r->u64 = lm_rpc_get_u64(p);
            r->value = p[8];
            return true;
        case LM_RPC_SET_TENSOR:
            r->offset = lm_rpc_get_u64(p + LM_RPC_TENSOR_SIZE);
            r->size = total - n;
            return lm_rpc_tensor_decode(p, &r->tensor, why);
        case LM_RPC_GET_TENSOR:
            r->offset = lm_rpc_get_u64(p + LM_RPC_TENSOR_SIZE);
            r->size = lm_rpc_get_u64(p + LM_RPC_TENSOR_SIZE + 8);
            return lm_rpc_tensor_decode(p, &r->tensor, why);
        case LM_RPC_COPY_TENSOR:
            return lm_rpc_tensor_decode(p, &r->tensor, why) && lm_rpc_tensor_decode(p + LM_RPC_TENSOR_SIZE, &r->dst, why);
        default: // no payload
            return true;
    }
}

// ---------------------------------------------------------------- graphs

// Open addressing from tensor id to index; capacity a power of two >= 2n.
struct id_map {
    uint64_t * keys; // 0 = empty (ids are non-zero)
    int32_t  * vals;
    size_t     mask;
};

static size_t id_slot(uint64_t id, size_t mask) {
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdULL; // a 64-bit finalizer (MurmurHash3's constants)
    id ^= id >> 33;
    return (size_t) id & mask;
}

static int32_t id_find(const struct id_map * m, uint64_t id) {
    for (size_t s = id_slot(id, m->mask);; s = (s + 1) & m->mask) {
        if (m->keys[s] == 0) return -1;
        if (m->keys[s] == id) return m->vals[s];
    }
}

static bool id_insert(struct id_map * m, uint64_t id, int32_t v) {
    for (size_t s = id_slot(id, m->mask);; s = (s + 1) & m->mask) {
        if (m->keys[s] == id) return false;
        if (m->keys[s] == 0) {
            m->keys[s] = id;
            m->vals[s] = v;
            return true;
        }
    }
}

void lm_rpc_graph_free(struct lm_rpc_graph * g) {
    if (g == NULL) return;
    free(g->nodes);
    free(g->tensors);
    free(g);
}

static struct lm_rpc_graph * graph_fail(struct lm_rpc_graph * g, struct id_map * m) {
    lm_rpc_graph_free(g);
    free(m->keys);
    free(m->vals);
    return NULL;
}

struct lm_rpc_graph * lm_rpc_graph_decode(const uint8_t * p, size_t n, lm_rpc_why why) {
    struct id_map m = { 0 };
    if (n < 8) {
        fail(why, "graph: %zu bytes", n);
        return NULL;
    }
    const uint64_t n_nodes = lm_rpc_get_u32(p);
    if ((n - 8) / 8 < n_nodes) { // 4 + 8 n_nodes + 4 > n, without overflow
        fail(why, "graph: %llu nodes do not fit in %zu bytes", (unsigned long long) n_nodes, n);
        return NULL;
    }
    const uint8_t * node_ids = p + 4;
    const uint64_t n_tensors = lm_rpc_get_u32(p + 4 + 8 * n_nodes);
    const size_t rest = n - 8 - 8 * (size_t) n_nodes;
    if (rest / LM_RPC_TENSOR_SIZE != n_tensors || rest % LM_RPC_TENSOR_SIZE != 0) {
        fail(why, "graph: %zu bytes for %llu tensors", rest, (unsigned long long) n_tensors);
        return NULL;
    }
    if (n_tensors > INT32_MAX) {
        fail(why, "graph: too many tensors");
        return NULL;
    }
    // counts are bounded by n now: every allocation below is a small multiple of n
    struct lm_rpc_graph * g = calloc(1, sizeof(*g));
    if (g == NULL) {
        fail(why, "graph: out of memory");
        return NULL;
    }
    g->n_nodes = (uint32_t) n_nodes;
    g->n_tensors = (uint32_t) n_tensors;
    g->nodes = malloc(sizeof(uint32_t) * (n_nodes ? n_nodes : 1));
    g->tensors = malloc(sizeof(struct lm_rpc_tensor) * (n_tensors ? n_tensors : 1));
    size_t cap = 16;
    while (cap < 2 * n_tensors) cap *= 2;
    m.mask = cap - 1;
    m.keys = calloc(cap, sizeof(uint64_t));
    m.vals = malloc(cap * sizeof(int32_t));
    if (g->nodes == NULL || g->tensors == NULL || m.keys == NULL || m.vals == NULL) {
        fail(why, "graph: out of memory");
        return graph_fail(g, &m);
    }
    const uint8_t * tp = p + 8 + 8 * n_nodes;
    for (uint32_t i = 0; i < n_tensors; i++) {
        struct lm_rpc_tensor * t = &g->tensors[i];
        if (!lm_rpc_tensor_decode(tp + (size_t) i * LM_RPC_TENSOR_SIZE, t, why)) {
            return graph_fail(g, &m);
        }
        if (t->id == 0) {
            fail(why, "graph: tensor %u ('%s') has id 0", i, t->name);
            return graph_fail(g, &m);
        }
        // sources first: a reference to a tensor not seen yet (other than
        // itself) is a forward reference, a cycle or a dangling id
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (t->src[j] == 0) continue;
            // a tensor may name itself (a cast is a copy into itself)
            t->src_idx[j] = t->src[j] == t->id ? (int32_t) i : id_find(&m, t->src[j]);
            if (t->src_idx[j] < 0) {
                fail(why, "graph: tensor %u ('%s'): source %d is not an earlier tensor", i, t->name, j);
                return graph_fail(g, &m);
            }
        }
        if (t->view_src != 0) {
            t->view_idx = id_find(&m, t->view_src);
            if (t->view_idx < 0) {
                fail(why, "graph: tensor %u ('%s'): view source is not an earlier tensor", i, t->name);
                return graph_fail(g, &m);
            }
        }
        if (!id_insert(&m, t->id, (int32_t) i)) {
            fail(why, "graph: tensor %u ('%s'): id used twice", i, t->name);
            return graph_fail(g, &m);
        }
    }
    for (uint32_t i = 0; i < n_nodes; i++) {
        const uint64_t id = lm_rpc_get_u64(node_ids + 8 * (size_t) i);
        const int32_t k = id == 0 ? -1 : id_find(&m, id);
        if (k < 0) {
            fail(why, "graph: node %u is not among the tensors", i);
            return graph_fail(g, &m);
        }
        g->nodes[i] = (uint32_t) k;
    }
    free(m.keys);
    free(m.vals);
    return g;
}
