//go:build !(linux || darwin || windows)

package gguf

import (
	"fmt"
	"os"
)

const mmapped = false

// mapFile reads the whole file: a portable stand-in where mmap is not wired up.
func mapFile(path string) ([]byte, func(keepAddresses bool) error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf: %w", err)
	}
	return data, func(bool) error { return nil }, nil // Go memory: slices keep it alive
}
