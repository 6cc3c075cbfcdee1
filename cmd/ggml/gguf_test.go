package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/gguf"
)

// writeTruncated writes a GGUF file with a key and a 1 KiB tensor, then cuts
// the file inside the tensor data (as an interrupted download would).
func writeTruncated(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cut.gguf")
	w, err := gguf.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetString("general.name", "truncated model"); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("w", gguf.TensorF32, []int64{256}, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()-500); err != nil {
		t.Fatal(err)
	}
	return path
}

// A file whose tensor data runs past its end is shown
// (metadata and tensor list), and the command fails (non-zero exit status).
func TestInspectTruncatedFails(t *testing.T) {
	path := writeTruncated(t)
	var out bytes.Buffer
	err := ggufInspect([]string{path}, &out)
	if err == nil {
		t.Fatal("inspect of a truncated file succeeded")
	}
	for _, want := range []string{"truncated model", "general.name", "1 tensors:", "warning:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := ggufDump([]string{"--json", path}, &out); err == nil {
		t.Fatal("dump of a truncated file succeeded")
	}
	if !strings.Contains(out.String(), `"truncated model"`) {
		t.Errorf("dump lacks the metadata:\n%s", out.String())
	}
	// a complete file still succeeds
	good := filepath.Join(t.TempDir(), "good.gguf")
	w, err := gguf.Create(good)
	if err != nil {
		t.Fatal(err)
	}
	w.AddTensor("w", gguf.TensorF32, []int64{4}, make([]byte, 16))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ggufInspect([]string{good}, &out); err != nil {
		t.Fatal(err)
	}
}
