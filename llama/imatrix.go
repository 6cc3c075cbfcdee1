package llama

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// ReadImatrix reads an importance matrix file as llama.cpp's imatrix tool
// writes it (the binary .dat format): a count, then per tensor its name, the
// number of calls and the values (sums over calls), optionally followed by
// the last call number and the data set name. The values come back divided
// by the number of calls, as llama-quantize uses them.
func ReadImatrix(path string) (map[string][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	m, err := parseImatrix(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("llama: imatrix %s: %w", path, err)
	}
	return m, nil
}

// parseImatrix reads the size bytes of an imatrix file from r. Every count
// the file declares is checked against the bytes that remain before
// anything is allocated for it.
func parseImatrix(r io.Reader, size int64) (map[string][]float32, error) {
	cr := &countingReader{r: r}
	r = cr
	left := func() int64 { return size - cr.n }
	var n int32
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, err
	}
	// an entry takes at least 13 bytes: name length, one byte of name, calls, count
	if n <= 0 || n > imatrixMaxEntries || int64(n) > left()/13 {
		return nil, fmt.Errorf("bad entry count %d for %d bytes", n, size)
	}
	out := make(map[string][]float32, n)
	for i := range int(n) {
		var ln int32
		if err := binary.Read(r, binary.LittleEndian, &ln); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if ln <= 0 || ln > imatrixMaxName || int64(ln) > left() {
			return nil, fmt.Errorf("entry %d: bad name length %d", i, ln)
		}
		name := make([]byte, ln)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		var hdr [2]int32 // ncall, nval
		if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
			return nil, fmt.Errorf("entry %q: %w", name, err)
		}
		ncall, nval := hdr[0], hdr[1]
		if nval <= 0 || nval > imatrixMaxValues || 4*int64(nval) > left() {
			return nil, fmt.Errorf("entry %q: bad value count %d", name, nval)
		}
		v := make([]float32, nval)
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return nil, fmt.Errorf("entry %q: %w", name, err)
		}
		for j := range v {
			if ncall > 0 {
				v[j] /= float32(ncall)
			}
		}
		if err := checkImatrixValues(string(name), v); err != nil {
			return nil, err
		}
		if _, dup := out[string(name)]; dup {
			return nil, errors.New("duplicate entry " + string(name))
		}
		out[string(name)] = v
	}
	return out, nil // a trailing call count and data set name are not needed
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// The limits of an imatrix file, the same for ReadImatrix and
// WriteImatrix: entries, bytes of a name, values of an entry.
const (
	imatrixMaxEntries = 1 << 20
	imatrixMaxName    = 4096
	imatrixMaxValues  = 1 << 24
)

// checkImatrixValues refuses a value that is NaN, infinite or negative: an
// importance is a mean of squares.
func checkImatrixValues(name string, v []float32) error {
	for j, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x < 0 {
			return fmt.Errorf("entry %q: value %d is %g: importances are finite and not negative", name, j, x)
		}
	}
	return nil
}

// checkImatrix refuses what ReadImatrix would refuse in the file of m:
// no entries or more than 1<<20, a name empty or longer than 4096 bytes,
// an entry of no values or more than 1<<24, a value NaN, infinite or
// negative.
func checkImatrix(m map[string][]float32) error {
	if len(m) == 0 || len(m) > imatrixMaxEntries {
		return fmt.Errorf("%d entries: 1 to %d", len(m), imatrixMaxEntries)
	}
	for name, v := range m {
		if name == "" || len(name) > imatrixMaxName {
			return fmt.Errorf("a name of %d bytes: 1 to %d", len(name), imatrixMaxName)
		}
		if len(v) == 0 || len(v) > imatrixMaxValues {
			return fmt.Errorf("entry %q: %d values: 1 to %d", name, len(v), imatrixMaxValues)
		}
		if err := checkImatrixValues(name, v); err != nil {
			return err
		}
	}
	return nil
}

// WriteImatrix writes importance values (already averaged: ncall 1) in the
// format ReadImatrix reads. It accepts exactly what ReadImatrix accepts
// (see checkImatrix's limits: at least one entry, names of 1 to 4096
// bytes, 1 to 1<<24 values each, none NaN, infinite or negative) and
// refuses the rest before it creates the file.
func WriteImatrix(path string, m map[string][]float32) error {
	if err := checkImatrix(m); err != nil {
		return fmt.Errorf("llama: WriteImatrix %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := func(v any) {
		if err == nil {
			err = binary.Write(f, binary.LittleEndian, v)
		}
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	w(int32(len(m)))
	for _, name := range names {
		v := m[name]
		w(int32(len(name)))
		w([]byte(name))
		w([2]int32{1, int32(len(v))})
		w(v)
	}
	w(int32(1)) // last call
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
