//go:build !unix

package llama

import "time"

// allocArena returns size bytes of zeroed memory (from the Go heap here).
func allocArena(size int) ([]byte, func(), error) {
	return make([]byte, size), func() {}, nil
}

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
