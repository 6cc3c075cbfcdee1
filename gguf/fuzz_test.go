package gguf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggml-go/ggml/internal/shareddata"
)

// FuzzOpen feeds arbitrary bytes to the reader. Properties: no crash or
// hang; every failure is a *FormatError; OpenBytes and OpenReader (which
// parses growing prefixes) agree; everything an accepted file holds can be
// read; and an accepted file rewritten by the Writer reads back the same.
func FuzzOpen(f *testing.F) {
	if root, ok := shareddata.Find("parity"); ok {
		for _, sub := range []string{"gguf", "gguf-malformed", "gguf-corrupted"} {
			files, _ := filepath.Glob(filepath.Join(root, sub, "*.gguf"))
			for _, p := range files {
				b, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				if len(b) > 64<<10 { // big seeds slow the mutator; their heads are what matters
					b = b[:64<<10]
				}
				f.Add(b)
			}
		}
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.SetString("general.name", "seed")
	w.SetStrings("tokens", []string{"a", "bc", ""})
	w.SetAlignment(16)
	w.AddTensor("t", TensorF16, []int64{3, 2}, make([]byte, 12))
	w.Close()
	f.Add(buf.Bytes())

	saved := firstRead
	firstRead = 8
	defer func() { firstRead = saved }()

	f.Fuzz(func(t *testing.T, data []byte) {
		for _, meta := range []bool{false, true} {
			opts := Options{MetadataOnly: meta}
			g, err := OpenBytes(data, opts)
			r, rerr := OpenReader(bytes.NewReader(data), int64(len(data)), opts)
			if (err == nil) != (rerr == nil) {
				t.Fatalf("OpenBytes and OpenReader disagree: %v / %v", err, rerr)
			}
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) || !errors.As(rerr, &fe) {
					t.Fatalf("not a FormatError: %v / %v", err, rerr)
				}
				continue
			}
			exercise(t, g, r)
			if !meta {
				rewrite(t, g)
			}
			g.Close()
			r.Close()
		}
	})
}

func exercise(t *testing.T, g, r *File) {
	for _, kv := range g.KVs() {
		v, err := g.Value(kv.Key)
		if err != nil {
			t.Fatalf("value of %q: %v", kv.Key, err)
		}
		v2, err := r.Value(kv.Key)
		if err != nil || !equalValues(v, v2) {
			t.Fatalf("readers disagree on %q", kv.Key)
		}
	}
	for _, ti := range g.Tensors() {
		d, err := g.TensorData(ti.Name)
		d2, err2 := r.TensorData(ti.Name)
		if (err == nil) != (err2 == nil) || !bytes.Equal(d, d2) {
			t.Fatalf("readers disagree on tensor %q: %v / %v", ti.Name, err, err2)
		}
		if err == nil && int64(len(d)) != ti.Size {
			t.Fatalf("tensor %q: %d bytes, want %d", ti.Name, len(d), ti.Size)
		}
	}
}

func equalValues(a, b any) bool {
	// NaN-safe comparison through the encoded form
	var x, y bytes.Buffer
	wa, wb := NewWriter(&x), NewWriter(&y)
	return wa.Set("k", a) == nil && wb.Set("k", b) == nil && wa.Close() == nil && wb.Close() == nil &&
		bytes.Equal(x.Bytes(), y.Bytes())
}

func rewrite(t *testing.T, g *File) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.CopyKVs(g); err != nil {
		t.Fatalf("CopyKVs: %v", err)
	}
	for _, ti := range g.Tensors() {
		d, err := g.TensorData(ti.Name)
		if err != nil {
			t.Fatalf("TensorData: %v", err)
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, d); err != nil {
			t.Fatalf("AddTensor %q: %v", ti.Name, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	h, err := OpenBytes(buf.Bytes(), Options{})
	if err != nil {
		t.Fatalf("rewritten file rejected: %v", err)
	}
	defer h.Close()
	if h.Alignment() != g.Alignment() || len(h.KVs()) != len(g.KVs()) || h.NumTensors() != g.NumTensors() {
		t.Fatalf("rewritten file differs")
	}
	exercise(t, g, h)
}
