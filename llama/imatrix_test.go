package llama

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// rawImatrix encodes m as WriteImatrix would, without its checks.
func rawImatrix(m map[string][]float32) []byte {
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	w(int32(len(m)))
	for _, n := range names {
		w(int32(len(n)))
		w([]byte(n))
		w([2]int32{1, int32(len(m[n]))})
		w(m[n])
	}
	w(int32(1))
	return b.Bytes()
}

// WriteImatrix refuses, before it creates the file, exactly what
// ReadImatrix refuses: no entries, an empty name or one over 4096 bytes,
// an entry of no values, a NaN, infinite or negative value (it used to
// write them all); what it writes, ReadImatrix reads back.
func TestImatrixWriterAndReaderAcceptTheSame(t *testing.T) {
	dir := t.TempDir()
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	bad := map[string]map[string][]float32{
		"no entries":     {},
		"nil map":        nil,
		"empty name":     {"": {1}},
		"name too long":  {strings.Repeat("x", 4097): {1}},
		"5000-byte name": {"ok": {1}, strings.Repeat("y", 5000): {1}},
		"no values":      {"a": {}},
		"nil values":     {"a": nil, "b": {1}},
		"NaN":            {"a": {1, nan}},
		"+Inf":           {"a": {inf}},
		"-Inf":           {"a": {2, 3, -inf}},
		"negative":       {"a": {1}, "b": {0, -0.5}},
	}
	for name, m := range bad {
		path := filepath.Join(dir, "bad.dat")
		if err := WriteImatrix(path, m); err == nil {
			t.Errorf("%s: WriteImatrix: no error", name)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a file was created (%v)", name, err)
			os.Remove(path)
		}
		raw := rawImatrix(m)
		if _, err := parseImatrix(bytes.NewReader(raw), int64(len(raw))); err == nil {
			t.Errorf("%s: the reader accepts it", name)
		}
	}
	// too many values for an entry: refused by the writer before anything
	// is written (the reader's limit is the same constant)
	if err := WriteImatrix(filepath.Join(dir, "big.dat"), map[string][]float32{"a": make([]float32, imatrixMaxValues+1)}); err == nil {
		t.Error("1<<24+1 values: no error")
	}

	// the limits themselves, and zero values, are fine both ways
	good := map[string][]float32{strings.Repeat("n", imatrixMaxName): {0, 1e30}, "z": {0}, "é": {float32(math.SmallestNonzeroFloat32)}}
	path := filepath.Join(dir, "good.dat")
	if err := WriteImatrix(path, good); err != nil {
		t.Fatal(err)
	}
	got, err := ReadImatrix(path)
	if err != nil || len(got) != len(good) {
		t.Fatalf("%d entries, %v", len(got), err)
	}
	for n, v := range good {
		if len(got[n]) != len(v) || got[n][len(v)-1] != v[len(v)-1] {
			t.Errorf("%q: %v, want %v", n[:1], got[n], v)
		}
	}
}
