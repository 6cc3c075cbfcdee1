// Package registry compiles the C core's registry layer: the backend registry: the CPU backend built in, and the backends registered at run time (RPC servers, custom backends).
//
// Go code does not use it directly (see package csrc).
//
// Its C code uses the layers: cpu, backend.
//
//ggml:uses cpu backend
package registry

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"
