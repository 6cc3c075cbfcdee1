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
	m      *Model
	opts   SessionOptions
	kv     *kvCache
	eng    engine
	nPast  int
	logits []float32   // what Eval returns
	dec    *batchGraph // the one-token graph (in the engine's decode context)
	dirty  int         // cache positions from here on hold zeros (Rewind clears them)
}

// NewSession creates a session with an empty KV cache.
func (m *Model) NewSession(opts SessionOptions) (*Session, error) {
	if m.closed() {
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
	s := &Session{m: m, opts: opts, logits: make([]float32, m.NVocab)}
	if err := m.restoreDevices(); err != nil {
		return nil, err
	}
	var err error
	if s.kv, err = newKVCache(m.Hparams, opts.Context, typ, m.devs...); err != nil {
		return nil, err
	}
	var eng engine
	if len(m.devs) > 0 {
		eng, err = newSchedEngine(m, s.kv, opts.Batch, opts.Threads)
	} else {
		eng, err = newBackendEngine(m, s.kv, opts.Batch, opts.Threads)
	}
	if err != nil {
		s.kv.close()
		return nil, err
	}
	s.eng = eng
	return s, nil
}

// Model returns the session's model.
func (s *Session) Model() *Model { return s.m }

// Pos is the number of tokens in the KV cache.
func (s *Session) Pos() int { return s.nPast }

// Memory reports the bytes the session holds: the KV cache and the compute
// buffer (reserved once, for the largest graph), on every device together
// (Devices tells them apart).
func (s *Session) Memory() (kvCache, compute int) {
	if s.eng == nil {
		return 0, 0
	}
	for _, n := range s.kv.bytes() {
		kvCache += n
	}
	return kvCache, s.eng.computeBytes()
}

// Threads is the number of compute threads.
func (s *Session) Threads() int { return s.opts.Threads }

// ContextSize is the number of positions of the KV cache.
func (s *Session) ContextSize() int { return s.opts.Context }

// Rewind forgets the tokens from position pos on (0 clears the session).
func (s *Session) Rewind(pos int) error {
	if pos < 0 || pos > s.nPast {
		return fmt.Errorf("llama: Rewind(%d): the session holds %d tokens", pos, s.nPast)
	}
	if err := s.kv.clear(pos, s.dirty); err != nil {
		return err
	}
	s.nPast, s.dirty = pos, pos
	return nil
}

// Warmup evaluates one token (BOS, or id 0 without one) after what the
// session holds, then forgets it: the session's state is what it was, and
// the one-time costs of a first evaluation (the threads' start, code and
// data not yet in the caches) are paid here rather than by the first
// prompt. It took a first 32-token prompt of a 24M-parameter f32 model
// from 9-13 ms to 4-5 ms (2 threads). llama.cpp's tools do the same before
// timing a prompt. A full session is left as it is.
func (s *Session) Warmup(ctx context.Context) error {
	pos := s.nPast
	if pos >= s.opts.Context {
		return nil
	}
	tok := int32(0)
	if b := s.m.Vocab.BOS; b > 0 && int(b) < s.m.NVocab {
		tok = b
	}
	if _, err := s.Eval(ctx, []int32{tok}); err != nil {
		_ = s.Rewind(pos)
		return err
	}
	return s.Rewind(pos)
}

// ErrContextFull is returned by Eval when the tokens do not fit in the KV cache.
var ErrContextFull = errors.New("llama: the context is full")

// Eval appends tokens to the session and returns the logits (NVocab
// values) the model gives for the token after the last one. The slice is
// the session's own buffer: it is valid until the next Eval or EvalAll
// (copy it to keep it). Prompts are evaluated in batches of
// SessionOptions.Batch; ctx is checked between them.
func (s *Session) Eval(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := s.check(tokens); err != nil {
		return nil, err
	}
	for start := 0; start < len(tokens); start += s.opts.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+s.opts.Batch, len(tokens))
		nOut := 0
		if end == len(tokens) {
			nOut = 1
		}
		if err := s.evalBatch(ctx, tokens[start:end], nOut, s.logits); err != nil {
			return nil, err
		}
	}
	return s.logits, nil
}

// EvalAll is Eval returning the logits after every token: len(tokens)
// rows of NVocab values, in a new slice.
func (s *Session) EvalAll(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := s.check(tokens); err != nil {
		return nil, err
	}
	out := make([]float32, len(tokens)*s.m.NVocab)
	for start := 0; start < len(tokens); start += s.opts.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+s.opts.Batch, len(tokens))
		if err := s.evalBatch(ctx, tokens[start:end], end-start, out[start*s.m.NVocab:end*s.m.NVocab]); err != nil {
			return nil, err
		}
	}
	copy(s.logits, out[len(out)-s.m.NVocab:])
	return out, nil
}

// check validates tokens before an evaluation.
func (s *Session) check(tokens []int32) error {
	if s.eng == nil {
		return errors.New("llama: Eval: the session is closed")
	}
	if s.m.closed() {
		return errors.New("llama: Eval: the model is closed")
	}
	if len(tokens) == 0 {
		return errors.New("llama: Eval: no tokens")
	}
	if s.nPast+len(tokens) > s.opts.Context {
		return fmt.Errorf("%w: %d tokens held, %d more do not fit in %d", ErrContextFull, s.nPast, len(tokens), s.opts.Context)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= s.m.NVocab {
			return fmt.Errorf("llama: Eval: token id %d out of range [0, %d)", t, s.m.NVocab)
		}
	}
	return nil
}

// evalBatch computes one graph and reads nOut rows of logits into out (at
// least one row is computed: the graph needs an output).
func (s *Session) evalBatch(ctx context.Context, tokens []int32, nOut int, out []float32) (err error) {
	defer recoverOp(&err)
	var b *batchGraph
	if len(tokens) == 1 {
		if b, err = s.decodeGraph(); err != nil {
			return err
		}
	} else {
		gctx, err := s.eng.context()
		if err != nil {
			return err
		}
		b = s.m.build(gctx, s.kv, len(tokens), s.nPast, max(nOut, 1))
	}
	s.dirty = max(s.dirty, s.nPast+len(tokens)) // written even if the computation fails
	if err := s.eng.run(ctx, b, tokens); err != nil {
		return err
	}
	s.nPast += len(tokens)
	if nOut == 0 {
		return nil
	}
	return b.logits.Float32sInto(out[:nOut*s.m.NVocab])
}

// decodeGraph is the one-token graph at position nPast: the session's,
// moved there, or a new one when nPast is in another kvPad bucket.
func (s *Session) decodeGraph() (*batchGraph, error) {
	if s.dec == nil || s.dec.nKV != decodeKV(s.nPast, s.kv.nCtx) {
		s.dec = nil
		gctx, err := s.eng.decodeContext()
		if err != nil {
			return nil, err
		}
		s.dec = s.m.build(gctx, s.kv, 1, s.nPast, 1)
	}
	return s.dec, s.dec.moveTo(s.nPast)
}

// Close frees the KV cache, the compute memory and the threads.
func (s *Session) Close() error {
	if s.eng != nil {
		s.eng.close()
		s.eng = nil
		s.dec = nil
	}
	if s.kv != nil {
		s.kv.close()
		s.kv = nil
	}
	return nil
}
