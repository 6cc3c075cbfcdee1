package llama

import (
	"errors"
	"fmt"

	"github.com/ggml-go/ggml"
)

// kvCache holds the keys and values of every layer for nCtx positions:
// K as a row of NEmbdGQA per position, V transposed (a row of nCtx per
// channel), so that attention reads both with plain mul_mat; or, for
// flash attention (flash), V as K, a row per position. The tensors
// live in one backend buffer, or with the model's layers on other devices
// (placement.go) one buffer per device, each layer's on its device.
type kvCache struct {
	ctx   *ggml.Context
	buf   *ggml.Buffer
	k, v  []*ggml.Tensor
	nCtx  int
	typ   ggml.Type
	flash bool
	// the caches of the layers on other devices: one context and buffer
	// each, in the order of the model's devices
	devCtx []*ggml.Context
	devBuf []*ggml.Buffer
}

// newKVCache makes the cache of the layers, V laid out for flash attention
// if flash; the layers of each device in devs go in a buffer of that
// device's backend, the others in a CPU buffer.
func newKVCache(h Hparams, nCtx int, typ ggml.Type, flash bool, devs ...*device) (*kvCache, error) {
	if typ != ggml.TypeF16 && typ != ggml.TypeF32 {
		return nil, fmt.Errorf("llama: KV cache type %s: f16 or f32 expected", typ)
	}
	n := h.NEmbdGQA() * nCtx
	kv, err := newLayerTensors(h.NLayer, n, n, typ, fmt.Sprintf("the KV cache (%d positions)", nCtx), devs)
	if err != nil {
		return nil, err
	}
	kv.nCtx, kv.flash = nCtx, flash
	return kv, nil
}

// newLayerTensors makes, for each of nLayer layers, a K tensor of kn and a
// V tensor of vn elements of type typ, zeroed: the KV cache's, or the
// recurrent state's (recurrent.go); what names them in errors. The layers of each device in devs go
// in a buffer of that device's backend, the others in a CPU buffer. nCtx
// is 1 (the caller sets it otherwise).
func newLayerTensors(nLayer, kn, vn int, typ ggml.Type, what string, devs []*device) (*kvCache, error) {
	newCtx := func() (*ggml.Context, error) {
		return ggml.NewContext(ggml.ContextOptions{MemSize: 2*nLayer*ggml.TensorOverhead() + 1024, NoAlloc: true})
	}
	ctx, err := newCtx()
	if err != nil {
		return nil, err
	}
	kv := &kvCache{ctx: ctx, nCtx: 1, typ: typ}
	for range devs {
		c, err := newCtx()
		if err != nil {
			kv.close()
			return nil, err
		}
		kv.devCtx = append(kv.devCtx, c)
	}
	for il := range nLayer {
		c := ctx
		for i, d := range devs {
			if il >= d.first && il < d.end {
				c = kv.devCtx[i]
			}
		}
		kv.k = append(kv.k, c.NewTensor1D(typ, kn).SetName(fmt.Sprintf("cache_k_l%d", il)))
		kv.v = append(kv.v, c.NewTensor1D(typ, vn).SetName(fmt.Sprintf("cache_v_l%d", il)))
	}
	if kv.buf, err = ctx.AllocTensors(ggml.CPUBufferType()); err != nil && !errors.Is(err, ggml.ErrNothingToAllocate) {
		kv.close()
		return nil, err
	}
	for i, d := range devs {
		b, err := kv.devCtx[i].AllocTensors(d.be)
		if err != nil {
			kv.close()
			return nil, fmt.Errorf("llama: %s of layers %s on %s: %w", what, layerRange(d.first, d.end), d.name, err)
		}
		kv.devBuf = append(kv.devBuf, b)
	}
	if err := kv.clearAll(); err != nil {
		kv.close()
		return nil, err
	}
	return kv, nil
}

// bytes is the size of the cache's buffers: the local one (index 0) and
// each device's.
func (kv *kvCache) bytes() []int {
	out := []int{0}
	if kv.buf != nil {
		out[0] = kv.buf.Size()
	}
	for _, b := range kv.devBuf {
		out = append(out, b.Size())
	}
	return out
}

func (kv *kvCache) close() {
	if kv.buf != nil {
		kv.buf.Close()
	}
	for _, b := range kv.devBuf {
		b.Close()
	}
	for _, c := range kv.devCtx {
		c.Close()
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
		return kv.clearAll()
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

// clearAll zeroes every layer's tensors.
func (kv *kvCache) clearAll() error {
	for _, b := range append([]*ggml.Buffer{kv.buf}, kv.devBuf...) {
		if b == nil {
			continue
		}
		if err := b.Clear(0); err != nil {
			return err
		}
	}
	return nil
}

// rows are views of positions [pos, pos+n) of layer il's K (a row of
// NEmbdGQA per position) and V (transposed: n elements of each channel's
// row; for flash attention as K).
func (kv *kvCache) rows(ctx *ggml.Context, il, pos, n int) (k, v *ggml.Tensor) {
	es, gqa := kv.k[il].ElementSize(), kv.k[il].NElements()/kv.nCtx
	k = ctx.View1D(kv.k[il], n*gqa, es*gqa*pos)
	if kv.flash {
		return k, ctx.View1D(kv.v[il], n*gqa, kv.vStoreBytes()*pos)
	}
	return k, ctx.View2D(kv.v[il], n, gqa, es*kv.nCtx, kv.vStoreBytes()*pos)
}

// vStoreBytes is how far V's rows views (and so a one-token V store) move
// per position.
func (kv *kvCache) vStoreBytes() int {
	es := kv.k[0].ElementSize()
	if kv.flash {
		return es * (kv.k[0].NElements() / kv.nCtx)
	}
	return es
}
