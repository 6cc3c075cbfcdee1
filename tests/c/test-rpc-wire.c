// test-rpc-wire.c - the RPC message layouts and their decoder (rpc-wire.h):
// layout offsets, round trips, every refusal, and random/truncated input.
#include "rpc-wire.h"
#include "test-check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_rand(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

static struct lm_rpc_tensor sample_tensor(uint64_t id) {
    struct lm_rpc_tensor t;
    memset(&t, 0, sizeof(t));
    t.id = id;
    t.type = LM_GGML_TYPE_F32;
    t.buffer = 0x1111;
    t.ne[0] = 8; t.ne[1] = 4; t.ne[2] = 1; t.ne[3] = 1;
    t.nb[0] = 4; t.nb[1] = 32; t.nb[2] = 128; t.nb[3] = 128;
    t.op = LM_GGML_OP_ADD;
    for (int i = 0; i < LM_RPC_N_OP_PARAMS; i++) t.op_params[i] = -i * 7;
    t.flags = 3;
    t.view_offs = 16;
    t.data = 0x100000000ULL;
    snprintf(t.name, sizeof(t.name), "t%llu", (unsigned long long) id);
    return t;
}

static void test_layout(void) {
    struct lm_rpc_tensor t = sample_tensor(0x0102030405060708ULL);
    t.src[0] = 0xaa; t.src[9] = 0xbb; t.view_src = 0xcc;
    uint8_t b[LM_RPC_TENSOR_SIZE];
    lm_rpc_tensor_encode(b, &t);
    // the reference's packed struct: spot-check the offsets
    CHECK(b[0] == 0x08 && b[7] == 0x01);           // id
    CHECK(lm_rpc_get_u32(b + 8) == 0);              // type
    CHECK(lm_rpc_get_u64(b + 12) == 0x1111);        // buffer
    CHECK(lm_rpc_get_u32(b + 20) == 8);             // ne[0]
    CHECK(lm_rpc_get_u32(b + 36 + 4) == 32);        // nb[1]
    CHECK(lm_rpc_get_u32(b + 52) == LM_GGML_OP_ADD); // op
    CHECK((int32_t) lm_rpc_get_u32(b + 56 + 4) == -7); // op_params[1]
    CHECK(lm_rpc_get_u32(b + 120) == 3);            // flags
    CHECK(lm_rpc_get_u64(b + 124) == 0xaa && lm_rpc_get_u64(b + 124 + 72) == 0xbb); // src
    CHECK(lm_rpc_get_u64(b + 204) == 0xcc);         // view_src
    CHECK(lm_rpc_get_u64(b + 212) == 16);           // view_offs
    CHECK(lm_rpc_get_u64(b + 220) == 0x100000000ULL); // data
    CHECK(memcmp(b + 228, "t72623859790382856", 18) == 0); // name
    CHECK(b[292] == 0 && b[295] == 0);              // padding

    struct lm_rpc_tensor u;
    lm_rpc_why why = "";
    CHECK(lm_rpc_tensor_decode(b, &u, why));
    CHECK(u.id == t.id && u.type == t.type && u.buffer == t.buffer && u.op == t.op && u.flags == t.flags);
    CHECK(memcmp(u.ne, t.ne, sizeof(t.ne)) == 0 && memcmp(u.nb, t.nb, sizeof(t.nb)) == 0);
    CHECK(memcmp(u.op_params, t.op_params, sizeof(t.op_params)) == 0);
    CHECK(memcmp(u.src, t.src, sizeof(t.src)) == 0 && u.view_src == t.view_src && u.view_offs == t.view_offs);
    CHECK(u.data == t.data && strcmp(u.name, t.name) == 0);
    CHECK(u.extent == 4 * 8 * 4);
    CHECK(u.src_idx[0] == -1 && u.view_idx == -1);
}

static bool decode_one(struct lm_rpc_tensor t, struct lm_rpc_tensor * out) {
    uint8_t b[LM_RPC_TENSOR_SIZE];
    lm_rpc_tensor_encode(b, &t);
    lm_rpc_why why = "";
    bool ok = lm_rpc_tensor_decode(b, out, why);
    if (!ok) CHECK(why[0] != '\0');
    return ok;
}

static void test_tensor_checks(void) {
    struct lm_rpc_tensor u, t = sample_tensor(1);

    t.type = 4; CHECK(!decode_one(t, &u));          // removed type
    t.type = LM_GGML_TYPE_COUNT; CHECK(!decode_one(t, &u));
    t.type = 0xffffffffu; CHECK(!decode_one(t, &u));
    t = sample_tensor(1); t.op = LM_GGML_OP_COUNT; CHECK(!decode_one(t, &u));

    // quantized rows must hold whole blocks
    t = sample_tensor(1); t.type = LM_GGML_TYPE_Q4_0; t.ne[0] = 48; t.nb[0] = 18; t.nb[1] = 36;
    CHECK(!decode_one(t, &u));
    t.ne[0] = 64;
    CHECK(decode_one(t, &u) && u.extent == 36 + 3 * 36);
    // a quantized row is read whole even if nb[0] claims less
    t.nb[0] = 2;
    CHECK(decode_one(t, &u) && u.extent == 36 + 3 * 36);
    // blocks of q4_0 hold f16 fields: 2-byte alignment
    t.nb[0] = 1;
    CHECK(!decode_one(t, &u));
    t.nb[0] = 18; t.data += 1;
    CHECK(!decode_one(t, &u));
    // f32 needs 4 bytes, in the address and in every stride in use
    t = sample_tensor(1); t.data += 2;
    CHECK(!decode_one(t, &u));
    t = sample_tensor(1); t.nb[1] = 34;
    CHECK(!decode_one(t, &u));
    t = sample_tensor(1); t.ne[2] = 1; t.nb[2] = 3; // a stride of a dimension of 1 is never used
    CHECK(decode_one(t, &u));

    // transposed f32: the element walk bounds it
    t = sample_tensor(1); t.nb[0] = 16; t.nb[1] = 4; t.ne[0] = 4; t.ne[1] = 4; t.nb[2] = t.nb[3] = 64;
    CHECK(decode_one(t, &u) && u.extent == 4 + 3 * 16 + 3 * 4);

    // empty tensors touch nothing
    t = sample_tensor(1); t.ne[2] = 0;
    CHECK(decode_one(t, &u) && u.extent == 0);

    // sizes that overflow 64 bits, alone or added to data
    t = sample_tensor(1);
    for (int i = 0; i < 4; i++) { t.ne[i] = 0xffffffffu; t.nb[i] = 0xffffffffu; }
    CHECK(!decode_one(t, &u));
    t = sample_tensor(1); t.data = UINT64_MAX - 16;
    CHECK(!decode_one(t, &u));
    // zero strides keep the extent small, not the element count
    t = sample_tensor(1);
    for (int i = 0; i < 4; i++) { t.ne[i] = 0xffffffffu; t.nb[i] = 0; }
    CHECK(!decode_one(t, &u));
    t.ne[0] = 1; t.ne[2] = 4; t.ne[3] = 1;
    CHECK(decode_one(t, &u) && u.extent == 4);

    // a name without its NUL is cut, not refused
    uint8_t b[LM_RPC_TENSOR_SIZE];
    t = sample_tensor(1);
    lm_rpc_tensor_encode(b, &t);
    memset(b + 228, 'x', 64);
    lm_rpc_why why;
    CHECK(lm_rpc_tensor_decode(b, &u, why) && strlen(u.name) == 63);
}

static void test_headers(void) {
    struct lm_rpc_limits lim = { .max_set_data = 1000, .max_graph_bytes = 5000 };
    uint64_t prefix;
    lm_rpc_why why;
    CHECK(lm_rpc_check_header(LM_RPC_ALLOC_BUFFER, 8, &lim, &prefix, why) && prefix == 8);
    CHECK(!lm_rpc_check_header(LM_RPC_ALLOC_BUFFER, 9, &lim, &prefix, why));
    CHECK(!lm_rpc_check_header(LM_RPC_ALLOC_BUFFER, UINT64_MAX, &lim, &prefix, why));
    CHECK(lm_rpc_check_header(LM_RPC_GET_ALIGNMENT, 0, &lim, &prefix, why) && prefix == 0);
    CHECK(!lm_rpc_check_header(LM_RPC_GET_ALIGNMENT, 1, &lim, &prefix, why));
    CHECK(lm_rpc_check_header(LM_RPC_BUFFER_CLEAR, 9, &lim, &prefix, why));
    CHECK(lm_rpc_check_header(LM_RPC_GET_TENSOR, 312, &lim, &prefix, why));
    CHECK(lm_rpc_check_header(LM_RPC_COPY_TENSOR, 592, &lim, &prefix, why));
    CHECK(lm_rpc_check_header(LM_RPC_SET_TENSOR, 304, &lim, &prefix, why) && prefix == 304);
    CHECK(lm_rpc_check_header(LM_RPC_SET_TENSOR, 1304, &lim, &prefix, why) && prefix == 304);
    CHECK(!lm_rpc_check_header(LM_RPC_SET_TENSOR, 1305, &lim, &prefix, why));
    CHECK(!lm_rpc_check_header(LM_RPC_SET_TENSOR, 303, &lim, &prefix, why));
    CHECK(!lm_rpc_check_header(LM_RPC_SET_TENSOR, UINT64_MAX, &lim, &prefix, why));
    CHECK(lm_rpc_check_header(LM_RPC_GRAPH_COMPUTE, 8, &lim, &prefix, why) && prefix == 8);
    CHECK(!lm_rpc_check_header(LM_RPC_GRAPH_COMPUTE, 7, &lim, &prefix, why));
    CHECK(!lm_rpc_check_header(LM_RPC_GRAPH_COMPUTE, 5001, &lim, &prefix, why));
    CHECK(!lm_rpc_check_header(LM_RPC_CMD_COUNT, 0, &lim, &prefix, why));
    CHECK(!lm_rpc_check_header(255, 0, &lim, &prefix, why));

    uint8_t p[LM_RPC_TENSOR_SIZE * 2];
    struct lm_rpc_request r;
    memset(p, 0, sizeof(p));
    lm_rpc_put_u64(p, 77); p[8] = 5;
    CHECK(lm_rpc_request_decode(LM_RPC_BUFFER_CLEAR, p, 9, 9, &r, why) && r.u64 == 77 && r.value == 5);
    CHECK(!lm_rpc_request_decode(LM_RPC_BUFFER_CLEAR, p, 8, 8, &r, why));
    CHECK(!lm_rpc_request_decode(LM_RPC_GRAPH_COMPUTE, p, 8, 8, &r, why));
    struct lm_rpc_tensor t = sample_tensor(3);
    lm_rpc_tensor_encode(p, &t);
    lm_rpc_put_u64(p + 296, 12);
    CHECK(lm_rpc_request_decode(LM_RPC_SET_TENSOR, p, 304, 404, &r, why) && r.offset == 12 && r.size == 100 && r.tensor.id == 3);
    lm_rpc_put_u64(p + 304, 64);
    CHECK(lm_rpc_request_decode(LM_RPC_GET_TENSOR, p, 312, 312, &r, why) && r.offset == 12 && r.size == 64);
    lm_rpc_tensor_encode(p, &t);
    t.id = 4;
    lm_rpc_tensor_encode(p + 296, &t);
    CHECK(lm_rpc_request_decode(LM_RPC_COPY_TENSOR, p, 592, 592, &r, why) && r.tensor.id == 3 && r.dst.id == 4);
    lm_rpc_put_u32(p + 296 + 8, 999); // dst type
    CHECK(!lm_rpc_request_decode(LM_RPC_COPY_TENSOR, p, 592, 592, &r, why));
}

// A graph message from tensors (in order) and node ids.
static size_t build_graph(uint8_t * out, const struct lm_rpc_tensor * ts, uint32_t nt, const uint64_t * nodes, uint32_t nn) {
    lm_rpc_put_u32(out, nn);
    for (uint32_t i = 0; i < nn; i++) lm_rpc_put_u64(out + 4 + 8 * i, nodes[i]);
    lm_rpc_put_u32(out + 4 + 8 * nn, nt);
    uint8_t * p = out + 8 + 8 * nn;
    for (uint32_t i = 0; i < nt; i++) lm_rpc_tensor_encode(p + LM_RPC_TENSOR_SIZE * i, &ts[i]);
    return 8 + 8 * nn + (size_t) LM_RPC_TENSOR_SIZE * nt;
}

static bool graph_ok(const struct lm_rpc_tensor * ts, uint32_t nt, const uint64_t * nodes, uint32_t nn) {
    static uint8_t buf[1 << 16];
    size_t n = build_graph(buf, ts, nt, nodes, nn);
    lm_rpc_why why = "";
    struct lm_rpc_graph * g = lm_rpc_graph_decode(buf, n, why);
    if (g == NULL) CHECK(why[0] != '\0');
    bool ok = g != NULL;
    lm_rpc_graph_free(g);
    return ok;
}

static void test_graphs(void) {
    struct lm_rpc_tensor ts[4] = { sample_tensor(10), sample_tensor(20), sample_tensor(30), sample_tensor(40) };
    ts[2].src[0] = 10; ts[2].src[1] = 20;
    ts[3].src[0] = 30; ts[3].view_src = 10;
    uint64_t nodes[2] = { 30, 40 };

    static uint8_t buf[1 << 16];
    size_t n = build_graph(buf, ts, 4, nodes, 2);
    lm_rpc_why why = "";
    struct lm_rpc_graph * g = lm_rpc_graph_decode(buf, n, why);
    CHECK(g != NULL);
    if (g != NULL) {
        CHECK(g->n_nodes == 2 && g->n_tensors == 4 && g->nodes[0] == 2 && g->nodes[1] == 3);
        CHECK(g->tensors[2].src_idx[0] == 0 && g->tensors[2].src_idx[1] == 1 && g->tensors[2].src_idx[2] == -1);
        CHECK(g->tensors[3].src_idx[0] == 2 && g->tensors[3].view_idx == 0);
        lm_rpc_graph_free(g);
    }
    // every truncation and every extension is refused
    for (size_t k = 0; k < n; k++) {
        g = lm_rpc_graph_decode(buf, k, why);
        CHECK(g == NULL);
        lm_rpc_graph_free(g);
    }
    g = lm_rpc_graph_decode(buf, n + 1, why);
    CHECK(g == NULL);

    CHECK(graph_ok(ts, 0, NULL, 0));            // empty graph
    CHECK(!graph_ok(ts, 0, nodes, 1));          // node without tensors
    uint64_t zero = 0;
    CHECK(!graph_ok(ts, 4, &zero, 1));          // null node
    uint64_t missing = 50;
    CHECK(!graph_ok(ts, 4, &missing, 1));       // dangling node

    struct lm_rpc_tensor bad[4];
    memcpy(bad, ts, sizeof(bad));
    bad[2].src[1] = 30;                           // its own source (a cast) is allowed
    CHECK(graph_ok(bad, 4, nodes, 2));
    memcpy(bad, ts, sizeof(bad));
    bad[3].view_src = 40;                         // its own view source is not
    CHECK(!graph_ok(bad, 4, nodes, 2));
    memcpy(bad, ts, sizeof(bad));
    bad[2].src[0] = 40;                           // forward reference
    CHECK(!graph_ok(bad, 4, nodes, 2));
    memcpy(bad, ts, sizeof(bad));
    bad[3].view_src = 99;                         // dangling view source
    CHECK(!graph_ok(bad, 4, nodes, 2));
    memcpy(bad, ts, sizeof(bad));
    bad[1].id = 10;                               // id twice
    CHECK(!graph_ok(bad, 4, nodes, 2));
    memcpy(bad, ts, sizeof(bad));
    bad[0].id = 0;                                // id 0
    CHECK(!graph_ok(bad, 4, nodes, 2));
    memcpy(bad, ts, sizeof(bad));
    bad[1].type = 5;                              // a bad tensor spoils the graph
    CHECK(!graph_ok(bad, 4, nodes, 2));

    // counts that lie
    n = build_graph(buf, ts, 4, nodes, 2);
    lm_rpc_put_u32(buf, 0xffffffffu);
    CHECK(lm_rpc_graph_decode(buf, n, why) == NULL);
    n = build_graph(buf, ts, 4, nodes, 2);
    lm_rpc_put_u32(buf + 4 + 16, 0xffffffffu);
    CHECK(lm_rpc_graph_decode(buf, n, why) == NULL);
    lm_rpc_put_u32(buf + 4 + 16, 3);
    CHECK(lm_rpc_graph_decode(buf, n, why) == NULL);

    // many tensors: a chain, each the source of the next
    enum { N = 200 };
    static struct lm_rpc_tensor chain[N];
    static uint64_t ids[N];
    for (int i = 0; i < N; i++) {
        chain[i] = sample_tensor(0x1000 + (uint64_t) i * 0x100000000ULL);
        if (i > 0) chain[i].src[0] = chain[i - 1].id;
        ids[i] = chain[i].id;
    }
    CHECK(graph_ok(chain, N, ids, N));
}

// Random bytes, and valid messages with random corruption and truncation:
// the decoder answers (yes or no) and never reads out of bounds (run under ASan).
static void test_random(void) {
    struct lm_rpc_limits lim = { .max_set_data = 1 << 20, .max_graph_bytes = 1 << 20 };
    static uint8_t buf[1 << 14];
    struct lm_rpc_tensor ts[3] = { sample_tensor(1), sample_tensor(2), sample_tensor(3) };
    ts[2].src[0] = 1; ts[2].src[1] = 2;
    uint64_t nodes[1] = { 3 };
    int accepted = 0;
    for (int iter = 0; iter < 20000; iter++) {
        size_t n;
        if (iter % 2 == 0) {
            n = next_rand() % 1200;
            for (size_t i = 0; i < n; i++) buf[i] = (uint8_t) next_rand();
        } else {
            n = build_graph(buf, ts, 3, nodes, 1);
            int flips = 1 + (int)(next_rand() % 4);
            for (int f = 0; f < flips; f++) buf[next_rand() % n] ^= (uint8_t)(1u << (next_rand() % 8));
            if (next_rand() % 3 == 0) n = next_rand() % (n + 1);
        }
        uint8_t * copy = malloc(n ? n : 1); // exact size, so ASan sees any overread
        memcpy(copy, buf, n);
        lm_rpc_why why;
        struct lm_rpc_graph * g = lm_rpc_graph_decode(copy, n, why);
        accepted += g != NULL;
        lm_rpc_graph_free(g);
        uint8_t cmd = (uint8_t)(next_rand() % (LM_RPC_CMD_COUNT + 2));
        uint64_t prefix;
        if (lm_rpc_check_header(cmd, n, &lim, &prefix, why) && cmd != LM_RPC_GRAPH_COMPUTE && prefix <= n) {
            struct lm_rpc_request r;
            accepted += lm_rpc_request_decode(cmd, copy, (size_t) prefix, n, &r, why);
        }
        free(copy);
    }
    CHECK(accepted > 0); // some corrupted graphs still make sense (a flipped name byte)
}

int main(void) {
    test_layout();
    test_tensor_checks();
    test_headers();
    test_graphs();
    test_random();
    if (g_fail) {
        fprintf(stderr, "%d failures\n", g_fail);
        return 1;
    }
    printf("rpc wire: layouts, decoder refusals and 20000 random messages ok\n");
    return 0;
}
