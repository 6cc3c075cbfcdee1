// Package cpu compiles the C core's cpu layer: the CPU: the compute engine with its thread pool, the CPU backend, the repacked weights buffer and every CPU kernel.
//
// Go code does not use it directly (see package csrc).
package cpu

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
import "C"

import _ "github.com/ggml-go/ggml/csrc/backend"
import _ "github.com/ggml-go/ggml/csrc/graph"
import _ "github.com/ggml-go/ggml/csrc/core"
import _ "github.com/ggml-go/ggml/csrc/quant"
import _ "github.com/ggml-go/ggml/csrc/base"
