//go:build linux || darwin

package gguf

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps the whole file read-only. An empty file maps to an empty
// slice (mmap rejects zero lengths). release unmaps it; with keepAddresses
// it instead maps zero pages over the same addresses, so that slices of the
// data still held somewhere read zeros rather than fault.
const mmapped = true

func mapFile(path string) ([]byte, func(keepAddresses bool) error, error) {
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
		return []byte{}, func(bool) error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("gguf: %s: %d bytes cannot be mapped on this platform", path, size)
	}
	data, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	return data, func(keepAddresses bool) error {
		if keepAddresses {
			_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(&data[0]), uintptr(len(data)), unix.PROT_READ,
				unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED)
			if err == nil {
				return nil
			}
		}
		return unix.Munmap(data)
	}, nil
}
