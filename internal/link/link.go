// Package link carries the few unexported entry points that one package of
// the module offers another (set in the offering package's init).
package link

// GGUFTensorView returns the bytes of a tensor of a *gguf.File without
// marking the file as having lent views of its mapping: package ggml keeps
// the File reachable from the Context whose tensors point into it, so the
// File's cleanup may unmap it once both are unreachable.
var GGUFTensorView func(f any, name string) ([]byte, error)
