// rpc-graph.h - turning a received graph into one this core computes safely.
// Internal (server; the client asks lm_rpc_op_supported).
//
// A received node is not trusted as sent: each compute node is built again by
// the op's own constructor from its (already built) sources and its decoded
// op_params, and must come out with the type, shape and strides the client
// sent. The constructors check everything the kernels rely on, so a graph
// that builds is one the CPU kernels can run without reading or writing
// outside its tensors. Tensors that are not computed (leaves, views, sources
// from other graphs) are plain data tensors: their op is dropped.
#pragma once

#include "ggml-backend.h"
#include "rpc-wire.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------- client side

// The wire form of x; false (with why) if a size does not fit the wire's
// 32-bit fields. buffer is the server's handle of x's buffer (0: none).
bool lm_rpc_tensor_from(struct lm_rpc_tensor * w, const struct lm_ggml_tensor * x, uint64_t buffer, lm_rpc_why why);

// The server's handle of t's buffer (0 if t has none), or false (with why)
// if t cannot be sent (a buffer of another server, say).
typedef bool (*lm_rpc_buffer_fn)(void * user, const struct lm_ggml_tensor * t, uint64_t * handle, lm_rpc_why why);

// The GRAPH_COMPUTE message of g (malloc'ed, *len bytes): the nodes, and
// every tensor they reach through sources and view sources, each after
// those. NULL with why on failure.
uint8_t * lm_rpc_graph_encode(const struct lm_ggml_cgraph * g, lm_rpc_buffer_fn buffer_of, void * user, size_t * len, lm_rpc_why why);

// ---------------------------------------------------------------- server side

// Gives the host address and buffer of a received tensor's data, or fails
// (the tensor points outside what the client owns).
typedef bool (*lm_rpc_resolve_fn)(void * user, const struct lm_rpc_tensor * t, void ** data,
                                  lm_ggml_backend_buffer_t * buf, lm_rpc_why why);

enum lm_rpc_build_status {
    LM_RPC_BUILT,
    LM_RPC_MALFORMED, // data outside the client's buffers: drop the client
    LM_RPC_REFUSED,   // an op this server does not compute, or shapes its constructor refuses
};

struct lm_rpc_built {
    struct lm_ggml_context * ctx; // holds the tensors and the graph (no data)
    struct lm_ggml_cgraph  * graph;
};

// Builds out->graph from g. Must run on a thread that may longjmp (not a
// compute worker): constructor checks are caught with LM_GGML_TRY.
enum lm_rpc_build_status lm_rpc_graph_build(const struct lm_rpc_graph * g, lm_rpc_resolve_fn resolve, void * user,
                                            struct lm_rpc_built * out, lm_rpc_why why);
void lm_rpc_built_free(struct lm_rpc_built * b);

// Whether this server would build node's op at all (its shapes are checked
// only when it arrives).
bool lm_rpc_op_supported(const struct lm_ggml_tensor * node);

#ifdef __cplusplus
}
#endif
