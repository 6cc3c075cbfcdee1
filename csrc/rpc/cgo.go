// Package rpc compiles the C core's rpc layer: ggml-rpc: the wire format, the client backend and the server, and the graph encoder/rebuilder.
//
// Go code does not use it directly (see package csrc).
//
// Its C code uses the layers: registry, cpu, backend, graph, core.
//
//ggml:uses registry cpu backend graph core
package rpc

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
// #cgo windows LDFLAGS: -lws2_32
import "C"
