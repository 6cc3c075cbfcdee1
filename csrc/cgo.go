// Package csrc compiles the C core of ggml-go (the lm_ggml_* / lm_gguf_* API).
//
// Go code does not use this package directly: the root package
// github.com/ggml-go/ggml imports it for its C symbols and includes its
// headers. C programs can build the same sources without Go:
//
//	cc -O2 -pthread -Icsrc app.c csrc/*.c -lm
package csrc

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing
// #cgo LDFLAGS: -lm -lpthread
import "C"
