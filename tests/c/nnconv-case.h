// nnconv-case.h - minimal reader of the parity op-case GGUF files
// (../shared/parity/ops/*.gguf) used by test-parity-nnconv.c. Reads only the
// string keys case.expr/params/kind and the tensors.
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC_MAX_T 32

struct nc_tensor {
    char name[64];
    uint32_t type;
    int n_dims;
    int64_t ne[4];
    uint64_t offset;
    const void * data;
};

struct nc_case {
    unsigned char * buf;
    size_t size;
    char expr[2048];
    char params[256];
    char kind[32];
    int n_t;
    struct nc_tensor t[NC_MAX_T];
};

struct nc_rd { const unsigned char * p, * end; int bad; };

static uint64_t nc_u(struct nc_rd * r, int n) {
    uint64_t v = 0;
    if (r->p + n > r->end) { r->bad = 1; return 0; }
    for (int i = 0; i < n; i++) v |= (uint64_t) r->p[i] << (8 * i);
    r->p += n;
    return v;
}

static void nc_str(struct nc_rd * r, char * out, size_t cap) {
    uint64_t n = nc_u(r, 8);
    if (r->bad || n > (uint64_t)(r->end - r->p)) { r->bad = 1; return; }
    if (out) {
        size_t m = n < cap - 1 ? (size_t) n : cap - 1;
        memcpy(out, r->p, m);
        out[m] = 0;
    }
    r->p += n;
}

static void nc_skip_val(struct nc_rd * r, uint32_t t) {
    static const int sz[13] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    if (t == 8) { nc_str(r, NULL, 0); return; }
    if (t == 9) {
        uint32_t et = (uint32_t) nc_u(r, 4);
        uint64_t n = nc_u(r, 8);
        for (uint64_t i = 0; i < n && !r->bad; i++) nc_skip_val(r, et);
        return;
    }
    if (t > 12) { r->bad = 1; return; }
    r->p += sz[t];
}

// Returns 0 on success.
static int nc_load(const char * path, struct nc_case * c) {
    memset(c, 0, sizeof(*c));
    FILE * f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    c->size = (size_t) ftell(f);
    fseek(f, 0, SEEK_SET);
    c->buf = (unsigned char *) malloc(c->size);
    if (fread(c->buf, 1, c->size, f) != c->size) { fclose(f); return -1; }
    fclose(f);
    struct nc_rd r = { c->buf, c->buf + c->size, 0 };
    if (c->size < 24 || memcmp(c->buf, "GGUF", 4) != 0) return -1;
    r.p += 8;
    const uint64_t n_t = nc_u(&r, 8), n_kv = nc_u(&r, 8);
    uint64_t align = 32;
    for (uint64_t i = 0; i < n_kv && !r.bad; i++) {
        char key[256];
        nc_str(&r, key, sizeof(key));
        uint32_t t = (uint32_t) nc_u(&r, 4);
        if (t == 8 && !strcmp(key, "case.expr"))        nc_str(&r, c->expr, sizeof(c->expr));
        else if (t == 8 && !strcmp(key, "case.params")) nc_str(&r, c->params, sizeof(c->params));
        else if (t == 8 && !strcmp(key, "case.kind"))   nc_str(&r, c->kind, sizeof(c->kind));
        else if (t == 4 && !strcmp(key, "general.alignment")) align = nc_u(&r, 4);
        else nc_skip_val(&r, t);
    }
    if (n_t > NC_MAX_T) return -1;
    c->n_t = (int) n_t;
    for (uint64_t i = 0; i < n_t && !r.bad; i++) {
        struct nc_tensor * t = &c->t[i];
        nc_str(&r, t->name, sizeof(t->name));
        t->n_dims = (int) nc_u(&r, 4);
        if (t->n_dims > 4) return -1;
        for (int d = 0; d < 4; d++) t->ne[d] = 1;
        for (int d = 0; d < t->n_dims; d++) t->ne[d] = (int64_t) nc_u(&r, 8);
        t->type = (uint32_t) nc_u(&r, 4);
        t->offset = nc_u(&r, 8);
    }
    if (r.bad) return -1;
    size_t off = (size_t)(r.p - c->buf);
    off = (off + align - 1) / align * align;
    for (int i = 0; i < c->n_t; i++) c->t[i].data = c->buf + off + c->t[i].offset;
    return 0;
}

static const struct nc_tensor * nc_find(const struct nc_case * c, const char * name) {
    for (int i = 0; i < c->n_t; i++) if (!strcmp(c->t[i].name, name)) return &c->t[i];
    return NULL;
}

static void nc_free(struct nc_case * c) { free(c->buf); c->buf = NULL; }
