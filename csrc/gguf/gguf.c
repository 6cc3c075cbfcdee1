// gguf.c - GGUF contexts: creation, accessors, setters and tensor infos.
// Parsing is in gguf-read.c, serialization in gguf-write.c. Accessors abort
// (LM_GGML_ASSERT) on a wrong id or type, as ggml's do; callers that
// cannot afford that (the Go bindings) check types first.
#include "gguf-impl.h"

static const char * const type_names[LM_GGUF_TYPE_COUNT] = {
    [LM_GGUF_TYPE_UINT8]   = "u8",
    [LM_GGUF_TYPE_INT8]    = "i8",
    [LM_GGUF_TYPE_UINT16]  = "u16",
    [LM_GGUF_TYPE_INT16]   = "i16",
    [LM_GGUF_TYPE_UINT32]  = "u32",
    [LM_GGUF_TYPE_INT32]   = "i32",
    [LM_GGUF_TYPE_FLOAT32] = "f32",
    [LM_GGUF_TYPE_BOOL]    = "bool",
    [LM_GGUF_TYPE_STRING]  = "str",
    [LM_GGUF_TYPE_ARRAY]   = "arr",
    [LM_GGUF_TYPE_UINT64]  = "u64",
    [LM_GGUF_TYPE_INT64]   = "i64",
    [LM_GGUF_TYPE_FLOAT64] = "f64",
};

static const size_t type_sizes[LM_GGUF_TYPE_COUNT] = {
    [LM_GGUF_TYPE_UINT8]   = 1, [LM_GGUF_TYPE_INT8]    = 1,
    [LM_GGUF_TYPE_UINT16]  = 2, [LM_GGUF_TYPE_INT16]   = 2,
    [LM_GGUF_TYPE_UINT32]  = 4, [LM_GGUF_TYPE_INT32]   = 4,
    [LM_GGUF_TYPE_FLOAT32] = 4, [LM_GGUF_TYPE_BOOL]    = 1,
    [LM_GGUF_TYPE_UINT64]  = 8, [LM_GGUF_TYPE_INT64]   = 8,
    [LM_GGUF_TYPE_FLOAT64] = 8,
};

const char * lm_gguf_type_name(enum lm_gguf_type type) {
    return ((int) type >= 0 && type < LM_GGUF_TYPE_COUNT) ? type_names[type] : NULL;
}

size_t lm_gguf_scalar_size(enum lm_gguf_type type) {
    return ((int) type >= 0 && type < LM_GGUF_TYPE_COUNT) ? type_sizes[type] : 0;
}

bool lm_gguf_type_ok(uint32_t type) {
    return type < LM_GGML_TYPE_COUNT && lm_ggml_blck_size((enum lm_ggml_type) type) > 0 &&
           lm_ggml_type_size((enum lm_ggml_type) type) > 0;
}

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool lm_gguf_utf8_valid(const char * str, size_t n) {
    const unsigned char * s = (const unsigned char *) str;
    size_t i = 0;
    while (i < n) {
        const unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t len;
        unsigned lo = 0x80, hi = 0xbf; // allowed range of the second byte
        if (c >= 0xc2 && c <= 0xdf)      { len = 2; }
        else if (c == 0xe0)              { len = 3; lo = 0xa0; }
        else if (c == 0xed)              { len = 3; hi = 0x9f; }
        else if (c >= 0xe1 && c <= 0xef) { len = 3; }
        else if (c == 0xf0)              { len = 4; lo = 0x90; }
        else if (c >= 0xf1 && c <= 0xf3) { len = 4; }
        else if (c == 0xf4)              { len = 4; hi = 0x8f; }
        else return false;
        if (n - i < len) return false;
        if (s[i + 1] < lo || s[i + 1] > hi) return false;
        for (size_t k = 2; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return false;
        }
        i += len;
    }
    return true;
}

bool lm_gguf_tensor_nbytes(enum lm_ggml_type type, const int64_t ne[LM_GGML_MAX_DIMS], uint64_t * out) {
    if (!lm_gguf_type_ok((uint32_t) type)) return false;
    const int64_t blck = lm_ggml_blck_size(type);
    for (int j = 0; j < LM_GGML_MAX_DIMS; j++) {
        if (ne[j] < 0) return false;
    }
    if (ne[0] % blck != 0) return false;
    // Element count and byte size must both fit in int64 (and size_t). A zero
    // dimension makes the tensor empty, but the other dimensions must still
    // be sane, so zeros are skipped rather than short-circuiting the checks.
    const int64_t factors[2][LM_GGML_MAX_DIMS] = {
        { ne[0],        ne[1], ne[2], ne[3] },
        { ne[0] / blck, ne[1], ne[2], ne[3] },
    };
    const int64_t start[2] = { 1, (int64_t) lm_ggml_type_size(type) };
    int64_t prod[2];
    bool empty = false;
    for (int k = 0; k < 2; k++) {
        int64_t p = start[k];
        for (int j = 0; j < LM_GGML_MAX_DIMS; j++) {
            const int64_t f = factors[k][j];
            if (f == 0) { empty = true; continue; }
            if (p > INT64_MAX / f) return false;
            p *= f;
        }
        prod[k] = p;
    }
    const int64_t bytes = empty ? 0 : prod[1];
    if ((uint64_t) bytes > SIZE_MAX) return false;
    *out = (uint64_t) bytes;
    return true;
}

// ---------------------------------------------------------------- contexts

struct lm_gguf_context * lm_gguf_init_empty(void) {
    struct lm_gguf_context * ctx = calloc(1, sizeof(*ctx));
    LM_GGML_ASSERT(ctx != NULL);
    ctx->version = LM_GGUF_VERSION;
    ctx->alignment = LM_GGUF_DEFAULT_ALIGNMENT;
    return ctx;
}

void lm_gguf_kv_clear(struct lm_gguf_kv * kv) {
    free(kv->str);
    free(kv->arr);
    if (kv->strs) {
        free(kv->strs[0]);
        free(kv->strs);
    }
    kv->str = NULL; kv->str_len = 0;
    kv->arr = NULL;
    kv->strs = NULL;
    kv->n = 0;
    memset(&kv->val, 0, sizeof(kv->val));
}

void lm_gguf_free(struct lm_gguf_context * ctx) {
    if (ctx == NULL) return;
    for (int i = 0; i < ctx->n_kv; i++) {
        lm_gguf_kv_clear(&ctx->kv[i]);
        free(ctx->kv[i].key);
    }
    free(ctx->kv);
    free(ctx->infos);
    free(ctx);
}

int    lm_gguf_get_version    (const struct lm_gguf_context * ctx) { return (int) ctx->version; }
size_t lm_gguf_get_alignment  (const struct lm_gguf_context * ctx) { return ctx->alignment; }
size_t lm_gguf_get_data_offset(const struct lm_gguf_context * ctx) { return (size_t) ctx->data_offset; }
void * lm_gguf_get_data       (const struct lm_gguf_context * ctx) { return ctx->data; }
uint64_t lm_gguf_get_data_size(const struct lm_gguf_context * ctx) { return ctx->data_size; }

// ---------------------------------------------------------------- kv getters

int lm_gguf_get_n_kv(const struct lm_gguf_context * ctx) { return ctx->n_kv; }

int lm_gguf_find_key(const struct lm_gguf_context * ctx, const char * key) {
    for (int i = 0; i < ctx->n_kv; i++) {
        if (strcmp(ctx->kv[i].key, key) == 0) return i;
    }
    return -1;
}

static const struct lm_gguf_kv * kv_at(const struct lm_gguf_context * ctx, int key_id) {
    LM_GGML_ASSERT(key_id >= 0 && key_id < ctx->n_kv);
    return &ctx->kv[key_id];
}

const char * lm_gguf_get_key(const struct lm_gguf_context * ctx, int key_id) { return kv_at(ctx, key_id)->key; }
enum lm_gguf_type lm_gguf_get_kv_type(const struct lm_gguf_context * ctx, int key_id) { return kv_at(ctx, key_id)->type; }

enum lm_gguf_type lm_gguf_get_arr_type(const struct lm_gguf_context * ctx, int key_id) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type == LM_GGUF_TYPE_ARRAY);
    return kv->arr_type;
}

static const union lm_gguf_scalar * scalar_at(const struct lm_gguf_context * ctx, int key_id, enum lm_gguf_type type) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type == type);
    return &kv->val;
}

uint8_t  lm_gguf_get_val_u8  (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_UINT8)->u8; }
int8_t   lm_gguf_get_val_i8  (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_INT8)->i8; }
uint16_t lm_gguf_get_val_u16 (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_UINT16)->u16; }
int16_t  lm_gguf_get_val_i16 (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_INT16)->i16; }
uint32_t lm_gguf_get_val_u32 (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_UINT32)->u32; }
int32_t  lm_gguf_get_val_i32 (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_INT32)->i32; }
float    lm_gguf_get_val_f32 (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_FLOAT32)->f32; }
uint64_t lm_gguf_get_val_u64 (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_UINT64)->u64; }
int64_t  lm_gguf_get_val_i64 (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_INT64)->i64; }
double   lm_gguf_get_val_f64 (const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_FLOAT64)->f64; }
bool     lm_gguf_get_val_bool(const struct lm_gguf_context * ctx, int key_id) { return scalar_at(ctx, key_id, LM_GGUF_TYPE_BOOL)->b; }

const char * lm_gguf_get_val_str(const struct lm_gguf_context * ctx, int key_id) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type == LM_GGUF_TYPE_STRING);
    return kv->str;
}

const char * lm_gguf_get_val_str_n(const struct lm_gguf_context * ctx, int key_id, size_t * len) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type == LM_GGUF_TYPE_STRING);
    if (len) *len = (size_t) kv->str_len;
    return kv->str;
}

const void * lm_gguf_get_val_data(const struct lm_gguf_context * ctx, int key_id) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type != LM_GGUF_TYPE_ARRAY);
    LM_GGML_ASSERT(kv->type != LM_GGUF_TYPE_STRING);
    return &kv->val;
}

int lm_gguf_get_arr_n(const struct lm_gguf_context * ctx, int key_id) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type == LM_GGUF_TYPE_ARRAY);
    return (int) kv->n;
}

const void * lm_gguf_get_arr_data(const struct lm_gguf_context * ctx, int key_id) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type == LM_GGUF_TYPE_ARRAY);
    LM_GGML_ASSERT(kv->arr_type != LM_GGUF_TYPE_STRING);
    return kv->arr;
}

const char * lm_gguf_get_arr_str(const struct lm_gguf_context * ctx, int key_id, int i) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type == LM_GGUF_TYPE_ARRAY);
    LM_GGML_ASSERT(kv->arr_type == LM_GGUF_TYPE_STRING);
    LM_GGML_ASSERT(i >= 0 && (uint64_t) i < kv->n);
    return kv->strs[i];
}

const char * const * lm_gguf_get_arr_strs(const struct lm_gguf_context * ctx, int key_id) {
    const struct lm_gguf_kv * kv = kv_at(ctx, key_id);
    LM_GGML_ASSERT(kv->type == LM_GGUF_TYPE_ARRAY);
    LM_GGML_ASSERT(kv->arr_type == LM_GGUF_TYPE_STRING);
    return (const char * const *) kv->strs;
}

// ---------------------------------------------------------------- tensor getters

int lm_gguf_get_n_tensors(const struct lm_gguf_context * ctx) { return ctx->n_tensors; }

int lm_gguf_find_tensor(const struct lm_gguf_context * ctx, const char * name) {
    for (int i = 0; i < ctx->n_tensors; i++) {
        if (strcmp(ctx->infos[i].name, name) == 0) return i;
    }
    return -1;
}

static const struct lm_gguf_tensor_info * info_at(const struct lm_gguf_context * ctx, int i) {
    LM_GGML_ASSERT(i >= 0 && i < ctx->n_tensors);
    return &ctx->infos[i];
}

size_t lm_gguf_get_tensor_offset(const struct lm_gguf_context * ctx, int i) { return (size_t) info_at(ctx, i)->offset; }
char * lm_gguf_get_tensor_name(const struct lm_gguf_context * ctx, int i) { return (char *) info_at(ctx, i)->name; }
enum lm_ggml_type lm_gguf_get_tensor_type(const struct lm_gguf_context * ctx, int i) { return info_at(ctx, i)->type; }
uint64_t lm_gguf_get_tensor_size(const struct lm_gguf_context * ctx, int i) { return info_at(ctx, i)->size; }

void lm_gguf_get_tensor_desc(const struct lm_gguf_context * ctx, int i, struct lm_gguf_tensor_desc * out) {
    const struct lm_gguf_tensor_info * ti = info_at(ctx, i);
    out->name = ti->name;
    out->n_dims = (int) ti->n_dims;
    for (int j = 0; j < LM_GGML_MAX_DIMS; j++) out->ne[j] = ti->ne[j];
    out->type = (int) ti->type;
    out->offset = ti->offset;
    out->size = ti->size;
}

// ---------------------------------------------------------------- setters

// Tensor offsets follow from sizes and the alignment; recomputed whenever
// either changes, so the writer always lays out what the file declares.
static void relayout(struct lm_gguf_context * ctx) {
    uint64_t off = 0;
    for (int i = 0; i < ctx->n_tensors; i++) {
        ctx->infos[i].offset = off;
        off += LM_GGML_PAD(ctx->infos[i].size, (uint64_t) ctx->alignment);
    }
    ctx->data_size = off;
}

static void sync_alignment(struct lm_gguf_context * ctx) {
    size_t a = LM_GGUF_DEFAULT_ALIGNMENT;
    const int i = lm_gguf_find_key(ctx, "general.alignment");
    if (i >= 0) {
        const struct lm_gguf_kv * kv = &ctx->kv[i];
        LM_GGML_ASSERT(kv->type == LM_GGUF_TYPE_UINT32 && "general.alignment must be a u32");
        LM_GGML_ASSERT(kv->val.u32 != 0 && (kv->val.u32 & (kv->val.u32 - 1)) == 0 && "general.alignment must be a power of two");
        a = kv->val.u32;
    }
    if (a != ctx->alignment) {
        ctx->alignment = a;
        relayout(ctx);
    }
}

// The kv for key, emptied for a new value; new keys go at the end.
static struct lm_gguf_kv * kv_for_set(struct lm_gguf_context * ctx, const char * key, enum lm_gguf_type type) {
    LM_GGML_ASSERT(key != NULL && key[0] != '\0' && "gguf keys must not be empty");
    LM_GGML_ASSERT(lm_gguf_utf8_valid(key, strlen(key)) && "gguf keys must be valid UTF-8");
    int i = lm_gguf_find_key(ctx, key);
    if (i < 0) {
        if (ctx->n_kv == ctx->cap_kv) {
            const int cap = ctx->cap_kv < 8 ? 8 : ctx->cap_kv * 2;
            struct lm_gguf_kv * p = realloc(ctx->kv, (size_t) cap * sizeof(*p));
            LM_GGML_ASSERT(p != NULL);
            ctx->kv = p;
            ctx->cap_kv = cap;
        }
        i = ctx->n_kv++;
        memset(&ctx->kv[i], 0, sizeof(ctx->kv[i]));
        const size_t n = strlen(key);
        ctx->kv[i].key = malloc(n + 1);
        LM_GGML_ASSERT(ctx->kv[i].key != NULL);
        memcpy(ctx->kv[i].key, key, n + 1);
    } else {
        lm_gguf_kv_clear(&ctx->kv[i]);
    }
    ctx->kv[i].type = type;
    return &ctx->kv[i];
}

static void set_scalar(struct lm_gguf_context * ctx, const char * key, enum lm_gguf_type type, const void * v) {
    if (strcmp(key, "general.alignment") == 0 && type == LM_GGUF_TYPE_UINT32) {
        uint32_t a;
        memcpy(&a, v, 4);
        LM_GGML_ASSERT(a != 0 && (a & (a - 1)) == 0 && "general.alignment must be a power of two");
    }
    struct lm_gguf_kv * kv = kv_for_set(ctx, key, type);
    memcpy(&kv->val, v, lm_gguf_scalar_size(type));
    sync_alignment(ctx);
}

void lm_gguf_set_val_u8  (struct lm_gguf_context * ctx, const char * key, uint8_t  val) { set_scalar(ctx, key, LM_GGUF_TYPE_UINT8, &val); }
void lm_gguf_set_val_i8  (struct lm_gguf_context * ctx, const char * key, int8_t   val) { set_scalar(ctx, key, LM_GGUF_TYPE_INT8, &val); }
void lm_gguf_set_val_u16 (struct lm_gguf_context * ctx, const char * key, uint16_t val) { set_scalar(ctx, key, LM_GGUF_TYPE_UINT16, &val); }
void lm_gguf_set_val_i16 (struct lm_gguf_context * ctx, const char * key, int16_t  val) { set_scalar(ctx, key, LM_GGUF_TYPE_INT16, &val); }
void lm_gguf_set_val_u32 (struct lm_gguf_context * ctx, const char * key, uint32_t val) { set_scalar(ctx, key, LM_GGUF_TYPE_UINT32, &val); }
void lm_gguf_set_val_i32 (struct lm_gguf_context * ctx, const char * key, int32_t  val) { set_scalar(ctx, key, LM_GGUF_TYPE_INT32, &val); }
void lm_gguf_set_val_f32 (struct lm_gguf_context * ctx, const char * key, float    val) { set_scalar(ctx, key, LM_GGUF_TYPE_FLOAT32, &val); }
void lm_gguf_set_val_u64 (struct lm_gguf_context * ctx, const char * key, uint64_t val) { set_scalar(ctx, key, LM_GGUF_TYPE_UINT64, &val); }
void lm_gguf_set_val_i64 (struct lm_gguf_context * ctx, const char * key, int64_t  val) { set_scalar(ctx, key, LM_GGUF_TYPE_INT64, &val); }
void lm_gguf_set_val_f64 (struct lm_gguf_context * ctx, const char * key, double   val) { set_scalar(ctx, key, LM_GGUF_TYPE_FLOAT64, &val); }

void lm_gguf_set_val_bool(struct lm_gguf_context * ctx, const char * key, bool val) {
    const uint8_t b = val ? 1 : 0; // the file holds one byte, 0 or 1
    set_scalar(ctx, key, LM_GGUF_TYPE_BOOL, &b);
}

static void set_str_n(struct lm_gguf_context * ctx, const char * key, const char * val, size_t n) {
    char * s = malloc(n + 1);
    LM_GGML_ASSERT(s != NULL);
    memcpy(s, val, n);
    s[n] = '\0';
    struct lm_gguf_kv * kv = kv_for_set(ctx, key, LM_GGUF_TYPE_STRING);
    kv->str = s;
    kv->str_len = n;
    sync_alignment(ctx);
}

void lm_gguf_set_val_str(struct lm_gguf_context * ctx, const char * key, const char * val) {
    LM_GGML_ASSERT(val != NULL);
    set_str_n(ctx, key, val, strlen(val));
}

static void set_arr_bytes(struct lm_gguf_context * ctx, const char * key, enum lm_gguf_type type, const void * data, uint64_t n) {
    const size_t sz = lm_gguf_scalar_size(type);
    LM_GGML_ASSERT(sz > 0 && "array elements must be fixed-size values (use lm_gguf_set_arr_str for strings)");
    LM_GGML_ASSERT(n <= INT32_MAX && n <= SIZE_MAX / sz);
    if (type == LM_GGUF_TYPE_BOOL) {
        for (uint64_t i = 0; i < n; i++) {
            LM_GGML_ASSERT(((const uint8_t *) data)[i] <= 1 && "bool array values must be 0 or 1");
        }
    }
    void * copy = malloc(n > 0 ? (size_t) n * sz : 1);
    LM_GGML_ASSERT(copy != NULL);
    if (n > 0) memcpy(copy, data, (size_t) n * sz);
    struct lm_gguf_kv * kv = kv_for_set(ctx, key, LM_GGUF_TYPE_ARRAY);
    kv->arr_type = type;
    kv->n = n;
    kv->arr = copy;
    sync_alignment(ctx);
}

void lm_gguf_set_arr_data(struct lm_gguf_context * ctx, const char * key, enum lm_gguf_type type, const void * data, int n) {
    LM_GGML_ASSERT(n >= 0);
    set_arr_bytes(ctx, key, type, data, (uint64_t) n);
}

// strs[i] with lengths lens[i] (lens == NULL: NUL-terminated)
static void set_arr_strs(struct lm_gguf_context * ctx, const char * key, const char * const * strs, const uint64_t * lens, uint64_t n) {
    LM_GGML_ASSERT(n <= INT32_MAX);
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        total += (lens ? lens[i] : strlen(strs[i])) + 1;
    }
    char * block = malloc(total > 0 ? (size_t) total : 1);
    char ** p = malloc((size_t) (n + 1) * sizeof(char *));
    LM_GGML_ASSERT(block != NULL && p != NULL);
    char * o = block;
    for (uint64_t i = 0; i < n; i++) {
        const size_t len = lens ? (size_t) lens[i] : strlen(strs[i]);
        p[i] = o;
        memcpy(o, strs[i], len);
        o += len;
        *o++ = '\0';
    }
    p[n] = o;
    struct lm_gguf_kv * kv = kv_for_set(ctx, key, LM_GGUF_TYPE_ARRAY);
    kv->arr_type = LM_GGUF_TYPE_STRING;
    kv->n = n;
    kv->strs = p;
    sync_alignment(ctx);
}

void lm_gguf_set_arr_str(struct lm_gguf_context * ctx, const char * key, const char ** data, int n) {
    LM_GGML_ASSERT(n >= 0);
    set_arr_strs(ctx, key, data, NULL, (uint64_t) n);
}

void lm_gguf_set_kv(struct lm_gguf_context * ctx, struct lm_gguf_context * src) {
    for (int i = 0; i < src->n_kv; i++) {
        const struct lm_gguf_kv * kv = &src->kv[i];
        if (kv->type == LM_GGUF_TYPE_STRING) {
            set_str_n(ctx, kv->key, kv->str, (size_t) kv->str_len);
        } else if (kv->type != LM_GGUF_TYPE_ARRAY) {
            set_scalar(ctx, kv->key, kv->type, &kv->val);
        } else if (kv->arr_type == LM_GGUF_TYPE_STRING) {
            uint64_t * lens = malloc((size_t) (kv->n + 1) * sizeof(uint64_t));
            LM_GGML_ASSERT(lens != NULL);
            for (uint64_t j = 0; j < kv->n; j++) {
                lens[j] = (uint64_t) (kv->strs[j + 1] - kv->strs[j] - 1);
            }
            set_arr_strs(ctx, kv->key, (const char * const *) kv->strs, lens, kv->n);
            free(lens);
        } else {
            set_arr_bytes(ctx, kv->key, kv->arr_type, kv->arr, kv->n);
        }
    }
}

void lm_gguf_remove_key(struct lm_gguf_context * ctx, const char * key) {
    const int i = lm_gguf_find_key(ctx, key);
    if (i < 0) return;
    lm_gguf_kv_clear(&ctx->kv[i]);
    free(ctx->kv[i].key);
    memmove(&ctx->kv[i], &ctx->kv[i + 1], (size_t) (ctx->n_kv - i - 1) * sizeof(ctx->kv[0]));
    ctx->n_kv--;
    sync_alignment(ctx);
}

// ---------------------------------------------------------------- tensors

void lm_gguf_add_tensor_info(struct lm_gguf_context * ctx, const char * name, enum lm_ggml_type type,
                             int n_dims, const int64_t * ne, const void * data) {
    LM_GGML_ASSERT(name != NULL && strlen(name) < LM_GGML_MAX_NAME && "tensor name too long");
    LM_GGML_ASSERT(n_dims >= 1 && n_dims <= LM_GGML_MAX_DIMS);
    if (lm_gguf_find_tensor(ctx, name) >= 0) {
        LM_GGML_ABORT("duplicated tensor name '%s'", name);
    }
    struct lm_gguf_tensor_info ti = { .n_dims = (uint32_t) n_dims, .type = type, .data = data };
    for (int j = 0; j < LM_GGML_MAX_DIMS; j++) {
        ti.ne[j] = j < n_dims ? ne[j] : 1;
    }
    LM_GGML_ASSERT(lm_gguf_tensor_nbytes(type, ti.ne, &ti.size) && "invalid tensor type or shape");
    strcpy(ti.name, name);
    if (ctx->n_tensors == ctx->cap_tensors) {
        const int cap = ctx->cap_tensors < 8 ? 8 : ctx->cap_tensors * 2;
        struct lm_gguf_tensor_info * p = realloc(ctx->infos, (size_t) cap * sizeof(*p));
        LM_GGML_ASSERT(p != NULL);
        ctx->infos = p;
        ctx->cap_tensors = cap;
    }
    ctx->infos[ctx->n_tensors++] = ti;
    relayout(ctx);
}

void lm_gguf_add_tensor(struct lm_gguf_context * ctx, const struct lm_ggml_tensor * tensor) {
    LM_GGML_ASSERT(tensor != NULL);
    lm_gguf_add_tensor_info(ctx, tensor->name, tensor->type, lm_ggml_n_dims(tensor), tensor->ne, tensor->data);
    // lm_ggml_nbytes, as ggml records, which differs from the packed size only for views
    ctx->infos[ctx->n_tensors - 1].size = lm_ggml_nbytes(tensor);
    relayout(ctx);
}

static struct lm_gguf_tensor_info * info_by_name(struct lm_gguf_context * ctx, const char * name) {
    const int i = lm_gguf_find_tensor(ctx, name);
    if (i < 0) {
        LM_GGML_ABORT("tensor '%s' not found", name);
    }
    return &ctx->infos[i];
}

void lm_gguf_set_tensor_type(struct lm_gguf_context * ctx, const char * name, enum lm_ggml_type type) {
    struct lm_gguf_tensor_info * ti = info_by_name(ctx, name);
    uint64_t size;
    LM_GGML_ASSERT(lm_gguf_tensor_nbytes(type, ti->ne, &size) && "shape does not fit the new type");
    ti->type = type;
    ti->size = size;
    relayout(ctx);
}

void lm_gguf_set_tensor_data(struct lm_gguf_context * ctx, const char * name, const void * data, size_t size) {
    struct lm_gguf_tensor_info * ti = info_by_name(ctx, name);
    ti->data = data;
    ti->size = size;
    relayout(ctx);
}
