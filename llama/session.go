package llama

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/ggml-go/ggml"
)

// SessionOptions configure NewSession.
type SessionOptions struct {
	Threads int  // compute threads; 0: runtime.NumCPU()
	Context int  // positions the KV cache holds; 0: min(the training context, 2048)
	Batch   int  // prompt tokens evaluated per graph; 0: 512
	F32KV   bool // keep the KV cache in f32 (default f16, as llama.cpp)
}

// Session is one conversation with a model: a KV cache holding the tokens
// evaluated so far, and the memory and threads to evaluate more. A Session
// is not safe for concurrent use; several sessions may share a Model.
type Session struct {
	m     *Model
	opts  SessionOptions
	kv    *kvCache
	tp    *ggml.Threadpool
	eng   engine
	nPast int
}

// NewSession creates a session with an empty KV cache.
func (m *Model) NewSession(opts SessionOptions) (*Session, error) {
	if m.weights == nil || m.weights.Closed() {
		return nil, errors.New("llama: NewSession: the model is closed")
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.NumCPU()
	}
	opts.Threads = min(opts.Threads, ggml.MaxThreads)
	if opts.Context <= 0 {
		opts.Context = min(m.NCtxTrain, 2048)
	}
	if opts.Batch <= 0 {
		opts.Batch = 512
	}
	opts.Batch = min(opts.Batch, opts.Context)
	typ := ggml.TypeF16
	if opts.F32KV {
		typ = ggml.TypeF32
	}
	s := &Session{m: m, opts: opts}
	var err error
	if s.kv, err = newKVCache(m.Hparams, opts.Context, typ); err != nil {
		return nil, err
	}
	if s.tp, err = ggml.NewThreadpool(ggml.DefaultThreadpoolParams(opts.Threads)); err != nil {
		s.kv.close()
		return nil, err
	}
	if s.eng, err = newArenaEngine(m, s.kv, opts.Batch, s.tp); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Model returns the session's model.
func (s *Session) Model() *Model { return s.m }

// Pos is the number of tokens in the KV cache.
func (s *Session) Pos() int { return s.nPast }

// Threads is the number of compute threads.
func (s *Session) Threads() int { return s.opts.Threads }

// ContextSize is the number of positions of the KV cache.
func (s *Session) ContextSize() int { return s.opts.Context }

// Rewind forgets the tokens from position pos on (0 clears the session).
func (s *Session) Rewind(pos int) error {
	if pos < 0 || pos > s.nPast {
		return fmt.Errorf("llama: Rewind(%d): the session holds %d tokens", pos, s.nPast)
	}
	s.nPast = pos
	return nil
}

// ErrContextFull is returned by Eval when the tokens do not fit in the KV cache.
var ErrContextFull = errors.New("llama: the context is full")

// Eval appends tokens to the session and returns the logits (NVocab
// values) the model gives for the token after the last one. Prompts are
// evaluated in batches of SessionOptions.Batch; ctx is checked between them.
func (s *Session) Eval(ctx context.Context, tokens []int32) ([]float32, error) {
	return s.eval(ctx, tokens, false)
}

// EvalAll is Eval returning the logits after every token: len(tokens)
// rows of NVocab values.
func (s *Session) EvalAll(ctx context.Context, tokens []int32) ([]float32, error) {
	return s.eval(ctx, tokens, true)
}

func (s *Session) eval(ctx context.Context, tokens []int32, all bool) ([]float32, error) {
	if s.eng == nil {
		return nil, errors.New("llama: Eval: the session is closed")
	}
	if len(tokens) == 0 {
		return nil, errors.New("llama: Eval: no tokens")
	}
	if s.nPast+len(tokens) > s.opts.Context {
		return nil, fmt.Errorf("%w: %d tokens held, %d more do not fit in %d", ErrContextFull, s.nPast, len(tokens), s.opts.Context)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= s.m.NVocab {
			return nil, fmt.Errorf("llama: Eval: token id %d out of range [0, %d)", t, s.m.NVocab)
		}
	}
	var out []float32
	for start := 0; start < len(tokens); start += s.opts.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := tokens[start:min(start+s.opts.Batch, len(tokens))]
		last := start+len(batch) == len(tokens)
		nOut := 0
		switch {
		case all:
			nOut = len(batch)
		case last:
			nOut = 1
		}
		logits, err := s.evalBatch(batch, nOut)
		if err != nil {
			return nil, err
		}
		out = append(out, logits...)
	}
	return out, nil
}

// evalBatch computes one graph; nOut rows of logits come back (at least one
// is computed: the graph needs an output).
func (s *Session) evalBatch(tokens []int32, nOut int) (logits []float32, err error) {
	defer recoverOp(&err)
	ctx, err := s.eng.context()
	if err != nil {
		return nil, err
	}
	b := s.m.build(ctx, s.kv, len(tokens), s.nPast, max(nOut, 1))
	if err := s.eng.run(b, tokens); err != nil {
		return nil, err
	}
	s.nPast += len(tokens)
	if nOut == 0 {
		return nil, nil
	}
	return b.logits.Float32s()
}

// Close frees the KV cache, the compute memory and the threads.
func (s *Session) Close() error {
	if s.eng != nil {
		s.eng.close()
		s.eng = nil
	}
	if s.tp != nil {
		s.tp.Close()
		s.tp = nil
	}
	if s.kv != nil {
		s.kv.close()
		s.kv = nil
	}
	return nil
}
