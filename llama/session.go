package llama

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"

	"github.com/ggml-go/ggml"
)

// SessionOptions configure NewSession. Zero values pick the defaults;
// negative values, and sizes the machine cannot hold, are errors.
type SessionOptions struct {
	Threads int  // compute threads; 0: ggml.DefaultThreads() (the rule of ggml.ResolveThreads)
	Context int  // positions the KV cache holds (at most MaxContext); 0: min(the training context, 2048)
	Batch   int  // prompt tokens evaluated per graph (at most MaxContext; more than Context means Context); 0: 512
	F32KV   bool // keep the KV cache in f32 (default f16, as llama.cpp); a recurrent state is always f32
	// FlashAttn computes attention with FlashAttnExt (llama.cpp's
	// flash_attn, -fa) over a V cache laid out as K, a row per position:
	// a token's V store is then one contiguous row instead of an element
	// in every row of a transposed cache, and decoding reads K and V a
	// position at a time. The logits agree with the default path's to
	// rounding (the softmax is computed online). Recurrent models (rwkv6,
	// mamba) have no attention: it changes nothing there.
	FlashAttn bool
}

// MaxContext is the largest SessionOptions.Context (positions are int32 in
// the graphs, and rounded up to a multiple of the attention's padding).
const MaxContext = 1 << 30

// Session is one conversation with a model: a KV cache holding the tokens
// evaluated so far, and the memory and threads to evaluate more. A Session
// is not safe for concurrent use, except that Close may be called from
// another goroutine at any time (it waits for a running evaluation);
// several sessions may share a Model.
type Session struct {
	mu     sync.Mutex // serializes the methods, so that Close never frees what an evaluation reads
	m      *Model
	opts   SessionOptions
	kv     *kvCache
	eng    engine
	nPast  int
	tokens []int32   // the tokens in the KV cache (nPast of them)
	logits []float32 // what Eval returns
	// pending is the token Generate chose last and did not evaluate (-1:
	// none); an empty prompt evaluates it first
	pending int32
	// logitsAt is nPast when logits are those after the last token held
	// (-1 when a rewind or a failed evaluation left them stale)
	logitsAt int
	dec      *batchGraph // the one-token graph (in the engine's decode context)
	dirty    int         // cache positions from here on hold zeros (Rewind clears them)
	// recurrent: kv is the recurrent state of the layers (recurrent.go)
	// rather than a KV cache; dirty > nPast then means the state is lost
	recurrent bool
}

// errClosedSession is the error of op on a closed (or nil) Session.
func errClosedSession(op string) error { return &closedError{op, "session"} }

// resolve fills in the defaults of opts and checks that a session of the
// model can honour them: the sizes they imply are computed without
// overflow and must fit in the memory the process may use.
func (o SessionOptions) resolve(h Hparams, typ ggml.Type) (SessionOptions, error) {
	switch {
	case o.Context < 0 || o.Context > MaxContext:
		return o, fmt.Errorf("llama: NewSession: context of %d positions: 0 (the default) to %d", o.Context, MaxContext)
	case o.Batch < 0 || o.Batch > MaxContext:
		return o, fmt.Errorf("llama: NewSession: batch of %d tokens: 0 (the default) to %d", o.Batch, MaxContext)
	}
	threads, err := ggml.ResolveThreads(o.Threads)
	if err != nil {
		return o, fmt.Errorf("llama: NewSession: %w", err)
	}
	o.Threads = threads
	if o.Context == 0 {
		o.Context = max(min(h.NCtxTrain, 2048), 1)
	}
	if o.Batch == 0 {
		o.Batch = 512
	}
	o.Batch = min(o.Batch, o.Context)
	need, ok := sessionBytes(h, o, typ)
	if !ok {
		return o, fmt.Errorf("llama: NewSession: a context of %d positions and batches of %d tokens overflow the sizes of the KV cache and compute buffer", o.Context, o.Batch)
	}
	if limit := memoryLimit(); need > limit {
		return o, fmt.Errorf("llama: NewSession: a context of %d positions and batches of %d tokens need about %d MiB for the KV cache and compute buffer, more than the %d MiB of memory available", o.Context, o.Batch, need>>20, limit>>20)
	}
	return o, nil
}

// sessionBytes estimates from below the bytes a session of opts holds: the
// KV cache, and the largest intermediates of a batch (the attention scores
// of every head, the logits); false if a size overflows int64.
func sessionBytes(h Hparams, o SessionOptions, typ ggml.Type) (int64, bool) {
	kv, ok := mulSizes(2, int64(h.NLayer), int64(h.NEmbdGQA()), int64(o.Context), int64(typ.Size()))
	if !ok {
		return 0, false
	}
	scores, ok1 := mulSizes(4, int64(h.NHead), int64(o.Batch), int64(o.Context))
	logits, ok2 := mulSizes(4, int64(h.NVocab), int64(o.Batch))
	acts, ok3 := mulSizes(4, int64(o.Batch), int64(3*h.NEmbd+2*h.NFF))
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	return addSizes(kv, scores, logits, acts)
}

// mulSizes multiplies non-negative sizes, reporting overflow of int64.
func mulSizes(xs ...int64) (int64, bool) {
	p := int64(1)
	for _, x := range xs {
		if x < 0 || (x != 0 && p > math.MaxInt64/x) {
			return 0, false
		}
		p *= x
	}
	return p, true
}

// addSizes adds non-negative sizes, reporting overflow of int64.
func addSizes(xs ...int64) (int64, bool) {
	s := int64(0)
	for _, x := range xs {
		if x < 0 || s > math.MaxInt64-x {
			return 0, false
		}
		s += x
	}
	return s, true
}

// memoryLimit is the most memory a session may take: the Go memory limit
// (GOMEMLIMIT) where one is set, and no more than the machine's RAM where
// the platform tells it.
func memoryLimit() int64 {
	limit := debug.SetMemoryLimit(-1)
	if ram := physicalMemory(); ram > 0 {
		limit = min(limit, ram)
	}
	return limit
}

// NewSession creates a session with an empty KV cache. Options it cannot
// honour (see SessionOptions) are errors, as is a closed model (ErrClosed).
func (m *Model) NewSession(opts SessionOptions) (*Session, error) {
	done, err := m.use("NewSession")
	if err != nil {
		return nil, err
	}
	defer done()
	if m.arch.state == stateNone && len(m.devs) > 0 {
		return nil, fmt.Errorf("llama: NewSession: %s is an encoder, which runs on the local CPU only", m.Arch)
	}
	typ := ggml.TypeF16
	if opts.F32KV {
		typ = ggml.TypeF32
	}
	if opts, err = opts.resolve(m.Hparams, typ); err != nil {
		return nil, err
	}
	s := &Session{m: m, opts: opts, logits: make([]float32, m.NVocab), logitsAt: -1, pending: -1}
	if err := m.restoreDevices(); err != nil {
		return nil, err
	}
	switch m.arch.state {
	case stateNone: // an encoder: each call evaluates a whole sequence
		opts.Batch = opts.Context
		s.opts = opts
	case stateRecurrent:
		s.recurrent = true
		s.kv, err = newStateCache(m)
	default:
		s.kv, err = newKVCache(m.Hparams, opts.Context, typ, opts.FlashAttn, m.devs...)
	}
	if err != nil {
		return nil, err
	}
	var eng engine
	if len(m.devs) > 0 {
		eng, err = newSchedEngine(m, s.kv, opts.Batch, opts.Threads)
	} else {
		eng, err = newBackendEngine(m, s.kv, opts.Batch, opts.Threads)
	}
	if err != nil {
		if s.kv != nil {
			s.kv.close()
		}
		return nil, err
	}
	s.eng = eng
	return s, nil
}

// use locks the session and its model for op, failing with ErrClosed if
// either is closed; the caller calls the returned function when done.
func (s *Session) use(op string) (func(), error) {
	if s == nil {
		return nil, errClosedSession(op)
	}
	s.mu.Lock()
	if s.eng == nil {
		s.mu.Unlock()
		return nil, errClosedSession(op)
	}
	done, err := s.m.use(op)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	return func() { done(); s.mu.Unlock() }, nil
}

// Model returns the session's model.
func (s *Session) Model() *Model {
	if s == nil {
		return nil
	}
	return s.m
}

// Pos is the number of tokens in the KV cache.
func (s *Session) Pos() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nPast
}

// Tokens returns a copy of the tokens the session holds, in order (Pos of
// them).
func (s *Session) Tokens() []int32 {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int32(nil), s.tokens...)
}

// lastLogits returns the logits after the last token held (evaluating that
// token again when a rewind left them stale) and how many tokens it
// evaluated; an error if the session holds none.
func (s *Session) lastLogits(ctx context.Context) ([]float32, int, error) {
	done, err := s.use("Generate")
	if err != nil {
		return nil, 0, err
	}
	defer done()
	if p := s.pending; p >= 0 {
		l, err := s.eval(ctx, []int32{p})
		return l, 1, err
	}
	switch {
	case s.nPast == 0:
		return nil, 0, errors.New("llama: Generate: an empty prompt continues the session, which holds no tokens")
	case s.logitsAt == s.nPast:
		return s.logits, 0, nil
	}
	last := s.tokens[s.nPast-1]
	if err := s.rewind(s.nPast - 1); err != nil {
		return nil, 0, err
	}
	l, err := s.eval(ctx, []int32{last})
	return l, 1, err
}

// setPending records id as chosen by Generate and not evaluated.
func (s *Session) setPending(id int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = id
}

// Memory reports the bytes the session holds: the KV cache (for rwkv6 and
// mamba, the recurrent state, whose size does not depend on the context)
// and the compute buffer (reserved once, for the largest graph), on every
// device together (Devices tells them apart); nothing once closed.
func (s *Session) Memory() (kvCache, compute int) {
	if s == nil {
		return 0, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng == nil {
		return 0, 0
	}
	if s.kv != nil {
		for _, n := range s.kv.bytes() {
			kvCache += n
		}
	}
	return kvCache, s.eng.computeBytes()
}

// Threads is the number of compute threads.
func (s *Session) Threads() int {
	if s == nil {
		return 0
	}
	return s.opts.Threads
}

// ContextSize is the number of positions of the KV cache.
func (s *Session) ContextSize() int {
	if s == nil {
		return 0
	}
	return s.opts.Context
}

// Rewind forgets the tokens from position pos on (0 clears the session).
// A session of a recurrent model (rwkv6, mamba) keeps only the state after
// its last token: it rewinds to 0 or to Pos (nothing to forget), and any
// other position is an error wrapping ErrRecurrentRewind.
func (s *Session) Rewind(pos int) error {
	done, err := s.use("Rewind")
	if err != nil {
		return err
	}
	defer done()
	return s.rewind(pos)
}

func (s *Session) rewind(pos int) error {
	if pos < 0 || pos > s.nPast {
		return fmt.Errorf("llama: Rewind(%d): the session holds %d tokens", pos, s.nPast)
	}
	if s.kv == nil {
		return nil // an encoder holds no tokens
	}
	if s.recurrent && pos != 0 {
		if pos != s.nPast {
			return fmt.Errorf("%w: Rewind(%d) with %d tokens held (the %s state of an earlier position is not kept)", ErrRecurrentRewind, pos, s.nPast, s.m.Arch)
		}
		if s.dirty > s.nPast {
			return fmt.Errorf("llama: Rewind(%d): %w", pos, errStateLost)
		}
		return nil
	}
	if err := s.kv.clear(pos, s.dirty); err != nil {
		return err
	}
	if pos != s.nPast {
		s.logitsAt = -1
	}
	s.pending = -1
	s.nPast, s.dirty = pos, pos
	s.tokens = s.tokens[:pos]
	return nil
}

// Warmup evaluates one token (BOS, or id 0 without one) after what the
// session holds, then forgets it: the session's state is what it was, and
// the one-time costs of a first evaluation (the threads' start, code and
// data not yet in the caches) are paid here rather than by the first
// prompt, so the first prompt's timing is not inflated. llama.cpp's tools
// do the same before timing a prompt. A full session is left as it is.
func (s *Session) Warmup(ctx context.Context) error {
	done, err := s.use("Warmup")
	if err != nil {
		return err
	}
	defer done()
	pos := s.nPast
	if pos >= s.opts.Context {
		return nil
	}
	tok := int32(0)
	if b := s.m.Vocab.BOS; b > 0 && int(b) < s.m.NVocab {
		tok = b
	}
	defer func(p int32) { s.pending = p }(s.pending)
	if s.recurrent && pos > 0 {
		// the state before the token comes back from a copy
		snap, err := s.kv.snapshot()
		if err != nil {
			return err
		}
		// and the logits after it, which no rewind could compute again
		logits, at := append([]float32(nil), s.logits...), s.logitsAt
		_, err = s.eval(ctx, []int32{tok})
		if rerr := s.kv.restore(snap); rerr != nil {
			return rerr
		}
		s.nPast, s.dirty = pos, pos
		s.tokens, s.logits, s.logitsAt = s.tokens[:pos], logits, at
		return err
	}
	if _, err := s.eval(ctx, []int32{tok}); err != nil {
		_ = s.rewind(pos)
		return err
	}
	return s.rewind(pos)
}

// ErrContextFull is returned by Eval when the tokens do not fit in the KV cache.
var ErrContextFull = errors.New("llama: the context is full")

// Eval appends tokens to the session and returns the logits (NVocab
// values) the model gives for the token after the last one. The slice is
// the session's own buffer: it is valid until the next Eval or EvalAll
// (copy it to keep it). Prompts are evaluated in batches of
// SessionOptions.Batch; ctx is checked between them.
func (s *Session) Eval(ctx context.Context, tokens []int32) ([]float32, error) {
	done, err := s.use("Eval")
	if err != nil {
		return nil, err
	}
	defer done()
	return s.eval(ctx, tokens)
}

func (s *Session) eval(ctx context.Context, tokens []int32) ([]float32, error) {
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
	s.logitsAt = s.nPast
	return s.logits, nil
}

// EvalAll is Eval returning the logits after every token: len(tokens)
// rows of NVocab values, in a new slice.
func (s *Session) EvalAll(ctx context.Context, tokens []int32) ([]float32, error) {
	done, err := s.use("EvalAll")
	if err != nil {
		return nil, err
	}
	defer done()
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
	s.logitsAt = s.nPast
	return out, nil
}

// check validates tokens before an evaluation (of a session in use).
func (s *Session) check(tokens []int32) error {
	if s.kv == nil {
		return fmt.Errorf("llama: %s is an encoder: it gives embeddings (Session.Embeddings), not logits to generate with", s.m.Arch)
	}
	if len(tokens) == 0 {
		return errors.New("llama: Eval: no tokens")
	}
	if s.recurrent && s.dirty > s.nPast {
		return errStateLost
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
	s.logitsAt, s.pending = -1, -1
	if err := s.eng.run(ctx, b, tokens); err != nil {
		return err
	}
	s.nPast += len(tokens)
	s.tokens = append(s.tokens[:s.nPast-len(tokens)], tokens...)
	if nOut == 0 {
		return nil
	}
	return b.logits.Float32sInto(out[:nOut*s.m.NVocab])
}

// decodeGraph is the one-token graph at position nPast: the session's,
// moved there, or a new one when nPast is in another kvPad bucket.
func (s *Session) decodeGraph() (*batchGraph, error) {
	if s.recurrent { // one graph serves every position
		if s.dec == nil {
			gctx, err := s.eng.decodeContext()
			if err != nil {
				return nil, err
			}
			s.dec = s.m.build(gctx, s.kv, 1, s.nPast, 1)
		}
		s.dec.nPast = s.nPast
		return s.dec, nil
	}
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

// Close frees the KV cache, the compute memory and the threads; the
// methods that return an error then return ErrClosed. Close is idempotent,
// and called while another goroutine evaluates it waits for that
// evaluation to end.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
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
