package llamacli

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/internal/cli"

	"github.com/ggml-go/ggml/llama"
)

// testModel saves a small random model whose training context is nCtx.
func testModel(t *testing.T, nCtx int) string {
	t.Helper()
	v, err := llama.TrainVocab("the quick brown fox jumps over the lazy dog", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.NewModel(llama.Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 64, NCtxTrain: nCtx}, v, llama.ModelOptions{Seed: 1, Std: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := m.Save(path, "cli-test"); err != nil {
		t.Fatal(err)
	}
	m.Close()
	return path
}

// run runs the runner with args and returns its stdout and stderr.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = Run("llama", args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestRun(t *testing.T) {
	path := testModel(t, 64)
	var out, errb bytes.Buffer
	err := Run("llama", []string{"-m", path, "-p", "the lazy", "-n", "8", "-t", "1", "--temp", "0", "--ignore-eos"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.HasPrefix(out.String(), "the lazy") || len(out.String()) <= len("the lazy\n") {
		t.Errorf("stdout %q", out.String())
	}
	if !strings.Contains(errb.String(), "prompt: 10 tokens") || !strings.Contains(errb.String(), "generation: 8 tokens (7 evaluated)") {
		t.Errorf("stderr %q", errb.String())
	}
	// sampling flags, token ids
	out.Reset()
	errb.Reset()
	err = Run("llama", []string{"-m", path, "-ids", "1,5,6", "-n", "4", "--temp", "0.7", "--top-k", "5", "--top-p", "0.9", "--seed", "3", "-q"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	// the memory ceiling after generating
	out.Reset()
	errb.Reset()
	if err := Run("llama", []string{"-m", path, "-ids", "1,5,6", "-n", "3", "-t", "2", "-ceiling", "3", "-q"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	// -t is capped to the CPUs
	if !strings.Contains(errb.String(), "ceiling: ") || !strings.Contains(errb.String(), fmt.Sprintf("%d threads, 3 rounds): best ", min(2, runtime.NumCPU()))) ||
		!strings.Contains(errb.String(), "% of the mean's speed") {
		t.Errorf("no ceiling line:\n%s", errb.String())
	}
	// the paired ceiling: its tokens need free positions after the generation
	// (which evaluated the prompt and all but the last generated token)
	out.Reset()
	errb.Reset()
	if err := Run("llama", []string{"-m", path, "-ids", "1,5,6", "-n", "3", "-c", "12", "-ceiling-pairs", "6", "-q"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "ceiling pairs: 6 tokens from position 5, ") || !strings.Contains(errb.String(), "share of the reads' speed median ") {
		t.Errorf("no ceiling pairs line:\n%s", errb.String())
	}
	errb.Reset()
	err = Run("llama", []string{"-m", path, "-ids", "1,5,6", "-n", "3", "-c", "12", "-ceiling-pairs", "8", "-q"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "7 free positions") {
		t.Errorf("-ceiling-pairs past the context: %v", err)
	}
	// repetitions: the best times, the same tokens (sampling with a seed too),
	// and the first run's text once
	for _, args := range [][]string{{"--temp", "0"}, {"--temp", "0.8", "--seed", "5"}} {
		out.Reset()
		errb.Reset()
		if err := Run("llama", append([]string{"-m", path, "-ids", "1,5,6", "-n", "5", "-r", "3", "-q", "--ignore-eos"}, args...), &out, &errb); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		if !strings.Contains(errb.String(), "reps: 3,") || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("-r 3 %v:\nstdout %q\nstderr %s", args, out.String(), errb.String())
		}
	}
	for _, bad := range [][]string{{}, {"-m", path, "-ids", "1,x"}, {"-m", filepath.Join(t.TempDir(), "none.gguf")}, {"-m", path, "-ids", "99999"}} {
		if err := Run("llama", bad, &out, &errb); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// Flags are checked as llama.cpp users expect, before the model
// is loaded: each bad value is a one-line command-line error naming it.
func TestRunRejectsBadFlagsOneLineEach(t *testing.T) {
	path := testModel(t, 64)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "-5"}, "-c -5"},
		{[]string{"-b", "0"}, "-b 0"},
		{[]string{"--top-k", "-3"}, "--top-k -3"},
		{[]string{"--top-p", "5"}, "--top-p 5"},
		{[]string{"--top-p", "-0.1"}, "--top-p -0.1"},
		{[]string{"--temp", "-1"}, "--temp -1"},
		{[]string{"-n", "-2"}, "-n -2"},
		{[]string{"-r", "0"}, "-r 0"},
		{[]string{"-ceiling-pairs", "-1"}, "-ceiling-pairs -1"},
		{[]string{"my prompt"}, `unexpected argument "my prompt"`},
		{[]string{"-p", "x", "more", "words"}, `unexpected argument "more words"`},
		{[]string{"-no-such-flag"}, "-no-such-flag"},
	} {
		stdout, stderr, err := run(t, append([]string{"-m", path}, c.args...)...)
		if err == nil || !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%v: error %v, want a usage error", c.args, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %q, want one line with %q", c.args, err, c.want)
		}
		if stdout != "" || stderr != "" {
			t.Errorf("%v: printed stdout %q stderr %q", c.args, stdout, stderr)
		}
	}
	if _, _, err := run(t, "-p", "x"); err == nil || !strings.Contains(err.Error(), "-m") {
		t.Errorf("no model: %v", err)
	}
}

// -h prints the usage to stdout and is not an error; the help
// says what -t and -n take.
func TestRunHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		stdout, stderr, err := run(t, arg)
		if err != nil || stderr != "" {
			t.Fatalf("%s: err %v, stderr %q", arg, err, stderr)
		}
		for _, want := range []string{"usage: llama -m MODEL.gguf", "0 or negative: all CPUs", "-1: until end of text or the context is full", "0: evaluate the prompt only"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: help lacks %q:\n%s", arg, want, stdout)
			}
		}
	}
}

// -n counts the tokens produced (and the report says so), -n 0
// generates nothing, -n -1 runs until the context is full, and stopping
// there is said on stderr.
func TestRunTokenCountsAndContextLimit(t *testing.T) {
	path := testModel(t, 32)
	base := []string{"-m", path, "-ids", "1,5,6,7", "--temp", "0", "--ignore-eos", "-q", "-t", "1"}
	_, stderr, err := run(t, append(base, "-n", "8")...)
	if err != nil || !strings.Contains(stderr, "generation: 8 tokens") || strings.Contains(stderr, "context is full") {
		t.Errorf("-n 8: %v\n%s", err, stderr)
	}
	stdout, stderr, err := run(t, append(base, "-n", "0")...)
	if err != nil || stdout != "\n" || !strings.Contains(stderr, "prompt: 4 tokens") || !strings.Contains(stderr, "generation: 0 tokens") {
		t.Errorf("-n 0: %v\nstdout %q\n%s", err, stdout, stderr)
	}
	// 4 prompt positions + 28 evaluated tokens fill the 32; the 29th is sampled last
	for _, n := range []string{"-1", "100"} {
		_, stderr, err = run(t, append(base, "-n", n)...)
		if err != nil || !strings.Contains(stderr, "generation: 29 tokens (28 evaluated)") ||
			!strings.Contains(stderr, "generation stopped: the context is full (32 positions") {
			t.Errorf("-n %s: %v\n%s", n, err, stderr)
		}
	}
	// past the trained context: allowed, with a warning
	_, stderr, err = run(t, append(base, "-n", "40", "-c", "48")...)
	if err != nil || !strings.Contains(stderr, "warning: -c 48 is past the model's trained context (32 positions)") ||
		!strings.Contains(stderr, "generation: 40 tokens") {
		t.Errorf("-c 48: %v\n%s", err, stderr)
	}
	// a prompt longer than the context
	if _, _, err = run(t, "-m", path, "-ids", "1,2,3,4,5,6", "-c", "4"); err == nil || !strings.Contains(err.Error(), "the prompt is 6 tokens") {
		t.Errorf("long prompt: %v", err)
	}
}

// -t 0 and negative -t mean all CPUs; more threads than CPUs are
// capped to them with a warning.
func TestRunThreadsRule(t *testing.T) {
	path := testModel(t, 32)
	cpus := runtime.NumCPU()
	for _, tn := range []string{"0", "-1"} {
		_, stderr, err := run(t, "-m", path, "-ids", "1,2", "-n", "2", "-q", "-t", tn)
		if err != nil || !strings.Contains(stderr, fmt.Sprintf("%d threads)", cpus)) || strings.Contains(stderr, "warning") {
			t.Errorf("-t %s: %v\n%s", tn, err, stderr)
		}
	}
	_, stderr, err := run(t, "-m", path, "-ids", "1,2", "-n", "2", "-q", "-t", "100000")
	if err != nil || !strings.Contains(stderr, fmt.Sprintf("warning: -t 100000: this machine has %d CPUs; using %d threads", cpus, cpus)) ||
		!strings.Contains(stderr, fmt.Sprintf("%d threads)", cpus)) {
		t.Errorf("-t 100000: %v\n%s", err, stderr)
	}
}

// quantiles interpolates between the two nearest ranks and gives NaN for
// no values.
func TestQuantiles(t *testing.T) {
	got := quantiles([]float64{4, 1, 3, 2, 5}, 0, 0.25, 0.5, 0.9, 1)
	if want := []float64{1, 2, 3, 4.6, 5}; !slices.EqualFunc(got, want, func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
		t.Errorf("quantiles %v, want %v", got, want)
	}
	if q := quantiles([]float64{7}, 0.5); q[0] != 7 {
		t.Errorf("one value: %v", q)
	}
	if q := quantiles(nil, 0.5); !math.IsNaN(q[0]) {
		t.Errorf("no values: %v", q)
	}
}
