// Package core compiles the C core's core layer: contexts, tensors, views, graphs and the names of types and ops.
//
// Go code does not use it directly (see package csrc).
package core

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"

import _ "github.com/ggml-go/ggml/csrc/quant"
import _ "github.com/ggml-go/ggml/csrc/base"
