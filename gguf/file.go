// This file: reading GGUF files (File). The package documentation is in doc.go.

package gguf

/*
#include "ggml.h"
#include "gguf-ext.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ggml-go/ggml/internal/cmem"
	"github.com/ggml-go/ggml/internal/link"
)

// MaxDims is the largest number of tensor dimensions.
const MaxDims = 4

// MaxNameLen is the longest tensor name in bytes.
const MaxNameLen = 63

// DefaultAlignment is the data alignment of files without general.alignment.
const DefaultAlignment = 32

var (
	// ErrNotFound is wrapped by errors for absent keys and tensors.
	ErrNotFound = errors.New("not found") // its wrappers name the package and the key
	// ErrType is wrapped by errors for values of another type.
	ErrType = errors.New("gguf: wrong value type")
	// ErrClosed is returned by methods of a closed File.
	ErrClosed = errors.New("gguf: file is closed")
	// ErrNoData is wrapped when tensor data is asked of a file that does not hold it.
	ErrNoData = errors.New("gguf: tensor data not in file")
)

// FormatError reports a file that is not valid GGUF.
type FormatError struct {
	Path string // file name, or "" for readers and byte slices
	Msg  string // what is wrong, naming the key or tensor
}

func (e *FormatError) Error() string {
	if e.Path == "" {
		return "gguf: " + e.Msg
	}
	return "gguf: " + e.Path + ": " + e.Msg
}

// TypeError reports a getter used on a value of another type.
type TypeError struct {
	Key      string
	Have     ValueType // type of the value in the file
	HaveElem ValueType // element type when Have is TypeArray
	Want     string    // what the getter wanted
}

func (e *TypeError) Error() string {
	have := e.Have.String()
	if e.Have == TypeArray {
		have = "arr[" + e.HaveElem.String() + "]"
	}
	return fmt.Sprintf("gguf: key %q has type %s, not %s", e.Key, have, e.Want)
}

func (e *TypeError) Unwrap() error { return ErrType }

// Options change how a file is opened.
type Options struct {
	// MetadataOnly accepts files whose tensor data is missing (as written
	// with only_meta); TensorData then fails for tensors outside the file.
	// Without it every tensor, padding included, must lie inside the file.
	MetadataOnly bool
}

// KV describes one metadata entry.
type KV struct {
	Key       string
	Type      ValueType
	ArrayType ValueType // element type when Type is TypeArray
	Len       int       // number of elements when Type is TypeArray
}

// TensorInfo describes one tensor.
type TensorInfo struct {
	Name   string
	Type   TensorType
	Shape  []int64 // ne[0..n_dims), fastest-varying first, as stored
	Offset int64   // byte offset inside the data section
	Size   int64   // bytes
}

// Elements is the number of elements of the tensor.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Ne returns the shape padded with ones to MaxDims dimensions.
func (t TensorInfo) Ne() [MaxDims]int64 {
	ne := [MaxDims]int64{1, 1, 1, 1}
	copy(ne[:], t.Shape)
	return ne
}

// File is an open GGUF file.
type File struct {
	path     string
	ctx      *C.struct_lm_gguf_context
	data     []byte      // the whole file when mapped or in memory
	ra       io.ReaderAt // otherwise
	size     int64
	metaOnly bool
	mapped   bool
	res      *fileRes // what Close, or the cleanup, frees
	cleanup  runtime.Cleanup

	gate    gate // Close waits for the calls running on the file
	once    sync.Once
	tonce   sync.Once
	keys    map[string]int
	kvs     []KV
	tensors []TensorInfo
	tindex  map[string]int
}

// gate lets the methods of a File run while it is open and makes Close wait
// for those running, so that Close from another goroutine never frees the
// metadata or the mapping under them. Entering never blocks (a method may
// call another), it only fails once Close has begun.
type gate struct {
	mu     sync.Mutex
	idle   sync.Cond // signalled when the last call leaves a closing gate
	n      int       // calls inside
	closed bool
}

func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.n++
	return true
}

func (g *gate) exit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n--; g.n == 0 && g.closed && g.idle.L != nil {
		g.idle.Broadcast()
	}
}

// shut closes the gate and waits for the calls inside; false if it was
// already closed.
func (g *gate) shut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.closed = true
	g.idle.L = &g.mu
	for g.n > 0 {
		g.idle.Wait()
	}
	return true
}

// use enters f for a method that returns an error: ErrClosed once f is
// closed (or nil). The caller calls the returned function when done.
func (f *File) use() (func(), error) {
	if f == nil || !f.gate.enter() {
		return nil, ErrClosed
	}
	return f.gate.exit, nil
}

// must is use for the methods without an error result: they panic with
// ErrClosed.
func (f *File) must() func() {
	done, err := f.use()
	if err != nil {
		panic(err)
	}
	return done
}

// fileRes is what a File holds outside the Go heap: the parsed metadata (C
// memory) and its reference to the mapping. Close frees it, or the File's
// cleanup when the File is collected unclosed.
type fileRes struct {
	ctx     *C.struct_lm_gguf_context
	mem     *mapping // nil when nothing is mapped
	charged int64    // bytes charged to cmem
}

// mapCharge is the least a mapping counts for in the collector's accounting,
// so that a program opening many small files without closing them is
// collected long before it runs out of mappings.
const mapCharge = 1 << 20

// track charges what f holds outside the Go heap and registers its cleanup.
// mem is the file's mapping (nil if it is not mapped).
func (f *File) track(mem *mapping) {
	// The C copy of the metadata is about as large as its encoding.
	n := int64(C.lm_gguf_get_data_offset(f.ctx))
	if mem != nil {
		n += max(int64(len(f.data)), mapCharge)
	}
	r := &fileRes{ctx: f.ctx, mem: mem, charged: n}
	cmem.Charge(n)
	f.res = r
	f.cleanup = runtime.AddCleanup(f, func(r *fileRes) { r.free(true) }, r)
}

// free releases the metadata and the File's reference to the mapping; byGC
// tells the cleanup from Close (see mapping for what happens to views).
func (r *fileRes) free(byGC bool) error {
	C.lm_gguf_free(r.ctx)
	var err error
	if r.mem != nil {
		err = r.mem.dropFile(byGC)
	}
	if byGC {
		cmem.Collected(r.charged)
	} else {
		cmem.Release(r.charged)
	}
	return err
}

// Open opens and validates the GGUF file at path, memory-mapping it.
func Open(path string) (*File, error) { return OpenWithOptions(path, Options{}) }

// OpenWithOptions is Open with options.
func OpenWithOptions(path string, opts Options) (*File, error) {
	data, release, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	f, err := open(path, data, nil, int64(len(data)), opts)
	if err != nil {
		release(false)
		return nil, err
	}
	f.mapped = mmapped
	f.track(newMapping(data, release))
	return f, nil
}

// OpenBytes parses a GGUF file held in b. TensorData returns slices of b,
// which must not be modified while the File is in use.
func OpenBytes(b []byte, opts Options) (*File, error) {
	f, err := open("", b, nil, int64(len(b)), opts)
	if err != nil {
		return nil, err
	}
	f.track(nil)
	return f, nil
}

// OpenReader parses a GGUF file of the given size read through r. Only the
// metadata is read at open; TensorData reads (and copies) tensor bytes on
// demand, and TensorReader streams them.
func OpenReader(r io.ReaderAt, size int64, opts Options) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative size %d", size)
	}
	f, err := open("", nil, r, size, opts)
	if err != nil {
		return nil, err
	}
	f.track(nil)
	return f, nil
}

// firstRead is the size of the first read of OpenReader (a variable for tests).
var firstRead int64 = 1 << 20

func open(path string, data []byte, ra io.ReaderAt, size int64, opts Options) (*File, error) {
	f := &File{path: path, data: data, ra: ra, size: size, metaOnly: opts.MetadataOnly}
	if data != nil || ra == nil {
		ctx, _, msg := parse(data, size, opts.MetadataOnly)
		if ctx == nil {
			return nil, &FormatError{Path: path, Msg: msg}
		}
		f.ctx = ctx
		return f, nil
	}
	// Read a prefix, and more whenever the parser asks for it; the parser
	// bounds every request by the file size before asking.
	buf := make([]byte, min(size, firstRead))
	if _, err := readFull(ra, buf, 0); err != nil {
		return nil, err
	}
	for {
		ctx, need, msg := parse(buf, size, opts.MetadataOnly)
		if ctx != nil {
			f.ctx = ctx
			return f, nil
		}
		if need <= int64(len(buf)) || need > size {
			return nil, &FormatError{Path: path, Msg: msg}
		}
		grown := min(max(need, 2*int64(len(buf))), size)
		nb := make([]byte, grown)
		copy(nb, buf)
		if _, err := readFull(ra, nb[len(buf):], int64(len(buf))); err != nil {
			return nil, err
		}
		buf = nb
	}
}

func readFull(r io.ReaderAt, b []byte, off int64) (int, error) {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return n, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, fmt.Errorf("gguf: reading %d bytes at %d: %w", len(b), off, err)
}

// Close releases the file. Slices returned by TensorData then read as zeros
// (they must not be used after Close), readers from TensorReader return
// ErrClosed, and tensors of ggml's LoadGGUF without copy keep the mapping
// until their context is freed. A File that is not closed is released when
// it is garbage collected, except for the mapping of a file whose TensorData
// or TensorReader views were taken, which then stays mapped (a view must
// never fault). Close is idempotent; called while other goroutines use the
// File it waits for their calls to return (new calls fail with ErrClosed).
func (f *File) Close() error {
	if f == nil || !f.gate.shut() {
		return nil
	}
	f.cleanup.Stop()
	err := f.res.free(false)
	f.ctx = nil
	f.data = nil
	f.res = nil
	return err
}

// Version is the GGUF version of the file (2 or 3).
func (f *File) Version() int {
	defer f.must()()
	return int(C.lm_gguf_get_version(f.ctx))
}

// Alignment is the data alignment (general.alignment, default 32).
func (f *File) Alignment() int {
	defer f.must()()
	return int(C.lm_gguf_get_alignment(f.ctx))
}

// DataOffset is the file offset of the data section.
func (f *File) DataOffset() int64 {
	defer f.must()()
	return f.dataOffset()
}

func (f *File) dataOffset() int64 { return int64(C.lm_gguf_get_data_offset(f.ctx)) }

// Mapped reports whether TensorData slices point into a memory mapping of
// the file (outside the Go heap), as Open does on Linux and macOS.
func (f *File) Mapped() bool { return f != nil && f.mapped }

// Size is the size of the file in bytes.
func (f *File) Size() int64 {
	if f == nil {
		return 0
	}
	return f.size
}

// index builds the key table on first use, so opening stays cheap (the
// caller is inside the gate).
func (f *File) index() {
	f.once.Do(func() {
		ctx := f.ctx
		n := int(C.lm_gguf_get_n_kv(ctx))
		f.keys = make(map[string]int, n)
		f.kvs = make([]KV, n)
		for i := range n {
			ci := C.int(i)
			kv := KV{Key: C.GoString(C.lm_gguf_get_key(ctx, ci)), Type: ValueType(C.lm_gguf_get_kv_type(ctx, ci))}
			if kv.Type == TypeArray {
				kv.ArrayType = ValueType(C.lm_gguf_get_arr_type(ctx, ci))
				kv.Len = int(C.lm_gguf_get_arr_n(ctx, ci))
			}
			f.kvs[i] = kv
			f.keys[kv.Key] = i
		}
	})
}

// tensorIndex builds the tensor table on first use (inside the gate).
func (f *File) tensorIndex() {
	f.tonce.Do(func() {
		ctx := f.ctx
		nt := int(C.lm_gguf_get_n_tensors(ctx))
		f.tensors = make([]TensorInfo, nt)
		f.tindex = make(map[string]int, nt)
		var d C.struct_lm_gguf_tensor_desc
		for i := range nt {
			C.lm_gguf_get_tensor_desc(ctx, C.int(i), &d)
			ti := TensorInfo{
				Name:   C.GoString(d.name),
				Type:   TensorType(d._type),
				Shape:  make([]int64, int(d.n_dims)),
				Offset: int64(d.offset),
				Size:   int64(d.size),
			}
			for j := range ti.Shape {
				ti.Shape[j] = int64(d.ne[j])
			}
			f.tensors[i] = ti
			f.tindex[ti.Name] = i
		}
	})
}

// NumKV is the number of metadata entries.
func (f *File) NumKV() int {
	defer f.must()()
	return int(C.lm_gguf_get_n_kv(f.ctx))
}

// KVs describes the metadata entries in file order.
func (f *File) KVs() []KV {
	defer f.must()()
	f.index()
	return append([]KV(nil), f.kvs...)
}

// Keys returns the metadata keys in file order.
func (f *File) Keys() []string {
	defer f.must()()
	f.index()
	out := make([]string, len(f.kvs))
	for i, kv := range f.kvs {
		out[i] = kv.Key
	}
	return out
}

// Lookup describes the entry for key.
func (f *File) Lookup(key string) (KV, bool) {
	defer f.must()()
	return f.lookup(key)
}

// lookup is Lookup inside the gate.
func (f *File) lookup(key string) (KV, bool) {
	f.index()
	i, ok := f.keys[key]
	if !ok {
		return KV{}, false
	}
	return f.kvs[i], true
}

// Has reports whether key is present.
func (f *File) Has(key string) bool {
	defer f.must()()
	_, ok := f.lookup(key)
	return ok
}

// find is the index of key, of type want (inside the gate).
func (f *File) find(key string, want ValueType, wantName string) (int, error) {
	f.index()
	i, ok := f.keys[key]
	if !ok {
		return 0, fmt.Errorf("gguf: key %q: %w", key, ErrNotFound)
	}
	if kv := f.kvs[i]; kv.Type != want {
		return 0, &TypeError{Key: key, Have: kv.Type, HaveElem: kv.ArrayType, Want: wantName}
	}
	return i, nil
}

func scalar[T any](f *File, key string, want ValueType) (T, error) {
	var v T
	done, err := f.use()
	if err != nil {
		return v, err
	}
	defer done()
	i, err := f.find(key, want, want.String())
	if err != nil {
		return v, err
	}
	defer runtime.KeepAlive(f) // the C metadata must outlive the read
	return *(*T)(C.lm_gguf_get_val_data(f.ctx, C.int(i))), nil
}

func (f *File) Uint8(key string) (uint8, error)     { return scalar[uint8](f, key, TypeUint8) }
func (f *File) Int8(key string) (int8, error)       { return scalar[int8](f, key, TypeInt8) }
func (f *File) Uint16(key string) (uint16, error)   { return scalar[uint16](f, key, TypeUint16) }
func (f *File) Int16(key string) (int16, error)     { return scalar[int16](f, key, TypeInt16) }
func (f *File) Uint32(key string) (uint32, error)   { return scalar[uint32](f, key, TypeUint32) }
func (f *File) Int32(key string) (int32, error)     { return scalar[int32](f, key, TypeInt32) }
func (f *File) Uint64(key string) (uint64, error)   { return scalar[uint64](f, key, TypeUint64) }
func (f *File) Int64(key string) (int64, error)     { return scalar[int64](f, key, TypeInt64) }
func (f *File) Float32(key string) (float32, error) { return scalar[float32](f, key, TypeFloat32) }
func (f *File) Float64(key string) (float64, error) { return scalar[float64](f, key, TypeFloat64) }

// Bool returns a bool value (stored as one byte, validated to be 0 or 1).
func (f *File) Bool(key string) (bool, error) {
	v, err := scalar[uint8](f, key, TypeBool)
	return v != 0, err
}

// String returns a string value. GGUF strings are bytes; they are returned
// as stored, without UTF-8 validation.
func (f *File) String(key string) (string, error) {
	done, err := f.use()
	if err != nil {
		return "", err
	}
	defer done()
	i, err := f.find(key, TypeString, "str")
	if err != nil {
		return "", err
	}
	defer runtime.KeepAlive(f)
	var n C.size_t
	p := C.lm_gguf_get_val_str_n(f.ctx, C.int(i), &n)
	return C.GoStringN(p, C.int(n)), nil
}

// Int returns any integer value (u8 to i64) as int64, failing for u64
// values above math.MaxInt64.
func (f *File) Int(key string) (int64, error) {
	done, err := f.use()
	if err != nil {
		return 0, err
	}
	defer done()
	kv, ok := f.lookup(key)
	if !ok {
		return 0, fmt.Errorf("gguf: key %q: %w", key, ErrNotFound)
	}
	switch kv.Type {
	case TypeUint8:
		v, err := f.Uint8(key)
		return int64(v), err
	case TypeInt8:
		v, err := f.Int8(key)
		return int64(v), err
	case TypeUint16:
		v, err := f.Uint16(key)
		return int64(v), err
	case TypeInt16:
		v, err := f.Int16(key)
		return int64(v), err
	case TypeUint32:
		v, err := f.Uint32(key)
		return int64(v), err
	case TypeInt32:
		v, err := f.Int32(key)
		return int64(v), err
	case TypeInt64:
		return f.Int64(key)
	case TypeUint64:
		v, err := f.Uint64(key)
		if err == nil && v > math.MaxInt64 {
			return 0, fmt.Errorf("gguf: key %q: value %d overflows int64", key, v)
		}
		return int64(v), err
	}
	return 0, &TypeError{Key: key, Have: kv.Type, HaveElem: kv.ArrayType, Want: "an integer"}
}

// Uint returns any non-negative integer value as uint64.
func (f *File) Uint(key string) (uint64, error) {
	done, err := f.use()
	if err != nil {
		return 0, err
	}
	defer done()
	kv, ok := f.lookup(key)
	if ok && kv.Type == TypeUint64 {
		return f.Uint64(key)
	}
	v, err := f.Int(key)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("gguf: key %q: value %d is negative", key, v)
	}
	return uint64(v), nil
}

// Float returns an f32 or f64 value as float64.
func (f *File) Float(key string) (float64, error) {
	done, err := f.use()
	if err != nil {
		return 0, err
	}
	defer done()
	kv, ok := f.lookup(key)
	if ok && kv.Type == TypeFloat32 {
		v, err := f.Float32(key)
		return float64(v), err
	}
	return f.Float64(key)
}

func array[T any](f *File, key string, elem ValueType) ([]T, error) {
	done, err := f.use()
	if err != nil {
		return nil, err
	}
	defer done()
	i, err := f.find(key, TypeArray, "arr["+elem.String()+"]")
	if err != nil {
		return nil, err
	}
	kv := f.kvs[i]
	if kv.ArrayType != elem {
		return nil, &TypeError{Key: key, Have: kv.Type, HaveElem: kv.ArrayType, Want: "arr[" + elem.String() + "]"}
	}
	defer runtime.KeepAlive(f)
	out := make([]T, kv.Len)
	if kv.Len > 0 {
		p := C.lm_gguf_get_arr_data(f.ctx, C.int(i))
		copy(out, unsafe.Slice((*T)(p), kv.Len))
	}
	return out, nil
}

func (f *File) Uint8s(key string) ([]uint8, error)     { return array[uint8](f, key, TypeUint8) }
func (f *File) Int8s(key string) ([]int8, error)       { return array[int8](f, key, TypeInt8) }
func (f *File) Uint16s(key string) ([]uint16, error)   { return array[uint16](f, key, TypeUint16) }
func (f *File) Int16s(key string) ([]int16, error)     { return array[int16](f, key, TypeInt16) }
func (f *File) Uint32s(key string) ([]uint32, error)   { return array[uint32](f, key, TypeUint32) }
func (f *File) Int32s(key string) ([]int32, error)     { return array[int32](f, key, TypeInt32) }
func (f *File) Uint64s(key string) ([]uint64, error)   { return array[uint64](f, key, TypeUint64) }
func (f *File) Int64s(key string) ([]int64, error)     { return array[int64](f, key, TypeInt64) }
func (f *File) Float32s(key string) ([]float32, error) { return array[float32](f, key, TypeFloat32) }
func (f *File) Float64s(key string) ([]float64, error) { return array[float64](f, key, TypeFloat64) }

// Bools returns an array of bools.
func (f *File) Bools(key string) ([]bool, error) {
	b, err := array[uint8](f, key, TypeBool)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(b))
	for i, v := range b {
		out[i] = v != 0
	}
	return out, nil
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	done, err := f.use()
	if err != nil {
		return nil, err
	}
	defer done()
	i, err := f.find(key, TypeArray, "arr[str]")
	if err != nil {
		return nil, err
	}
	kv := f.kvs[i]
	if kv.ArrayType != TypeString {
		return nil, &TypeError{Key: key, Have: kv.Type, HaveElem: kv.ArrayType, Want: "arr[str]"}
	}
	defer runtime.KeepAlive(f)
	ptrs := unsafe.Slice(C.lm_gguf_get_arr_strs(f.ctx, C.int(i)), kv.Len+1)
	out := make([]string, kv.Len)
	for j := range out {
		n := uintptr(unsafe.Pointer(ptrs[j+1])) - uintptr(unsafe.Pointer(ptrs[j])) - 1
		out[j] = C.GoStringN(ptrs[j], C.int(n))
	}
	return out, nil
}

// Value returns the value of key as a Go value: uint8 ... float64, bool,
// string, or a slice of one of those for arrays.
func (f *File) Value(key string) (any, error) {
	done, err := f.use()
	if err != nil {
		return nil, err
	}
	defer done()
	kv, ok := f.lookup(key)
	if !ok {
		return nil, fmt.Errorf("gguf: key %q: %w", key, ErrNotFound)
	}
	t := kv.Type
	if t == TypeArray {
		switch kv.ArrayType {
		case TypeUint8:
			return f.Uint8s(key)
		case TypeInt8:
			return f.Int8s(key)
		case TypeUint16:
			return f.Uint16s(key)
		case TypeInt16:
			return f.Int16s(key)
		case TypeUint32:
			return f.Uint32s(key)
		case TypeInt32:
			return f.Int32s(key)
		case TypeUint64:
			return f.Uint64s(key)
		case TypeInt64:
			return f.Int64s(key)
		case TypeFloat32:
			return f.Float32s(key)
		case TypeFloat64:
			return f.Float64s(key)
		case TypeBool:
			return f.Bools(key)
		case TypeString:
			return f.Strings(key)
		}
	}
	switch t {
	case TypeUint8:
		return f.Uint8(key)
	case TypeInt8:
		return f.Int8(key)
	case TypeUint16:
		return f.Uint16(key)
	case TypeInt16:
		return f.Int16(key)
	case TypeUint32:
		return f.Uint32(key)
	case TypeInt32:
		return f.Int32(key)
	case TypeUint64:
		return f.Uint64(key)
	case TypeInt64:
		return f.Int64(key)
	case TypeFloat32:
		return f.Float32(key)
	case TypeFloat64:
		return f.Float64(key)
	case TypeBool:
		return f.Bool(key)
	case TypeString:
		return f.String(key)
	}
	return nil, fmt.Errorf("gguf: key %q: unexpected type %s", key, t)
}

// NumTensors is the number of tensors.
func (f *File) NumTensors() int {
	defer f.must()()
	return int(C.lm_gguf_get_n_tensors(f.ctx))
}

// Tensors describes the tensors in file order.
func (f *File) Tensors() []TensorInfo {
	defer f.must()()
	f.tensorIndex()
	out := make([]TensorInfo, len(f.tensors))
	for i, t := range f.tensors {
		t.Shape = append([]int64(nil), t.Shape...)
		out[i] = t
	}
	return out
}

// Tensor describes the tensor called name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	defer f.must()()
	f.tensorIndex()
	i, ok := f.tindex[name]
	if !ok {
		return TensorInfo{}, false
	}
	t := f.tensors[i]
	t.Shape = append([]int64(nil), t.Shape...)
	return t, true
}

// span locates the bytes of a tensor (inside the gate).
func (f *File) span(name string) (TensorInfo, int64, error) {
	f.tensorIndex()
	i, ok := f.tindex[name]
	if !ok {
		return TensorInfo{}, 0, fmt.Errorf("gguf: tensor %q: %w", name, ErrNotFound)
	}
	t := f.tensors[i]
	off := f.dataOffset() + t.Offset
	if off < 0 || off > f.size || t.Size > f.size-off {
		return t, 0, fmt.Errorf("gguf: tensor %q: bytes [%d, %d) lie past the end of the file (%d bytes): %w",
			name, off, off+t.Size, f.size, ErrNoData)
	}
	return t, off, nil
}

// TensorData returns the bytes of the tensor called name. For files opened
// with Open or OpenBytes this is a slice of the mapping (no copy), read-only
// and valid until Close (after which it reads as zeros; see Close); for
// OpenReader it is a fresh copy.
func (f *File) TensorData(name string) ([]byte, error) {
	done, err := f.use()
	if err != nil {
		return nil, err
	}
	defer done()
	b, err := f.tensorData(name)
	if err == nil && f.res.mem != nil {
		f.res.mem.exposed.Store(true)
	}
	return b, err
}

func init() {
	link.GGUFTensorView = func(file any, name string) ([]byte, error) {
		f := file.(*File)
		done, err := f.use()
		if err != nil {
			return nil, err
		}
		defer done()
		return f.tensorData(name)
	}
}

// tensorData is TensorData without marking the mapping as lent (inside
// the gate).
func (f *File) tensorData(name string) ([]byte, error) {
	t, off, err := f.span(name)
	if err != nil {
		return nil, err
	}
	if f.data != nil {
		return f.data[off : off+t.Size : off+t.Size], nil
	}
	if int64(int(t.Size)) != t.Size {
		return nil, fmt.Errorf("gguf: tensor %q: %d bytes do not fit in memory", name, t.Size)
	}
	b := make([]byte, t.Size)
	if _, err := readFull(f.ra, b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// TensorReader streams the bytes of the tensor called name. After Close its
// reads return ErrClosed.
func (f *File) TensorReader(name string) (*io.SectionReader, error) {
	done, err := f.use()
	if err != nil {
		return nil, err
	}
	defer done()
	t, off, err := f.span(name)
	if err != nil {
		return nil, err
	}
	return io.NewSectionReader(fileReaderAt{f}, off, t.Size), nil
}

// fileReaderAt reads the file's bytes while it is open.
type fileReaderAt struct{ f *File }

func (r fileReaderAt) ReadAt(p []byte, off int64) (int, error) {
	f := r.f
	done, err := f.use()
	if err != nil {
		return 0, err
	}
	defer done()
	if f.data == nil {
		return f.ra.ReadAt(p, off)
	}
	if off < 0 || off > int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
