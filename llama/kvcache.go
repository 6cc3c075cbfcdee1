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

// clear zeroes positions [from, to) of every layer's K and V. The
// one-token graphs read the cache past the token (masked: weights of
// exactly 0), so what lies there must be finite: zeros, as the cache
// starts, not what an earlier sequence left (0 * Inf would be NaN).
func (kv *kvCache) clear(from, to int) (err error) {
	if from >= to {
		return nil
	}
	if from == 0 && to >= kv.nCtx {
		return kv.buf.Clear(0)
	}
	defer recoverOp(&err)
	n := len(kv.k)
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 2*n*ggml.TensorOverhead() + 1024, NoAlloc: true})
	if err != nil {
		return err
	}
	defer ctx.Close()
	zeros := make([]byte, kv.k[0].NBytes()/kv.nCtx*(to-from))
	for il := range n {
		k, v := kv.rows(ctx, il, from, to-from)
		if err := k.SetBytes(zeros); err != nil {
			return err
		}
		if err := v.SetBytes(zeros); err != nil {
			return err
		}
	}
	return nil
}

// rows are views of positions [pos, pos+n) of layer il's K (a row of
// NEmbdGQA per position) and V (transposed: n elements of each channel's row).
func (kv *kvCache) rows(ctx *ggml.Context, il, pos, n int) (k, v *ggml.Tensor) {
	es, gqa := kv.k[il].ElementSize(), kv.k[il].NElements()/kv.nCtx
	return ctx.View1D(kv.k[il], n*gqa, es*gqa*pos), ctx.View2D(kv.v[il], n, gqa, es*kv.nCtx, es*pos)
}
