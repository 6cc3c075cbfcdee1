package ggml

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Cross-compatibility with the reference's RPC code (ggml commit 69d065e7),
// built by hand outside this repository. Each test is skipped unless its
// variable names a command line; {endpoint} in it is replaced with the
// server's host:port, {op} with an op name.
//
//	GGML_REF_RPC_SERVER="/path/ref-rpc-server {endpoint} 512"
//	  a reference rpc-server (a main calling ggml_backend_rpc_start_server
//	  with the CPU backend): our client works against it
//	GGML_REF_RPC_CLIENT="/path/test-backend-ops test -b RPC[{endpoint}] -o {op}"
//	  a reference client (test-backend-ops with an RPC device added for
//	  $RPC_ENDPOINT): it tests each op of GGML_REF_RPC_OPS (default: the ops
//	  of a llama block) on our server against the reference CPU backend.
//	  The reference client itself aborts on a quantized tensor whose rows are
//	  not a multiple of 512 elements (a CUDA padding rule in its init_tensor);
//	  the test then counts the cases before the abort and says so. For the
//	  rest (quantized GET_ROWS, MUL_MAT, CPY), build the client with that one
//	  GGML_ASSERT removed.

func refCommand(t *testing.T, env string, repl ...string) []string {
	tmpl := os.Getenv(env)
	if tmpl == "" {
		t.Skipf("%s is not set: no reference build to test against (see rpc_compat_test.go)", env)
	}
	return strings.Fields(strings.NewReplacer(repl...).Replace(tmpl))
}

func TestRPCReferenceServer(t *testing.T) {
	addr := freeLoopbackAddr(t)
	args := refCommand(t, "GGML_REF_RPC_SERVER", "{endpoint}", addr)
	cmd := exec.Command(args[0], args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); t.Logf("reference server output:\n%s", out.String()) }()

	var b *Backend
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); { // until it listens
		if b, err = DialRPC(context.Background(), addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err)
	defer b.Close()
	free, total, err := RPCDeviceMemory(context.Background(), addr)
	require.NoError(t, err)
	t.Logf("reference server: %d of %d bytes free", free, total)
	// the reference computes with its own kernels: close, not equal
	rpcCheckComputeTol(t, b, 1e-5)
	rpcCheckCommands(t, b)
	// its layers on the reference server, the rest here
	rpcCheckSplit(t, []string{addr}, 1e-3)
}

func TestRPCReferenceClient(t *testing.T) {
	s := startRPCServer(t, 2<<30)
	ops := strings.Fields(os.Getenv("GGML_REF_RPC_OPS"))
	if len(ops) == 0 {
		// not CPY: the reference CPU backend aborts on copies into i-quants it
		// cannot quantize; not FLASH_ATTN_EXT: thousands of cases (minutes)
		ops = []string{"GET_ROWS", "RMS_NORM", "MUL", "ADD", "MUL_MAT", "ROPE", "SOFT_MAX", "SCALE", "CONT", "SILU"}
	}
	for _, op := range ops {
		args := refCommand(t, "GGML_REF_RPC_CLIENT", "{endpoint}", s.endpoint, "{op}", op)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "RPC_ENDPOINT="+s.endpoint)
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		ok := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), op+"(") && strings.Contains(l, "OK") {
				ok++
			}
		}
		t.Logf("%s: %d cases OK in %v", op, ok, time.Since(t0).Round(time.Millisecond))
		require.NotContains(t, string(out), "FAIL")
		if err != nil && strings.Contains(string(out), "unsupported quantized tensor") {
			t.Logf("%s: the reference client stopped at its own check of quantized rows (ne[0] %% 512) after %d cases", op, ok)
			continue
		}
		require.NoError(t, err, "%s", out)
	}
}
