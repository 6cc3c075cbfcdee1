// Package cpu compiles the C core's cpu layer: the CPU: the compute engine with its thread pool, the CPU backend, the repacked weights buffer and every CPU kernel.
//
// Go code does not use it directly (see package csrc).
//
// Its C code uses the layers: backend, graph, core, quant, base.
//
//ggml:uses backend graph core quant base
package cpu

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"
