package gguf

import (
	"sync"
	"sync/atomic"

	"github.com/ggml-go/ggml/internal/ggufmem"
)

// mapping is the memory of a file opened with Open: a read-only mapping (or,
// where files are not mapped, a copy). The File holds one reference and
// package ggml's LoadGGUF (through ggufmem.Retain) may hold more; the memory
// is released with the last one, so that tensors pointing into it stay valid
// after the File is closed.
//
// Slices that TensorData handed out are not tracked by anyone: if there were
// any, releasing replaces the file's pages with zero pages at the same
// addresses (see mapFile), so that a slice used after Close reads zeros
// instead of crashing the program; the address range then stays reserved.
type mapping struct {
	data    []byte
	refs    atomic.Int64
	exposed atomic.Bool // TensorData returned slices of data
	release func(keepAddresses bool) error
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

// drop removes a reference, releasing the memory with the last one.
func (m *mapping) drop() error {
	if m.refs.Add(-1) == 0 {
		return m.release(m.exposed.Load())
	}
	return nil
}

func init() {
	ggufmem.Retain = func(file any) ([]byte, func(), bool, error) {
		f := file.(*File)
		if f.ctx == nil {
			return nil, nil, false, ErrClosed
		}
		m := f.mem
		if m == nil {
			return nil, nil, false, nil
		}
		if !m.retain() {
			return nil, nil, false, ErrClosed
		}
		return m.data, sync.OnceFunc(func() { m.drop() }), true, nil
	}
}
