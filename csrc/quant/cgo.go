// Package quant compiles the C core's quant layer: block formats: quantization and dequantization of every tensor type, the codebooks of the i-quants and the type traits table.
//
// Go code does not use it directly (see package csrc).
//
// Its C code uses the layers: base.
//
//ggml:uses base
package quant

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"
