// ggml-sched.c - the backend scheduler: one graph computed over several
// backends (lm_ggml_backend_sched_* of ggml-backend.h).
//
// Every allocation goes through the same steps:
//  1. assign: each node and leaf gets a backend (the passes of assign());
//  2. split: runs of consecutive nodes on one backend become splits; a
//     source that a split's backend cannot read where it lives is copied into
//     that backend's compute memory before the split runs (an "input");
//  3. place: one graph allocator with a buffer per backend places the nodes
//     of every split, the input copies included, in the compute buffers.
// Computing then copies each split's inputs and runs the split on its backend.
//
// The user's graph keeps its structure between calls. The nodes that read
// an input copy have their source pointer redirected only while the
// scheduler places or computes the graph, and put back before it returns
// (ggml leaves them pointing at copies that its next call reuses).
//
// Other differences from upstream ggml, on purpose: an assignment made with
// set_tensor_backend stays (ggml moves every node to the backend of
// highest priority with the same buffer type, so that with two CPU backends
// its assignments have no effect); a split takes any number of inputs (the
// ggml starts a new split after 10); a node that computes into another
// tensor's memory (a copy into a cache, an in-place op) runs where that
// memory can be written; computing a graph other than the one allocated
// allocates it (ggml would run the old splits); bad arguments and
// failures give false, a status or NULL, never an abort.
//
// One copy per input (lm_ggml_backend_sched_get_n_copies() == 1), whatever
// `parallel` says: ggml keeps several copies of the inputs so that a
// backend that returns from graph_compute before finishing can be fed the
// next batch meanwhile. Every backend of this core finishes its work before
// graph_compute returns (the CPU, and the RPC client, which waits for the
// answer), so extra copies would cost memory and buy nothing.
//
// Steady state: the arrays below grow to the largest graph seen and are then
// reused; a call allocates nothing itself (the graph allocator reallocates
// its buffers only when a graph needs more than it reserved).
#include "ggml-backend-impl.h"
#include "ggml-alloc.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHED_MAX_BACKENDS 16

// nodes [i0, i1) of the user's graph, computed on backend; its inputs are
// sched->inputs[in0 .. in0 + n_in).
struct sched_split {
    int backend;
    int i0, i1;
    int in0, n_in;
};

// src, living where `backend` cannot read it, copied to dst (a tensor of the
// scheduler's context placed in backend's compute buffer). One per (tensor,
// backend) and graph: later splits on the same backend read the same copy.
struct sched_input {
    struct lm_ggml_tensor * src;
    struct lm_ggml_tensor * dst;
    int backend;
    int next; // next input with the same src, -1
};

// node->src[j] reads inputs[input].dst while the scheduler works on the graph.
struct sched_redirect {
    struct lm_ggml_tensor * node;
    int j;
    int input;
};

struct sched_pin {
    struct lm_ggml_tensor * t;
    int backend;
};

struct sched_slot {
    const struct lm_ggml_tensor * key;
    uint32_t gen;
    int where;       // backend, -1 while unassigned
    int first_input; // first input with this src, -1
    int pin;         // index in pins, -1
};

struct lm_ggml_backend_sched {
    int n_backends;
    int last; // the last backend's first index (a backend may be given twice, as ggml allows)
    lm_ggml_backend_t backends[SCHED_MAX_BACKENDS];
    lm_ggml_backend_buffer_type_t bufts[SCHED_MAX_BACKENDS];
    lm_ggml_gallocr_t galloc;
    int capacity; // most nodes + leafs a graph may have (graph_size, rounded up as ggml does)
    int debug;    // LM_GGML_SCHED_DEBUG: 1 prints the splits, 2 also every node

    // Per-tensor state: an open-addressing table keyed by the tensor's
    // address (power-of-two size, linear probing). A slot is in use when its
    // generation is the table's: clearing the table is one increment.
    struct sched_slot * slots;
    uint32_t n_slots;   // a power of two
    int      slot_bits;
    uint32_t gen;
    bool     overflow;  // a tensor found no slot during the current pass

    // the compute buffers of the last placement (see forget_placement)
    lm_ggml_backend_buffer_t placed_bufs[2 * SCHED_MAX_BACKENDS];
    int n_placed_bufs;

    int * node_slot; // slot of each node of the graph being split
    int cap_node_slot;

    // which backends accept a buffer type (bit b: backend b), for the
    // scheduler's own buffer types and, cached per split, those met in the graph
    unsigned own_mask[SCHED_MAX_BACKENDS];
    struct { lm_ggml_backend_buffer_type_t buft; unsigned mask; } buft_cache[8];
    int n_buft_cache;

    // set_tensor_backend assignments, kept until reset
    struct sched_pin * pins;
    int n_pins, cap_pins;

    // the last graph split and, if allocated, placed
    struct lm_ggml_cgraph * graph;
    int graph_nodes, graph_leafs;
    bool allocated;

    struct sched_split * splits;       int n_splits, cap_splits;
    struct sched_input * inputs;       int n_inputs, cap_inputs;
    struct sched_redirect * redirects; int n_redirects, cap_redirects;

    // what the graph allocator sees: per split its input copies (each after
    // a view keeping the copied tensor alive until then), then its nodes.
    struct lm_ggml_cgraph agraph;
    int cap_anodes, cap_aleafs;
    int * node_buf, * leaf_buf; // buffer (= backend) of each agraph node and leaf
    int cap_node_buf, cap_leaf_buf;

    // the copies and dependency views (no data of their own; reset per split)
    struct lm_ggml_context * ctx;
    void * ctx_mem;
    size_t ctx_size;

    lm_ggml_backend_sched_eval_callback eval;
    void * eval_data;
};

// ---------------------------------------------------------------- small helpers

// Grows *arr to hold at least need elements (doubling); false if out of memory.
static bool grow(void ** arr, int * cap, int need, size_t elem) {
    if (need <= *cap) {
        return true;
    }
    size_t n = *cap > 0 ? (size_t) *cap : 16;
    while (n < (size_t) need) {
        n *= 2;
    }
    if (n > INT_MAX || n > SIZE_MAX / elem) {
        return false;
    }
    void * p = realloc(*arr, n * elem);
    if (p == NULL) {
        return false;
    }
    *arr = p;
    *cap = (int) n;
    return true;
}
#define GROW(arr, cap, need) grow((void **) &(arr), &(cap), (need), sizeof(*(arr)))

static bool is_view_op(enum lm_ggml_op op) {
    return op == LM_GGML_OP_VIEW || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_PERMUTE || op == LM_GGML_OP_TRANSPOSE;
}

// The buffer holding t's bytes (its view source's for a view).
static lm_ggml_backend_buffer_t memory_of(const struct lm_ggml_tensor * t) {
    return t->view_src != NULL ? t->view_src->buffer : t->buffer;
}

static int backend_index(lm_ggml_backend_sched_t s, lm_ggml_backend_t backend) {
    for (int b = 0; b < s->n_backends; b++) {
        if (s->backends[b] == backend) {
            return b;
        }
    }
    return -1;
}

// Logs why a call failed and records it for lm_backend_last_error (the Go
// bindings report it).
LM_GGML_ATTRIBUTE_FORMAT(1, 2)
static void sched_error(const char * fmt, ...) {
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    LM_GGML_LOG_ERROR("lm_ggml_backend_sched: %s\n", msg);
    lm_backend_fail("%s", msg);
}

// ---------------------------------------------------------------- per-tensor state

static uint32_t slot_hash(const lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * t) {
    return (uint32_t) ((((uint64_t) (uintptr_t) t >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - s->slot_bits));
}

// Slot of t, inserting it; -1 (and overflow set) if the table is full.
static int slot_of(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * t) {
    const uint32_t mask = s->n_slots - 1;
    uint32_t i = slot_hash(s, t);
    for (uint32_t probes = 0; probes < s->n_slots; probes++, i = (i + 1) & mask) {
        struct sched_slot * sl = &s->slots[i];
        if (sl->gen != s->gen) {
            *sl = (struct sched_slot) { t, s->gen, -1, -1, -1 };
            return (int) i;
        }
        if (sl->key == t) {
            return (int) i;
        }
    }
    s->overflow = true;
    return -1;
}

// Slot of t if present, else -1.
static int find_slot(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * t) {
    const uint32_t mask = s->n_slots - 1;
    uint32_t i = slot_hash(s, t);
    for (uint32_t probes = 0; probes < s->n_slots; probes++, i = (i + 1) & mask) {
        const struct sched_slot * sl = &s->slots[i];
        if (sl->gen != s->gen) {
            return -1;
        }
        if (sl->key == t) {
            return (int) i;
        }
    }
    return -1;
}

static int where(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * t) {
    if (t == NULL) {
        return -1;
    }
    const int i = slot_of(s, t);
    return i < 0 ? -1 : s->slots[i].where;
}

static void set_where(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * t, int b) {
    const int i = slot_of(s, t);
    if (i >= 0) {
        s->slots[i].where = b;
    }
}

// Forgets everything but the pins.
static void clear_state(lm_ggml_backend_sched_t s) {
    if (++s->gen == 0) {
        // after 2^32 clears: no stale slot may look current
        memset(s->slots, 0, (size_t) s->n_slots * sizeof(*s->slots));
        s->gen = 1;
    }
    s->overflow = false;
    s->n_buft_cache = 0;
    for (int p = 0; p < s->n_pins; p++) {
        const int i = slot_of(s, s->pins[p].t);
        if (i >= 0) {
            s->slots[i].where = s->pins[p].backend;
            s->slots[i].pin = p;
        }
    }
    s->graph = NULL;
    s->allocated = false;
}

// ---------------------------------------------------------------- where a backend can work

static bool op_supported(lm_ggml_backend_sched_t s, int b, const struct lm_ggml_tensor * node) {
    return lm_ggml_backend_supports_op(s->backends[b], node);
}

// The backends that accept buffer type buft (bit b for backend b).
static unsigned buft_mask(lm_ggml_backend_sched_t s, lm_ggml_backend_buffer_type_t buft) {
    for (int b = 0; b < s->n_backends; b++) {
        if (s->bufts[b] == buft) {
            return s->own_mask[b];
        }
    }
    for (int k = 0; k < s->n_buft_cache; k++) {
        if (s->buft_cache[k].buft == buft) {
            return s->buft_cache[k].mask;
        }
    }
    unsigned mask = 0;
    for (int b = 0; b < s->n_backends; b++) {
        mask |= lm_ggml_backend_supports_buft(s->backends[b], buft) ? 1u << b : 0;
    }
    if (s->n_buft_cache < (int) (sizeof(s->buft_cache) / sizeof(s->buft_cache[0]))) {
        s->buft_cache[s->n_buft_cache].buft = buft;
        s->buft_cache[s->n_buft_cache++].mask = mask;
    }
    return mask;
}

// Whether backend b can read t where it lives: in its buffer, in host memory
// (data without a buffer), or, for a tensor the allocator will place, in the
// compute buffer of the backend it was assigned to (its view source's).
static bool can_read(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * t, int b) {
    lm_ggml_backend_buffer_t buf = memory_of(t);
    if (buf != NULL) {
        return (buft_mask(s, lm_ggml_backend_buffer_get_type(buf)) >> b) & 1;
    }
    const struct lm_ggml_tensor * base = t->view_src != NULL ? t->view_src : t;
    if (base->data != NULL) {
        return lm_ggml_backend_buft_is_host(s->bufts[b]); // host memory: backends whose buffers are host memory
    }
    int w = where(s, base);
    if (w < 0) {
        w = where(s, t);
    }
    return w >= 0 && (w == b || ((s->own_mask[w] >> b) & 1));
}

// The first backend that can use buf (and run node's op, for a node).
static int backend_for_buffer(lm_ggml_backend_sched_t s, lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * node) {
    const unsigned mask = buft_mask(s, lm_ggml_backend_buffer_get_type(buf));
    for (int b = 0; b < s->n_backends; b++) {
        if (((mask >> b) & 1) && (node == NULL || op_supported(s, b, node))) {
            return b;
        }
    }
    return -1;
}

// ---------------------------------------------------------------- pass 1: anchors

// The backend that t's own placement dictates, -1 if nothing does, -2 if t
// sits in memory that no backend can use as t needs.
static int anchor(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * t, bool is_node) {
    lm_ggml_backend_buffer_t buf = memory_of(t);
    if (buf != NULL) {
        // pre-allocated (weights, KV cache, or a view of them): it stays
        // there, so whoever computes it must use that memory
        const int b = backend_for_buffer(s, buf, is_node && !is_view_op(t->op) ? t : NULL);
        return b >= 0 ? b : -2;
    }
    if (t->flags & LM_GGML_TENSOR_FLAG_INPUT) {
        // the user writes inputs from the host: the last backend (the CPU in
        // the usual setup) reads them without a copy
        return s->last;
    }
    if (!is_node) {
        return -1;
    }
    // an op reading weights runs where they are, unless a backend of higher
    // priority asks for it (offload_op: large batches worth the copy). ROPE
    // is left out: its weight is a small table of frequencies.
    if (t->op == LM_GGML_OP_ROPE) {
        return -1;
    }
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        const struct lm_ggml_tensor * src = t->src[j];
        if (src == NULL || memory_of(src) == NULL ||
            lm_ggml_backend_buffer_get_usage(memory_of(src)) != LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS) {
            continue;
        }
        const int b = backend_for_buffer(s, memory_of(src), t);
        if (b == s->last) {
            for (int o = 0; o < b; o++) {
                if (op_supported(s, o, t) && lm_ggml_backend_offload_op(s->backends[o], t)) {
                    return o;
                }
            }
        }
        return b;
    }
    return -1;
}

static bool assign_anchors(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    if (!GROW(s->node_slot, s->cap_node_slot, g->n_nodes)) {
        return false;
    }
    for (int pass = 0; pass < 2; pass++) {
        const int n = pass == 0 ? g->n_leafs : g->n_nodes;
        struct lm_ggml_tensor ** ts = pass == 0 ? g->leafs : g->nodes;
        for (int i = 0; i < n; i++) {
            struct lm_ggml_tensor * t = ts[i];
            const int slot = slot_of(s, t);
            if (slot < 0) {
                return false;
            }
            if (pass == 1) {
                s->node_slot[i] = slot;
            }
            if (s->slots[slot].pin >= 0) {
                const int b = s->slots[slot].where;
                if (pass == 1 && !is_view_op(t->op) && !op_supported(s, b, t)) {
                    LM_GGML_LOG_WARN("%s: backend %s, assigned to %s, does not support %s: choosing another\n",
                        __func__, lm_ggml_backend_name(s->backends[b]), t->name, lm_ggml_op_desc(t));
                    s->slots[slot].where = -1;
                    s->slots[slot].pin = -1; // for this graph only
                } else {
                    continue;
                }
            }
            const int b = anchor(s, t, pass == 1);
            if (b == -2) {
                lm_ggml_backend_buffer_t buf = memory_of(t);
                sched_error("%s is in buffer %s, which no backend of the scheduler can use%s%s", t->name,
                    lm_ggml_backend_buffer_name(buf), pass == 1 ? " to compute " : "", pass == 1 ? lm_ggml_op_desc(t) : "");
                return false;
            }
            s->slots[slot].where = b;
        }
    }
    return true;
}

// ---------------------------------------------------------------- pass 2: spreading to neighbours

// Gives unassigned nodes the backend of the last assigned node met in the
// direction of the sweep, where that backend supports them. With
// skip_last, the last backend is not spread: the other backends (the
// accelerators) take over the runs of nodes between their own, and the last
// backend gets only what they cannot do.
static void spread(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g, bool down, bool skip_last) {
    int cur = -1;
    for (int k = 0; k < g->n_nodes; k++) {
        const int i = down ? k : g->n_nodes - 1 - k;
        struct lm_ggml_tensor * node = g->nodes[i];
        if (is_view_op(node->op)) {
            continue;
        }
        const int slot = s->node_slot[i];
        const int b = s->slots[slot].where;
        if (b >= 0) {
            cur = skip_last && b == s->last ? -1 : b;
        } else if (cur >= 0 && op_supported(s, cur, node)) {
            s->slots[slot].where = cur;
        }
    }
}

// ---------------------------------------------------------------- pass 3: the remaining nodes, upgrades

// Every source of node readable by backend b?
static bool reads_all(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * node, int b) {
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        if (node->src[j] != NULL && !can_read(s, node->src[j], b)) {
            return false;
        }
    }
    return true;
}

static bool settle_nodes(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    for (int i = 0; i < g->n_nodes; i++) {
        struct lm_ggml_tensor * node = g->nodes[i];
        if (is_view_op(node->op)) {
            continue;
        }
        const int slot = s->node_slot[i];
        int cur = s->slots[slot].where;
        if (cur < 0) {
            // no neighbour could take it: the backend that supports the op
            // and reads the most of its (already placed) sources in place
            int best_n = -1;
            for (int b = 0; b < s->n_backends; b++) {
                if (!op_supported(s, b, node)) {
                    continue;
                }
                int n = 0;
                for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                    n += node->src[j] != NULL && can_read(s, node->src[j], b);
                }
                if (n > best_n) {
                    best_n = n;
                    cur = b;
                }
            }
            if (cur < 0) {
                sched_error("no backend of the scheduler supports %s (node %s)", lm_ggml_op_desc(node), node->name);
                return false;
            }
            s->slots[slot].where = cur;
        } else if (s->slots[slot].pin < 0 && memory_of(node) == NULL) {
            // backends sharing a buffer type (the CPU and an accelerator
            // working in host memory): the one of higher priority computes
            // the node if it can read all of its sources
            for (int b = 0; b < cur; b++) {
                if (s->bufts[b] == s->bufts[cur] && op_supported(s, b, node) && reads_all(s, node, b)) {
                    s->slots[slot].where = b;
                    break;
                }
            }
        }
    }
    return true;
}

// ---------------------------------------------------------------- pass 4: views and sources

// Views live with their source; sources nobody placed (leafs to be
// allocated, unused-so-far tensors) go where their consumer runs.
static bool settle_rest(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    for (int i = 0; i < g->n_nodes; i++) {
        struct lm_ggml_tensor * node = g->nodes[i];
        if (node->view_src != NULL && s->slots[s->node_slot[i]].where < 0) {
            s->slots[s->node_slot[i]].where = where(s, node->view_src);
        }
    }
    // consumers before producers, so that a chain of views of a leaf is
    // placed from its consumer down
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        struct lm_ggml_tensor * node = g->nodes[i];
        const int b = s->slots[s->node_slot[i]].where;
        if (b < 0) {
            continue;
        }
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            struct lm_ggml_tensor * src = node->src[j];
            if (src == NULL || where(s, src) >= 0) {
                continue;
            }
            int sb = b;
            if (src->view_src != NULL) {
                if (where(s, src->view_src) < 0) {
                    set_where(s, src->view_src, b);
                }
                sb = where(s, src->view_src);
            }
            set_where(s, src, sb);
        }
    }
    // what is still unplaced (views of nothing placed, with no consumer):
    // the last backend, and their sources with them
    for (int i = 0; i < g->n_nodes; i++) {
        struct lm_ggml_tensor * node = g->nodes[i];
        if (s->slots[s->node_slot[i]].where >= 0) {
            continue;
        }
        int b = node->view_src != NULL ? where(s, node->view_src) : -1;
        if (b < 0) {
            b = s->last;
            if (node->view_src != NULL) {
                set_where(s, node->view_src, b);
            }
        }
        s->slots[s->node_slot[i]].where = b;
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL && where(s, node->src[j]) < 0) {
                set_where(s, node->src[j], b);
            }
        }
    }
    for (int i = 0; i < g->n_leafs; i++) {
        if (where(s, g->leafs[i]) < 0) {
            set_where(s, g->leafs[i], s->last);
        }
    }
    return !s->overflow;
}

// A node that computes into another tensor's memory (lm_ggml_cpy into a
// cache, the in-place ops) must run where that memory can be written.
static void follow_destinations(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    for (int i = 0; i < g->n_nodes; i++) {
        struct lm_ggml_tensor * node = g->nodes[i];
        if (node->view_src == NULL || is_view_op(node->op)) {
            continue;
        }
        const int b = s->slots[s->node_slot[i]].where;
        const int vb = where(s, node->view_src);
        if (b >= 0 && vb >= 0 && b != vb && !can_read(s, node->view_src, b) && op_supported(s, vb, node)) {
            s->slots[s->node_slot[i]].where = vb;
        }
    }
}

static bool assign(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    if (!assign_anchors(s, g)) {
        return false;
    }
    spread(s, g, true,  true);
    spread(s, g, false, true);
    spread(s, g, true,  false);
    spread(s, g, false, false);
    if (!settle_nodes(s, g)) {
        return false;
    }
    follow_destinations(s, g);
    return settle_rest(s, g);
}

// ---------------------------------------------------------------- splitting

// Index of the input copying src to backend b, -1 if none yet.
static int find_input(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * src, int b) {
    const int slot = slot_of(s, src);
    for (int k = slot >= 0 ? s->slots[slot].first_input : -1; k >= 0; k = s->inputs[k].next) {
        if (s->inputs[k].backend == b) {
            return k;
        }
    }
    return -1;
}

static bool add_input(lm_ggml_backend_sched_t s, struct lm_ggml_tensor * src, int b, int * index) {
    const int slot = slot_of(s, src);
    if (slot < 0 || !GROW(s->inputs, s->cap_inputs, s->n_inputs + 1)) {
        return false;
    }
    const int k = s->n_inputs++;
    s->inputs[k] = (struct sched_input) { src, NULL, b, s->slots[slot].first_input };
    s->slots[slot].first_input = k;
    *index = k;
    return true;
}

static bool open_split(lm_ggml_backend_sched_t s, int backend, int i0) {
    if (!GROW(s->splits, s->cap_splits, s->n_splits + 1)) {
        return false;
    }
    if (s->n_splits > 0) {
        s->splits[s->n_splits - 1].i1 = i0;
    }
    s->splits[s->n_splits++] = (struct sched_split) { backend, i0, i0, s->n_inputs, 0 };
    return true;
}

// Whether node reads a weight that backend b cannot use and that no split
// of b copied yet: a new split then lets the copies of one layer's weights
// be freed before the next layer's arrive.
static bool needs_new_weight(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * node, int b) {
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        const struct lm_ggml_tensor * src = node->src[j];
        if (src != NULL && memory_of(src) != NULL &&
            lm_ggml_backend_buffer_get_usage(memory_of(src)) == LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS &&
            !can_read(s, src, b) && find_input(s, src, b) < 0) {
            return true;
        }
    }
    return false;
}

static bool split_nodes(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    if (g->n_nodes == 0) {
        return true;
    }
    // the first split takes the backend of the first node that computes
    // something (leading views go with it)
    int first = g->n_nodes - 1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!is_view_op(g->nodes[i]->op)) {
            first = i;
            break;
        }
    }
    if (!open_split(s, where(s, g->nodes[first]), 0)) {
        return false;
    }
    for (int i = first; i < g->n_nodes; i++) {
        struct lm_ggml_tensor * node = g->nodes[i];
        if (is_view_op(node->op)) {
            continue;
        }
        const int b = s->slots[s->node_slot[i]].where;
        if (b < 0) {
            return false; // only when the table overflowed
        }
        struct sched_split * sp = &s->splits[s->n_splits - 1];
        if (b != sp->backend || (sp->n_in > 0 && needs_new_weight(s, node, b))) {
            if (!open_split(s, b, i)) {
                return false;
            }
        }
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            struct lm_ggml_tensor * src = node->src[j];
            if (src == NULL || can_read(s, src, b)) {
                continue;
            }
            int k = find_input(s, src, b);
            if (k < 0) {
                if (!add_input(s, src, b, &k)) {
                    return false;
                }
                s->splits[s->n_splits - 1].n_in++;
            }
            if (!GROW(s->redirects, s->cap_redirects, s->n_redirects + 1)) {
                return false;
            }
            s->redirects[s->n_redirects++] = (struct sched_redirect) { node, j, k };
        }
    }
    s->splits[s->n_splits - 1].i1 = g->n_nodes;
    return true;
}

// Room in the scheduler's context for every input copy and its dependency view.
static bool reserve_context(lm_ggml_backend_sched_t s) {
    const size_t need = (size_t) (s->n_inputs > 0 ? s->n_inputs : 1) * 2 * lm_ggml_tensor_overhead();
    if (s->ctx != NULL && need <= s->ctx_size) {
        lm_ggml_reset(s->ctx);
        return true;
    }
    lm_ggml_free(s->ctx);
    free(s->ctx_mem);
    s->ctx = NULL;
    s->ctx_size = need + need / 2;
    s->ctx_mem = malloc(s->ctx_size);
    if (s->ctx_mem == NULL) {
        s->ctx_size = 0;
        return false;
    }
    struct lm_ggml_init_params p = { s->ctx_size, s->ctx_mem, true };
    s->ctx = lm_ggml_init(p);
    return s->ctx != NULL;
}

// The graph the allocator places: per split, for each input a view of the
// copied tensor (it must stay alive up to here) and the copy (allocated
// here, in the split's backend); then the split's nodes. Leafs as given.
static bool build_alloc_graph(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    if (!reserve_context(s)) {
        return false;
    }
    for (int k = 0; k < s->n_inputs; k++) {
        struct sched_input * in = &s->inputs[k];
        struct lm_ggml_tensor * dst = lm_ggml_new_tensor(s->ctx, in->src->type, LM_GGML_MAX_DIMS, in->src->ne);
        memcpy(dst->nb, in->src->nb, sizeof(dst->nb)); // same layout: the copy is a byte copy
        lm_ggml_format_name(dst, "%s#%s", lm_ggml_backend_name(s->backends[in->backend]), in->src->name);
        in->dst = dst;
    }
    const int n_nodes = g->n_nodes + 2 * s->n_inputs;
    if (!GROW(s->agraph.nodes, s->cap_anodes, n_nodes) || !GROW(s->agraph.leafs, s->cap_aleafs, g->n_leafs) ||
        !GROW(s->node_buf, s->cap_node_buf, n_nodes) || !GROW(s->leaf_buf, s->cap_leaf_buf, g->n_leafs)) {
        return false;
    }
    struct lm_ggml_cgraph * a = &s->agraph;
    a->size = s->cap_anodes > s->cap_aleafs ? s->cap_anodes : s->cap_aleafs;
    a->n_nodes = 0;
    a->n_leafs = 0;
    a->grads = NULL;
    a->grad_accs = NULL;
    a->visited_hash_set = (struct lm_ggml_hash_set) { 0, NULL, NULL };
    a->order = g->order;
    for (int sp = 0; sp < s->n_splits; sp++) {
        const struct sched_split * split = &s->splits[sp];
        for (int k = split->in0; k < split->in0 + split->n_in; k++) {
            struct sched_input * in = &s->inputs[k];
            const int64_t zero = 0;
            struct lm_ggml_tensor * keep = lm_ggml_new_tensor_impl(s->ctx, in->src->type, 1, &zero, in->src, 0);
            keep->src[0] = in->src;
            lm_ggml_format_name(keep, "%s (kept)", in->src->name);
            s->node_buf[a->n_nodes] = where(s, in->src);
            a->nodes[a->n_nodes++] = keep;
            s->node_buf[a->n_nodes] = in->backend;
            a->nodes[a->n_nodes++] = in->dst;
        }
        for (int i = split->i0; i < split->i1; i++) {
            s->node_buf[a->n_nodes] = s->slots[s->node_slot[i]].where;
            a->nodes[a->n_nodes++] = g->nodes[i];
        }
    }
    for (int i = 0; i < g->n_leafs; i++) {
        s->leaf_buf[a->n_leafs] = where(s, g->leafs[i]);
        a->leafs[a->n_leafs++] = g->leafs[i];
    }
    return true;
}

static void print_splits(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    for (int sp = 0; sp < s->n_splits; sp++) {
        const struct sched_split * split = &s->splits[sp];
        LM_GGML_LOG_DEBUG("## split %d: %s, nodes %d..%d, %d inputs:", sp, lm_ggml_backend_name(s->backends[split->backend]),
            split->i0, split->i1 - 1, split->n_in);
        for (int k = split->in0; k < split->in0 + split->n_in; k++) {
            LM_GGML_LOG_DEBUG(" [%s %zu B]", s->inputs[k].src->name, lm_ggml_nbytes(s->inputs[k].src));
        }
        LM_GGML_LOG_DEBUG("\n");
        if (s->debug < 2) {
            continue;
        }
        for (int i = split->i0; i < split->i1; i++) {
            struct lm_ggml_tensor * node = g->nodes[i];
            LM_GGML_LOG_DEBUG("  node %4d %-12s %-24s [%s]", i, lm_ggml_op_desc(node), node->name,
                lm_ggml_backend_name(s->backends[where(s, node)]));
            for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
                if (node->src[j] != NULL) {
                    const int w = where(s, node->src[j]);
                    LM_GGML_LOG_DEBUG(" %s [%s]", node->src[j]->name, w >= 0 ? lm_ggml_backend_name(s->backends[w]) : "-");
                }
            }
            LM_GGML_LOG_DEBUG("\n");
        }
    }
}

// Tensors of g still placed in the compute buffers from an earlier
// placement (this graph's, or another's whose memory g now overlaps) are
// placed afresh: their old address would overlap the new plan, and would
// pin them to a backend. Only the buffers of the last placement are
// recognised (by address: nothing is read through a stale pointer). A graph
// allocated before the buffers were reallocated (grown for a larger graph)
// points to freed memory: as with ggml, such a graph must be built
// again (the Go bindings detach its tensors).
static bool placed_here(lm_ggml_backend_sched_t s, const struct lm_ggml_tensor * t) {
    for (int k = 0; t != NULL && t->buffer != NULL && k < s->n_placed_bufs; k++) {
        if (t->buffer == s->placed_bufs[k]) {
            return true;
        }
    }
    return false;
}

static void forget_placement(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    if (s->n_placed_bufs == 0) {
        return;
    }
    // views first: whether their source is placed here is read before the
    // source forgets it
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < g->n_nodes + g->n_leafs; i++) {
            struct lm_ggml_tensor * t = i < g->n_nodes ? g->nodes[i] : g->leafs[i - g->n_nodes];
            if ((t->view_src != NULL) != (pass == 0)) {
                continue;
            }
            if (placed_here(s, t) || (t->view_src != NULL && placed_here(s, t->view_src))) {
                t->buffer = NULL;
                t->data = NULL;
            }
        }
    }
}

// Records the compute buffers the allocator placed the split graph in.
static void remember_placement(lm_ggml_backend_sched_t s) {
    s->n_placed_bufs = 0;
    const struct lm_ggml_cgraph * a = &s->agraph;
    for (int i = 0; i < a->n_nodes + a->n_leafs; i++) {
        const struct lm_ggml_tensor * t = i < a->n_nodes ? a->nodes[i] : a->leafs[i - a->n_nodes];
        const int max = (int) (sizeof(s->placed_bufs) / sizeof(s->placed_bufs[0]));
        if (t->buffer == NULL || placed_here(s, t) || s->n_placed_bufs == max ||
            lm_ggml_backend_buffer_get_usage(t->buffer) != LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE) {
            continue;
        }
        s->placed_bufs[s->n_placed_bufs++] = t->buffer;
    }
}

// Assigns, splits and builds the allocator's graph for g. The pins survive,
// everything else of the previous graph is forgotten.
static bool split_graph(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * g) {
    clear_state(s);
    s->n_splits = 0;
    s->n_inputs = 0;
    s->n_redirects = 0;
    if (g->n_nodes < 0 || g->n_leafs < 0 || g->n_nodes > s->capacity - g->n_leafs) {
        sched_error("graph has %d nodes and %d leafs, more than the %d the scheduler was made for",
            g->n_nodes, g->n_leafs, s->capacity);
        return false;
    }
    forget_placement(s, g);
    bool ok = assign(s, g) && split_nodes(s, g) && !s->overflow && build_alloc_graph(s, g);
    if (!ok) {
        if (s->overflow) {
            sched_error("the graph references more tensors than the scheduler has room for");
        }
        clear_state(s);
        s->n_splits = 0;
        return false;
    }
    if (s->debug > 0) {
        print_splits(s, g);
    }
    s->graph = g;
    s->graph_nodes = g->n_nodes;
    s->graph_leafs = g->n_leafs;
    return true;
}

// ---------------------------------------------------------------- placing and redirecting

static void redirect(lm_ggml_backend_sched_t s, bool to_copies) {
    for (int r = 0; r < s->n_redirects; r++) {
        const struct sched_redirect * rd = &s->redirects[r];
        const struct sched_input * in = &s->inputs[rd->input];
        rd->node->src[rd->j] = to_copies ? in->dst : in->src;
    }
}

// Plans the split graph and places it in the compute buffers (redirects
// applied by the caller). The plan is made for every new graph: the
// allocator keeps its buffers when the plan fits them, so graphs of one
// shape reuse the memory reserved once.
static bool place_split_graph(lm_ggml_backend_sched_t s, bool alloc) {
    // a backend still working could be reading memory that moves
    lm_ggml_backend_sched_synchronize(s);
    size_t before[SCHED_MAX_BACKENDS];
    for (int b = 0; b < s->n_backends; b++) {
        before[b] = lm_ggml_gallocr_get_buffer_size(s->galloc, b);
    }
    const bool reserved = lm_ggml_gallocr_reserve_n(s->galloc, &s->agraph, s->node_buf, s->leaf_buf);
    for (int b = 0; b < s->n_backends; b++) {
        if (lm_ggml_gallocr_get_buffer_size(s->galloc, b) != before[b]) {
            s->n_placed_bufs = 0; // reallocated: the old buffers are gone
        }
    }
    if (!reserved) {
        s->n_placed_bufs = 0;
        sched_error("cannot allocate the compute buffers: %s", lm_backend_last_error());
        return false;
    }
    if (alloc) {
        if (!lm_ggml_gallocr_alloc_graph(s->galloc, &s->agraph)) {
            sched_error("cannot place the graph in the compute buffers: %s", lm_backend_last_error());
            return false;
        }
        remember_placement(s);
    }
    return true;
}

// ---------------------------------------------------------------- computing

// Copies a split's inputs and runs its nodes [j0, j1) on its backend. An
// abort inside a backend (a lost connection) comes back as a failed status.
static enum lm_ggml_status run_range(lm_ggml_backend_sched_t s, const struct sched_split * split, int j0, int j1, bool copy_inputs) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        sched_error("compute: %s", f.msg);
        return LM_GGML_STATUS_FAILED;
    }
    lm_ggml_backend_t backend = s->backends[split->backend];
    if (copy_inputs) {
        for (int k = split->in0; k < split->in0 + split->n_in; k++) {
            const struct sched_input * in = &s->inputs[k];
            if (in->src->flags & LM_GGML_TENSOR_FLAG_INPUT) {
                // the user may overwrite an input as soon as we return
                lm_ggml_backend_synchronize(backend);
                lm_ggml_backend_tensor_copy(in->src, in->dst);
            } else if (memory_of(in->src) == NULL) {
                lm_ggml_backend_tensor_copy(in->src, in->dst); // host memory of a context
            } else {
                const int w = where(s, in->src);
                lm_ggml_backend_tensor_copy_async(s->backends[w >= 0 ? w : split->backend], backend, in->src, in->dst);
            }
        }
    }
    struct lm_ggml_cgraph view = lm_ggml_graph_view(s->graph, j0, j1);
    enum lm_ggml_status st = lm_ggml_backend_graph_compute_async(backend, &view);
    lm_ggml_err_pop(&f);
    return st;
}

// Runs a split, cut after each node the eval callback wants to see.
static enum lm_ggml_status run_split(lm_ggml_backend_sched_t s, const struct sched_split * split, bool * stop) {
    if (s->eval == NULL) {
        return split->i1 > split->i0 ? run_range(s, split, split->i0, split->i1, true) : LM_GGML_STATUS_SUCCESS;
    }
    bool first = true;
    for (int j0 = split->i0; j0 < split->i1; ) {
        int j1 = j0;
        bool want = s->eval(s->graph->nodes[j1], true, s->eval_data);
        while (!want && j1 + 1 < split->i1) {
            want = s->eval(s->graph->nodes[++j1], true, s->eval_data);
        }
        enum lm_ggml_status st = run_range(s, split, j0, j1 + 1, first);
        first = false;
        if (st != LM_GGML_STATUS_SUCCESS) {
            return st;
        }
        lm_ggml_backend_synchronize(s->backends[split->backend]);
        if (want && !s->eval(s->graph->nodes[j1], false, s->eval_data)) {
            *stop = true;
            return LM_GGML_STATUS_SUCCESS;
        }
        j0 = j1 + 1;
    }
    return LM_GGML_STATUS_SUCCESS;
}

// ---------------------------------------------------------------- public API

lm_ggml_backend_sched_t lm_ggml_backend_sched_new(lm_ggml_backend_t * backends, lm_ggml_backend_buffer_type_t * bufts,
                                                  int n_backends, size_t graph_size, bool parallel) {
    LM_GGML_UNUSED(parallel); // see the top of the file
    lm_backend_clear_error();
    if (backends == NULL || n_backends < 1 || n_backends > SCHED_MAX_BACKENDS) {
        sched_error("need 1 to %d backends, got %d", SCHED_MAX_BACKENDS, backends ? n_backends : 0);
        return NULL;
    }
    if (graph_size == 0 || graph_size > (size_t) INT_MAX / 8) {
        sched_error("invalid graph size %zu", graph_size);
        return NULL;
    }
    for (int b = 0; b < n_backends; b++) {
        if (backends[b] == NULL) {
            sched_error("backend %d is NULL", b);
            return NULL;
        }
        lm_ggml_backend_buffer_type_t buft = bufts && bufts[b] ? bufts[b] : lm_ggml_backend_get_default_buffer_type(backends[b]);
        if (buft == NULL || !lm_ggml_backend_supports_buft(backends[b], buft)) {
            sched_error("backend %s cannot use buffer type %s", lm_ggml_backend_name(backends[b]),
                buft ? lm_ggml_backend_buft_name(buft) : "(null)");
            return NULL;
        }
    }

    struct lm_ggml_backend_sched * s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return NULL;
    }
    s->n_backends = n_backends;
    for (int b = 0; b < n_backends; b++) {
        s->backends[b] = backends[b];
        s->bufts[b] = bufts && bufts[b] ? bufts[b] : lm_ggml_backend_get_default_buffer_type(backends[b]);
    }
    // A backend given twice with the same buffer type (ggml's test-opt passes
    // the CPU as both the main and the host backend) is one backend: every
    // pass picks the lowest index, and what goes to "the last backend" goes
    // to its first index. The graph allocator shares one buffer per buffer type.
    s->last = n_backends - 1;
    for (int b = 0; b < n_backends - 1; b++) {
        if (s->backends[b] == s->backends[n_backends - 1] && s->bufts[b] == s->bufts[n_backends - 1]) {
            s->last = b;
            break;
        }
    }
    const char * dbg = getenv("LM_GGML_SCHED_DEBUG");
    s->debug = dbg ? atoi(dbg) : 0;
    s->capacity = (int) lm_ggml_hash_size(graph_size);

    for (int b = 0; b < n_backends; b++) {
        for (int o = 0; o < n_backends; o++) {
            s->own_mask[b] |= lm_ggml_backend_supports_buft(s->backends[o], s->bufts[b]) ? 1u << o : 0;
        }
    }

    // room for the graph's tensors, the view sources outside it and the
    // pins, at a load that keeps linear probing short (at most 1/4)
    s->slot_bits = 4;
    while ((1u << s->slot_bits) < (uint32_t) s->capacity * 4) {
        s->slot_bits++;
    }
    s->n_slots = 1u << s->slot_bits;
    s->slots = calloc(s->n_slots, sizeof(*s->slots));
    s->gen = 1;
    s->galloc = lm_ggml_gallocr_new_n(s->bufts, n_backends);
    if (s->slots == NULL || s->galloc == NULL) {
        sched_error("out of memory");
        lm_ggml_backend_sched_free(s);
        return NULL;
    }
    return s;
}

void lm_ggml_backend_sched_free(lm_ggml_backend_sched_t s) {
    if (s == NULL) {
        return;
    }
    lm_ggml_gallocr_free(s->galloc);
    lm_ggml_free(s->ctx);
    free(s->ctx_mem);
    free(s->slots);
    free(s->node_slot);
    free(s->pins);
    free(s->splits);
    free(s->inputs);
    free(s->redirects);
    free(s->agraph.nodes);
    free(s->agraph.leafs);
    free(s->node_buf);
    free(s->leaf_buf);
    free(s);
}

void lm_ggml_backend_sched_reset(lm_ggml_backend_sched_t s) {
    if (s == NULL) {
        return;
    }
    s->n_pins = 0;
    clear_state(s);
}

bool lm_ggml_backend_sched_reserve(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * measure_graph) {
    lm_backend_clear_error();
    if (s == NULL || measure_graph == NULL) {
        sched_error("NULL %s", s == NULL ? "scheduler" : "graph");
        return false;
    }
    if (!split_graph(s, measure_graph)) {
        return false;
    }
    redirect(s, true);
    const bool ok = place_split_graph(s, false);
    redirect(s, false);
    // the measure graph only sized the buffers: it is not allocated (its
    // splits stay readable with get_n_splits)
    s->graph = NULL;
    s->allocated = false;
    return ok;
}

bool lm_ggml_backend_sched_alloc_graph(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * graph) {
    lm_backend_clear_error();
    if (s == NULL || graph == NULL) {
        sched_error("NULL %s", s == NULL ? "scheduler" : "graph");
        return false;
    }
    if (!split_graph(s, graph)) {
        return false;
    }
    redirect(s, true);
    const bool ok = place_split_graph(s, true);
    redirect(s, false);
    if (!ok) {
        clear_state(s);
        return false;
    }
    s->allocated = true;
    return true;
}

enum lm_ggml_status lm_ggml_backend_sched_graph_compute_async(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * graph) {
    lm_backend_clear_error();
    if (s == NULL || graph == NULL) {
        sched_error("NULL %s", s == NULL ? "scheduler" : "graph");
        return LM_GGML_STATUS_FAILED;
    }
    // the graph allocated last, unchanged since, is computed as placed
    if (!s->allocated || s->graph != graph || s->graph_nodes != graph->n_nodes || s->graph_leafs != graph->n_leafs) {
        if (!lm_ggml_backend_sched_alloc_graph(s, graph)) {
            return LM_GGML_STATUS_ALLOC_FAILED;
        }
    }
    enum lm_ggml_status st = LM_GGML_STATUS_SUCCESS;
    bool stop = false;
    redirect(s, true);
    for (int sp = 0; sp < s->n_splits && st == LM_GGML_STATUS_SUCCESS && !stop; sp++) {
        st = run_split(s, &s->splits[sp], &stop);
    }
    redirect(s, false);
    return st;
}

enum lm_ggml_status lm_ggml_backend_sched_graph_compute(lm_ggml_backend_sched_t s, struct lm_ggml_cgraph * graph) {
    enum lm_ggml_status st = lm_ggml_backend_sched_graph_compute_async(s, graph);
    lm_ggml_backend_sched_synchronize(s);
    return st;
}

void lm_ggml_backend_sched_synchronize(lm_ggml_backend_sched_t s) {
    if (s == NULL) {
        return;
    }
    for (int b = 0; b < s->n_backends; b++) {
        lm_ggml_backend_synchronize(s->backends[b]);
    }
}

void lm_ggml_backend_sched_set_eval_callback(lm_ggml_backend_sched_t s, lm_ggml_backend_sched_eval_callback callback, void * user_data) {
    if (s == NULL) {
        return;
    }
    s->eval = callback;
    s->eval_data = user_data;
}

int lm_ggml_backend_sched_get_n_splits(lm_ggml_backend_sched_t s) {
    return s != NULL ? s->n_splits : 0;
}

int lm_ggml_backend_sched_get_n_copies(lm_ggml_backend_sched_t s) {
    return s != NULL ? 1 : 0;
}

int lm_ggml_backend_sched_get_n_backends(lm_ggml_backend_sched_t s) {
    return s != NULL ? s->n_backends : 0;
}

lm_ggml_backend_t lm_ggml_backend_sched_get_backend(lm_ggml_backend_sched_t s, int i) {
    if (s == NULL || i < 0 || i >= s->n_backends) {
        return NULL;
    }
    return s->backends[i];
}

size_t lm_ggml_backend_sched_get_buffer_size(lm_ggml_backend_sched_t s, lm_ggml_backend_t backend) {
    const int b = s != NULL ? backend_index(s, backend) : -1;
    if (b < 0) {
        return 0;
    }
    return lm_ggml_gallocr_get_buffer_size(s->galloc, b);
}

void lm_ggml_backend_sched_set_tensor_backend(lm_ggml_backend_sched_t s, struct lm_ggml_tensor * node, lm_ggml_backend_t backend) {
    lm_backend_clear_error();
    if (s == NULL || node == NULL) {
        return;
    }
    const int b = backend_index(s, backend);
    if (b < 0) {
        sched_error("backend %s is not one of the scheduler's",
            backend ? lm_ggml_backend_name(backend) : "(null)");
        return;
    }
    const int slot = slot_of(s, node);
    if (slot >= 0 && s->slots[slot].pin >= 0) {
        s->pins[s->slots[slot].pin].backend = b;
        s->slots[slot].where = b;
        return;
    }
    if (slot < 0 || s->n_pins >= s->capacity || !GROW(s->pins, s->cap_pins, s->n_pins + 1)) {
        s->overflow = false;
        sched_error("too many assignments (reset the scheduler between graphs)");
        return;
    }
    s->pins[s->n_pins] = (struct sched_pin) { node, b };
    s->slots[slot].pin = s->n_pins++;
    s->slots[slot].where = b;
}

lm_ggml_backend_t lm_ggml_backend_sched_get_tensor_backend(lm_ggml_backend_sched_t s, struct lm_ggml_tensor * node) {
    if (s == NULL || node == NULL) {
        return NULL;
    }
    const int slot = find_slot(s, node);
    if (slot < 0 || s->slots[slot].where < 0) {
        return NULL;
    }
    return s->backends[s->slots[slot].where];
}
