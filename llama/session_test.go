package llama

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml"
)

// tinyModel loads a small model (2 layers, GQA) from a file.
func tinyModel(t *testing.T) *Model {
	t.Helper()
	m, err := Load(smallModel(t, Hparams{NEmbd: 32, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 48, NCtxTrain: 64}, false), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// NewSession returns an error, never a panic, for any option it cannot
// honour: negative values, thread counts past ggml.MaxThreads, contexts
// past MaxContext, and sizes that overflow when multiplied or rounded
// (examples/llama -c 9223372036854775776 panicked in newKVCache) or exceed
// the memory the process may use.
func TestNewSessionRejectsOptionsItCannotHonour(t *testing.T) {
	m := tinyModel(t)
	for _, o := range []SessionOptions{
		{Threads: -1},
		{Threads: ggml.MaxThreads + 1},
		{Threads: math.MaxInt},
		{Context: -1},
		{Context: math.MinInt},
		{Context: 9223372036854775776},
		{Context: math.MaxInt},
		{Context: MaxContext + 1},
		{Batch: -1},
		{Batch: math.MinInt},
		{Batch: math.MaxInt},
		{Batch: MaxContext + 1},
		{Context: MaxContext, Batch: MaxContext}, // attention scores of 2^62 bytes
		{Context: MaxContext, F32KV: true},       // fits int64, not the machine
	} {
		s, err := func() (s *Session, err error) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%+v: panic %v", o, r)
				}
			}()
			return m.NewSession(o)
		}()
		if err == nil {
			t.Errorf("%+v: no error", o)
			s.Close()
		}
	}
	// what it can honour: defaults, and a batch larger than the context
	// (evaluated a context at a time)
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 16, Batch: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Eval(context.Background(), []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
}

// The thread counts of the package follow ggml.ResolveThreads: 0 is
// ggml.DefaultThreads(), negative or above ggml.MaxThreads an error
// (QuantizeOptions and TrainOptions took a negative count for all CPUs).
func TestThreadCountsFollowTheOneRule(t *testing.T) {
	m := tinyModel(t)
	s, err := m.NewSession(SessionOptions{Context: 16})
	if err != nil {
		t.Fatal(err)
	}
	if s.Threads() != ggml.DefaultThreads() {
		t.Errorf("Threads 0: %d threads, want %d", s.Threads(), ggml.DefaultThreads())
	}
	s.Close()
	path := smallModel(t, Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 40, NCtxTrain: 32}, false)
	out := filepath.Join(t.TempDir(), "q.gguf")
	for _, n := range []int{-1, ggml.MaxThreads + 1} {
		if _, err := m.NewSession(SessionOptions{Threads: n, Context: 16}); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("NewSession, %d threads: %v", n, err)
		}
		if _, err := QuantizeFile(path, out, QuantizeOptions{Type: ggml.TypeQ8_0, Threads: n}); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("QuantizeFile, %d threads: %v", n, err)
		}
		nm, err := NewModel(m.Hparams, m.Vocab, ModelOptions{Seed: 1, Std: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		err = Train(context.Background(), nm, make([]int32, 40), TrainOptions{Seq: 8, Batch: 1, Steps: 1, Threads: n})
		nm.Close()
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Train, %d threads: %v", n, err)
		}
	}
	if _, err := QuantizeFile(path, out, QuantizeOptions{Type: ggml.TypeQ8_0}); err != nil {
		t.Errorf("QuantizeFile, 0 threads: %v", err)
	}
}

// After Close every method that returns an error returns ErrClosed (Rewind
// on a closed session was a nil dereference), the others return zero
// values; Close is idempotent; a nil *Session behaves as a closed one.
func TestSessionMethodsAfterCloseGiveErrClosed(t *testing.T) {
	m := tinyModel(t)
	ctx := context.Background()
	var nilSession *Session
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 16})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(ctx, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Session{s, nilSession} {
		calls := map[string]func() error{
			"Rewind": func() error { return s.Rewind(0) },
			"Warmup": func() error { return s.Warmup(ctx) },
			"Eval":   func() error { _, err := s.Eval(ctx, []int32{1}); return err },
			"EvalAll": func() error {
				_, err := s.EvalAll(ctx, []int32{1})
				return err
			},
			"Generate": func() error {
				_, err := s.Generate(ctx, []int32{1}, GenerateOptions{MaxTokens: 2})
				return err
			},
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, ErrClosed) {
				t.Errorf("%s after Close (nil session: %v): %v, want ErrClosed", name, s == nil, err)
			}
		}
		if kv, c := s.Memory(); kv != 0 || c != 0 {
			t.Errorf("Memory after Close: %d, %d", kv, c)
		}
		s.Pos()
		s.Threads()
		s.ContextSize()
		s.Model()
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
	// a session whose model was closed
	s, err = m.NewSession(SessionOptions{Threads: 1, Context: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m.Close()
	if _, err := s.Eval(ctx, []int32{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Eval with the model closed: %v, want ErrClosed", err)
	}
	if err := s.Rewind(0); !errors.Is(err, ErrClosed) {
		t.Errorf("Rewind with the model closed: %v, want ErrClosed", err)
	}
}

// Close of a session, or of its model, from another goroutine while the
// session evaluates is an error of the evaluation (ErrClosed), or happens
// after it: never a crash. The race detector checks the memory accesses.
func TestSessionCloseConcurrentWithUseIsAnError(t *testing.T) {
	for _, closeModel := range []bool{false, true} {
		m := tinyModel(t)
		s, err := m.NewSession(SessionOptions{Threads: 2, Context: 64, Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var wg sync.WaitGroup
		progress := make(chan struct{}, 1)
		errs := make(chan error, 1)
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case progress <- struct{}{}:
				default:
				}
				var err error
				switch i % 4 {
				case 0:
					_, err = s.Eval(ctx, []int32{1, 2, 3})
				case 1:
					_, err = s.Generate(ctx, []int32{4}, GenerateOptions{MaxTokens: 3})
				case 2:
					err = s.Warmup(ctx)
				case 3:
					err = s.Rewind(0)
				}
				if errors.Is(err, ErrContextFull) {
					err = s.Rewind(0)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
		// close in the middle of the evaluations: after a few of them
		for range 3 {
			<-progress
		}
		if closeModel {
			m.Close()
		} else {
			s.Close()
		}
		wg.Wait()
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("close model %v: the evaluations ended with %v, want ErrClosed", closeModel, err)
		}
		s.Close()
		m.Close()
	}
}
