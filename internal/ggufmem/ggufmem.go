// Package ggufmem lets package ggml keep the memory of a gguf.File alive
// without a public API for it: package gguf sets Retain in its init.
package ggufmem

// Retain, given a *gguf.File, returns the whole file's bytes (a slice of its
// memory mapping) and a release function; the bytes stay valid, even after
// the File is closed, until release is called (more than once is fine). It
// returns ok false for files without a mapping (OpenBytes, OpenReader) and
// an error for a closed File.
var Retain func(file any) (data []byte, release func(), ok bool, err error)
