package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGenSpeedReadsTheGenerationLine(t *testing.T) {
	// the line as the runner prints it now, and as older revisions did
	for _, out := range []string{
		"memory: weights 1.0 MiB\nprompt: 5 tokens in 1.00 ms = 5000.00 tokens/s (cpu 1.00 ms)\n" +
			"generation: 64 tokens (64 evaluated) in 500.00 ms = 128.50 tokens/s (cpu 490.00 ms, 1 threads)\n",
		"generation: 64 tokens in 500.00 ms = 128.50 tokens/s (cpu 490.00 ms, 1 threads)\n",
	} {
		v, err := parseGenSpeed(out)
		require.NoError(t, err)
		assert.Equal(t, 128.5, v)
	}
}

func TestParseGenSpeedFailsWithoutTheLine(t *testing.T) {
	_, err := parseGenSpeed("error: no model\n")
	assert.ErrorContains(t, err, "no model")
}

func TestDecodeArgsAreGreedyAndFixed(t *testing.T) {
	assert.Equal(t, []string{"run", "-m", "m.gguf", "-p", "Once upon a time", "-n", "32", "-t", "2",
		"-temp", "0", "-seed", "1", "-ignore-eos", "-q"}, decodeArgs("m.gguf", 2, 32))
}
