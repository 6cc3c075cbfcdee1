package gguf

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/internal/shareddata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type expKV struct {
	Key       string          `json:"key"`
	Type      string          `json:"type"`
	ArrayType string          `json:"array_type"`
	Value     json.RawMessage `json:"value"`
}

type expTensor struct {
	Name   string  `json:"name"`
	TypeID uint32  `json:"type_id"`
	Ne     []int64 `json:"ne"`
	NDims  int     `json:"n_dims"`
	Offset int64   `json:"offset"`
	NBytes int64   `json:"nbytes"`
	SHA256 *string `json:"sha256"`
}

type expFile struct {
	Version    int         `json:"version"`
	Alignment  int         `json:"alignment"`
	DataOffset int64       `json:"data_offset"`
	FileSize   int64       `json:"file_size"`
	KV         []expKV     `json:"kv"`
	Tensors    []expTensor `json:"tensors"`
}

func loadExp(t *testing.T, path string) expFile {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var e expFile
	require.NoError(t, json.Unmarshal(b, &e))
	return e
}

var typeByName = map[string]ValueType{}

func init() {
	for t := ValueType(0); t < typeCount; t++ {
		typeByName[t.String()] = t
	}
}

// jsonValue decodes one JSON scalar to the Go value the reader returns.
func jsonValue(t *testing.T, typ ValueType, raw json.RawMessage) any {
	t.Helper()
	var num json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	switch x := v.(type) {
	case json.Number:
		num = x
	case string:
		num = json.Number(x) // 64-bit integers are decimal strings
		if typ == TypeString {
			return x
		}
	case bool:
		return x
	}
	pi := func(bits int) int64 {
		n, err := strconv.ParseInt(string(num), 10, bits)
		require.NoError(t, err)
		return n
	}
	pu := func(bits int) uint64 {
		n, err := strconv.ParseUint(string(num), 10, bits)
		require.NoError(t, err)
		return n
	}
	switch typ {
	case TypeUint8:
		return uint8(pu(8))
	case TypeInt8:
		return int8(pi(8))
	case TypeUint16:
		return uint16(pu(16))
	case TypeInt16:
		return int16(pi(16))
	case TypeUint32:
		return uint32(pu(32))
	case TypeInt32:
		return int32(pi(32))
	case TypeUint64:
		return pu(64)
	case TypeInt64:
		return pi(64)
	case TypeFloat32:
		f, err := strconv.ParseFloat(string(num), 32)
		require.NoError(t, err)
		return float32(f)
	case TypeFloat64:
		f, err := strconv.ParseFloat(string(num), 64)
		require.NoError(t, err)
		return f
	}
	t.Fatalf("unexpected type %s", typ)
	return nil
}

// expectedValue is the Go value (as File.Value returns it) that kv describes.
func expectedValue(t *testing.T, kv expKV) any {
	typ := typeByName[kv.Type]
	if typ != TypeArray {
		return jsonValue(t, typ, kv.Value)
	}
	elem := typeByName[kv.ArrayType]
	var raws []json.RawMessage
	require.NoError(t, json.Unmarshal(kv.Value, &raws))
	vals := make([]any, len(raws))
	for i, r := range raws {
		vals[i] = jsonValue(t, elem, r)
	}
	return sliceOf(elem, vals)
}

func sliceOf(elem ValueType, vals []any) any {
	conv := func(dst any) any {
		for i, v := range vals {
			switch d := dst.(type) {
			case []uint8:
				d[i] = v.(uint8)
			case []int8:
				d[i] = v.(int8)
			case []uint16:
				d[i] = v.(uint16)
			case []int16:
				d[i] = v.(int16)
			case []uint32:
				d[i] = v.(uint32)
			case []int32:
				d[i] = v.(int32)
			case []uint64:
				d[i] = v.(uint64)
			case []int64:
				d[i] = v.(int64)
			case []float32:
				d[i] = v.(float32)
			case []float64:
				d[i] = v.(float64)
			case []bool:
				d[i] = v.(bool)
			case []string:
				d[i] = v.(string)
			}
		}
		return dst
	}
	n := len(vals)
	switch elem {
	case TypeUint8:
		return conv(make([]uint8, n))
	case TypeInt8:
		return conv(make([]int8, n))
	case TypeUint16:
		return conv(make([]uint16, n))
	case TypeInt16:
		return conv(make([]int16, n))
	case TypeUint32:
		return conv(make([]uint32, n))
	case TypeInt32:
		return conv(make([]int32, n))
	case TypeUint64:
		return conv(make([]uint64, n))
	case TypeInt64:
		return conv(make([]int64, n))
	case TypeFloat32:
		return conv(make([]float32, n))
	case TypeFloat64:
		return conv(make([]float64, n))
	case TypeBool:
		return conv(make([]bool, n))
	case TypeString:
		return conv(make([]string, n))
	}
	return nil
}

func checkAgainst(t *testing.T, f *File, e expFile, withData bool) {
	assert.Equal(t, e.Version, f.Version())
	assert.Equal(t, e.Alignment, f.Alignment())
	assert.Equal(t, e.DataOffset, f.DataOffset())
	assert.Equal(t, e.FileSize, f.Size())

	kvs := f.KVs()
	require.Len(t, kvs, len(e.KV))
	for i, want := range e.KV {
		kv := kvs[i]
		assert.Equal(t, want.Key, kv.Key, "key order")
		assert.Equal(t, want.Type, kv.Type.String(), want.Key)
		if want.Type == "arr" {
			assert.Equal(t, want.ArrayType, kv.ArrayType.String(), want.Key)
		}
		v, err := f.Value(want.Key)
		require.NoError(t, err, want.Key)
		assert.Equal(t, expectedValue(t, want), v, want.Key)
	}

	infos := f.Tensors()
	require.Len(t, infos, len(e.Tensors))
	for i, want := range e.Tensors {
		ti := infos[i]
		assert.Equal(t, want.Name, ti.Name)
		assert.Equal(t, TensorType(want.TypeID), ti.Type, want.Name)
		assert.Equal(t, want.Ne[:want.NDims], ti.Shape, want.Name)
		assert.Equal(t, want.Offset, ti.Offset, want.Name)
		assert.Equal(t, want.NBytes, ti.Size, want.Name)
		data, err := f.TensorData(want.Name)
		if !withData {
			assert.ErrorIs(t, err, ErrNoData, want.Name)
			continue
		}
		require.NoError(t, err, want.Name)
		sum := sha256.Sum256(data)
		require.NotNil(t, want.SHA256)
		assert.Equal(t, *want.SHA256, hex.EncodeToString(sum[:]), want.Name)
	}
}

func TestParityFiles(t *testing.T) {
	dir := shareddata.Dir(t, "parity", "gguf")
	jsons, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, jsons)
	for _, jp := range jsons {
		name := strings.TrimSuffix(filepath.Base(jp), ".json")
		t.Run(name, func(t *testing.T) {
			e := loadExp(t, jp)
			path := filepath.Join(dir, name+".gguf")
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			withData := true
			for _, ti := range e.Tensors {
				if ti.SHA256 == nil {
					withData = false
				}
			}
			opts := Options{MetadataOnly: !withData}
			if !withData {
				// tensors lie past the end: only a metadata-only open accepts it
				_, err := Open(path)
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
				t.Logf("default open rejects it: %v", err)
			}
			f, err := OpenWithOptions(path, opts)
			require.NoError(t, err)
			checkAgainst(t, f, e, withData)
			require.NoError(t, f.Close())

			f, err = OpenReader(bytes.NewReader(raw), int64(len(raw)), opts)
			require.NoError(t, err)
			checkAgainst(t, f, e, withData)
			require.NoError(t, f.Close())

			f, err = OpenBytes(raw, opts)
			require.NoError(t, err)
			checkAgainst(t, f, e, withData)
			require.NoError(t, f.Close())
		})
	}
}

func TestTypedGetters(t *testing.T) {
	path := shareddata.Dir(t, "parity", "gguf", "all-types-align32.gguf")
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()

	s, err := f.String("general.name")
	require.NoError(t, err)
	assert.Equal(t, "parity sample", s)
	u8, err := f.Uint8("test.u8")
	require.NoError(t, err)
	assert.Equal(t, uint8(200), u8)
	u64, err := f.Uint64("test.u64")
	require.NoError(t, err)
	assert.Equal(t, uint64(18000000000000000000), u64)
	i64, err := f.Int("test.i64")
	require.NoError(t, err)
	assert.Equal(t, int64(-9000000000000000000), i64)
	_, err = f.Int("test.u64") // does not fit in int64
	assert.Error(t, err)
	u, err := f.Uint("test.u16")
	require.NoError(t, err)
	assert.Equal(t, uint64(60000), u)
	fl, err := f.Float("test.f32")
	require.NoError(t, err)
	assert.InDelta(t, math.Pi, fl, 1e-6)
	b, err := f.Bool("test.bool_true")
	require.NoError(t, err)
	assert.True(t, b)
	strs, err := f.Strings("test.arr_str")
	require.NoError(t, err)
	assert.Equal(t, []string{"alpha", "", "γαμμα", "<|endoftext|>"}, strs)
	empty, err := f.Int32s("test.arr_empty_i32")
	require.NoError(t, err)
	assert.Empty(t, empty)

	_, err = f.Uint32("general.name")
	assert.ErrorIs(t, err, ErrType)
	var te *TypeError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, TypeString, te.Have)
	_, err = f.Float32s("test.arr_u8")
	assert.ErrorIs(t, err, ErrType)
	_, err = f.String("test.arr_str")
	assert.ErrorIs(t, err, ErrType)
	_, err = f.String("no.such.key")
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = f.TensorData("no.such.tensor")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.False(t, f.Has("no.such.key"))
	assert.True(t, f.Has("test.f64"))

	ti, ok := f.Tensor("tensor.q8_0")
	require.True(t, ok)
	assert.Equal(t, TensorQ8_0, ti.Type)
	assert.Equal(t, "q8_0", ti.Type.String())
	assert.Equal(t, [MaxDims]int64{32, 2, 2, 2}, ti.Ne())
	r, err := f.TensorReader("tensor.q8_0")
	require.NoError(t, err)
	assert.Equal(t, ti.Size, r.Size())

	require.NoError(t, f.Close())
	_, err = f.String("general.name")
	assert.ErrorIs(t, err, ErrClosed)
	assert.Panics(t, func() { f.Version() })
	assert.NoError(t, f.Close())
}

// rejectable lists the files of a directory that must be rejected, and
// those (named *_ok.gguf) that must be accepted.
func TestRejectMalformed(t *testing.T) {
	root := shareddata.Dir(t, "parity")
	for _, sub := range []string{"gguf-malformed", "gguf-corrupted"} {
		files, err := filepath.Glob(filepath.Join(root, sub, "*.gguf"))
		require.NoError(t, err)
		require.NotEmpty(t, files, sub)
		for _, path := range files {
			base := filepath.Base(path)
			t.Run(sub+"/"+base, func(t *testing.T) {
				raw, err := os.ReadFile(path)
				require.NoError(t, err)
				ok := strings.HasSuffix(base, "_ok.gguf")
				check := func(how string, f *File, err error) {
					if ok {
						require.NoError(t, err, how)
						for _, ti := range f.Tensors() {
							_, err := f.TensorData(ti.Name)
							assert.NoError(t, err)
						}
						f.Close()
						return
					}
					var fe *FormatError
					require.ErrorAs(t, err, &fe, how)
					assert.NotEmpty(t, fe.Msg)
				}
				f, err := Open(path)
				check("Open", f, err)
				if err != nil {
					t.Logf("%s: %v", base, err)
				}
				f, err = OpenReader(bytes.NewReader(raw), int64(len(raw)), Options{})
				check("OpenReader", f, err)
				f, err = OpenBytes(raw, Options{})
				check("OpenBytes", f, err)
			})
		}
	}
}

// writeParity rebuilds all-types-align32.gguf from its description and the
// tensor bytes of the original.
func writeParity(t *testing.T, w *Writer, e expFile, src *File, stream bool) {
	for _, kv := range e.KV {
		require.NoError(t, w.Set(kv.Key, expectedValue(t, kv)), kv.Key)
	}
	for _, ti := range e.Tensors {
		data, err := src.TensorData(ti.Name)
		require.NoError(t, err)
		if stream {
			require.NoError(t, w.DeclareTensor(ti.Name, TensorType(ti.TypeID), ti.Ne[:ti.NDims]))
		} else {
			require.NoError(t, w.AddTensor(ti.Name, TensorType(ti.TypeID), ti.Ne[:ti.NDims], data))
		}
	}
	require.Equal(t, e.DataOffset, w.MetaSize())
	if stream {
		for i, ti := range e.Tensors {
			data, err := src.TensorData(ti.Name)
			require.NoError(t, err)
			if i%2 == 0 {
				require.NoError(t, w.WriteTensorData(ti.Name, data))
			} else {
				require.NoError(t, w.WriteTensorFrom(ti.Name, bytes.NewReader(data)))
			}
		}
	}
	require.NoError(t, w.Close())
}

func TestWriterParity(t *testing.T) {
	dir := shareddata.Dir(t, "parity", "gguf")
	e := loadExp(t, filepath.Join(dir, "all-types-align32.json"))
	want, err := os.ReadFile(filepath.Join(dir, "all-types-align32.gguf"))
	require.NoError(t, err)
	meta, err := os.ReadFile(filepath.Join(dir, "meta-only-all-types-align32.gguf"))
	require.NoError(t, err)
	src, err := OpenBytes(want, Options{})
	require.NoError(t, err)
	defer src.Close()

	for _, stream := range []bool{false, true} {
		var buf bytes.Buffer
		writeParity(t, NewWriter(&buf), e, src, stream)
		require.True(t, bytes.Equal(want, buf.Bytes()), "stream=%v: %d vs %d bytes", stream, buf.Len(), len(want))
		// the metadata block is what only_meta writes
		require.True(t, bytes.Equal(meta, buf.Bytes()[:e.DataOffset]))
	}

	// atomically through Create
	out := filepath.Join(t.TempDir(), "out.gguf")
	w, err := Create(out)
	require.NoError(t, err)
	writeParity(t, w, e, src, true)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got))
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*tmp*"))
	assert.Empty(t, left, "temporary files left")

	// CopyKVs + tensors from a File reproduce it too
	var buf bytes.Buffer
	w = NewWriter(&buf)
	require.NoError(t, w.CopyKVs(src))
	for _, ti := range src.Tensors() {
		data, err := src.TensorData(ti.Name)
		require.NoError(t, err)
		require.NoError(t, w.AddTensor(ti.Name, ti.Type, ti.Shape, data))
	}
	require.NoError(t, w.Close())
	require.True(t, bytes.Equal(want, buf.Bytes()))
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := map[string]any{
		"u8": uint8(255), "i8": int8(-128), "u16": uint16(65535), "i16": int16(-32768),
		"u32": uint32(math.MaxUint32), "i32": int32(math.MinInt32), "u64": uint64(math.MaxUint64),
		"i64": int64(math.MinInt64), "f32": float32(-1.5e-38), "f64": math.SmallestNonzeroFloat64,
		"bool": true, "bool.f": false, "str": "héllo\x00world", "str.bytes": "\xff\xfe not utf-8",
		"str.empty": "",
		"a.u8":      []uint8{0, 1, 255}, "a.i8": []int8{-1, 2}, "a.u16": []uint16{7}, "a.i16": []int16{-7, 7},
		"a.u32": []uint32{1, 2, 3}, "a.i32": []int32{}, "a.u64": []uint64{math.MaxUint64},
		"a.i64": []int64{math.MinInt64, math.MaxInt64}, "a.f32": []float32{float32(math.Inf(-1)), 0.5},
		"a.f64": []float64{math.MaxFloat64}, "a.bool": []bool{true, false, false},
		"a.str":       []string{"", "x", "with\x00nul", strings.Repeat("long ", 1000)},
		"a.str.empty": []string{},
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	// every valid tensor type, with a shape of whole blocks
	type tdesc struct {
		name  string
		typ   TensorType
		shape []int64
		data  []byte
	}
	var tensors []tdesc
	for ty := TensorType(0); ty < 40; ty++ {
		if !ty.Valid() {
			continue
		}
		shape := []int64{int64(ty.BlockSize()) * int64(1+rng.IntN(3)), int64(1 + rng.IntN(3))}
		if ty%3 == 0 {
			shape = append(shape, 2)
		}
		size, err := tensorBytes(ty, shape)
		require.NoError(t, err)
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		tensors = append(tensors, tdesc{"t." + ty.String(), ty, shape, data})
	}
	tensors = append(tensors, tdesc{"empty", TensorF32, []int64{0, 5}, nil})
	tensors = append(tensors, tdesc{strings.Repeat("n", MaxNameLen), TensorI8, []int64{3, 1, 1, 1}, []byte{1, 2, 3}})

	for _, align := range []int{0, 1, 8, 64, 4096} {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, k := range keys {
			require.NoError(t, w.Set(k, values[k]), k)
		}
		if align > 0 {
			require.NoError(t, w.SetAlignment(align))
		}
		for _, td := range tensors {
			require.NoError(t, w.AddTensor(td.name, td.typ, td.shape, td.data))
		}
		require.NoError(t, w.Close())

		f, err := OpenBytes(buf.Bytes(), Options{})
		require.NoError(t, err, "alignment %d", align)
		wantAlign := align
		if align == 0 {
			wantAlign = DefaultAlignment
		}
		assert.Equal(t, wantAlign, f.Alignment())
		assert.Zero(t, f.DataOffset()%int64(wantAlign))
		assert.Equal(t, 3, f.Version())
		for _, k := range keys {
			v, err := f.Value(k)
			require.NoError(t, err, k)
			assert.Equal(t, values[k], v, k)
		}
		for _, td := range tensors {
			ti, ok := f.Tensor(td.name)
			require.True(t, ok, td.name)
			assert.Equal(t, td.typ, ti.Type)
			assert.Equal(t, td.shape, ti.Shape)
			assert.Zero(t, ti.Offset%int64(wantAlign))
			data, err := f.TensorData(td.name)
			require.NoError(t, err)
			assert.Equal(t, len(td.data), len(data))
			assert.True(t, bytes.Equal(td.data, data), td.name)
		}
		require.NoError(t, f.Close())
	}
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter(&bytes.Buffer{})
	assert.Error(t, w.SetUint8("", 1))
	assert.Error(t, w.SetUint8("bad\xff", 1))
	assert.Error(t, w.SetUint8("nul\x00", 1))
	assert.Error(t, w.SetInt32("general.alignment", 32))
	assert.Error(t, w.SetUint32("general.alignment", 48))
	assert.Error(t, w.SetAlignment(0))
	assert.Error(t, w.Set("x", struct{}{}))
	require.NoError(t, w.AddTensor("a", TensorF32, []int64{2}, make([]byte, 8)))
	assert.Error(t, w.AddTensor("a", TensorF32, []int64{2}, make([]byte, 8)), "duplicate")
	assert.Error(t, w.AddTensor("b", TensorF32, []int64{2}, make([]byte, 7)), "size")
	assert.Error(t, w.AddTensor("c", TensorQ4_0, []int64{31}, make([]byte, 18)), "row of partial blocks")
	assert.Error(t, w.AddTensor("d", TensorType(4), []int64{32}, nil), "removed type")
	assert.Error(t, w.AddTensor("e", TensorF32, []int64{1, 1, 1, 1, 1}, nil), "5 dims")
	assert.Error(t, w.AddTensor("f", TensorF32, []int64{-1}, nil), "negative")
	assert.Error(t, w.AddTensor("g", TensorF32, []int64{1 << 62, 1 << 62}, nil), "overflow")
	assert.Error(t, w.AddTensor(strings.Repeat("x", 64), TensorF32, []int64{1}, make([]byte, 4)), "long name")

	// a declared tensor never written: Close fails and nothing is left behind
	dir := t.TempDir()
	path := filepath.Join(dir, "x.gguf")
	w, err := Create(path)
	require.NoError(t, err)
	require.NoError(t, w.DeclareTensor("a", TensorF32, []int64{4}))
	require.NoError(t, w.DeclareTensor("b", TensorF32, []int64{4}))
	assert.Error(t, w.WriteTensorData("a", make([]byte, 3)), "wrong size")
	assert.Error(t, w.WriteTensorData("b", make([]byte, 16)), "out of order")
	assert.Error(t, w.Close())
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)

	// Abort removes the temporary file
	w, err = Create(path)
	require.NoError(t, err)
	require.NoError(t, w.SetString("k", "v"))
	w.Abort()
	assert.Error(t, w.Close())
	entries, _ = os.ReadDir(dir)
	assert.Empty(t, entries)

	// an existing file is replaced only on success
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	w, err = Create(path)
	require.NoError(t, err)
	require.NoError(t, w.DeclareTensor("a", TensorF32, []int64{1}))
	assert.Error(t, w.Close())
	old, _ := os.ReadFile(path)
	assert.Equal(t, "old", string(old))
	w, err = Create(path)
	require.NoError(t, err)
	require.NoError(t, w.SetString("general.name", "new"))
	require.NoError(t, w.Close())
	f, err := Open(path)
	require.NoError(t, err)
	name, _ := f.String("general.name")
	assert.Equal(t, "new", name)
	f.Close()

	// overwriting keeps the position; changing the type needs Remove first
	var buf bytes.Buffer
	w = NewWriter(&buf)
	require.NoError(t, w.SetUint8("a", 1))
	require.NoError(t, w.SetUint8("b", 2))
	require.NoError(t, w.Set("a", uint8(3)))
	require.ErrorIs(t, w.SetString("a", "now a string"), ErrType)
	require.ErrorIs(t, w.Set("b", 2), ErrType, "an int is an i64")
	require.NoError(t, w.Remove("a"))
	require.NoError(t, w.SetString("a", "now a string"))
	require.NoError(t, w.SetAlignment(64))
	require.NoError(t, w.Remove("general.alignment"))
	require.NoError(t, w.Remove("b"))
	require.NoError(t, w.Close())
	f, err = OpenBytes(buf.Bytes(), Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, f.Keys())
	assert.Equal(t, DefaultAlignment, f.Alignment())
	f.Close()
	assert.Error(t, errors.Join(w.SetUint8("late", 1)))
}

// OpenReader reads growing prefixes; start tiny so every step is taken.
func TestOpenReaderGrowth(t *testing.T) {
	dir := shareddata.Dir(t, "parity", "gguf")
	e := loadExp(t, filepath.Join(dir, "all-types-align32.json"))
	raw, err := os.ReadFile(filepath.Join(dir, "all-types-align32.gguf"))
	require.NoError(t, err)
	saved := firstRead
	defer func() { firstRead = saved }()
	for _, fr := range []int64{1, 7, 100, 2143} {
		firstRead = fr
		f, err := OpenReader(bytes.NewReader(raw), int64(len(raw)), Options{})
		require.NoError(t, err)
		checkAgainst(t, f, e, true)
		f.Close()
		// a reader shorter than the declared size fails with an I/O error
		_, err = OpenReader(bytes.NewReader(raw[:1000]), int64(len(raw)), Options{})
		require.Error(t, err)
	}
}

// Version 2 files have the same layout and are read the same.
func TestVersion2(t *testing.T) {
	raw, err := os.ReadFile(shareddata.Dir(t, "parity", "gguf", "all-types-align32.gguf"))
	require.NoError(t, err)
	v2 := append([]byte(nil), raw...)
	v2[4] = 2
	f, err := OpenBytes(v2, Options{})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, 2, f.Version())
	assert.Equal(t, 21, f.NumTensors())
	for _, v := range []byte{0, 1, 4, 255} {
		bad := append([]byte(nil), raw...)
		bad[4] = v
		_, err := OpenBytes(bad, Options{})
		assert.Error(t, err, "version %d", v)
	}
}
