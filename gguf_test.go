package ggml

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/require"
)

func TestLoadGGUF(t *testing.T) {
	path := parityDir(t, "gguf", "all-types-align32.gguf")
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
