package ggml

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// subprocessEnv names the test a re-executed test binary runs in isolation.
const subprocessEnv = "GGML_TEST_SUBPROCESS"

// inSubprocess runs body in a fresh copy of the test binary (only this test),
// so that a crash (SIGSEGV, SIGABRT, a Go fatal error) or a hang fails the
// test instead of killing or stalling the whole run. In the child, body runs
// with the child's t and its failures fail the parent.
func inSubprocess(t *testing.T, timeout time.Duration, body func(t *testing.T)) {
	t.Helper()
	if os.Getenv(subprocessEnv) == t.Name() {
		body(t)
		return
	}
	cmd := selfCommand("-test.run=^"+strings.ReplaceAll(t.Name(), "/", "$/^")+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), subprocessEnv+"="+t.Name())
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("subprocess hung for %v:\n%s", timeout, tail(out, 4000))
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() {
			t.Fatalf("subprocess died: %v\n%s", err, tail(out, 4000))
		}
		t.Fatalf("subprocess failed: %v\n%s", err, tail(out, 4000))
	}
	if !strings.Contains(string(out), "--- PASS") && !strings.Contains(string(out), "PASS") {
		t.Fatalf("subprocess ran no test:\n%s", tail(out, 4000))
	}
}

// selfCommand runs this test binary again with args. GGML_TEST_EXEC is a
// command prefix for it: under qemu-user (./build.sh arm64) the binary
// cannot be executed directly.
func selfCommand(args ...string) *exec.Cmd {
	prefix := strings.Fields(os.Getenv("GGML_TEST_EXEC"))
	all := append(append(prefix, os.Args[0]), args...)
	return exec.Command(all[0], all[1:]...)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// subprocessTimeout is the time given to a test run by inSubprocess (the
// tests of misuses that once crashed the process run that way, so that a
// regression fails the test instead of killing the run).
const subprocessTimeout = 2 * time.Minute
