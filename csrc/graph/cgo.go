// Package graph compiles the C core's graph layer: graph construction: the op constructors (shape and type checks) and the backward builder.
//
// Go code does not use it directly (see package csrc).
//
// Its C code uses the layers: core, quant, base.
//
//ggml:uses core quant base
package graph

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"
