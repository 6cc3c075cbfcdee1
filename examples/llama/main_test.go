package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/gguf"
)

// The test binary runs as the llama command when this variable is set.
const runAsCommand = "LLAMA_EXAMPLE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsCommand) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// llamaCmd runs `llama args...` and returns its stdout, stderr and exit status.
func llamaCmd(t *testing.T, args ...string) (stdout, stderr string, status int) {
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

// -h is the usage on stdout and status 0; a bad flag is one line
// and status 2; another failure status 1, its message prefixed once.
func TestCommandStatusAndMessages(t *testing.T) {
	stdout, stderr, status := llamaCmd(t, "-h")
	if status != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: llama -m MODEL.gguf") {
		t.Errorf("-h: status %d\nstdout %q\nstderr %q", status, stdout, stderr)
	}
	_, stderr, status = llamaCmd(t, "-m", "m.gguf", "--top-p", "5")
	if status != 2 || stderr != "llama: --top-p 5: must be between 0 and 1 (1: off)\n" {
		t.Errorf("--top-p 5: status %d, stderr %q", status, stderr)
	}
	// a GGUF file that is not a model: the llama package's error, once prefixed
	path := filepath.Join(t.TempDir(), "empty.gguf")
	w, err := gguf.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetString("general.architecture", "llama"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, stderr, status = llamaCmd(t, "-m", path)
	if status != 1 || !strings.HasPrefix(stderr, "llama: ") || strings.Contains(stderr, "llama: llama:") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("not a model: status %d, stderr %q", status, stderr)
	}
}
