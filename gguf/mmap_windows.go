package gguf

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// mapFile maps the whole file read-only (a file mapping and a view of it).
// An empty file maps to an empty slice (a mapping cannot be empty). release
// unmaps it; with keepAddresses it then reserves and commits zero pages at
// the same addresses, so that slices of the data still held somewhere read
// zeros rather than fault (Windows has no atomic MAP_FIXED: should another
// allocation take the range in between, those slices fault as without
// keepAddresses).
const mmapped = true

func mapFile(path string) ([]byte, func(keepAddresses bool) error, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close() // the view outlives the file and mapping handles
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
	h, err := windows.CreateFileMapping(windows.Handle(fd.Fd()), nil, windows.PAGE_READONLY,
		uint32(uint64(size)>>32), uint32(size), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: CreateFileMapping %s: %w", path, err)
	}
	defer windows.CloseHandle(h) // the view keeps the mapping
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_READ, 0, 0, uintptr(size))
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: MapViewOfFile %s: %w", path, err)
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr)) // the view's address, as the pointer it is
	data := unsafe.Slice((*byte)(p), int(size))
	return data, func(keepAddresses bool) error {
		if err := windows.UnmapViewOfFile(addr); err != nil {
			return fmt.Errorf("gguf: UnmapViewOfFile: %w", err)
		}
		if keepAddresses {
			_, _ = windows.VirtualAlloc(addr, uintptr(size), windows.MEM_RESERVE|windows.MEM_COMMIT, windows.PAGE_READONLY)
		}
		return nil
	}, nil
}
