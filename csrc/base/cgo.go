// Package base compiles the C core's base layer: the lowest layer: logging, errors and aborts, fp16/bf16 conversion, run-time CPU feature detection and the SIMD helpers every layer with SIMD paths shares.
//
// Go code does not use it directly (see package csrc).
package base

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
// #cgo !windows LDFLAGS: -lm -lpthread
// #cgo windows LDFLAGS: -Wl,-Bstatic -lpthread -Wl,-Bdynamic
import "C"
