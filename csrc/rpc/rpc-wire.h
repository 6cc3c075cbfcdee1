// rpc-wire.h - the RPC protocol on the wire, and the one decoder of it.
// Internal (client and server).
//
// Facts of the protocol (ggml's ggml-rpc.cpp at commit 69d065e7; our own
// description and code):
//
//   request: cmd (1 byte) | size (u64) | size bytes of payload
//   reply:   size (u64) | size bytes of payload
//
// Integers are little-endian (ggml writes its packed host structs;
// every platform it and we run on is little-endian). There is no handshake:
// a client connects and sends requests, one at a time, each answered by one
// reply. A server that dislikes a request closes the connection.
//
// Buffers are named by an opaque u64 the server hands out (remote_ptr), and
// tensor data by a u64 address inside the range [base, base + size) the
// server reports for the buffer; the client computes addresses as base plus
// offset. Our server hands out handles and addresses of its own making, not
// its pointers.
//
// Everything a peer sends goes through the lm_rpc_*_decode / lm_rpc_check_*
// functions below before it is used; they never trust a size or a count.
#pragma once

#include "ggml.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Values are the wire's.
enum lm_rpc_cmd {
    LM_RPC_ALLOC_BUFFER      = 0,  // u64 size -> u64 remote_ptr (0: failed), u64 remote_size
    LM_RPC_GET_ALIGNMENT     = 1,  // -> u64 alignment
    LM_RPC_GET_MAX_SIZE      = 2,  // -> u64 max_size
    LM_RPC_BUFFER_GET_BASE   = 3,  // u64 remote_ptr -> u64 base
    LM_RPC_FREE_BUFFER       = 4,  // u64 remote_ptr -> (empty)
    LM_RPC_BUFFER_CLEAR      = 5,  // u64 remote_ptr, u8 value -> (empty)
    LM_RPC_SET_TENSOR        = 6,  // tensor, u64 offset, data (the rest) -> (empty)
    LM_RPC_GET_TENSOR        = 7,  // tensor, u64 offset, u64 size -> size bytes
    LM_RPC_COPY_TENSOR       = 8,  // tensor src, tensor dst -> u8 done
    LM_RPC_GRAPH_COMPUTE     = 9,  // graph (below) -> u8 status (an enum lm_ggml_status as a byte)
    LM_RPC_GET_DEVICE_MEMORY = 10, // -> u64 free, u64 total
    LM_RPC_CMD_COUNT,
};

// Payload sizes of each command: fixed, or LM_RPC_VARIABLE (SET_TENSOR's
// request, GRAPH_COMPUTE's request, GET_TENSOR's reply).
#define LM_RPC_VARIABLE (-1)
struct lm_rpc_cmd_info {
    const char * name;
    int32_t request;
    int32_t reply;
};
extern const struct lm_rpc_cmd_info lm_rpc_cmds[LM_RPC_CMD_COUNT];

// ---------------------------------------------------------------- the serialized tensor
//
// 296 bytes, packed:
//   0 id u64 | 8 type u32 | 12 buffer u64 | 20 ne u32[4] | 36 nb u32[4] | 52 op u32 |
//  56 op_params i32[16] | 120 flags i32 | 124 src u64[10] | 204 view_src u64 |
// 212 view_offs u64 | 220 data u64 | 228 name char[64] | 292 padding[4]
// id, src and view_src are the client's own names for tensors (its
// pointers); 0 is none.
#define LM_RPC_TENSOR_SIZE     296
#define LM_RPC_N_OP_PARAMS     (LM_GGML_MAX_OP_PARAMS / 4)

struct lm_rpc_tensor {
    uint64_t id;
    uint32_t type;
    uint64_t buffer;
    uint32_t ne[LM_GGML_MAX_DIMS];
    uint32_t nb[LM_GGML_MAX_DIMS];
    uint32_t op;
    int32_t  op_params[LM_RPC_N_OP_PARAMS];
    int32_t  flags;
    uint64_t src[LM_GGML_MAX_SRC];
    uint64_t view_src;
    uint64_t view_offs;
    uint64_t data;
    char     name[LM_GGML_MAX_NAME]; // always NUL-terminated once decoded

    // Filled in by the decoder, not on the wire:
    uint64_t extent;                  // bytes from data that the tensor may touch (0 if empty)
    int32_t  src_idx[LM_GGML_MAX_SRC]; // graph: index of src[i] in the graph's tensors, -1 if none
    int32_t  view_idx;                // graph: index of view_src, -1 if none
};

void lm_rpc_tensor_encode(uint8_t out[LM_RPC_TENSOR_SIZE], const struct lm_rpc_tensor * t);

// Why a decode failed: a short sentence for the log.
#define LM_RPC_WHY 512
typedef char lm_rpc_why[LM_RPC_WHY];

// Checks what a tensor says about itself: a type this core knows, an op in
// range, whole blocks in a row, a count of elements within int64, and an
// extent (the bytes from data a kernel may read or write, whatever the
// strides) that fits in 64 bits from data, and data and strides aligned for
// the type (to the largest power of two up to 8 that divides its size).
bool lm_rpc_tensor_decode(const uint8_t in[LM_RPC_TENSOR_SIZE], struct lm_rpc_tensor * t, lm_rpc_why why);

// ---------------------------------------------------------------- requests

// Caps on what a peer may make the other side hold in memory.
struct lm_rpc_limits {
    uint64_t max_set_data;    // SET_TENSOR payload
    uint64_t max_graph_bytes; // GRAPH_COMPUTE message
};
// ~110k tensors, some 20 times a large llama's graph; what a graph costs the
// server (message, decoded tensors, rebuilt graph) is a small multiple of it
#define LM_RPC_DEFAULT_MAX_GRAPH_BYTES ((uint64_t) 32 << 20)

// The first step with a request header: is cmd known and size allowed? Sets
// *prefix to the bytes to read into memory before decoding (all of the
// payload, except SET_TENSOR's data, which is streamed to its destination).
bool lm_rpc_check_header(uint8_t cmd, uint64_t size, const struct lm_rpc_limits * lim, uint64_t * prefix, lm_rpc_why why);

#define LM_RPC_SET_TENSOR_HEADER (LM_RPC_TENSOR_SIZE + 8)

struct lm_rpc_request {
    enum lm_rpc_cmd cmd;
    uint64_t u64;   // ALLOC_BUFFER: size; GET_BASE, FREE, CLEAR: remote_ptr
    uint8_t  value; // BUFFER_CLEAR
    struct lm_rpc_tensor tensor, dst; // SET/GET: tensor; COPY: src in tensor, dst
    uint64_t offset, size;            // SET: data bytes that follow; GET: bytes asked for
};

// Decodes the prefix of a request that passed lm_rpc_check_header
// (total = the size from the header). GRAPH_COMPUTE is decoded by
// lm_rpc_graph_decode instead.
bool lm_rpc_request_decode(uint8_t cmd, const uint8_t * p, size_t n, uint64_t total, struct lm_rpc_request * r, lm_rpc_why why);

// ---------------------------------------------------------------- graphs
//
//   n_nodes u32 | node ids u64[n_nodes] | n_tensors u32 | tensors[n_tensors]
//
// ggml's client lists each tensor after its sources and view source
// (a depth-first walk from the nodes); the decoder requires that order, which
// rules out cycles and dangling references without a search. The one
// exception is a tensor naming itself as a source (a cast, which ggml's
// client builds as a copy into itself).

struct lm_rpc_graph {
    uint32_t n_nodes;
    uint32_t n_tensors;
    uint32_t * nodes; // indices into tensors
    struct lm_rpc_tensor * tensors;
};

// NULL (with why) unless every tensor decodes, ids are non-zero and distinct,
// every source names an earlier tensor or itself, every view source an
// earlier tensor, every node names a
// tensor, and the message is exactly as long as its counts say.
struct lm_rpc_graph * lm_rpc_graph_decode(const uint8_t * p, size_t n, lm_rpc_why why);
void                  lm_rpc_graph_free(struct lm_rpc_graph * g);

// ---------------------------------------------------------------- little-endian helpers

static inline void lm_rpc_put_u32(uint8_t * p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void lm_rpc_put_u64(uint8_t * p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t lm_rpc_get_u32(const uint8_t * p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t) p[i] << (8 * i);
    return v;
}
static inline uint64_t lm_rpc_get_u64(const uint8_t * p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t) p[i] << (8 * i);
    return v;
}

#ifdef __cplusplus
}
#endif
