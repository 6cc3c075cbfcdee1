// gguf-write.c - GGUF serialization: the metadata block (header, kvs, tensor
// infos, padding to the alignment) and whole files. Numbers are written
// little-endian; array payloads are copied as stored, which assumes a
// little-endian host like the rest of the core.
#define _GNU_SOURCE
#include "gguf-impl.h"

#include <errno.h>
#include <stdarg.h>

// With out == NULL only the size is counted.
struct wbuf {
    uint8_t * out;
    size_t    n;
};

static void put(struct wbuf * w, const void * src, size_t n) {
    if (w->out && n > 0) memcpy(w->out + w->n, src, n);
    w->n += n;
}

static void put_zeros(struct wbuf * w, size_t n) {
    if (w->out) memset(w->out + w->n, 0, n);
    w->n += n;
}

static void put_u32(struct wbuf * w, uint32_t v) {
    const uint8_t b[4] = { (uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24) };
    put(w, b, 4);
}

static void put_u64(struct wbuf * w, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t) (v >> (8 * i));
    put(w, b, 8);
}

static void put_str(struct wbuf * w, const char * s, uint64_t n) {
    put_u64(w, n);
    put(w, s, (size_t) n);
}

static void put_meta(const struct lm_gguf_context * ctx, struct wbuf * w) {
    put(w, LM_GGUF_MAGIC, 4);
    put_u32(w, ctx->version);
    put_u64(w, (uint64_t) ctx->n_tensors);
    put_u64(w, (uint64_t) ctx->n_kv);

    for (int i = 0; i < ctx->n_kv; i++) {
        const struct lm_gguf_kv * kv = &ctx->kv[i];
        put_str(w, kv->key, strlen(kv->key));
        put_u32(w, (uint32_t) kv->type);
        if (kv->type == LM_GGUF_TYPE_STRING) {
            put_str(w, kv->str, kv->str_len);
        } else if (kv->type != LM_GGUF_TYPE_ARRAY) {
            put(w, &kv->val, lm_gguf_scalar_size(kv->type));
        } else {
            put_u32(w, (uint32_t) kv->arr_type);
            put_u64(w, kv->n);
            if (kv->arr_type == LM_GGUF_TYPE_STRING) {
                for (uint64_t j = 0; j < kv->n; j++) {
                    put_str(w, kv->strs[j], (uint64_t) (kv->strs[j + 1] - kv->strs[j] - 1));
                }
            } else {
                put(w, kv->arr, (size_t) kv->n * lm_gguf_scalar_size(kv->arr_type));
            }
        }
    }

    for (int i = 0; i < ctx->n_tensors; i++) {
        const struct lm_gguf_tensor_info * ti = &ctx->infos[i];
        put_str(w, ti->name, strlen(ti->name));
        put_u32(w, ti->n_dims);
        for (uint32_t j = 0; j < ti->n_dims; j++) {
            put_u64(w, (uint64_t) ti->ne[j]);
        }
        put_u32(w, (uint32_t) ti->type);
        put_u64(w, ti->offset);
    }

    put_zeros(w, LM_GGML_PAD(w->n, ctx->alignment) - w->n);
}

size_t lm_gguf_get_meta_size(const struct lm_gguf_context * ctx) {
    struct wbuf w = { NULL, 0 };
    put_meta(ctx, &w);
    return w.n;
}

void lm_gguf_get_meta_data(const struct lm_gguf_context * ctx, void * data) {
    struct wbuf w = { data, 0 };
    put_meta(ctx, &w);
}

LM_GGML_ATTRIBUTE_FORMAT(3, 4)
static bool werr(char * err, size_t err_size, const char * fmt, ...) {
    if (err && err_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool write_zeros(FILE * f, uint64_t n) {
    static const uint8_t zeros[4096];
    while (n > 0) {
        const size_t k = n < sizeof(zeros) ? (size_t) n : sizeof(zeros);
        if (fwrite(zeros, 1, k, f) != k) return false;
        n -= k;
    }
    return true;
}

bool lm_gguf_write_to_file_ex(const struct lm_gguf_context * ctx, const char * fname, bool only_meta,
                              char * err, size_t err_size) {
    if (err && err_size > 0) err[0] = '\0';
    const size_t meta_size = lm_gguf_get_meta_size(ctx);
    uint8_t * meta = malloc(meta_size);
    if (meta == NULL) {
        return werr(err, err_size, "out of memory for %zu bytes of metadata", meta_size);
    }
    lm_gguf_get_meta_data(ctx, meta);

    FILE * f = lm_ggml_fopen(fname, "wb");
    if (f == NULL) {
        free(meta);
        return werr(err, err_size, "cannot open '%s' for writing: %s", fname, strerror(errno));
    }
    bool ok = fwrite(meta, 1, meta_size, f) == meta_size;
    free(meta);
    // Tensors go at their declared offsets, in order, each followed by
    // padding; for a layout made by this writer that is back to back.
    uint64_t pos = 0;
    for (int i = 0; ok && !only_meta && i < ctx->n_tensors; i++) {
        const struct lm_gguf_tensor_info * ti = &ctx->infos[i];
        if (ti->offset < pos) {
            fclose(f);
            return werr(err, err_size, "tensor '%s': offset %llu is before the end of the previous tensor",
                        ti->name, (unsigned long long) ti->offset);
        }
        ok = write_zeros(f, ti->offset - pos);
        if (ti->data != NULL) {
            ok = ok && fwrite(ti->data, 1, (size_t) ti->size, f) == (size_t) ti->size;
        } else {
            ok = ok && write_zeros(f, ti->size);
        }
        pos = ti->offset + ti->size;
    }
    if (!only_meta) {
        ok = ok && write_zeros(f, LM_GGML_PAD(pos, (uint64_t) ctx->alignment) - pos);
    }
    if (fclose(f) != 0) ok = false;
    if (!ok) {
        return werr(err, err_size, "failed to write '%s': %s", fname, strerror(errno));
    }
    return true;
}

void lm_gguf_write_to_file(const struct lm_gguf_context * ctx, const char * fname, bool only_meta) {
    char err[512];
    if (!lm_gguf_write_to_file_ex(ctx, fname, only_meta, err, sizeof(err))) {
        LM_GGML_ABORT("%s", err);
    }
}
