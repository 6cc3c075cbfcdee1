package gguf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Writer writes a GGUF file (version 3). Metadata and tensor infos are
// collected first; the metadata block is written when the first tensor's
// data is written (or at Close), then tensor data follows in declaration
// order, each tensor padded to the alignment. The bytes are the same as the
// C writer's (lm_gguf_write_to_file) for the same keys and tensors in the
// same order, except that a general.alignment key is honoured.
//
// Two ways to give tensor data:
//   - AddTensor(name, type, shape, data): the slice is kept (not copied)
//     and written in turn; do not modify it before Close.
//   - DeclareTensor(name, type, shape), then WriteTensorData or
//     WriteTensorFrom for each declared tensor in declaration order, so a
//     model never has to be in memory all at once.
//
// Every method returns the first error again once one occurred. A Writer
// from Create writes to a temporary file in the target's directory and
// renames it into place only when Close succeeds; Abort, or any error,
// removes the temporary file, so a failed write never leaves a partial file
// under the final name.
type Writer struct {
	// mu serializes the methods: a Writer is used by one goroutine at a
	// time, but Close or Abort from another must not corrupt it.
	mu   sync.Mutex
	out  io.Writer
	bw   *bufio.Writer
	file *os.File
	path string // final name (Create only)
	tmp  string // temporary file (Create only)

	tmpCleanup runtime.Cleanup // removes tmp if the Writer is dropped unfinished

	kvs    []wkv
	keyIdx map[string]int
	align  int64

	tensors []wtensor
	tIdx    map[string]int

	started bool  // metadata block written
	next    int   // first tensor whose data is not written yet
	pos     int64 // bytes written into the data section
	err     error
	closed  bool
}

type wkv struct {
	key     string
	typ     ValueType
	payload []byte // encoded value, after the type id
}

type wtensor struct {
	name   string
	typ    TensorType
	shape  []int64
	size   int64
	offset int64
	data   []byte
	given  bool // data supplied with AddTensor
}

// Create starts writing a GGUF file at path (atomically, see Writer). The
// file gets the permissions os.Create gives (0666 before the umask). If the
// Writer is dropped without Close or Abort, the garbage collector removes its
// temporary file.
func Create(path string) (*Writer, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return nil, fmt.Errorf("gguf: create %q: no file name", path)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("gguf: create %s: is a directory", path)
	}
	f, err := createTemp(dir, "."+base+".tmp-")
	if err != nil {
		// named by the path asked for, not the temporary file's
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("gguf: create %s: %w", path, err)
	}
	w := NewWriter(f)
	w.file, w.path, w.tmp = f, path, f.Name()
	w.tmpCleanup = runtime.AddCleanup(w, removeTemp, tempFile{f, f.Name()})
	return w, nil
}

// createTemp is os.CreateTemp with the permissions of os.Create.
func createTemp(dir, prefix string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}

// tempFile is the temporary file of an unfinished Writer.
type tempFile struct {
	f    *os.File
	name string
}

func removeTemp(t tempFile) {
	t.f.Close()
	os.Remove(t.name)
}

// NewWriter writes a GGUF file to out. Close flushes but does not close out.
// A nil out gives a Writer whose methods fail.
func NewWriter(out io.Writer) *Writer {
	if out == nil {
		return &Writer{err: errors.New("gguf: NewWriter: nil io.Writer"), keyIdx: map[string]int{}, tIdx: map[string]int{}, align: DefaultAlignment}
	}
	return &Writer{
		out:    out,
		bw:     bufio.NewWriterSize(out, 1<<20),
		keyIdx: map[string]int{},
		tIdx:   map[string]int{},
		align:  DefaultAlignment,
	}
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
		w.cleanup()
	}
	return err
}

func (w *Writer) cleanup() {
	if w.file != nil {
		w.tmpCleanup.Stop()
		w.file.Close()
		os.Remove(w.tmp)
		w.file = nil
	}
}

// writerClosed is the error of op on a closed (or aborted, or nil) Writer;
// cause is the error that ended it, if one did (a failed write or Close,
// Abort).
type writerClosed struct {
	op    string
	cause error
}

func (e *writerClosed) Error() string {
	if e.cause != nil {
		return "gguf: " + e.op + ": writer is closed (" + e.cause.Error() + ")"
	}
	return "gguf: " + e.op + ": writer is closed"
}
func (e *writerClosed) Is(target error) bool { return target == ErrClosed }
func (e *writerClosed) Unwrap() error        { return e.cause }

// closedAgain is what Close returns after a first Close that failed: that
// first error again, which is now also ErrClosed.
type closedAgain struct{ first error }

func (e *closedAgain) Error() string   { return e.first.Error() }
func (e *closedAgain) Unwrap() []error { return []error{e.first, ErrClosed} }

// lock locks w for op, failing with ErrClosed for a nil Writer.
func (w *Writer) lock(op string) error {
	if w == nil {
		return &writerClosed{op: op}
	}
	w.mu.Lock()
	return nil
}

func (w *Writer) usable(op string) error {
	if w.closed {
		return &writerClosed{op, w.err}
	}
	return w.err
}

func (w *Writer) collecting(op string) error {
	if err := w.usable(op); err != nil {
		return err
	}
	if w.started {
		return fmt.Errorf("gguf: %s: metadata already written", op)
	}
	return nil
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("gguf: empty key")
	}
	if !utf8.ValidString(key) || strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("gguf: key %q is not valid UTF-8 without NUL bytes", key)
	}
	return nil
}

// set records key = (typ, payload); an existing key keeps its position.
func (w *Writer) set(key string, typ ValueType, payload []byte) error {
	if err := w.lock("Set"); err != nil {
		return err
	}
	defer w.mu.Unlock()
	if err := w.collecting("Set"); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	if key == "general.alignment" {
		if typ != TypeUint32 {
			return fmt.Errorf("gguf: general.alignment must be a u32, not %s", typ)
		}
		a := binary.LittleEndian.Uint32(payload)
		if a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: general.alignment %d is not a power of two", a)
		}
		w.align = int64(a)
	}
	if i, ok := w.keyIdx[key]; ok {
		old := w.kvs[i]
		if old.typ != typ || (typ == TypeArray && !bytes.Equal(old.payload[:4], payload[:4])) {
			return fmt.Errorf("gguf: key %q is already set as %s, not %s (Remove it first to change its type): %w",
				key, kvTypeName(old.typ, old.payload), kvTypeName(typ, payload), ErrType)
		}
		w.kvs[i] = wkv{key, typ, payload}
		return nil
	}
	w.keyIdx[key] = len(w.kvs)
	w.kvs = append(w.kvs, wkv{key, typ, payload})
	return nil
}

// kvTypeName names an encoded value's type: "u32", "arr[str]", ...
func kvTypeName(typ ValueType, payload []byte) string {
	if typ == TypeArray && len(payload) >= 4 {
		return "arr[" + ValueType(binary.LittleEndian.Uint32(payload)).String() + "]"
	}
	return typ.String()
}

// Remove deletes key if present.
func (w *Writer) Remove(key string) error {
	if err := w.lock("Remove"); err != nil {
		return err
	}
	defer w.mu.Unlock()
	if err := w.collecting("Remove"); err != nil {
		return err
	}
	i, ok := w.keyIdx[key]
	if !ok {
		return nil
	}
	w.kvs = append(w.kvs[:i], w.kvs[i+1:]...)
	delete(w.keyIdx, key)
	for j := i; j < len(w.kvs); j++ {
		w.keyIdx[w.kvs[j].key] = j
	}
	if key == "general.alignment" {
		w.align = DefaultAlignment
	}
	return nil
}

// SetAlignment sets general.alignment (a power of two), which the writer
// applies to the data section.
func (w *Writer) SetAlignment(n int) error {
	if n <= 0 || n > math.MaxUint32 || n&(n-1) != 0 {
		return fmt.Errorf("gguf: alignment %d is not a power of two", n)
	}
	return w.SetUint32("general.alignment", uint32(n))
}

type number interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~uint64 | ~int64 | ~float32 | ~float64
}

func appendNum[T number](b []byte, v T) []byte {
	switch x := any(v).(type) {
	case uint8:
		return append(b, x)
	case int8:
		return append(b, byte(x))
	case uint16:
		return binary.LittleEndian.AppendUint16(b, x)
	case int16:
		return binary.LittleEndian.AppendUint16(b, uint16(x))
	case uint32:
		return binary.LittleEndian.AppendUint32(b, x)
	case int32:
		return binary.LittleEndian.AppendUint32(b, uint32(x))
	case uint64:
		return binary.LittleEndian.AppendUint64(b, x)
	case int64:
		return binary.LittleEndian.AppendUint64(b, uint64(x))
	case float32:
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	case float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	panic("unreachable")
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

func setNum[T number](w *Writer, key string, typ ValueType, v T) error {
	return w.set(key, typ, appendNum(nil, v))
}

func setNums[T number](w *Writer, key string, elem ValueType, v []T) error {
	if uint64(len(v)) > math.MaxInt32 {
		return fmt.Errorf("gguf: key %q: array of %d values is too long", key, len(v))
	}
	b := make([]byte, 0, 12+len(v)*elem.Size())
	b = binary.LittleEndian.AppendUint32(b, uint32(elem))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(v)))
	for _, x := range v {
		b = appendNum(b, x)
	}
	return w.set(key, TypeArray, b)
}

func (w *Writer) SetUint8(key string, v uint8) error     { return setNum(w, key, TypeUint8, v) }
func (w *Writer) SetInt8(key string, v int8) error       { return setNum(w, key, TypeInt8, v) }
func (w *Writer) SetUint16(key string, v uint16) error   { return setNum(w, key, TypeUint16, v) }
func (w *Writer) SetInt16(key string, v int16) error     { return setNum(w, key, TypeInt16, v) }
func (w *Writer) SetUint32(key string, v uint32) error   { return setNum(w, key, TypeUint32, v) }
func (w *Writer) SetInt32(key string, v int32) error     { return setNum(w, key, TypeInt32, v) }
func (w *Writer) SetUint64(key string, v uint64) error   { return setNum(w, key, TypeUint64, v) }
func (w *Writer) SetInt64(key string, v int64) error     { return setNum(w, key, TypeInt64, v) }
func (w *Writer) SetFloat32(key string, v float32) error { return setNum(w, key, TypeFloat32, v) }
func (w *Writer) SetFloat64(key string, v float64) error { return setNum(w, key, TypeFloat64, v) }

func (w *Writer) SetBool(key string, v bool) error {
	var b uint8
	if v {
		b = 1
	}
	return setNum(w, key, TypeBool, b)
}

// SetString sets a string value (any bytes; GGUF strings are meant to be UTF-8).
func (w *Writer) SetString(key string, v string) error {
	return w.set(key, TypeString, appendStr(nil, v))
}

func (w *Writer) SetUint8s(key string, v []uint8) error     { return setNums(w, key, TypeUint8, v) }
func (w *Writer) SetInt8s(key string, v []int8) error       { return setNums(w, key, TypeInt8, v) }
func (w *Writer) SetUint16s(key string, v []uint16) error   { return setNums(w, key, TypeUint16, v) }
func (w *Writer) SetInt16s(key string, v []int16) error     { return setNums(w, key, TypeInt16, v) }
func (w *Writer) SetUint32s(key string, v []uint32) error   { return setNums(w, key, TypeUint32, v) }
func (w *Writer) SetInt32s(key string, v []int32) error     { return setNums(w, key, TypeInt32, v) }
func (w *Writer) SetUint64s(key string, v []uint64) error   { return setNums(w, key, TypeUint64, v) }
func (w *Writer) SetInt64s(key string, v []int64) error     { return setNums(w, key, TypeInt64, v) }
func (w *Writer) SetFloat32s(key string, v []float32) error { return setNums(w, key, TypeFloat32, v) }
func (w *Writer) SetFloat64s(key string, v []float64) error { return setNums(w, key, TypeFloat64, v) }

func (w *Writer) SetBools(key string, v []bool) error {
	b := make([]uint8, len(v))
	for i, x := range v {
		if x {
			b[i] = 1
		}
	}
	return setNums(w, key, TypeBool, b)
}

func (w *Writer) SetStrings(key string, v []string) error {
	if uint64(len(v)) > math.MaxInt32 {
		return fmt.Errorf("gguf: key %q: array of %d strings is too long", key, len(v))
	}
	n := 12
	for _, s := range v {
		n += 8 + len(s)
	}
	b := make([]byte, 0, n)
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeString))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(v)))
	for _, s := range v {
		b = appendStr(b, s)
	}
	return w.set(key, TypeArray, b)
}

// Set stores v with the type that matches its Go type: uint8 ... float64,
// bool, string, or a slice of one of those; int and uint (and uintptr) are
// stored as i64 and u64, which hold every value; named types count as their
// underlying type.
//
// Setting a key again replaces its value and keeps its position, as setting
// a map entry does: copying a model's metadata (CopyKVs) and then changing a
// few entries is the common use. Changing the type of a key is an error
// wrapping ErrType (Remove it first): readers check the types of the keys
// they know, so a silent change (e.g. a u32 that becomes an i64 because the
// new value was an int) would make the file unreadable to them. The typed
// setters (SetUint32, ...) follow the same rule.
func (w *Writer) Set(key string, v any) error {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Uint8:
		return w.SetUint8(key, uint8(rv.Uint()))
	case reflect.Int8:
		return w.SetInt8(key, int8(rv.Int()))
	case reflect.Uint16:
		return w.SetUint16(key, uint16(rv.Uint()))
	case reflect.Int16:
		return w.SetInt16(key, int16(rv.Int()))
	case reflect.Uint32:
		return w.SetUint32(key, uint32(rv.Uint()))
	case reflect.Int32:
		return w.SetInt32(key, int32(rv.Int()))
	case reflect.Uint64, reflect.Uint, reflect.Uintptr:
		return w.SetUint64(key, rv.Uint())
	case reflect.Int64, reflect.Int:
		return w.SetInt64(key, rv.Int())
	case reflect.Float32:
		return w.SetFloat32(key, float32(rv.Float()))
	case reflect.Float64:
		return w.SetFloat64(key, rv.Float())
	case reflect.Bool:
		return w.SetBool(key, rv.Bool())
	case reflect.String:
		return w.SetString(key, rv.String())
	case reflect.Slice, reflect.Array:
		return w.setSlice(key, rv)
	}
	return fmt.Errorf("gguf: key %q: unsupported value type %T", key, v)
}

// setSlice is Set for slices and arrays, converting named element types.
func (w *Writer) setSlice(key string, rv reflect.Value) error {
	n := rv.Len()
	switch rv.Type().Elem().Kind() {
	case reflect.Uint8:
		return w.SetUint8s(key, convertSlice(rv, n, func(e reflect.Value) uint8 { return uint8(e.Uint()) }))
	case reflect.Int8:
		return w.SetInt8s(key, convertSlice(rv, n, func(e reflect.Value) int8 { return int8(e.Int()) }))
	case reflect.Uint16:
		return w.SetUint16s(key, convertSlice(rv, n, func(e reflect.Value) uint16 { return uint16(e.Uint()) }))
	case reflect.Int16:
		return w.SetInt16s(key, convertSlice(rv, n, func(e reflect.Value) int16 { return int16(e.Int()) }))
	case reflect.Uint32:
		return w.SetUint32s(key, convertSlice(rv, n, func(e reflect.Value) uint32 { return uint32(e.Uint()) }))
	case reflect.Int32:
		return w.SetInt32s(key, convertSlice(rv, n, func(e reflect.Value) int32 { return int32(e.Int()) }))
	case reflect.Uint64, reflect.Uint, reflect.Uintptr:
		return w.SetUint64s(key, convertSlice(rv, n, func(e reflect.Value) uint64 { return e.Uint() }))
	case reflect.Int64, reflect.Int:
		return w.SetInt64s(key, convertSlice(rv, n, func(e reflect.Value) int64 { return e.Int() }))
	case reflect.Float32:
		return w.SetFloat32s(key, convertSlice(rv, n, func(e reflect.Value) float32 { return float32(e.Float()) }))
	case reflect.Float64:
		return w.SetFloat64s(key, convertSlice(rv, n, func(e reflect.Value) float64 { return e.Float() }))
	case reflect.Bool:
		return w.SetBools(key, convertSlice(rv, n, func(e reflect.Value) bool { return e.Bool() }))
	case reflect.String:
		return w.SetStrings(key, convertSlice(rv, n, func(e reflect.Value) string { return e.String() }))
	}
	return fmt.Errorf("gguf: key %q: unsupported value type %s", key, rv.Type())
}

func convertSlice[T any](rv reflect.Value, n int, conv func(reflect.Value) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = conv(rv.Index(i))
	}
	return out
}

// CopyKVs copies every metadata entry of f, in file order (e.g. to rewrite
// a model with other tensors).
func (w *Writer) CopyKVs(f *File) error {
	done, err := f.use()
	if err != nil {
		return err
	}
	defer done()
	f.index()
	for _, kv := range f.kvs {
		v, err := f.Value(kv.Key)
		if err != nil {
			return err
		}
		if err := w.Set(kv.Key, v); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) declare(name string, typ TensorType, shape []int64, data []byte, given bool) error {
	if err := w.lock("AddTensor"); err != nil {
		return err
	}
	defer w.mu.Unlock()
	if err := w.collecting("AddTensor"); err != nil {
		return err
	}
	if len(name) > MaxNameLen || strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("gguf: tensor name %q: more than %d bytes or a NUL byte", name, MaxNameLen)
	}
	if _, dup := w.tIdx[name]; dup {
		return fmt.Errorf("gguf: duplicate tensor name %q", name)
	}
	size, err := tensorBytes(typ, shape)
	if err != nil {
		return fmt.Errorf("gguf: tensor %q: %v", name, err)
	}
	if given && int64(len(data)) != size {
		return fmt.Errorf("gguf: tensor %q: %s %v holds %d bytes, got %d", name, typ, shape, size, len(data))
	}
	w.tIdx[name] = len(w.tensors)
	w.tensors = append(w.tensors, wtensor{name: name, typ: typ, shape: append([]int64(nil), shape...),
		size: size, data: data, given: given})
	return nil
}

// AddTensor adds a tensor with its data, whose size must be the tensor's
// exact size. data is a []byte of the encoded tensor (any type), or a slice
// of the Go type of the elements of a plain type: []float32 (f32), []float64
// (f64), []int8 (i8), []int16 (i16), []int32 (i32), []int64 (i64), []uint16
// (the bits of f16 or bf16). Quantized tensors take []byte (see
// ggml.Quantize). The slice is written in turn, not copied: keep it
// unchanged until Close.
func (w *Writer) AddTensor(name string, typ TensorType, shape []int64, data any) error {
	b, err := tensorDataBytes(typ, data)
	if err != nil {
		if err := w.lock("AddTensor"); err != nil {
			return err
		}
		defer w.mu.Unlock()
		if err := w.usable("AddTensor"); err != nil {
			return err
		}
		return fmt.Errorf("gguf: tensor %q: %v", name, err)
	}
	return w.declare(name, typ, shape, b, true)
}

// tensorDataBytes views data, AddTensor's argument, as bytes.
func tensorDataBytes(typ TensorType, data any) ([]byte, error) {
	var elems []TensorType // the tensor types the Go element type encodes
	var b []byte
	switch d := data.(type) {
	case []byte:
		return d, nil
	case nil:
		return nil, nil
	case []int8:
		elems, b = []TensorType{TensorI8}, sliceBytes(d)
	case []int16:
		elems, b = []TensorType{TensorI16}, sliceBytes(d)
	case []uint16:
		elems, b = []TensorType{TensorF16, TensorBF16}, sliceBytes(d)
	case []int32:
		elems, b = []TensorType{TensorI32}, sliceBytes(d)
	case []int64:
		elems, b = []TensorType{TensorI64}, sliceBytes(d)
	case []float32:
		elems, b = []TensorType{TensorF32}, sliceBytes(d)
	case []float64:
		elems, b = []TensorType{TensorF64}, sliceBytes(d)
	default:
		return nil, fmt.Errorf("unsupported data type %T (want []byte or a slice of the element type)", data)
	}
	if !slices.Contains(elems, typ) {
		return nil, fmt.Errorf("%T data cannot hold a %s tensor (give its bytes as []byte)", data, typ)
	}
	if !littleEndian {
		return nil, fmt.Errorf("%T data on a big-endian host: give the little-endian bytes as []byte", data)
	}
	return b, nil
}

// sliceBytes views the memory of s as bytes (no copy).
func sliceBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// littleEndian is whether the host stores numbers as GGUF does.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// DeclareTensor adds a tensor whose data will be given by WriteTensorData
// or WriteTensorFrom.
func (w *Writer) DeclareTensor(name string, typ TensorType, shape []int64) error {
	return w.declare(name, typ, shape, nil, false)
}

func pad(n, align int64) int64 { return (n + align - 1) / align * align }

// MetaSize is the size of the metadata block as declared so far (header,
// kvs, tensor infos and padding): the file offset of the data section.
// It is 0 for a nil Writer.
func (w *Writer) MetaSize() int64 {
	if w.lock("MetaSize") != nil {
		return 0
	}
	defer w.mu.Unlock()
	return int64(len(w.meta()))
}

func (w *Writer) meta() []byte {
	var off int64
	for i := range w.tensors {
		w.tensors[i].offset = off
		off += pad(w.tensors[i].size, w.align)
	}
	b := []byte("GGUF")
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(w.tensors)))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		b = appendStr(b, kv.key)
		b = binary.LittleEndian.AppendUint32(b, uint32(kv.typ))
		b = append(b, kv.payload...)
	}
	for _, t := range w.tensors {
		b = appendStr(b, t.name)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.shape)))
		for _, d := range t.shape {
			b = binary.LittleEndian.AppendUint64(b, uint64(d))
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(t.typ))
		b = binary.LittleEndian.AppendUint64(b, uint64(t.offset))
	}
	return append(b, make([]byte, pad(int64(len(b)), w.align)-int64(len(b)))...)
}

func (w *Writer) start() error {
	if w.started {
		return nil
	}
	w.started = true
	if _, err := w.bw.Write(w.meta()); err != nil {
		return w.fail(fmt.Errorf("gguf: writing metadata: %w", err))
	}
	return nil
}

var zeros [4096]byte

func (w *Writer) writeZeros(n int64) error {
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if _, err := w.bw.Write(zeros[:k]); err != nil {
			return w.fail(fmt.Errorf("gguf: writing: %w", err))
		}
		n -= k
	}
	return nil
}

// flushGiven writes the data of AddTensor tensors up to (not including)
// tensor `upto`, failing at a declared tensor that has not been written.
func (w *Writer) flushGiven(upto int) error {
	for ; w.next < upto; w.next++ {
		t := &w.tensors[w.next]
		if !t.given {
			return w.fail(fmt.Errorf("gguf: tensor %q has no data (WriteTensorData must follow declaration order)", t.name))
		}
		if _, err := w.bw.Write(t.data); err != nil {
			return w.fail(fmt.Errorf("gguf: writing tensor %q: %w", t.name, err))
		}
		t.data = nil
		if err := w.endTensor(t); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) endTensor(t *wtensor) error {
	w.pos = t.offset + pad(t.size, w.align)
	return w.writeZeros(pad(t.size, w.align) - t.size)
}

func (w *Writer) dueTensor(op, name string) (*wtensor, error) {
	if err := w.usable(op); err != nil {
		return nil, err
	}
	i, ok := w.tIdx[name]
	if !ok {
		return nil, fmt.Errorf("gguf: %s: tensor %q: %w", op, name, ErrNotFound)
	}
	t := &w.tensors[i]
	if t.given || i < w.next {
		return nil, fmt.Errorf("gguf: %s: tensor %q already has its data", op, name)
	}
	if err := w.start(); err != nil {
		return nil, err
	}
	if err := w.flushGiven(i); err != nil {
		return nil, err
	}
	return t, nil
}

// WriteTensorData writes the data of a declared tensor. Declared tensors
// must be written in declaration order.
func (w *Writer) WriteTensorData(name string, data []byte) error {
	if err := w.lock("WriteTensorData"); err != nil {
		return err
	}
	defer w.mu.Unlock()
	t, err := w.dueTensor("WriteTensorData", name)
	if err != nil {
		return err
	}
	if int64(len(data)) != t.size {
		// nothing of this tensor is written yet, so the writer stays usable
		return fmt.Errorf("gguf: tensor %q holds %d bytes, got %d", name, t.size, len(data))
	}
	if _, err := w.bw.Write(data); err != nil {
		return w.fail(fmt.Errorf("gguf: writing tensor %q: %w", name, err))
	}
	w.next++
	return w.endTensor(t)
}

// WriteTensorFrom copies exactly the size of a declared tensor from r.
func (w *Writer) WriteTensorFrom(name string, r io.Reader) error {
	if err := w.lock("WriteTensorFrom"); err != nil {
		return err
	}
	defer w.mu.Unlock()
	t, err := w.dueTensor("WriteTensorFrom", name)
	if err != nil {
		return err
	}
	n, err := io.CopyN(w.bw, r, t.size)
	if err != nil {
		return w.fail(fmt.Errorf("gguf: tensor %q: copied %d of %d bytes: %w", name, n, t.size, err))
	}
	w.next++
	return w.endTensor(t)
}

// Close writes whatever remains and, for Create, syncs the file and renames
// it into place. Every declared tensor must have been written. Close is
// idempotent: it returns its first result again (an error then also wraps
// ErrClosed); afterwards, whether Close succeeded or failed, the other
// methods return an error wrapping ErrClosed (and the error that ended the
// writer, if one did).
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		if w.err != nil {
			return &closedAgain{w.err}
		}
		return nil
	}
	defer func() { w.closed = true }()
	if w.err != nil {
		return w.err
	}
	if err := w.start(); err != nil {
		return err
	}
	if err := w.flushGiven(len(w.tensors)); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return w.fail(fmt.Errorf("gguf: writing: %w", err))
	}
	if w.file == nil {
		return nil
	}
	f := w.file
	if err := f.Sync(); err != nil {
		return w.fail(fmt.Errorf("gguf: sync %s: %w", w.tmp, err))
	}
	if err := f.Close(); err != nil {
		w.file = nil
		w.tmpCleanup.Stop()
		os.Remove(w.tmp)
		return w.fail(fmt.Errorf("gguf: close %s: %w", w.tmp, err))
	}
	w.file = nil
	w.tmpCleanup.Stop()
	if err := os.Rename(w.tmp, w.path); err != nil {
		os.Remove(w.tmp)
		return w.fail(fmt.Errorf("gguf: %w", err))
	}
	syncDir(filepath.Dir(w.path))
	return nil
}

// Abort stops writing; for Create the temporary file is removed and nothing
// appears under the final name.
func (w *Writer) Abort() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		w.fail(errors.New("gguf: writer aborted"))
	}
}

// syncDir makes the rename durable where directories can be synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
