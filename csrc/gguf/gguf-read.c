// gguf-read.c - GGUF parser. Every length, count, type id and offset read
// from the file is checked against what remains of the file before anything
// is allocated or copied, so a damaged file costs at most its own size in
// memory (plus the tensors it declares, when they are loaded).
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include "gguf-impl.h"

#include <stdarg.h>

#define MiB (1024u * 1024u)

// A cursor over the file. Bytes [0, avail) are in buf; for files read with
// stdio the buffer grows on demand, for a prefix parse running out of bytes
// is reported through `need`.
struct rd {
    const uint8_t * buf;
    uint64_t avail;
    uint64_t size;   // whole file
    uint64_t pos;

    FILE *    f;     // stdio backend: buf is `own`
    uint8_t * own;
    uint64_t  cap;

    bool     prefix; // a prefix parse: running out means "need more"
    uint64_t need;

    char * err;
    size_t err_size;
    bool   failed;
};

LM_GGML_ATTRIBUTE_FORMAT(2, 3)
static bool fail(struct rd * r, const char * fmt, ...) {
    if (!r->failed) {
        r->failed = true;
        if (r->err && r->err_size > 0) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->err, r->err_size, fmt, ap);
            va_end(ap);
        }
    }
    return false;
}

// Printable, bounded rendering of a name taken from the file, for messages.
static const char * shown(char out[100], const char * s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o > 80) {
            memcpy(out + o, "...", 4);
            return out;
        }
        const unsigned char c = (unsigned char) s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char) c;
        } else {
            out[o++] = '\\'; out[o++] = 'x';
            out[o++] = hex[c >> 4]; out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

static uint64_t left(const struct rd * r) { return r->size - r->pos; }

static bool grow_file_buffer(struct rd * r, uint64_t end) {
    // read ahead in large steps so that many small fields cost few reads
    uint64_t want = end + 4 * MiB;
    if (want < r->cap * 2) want = r->cap * 2;
    if (want > r->size) want = r->size;
    if (want > SIZE_MAX) {
        return fail(r, "metadata does not fit in memory");
    }
    if (want > r->cap) {
        uint8_t * p = realloc(r->own, (size_t) want);
        if (p == NULL) {
            return fail(r, "out of memory reading %llu bytes of metadata", (unsigned long long) want);
        }
        r->own = p;
        r->cap = want;
        r->buf = p;
    }
    const size_t n = (size_t) (want - r->avail);
    if (fread(r->own + r->avail, 1, n, r->f) != n) {
        return fail(r, "read error at file offset %llu", (unsigned long long) r->avail);
    }
    r->avail = want;
    return true;
}

// Makes n bytes at the cursor available and consumes them. The pointer stays
// valid until the next call. `what` names the field for the message.
static const uint8_t * take(struct rd * r, uint64_t n, const char * what) {
    if (n > left(r)) {
        fail(r, "unexpected end of file at offset %llu reading %s (%llu bytes needed, %llu left)",
             (unsigned long long) r->pos, what, (unsigned long long) n, (unsigned long long) left(r));
        return NULL;
    }
    if (r->pos + n > r->avail) {
        if (r->prefix) {
            r->need = r->pos + n;
            fail(r, "need %llu bytes of the file, have %llu", (unsigned long long) r->need, (unsigned long long) r->avail);
            return NULL;
        }
        if (r->f == NULL || !grow_file_buffer(r, r->pos + n)) {
            fail(r, "internal error: bytes missing at %llu", (unsigned long long) r->pos);
            return NULL;
        }
    }
    const uint8_t * p = r->buf + r->pos;
    r->pos += n;
    return p;
}

static bool rd_u32(struct rd * r, uint32_t * v, const char * what) {
    const uint8_t * p = take(r, 4, what);
    if (p == NULL) return false;
    *v = (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
    return true;
}

static bool rd_u64(struct rd * r, uint64_t * v, const char * what) {
    const uint8_t * p = take(r, 8, what);
    if (p == NULL) return false;
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = x << 8 | p[i];
    *v = x;
    return true;
}

// ---------------------------------------------------------------- duplicate detection

// Open-addressing set of NUL-terminated names; keeps duplicate checks linear
// in the number of names however many a file declares.
struct nameset {
    const char ** slot;
    uint64_t mask;
};

static uint64_t name_hash(const char * s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) { h ^= (unsigned char) *s; h *= 0x100000001b3ull; }
    return h;
}

static bool nameset_init(struct nameset * s, uint64_t n) {
    uint64_t cap = 8;
    while (cap < 2 * n) cap <<= 1;
    s->slot = calloc((size_t) cap, sizeof(*s->slot));
    s->mask = cap - 1;
    return s->slot != NULL;
}

// false if the name is already present
static bool nameset_add(struct nameset * s, const char * name) {
    for (uint64_t i = name_hash(name) & s->mask;; i = (i + 1) & s->mask) {
        if (s->slot[i] == NULL) { s->slot[i] = name; return true; }
        if (strcmp(s->slot[i], name) == 0) return false;
    }
}

// ---------------------------------------------------------------- values

static const char * kv_where(char out[128], const struct lm_gguf_kv * kv) {
    char tmp[100];
    snprintf(out, 128, "key '%s'", shown(tmp, kv->key, strlen(kv->key)));
    return out;
}

static bool read_key(struct rd * r, struct lm_gguf_kv * kv, int i) {
    char what[64];
    snprintf(what, sizeof(what), "the key of kv %d", i);
    uint64_t n;
    if (!rd_u64(r, &n, what)) return false;
    if (n == 0) {
        return fail(r, "kv %d: empty key", i);
    }
    if (n > left(r)) {
        return fail(r, "kv %d: key length %llu exceeds the %llu bytes left in the file",
                    i, (unsigned long long) n, (unsigned long long) left(r));
    }
    const char * p = (const char *) take(r, n, what);
    if (p == NULL) return false;
    char tmp[100];
    if (memchr(p, 0, (size_t) n) != NULL) {
        return fail(r, "kv %d: key '%s' contains a NUL byte", i, shown(tmp, p, (size_t) n));
    }
    if (!lm_gguf_utf8_valid(p, (size_t) n)) {
        return fail(r, "kv %d: key '%s' is not valid UTF-8", i, shown(tmp, p, (size_t) n));
    }
    kv->key = malloc((size_t) n + 1);
    if (kv->key == NULL) return fail(r, "out of memory");
    memcpy(kv->key, p, (size_t) n);
    kv->key[n] = '\0';
    return true;
}

static bool read_type(struct rd * r, const char * where, const char * which, enum lm_gguf_type * t) {
    char what[160];
    snprintf(what, sizeof(what), "the %s of %s", which, where);
    uint32_t v;
    if (!rd_u32(r, &v, what)) return false;
    if (v >= LM_GGUF_TYPE_COUNT) {
        return fail(r, "%s: invalid %s %u", where, which, v);
    }
    *t = (enum lm_gguf_type) v;
    return true;
}

static bool read_string_value(struct rd * r, struct lm_gguf_kv * kv, const char * where) {
    uint64_t n;
    if (!rd_u64(r, &n, where)) return false;
    if (n > left(r)) {
        return fail(r, "%s: string length %llu exceeds the %llu bytes left in the file",
                    where, (unsigned long long) n, (unsigned long long) left(r));
    }
    const uint8_t * p = take(r, n, where);
    if (p == NULL) return false;
    kv->str = malloc((size_t) n + 1);
    if (kv->str == NULL) return fail(r, "%s: out of memory", where);
    memcpy(kv->str, p, (size_t) n);
    kv->str[n] = '\0';
    kv->str_len = n;
    return true;
}

static bool check_bools(struct rd * r, const uint8_t * p, uint64_t n, const char * where) {
    for (uint64_t i = 0; i < n; i++) {
        if (p[i] > 1) {
            return fail(r, "%s: bool value %u at index %llu is not 0 or 1", where, p[i], (unsigned long long) i);
        }
    }
    return true;
}

// Two passes over the strings: the first checks every length against the
// file and sums them, so the single block is sized from verified numbers.
static bool read_string_array(struct rd * r, struct lm_gguf_kv * kv, const char * where) {
    const uint64_t n = kv->n;
    if (n > left(r) / 8) {
        return fail(r, "%s: array of %llu strings needs more than the %llu bytes left in the file",
                    where, (unsigned long long) n, (unsigned long long) left(r));
    }
    const uint64_t start = r->pos;
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len;
        if (!rd_u64(r, &len, where)) return false;
        if (len > left(r)) {
            return fail(r, "%s: length %llu of string %llu exceeds the %llu bytes left in the file",
                        where, (unsigned long long) len, (unsigned long long) i, (unsigned long long) left(r));
        }
        if (take(r, len, where) == NULL) return false;
        total += len + 1;
    }
    if (total > SIZE_MAX || n + 1 > SIZE_MAX / sizeof(char *)) {
        return fail(r, "%s: array does not fit in memory", where);
    }
    char * block = malloc(total > 0 ? (size_t) total : 1);
    kv->strs = malloc((size_t) (n + 1) * sizeof(char *));
    if (block == NULL || kv->strs == NULL) {
        free(block);
        return fail(r, "%s: out of memory", where);
    }
    r->pos = start;
    char * o = block;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = 0;
        rd_u64(r, &len, where); // cannot fail: the first pass read the same bytes
        const uint8_t * p = take(r, len, where);
        kv->strs[i] = o;
        memcpy(o, p, (size_t) len);
        o += len;
        *o++ = '\0';
    }
    kv->strs[n] = o; // with n == 0 this is the block itself, so strs[0] always frees it
    return true;
}

static bool read_value(struct rd * r, struct lm_gguf_kv * kv) {
    char where[128];
    kv_where(where, kv);
    if (!read_type(r, where, "value type", &kv->type)) return false;

    if (kv->type == LM_GGUF_TYPE_STRING) {
        return read_string_value(r, kv, where);
    }
    if (kv->type != LM_GGUF_TYPE_ARRAY) {
        const size_t sz = lm_gguf_scalar_size(kv->type);
        const uint8_t * p = take(r, sz, where);
        if (p == NULL) return false;
        if (kv->type == LM_GGUF_TYPE_BOOL && !check_bools(r, p, 1, where)) return false;
        memcpy(&kv->val, p, sz);
        return true;
    }

    if (!read_type(r, where, "array element type", &kv->arr_type)) return false;
    if (kv->arr_type == LM_GGUF_TYPE_ARRAY) {
        return fail(r, "%s: arrays of arrays are not supported", where);
    }
    if (!rd_u64(r, &kv->n, where)) return false;
    if (kv->n > INT32_MAX) {
        return fail(r, "%s: array length %llu is too large", where, (unsigned long long) kv->n);
    }
    if (kv->arr_type == LM_GGUF_TYPE_STRING) {
        return read_string_array(r, kv, where);
    }
    const size_t sz = lm_gguf_scalar_size(kv->arr_type);
    if (kv->n > left(r) / sz) {
        return fail(r, "%s: array of %llu %s values needs %llu bytes, only %llu left in the file",
                    where, (unsigned long long) kv->n, lm_gguf_type_name(kv->arr_type),
                    (unsigned long long) (kv->n * sz), (unsigned long long) left(r));
    }
    const uint64_t bytes = kv->n * sz;
    const uint8_t * p = take(r, bytes, where);
    if (p == NULL) return false;
    if (kv->arr_type == LM_GGUF_TYPE_BOOL && !check_bools(r, p, kv->n, where)) return false;
    kv->arr = malloc(bytes > 0 ? (size_t) bytes : 1);
    if (kv->arr == NULL) return fail(r, "%s: out of memory", where);
    memcpy(kv->arr, p, (size_t) bytes);
    return true;
}

// ---------------------------------------------------------------- tensor infos

static bool read_tensor_info(struct rd * r, struct lm_gguf_context * ctx, int i) {
    struct lm_gguf_tensor_info * ti = &ctx->infos[i];
    char what[64], tmp[100], where[128];
    snprintf(what, sizeof(what), "the name of tensor %d", i);

    uint64_t n;
    if (!rd_u64(r, &n, what)) return false;
    if (n > LM_GGML_MAX_NAME - 1) {
        return fail(r, "tensor %d: name length %llu exceeds the limit of %d bytes",
                    i, (unsigned long long) n, LM_GGML_MAX_NAME - 1);
    }
    const char * p = (const char *) take(r, n, what);
    if (p == NULL) return false;
    if (memchr(p, 0, (size_t) n) != NULL) {
        return fail(r, "tensor %d: name '%s' contains a NUL byte", i, shown(tmp, p, (size_t) n));
    }
    memcpy(ti->name, p, (size_t) n);
    ti->name[n] = '\0';
    snprintf(where, sizeof(where), "tensor '%s'", shown(tmp, ti->name, (size_t) n));

    if (!rd_u32(r, &ti->n_dims, where)) return false;
    if (ti->n_dims < 1 || ti->n_dims > LM_GGML_MAX_DIMS) {
        return fail(r, "%s: n_dims %u is outside [1, %d]", where, ti->n_dims, LM_GGML_MAX_DIMS);
    }
    for (int j = 0; j < LM_GGML_MAX_DIMS; j++) {
        ti->ne[j] = 1;
    }
    for (uint32_t j = 0; j < ti->n_dims; j++) {
        uint64_t v;
        if (!rd_u64(r, &v, where)) return false;
        if (v > INT64_MAX) {
            return fail(r, "%s: dimension %u is negative (%lld)", where, j, (long long) (int64_t) v);
        }
        ti->ne[j] = (int64_t) v;
    }

    uint32_t type;
    if (!rd_u32(r, &type, where)) return false;
    if (!lm_gguf_type_ok(type)) {
        return fail(r, "%s: invalid tensor type %u", where, type);
    }
    ti->type = (enum lm_ggml_type) type;

    const int64_t blck = lm_ggml_blck_size(ti->type);
    if (ti->ne[0] % blck != 0) {
        return fail(r, "%s: row length %lld is not a multiple of the block size %lld of type %s",
                    where, (long long) ti->ne[0], (long long) blck, lm_ggml_type_name(ti->type));
    }
    if (!lm_gguf_tensor_nbytes(ti->type, ti->ne, &ti->size)) {
        return fail(r, "%s: shape [%lld, %lld, %lld, %lld] overflows the element count or byte size",
                    where, (long long) ti->ne[0], (long long) ti->ne[1], (long long) ti->ne[2], (long long) ti->ne[3]);
    }

    if (!rd_u64(r, &ti->offset, where)) return false;
    if (ti->offset % ctx->alignment != 0) {
        return fail(r, "%s: offset %llu is not a multiple of the alignment %zu",
                    where, (unsigned long long) ti->offset, ctx->alignment);
    }
    // no file reaches 2^63 bytes; keeping every end below that lets callers use signed offsets
    if (ti->offset > (uint64_t) INT64_MAX - ctx->alignment - ti->size) {
        return fail(r, "%s: offset %llu + size %llu is out of range", where,
                    (unsigned long long) ti->offset, (unsigned long long) ti->size);
    }
    return true;
}

struct span { uint64_t off, size; int idx; };

static int span_cmp(const void * a, const void * b) {
    const struct span * x = a, * y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return x->idx - y->idx;
}

static bool check_layout(struct rd * r, struct lm_gguf_context * ctx, bool check_data) {
    char a[100], b[100];
    const int n = ctx->n_tensors;
    ctx->data_size = 0;
    if (n == 0) return true;
    struct span * s = malloc((size_t) n * sizeof(*s));
    if (s == NULL) return fail(r, "out of memory");
    int far = 0;
    for (int i = 0; i < n; i++) {
        const struct lm_gguf_tensor_info * ti = &ctx->infos[i];
        s[i] = (struct span) { ti->offset, ti->size, i };
        const uint64_t end = ti->offset + LM_GGML_PAD(ti->size, (uint64_t) ctx->alignment);
        if (end > ctx->data_size) { ctx->data_size = end; far = i; }
    }
    qsort(s, (size_t) n, sizeof(*s), span_cmp);
    // zero-sized tensors occupy no bytes, so only sized ones can collide
    int prev = -1;
    for (int i = 0; i < n; i++) {
        if (s[i].size == 0) continue;
        if (prev >= 0 && s[prev].off + s[prev].size > s[i].off) {
            const struct lm_gguf_tensor_info * x = &ctx->infos[s[prev].idx], * y = &ctx->infos[s[i].idx];
            free(s);
            return fail(r, "tensor '%s' [%llu, %llu) overlaps tensor '%s' [%llu, %llu)",
                        shown(a, x->name, strlen(x->name)), (unsigned long long) x->offset,
                        (unsigned long long) (x->offset + x->size),
                        shown(b, y->name, strlen(y->name)), (unsigned long long) y->offset,
                        (unsigned long long) (y->offset + y->size));
        }
        prev = i;
    }
    free(s);
    if (ctx->data_size > (uint64_t) INT64_MAX - ctx->data_offset) {
        const struct lm_gguf_tensor_info * ti = &ctx->infos[far];
        return fail(r, "tensor '%s': offset %llu is out of range", shown(a, ti->name, strlen(ti->name)),
                    (unsigned long long) ti->offset);
    }
    if (check_data && (ctx->data_offset > r->size || ctx->data_size > r->size - ctx->data_offset)) {
        const struct lm_gguf_tensor_info * ti = &ctx->infos[far];
        return fail(r, "tensor '%s': data at file offset %llu + %llu (with padding) extends past the end of the file (%llu bytes)",
                    shown(a, ti->name, strlen(ti->name)), (unsigned long long) (ctx->data_offset + ti->offset),
                    (unsigned long long) LM_GGML_PAD(ti->size, (uint64_t) ctx->alignment), (unsigned long long) r->size);
    }
    return true;
}

// ---------------------------------------------------------------- top level

static bool parse(struct rd * r, struct lm_gguf_context * ctx, bool check_data) {
    const uint8_t * p = take(r, 4, "the magic");
    if (p == NULL) return false;
    if (memcmp(p, LM_GGUF_MAGIC, 4) != 0) {
        return fail(r, "bad magic %02x %02x %02x %02x (not a GGUF file)", p[0], p[1], p[2], p[3]);
    }
    uint32_t version;
    if (!rd_u32(r, &version, "the version")) return false;
    if (version == 0x02000000u || version == 0x03000000u) {
        return fail(r, "big-endian GGUF files are not supported");
    }
    if (version != 2 && version != 3) {
        return fail(r, "unsupported GGUF version %u (only versions 2 and 3 are read)", version);
    }
    ctx->version = version;

    uint64_t n_tensors, n_kv;
    if (!rd_u64(r, &n_tensors, "the tensor count")) return false;
    if (!rd_u64(r, &n_kv, "the kv count")) return false;
    if (n_kv > left(r) / LM_GGUF_MIN_KV_BYTES) {
        return fail(r, "kv count %llu cannot fit in the %llu bytes left in the file",
                    (unsigned long long) n_kv, (unsigned long long) left(r));
    }
    if (n_tensors > left(r) / LM_GGUF_MIN_TINFO_BYTES ||
        n_kv * LM_GGUF_MIN_KV_BYTES + n_tensors * LM_GGUF_MIN_TINFO_BYTES > left(r)) {
        return fail(r, "tensor count %llu and kv count %llu cannot fit in the %llu bytes left in the file",
                    (unsigned long long) n_tensors, (unsigned long long) n_kv, (unsigned long long) left(r));
    }
    // the API indexes with int
    if (n_kv > INT32_MAX || n_tensors > INT32_MAX) {
        return fail(r, "too many kvs or tensors");
    }

    ctx->kv = calloc(n_kv > 0 ? (size_t) n_kv : 1, sizeof(*ctx->kv));
    ctx->infos = calloc(n_tensors > 0 ? (size_t) n_tensors : 1, sizeof(*ctx->infos));
    if (ctx->kv == NULL || ctx->infos == NULL) return fail(r, "out of memory");
    ctx->cap_kv = (int) (n_kv > 0 ? n_kv : 1);
    ctx->cap_tensors = (int) (n_tensors > 0 ? n_tensors : 1);

    struct nameset names;
    if (!nameset_init(&names, n_kv > n_tensors ? n_kv : n_tensors)) return fail(r, "out of memory");
    bool ok = true;
    for (uint64_t i = 0; ok && i < n_kv; i++) {
        struct lm_gguf_kv * kv = &ctx->kv[i];
        ok = read_key(r, kv, (int) i);
        if (!ok) break;
        ctx->n_kv = (int) i + 1; // from here on lm_gguf_free releases it
        if (!nameset_add(&names, kv->key)) {
            char tmp[100];
            ok = fail(r, "duplicate key '%s'", shown(tmp, kv->key, strlen(kv->key)));
            break;
        }
        ok = read_value(r, kv);
    }
    free(names.slot);
    if (!ok) return false;

    ctx->alignment = LM_GGUF_DEFAULT_ALIGNMENT;
    const int ia = lm_gguf_find_key(ctx, "general.alignment");
    if (ia >= 0) {
        const struct lm_gguf_kv * kv = &ctx->kv[ia];
        if (kv->type != LM_GGUF_TYPE_UINT32) {
            return fail(r, "key 'general.alignment' has type %s, expected u32", lm_gguf_type_name(kv->type));
        }
        const uint32_t a = kv->val.u32;
        if (a == 0 || (a & (a - 1)) != 0) {
            return fail(r, "key 'general.alignment': %u is not a power of two", a);
        }
        ctx->alignment = a;
    }

    if (!nameset_init(&names, n_tensors)) return fail(r, "out of memory");
    for (uint64_t i = 0; ok && i < n_tensors; i++) {
        ok = read_tensor_info(r, ctx, (int) i);
        if (!ok) break;
        ctx->n_tensors = (int) i + 1;
        if (!nameset_add(&names, ctx->infos[i].name)) {
            char tmp[100];
            ok = fail(r, "duplicate tensor name '%s'", shown(tmp, ctx->infos[i].name, strlen(ctx->infos[i].name)));
        }
    }
    free(names.slot);
    if (!ok) return false;

    ctx->data_offset = LM_GGML_PAD(r->pos, (uint64_t) ctx->alignment);
    return check_layout(r, ctx, check_data);
}

// Creates the lm_ggml_context with one tensor per info; with data, the
// tensors point into one blob filled by `fill`.
static bool make_tensors(struct rd * r, struct lm_gguf_context * ctx, struct lm_gguf_init_params params,
                         bool (*fill)(struct rd * r, void * dst, uint64_t off, uint64_t n)) {
    const size_t n = (size_t) ctx->n_tensors;
    const size_t oh = lm_ggml_tensor_overhead();
    if (ctx->data_size > SIZE_MAX / 2) {
        return fail(r, "tensor data of %llu bytes does not fit in memory", (unsigned long long) ctx->data_size);
    }
    const size_t mem = params.no_alloc ? n * oh
                                       : (n + 1) * oh + LM_GGML_PAD((size_t) ctx->data_size, LM_GGML_MEM_ALIGN);
    struct lm_ggml_context * gctx = lm_ggml_init((struct lm_ggml_init_params) { mem, NULL, params.no_alloc });
    if (gctx == NULL) {
        return fail(r, "failed to create a lm_ggml_context of %zu bytes", mem);
    }
    char * base = NULL;
    if (!params.no_alloc) {
        struct lm_ggml_tensor * blob = lm_ggml_new_tensor_1d(gctx, LM_GGML_TYPE_I8, (int64_t) ctx->data_size);
        base = blob->data;
        if (!fill(r, base, ctx->data_offset, ctx->data_size)) {
            lm_ggml_free(gctx);
            return false;
        }
        ctx->data = base;
    }
    lm_ggml_set_no_alloc(gctx, true);
    for (size_t i = 0; i < n; i++) {
        const struct lm_gguf_tensor_info * ti = &ctx->infos[i];
        struct lm_ggml_tensor * t = lm_ggml_new_tensor(gctx, ti->type, (int) ti->n_dims, ti->ne);
        lm_ggml_set_name(t, ti->name);
        if (base != NULL) {
            t->data = base + ti->offset;
        }
    }
    lm_ggml_set_no_alloc(gctx, params.no_alloc);
    *params.ctx = gctx;
    return true;
}

static bool fill_from_buffer(struct rd * r, void * dst, uint64_t off, uint64_t n) {
    if (n > 0) memcpy(dst, r->buf + off, (size_t) n);
    return true;
}

static bool fill_from_file(struct rd * r, void * dst, uint64_t off, uint64_t n) {
    if (n == 0) return true;
#ifdef _WIN32
    const int rc = _fseeki64(r->f, (__int64) off, SEEK_SET);
#else
    const int rc = fseeko(r->f, (off_t) off, SEEK_SET);
#endif
    if (rc != 0 || fread(dst, 1, (size_t) n, r->f) != (size_t) n) {
        return fail(r, "failed to read %llu bytes of tensor data at offset %llu",
                    (unsigned long long) n, (unsigned long long) off);
    }
    return true;
}

static struct lm_gguf_context * run(struct rd * r, struct lm_gguf_init_params params,
                                    bool (*fill)(struct rd *, void *, uint64_t, uint64_t)) {
    if (params.ctx != NULL) {
        *params.ctx = NULL;
    }
    struct lm_gguf_context * ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        fail(r, "out of memory");
        return NULL;
    }
    ctx->alignment = LM_GGUF_DEFAULT_ALIGNMENT;
    bool ok = parse(r, ctx, !params.no_alloc);
    if (ok && params.ctx != NULL) {
        ok = make_tensors(r, ctx, params, fill);
    }
    if (!ok) {
        lm_gguf_free(ctx);
        return NULL;
    }
    return ctx;
}

static void clear_err(char * err, size_t err_size) {
    if (err && err_size > 0) err[0] = '\0';
}

struct lm_gguf_context * lm_gguf_init_from_buffer_ex(const void * data, size_t size, struct lm_gguf_init_params params,
                                                     char * err, size_t err_size) {
    clear_err(err, err_size);
    struct rd r = { .buf = data, .avail = size, .size = size, .err = err, .err_size = err_size };
    return run(&r, params, fill_from_buffer);
}

struct lm_gguf_context * lm_gguf_init_from_prefix_ex(const void * data, size_t avail, uint64_t file_size,
        struct lm_gguf_init_params params, uint64_t * need, char * err, size_t err_size) {
    clear_err(err, err_size);
    if (need) *need = 0;
    struct rd r = { .buf = data, .avail = avail < file_size ? avail : file_size, .size = file_size,
                    .prefix = true, .err = err, .err_size = err_size };
    if (params.ctx != NULL) {
        fail(&r, "a prefix parse cannot load tensors");
        return NULL;
    }
    struct lm_gguf_context * ctx = run(&r, params, fill_from_buffer);
    if (ctx == NULL && need) *need = r.need;
    return ctx;
}

struct lm_gguf_context * lm_gguf_init_from_file_ex(const char * fname, struct lm_gguf_init_params params,
                                                   char * err, size_t err_size) {
    clear_err(err, err_size);
    struct rd r = { .err = err, .err_size = err_size };
    if (params.ctx != NULL) {
        *params.ctx = NULL;
    }
    FILE * f = lm_ggml_fopen(fname, "rb");
    if (f == NULL) {
        fail(&r, "cannot open '%s'", fname);
        return NULL;
    }
#ifdef _WIN32
    const int rc = _fseeki64(f, 0, SEEK_END);
    const long long end = rc == 0 ? _ftelli64(f) : -1;
#else
    const int rc = fseeko(f, 0, SEEK_END);
    const long long end = rc == 0 ? (long long) ftello(f) : -1;
#endif
    if (end < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        fail(&r, "cannot determine the size of '%s'", fname);
        return NULL;
    }
    r.size = (uint64_t) end;
    r.f = f;
    struct lm_gguf_context * ctx = run(&r, params, fill_from_file);
    free(r.own);
    fclose(f);
    return ctx;
}

struct lm_gguf_context * lm_gguf_init_from_file(const char * fname, struct lm_gguf_init_params params) {
    char err[512];
    struct lm_gguf_context * ctx = lm_gguf_init_from_file_ex(fname, params, err, sizeof(err));
    if (ctx == NULL) {
        LM_GGML_LOG_ERROR("%s: %s: %s\n", __func__, fname, err);
    }
    return ctx;
}
