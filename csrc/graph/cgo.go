// Package graph compiles the C core's graph layer: graph construction: the op constructors (shape and type checks) and the backward builder.
//
// Go code does not use it directly (see package csrc).
package graph

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"

import _ "github.com/ggml-go/ggml/csrc/core"
import _ "github.com/ggml-go/ggml/csrc/quant"
import _ "github.com/ggml-go/ggml/csrc/base"
