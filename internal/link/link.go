// Package link carries the few unexported entry points that one package of
// the module offers another (set in the offering package's init).
package link

import "time"

// GGUFTensorView returns the bytes of a tensor of a *gguf.File without
// marking the file as having lent views of its mapping: package ggml keeps
// the File reachable from the Context whose tensors point into it, so the
// File's cleanup may unmap it once both are unreachable.
var GGUFTensorView func(f any, name string) ([]byte, error)

// GGUFRetain, given a *gguf.File, returns the whole file's bytes (a slice of
// its memory mapping) and a release function; the bytes stay valid, even
// after the File is closed or collected, until release is called (more than
// once is fine). ok is false for files without a mapping (OpenBytes,
// OpenReader); err is gguf.ErrClosed for a closed File. Package ggml's
// LoadGGUF without copy holds the mapping this way for its context.
var GGUFRetain func(f any) (data []byte, release func(), ok bool, err error)

// StreamProbe, given *ggml.Tensor values in host memory, times reading their
// bytes once, in order, rounds times with threads threads (no arithmetic but
// the loads: the ceiling of a memory-bound computation over the same bytes),
// and returns each round's time and the bytes of a round.
var StreamProbe func(ts []any, threads, rounds int) ([]time.Duration, int64, error)
