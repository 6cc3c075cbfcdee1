package gguf_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ggml-go/ggml/gguf"
)

// Create writes a file atomically: metadata first, then tensor data, given
// whole (AddTensor) or streamed in declaration order (DeclareTensor and
// WriteTensorData).
func ExampleCreate() {
	dir, err := os.MkdirTemp("", "gguf-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")

	w, err := gguf.Create(path)
	if err != nil {
		panic(err)
	}
	_ = w.SetString("general.architecture", "tiny")
	_ = w.SetUint32("tiny.context_length", 128)
	_ = w.SetStrings("tokenizer.ggml.tokens", []string{"<s>", "</s>", "hello"})
	_ = w.AddTensor("bias", gguf.TensorF32, []int64{2}, f32Bytes(0.5, -0.5))
	_ = w.DeclareTensor("weight", gguf.TensorF32, []int64{2, 2})
	if err := w.WriteTensorData("weight", f32Bytes(1, 2, 3, 4)); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil { // renames the finished file into place
		panic(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Println("version", f.Version(), "keys", f.Keys())
	for _, t := range f.Tensors() {
		fmt.Println(t.Name, t.Type, t.Shape, t.Size, "bytes")
	}
	// Output:
	// version 3 keys [general.architecture tiny.context_length tokenizer.ggml.tokens]
	// bias f32 [2] 8 bytes
	// weight f32 [2 2] 16 bytes
}

// Open maps a file and validates it; getters are typed and say why a value
// is missing or of another type; TensorData is a view of the mapping.
func ExampleOpen() {
	path := writeExample()
	defer os.RemoveAll(filepath.Dir(path))

	f, err := gguf.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()

	arch, _ := f.String("general.architecture")
	n, _ := f.Int("tiny.context_length") // any integer type that fits
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	fmt.Println(arch, n, tokens)

	_, err = f.String("tiny.context_length")
	fmt.Println(err)
	_, err = f.Float32("missing")
	fmt.Println(err)

	data, _ := f.TensorData("weight") // no copy; valid until Close
	weight := make([]float32, len(data)/4)
	for i := range weight {
		weight[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	fmt.Println(weight)
	// Output:
	// tiny 128 [<s> </s> hello]
	// gguf: key "tiny.context_length" has type u32, not str
	// gguf: key "missing": not found
	// [1 2 3 4]
}

func f32Bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// writeExample writes the file of ExampleCreate into a new temporary
// directory and returns its path.
func writeExample() string {
	dir, err := os.MkdirTemp("", "gguf-example")
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "tiny.gguf")
	w, err := gguf.Create(path)
	if err != nil {
		panic(err)
	}
	_ = w.SetString("general.architecture", "tiny")
	_ = w.SetUint32("tiny.context_length", 128)
	_ = w.SetStrings("tokenizer.ggml.tokens", []string{"<s>", "</s>", "hello"})
	_ = w.AddTensor("weight", gguf.TensorF32, []int64{2, 2}, f32Bytes(1, 2, 3, 4))
	if err := w.Close(); err != nil {
		panic(err)
	}
	return path
}
