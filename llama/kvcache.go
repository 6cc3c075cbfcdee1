package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// kvCache holds the keys and values of every layer for nCtx positions:
// K as a row of NEmbdGQA per position, V transposed (a row of nCtx per
// channel), so that attention reads both with plain mul_mat. The tensors
// live in one backend buffer.
type kvCache struct {
	ctx  *ggml.Context
	buf  *ggml.Buffer
	k, v []*ggml.Tensor
	nCtx int
	typ  ggml.Type
}

func newKVCache(h Hparams, nCtx int, typ ggml.Type) (*kvCache, error) {
	if typ != ggml.TypeF16 && typ != ggml.TypeF32 {
		return nil, fmt.Errorf("llama: KV cache type %s: f16 or f32 expected", typ)
	}
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 2*h.NLayer*ggml.TensorOverhead() + 1024, NoAlloc: true})
	if err != nil {
		return nil, err
	}
	kv := &kvCache{ctx: ctx, nCtx: nCtx, typ: typ}
	n := h.NEmbdGQA() * nCtx
	for il := range h.NLayer {
		kv.k = append(kv.k, ctx.NewTensor1D(typ, n).SetName(fmt.Sprintf("cache_k_l%d", il)))
		kv.v = append(kv.v, ctx.NewTensor1D(typ, n).SetName(fmt.Sprintf("cache_v_l%d", il)))
	}
	if kv.buf, err = ctx.AllocTensors(ggml.CPUBufferType()); err != nil {
		ctx.Close()
		return nil, err
	}
	if err := kv.buf.Clear(0); err != nil {
		kv.close()
		return nil, err
	}
	return kv, nil
}

func (kv *kvCache) close() {
	if kv.buf != nil {
		kv.buf.Close()
	}
	kv.ctx.Close()
}
