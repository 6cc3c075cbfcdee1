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
#include "../backend/ggml-backend-impl.h"
#include "ggml-cpu-impl.h"
#include "mm-kernels.h"

#include <stdlib.h>
#include <string.h>

#define RP_ROWS 8

// the tag in tensor->extra of a repacked tensor
static const char g_repack_tag = 'R';

// The tag alone is not enough: a tensor whose buffer was freed and that
// was allocated again in another kind of buffer keeps its extra field.
bool lm_cpu_tensor_is_repacked(const struct lm_ggml_tensor * t) {
    return t != NULL && t->extra == &g_repack_tag && t->buffer != NULL &&
           lm_ggml_backend_cpu_buft_is_aarch64(t->buffer->buft);
}

bool lm_cpu_repacked_read_ok(const struct lm_ggml_tensor * node, int src, const struct lm_ggml_tensor * t) {
    const struct lm_ggml_tensor * owner = t->view_src != NULL ? t->view_src : t;
    return !lm_cpu_tensor_is_repacked(owner) || (node->op == LM_GGML_OP_MUL_MAT && src == 0 && owner == t);
}

// A layout is a list of pieces: bytes [plain, plain + len) of each row's
// block go to packed + len * slot(row) of the group block, where slot is
// the row (RP_ROW) or its place in the pairs (0,4), (1,5), (2,6), (3,7)
// (RP_PAIR: two rows per 64 bytes, as the AVX-512 kernels pair them).
// Every byte of a block is in exactly one piece; the group block is the 8
// plain blocks' bytes, so sizes and offsets are the plain ones. A piece with
// nib set is 32 bytes whose nibbles are also reordered (rp_nibbles).
enum rp_slot { RP_ROW, RP_PAIR };
struct rp_piece { uint16_t plain, len, packed; uint8_t slot, nib; };
#define RP_MAX_PIECES 9
struct rp_layout { uint8_t n; struct rp_piece p[RP_MAX_PIECES]; };

// q8_0, q4_0, iq4_nl: the 8 fp16 scales, then the quants.
// q4_K: the 8 d, the 8 dmin, then the 12 bytes of 6-bit scales and mins as
// three 4-byte words, each word of the 8 rows together (one vector op
// unpacks a field of all 8 rows), then the quants 32 bytes at a time (each
// 32 bytes are sub-blocks 2j and 2j + 1) in row pairs, nibbles reordered.
#define RP_BYTES(plain, len, packed, slot) { plain, len, packed, slot, 0 }
#define RP_NIBS(plain, packed) { plain, 32, packed, RP_PAIR, 1 }
static const struct rp_layout g_rp_q8_0 = { 2, { RP_BYTES(0, 2, 0, RP_ROW), RP_BYTES(2, 32, 16, RP_PAIR) } };
static const struct rp_layout g_rp_q4_0 = { 2, { RP_BYTES(0, 2, 0, RP_ROW), RP_BYTES(2, 16, 16, RP_ROW) } };
// q6_K: the 8 d, then each row's block without its d (ql, qh and scales at
// their plain offsets: the plain kernel's block reader reads it as a block).
static const struct rp_layout g_rp_q6_K = { 2, { RP_BYTES(208, 2, 0, RP_ROW), RP_BYTES(0, 208, 16, RP_ROW) } };
static const struct rp_layout g_rp_q4_K = { 9, { RP_BYTES(0, 2, 0, RP_ROW), RP_BYTES(2, 2, 16, RP_ROW),
    RP_BYTES(4, 4, 32, RP_ROW), RP_BYTES(8, 4, 64, RP_ROW), RP_BYTES(12, 4, 96, RP_ROW),
    RP_NIBS(16, 128), RP_NIBS(48, 384), RP_NIBS(80, 640), RP_NIBS(112, 896) } };

static const struct rp_layout * rp_layout(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q8_0:   return &g_rp_q8_0;
        case LM_GGML_TYPE_Q4_0:
        case LM_GGML_TYPE_IQ4_NL: return &g_rp_q4_0;
        case LM_GGML_TYPE_Q4_K:   return &g_rp_q4_K;
        case LM_GGML_TYPE_Q6_K:   return &g_rp_q6_K;
        default:                  return NULL;
    }
}

// where the level has kernels for the repacked layout (mm_qgemm_repacked)
bool lm_cpu_repacks_type(enum lm_ggml_type type) {
    return rp_layout(type) != NULL && mm_qgemm_repacked(type) != NULL;
}

static bool repack_wanted(const struct lm_ggml_tensor * t) {
    return t->view_src == NULL && t->ne[0] > 0 && t->ne[1] >= RP_ROWS && lm_ggml_nelements(t) > 0 &&
           lm_ggml_is_contiguous(t) && lm_cpu_repacks_type(t->type);
}

static inline size_t rp_slot_of(uint8_t slot, int i) {
    return slot == RP_PAIR ? (size_t)((i % 4) * 2 + i / 4) : (size_t) i;
}

// 32 bytes of q4_K quants, sub-blocks A (low nibbles) and B (high) of a
// plain block, as the AVX2 kernel reads them against the 16-bit interleave
// of A's and B's activations. Per 16 bytes (128-bit lane) L, packed 16-bit
// word 2m holds A's quants of activations t and t + 8 (low and high nibble
// of each byte), word 2m + 1 B's, t = 16 L + 2 m + e for its bytes e = 0,
// 1: what unpacklo_epi16 (t) and unpackhi_epi16 (t + 8) of A's and B's
// activations put there. Done in 64-bit words, little-endian as the bytes.
#define RP_LO4 0x0F0F0F0F0F0F0F0Full
static uint64_t rp_le64(const uint8_t * p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static void rp_st64(uint8_t * p, uint64_t v) {
    for (int i = 0; i < 8; i++, v >>= 8) p[i] = (uint8_t) v;
}
// 16-bit words 0 and 2 of x side by side, and back
static uint64_t rp_even_words(uint64_t x) { x &= 0x0000FFFF0000FFFFull; return (x | x >> 16) & 0xFFFFFFFFull; }
static uint64_t rp_spread_words(uint64_t v) { return (v | v << 16) & 0x0000FFFF0000FFFFull; }

// plain -> packed (pack), or back
static void rp_nibbles(const uint8_t * src, uint8_t * dst, bool pack) {
    uint8_t out[32];
    for (int L = 0; L < 32; L += 16) {
        const uint64_t x0 = rp_le64(src + L), x1 = rp_le64(src + L + 8);
        uint64_t lo, hi;
        if (pack) { // x0: the bytes of t = 16 L + k, x1: of t + 8
            const uint64_t qa = (x0 & RP_LO4) | (x1 & RP_LO4) << 4, qb = (x0 >> 4 & RP_LO4) | (x1 & ~RP_LO4);
            lo = rp_spread_words(qa & 0xFFFFFFFFull) | rp_spread_words(qb & 0xFFFFFFFFull) << 16;
            hi = rp_spread_words(qa >> 32) | rp_spread_words(qb >> 32) << 16;
        } else { // the packed words: A's even, B's odd
            const uint64_t qa = rp_even_words(x0) | rp_even_words(x1) << 32;
            const uint64_t qb = rp_even_words(x0 >> 16) | rp_even_words(x1 >> 16) << 32;
            lo = (qa & RP_LO4) | (qb & RP_LO4) << 4;
            hi = (qa >> 4 & RP_LO4) | (qb & ~RP_LO4);
        }
        rp_st64(out + L, lo);
        rp_st64(out + L + 8, hi);
    }
    memcpy(dst, out, sizeof(out));
}

// One block of row i: its plain bytes (src) -> their places in a group
// block (dst), or (unpacking) from a group block back to plain.
static void rp_block(const struct rp_layout * l, const char * src, char * dst, int i, bool pack) {
    for (int k = 0; k < l->n; k++) {
        const struct rp_piece * p = &l->p[k];
        const size_t q = p->packed + p->len * rp_slot_of(p->slot, i);
        const char * from = pack ? src + p->plain : src + q;
        char * to = pack ? dst + q : dst + p->plain;
        if (p->nib) rp_nibbles((const uint8_t *) from, (uint8_t *) to, pack);
        else memcpy(to, from, p->len);
    }
}

void lm_cpu_repack_block(enum lm_ggml_type type, const char * packed, int row, char * plain) {
    rp_block(rp_layout(type), packed, plain, row, false);
}

// One group of 8 rows of rowb bytes, plain -> repacked (pack) or back.
static void rp_convert(enum lm_ggml_type type, const char * src, size_t rowb, char * dst, bool pack) {
    const struct rp_layout * l = rp_layout(type);
    const size_t bb = lm_ggml_type_size(type), nb = rowb / bb;
    for (size_t b = 0; b < nb; b++) {
        for (int i = 0; i < RP_ROWS; i++) {
            const size_t plain = (size_t) i * rowb + b * bb, packed = b * RP_ROWS * bb;
            if (pack) rp_block(l, src + plain, dst + packed, i, true);
            else rp_block(l, src + packed, dst + plain, i, false);
        }
    }
}

void lm_cpu_repack_pack(enum lm_ggml_type type, const char * plain, size_t rowb, char * out) {
    rp_convert(type, plain, rowb, out, true);
}

void lm_cpu_repack_unpack(enum lm_ggml_type type, const char * packed, size_t rowb, char * plain) {
    rp_convert(type, packed, rowb, plain, false);
}


// ---------------------------------------------------------------- byte access in plain terms

enum rp_mode { RP_GET, RP_SET, RP_MEMSET };

// Whether a group block filled with value is the packing of plain blocks
// filled with it: always, unless nibbles move between the halves of bytes
// (q4_K) and value's two nibbles differ.
static bool rp_fill_is_packed(enum lm_ggml_type type, uint8_t value) {
    const struct rp_layout * l = rp_layout(type);
    bool nib = false;
    for (int k = 0; k < l->n; k++) nib = nib || l->p[k].nib;
    return !nib || (value >> 4) == (value & 0xF);
}

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
    const bool fill_packed = mode == RP_MEMSET && rp_fill_is_packed(type, value);
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
// can write each the packing of its filled plain bytes (rp_fill_is_packed).
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
        if (rp_fill_is_packed(r->type, value)) continue;
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
