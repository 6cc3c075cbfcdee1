// ggml-alloc.c - tensor allocators over backend buffers.
//
// tallocr places tensors one after another in a buffer.
//
// gallocr plans a graph's memory: walking the nodes in execution order it
// gives each tensor that needs memory a block of an arena (one arena per
// buffer type), and returns a block when its tensor's last consumer has run.
// Where an op can write its result over an operand (element-wise style ops,
// see can_inplace) and that operand dies with this node, the node takes the
// operand's block. Leafs and inputs are placed before any node runs, so that
// the caller can fill them first; inputs, outputs and the gradients of
// parameters are never freed or reused.
//
// Offsets come from two packings of the same blocks, whichever needs less
// memory: the walk's own (free blocks in an address-ordered list, best fit,
// neighbours merged: ggml's method), and an offline one that knows
// every block's lifetime in advance (largest first, each at the lowest
// offset free for its whole lifetime).
//
// reserve plans a graph and sizes the buffers; alloc_graph hands out the
// planned addresses, planning again first if the graph is not the one
// planned (a 64-bit signature of its tensors and structure).
#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-op-inplace.h"

#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- tallocr

static size_t pad_to(size_t n, size_t align) {
    return align > 1 ? (n + align - 1) / align * align : n;
}

struct lm_ggml_tallocr lm_ggml_tallocr_new(lm_ggml_backend_buffer_t buffer) {
    struct lm_ggml_tallocr t = { buffer, NULL, 1, 0 };
    if (buffer == NULL) {
        LM_GGML_LOG_ERROR("%s: buffer is NULL\n", __func__);
        return t;
    }
    t.base = lm_ggml_backend_buffer_get_base(buffer);
    t.alignment = lm_ggml_backend_buffer_get_alignment(buffer);
    if (t.alignment == 0 || (t.alignment & (t.alignment - 1)) != 0) t.alignment = 1;
    // the first aligned address (the base itself for buffers of our types)
    const uintptr_t b = (uintptr_t) t.base;
    t.offset = (size_t)((t.alignment - b % t.alignment) % t.alignment);
    return t;
}

void lm_ggml_tallocr_alloc(struct lm_ggml_tallocr * talloc, struct lm_ggml_tensor * tensor) {
    if (talloc == NULL || talloc->buffer == NULL || tensor == NULL) {
        LM_GGML_ABORT("lm_ggml_tallocr_alloc: allocator, its buffer or tensor is NULL");
    }
    const size_t size = pad_to(lm_ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor), talloc->alignment);
    const size_t cap = lm_ggml_backend_buffer_get_size(talloc->buffer);
    if (talloc->offset > cap || size > cap - talloc->offset) {
        LM_GGML_ABORT("lm_ggml_tallocr_alloc: not enough space in the buffer for tensor '%s' (needed %zu, available %zu)",
                      tensor->name, size, talloc->offset <= cap ? cap - talloc->offset : 0);
    }
    void * addr = (char *) talloc->base + talloc->offset;
    talloc->offset += size;
    lm_ggml_backend_tensor_alloc(talloc->buffer, tensor, addr);
}

// ---------------------------------------------------------------- arenas

struct span { size_t offset, size; };

// The memory plan of one buffer type: free blocks below `top` (sorted by
// offset, never adjacent to each other or to top); everything from `top`
// up is free. `peak` is the highest top reached: the buffer size needed.
struct arena {
    lm_ggml_backend_buffer_type_t buft;
    size_t alignment;
    struct span * free;
    int n_free, cap_free;
    size_t top, peak;
    bool overflow;  // the plan needs more than SIZE_MAX/2 bytes
    lm_ggml_backend_buffer_t buffer;
};

static void arena_reset(struct arena * a) {
    a->n_free = 0;
    a->top = 0;
    a->peak = 0;
    a->overflow = false;
}

static void arena_remove(struct arena * a, int i) {
    memmove(a->free + i, a->free + i + 1, (size_t)(a->n_free - i - 1) * sizeof(*a->free));
    a->n_free--;
}

// size is already aligned. Best fit among the holes (the last of equal
// sizes); otherwise at the top, starting in the hole that ends there if any.
static size_t arena_alloc(struct arena * a, size_t size) {
    int best = -1;
    for (int i = 0; i < a->n_free; i++) {
        if (a->free[i].size >= size && (best < 0 || a->free[i].size <= a->free[best].size)) best = i;
    }
    if (best >= 0) {
        struct span * b = &a->free[best];
        const size_t off = b->offset;
        b->offset += size;
        b->size -= size;
        if (b->size == 0) arena_remove(a, best);
        return off;
    }
    const size_t off = a->top;
    if (size > SIZE_MAX / 2 - a->top) {
        a->overflow = true;
        return 0;
    }
    a->top += size;
    if (a->top > a->peak) a->peak = a->top;
    return off;
}

static bool arena_free(struct arena * a, size_t off, size_t size) {
    // first block after the freed range
    int i = 0;
    while (i < a->n_free && a->free[i].offset < off) i++;
    const bool join_prev = i > 0 && a->free[i - 1].offset + a->free[i - 1].size == off;
    const bool join_next = i < a->n_free && off + size == a->free[i].offset;
    if (off + size == a->top) {
        // back to the top, with the hole below it
        a->top = join_prev ? a->free[i - 1].offset : off;
        if (join_prev) arena_remove(a, i - 1);
        return true;
    }
    if (join_prev && join_next) {
        a->free[i - 1].size += size + a->free[i].size;
        arena_remove(a, i);
    } else if (join_prev) {
        a->free[i - 1].size += size;
    } else if (join_next) {
        a->free[i].offset = off;
        a->free[i].size += size;
    } else {
        if (a->n_free == a->cap_free) {
            const int cap = a->cap_free > 0 ? 2 * a->cap_free : 16;
            struct span * nb = realloc(a->free, (size_t) cap * sizeof(*nb));
            if (nb == NULL) return lm_backend_fail("out of memory");
            a->free = nb;
            a->cap_free = cap;
        }
        memmove(a->free + i + 1, a->free + i, (size_t)(a->n_free - i) * sizeof(*a->free));
        a->free[i] = (struct span) { off, size };
        a->n_free++;
    }
    return true;
}

// ---------------------------------------------------------------- graph allocator

// A block of an arena: the memory of one tensor, or of a chain of tensors
// computed in place, from the step it is placed to the step it is released
// (node indices; -1 = before the first node, INT32_MAX = never released).
struct mblock {
    int32_t arena;
    int32_t start, end;
    size_t  size;
    size_t  offset;
};

// What the plan knows about one tensor (indexed like the hash set's keys).
struct tinfo {
    int32_t consumers;   // uses as a source by nodes not yet planned
    int32_t views;       // live views of this tensor
    int32_t block;       // its block (when placed by the plan)
    uint8_t own;         // holds its block (must return it)
    uint8_t placed;      // has an address (planned, or data of its own)
    uint8_t pinned;      // an input, or a parameter's gradient: never freed
    uint8_t leaf;        // a leaf (the caller's data): never overwritten in place
    uint8_t counted;     // (a view) counted in its source's views
};

struct lm_ggml_gallocr {
    int n_ids;              // buffer ids the caller uses
    int * id_arena;         // [n_ids] the arena of each id (ids of one buffer type share it)
    struct arena * arenas;  // [n_arenas]
    int n_arenas;

    struct lm_ggml_hash_set hash;
    struct tinfo * info;    // [hash.size]

    struct mblock * blocks; // of the plan
    int n_blocks, cap_blocks;
    int step;               // the node being planned

    // the plan the buffers hold
    bool     planned;
    uint64_t sig;
};

lm_ggml_gallocr_t lm_ggml_gallocr_new_n(lm_ggml_backend_buffer_type_t * bufts, int n_bufs) {
    if (bufts == NULL || n_bufs <= 0) {
        LM_GGML_LOG_ERROR("%s: no buffer types\n", __func__);
        return NULL;
    }
    for (int i = 0; i < n_bufs; i++) {
        if (bufts[i] == NULL) {
            LM_GGML_LOG_ERROR("%s: buffer type %d is NULL\n", __func__, i);
            return NULL;
        }
    }
    lm_ggml_gallocr_t g = calloc(1, sizeof(*g));
    int * ids = calloc((size_t) n_bufs, sizeof(*ids));
    struct arena * arenas = calloc((size_t) n_bufs, sizeof(*arenas));
    if (g == NULL || ids == NULL || arenas == NULL) {
        free(g); free(ids); free(arenas);
        LM_GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    g->n_ids = n_bufs;
    g->id_arena = ids;
    g->arenas = arenas;
    for (int i = 0; i < n_bufs; i++) {
        int a = 0;
        while (a < g->n_arenas && g->arenas[a].buft != bufts[i]) a++;
        if (a == g->n_arenas) {
            size_t align = lm_ggml_backend_buft_get_alignment(bufts[i]);
            if (align == 0 || (align & (align - 1)) != 0) align = 1;
            g->arenas[a].buft = bufts[i];
            g->arenas[a].alignment = align;
            g->n_arenas++;
        }
        g->id_arena[i] = a;
    }
    return g;
}

lm_ggml_gallocr_t lm_ggml_gallocr_new(lm_ggml_backend_buffer_type_t buft) {
    return lm_ggml_gallocr_new_n(&buft, 1);
}

void lm_ggml_gallocr_free(lm_ggml_gallocr_t g) {
    if (g == NULL) return;
    for (int a = 0; a < g->n_arenas; a++) {
        lm_ggml_backend_buffer_free(g->arenas[a].buffer);
        free(g->arenas[a].free);
    }
    if (g->hash.keys != NULL) lm_ggml_hash_set_free(&g->hash);
    free(g->info);
    free(g->blocks);
    free(g->arenas);
    free(g->id_arena);
    free(g);
}

// ---------------------------------------------------------------- planning

// Ops whose CPU kernels read each element (row) of an operand before writing
// the same element (row) of the result, so the result may take the operand's
// memory: the ops marked inplace in enum lm_ggml_op (ggml.h), from which
// ggml-op-inplace.h is generated. ggml's list plus the norms, the
// backward rules and clamp/leaky_relu/sin/cos, which have the same access
// pattern here.
static bool can_inplace(enum lm_ggml_op op) {
    return lm_ggml_op_can_inplace(op);
}

static bool same_layout(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b) {
    if (a->type != b->type) return false;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) return false;
    }
    return true;
}

static struct tinfo * info_of(lm_ggml_gallocr_t g, const struct lm_ggml_tensor * t) {
    const size_t i = lm_ggml_hash_find_or_insert(&g->hash, (struct lm_ggml_tensor *) t);
    return &g->info[i];
}

// Bytes of t's block in arena a (never 0, so every tensor gets an address).
static size_t block_size(const struct arena * a, struct lm_ggml_tensor * t) {
    const size_t n = lm_ggml_backend_buft_get_alloc_size(a->buft, t);
    return pad_to(n > 0 ? n : 1, a->alignment);
}

// Gives t a block if it needs one: no data of its own and not a view
// (views take their source's address; a source outside the graph is
// placed here too).
static bool place(lm_ggml_gallocr_t g, struct lm_ggml_tensor * t, int arena) {
    if (t->view_src != NULL) return place(g, t->view_src, arena);
    struct tinfo * ti = info_of(g, t);
    if (ti->placed) return true;
    ti->placed = 1;
    if (t->data != NULL) return true;
    if (g->n_blocks == g->cap_blocks) {
        const int cap = g->cap_blocks > 0 ? 2 * g->cap_blocks : 256;
        struct mblock * nb = realloc(g->blocks, (size_t) cap * sizeof(*nb));
        if (nb == NULL) return lm_backend_fail("out of memory");
        g->blocks = nb;
        g->cap_blocks = cap;
    }
    struct arena * a = &g->arenas[arena];
    struct mblock * b = &g->blocks[g->n_blocks];
    b->arena = arena;
    b->start = g->step;
    b->end = INT32_MAX;
    b->size = block_size(a, t);
    b->offset = arena_alloc(a, b->size);
    ti->block = g->n_blocks++;
    ti->own = 1;
    return true;
}

// Returns t's block to its arena, unless t is pinned.
static bool release_block(lm_ggml_gallocr_t g, const struct lm_ggml_tensor * t, struct tinfo * ti) {
    if (!ti->own || ti->pinned || (t->flags & LM_GGML_TENSOR_FLAG_OUTPUT)) return true;
    ti->own = 0;
    struct mblock * b = &g->blocks[ti->block];
    b->end = g->step;
    return arena_free(&g->arenas[b->arena], b->offset, b->size);
}

// The operand of node whose block node can take over, or NULL.
static struct lm_ggml_tensor * inplace_donor(lm_ggml_gallocr_t g, struct lm_ggml_tensor * node) {
    if (!can_inplace(node->op)) return NULL;
    for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
        struct lm_ggml_tensor * p = node->src[j];
        if (p == NULL || p == node || !same_layout(node, p) || (p->flags & LM_GGML_TENSOR_FLAG_OUTPUT)) continue;
        const struct tinfo * pi = info_of(g, p);
        if (pi->consumers != 1 || pi->views != 0) continue; // someone else still reads p
        struct lm_ggml_tensor * owner = p;
        if (p->view_src != NULL) {
            // a view that starts its source and is the source's last use
            owner = p->view_src;
            const struct tinfo * oi = info_of(g, owner);
            if (p->view_offs != 0 || oi->consumers != 0 || oi->views != 1) continue;
        }
        const struct tinfo * oi = info_of(g, owner);
        if (!oi->own || oi->pinned || oi->leaf || pi->pinned || (owner->flags & LM_GGML_TENSOR_FLAG_OUTPUT)) continue;
        return owner;
    }
    return NULL;
}

static bool place_node(lm_ggml_gallocr_t g, struct lm_ggml_tensor * node, int arena) {
    if (node->view_src != NULL || node->data != NULL) return place(g, node, arena);
    struct tinfo * ni = info_of(g, node);
    if (ni->placed) return true;
    struct lm_ggml_tensor * donor = inplace_donor(g, node);
    if (donor != NULL) {
        struct tinfo * di = info_of(g, donor);
        const struct mblock * b = &g->blocks[di->block];
        if (b->arena == arena && b->size >= block_size(&g->arenas[arena], node)) {
            ni->placed = 1;
            ni->own = 1;
            ni->block = di->block;
            di->own = 0; // the block now belongs to node
            return true;
        }
    }
    return place(g, node, arena);
}

// One use of t has been planned.
static bool use_done(lm_ggml_gallocr_t g, const struct lm_ggml_tensor * t) {
    struct tinfo * ti = info_of(g, t);
    if (--ti->consumers > 0 || ti->views > 0) return true;
    if (t->view_src == NULL) return release_block(g, t, ti);
    if (!ti->counted) return true;
    ti->counted = 0;
    struct tinfo * si = info_of(g, t->view_src);
    if (--si->views > 0 || si->consumers > 0) return true;
    return release_block(g, t->view_src, si);
}

// A view keeps its source alive until its own last use.
static void count_view(lm_ggml_gallocr_t g, const struct lm_ggml_tensor * t) {
    if (t->view_src == NULL) return;
    struct tinfo * ti = info_of(g, t);
    if (ti->counted) return;
    ti->counted = 1;
    info_of(g, t->view_src)->views++;
}

static int id_of(const int * ids, int i) { return ids != NULL ? ids[i] : 0; }

static bool ensure_hash(lm_ggml_gallocr_t g, const struct lm_ggml_cgraph * graph) {
    // every tensor of the plan: leafs, nodes, sources outside them, views' sources
    size_t n = (size_t) graph->n_leafs + (size_t) graph->n_nodes;
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct lm_ggml_tensor * node = graph->nodes[i];
        n += node->view_src != NULL;
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL) n += 1 + (node->src[j]->view_src != NULL);
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) n += graph->leafs[i]->view_src != NULL;
    n += n / 4 + 16;
    if (g->hash.keys != NULL && g->hash.size >= n) {
        lm_ggml_hash_set_reset(&g->hash);
    } else {
        if (g->hash.keys != NULL) lm_ggml_hash_set_free(&g->hash);
        free(g->info);
        g->info = NULL;
        g->hash = lm_ggml_hash_set_new(n);
        g->info = malloc(g->hash.size * sizeof(*g->info));
        if (g->info == NULL) return lm_backend_fail("out of memory");
    }
    memset(g->info, 0, g->hash.size * sizeof(*g->info));
    return true;
}

// ---------------------------------------------------------------- offline packing

// Beyond this many blocks the quadratic packing is skipped (the walk's
// offsets are kept).
#define REPACK_MAX_BLOCKS 8192

struct pkey { size_t size; int32_t start, end, idx; };

static int64_t pkey_life(const struct pkey * k) { return (int64_t) k->end - k->start; }

static int pkey_tie(const struct pkey * a, const struct pkey * b) {
    return (a->idx > b->idx) - (a->idx < b->idx);
}

// largest first, then longest lived
static int pkey_by_size(const void * pa, const void * pb) {
    const struct pkey * a = pa, * b = pb;
    if (a->size != b->size) return a->size < b->size ? 1 : -1;
    if (pkey_life(a) != pkey_life(b)) return pkey_life(a) < pkey_life(b) ? 1 : -1;
    return pkey_tie(a, b);
}

// longest lived first, then largest
static int pkey_by_life(const void * pa, const void * pb) {
    const struct pkey * a = pa, * b = pb;
    if (pkey_life(a) != pkey_life(b)) return pkey_life(a) < pkey_life(b) ? 1 : -1;
    if (a->size != b->size) return a->size < b->size ? 1 : -1;
    return pkey_tie(a, b);
}

// largest area (size times lifetime) first
static int pkey_by_area(const void * pa, const void * pb) {
    const struct pkey * a = pa, * b = pb;
    const double xa = (double) a->size * (double) (pkey_life(a) + 1), xb = (double) b->size * (double) (pkey_life(b) + 1);
    if (xa != xb) return xa < xb ? 1 : -1;
    return pkey_by_size(pa, pb);
}

// Orders tried by repack: none wins on every graph, and trying them costs
// little next to computing the graph.
static int (* const pkey_orders[])(const void *, const void *) = { pkey_by_size, pkey_by_life, pkey_by_area };

// Packs each arena's blocks again with their lifetimes known: in each order
// of pkey_orders, each block at the lowest offset where it overlaps no block
// packed so far that is alive at the same time. Keeps the packing that needs
// the least memory, the walk's included.
// Packs keys[0..m) in their order, each block at the lowest offset where it
// overlaps no block packed before it that is alive at the same time; sets
// off[] (by block index) and returns the memory needed. packed[] is scratch.
static size_t pack_in_order(const lm_ggml_gallocr_t g, const struct pkey * keys, int m, int * packed, size_t * off) {
    size_t peak = 0;
    int k = 0; // blocks packed so far, in packed[] by offset
    for (int q = 0; q < m; q++) {
        const struct pkey * b = &keys[q];
        size_t at = 0;
        int pos = 0; // where b goes in packed
        for (int j = 0; j < k; j++) {
            const struct mblock * p = &g->blocks[packed[j]];
            if (off[packed[j]] < at) pos = j + 1;
            if (p->end < b->start || b->end < p->start) continue; // never alive together
            if (off[packed[j]] >= at + b->size) break;             // b fits below p
            const size_t top = off[packed[j]] + p->size;
            if (top > at) at = top;
            pos = j + 1;
        }
        while (pos < k && off[packed[pos]] < at) pos++;
        memmove(packed + pos + 1, packed + pos, (size_t)(k - pos) * sizeof(*packed));
        packed[pos] = b->idx;
        k++;
        off[b->idx] = at;
        if (at + b->size > peak) peak = at + b->size;
    }
    return peak;
}

static bool repack(lm_ggml_gallocr_t g) {
    const int n = g->n_blocks;
    if (n < 2 || n > REPACK_MAX_BLOCKS) return true;
    struct pkey * keys = malloc((size_t) n * sizeof(*keys));
    int * packed = malloc((size_t) n * sizeof(*packed));
    size_t * off = malloc((size_t) n * sizeof(*off));
    if (keys == NULL || packed == NULL || off == NULL) {
        free(keys); free(packed); free(off);
        return true; // the walk's packing stands
    }
    for (int a = 0; a < g->n_arenas; a++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            const struct mblock * b = &g->blocks[i];
            if (b->arena == a) keys[m++] = (struct pkey) { b->size, b->start, b->end, i };
        }
        if (m < 2) continue;
        for (size_t o = 0; o < sizeof(pkey_orders) / sizeof(pkey_orders[0]); o++) {
            qsort(keys, (size_t) m, sizeof(*keys), pkey_orders[o]);
            const size_t peak = pack_in_order(g, keys, m, packed, off);
            if (peak < g->arenas[a].peak) {
                for (int q = 0; q < m; q++) g->blocks[keys[q].idx].offset = off[keys[q].idx];
                g->arenas[a].peak = peak;
            }
        }
    }
    free(keys); free(packed); free(off);
    return true;
}

static bool plan(lm_ggml_gallocr_t g, struct lm_ggml_cgraph * graph, const int * node_ids, const int * leaf_ids) {
    for (int i = 0; i < graph->n_nodes; i++) {
        const int id = id_of(node_ids, i);
        if (id < 0 || id >= g->n_ids) return lm_backend_fail("node %d has buffer id %d (allocator has %d)", i, id, g->n_ids);
        if (graph->nodes[i] == NULL) return lm_backend_fail("node %d is NULL", i);
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        const int id = id_of(leaf_ids, i);
        if (id < 0 || id >= g->n_ids) return lm_backend_fail("leaf %d has buffer id %d (allocator has %d)", i, id, g->n_ids);
        if (graph->leafs[i] == NULL) return lm_backend_fail("leaf %d is NULL", i);
    }
    if (!ensure_hash(g, graph)) return false;
    for (int a = 0; a < g->n_arenas; a++) arena_reset(&g->arenas[a]);
    g->n_blocks = 0;
    g->step = -1;

    // uses and views; inputs are pinned
    for (int i = 0; i < graph->n_leafs; i++) info_of(g, graph->leafs[i])->leaf = 1;
    for (int i = 0; i < graph->n_nodes; i++) {
        struct lm_ggml_tensor * node = graph->nodes[i];
        // an op-less node only orders allocations (the scheduler adds them): it keeps no source alive
        if (node->op != LM_GGML_OP_NONE) count_view(g, node);
        if (node->flags & LM_GGML_TENSOR_FLAG_INPUT) info_of(g, node)->pinned = 1;
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            struct lm_ggml_tensor * s = node->src[j];
            if (s == NULL || s == node) continue; // lm_ggml_cast names its result as its own source
            struct tinfo * si = info_of(g, s);
            si->consumers++;
            if (s->flags & LM_GGML_TENSOR_FLAG_INPUT) si->pinned = 1;
            count_view(g, s);
        }
    }

    // the gradients of the parameters are results, like outputs: a gradient
    // can be another node's tensor (d(a - b)/da is the incoming gradient)
    // that an in-place op would otherwise overwrite
    if (graph->grads != NULL) {
        for (int i = 0; i < graph->n_nodes + graph->n_leafs; i++) {
            struct lm_ggml_tensor * t = i < graph->n_nodes ? graph->nodes[i] : graph->leafs[i - graph->n_nodes];
            if (!(t->flags & LM_GGML_TENSOR_FLAG_PARAM)) continue;
            struct lm_ggml_tensor * r[2] = { lm_ggml_graph_get_grad(graph, t), lm_ggml_graph_get_grad_acc(graph, t) };
            for (int k = 0; k < 2; k++) {
                if (r[k] != NULL) info_of(g, r[k]->view_src != NULL ? r[k]->view_src : r[k])->pinned = 1;
            }
        }
    }

    // what the caller fills before computing: leafs, then inputs
    for (int i = 0; i < graph->n_leafs; i++) {
        if (!place(g, graph->leafs[i], g->id_arena[id_of(leaf_ids, i)])) return false;
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct lm_ggml_tensor * node = graph->nodes[i];
        const int arena = g->id_arena[id_of(node_ids, i)];
        if ((node->flags & LM_GGML_TENSOR_FLAG_INPUT) && !place(g, node, arena)) return false;
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            struct lm_ggml_tensor * s = node->src[j];
            if (s != NULL && (s->flags & LM_GGML_TENSOR_FLAG_INPUT) && !place(g, s, arena)) return false;
        }
    }

    // the nodes in execution order
    for (int i = 0; i < graph->n_nodes; i++) {
        struct lm_ggml_tensor * node = graph->nodes[i];
        const int arena = g->id_arena[id_of(node_ids, i)];
        g->step = i;
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL && node->src[j] != node && !place(g, node->src[j], arena)) return false;
        }
        if (!place_node(g, node, arena)) return false;
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL && node->src[j] != node && !use_done(g, node->src[j])) return false;
        }
    }
    return repack(g);
}

// ---------------------------------------------------------------- signature

static inline uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

// Whether b is one of g's buffers.
static bool is_ours(lm_ggml_gallocr_t g, const struct lm_ggml_backend_buffer * b) {
    for (int a = 0; a < g->n_arenas && b != NULL; a++) {
        if (g->arenas[a].buffer == b) return true;
    }
    return false;
}

// Whether t has memory of its own (not from this allocator's buffers): the
// plan leaves such tensors where they are. Tensors placed by the plan look
// the same before and after alloc_graph, so allocating the same graph again
// does not plan again.
static bool has_own_data(lm_ggml_gallocr_t g, const struct lm_ggml_tensor * t) {
    if (t->data == NULL) return false;
    const struct lm_ggml_backend_buffer * b = t->buffer != NULL ? t->buffer : (t->view_src != NULL ? t->view_src->buffer : NULL);
    return b == NULL || !is_ours(g, b);
}

static uint64_t mix_tensor(lm_ggml_gallocr_t g, uint64_t h, const struct lm_ggml_tensor * t) {
    h = mix(h, (uint64_t)(uintptr_t) t);
    h = mix(h, (uint64_t)(uintptr_t) t->view_src);
    // where a view lies in memory the plan does not manage (a KV cache) does
    // not change the plan: such a view may move between allocations
    // (lm_ggml_backend_view_init'ed views follow their offset in assign)
    if (t->view_src == NULL || !has_own_data(g, t->view_src)) h = mix(h, (uint64_t) t->view_offs);
    h = mix(h, ((uint64_t) t->op << 32) | ((uint64_t) t->type << 8) | ((uint64_t) t->flags << 1) | has_own_data(g, t));
    for (int k = 0; k < LM_GGML_MAX_DIMS; k++) {
        h = mix(h, (uint64_t) t->ne[k]);
        h = mix(h, (uint64_t) t->nb[k]);
    }
    return h;
}

// Everything the plan depends on: the tensors (by address), their shapes,
// flags, views and whether they have data, and the graph's structure. (Not
// the buffer ids: alloc_graph trusts that a graph of several buffers is the
// one reserve_n planned, as ggml's does.)
static uint64_t graph_sig(lm_ggml_gallocr_t g, const struct lm_ggml_cgraph * graph) {
    uint64_t h = mix(0, ((uint64_t) graph->n_nodes << 32) | (uint32_t) graph->n_leafs);
    for (int i = 0; i < graph->n_leafs; i++) h = mix_tensor(g, h, graph->leafs[i]);
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct lm_ggml_tensor * node = graph->nodes[i];
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            h = node->src[j] != NULL ? mix_tensor(g, h, node->src[j]) : mix(h, (uint64_t) j);
        }
        h = mix_tensor(g, h, node);
    }
    return h;
}

// ---------------------------------------------------------------- reserve and alloc

// Grows each arena's buffer to the plan's peak.
static bool size_buffers(lm_ggml_gallocr_t g) {
    for (int a = 0; a < g->n_arenas; a++) {
        struct arena * ar = &g->arenas[a];
        if (ar->overflow) return lm_backend_fail("the graph needs more than %zu bytes of %s memory", SIZE_MAX / 2, lm_ggml_backend_buft_name(ar->buft));
        if (ar->buffer != NULL && lm_ggml_backend_buffer_get_size(ar->buffer) >= ar->peak) continue;
        lm_ggml_backend_buffer_t nb = lm_ggml_backend_buft_alloc_buffer(ar->buft, ar->peak);
        if (nb == NULL) {
            return lm_backend_fail("cannot allocate a %s buffer of %zu bytes", lm_ggml_backend_buft_name(ar->buft), ar->peak);
        }
        lm_ggml_backend_buffer_set_usage(nb, LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE);
        if (ar->buffer == NULL) {
            ar->buffer = nb;
            continue;
        }
        // The buffer object keeps its identity and takes the new memory:
        // tensors an earlier plan placed in the old memory still name this
        // buffer, so forget() recognizes (and clears) their stale addresses
        // when a plan meets them again, instead of taking them for memory
        // of their own. (Buffer objects hold no pointer to themselves.)
        const struct lm_ggml_backend_buffer old = *ar->buffer;
        *ar->buffer = *nb;
        *nb = old;
        lm_ggml_backend_buffer_free(nb);
    }
    return true;
}

// Clears the address an earlier plan gave t (and its view source), so that
// the new plan places it: the plan keeps tensors with data where they are,
// and an address in g's buffers from another plan overlaps this plan's
// blocks (or lies in memory a growth replaced). Views of memory g does not
// manage keep theirs.
static void forget(lm_ggml_gallocr_t g, struct lm_ggml_tensor * t) {
    if (t == NULL) return;
    struct lm_ggml_tensor * s = t->view_src;
    if (s != NULL) {
        forget(g, s);
        if (s->data == NULL || is_ours(g, t->buffer)) {
            t->data = NULL;
            t->buffer = NULL;
        }
    } else if (t->data != NULL && is_ours(g, t->buffer)) {
        t->data = NULL;
        t->buffer = NULL;
    }
}

static void forget_graph(lm_ggml_gallocr_t g, struct lm_ggml_cgraph * graph) {
    for (int i = 0; i < graph->n_leafs; i++) forget(g, graph->leafs[i]);
    for (int i = 0; i < graph->n_nodes; i++) {
        struct lm_ggml_tensor * node = graph->nodes[i];
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) forget(g, node->src[j]);
        forget(g, node);
    }
}

static bool reserve(lm_ggml_gallocr_t g, struct lm_ggml_cgraph * graph, const int * node_ids, const int * leaf_ids) {
    g->planned = false;
    forget_graph(g, graph);
    if (!plan(g, graph, node_ids, leaf_ids) || !size_buffers(g)) return false;
    g->sig = graph_sig(g, graph);
    g->planned = true;
    return true;
}

bool lm_ggml_gallocr_reserve_n(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph,
                               const int * node_buffer_ids, const int * leaf_buffer_ids) {
    if (galloc == NULL || graph == NULL) {
        LM_GGML_LOG_ERROR("%s: allocator or graph is NULL\n", __func__);
        return false;
    }
    lm_backend_clear_error();
    if (!reserve(galloc, graph, node_buffer_ids, leaf_buffer_ids)) {
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, lm_backend_last_error());
        return false;
    }
    return true;
}

bool lm_ggml_gallocr_reserve(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph) {
    return lm_ggml_gallocr_reserve_n(galloc, graph, NULL, NULL);
}

// Gives t its planned address (views: their source's).
static bool assign(lm_ggml_gallocr_t g, struct lm_ggml_tensor * t) {
    if (t->view_src != NULL) {
        if (!assign(g, t->view_src)) return false;
        if (t->buffer != NULL && t->view_src->data != NULL && !is_ours(g, t->buffer)) {
            t->data = (char *) t->view_src->data + t->view_offs; // it may have moved (see mix_tensor)
            return true;
        }
        if (t->buffer != NULL || t->view_src->buffer == NULL) return true; // done, or memory not ours
        if (t->data == NULL || t->data == (char *) t->view_src->data + t->view_offs) {
            t->data = NULL;
            lm_ggml_backend_view_init(t);
        }
        return true;
    }
    if (t->data != NULL) return true;
    const size_t k = lm_ggml_hash_find(&g->hash, t);
    if (k == LM_GGML_HASHSET_FULL || !lm_ggml_bitset_get(g->hash.used, k) || !g->info[k].placed) {
        return lm_backend_fail("tensor '%s' is not in the plan", t->name);
    }
    const struct mblock * b = &g->blocks[g->info[k].block];
    lm_ggml_backend_buffer_t buf = g->arenas[b->arena].buffer;
    lm_ggml_backend_tensor_alloc(buf, t, (char *) lm_ggml_backend_buffer_get_base(buf) + b->offset);
    return true;
}

bool lm_ggml_gallocr_alloc_graph(lm_ggml_gallocr_t galloc, struct lm_ggml_cgraph * graph) {
    if (galloc == NULL || graph == NULL) {
        LM_GGML_LOG_ERROR("%s: allocator or graph is NULL\n", __func__);
        return false;
    }
    lm_backend_clear_error();
    if (!galloc->planned || graph_sig(galloc, graph) != galloc->sig) {
        if (galloc->n_ids > 1) {
            LM_GGML_LOG_ERROR("%s: the graph is not the one reserved; with several buffers call lm_ggml_gallocr_reserve_n first\n", __func__);
            return false;
        }
        if (!reserve(galloc, graph, NULL, NULL)) {
            LM_GGML_LOG_ERROR("%s: %s\n", __func__, lm_backend_last_error());
            return false;
        }
    }
    for (int a = 0; a < galloc->n_arenas; a++) lm_ggml_backend_buffer_reset(galloc->arenas[a].buffer);

    // an error frame catches a failed placement (it should not happen: the plan fits the buffers)
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        galloc->planned = false;
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, f.msg);
        return false;
    }
    bool ok = true;
    for (int i = 0; ok && i < graph->n_leafs; i++) ok = assign(galloc, graph->leafs[i]);
    for (int i = 0; ok && i < graph->n_nodes; i++) {
        struct lm_ggml_tensor * node = graph->nodes[i];
        for (int j = 0; ok && j < LM_GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL) ok = assign(galloc, node->src[j]);
        }
        if (ok) ok = assign(galloc, node);
    }
    lm_ggml_err_pop(&f);
    if (!ok) {
        galloc->planned = false;
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, lm_backend_last_error());
    }
    return ok;
}

size_t lm_ggml_gallocr_get_buffer_size(lm_ggml_gallocr_t galloc, int buffer_id) {
    if (galloc == NULL || buffer_id < 0 || buffer_id >= galloc->n_ids) {
        LM_GGML_LOG_ERROR("%s: invalid allocator or buffer id %d\n", __func__, buffer_id);
        return 0;
    }
    const int a = galloc->id_arena[buffer_id];
    // ids sharing a buffer type share its buffer: count it once, for the first
    for (int i = 0; i < buffer_id; i++) {
        if (galloc->id_arena[i] == a) return 0;
    }
    return lm_ggml_backend_buffer_get_size(galloc->arenas[a].buffer);
}

// ---------------------------------------------------------------- context tensors

// Allocates tensors [first, last) of ctx (those without data) in one buffer
// of size bytes, and initialises the views among them.
static lm_ggml_backend_buffer_t alloc_range(struct lm_ggml_context * ctx, struct lm_ggml_tensor * first, struct lm_ggml_tensor * last,
                                            lm_ggml_backend_buffer_type_t buft, size_t size) {
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, size);
    if (buf == NULL) return NULL;
    struct lm_ggml_tallocr ta = lm_ggml_tallocr_new(buf);
    for (struct lm_ggml_tensor * t = first; t != last; t = lm_ggml_get_next_tensor(ctx, t)) {
        if (t->view_src == NULL) {
            if (t->data == NULL) lm_ggml_tallocr_alloc(&ta, t);
        } else if (t->buffer == NULL && t->view_src->buffer != NULL) {
            t->data = NULL; // a view made before its source had memory
            lm_ggml_backend_view_init(t);
        }
    }
    return buf;
}

// The buffers made so far (on the heap: an abort can longjmp past us).
struct parts {
    lm_ggml_backend_buffer_t * bufs;
    size_t n;
};

static void parts_free(struct parts * p) {
    for (size_t i = 0; i < p->n; i++) lm_ggml_backend_buffer_free(p->bufs[i]);
    free(p->bufs);
    free(p);
}

// Cuts ctx's tensors into runs of at most max bytes, one buffer each.
static bool alloc_runs(struct lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft, struct parts * p) {
    const size_t align = lm_ggml_backend_buft_get_alignment(buft);
    const size_t max = lm_ggml_backend_buft_get_max_size(buft);
    struct lm_ggml_tensor * first = lm_ggml_get_first_tensor(ctx);
    size_t run = 0;
    bool any = false;
    for (struct lm_ggml_tensor * t = first; ; t = lm_ggml_get_next_tensor(ctx, t)) {
        size_t need = 0;
        if (t != NULL && t->data == NULL && t->view_src == NULL) {
            need = pad_to(lm_ggml_backend_buft_get_alloc_size(buft, t), align);
            if (need == 0) need = align > 0 ? align : 1; // every tensor gets an address of its own
            any = true;
            if (need > max) {
                return lm_backend_fail("tensor '%s' (%zu bytes) exceeds the maximum size of a %s buffer (%zu)",
                                       t->name, need, lm_ggml_backend_buft_name(buft), max);
            }
        }
        if (t == NULL || run + need > max) {
            if (run > 0 || (t == NULL && any && p->n == 0)) {
                lm_ggml_backend_buffer_t * nb = realloc(p->bufs, (p->n + 1) * sizeof(*nb));
                if (nb == NULL) return lm_backend_fail("out of memory");
                p->bufs = nb;
                lm_ggml_backend_buffer_t b = alloc_range(ctx, first, t, buft, run);
                if (b == NULL) return lm_backend_fail("cannot allocate a %s buffer of %zu bytes", lm_ggml_backend_buft_name(buft), run);
                p->bufs[p->n++] = b;
            }
            if (t == NULL) return true;
            first = t;
            run = 0;
        }
        run += need;
    }
}

lm_ggml_backend_buffer_t lm_ggml_backend_alloc_ctx_tensors_from_buft(struct lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft) {
    if (ctx == NULL || buft == NULL) {
        LM_GGML_LOG_ERROR("%s: context or buffer type is NULL\n", __func__);
        return NULL;
    }
    struct parts * p = calloc(1, sizeof(*p));
    if (p == NULL) return NULL;
    lm_backend_clear_error();
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        // a tensor's placement failed (a backend's init_tensor)
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, f.msg);
        parts_free(p);
        return NULL;
    }
    const bool ok = alloc_runs(ctx, buft, p);
    lm_ggml_err_pop(&f);

    lm_ggml_backend_buffer_t result = NULL;
    if (!ok) {
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, lm_backend_last_error());
    } else if (p->n == 1) {
        result = p->bufs[0];
        p->n = 0;
    } else if (p->n > 1) {
        result = lm_backend_multi_buffer_new(p->bufs, p->n);
        if (result != NULL) p->n = 0; // the multi-buffer owns them
    }
    parts_free(p);
    return result;
}

lm_ggml_backend_buffer_t lm_ggml_backend_alloc_ctx_tensors(struct lm_ggml_context * ctx, lm_ggml_backend_t backend) {
    if (backend == NULL) {
        LM_GGML_LOG_ERROR("%s: backend is NULL\n", __func__);
        return NULL;
    }
    return lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, lm_ggml_backend_get_default_buffer_type(backend));
}
