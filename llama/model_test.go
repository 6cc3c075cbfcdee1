package llama

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/gguf"
)

// Issue 32: Load's error names the file once and says "llama:" once, even
// when the cause is an error of this package (the vocabulary's here).
func TestLoadErrorHasOnePrefix(t *testing.T) {
	good := smallModel(t, Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 64, NCtxTrain: 32}, false)
	src, err := gguf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "novocab.gguf")
	w, err := gguf.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CopyKVs(src); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("tokenizer.ggml.model"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path, LoadOptions{})
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); strings.Count(msg, "llama:") != 1 || !strings.HasPrefix(msg, "llama: "+path+": vocabulary: ") {
		t.Errorf("error %q", msg)
	}
	if !errors.Is(err, gguf.ErrNotFound) {
		t.Errorf("%v does not wrap gguf.ErrNotFound", err)
	}
}
