package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/llama"
)

// TestMain runs this test binary as the ggml command when GGML_CMD_MAIN is
// set, so that the tests below run the commands as processes.
// ggmlCommand is the ggml command with args, as a process.
func ggmlCommand(args ...string) *exec.Cmd {
	prefix := strings.Fields(os.Getenv("GGML_TEST_EXEC")) // an emulator, for cross builds
	all := append(append(prefix, os.Args[0]), args...)
	cmd := exec.Command(all[0], all[1:]...)
	cmd.Env = append(os.Environ(), runAsCommand+"=1")
	return cmd
}

var listening = regexp.MustCompile(`^rpc-server: listening on (127\.0\.0\.1:\d+), ([0-9.]+) MiB free for clients, (\d+) threads$`)

// startServer runs ggml rpc-server on a free loopback port and returns its
// address, from the line it prints at start.
func startServer(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := ggmlCommand(append([]string{"rpc-server", "--port", "0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("rpc-server printed %q: %v", line, err)
	}
	m := listening.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		t.Fatalf("rpc-server's first line: %q", line)
	}
	return m[1], cmd
}

// ggml rpc-server prints the address it listens on, the memory clients may
// use and its threads; it serves that memory and ends cleanly on SIGTERM.
func TestRPCServerStartup(t *testing.T) {
	cmd := ggmlCommand("rpc-server", "--port", "0", "--mem", "64", "-t", "2")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	r := bufio.NewReader(out)
	line, _ := r.ReadString('\n')
	m := listening.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil || m[2] != "64.0" || m[3] != "2" {
		t.Fatalf("first line %q", line)
	}
	free, _, err := ggml.RPCDeviceMemory(context.Background(), m[1])
	if err != nil || free != 64<<20 {
		t.Errorf("the server reports %d bytes free (%v)", free, err)
	}
	if runtime.GOOS == "windows" {
		return // no SIGTERM to send there: the deferred Kill ends it
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
	for _, bad := range [][]string{{"-t", "many"}, {"--port", "70000"}, {"extra"}} { // -t 0 means all CPUs
		if err := ggmlCommand(append([]string{"rpc-server"}, bad...)...).Run(); err == nil {
			t.Errorf("rpc-server %v: exit status 0", bad)
		}
	}
}

// saveModel writes a random llama model with a character vocabulary.
func saveModel(t *testing.T, nLayer, nCtx int) string {
	t.Helper()
	v, err := llama.TrainVocab("the quick brown fox jumps over the lazy dog", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.NewModel(llama.Hparams{NEmbd: 32, NLayer: nLayer, NHead: 2, NFF: 64, NCtxTrain: nCtx}, v, llama.ModelOptions{Seed: 4, Std: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := m.Save(path, "rpc-cmd-test"); err != nil {
		t.Fatal(err)
	}
	return path
}

// ggml run --rpc over two ggml rpc-server processes prints the text of the
// local run; killing a server mid-generation ends the run with exit status
// 1 and one error line on stderr (after the usual memory and speed lines).
func TestRunOverRPCServers(t *testing.T) {
	path := saveModel(t, 4, 2048)
	a, _ := startServer(t, "-t", "1")
	b, bProc := startServer(t, "-t", "1")
	args := []string{"run", "-m", path, "-p", "the lazy", "-n", "40", "-t", "1", "--temp", "0", "--ignore-eos"}
	local, err := ggmlCommand(args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := ggmlCommand(append(args, "--rpc", a+","+b)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	split, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if string(split) != string(local) {
		t.Errorf("over the servers %q, locally %q", split, local)
	}
	if !strings.Contains(stderr.String(), "device RPC "+b+": layers ") {
		t.Errorf("stderr:\n%s", stderr.String())
	}

	// the second server killed once the text has begun
	cmd = ggmlCommand("run", "-m", path, "-p", "the lazy", "-n", "2000", "-t", "1", "--temp", "0", "--ignore-eos", "--rpc", a+","+b)
	stderr.Reset()
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	first := make([]byte, len("the lazy")+3)
	if _, err := io.ReadFull(out, first); err != nil {
		t.Fatal(err)
	}
	if err := bProc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("ggml run did not end after its server was killed")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "ggml: llama: lost the RPC server "+b) {
		t.Errorf("last line %q", last)
	}
	for _, l := range lines[:len(lines)-1] {
		if !regexp.MustCompile(`^(memory|device|prompt|generation): `).MatchString(l) && !strings.HasPrefix(l, "device ") {
			t.Errorf("stderr has more than the error: %q", l)
		}
	}
	t.Logf("stderr:\n%s", stderr.String())
}
