package gguf

import (
	"sync"
	"sync/atomic"

	"github.com/ggml-go/ggml/internal/link"
)

// mapping is the memory of a file opened with Open: a read-only mapping (or,
// where files are not mapped, a copy). The File holds one reference and
// package ggml's LoadGGUF (through link.GGUFRetain) may hold more; the memory
// is released with the last one, so that tensors pointing into it stay valid
// after the File is closed.
//
// Slices that TensorData handed out are not tracked by anyone. If there were
// any (exposed): when the File is collected unclosed they may still be in
// use, so the mapping is left in place for good; after Close they must not
// be used, and the last release maps zero pages over the same addresses, so
// that a slice used anyway reads zeros instead of crashing the program (the
// address range stays reserved).
type mapping struct {
	data        []byte
	refs        atomic.Int64
	exposed     atomic.Bool // TensorData returned slices of data
	leaveMapped atomic.Bool // the File was collected with exposed slices
	release     func(keepAddresses bool) error
}

func newMapping(data []byte, release func(keepAddresses bool) error) *mapping {
	m := &mapping{data: data, release: release}
	m.refs.Store(1)
	return m
}

// retain adds a reference; false if the memory is already released.
func (m *mapping) retain() bool {
	for {
		n := m.refs.Load()
		if n <= 0 {
			return false
		}
		if m.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// dropFile drops the File's reference (byGC: its cleanup).
func (m *mapping) dropFile(byGC bool) error {
	if byGC && m.exposed.Load() {
		m.leaveMapped.Store(true)
	}
	return m.drop()
}

// drop removes a reference, releasing the memory with the last one.
func (m *mapping) drop() error {
	if m.refs.Add(-1) != 0 || m.leaveMapped.Load() {
		return nil
	}
	return m.release(m.exposed.Load())
}

func init() {
	link.GGUFRetain = func(file any) ([]byte, func(), bool, error) {
		f := file.(*File)
		done, err := f.use()
		if err != nil {
			return nil, nil, false, err
		}
		defer done()
		m := f.res.mem
		if m == nil {
			return nil, nil, false, nil
		}
		if !m.retain() {
			return nil, nil, false, ErrClosed
		}
		return m.data, sync.OnceFunc(func() { m.drop() }), true, nil
	}
}
