package gguf

// One test per rule of the Contract in doc.go, named after the rule.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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

// Close while other goroutines read the File waits for their calls: those
// begun after it return ErrClosed (or, without an error result, panic with
// it), and nothing faults. The race detector checks the memory accesses.
func TestContractCloseConcurrentWithUseIsAnError(t *testing.T) {
	for range 20 {
		f, err := Open(writeSmall(t, 4096))
		require.NoError(t, err)
		progress := make(chan struct{}, 8)
		errs := make(chan error, 4)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				defer func() {
					if r := recover(); r != nil {
						err, _ := r.(error)
						errs <- fmt.Errorf("panic: %w", err)
					}
				}()
				for {
					select {
					case progress <- struct{}{}:
					default:
					}
					var err error
					switch g {
					case 0:
						_, err = f.Int("answer")
					case 1:
						_, err = f.String("general.name")
					case 2:
						var r *io.SectionReader
						if r, err = f.TensorReader("t"); err == nil {
							_, err = io.ReadAll(r)
						}
					case 3:
						f.Tensors()
						f.Version()
						_, err = f.Value("answer")
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		for range 4 {
			<-progress
		}
		require.NoError(t, f.Close())
		wg.Wait()
		close(errs)
		for err := range errs {
			require.ErrorIs(t, err, ErrClosed)
		}
	}
}

// A nil *File is a closed File: ErrClosed from the methods with an error
// result, a panic with ErrClosed from the others, and Close is a no-op.
func TestContractNilFileIsClosed(t *testing.T) {
	var f *File
	require.NoError(t, f.Close())
	_, err := f.Int("answer")
	require.ErrorIs(t, err, ErrClosed)
	_, err = f.TensorData("t")
	require.ErrorIs(t, err, ErrClosed)
	_, err = f.Strings("x")
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, ErrClosed, func() (v any) {
		defer func() { v = recover() }()
		f.Tensors()
		return nil
	}())
	require.False(t, f.Mapped())
	require.Zero(t, f.Size())
}

// After Close or Abort, and on a nil *Writer, every method of a Writer
// returns an error wrapping ErrClosed (Close returns its first result
// again); Close or Abort from another goroutine while one writes is an
// error of the writes, never a crash or a corrupted file under the final
// name.
func TestContractWriterAfterCloseGivesErrClosed(t *testing.T) {
	dir := t.TempDir()
	calls := func(w *Writer) map[string]error {
		return map[string]error{
			"Set":             w.Set("k", uint32(1)),
			"SetString":       w.SetString("s", "v"),
			"Remove":          w.Remove("k"),
			"SetAlignment":    w.SetAlignment(64),
			"AddTensor":       w.AddTensor("x", TensorI8, []int64{4}, []byte{1, 2, 3, 4}),
			"DeclareTensor":   w.DeclareTensor("y", TensorI8, []int64{4}),
			"WriteTensorData": w.WriteTensorData("y", []byte{1, 2, 3, 4}),
			"WriteTensorFrom": w.WriteTensorFrom("y", strings.NewReader("abcd")),
		}
	}
	closed, err := Create(filepath.Join(dir, "closed.gguf"))
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.NoError(t, closed.Close())
	aborted, err := Create(filepath.Join(dir, "aborted.gguf"))
	require.NoError(t, err)
	aborted.Abort()
	aborted.Abort()
	var nilWriter *Writer
	for name, w := range map[string]*Writer{"closed": closed, "aborted": aborted, "nil": nilWriter} {
		for op, err := range calls(w) {
			require.ErrorIs(t, err, ErrClosed, "%s after %s", op, name)
		}
	}
	require.NoError(t, nilWriter.Close())
	nilWriter.Abort()
	require.Zero(t, nilWriter.MetaSize())
	require.Error(t, NewWriter(nil).Close())

	for _, abort := range []bool{false, true} {
		w, err := Create(filepath.Join(dir, "raced.gguf"))
		require.NoError(t, err)
		progress := make(chan struct{}, 1)
		errs := make(chan error, 1)
		go func() {
			for i := 0; ; i++ {
				select {
				case progress <- struct{}{}:
				default:
				}
				if err := w.SetUint32("k"+strconv.Itoa(i), uint32(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
		for range 3 {
			<-progress
		}
		if abort {
			w.Abort()
		} else {
			require.NoError(t, w.Close())
		}
		require.ErrorIs(t, <-errs, ErrClosed)
		if !abort {
			f, err := Open(filepath.Join(dir, "raced.gguf"))
			require.NoError(t, err, "the file closed while keys were set")
			require.NoError(t, f.Close())
		}
	}
}
