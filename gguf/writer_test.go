package gguf

// The Writer takes what Go code has: Set takes Go's int kinds, AddTensor
// typed slices, Create makes files as os.Create does, a dropped Writer leaves
// no temporary file behind.

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type myCount uint16
type myName string

func TestWriterSetGoKinds(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	require.NoError(t, w.Set("int", 5))
	require.NoError(t, w.Set("neg", -7))
	require.NoError(t, w.Set("uint", uint(math.MaxUint64)))
	require.NoError(t, w.Set("named", myCount(9)))
	require.NoError(t, w.Set("name", myName("x")))
	require.NoError(t, w.Set("ints", []int{1, -2, 3}))
	require.NoError(t, w.Set("counts", []myCount{4, 5}))
	require.NoError(t, w.Set("array", [2]float32{0.5, 1.5}))
	require.Error(t, w.Set("map", map[string]int{}))
	require.Error(t, w.Set("ptr", new(int)))
	require.NoError(t, w.Close())

	f, err := OpenBytes(buf.Bytes(), Options{})
	require.NoError(t, err)
	defer f.Close()
	v, err := f.Int64("int")
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
	v, _ = f.Int("neg")
	require.Equal(t, int64(-7), v)
	u, err := f.Uint64("uint")
	require.NoError(t, err)
	require.Equal(t, uint64(math.MaxUint64), u)
	c, err := f.Uint16("named")
	require.NoError(t, err)
	require.Equal(t, uint16(9), c)
	s, _ := f.String("name")
	require.Equal(t, "x", s)
	is, err := f.Int64s("ints")
	require.NoError(t, err)
	require.Equal(t, []int64{1, -2, 3}, is)
	cs, err := f.Uint16s("counts")
	require.NoError(t, err)
	require.Equal(t, []uint16{4, 5}, cs)
	fs, err := f.Float32s("array")
	require.NoError(t, err)
	require.Equal(t, []float32{0.5, 1.5}, fs)
}

func TestWriterAddTensorTypedSlices(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	require.NoError(t, w.AddTensor("f32", TensorF32, []int64{3}, []float32{1, 2.5, -3}))
	require.NoError(t, w.AddTensor("f64", TensorF64, []int64{2}, []float64{1, -1}))
	require.NoError(t, w.AddTensor("i8", TensorI8, []int64{2}, []int8{-1, 1}))
	require.NoError(t, w.AddTensor("i16", TensorI16, []int64{2}, []int16{-300, 300}))
	require.NoError(t, w.AddTensor("i32", TensorI32, []int64{2, 2}, []int32{1, 2, 3, 4}))
	require.NoError(t, w.AddTensor("i64", TensorI64, []int64{1}, []int64{-5}))
	require.NoError(t, w.AddTensor("f16", TensorF16, []int64{2}, []uint16{0x3c00, 0xc000}))
	require.NoError(t, w.AddTensor("bf16", TensorBF16, []int64{1}, []uint16{0x3f80}))
	require.NoError(t, w.AddTensor("empty", TensorF32, []int64{0}, []float32{}))
	require.ErrorContains(t, w.AddTensor("bad", TensorF16, []int64{2}, []float32{1, 2}), "f16")
	require.ErrorContains(t, w.AddTensor("bad", TensorQ8_0, []int64{32}, make([]float32, 32)), "q8_0")
	require.ErrorContains(t, w.AddTensor("bad", TensorF32, []int64{4}, []float32{1}), "16 bytes")
	require.ErrorContains(t, w.AddTensor("bad", TensorF32, []int64{1}, []string{"x"}), "unsupported")
	require.NoError(t, w.Close())

	f, err := OpenBytes(buf.Bytes(), Options{})
	require.NoError(t, err)
	defer f.Close()
	check := func(name string, want []byte) {
		got, err := f.TensorData(name)
		require.NoError(t, err)
		require.Equal(t, want, got, name)
	}
	check("f32", []byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0x40, 0, 0, 0x40, 0xc0})
	check("i16", []byte{0xd4, 0xfe, 0x2c, 0x01})
	check("i32", []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0})
	check("f16", []byte{0x00, 0x3c, 0x00, 0xc0})
	check("bf16", []byte{0x80, 0x3f})
	check("i64", []byte{0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
}

func TestDroppedWriterRemovesTempFile(t *testing.T) {
	dir := t.TempDir()
	func() {
		w, err := Create(filepath.Join(dir, "dropped.gguf"))
		require.NoError(t, err)
		require.NoError(t, w.SetString("k", "v"))
		require.NoError(t, w.AddTensor("t", TensorF32, []int64{4}, make([]float32, 4)))
	}()
	tmpFiles := func() int {
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		n := 0
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp-") {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, tmpFiles())
	deadline := time.Now().Add(time.Minute) // cleanups run later on a loaded machine
	for tmpFiles() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	require.Zero(t, tmpFiles(), "the garbage collector removes the temporary file of a dropped Writer")
	_, err := os.Stat(filepath.Join(dir, "dropped.gguf"))
	require.True(t, os.IsNotExist(err))
}

// Create's errors name the path asked for, not its temporary file: a
// missing directory, a directory as the path, no file name.
func TestCreateErrorsNameThePathGiven(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "none", "out.gguf"), filepath.Join(dir, "none", "out.gguf") + ": "},
		{dir, dir + ": is a directory"},
		{dir + string(filepath.Separator), "no file name"},
		{"", "no file name"},
	} {
		w, err := Create(c.path)
		require.Error(t, err, c.path)
		require.Nil(t, w)
		require.Contains(t, err.Error(), c.want)
		require.NotContains(t, err.Error(), ".tmp-")
	}
	_, err := Create(filepath.Join(dir, "none", "out.gguf"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// failingWriter accepts limit bytes, then fails.
type failingWriter struct{ limit int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n := f.limit
		f.limit = 0
		return n, errFull
	}
	f.limit -= len(p)
	return len(p), nil
}

var errFull = errors.New("disk full")

// A Writer whose Close failed is closed all the same: its other methods
// then return an error wrapping ErrClosed and the error that ended it, and
// Close returns that first error again, now also ErrClosed (the other
// methods used to return the first error alone, and some went on).
func TestWriterAfterFailedCloseGivesErrClosed(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]func() (*Writer, error){
		// the output fails when Close flushes
		"flush": func() (*Writer, error) {
			w := NewWriter(&failingWriter{limit: 10})
			require.NoError(t, w.SetString("general.name", "x"))
			return w, errFull
		},
		// a declared tensor was never written
		"missing data": func() (*Writer, error) {
			w := NewWriter(io.Discard)
			require.NoError(t, w.DeclareTensor("t", TensorI8, []int64{4}))
			return w, nil
		},
		// Create's rename fails: the final name became a directory
		// after Create (which refuses one given at the start)
		"rename": func() (*Writer, error) {
			path := filepath.Join(dir, "is-a-dir")
			w, err := Create(path)
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Join(path, "x"), 0o755))
			return w, nil
		},
	}
	for name, mk := range cases {
		w, cause := mk()
		first := w.Close()
		require.Error(t, first, name)
		if cause != nil {
			require.ErrorIs(t, first, cause, name)
		}
		for op, err := range map[string]error{
			"Set":             w.Set("k", uint32(1)),
			"SetString":       w.SetString("s", "v"),
			"Remove":          w.Remove("k"),
			"SetAlignment":    w.SetAlignment(64),
			"AddTensor":       w.AddTensor("x", TensorI8, []int64{4}, []byte{1, 2, 3, 4}),
			"DeclareTensor":   w.DeclareTensor("y", TensorI8, []int64{4}),
			"WriteTensorData": w.WriteTensorData("t", []byte{1, 2, 3, 4}),
			"WriteTensorFrom": w.WriteTensorFrom("t", strings.NewReader("abcd")),
		} {
			require.ErrorIs(t, err, ErrClosed, "%s: %s", name, op)
			require.ErrorIs(t, err, first, "%s: %s", name, op)
		}
		for range 2 {
			again := w.Close()
			require.ErrorIs(t, again, ErrClosed, name)
			require.ErrorIs(t, again, first, name)
			require.Equal(t, first.Error(), again.Error(), name)
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a temporary file is left: %v", entries)
}
