package gguf

// One test per rule of the Contract in doc.go, named after the rule.

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeSmall writes a file with a string key, an int key and one tensor of
// n bytes 0, 1, 2, ... (as i8).
func writeSmall(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "small.gguf")
	w, err := Create(path)
	require.NoError(t, err)
	require.NoError(t, w.SetString("general.name", "small"))
	require.NoError(t, w.SetInt32("answer", 42))
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i)
	}
	require.NoError(t, w.AddTensor("t", TensorI8, []int64{int64(n)}, data))
	require.NoError(t, w.Close())
	return path
}

// count reads a number of the process from /proc: mappings or descriptors.
func count(t *testing.T, what string) int {
	t.Helper()
	switch what {
	case "maps":
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps")
		}
		return strings.Count(string(b), "\n")
	case "fds":
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(es)
	}
	panic(what)
}

func settle() {
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// Close releases everything, is idempotent, and afterwards the methods that
// return an error return ErrClosed and the others panic with it.
func TestContractCloseThenErrClosed(t *testing.T) {
	f, err := Open(writeSmall(t, 64))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, f.Close())
	_, err = f.String("general.name")
	require.ErrorIs(t, err, ErrClosed)
	_, err = f.TensorData("t")
	require.ErrorIs(t, err, ErrClosed)
	v := func() (v any) {
		defer func() { v = recover() }()
		f.Version()
		return nil
	}()
	require.Equal(t, ErrClosed, v)
}

// Files opened and dropped without Close are unmapped by the collector: a
// few thousand opens (no runtime.GC of the program) leave the number of
// mappings and descriptors bounded.
func TestContractUnclosedFilesReleased(t *testing.T) {
	path := writeSmall(t, 4096)
	settle()
	maps0, fds0 := count(t, "maps"), count(t, "fds")
	peakMaps, peakFds := 0, 0
	for i := range 3000 {
		f, err := Open(path)
		require.NoError(t, err)
		_, err = f.Int("answer")
		require.NoError(t, err)
		if i%50 == 0 {
			peakMaps = max(peakMaps, count(t, "maps")-maps0)
			peakFds = max(peakFds, count(t, "fds")-fds0)
		}
	}
	t.Logf("3000 unclosed opens: at most %d more mappings, %d more descriptors", peakMaps, peakFds)
	require.Less(t, peakMaps, 600)
	require.Less(t, peakFds, 8)
}

// Views of the mapping never fault: a TensorData slice (or a TensorReader)
// stays readable after its File was dropped and collected.
func TestContractViewsNeverFault(t *testing.T) {
	path := writeSmall(t, 1<<16)
	data, r := func() ([]byte, io.Reader) {
		f, err := Open(path)
		require.NoError(t, err)
		b, err := f.TensorData("t")
		require.NoError(t, err)
		r, err := f.TensorReader("t")
		require.NoError(t, err)
		return b, r
	}()
	settle()
	require.Equal(t, byte(0xff), data[0xffff])
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, data, got)
}

// File contents never cause a panic: invalid files are *FormatError, absent
// keys ErrNotFound, other types *TypeError, missing data ErrNoData, and I/O
// failures wrap the os error.
func TestContractErrors(t *testing.T) {
	_, err := OpenBytes([]byte("GGUF\x03\x00\x00\x00garbage"), Options{})
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	_, err = Open(filepath.Join(t.TempDir(), "none.gguf"))
	require.ErrorIs(t, err, os.ErrNotExist)

	path := writeSmall(t, 1024)
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.String("nope")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = f.String("answer")
	var te *TypeError
	require.ErrorAs(t, err, &te)
	require.ErrorIs(t, err, ErrType)

	// Only the metadata of a file truncated inside its tensor data.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := OpenBytes(b[:len(b)-512], Options{MetadataOnly: true})
	require.NoError(t, err)
	_, err = m.TensorData("t")
	require.ErrorIs(t, err, ErrNoData)
	_, err = OpenBytes(b[:len(b)-512], Options{})
	require.ErrorAs(t, err, &fe)
}

// A File is safe for concurrent use by several goroutines.
func TestContractConcurrentReaders(t *testing.T) {
	f, err := Open(writeSmall(t, 4096))
	require.NoError(t, err)
	defer f.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 100 {
				v, err := f.Int("answer")
				if err == nil && v != 42 {
					err = errors.New("wrong value")
				}
				if err == nil {
					var b []byte
					b, err = f.TensorData("t")
					if err == nil && b[100] != 100 {
						err = errors.New("wrong data")
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// A Writer from Create dropped without Close or Abort removes its temporary
// file when it is collected.
func TestContractDroppedWriterRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	func() {
		w, err := Create(filepath.Join(dir, "x.gguf"))
		require.NoError(t, err)
		require.NoError(t, w.SetString("k", "v"))
	}()
	// Cleanups run on their own goroutine after a collection: wait for the
	// removal (however loaded the machine) rather than for a fixed time.
	var es []os.DirEntry
	for deadline := time.Now().Add(30 * time.Second); ; {
		runtime.GC()
		var err error
		es, err = os.ReadDir(dir)
		require.NoError(t, err)
		if len(es) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Empty(t, es)
}
