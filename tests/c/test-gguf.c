// test-gguf.c - C harness for the lm_gguf_ API.
//
//   python3 tests/c/gguf-json2exp.py ../shared/parity /tmp/gguf-exp
//   cc -O1 -g -Wall -Wextra -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-gguf.c $(find csrc -name '*.c') -lm -o /tmp/test-gguf
//   /tmp/test-gguf ../shared/parity /tmp/gguf-exp
//
// Checks: every parity file read as its expectation says (through the file,
// buffer and prefix entry points, with and without a lm_ggml_context); the
// writer reproduces all-types-align32.gguf and its meta-only twin byte for
// byte; round trips with other alignments and version 2; every malformed or
// corrupted file rejected (files named *_ok.gguf accepted); random damage to
// a valid file never crashes. Run it under -fsanitize=address,undefined too.
#define _GNU_SOURCE
#include "ggml.h"
#include "gguf-ext.h"
#include "test-check.h"

#include <dirent.h>
#include <stdarg.h>
#include <sys/stat.h>

// ---------------------------------------------------------------- sha256 (FIPS 180-4)

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t h[8], const uint8_t * p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++) w[i] = (uint32_t) p[4*i] << 24 | (uint32_t) p[4*i+1] << 16 | (uint32_t) p[4*i+2] << 8 | p[4*i+3];
    for (int i = 16; i < 64; i++) {
        const uint32_t s0 = ror(w[i-15], 7) ^ ror(w[i-15], 18) ^ (w[i-15] >> 3);
        const uint32_t s1 = ror(w[i-2], 17) ^ ror(w[i-2], 19) ^ (w[i-2] >> 10);
        w[i] = w[i-16] + s0 + w[i-7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        const uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        const uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

static void sha256_hex(const void * data, size_t n, char out[65]) {
    uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    const uint8_t * p = data;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) sha256_block(h, p + i);
    uint8_t tail[128] = { 0 };
    const size_t r = n - i;
    memcpy(tail, p + i, r);
    tail[r] = 0x80;
    const size_t tl = r + 9 <= 64 ? 64 : 128;
    const uint64_t bits = (uint64_t) n * 8;
    for (int j = 0; j < 8; j++) tail[tl - 1 - j] = (uint8_t) (bits >> (8 * j));
    sha256_block(h, tail);
    if (tl == 128) sha256_block(h, tail + 64);
    for (int j = 0; j < 8; j++) sprintf(out + 8 * j, "%08x", h[j]);
}

// ---------------------------------------------------------------- helpers

static uint8_t * read_all(const char * path, size_t * n) {
    FILE * f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t * b = malloc(sz > 0 ? (size_t) sz : 1);
    if (sz > 0 && fread(b, 1, (size_t) sz, f) != (size_t) sz) { free(b); fclose(f); return NULL; }
    fclose(f);
    *n = (size_t) sz;
    return b;
}

// hex ("-" is empty) -> bytes; returns length
static size_t unhex(const char * s, uint8_t * out) {
    if (strcmp(s, "-") == 0) return 0;
    size_t n = strlen(s) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (uint8_t) v;
    }
    return n;
}

static enum lm_gguf_type type_by_name(const char * s) {
    for (int t = 0; t < LM_GGUF_TYPE_COUNT; t++) {
        if (strcmp(lm_gguf_type_name((enum lm_gguf_type) t), s) == 0) return (enum lm_gguf_type) t;
    }
    return LM_GGUF_TYPE_COUNT;
}

static char ** split(char * line, int * n) {
    static char * tok[1 << 16];
    *n = 0;
    for (char * t = strtok(line, " \n"); t && *n < (1 << 16); t = strtok(NULL, " \n")) tok[(*n)++] = t;
    return tok;
}

// Checks ctx against the expectation file. file_bytes (whole file) gives the
// data when the context has none of its own; sha "-" skips data checks.
static void check_against(const char * label, struct lm_gguf_context * ctx, struct lm_ggml_context * gctx,
                          const char * exp_path, const uint8_t * file, size_t file_size) {
    FILE * f = fopen(exp_path, "r");
    if (!f) { CHECKF(0, "%s: cannot open %s", label, exp_path); return; }
    static char line[1 << 20];
    static uint8_t buf[1 << 16], buf2[1 << 16];
    int kv_i = 0, t_i = 0;
    while (fgets(line, sizeof(line), f)) {
        int n;
        char ** tok = split(line, &n);
        if (n == 0) continue;
        const char c = tok[0][0];
        if (c == 'V') CHECKF(lm_gguf_get_version(ctx) == atoi(tok[1]), "%s: version", label);
        if (c == 'A') CHECKF(lm_gguf_get_alignment(ctx) == (size_t) atoll(tok[1]), "%s: alignment", label);
        if (c == 'D') CHECKF(lm_gguf_get_data_offset(ctx) == (size_t) atoll(tok[1]), "%s: data offset %zu", label, lm_gguf_get_data_offset(ctx));
        if (c == 'S') CHECKF(file_size == (size_t) atoll(tok[1]), "%s: file size", label);
        if (c == 'K' || c == 'R' || c == 'Q') {
            const size_t kn = unhex(tok[1], buf);
            buf[kn] = 0;
            const int id = lm_gguf_find_key(ctx, (const char *) buf);
            CHECKF(id == kv_i, "%s: key %s at %d, found at %d", label, (char *) buf, kv_i, id);
            kv_i++;
            if (id < 0) continue;
            CHECKF(strcmp(lm_gguf_get_key(ctx, id), (const char *) buf) == 0, "%s: get_key", label);
            if (c == 'K') {
                const enum lm_gguf_type t = type_by_name(tok[2]);
                CHECKF(lm_gguf_get_kv_type(ctx, id) == t, "%s: type of %s", label, (char *) buf);
                if (lm_gguf_get_kv_type(ctx, id) != t) continue;
                const size_t vn = unhex(tok[3], buf2);
                if (t == LM_GGUF_TYPE_STRING) {
                    size_t len;
                    const char * s = lm_gguf_get_val_str_n(ctx, id, &len);
                    CHECKF(len == vn && memcmp(s, buf2, vn) == 0 && s == lm_gguf_get_val_str(ctx, id), "%s: value of %s", label, (char *) buf);
                } else {
                    CHECKF(memcmp(lm_gguf_get_val_data(ctx, id), buf2, vn) == 0, "%s: value of %s", label, (char *) buf);
                }
                // the typed getters agree with the raw bytes
                switch (t) {
                    case LM_GGUF_TYPE_UINT8:   CHECKF(lm_gguf_get_val_u8(ctx, id) == buf2[0], "u8"); break;
                    case LM_GGUF_TYPE_INT8:    CHECKF(lm_gguf_get_val_i8(ctx, id) == (int8_t) buf2[0], "i8"); break;
                    case LM_GGUF_TYPE_UINT16:  { uint16_t v; memcpy(&v, buf2, 2); CHECKF(lm_gguf_get_val_u16(ctx, id) == v, "u16"); } break;
                    case LM_GGUF_TYPE_INT16:   { int16_t v;  memcpy(&v, buf2, 2); CHECKF(lm_gguf_get_val_i16(ctx, id) == v, "i16"); } break;
                    case LM_GGUF_TYPE_UINT32:  { uint32_t v; memcpy(&v, buf2, 4); CHECKF(lm_gguf_get_val_u32(ctx, id) == v, "u32"); } break;
                    case LM_GGUF_TYPE_INT32:   { int32_t v;  memcpy(&v, buf2, 4); CHECKF(lm_gguf_get_val_i32(ctx, id) == v, "i32"); } break;
                    case LM_GGUF_TYPE_FLOAT32: { float v;    memcpy(&v, buf2, 4); CHECKF(lm_gguf_get_val_f32(ctx, id) == v, "f32"); } break;
                    case LM_GGUF_TYPE_UINT64:  { uint64_t v; memcpy(&v, buf2, 8); CHECKF(lm_gguf_get_val_u64(ctx, id) == v, "u64"); } break;
                    case LM_GGUF_TYPE_INT64:   { int64_t v;  memcpy(&v, buf2, 8); CHECKF(lm_gguf_get_val_i64(ctx, id) == v, "i64"); } break;
                    case LM_GGUF_TYPE_FLOAT64: { double v;   memcpy(&v, buf2, 8); CHECKF(lm_gguf_get_val_f64(ctx, id) == v, "f64"); } break;
                    case LM_GGUF_TYPE_BOOL:    CHECKF(lm_gguf_get_val_bool(ctx, id) == (buf2[0] != 0), "bool"); break;
                    default: break;
                }
            } else if (c == 'R') {
                CHECKF(lm_gguf_get_kv_type(ctx, id) == LM_GGUF_TYPE_ARRAY, "%s: %s is an array", label, (char *) buf);
                CHECKF(lm_gguf_get_arr_type(ctx, id) == type_by_name(tok[2]), "%s: array type of %s", label, (char *) buf);
                CHECKF(lm_gguf_get_arr_n(ctx, id) == atoi(tok[3]), "%s: array length of %s", label, (char *) buf);
                const size_t vn = unhex(tok[4], buf2);
                CHECKF(vn == 0 || memcmp(lm_gguf_get_arr_data(ctx, id), buf2, vn) == 0, "%s: array data of %s", label, (char *) buf);
            } else {
                CHECKF(lm_gguf_get_arr_type(ctx, id) == LM_GGUF_TYPE_STRING, "%s: string array %s", label, (char *) buf);
                const int an = atoi(tok[2]);
                CHECKF(lm_gguf_get_arr_n(ctx, id) == an, "%s: array length of %s", label, (char *) buf);
                const char * const * p = lm_gguf_get_arr_strs(ctx, id);
                for (int j = 0; j < an && j + 3 < n; j++) {
                    const size_t vn = unhex(tok[3 + j], buf2);
                    const size_t len = (size_t) (p[j + 1] - p[j] - 1);
                    CHECKF(len == vn && memcmp(p[j], buf2, vn) == 0 && lm_gguf_get_arr_str(ctx, id, j) == p[j],
                          "%s: string %d of %s", label, j, (char *) buf);
                }
            }
        }
        if (c == 'T') {
            const int id = lm_gguf_find_tensor(ctx, tok[1]);
            CHECKF(id == t_i, "%s: tensor %s at %d, found %d", label, tok[1], t_i, id);
            t_i++;
            if (id < 0) continue;
            struct lm_gguf_tensor_desc d;
            lm_gguf_get_tensor_desc(ctx, id, &d);
            CHECKF(strcmp(d.name, tok[1]) == 0 && strcmp(lm_gguf_get_tensor_name(ctx, id), tok[1]) == 0, "%s: name", label);
            CHECKF(d.type == atoi(tok[2]) && (int) lm_gguf_get_tensor_type(ctx, id) == d.type, "%s: type of %s", label, tok[1]);
            CHECKF(d.n_dims == atoi(tok[3]), "%s: n_dims of %s", label, tok[1]);
            for (int j = 0; j < 4; j++) CHECKF(d.ne[j] == atoll(tok[4 + j]), "%s: ne[%d] of %s", label, j, tok[1]);
            CHECKF(d.offset == (uint64_t) atoll(tok[8]) && lm_gguf_get_tensor_offset(ctx, id) == d.offset, "%s: offset of %s", label, tok[1]);
            CHECKF(d.size == (uint64_t) atoll(tok[9]) && lm_gguf_get_tensor_size(ctx, id) == d.size, "%s: size of %s", label, tok[1]);
            if (strcmp(tok[10], "-") != 0) {
                const uint8_t * data = NULL;
                if (lm_gguf_get_data(ctx)) {
                    data = (const uint8_t *) lm_gguf_get_data(ctx) + d.offset;
                } else if (file) {
                    data = file + lm_gguf_get_data_offset(ctx) + d.offset;
                }
                if (data) {
                    char hex[65];
                    sha256_hex(data, (size_t) d.size, hex);
                    CHECKF(strcmp(hex, tok[10]) == 0, "%s: sha256 of %s", label, tok[1]);
                }
            }
            if (gctx) {
                struct lm_ggml_tensor * t = lm_ggml_get_tensor(gctx, tok[1]);
                CHECKF(t != NULL, "%s: tensor %s in the lm_ggml_context", label, tok[1]);
                if (t) {
                    CHECKF((int) t->type == d.type && lm_ggml_nbytes(t) == d.size, "%s: lm_ggml tensor %s", label, tok[1]);
                    for (int j = 0; j < 4; j++) CHECKF(t->ne[j] == d.ne[j], "%s: lm_ggml ne of %s", label, tok[1]);
                    if (lm_gguf_get_data(ctx)) {
                        CHECKF(t->data == (char *) lm_gguf_get_data(ctx) + d.offset, "%s: data pointer of %s", label, tok[1]);
                    } else {
                        CHECKF(t->data == NULL, "%s: no data for %s", label, tok[1]);
                    }
                }
            }
        }
    }
    fclose(f);
    CHECKF(kv_i == lm_gguf_get_n_kv(ctx), "%s: n_kv %d vs %d", label, lm_gguf_get_n_kv(ctx), kv_i);
    CHECKF(t_i == lm_gguf_get_n_tensors(ctx), "%s: n_tensors %d vs %d", label, lm_gguf_get_n_tensors(ctx), t_i);
}

static bool exp_has_data(const char * exp_path) {
    char cmd[1024];
    FILE * f = fopen(exp_path, "r");
    bool data = true;
    while (fgets(cmd, sizeof(cmd), f)) {
        if (cmd[0] == 'T' && strstr(cmd, " -\n")) data = false;
    }
    fclose(f);
    return data;
}

// Reads one parity file through every entry point and mode.
static void test_parity_file(const char * gguf_path, const char * exp_path) {
    size_t fsize = 0;
    uint8_t * file = read_all(gguf_path, &fsize);
    CHECKF(file != NULL, "read %s", gguf_path);
    if (!file) return;
    const bool has_data = exp_has_data(exp_path);
    char err[512], label[1200];

    for (int mode = 0; mode < 4; mode++) {
        const bool no_alloc = mode & 1, with_ctx = mode & 2;
        struct lm_ggml_context * gctx = NULL;
        struct lm_gguf_init_params p = { no_alloc, with_ctx ? &gctx : NULL };
        const bool expect_ok = has_data || no_alloc;

        snprintf(label, sizeof(label), "%s file no_alloc=%d ctx=%d", gguf_path, no_alloc, with_ctx);
        struct lm_gguf_context * ctx = lm_gguf_init_from_file_ex(gguf_path, p, err, sizeof(err));
        CHECKF((ctx != NULL) == expect_ok, "%s: %s", label, ctx ? "accepted" : err);
        if (!expect_ok && !ctx) printf("  rejected as expected (%s): %s\n", label, err);
        if (ctx) {
            check_against(label, ctx, gctx, exp_path, has_data ? file : NULL, fsize);
            if (lm_gguf_get_n_tensors(ctx) > 0) {
                CHECKF((lm_gguf_get_data(ctx) != NULL) == (with_ctx && !no_alloc), "%s: get_data", label);
            }
            lm_gguf_free(ctx);
        }
        lm_ggml_free(gctx);
        gctx = NULL;

        snprintf(label, sizeof(label), "%s buffer no_alloc=%d ctx=%d", gguf_path, no_alloc, with_ctx);
        ctx = lm_gguf_init_from_buffer_ex(file, fsize, p, err, sizeof(err));
        CHECKF((ctx != NULL) == expect_ok, "%s: %s", label, ctx ? "accepted" : err);
        if (ctx) {
            check_against(label, ctx, gctx, exp_path, has_data ? file : NULL, fsize);
            lm_gguf_free(ctx);
        }
        lm_ggml_free(gctx);

        if (!with_ctx) {
            // prefix parsing: any prefix either asks for more or gives the same answer
            int agreed = 0;
            for (size_t avail = 0; avail <= fsize; avail += 1 + avail / 8) {
                uint64_t need = 0;
                ctx = lm_gguf_init_from_prefix_ex(file, avail, fsize, p, &need, err, sizeof(err));
                if (ctx) {
                    agreed += expect_ok;
                    lm_gguf_free(ctx);
                } else if (need > 0) {
                    agreed += need > avail && need <= fsize;
                } else {
                    agreed += !expect_ok;
                }
                CHECKF(ctx != NULL || need > 0 || !expect_ok, "%s prefix %zu: %s", gguf_path, avail, err);
            }
            snprintf(label, sizeof(label), "%s prefix no_alloc=%d", gguf_path, no_alloc);
            ctx = lm_gguf_init_from_prefix_ex(file, fsize, fsize, p, NULL, err, sizeof(err));
            CHECKF((ctx != NULL) == expect_ok, "%s: %s", label, err);
            if (ctx) {
                check_against(label, ctx, NULL, exp_path, has_data ? file : NULL, fsize);
                lm_gguf_free(ctx);
            }
            CHECKF(agreed > 0, "prefix");
        }
    }
    free(file);
}

// ---------------------------------------------------------------- rejection

static int ends_with(const char * s, const char * suf) {
    const size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static void test_reject_dir(const char * dir) {
    DIR * d = opendir(dir);
    CHECKF(d != NULL, "open %s", dir);
    if (!d) return;
    struct dirent * e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        if (!ends_with(e->d_name, ".gguf")) continue;
        n++;
        char path[1024], err[512];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        const bool expect_ok = ends_with(e->d_name, "_ok.gguf");
        size_t fsize = 0;
        uint8_t * file = read_all(path, &fsize);
        for (int mode = 0; mode < 2; mode++) {
            struct lm_ggml_context * gctx = NULL;
            struct lm_gguf_init_params p = { false, mode ? &gctx : NULL };
            struct lm_gguf_context * ctx = lm_gguf_init_from_file_ex(path, p, err, sizeof(err));
            CHECKF((ctx != NULL) == expect_ok, "%s (ctx=%d): %s", path, mode, ctx ? "accepted" : err);
            if (mode == 0) printf("  %-34s %s\n", e->d_name, ctx ? "accepted" : err);
            if (!ctx) CHECKF(err[0] != '\0' && gctx == NULL, "%s: error message", path);
            lm_gguf_free(ctx);
            lm_ggml_free(gctx);

            ctx = lm_gguf_init_from_buffer_ex(file ? file : (const uint8_t *) "", fsize, p, err, sizeof(err));
            CHECKF((ctx != NULL) == expect_ok, "%s buffer (ctx=%d): %s", path, mode, ctx ? "accepted" : err);
            lm_gguf_free(ctx);
            lm_ggml_free(gctx);
        }
        free(file);
    }
    closedir(d);
    CHECKF(n > 0, "no files in %s", dir);
}

// ---------------------------------------------------------------- writer

static void copy_kv_typed(struct lm_gguf_context * dst, const struct lm_gguf_context * src, int i) {
    const char * k = lm_gguf_get_key(src, i);
    switch (lm_gguf_get_kv_type(src, i)) {
        case LM_GGUF_TYPE_UINT8:   lm_gguf_set_val_u8  (dst, k, lm_gguf_get_val_u8  (src, i)); break;
        case LM_GGUF_TYPE_INT8:    lm_gguf_set_val_i8  (dst, k, lm_gguf_get_val_i8  (src, i)); break;
        case LM_GGUF_TYPE_UINT16:  lm_gguf_set_val_u16 (dst, k, lm_gguf_get_val_u16 (src, i)); break;
        case LM_GGUF_TYPE_INT16:   lm_gguf_set_val_i16 (dst, k, lm_gguf_get_val_i16 (src, i)); break;
        case LM_GGUF_TYPE_UINT32:  lm_gguf_set_val_u32 (dst, k, lm_gguf_get_val_u32 (src, i)); break;
        case LM_GGUF_TYPE_INT32:   lm_gguf_set_val_i32 (dst, k, lm_gguf_get_val_i32 (src, i)); break;
        case LM_GGUF_TYPE_FLOAT32: lm_gguf_set_val_f32 (dst, k, lm_gguf_get_val_f32 (src, i)); break;
        case LM_GGUF_TYPE_UINT64:  lm_gguf_set_val_u64 (dst, k, lm_gguf_get_val_u64 (src, i)); break;
        case LM_GGUF_TYPE_INT64:   lm_gguf_set_val_i64 (dst, k, lm_gguf_get_val_i64 (src, i)); break;
        case LM_GGUF_TYPE_FLOAT64: lm_gguf_set_val_f64 (dst, k, lm_gguf_get_val_f64 (src, i)); break;
        case LM_GGUF_TYPE_BOOL:    lm_gguf_set_val_bool(dst, k, lm_gguf_get_val_bool(src, i)); break;
        case LM_GGUF_TYPE_STRING:  lm_gguf_set_val_str (dst, k, lm_gguf_get_val_str (src, i)); break;
        case LM_GGUF_TYPE_ARRAY: {
            const int n = lm_gguf_get_arr_n(src, i);
            if (lm_gguf_get_arr_type(src, i) == LM_GGUF_TYPE_STRING) {
                const char ** s = malloc(((size_t) n + 1) * sizeof(char *));
                for (int j = 0; j < n; j++) s[j] = lm_gguf_get_arr_str(src, i, j);
                lm_gguf_set_arr_str(dst, k, s, n);
                free(s);
            } else {
                lm_gguf_set_arr_data(dst, k, lm_gguf_get_arr_type(src, i), lm_gguf_get_arr_data(src, i), n);
            }
        } break;
        default: CHECKF(0, "unexpected type"); break;
    }
}

// ---------------------------------------------------------------- random damage

static long g_damage_iters = 20000;

static uint64_t rng_next(uint64_t * s) {
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

// Damages a valid file in ways that hit the parser's checks: random bytes,
// interesting 32/64-bit values at random 4-byte positions (lengths, counts,
// types, dims, offsets), truncation. Nothing may crash, leak or overread
// (run under ASan/UBSan); some variants are still valid and must load.
static void damage_loop(const uint8_t * f, size_t fn, long iters) {
    static const uint64_t interesting[] = {
        0, 1, 2, 3, 4, 7, 8, 9, 12, 13, 31, 32, 33, 63, 64, 255, 256, 4096, 0x7fffffff, 0x80000000u,
        0xffffffffu, 0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull,
        0x4000000000000000ull, 5631, 5632, 2144, 1ull << 40,
    };
    const size_t n_int = sizeof(interesting) / sizeof(interesting[0]);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    long accepted = 0;
    char err[512];
    uint8_t * g = malloc(fn);
    for (long it = 0; it < iters; it++) {
        memcpy(g, f, fn);
        const int edits = 1 + (int) (rng_next(&s) % 4);
        for (int k = 0; k < edits; k++) {
            const uint64_t r = rng_next(&s);
            // mostly the metadata (first 2144 bytes), sometimes anywhere
            const size_t pos = (size_t) ((r >> 8) % (r & 1 ? fn : 2144));
            switch ((r >> 4) % 3) {
                case 0: g[pos] = (uint8_t) (r >> 40); break;
                case 1: {
                    const uint64_t v = interesting[(r >> 32) % n_int];
                    const size_t p4 = pos & ~(size_t) 3, w = (r >> 2) & 1 ? 8 : 4;
                    if (p4 + w <= fn) for (size_t b = 0; b < w; b++) g[p4 + b] = (uint8_t) (v >> (8 * b));
                } break;
                default: g[pos] ^= (uint8_t) (1u << ((r >> 20) % 8)); break;
            }
        }
        const uint64_t r = rng_next(&s);
        const size_t len = r % 7 == 0 ? (size_t) ((r >> 8) % (fn + 1)) : fn;
        struct lm_ggml_context * gc = NULL;
        struct lm_gguf_init_params p = { (r >> 3) % 3 == 0, (r >> 5) % 2 ? &gc : NULL };
        struct lm_gguf_context * c = lm_gguf_init_from_buffer_ex(g, len, p, err, sizeof(err));
        if (c) {
            accepted++;
            // whatever was accepted must be fully readable and rewritable
            for (int i = 0; i < lm_gguf_get_n_kv(c); i++) {
                if (lm_gguf_get_kv_type(c, i) == LM_GGUF_TYPE_ARRAY && lm_gguf_get_arr_type(c, i) == LM_GGUF_TYPE_STRING) {
                    const char * const * q = lm_gguf_get_arr_strs(c, i);
                    for (int j = 0; j < lm_gguf_get_arr_n(c, i); j++) (void) strlen(q[j]);
                }
            }
            uint8_t * meta = malloc(lm_gguf_get_meta_size(c));
            lm_gguf_get_meta_data(c, meta);
            free(meta);
        }
        lm_gguf_free(c);
        lm_ggml_free(gc);
    }
    printf("  random damage: %ld of %ld variants accepted, none crashed\n", accepted, iters);
    free(g);
}

static bool same_file(const char * a, const char * b, const char * label) {
    size_t na = 0, nb = 0;
    uint8_t * x = read_all(a, &na), * y = read_all(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    if (!same && x && y) {
        size_t i = 0;
        while (i < na && i < nb && x[i] == y[i]) i++;
        fprintf(stderr, "  %s: %zu vs %zu bytes, first difference at %zu\n", label, na, nb, i);
    }
    free(x); free(y);
    return same;
}

static void test_writer(const char * parity) {
    char src_path[1024], meta_path[1024], err[512];
    snprintf(src_path, sizeof(src_path), "%s/gguf/all-types-align32.gguf", parity);
    snprintf(meta_path, sizeof(meta_path), "%s/gguf/meta-only-all-types-align32.gguf", parity);
    struct lm_ggml_context * gctx = NULL;
    struct lm_gguf_context * src = lm_gguf_init_from_file_ex(src_path, (struct lm_gguf_init_params) { false, &gctx }, err, sizeof(err));
    CHECKF(src != NULL, "load %s: %s", src_path, err);
    if (!src) return;

    // typed setters, then the tensors of the loaded lm_ggml_context
    struct lm_gguf_context * dst = lm_gguf_init_empty();
    for (int i = 0; i < lm_gguf_get_n_kv(src); i++) copy_kv_typed(dst, src, i);
    for (int i = 0; i < lm_gguf_get_n_tensors(src); i++) {
        lm_gguf_add_tensor(dst, lm_ggml_get_tensor(gctx, lm_gguf_get_tensor_name(src, i)));
    }
    CHECKF(lm_gguf_get_meta_size(dst) == lm_gguf_get_data_offset(src), "meta size %zu", lm_gguf_get_meta_size(dst));
    lm_gguf_write_to_file(dst, "/tmp/test-gguf-out.gguf", false);
    CHECKF(same_file("/tmp/test-gguf-out.gguf", src_path, "writer"), "writer reproduces all-types-align32.gguf");
    lm_gguf_write_to_file(dst, "/tmp/test-gguf-meta.gguf", true);
    CHECKF(same_file("/tmp/test-gguf-meta.gguf", meta_path, "meta writer"), "only_meta reproduces meta-only-all-types-align32.gguf");
    {
        const size_t n = lm_gguf_get_meta_size(dst);
        uint8_t * m = malloc(n);
        lm_gguf_get_meta_data(dst, m);
        size_t fn = 0;
        uint8_t * f = read_all(src_path, &fn);
        CHECKF(f && n <= fn && memcmp(m, f, n) == 0, "get_meta_data");
        free(m); free(f);
    }

    // set_kv copies everything in order
    struct lm_gguf_context * dst2 = lm_gguf_init_empty();
    lm_gguf_set_kv(dst2, src);
    for (int i = 0; i < lm_gguf_get_n_tensors(src); i++) {
        struct lm_ggml_tensor * t = lm_ggml_get_tensor(gctx, lm_gguf_get_tensor_name(src, i));
        lm_gguf_add_tensor_info(dst2, t->name, t->type, lm_ggml_n_dims(t), t->ne, t->data);
    }
    CHECKF(lm_gguf_write_to_file_ex(dst2, "/tmp/test-gguf-out2.gguf", false, err, sizeof(err)), "write: %s", err);
    CHECKF(same_file("/tmp/test-gguf-out2.gguf", src_path, "set_kv writer"), "set_kv + add_tensor_info reproduce the file");

    // overwriting keeps the position, removing shifts the rest
    lm_gguf_set_val_str(dst2, "test.u8", "now a string");
    CHECKF(lm_gguf_find_key(dst2, "test.u8") == 1 && lm_gguf_get_kv_type(dst2, 1) == LM_GGUF_TYPE_STRING, "overwrite in place");
    lm_gguf_remove_key(dst2, "general.name");
    CHECKF(lm_gguf_find_key(dst2, "test.u8") == 0 && lm_gguf_get_n_kv(dst2) == lm_gguf_get_n_kv(src) - 1, "remove_key");

    // a declared alignment is applied to the layout and survives a round trip
    const uint32_t aligns[] = { 1, 8, 64, 4096 };
    for (int k = 0; k < 4; k++) {
        lm_gguf_set_val_u32(dst2, "general.alignment", aligns[k]);
        CHECKF(lm_gguf_get_alignment(dst2) == aligns[k], "alignment set");
        CHECKF(lm_gguf_write_to_file_ex(dst2, "/tmp/test-gguf-al.gguf", false, err, sizeof(err)), "write: %s", err);
        struct lm_ggml_context * g2 = NULL;
        struct lm_gguf_context * back = lm_gguf_init_from_file_ex("/tmp/test-gguf-al.gguf", (struct lm_gguf_init_params) { false, &g2 }, err, sizeof(err));
        CHECKF(back != NULL, "alignment %u round trip: %s", aligns[k], err);
        if (back) {
            CHECKF(lm_gguf_get_alignment(back) == aligns[k] && lm_gguf_get_data_offset(back) % aligns[k] == 0, "alignment %u", aligns[k]);
            for (int i = 0; i < lm_gguf_get_n_tensors(back); i++) {
                CHECKF(lm_gguf_get_tensor_offset(back, i) % aligns[k] == 0, "aligned offset");
                struct lm_ggml_tensor * a = lm_ggml_get_tensor(gctx, lm_gguf_get_tensor_name(back, i));
                struct lm_ggml_tensor * b = lm_ggml_get_tensor(g2, lm_gguf_get_tensor_name(back, i));
                CHECKF(a && b && lm_ggml_nbytes(a) == lm_ggml_nbytes(b) && memcmp(a->data, b->data, lm_ggml_nbytes(a)) == 0,
                      "tensor data after alignment %u", aligns[k]);
            }
            CHECKF(lm_gguf_get_val_str_n(back, lm_gguf_find_key(back, "test.u8"), NULL) != NULL, "values kept");
            lm_gguf_free(back);
        }
        lm_ggml_free(g2);
    }
    lm_gguf_remove_key(dst2, "general.alignment");
    CHECKF(lm_gguf_get_alignment(dst2) == 32 && lm_gguf_get_tensor_offset(dst2, 1) == 96, "alignment back to the default");

    // set_tensor_type re-lays out the following tensors
    lm_gguf_set_tensor_type(dst2, "tensor.f32", LM_GGML_TYPE_F16);
    CHECKF(lm_gguf_get_tensor_offset(dst2, 1) == 64 && lm_gguf_get_tensor_size(dst2, 0) == 42, "set_tensor_type layout");

    lm_gguf_free(dst2);
    lm_gguf_free(dst);

    // version 2 files read the same
    size_t fn = 0;
    uint8_t * f = read_all(src_path, &fn);
    f[4] = 2;
    struct lm_gguf_context * v2 = lm_gguf_init_from_buffer_ex(f, fn, (struct lm_gguf_init_params) { false, NULL }, err, sizeof(err));
    CHECKF(v2 != NULL && lm_gguf_get_version(v2) == 2, "version 2: %s", err);
    lm_gguf_free(v2);

    damage_loop(f, fn, g_damage_iters);
    free(f);

    lm_gguf_free(src);
    lm_ggml_free(gctx);
}

static void test_empty_context(void) {
    struct lm_gguf_context * ctx = lm_gguf_init_empty();
    CHECKF(lm_gguf_get_n_kv(ctx) == 0 && lm_gguf_get_n_tensors(ctx) == 0 && lm_gguf_get_version(ctx) == 3, "empty");
    CHECKF(lm_gguf_get_meta_size(ctx) == 32, "empty meta size %zu", lm_gguf_get_meta_size(ctx));
    CHECKF(lm_gguf_find_key(ctx, "x") == -1 && lm_gguf_find_tensor(ctx, "x") == -1, "find on empty");
    CHECKF(strcmp(lm_gguf_type_name(LM_GGUF_TYPE_FLOAT64), "f64") == 0 && lm_gguf_type_name(LM_GGUF_TYPE_COUNT) == NULL, "type names");
    lm_gguf_free(ctx);
}

int main(int argc, char ** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s PARITY_DIR EXP_DIR [DAMAGE_ITERATIONS] (EXP_DIR from tests/c/gguf-json2exp.py)\n", argv[0]);
        return 2;
    }
    if (argc > 3) g_damage_iters = atol(argv[3]);
    const char * parity = argv[1], * exp = argv[2];
    struct stat st;
    if (stat(parity, &st) != 0) {
        printf("SKIP: parity directory %s not found\n", parity);
        return 0;
    }
    test_empty_context();

    const char * names[] = { "all-types-align32", "meta-only-all-types-align32", "kv-only", "empty" };
    for (int i = 0; i < 4; i++) {
        char g[1024], e[1024];
        snprintf(g, sizeof(g), "%s/gguf/%s.gguf", parity, names[i]);
        snprintf(e, sizeof(e), "%s/%s.exp", exp, names[i]);
        test_parity_file(g, e);
    }
    char dir[1024];
    printf("gguf-malformed:\n");
    snprintf(dir, sizeof(dir), "%s/gguf-malformed", parity);
    test_reject_dir(dir);
    printf("gguf-corrupted:\n");
    snprintf(dir, sizeof(dir), "%s/gguf-corrupted", parity);
    test_reject_dir(dir);
    printf("writer:\n");
    test_writer(parity);

    return check_summary();
}
