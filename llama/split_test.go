package llama

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// rpcServer is ggml.ServeRPC over a CPU backend of its own on a loopback port.
type rpcServer struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startRPCServer serves on addr ("127.0.0.1:0": a free port) with mem bytes
// for its clients; it stops when the test ends.
func startRPCServer(t testing.TB, addr string, mem uint64) *rpcServer {
	t.Helper()
	var ln net.Listener
	var err error
	// a port just freed by a stopped server may take a moment to be free again
	for deadline := time.Now().Add(10 * time.Second); ; {
		if ln, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := ggml.NewCPUBackend()
	if err != nil {
		t.Fatal(err)
	}
	if err := cpu.SetThreads(1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &rpcServer{addr: ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() {
		s.done <- ggml.ServeRPC(ctx, ln, cpu, mem)
		cpu.Close()
	}()
	t.Cleanup(s.stop)
	return s
}

// stop ends the server and waits until its clients' connections are gone.
func (s *rpcServer) stop() {
	s.once.Do(func() {
		s.cancel()
		<-s.done
	})
}

// splitModel saves a random model of nLayer layers with weights of type typ.
func splitModel(t *testing.T, nLayer int, typ ggml.Type) string {
	t.Helper()
	path := smallModel(t, Hparams{NEmbd: 64, NLayer: nLayer, NHead: 4, NHeadKV: 2, NFF: 128, NCtxTrain: 80}, false)
	if typ == ggml.TypeF32 {
		return path
	}
	out := filepath.Join(t.TempDir(), "split-"+typ.String()+".gguf")
	if _, err := QuantizeFile(path, out, QuantizeOptions{Type: typ, Threads: 1}); err != nil {
		t.Fatal(err)
	}
	return out
}

// greedyTrace evaluates prompt in batches of batch tokens, then generates
// greedily until the context (80) is full, and returns the tokens and the
// localTrace loads path without a split and returns splitPrompt's prompt
// and the greedy trace of it (batches of 16): the answer a split must give.
func localTrace(t *testing.T, path string) (prompt, toks []int32, logits [][]float32) {
	t.Helper()
	local, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	prompt = splitPrompt(local)
	toks, logits = greedyTrace(t, local, prompt, 16)
	return prompt, toks, logits
}

// logits after every evaluation.
func greedyTrace(t *testing.T, m *Model, prompt []int32, batch int) (toks []int32, logits [][]float32) {
	t.Helper()
	return greedyTraceOpts(t, m, prompt, SessionOptions{Threads: 2, Context: 80, Batch: batch})
}

// greedyTraceOpts is greedyTrace in a session of opts.
func greedyTraceOpts(t *testing.T, m *Model, prompt []int32, opts SessionOptions) (toks []int32, logits [][]float32) {
	t.Helper()
	s, err := m.NewSession(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	l, err := s.Eval(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	before := s.Devices()
	for {
		logits = append(logits, slices.Clone(l))
		id := NewSampler(SamplerOptions{}).Sample(l)
		toks = append(toks, id)
		if s.Pos() == s.ContextSize() {
			break
		}
		if l, err = s.Eval(ctx, []int32{id}); err != nil {
			t.Fatal(err)
		}
	}
	// the memory reserved when the session started held every graph
	if after := s.Devices(); !slices.Equal(after, before) {
		t.Errorf("the session's memory changed while generating: %+v, then %+v", before, after)
	}
	if e, ok := s.eng.(*schedEngine); ok {
		// the one-token graph: CPU (embeddings, its layers), server,
		// server, CPU (output: unless on the last server)
		want := 2 + len(e.devs)
		if m.outDev != nil {
			want--
		}
		rpcOnly := true // a second CPU backend takes the local CPU's nodes too
		for _, d := range e.devs {
			rpcOnly = rpcOnly && d.endpoint != ""
		}
		if n := e.sc.NSplits(); rpcOnly && n != want {
			t.Errorf("the graph was cut in %d splits over %d devices and the CPU", n, len(e.devs))
		}
		for i, d := range before[1:] {
			if d.KVBytes == 0 || d.ComputeBytes == 0 {
				t.Errorf("device %d holds no KV cache or compute buffer: %+v", i, d)
			}
		}
	}
	return toks, logits
}

func splitPrompt(m *Model) []int32 {
	return tokenRun(m, 37, 5) // > 2 batches of 16
}

// The model split over two RPC servers and the local CPU gives the same
// bits as the local run: greedy tokens and the logits of every evaluation,
// for a prompt of three batches and generation to the end of the context,
// with f32, f16 and quantized weights.
func TestSplitMatchesLocal(t *testing.T) {
	a := startRPCServer(t, "127.0.0.1:0", 256<<20)
	b := startRPCServer(t, "127.0.0.1:0", 256<<20)
	for _, typ := range []ggml.Type{ggml.TypeF32, ggml.TypeF16, ggml.TypeQ8_0, ggml.TypeQ4_K} {
		path := splitModel(t, 6, typ)
		prompt, wantToks, wantLogits := localTrace(t, path)

		// the CPU and both servers; then the last layer alone on the
		// second server (the rows that go on cross from server to server)
		split, layout := []float64{1, 1, 1}, []string{"CPU 0-1", "dev1 2-3", "dev2 4-5"}
		if typ == ggml.TypeF16 || typ == ggml.TypeQ4_K {
			split, layout = []float64{4, 1}, []string{"CPU none", "dev1 0-4", "dev2 5"}
		}
		m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{a.addr, b.addr}, TensorSplit: split}})
		if err != nil {
			t.Fatal(err)
		}
		devs := m.Devices()
		if got := layersOf(devs); !slices.Equal(got, layout) {
			t.Fatalf("%s: placement %v, want %v", typ, got, layout)
		}
		for _, d := range devs[1:] {
			if d.WeightBytes == 0 {
				t.Errorf("%s: %s holds no weights", typ, d.Name)
			}
		}
		gotToks, gotLogits := greedyTrace(t, m, prompt, 16)
		if !slices.Equal(gotToks, wantToks) {
			t.Errorf("%s: split tokens %v, local %v", typ, gotToks, wantToks)
		}
		if len(gotLogits) != len(wantLogits) {
			t.Fatalf("%s: %d evaluations split, %d local", typ, len(gotLogits), len(wantLogits))
		}
		for i := range wantLogits {
			if !slices.Equal(gotLogits[i], wantLogits[i]) {
				t.Fatalf("%s: logits of evaluation %d differ (max |diff| %g)", typ, i, maxAbsDiff(gotLogits[i], wantLogits[i]))
			}
		}
		t.Logf("%s: %d tokens, %d evaluations bit-identical; %+v", typ, len(gotToks), len(gotLogits), devs)
		m.Close()
	}
}

// With flash attention too, the split run gives the local run's bits:
// the flash mask, made once from the first layer's side, reaches the
// servers' layers.
func TestSplitFlashAttnMatchesLocal(t *testing.T) {
	a := startRPCServer(t, "127.0.0.1:0", 256<<20)
	b := startRPCServer(t, "127.0.0.1:0", 256<<20)
	path := splitModel(t, 6, ggml.TypeF16)
	opts := SessionOptions{Threads: 2, Context: 80, Batch: 16, FlashAttn: true}
	local, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prompt := splitPrompt(local)
	wantToks, wantLogits := greedyTraceOpts(t, local, prompt, opts)
	local.Close()
	m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{a.addr, b.addr}, TensorSplit: []float64{1, 1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	gotToks, gotLogits := greedyTraceOpts(t, m, prompt, opts)
	if !slices.Equal(gotToks, wantToks) || len(gotLogits) != len(wantLogits) {
		t.Fatalf("split tokens %v, local %v", gotToks, wantToks)
	}
	for i := range wantLogits {
		if !slices.Equal(gotLogits[i], wantLogits[i]) {
			t.Fatalf("logits of evaluation %d differ (max |diff| %g)", i, maxAbsDiff(gotLogits[i], wantLogits[i]))
		}
	}
}

// layersOf is each device's layers, as "CPU 0-3" strings.
func layersOf(devs []DeviceUsage) []string {
	var out []string
	for i, d := range devs {
		name := d.Name
		if i > 0 {
			name = fmt.Sprintf("dev%d", i)
		}
		out = append(out, name+" "+layerRange(d.First, d.End))
	}
	return out
}

// Layers go to the devices in proportion to TensorSplit (an extra last
// weight for the local CPU, whose layers come first), or without one in
// proportion to the servers' free memory, no more than fit, the rest local.
func TestSplitPlacement(t *testing.T) {
	path := splitModel(t, 8, ggml.TypeF32)
	big1 := startRPCServer(t, "127.0.0.1:0", 32<<20)
	big3 := startRPCServer(t, "127.0.0.1:0", 96<<20)
	small1 := startRPCServer(t, "127.0.0.1:0", 750<<10)
	small2 := startRPCServer(t, "127.0.0.1:0", 750<<10)
	for _, c := range []struct {
		rpc   []*rpcServer
		split []float64
		want  []string
	}{
		{[]*rpcServer{big1, big3}, []float64{3, 1}, []string{"CPU none", "dev1 0-5", "dev2 6-7"}},
		{[]*rpcServer{big1, big3}, []float64{1, 1, 2}, []string{"CPU 0-3", "dev1 4-5", "dev2 6-7"}},
		{[]*rpcServer{big1, big3}, []float64{0, 1, 1}, []string{"CPU 0-3", "dev1 4-7"}},
		{[]*rpcServer{big1, big3}, nil, []string{"CPU none", "dev1 0-1", "dev2 2-7"}},
		// each fits two layers (weights and KV cache at the training context)
		{[]*rpcServer{small1, small2}, nil, []string{"CPU 0-3", "dev1 4-5", "dev2 6-7"}},
	} {
		var eps []string
		for _, s := range c.rpc {
			eps = append(eps, s.addr)
		}
		m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: eps, TensorSplit: c.split}})
		if err != nil {
			t.Fatalf("split %v: %v", c.split, err)
		}
		if got := layersOf(m.Devices()); !slices.Equal(got, c.want) {
			t.Errorf("split %v: %v, want %v", c.split, got, c.want)
		}
		// it runs, and its sessions hold their KV cache where the layers are
		s, err := m.NewSession(SessionOptions{Threads: 1, Context: 64})
		if err != nil {
			t.Fatalf("split %v: %v", c.split, err)
		}
		if _, err := s.Eval(context.Background(), []int32{1, 2, 3}); err != nil {
			t.Fatalf("split %v: %v", c.split, err)
		}
		for _, d := range s.Devices() {
			if (d.KVBytes > 0) != (d.End > d.First) {
				t.Errorf("split %v: %s holds layers %s and %d bytes of KV cache", c.split, d.Name, layerRange(d.First, d.End), d.KVBytes)
			}
		}
		s.Close()
		m.Close()
	}
	for _, bad := range [][]float64{{1}, {1, 1, 1, 1}, {-1, 2}, {0, 0}} {
		if _, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{big1.addr, big3.addr}, TensorSplit: bad}}); err == nil || !strings.Contains(err.Error(), "TensorSplit") {
			t.Errorf("TensorSplit %v: %v", bad, err)
		}
	}
}

// A server with too little memory for its share is refused at load, the
// message naming it and the sizes; so is one unreachable.
func TestSplitServerTooSmall(t *testing.T) {
	path := splitModel(t, 4, ggml.TypeF32)
	big := startRPCServer(t, "127.0.0.1:0", 256<<20)
	tiny := startRPCServer(t, "127.0.0.1:0", 64<<10)
	for _, split := range [][]float64{nil, {1, 1}} {
		_, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{big.addr, tiny.addr}, TensorSplit: split}})
		if err == nil {
			t.Fatalf("split %v: a server of 64 KiB was given layers", split)
		}
		msg := err.Error()
		t.Logf("split %v: %v", split, err)
		if !strings.Contains(msg, tiny.addr) || !strings.Contains(msg, "has 64.0 KiB free") || !strings.Contains(msg, "KiB of weights") {
			t.Errorf("split %v: %v", split, err)
		}
	}
	// nobody listening
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	if _, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{gone}}}); err == nil || !strings.Contains(err.Error(), gone) {
		t.Errorf("unreachable server: %v", err)
	}
}

// A server that goes away mid-generation: Generate returns an error
// promptly, the other server carries on; once the server is back, a new
// session reloads only that server's layers and gives the local answer.
func TestSplitServerLost(t *testing.T) {
	path := splitModel(t, 4, ggml.TypeF16)
	prompt, want, _ := localTrace(t, path)

	a := startRPCServer(t, "127.0.0.1:0", 256<<20)
	b := startRPCServer(t, "127.0.0.1:0", 256<<20)
	m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{a.addr, b.addr}, TensorSplit: []float64{1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 80, Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var gen []int32
	go func() {
		_, err := s.Generate(context.Background(), prompt, GenerateOptions{IgnoreEOG: true, OnToken: func(id int32) error {
			gen = append(gen, id)
			if len(gen) == 5 {
				b.stop() // between two evaluations: the next one needs it
			}
			return nil
		}})
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Generate did not return after the server went away")
	}
	if err == nil {
		t.Fatal("Generate succeeded without a server")
	}
	t.Logf("Generate: %v", err)
	if !strings.Contains(err.Error(), b.addr) {
		t.Errorf("the error does not name the server: %v", err)
	}
	if _, err := s.Eval(context.Background(), []int32{1}); err == nil {
		t.Error("Eval succeeded without a server")
	}
	s.Close()
	// the other server still holds its layers
	keptBuf := m.devs[0].buf
	if !m.devs[0].alive() {
		t.Fatal("the other server lost its weights")
	}
	// no server: a new session says so
	if _, err := m.NewSession(SessionOptions{Threads: 1, Context: 80}); err == nil || !strings.Contains(err.Error(), b.addr) {
		t.Errorf("NewSession without the server: %v", err)
	}
	// back on the same address: only its layers are loaded again
	startRPCServer(t, b.addr, 256<<20)
	got, _ := greedyTrace(t, m, prompt, 16)
	if !slices.Equal(got, want) {
		t.Errorf("after the server came back: %v, want %v", got, want)
	}
	if m.devs[0].buf != keptBuf {
		t.Error("the layers of the server that stayed were loaded again")
	}
}

// SplitOptions.OutputRemote: the output head on the last layer's server,
// the same bits, one split fewer per token, only the token embeddings here.
func TestSplitOutputRemote(t *testing.T) {
	path := splitModel(t, 4, ggml.TypeQ8_0)
	local, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prompt := splitPrompt(local)
	wantToks, wantLogits := greedyTrace(t, local, prompt, 16)
	embd := local.Tensor("token_embd.weight").NBytes()
	local.Close()
	a := startRPCServer(t, "127.0.0.1:0", 256<<20)
	b := startRPCServer(t, "127.0.0.1:0", 256<<20)
	m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{a.addr, b.addr}, TensorSplit: []float64{1, 1}, OutputRemote: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.Devices()[0].WeightBytes; got != embd {
		t.Errorf("%d bytes of weights here, want the token embeddings' %d", got, embd)
	}
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 80})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(context.Background(), []int32{1}); err != nil {
		t.Fatal(err)
	}
	if n := s.eng.(*schedEngine).sc.NSplits(); n != 3 {
		t.Errorf("%d splits, want 3 (CPU, server, server with the output)", n)
	}
	s.Close()
	gotToks, gotLogits := greedyTrace(t, m, prompt, 16)
	if !slices.Equal(gotToks, wantToks) {
		t.Errorf("tokens %v, local %v", gotToks, wantToks)
	}
	for i := range wantLogits {
		if !slices.Equal(gotLogits[i], wantLogits[i]) {
			t.Fatalf("logits of evaluation %d differ", i)
		}
	}
}

// A model with rope factors (rope_freqs.weight): each server keeps a copy,
// so its layers' ropes stay there; the same bits as the local run.
func TestSplitRopeFreqs(t *testing.T) {
	v, err := TrainVocab("the quick brown fox jumps over the lazy dog", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := NewModel(Hparams{NEmbd: 64, NLayer: 4, NHead: 4, NHeadKV: 2, NFF: 128, NCtxTrain: 80}, v, ModelOptions{Seed: 6, Std: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	fctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer fctx.Close()
	freqs := make([]float32, rm.NRot/2)
	for i := range freqs {
		freqs[i] = 1 + float32(i)/4
	}
	ft := fctx.NewTensor1D(ggml.TypeF32, len(freqs)).SetName("rope_freqs.weight")
	if err := ft.SetFloat32s(freqs); err != nil {
		t.Fatal(err)
	}
	rm.tensors["rope_freqs.weight"] = ft
	path := filepath.Join(t.TempDir(), "freqs.gguf")
	if err := rm.Save(path, "freqs"); err != nil {
		t.Fatal(err)
	}
	rm.Close()
	local, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if local.RopeFreqs == nil {
		t.Fatal("the model has no rope factors")
	}
	prompt := splitPrompt(local)
	wantToks, wantLogits := greedyTrace(t, local, prompt, 16)
	local.Close()
	a := startRPCServer(t, "127.0.0.1:0", 256<<20)
	b := startRPCServer(t, "127.0.0.1:0", 256<<20)
	m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{a.addr, b.addr}, TensorSplit: []float64{1, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Layers[3].rope == nil || m.Layers[3].rope.freqs == nil || m.Layers[0].rope != nil {
		t.Error("the servers' layers do not read their own rope factors")
	}
	gotToks, gotLogits := greedyTrace(t, m, prompt, 16) // checks the splits too
	if !slices.Equal(gotToks, wantToks) {
		t.Errorf("tokens %v, local %v", gotToks, wantToks)
	}
	for i := range wantLogits {
		if !slices.Equal(gotLogits[i], wantLogits[i]) {
			t.Fatalf("logits of evaluation %d differ", i)
		}
	}
}

// SplitOptions.Backends: a backend the caller made (here a second CPU
// backend) takes layers like a server, in equal shares without weights;
// the same bits as the local run.
func TestSplitBackends(t *testing.T) {
	path := splitModel(t, 4, ggml.TypeF16)
	prompt, wantToks, wantLogits := localTrace(t, path)
	other, err := ggml.NewCPUBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	a := startRPCServer(t, "127.0.0.1:0", 256<<20)
	m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{a.addr}, Backends: []*ggml.Backend{other}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got, want := layersOf(m.Devices()), []string{"CPU none", "dev1 0-1", "dev2 2-3"}; !slices.Equal(got, want) {
		t.Errorf("placement %v, want %v", got, want)
	}
	gotToks, gotLogits := greedyTrace(t, m, prompt, 16)
	if !slices.Equal(gotToks, wantToks) {
		t.Errorf("tokens %v, local %v", gotToks, wantToks)
	}
	for i := range wantLogits {
		if !slices.Equal(gotLogits[i], wantLogits[i]) {
			t.Fatalf("logits of evaluation %d differ", i)
		}
	}
	if _, err := Load(path, LoadOptions{Split: &SplitOptions{Backends: []*ggml.Backend{nil}}}); err == nil {
		t.Error("a nil backend was accepted")
	}
}
