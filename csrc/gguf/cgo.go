// Package gguf compiles the C core's gguf layer: the GGUF file format: reader and writer.
//
// Go code does not use it directly (see package csrc).
//
// Its C code uses the layers: core.
//
//ggml:uses core
package gguf

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"
