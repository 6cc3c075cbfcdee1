//go:build !unix

package llama

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
