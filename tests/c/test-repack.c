// test-repack.c - the CPU_REPACK buffer type (lm_ggml_backend_cpu_aarch64_buffer_type):
// what it reports (name, host, device support); that q8_0, q4_0, iq4_nl,
// q4_K and q6_K weights in it (each type in turn), whether
// or not this CPU repacks them, read back as the bytes written (whole, partial
// at odd offsets and across row, 8-row group and tail boundaries, memset,
// clear, copies, range errors); that mul_mat over them is bit-identical to the
// same bytes in a plain CPU buffer (many K/M/N, 1-3 threads, 3-d broadcast);
// that other ops refuse a repacked tensor with a status, never a crash; and
// that other types and short tensors in the buffer stay plain and usable.
//
// build: gcc -std=gnu11 -O1 -g -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-repack.c $(find csrc -name '*.c') -lm
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-cpu-impl.h"
#include "test-check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Internal (ggml-cpu-impl.h); repeated so that the test compiles against
// headers from before the feature.
bool lm_cpu_tensor_is_repacked(const struct lm_ggml_tensor * t);

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17; return g_rng; }
static float frand(void) { return (float)((rnd() >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f; }
static void rand_bytes(uint8_t * p, size_t n) { for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(rnd() >> 56); }

// the types the buffer repacks (x86-64 with AVX2 or AVX-512; the K-quants without VNNI), and the one under test
static const enum lm_ggml_type g_types[] = { LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_Q4_K,
                                             LM_GGML_TYPE_Q6_K };
enum { N_TYPES = sizeof(g_types) / sizeof(g_types[0]) };
static enum lm_ggml_type g_type = LM_GGML_TYPE_Q8_0;
// a row length K rounded up to whole blocks of g_type (the K-quants' 256)
static int64_t kb(int64_t K) {
    const int64_t b = lm_ggml_blck_size(g_type);
    return (K + b - 1) / b * b;
}

static lm_ggml_backend_buffer_type_t rbuft(void) { return lm_ggml_backend_cpu_aarch64_buffer_type(); }
static lm_ggml_backend_buffer_type_t pbuft(void) { return lm_ggml_backend_cpu_buffer_type(); }

// Three no-alloc contexts: r for the CPU_REPACK buffer, p for a plain one,
// g (results, graphs: room for one small graph per tensor) for another plain one.
struct trio { struct lm_ggml_context * r, * p, * g; lm_ggml_backend_buffer_t br, bp, bg; };

static struct lm_ggml_context * ctx_new(int n_tensors) {
    struct lm_ggml_init_params p = { n_tensors * (lm_ggml_tensor_overhead() + lm_ggml_graph_overhead_custom(16, false)), NULL, true };
    return lm_ggml_init(p);
}
static struct trio trio_new(int n) { return (struct trio) { ctx_new(n), ctx_new(n), ctx_new(n), NULL, NULL, NULL }; }
// Gives every tensor of the contexts memory; false if a buffer could not be made.
static bool trio_alloc(struct trio * c) {
    c->br = lm_ggml_backend_alloc_ctx_tensors_from_buft(c->r, rbuft());
    c->bp = lm_ggml_backend_alloc_ctx_tensors_from_buft(c->p, pbuft());
    c->bg = lm_ggml_backend_alloc_ctx_tensors_from_buft(c->g, pbuft());
    return c->br != NULL && c->bp != NULL && c->bg != NULL;
}
static void trio_free(struct trio * c) {
    lm_ggml_backend_buffer_free(c->br); lm_ggml_backend_buffer_free(c->bp); lm_ggml_backend_buffer_free(c->bg);
    lm_ggml_free(c->r); lm_ggml_free(c->p); lm_ggml_free(c->g);
}

// Valid data of t's type and shape from random floats (malloc'd).
static uint8_t * weights(const struct lm_ggml_tensor * t) {
    const int64_t n = lm_ggml_nelements(t);
    float * f = malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) f[i] = frand();
    uint8_t * q = malloc(lm_ggml_nbytes(t));
    if (t->type == LM_GGML_TYPE_F32) memcpy(q, f, (size_t) n * sizeof(float));
    else if (t->type == LM_GGML_TYPE_F16) lm_ggml_fp32_to_fp16_row(f, (lm_ggml_fp16_t *) q, n);
    else lm_ggml_quantize_chunk(t->type, f, q, 0, n / t->ne[0], t->ne[0], NULL);
    free(f);
    return q;
}

// The same valid weights into wp (plain) and wr (CPU_REPACK), and columns into x.
static void fill_same(struct lm_ggml_tensor * wp, struct lm_ggml_tensor * wr, struct lm_ggml_tensor * x) {
    uint8_t * q = weights(wp);
    lm_ggml_backend_tensor_set(wp, q, 0, lm_ggml_nbytes(wp));
    lm_ggml_backend_tensor_set(wr, q, 0, lm_ggml_nbytes(wr));
    free(q);
    q = weights(x);
    lm_ggml_backend_tensor_set(x, q, 0, lm_ggml_nbytes(x));
    free(q);
}

// Computes the graph of out. An abort on this thread would have killed a
// caller without an error frame: it comes back as CRASHED, which no check accepts.
#define CRASHED (-100)
static int compute(lm_ggml_backend_t be, struct lm_ggml_context * ctx, struct lm_ggml_tensor * out) {
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph_custom(ctx, 16, false);
    lm_ggml_build_forward_expand(gf, out);
    struct lm_ggml_err_frame f;
    if (LM_GGML_TRY(&f)) {
        printf("  (compute of %s aborted: %s)\n", lm_ggml_op_desc(out), f.msg);
        return CRASHED;
    }
    const int st = (int) lm_ggml_backend_graph_compute(be, gf);
    lm_ggml_err_pop(&f);
    return st;
}

static void test_buft(void) {
    lm_ggml_backend_buffer_type_t rb = rbuft(), pb = pbuft();
    check(rb != NULL && rb != pb, "CPU_REPACK is a buffer type of its own");
    if (rb == NULL) return;
    check(strcmp(lm_ggml_backend_buft_name(rb), "CPU_REPACK") == 0, "CPU_REPACK name");
    check(lm_ggml_backend_cpu_buft_is_aarch64(rb) && !lm_ggml_backend_cpu_buft_is_aarch64(pb), "buft_is_aarch64");
    check(!lm_ggml_backend_buft_is_host(rb), "CPU_REPACK is not host memory (its bytes may not be the tensor's)");
    check(lm_ggml_backend_dev_supports_buft(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU), rb), "the CPU device supports CPU_REPACK");

    // says once per type whether this CPU repacks; at the AVX2 and AVX-512 levels it must
    for (int i = 0; i < N_TYPES; i++) {
        struct lm_ggml_context * c = ctx_new(1);
        struct lm_ggml_tensor * w = lm_ggml_new_tensor_2d(c, g_types[i], 768, 40);
        lm_ggml_backend_buffer_t b = lm_ggml_backend_alloc_ctx_tensors_from_buft(c, rb);
        check(b != NULL && lm_ggml_backend_buffer_get_type(b) == rb && !lm_ggml_backend_buffer_is_host(b), "a CPU_REPACK buffer");
        const bool rep = b != NULL && lm_cpu_tensor_is_repacked(w);
        const int lv = lm_cpu_level();
        const bool want = lv == LM_CPU_LEVEL_AVX2 || lv == LM_CPU_LEVEL_AVX512;
        printf("%s [768 x 40] in CPU_REPACK: %s here (level %d, VNNI: %s)\n", lm_ggml_type_name(g_types[i]), rep ? "repacked" : "plain",
               lv, lm_cpu_vnni() ? "yes" : "no");
        check(!want || rep, "at the AVX2 and AVX-512 levels, q8_0, q4_0, iq4_nl, q4_K and q6_K weights are repacked");
        lm_ggml_backend_buffer_free(b);
        lm_ggml_free(c);
    }
}

// set/get/memset/clear/copy of any bytes, whatever the layout inside: w in
// CPU_REPACK, t of the same shape in a plain buffer.
static void test_roundtrip(int64_t K, int64_t M, int64_t ne2) {
    K = kb(K);
    struct trio c = trio_new(1);
    struct lm_ggml_tensor * w = lm_ggml_new_tensor_3d(c.r, g_type, K, M, ne2);
    struct lm_ggml_tensor * t = lm_ggml_new_tensor_3d(c.p, g_type, K, M, ne2);
    lm_ggml_new_tensor_1d(c.g, LM_GGML_TYPE_F32, 1); // unused: every context gets a buffer
    const bool ok = trio_alloc(&c);
    check(ok, "roundtrip: buffers");
    if (!ok) { trio_free(&c); return; }
    const size_t n = lm_ggml_nbytes(w), rs = w->nb[1], tail = (size_t)(M / 8 * 8) * rs;
    uint8_t * shadow = malloc(n), * got = malloc(n), * src = malloc(n);
    rand_bytes(shadow, n);
    lm_ggml_backend_tensor_set(w, shadow, 0, n);
    lm_ggml_backend_tensor_get(w, got, 0, n);
    check(memcmp(got, shadow, n) == 0, "whole tensor: get returns what set wrote");

    // inside a block, across a row's end, across the first 8-row group's end,
    // into the M%8 tail rows, across matrices, the last byte; then random ones
    const size_t fixed[][2] = {
        { 1, 1 }, { 3, 31 }, { rs - 3, 7 }, { rs + 34, 3 * rs + 1 }, { 8 * rs - 5, 11 }, { 7 * rs + 1, 2 * rs },
        { tail + 17, n - tail - 17 }, { tail - 1, 3 }, { (size_t) M * rs - 9, 20 }, { n - 1, 1 }, { 0, n },
    };
    bool ok_set = true, ok_get = true, ok_mem = true;
    for (int i = 0; i < 500; i++) {
        size_t off, sz;
        if (i < (int)(sizeof(fixed) / sizeof(fixed[0]))) { off = fixed[i][0]; sz = fixed[i][1]; }
        else { off = rnd() % n; sz = 1 + rnd() % (i % 4 && 3 * rs < n - off ? 3 * rs : n - off); }
        if (off >= n || sz == 0 || sz > n - off) continue; // a fixed range the shape has not
        const bool mem = i % 5 == 4; // every fifth a memset
        if (mem) {
            const uint8_t v = (uint8_t) rnd();
            memset(shadow + off, v, sz);
            lm_ggml_backend_tensor_memset(w, v, off, sz);
        } else {
            rand_bytes(src, sz);
            memcpy(shadow + off, src, sz);
            lm_ggml_backend_tensor_set(w, src, off, sz);
            memset(got, 0, n);
            lm_ggml_backend_tensor_get(w, got, off, sz);
            if (ok_get && memcmp(got, src, sz) != 0) { ok_get = false; printf("  (partial get at %zu+%zu)\n", off, sz); }
        }
        lm_ggml_backend_tensor_get(w, got, 0, n);
        bool * ok_op = mem ? &ok_mem : &ok_set;
        if (*ok_op && memcmp(got, shadow, n) != 0) { *ok_op = false; printf("  (%s at %zu+%zu)\n", mem ? "memset" : "set", off, sz); }
    }
    check(ok_set, "partial sets change exactly their range");
    check(ok_get, "partial gets read exactly their range");
    check(ok_mem, "memset changes exactly its range");

    lm_ggml_backend_tensor_copy(w, t);
    check(same_bytes(t, w) && same_bytes(w, t), "copy out of CPU_REPACK keeps the bytes");
    rand_bytes(shadow, n);
    lm_ggml_backend_tensor_set(t, shadow, 0, n);
    lm_ggml_backend_tensor_copy(t, w);
    lm_ggml_backend_tensor_get(w, got, 0, n);
    check(memcmp(got, shadow, n) == 0, "copy into CPU_REPACK keeps the bytes");

    // out of range: an error as for a plain buffer, and the tensor untouched
    lm_ggml_log_set(quiet_log, NULL);
    EXPECT_ABORT("repacked: write past the end", "out of bounds", lm_ggml_backend_tensor_set(w, src, 4, n));
    EXPECT_ABORT("repacked: read past the end", "out of bounds", lm_ggml_backend_tensor_get(w, got, n, 1));
    EXPECT_ABORT("repacked: offset overflow", "out of bounds", lm_ggml_backend_tensor_get(w, got, SIZE_MAX, 2));
    EXPECT_ABORT("repacked: size overflow", "out of bounds", lm_ggml_backend_tensor_set(w, src, 8, SIZE_MAX - 4));
    EXPECT_ABORT("repacked: memset past the end", "out of bounds", lm_ggml_backend_tensor_memset(w, 0, n - 8, 9));
    lm_ggml_log_set(NULL, NULL);
    lm_ggml_backend_tensor_get(w, got, 0, n);
    check(memcmp(got, shadow, n) == 0, "failed accesses leave the tensor alone");

    lm_ggml_backend_buffer_clear(c.br, 0x5c);
    lm_ggml_backend_tensor_get(w, got, 0, n);
    memset(shadow, 0x5c, n);
    check(memcmp(got, shadow, n) == 0, "buffer_clear: every byte reads back as the value");
    check(!lm_cpu_tensor_is_repacked(t), "a plain buffer never repacks");
    free(shadow); free(got); free(src);
    trio_free(&c);
}

// A buffer clear writes each repacked tensor the packing of its filled
// plain bytes (for q4_K not the value itself), and only where a repacked
// tensor was last placed: a plain tensor placed over one reads the value.
static void test_clear_after_replace(void) {
    const int64_t K = kb(512), M = 16;
    struct lm_ggml_context * c1 = ctx_new(2), * c2 = ctx_new(2);
    struct lm_ggml_tensor * w = lm_ggml_new_tensor_2d(c1, g_type, K, M);
    const size_t n = lm_ggml_nbytes(w);
    struct lm_ggml_tensor * f = lm_ggml_new_tensor_1d(c2, LM_GGML_TYPE_I8, (int64_t) n); // the same bytes, plain
    struct lm_ggml_tensor * w2 = lm_ggml_new_tensor_2d(c2, g_type, K, M);              // a second one after it
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(rbuft(), 2 * n + 256);
    check(b != NULL, "clear after replace: buffer");
    if (b != NULL) {
        char * base = lm_ggml_backend_buffer_get_base(b);
        uint8_t * got = malloc(n), * want = malloc(n);
        lm_ggml_backend_tensor_alloc(b, w, base);
        lm_ggml_backend_buffer_clear(b, 0x5c);
        lm_ggml_backend_tensor_get(w, got, 0, n);
        memset(want, 0x5c, n);
        check(memcmp(got, want, n) == 0, "clear: a repacked tensor reads back the value");
        lm_ggml_backend_tensor_alloc(b, f, base);
        lm_ggml_backend_tensor_alloc(b, w2, base + (n + 255) / 256 * 256);
        lm_ggml_backend_buffer_clear(b, 0xa3);
        memset(want, 0xa3, n);
        lm_ggml_backend_tensor_get(f, got, 0, n);
        check(memcmp(got, want, n) == 0, "clear: a plain tensor placed over a repacked one reads back the value");
        lm_ggml_backend_tensor_get(w2, got, 0, n);
        check(memcmp(got, want, n) == 0, "clear: the repacked tensor placed after it reads back the value");
        free(got); free(want);
        lm_ggml_backend_buffer_free(b);
    }
    lm_ggml_free(c1);
    lm_ggml_free(c2);
}

// W [K, M, w2] with the same g_type bytes in CPU_REPACK and in a plain buffer
// times x [K, N, x2]: the two products must have the same bits. chunk > 0
// writes the repacked copy in pieces of that many bytes (set at odd offsets
// must land where the kernel reads, not only where get reads).
static void run_mm(lm_ggml_backend_t be, int64_t K, int64_t M, int64_t N, int64_t w2, int64_t x2, int nth, size_t chunk) {
    K = kb(K);
    struct trio c = trio_new(2);
    struct lm_ggml_tensor * wr = lm_ggml_new_tensor_3d(c.r, g_type, K, M, w2);
    struct lm_ggml_tensor * wp = lm_ggml_new_tensor_3d(c.p, g_type, K, M, w2);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_3d(c.p, LM_GGML_TYPE_F32, K, N, x2);
    struct lm_ggml_tensor * dr = lm_ggml_mul_mat(c.g, wr, x), * dp = lm_ggml_mul_mat(c.g, wp, x);
    char what[160];
    snprintf(what, sizeof(what), "%s mul_mat K=%lld M=%lld N=%lld ne2=%lld/%lld threads=%d chunk=%zu: CPU_REPACK bits == plain bits",
             lm_ggml_type_name(g_type), (long long) K, (long long) M, (long long) N, (long long) w2, (long long) x2, nth, chunk);
    bool ok = trio_alloc(&c);
    if (ok) {
        const size_t n = lm_ggml_nbytes(wp);
        uint8_t * q = weights(wp);
        lm_ggml_backend_tensor_set(wp, q, 0, n);
        for (size_t off = 0; off < n; off += chunk ? chunk : n) {
            const size_t sz = chunk && chunk < n - off ? chunk : n - off;
            lm_ggml_backend_tensor_set(wr, q + off, off, sz);
        }
        free(q);
        q = weights(x);
        lm_ggml_backend_tensor_set(x, q, 0, lm_ggml_nbytes(x));
        free(q);
        lm_ggml_backend_cpu_set_n_threads(be, nth);
        const int sr = compute(be, c.g, dr), sp = compute(be, c.g, dp);
        ok = sr == LM_GGML_STATUS_SUCCESS && sp == LM_GGML_STATUS_SUCCESS && same_bytes(dr, dp);
        if (!ok) printf("  (statuses %d / %d; if both 0, the bits differ)\n", sr, sp);
    }
    check(ok, what);
    trio_free(&c);
}

static void test_mul_mat(lm_ggml_backend_t be) {
    static const int64_t Ms[] = { 8, 13, 16, 40, 1003 }, Ns[] = { 1, 2, 3, 8, 17, 64 }, Ks[] = { 32, 96, 2080 };
    for (int nth = 1; nth <= 2; nth++) // every M x N at K=768
        for (int mi = 0; mi < 5; mi++)
            for (int ni = 0; ni < 6; ni++) run_mm(be, 768, Ms[mi], Ns[ni], 1, 1, nth, 0);
    for (int ki = 0; ki < 3; ki++) // the other K: every M, two N each, the thread count rotating
        for (int mi = 0; mi < 5; mi++)
            for (int j = 0; j < 2; j++) run_mm(be, Ks[ki], Ms[mi], Ns[(ki + mi + 3 * j) % 6], 1, 1, 1 + (ki * 5 + mi + j) % 3, 0);
    run_mm(be, 96, 13, 3, 2, 4, 1, 0); // broadcast: each W matrix serves two of x's
    run_mm(be, 96, 13, 3, 2, 4, 3, 0);
    run_mm(be, 768, 40, 8, 2, 4, 2, 0);
    run_mm(be, 768, 13, 2, 1, 1, 3, 1001);
    run_mm(be, 2080, 40, 17, 1, 1, 2, 97);
    run_mm(be, 96, 21, 17, 2, 4, 3, 33);
    // rows of more than QMV_RP_YS_MAX blocks of 32: the mat-vecs that make
    // the column's per-block values once per call leave them to each group
    run_mm(be, 16416, 16, 1, 1, 1, 2, 0);
}

// Weights repacked at this level, computed after the level was lowered
// (LM_GGML_CPU_LEVEL-like, by lm_cpu_force_level): mul_mat unpacks the
// groups for that level's kernels, the same bits as plain weights there.
static void test_lowered_level(lm_ggml_backend_t be) {
    const int64_t K = kb(96);
    struct trio c = trio_new(8);
    struct lm_ggml_tensor * wr = lm_ggml_new_tensor_2d(c.r, g_type, K, 21);
    struct lm_ggml_tensor * wp = lm_ggml_new_tensor_2d(c.p, g_type, K, 21);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_2d(c.p, LM_GGML_TYPE_F32, K, 5);
    struct lm_ggml_tensor * x1 = lm_ggml_view_2d(c.g, x, K, 1, x->nb[1], 0);
    struct lm_ggml_tensor * dr = lm_ggml_mul_mat(c.g, wr, x), * dp = lm_ggml_mul_mat(c.g, wp, x);
    struct lm_ggml_tensor * vr = lm_ggml_mul_mat(c.g, wr, x1), * vp = lm_ggml_mul_mat(c.g, wp, x1);
    if (!trio_alloc(&c)) { check(false, "lowered level: buffers"); trio_free(&c); return; }
    fill_same(wp, wr, x);
    lm_ggml_backend_cpu_set_n_threads(be, 2);
    static const int levels[] = { LM_CPU_LEVEL_AVX2, LM_CPU_LEVEL_SCALAR };
    for (int i = 0; i < 2 && lm_cpu_tensor_is_repacked(wr); i++) {
        if (!lm_cpu_force_level(levels[i])) continue;
        char what[96];
        snprintf(what, sizeof(what), "repacked %s weights computed at level %d: plain bits (5 columns, then 1)",
                 lm_ggml_type_name(g_type), levels[i]);
        const bool ok = compute(be, c.g, dr) == 0 && compute(be, c.g, dp) == 0 && same_bytes(dr, dp) &&
                        compute(be, c.g, vr) == 0 && compute(be, c.g, vp) == 0 && same_bytes(vr, vp);
        lm_cpu_force_level(-1);
        check(ok, what);
    }
    trio_free(&c);
}

// Ops other than mul_mat of the whole tensor cannot read a repacked layout:
// they must refuse it (a status), and compute normally on a plain one.
static void test_other_ops(lm_ggml_backend_t be) {
    const int64_t K = kb(96), M = 16;
    struct trio c = trio_new(8);
    struct lm_ggml_context * cp = c.p, * cg = c.g;
    struct lm_ggml_tensor * wr = lm_ggml_new_tensor_2d(c.r, g_type, K, M);
    struct lm_ggml_tensor * wp = lm_ggml_new_tensor_2d(cp, g_type, K, M);
    struct lm_ggml_tensor * dst = lm_ggml_new_tensor_2d(cp, g_type, K, M);
    struct lm_ggml_tensor * ids = lm_ggml_new_tensor_1d(cp, LM_GGML_TYPE_I32, 5);
    struct lm_ggml_tensor * x = lm_ggml_new_tensor_2d(cp, LM_GGML_TYPE_F32, K, 3);
    struct lm_ggml_tensor * gr = lm_ggml_get_rows(cg, wr, ids), * gp = lm_ggml_get_rows(cg, wp, ids);
    struct lm_ggml_tensor * cpy = lm_ggml_cpy(cg, wr, dst);
    struct lm_ggml_tensor * mr = lm_ggml_mul_mat(cg, lm_ggml_view_2d(cg, wr, K, 8, wr->nb[1], 0), x);
    struct lm_ggml_tensor * mp = lm_ggml_mul_mat(cg, lm_ggml_view_2d(cg, wp, K, 8, wp->nb[1], 0), x);
    const bool ok = trio_alloc(&c);
    check(ok, "other ops: buffers");
    if (ok) {
        fill_same(wp, wr, x);
        const int32_t iv[5] = { 0, 7, 8, 15, 3 };
        lm_ggml_backend_tensor_set(ids, iv, 0, sizeof(iv));
        lm_ggml_backend_cpu_set_n_threads(be, 2);
        const bool rep = lm_cpu_tensor_is_repacked(wr);
        lm_ggml_log_set(quiet_log, NULL); // the refusals are logged
        const int sg = compute(be, cg, gr), sc = compute(be, cg, cpy), sm = compute(be, cg, mr);
        lm_ggml_log_set(NULL, NULL);
        if (rep) {
            check(sg != LM_GGML_STATUS_SUCCESS && sg != CRASHED, "get_rows of a repacked tensor fails with a status");
            check(sc != LM_GGML_STATUS_SUCCESS && sc != CRASHED, "cpy of a repacked tensor fails with a status");
            check(sm != LM_GGML_STATUS_SUCCESS && sm != CRASHED, "mul_mat of a view of a repacked tensor fails with a status");
        } else {
            check(sg == LM_GGML_STATUS_SUCCESS && compute(be, cg, gp) == LM_GGML_STATUS_SUCCESS && same_bytes(gr, gp),
                  "not repacked: get_rows as from a plain buffer");
            check(sc == LM_GGML_STATUS_SUCCESS && same_bytes(dst, wp), "not repacked: cpy copies the bytes");
            check(sm == LM_GGML_STATUS_SUCCESS && compute(be, cg, mp) == LM_GGML_STATUS_SUCCESS && same_bytes(mr, mp),
                  "not repacked: mul_mat of a view as from a plain buffer");
        }
    }
    trio_free(&c);
}

// What the buffer cannot repack it keeps plain: every op reads it as usual.
static void test_other_types(lm_ggml_backend_t be) {
    enum { NT = 4 };
    static const enum lm_ggml_type types[NT] = { LM_GGML_TYPE_F32, LM_GGML_TYPE_F16, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q4_0 };
    static const int64_t rows[NT] = { 16, 16, 16, 4 }; // q4_0: fewer than 8 rows
    const int64_t K = 64;
    struct trio c = trio_new(2 * NT + 1);
    struct lm_ggml_context * cg = c.g;
    struct lm_ggml_tensor * tr[NT], * tp[NT], * gr[NT], * gp[NT];
    struct lm_ggml_tensor * ids = lm_ggml_new_tensor_1d(c.p, LM_GGML_TYPE_I32, 3);
    for (int i = 0; i < NT; i++) {
        tr[i] = lm_ggml_new_tensor_2d(c.r, types[i], K, rows[i]);
        tp[i] = lm_ggml_new_tensor_2d(c.p, types[i], K, rows[i]);
        gr[i] = lm_ggml_get_rows(cg, tr[i], ids);
        gp[i] = lm_ggml_get_rows(cg, tp[i], ids);
    }
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_2d(c.r, LM_GGML_TYPE_F32, K, 16);
    struct lm_ggml_tensor * sum = lm_ggml_add(cg, tr[0], b);
    const bool ok_alloc = trio_alloc(&c);
    check(ok_alloc, "other types: buffers");
    if (ok_alloc) {
        const int32_t iv[3] = { 3, 0, 2 };
        lm_ggml_backend_tensor_set(ids, iv, 0, sizeof(iv));
        lm_ggml_backend_cpu_set_n_threads(be, 2);
        for (int i = 0; i < NT; i++) {
            uint8_t * raw = weights(tp[i]);
            lm_ggml_backend_tensor_set(tr[i], raw, 0, lm_ggml_nbytes(tp[i]));
            lm_ggml_backend_tensor_set(tp[i], raw, 0, lm_ggml_nbytes(tp[i]));
            free(raw);
            char what[120];
            snprintf(what, sizeof(what), "%s [%lld x %lld] in CPU_REPACK: not repacked, get_rows as from a plain buffer",
                     lm_ggml_type_name(types[i]), (long long) K, (long long) rows[i]);
            check(!lm_cpu_tensor_is_repacked(tr[i]) && compute(be, cg, gr[i]) == LM_GGML_STATUS_SUCCESS &&
                  compute(be, cg, gp[i]) == LM_GGML_STATUS_SUCCESS && same_bytes(gr[i], gp[i]), what);
        }
        float av[64 * 16], bv[64 * 16], sv[64 * 16];
        for (int i = 0; i < 64 * 16; i++) bv[i] = frand();
        lm_ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
        lm_ggml_backend_tensor_get(tr[0], av, 0, sizeof(av));
        bool ok = !lm_cpu_tensor_is_repacked(b) && compute(be, cg, sum) == LM_GGML_STATUS_SUCCESS;
        lm_ggml_backend_tensor_get(sum, sv, 0, sizeof(sv));
        for (int i = 0; i < 64 * 16 && ok; i++) ok = sv[i] == av[i] + bv[i];
        check(ok, "add of two f32 tensors in CPU_REPACK");
    }
    trio_free(&c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    lm_ggml_cpu_init();
    test_buft();
    lm_ggml_backend_t be = lm_ggml_backend_cpu_init();
    // at the CPU's level, and where that is AVX-512, at AVX2 as well: the
    // levels repack and compute with kernels of their own
    const int best = lm_cpu_level();
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (best != LM_CPU_LEVEL_AVX512 || !lm_cpu_force_level(LM_CPU_LEVEL_AVX2)) break;
            printf("== at the AVX2 level\n");
        }
        for (int i = 0; i < N_TYPES; i++) {
            g_type = g_types[i];
            printf("-- %s\n", lm_ggml_type_name(g_type));
            test_roundtrip(768, 13, 1);  // one 8-row group and a 5-row tail
            test_roundtrip(96, 40, 1);   // groups only
            test_roundtrip(2080, 21, 2); // two matrices, each with a tail
            test_clear_after_replace();
            test_mul_mat(be);
            if (pass == 0) test_lowered_level(be);
            test_other_ops(be);
        }
    }
    lm_cpu_force_level(-1);
    test_other_types(be);
    lm_ggml_backend_free(be);
    return check_summary();
}
