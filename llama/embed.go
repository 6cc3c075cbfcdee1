package llama

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Embeddings: a sequence's hidden states after the model's last block
// (after the output norm for decoders: what llama.cpp 1.3.3 returns with
// embeddings on), per token or pooled into one vector.

// Pooling is how the hidden states of a sequence's tokens become one
// vector: llama.cpp's pooling types, with their values (the key
// <arch>.pooling_type of a file).
type Pooling int

const (
	PoolingNone Pooling = 0 // no pooling: one vector per token (Session.TokenEmbeddings)
	PoolingMean Pooling = 1 // the mean of the tokens' vectors
	PoolingCLS  Pooling = 2 // the first token's (BERT's [CLS])
	PoolingLast Pooling = 3 // the last token's
	PoolingRank Pooling = 4 // a classification head (rerankers; not supported)
)

var poolingNames = []string{"none", "mean", "cls", "last", "rank"}

func (p Pooling) String() string {
	if p >= 0 && int(p) < len(poolingNames) {
		return poolingNames[p]
	}
	return "pooling " + strconv.Itoa(int(p))
}

// ParsePooling is the Pooling of a name: none, mean, cls, last or rank.
func ParsePooling(name string) (Pooling, error) {
	for i, n := range poolingNames {
		if n == name {
			return Pooling(i), nil
		}
	}
	return 0, fmt.Errorf("llama: pooling %q: none, mean, cls, last or rank expected", name)
}

// ErrNoPooling is what Embeddings returns (wrapped) for a model whose
// pooling type is none: its output is one vector per token, which
// TokenEmbeddings gives.
var ErrNoPooling = errors.New("the model's pooling type is none: use the per-token output (TokenEmbeddings) or choose a pooling (PooledEmbeddings)")

// Embeddings is the embedding of the sequence tokens as llama.cpp computes
// it for the model's pooling type (Hparams.PoolingType): NEmbd values, not
// normalized (see Normalize). A model without pooling (PoolingNone, as
// every decoder file) gives ErrNoPooling; PooledEmbeddings chooses one.
func (s *Session) Embeddings(ctx context.Context, tokens []int32) ([]float32, error) {
	if s != nil && s.m != nil && s.m.PoolingType == PoolingNone {
		return nil, fmt.Errorf("llama: Embeddings: %w", ErrNoPooling)
	}
	var p Pooling
	if s != nil && s.m != nil {
		p = s.m.PoolingType
	}
	return s.PooledEmbeddings(ctx, tokens, p)
}

// PooledEmbeddings is Embeddings with the pooling p instead of the
// model's (llama.cpp's --pooling): mean, cls or last.
//
// Every call embeds tokens as a sequence of its own, as llama-embedding
// does: an encoder's session holds nothing between calls; a decoder's is
// cleared before and after (Pos is 0 then), and its hidden states are
// those after the output norm.
func (s *Session) PooledEmbeddings(ctx context.Context, tokens []int32, p Pooling) ([]float32, error) {
	if p != PoolingMean && p != PoolingCLS && p != PoolingLast {
		if p == PoolingNone {
			return nil, fmt.Errorf("llama: PooledEmbeddings: %w", ErrNoPooling)
		}
		return nil, fmt.Errorf("llama: PooledEmbeddings: pooling %s is not supported: mean, cls or last", p)
	}
	done, err := s.use("Embeddings")
	if err != nil {
		return nil, err
	}
	defer done()
	rows := len(tokens)
	if p == PoolingLast && s.kv != nil {
		rows = 1 // a decoder computes only the last row
	}
	hid, err := s.hidden(ctx, tokens, rows)
	if err != nil {
		return nil, err
	}
	d := s.m.NEmbd
	switch p {
	case PoolingCLS:
		return hid[:d:d], nil
	case PoolingLast:
		return hid[len(hid)-d:], nil
	}
	// the mean: llama.cpp multiplies by a matrix of 1/n (f32)
	out := make([]float32, d)
	w := 1 / float32(len(tokens))
	for i := range d {
		var sum float32
		for t := range len(tokens) {
			sum += hid[t*d+i] * w
		}
		out[i] = sum
	}
	return out, nil
}

// TokenEmbeddings is the hidden state of every token of the sequence
// tokens (llama.cpp's output with pooling none): len(tokens) rows of NEmbd
// values. A decoder's session is cleared as by PooledEmbeddings.
func (s *Session) TokenEmbeddings(ctx context.Context, tokens []int32) ([][]float32, error) {
	done, err := s.use("TokenEmbeddings")
	if err != nil {
		return nil, err
	}
	defer done()
	hid, err := s.hidden(ctx, tokens, len(tokens))
	if err != nil {
		return nil, err
	}
	d := s.m.NEmbd
	out := make([][]float32, len(tokens))
	for i := range out {
		out[i] = hid[i*d : (i+1)*d : (i+1)*d]
	}
	return out, nil
}

// hidden evaluates tokens as a new sequence and returns the hidden states
// of its last rows tokens ([rows][NEmbd], flat). An encoder evaluates the
// whole sequence in one graph; a decoder's session is cleared first and
// after (its cache holds nothing of it then), and evaluates batches.
func (s *Session) hidden(ctx context.Context, tokens []int32, rows int) (out []float32, err error) {
	defer recoverOp(&err)
	m := s.m
	if len(tokens) == 0 {
		return nil, errors.New("llama: Embeddings: no tokens")
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= m.NVocab {
			return nil, fmt.Errorf("llama: Embeddings: token id %d out of range [0, %d)", t, m.NVocab)
		}
	}
	if len(tokens) > s.opts.Context {
		return nil, fmt.Errorf("%w: %d tokens do not fit in %d", ErrContextFull, len(tokens), s.opts.Context)
	}
	if m.PosEmbd != nil && len(tokens) > m.NCtxTrain {
		return nil, fmt.Errorf("llama: Embeddings: %d tokens: the model has position embeddings for %d", len(tokens), m.NCtxTrain)
	}
	d := m.NEmbd
	out = make([]float32, rows*d)
	if s.kv != nil {
		if err := s.rewind(0); err != nil {
			return nil, err
		}
		defer func() {
			if e := s.rewind(0); err == nil {
				err = e
			}
		}()
	}
	first := len(tokens) - rows // the first row wanted
	for start := 0; start < len(tokens); start += s.opts.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+s.opts.Batch, len(tokens))
		nOut := end - max(start, first)
		if nOut <= 0 {
			nOut = 0
		}
		gctx, err := s.eng.context()
		if err != nil {
			return nil, err
		}
		b := m.build(gctx, s.kv, end-start, s.nPast, max(nOut, 1))
		if b.embd == nil {
			return nil, fmt.Errorf("llama: Embeddings: the %s graph gives no hidden states", m.Arch)
		}
		if s.kv != nil {
			s.dirty = max(s.dirty, s.nPast+end-start)
		}
		if err := s.eng.run(ctx, b, tokens[start:end]); err != nil {
			return nil, err
		}
		if s.kv != nil {
			s.nPast += end - start
		}
		if nOut > 0 {
			at := (end - nOut - first) * d
			if err := b.embd.Float32sInto(out[at : at+nOut*d]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Normalize returns embd scaled as llama.cpp's llama_embd_normalize with
// norm: -1 none, 0 max absolute value to 32760 (the int16 range), 1
// taxicab, 2 euclidean, p > 2 the p-norm. A zero vector stays zero.
func Normalize(embd []float32, norm int) []float32 {
	var sum float64
	switch {
	case norm == -1:
		sum = 1
	case norm == 0:
		for _, v := range embd {
			sum = max(sum, math.Abs(float64(v)))
		}
		sum /= 32760
	case norm == 2:
		for _, v := range embd {
			sum += float64(v) * float64(v)
		}
		sum = math.Sqrt(sum)
	default:
		for _, v := range embd {
			sum += math.Pow(math.Abs(float64(v)), float64(norm))
		}
		sum = math.Pow(sum, 1/float64(norm))
	}
	scale := float32(0)
	if sum > 0 {
		scale = float32(1 / sum)
	}
	out := make([]float32, len(embd))
	for i, v := range embd {
		out[i] = v * scale
	}
	return out
}

// CosineSimilarity is the cosine of the angle between a and b (llama.cpp's
// llama_embd_similarity_cos): 1 for two zero vectors, 0 for one.
func CosineSimilarity(a, b []float32) float64 {
	var sum, sa, sb float64
	for i := range min(len(a), len(b)) {
		sum += float64(a[i]) * float64(b[i])
		sa += float64(a[i]) * float64(a[i])
		sb += float64(b[i]) * float64(b[i])
	}
	if sa == 0 || sb == 0 {
		if sa == 0 && sb == 0 {
			return 1
		}
		return 0
	}
	return sum / (math.Sqrt(sa) * math.Sqrt(sb))
}
