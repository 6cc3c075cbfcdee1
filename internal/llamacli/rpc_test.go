package llamacli

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/llama"
)

// serveRPC serves a CPU backend on a free loopback port until stop (or the
// end of the test); stop waits until the clients' connections are gone.
func serveRPC(t *testing.T) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := ggml.NewCPUBackend()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = ggml.ServeRPC(ctx, ln, cpu, 256<<20)
		cpu.Close()
		close(done)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// cliModel saves a random 4-layer model and returns its path.
func cliModel(t *testing.T) string {
	t.Helper()
	v, err := llama.TrainVocab("the quick brown fox jumps over the lazy dog", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.NewModel(llama.Hparams{NEmbd: 32, NLayer: 4, NHead: 2, NFF: 64, NCtxTrain: 64}, v, llama.ModelOptions{Seed: 2, Std: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := m.Save(path, "cli-rpc-test"); err != nil {
		t.Fatal(err)
	}
	return path
}

// tokenWriter calls fn once, after n writes (the runner writes the prompt,
// then flushes after each token).
type tokenWriter struct {
	bytes.Buffer
	writes, n int
	fn        func()
}

func (w *tokenWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes == w.n && w.fn != nil {
		w.fn()
	}
	return w.Buffer.Write(p)
}

// --rpc and --tensor-split: the text is the local run's, the devices and
// their layers are printed; a server lost mid-generation ends the run with
// one line naming it; bad values are refused.
func TestRunRPC(t *testing.T) {
	path := cliModel(t)
	a, _ := serveRPC(t)
	b, stopB := serveRPC(t)
	args := []string{"-m", path, "-p", "the lazy", "-n", "30", "-t", "1", "--temp", "0", "--ignore-eos"}
	var local, errb bytes.Buffer
	if err := Run("llama", args, &local, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, split := range [][]string{{"--tensor-split", "1,1,2"}, {"-ts", "1,1"}, nil} {
		var out bytes.Buffer
		errb.Reset()
		if err := Run("llama", append(append(args, "--rpc", a+","+b), split...), &out, &errb); err != nil {
			t.Fatalf("%v: %v\n%s", split, err, errb.String())
		}
		if out.String() != local.String() {
			t.Errorf("%v: split text %q, local %q", split, out.String(), local.String())
		}
		for _, want := range []string{"device local CPU: layers ", "device RPC " + a + ": layers ", "device RPC " + b + ": layers ", "generation: 30 tokens (29 evaluated)"} {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("%v: stderr lacks %q:\n%s", split, want, errb.String())
			}
		}
		if split != nil && split[1] == "1,1,2" && !strings.Contains(errb.String(), "device local CPU: layers 0-1;") {
			t.Errorf("--tensor-split 1,1,2: the CPU does not hold layers 0-1:\n%s", errb.String())
		}
	}

	// the second server goes away after the third token
	out := &tokenWriter{n: 4, fn: stopB}
	errb.Reset()
	err := Run("llama", append(args, "--rpc", a+","+b, "-ts", "1,1"), out, &errb)
	if err == nil {
		t.Fatal("the run succeeded without its second server")
	}
	if msg := err.Error(); !strings.Contains(msg, "lost the RPC server "+b) || strings.Contains(msg, "\n") {
		t.Errorf("error %q", msg)
	}
	if strings.Contains(errb.String(), "level=") {
		t.Errorf("the core's log lines reached stderr:\n%s", errb.String())
	}

	for _, bad := range [][]string{
		{"--rpc", "nohost"}, {"--rpc", a + ",127.0.0.1:99999"}, {"--tensor-split", "1,1"},
		{"--rpc", a, "--tensor-split", "1,2,3"}, {"--rpc", a, "-ts", "1,x"}, {"--rpc", a, "-ts", "-1"},
		{"--rpc", a, "-ceiling", "2"}, {"--rpc", a, "-ceiling-pairs", "2"}, {"--rpc", a, "--mmap"},
	} {
		if err := Run("llama", append([]string{"-m", path, "-n", "2"}, bad...), &local, &errb); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
