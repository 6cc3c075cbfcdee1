package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The test binary runs as the ggml command when this variable is set: the
// tests below run the real command line (flag parsing, messages, exit
// status) in a child process.
const runAsCommand = "GGML_CMD_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsCommand) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// ggmlCmd runs `ggml args...` and returns its stdout, stderr and exit status.
func ggmlCmd(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsCommand+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		status = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), status
}

func commandNames() []string {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// threadsFlag finds -t in a help text.
var threadsFlag = regexp.MustCompile(`(?m)^  -t[ ,]`)

// -h, --help, `ggml help` and `ggml help CMD` print usage to
// stdout and exit 0; every subcommand has -h (and does nothing else).
func TestHelpExitsZeroForEveryCommand(t *testing.T) {
	runs := [][]string{{"-h"}, {"--help"}, {"help"}, {"gguf", "inspect", "-h"}, {"gguf", "dump", "--help"}}
	for _, n := range commandNames() {
		runs = append(runs, []string{"help", n}, []string{n, "-h"})
	}
	for _, args := range runs {
		stdout, stderr, status := ggmlCmd(t, args...)
		if status != 0 || stderr != "" || !strings.Contains(stdout, "usage:") {
			t.Errorf("ggml %s: status %d\nstdout %q\nstderr %q", strings.Join(args, " "), status, stdout, stderr)
		}
		// a thread count says llama.cpp's rule
		if threadsFlag.MatchString(stdout) && !strings.Contains(stdout, "0 or negative: all CPUs") {
			t.Errorf("ggml %s: -t without its rule:\n%s", strings.Join(args, " "), stdout)
		}
	}
	stdout, _, _ := ggmlCmd(t, "help")
	for _, n := range commandNames() {
		if !strings.Contains(stdout, "  "+n+" ") {
			t.Errorf("`ggml help` does not list %s:\n%s", n, stdout)
		}
	}
}

// Command-line mistakes exit 2 with a message on stderr, one
// line where it is about one flag; no prefix is doubled.
func TestCommandLineErrorsExitTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: ggml <command>"},
		{[]string{"nope"}, `ggml: unknown command "nope"`},
		{[]string{"help", "nope"}, `ggml: help: unknown command "nope"`},
		{[]string{"info", "extra"}, `ggml: info: unexpected argument "extra"`},
		{[]string{"gguf"}, "ggml: gguf: a subcommand is expected"},
		{[]string{"gguf", "nope"}, `ggml: gguf: unknown subcommand "nope"`},
		{[]string{"gguf", "dump", "x.gguf"}, "ggml: gguf dump: --json is required"},
		{[]string{"train", "-batch", "0"}, "ggml: train: -batch 0: must be >= 1\n"},
		{[]string{"train-llama", "-steps", "0"}, "ggml: train-llama: -steps 0: must be >= 1\n"},
		{[]string{"bench", "-runs", "0"}, "ggml: bench: -runs 0: must be >= 1\n"},
		{[]string{"run", "-m", "x.gguf", "-c", "-5"}, "ggml: -c -5: the context size must be 0 (the model's) to 1073741824\n"},
		{[]string{"run", "-m", "x.gguf", "my", "prompt"}, `ggml: unexpected argument "my prompt"`},
		{[]string{"run", "-nope"}, "ggml: flag provided but not defined: -nope\n"},
		{[]string{"embed", "-p", "x"}, "ggml: no model: give one with -m MODEL.gguf\n"},
		{[]string{"embed", "-m", "x.gguf"}, "ggml: no text: give one or more with -p"},
		{[]string{"embed", "-m", "x.gguf", "-p", "x", "--embd-normalize", "-2"}, "ggml: --embd-normalize -2: -1 (none)"},
		{[]string{"embed", "-m", "x.gguf", "-p", "x", "--embd-output-format", "xml"}, "ggml: --embd-output-format \"xml\": empty, array, json or json+\n"},
		{[]string{"embed", "-m", "x.gguf", "-p", "x", "--pooling", "rank"}, "ggml: --pooling \"rank\": none, mean, cls or last\n"},
		{[]string{"embed", "-m", "x.gguf", "-p", "x", "-f", "t.txt"}, "ggml: -f and -p both give the texts: give one\n"},
		{[]string{"embed", "--embd_normalize", "2"}, "(did you mean --embd-normalize?)\n"},
		{[]string{"quantize", "a.gguf"}, "ggml: quantize: IN.gguf OUT.gguf TYPE expected"},
		{[]string{"quantize", "a.gguf", "b.gguf", "Q8_0", "--no-such"}, "ggml: flag provided but not defined: -no-such\n"},
		{[]string{"run", "-m", "x.gguf", "-ids", "4294967297"}, "ggml: -ids: 4294967297 is out of range (token ids are 0 to 2147483647)\n"},
		{[]string{"run", "-m", "x.gguf", "-ids", "2147483648"}, "ggml: -ids: 2147483648 is out of range"},
		{[]string{"run", "-m", "x.gguf", "-ids", "1,x,3"}, "ggml: -ids: \"x\" is not a token id (an integer)\n"},
		{[]string{"run", "-m", "x.gguf", "-ids", "1,,3"}, "ggml: -ids 1,,3: id 2 is empty\n"},
		{[]string{"run", "-m", "x.gguf", "--rpc", "nohost"}, "ggml: --rpc: \"nohost\" is not HOST:PORT\n"},
		{[]string{"run", "-m", "x.gguf", "--rpc", "h:0"}, "ggml: --rpc: \"h:0\": port out of range (1 to 65535)\n"},
		{[]string{"run", "-m", "x.gguf", "--tensor-split", "1,1"}, "ggml: --tensor-split \"1,1\" without --rpc servers to split over\n"},
		{[]string{"run", "-m", "x.gguf", "--rpc", "h:1", "--tensor-split", "a"}, "ggml: --tensor-split: \"a\" is not a weight (a number >= 0)\n"},
		{[]string{"run", "--n_predict", "3"}, "(did you mean --n-predict?)\n"},
		{[]string{"bench", "-only", "("}, "ggml: bench: -only \"(\": error parsing regexp: missing closing ): `(`\n"},
		{[]string{"bench", "-t", "1,2"}, "ggml: bench: -t 1,2: one thread count without -m\n"},
		{[]string{"bench", "-p", "64"}, "ggml: bench: -p is for timing a model: give one with -m MODEL\n"},
		{[]string{"bench", "-m", "x.gguf", "-runs", "3"}, "ggml: bench: -runs and -only are for the kernel figures"},
		{[]string{"bench", "-m", "x.gguf", "-o", "xml"}, "ggml: bench: -o \"xml\": the formats are md, csv and json\n"},
		{[]string{"bench", "-m", "x.gguf", "-p", "0", "-n", "0"}, "ggml: bench: -p and -n are all 0: no test to run\n"},
		{[]string{"bench", "-m", "x.gguf", "-n", "-5"}, "ggml: bench: -n -5: must be 0 to"},
		{[]string{"bench", "-m", "x.gguf", "-r", "0"}, "ggml: bench: -r 0: must be >= 1\n"},
		{[]string{"bench", "-m", "x.gguf", "-p", "1,y"}, "ggml: invalid value \"1,y\" for flag -p: \"y\" is not an integer\n"},
		{[]string{"train", "-batch", "100000"}, "ggml: train: -batch 100000: larger than the data set"},
		{[]string{"train", "-lr", "Inf"}, "ggml: train: -lr +Inf: must be > 0\n"},
		{[]string{"train-llama", "-vocab", "-1"}, "ggml: train-llama: -kv-heads and -vocab must be >= 0"},
		{[]string{"train-llama", "-embd", "10", "-heads", "3"}, "ggml: train-llama: -embd 10 must be a multiple of -heads 3"},
		{[]string{"train-llama", "-embd", "12", "-heads", "4"}, "ggml: train-llama: -embd 12 / -heads 4: the head size must be even"},
		{[]string{"train-llama", "-kv-heads", "3"}, "ggml: train-llama: -embd 96 must be a multiple of -heads 4, and -heads of -kv-heads 3\n"},
	} {
		stdout, stderr, status := ggmlCmd(t, c.args...)
		if status != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("ggml %s: status %d, stdout %q\nstderr %q, want %q", strings.Join(c.args, " "), status, stdout, stderr, c.want)
		}
		if strings.HasSuffix(c.want, "\n") && strings.Count(stderr, "\n") != 1 {
			t.Errorf("ggml %s: more than one line:\n%s", strings.Join(c.args, " "), stderr)
		}
	}
}

// A directory or a missing file given for a GGUF file is named
// as such (the reader said "mmap: no such device"), and failures exit 1.
func TestFileArgumentsThatAreNotFiles(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.gguf")
	_, statErr := os.Stat(missing)
	notFound := errors.Unwrap(statErr).Error() // the platform's words: "no such file or directory" on Unix
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gguf", "inspect", dir}, "ggml: " + dir + " is a directory, not a GGUF file\n"},
		{[]string{"gguf", "dump", "--json", dir}, "ggml: " + dir + " is a directory, not a GGUF file\n"},
		{[]string{"run", "-m", dir}, "ggml: " + dir + " is a directory, not a GGUF file\n"},
		{[]string{"quantize", dir, filepath.Join(dir, "o.gguf"), "Q8_0"}, "ggml: " + dir + " is a directory, not a GGUF file\n"},
		{[]string{"gguf", "inspect", missing}, "ggml: " + missing + ": " + notFound + "\n"},
		{[]string{"run", "-m", missing}, "ggml: " + missing + ": " + notFound + "\n"},
	} {
		_, stderr, status := ggmlCmd(t, c.args...)
		if status != 1 || stderr != c.want {
			t.Errorf("ggml %s: status %d, stderr %q, want %q", strings.Join(c.args, " "), status, stderr, c.want)
		}
	}
}
