// repack-layout.c - the byte layouts of the CPU_REPACK buffer type
// (repack.c says why and what they are): where each byte of 8 plain rows
// goes in a group block, and the conversions both ways. Below the buffer
// type and the kernels that read a group (mm-qgemm-x86.c): it calls neither.
#include "ggml-cpu-impl.h"

#include <string.h>

#define RP_ROWS LM_CPU_REPACK_ROWS

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

bool lm_cpu_repack_has_layout(enum lm_ggml_type type) {
    return rp_layout(type) != NULL;
}

// Whether a group block filled with value is the packing of plain blocks
// filled with it: always, unless nibbles move between the halves of bytes
// (q4_K) and value's two nibbles differ.
bool lm_cpu_repack_fill_is_packed(enum lm_ggml_type type, uint8_t value) {
    const struct rp_layout * l = rp_layout(type);
    bool nib = false;
    for (int k = 0; k < l->n; k++) nib = nib || l->p[k].nib;
    return !nib || (value >> 4) == (value & 0xF);
}
