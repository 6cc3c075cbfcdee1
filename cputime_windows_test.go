package ggml

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// processCPUTime is the CPU time (user and kernel) this process used so far.
func processCPUTime(t *testing.T) time.Duration {
	t.Helper()
	var creation, exit, kernel, user windows.Filetime
	require.NoError(t, windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user))
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) } // 100 ns each
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
