//go:build !race

package cmem

const raceEnabled = false
