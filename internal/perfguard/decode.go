package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// decodeTimeout bounds one run of the runner (a 1B f16 model at 1 thread
// on a loaded machine takes well under it).
const decodeTimeout = 10 * time.Minute

// genSpeed is the runner's generation line ("generation: N tokens ... =
// X tokens/s ..."), printed by every revision of `ggml run`.
var genSpeed = regexp.MustCompile(`(?m)^generation: .* = ([0-9.]+) tokens/s`)

// parseGenSpeed reads the generation speed from the runner's stderr.
func parseGenSpeed(stderr string) (float64, error) {
	m := genSpeed.FindStringSubmatch(stderr)
	if m == nil {
		return 0, fmt.Errorf("no generation speed in the output: %q", lastLines(stderr, 3))
	}
	return strconv.ParseFloat(m[1], 64)
}

// decodeArgs are the runner's arguments for one timed decode: greedy, past
// any end of text, the same prompt and seed on both sides; only flags that
// every revision of `ggml run` has.
func decodeArgs(model string, threads, tokens int) []string {
	return []string{"run", "-m", model, "-p", "Once upon a time", "-n", strconv.Itoa(tokens),
		"-t", strconv.Itoa(threads), "-temp", "0", "-seed", "1", "-ignore-eos", "-q"}
}

// decode runs bin's runner once and returns its generation tokens/s.
func decode(bin, model string, threads, tokens int) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), decodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, decodeArgs(model, threads, tokens)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %v: %s", bin, err, lastLines(stderr.String(), 3))
	}
	return parseGenSpeed(stderr.String())
}

// lastLines is the end of a program's output for an error message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
