// Package gguf reads and writes GGUF model files.
//
// # Contract
//
// The rules of package ggml (see its documentation) apply; for files they
// are these. Each has a test named after it in contract_test.go.
//
// Ownership: a File owns its parsed metadata (C memory) and, for Open, a
// read-only memory mapping of the file; the descriptor is closed as soon as
// the file is mapped. Slices from TensorData are views of that memory: they
// must not be written to and are valid until Close (after Close they read
// as zeros: the pages are replaced, the addresses stay reserved, so a stale
// slice never faults). Readers from TensorReader return ErrClosed after
// Close. Tensors that package ggml loads without copying (LoadGGUF) hold the
// mapping itself: it stays until their context is freed, even after Close.
// Close is idempotent; afterwards the methods that return an error return
// ErrClosed and the others panic with it. A nil *File is a closed one. A
// Writer after Close or Abort (or nil) returns errors wrapping ErrClosed.
//
// A File that is never closed is released by the garbage collector once it
// is unreachable, and what it holds outside the Go heap is counted by it
// (ggml's rule), so a program that opens files and forgets Close stays
// bounded in memory and mappings. The one exception: a File whose
// TensorData views were taken keeps its mapping when it is collected,
// because nothing can tell when the last view is dropped and a view must
// never fault; the collector frees the rest. A Writer's buffers are Go
// memory; a Writer from Create that is dropped without Close or Abort
// removes its temporary file when it is collected.
//
// Errors: a file that is not valid GGUF is a *FormatError naming the key or
// tensor; I/O failures are returned as errors wrapping the os error;
// getters report ErrNotFound and *TypeError (wrapping ErrType); tensor data
// that lies outside the file wraps ErrNoData. Nothing in the package panics
// on file contents, and nothing ends the process.
//
// Threads: a File is safe for concurrent use by multiple goroutines; Close
// called while others use it waits for the calls running (those begun after
// it fail with ErrClosed). A Writer is used by one goroutine at a time,
// except that Close or Abort may come from another: they wait for the call
// running, and later calls fail with ErrClosed.
//
// # Reading
//
// Reading goes through the C parser of the core (csrc/gguf/gguf-read.c), so Go
// and C accept exactly the same files: magic, version 2 or 3, every count and
// length bounded by the bytes that remain, valid type ids, unique non-empty
// UTF-8 keys, bools 0 or 1, unique tensor names of at most 63 bytes, 1 to 4
// non-negative dimensions without overflow, rows a whole number of blocks,
// aligned, non-overlapping tensor data inside the file, and a power-of-two
// general.alignment. Anything else is a *FormatError naming the key or tensor.
//
// Open memory-maps the file read-only (Linux and macOS; elsewhere the file is
// read into memory), so opening a multi-gigabyte model costs only its
// metadata, and TensorData returns slices of the mapping without copying.
//
// Getters return (value, error): the error wraps ErrNotFound when the key is
// absent and ErrType (as a *TypeError) when the value has another type;
// getters never convert between types, except Int, Uint and Float, which
// accept any integer or float type whose value fits.
//
// # Writing
//
// Create writes a file atomically (a temporary file renamed into place by
// Close); NewWriter writes to any io.Writer. See Writer.
package gguf
