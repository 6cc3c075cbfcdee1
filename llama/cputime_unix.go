//go:build unix

package llama

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuTime is the CPU time the process used so far (all threads).
func cpuTime() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
