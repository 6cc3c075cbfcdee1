package llama

import (
	"errors"
	"fmt"

	"github.com/ggml-go/ggml"
)

// The recurrent state of rwkv6 and mamba sessions. Instead of a KV cache
// growing with the context, a session of a recurrent architecture keeps,
// per layer, two f32 tensors of fixed size (llama.cpp 1.3.3 keeps them in
// its KV cache's k_l and v_l, one cell per sequence): rwkv6 the token
// shift (the previous token's two normed inputs) and the WKV state of its
// heads; mamba the convolution's last inputs and the selective scan's
// state. They are held in a kvCache of one cell (nCtx 1), so that the
// placement of layers on other devices puts each layer's state with its
// weights. Every graph reads the state its layer left and writes it back
// after its last token; the positions (Session.Pos) only count the tokens,
// bounded by SessionOptions.Context as for the other architectures.
//
// Rewind: the state of an earlier position is gone once a later token is
// evaluated, so a session rewinds only to 0 (a new sequence) or to its
// own position; any other position is ErrRecurrentRewind.

// recurrentGraph is the graph builder of a stateRecurrent architecture.
type recurrentGraph interface {
	graphBuilder
	// stateSizes are the f32 elements of a layer's two state tensors.
	stateSizes(h *Hparams) (k, v int)
}

// ErrRecurrentRewind is what Session.Rewind returns (wrapped) for a
// position other than 0 and the session's own on a model with a recurrent
// state (rwkv6, mamba), which keeps no earlier state to go back to.
var ErrRecurrentRewind = errors.New("llama: a recurrent model's session rewinds only to 0 or to its position")

// errStateLost is the error of evaluating a recurrent session whose last
// evaluation failed part-way (some layers' state may have moved on).
var errStateLost = errors.New("llama: the recurrent state is lost: an evaluation failed part-way; Rewind(0) starts again")

// newStateCache makes the recurrent state of m's layers (each layer's on
// the device holding its weights), zeroed.
func newStateCache(m *Model) (*kvCache, error) {
	g, ok := m.arch.graph.(recurrentGraph)
	if !ok {
		return nil, fmt.Errorf("llama: internal error: architecture %s keeps a recurrent state but its graph does not say its size", m.Arch)
	}
	k, v := g.stateSizes(&m.Hparams)
	return newLayerTensors(m.NLayer, k, v, ggml.TypeF32, "the recurrent state", m.devs)
}

// snapshot copies every layer's state (for Warmup).
func (kv *kvCache) snapshot() (_ [][]byte, err error) {
	defer recoverOp(&err)
	var out [][]byte
	for il := range kv.k {
		out = append(out, kv.k[il].Bytes(), kv.v[il].Bytes())
	}
	return out, nil
}

// restore writes back a snapshot.
func (kv *kvCache) restore(snap [][]byte) (err error) {
	defer recoverOp(&err)
	for il := range kv.k {
		if err := kv.k[il].SetBytes(snap[2*il]); err != nil {
			return err
		}
		if err := kv.v[il].SetBytes(snap[2*il+1]); err != nil {
			return err
		}
	}
	return nil
}

// recurrentHparams are the keys llama.cpp 1.3.3 reads for every
// architecture before its own (those of the attention are not read when
// attention.head_count is 0, as in these files), followed by keys.
func recurrentHparams(keys ...hparamKey) []hparamKey {
	return append([]hparamKey{
		{key: "context_length", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.NCtxTrain })},
		{key: "embedding_length", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.NEmbd })},
		{key: "block_count", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.NLayer })},
		{key: "feed_forward_length", required: true, field: hpInt(func(h *Hparams) *int { return &h.NFF })},
		{key: "attention.head_count", required: true, field: hpInt(func(h *Hparams) *int { return &h.NHead })},
	}, keys...)
}

// tokenShift is the previous token's value for each of the n tokens of x
// [E, n]: the state prev [E] for the first, x's columns for the others
// (rwkv6's token shift).
func tokenShift(ctx *ggml.Context, prev, x *ggml.Tensor, n int) *ggml.Tensor {
	e := x.Ne()[0]
	prev = ctx.Reshape2D(prev, e, 1)
	if n == 1 {
		return prev
	}
	return ctx.Concat(prev, ctx.View2D(x, e, n-1, x.Nb()[1], 0), 1)
}

// Recurrent reports whether the model's sessions keep a fixed-size
// recurrent state (rwkv6, mamba) rather than a KV cache: Session.Memory's
// first value is then that state, and Rewind goes only to 0.
func (m *Model) Recurrent() bool { return m != nil && m.arch != nil && m.arch.state == stateRecurrent }
