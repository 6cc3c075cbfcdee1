//go:build !linux && !windows

package llama

// physicalMemory is the machine's RAM in bytes (0: unknown here).
func physicalMemory() int64 { return 0 }
