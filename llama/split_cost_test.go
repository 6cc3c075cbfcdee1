package llama

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// wireCounter is a TCP proxy on loopback in front of an RPC server that
// counts the bytes each way.
type wireCounter struct {
	addr       string
	sent, recv atomic.Int64 // client to server, server to client
}

func countWire(t testing.TB, target string) *wireCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wireCounter{addr: ln.Addr().String()}
	var conns sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open { // the client keeps its connection to an endpoint
			c.Close()
		}
		mu.Unlock()
		conns.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, s)
			mu.Unlock()
			pipe := func(dst, src net.Conn, n *atomic.Int64) {
				defer conns.Done()
				buf := make([]byte, 64<<10)
				for {
					k, err := src.Read(buf)
					if k > 0 {
						n.Add(int64(k))
						if _, werr := dst.Write(buf[:k]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				// either side gone: end both
				dst.Close()
				src.Close()
			}
			conns.Add(2)
			go pipe(s, c, &w.sent)
			go pipe(c, s, &w.recv)
		}
	}()
	return w
}

// wirePerToken generates n tokens after a short prompt on m and returns
// the bytes per token sent to and received from the servers behind ws.
func wirePerToken(t testing.TB, m *Model, ws []*wireCounter, n int) (sent, recv float64, perTok time.Duration) {
	t.Helper()
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 256, Batch: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sent, recv, perTok, _ = wireRun(t, s, ws, n)
	return sent, recv, perTok
}

// wireRun is wirePerToken on the session s, from empty; it also returns
// the process CPU time per token (all threads, the in-process servers'
// included), which other processes competing for the CPUs do not inflate.
func wireRun(t testing.TB, s *Session, ws []*wireCounter, n int) (sent, recv float64, perTok, cpuPerTok time.Duration) {
	t.Helper()
	if err := s.Rewind(0); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	logits, err := s.Eval(ctx, []int32{1, 2, 3, 4, 5, 6, 7, 8})
	if err != nil {
		t.Fatal(err)
	}
	var s0, r0 int64
	for _, w := range ws {
		s0, r0 = s0+w.sent.Load(), r0+w.recv.Load()
	}
	smp := NewSampler(SamplerOptions{})
	t0, c0 := time.Now(), cpuTime()
	for range n {
		if logits, err = s.Eval(ctx, []int32{smp.Sample(logits)}); err != nil {
			t.Fatal(err)
		}
	}
	perTok, cpuPerTok = time.Since(t0)/time.Duration(n), (cpuTime()-c0)/time.Duration(n)
	var s1, r1 int64
	for _, w := range ws {
		s1, r1 = s1+w.sent.Load(), r1+w.recv.Load()
	}
	return float64(s1-s0) / float64(n), float64(r1-r0) / float64(n), perTok, cpuPerTok
}

// What crosses the wire per generated token is the activations at the
// split points, the small inputs and the graph descriptions: far less than
// the weights of the layers a server computes (none of which travel again).
func TestSplitWireBytes(t *testing.T) {
	path := smallModel(t, Hparams{NEmbd: 256, NLayer: 4, NHead: 4, NFF: 512, NCtxTrain: 256}, false)
	a := startRPCServer(t, "127.0.0.1:0", 256<<20)
	b := startRPCServer(t, "127.0.0.1:0", 256<<20)
	wa, wb := countWire(t, a.addr), countWire(t, b.addr)
	m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{wa.addr, wb.addr}, TensorSplit: []float64{1, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sent, recv, _ := wirePerToken(t, m, []*wireCounter{wa, wb}, 40)
	minLayer := m.Devices()[1].WeightBytes
	t.Logf("per token: %.0f bytes sent, %.0f received (a server's layer weights: %d bytes)", sent, recv, minLayer)
	if sent > float64(minLayer)/10 || recv > float64(minLayer)/10 {
		t.Errorf("%.0f bytes sent and %.0f received per token: weights cross the wire", sent, recv)
	}
	if recv < 2*4*256 {
		t.Errorf("%.0f bytes received per token: less than the activations of two split points", recv)
	}
}

// TestSplitCost measures (LLAMA_SPLIT_COST=1) tokens per second locally and
// over one and two loopback servers (in this process, one thread each),
// and the bytes per token each way, for a stories15M-shaped f32 model and a
// larger q8_0 one, both with the 32000-token SentencePiece vocabulary.
func TestSplitCost(t *testing.T) {
	if os.Getenv("LLAMA_SPLIT_COST") == "" {
		t.Skip("LLAMA_SPLIT_COST=1 measures the cost of the network hops")
	}
	v := loadTestVocab(t, "ggml-vocab-llama-spm.gguf")
	for _, c := range []struct {
		name string
		h    Hparams
		typ  ggml.Type
	}{
		{"stories15M shape, f32", Hparams{NEmbd: 288, NLayer: 6, NHead: 6, NFF: 768, NCtxTrain: 256}, ggml.TypeF32},
		{"512x8 (58M params), q8_0", Hparams{NEmbd: 512, NLayer: 8, NHead: 8, NFF: 1408, NCtxTrain: 256}, ggml.TypeQ8_0},
	} {
		rm, err := NewModel(c.h, v, ModelOptions{Seed: 1, Std: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "cost.gguf")
		if err := rm.Save(path, "cost"); err != nil {
			t.Fatal(err)
		}
		rm.Close()
		if c.typ != ggml.TypeF32 {
			q := filepath.Join(t.TempDir(), "cost-q.gguf")
			if _, err := QuantizeFile(path, q, QuantizeOptions{Type: c.typ, Threads: 2}); err != nil {
				t.Fatal(err)
			}
			path = q
		}
		// local, over one server, over two: loaded side by side and timed
		// in turns, the best of several rounds each (the machine is shared)
		type setup struct {
			m  *Model
			s  *Session
			ws []*wireCounter
		}
		var setups []setup
		for _, k := range []int{0, 1, 2} {
			var ws []*wireCounter
			var eps []string
			for range k {
				srv := startRPCServer(t, "127.0.0.1:0", 1<<30)
				w := countWire(t, srv.addr)
				ws, eps = append(ws, w), append(eps, w.addr)
			}
			opts := LoadOptions{}
			if k > 0 {
				// the layers over the servers, the embeddings and the output here
				opts.Split = &SplitOptions{RPC: eps}
			}
			m, err := Load(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			s, err := m.NewSession(SessionOptions{Threads: 1, Context: 256, Batch: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			setups = append(setups, setup{m, s, ws})
		}
		const n, rounds = 32, 9
		best, bestCPU := make([]time.Duration, len(setups)), make([]time.Duration, len(setups))
		sent, recv := make([]float64, len(setups)), make([]float64, len(setups))
		for r := range rounds {
			for i, st := range setups {
				sb, rb, d, c := wireRun(t, st.s, st.ws, n)
				if r == 0 || d < best[i] {
					best[i] = d
				}
				if r == 0 || c < bestCPU[i] {
					bestCPU[i] = c
				}
				sent[i], recv[i] = sb, rb
			}
		}
		tl, cl := best[0], bestCPU[0]
		t.Logf("%s: local %.2f ms/token (%.1f tokens/s), cpu %.2f ms/token", c.name, ms(tl), 1/tl.Seconds(), ms(cl))
		for k := 1; k < len(setups); k++ {
			d, cpu := best[k], bestCPU[k]
			t.Logf("%s: %d server(s) %.2f ms/token (%.1f tokens/s, %+.2f ms: %+.3f ms per hop of %d), cpu %.2f ms/token (%+.3f ms per hop); per token %.0f bytes sent, %.0f received",
				c.name, k, ms(d), 1/d.Seconds(), ms(d-tl), ms(d-tl)/float64(k+1), k+1, ms(cpu), ms(cpu-cl)/float64(k+1), sent[k], recv[k])
		}
	}
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }
