//go:build race

package cmem

// The race detector slows the goroutine that runs cleanups by several
// times, so more of them are pending when Charge looks.
const raceEnabled = true
