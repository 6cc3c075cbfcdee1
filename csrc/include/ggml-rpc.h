// ggml-rpc.h - the RPC backend: a backend whose buffers and graphs live in
// another process (usually on another machine) running an RPC server.
// Source-compatible with upstream ggml's ggml-rpc.h (cui-llama.rn 1.3.3) and
// wire-compatible with its rpc-server and client (ggml commit 69d065e7): the
// same commands, message layouts and serialized tensors.
//
// Unlike upstream ggml's, the server checks everything it receives (sizes,
// buffers, tensor bounds, graph structure, op shapes) and drops a connection
// that sends malformed messages; a client whose server disappears gets errors,
// not an abort or a hang.
#pragma once

#include "ggml.h"
#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_GGML_RPC_MAX_SERVERS 16

// ---------------------------------------------------------------- ggml's API

// A backend computing on the server at endpoint ("host:port"). Connects on
// first use; NULL if the endpoint does not parse.
LM_GGML_BACKEND_API lm_ggml_backend_t lm_ggml_backend_rpc_init(const char * endpoint);
LM_GGML_BACKEND_API bool              lm_ggml_backend_is_rpc(lm_ggml_backend_t backend);

// The buffer type of the server at endpoint (one per endpoint, never freed);
// NULL if the server cannot be reached.
LM_GGML_BACKEND_API lm_ggml_backend_buffer_type_t lm_ggml_backend_rpc_buffer_type(const char * endpoint);

// What the server reports; 0 and 0 if it cannot be reached.
LM_GGML_BACKEND_API void lm_ggml_backend_rpc_get_device_memory(const char * endpoint, size_t * free, size_t * total);

// Serves backend on endpoint ("host:port"; a port of 0 picks a free one)
// until the process ends; returns only if the endpoint cannot be bound.
// free_mem/total_mem: the memory the server reports and the most it hands out
// to clients in all. Each client gets its own thread; graphs are computed one
// at a time.
LM_GGML_BACKEND_API void lm_ggml_backend_rpc_start_server(lm_ggml_backend_t backend, const char * endpoint, size_t free_mem, size_t total_mem);

LM_GGML_BACKEND_API lm_ggml_backend_reg_t lm_ggml_backend_rpc_reg(void);

// The device of endpoint (one per endpoint, never freed).
LM_GGML_BACKEND_API lm_ggml_backend_dev_t lm_ggml_backend_rpc_add_device(const char * endpoint);

// ---------------------------------------------------------------- extensions (not in ggml)

// Client timeouts in milliseconds (process-wide; <= 0 keeps the current value):
// connecting, and waiting for any progress on a request or its reply (a graph
// compute counts as one wait). Defaults: 10 000 and 300 000.
LM_GGML_BACKEND_API void lm_ggml_backend_rpc_set_timeouts(int connect_ms, int io_ms);

// A server object, for embedding: the caller accepts connections and hands
// each one over to lm_rpc_server_serve (from a thread of its own).
struct lm_rpc_server;
// backend is borrowed (it must outlive the server; the server sets its abort
// callback, if it has one, until lm_rpc_server_free); total_mem caps what all
// clients together may allocate (0: no cap); free_mem is only reported.
LM_GGML_BACKEND_API struct lm_rpc_server * lm_rpc_server_new(lm_ggml_backend_t backend, size_t free_mem, size_t total_mem);
// Serves one client on a connected stream socket until it leaves, breaks the
// protocol or the server stops; closes fd and frees what the client
// allocated. Thread-safe: one call per connection.
LM_GGML_BACKEND_API void lm_rpc_server_serve(struct lm_rpc_server * srv, int fd);
// Makes every lm_rpc_server_serve return soon (their connections are shut
// down, a graph being computed is aborted if the backend can abort) and
// refuses later ones.
LM_GGML_BACKEND_API void lm_rpc_server_stop(struct lm_rpc_server * srv);
// Frees the server; call after every lm_rpc_server_serve has returned.
LM_GGML_BACKEND_API void lm_rpc_server_free(struct lm_rpc_server * srv);

// Bytes the clients of srv hold at the moment.
LM_GGML_BACKEND_API size_t lm_rpc_server_used(struct lm_rpc_server * srv);

#ifdef __cplusplus
}
#endif
