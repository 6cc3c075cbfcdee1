package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func newFlags() (*flag.FlagSet, *int, func(io.Writer)) {
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	n := fs.Int("n", 3, "a count")
	return fs, n, func(w io.Writer) {
		fmt.Fprintln(w, "usage: prog [-n N]")
		fs.PrintDefaults()
	}
}

func TestParseHelpPrintsUsageToStdout(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		fs, _, usage := newFlags()
		var out bytes.Buffer
		help, err := Parse(fs, []string{arg}, &out, usage)
		if !help || err != nil {
			t.Errorf("%s: help %v, err %v", arg, help, err)
		}
		if !strings.Contains(out.String(), "usage: prog") || !strings.Contains(out.String(), "a count") {
			t.Errorf("%s: stdout %q", arg, out.String())
		}
	}
}

func TestParseBadFlagIsOneLineUsageError(t *testing.T) {
	for _, args := range [][]string{{"-x"}, {"-n", "abc"}, {"-n"}} {
		fs, _, usage := newFlags()
		var out bytes.Buffer
		help, err := Parse(fs, args, &out, usage)
		if help || err == nil || !errors.Is(err, ErrUsage) {
			t.Fatalf("%v: help %v, err %v", args, help, err)
		}
		if strings.Contains(err.Error(), "\n") || out.Len() != 0 {
			t.Errorf("%v: error %q, stdout %q", args, err, out.String())
		}
	}
	fs, n, usage := newFlags()
	if help, err := Parse(fs, []string{"-n", "7", "rest"}, io.Discard, usage); help || err != nil || *n != 7 || fs.Arg(0) != "rest" {
		t.Errorf("good flags: help %v, err %v, n %d, args %q", help, err, *n, fs.Args())
	}
}

func TestMessageDoesNotDoubleThePrefix(t *testing.T) {
	for _, c := range []struct{ prog, err, want string }{
		{"llama", "llama: tensor x: bad", "llama: tensor x: bad"},
		{"llama", "gguf: key \"a\": not found", "llama: gguf: key \"a\": not found"},
		{"ggml", "llamas: x", "ggml: llamas: x"},
	} {
		if got := Message(c.prog, errors.New(c.err)); got != c.want {
			t.Errorf("Message(%q, %q) = %q, want %q", c.prog, c.err, got, c.want)
		}
	}
}

func TestReportExitStatus(t *testing.T) {
	var w bytes.Buffer
	if Report(&w, "p", nil) != 0 || w.Len() != 0 {
		t.Errorf("nil: %q", w.String())
	}
	if Report(&w, "p", Usagef("-c %d: bad", -5)) != 2 || w.String() != "p: -c -5: bad\n" {
		t.Errorf("usage error: %q", w.String())
	}
	w.Reset()
	if Report(&w, "p", fmt.Errorf("wrapped: %w", Usagef("bad"))) != 2 {
		t.Error("a wrapped usage error is not status 2")
	}
	if Report(&w, "p", errors.New("io")) != 1 {
		t.Error("other error: not status 1")
	}
}

func TestThreadsFollowsLlamaCppRule(t *testing.T) {
	cpus := runtime.NumCPU()
	var warned []string
	warn := func(msg string) { warned = append(warned, msg) }
	for _, n := range []int{0, -1, -100} {
		if got := Threads(n, warn); got != cpus {
			t.Errorf("Threads(%d) = %d, want all %d CPUs", n, got, cpus)
		}
	}
	if got := Threads(1, warn); got != 1 || len(warned) != 0 {
		t.Errorf("Threads(1) = %d, warnings %q", got, warned)
	}
	if got := Threads(100000, warn); got != cpus || len(warned) != 1 || !strings.Contains(warned[0], "-t 100000") {
		t.Errorf("Threads(100000) = %d, warnings %q", got, warned)
	}
}

func TestCheckFileNamesDirectoriesAndMissingFiles(t *testing.T) {
	dir := t.TempDir()
	if err := CheckFile(dir); err == nil || err.Error() != dir+" is a directory, not a GGUF file" {
		t.Errorf("directory: %v", err)
	}
	missing := filepath.Join(dir, "none.gguf")
	if err := CheckFile(missing); err == nil || err.Error() != missing+": no such file or directory" {
		t.Errorf("missing: %v", err)
	}
	file := filepath.Join(dir, "f.gguf")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(file); err != nil {
		t.Errorf("regular file: %v", err)
	}
}
