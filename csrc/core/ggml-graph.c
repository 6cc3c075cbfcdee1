// ggml-graph.c - computation graphs: the visited-set, forward expansion,
// copies and views, lookup, printing and graphviz output.
#include "../base/ggml-impl.h"

#include <errno.h>

// ---------------------------------------------------------------- hash set

size_t lm_ggml_bitset_size(size_t n) {
    return (n + 31) / 32;
}

// Smallest prime >= min_sz from a table of primes growing by ~2x, so that the
// load factor stays low without computing primes at run time.
size_t lm_ggml_hash_size(size_t min_sz) {
    static const size_t primes[] = {
        2, 3, 5, 11, 17, 37, 67, 131, 257, 521, 1031, 2053, 4099, 8209, 16411, 32771, 65537, 131101,
        262147, 524309, 1048583, 2097169, 4194319, 8388617, 16777259, 33554467, 67108879, 134217757,
        268435459, 536870923, 1073741827, 2147483659u
    };
    const size_t n = sizeof(primes) / sizeof(primes[0]);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (primes[mid] < min_sz) lo = mid + 1; else hi = mid;
    }
    return lo < n ? primes[lo] : (min_sz | 1);
}

struct lm_ggml_hash_set lm_ggml_hash_set_new(size_t size) {
    size = lm_ggml_hash_size(size);
    struct lm_ggml_hash_set hs;
    hs.size = size;
    hs.keys = malloc(sizeof(struct lm_ggml_tensor *) * size);
    hs.used = calloc(lm_ggml_bitset_size(size), sizeof(uint32_t));
    LM_GGML_ASSERT(hs.keys != NULL && hs.used != NULL && "out of memory");
    return hs;
}

void lm_ggml_hash_set_free(struct lm_ggml_hash_set * hs) {
    free(hs->used);
    free(hs->keys);
    hs->used = NULL;
    hs->keys = NULL;
}

void lm_ggml_hash_set_reset(struct lm_ggml_hash_set * hs) {
    memset(hs->used, 0, sizeof(uint32_t) * lm_ggml_bitset_size(hs->size));
}

// ---------------------------------------------------------------- graph memory

static size_t graph_nbytes(size_t size, bool grads) {
    const size_t hash_size = lm_ggml_hash_size(size * 2);
    size_t nbytes = sizeof(struct lm_ggml_cgraph);
    nbytes += size * sizeof(struct lm_ggml_tensor *) * 2;               // nodes + leafs
    nbytes += hash_size * sizeof(struct lm_ggml_tensor *);              // hash keys
    if (grads) {
        nbytes += hash_size * sizeof(struct lm_ggml_tensor *) * 2;      // grads + grad_accs
    }
    nbytes += lm_ggml_bitset_size(hash_size) * sizeof(uint32_t);
    return nbytes;
}

size_t lm_ggml_graph_overhead_custom(size_t size, bool grads) {
    return LM_GGML_OBJECT_SIZE + LM_GGML_PAD(graph_nbytes(size, grads), LM_GGML_MEM_ALIGN);
}

size_t lm_ggml_graph_overhead(void) {
    return lm_ggml_graph_overhead_custom(LM_GGML_DEFAULT_GRAPH_SIZE, false);
}

struct lm_ggml_cgraph * lm_ggml_new_graph_custom(struct lm_ggml_context * ctx, size_t size, bool grads) {
    LM_GGML_ASSERT(size > 0 && size <= (size_t) INT32_MAX / 2 && "invalid graph size");
    const size_t nbytes = graph_nbytes(size, grads);
    struct lm_ggml_object * obj = lm_ggml_new_object(ctx, LM_GGML_OBJECT_TYPE_GRAPH, nbytes);
    struct lm_ggml_cgraph * cgraph = (struct lm_ggml_cgraph *)((char *) ctx->mem_buffer + obj->offs);

    const size_t hash_size = lm_ggml_hash_size(size * 2);
    struct lm_ggml_tensor ** p = (struct lm_ggml_tensor **)(cgraph + 1);
    struct lm_ggml_tensor ** nodes = p; p += size;
    struct lm_ggml_tensor ** leafs = p; p += size;
    struct lm_ggml_tensor ** keys  = p; p += hash_size;
    struct lm_ggml_tensor ** grads_arr = grads ? p : NULL; p += grads ? hash_size : 0;
    struct lm_ggml_tensor ** accs_arr  = grads ? p : NULL; p += grads ? hash_size : 0;
    uint32_t * used = (uint32_t *) p;

    *cgraph = (struct lm_ggml_cgraph) {
        .size = (int) size,
        .n_nodes = 0,
        .n_leafs = 0,
        .nodes = nodes,
        .grads = grads_arr,
        .grad_accs = accs_arr,
        .leafs = leafs,
        .visited_hash_set = { hash_size, used, keys },
        .order = LM_GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT,
    };
    lm_ggml_hash_set_reset(&cgraph->visited_hash_set);
    if (grads) {
        memset(grads_arr, 0, hash_size * sizeof(struct lm_ggml_tensor *));
        memset(accs_arr, 0, hash_size * sizeof(struct lm_ggml_tensor *));
    }
    return cgraph;
}

struct lm_ggml_cgraph * lm_ggml_new_graph(struct lm_ggml_context * ctx) {
    return lm_ggml_new_graph_custom(ctx, LM_GGML_DEFAULT_GRAPH_SIZE, false);
}

struct lm_ggml_cgraph lm_ggml_graph_view(struct lm_ggml_cgraph * cgraph, int i0, int i1) {
    struct lm_ggml_cgraph view = {
        .size = 0,
        .n_nodes = i1 - i0,
        .n_leafs = 0,
        .nodes = cgraph->nodes + i0,
        .grads = NULL,
        .grad_accs = NULL,
        .leafs = NULL,
        .visited_hash_set = { 0, NULL, NULL },
        .order = cgraph->order,
    };
    return view;
}

// ---------------------------------------------------------------- forward expansion

// Post-order walk over the sources (left to right, or right to left by the
// graph's order); an explicit stack keeps deep chains off the C stack.
static void visit_parents(struct lm_ggml_cgraph * cgraph, struct lm_ggml_tensor * root) {
    struct frame { struct lm_ggml_tensor * node; int next; };
    size_t cap = 64, top = 0;
    struct frame * stack = malloc(cap * sizeof(*stack));
    LM_GGML_ASSERT(stack != NULL);

    if (lm_ggml_hash_insert(&cgraph->visited_hash_set, root) == LM_GGML_HASHSET_ALREADY_EXISTS) {
        free(stack);
        return;
    }
    stack[top++] = (struct frame) { root, 0 };

    while (top > 0) {
        struct frame * f = &stack[top - 1];
        if (f->next < LM_GGML_MAX_SRC) {
            const int k = f->next++;
            const int i = cgraph->order == LM_GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT ? k : LM_GGML_MAX_SRC - 1 - k;
            struct lm_ggml_tensor * src = f->node->src[i];
            if (src == NULL) continue;
            if (lm_ggml_hash_insert(&cgraph->visited_hash_set, src) == LM_GGML_HASHSET_ALREADY_EXISTS) continue;
            if (top == cap) {
                cap *= 2;
                struct frame * grown = realloc(stack, cap * sizeof(*stack));
                if (grown == NULL) {
                    free(stack);
                    LM_GGML_ABORT("out of memory while expanding the graph");
                }
                stack = grown;
            }
            stack[top++] = (struct frame) { src, 0 };
            continue;
        }
        struct lm_ggml_tensor * node = f->node;
        top--;
        if (node->op == LM_GGML_OP_NONE && !(node->flags & LM_GGML_TENSOR_FLAG_PARAM)) {
            if (cgraph->n_leafs >= cgraph->size) {
                free(stack);
                LM_GGML_ABORT("graph is full: more than %d leafs", cgraph->size);
            }
            if (node->name[0] == '\0') {
                lm_ggml_format_name(node, "leaf_%d", cgraph->n_leafs);
            }
            cgraph->leafs[cgraph->n_leafs++] = node;
        } else {
            if (cgraph->n_nodes >= cgraph->size) {
                free(stack);
                LM_GGML_ABORT("graph is full: more than %d nodes", cgraph->size);
            }
            if (node->name[0] == '\0') {
                lm_ggml_format_name(node, "node_%d", cgraph->n_nodes);
            }
            cgraph->nodes[cgraph->n_nodes++] = node;
        }
    }
    free(stack);
}

void lm_ggml_build_forward_expand(struct lm_ggml_cgraph * cgraph, struct lm_ggml_tensor * tensor) {
    LM_GGML_ASSERT(cgraph != NULL && tensor != NULL);
    LM_GGML_ASSERT(cgraph->size > 0 && "cannot expand a graph view");
    const int n0 = cgraph->n_nodes;
    visit_parents(cgraph, tensor);
    if (cgraph->n_nodes > n0) {
        LM_GGML_ASSERT(cgraph->nodes[cgraph->n_nodes - 1] == tensor);
    }
}

// ---------------------------------------------------------------- copies and access

void lm_ggml_graph_cpy(struct lm_ggml_cgraph * src, struct lm_ggml_cgraph * dst) {
    LM_GGML_ASSERT(dst->size >= src->n_leafs && "destination graph too small");
    LM_GGML_ASSERT(dst->size >= src->n_nodes && "destination graph too small");
    LM_GGML_ASSERT(dst->visited_hash_set.size >= src->visited_hash_set.size && "destination graph too small");

    dst->n_leafs = src->n_leafs;
    dst->n_nodes = src->n_nodes;
    dst->order = src->order;
    memcpy(dst->leafs, src->leafs, sizeof(struct lm_ggml_tensor *) * src->n_leafs);
    memcpy(dst->nodes, src->nodes, sizeof(struct lm_ggml_tensor *) * src->n_nodes);

    lm_ggml_hash_set_reset(&dst->visited_hash_set);
    if (dst->grads) {
        memset(dst->grads, 0, dst->visited_hash_set.size * sizeof(struct lm_ggml_tensor *));
        memset(dst->grad_accs, 0, dst->visited_hash_set.size * sizeof(struct lm_ggml_tensor *));
    }
    for (size_t i = 0; i < src->visited_hash_set.size; i++) {
        if (!lm_ggml_bitset_get(src->visited_hash_set.used, i)) continue;
        struct lm_ggml_tensor * key = src->visited_hash_set.keys[i];
        const size_t j = lm_ggml_hash_insert(&dst->visited_hash_set, key);
        if (src->grads && j != LM_GGML_HASHSET_ALREADY_EXISTS) {
            LM_GGML_ASSERT(dst->grads != NULL && "destination graph has no gradients");
            dst->grads[j] = src->grads[i];
            dst->grad_accs[j] = src->grad_accs[i];
        }
    }
}

struct lm_ggml_cgraph * lm_ggml_graph_dup(struct lm_ggml_context * ctx, struct lm_ggml_cgraph * cgraph) {
    struct lm_ggml_cgraph * result = lm_ggml_new_graph_custom(ctx, cgraph->size, cgraph->grads != NULL);
    lm_ggml_graph_cpy(cgraph, result);
    return result;
}

void lm_ggml_graph_clear(struct lm_ggml_cgraph * cgraph) {
    cgraph->n_leafs = 0;
    cgraph->n_nodes = 0;
    lm_ggml_hash_set_reset(&cgraph->visited_hash_set);
}

int lm_ggml_graph_size(struct lm_ggml_cgraph * cgraph) { return cgraph->size; }

struct lm_ggml_tensor * lm_ggml_graph_node(struct lm_ggml_cgraph * cgraph, int i) {
    if (i < 0) {
        LM_GGML_ASSERT(cgraph->n_nodes + i >= 0 && "graph node index out of range");
        return cgraph->nodes[cgraph->n_nodes + i];
    }
    LM_GGML_ASSERT(i < cgraph->n_nodes && "graph node index out of range");
    return cgraph->nodes[i];
}

struct lm_ggml_tensor ** lm_ggml_graph_nodes(struct lm_ggml_cgraph * cgraph) { return cgraph->nodes; }
int lm_ggml_graph_n_nodes(struct lm_ggml_cgraph * cgraph) { return cgraph->n_nodes; }

void lm_ggml_graph_add_node(struct lm_ggml_cgraph * cgraph, struct lm_ggml_tensor * tensor) {
    LM_GGML_ASSERT(cgraph->size > cgraph->n_nodes && "graph is full");
    cgraph->nodes[cgraph->n_nodes++] = tensor;
}

struct lm_ggml_tensor * lm_ggml_graph_get_tensor(const struct lm_ggml_cgraph * cgraph, const char * name) {
    for (int i = 0; i < cgraph->n_leafs; i++) {
        if (strcmp(cgraph->leafs[i]->name, name) == 0) return cgraph->leafs[i];
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        if (strcmp(cgraph->nodes[i]->name, name) == 0) return cgraph->nodes[i];
    }
    return NULL;
}

// ---------------------------------------------------------------- printing

void lm_ggml_graph_print(const struct lm_ggml_cgraph * cgraph) {
    LM_GGML_LOG_INFO("=== GRAPH ===\n");
    LM_GGML_LOG_INFO("n_nodes = %d\n", cgraph->n_nodes);
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct lm_ggml_tensor * n = cgraph->nodes[i];
        LM_GGML_LOG_INFO(" - %3d: [ %5lld, %5lld, %5lld] %16s %s\n", i,
                         (long long) n->ne[0], (long long) n->ne[1], (long long) n->ne[2],
                         lm_ggml_op_desc(n), (n->flags & LM_GGML_TENSOR_FLAG_PARAM) ? "x" : " ");
    }
    LM_GGML_LOG_INFO("n_leafs = %d\n", cgraph->n_leafs);
    for (int i = 0; i < cgraph->n_leafs; i++) {
        const struct lm_ggml_tensor * n = cgraph->leafs[i];
        LM_GGML_LOG_INFO(" - %3d: [ %5lld, %5lld] %8s %16s\n", i,
                         (long long) n->ne[0], (long long) n->ne[1], lm_ggml_op_name(n->op), n->name);
    }
    LM_GGML_LOG_INFO("========================================\n");
}

static bool graph_has_node(const struct lm_ggml_cgraph * g, const struct lm_ggml_tensor * t) {
    if (g == NULL) return false;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i] == t) return true;
    }
    return false;
}

int lm_graph_dump_dot_file(const struct lm_ggml_cgraph * gb, const struct lm_ggml_cgraph * gf, const char * filename) {
    FILE * fp = fopen(filename, "w");
    if (fp == NULL) {
        return errno != 0 ? errno : EIO;
    }
    fprintf(fp, "digraph G {\n  newrank = true;\n  rankdir = TB;\n");
    for (int i = 0; i < gb->n_nodes; i++) {
        const struct lm_ggml_tensor * n = gb->nodes[i];
        const char * color = (n->flags & LM_GGML_TENSOR_FLAG_PARAM) ? "yellow" :
                             graph_has_node(gf, n) ? "white" : "green";
        fprintf(fp, "  \"%p\" [ style = filled; fillcolor = %s; shape = record; label=\"%s (%s)|%d [%lld, %lld, %lld]|%s\"; ]\n",
                (const void *) n, color, n->name, lm_ggml_type_name(n->type), i,
                (long long) n->ne[0], (long long) n->ne[1], (long long) n->ne[2], lm_ggml_op_symbol(n->op));
    }
    for (int i = 0; i < gb->n_leafs; i++) {
        const struct lm_ggml_tensor * n = gb->leafs[i];
        fprintf(fp, "  \"%p\" [ style = filled; fillcolor = pink; shape = record; label=\"<x>%s (%s)|[%lld, %lld]\"; ]\n",
                (const void *) n, n->name, lm_ggml_type_name(n->type), (long long) n->ne[0], (long long) n->ne[1]);
    }
    for (int i = 0; i < gb->n_nodes; i++) {
        const struct lm_ggml_tensor * n = gb->nodes[i];
        for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
            if (n->src[j]) {
                fprintf(fp, "  \"%p\" -> \"%p\" [ label = \"src%d\"; ]\n", (const void *) n->src[j], (const void *) n, j);
            }
        }
    }
    fprintf(fp, "}\n");
    const bool write_failed = ferror(fp) != 0;
    const int write_errno = errno;
    if (fclose(fp) != 0 || write_failed) {
        return write_failed && write_errno != 0 ? write_errno : (errno != 0 ? errno : EIO);
    }
    return 0;
}

void lm_ggml_graph_dump_dot(const struct lm_ggml_cgraph * gb, const struct lm_ggml_cgraph * gf, const char * filename) {
    const int err = lm_graph_dump_dot_file(gb, gf, filename);
    if (err != 0) {
        LM_GGML_LOG_ERROR("%s: cannot write %s: %s\n", __func__, filename, strerror(err));
        return;
    }
    LM_GGML_LOG_INFO("%s: dot -Tpng %s -o %s.png && open %s.png\n", __func__, filename, filename, filename);
}

// ggml's binary graph export format is obsolete; export writes a
// readable description, import is not supported.
void lm_ggml_graph_export(const struct lm_ggml_cgraph * cgraph, const char * fname) {
    FILE * fp = fopen(fname, "w");
    if (fp == NULL) {
        LM_GGML_LOG_ERROR("%s: cannot open %s\n", __func__, fname);
        return;
    }
    fprintf(fp, "leafs %d nodes %d\n", cgraph->n_leafs, cgraph->n_nodes);
    for (int i = 0; i < cgraph->n_leafs; i++) {
        const struct lm_ggml_tensor * t = cgraph->leafs[i];
        fprintf(fp, "leaf %s %s %lld %lld %lld %lld %s\n", lm_ggml_type_name(t->type), lm_ggml_op_name(t->op),
                (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3], t->name);
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct lm_ggml_tensor * t = cgraph->nodes[i];
        fprintf(fp, "node %s %s %lld %lld %lld %lld %s\n", lm_ggml_type_name(t->type), lm_ggml_op_desc(t),
                (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3], t->name);
    }
    fclose(fp);
}

struct lm_ggml_cgraph * lm_ggml_graph_import(const char * fname, struct lm_ggml_context ** ctx_data, struct lm_ggml_context ** ctx_eval) {
    LM_GGML_UNUSED(ctx_data);
    LM_GGML_UNUSED(ctx_eval);
    LM_GGML_LOG_ERROR("%s: importing graphs (%s) is not supported\n", __func__, fname);
    return NULL;
}

// ---------------------------------------------------------------- gradients of a graph

static size_t grad_slot(const struct lm_ggml_cgraph * cgraph, const struct lm_ggml_tensor * node) {
    if (cgraph->grads == NULL || cgraph->visited_hash_set.size == 0) {
        return LM_GGML_HASHSET_FULL;
    }
    const size_t i = lm_ggml_hash_find(&cgraph->visited_hash_set, node);
    if (i == LM_GGML_HASHSET_FULL || !lm_ggml_bitset_get(cgraph->visited_hash_set.used, i)) {
        return LM_GGML_HASHSET_FULL;
    }
    return i;
}

struct lm_ggml_tensor * lm_ggml_graph_get_grad(const struct lm_ggml_cgraph * cgraph, const struct lm_ggml_tensor * node) {
    const size_t i = grad_slot(cgraph, node);
    return i == LM_GGML_HASHSET_FULL ? NULL : cgraph->grads[i];
}

struct lm_ggml_tensor * lm_ggml_graph_get_grad_acc(const struct lm_ggml_cgraph * cgraph, const struct lm_ggml_tensor * node) {
    const size_t i = grad_slot(cgraph, node);
    return i == LM_GGML_HASHSET_FULL ? NULL : cgraph->grad_accs[i];
}
