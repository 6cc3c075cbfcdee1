//go:build linux || darwin

package gguf

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the whole file read-only. An empty file maps to an empty
// slice (mmap rejects zero lengths).
const mmapped = true

func mapFile(path string) ([]byte, func() error, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close() // the mapping outlives the descriptor
	st, err := fd.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: %w", err)
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("gguf: %s: %d bytes cannot be mapped on this platform", path, size)
	}
	data, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
