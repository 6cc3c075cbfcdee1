package ggml

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/shareddata"
	"github.com/stretchr/testify/require"
)

func TestLoadGGUF(t *testing.T) {
	path := shareddata.Dir(t, "parity", "gguf", "all-types-align32.gguf")
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()

	for _, copy := range []bool{true, false} {
		ctx, err := NewContext(ContextOptions{MemSize: GGUFContextSize(f, copy), NoAlloc: !copy})
		require.NoError(t, err)
		ts, err := ctx.LoadGGUF(f, copy)
		require.NoError(t, err)
		require.Len(t, ts, f.NumTensors())
		for _, info := range f.Tensors() {
			tt := ts[info.Name]
			require.NotNil(t, tt, info.Name)
			require.Equal(t, info.Name, tt.Name())
			require.Equal(t, Type(info.Type), tt.Type())
			require.Equal(t, int(info.Size), tt.NBytes())
			ne := info.Ne()
			for i, d := range tt.Ne() {
				require.Equal(t, int(ne[i]), d)
			}
			want, err := f.TensorData(info.Name)
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, tt.Bytes()), info.Name)
		}
		// f32 values come through the tensor API
		v, err := ts["tensor.f32"].Float32s()
		require.NoError(t, err)
		require.Len(t, v, 21)
		require.NoError(t, ctx.Close())
	}

	// a context too small fails with an error, not a crash
	small, err := NewContext(ContextOptions{MemSize: 1024})
	require.NoError(t, err)
	_, err = small.LoadGGUF(f, true)
	require.Error(t, err)
	small.Close()

	// writing tensors of a context reproduces the file
	ctx, err := NewContext(ContextOptions{MemSize: GGUFContextSize(f, true)})
	require.NoError(t, err)
	defer ctx.Close()
	ts, err := ctx.LoadGGUF(f, true)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "copy.gguf")
	w, err := gguf.Create(out)
	require.NoError(t, err)
	require.NoError(t, w.CopyKVs(f))
	for _, info := range f.Tensors() {
		require.NoError(t, AddTensorToGGUF(w, ts[info.Name]))
	}
	require.NoError(t, w.Close())
	g, err := gguf.Open(out)
	require.NoError(t, err)
	defer g.Close()
	require.Equal(t, f.DataOffset(), g.DataOffset())
	for _, info := range f.Tensors() {
		a, _ := f.TensorData(info.Name)
		b, err := g.TensorData(info.Name)
		require.NoError(t, err)
		require.True(t, bytes.Equal(a, b), info.Name)
	}
}

// writeHalvesGGUF writes a GGUF file with an f32 tensor "w" of 16 values i/2.
func writeHalvesGGUF(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.gguf")
	w, err := gguf.Create(path)
	require.NoError(t, err)
	data := make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)/2))
	}
	require.NoError(t, w.SetString("general.name", "test"))
	require.NoError(t, w.AddTensor("w", gguf.TensorF32, []int64{16}, data))
	require.NoError(t, w.Close())
	return path
}

// A TensorReader read after Close.
func TestTensorReaderAfterCloseIsErrClosed(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		f, err := gguf.Open(writeHalvesGGUF(t))
		require.NoError(t, err)
		r, err := f.TensorReader("w")
		require.NoError(t, err)
		buf := make([]byte, 8)
		_, err = r.ReadAt(buf, 0)
		require.NoError(t, err)
		data, err := f.TensorData("w")
		require.NoError(t, err)
		require.Equal(t, byte(0x40), data[63]) // 7.5
		require.NoError(t, f.Close())
		_, err = r.ReadAt(buf, 0)
		require.ErrorIs(t, err, gguf.ErrClosed)
		_, err = io.ReadAll(r)
		require.ErrorIs(t, err, gguf.ErrClosed)
		_, err = f.TensorData("w")
		require.ErrorIs(t, err, gguf.ErrClosed)
		// a slice of the mapping kept past Close reads zeros, not a fault
		require.Equal(t, make([]byte, 64), append([]byte(nil), data...))
	})
}

// Tensors of LoadGGUF without copy are read-only and keep the
// mapping alive after the file is closed.
func TestLoadGGUFNoCopyIsReadOnly(t *testing.T) {
	inSubprocess(t, subprocessTimeout, func(t *testing.T) {
		f, err := gguf.Open(writeHalvesGGUF(t))
		require.NoError(t, err)
		ctx := newCtx(t, 1<<20)
		ts, err := ctx.LoadGGUF(f, false)
		require.NoError(t, err)
		w := ts["w"]
		require.True(t, w.ReadOnly())
		require.NoError(t, f.Close())
		for range 3 {
			runtime.GC()
		}
		v, err := w.Float32s()
		require.NoError(t, err, "readable after the file is closed")
		require.Equal(t, float32(7.5), v[15])
		require.Equal(t, float32(7.5), w.F32(15))
		// writes through the Go API
		require.Error(t, w.SetFloat32s(make([]float32, 16)))
		require.Error(t, w.SetBytes(make([]byte, 64)))
		requireOpPanic(t, "SetF32", func() { w.SetF32(1, 0) })
		requireOpPanic(t, "Fill", func() { w.Fill(1) })
		requireOpPanic(t, "Zero", func() { w.Zero() })
		view := ctx.View1D(w, 4, 8)
		require.True(t, view.ReadOnly())
		requireOpPanic(t, "SetI32", func() { view.SetI32(1, 0) })
		// writes by computations: in place ops, copies into it, views of it
		x := ctx.NewTensor1D(TypeF32, 16).Fill(1)
		for name, node := range map[string]*Tensor{
			"AddInplace":   ctx.AddInplace(w, x),
			"ScaleInplace": ctx.ScaleInplace(view, 2),
			"Cpy":          ctx.Cpy(x, w),
			"Cpy to view":  ctx.Cpy(ctx.View1D(x, 4, 0), view),
		} {
			err := ctx.NewGraph().BuildForward(node).Compute(2)
			require.ErrorContains(t, err, "read-only", name)
		}
		// reading it in ops is fine
		y := ctx.Add(w, x)
		require.NoError(t, ctx.NewGraph().BuildForward(y).Compute(2))
		require.Equal(t, float32(8.5), y.F32(15))
		v, _ = w.Float32s()
		require.Equal(t, float32(7.5), v[15], "unchanged")
		// the optimizer cannot update a read-only parameter
		p := ctx.SetParam(w)
		loss := ctx.Sum(ctx.Mul(p, x)).SetLoss()
		tr, err := NewTrainer(ctx, loss, TrainerOptions{Threads: 2})
		require.NoError(t, err)
		defer tr.Close()
		_, err = tr.Step()
		require.ErrorContains(t, err, "read-only")
	})
}

func TestLoadGGUFInto(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.gguf")
	src, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer src.Close()
	w1 := src.NewTensor2D(TypeF32, 8, 3).SetName("w1")
	require.NoError(t, w1.SetFloat32s(ramp(24, 5)))
	q := src.NewTensor1D(TypeQ8_0, 64).SetName("q")
	require.NoError(t, q.SetFloat32s(ramp(64, 6)))
	wr, err := gguf.Create(path)
	require.NoError(t, err)
	require.NoError(t, AddTensorToGGUF(wr, w1))
	require.NoError(t, AddTensorToGGUF(wr, q))
	require.NoError(t, wr.Close())

	f, err := gguf.Open(path)
	require.NoError(t, err)
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	ctx, err := NewContext(ContextOptions{MemSize: 8 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	ts, buf, err := ctx.LoadGGUFInto(f, be)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NotNil(t, buf)
	require.Equal(t, w1.Bytes(), ts["w1"].Bytes())
	require.Equal(t, q.Bytes(), ts["q"].Bytes())
	require.Same(t, buf, ts["q"].Buffer())

	alloc, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer alloc.Close()
	f2, err := gguf.Open(path)
	require.NoError(t, err)
	defer f2.Close()
	_, _, err = alloc.LoadGGUFInto(f2, be)
	require.Error(t, err, "needs a NoAlloc context")
	_ = os.Remove(path)
}

// LoadGGUFInto copies the data of a file however it was opened: from
// OpenBytes and OpenReader as from Open (it used to want a mapped file).
// A closed file, a context too small and a file of no tensors give errors
// or an empty map, never a panic.
func TestLoadGGUFIntoAnyFile(t *testing.T) {
	src, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer src.Close()
	w1 := src.NewTensor2D(TypeF32, 8, 3).SetName("w1")
	require.NoError(t, w1.SetFloat32s(ramp(24, 5)))
	q := src.NewTensor1D(TypeQ4_0, 64).SetName("q")
	require.NoError(t, q.SetFloat32s(ramp(64, 6)))
	var file bytes.Buffer
	wr := gguf.NewWriter(&file)
	require.NoError(t, AddTensorToGGUF(wr, w1))
	require.NoError(t, AddTensorToGGUF(wr, q))
	require.NoError(t, wr.Close())
	raw := file.Bytes()

	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	newCtx := func(n int) *Context {
		ctx, err := NewContext(ContextOptions{MemSize: n * TensorOverhead(), NoAlloc: true})
		require.NoError(t, err)
		t.Cleanup(func() { ctx.Close() })
		return ctx
	}
	for name, open := range map[string]func() (*gguf.File, error){
		"OpenBytes": func() (*gguf.File, error) { return gguf.OpenBytes(raw, gguf.Options{}) },
		"OpenReader": func() (*gguf.File, error) {
			return gguf.OpenReader(bytes.NewReader(raw), int64(len(raw)), gguf.Options{})
		},
	} {
		f, err := open()
		require.NoError(t, err, name)
		ts, buf, err := newCtx(4).LoadGGUFInto(f, be)
		require.NoError(t, err, name)
		require.NoError(t, f.Close())
		require.Len(t, ts, 2, name)
		require.Equal(t, w1.Bytes(), ts["w1"].Bytes(), name)
		require.Equal(t, q.Bytes(), ts["q"].Bytes(), name)
		require.Same(t, buf, ts["w1"].Buffer(), name)
		require.False(t, ts["q"].ReadOnly(), name)

		// a closed file, a context with room for one tensor of the two
		_, _, err = newCtx(4).LoadGGUFInto(f, be)
		require.ErrorIs(t, err, gguf.ErrClosed, name)
		f, err = open()
		require.NoError(t, err, name)
		_, _, err = newCtx(1).LoadGGUFInto(f, be)
		require.Error(t, err, name)
		require.NoError(t, f.Close())
	}

	var empty bytes.Buffer
	wr = gguf.NewWriter(&empty)
	require.NoError(t, wr.SetString("general.name", "none"))
	require.NoError(t, wr.Close())
	f, err := gguf.OpenBytes(empty.Bytes(), gguf.Options{})
	require.NoError(t, err)
	defer f.Close()
	ts, buf, err := newCtx(1).LoadGGUFInto(f, be)
	require.NoError(t, err)
	require.Empty(t, ts)
	require.Nil(t, buf)
}
