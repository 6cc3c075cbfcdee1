package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
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
	out  io.Writer
	bw   *bufio.Writer
	file *os.File
	path string // final name (Create only)
	tmp  string // temporary file (Create only)

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

// Create starts writing a GGUF file at path (atomically, see Writer).
func Create(path string) (*Writer, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	w := NewWriter(f)
	w.file, w.path, w.tmp = f, path, f.Name()
	return w, nil
}

// NewWriter writes a GGUF file to out. Close flushes but does not close out.
func NewWriter(out io.Writer) *Writer {
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
		w.file.Close()
		os.Remove(w.tmp)
		w.file = nil
	}
}

func (w *Writer) usable(op string) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("gguf: %s: writer is closed", op)
	}
	return nil
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
		w.kvs[i] = wkv{key, typ, payload}
		return nil
	}
	w.keyIdx[key] = len(w.kvs)
	w.kvs = append(w.kvs, wkv{key, typ, payload})
	return nil
}

// Remove deletes key if present.
func (w *Writer) Remove(key string) error {
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
// bool, string, or a slice of one of those.
func (w *Writer) Set(key string, v any) error {
	switch x := v.(type) {
	case uint8:
		return w.SetUint8(key, x)
	case int8:
		return w.SetInt8(key, x)
	case uint16:
		return w.SetUint16(key, x)
	case int16:
		return w.SetInt16(key, x)
	case uint32:
		return w.SetUint32(key, x)
	case int32:
		return w.SetInt32(key, x)
	case uint64:
		return w.SetUint64(key, x)
	case int64:
		return w.SetInt64(key, x)
	case float32:
		return w.SetFloat32(key, x)
	case float64:
		return w.SetFloat64(key, x)
	case bool:
		return w.SetBool(key, x)
	case string:
		return w.SetString(key, x)
	case []uint8:
		return w.SetUint8s(key, x)
	case []int8:
		return w.SetInt8s(key, x)
	case []uint16:
		return w.SetUint16s(key, x)
	case []int16:
		return w.SetInt16s(key, x)
	case []uint32:
		return w.SetUint32s(key, x)
	case []int32:
		return w.SetInt32s(key, x)
	case []uint64:
		return w.SetUint64s(key, x)
	case []int64:
		return w.SetInt64s(key, x)
	case []float32:
		return w.SetFloat32s(key, x)
	case []float64:
		return w.SetFloat64s(key, x)
	case []bool:
		return w.SetBools(key, x)
	case []string:
		return w.SetStrings(key, x)
	}
	return fmt.Errorf("gguf: key %q: unsupported value type %T", key, v)
}

// CopyKVs copies every metadata entry of f, in file order (e.g. to rewrite
// a model with other tensors).
func (w *Writer) CopyKVs(f *File) error {
	for _, kv := range f.KVs() {
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

// AddTensor adds a tensor with its data (len(data) must be its exact size).
// The slice is written in turn, not copied: keep it unchanged until Close.
func (w *Writer) AddTensor(name string, typ TensorType, shape []int64, data []byte) error {
	return w.declare(name, typ, shape, data, true)
}

// DeclareTensor adds a tensor whose data will be given by WriteTensorData
// or WriteTensorFrom.
func (w *Writer) DeclareTensor(name string, typ TensorType, shape []int64) error {
	return w.declare(name, typ, shape, nil, false)
}

func pad(n, align int64) int64 { return (n + align - 1) / align * align }

// MetaSize is the size of the metadata block as declared so far (header,
// kvs, tensor infos and padding): the file offset of the data section.
func (w *Writer) MetaSize() int64 { return int64(len(w.meta())) }

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
// it into place. Every declared tensor must have been written.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	if w.err != nil {
		w.closed = true
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
	w.closed = true
	if w.file == nil {
		return nil
	}
	f := w.file
	if err := f.Sync(); err != nil {
		return w.fail(fmt.Errorf("gguf: sync %s: %w", w.tmp, err))
	}
	if err := f.Close(); err != nil {
		w.file = nil
		os.Remove(w.tmp)
		return w.fail(fmt.Errorf("gguf: close %s: %w", w.tmp, err))
	}
	w.file = nil
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
