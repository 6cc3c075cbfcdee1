package llama

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/gguf"
)

// Load's error names the file once and says "llama:" once, even
// when the cause is an error of this package (the vocabulary's here).
func TestLoadErrorHasOnePrefix(t *testing.T) {
	good := smallModel(t, Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 64, NCtxTrain: 32}, false)
	src, err := gguf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "novocab.gguf")
	w, err := gguf.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CopyKVs(src); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("tokenizer.ggml.model"); err != nil {
		t.Fatal(err)
	}
	for _, ti := range src.Tensors() {
		data, err := src.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path, LoadOptions{})
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); strings.Count(msg, "llama:") != 1 || !strings.HasPrefix(msg, "llama: "+path+": vocabulary: ") {
		t.Errorf("error %q", msg)
	}
	if !errors.Is(err, gguf.ErrNotFound) {
		t.Errorf("%v does not wrap gguf.ErrNotFound", err)
	}
}

// After Close the methods of a Model that return an error return ErrClosed
// and the others zero values (the tokenizer, Go memory, keeps working);
// Close is idempotent; a nil *Model behaves as a closed one.
func TestModelMethodsAfterCloseGiveErrClosed(t *testing.T) {
	m := tinyModel(t)
	ids := m.Tokenize("the fox", true)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var nilModel *Model
	for _, m := range []*Model{m, nilModel, {}} {
		calls := map[string]func() error{
			"NewSession": func() error { _, err := m.NewSession(SessionOptions{Threads: 1}); return err },
			"Save":       func() error { return m.Save(filepath.Join(t.TempDir(), "x.gguf"), "x") },
			"StreamCeiling": func() error {
				_, _, err := m.StreamCeiling(1, 1)
				return err
			},
			"Train": func() error {
				return Train(context.Background(), m, []int32{1, 2, 3, 4, 5}, TrainOptions{Seq: 2, Batch: 1, Steps: 1})
			},
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, ErrClosed) {
				t.Errorf("%s on a closed model (%p): %v, want ErrClosed", name, m, err)
			}
		}
		if m.WeightBytes() != 0 || m.Tensor("token_embd.weight") != nil || len(m.WeightTypes()) != 0 || m.DecodeMatrices() != nil {
			t.Errorf("closed model (%p): weights still described", m)
		}
		m.Detokenize(ids)
		m.Piece(1)
		if err := m.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
	if got := m.Detokenize(m.Tokenize("the fox", true)); got != "the fox" {
		t.Errorf("tokenizer after Close: %q", got)
	}
}

// Close of a Model from another goroutine while others use it (sessions
// created and evaluated, weights described, the model saved) makes those
// uses fail with ErrClosed or finish first: never a crash.
func TestModelCloseConcurrentWithUseIsAnError(t *testing.T) {
	m := tinyModel(t)
	dir := t.TempDir()
	progress := make(chan struct{}, 8)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for g := range 3 {
		wg.Go(func() {
			for {
				select {
				case progress <- struct{}{}:
				default:
				}
				var err error
				switch g {
				case 0:
					var s *Session
					if s, err = m.NewSession(SessionOptions{Threads: 1, Context: 16}); err == nil {
						_, err = s.Eval(context.Background(), []int32{1, 2})
						s.Close()
					}
				case 1:
					m.WeightBytes()
					m.WeightTypes()
					_, _, err = m.StreamCeiling(1, 1)
				case 2:
					err = m.Save(filepath.Join(dir, "m.gguf"), "m")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range 6 {
		<-progress
	}
	m.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("use concurrent with Close: %v, want ErrClosed", err)
		}
	}
}

// Train refuses sizes it cannot honour with an error: a sequence longer
// than the text (Seq+2 used to overflow), and batches whose sizes overflow
// or exceed the memory there is.
func TestTrainRejectsSizesItCannotHonour(t *testing.T) {
	m, err := NewModel(Hparams{NEmbd: 16, NLayer: 1, NHead: 2, NFF: 32, NCtxTrain: 16}, mustVocab(t), ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	text := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	for _, o := range []TrainOptions{
		{Seq: math.MaxInt, Batch: 1, Steps: 1},
		{Seq: 4, Batch: math.MaxInt, Steps: 1},
		{Seq: 4, Batch: 1 << 40, Steps: 1},
		{Seq: 6, Batch: 1 << 50, Steps: 1},
		{Seq: -1, Batch: 1, Steps: 1},
	} {
		if err := Train(context.Background(), m, text, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if err := Train(context.Background(), m, text, TrainOptions{Seq: 4, Batch: 2, Steps: 1, Threads: 1}); err != nil {
		t.Error(err)
	}
}

func mustVocab(t *testing.T) *Vocab {
	t.Helper()
	v, err := TrainVocab("the quick brown fox jumps over the lazy dog", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// NewModel refuses shapes whose weights overflow or exceed the memory
// there is, with an error before allocating them.
func TestNewModelRejectsShapesItCannotHold(t *testing.T) {
	v := mustVocab(t)
	for _, h := range []Hparams{
		{NEmbd: 1 << 30, NLayer: 1, NHead: 1, NFF: 1},
		{NEmbd: 16, NLayer: 1 << 30, NHead: 2, NFF: 32},
		{NEmbd: 16, NLayer: math.MaxInt, NHead: 2, NFF: 32},
		{NEmbd: 16, NLayer: 1, NHead: 2, NFF: math.MaxInt},
		{NEmbd: 1 << 20, NLayer: 1, NHead: 1 << 10, NFF: 1 << 20},
		{NEmbd: 16, NLayer: 1, NHead: 2, NFF: 32, NVocab: -1},
		{NEmbd: 16, NLayer: 1, NHead: 2, NFF: 32, NRot: 3},
	} {
		if m, err := NewModel(h, v, ModelOptions{}); err == nil {
			t.Errorf("%+v: no error", h)
			m.Close()
		}
	}
}
