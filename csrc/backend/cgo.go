// Package backend compiles the C core's backend layer: buffers, buffer types, backends, devices, the graph allocator, the scheduler and graph copies between backends.
//
// Go code does not use it directly (see package csrc).
//
// Its C code uses the layers: graph, core.
//
//ggml:uses graph core
package backend

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"
