// Package rpc compiles the C core's rpc layer: ggml-rpc: the wire format, the client backend and the server, and the graph encoder/rebuilder.
//
// Go code does not use it directly (see package csrc).
package rpc

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing -I${SRCDIR}/../include
// #cgo windows LDFLAGS: -lws2_32
import "C"

import _ "github.com/ggml-go/ggml/csrc/registry"
import _ "github.com/ggml-go/ggml/csrc/cpu"
import _ "github.com/ggml-go/ggml/csrc/backend"
import _ "github.com/ggml-go/ggml/csrc/graph"
import _ "github.com/ggml-go/ggml/csrc/core"
