// Package include holds the public headers of the C core (ggml.h,
// ggml-cpu.h, ggml-backend.h, ggml-alloc.h, ggml-rpc.h, gguf-ext.h). It has
// no code; the Go file keeps the folder a package, so that tools which copy
// only package folders (go mod vendor) keep the headers.
package include
