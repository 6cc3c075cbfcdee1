// test-copy.c - dup/cpy/cast/cont, set, get_rows and get_rows_back against
// naive element-by-element references: type combinations, strided and
// differently shaped source/destination, inplace variants, 1/2/4 threads.
//
// build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') tests/c/test-copy.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-cpu.h"
#include "test-check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static float frand(void) {
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static struct lm_ggml_context * new_ctx(void) {
    struct lm_ggml_init_params ip = { 16 * 1024 * 1024, NULL, false };
    return lm_ggml_init(ip);
}

static void compute(struct lm_ggml_context * ctx, struct lm_ggml_tensor * t, int nth) {
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, t);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
}

// element (i0..i3) of a plain-typed tensor as f32
static float get_f(const struct lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = (const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    switch (t->type) {
        case LM_GGML_TYPE_F16:  return lm_ggml_fp16_to_fp32(*(const lm_ggml_fp16_t *) p);
        case LM_GGML_TYPE_BF16: return lm_ggml_bf16_to_fp32(*(const lm_ggml_bf16_t *) p);
        case LM_GGML_TYPE_I32:  return (float) *(const int32_t *) p;
        default:                return *(const float *) p;
    }
}

static void fill_plain(struct lm_ggml_tensor * t) {
    const int64_t n = lm_ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        const float v = frand();
        switch (t->type) {
            case LM_GGML_TYPE_F16:  ((lm_ggml_fp16_t *) t->data)[i] = lm_ggml_fp32_to_fp16(v); break;
            case LM_GGML_TYPE_BF16: ((lm_ggml_bf16_t *) t->data)[i] = lm_ggml_fp32_to_bf16(v); break;
            case LM_GGML_TYPE_I32:  ((int32_t *) t->data)[i] = (int32_t)(v * 1000); break;
            default:                ((float *) t->data)[i] = v; break;
        }
    }
}

// flat logical index -> element value
static float get_flat(const struct lm_ggml_tensor * t, int64_t i) {
    const int64_t i0 = i % t->ne[0], i1 = (i / t->ne[0]) % t->ne[1], i2 = (i / (t->ne[0] * t->ne[1])) % t->ne[2];
    const int64_t i3 = i / (t->ne[0] * t->ne[1] * t->ne[2]);
    return get_f(t, i0, i1, i2, i3);
}

static float round_to(enum lm_ggml_type t, float v) {
    if (t == LM_GGML_TYPE_F16) return lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16(v));
    if (t == LM_GGML_TYPE_BF16) return lm_ggml_bf16_to_fp32(lm_ggml_fp32_to_bf16(v));
    return v;
}

// cpy between plain types; src is a transposed or permuted view when asked,
// dst has the same element count but maybe another shape or a strided view.
static void test_cpy_plain(enum lm_ggml_type ts, enum lm_ggml_type td, int src_view, int dst_kind, int nth) {
    struct lm_ggml_context * ctx = new_ctx();
    struct lm_ggml_tensor * s0 = lm_ggml_new_tensor_3d(ctx, ts, 6, 10, 3);
    fill_plain(s0);
    struct lm_ggml_tensor * s = src_view == 1 ? lm_ggml_transpose(ctx, s0) : src_view == 2 ? lm_ggml_permute(ctx, s0, 2, 0, 1, 3) : s0;
    struct lm_ggml_tensor * d0, * d;
    if (dst_kind == 1) {        // other shape, contiguous
        d0 = d = lm_ggml_new_tensor_2d(ctx, td, 36, 5);
    } else if (dst_kind == 2) { // strided view (transposed storage)
        d0 = lm_ggml_new_tensor_3d(ctx, td, s->ne[1], s->ne[0], s->ne[2]);
        d = lm_ggml_transpose(ctx, d0);
    } else {
        d0 = d = lm_ggml_new_tensor_4d(ctx, td, s->ne[0], s->ne[1], s->ne[2], s->ne[3]);
    }
    struct lm_ggml_tensor * r = lm_ggml_cpy(ctx, s, d);
    compute(ctx, r, nth);
    bool ok = r->data == d->data;
    for (int64_t i = 0; i < lm_ggml_nelements(s) && ok; i++) {
        const float want = td == LM_GGML_TYPE_I32 ? get_flat(s, i) : round_to(td, get_flat(s, i));
        const float got = get_flat(d, i);
        if (memcmp(&want, &got, 4) != 0) ok = false;
    }
    char what[160];
    snprintf(what, sizeof(what), "cpy %s -> %s src_view=%d dst_kind=%d nth=%d", lm_ggml_type_name(ts), lm_ggml_type_name(td), src_view, dst_kind, nth);
    check(ok, what);
    (void) d0;
    lm_ggml_free(ctx);
}

// cpy with dims of one element and dims that continue each other in memory
// (the engine merges them into longer spans): a random permuted source into
// a strided window of a larger destination whose other elements must stay,
// and the V-cache store of one token ([1, n] transposed into [1, n] with a
// long row stride).
static void test_cpy_dims(enum lm_ggml_type ts, enum lm_ggml_type td, int nth) {
    static const int64_t sizes[] = { 1, 1, 2, 3, 5 };
    for (int iter = 0; iter < 40; iter++) {
        struct lm_ggml_context * ctx = new_ctx();
        int64_t ne[4];
        for (int i = 0; i < 4; i++) ne[i] = sizes[(g_rng >> (7 * i + 3)) % 5], frand();
        int perm[4] = { 0, 1, 2, 3 };
        for (int i = 3; i > 0; i--) { const int j = (int)((g_rng >> 9) % (uint64_t)(i + 1)); frand(); const int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
        // base shape b with permute(b, perm) of shape ne: b[perm[i]] = ne[i]
        int64_t b[4];
        for (int i = 0; i < 4; i++) b[perm[i]] = ne[i];
        struct lm_ggml_tensor * s0 = lm_ggml_new_tensor_4d(ctx, ts, b[0], b[1], b[2], b[3]);
        fill_plain(s0);
        struct lm_ggml_tensor * s = lm_ggml_permute(ctx, s0, perm[0], perm[1], perm[2], perm[3]);
        const int pad = iter % 2; // 0: the window is contiguous rows, 1: padded rows
        struct lm_ggml_tensor * d0 = lm_ggml_new_tensor_4d(ctx, td, ne[0] + pad, ne[1] + pad, ne[2], ne[3]);
        fill_plain(d0);
        const size_t bytes = lm_ggml_nbytes(d0);
        char * before = malloc(bytes);
        memcpy(before, d0->data, bytes);
        struct lm_ggml_tensor * d = lm_ggml_view_4d(ctx, d0, ne[0], ne[1], ne[2], ne[3], d0->nb[1], d0->nb[2], d0->nb[3], 0);
        compute(ctx, lm_ggml_cpy(ctx, s, d), nth);
        bool ok = true;
        for (int64_t i = 0; i < lm_ggml_nelements(s) && ok; i++) {
            const float want = round_to(td, get_flat(s, i)), got = get_flat(d, i);
            if (memcmp(&want, &got, 4) != 0) ok = false;
        }
        const size_t es = lm_ggml_type_size(td);
        for (int64_t i = 0; i < lm_ggml_nelements(d0) && ok; i++) { // outside the window: untouched
            const int64_t i0 = i % d0->ne[0], i1 = (i / d0->ne[0]) % d0->ne[1];
            if (i0 < ne[0] && i1 < ne[1]) continue;
            if (memcmp(before + i * es, (char *) d0->data + i * es, es) != 0) ok = false;
        }
        free(before);
        char what[200];
        snprintf(what, sizeof(what), "cpy dims %s -> %s ne=[%lld,%lld,%lld,%lld] perm=[%d,%d,%d,%d] pad=%d nth=%d", lm_ggml_type_name(ts),
                 lm_ggml_type_name(td), (long long) ne[0], (long long) ne[1], (long long) ne[2], (long long) ne[3], perm[0], perm[1],
                 perm[2], perm[3], pad, nth);
        check(ok, what);
        lm_ggml_free(ctx);
    }
    // one token's V row into a transposed cache of 7 positions, at position 4
    struct lm_ggml_context * ctx = new_ctx();
    const int64_t n = 37, nctx = 7, pos = 4;
    struct lm_ggml_tensor * v = lm_ggml_new_tensor_2d(ctx, ts, n, 1);
    fill_plain(v);
    struct lm_ggml_tensor * cache = lm_ggml_new_tensor_1d(ctx, td, n * nctx);
    fill_plain(cache);
    const size_t es = lm_ggml_type_size(td);
    char * before = malloc(lm_ggml_nbytes(cache));
    memcpy(before, cache->data, lm_ggml_nbytes(cache));
    struct lm_ggml_tensor * dst = lm_ggml_view_2d(ctx, cache, 1, n, es * nctx, es * pos);
    compute(ctx, lm_ggml_cpy(ctx, lm_ggml_transpose(ctx, v), dst), nth);
    bool ok = true;
    for (int64_t c = 0; c < n; c++) {
        for (int64_t p = 0; p < nctx; p++) {
            const char * at = (const char *) cache->data + (c * nctx + p) * es;
            if (p != pos) { ok = ok && memcmp(at, before + (c * nctx + p) * es, es) == 0; continue; }
            const float want = round_to(td, get_f(v, c, 0, 0, 0)), got = get_flat(cache, c * nctx + p);
            ok = ok && memcmp(&want, &got, 4) == 0;
        }
    }
    free(before);
    char what[120];
    snprintf(what, sizeof(what), "cpy V-cache store %s -> %s nth=%d", lm_ggml_type_name(ts), lm_ggml_type_name(td), nth);
    check(ok, what);
    lm_ggml_free(ctx);
}

// f32 -> quantized -> f32 and same-type quantized copies, against the
// traits' reference quantizer.
static void test_cpy_quant(enum lm_ggml_type tq, int nth) {
    const struct lm_ggml_type_traits * tr = lm_ggml_get_type_traits(tq);
    if (tr->to_float == NULL) return;
    struct lm_ggml_context * ctx = new_ctx();
    const int64_t bk = lm_ggml_blck_size(tq);
    const int64_t ne0 = bk * 3, ne1 = 5;
    struct lm_ggml_tensor * f = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, ne0, ne1);
    fill_plain(f);
    char what[128];
    struct lm_ggml_tensor * q = lm_ggml_new_tensor_2d(ctx, tq, ne0, ne1);
    if (tr->from_float_ref != NULL) {
        struct lm_ggml_tensor * r = lm_ggml_cpy(ctx, f, q);
        compute(ctx, r, nth);
        void * want = malloc(lm_ggml_nbytes(q));
        tr->from_float_ref(f->data, want, ne0 * ne1);
        snprintf(what, sizeof(what), "cpy f32 -> %s nth=%d", lm_ggml_type_name(tq), nth);
        check(memcmp(want, q->data, lm_ggml_nbytes(q)) == 0, what);
        free(want);
    } else {
        memset(q->data, 0x11, lm_ggml_nbytes(q));
    }
    // quantized -> f32 into another shape (row length a multiple of the block)
    struct lm_ggml_tensor * back = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, bk, ne1 * 3);
    struct lm_ggml_tensor * r2 = lm_ggml_cpy(ctx, q, back);
    compute(ctx, r2, nth);
    float * want = malloc(ne0 * ne1 * 4);
    tr->to_float(q->data, want, ne0 * ne1);
    snprintf(what, sizeof(what), "cpy %s -> f32 (reshaped) nth=%d", lm_ggml_type_name(tq), nth);
    check(memcmp(want, back->data, ne0 * ne1 * 4) == 0, what);
    // same-type copy into a strided view (rows spaced apart)
    struct lm_ggml_tensor * big = lm_ggml_new_tensor_2d(ctx, tq, ne0 * 2, ne1);
    memset(big->data, 0, lm_ggml_nbytes(big));
    struct lm_ggml_tensor * v = lm_ggml_view_2d(ctx, big, ne0, ne1, big->nb[1], 0);
    struct lm_ggml_tensor * r3 = lm_ggml_cpy(ctx, q, v);
    compute(ctx, r3, nth);
    bool ok = true;
    for (int64_t i = 0; i < ne1; i++) {
        ok = ok && memcmp((char *) big->data + i * big->nb[1], (char *) q->data + i * q->nb[1], q->nb[1]) == 0;
    }
    snprintf(what, sizeof(what), "cpy %s -> %s (strided) nth=%d", lm_ggml_type_name(tq), lm_ggml_type_name(tq), nth);
    check(ok, what);
    free(want);
    lm_ggml_free(ctx);
}

static void test_cont_dup(int nth) {
    struct lm_ggml_context * ctx = new_ctx();
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 5, 4, 3, 2);
    fill_plain(a);
    struct lm_ggml_tensor * p = lm_ggml_permute(ctx, a, 2, 0, 3, 1);
    struct lm_ggml_tensor * c = lm_ggml_cont(ctx, p);
    struct lm_ggml_tensor * c2 = lm_ggml_cont_2d(ctx, p, 12, 10);
    struct lm_ggml_tensor * c1 = lm_ggml_cont_1d(ctx, p, 120);
    struct lm_ggml_tensor * c4 = lm_ggml_cont_4d(ctx, p, 2, 3, 4, 5);
    struct lm_ggml_tensor * du = lm_ggml_dup(ctx, p);
    struct lm_ggml_tensor * cs = lm_ggml_cast(ctx, p, LM_GGML_TYPE_F16);
    struct lm_ggml_tensor * di = lm_ggml_dup_inplace(ctx, a);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    struct lm_ggml_tensor * outs[] = { c, c2, c1, c4, du, cs, di };
    for (int i = 0; i < 7; i++) lm_ggml_build_forward_expand(gf, outs[i]);
    lm_ggml_graph_compute_with_ctx(ctx, gf, nth);
    bool ok = lm_ggml_is_contiguous(c) && c->ne[0] == p->ne[0] && strcmp(c->name, " (permuted) (cont)") == 0;
    for (int k = 0; k < 5; k++) {
        for (int64_t i = 0; i < 120 && ok; i++) {
            const float want = k == 4 ? round_to(LM_GGML_TYPE_F16, get_flat(p, i)) : get_flat(p, i);
            const float got = get_flat(k == 4 ? cs : outs[k], i);
            ok = want == got;
        }
    }
    ok = ok && di->data == a->data && di->op == LM_GGML_OP_DUP && di->view_src == a;
    ok = ok && cs->op == LM_GGML_OP_CPY && cs->src[1] == cs && cs->type == LM_GGML_TYPE_F16;
    char what[64];
    snprintf(what, sizeof(what), "cont/dup/cast nth=%d", nth);
    check(ok, what);
    lm_ggml_free(ctx);
}

static void test_set(bool inplace, int variant, int nth) {
    struct lm_ggml_context * ctx = new_ctx();
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 10, 8, 2);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 4, 3);
    fill_plain(a); fill_plain(b);
    float * orig = malloc(lm_ggml_nbytes(a));
    memcpy(orig, a->data, lm_ggml_nbytes(a));
    const size_t off = 2 * a->nb[1] + 12;
    size_t nb1 = a->nb[1];
    struct lm_ggml_tensor * r;
    if (variant == 0) r = inplace ? lm_ggml_set_inplace(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off) : lm_ggml_set(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off);
    else if (variant == 1) { nb1 = 2 * a->nb[1]; r = inplace ? lm_ggml_set_2d_inplace(ctx, a, b, nb1, off) : lm_ggml_set_2d(ctx, a, b, nb1, off); }
    else r = inplace ? lm_ggml_set_1d_inplace(ctx, a, b, off) : lm_ggml_set_1d(ctx, a, b, off);
    compute(ctx, r, nth);
    float * want = malloc(lm_ggml_nbytes(a));
    memcpy(want, orig, lm_ggml_nbytes(a));
    for (int64_t i1 = 0; i1 < 3; i1++)
        for (int64_t i0 = 0; i0 < 4; i0++)
            *(float *)((char *) want + off + i1 * nb1 + i0 * 4) = ((float *) b->data)[i1 * 4 + i0];
    bool ok = memcmp(want, r->data, lm_ggml_nbytes(a)) == 0;
    ok = ok && (inplace ? r->data == a->data && memcmp(a->data, want, lm_ggml_nbytes(a)) == 0
                        : memcmp(a->data, orig, lm_ggml_nbytes(a)) == 0);
    const int32_t * pp = r->op_params;
    ok = ok && pp[0] == (int32_t) nb1 && pp[3] == (int32_t) off && pp[4] == (inplace ? 1 : 0);
    char what[64];
    snprintf(what, sizeof(what), "set variant=%d inplace=%d nth=%d", variant, inplace, nth);
    check(ok, what);
    free(orig); free(want);
    lm_ggml_free(ctx);
}

static void test_get_rows(enum lm_ggml_type t, int nth) {
    struct lm_ggml_context * ctx = new_ctx();
    const int64_t bk = lm_ggml_blck_size(t);
    const int64_t n0 = bk == 1 ? 7 : bk * 2;
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_4d(ctx, t, n0, 9, 3, 2);
    if (bk == 1) fill_plain(a);
    else {
        float * tmp = malloc(lm_ggml_nelements(a) * 4);
        for (int64_t i = 0; i < lm_ggml_nelements(a); i++) tmp[i] = frand();
        lm_ggml_get_type_traits(t)->from_float_ref(tmp, a->data, lm_ggml_nelements(a));
        free(tmp);
    }
    struct lm_ggml_tensor * idx = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_I32, 5, 3, 2);
    for (int64_t i = 0; i < 30; i++) ((int32_t *) idx->data)[i] = (int32_t)((i * 7 + 3) % 9);
    struct lm_ggml_tensor * r = lm_ggml_get_rows(ctx, a, idx);
    compute(ctx, r, nth);
    bool ok = r->ne[0] == n0 && r->ne[1] == 5 && r->ne[2] == 3 && r->ne[3] == 2 &&
              r->type == (t == LM_GGML_TYPE_I32 ? LM_GGML_TYPE_I32 : LM_GGML_TYPE_F32);
    float * row = malloc(n0 * 4);
    for (int64_t i2 = 0; i2 < 2 && ok; i2++)
        for (int64_t i1 = 0; i1 < 3 && ok; i1++)
            for (int64_t i0 = 0; i0 < 5 && ok; i0++) {
                const int32_t k = ((int32_t *) idx->data)[(i2 * 3 + i1) * 5 + i0];
                const char * src = (const char *) a->data + k * a->nb[1] + i1 * a->nb[2] + i2 * a->nb[3];
                const char * dst = (const char *) r->data + i0 * r->nb[1] + i1 * r->nb[2] + i2 * r->nb[3];
                if (t == LM_GGML_TYPE_I32 || t == LM_GGML_TYPE_F32) ok = memcmp(src, dst, n0 * 4) == 0;
                else { lm_ggml_get_type_traits(t)->to_float(src, row, n0); ok = memcmp(row, dst, n0 * 4) == 0; }
            }
    char what[64];
    snprintf(what, sizeof(what), "get_rows %s nth=%d", lm_ggml_type_name(t), nth);
    check(ok, what);
    free(row);
    lm_ggml_free(ctx);
}

static void test_get_rows_back(int nth) {
    struct lm_ggml_context * ctx = new_ctx();
    struct lm_ggml_tensor * g = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 10, 7);
    struct lm_ggml_tensor * idx = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 7);
    struct lm_ggml_tensor * shape = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 10, 12);
    fill_plain(g);
    const int32_t ids[7] = { 3, 0, 3, 11, 5, 3, 0 };
    memcpy(idx->data, ids, sizeof(ids));
    struct lm_ggml_tensor * r = lm_ggml_get_rows_back(ctx, g, idx, shape);
    compute(ctx, r, nth);
    double want[12][10] = { { 0 } };
    for (int i = 0; i < 7; i++) for (int c = 0; c < 10; c++) want[ids[i]][c] += ((float *) g->data)[i * 10 + c];
    bool ok = r->ne[0] == 10 && r->ne[1] == 12;
    for (int k = 0; k < 12; k++) for (int c = 0; c < 10; c++) ok = ok && fabs(((float *) r->data)[k * 10 + c] - want[k][c]) < 1e-6;
    char what[64];
    snprintf(what, sizeof(what), "get_rows_back nth=%d", nth);
    check(ok, what);
    lm_ggml_free(ctx);
}

int main(void) {
    const enum lm_ggml_type plain[] = { LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16 };
    for (int nth = 1; nth <= 4; nth *= 2) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                for (int sv = 0; sv < 3; sv++)
                    for (int dk = 0; dk < 3; dk++) test_cpy_plain(plain[i], plain[j], sv, dk, nth);
        for (int sv = 0; sv < 3; sv++) for (int dk = 0; dk < 3; dk++) test_cpy_plain(LM_GGML_TYPE_I32, LM_GGML_TYPE_I32, sv, dk, nth);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) test_cpy_dims(plain[i], plain[j], nth);
        for (int t = 0; t < LM_GGML_TYPE_COUNT; t++) {
            if (lm_ggml_blck_size((enum lm_ggml_type) t) > 1 && lm_ggml_is_quantized((enum lm_ggml_type) t)) test_cpy_quant((enum lm_ggml_type) t, nth);
        }
        test_cont_dup(nth);
        for (int v = 0; v < 3; v++) { test_set(false, v, nth); test_set(true, v, nth); }
        const enum lm_ggml_type gr[] = { LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16, LM_GGML_TYPE_I32,
                                         LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K };
        for (int i = 0; i < 8; i++) test_get_rows(gr[i], nth);
        test_get_rows_back(nth);
    }
    return check_summary();
}
