// Package ggml gives Go programs the ggml tensor library: contexts, tensors,
// computation graphs, automatic differentiation, quantization and GGUF files,
// through cgo over a C core that lives in this module (csrc/).
//
// # Contract
//
// The rules below hold for every type of the package; package gguf restates
// those that concern files. Each rule has a test named after it in
// contract_test.go (TestContract...).
//
// Ownership: holding a value keeps what it needs alive, so nothing is freed
// under a reference the program still has.
//
//	Tensor             keeps  its Context
//	Graph              keeps  its Context
//	Context            keeps  the Contexts its tensors and graphs use tensors
//	                          of, and the mapping of the gguf.File its no-copy
//	                          tensors point into (LoadGGUF without copy), even
//	                          after that File is closed, and the backend
//	                          Buffers, GraphAllocators and Schedulers its
//	                          tensors' memory belongs to
//	backend buffer     keeps  its buffer type
//	scheduler          keeps  its backends
//	RPC backend        keeps  its connection
//
// Close releases an object's resources at once and is idempotent. It does
// not wait for dependents: from then on they fail instead of touching freed
// memory. Using a closed Context, or a Tensor or Graph of it, or anything of
// a Context that uses tensors of a closed one (its operations' operands, a
// graph copied from it, gradients built there), panics with ErrClosed; a
// closed Threadpool panics with ErrClosedThreadpool. Close while a
// computation uses the object (from a custom-op callback, or another
// goroutine) takes effect at once for new calls, and the memory is freed
// when that computation ends. Closing a gguf.File invalidates the slices its
// TensorData returned (they then read zeros; they never fault); the no-copy
// tensors loaded from it stay readable, since their Context holds the
// mapping, and are read-only: writing them is an *OpError (or an error from
// the methods that return one) and computing a node that writes into them
// fails.
// Closing a Buffer, GraphAllocator or Scheduler waits for the computations
// and data accesses using its memory, then detaches the tensors placed in it
// (using them is an error until they are placed again). Closing a backend
// leaves the buffers allocated with it usable (their memory belongs to the
// buffer type); a scheduler using it panics with ErrClosedBackend when used.
// When an RPC server goes away, the buffers on it fail with errors.
// A nil receiver or a nil argument (graph, tensor, backend, context.Context)
// of a method of Backend, BufferType, Buffer, GraphAllocator, Scheduler or
// Threadpool is an *OpError: returned by the methods that return an error,
// their panic otherwise.
//
// Every resource that lives outside the Go heap (context arenas, the work
// buffer of a computation, thread pools, GGUF metadata and mappings, backend
// buffers) is also released by the garbage collector once its owner is
// unreachable, and is counted by it: the package charges those bytes to an
// account that starts a collection when they have grown by GOGC percent
// since the last one (within GOMEMLIMIT when GOGC is off), the way the
// collector paces the Go heap. A program that forgets Close therefore stays
// bounded in memory, mappings and threads; Close still gives resources back
// sooner. A gguf.File whose TensorData views were taken is the one
// exception: nothing can tell when such a view is dropped, so only Close
// unmaps that file (the collector frees the rest of it).
//
// Errors and panics: where the problem comes from decides.
//
//	result            when
//	----------------  ----------------------------------------------------------
//	error returned    the problem is in data or in the environment: malformed or
//	                  truncated files, I/O failures, slices whose size does not
//	                  match the tensor, values out of range in index tensors
//	                  (GetRows, MulMatID: Compute names the op and node),
//	                  failed or cancelled computations (ComputeContext), a graph
//	                  with tensors that have no memory or nodes that write into
//	                  read-only memory, a custom-op callback that panicked or
//	                  called runtime.Goexit, allocation failures, a context too
//	                  small for the file LoadGGUF loads, NewContext with
//	                  MemSize 0
//	panic(*OpError)   a programmer error while building graphs: shapes or types
//	                  an operation does not accept, views and element indices
//	                  out of range, sizes that overflow, ints that do not fit
//	                  the C API, a full arena (the message says how much it
//	                  needs) or graph, writing a read-only tensor, invalid
//	                  arguments
//	panic(ErrClosed)  a closed Context (or a Tensor or Graph of one) is used;
//	                  ErrClosedThreadpool for a closed Threadpool
//
// An op's *OpError names the op, its operands' types and shapes and the
// rule they break, in words ("MulMat: a is f32 [4, 3], b is f32 [5, 2]: rows
// of a and b must have the same length (4 ≠ 5)"); its Detail keeps the
// core's failed check and its place.
//
// A panic value is an error that recover can inspect:
//
//	defer func() {
//		if r := recover(); r != nil {
//			var oe *ggml.OpError
//			if err, ok := r.(error); ok && (errors.As(err, &oe) || errors.Is(err, ggml.ErrClosed)) { ... }
//		}
//	}()
//
// Nothing in the package ends the process. Assertions of the C core become
// these panics and errors; no sequence of calls, however wrong, leads to
// SIGSEGV, SIGABRT, SIGBUS or a Go fatal error. (A C program using the core
// directly gets ggml's behaviour: a failed assertion aborts.)
//
// Logging: the package is quiet until the program asks. By default only
// the core's WARN and ERROR messages are logged, to slog.Default(); DEBUG
// and INFO ones (an RPC server's connections, ...) are dropped. SetLogger(l)
// sends every message to l, whose handler chooses the levels;
// SetLogger(nil) returns to the default.
//
// Threads:
//
//   - Functions without a receiver (Quantize, Dequantize, TypeTraits,
//     RowSize, NewContext, ...) may be called from any goroutine at any time.
//   - A Context, with its tensors and graphs, is used by one goroutine at a
//     time, like a map; separate contexts may be used in parallel. Reading
//     data of tensors whose context nobody modifies may be done in parallel.
//   - Computations of one Graph run one after the other: Compute called from
//     several goroutines at once serializes on the graph.
//   - A Threadpool is safe for concurrent use; its computations run one after
//     the other. A backend likewise serializes its computations, and a
//     scheduler the graphs it runs.
//   - A count of threads, wherever one is given (Graph.Compute,
//     ComputeOptions.Threads, Backend.SetThreads, ThreadpoolParams.NThreads,
//     TrainerOptions.Threads; in package llama SessionOptions, QuantizeOptions
//     and TrainOptions), follows one rule, ResolveThreads: 0 is
//     DefaultThreads(), which is runtime.NumCPU() at most MaxThreads (the
//     CPUs the process may run on: llama.cpp's -t default counts physical
//     cores, which needs each platform's topology); 1 to MaxThreads is
//     itself; a negative count, or one above MaxThreads, is an error.
//   - Compute without a Threadpool runs on a pool the process keeps between
//     computations (one at most, its threads asleep while idle;
//     ReleaseCachedThreadpool frees it); computations running at the same
//     time each get threads of their own.
//   - Custom-op callbacks (MapCustom1, ...) run on the worker threads of the
//     computation, not on the goroutine that called Compute, up to nTasks of
//     them at once. They must be safe for concurrent use and must not wait on
//     one another; they may read and write the data of the tensors they are
//     given and nothing else of the package: no new tensors, nodes or
//     contexts. A computation started from a callback returns ErrInCallback
//     (it would wait for itself); Close from a callback takes effect when the
//     computation ends. A callback that panics or calls runtime.Goexit
//     (t.FailNow) makes Compute return an error. Each call runs on a goroutine
//     of its own that the worker thread waits for (see Custom1Func).
//     A Scheduler's eval callback (SetEvalCallback) follows the same rules;
//     there the scheduler and its backends, which its computation holds,
//     return (or panic with) ErrInCallback.
//   - The logger (SetLogger) is called from whichever thread logs.
//   - In package gguf, a File is safe for concurrent use, Close included
//     (it waits for the calls running); a Writer is used by one goroutine
//     at a time, but may be closed or aborted from another.
//
// Versions: the module is v0. Changes are additions; a name that changes
// keeps its old spelling as an alias marked Deprecated that names its
// replacement, so code that compiled keeps compiling. Fixes that turn a
// crash or a wrong result into an error are not breaking changes. The C
// headers in csrc/ (ggml.h, ggml-cpu.h, ggml-backend.h, ggml-alloc.h,
// ggml-rpc.h) are source-compatible with the ggml C API of late 2024 as
// shipped in cui-llama.rn 1.3.3, with its lm_ggml_ / LM_GGML_ / lm_gguf_
// prefixes: the same names, signatures, enum values and public struct
// layouts, so a C program written against that API compiles unchanged and
// behaves the same for everything implemented here. That covers the bits of
// every quantized format, the GGUF files written and accepted, and the RPC
// wire protocol; it does not cover the binary interface of opaque types,
// internal headers, backends other than CPU and RPC, or floating-point
// results beyond the tolerances of the parity tests.
//
// # Using the package
//
// A Context owns a memory arena; tensors and graphs are created in it and live
// until the context is closed (or collected). Operations build a graph lazily;
// Graph.Compute runs it on a thread pool.
//
//	// the arena holds each tensor's header (TensorOverhead) and data, and the
//	// graph (GraphOverhead: about 66 KB for NewGraph's DefaultGraphSize nodes)
//	size := 3*ggml.TensorOverhead() + (8+12+6)*4 + 3*16 +
//		ggml.GraphOverhead(ggml.DefaultGraphSize, false)
//	ctx, _ := ggml.NewContext(ggml.ContextOptions{MemSize: size})
//	defer ctx.Close()
//	a := ctx.NewTensor2D(ggml.TypeF32, 4, 2) // data not zeroed: set it
//	b := ctx.NewTensor2D(ggml.TypeF32, 4, 3)
//	_ = a.SetFloat32s([]float32{1, 2, 3, 4, 5, 6, 7, 8})
//	b.Fill(1)
//	c := ctx.MulMat(a, b) // [2, 3]
//	g := ctx.NewGraph()
//	g.BuildForward(c)
//	err := g.Compute(4)
//
// A tensor's data is not zeroed when it is created (as in ggml): it holds
// whatever the arena held until the program sets it.
// The examples show contexts and tensors, graphs on threads, training with
// BuildBackward and AdamW, quantization, GGUF files and custom operations.
package ggml
