// Package csrc is the C core of ggml-go (the lm_ggml_* / lm_gguf_* API), one
// cgo package per layer, lowest first:
//
//	include   public headers
//	base      logging, errors, fp16/bf16, CPU features, SIMD helpers
//	quant     block formats, quantization, type traits
//	core      contexts, tensors, graphs, names
//	graph     op constructors, backward
//	backend   buffers, backends, devices, allocator, scheduler
//	cpu       engine, thread pool, CPU backend, kernels
//	registry  the backends: CPU built in, others registered at run time
//	rpc       wire format, client, server
//	gguf      GGUF reader and writer
//
// A layer's C code uses only layers before it in this list: the ones its
// cgo.go names in its //ggml:uses line (internal/layercheck checks every
// symbol and private header against them). Go code does not use this package directly: the root
// package github.com/ggml-go/ggml imports it for its C symbols and includes
// its headers. C programs can build the same sources without Go:
//
//	cc -O2 -pthread -Icsrc/include app.c $(find csrc -name '*.c') -lm
package csrc

// Every layer is imported here and no layer imports another, so that go
// build compiles the layers' C files in parallel; the linker resolves the
// symbols between them.
import (
	_ "github.com/ggml-go/ggml/csrc/backend"
	_ "github.com/ggml-go/ggml/csrc/base"
	_ "github.com/ggml-go/ggml/csrc/core"
	_ "github.com/ggml-go/ggml/csrc/cpu"
	_ "github.com/ggml-go/ggml/csrc/gguf"
	_ "github.com/ggml-go/ggml/csrc/graph"
	_ "github.com/ggml-go/ggml/csrc/quant"
	_ "github.com/ggml-go/ggml/csrc/registry"
	_ "github.com/ggml-go/ggml/csrc/rpc"
)
