// repack.c - the CPU_REPACK buffer type (lm_ggml_backend_cpu_aarch64_buffer_type):
// weight matrices stored in a layout the mat-vec reads in one sequential
// pass, for one-token decoding.
//
// Why. The 8-row mat-vec kernels read block i of eight rows at once: eight
// addresses a row apart, moving 34 bytes a step. Hardware prefetchers
// follow that poorly: loads alone in that order are slower than loads over
// the same bytes row after row.
// In the repacked layout the bytes lie in the order the kernel reads them,
// and each block's eight scales are one 16-byte load instead of eight
// inserts, so the kernel is faster both from cache and from memory.
//
// The layouts: the rows of each 2-D slice in groups of 8; per group and
// block b, the 8 rows' fp16 scales (16 bytes), then their quants:
// - q8_0 (34-byte blocks, 272 bytes a group block): 32 bytes of quants per
//   row in the row order 0,4,1,5,2,6,3,7 (two rows per 64 bytes, as the
//   AVX-512 kernel pairs them);
// - q4_0 and iq4_nl (18-byte blocks, 144 bytes): 16 bytes of quants per row
//   in row order (four rows per 64 bytes, one per 128-bit lane);
// - q4_K (144-byte blocks, 1152 bytes): the 8 d, the 8 dmin, the packed
//   6-bit scales and mins word by word, then the quants in row pairs, 32
//   bytes (two sub-blocks) per row at a time, their nibbles reordered
//   (rp_layout and rp_nibbles below);
// - q6_K (210-byte blocks, 1680 bytes): the 8 d, then each row's other 208
//   bytes in row order.
// A group takes the bytes of its 8 plain rows: a permutation of them, so
// sizes and offsets are those of the plain layout. Rows after the last
// whole group of a slice stay plain.
//
// Only tensors the CPU has kernels for in their repacked layout are
// repacked (lm_cpu_repacks_type: these types with at least 8 rows,
// contiguous, on x86-64 at the AVX2 and AVX-512 levels);
// everything else in such a buffer is stored plain and read by every op as
// usual. Reading and writing through the buffer (tensor_get/set/memset)
// gives and takes the plain bytes, so the layout is invisible except to the
// kernels: only mul_mat may read a repacked tensor (ggml-cpu.c refuses others).
// The layouts' code is repack-layout.c; this file is the buffer type.
#include "../backend/ggml-backend-impl.h"
#include "ggml-cpu-impl.h"
#include "mm-kernels.h"

#include <stdlib.h>
#include <string.h>

#define RP_ROWS LM_CPU_REPACK_ROWS

// the tag in tensor->extra of a repacked tensor
static const char g_repack_tag = 'R';

// The tag alone is not enough: a tensor whose buffer was freed and that
// was allocated again in another kind of buffer keeps its extra field.
bool lm_cpu_tensor_is_repacked(const struct lm_ggml_tensor * t) {
    return t != NULL && t->extra == &g_repack_tag && t->buffer != NULL && lm_cpu_buft_is_repack(t->buffer->buft);
}

bool lm_cpu_repacked_read_ok(const struct lm_ggml_tensor * node, int src, const struct lm_ggml_tensor * t) {
    const struct lm_ggml_tensor * owner = t->view_src != NULL ? t->view_src : t;
    return !lm_cpu_tensor_is_repacked(owner) || (node->op == LM_GGML_OP_MUL_MAT && src == 0 && owner == t);
}

// where the level has kernels for the repacked layout (mm_qgemm_repacked)
bool lm_cpu_repacks_type(enum lm_ggml_type type) {
    return lm_cpu_repack_has_layout(type) && mm_qgemm_repacked(type) != NULL;
}

static bool repack_wanted(const struct lm_ggml_tensor * t) {
    return t->view_src == NULL && t->ne[0] > 0 && t->ne[1] >= RP_ROWS && lm_ggml_nelements(t) > 0 &&
           lm_ggml_is_contiguous(t) && lm_cpu_repacks_type(t->type);
}


// ---------------------------------------------------------------- byte access in plain terms

enum rp_mode { RP_GET, RP_SET, RP_MEMSET };


// What the access needs of a repacked tensor: its memory, type, row size
// and rows per 2-D slice.
struct rp_geom { char * base; enum lm_ggml_type type; size_t rowb, rows; };

// [off, off + size) of the plain bytes of a repacked tensor: pieces in the
// plain rows after a slice's last group are accessed in place; pieces of a
// group through its plain form in tmp (whole groups of a get or a set are
// converted directly, and so is a memset that packs to itself).
static bool rp_access(const struct rp_geom * t, size_t off, size_t size, enum rp_mode mode, const void * src,
                      void * dst, uint8_t value) {
    const enum lm_ggml_type type = t->type;
    const size_t rowb = t->rowb;
    const size_t rows = t->rows;
    const size_t slice = rowb * rows, gbytes = RP_ROWS * rowb, grouped = rows / RP_ROWS * gbytes;
    const bool fill_packed = mode == RP_MEMSET && lm_cpu_repack_fill_is_packed(type, value);
    char * base = t->base;
    char * tmp = NULL;
    const size_t end = off + size;
    for (size_t pos = off; pos < end;) {
        const size_t s = pos / slice, in = pos % slice;
        char * p = base + s * slice;
        if (in >= grouped) { // plain rows
            const size_t n = LM_GGML_MIN(end - pos, slice - in);
            if (mode == RP_GET) memcpy((char *) dst + (pos - off), p + in, n);
            else if (mode == RP_SET) memcpy(p + in, (const char *) src + (pos - off), n);
            else memset(p + in, value, n);
            pos += n;
            continue;
        }
        const size_t g0 = in / gbytes * gbytes, rel = in - g0;
        const size_t n = LM_GGML_MIN(end - pos, gbytes - rel);
        char * g = p + g0;
        if (n == gbytes && mode == RP_GET) {
            lm_cpu_repack_unpack(type, g, rowb, (char *) dst + (pos - off));
        } else if (n == gbytes && mode == RP_SET) {
            lm_cpu_repack_pack(type, (const char *) src + (pos - off), rowb, g);
        } else if (n == gbytes && fill_packed) {
            memset(g, value, n);
        } else {
            if (tmp == NULL && (tmp = malloc(gbytes)) == NULL) return lm_backend_fail("out of memory");
            if (n < gbytes) lm_cpu_repack_unpack(type, g, rowb, tmp); // a whole group (a memset) is all overwritten
            if (mode == RP_GET) {
                memcpy((char *) dst + (pos - off), tmp + rel, n);
            } else {
                if (mode == RP_SET) memcpy(tmp + rel, (const char *) src + (pos - off), n);
                else memset(tmp + rel, value, n);
                lm_cpu_repack_pack(type, tmp, rowb, g);
            }
        }
        pos += n;
    }
    free(tmp);
    return true;
}

// The tensor whose memory t's bytes are (itself, or a view's source), and
// where t's bytes start in it.
static const struct lm_ggml_tensor * rp_owner(const struct lm_ggml_tensor * t, size_t * off) {
    while (t->view_src != NULL) {
        *off += t->view_offs;
        t = t->view_src;
    }
    return t;
}

static bool rp_tensor_access(const struct lm_ggml_tensor * t, size_t off, size_t size, enum rp_mode mode,
                             const void * src, void * dst, uint8_t value) {
    size_t o = off;
    const struct lm_ggml_tensor * owner = rp_owner(t, &o);
    if (lm_cpu_tensor_is_repacked(owner)) {
        const struct rp_geom g = { owner->data, owner->type, owner->nb[1], (size_t) owner->ne[1] };
        return rp_access(&g, o, size, mode, src, dst, value);
    }
    char * p = (char *) t->data + off;
    if (mode == RP_GET) memcpy(dst, p, size);
    else if (mode == RP_SET) memcpy(p, src, size);
    else memset(p, value, size);
    return true;
}

// ---------------------------------------------------------------- the buffer type

// A buffer's memory and where its repacked tensors lie, so that a clear
// can write each the packing of its filled plain bytes (lm_cpu_repack_fill_is_packed).
// A tensor placed over a region ends it: the regions describe the tensors
// last placed.
struct rp_region { size_t off, size, rowb, rows; enum lm_ggml_type type; };
struct rp_buf { char * mem; size_t n, cap; struct rp_region * r; };

static void * rp_base(lm_ggml_backend_buffer_t buf) { return ((struct rp_buf *) buf->ctx)->mem; }
static void rp_free(lm_ggml_backend_buffer_t buf) {
    struct rp_buf * b = buf->ctx;
    lm_big_free(b->mem);
    free(b->r);
    free(b);
}

static void rp_forget(struct rp_buf * b, size_t off, size_t size) {
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (b->r[i].off < off + size && off < b->r[i].off + b->r[i].size) continue; // overlaps
        b->r[k++] = b->r[i];
    }
    b->n = k;
}

static bool rp_remember(struct rp_buf * b, const struct rp_region * r) {
    if (b->n == b->cap) {
        const size_t cap = b->cap ? 2 * b->cap : 16;
        struct rp_region * nr = realloc(b->r, cap * sizeof(*nr));
        if (nr == NULL) return false;
        b->r = nr;
        b->cap = cap;
    }
    b->r[b->n++] = *r;
    return true;
}

static bool rp_init_tensor(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t) {
    struct rp_buf * b = buf->ctx;
    const size_t off = (size_t)((char *) t->data - b->mem), size = lm_ggml_nbytes(t);
    if (t->view_src == NULL) rp_forget(b, off, size);
    // a tensor that cannot be remembered stays plain: slower, never wrong
    const struct rp_region r = { off, size, t->nb[1], (size_t) t->ne[1], t->type };
    if (repack_wanted(t) && rp_remember(b, &r)) t->extra = (void *) &g_repack_tag;
    else if (t->extra == &g_repack_tag) t->extra = NULL; // from an earlier life
    return true;
}

static bool rp_memset(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t, uint8_t value, size_t offset, size_t size) {
    (void) buf;
    return rp_tensor_access(t, offset, size, RP_MEMSET, NULL, NULL, value);
}

static bool rp_set(lm_ggml_backend_buffer_t buf, struct lm_ggml_tensor * t, const void * data, size_t offset, size_t size) {
    (void) buf;
    return rp_tensor_access(t, offset, size, RP_SET, data, NULL, 0);
}

static bool rp_get(lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * t, void * data, size_t offset, size_t size) {
    (void) buf;
    return rp_tensor_access(t, offset, size, RP_GET, NULL, data, 0);
}

static bool rp_cpy(lm_ggml_backend_buffer_t buf, const struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst, bool * done) {
    (void) buf; (void) src; (void) dst;
    *done = false; // through the host: tensor_get of src, tensor_set of dst
    return true;
}

static bool rp_clear(lm_ggml_backend_buffer_t buf, uint8_t value) {
    struct rp_buf * b = buf->ctx;
    memset(b->mem, value, buf->size);
    for (size_t i = 0; i < b->n; i++) {
        const struct rp_region * r = &b->r[i];
        if (lm_cpu_repack_fill_is_packed(r->type, value)) continue;
        const struct rp_geom g = { b->mem + r->off, r->type, r->rowb, r->rows };
        if (!rp_access(&g, 0, r->size, RP_MEMSET, NULL, NULL, value)) return false;
    }
    return true;
}

static const struct lm_backend_buffer_ops rp_buffer_ops = {
    .free = rp_free, .base = rp_base, .init_tensor = rp_init_tensor,
    .memset_tensor = rp_memset, .set_tensor = rp_set, .get_tensor = rp_get,
    .cpy_tensor = rp_cpy, .clear = rp_clear,
};

static const char * rp_buft_name(lm_ggml_backend_buffer_type_t buft) { (void) buft; return "CPU_REPACK"; }
static size_t rp_buft_alignment(lm_ggml_backend_buffer_type_t buft) { (void) buft; return 64; }
// not host memory to others: the bytes of a repacked tensor are not its plain bytes
static bool rp_buft_is_host(lm_ggml_backend_buffer_type_t buft) { (void) buft; return false; }

static lm_ggml_backend_buffer_t rp_buft_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    struct rp_buf * b = calloc(1, sizeof(*b));
    if (b == NULL) {
        lm_backend_fail("out of memory");
        return NULL;
    }
    lm_ggml_backend_buffer_t buf = lm_backend_host_buffer_alloc(buft, &rp_buffer_ops, size);
    if (buf == NULL) {
        free(b);
        return NULL;
    }
    b->mem = buf->ctx; // the host buffer's context is its memory
    buf->ctx = b;
    return buf;
}

const struct lm_backend_buft_ops lm_cpu_repack_buft_ops = {
    .name = rp_buft_name, .alloc = rp_buft_alloc, .alignment = rp_buft_alignment, .is_host = rp_buft_is_host,
};

// The buffer type is the CPU backend's (ggml-backend-cpu.c holds the object,
// with its device); it is known by these operations.
bool lm_cpu_buft_is_repack(lm_ggml_backend_buffer_type_t buft) {
    return buft != NULL && buft->ops == &lm_cpu_repack_buft_ops;
}
