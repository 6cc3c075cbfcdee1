// ggml-impl.h - internal declarations shared by the C files of the core.
// Not part of the public API.
#pragma once

// The kernels are written for GCC's -O3: it unrolls the small constant loops
// over rows and pairs of rows in full and inlines more; at -O2 the mat-vecs,
// GEMMs and graph loop are markedly slower. So a C program that builds the
// core with -O2 (as ../shared/tools and csrc/cgo.go's doc do) gets the code
// cgo's -O3 build gets. Not at -O0 or -Os, nor with LM_GGML_NO_O3 defined.
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && \
    !defined(LM_GGML_NO_O3)
#pragma GCC optimize("O3")
#endif

#include "ggml.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LM_GGML_UNUSED_VAR(x) (void)(x)
#define LM_GGML_MIN(a, b) ((a) < (b) ? (a) : (b))
#define LM_GGML_MAX(a, b) ((a) > (b) ? (a) : (b))

// ---------------------------------------------------------------- logging

LM_GGML_ATTRIBUTE_FORMAT(2, 3)
void lm_ggml_log_internal(enum lm_ggml_log_level level, const char * format, ...);
#define LM_GGML_LOG_INFO(...)  lm_ggml_log_internal(LM_GGML_LOG_LEVEL_INFO , __VA_ARGS__)
#define LM_GGML_LOG_WARN(...)  lm_ggml_log_internal(LM_GGML_LOG_LEVEL_WARN , __VA_ARGS__)
#define LM_GGML_LOG_ERROR(...) lm_ggml_log_internal(LM_GGML_LOG_LEVEL_ERROR, __VA_ARGS__)
#define LM_GGML_LOG_DEBUG(...) lm_ggml_log_internal(LM_GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)

// ---------------------------------------------------------------- recoverable errors
//
// lm_ggml_abort normally prints and aborts, as in ggml. A caller that
// wants errors instead (the Go bindings) arms a per-thread jump buffer with
// LM_GGML_TRY; an abort on that thread then longjmps back with the message.
// Only the thread that armed it is affected: worker threads still abort.
#include <setjmp.h>
struct lm_ggml_err_frame {
    jmp_buf jb;
    char    msg[512];
    struct lm_ggml_err_frame * prev;
};
struct lm_ggml_err_frame ** lm_ggml_err_top(void);
// Usage: struct lm_ggml_err_frame f; if (LM_GGML_TRY(&f)) { error in f.msg } else { ...; lm_ggml_err_pop(&f); }
#define LM_GGML_TRY(f) (lm_ggml_err_push(f), setjmp((f)->jb))
void lm_ggml_err_push(struct lm_ggml_err_frame * f);
void lm_ggml_err_pop (struct lm_ggml_err_frame * f);
// Reports a failure that a function returns as a status rather than by
// aborting (e.g. a graph that cannot be computed): to frame f, if the caller
// armed one, without jumping (the caller reads f->msg after the status);
// otherwise as an error log line.
LM_GGML_ATTRIBUTE_FORMAT(2, 3)
void lm_ggml_err_report(struct lm_ggml_err_frame * f, const char * fmt, ...);
// While quiet is on (calls nest), WARN and ERROR log lines from this thread
// are dropped: a caller that returns the failure as an error of its own
// (the Go bindings) turns it on around the call, so that the failure is
// not reported twice.
void lm_ggml_log_quiet(bool on);

// Tensor flag (internal, beyond the public ones): the tensor's memory is
// read-only (e.g. a read-only mapping of a model file). Computing a node
// that writes into it, or into a view of it, is refused.
#define LM_TENSOR_FLAG_READONLY (1 << 16)

// ---------------------------------------------------------------- fp16 / bf16 scalars

static inline uint32_t lm_fp32_bits(float f) { union { float f; uint32_t u; } v = { f }; return v.u; }
static inline float    lm_fp32_from_bits(uint32_t u) { union { uint32_t u; float f; } v = { u }; return v.f; }

// IEEE half -> single; exact for every input (NaN payloads kept).
static inline float lm_ggml_compute_fp16_to_fp32(lm_ggml_fp16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp  = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) {
        return lm_fp32_from_bits(sign | 0x7f800000u | (mant << 13));
    }
    if (exp == 0) {
        if (mant == 0) return lm_fp32_from_bits(sign);
        // subnormal: value = mant * 2^-24, exact in float
        float v = (float) mant * 0x1p-24f;
        return sign ? -v : v;
    }
    return lm_fp32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

// single -> half, round to nearest even (same result as F16C with imm 0).
static inline lm_ggml_fp16_t lm_ggml_compute_fp32_to_fp16(float f) {
    const uint32_t x = lm_fp32_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) { // inf or nan
        if (ax == 0x7f800000u) return (lm_ggml_fp16_t)(sign | 0x7c00);
        return (lm_ggml_fp16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
    }
    if (ax >= 0x477ff000u) { // rounds to >= 65520 -> inf
        return (lm_ggml_fp16_t)(sign | 0x7c00);
    }
    if (ax < 0x38800000u) { // below the smallest normal half: subnormal or zero
        // value in units of 2^-24, rounded to nearest even
        const float scaled = lm_fp32_from_bits(ax) * 0x1p24f; // exact (power of two)
        // round half to even on a value < 1024
        uint32_t i = (uint32_t) scaled;
        float frac = scaled - (float) i;
        if (frac > 0.5f || (frac == 0.5f && (i & 1))) i++;
        return (lm_ggml_fp16_t)(sign | i);
    }
    // normal: rebias exponent and round mantissa from 23 to 10 bits
    uint32_t m = ax + 0xc8000000u; // exponent - 112
    m += 0x0fffu + ((m >> 13) & 1);
    return (lm_ggml_fp16_t)(sign | (m >> 13));
}

static inline float lm_ggml_compute_bf16_to_fp32(lm_ggml_bf16_t h) {
    return lm_fp32_from_bits((uint32_t) h.bits << 16);
}

// round to nearest even; NaNs are kept quiet.
static inline lm_ggml_bf16_t lm_ggml_compute_fp32_to_bf16(float s) {
    lm_ggml_bf16_t h;
    const uint32_t u = lm_fp32_bits(s);
    if ((u & 0x7fffffff) > 0x7f800000) {
        h.bits = (uint16_t)((u >> 16) | 64);
        return h;
    }
    h.bits = (uint16_t)((u + (0x7fff + ((u >> 16) & 1))) >> 16);
    return h;
}

// fp16 -> fp32 lookup table (filled once by lm_ggml_init / lm_ggml_cpu_init).
extern float lm_ggml_table_f32_f16[1 << 16];
void lm_ggml_fp16_table_init(void);

#define LM_GGML_FP16_TO_FP32(x) lm_ggml_compute_fp16_to_fp32(x)
#define LM_GGML_FP32_TO_FP16(x) lm_ggml_compute_fp32_to_fp16(x)
#define LM_GGML_BF16_TO_FP32(x) lm_ggml_compute_bf16_to_fp32(x)
#define LM_GGML_FP32_TO_BF16(x) lm_ggml_compute_fp32_to_bf16(x)
#define LM_GGML_COMPUTE_FP16_TO_FP32(x) lm_ggml_compute_fp16_to_fp32(x)
#define LM_GGML_COMPUTE_FP32_TO_FP16(x) lm_ggml_compute_fp32_to_fp16(x)

// ---------------------------------------------------------------- big allocations

// posix_memalign for arenas and buffers: from 8 MiB on, 2 MiB aligned with
// a transparent-huge-page hint on Linux (see ggml.c). Freed with
// lm_big_free: free(), except on Windows, where aligned memory comes from
// _aligned_malloc and must go back to _aligned_free.
int lm_big_alloc(void ** p, size_t size);
#ifdef _WIN32
void lm_big_free(void * p);
#else
#define lm_big_free(p) free(p)
#endif

// ---------------------------------------------------------------- contexts and objects

struct lm_ggml_object {
    size_t offs;
    size_t size;
    struct lm_ggml_object * next;
    enum lm_ggml_object_type type;
    char padding[4];
};
#define LM_GGML_OBJECT_SIZE sizeof(struct lm_ggml_object)

struct lm_ggml_context {
    size_t mem_size;
    void * mem_buffer;
    bool   mem_buffer_owned;
    bool   no_alloc;
    int    n_objects;
    struct lm_ggml_object * objects_begin;
    struct lm_ggml_object * objects_end;
};

struct lm_ggml_object * lm_ggml_new_object(struct lm_ggml_context * ctx, enum lm_ggml_object_type type, size_t size);

// Creates a tensor; view_src != NULL makes it a view at byte offset view_offs.
struct lm_ggml_tensor * lm_ggml_new_tensor_impl(struct lm_ggml_context * ctx, enum lm_ggml_type type, int n_dims,
        const int64_t * ne, struct lm_ggml_tensor * view_src, size_t view_offs);

// Shape tests behind lm_ggml_are_same_shape and lm_ggml_can_repeat, inline for
// the checks every node goes through each time a graph is computed.
static inline bool lm_shape_eq(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1) {
    return t0->ne[0] == t1->ne[0] && t0->ne[1] == t1->ne[1] && t0->ne[2] == t1->ne[2] && t0->ne[3] == t1->ne[3];
}
static inline bool lm_shape_has_zero(const struct lm_ggml_tensor * t) {
    return t->ne[0] == 0 || t->ne[1] == 0 || t->ne[2] == 0 || t->ne[3] == 0;
}
// t0 tiles t1: every dimension of t1 is a multiple of t0's (two empty tensors
// tile each other).
static inline bool lm_shape_repeats(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1) {
    if (lm_shape_has_zero(t0)) return lm_shape_has_zero(t1);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        // equal and 1 are the usual cases: they need no division
        if (t0->ne[i] != t1->ne[i] && t0->ne[i] != 1 && t1->ne[i] % t0->ne[i] != 0) return false;
    }
    return true;
}

// ---------------------------------------------------------------- checked size arithmetic
//
// Sizes that come from callers (shapes, strides, offsets) are combined only
// through these, so that an overflow is an assertion instead of a small
// wrapped-around size and an out-of-bounds access later.

static inline bool lm_size_mul(size_t a, size_t b, size_t * r) { return !__builtin_mul_overflow(a, b, r); }
static inline bool lm_size_add(size_t a, size_t b, size_t * r) { return !__builtin_add_overflow(a, b, r); }

// Bytes from the first element to one past the last of a tensor of this
// type, shape and strides (as lm_ggml_nbytes computes it); 0 when a
// dimension is empty. Returns false if that does not fit in a size_t.
static inline bool lm_span_bytes(enum lm_ggml_type type, const int64_t * ne, const size_t * nb, size_t * out) {
    *out = 0;
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (ne[i] <= 0) return ne[i] == 0;
    }
    const int64_t blck = lm_ggml_blck_size(type);
    size_t span, term;
    if (blck == 1) {
        span = lm_ggml_type_size(type);
        if (!lm_size_mul((size_t)(ne[0] - 1), nb[0], &term) || !lm_size_add(span, term, &span)) return false;
    } else if (!lm_size_mul((size_t)(ne[0] / blck), nb[0], &span)) {
        return false;
    }
    for (int i = 1; i < LM_GGML_MAX_DIMS; i++) {
        if (!lm_size_mul((size_t)(ne[i] - 1), nb[i], &term) || !lm_size_add(span, term, &span)) return false;
    }
    *out = span;
    return true;
}

// ---------------------------------------------------------------- op params

static inline void lm_ggml_set_op_params(struct lm_ggml_tensor * t, const void * params, size_t size) {
    LM_GGML_ASSERT(t != NULL && size <= LM_GGML_MAX_OP_PARAMS);
    memcpy(t->op_params, params, size);
}
static inline int32_t lm_ggml_get_op_params_i32(const struct lm_ggml_tensor * t, uint32_t i) {
    return t->op_params[i];
}
static inline float lm_ggml_get_op_params_f32(const struct lm_ggml_tensor * t, uint32_t i) {
    float v; memcpy(&v, &t->op_params[i], sizeof(v)); return v;
}
static inline void lm_ggml_set_op_params_i32(struct lm_ggml_tensor * t, uint32_t i, int32_t value) {
    t->op_params[i] = value;
}
static inline void lm_ggml_set_op_params_f32(struct lm_ggml_tensor * t, uint32_t i, float value) {
    memcpy(&t->op_params[i], &value, sizeof(value));
}

// Ops that write b into a strided window of a copy of a (or, inplace, of a
// itself): set and acc. lm_window_check asserts that the window's last
// element lies inside t; lm_window_op stores ggml's op_params
// i32 { nb1, nb2, nb3, offset, inplace } and links the sources.
static inline void lm_window_check(const struct lm_ggml_tensor * t, const struct lm_ggml_tensor * b,
        size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const size_t nb[LM_GGML_MAX_DIMS] = { t->nb[0], nb1, nb2, nb3 };
    size_t span, end;
    LM_GGML_ASSERT(lm_span_bytes(t->type, b->ne, nb, &span) && lm_size_add(offset, span, &end) &&
                   "the window of b overflows");
    LM_GGML_ASSERT((span == 0 || end <= lm_ggml_nbytes(t)) && "b does not fit in a at this offset");
}
static inline struct lm_ggml_tensor * lm_window_op(struct lm_ggml_tensor * result, enum lm_ggml_op op,
        struct lm_ggml_tensor * a, struct lm_ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset,
        bool inplace) {
    const int32_t params[] = { (int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace ? 1 : 0 };
    lm_ggml_set_op_params(result, params, sizeof(params));
    result->op     = op;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// ---------------------------------------------------------------- hash set (open addressing, linear probing)

struct lm_ggml_hash_set {
    size_t size;
    uint32_t * used;               // bitset of occupied slots
    struct lm_ggml_tensor ** keys;
};

#define LM_GGML_HASHSET_FULL ((size_t)-1)
#define LM_GGML_HASHSET_ALREADY_EXISTS ((size_t)-2)

size_t lm_ggml_hash_size(size_t min_sz); // a prime >= min_sz
struct lm_ggml_hash_set lm_ggml_hash_set_new(size_t size);
void   lm_ggml_hash_set_free(struct lm_ggml_hash_set * hash_set);
void   lm_ggml_hash_set_reset(struct lm_ggml_hash_set * hash_set);
size_t lm_ggml_bitset_size(size_t n);

static inline bool lm_ggml_bitset_get(const uint32_t * bitset, size_t i) { return (bitset[i >> 5] >> (i & 31)) & 1; }
static inline void lm_ggml_bitset_set(uint32_t * bitset, size_t i) { bitset[i >> 5] |= (1u << (i & 31)); }
static inline void lm_ggml_bitset_clear(uint32_t * bitset, size_t i) { bitset[i >> 5] &= ~(1u << (i & 31)); }

static inline size_t lm_ggml_hash(const struct lm_ggml_tensor * p) {
    return (size_t)(uintptr_t) p >> 4; // tensors are 16-byte aligned
}

// Slot of key, or of the empty slot where it would go; FULL if absent and no room.
static inline size_t lm_ggml_hash_find(const struct lm_ggml_hash_set * hs, const struct lm_ggml_tensor * key) {
    size_t h = lm_ggml_hash(key) % hs->size;
    size_t i = h;
    while (lm_ggml_bitset_get(hs->used, i) && hs->keys[i] != key) {
        i = (i + 1) % hs->size;
        if (i == h) return LM_GGML_HASHSET_FULL;
    }
    return i;
}
static inline bool lm_ggml_hash_contains(const struct lm_ggml_hash_set * hs, struct lm_ggml_tensor * key) {
    size_t i = lm_ggml_hash_find(hs, key);
    return i != LM_GGML_HASHSET_FULL && lm_ggml_bitset_get(hs->used, i);
}
static inline size_t lm_ggml_hash_insert(struct lm_ggml_hash_set * hs, struct lm_ggml_tensor * key) {
    size_t i = lm_ggml_hash_find(hs, key);
    LM_GGML_ASSERT(i != LM_GGML_HASHSET_FULL && "hash set is full");
    if (lm_ggml_bitset_get(hs->used, i)) return LM_GGML_HASHSET_ALREADY_EXISTS;
    lm_ggml_bitset_set(hs->used, i);
    hs->keys[i] = key;
    return i;
}
static inline size_t lm_ggml_hash_find_or_insert(struct lm_ggml_hash_set * hs, struct lm_ggml_tensor * key) {
    size_t i = lm_ggml_hash_find(hs, key);
    LM_GGML_ASSERT(i != LM_GGML_HASHSET_FULL && "hash set is full");
    lm_ggml_bitset_set(hs->used, i);
    hs->keys[i] = key;
    return i;
}

// ---------------------------------------------------------------- graphs

enum lm_ggml_cgraph_eval_order {
    LM_GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT = 0,
    LM_GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT,
    LM_GGML_CGRAPH_EVAL_ORDER_COUNT
};

struct lm_ggml_cgraph {
    int size;      // capacity of nodes and leafs
    int n_nodes;
    int n_leafs;

    struct lm_ggml_tensor ** nodes;
    struct lm_ggml_tensor ** grads;     // indexed like visited_hash_set.keys; NULL without grads
    struct lm_ggml_tensor ** grad_accs; // idem
    struct lm_ggml_tensor ** leafs;

    struct lm_ggml_hash_set visited_hash_set;

    enum lm_ggml_cgraph_eval_order order;
};

// lm_ggml_graph_dump_dot without logging: 0, or the errno of a file that cannot
// be created or written.
int lm_graph_dump_dot_file(const struct lm_ggml_cgraph * gb, const struct lm_ggml_cgraph * gf, const char * filename);

// A view of nodes [i0, i1) of cgraph, without grads (lives on the stack or in a struct).
struct lm_ggml_cgraph lm_ggml_graph_view(struct lm_ggml_cgraph * cgraph, int i0, int i1);

// ---------------------------------------------------------------- quantization hooks (ggml-quants.c)

// Quantizes nrows rows of n_per_row floats with the type's imatrix-aware
// quantizer; returns bytes written. Defined per type in ggml-quants.c.
typedef size_t (*lm_ggml_quantize_fn_t)(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

#ifdef __cplusplus
}
#endif
