package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// kvCache holds the keys and values of every layer for nCtx positions:
// K as a row of NEmbdGQA per position, V transposed (a row of nCtx per
// channel), so that attention reads both with plain mul_mat.
type kvCache struct {
	ctx  *ggml.Context
	k, v []*ggml.Tensor
	nCtx int
	typ  ggml.Type
}

func newKVCache(h Hparams, nCtx int, typ ggml.Type) (*kvCache, error) {
	if typ != ggml.TypeF16 && typ != ggml.TypeF32 {
		return nil, fmt.Errorf("llama: KV cache type %s: f16 or f32 expected", typ)
	}
	n := h.NEmbdGQA() * nCtx
	size := 2 * h.NLayer * (ggml.TensorOverhead() + n*typ.Size() + 64)
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: size + 1024})
	if err != nil {
		return nil, err
	}
	kv := &kvCache{ctx: ctx, nCtx: nCtx, typ: typ}
	for il := range h.NLayer {
		kv.k = append(kv.k, ctx.NewTensor1D(typ, n).SetName(fmt.Sprintf("cache_k_l%d", il)).Zero())
		kv.v = append(kv.v, ctx.NewTensor1D(typ, n).SetName(fmt.Sprintf("cache_v_l%d", il)).Zero())
	}
	return kv, nil
}

func (kv *kvCache) close() { kv.ctx.Close() }
