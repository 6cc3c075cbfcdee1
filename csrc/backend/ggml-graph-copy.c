// ggml-graph-copy.c - copying a computed graph to another backend, and
// computing a graph on two backends side by side (what upstream's
// test-backend-ops compares backends with).
#include "ggml-backend-impl.h"
#include "ggml-alloc.h"

#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- tensor map

// Original tensor -> its copy; open addressing, grown at half load (the
// tensors reachable from a graph are not bounded by its size: view sources
// and sources need not be in it).
struct tmap {
    size_t size, used;
    const struct lm_ggml_tensor ** keys;
    struct lm_ggml_tensor ** vals;
};

static bool tmap_init(struct tmap * m, size_t n) {
    m->size = lm_ggml_hash_size(n * 2 + 16);
    m->used = 0;
    m->keys = calloc(m->size, sizeof(*m->keys));
    m->vals = calloc(m->size, sizeof(*m->vals));
    return m->keys != NULL && m->vals != NULL;
}

static void tmap_free(struct tmap * m) {
    free(m->keys);
    free(m->vals);
}

static size_t tmap_slot(const struct tmap * m, const struct lm_ggml_tensor * t) {
    size_t i = lm_ggml_hash(t) % m->size;
    while (m->keys[i] != NULL && m->keys[i] != t) {
        i = (i + 1) % m->size;
    }
    return i;
}

static struct lm_ggml_tensor * tmap_get(const struct tmap * m, const struct lm_ggml_tensor * t) {
    return m->vals[tmap_slot(m, t)];
}

static bool tmap_has(const struct tmap * m, const struct lm_ggml_tensor * t) {
    return m->keys[tmap_slot(m, t)] == t;
}

static bool tmap_put(struct tmap * m, const struct lm_ggml_tensor * t, struct lm_ggml_tensor * v) {
    if (!tmap_has(m, t) && 2 * (m->used + 1) > m->size) {
        struct tmap bigger;
        if (!tmap_init(&bigger, m->size)) {
            tmap_free(&bigger);
            return false;
        }
        for (size_t i = 0; i < m->size; i++) {
            if (m->keys[i] != NULL) {
                const size_t j = tmap_slot(&bigger, m->keys[i]);
                bigger.keys[j] = m->keys[i];
                bigger.vals[j] = m->vals[i];
                bigger.used++;
            }
        }
        tmap_free(m);
        *m = bigger;
    }
    const size_t i = tmap_slot(m, t);
    if (m->keys[i] == NULL) {
        m->used++;
    }
    m->keys[i] = t;
    m->vals[i] = v;
    return true;
}

// ---------------------------------------------------------------- collecting

// Every tensor the graph's nodes reach (sources, view sources), each after
// the tensors it depends on. Marks them in m (value NULL until copied).
struct tlist {
    struct lm_ggml_tensor ** v;
    size_t n, cap;
};

static bool tlist_push(struct tlist * l, struct lm_ggml_tensor * t) {
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 64;
        struct lm_ggml_tensor ** v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            return false;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = t;
    return true;
}

// The dependencies of t: its view source first (a view is set up from it),
// then its sources.
static struct lm_ggml_tensor * dependency(struct lm_ggml_tensor * t, int k) {
    return k == 0 ? t->view_src : t->src[k - 1];
}

struct frame {
    struct lm_ggml_tensor * t;
    int next; // next dependency to visit
};

static bool push_frame(struct frame ** stack, size_t * top, size_t * cap, struct lm_ggml_tensor * t) {
    if (*top == *cap) {
        const size_t n = *cap ? 2 * *cap : 64;
        struct frame * s = realloc(*stack, n * sizeof(*s));
        if (s == NULL) {
            return false;
        }
        *stack = s;
        *cap = n;
    }
    (*stack)[(*top)++] = (struct frame) { t, 0 };
    return true;
}

// Post-order walk with an explicit stack (deep chains stay off the C stack).
static bool collect(struct lm_ggml_cgraph * g, struct tmap * seen, struct tlist * order) {
    struct frame * stack = NULL;
    size_t top = 0, cap = 0;
    bool ok = true;
    for (int i = 0; i < g->n_nodes + g->n_leafs && ok; i++) {
        struct lm_ggml_tensor * root = i < g->n_nodes ? g->nodes[i] : g->leafs[i - g->n_nodes];
        if (tmap_has(seen, root)) {
            continue;
        }
        ok = tmap_put(seen, root, NULL) && push_frame(&stack, &top, &cap, root);
        while (ok && top > 0) {
            struct frame * f = &stack[top - 1];
            if (f->next > LM_GGML_MAX_SRC) {
                ok = tlist_push(order, f->t);
                top--;
                continue;
            }
            struct lm_ggml_tensor * d = dependency(f->t, f->next++);
            if (d != NULL && !tmap_has(seen, d)) {
                ok = tmap_put(seen, d, NULL) && push_frame(&stack, &top, &cap, d);
            }
        }
    }
    free(stack);
    return ok;
}

// ---------------------------------------------------------------- graph copy

// The copies of order's tensors, without memory yet (the map gets them).
// An abort of the core (a tensor it refuses) comes back as false.
static bool make_tensors(const struct tlist * order, struct tmap * map, struct lm_ggml_backend_graph_copy * c) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_graph_copy: %s\n", f.msg);
        return false;
    }
    for (size_t i = 0; i < order->n; i++) {
        const struct lm_ggml_tensor * t = order->v[i];
        // tensors with memory of their own go to ctx_allocated (they get the
        // backend buffer), views to ctx_unallocated
        struct lm_ggml_tensor * d = lm_ggml_new_tensor(t->view_src ? c->ctx_unallocated : c->ctx_allocated,
                                                       t->type, LM_GGML_MAX_DIMS, t->ne);
        memcpy(d->nb, t->nb, sizeof(d->nb));
        if (t->view_src != NULL) {
            d->view_src = tmap_get(map, t->view_src);
            d->view_offs = t->view_offs;
        }
        d->op = t->op;
        d->flags = t->flags;
        memcpy(d->op_params, t->op_params, sizeof(d->op_params));
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            d->src[j] = t->src[j] ? tmap_get(map, t->src[j]) : NULL;
        }
        lm_ggml_set_name(d, t->name);
        tmap_put(map, t, d); // t is a key already: no growth, cannot fail
    }
    lm_ggml_err_pop(&f);
    return true;
}

// Fills the copies (order has sources before their users, so a view's
// source has its address when the view is set up) and builds the graph.
static bool fill_copies(struct lm_ggml_cgraph * graph, const struct tlist * order, const struct tmap * map, int size,
                        struct lm_ggml_backend_graph_copy * c) {
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_graph_copy: %s\n", f.msg);
        return false;
    }
    for (size_t i = 0; i < order->n; i++) {
        struct lm_ggml_tensor * t = order->v[i];
        struct lm_ggml_tensor * d = tmap_get(map, t);
        if (d->view_src != NULL) {
            lm_ggml_backend_view_init(d);
        } else {
            lm_ggml_backend_tensor_copy(t, d);
        }
    }
    struct lm_ggml_cgraph * g = lm_ggml_new_graph_custom(c->ctx_allocated, (size_t) size, false);
    for (int i = 0; i < graph->n_nodes; i++) {
        g->nodes[i] = tmap_get(map, graph->nodes[i]);
    }
    g->n_nodes = graph->n_nodes;
    for (int i = 0; i < graph->n_leafs && i < g->size; i++) {
        g->leafs[g->n_leafs++] = tmap_get(map, graph->leafs[i]);
    }
    c->graph = g;
    lm_ggml_err_pop(&f);
    return true;
}

struct lm_ggml_backend_graph_copy lm_ggml_backend_graph_copy(lm_ggml_backend_t backend, struct lm_ggml_cgraph * graph) {
    struct lm_ggml_backend_graph_copy c = { NULL, NULL, NULL, NULL };
    if (backend == NULL || graph == NULL) {
        LM_GGML_LOG_ERROR("%s: NULL %s\n", __func__, backend == NULL ? "backend" : "graph");
        return c;
    }
    struct tmap map = { 0 };
    struct tlist order = { 0 };
    const char * fail = NULL;

    if (!tmap_init(&map, (size_t) graph->n_nodes + (size_t) graph->n_leafs) || !collect(graph, &map, &order)) {
        fail = "out of memory";
    }
    for (size_t i = 0; fail == NULL && i < order.n; i++) {
        const struct lm_ggml_tensor * t = order.v[i];
        if (t->data == NULL && (t->view_src == NULL || t->view_src->data == NULL)) {
            LM_GGML_LOG_ERROR("%s: tensor %s has no data\n", __func__, t->name);
            fail = "the graph must be allocated";
        }
    }
    const int size = graph->size > graph->n_nodes ? graph->size : (graph->n_nodes > 0 ? graph->n_nodes : 1);
    if (fail == NULL) {
        struct lm_ggml_init_params p = {
            lm_ggml_tensor_overhead() * order.n + lm_ggml_graph_overhead_custom((size_t) size, false), NULL, true,
        };
        c.ctx_allocated = lm_ggml_init(p);
        c.ctx_unallocated = lm_ggml_init(p);
        if (c.ctx_allocated == NULL || c.ctx_unallocated == NULL) {
            fail = "out of memory";
        }
    }
    if (fail == NULL && !make_tensors(&order, &map, &c)) {
        fail = "cannot copy the tensors";
    }
    if (fail == NULL && (c.buffer = lm_ggml_backend_alloc_ctx_tensors(c.ctx_allocated, backend)) == NULL) {
        fail = "cannot allocate the buffer";
    }
    if (fail == NULL && !fill_copies(graph, &order, &map, size, &c)) {
        fail = "cannot copy the data";
    }
    tmap_free(&map);
    free(order.v);
    if (fail != NULL) {
        LM_GGML_LOG_ERROR("%s: %s\n", __func__, fail);
        lm_ggml_backend_graph_copy_free(c);
        c = (struct lm_ggml_backend_graph_copy) { NULL, NULL, NULL, NULL };
    }
    return c;
}

void lm_ggml_backend_graph_copy_free(struct lm_ggml_backend_graph_copy copy) {
    if (copy.buffer != NULL) {
        lm_ggml_backend_buffer_free(copy.buffer);
    }
    lm_ggml_free(copy.ctx_allocated);
    lm_ggml_free(copy.ctx_unallocated);
}

// ---------------------------------------------------------------- comparing backends

bool lm_ggml_backend_compare_graph_backend(lm_ggml_backend_t backend1, lm_ggml_backend_t backend2, struct lm_ggml_cgraph * graph,
                                           lm_ggml_backend_eval_callback callback, void * user_data) {
    if (backend1 == NULL || backend2 == NULL || graph == NULL || callback == NULL) {
        LM_GGML_LOG_ERROR("%s: NULL argument\n", __func__);
        return false;
    }
    struct lm_ggml_backend_graph_copy copy = lm_ggml_backend_graph_copy(backend2, graph);
    if (copy.graph == NULL) {
        return false;
    }
    bool ok = true;
    for (int i = 0; i < graph->n_nodes; i++) {
        struct lm_ggml_tensor * t1 = graph->nodes[i];
        struct lm_ggml_tensor * t2 = copy.graph->nodes[i];
        struct lm_ggml_cgraph v1 = lm_ggml_graph_view(graph, i, i + 1);
        struct lm_ggml_cgraph v2 = lm_ggml_graph_view(copy.graph, i, i + 1);
        const enum lm_ggml_status s1 = lm_ggml_backend_graph_compute(backend1, &v1);
        const enum lm_ggml_status s2 = lm_ggml_backend_graph_compute(backend2, &v2);
        if (s1 != LM_GGML_STATUS_SUCCESS || s2 != LM_GGML_STATUS_SUCCESS) {
            LM_GGML_LOG_ERROR("%s: node %d (%s): %s on %s\n", __func__, i, lm_ggml_op_desc(t1),
                lm_ggml_status_to_string(s1 != LM_GGML_STATUS_SUCCESS ? s1 : s2),
                lm_ggml_backend_name(s1 != LM_GGML_STATUS_SUCCESS ? backend1 : backend2));
            ok = false;
            break;
        }
        // views compute nothing: there is nothing to compare
        if (t1->op == LM_GGML_OP_VIEW || t1->op == LM_GGML_OP_RESHAPE || t1->op == LM_GGML_OP_PERMUTE ||
            t1->op == LM_GGML_OP_TRANSPOSE) {
            continue;
        }
        if (!callback(i, t1, t2, user_data)) {
            break;
        }
    }
    lm_ggml_backend_graph_copy_free(copy);
    return ok;
}
