package ggml

/*
#cgo CFLAGS: -std=gnu11
#include <stdlib.h>
#include "glue.h"
#include "rpc-graph.h"
#include "ggml-impl.h"

// The RPC server's view of a message, without a server: the header check,
// the decoder, and for graphs the rebuild against one pretend buffer (handle
// 1, addresses [1<<32, +64 KiB)). Returns 0 when the message is refused, 1
// when it decodes, 2 when a graph also builds; -1 when a built tensor lies
// outside the pretend buffer (which must never happen).
enum { GG_RPC_BUF = 1 };
#define GG_RPC_BASE ((uint64_t) 1 << 32)
#define GG_RPC_SIZE ((uint64_t) 64 << 10)
static _Alignas(64) uint8_t gg_rpc_arena[GG_RPC_SIZE];

static bool gg_rpc_resolve(void * user, const struct lm_rpc_tensor * t, void ** data, lm_ggml_backend_buffer_t * buf, lm_rpc_why why) {
	(void) user;
	*buf = NULL;
	*data = NULL;
	if (t->buffer == 0 && t->extent == 0) return true;
	if (t->buffer != GG_RPC_BUF || t->data < GG_RPC_BASE || t->data - GG_RPC_BASE > GG_RPC_SIZE ||
	    t->extent > GG_RPC_SIZE - (t->data - GG_RPC_BASE)) {
		snprintf(why, LM_RPC_WHY, "outside the buffer");
		return false;
	}
	*data = gg_rpc_arena + (t->data - GG_RPC_BASE);
	return true;
}

static int gg_rpc_decode(const uint8_t * msg, size_t n) {
	if (n < 1) return 0;
	struct lm_rpc_limits lim = { .max_set_data = GG_RPC_SIZE, .max_graph_bytes = 1 << 20 };
	lm_rpc_why why;
	uint64_t prefix;
	if (!lm_rpc_check_header(msg[0], n - 1, &lim, &prefix, why) || prefix > n - 1) return 0;
	if (msg[0] != LM_RPC_GRAPH_COMPUTE) {
		struct lm_rpc_request r;
		return lm_rpc_request_decode(msg[0], msg + 1, (size_t) prefix, n - 1, &r, why) ? 1 : 0;
	}
	struct lm_rpc_graph * g = lm_rpc_graph_decode(msg + 1, n - 1, why);
	if (g == NULL) return 0;
	struct lm_rpc_built b;
	int rc = lm_rpc_graph_build(g, gg_rpc_resolve, NULL, &b, why) == LM_RPC_BUILT ? 2 : 1;
	if (rc == 2) {
		for (int i = 0; i < b.graph->n_nodes; i++) {
			const struct lm_ggml_tensor * x = b.graph->nodes[i];
			const size_t nb = lm_ggml_nbytes(x);
			if (nb == 0) continue;
			const uint8_t * p = x->data;
			if (p < gg_rpc_arena || p > gg_rpc_arena + GG_RPC_SIZE || nb > (size_t)(gg_rpc_arena + GG_RPC_SIZE - p)) rc = -1;
			for (int j = 0; j < LM_GGML_MAX_SRC; j++) {
				const struct lm_ggml_tensor * s = x->src[j];
				if (s == NULL || s == x || lm_ggml_nbytes(s) == 0) continue;
				p = s->data;
				if (p < gg_rpc_arena || p > gg_rpc_arena + GG_RPC_SIZE || lm_ggml_nbytes(s) > (size_t)(gg_rpc_arena + GG_RPC_SIZE - p)) rc = -1;
			}
		}
		lm_rpc_built_free(&b);
	}
	lm_rpc_graph_free(g);
	return rc;
}

static bool gg_rpc_fake_buffer(void * user, const struct lm_ggml_tensor * t, uint64_t * handle, lm_rpc_why why) {
	(void) user; (void) why;
	*handle = t->data != NULL ? GG_RPC_BUF : 0;
	return true;
}

// The GRAPH_COMPUTE message (with its command byte) of g, whose tensors
// (of a no-alloc context) are first given addresses in the pretend buffer.
static uint8_t * gg_rpc_encode_fake(struct lm_ggml_context * ctx, struct lm_ggml_cgraph * g, size_t * len) {
	uint64_t off = 0;
	for (struct lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t != NULL; t = lm_ggml_get_next_tensor(ctx, t)) {
		if (t->view_src != NULL) {
			t->data = (char *) t->view_src->data + t->view_offs;
			continue;
		}
		t->data = (void *)(uintptr_t)(GG_RPC_BASE + off);
		off += (lm_ggml_nbytes(t) + 63) / 64 * 64;
	}
	lm_rpc_why why;
	size_t n = 0;
	uint8_t * msg = lm_rpc_graph_encode(g, gg_rpc_fake_buffer, NULL, &n, why);
	if (msg == NULL) return NULL;
	uint8_t * out = malloc(n + 1);
	if (out != NULL) {
		out[0] = LM_RPC_GRAPH_COMPUTE;
		memcpy(out + 1, msg, n);
		*len = n + 1;
	}
	free(msg);
	return out;
}

// Raw writes and reads of a tensor's bytes (for the transfer benchmark).
static void gg_rpc_raw(gg_err * e, struct lm_ggml_tensor * t, void * data, size_t n, int write) {
	struct lm_ggml_err_frame f;
	if (LM_GGML_TRY(&f)) {
		e->failed = 1;
		memcpy(e->msg, f.msg, sizeof(e->msg));
		return;
	}
	if (write) lm_ggml_backend_tensor_set(t, data, 0, n);
	else lm_ggml_backend_tensor_get(t, data, 0, n);
	lm_ggml_err_pop(&f);
}

// Backend-level copy and memset of tensors (for the RPC command checks: on
// RPC buffers they are COPY_TENSOR and offset SET_TENSORs).
static void gg_rpc_copy_memset(gg_err * e, struct lm_ggml_tensor * src, struct lm_ggml_tensor * dst, uint8_t v, size_t off, size_t n) {
	struct lm_ggml_err_frame f;
	if (LM_GGML_TRY(&f)) {
		e->failed = 1;
		memcpy(e->msg, f.msg, sizeof(e->msg));
		return;
	}
	if (src != NULL) lm_ggml_backend_tensor_copy(src, dst);
	else lm_ggml_backend_tensor_memset(dst, v, off, n);
	lm_ggml_err_pop(&f);
}
*/
import "C"

import "unsafe"

// rpcDecode runs msg (a command byte and its payload) through the RPC
// server's checks, without a server (for the fuzz target): 0 refused, 1
// decoded, 2 a graph that also builds, -1 a built tensor outside its buffer.
func rpcDecode(msg []byte) int {
	if len(msg) == 0 {
		return 0
	}
	p := C.CBytes(msg) // C memory of exactly len(msg): the decoder must stay inside
	defer C.free(p)
	return int(C.gg_rpc_decode((*C.uint8_t)(p), C.size_t(len(msg))))
}

// rpcEncodeGraph is the GRAPH_COMPUTE message of g, its tensors placed in the
// buffer rpcDecode pretends to have; g's context must be NoAlloc (the tensors'
// data pointers are overwritten).
func rpcEncodeGraph(g *Graph) []byte {
	var n C.size_t
	p := C.gg_rpc_encode_fake(g.ctx.c, g.ptr(), &n)
	if p == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(p))
	return C.GoBytes(unsafe.Pointer(p), C.int(n))
}

// rawTransfer writes b into t's data (or reads it), byte for byte from the
// start, through the backend (for the RPC transfer benchmark).
func rawTransfer(t *Tensor, b []byte, write bool) error {
	if len(b) == 0 {
		return nil
	}
	var e C.gg_err
	w := C.int(0)
	if write {
		w = 1
	}
	C.gg_rpc_raw(&e, t.ptr(), unsafe.Pointer(&b[0]), C.size_t(len(b)), w)
	return cError("rawTransfer", &e)
}

// rawCopy copies src's data into dst's through the backends (dst's buffer
// copies directly when it can: COPY_TENSOR between buffers of one server).
func rawCopy(src, dst *Tensor) error {
	var e C.gg_err
	C.gg_rpc_copy_memset(&e, src.ptr(), dst.ptr(), 0, 0, 0)
	return cError("rawCopy", &e)
}

// rawMemset sets n bytes of t's data from byte off to v through its backend.
func rawMemset(t *Tensor, v byte, off, n int) error {
	var e C.gg_err
	C.gg_rpc_copy_memset(&e, nil, t.ptr(), C.uint8_t(v), C.size_t(off), C.size_t(n))
	return cError("rawMemset", &e)
}
