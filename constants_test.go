package ggml

import "testing"

// The Go constants that copy C enum and macro values must keep the C values.
func TestMirroredConstantsEqualTheirCValues(t *testing.T) {
	for _, c := range mirroredConstants() {
		if c.goVal != c.cVal {
			t.Errorf("%s = %d in Go, %d in the C headers", c.name, c.goVal, c.cVal)
		}
	}
}
