package llama

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/link"
)

// DecodeMatrices returns the weight matrices a one-token evaluation reads,
// in the order it reads them: per layer the Q/K/V projections (one fused
// matrix, or three), the attention output, the gate and up projections (one
// or two) and the down projection; then the vocabulary projection. The
// token embedding (one row per token) and the norms are left out.
func (m *Model) DecodeMatrices() []*ggml.Tensor {
	done, err := m.use("DecodeMatrices")
	if err != nil {
		return nil
	}
	defer done()
	return m.decodeMatrices()
}

func (m *Model) decodeMatrices() []*ggml.Tensor {
	var ts []*ggml.Tensor
	for il := range m.Layers {
		ts = append(ts, m.layerMatrices(il)...)
	}
	return append(ts, m.Output)
}

// layerMatrices are the matrices of layer il in the order a token reads
// them (the architecture's list), a fused matrix once in the place of its
// first part.
func (m *Model) layerMatrices(il int) []*ggml.Tensor {
	var ts []*ggml.Tensor
	L := &m.Layers[il]
	p := "blk." + strconv.Itoa(il) + "."
	inFused := map[string]bool{}
	for _, g := range fuseGroups {
		if f := m.fused[p+g.name]; f != nil && g.role == roleMatrix {
			for _, part := range g.parts[1:] {
				inFused[part] = true
			}
		}
	}
	for _, s := range m.arch.tensors {
		if !s.layer || s.role != roleMatrix || inFused[s.name] {
			continue
		}
		t := *s.bind(m, L)
		for _, g := range fuseGroups {
			if f := m.fused[p+g.name]; f != nil && g.parts[0] == s.name {
				t = f
			}
		}
		if t != nil {
			ts = append(ts, t)
		}
	}
	return ts
}

// StreamCeiling times reading the bytes of DecodeMatrices once, in order,
// with plain loads and no arithmetic, rounds times on threads threads (which
// split each matrix and wait for each other after it, as a graph's threads
// do): the time a memory-bound one-token evaluation cannot beat on this
// machine. It returns the time of each round and the bytes a round reads.
func (m *Model) StreamCeiling(threads, rounds int) ([]time.Duration, int64, error) {
	done, err := m.use("StreamCeiling")
	if err != nil {
		return nil, 0, err
	}
	defer done()
	return link.StreamProbe(m.decodeProbeArgs(), threads, rounds)
}

// decodeProbeArgs is decodeMatrices as link.StreamProbe takes them.
func (m *Model) decodeProbeArgs() []any {
	ts := m.decodeMatrices()
	as := make([]any, len(ts))
	for i, t := range ts {
		as[i] = t
	}
	return as
}

// CeilingPair is one token's evaluation timed between two plain reads of
// the weights it reads (see Session.PairedCeiling).
type CeilingPair struct {
	Before, Token, After time.Duration
}

// Share is how close the token came to the speed of plain loads: the mean
// of the two reads' times over the token's time (1 is the ceiling).
func (p CeilingPair) Share() float64 {
	if p.Token <= 0 {
		return 0
	}
	return (p.Before + p.After).Seconds() / 2 / p.Token.Seconds()
}

// PairedCeiling evaluates token n times, one position at a time from the
// session's position on, each evaluation between two timed plain reads of
// DecodeMatrices on the session's threads (n+1 reads in all), and then
// forgets those tokens: the session holds what it held before. A token and
// the reads either side of it run moments apart and so see the same memory
// speed, which a ceiling timed after a whole generation (StreamCeiling)
// does not on a host whose memory speed drifts. It also returns the bytes a
// read reads. The n positions must be free; the weights must be in this
// process's memory.
func (s *Session) PairedCeiling(ctx context.Context, token int32, n int) (pairs []CeilingPair, bytes int64, err error) {
	done, err := s.use("PairedCeiling")
	if err != nil {
		return nil, 0, err
	}
	defer done()
	if n < 1 {
		return nil, 0, fmt.Errorf("llama: PairedCeiling: %d tokens: want at least 1", n)
	}
	if free := s.opts.Context - s.nPast; n > free {
		return nil, 0, fmt.Errorf("llama: PairedCeiling: %d tokens but %d free positions: %w", n, free, ErrContextFull)
	}
	if err := s.check([]int32{token}); err != nil {
		return nil, 0, err
	}
	as := s.m.decodeProbeArgs()
	read := func() (time.Duration, error) {
		ts, b, err := link.StreamProbe(as, s.opts.Threads, 1)
		bytes = b
		if err != nil {
			return 0, err
		}
		return ts[0], nil
	}
	pos := s.nPast
	defer func() {
		if rerr := s.rewind(pos); err == nil {
			err = rerr
		}
	}()
	before, err := read()
	if err != nil {
		return nil, 0, err
	}
	pairs = make([]CeilingPair, 0, n)
	for range n {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		t0 := time.Now()
		if _, err := s.eval(ctx, []int32{token}); err != nil {
			return nil, 0, err
		}
		tok := time.Since(t0)
		after, err := read()
		if err != nil {
			return nil, 0, err
		}
		pairs = append(pairs, CeilingPair{Before: before, Token: tok, After: after})
		before = after
	}
	return pairs, bytes, nil
}
