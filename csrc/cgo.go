// Package csrc compiles the C core of ggml-go (the lm_ggml_* / lm_gguf_* API).
//
// Go code does not use this package directly: the root package
// github.com/ggml-go/ggml imports it for its C symbols and includes its
// headers. C programs can build the same sources without Go:
//
//	cc -O2 -pthread -Icsrc app.c csrc/*.c -lm
package csrc

// #cgo CFLAGS: -std=gnu11 -O3 -fno-strict-aliasing
// #cgo !windows LDFLAGS: -lm -lpthread
// #cgo windows LDFLAGS: -Wl,-Bstatic -lpthread -Wl,-Bdynamic -lws2_32
import "C"
