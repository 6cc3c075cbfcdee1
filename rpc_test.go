package ggml

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rpcTestServer is ServeRPC over a CPU backend on a free loopback port.
type rpcTestServer struct {
	endpoint string
	cancel   context.CancelFunc
	done     chan error
	once     sync.Once
}

func startRPCServer(t testing.TB, memBytes uint64) *rpcTestServer {
	return startRPCServerOn(t, "127.0.0.1:0", memBytes)
}

func startRPCServerOn(t testing.TB, addr string, memBytes uint64) *rpcTestServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	cpu, err := NewCPUBackend()
	require.NoError(t, err)
	require.NoError(t, cpu.SetThreads(2))
	ctx, cancel := context.WithCancel(context.Background())
	s := &rpcTestServer{endpoint: ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() {
		s.done <- ServeRPC(ctx, ln, cpu, memBytes)
		cpu.Close()
	}()
	t.Cleanup(s.stop)
	return s
}

// stop ends the server and waits until every client is gone.
func (s *rpcTestServer) stop() {
	s.once.Do(func() {
		s.cancel()
		<-s.done
	})
}

// rpcCheckCompute computes a small graph on b and locally; the results must
// be equal (our server runs our kernels).
func rpcCheckCompute(t *testing.T, b *Backend) { rpcCheckComputeTol(t, b, 0) }

// rpcCheckComputeTol is rpcCheckCompute with a tolerance (for servers with
// other kernels).
func rpcCheckComputeTol(t *testing.T, b *Backend, tol float64) {
	t.Helper()
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	x := ctx.NewTensor2D(TypeF32, 64, 5)
	w := ctx.NewTensor2D(TypeF16, 64, 48)
	y := ctx.SoftMax(ctx.Scale(ctx.MulMat(w, ctx.RMSNorm(x, 1e-5)), 0.1))
	buf, err := ctx.AllocTensors(b)
	require.NoError(t, err)
	defer buf.Close()
	xv, wv := make([]float32, 64*5), make([]float32, 64*48)
	for i := range xv {
		xv[i] = float32(math.Sin(float64(i)))
	}
	for i := range wv {
		wv[i] = float32(math.Cos(float64(i) * 0.37))
	}
	require.NoError(t, x.SetFloat32s(xv))
	require.NoError(t, w.SetFloat32s(wv))
	got, err := x.Float32s()
	require.NoError(t, err)
	require.Equal(t, xv, got)
	g := ctx.NewGraph().BuildForward(y)
	require.NoError(t, b.Compute(context.Background(), g))
	remote, err := y.Float32s()
	require.NoError(t, err)

	lctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	require.NoError(t, err)
	defer lctx.Close()
	lx, lw := lctx.NewTensor2D(TypeF32, 64, 5), lctx.NewTensor2D(TypeF16, 64, 48)
	require.NoError(t, lx.SetFloat32s(xv))
	require.NoError(t, lw.SetFloat32s(wv))
	ly := lctx.SoftMax(lctx.Scale(lctx.MulMat(lw, lctx.RMSNorm(lx, 1e-5)), 0.1))
	require.NoError(t, lctx.NewGraph().BuildForward(ly).Compute(2))
	local, err := ly.Float32s()
	require.NoError(t, err)
	if tol == 0 {
		require.Equal(t, local, remote, "the server computes with the same kernels: the same bits")
		return
	}
	require.InDeltaSlice(t, local, remote, tol)
}

// rpcCheckCommands exercises what a graph's compute does not: two buffers on
// the server, quantized bytes, a strided view written and read row by row
// (SET/GET_TENSOR at offsets), a memset (offset SET_TENSORs), BUFFER_CLEAR and
// a copy between the two buffers (COPY_TENSOR).
func rpcCheckCommands(t *testing.T, b *Backend) {
	t.Helper()
	var ctxs [2]*Context
	var qs, fs [2]*Tensor
	for i := range ctxs {
		ctx, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
		require.NoError(t, err)
		defer ctx.Close()
		ctxs[i], qs[i], fs[i] = ctx, ctx.NewTensor2D(TypeQ8_0, 64, 3), ctx.NewTensor2D(TypeF32, 8, 6)
	}
	view := ctxs[0].View2D(fs[0], 4, 3, 8*4, (1*8+2)*4) // rows 1-3, columns 2-5
	var bufs [2]*Buffer
	for i, ctx := range ctxs {
		buf, err := ctx.AllocTensors(b)
		require.NoError(t, err)
		defer buf.Close()
		bufs[i] = buf
	}

	qb := make([]byte, len(qs[0].Bytes()))
	for i := range qb {
		qb[i] = byte(i*13 + 5)
	}
	require.NoError(t, qs[0].SetBytes(qb))
	require.Equal(t, qb, qs[0].Bytes())
	fv := make([]float32, 48)
	for i := range fv {
		fv[i] = float32(i)
	}
	require.NoError(t, fs[0].SetFloat32s(fv))
	require.NoError(t, view.SetFloat32s([]float32{-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12}))
	for r := 1; r <= 3; r++ {
		for c := 2; c <= 5; c++ {
			fv[r*8+c] = -float32((r-1)*4 + c - 1)
		}
	}
	got, err := fs[0].Float32s()
	require.NoError(t, err)
	require.Equal(t, fv, got)
	got, err = view.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12}, got)

	require.NoError(t, bufs[1].Clear(0xab))
	require.Equal(t, bytes.Repeat([]byte{0xab}, len(qb)), qs[1].Bytes())
	require.Equal(t, bytes.Repeat([]byte{0xab}, 8*6*4), fs[1].Bytes())
	require.NoError(t, rawMemset(fs[1], 0x3f, 4, 8))
	want := bytes.Repeat([]byte{0xab}, 8*6*4)
	copy(want[4:12], bytes.Repeat([]byte{0x3f}, 8))
	require.Equal(t, want, fs[1].Bytes())
	require.NoError(t, rawCopy(qs[0], qs[1]))
	require.NoError(t, rawCopy(fs[0], fs[1]))
	require.Equal(t, qb, qs[1].Bytes())
	got, err = fs[1].Float32s()
	require.NoError(t, err)
	require.Equal(t, fv, got)
}

func TestRPCBackend(t *testing.T) {
	s := startRPCServer(t, 64<<20)
	b, err := DialRPC(context.Background(), s.endpoint)
	require.NoError(t, err)
	defer b.Close()
	require.True(t, b.IsRPC())
	require.Equal(t, "RPC["+s.endpoint+"]", b.Name())
	rpcCheckCompute(t, b)
	rpcCheckCommands(t, b)

	free, total, err := RPCDeviceMemory(context.Background(), s.endpoint)
	require.NoError(t, err)
	require.Equal(t, uint64(64<<20), total)
	require.Equal(t, total, free)

	// the server's cap: more than it hands out is an error, not a crash
	_, err = b.NewBuffer(65 << 20)
	require.Error(t, err)
	big, err := b.NewBuffer(40 << 20)
	require.NoError(t, err)
	free, _, err = RPCDeviceMemory(context.Background(), s.endpoint)
	require.NoError(t, err)
	require.Equal(t, uint64(24<<20), free)
	_, err = b.NewBuffer(40 << 20)
	require.ErrorContains(t, err, "cannot allocate")
	require.NoError(t, big.Close())

	// endpoints that cannot work
	_, err = DialRPC(context.Background(), "127.0.0.1")
	require.ErrorContains(t, err, "host:port")
	_, err = DialRPC(context.Background(), freeLoopbackAddr(t))
	require.ErrorContains(t, err, "connect")
	_, _, err = RPCDeviceMemory(context.Background(), freeLoopbackAddr(t))
	require.Error(t, err)
}

// freeLoopbackAddr is an address where nothing listens.
func freeLoopbackAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// ---------------------------------------------------------------- hostile clients

// rpcHeader is a request header: the command byte and the payload size.
func rpcHeader(cmd byte, size uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{cmd}, size)
}

// rpcExchange sends a request and reads its reply (nil, err if the server
// closed the connection instead).
func rpcExchange(c net.Conn, cmd byte, payload []byte) ([]byte, error) {
	if _, err := c.Write(append(rpcHeader(cmd, uint64(len(payload))), payload...)); err != nil {
		return nil, err
	}
	var n [8]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return nil, err
	}
	out := make([]byte, binary.LittleEndian.Uint64(n[:]))
	_, err := io.ReadFull(c, out)
	return out, err
}

// rehome points the tensors of a GRAPH_COMPUTE message made by
// rpcEncodeGraph (handle 1, base 1<<32) at a real buffer of the server.
func rehome(msg []byte, handle, base uint64) []byte {
	m := append([]byte(nil), msg[1:]...)
	nNodes := binary.LittleEndian.Uint32(m)
	off := 4 + 8*int(nNodes)
	nTensors := int(binary.LittleEndian.Uint32(m[off:]))
	for i := range nTensors {
		t := m[off+4+296*i:]
		if binary.LittleEndian.Uint64(t[12:]) == 1 {
			binary.LittleEndian.PutUint64(t[12:], handle)
			binary.LittleEndian.PutUint64(t[220:], binary.LittleEndian.Uint64(t[220:])-(1<<32)+base)
		}
	}
	return m
}

// hostileMessage is one bad request: random bytes, a truncated or damaged
// good one, a lying size, or a graph with damaged tensors.
func hostileMessage(rng *rand.Rand, graphs [][]byte, handle, base uint64) []byte {
	switch rng.IntN(6) {
	case 0: // noise
		b := make([]byte, rng.IntN(600))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	case 1: // a header that promises more than follows
		cmd := byte(rng.IntN(12))
		return append(rpcHeader(cmd, rng.Uint64N(1<<40)), make([]byte, rng.IntN(400))...)
	case 2: // a good graph, cut short
		g := rehome(graphs[rng.IntN(len(graphs))], handle, base)
		return append(rpcHeader(9, uint64(len(g))), g[:rng.IntN(len(g))]...)
	default: // a good graph with damaged bytes (sizes, ids, types, strides, addresses)
		g := rehome(graphs[rng.IntN(len(graphs))], handle, base)
		for range 1 + rng.IntN(6) {
			i := rng.IntN(len(g))
			g[i] ^= byte(1 << rng.IntN(8))
		}
		return append(rpcHeader(9, uint64(len(g))), g...)
	}
}

// countingHandler counts log records that contain a word (and drops them all).
type countingHandler struct {
	word string
	n    *atomic.Int64
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.word) {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

func TestRPCServerHostile(t *testing.T) {
	var dropped atomic.Int64
	SetLogger(slog.New(countingHandler{"dropped", &dropped}))
	defer SetLogger(nil)
	s := startRPCServer(t, 64<<20)
	graphs := rpcSeedGraphs(t)
	rng := rand.New(rand.NewPCG(1, 2))
	// Up to 4000 sessions, or what 40 s allow, but never fewer than 300:
	// the checks below count events, so a slow machine only takes longer.
	const sessions, minSessions = 4000, 300
	sent, computed, n := 0, 0, 0
	deadline := time.Now().Add(40 * time.Second)
	for ; n < sessions && (n < minSessions || time.Now().Before(deadline)); n++ {
		c, err := net.Dial("tcp", s.endpoint)
		require.NoError(t, err)
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		// a session: a buffer of its own, then bad requests until the server hangs up
		rsp, err := rpcExchange(c, 0, binary.LittleEndian.AppendUint64(nil, 1<<20))
		require.NoError(t, err)
		handle := binary.LittleEndian.Uint64(rsp)
		rsp, err = rpcExchange(c, 3, binary.LittleEndian.AppendUint64(nil, handle))
		require.NoError(t, err)
		base := binary.LittleEndian.Uint64(rsp)
		for range 4 {
			msg := hostileMessage(rng, graphs, handle, base)
			sent++
			if _, err := c.Write(msg); err != nil {
				break
			}
			// a whole graph gets an answer (a status) unless it broke the rules
			if len(msg) >= 9 && msg[0] == 9 && binary.LittleEndian.Uint64(msg[1:]) == uint64(len(msg)-9) {
				var r [9]byte
				if _, err := io.ReadFull(c, r[:]); err != nil {
					break
				}
				computed++
			} else {
				break
			}
		}
		c.Close()
	}
	t.Logf("%d hostile requests, %d graphs answered, %d clients dropped with a reason", sent, computed, dropped.Load())
	require.GreaterOrEqual(t, sent, n, "every session sends a hostile request")
	require.Greater(t, dropped.Load(), int64(n/4), "a quarter of the sessions or more end with a reason")

	// the server is up, has forgotten the hostile clients' buffers, and serves a good client
	free, total, err := waitMemoryFree(s.endpoint, 64<<20)
	require.NoError(t, err)
	require.Equal(t, total, free)
	b, err := DialRPC(context.Background(), s.endpoint)
	require.NoError(t, err)
	defer b.Close()
	rpcCheckCompute(t, b)
}

// waitMemoryFree waits for the server to release the buffers of clients that
// just left (their connections end asynchronously, later on a loaded
// machine: the deadline only bounds a failing test).
func waitMemoryFree(endpoint string, want uint64) (free, total uint64, err error) {
	for deadline := time.Now().Add(time.Minute); ; {
		free, total, err = RPCDeviceMemory(context.Background(), endpoint)
		if err != nil || free == want || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ---------------------------------------------------------------- faults

// A server that stops mid-graph: Compute fails promptly, a new server on the
// same address is picked up by a new backend.
func TestRPCServerGone(t *testing.T) {
	s := startRPCServer(t, 256<<20)
	b, err := DialRPC(context.Background(), s.endpoint)
	require.NoError(t, err)
	defer b.Close()
	g, cleanup := slowGraph(t, b)
	defer cleanup()

	errc := make(chan error, 1)
	go func() { errc <- b.Compute(context.Background(), g) }()
	time.Sleep(100 * time.Millisecond) // the graph is on the server
	t0 := time.Now()
	go s.stop()
	select {
	case err := <-errc:
		require.Error(t, err)
		require.Contains(t, err.Error(), "RPC[")
		t.Logf("Compute returned %v after %v", err, time.Since(t0))
	case <-time.After(30 * time.Second):
		t.Fatal("Compute did not return after the server stopped")
	}
	// the old backend's buffers are gone with the connection
	require.Error(t, b.Compute(context.Background(), g))
	s.stop()

	// a new server on the same port; a new backend works
	s2 := startRPCServerOn(t, s.endpoint, 64<<20)
	b2, err := DialRPC(context.Background(), s2.endpoint)
	require.NoError(t, err)
	defer b2.Close()
	rpcCheckCompute(t, b2)
}

// slowGraph is a graph on b that takes a while to compute: 8 matmuls of
// 2048² (137 GFLOP, seconds on two cores), so that the faults below hit it
// mid-graph however fast the GEMM kernels get.
func slowGraph(t *testing.T, b *Backend) (*Graph, func()) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	require.NoError(t, err)
	a := ctx.NewTensor2D(TypeF32, 2048, 2048)
	x := a
	for range 8 {
		x = ctx.MulMat(a, x)
	}
	buf, err := ctx.AllocTensors(b)
	require.NoError(t, err)
	require.NoError(t, buf.Clear(0))
	return ctx.NewGraph().BuildForward(x), func() { buf.Close(); ctx.Close() }
}

// A server that accepts and then never answers: Compute fails after the I/O timeout.
func TestRPCTimeout(t *testing.T) {
	s := startRPCServer(t, 256<<20)
	b, err := DialRPC(context.Background(), s.endpoint)
	require.NoError(t, err)
	defer b.Close()
	g, cleanup := slowGraph(t, b)
	defer cleanup()

	SetRPCTimeouts(0, 300*time.Millisecond)
	defer SetRPCTimeouts(0, 5*time.Minute)
	t0 := time.Now()
	err = b.Compute(context.Background(), g)
	elapsed := time.Since(t0)
	require.Error(t, err)
	require.Contains(t, err.Error(), "timed out")
	// the 300 ms timeout, not the default 5 minutes; the bound leaves room
	// for a loaded machine
	require.Less(t, elapsed, time.Minute)

	// a mute server: connects, never speaks
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	t0 = time.Now()
	_, err = DialRPC(context.Background(), ln.Addr().String())
	require.ErrorContains(t, err, "timed out")
	require.Less(t, time.Since(t0), time.Minute)
}

// ---------------------------------------------------------------- a separate server process

// TestMain runs this test binary as an RPC server when GGML_TEST_RPC_SERVE
// names an address (for tests that kill a server process).
func TestMain(m *testing.M) {
	if addr := os.Getenv("GGML_TEST_RPC_SERVE"); addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("serving", ln.Addr())
		cpu, err := NewCPUBackend()
		if err != nil {
			os.Exit(1)
		}
		_ = ServeRPC(context.Background(), ln, cpu, 512<<20)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startRPCProcess runs this test binary as a server process on addr.
func startRPCProcess(t *testing.T, addr string) *exec.Cmd {
	cmd := selfCommand("-test.run=^$")
	cmd.Env = append(os.Environ(), "GGML_TEST_RPC_SERVE="+addr)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line := make([]byte, 64)
	n, _ := out.Read(line)
	require.True(t, strings.HasPrefix(string(line[:n]), "serving"), "server process: %q", line[:n])
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// Killing a server process mid-graph: Compute returns an error, a restarted
// process is picked up.
func TestRPCServerKilled(t *testing.T) {
	addr := freeLoopbackAddr(t)
	p := startRPCProcess(t, addr)
	b, err := DialRPC(context.Background(), addr)
	require.NoError(t, err)
	defer b.Close()
	g, cleanup := slowGraph(t, b)
	defer cleanup()
	errc := make(chan error, 1)
	go func() { errc <- b.Compute(context.Background(), g) }()
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	require.NoError(t, p.Process.Kill())
	select {
	case err := <-errc:
		require.Error(t, err)
		t.Logf("Compute returned %v %v after the kill", err, time.Since(t0))
	case <-time.After(30 * time.Second):
		t.Fatal("Compute did not return after the server was killed")
	}
	_ = p.Wait()

	startRPCProcess(t, addr)
	b2, err := DialRPC(context.Background(), addr)
	require.NoError(t, err)
	defer b2.Close()
	rpcCheckCompute(t, b2)
}

var _ = errors.New

// rpcCountingProxy relays connections to an RPC server and counts the
// requests of each command the clients send.
type rpcCountingProxy struct {
	endpoint string
	counts   [16]atomic.Int64
}

func startRPCCountingProxy(t *testing.T, server string) *rpcCountingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	p := &rpcCountingProxy{endpoint: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			t.Cleanup(func() { c.Close(); s.Close() })
			go func() { _, _ = io.Copy(c, s); c.Close() }()
			go func() {
				defer s.Close()
				for {
					var h [9]byte
					if _, err := io.ReadFull(c, h[:]); err != nil {
						return
					}
					p.counts[h[0]&15].Add(1)
					if _, err := s.Write(h[:]); err != nil {
						return
					}
					if _, err := io.CopyN(s, c, int64(binary.LittleEndian.Uint64(h[1:]))); err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

// Reading and writing a tensor whose RPC server went away returns an error
// (an I/O failure), and writing a whole tensor sends it without reading it
// first.
func TestRemoteTensorIOErrorsAfterServerLoss(t *testing.T) {
	quietLog(t)
	s := startRPCServer(t, 64<<20)
	proxy := startRPCCountingProxy(t, s.endpoint)
	b, err := DialRPC(context.Background(), proxy.endpoint)
	require.NoError(t, err)
	defer b.Close()
	ctx, err := NewContext(ContextOptions{MemSize: 8 * TensorOverhead(), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	f := ctx.NewTensor1D(TypeF32, 64).SetName("f")
	i := ctx.NewTensor1D(TypeI32, 64).SetName("i")
	buf, err := ctx.AllocTensors(b)
	require.NoError(t, err)
	defer buf.Close()

	gets := proxy.counts[7].Load()
	require.NoError(t, f.SetFloat32s(ramp(64, 1)))
	require.NoError(t, f.SetBytes(f.Bytes()))
	require.NoError(t, i.SetInt32s(make([]int32, 64)))
	require.Equal(t, gets+1, proxy.counts[7].Load(), "whole writes read nothing (the one GET_TENSOR is Bytes)")
	v, err := f.Float32s()
	require.NoError(t, err)
	require.Equal(t, ramp(64, 1), v)
	// one element: written without a read, read alone
	gets = proxy.counts[7].Load()
	f.SetF32(7, 3)
	i.SetI32(-5, 63)
	require.Equal(t, gets, proxy.counts[7].Load())
	require.Equal(t, float32(7), f.F32(3))
	require.Equal(t, int32(-5), i.I32(63))
	require.Equal(t, gets+2, proxy.counts[7].Load())
	v[3] = 7
	got, err := f.Float32s()
	require.NoError(t, err)
	require.Equal(t, v, got, "the other elements are untouched")

	s.stop()
	dst := make([]float32, 64)
	for name, call := range map[string]func() error{
		"Float32s":     func() error { _, err := f.Float32s(); return err },
		"Float32sInto": func() error { return f.Float32sInto(dst) },
		"Int32s":       func() error { _, err := i.Int32s(); return err },
		"SetFloat32s":  func() error { return f.SetFloat32s(dst) },
		"SetBytes":     func() error { return f.SetBytes(make([]byte, 256)) },
		"SetInt32s":    func() error { return i.SetInt32s(make([]int32, 64)) },
		"Clear":        func() error { return buf.Clear(0) },
	} {
		var err error
		require.NotPanics(t, func() { err = call() }, name)
		require.Error(t, err, name)
	}
	// methods without an error result report it as an *OpError
	var oe *OpError
	require.ErrorAs(t, panicValue(func() { f.Bytes() }).(error), &oe)
	require.ErrorAs(t, panicValue(func() { f.F32(0) }).(error), &oe)
}

// Every method of an RPC backend and of the objects made with it, called
// after its server went away, gives a result, an error or an error panic
// (never a crash or a hang); so do the RPC entry points for that endpoint.
func TestRPCMethodsAfterServerLoss(t *testing.T) {
	quietLog(t)
	SetRPCTimeouts(2*time.Second, 5*time.Second)
	defer SetRPCTimeouts(10*time.Second, 5*time.Minute)
	s := startRPCServer(t, 64<<20)
	b, err := DialRPC(context.Background(), s.endpoint)
	require.NoError(t, err)
	defer b.Close()
	cpu, err := NewCPUBackend()
	require.NoError(t, err)
	defer cpu.Close()
	ctx, err := NewContext(ContextOptions{MemSize: 16*TensorOverhead() + GraphOverhead(DefaultGraphSize, false), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	x := ctx.NewTensor1D(TypeF32, 64).SetName("x")
	buf, err := ctx.AllocTensors(b)
	require.NoError(t, err)
	require.NoError(t, x.SetFloat32s(ramp(64, 1)))
	g := ctx.NewGraph().BuildForward(ctx.Scale(x, 2))
	ga, err := NewGraphAllocator(b.BufferType())
	require.NoError(t, err)
	require.NoError(t, ga.Alloc(g))
	require.NoError(t, b.Compute(context.Background(), g))
	sc, err := NewScheduler([]*Backend{b, cpu}, 64, false)
	require.NoError(t, err)

	s.stop()
	for _, o := range []any{b.BufferType(), buf, ga, sc, b} {
		callEveryMethod(t, "server gone", o, context.Background(), g, x, b)
	}
	_, err = DialRPC(context.Background(), s.endpoint)
	require.Error(t, err)
	_, _, err = RPCDeviceMemory(context.Background(), s.endpoint)
	require.Error(t, err)
}

// Closing a backend while ServeRPC serves it stops the server (ServeRPC
// returns ErrClosedBackend) and frees the backend once the server is done.
func TestBackendCloseStopsServeRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cpu, err := NewCPUBackend()
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- ServeRPC(context.Background(), ln, cpu, 64<<20) }()
	b, err := DialRPC(context.Background(), ln.Addr().String())
	require.NoError(t, err)
	defer b.Close()
	rpcCheckCompute(t, b)
	require.NoError(t, cpu.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrClosedBackend)
	case <-time.After(time.Minute):
		t.Fatal("ServeRPC did not return after its backend was closed")
	}
	require.Error(t, ServeRPC(context.Background(), ln, cpu, 0), "a closed backend is not served")
}
