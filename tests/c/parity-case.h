// parity-case.h - test-only helper: a minimal reader for the op parity case
// files (../shared/parity/ops/*.gguf): keys case.name/kind/expr/params/n_inputs
// and the tensors (name, type, shape, data). Header-only, for test programs.
// pc_load returns 0 on success, nonzero on failure.
#pragma once

#include "ggml.h"
#include "ggml-cpu.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- GGUF subset

#define PC_MAX_T 16

struct pc_tensor {
    char name[64];
    int type;
    int n_dims;
    int64_t ne[4];
    uint64_t offs;
    const uint8_t * data;
};

struct pc_case {
    uint8_t * buf;
    size_t size;
    char name[128], kind[32], expr[1024], params[256];
    int n_inputs;
    int n_tensors;
    struct pc_tensor t[PC_MAX_T];
};

struct pc_rd { const uint8_t * p, * end; int ok; };

static uint64_t pc_u(struct pc_rd * r, int n) {
    if (r->end - r->p < n) { r->ok = 0; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t) r->p[i] << (8*i);
    r->p += n;
    return v;
}
static void pc_str(struct pc_rd * r, char * out, size_t cap) {
    const uint64_t n = pc_u(r, 8);
    if (!r->ok || (uint64_t)(r->end - r->p) < n) { r->ok = 0; return; }
    if (out) {
        const size_t m = n < cap - 1 ? (size_t) n : cap - 1;
        memcpy(out, r->p, m);
        out[m] = 0;
    }
    r->p += n;
}
static int pc_scalar_size(uint32_t t) {
    static const int sz[] = { 1, 1, 2, 2, 4, 4, 4, 1, -1, -1, 8, 8, 8 };
    return t < 13 ? sz[t] : -1;
}
static void pc_skip_val(struct pc_rd * r, uint32_t t) {
    if (t == 8) { pc_str(r, NULL, 0); return; }
    if (t == 9) {
        const uint32_t at = (uint32_t) pc_u(r, 4);
        const uint64_t n = pc_u(r, 8);
        for (uint64_t i = 0; i < n && r->ok; i++) pc_skip_val(r, at);
        return;
    }
    const int s = pc_scalar_size(t);
    if (s < 0) { r->ok = 0; return; }
    pc_u(r, s);
}

static void pc_free(struct pc_case * c) { free(c->buf); c->buf = NULL; }

static int pc_load(const char * path, struct pc_case * c) {
    memset(c, 0, sizeof(*c));
    FILE * f = fopen(path, "rb");
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    c->size = (size_t) ftell(f);
    fseek(f, 0, SEEK_SET);
    c->buf = malloc(c->size);
    if (fread(c->buf, 1, c->size, f) != c->size) { fclose(f); pc_free(c); return 1; }
    fclose(f);

    struct pc_rd r = { c->buf, c->buf + c->size, 1 };
    if (pc_u(&r, 4) != 0x46554747u) { pc_free(c); return 1; }
    pc_u(&r, 4);
    const uint64_t n_t = pc_u(&r, 8), n_kv = pc_u(&r, 8);
    uint64_t align = 32;
    for (uint64_t i = 0; i < n_kv && r.ok; i++) {
        char key[128];
        pc_str(&r, key, sizeof(key));
        const uint32_t t = (uint32_t) pc_u(&r, 4);
        if (t == 8 && (!strcmp(key, "case.name") || !strcmp(key, "case.kind") || !strcmp(key, "case.expr") || !strcmp(key, "case.params"))) {
            char * dst = !strcmp(key, "case.name") ? c->name : !strcmp(key, "case.kind") ? c->kind :
                         !strcmp(key, "case.expr") ? c->expr : c->params;
            size_t cap = dst == c->name ? sizeof(c->name) : dst == c->kind ? sizeof(c->kind) : dst == c->expr ? sizeof(c->expr) : sizeof(c->params);
            pc_str(&r, dst, cap);
        } else if (!strcmp(key, "case.n_inputs") && (t == 4 || t == 5)) {
            c->n_inputs = (int) pc_u(&r, 4);
        } else if (!strcmp(key, "general.alignment") && t == 4) {
            align = pc_u(&r, 4);
        } else {
            pc_skip_val(&r, t);
        }
    }
    if (n_t > PC_MAX_T) { pc_free(c); return 1; }
    c->n_tensors = (int) n_t;
    for (uint64_t i = 0; i < n_t && r.ok; i++) {
        struct pc_tensor * t = &c->t[i];
        pc_str(&r, t->name, sizeof(t->name));
        t->n_dims = (int) pc_u(&r, 4);
        for (int d = 0; d < 4; d++) t->ne[d] = 1;
        for (int d = 0; d < t->n_dims; d++) t->ne[d] = (int64_t) pc_u(&r, 8);
        t->type = (int) pc_u(&r, 4);
        t->offs = pc_u(&r, 8);
    }
    if (!r.ok) { pc_free(c); return 1; }
    size_t data = (size_t)(r.p - c->buf);
    data = (data + align - 1) / align * align;
    for (int i = 0; i < c->n_tensors; i++) {
        if (data + c->t[i].offs > c->size) { pc_free(c); return 1; }
        c->t[i].data = c->buf + data + c->t[i].offs;
    }
    return 0;
}

static const struct pc_tensor * pc_find(const struct pc_case * c, const char * name) {
    for (int i = 0; i < c->n_tensors; i++) if (!strcmp(c->t[i].name, name)) return &c->t[i];
    return NULL;
}

