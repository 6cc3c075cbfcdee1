// This file: contexts, tensors and views. The package documentation is in doc.go.

package ggml

/*
#cgo CFLAGS: -std=gnu11 -I${SRCDIR}/csrc/include -I${SRCDIR}/csrc/base -I${SRCDIR}/csrc/quant -I${SRCDIR}/csrc/backend -I${SRCDIR}/csrc/cpu -I${SRCDIR}/csrc/rpc
#include "glue.h"

GG_DEF(gg_t *, new_tensor, (gg_c * ctx, enum lm_ggml_type type, int n, const int64_t * ne), (ctx, type, n, ne))
GG_DEF(gg_t *, view_1d, (gg_c * ctx, gg_t * a, int64_t ne0, size_t o), (ctx, a, ne0, o))
GG_DEF(gg_t *, view_2d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, size_t nb1, size_t o), (ctx, a, ne0, ne1, nb1, o))
GG_DEF(gg_t *, view_3d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t o), (ctx, a, ne0, ne1, ne2, nb1, nb2, o))
GG_DEF(gg_t *, view_4d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t o), (ctx, a, ne0, ne1, ne2, ne3, nb1, nb2, nb3, o))
GG_DEF(gg_t *, view_tensor, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, dup_tensor, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEF(gg_t *, reshape, (gg_c * ctx, gg_t * a, gg_t * b), (ctx, a, b))
GG_DEF(gg_t *, reshape_1d, (gg_c * ctx, gg_t * a, int64_t ne0), (ctx, a, ne0))
GG_DEF(gg_t *, reshape_2d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1), (ctx, a, ne0, ne1))
GG_DEF(gg_t *, reshape_3d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, int64_t ne2), (ctx, a, ne0, ne1, ne2))
GG_DEF(gg_t *, reshape_4d, (gg_c * ctx, gg_t * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3), (ctx, a, ne0, ne1, ne2, ne3))
GG_DEF(gg_t *, permute, (gg_c * ctx, gg_t * a, int a0, int a1, int a2, int a3), (ctx, a, a0, a1, a2, a3))
GG_DEF(gg_t *, transpose, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEFV(set_param, (gg_c * ctx, gg_t * a), (ctx, a))
GG_DEFV(set_loss, (gg_t * a), (a))

// NewContext reports a failure as its error: the core does not also log it.
static gg_c * gg_init(size_t mem_size, void * buf, bool no_alloc) {
    struct lm_ggml_init_params p = { mem_size, buf, no_alloc };
    lm_ggml_log_quiet(true);
    gg_c * c = lm_ggml_init(p);
    lm_ggml_log_quiet(false);
    return c;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	_ "github.com/ggml-go/ggml/csrc"
	"github.com/ggml-go/ggml/internal/cmem"
)

// ErrClosed is the panic value (wrapped) when a closed Context, or a Tensor or
// Graph that belongs to one, is used.
var ErrClosed = errors.New("ggml: use of closed context")

// OpError is the panic value of an operation called with invalid arguments.
// Recover it with errors.As.
type OpError struct {
	Op  string // Go method name
	Msg string // what is wrong: for an op, its operands' shapes and the rule they break
	// Detail is the core's check that failed and where, e.g.
	// "a->ne[0] == b->ne[0] && ... does not hold (ctor-matmul.c:13)"; empty
	// when the error did not come from the core.
	Detail string
	at     string // the place of Detail, "ctor-matmul.c:13"
}

// Error is "ggml: Op: Msg", followed by the core's place of the check when
// there is one.
func (e *OpError) Error() string {
	if e.at != "" {
		return "ggml: " + e.Op + ": " + e.Msg + " (" + e.at + ")"
	}
	return "ggml: " + e.Op + ": " + e.Msg
}

// check panics with an *OpError if the C call reported an assertion.
func check(op string, e *C.gg_err) {
	if e.failed != 0 {
		panic(&OpError{Op: op, Msg: C.GoString(&e.msg[0])})
	}
}

// ---------------------------------------------------------------- contexts

// ContextOptions configure NewContext.
type ContextOptions struct {
	// MemSize is the size of the arena in bytes: tensor structs, graph
	// structs and (unless NoAlloc) tensor data come from it. It is required
	// (NewContext returns an error for 0, unless Buffer gives the size): use
	// TensorOverhead, GraphOverhead and the tensors' sizes to size it. The
	// arena does not grow: an operation that does not fit panics with an
	// *OpError that says how many bytes it needs and how many are free.
	MemSize int
	// NoAlloc creates tensors without data (the data pointer stays nil), e.g.
	// to describe tensors whose data lives elsewhere.
	NoAlloc bool
	// Buffer, if not nil, is used as the arena instead of C memory. It is
	// pinned while the context is open and must be at least MemSize bytes
	// (MemSize 0 means len(Buffer)).
	Buffer []byte
}

// Context is a memory arena holding tensors and graphs. It is not safe for
// concurrent use; separate contexts can be used from separate goroutines.
type Context struct {
	c       *C.struct_lm_ggml_context // set once; freed by Close or the cleanup
	pinner  *runtime.Pinner
	charged int64    // arena bytes charged to cmem (0 for a caller's Buffer)
	errs    C.gg_err // where ops report assertions (reused, see errBuf)
	keepMu  sync.Mutex
	keep    []any // what its tensors' data lives in: backend buffers, graph allocators, schedulers
	cleanup runtime.Cleanup
	hold    *ctxHold
	life    ctxLife // see lifetime.go
}

func (ctx *Context) handle() ctxHandle { return ctxHandle{ctx.c, ctx.pinner, ctx.charged, ctx.hold} }

// keepAlive makes the context keep x (a Buffer or GraphAllocator) reachable.
//
// What it keeps is a field of the Context, not of its cleanup's argument:
// an owner reachable from a pending cleanup would survive the collection
// that finds the context unreachable and wait for the next one.
func (ctx *Context) keepAlive(x any) {
	ctx.keepMu.Lock()
	defer ctx.keepMu.Unlock()
	if !slices.Contains(ctx.keep, x) {
		ctx.keep = append(ctx.keep, x)
	}
}

// ctxHandle is what freeing a context needs (the cleanup's argument, so it
// must not reference the Context).
type ctxHandle struct {
	c       *C.struct_lm_ggml_context
	pinner  *runtime.Pinner
	charged int64
	hold    *ctxHold
}

// ctxHold is what the context's tensors point into besides its arena: the
// mapping of a GGUF file (released with the arena) and backend buffers and
// graph allocators (kept reachable as long as the context).
type ctxHold struct {
	mu       sync.Mutex
	releases []func()
}

func (h *ctxHold) add(release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releases = append(h.releases, release)
}

// free releases the context; byGC tells a cleanup from Close.
func (h ctxHandle) free(byGC bool) {
	C.lm_ggml_free(h.c)
	if h.pinner != nil {
		h.pinner.Unpin()
	}
	if byGC {
		cmem.Collected(h.charged)
	} else {
		cmem.Release(h.charged)
	}
	h.hold.mu.Lock()
	rel := h.hold.releases
	h.hold.releases = nil
	h.hold.mu.Unlock()
	for _, r := range rel {
		r()
	}
}

// errBuf returns the context's error record, cleared. Ops report
// assertions through it: one record per context (which is not used
// concurrently) instead of one escaping to the heap per op keeps graph
// building free of garbage.
func (ctx *Context) errBuf() *C.gg_err {
	ctx.ptr()
	ctx.errs.failed = 0
	return &ctx.errs
}

// NewContext creates a context. The arena is freed by Close, or when the
// context becomes unreachable.
func NewContext(opts ContextOptions) (*Context, error) {
	initOnce()
	if opts.MemSize < 0 {
		return nil, fmt.Errorf("ggml: negative context size %d", opts.MemSize)
	}
	if opts.MemSize == 0 && opts.Buffer == nil {
		return nil, errors.New("ggml: NewContext: MemSize is 0; give the arena's size in bytes " +
			"(TensorOverhead() per tensor, GraphOverhead(...) per graph, plus the tensors' data unless NoAlloc)")
	}
	var buf unsafe.Pointer
	var pinner *runtime.Pinner
	size := opts.MemSize
	if opts.Buffer != nil {
		if size == 0 {
			size = len(opts.Buffer)
		}
		if len(opts.Buffer) < size || size == 0 {
			return nil, fmt.Errorf("ggml: buffer of %d bytes is smaller than MemSize %d", len(opts.Buffer), size)
		}
		if uintptr(unsafe.Pointer(&opts.Buffer[0]))%16 != 0 {
			return nil, errors.New("ggml: buffer must be 16-byte aligned")
		}
		pinner = new(runtime.Pinner)
		pinner.Pin(&opts.Buffer[0])
		buf = unsafe.Pointer(&opts.Buffer[0])
	}
	c := C.gg_init(C.size_t(size), buf, C.bool(opts.NoAlloc))
	if c == nil {
		if pinner != nil {
			pinner.Unpin()
		}
		return nil, fmt.Errorf("ggml: cannot allocate a context of %d bytes", size)
	}
	// The arena is C memory the collector cannot see: charge it, so that
	// unclosed contexts are collected before they pile up.
	var charged int64
	if buf == nil {
		charged = int64(size)
		cmem.Charge(charged)
	}
	ctx := &Context{c: c, pinner: pinner, charged: charged, hold: new(ctxHold)}
	ctx.cleanup = runtime.AddCleanup(ctx, func(h ctxHandle) { h.free(true) }, ctx.handle())
	return ctx, nil
}

// UsedMem is the number of arena bytes in use.
func (ctx *Context) UsedMem() int { return int(C.lm_ggml_used_mem(ctx.ptr())) }

// MemSize is the size of the arena.
func (ctx *Context) MemSize() int { return int(C.lm_ggml_get_mem_size(ctx.ptr())) }

// MaxTensorSize is the size in bytes of the largest tensor of the context.
func (ctx *Context) MaxTensorSize() int { return int(C.lm_ggml_get_max_tensor_size(ctx.ptr())) }

// NoAlloc reports whether new tensors are created without data.
func (ctx *Context) NoAlloc() bool { return bool(C.lm_ggml_get_no_alloc(ctx.ptr())) }

// SetNoAlloc changes whether new tensors get data.
func (ctx *Context) SetNoAlloc(v bool) { C.lm_ggml_set_no_alloc(ctx.ptr(), C.bool(v)) }

// TensorOverhead is the arena space a tensor takes besides its data.
func TensorOverhead() int { return int(C.lm_ggml_tensor_overhead()) }

// ---------------------------------------------------------------- tensors

// Tensor is an n-dimensional array (up to 4 dimensions) in a Context, or the
// result of an operation to be computed by a Graph. ne[0] is the fastest
// varying dimension (the row length). A Tensor keeps its Context alive.
type Tensor struct {
	ctx *Context
	t   *C.struct_lm_ggml_tensor
}

// MaxDims is the maximum number of dimensions of a tensor.
const MaxDims = 4

// wrap makes a Tensor of ctx from a C tensor (nil stays nil).
func (ctx *Context) wrap(t *C.struct_lm_ggml_tensor) *Tensor {
	if t == nil {
		return nil
	}
	trackBackendView(ctx, t)
	return &Tensor{ctx: ctx, t: t}
}

// use returns the C tensor for an operation in ctx, recording that ctx now
// depends on the tensor's context (so the latter is not collected first).
func (t *Tensor) use(ctx *Context) *C.struct_lm_ggml_tensor {
	if t == nil {
		return nil
	}
	t.ctx.ptr()
	if t.ctx != ctx {
		addDep(ctx, t.ctx)
	}
	return t.t
}

// ptr returns the C tensor, panicking if its context is closed.
func (t *Tensor) ptr() *C.struct_lm_ggml_tensor {
	if t == nil {
		panic(&OpError{Op: "Tensor", Msg: "nil *Tensor"})
	}
	t.ctx.ptr()
	return t.t
}

// Context returns the context the tensor belongs to.
func (t *Tensor) Context() *Context { return t.ctx }

func shapeArgs(op string, shape []int) (int, [MaxDims]C.int64_t) {
	var ne [MaxDims]C.int64_t
	if len(shape) < 1 || len(shape) > MaxDims {
		panic(&OpError{Op: op, Msg: fmt.Sprintf("a tensor has 1 to %d dimensions, got %d", MaxDims, len(shape))})
	}
	for i, n := range shape {
		if n < 0 {
			panic(&OpError{Op: op, Msg: fmt.Sprintf("negative dimension %d", n)})
		}
		ne[i] = C.int64_t(n)
	}
	return len(shape), ne
}

// NewTensor creates a tensor of the given type and shape (ne0 first). It
// takes TensorOverhead() bytes of the context's arena plus, unless the
// context is NoAlloc, its data (NBytes, rounded up to 16). The data is not
// zeroed, as in ggml: it holds whatever the arena's memory held (a fresh
// allocation's leftovers, or the previous contents of a caller's Buffer), so
// set it (SetFloat32s, Fill, Zero) before anything reads it.
func (ctx *Context) NewTensor(typ Type, shape ...int) *Tensor {
	n, ne := shapeArgs("NewTensor", shape)
	e := ctx.errBuf()
	r := C.gg_new_tensor(e, ctx.ptr(), uint32(typ), cint("NewTensor", n), &ne[0])
	check("NewTensor", e)
	return ctx.wrap(r)
}

// NewTensor1D creates a vector of ne0 elements.
func (ctx *Context) NewTensor1D(typ Type, ne0 int) *Tensor { return ctx.NewTensor(typ, ne0) }

// NewTensor2D creates a matrix of ne1 rows of ne0 elements.
func (ctx *Context) NewTensor2D(typ Type, ne0, ne1 int) *Tensor { return ctx.NewTensor(typ, ne0, ne1) }

// NewTensor3D creates a 3-dimensional tensor.
func (ctx *Context) NewTensor3D(typ Type, ne0, ne1, ne2 int) *Tensor {
	return ctx.NewTensor(typ, ne0, ne1, ne2)
}

// NewTensor4D creates a 4-dimensional tensor.
func (ctx *Context) NewTensor4D(typ Type, ne0, ne1, ne2, ne3 int) *Tensor {
	return ctx.NewTensor(typ, ne0, ne1, ne2, ne3)
}

// DupTensor creates a tensor with the type and shape of src (not its data).
func (ctx *Context) DupTensor(src *Tensor) *Tensor {
	needTensors("DupTensor", src)
	e := ctx.errBuf()
	r := C.gg_dup_tensor(e, ctx.ptr(), src.use(ctx))
	check("DupTensor", e)
	return ctx.wrap(r)
}

// ViewTensor creates a view of the whole of src.
func (ctx *Context) ViewTensor(src *Tensor) *Tensor {
	needTensors("ViewTensor", src)
	e := ctx.errBuf()
	r := C.gg_view_tensor(e, ctx.ptr(), src.use(ctx))
	check("ViewTensor", e)
	return ctx.wrap(r)
}

// Tensor returns the tensor of the context with the given name, or nil.
func (ctx *Context) Tensor(name string) *Tensor {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return ctx.wrap(C.lm_ggml_get_tensor(ctx.ptr(), cs))
}

// Tensors lists the tensors of the context in creation order.
func (ctx *Context) Tensors() []*Tensor {
	var out []*Tensor
	c := ctx.ptr()
	for t := C.lm_ggml_get_first_tensor(c); t != nil; t = C.lm_ggml_get_next_tensor(c, t) {
		out = append(out, ctx.wrap(t))
	}
	return out
}

// Type is the element type.
func (t *Tensor) Type() Type { return Type(t.ptr()._type) }

// Op is the operation that computes the tensor (OpNone for data tensors).
func (t *Tensor) Op() Op { return Op(t.ptr().op) }

// Ne returns the number of elements in each of the 4 dimensions.
func (t *Tensor) Ne() [MaxDims]int {
	p := t.ptr()
	return [MaxDims]int{int(p.ne[0]), int(p.ne[1]), int(p.ne[2]), int(p.ne[3])}
}

// Nb returns the stride in bytes of each of the 4 dimensions.
func (t *Tensor) Nb() [MaxDims]int {
	p := t.ptr()
	return [MaxDims]int{int(p.nb[0]), int(p.nb[1]), int(p.nb[2]), int(p.nb[3])}
}

// Shape returns the dimensions up to the last one larger than 1 (at least one).
func (t *Tensor) Shape() []int {
	ne := t.Ne()
	return ne[:t.NDims()]
}

// NDims is the number of dimensions (trailing dimensions of size 1 are not counted).
func (t *Tensor) NDims() int { return int(C.lm_ggml_n_dims(t.ptr())) }

// NElements is the number of elements.
func (t *Tensor) NElements() int { return int(C.lm_ggml_nelements(t.ptr())) }

// NRows is the number of rows (ne1*ne2*ne3).
func (t *Tensor) NRows() int { return int(C.lm_ggml_nrows(t.ptr())) }

// NBytes is the number of bytes the tensor's data spans.
func (t *Tensor) NBytes() int { return int(C.lm_ggml_nbytes(t.ptr())) }

// ElementSize is the size of a block of the tensor's type.
func (t *Tensor) ElementSize() int { return int(C.lm_ggml_element_size(t.ptr())) }

// Name returns the tensor's name.
func (t *Tensor) Name() string { return C.GoString(&t.ptr().name[0]) }

// SetName sets the name (truncated to 63 bytes) and returns t.
func (t *Tensor) SetName(name string) *Tensor {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	C.lm_ggml_set_name(t.ptr(), cs)
	return t
}

// Flags returns the tensor's flags.
func (t *Tensor) Flags() TensorFlag { return TensorFlag(t.ptr().flags) }

// TensorFlag marks a tensor's role in a graph.
type TensorFlag int32

// Tensor flags, as in the C API.
const (
	FlagInput  TensorFlag = 1
	FlagOutput TensorFlag = 2
	FlagParam  TensorFlag = 4
	FlagLoss   TensorFlag = 8
)

// SetInput marks t as an input of the graph.
func (t *Tensor) SetInput() *Tensor { C.lm_ggml_set_input(t.ptr()); return t }

// SetOutput marks t as an output of the graph.
func (t *Tensor) SetOutput() *Tensor { C.lm_ggml_set_output(t.ptr()); return t }

// Src returns the i-th source of the operation that computes t, or nil.
func (t *Tensor) Src(i int) *Tensor {
	p := t.ptr()
	if i < 0 || i >= int(C.LM_GGML_MAX_SRC) {
		return nil
	}
	return t.ctx.wrap(p.src[i])
}

// ViewSrc returns the tensor t is a view of, or nil.
func (t *Tensor) ViewSrc() *Tensor { return t.ctx.wrap(t.ptr().view_src) }

// HasData reports whether the tensor has memory (false for tensors of a
// NoAlloc context).
func (t *Tensor) HasData() bool { return t.ptr().data != nil }

// IsContiguous reports whether the elements are packed in memory in order.
func (t *Tensor) IsContiguous() bool { return bool(C.lm_ggml_is_contiguous(t.ptr())) }

// IsContiguousN reports contiguity of dimensions above n (n = 0, 1, 2).
func (t *Tensor) IsContiguousN(n int) bool {
	switch n {
	case 0:
		return bool(C.lm_ggml_is_contiguous_0(t.ptr()))
	case 1:
		return bool(C.lm_ggml_is_contiguous_1(t.ptr()))
	case 2:
		return bool(C.lm_ggml_is_contiguous_2(t.ptr()))
	}
	panic(&OpError{Op: "IsContiguousN", Msg: fmt.Sprintf("n must be 0, 1 or 2, got %d", n)})
}

// IsTransposed reports whether dimensions 0 and 1 are swapped in memory.
func (t *Tensor) IsTransposed() bool { return bool(C.lm_ggml_is_transposed(t.ptr())) }

// IsPermuted reports whether the strides are not increasing.
func (t *Tensor) IsPermuted() bool { return bool(C.lm_ggml_is_permuted(t.ptr())) }

// IsEmpty reports whether some dimension is 0.
func (t *Tensor) IsEmpty() bool { return bool(C.lm_ggml_is_empty(t.ptr())) }

// SameShape reports whether t and u have the same shape.
func (t *Tensor) SameShape(u *Tensor) bool {
	needTensors("SameShape", t, u)
	return bool(C.lm_ggml_are_same_shape(t.ptr(), u.ptr()))
}

// CanRepeat reports whether t can be broadcast (repeated) to u's shape.
func (t *Tensor) CanRepeat(u *Tensor) bool {
	needTensors("CanRepeat", t, u)
	return bool(C.lm_ggml_can_repeat(t.ptr(), u.ptr()))
}

func (t *Tensor) String() string {
	if t == nil {
		return "<nil>"
	}
	if t.ctx.Closed() {
		return "<tensor of closed context>"
	}
	return fmt.Sprintf("%s %s %v (%s)", t.Name(), t.Type(), t.Shape(), t.Op())
}

// ---------------------------------------------------------------- views and reshapes

// View1D is a view of ne0 elements of a starting at byte offset.
func (ctx *Context) View1D(a *Tensor, ne0 int, offset int) *Tensor {
	needTensors("View1D", a)
	e := ctx.errBuf()
	r := C.gg_view_1d(e, ctx.ptr(), a.use(ctx), C.int64_t(ne0), csize("View1D", offset))
	checkOperands("View1D", e, a)
	return ctx.wrap(r)
}

// View2D is a view of ne1 rows of ne0 elements, rows nb1 bytes apart.
func (ctx *Context) View2D(a *Tensor, ne0, ne1, nb1, offset int) *Tensor {
	needTensors("View2D", a)
	e := ctx.errBuf()
	r := C.gg_view_2d(e, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1), csize("View2D", nb1), csize("View2D", offset))
	checkOperands("View2D", e, a)
	return ctx.wrap(r)
}

// View3D is a 3-dimensional view with strides nb1, nb2 in bytes.
func (ctx *Context) View3D(a *Tensor, ne0, ne1, ne2, nb1, nb2, offset int) *Tensor {
	needTensors("View3D", a)
	e := ctx.errBuf()
	r := C.gg_view_3d(e, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1), C.int64_t(ne2),
		csize("View3D", nb1), csize("View3D", nb2), csize("View3D", offset))
	checkOperands("View3D", e, a)
	return ctx.wrap(r)
}

// View4D is a 4-dimensional view with strides nb1, nb2, nb3 in bytes.
func (ctx *Context) View4D(a *Tensor, ne0, ne1, ne2, ne3, nb1, nb2, nb3, offset int) *Tensor {
	needTensors("View4D", a)
	e := ctx.errBuf()
	r := C.gg_view_4d(e, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1), C.int64_t(ne2), C.int64_t(ne3),
		csize("View4D", nb1), csize("View4D", nb2), csize("View4D", nb3), csize("View4D", offset))
	checkOperands("View4D", e, a)
	return ctx.wrap(r)
}

// Reshape views the contiguous tensor a with the shape of b.
func (ctx *Context) Reshape(a, b *Tensor) *Tensor {
	needTensors("Reshape", a, b)
	e := ctx.errBuf()
	r := C.gg_reshape(e, ctx.ptr(), a.use(ctx), b.use(ctx))
	checkOperands("Reshape", e, a, b)
	return ctx.wrap(r)
}

// Reshape1D views the contiguous tensor a as a vector.
func (ctx *Context) Reshape1D(a *Tensor, ne0 int) *Tensor {
	needTensors("Reshape1D", a)
	e := ctx.errBuf()
	r := C.gg_reshape_1d(e, ctx.ptr(), a.use(ctx), C.int64_t(ne0))
	checkOperands("Reshape1D", e, a)
	return ctx.wrap(r)
}

// Reshape2D views the contiguous tensor a as a matrix.
func (ctx *Context) Reshape2D(a *Tensor, ne0, ne1 int) *Tensor {
	needTensors("Reshape2D", a)
	e := ctx.errBuf()
	r := C.gg_reshape_2d(e, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1))
	checkOperands("Reshape2D", e, a)
	return ctx.wrap(r)
}

// Reshape3D views the contiguous tensor a with 3 dimensions.
func (ctx *Context) Reshape3D(a *Tensor, ne0, ne1, ne2 int) *Tensor {
	needTensors("Reshape3D", a)
	e := ctx.errBuf()
	r := C.gg_reshape_3d(e, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1), C.int64_t(ne2))
	checkOperands("Reshape3D", e, a)
	return ctx.wrap(r)
}

// Reshape4D views the contiguous tensor a with 4 dimensions.
func (ctx *Context) Reshape4D(a *Tensor, ne0, ne1, ne2, ne3 int) *Tensor {
	needTensors("Reshape4D", a)
	e := ctx.errBuf()
	r := C.gg_reshape_4d(e, ctx.ptr(), a.use(ctx), C.int64_t(ne0), C.int64_t(ne1), C.int64_t(ne2), C.int64_t(ne3))
	checkOperands("Reshape4D", e, a)
	return ctx.wrap(r)
}

// Permute views a with dimension i moved to position axes[i].
func (ctx *Context) Permute(a *Tensor, axis0, axis1, axis2, axis3 int) *Tensor {
	needTensors("Permute", a)
	e := ctx.errBuf()
	r := C.gg_permute(e, ctx.ptr(), a.use(ctx), cint("Permute", axis0), cint("Permute", axis1), cint("Permute", axis2), cint("Permute", axis3))
	checkOperands("Permute", e, a)
	return ctx.wrap(r)
}

// Transpose views a with dimensions 0 and 1 swapped.
func (ctx *Context) Transpose(a *Tensor) *Tensor {
	needTensors("Transpose", a)
	e := ctx.errBuf()
	r := C.gg_transpose(e, ctx.ptr(), a.use(ctx))
	checkOperands("Transpose", e, a)
	return ctx.wrap(r)
}
