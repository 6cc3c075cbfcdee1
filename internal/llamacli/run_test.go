package llamacli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
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
		{[]string{"--n_predict", "5"}, "(did you mean --n-predict?)"},
		{[]string{"--ctx-size", "2000000000"}, "-c 2000000000: the context size must be 0 (the model's) to"},
		{[]string{"-b", "2000000000"}, "-b 2000000000"},
		{[]string{"--min-p", "2"}, "--min-p 2"},
		{[]string{"--min-p", "NaN"}, "--min-p NaN"},
		{[]string{"--repeat-penalty", "0"}, "--repeat-penalty 0"},
		{[]string{"--repeat-penalty", "Inf"}, "--repeat-penalty +Inf"},
		{[]string{"--repeat-last-n", "-2"}, "--repeat-last-n -2"},
		{[]string{"--temp", "Inf"}, "--temp +Inf"},
		{[]string{"-s", "x"}, `invalid value "x" for flag -s: a seed is 0 to 2^64-1, or -1`},
		{[]string{"-f", "p.txt", "-p", "x"}, "-f and -p both give the prompt"},
		{[]string{"-ids", "1", "--prompt", "x"}, "-ids and -p or -f all give the prompt"},
		{[]string{"-ids", "4294967297"}, "-ids: 4294967297 is out of range (token ids are 0 to 2147483647)"},
		{[]string{"-ids", "2147483648"}, "-ids: 2147483648 is out of range"},
		{[]string{"-ids", "99999999999999999999"}, "-ids: 99999999999999999999 is out of range"},
		{[]string{"-ids", "-1"}, "-ids: -1 is out of range"},
		{[]string{"-ids", "1,x,3"}, `-ids: "x" is not a token id`},
		{[]string{"-ids", "1,,3"}, "-ids 1,,3: id 2 is empty"},
		{[]string{"-ids", ","}, "-ids ,: id 1 is empty"},
		{[]string{"--rpc", "nonsense"}, `--rpc: "nonsense" is not HOST:PORT`},
		{[]string{"--rpc", "127.0.0.1:99999"}, `--rpc: "127.0.0.1:99999": port out of range`},
		{[]string{"--rpc", "127.0.0.1:1,"}, `--rpc: "" is not HOST:PORT`},
		{[]string{"--tensor-split", "1,1"}, `--tensor-split "1,1" without --rpc servers`},
		{[]string{"--rpc", "127.0.0.1:1", "--tensor-split", "1,x"}, `--tensor-split: "x" is not a weight`},
		{[]string{"--rpc", "127.0.0.1:1", "-ts", "1,2,3"}, "--tensor-split has 3 weights for 1 --rpc servers"},
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
	// -ids is read before the model is loaded (this one does not exist),
	// and checked against its vocabulary after
	missing := filepath.Join(t.TempDir(), "none.gguf")
	if _, _, err := run(t, "-m", missing, "-ids", "4294967297"); err == nil || !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "4294967297") {
		t.Errorf("-ids before loading: %v", err)
	}
	stdout, _, err := run(t, "-m", path, "-ids", "1,99999")
	if err == nil || !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "-ids: 99999 is not in the model's vocabulary (ids 0 to ") || stdout != "" {
		t.Errorf("-ids past the vocabulary: %v, stdout %q", err, stdout)
	}
}

// llama.cpp's long flags and short ones are the same flags; -ngl is
// accepted and says there is no GPU; -f reads the prompt from a file; the
// help shows each flag once with its aliases.
func TestRunTakesLlamaCppFlags(t *testing.T) {
	path := testModel(t, 64)
	prompt := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(prompt, []byte("the lazy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := run(t, "--model", path, "--file", prompt, "--n-predict", "3", "--ctx-size", "32", "--batch-size", "4",
		"--threads", "1", "--seed", "7", "--temp", "0.5", "--top-k", "5", "--top-p", "0.9", "--min-p", "0.1", "--repeat-penalty", "1.1",
		"--repeat-last-n", "16", "--flash-attn", "--no-warmup", "-ngl", "99", "--ignore-eos")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "the lazy") || !strings.Contains(stderr, "generation: 3 tokens") || !strings.Contains(stderr, "(32 positions)") {
		t.Errorf("long flags:\nstdout %q\nstderr %s", stdout, stderr)
	}
	if !strings.Contains(stderr, "-ngl 99: there is no GPU backend; every layer runs on the CPU") {
		t.Errorf("-ngl: %s", stderr)
	}
	// -s -1 (llama.cpp's random seed) and -f - style short names
	if _, stderr, err := run(t, "-m", path, "-f", prompt, "-n", "2", "-c", "16", "-b", "8", "-t", "1", "-s", "-1", "-fa", "-q"); err != nil {
		t.Fatalf("short flags: %v\n%s", err, stderr)
	}
	if _, _, err := run(t, "-m", path, "-f", filepath.Join(t.TempDir(), "none.txt")); err == nil || !strings.HasPrefix(err.Error(), "-f: ") {
		t.Errorf("missing -f file: %v", err)
	}
	help, _, _ := run(t, "-h")
	for _, want := range []string{"  -c, --ctx-size int\n", "  -fa, --flash-attn\n", "  -ngl, --n-gpu-layers int\n", "  -s, --seed N\n", "  --min-p float\n", "  --repeat-penalty float\n"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Count(help, "context size in positions") != 1 {
		t.Errorf("an alias has its own entry:\n%s", help)
	}
}

// The text printed ends with one newline, however generation ends.
func TestRunTextEndsWithANewline(t *testing.T) {
	path := testModel(t, 32)
	for _, args := range [][]string{{"-n", "4"}, {"-n", "0"}, {"-n", "0", "-q"}, {"-n", "-1"}, {"-n", "3", "-q"}} {
		stdout, stderr, err := run(t, append([]string{"-m", path, "-ids", "1,5,6", "--temp", "0", "--ignore-eos", "-t", "1"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		if !strings.HasSuffix(stdout, "\n") || strings.HasSuffix(stdout, "\n\n") {
			t.Errorf("%v: stdout %q", args, stdout)
		}
	}
	w := &textWriter{w: bufio.NewWriter(io.Discard)}
	w.WriteString("ends here\n")
	w.EndLine()
	if w.last != '\n' {
		t.Error("last byte")
	}
}

// An RPC server that cannot be reached is one line naming it once.
func TestRunUnreachableRPCServerIsOneLine(t *testing.T) {
	path := testModel(t, 32)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, stderr, err := run(t, "-m", path, "-p", "x", "--rpc", addr)
	if err == nil || err.Error() != "--rpc "+addr+": connection refused" {
		t.Errorf("error %v, want --rpc %s: connection refused\nstderr %s", err, addr, stderr)
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
	// past the trained context: allowed, with one warning saying what the
	// cache takes (1 layer, K and V of 32 f16 values, 48 positions)
	_, stderr, err = run(t, append(base, "-n", "40", "-c", "48")...)
	if err != nil || !strings.Contains(stderr, "warning: -c 48 is past the model's trained context (32 positions)") ||
		!strings.Contains(stderr, "the KV cache will take 6.0 KiB") ||
		strings.Count(stderr, "warning") != 1 || !strings.Contains(stderr, "generation: 40 tokens") {
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
