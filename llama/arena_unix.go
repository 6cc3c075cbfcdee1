//go:build unix

package llama

import (
	"time"

	"golang.org/x/sys/unix"
)

// allocArena returns size bytes of zeroed memory outside the Go heap: an
// anonymous mapping, whose pages cost nothing until touched and which does
// not count toward the garbage collector's heap goal (a large Go slice
// would let per-token garbage pile up for hundreds of megabytes).
func allocArena(size int) ([]byte, func(), error) {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { unix.Munmap(b) }, nil
}

// cpuTime is the CPU time the process used so far (all threads).
func cpuTime() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
