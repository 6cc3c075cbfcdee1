package gguf

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// bigFile writes a model-like file: 1,000 tensors and a 100,000-entry
// string array with its scores, as a tokenizer has.
func bigFile(b *testing.B) string {
	var bigErr error
	bigPath := filepath.Join(b.TempDir(), "big.gguf")
	func() {
		w, err := Create(bigPath)
		if err != nil {
			bigErr = err
			return
		}
		const nTok = 100_000
		toks := make([]string, nTok)
		scores := make([]float32, nTok)
		types := make([]int32, nTok)
		for i := range toks {
			toks[i] = fmt.Sprintf("▁token%d", i)
			scores[i] = float32(-i)
			types[i] = 1
		}
		w.SetString("general.architecture", "llama")
		w.SetUint32("llama.context_length", 4096)
		w.SetStrings("tokenizer.ggml.tokens", toks)
		w.SetFloat32s("tokenizer.ggml.scores", scores)
		w.SetInt32s("tokenizer.ggml.token_type", types)
		for i := range 1000 {
			w.DeclareTensor(fmt.Sprintf("blk.%d.weight", i), TensorF16, []int64{64, 8})
		}
		data := make([]byte, 64*8*2)
		for i := range 1000 {
			if err := w.WriteTensorData(fmt.Sprintf("blk.%d.weight", i), data); err != nil {
				bigErr = err
				return
			}
		}
		bigErr = w.Close()
	}()
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigPath
}

// BenchmarkOpenFirstLookup: open (mmap + full validation) and read one key.
func BenchmarkOpenFirstLookup(b *testing.B) {
	path := bigFile(b)
	b.ResetTimer()
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := f.Uint32("llama.context_length"); err != nil || n != 4096 {
			b.Fatal(n, err)
		}
		f.Close()
	}
}

// BenchmarkOpenFirstTensor: open and fetch one tensor's bytes.
func BenchmarkOpenFirstTensor(b *testing.B) {
	path := bigFile(b)
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.TensorData("blk.999.weight"); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkStrings100k: the whole 100,000-token vocabulary as Go strings.
func BenchmarkStrings100k(b *testing.B) {
	f, err := Open(bigFile(b))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for b.Loop() {
		if toks, err := f.Strings("tokenizer.ggml.tokens"); err != nil || len(toks) != 100_000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseInMemory: the same file already in memory (no mmap or I/O).
func BenchmarkParseInMemory(b *testing.B) {
	data, err := os.ReadFile(bigFile(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		f, err := OpenBytes(data, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if n, err := f.Uint32("llama.context_length"); err != nil || n != 4096 {
			b.Fatal(n, err)
		}
		f.Close()
	}
}
