// gguf-impl.h - the in-memory form of a GGUF context, shared by the reader
// (gguf-read.c), the accessors/setters (gguf.c) and the writer (gguf-write.c).
// Not part of the public API.
#pragma once

#include "../base/ggml-impl.h"
#include "gguf-ext.h"

// Smallest encodings, used to bound declared counts by the bytes that remain:
// key length + 1 key byte + type + 1 value byte ...
#define LM_GGUF_MIN_KV_BYTES     (8 + 1 + 4 + 1)
// ... and name length + n_dims + one dim + type + offset.
#define LM_GGUF_MIN_TINFO_BYTES  (8 + 4 + 8 + 4 + 8)

union lm_gguf_scalar {
    uint8_t  u8;  int8_t  i8;
    uint16_t u16; int16_t i16;
    uint32_t u32; int32_t i32;
    uint64_t u64; int64_t i64;
    float    f32; double  f64;
    bool     b;
};

struct lm_gguf_kv {
    char * key;                  // NUL-terminated, no inner NUL, valid UTF-8
    enum lm_gguf_type type;
    enum lm_gguf_type arr_type;  // element type when type == ARRAY
    uint64_t n;                  // array length

    union lm_gguf_scalar val;    // scalar types
    char *   str;                // STRING: NUL-terminated copy
    uint64_t str_len;            // STRING: length without the terminator (may hold NULs)
    void *   arr;                // fixed-size arrays: n elements as in the file
    char **  strs;               // string arrays: n+1 pointers into one block; strs[i+1]-strs[i]-1 is the length of i
};

struct lm_gguf_tensor_info {
    char     name[LM_GGML_MAX_NAME];
    uint32_t n_dims;
    int64_t  ne[LM_GGML_MAX_DIMS];
    enum lm_ggml_type type;
    uint64_t offset;             // from the start of the data section
    uint64_t size;               // bytes
    const void * data;           // writer: caller-owned bytes (NULL writes zeros)
};

struct lm_gguf_context {
    uint32_t version;
    size_t   alignment;
    uint64_t data_offset;        // from the start of the file
    uint64_t data_size;          // extent of the data section including the last tensor's padding
    void *   data;               // tensor blob when loaded into a lm_ggml_context, else NULL

    int n_kv;
    int cap_kv;
    struct lm_gguf_kv * kv;

    int n_tensors;
    int cap_tensors;
    struct lm_gguf_tensor_info * infos;
};

size_t lm_gguf_scalar_size(enum lm_gguf_type type); // 0 for STRING, ARRAY and invalid ids
void   lm_gguf_kv_clear(struct lm_gguf_kv * kv);
bool   lm_gguf_utf8_valid(const char * s, size_t n);
// Exact tensor byte size, or false when it overflows or the row is not a whole number of blocks.
bool   lm_gguf_tensor_nbytes(enum lm_ggml_type type, const int64_t ne[LM_GGML_MAX_DIMS], uint64_t * out);
bool   lm_gguf_type_ok(uint32_t type);
