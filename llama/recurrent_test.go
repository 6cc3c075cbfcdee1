package llama

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/shareddata"
	"github.com/stretchr/testify/require"
)

// Sessions of the recurrent architectures (rwkv6, mamba) on their parity
// models (../shared/parity/archs): the state carried between batches and
// tokens, Rewind, Memory, splits, and the files refused.

var recurrentArchs = []string{"rwkv6", "mamba"}

// recurrentModel loads the parity model of arch (made by synth, checked
// by its sha256) and returns its case.
func recurrentModel(t *testing.T, arch string, opts LoadOptions) (*Model, *archCase, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the models are tens of MB")
	}
	b, err := os.ReadFile(shareddata.Dir(t, "parity", "archs", arch+".json"))
	require.NoError(t, err)
	var c archCase
	require.NoError(t, json.Unmarshal(b, &c))
	file := archModel(t, &c)
	m, err := Load(file, opts)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m, &c, file
}

// The prompt as one batch, in batches of 7 and token by token: the same
// logits after every token (the state goes from graph to graph as within
// one).
func TestRecurrentBatchMatchesTokens(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			m, c, _ := recurrentModel(t, arch, LoadOptions{})
			ctx := context.Background()
			evalAll := func(batch int) []float32 {
				s, err := m.NewSession(SessionOptions{Threads: 2, Context: 128, Batch: batch})
				require.NoError(t, err)
				defer s.Close()
				out, err := s.EvalAll(ctx, c.PromptIDs)
				require.NoError(t, err)
				require.Equal(t, len(c.PromptIDs), s.Pos())
				return out
			}
			whole := evalAll(512)
			s, err := m.NewSession(SessionOptions{Threads: 2, Context: 128})
			require.NoError(t, err)
			defer s.Close()
			nv := m.NVocab
			for _, batched := range [][]float32{evalAll(7), nil} {
				for i, id := range c.PromptIDs {
					var got []float32
					if batched != nil {
						got = batched[i*nv : (i+1)*nv]
					} else {
						got, err = s.Eval(ctx, []int32{id})
						require.NoError(t, err)
					}
					if e := nmse(got, whole[i*nv:(i+1)*nv]); e > 1e-5 {
						t.Fatalf("token %d (batched %v): nmse %.3g against the whole prompt's", i, batched != nil, e)
					}
				}
			}
		})
	}
}

// llama.cpp 1.3.3's WKV6 kernel hangs with more threads than heads; ours
// must not: 1 to 2x the parity model's 2 heads, each run under a deadline
// far beyond its time.
func TestRWKV6MoreThreadsThanHeads(t *testing.T) {
	m, c, _ := recurrentModel(t, "rwkv6", LoadOptions{})
	require.Equal(t, 2, m.NEmbd/m.WKVHeadSize)
	want := readF32(t, shareddata.Dir(t, "parity", "archs", c.Logits))
	for threads := 1; threads <= 4; threads++ {
		done := make(chan error, 1)
		var logits []float32
		go func() {
			s, err := m.NewSession(SessionOptions{Threads: threads, Context: 128})
			if err != nil {
				done <- err
				return
			}
			defer s.Close()
			if _, err = s.Eval(context.Background(), c.PromptIDs[:len(c.PromptIDs)-1]); err == nil {
				logits, err = s.Eval(context.Background(), c.PromptIDs[len(c.PromptIDs)-1:]) // the one-token graph too
			}
			done <- err
		}()
		select {
		case err := <-done:
			require.NoError(t, err, "%d threads", threads)
		case <-time.After(5 * time.Minute):
			t.Fatalf("%d threads: no result after 5 minutes: the WKV6 op hangs", threads)
		}
		if e := nmse(logits, want); e > 1e-4 {
			t.Errorf("%d threads: nmse %.3g", threads, e)
		}
	}
}

// Rewind: to 0 starts a new sequence (the same logits again), to Pos does
// nothing, to any other position is ErrRecurrentRewind and leaves the
// session as it was. Warmup in the middle keeps the state.
func TestRecurrentRewind(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			m, c, _ := recurrentModel(t, arch, LoadOptions{})
			ctx := context.Background()
			s, err := m.NewSession(SessionOptions{Threads: 2, Context: 128})
			require.NoError(t, err)
			defer s.Close()
			half := c.PromptIDs[:20]
			first, err := s.Eval(ctx, half)
			require.NoError(t, err)
			first = slices.Clone(first)

			err = s.Rewind(10)
			require.ErrorIs(t, err, ErrRecurrentRewind)
			require.ErrorContains(t, err, "Rewind(10) with 20 tokens held")
			require.Equal(t, 20, s.Pos())
			require.NoError(t, s.Rewind(20))
			require.NoError(t, s.Warmup(ctx))
			require.Equal(t, 20, s.Pos())
			rest, err := s.Eval(ctx, c.PromptIDs[20:])
			require.NoError(t, err)
			rest = slices.Clone(rest)

			require.NoError(t, s.Rewind(0))
			require.Equal(t, 0, s.Pos())
			again, err := s.Eval(ctx, half)
			require.NoError(t, err)
			require.Equal(t, first, again, "after Rewind(0)")
			again, err = s.Eval(ctx, c.PromptIDs[20:])
			require.NoError(t, err)
			require.Equal(t, rest, again, "after Warmup in the middle")
		})
	}
}

// An evaluation that failed part-way leaves a state some layers moved on:
// the session refuses to go on until Rewind(0).
func TestRecurrentStateLost(t *testing.T) {
	m, c, _ := recurrentModel(t, "mamba", LoadOptions{})
	ctx := context.Background()
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 64})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Eval(ctx, c.PromptIDs[:5])
	require.NoError(t, err)
	s.dirty = s.nPast + 3 // as evalBatch leaves it when the computation fails
	_, err = s.Eval(ctx, c.PromptIDs[5:6])
	require.ErrorIs(t, err, errStateLost)
	require.ErrorIs(t, s.Rewind(5), errStateLost)
	require.NoError(t, s.Rewind(0))
	_, err = s.Eval(ctx, c.PromptIDs[:5])
	require.NoError(t, err)
}

// The state's size does not depend on the context: Memory reports the
// same bytes at 64 and 65536 positions, those of the layers' two state
// tensors (f32).
func TestRecurrentMemoryConstant(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			m, _, _ := recurrentModel(t, arch, LoadOptions{})
			k, v := m.arch.graph.(recurrentGraph).stateSizes(&m.Hparams)
			var sizes []int
			for _, n := range []int{64, 65536} {
				s, err := m.NewSession(SessionOptions{Threads: 1, Context: n, Batch: 32})
				require.NoError(t, err)
				state, compute := s.Memory()
				require.Positive(t, compute)
				sizes = append(sizes, state)
				require.NoError(t, s.Close())
			}
			require.Equal(t, sizes[0], sizes[1])
			require.GreaterOrEqual(t, sizes[0], 4*m.NLayer*(k+v))
			require.Less(t, sizes[0], 4*m.NLayer*(k+v)+4096)
		})
	}
}

// Generate runs unchanged: greedy, it gives llama.cpp's tokens.
func TestRecurrentGenerate(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			m, c, _ := recurrentModel(t, arch, LoadOptions{})
			s, err := m.NewSession(SessionOptions{Threads: 2, Context: 128})
			require.NoError(t, err)
			defer s.Close()
			st, err := s.Generate(context.Background(), c.PromptIDs, GenerateOptions{MaxTokens: len(c.GenIDs), IgnoreEOG: true, Sampler: SamplerOptions{Temp: 0}})
			require.NoError(t, err)
			require.Equal(t, c.GenIDs, st.Tokens)
			require.Equal(t, len(c.PromptIDs)+len(c.GenIDs)-1, s.Pos())
		})
	}
}

// The layers split over an RPC server: each keeps its state there, and
// the logits are the local run's.
func TestRecurrentSplit(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			local, c, path := recurrentModel(t, arch, LoadOptions{})
			_, wantLogits := greedyTraceOpts(t, local, c.PromptIDs, SessionOptions{Threads: 1, Context: 96, Batch: 16})
			srv := startRPCServer(t, "127.0.0.1:0", 512<<20)
			m, err := Load(path, LoadOptions{Split: &SplitOptions{RPC: []string{srv.addr}, TensorSplit: []float64{1, 1}}})
			require.NoError(t, err)
			defer m.Close()
			devs := m.Devices()
			require.Len(t, devs, 2)
			require.Positive(t, devs[1].End-devs[1].First, "%+v", devs)
			_, gotLogits := greedyTraceOpts(t, m, c.PromptIDs, SessionOptions{Threads: 1, Context: 96, Batch: 16})
			require.Equal(t, len(wantLogits), len(gotLogits))
			for i := range wantLogits {
				if e := nmse(gotLogits[i], wantLogits[i]); e > 1e-10 {
					t.Fatalf("evaluation %d: split nmse %.3g against the local run", i, e)
				}
			}
		})
	}
}

// QuantizeFile leaves the parameters that are not matrices in their type,
// as llama.cpp's quantize.
func TestRecurrentQuantizeKeepsParams(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			_, _, path := recurrentModel(t, arch, LoadOptions{})
			q := filepath.Join(t.TempDir(), "q8_0.gguf")
			_, err := QuantizeFile(path, q, QuantizeOptions{Type: ggml.TypeQ8_0})
			require.NoError(t, err)
			in, err := gguf.Open(path)
			require.NoError(t, err)
			defer in.Close()
			out, err := gguf.Open(q)
			require.NoError(t, err)
			defer out.Close()
			a := archs[arch]
			params, matrices := 0, 0
			for _, info := range out.Tensors() {
				s, ok := a.spec(info.Name, 1<<20)
				require.True(t, ok, info.Name)
				orig, _ := in.Tensor(info.Name)
				switch s.role {
				case roleParam:
					params++
					require.Equal(t, orig.Type, info.Type, info.Name)
				case roleMatrix:
					if info.Shape[0]%32 == 0 {
						matrices++
						require.Equal(t, gguf.TensorType(ggml.TypeQ8_0), info.Type, info.Name)
					}
				}
			}
			require.Positive(t, params)
			require.Positive(t, matrices)
		})
	}
}

// Files of the recurrent architectures that are not whole are refused by
// name.
func TestRecurrentFilesRefused(t *testing.T) {
	for _, c := range []struct {
		arch string
		e    archEdit
		want string
	}{
		{"rwkv6", archEdit{drop: map[string]bool{"blk.3.time_mix_first.weight": true}}, "missing tensor blk.3.time_mix_first.weight"},
		{"rwkv6", archEdit{drop: map[string]bool{"output.weight": true}}, "missing tensor output.weight"},
		{"rwkv6", archEdit{add: map[string][]int64{"blk.0.attn_q.weight": {128, 128}}}, "unexpected tensor blk.0.attn_q.weight"},
		{"rwkv6", archEdit{set: map[string]any{"rwkv6.wkv.head_size": uint32(48)}}, "not a multiple of wkv.head_size 48"},
		{"rwkv6", archEdit{set: map[string]any{"rwkv6.time_mix_extra_dim": uint32(16)}}, "tensor blk.0.time_mix_w1.weight has shape [128 160], want [128 80]"},
		{"mamba", archEdit{set: map[string]any{"mamba.ssm.inner_size": uint32(384)}}, "only an expansion factor of 2"},
		{"mamba", archEdit{set: map[string]any{"mamba.ssm.state_size": uint32(0)}}, "mamba.ssm.state_size: 0 out of range"},
		{"mamba", archEdit{drop: map[string]bool{"blk.1.ssm_a": true}}, "missing tensor blk.1.ssm_a"},
		{"mamba", archEdit{arch: "rwkv6"}, "hyperparameter rwkv6.attention.layer_norm_epsilon"},
	} {
		t.Run(fmt.Sprintf("%s/%s", c.arch, c.want), func(t *testing.T) {
			_, _, path := recurrentModel(t, c.arch, LoadOptions{})
			err := loadFails(t, reArch(t, path, c.e), c.want)
			require.ErrorContains(t, err, c.want)
		})
	}
	// a required key missing
	_, _, path := recurrentModel(t, "mamba", LoadOptions{})
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := filepath.Join(t.TempDir(), "nokey.gguf")
	w, err := gguf.Create(out)
	require.NoError(t, err)
	defer w.Abort()
	require.NoError(t, w.CopyKVs(f))
	require.NoError(t, w.Remove("mamba.ssm.conv_kernel"))
	for _, info := range f.Tensors() {
		data, err := f.TensorData(info.Name)
		require.NoError(t, err)
		require.NoError(t, w.AddTensor(info.Name, info.Type, info.Shape, data))
	}
	require.NoError(t, w.Close())
	_, err = Load(out, LoadOptions{})
	require.ErrorIs(t, err, gguf.ErrNotFound)
	require.ErrorContains(t, err, "mamba.ssm.conv_kernel")
	require.False(t, errors.Is(err, ErrUnsupportedArchitecture))
}

// Save writes the recurrent architectures' keys and tensors: the file
// loads with the same Hparams and gives the same logits.
func TestRecurrentSave(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			m, c, _ := recurrentModel(t, arch, LoadOptions{})
			out := filepath.Join(t.TempDir(), "saved.gguf")
			require.NoError(t, m.Save(out, "saved"))
			m2, err := Load(out, LoadOptions{})
			require.NoError(t, err)
			defer m2.Close()
			require.Equal(t, m.Hparams, m2.Hparams)
			logits := func(m *Model) []float32 {
				s, err := m.NewSession(SessionOptions{Threads: 2, Context: 64})
				require.NoError(t, err)
				defer s.Close()
				l, err := s.Eval(context.Background(), c.PromptIDs)
				require.NoError(t, err)
				return slices.Clone(l)
			}
			require.Equal(t, logits(m), logits(m2))
		})
	}
}

// A parameter in a type its op does not take (an f16 where the scan, the
// convolution or the WKV op read f32) is an error, not a crash.
func TestRecurrentParamTypeRefused(t *testing.T) {
	for _, c := range []struct{ arch, name string }{{"mamba", "blk.1.ssm_a"}, {"mamba", "blk.0.ssm_conv1d.weight"}, {"rwkv6", "blk.2.time_mix_first.weight"}} {
		t.Run(c.name, func(t *testing.T) {
			_, _, path := recurrentModel(t, c.arch, LoadOptions{})
			f, err := gguf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			out := filepath.Join(t.TempDir(), "f16.gguf")
			w, err := gguf.Create(out)
			require.NoError(t, err)
			defer w.Abort()
			require.NoError(t, w.CopyKVs(f))
			for _, info := range f.Tensors() {
				data, err := f.TensorData(info.Name)
				require.NoError(t, err)
				if info.Name == c.name {
					half := make([]uint16, len(data)/4)
					for i := range half {
						half[i] = ggml.FP32ToFP16(math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])))
					}
					require.NoError(t, w.AddTensor(info.Name, gguf.TensorF16, info.Shape, half))
					continue
				}
				require.NoError(t, w.AddTensor(info.Name, info.Type, info.Shape, data))
			}
			require.NoError(t, w.Close())
			m, err := Load(out, LoadOptions{})
			if err == nil {
				defer m.Close()
				var s *Session
				if s, err = m.NewSession(SessionOptions{Threads: 1, Context: 16}); err == nil {
					_, err = s.Eval(context.Background(), []int32{1, 2})
					s.Close()
				}
			}
			require.Error(t, err)
			t.Log(err)
		})
	}
}

// ssm.dt_b_c_rms (FalconMamba) RMS-norms the time step, B and C: the
// file runs, and its logits are finite and not those without the norms.
func TestMambaDtBCRMS(t *testing.T) {
	m, c, path := recurrentModel(t, "mamba", LoadOptions{})
	m2, err := Load(reArch(t, path, archEdit{set: map[string]any{"mamba.ssm.dt_b_c_rms": true}}), LoadOptions{})
	require.NoError(t, err)
	defer m2.Close()
	require.True(t, m2.SSMDtBCRMS)
	logits := func(m *Model) []float32 {
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 64})
		require.NoError(t, err)
		defer s.Close()
		l, err := s.Eval(context.Background(), c.PromptIDs)
		require.NoError(t, err)
		return slices.Clone(l)
	}
	plain, normed := logits(m), logits(m2)
	for _, x := range normed {
		require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0))
	}
	require.Greater(t, nmse(normed, plain), 1e-3)
}
