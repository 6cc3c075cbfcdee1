// Package core compiles the C core's core layer: contexts, tensors, views, graphs and the names of types and ops.
//
// Go code does not use it directly (see package csrc).
//
// Its C code uses the layers: quant, base.
//
//ggml:uses quant base
package core

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"
