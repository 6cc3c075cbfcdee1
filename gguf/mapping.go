package gguf

import (
	"sync"
	"sync/atomic"
)

// mapping is the memory of a file opened with Open: a read-only mapping (or,
// where files are not mapped, a copy). The File holds one reference and
// RetainData hands out more; the memory is released with the last one, so
// that tensors pointing into it (ggml's LoadGGUF without copy) stay valid
// after the File is closed.
type mapping struct {
	refs    atomic.Int64
	release func() error
}

func newMapping(release func() error) *mapping {
	m := &mapping{release: release}
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
		return m.release()
	}
	return nil
}

// RetainData keeps the memory that TensorData returns slices of valid after
// Close, until release is called. release may be called more than once (only
// the first call counts) and from any goroutine. For files whose tensor data
// are copies (OpenReader) or caller memory (OpenBytes) there is nothing to
// keep and release does nothing. It returns ErrClosed for a closed File.
//
// ggml's Context.LoadGGUF without copy uses it, so that tensors pointing into
// the mapping stay readable after the File is closed.
func (f *File) RetainData() (release func(), err error) {
	if f.ctx == nil {
		return nil, ErrClosed
	}
	m := f.mem
	if m == nil {
		return func() {}, nil
	}
	if !m.retain() {
		return nil, ErrClosed
	}
	return sync.OnceFunc(func() { m.drop() }), nil
}
