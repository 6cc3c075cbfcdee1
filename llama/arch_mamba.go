package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// mamba: Mamba (v1) as llama.cpp 1.3.3 loads and builds LLM_ARCH_MAMBA.
// No attention: per layer an RMS norm and a selective state-space block
// (the in-projection to x and the gate z; a causal depthwise convolution
// of x over ssm.conv_kernel positions, its bias, SiLU; the projection of x
// to the time step, B and C, RMS-normed with ssm.dt_b_c_rms (FalconMamba);
// the time step's projection and bias; the selective scan; the D skip;
// the SiLU gate; the out-projection), added to the residual. The session
// keeps per layer the convolution's last inputs and the scan's state
// (recurrent.go).
func init() {
	registerArch(&architecture{
		name: "mamba",
		hparams: recurrentHparams(
			hparamKey{key: "ssm.conv_kernel", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.SSMConvKernel })},
			hparamKey{key: "ssm.inner_size", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.SSMInnerSize })},
			hparamKey{key: "ssm.state_size", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.SSMStateSize })},
			hparamKey{key: "ssm.time_step_rank", required: true, min: 1, field: hpInt(func(h *Hparams) *int { return &h.SSMTimeStepRank })},
			hparamKey{key: "ssm.dt_b_c_rms", field: hpBool(func(h *Hparams) *bool { return &h.SSMDtBCRMS })},
			keyRMSEps,
		),
		check: func(h *Hparams) error {
			if h.SSMInnerSize != 2*h.NEmbd { // as llama.cpp 1.3.3's loader
				return fmt.Errorf("mamba: ssm.inner_size %d is not twice the embedding length %d: only an expansion factor of 2 is supported", h.SSMInnerSize, h.NEmbd)
			}
			return nil
		},
		tensors: []tensorSpec{
			tTokEmbd,
			tAttnNorm,
			ssm("ssm_in.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.NEmbd, 2 * h.SSMInnerSize} }), func(S *SSMLayer) **ggml.Tensor { return &S.In }),
			ssm("ssm_conv1d.weight", roleParam, shape(func(h *Hparams) []int { return []int{h.SSMConvKernel, h.SSMInnerSize} }), func(S *SSMLayer) **ggml.Tensor { return &S.Conv }),
			ssm("ssm_conv1d.bias", roleBias, inner, func(S *SSMLayer) **ggml.Tensor { return &S.ConvB }),
			ssm("ssm_x.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.SSMInnerSize, h.SSMTimeStepRank + 2*h.SSMStateSize} }), func(S *SSMLayer) **ggml.Tensor { return &S.X }),
			ssm("ssm_dt.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.SSMTimeStepRank, h.SSMInnerSize} }), func(S *SSMLayer) **ggml.Tensor { return &S.Dt }),
			ssm("ssm_dt.bias", roleBias, inner, func(S *SSMLayer) **ggml.Tensor { return &S.DtB }),
			ssm("ssm_a", roleParam, shape(func(h *Hparams) []int { return []int{h.SSMStateSize, h.SSMInnerSize} }), func(S *SSMLayer) **ggml.Tensor { return &S.A }),
			ssm("ssm_d", roleParam, inner, func(S *SSMLayer) **ggml.Tensor { return &S.D }),
			ssm("ssm_out.weight", roleMatrix, shape(func(h *Hparams) []int { return []int{h.SSMInnerSize, h.NEmbd} }), func(S *SSMLayer) **ggml.Tensor { return &S.Out }),
			tOutNorm, tOutput,
		},
		state: stateRecurrent,
		graph: mambaGraph{},
	})
}

// SSMLayer holds the weights of a mamba layer other than its norm
// (Layer.AttnNorm); nil in other architectures.
type SSMLayer struct {
	In          *ggml.Tensor // [E, 2 inner]: x, then the gate z
	Conv, ConvB *ggml.Tensor // the depthwise convolution [kernel, inner] and its bias
	X           *ggml.Tensor // [inner, rank + 2 state]: the time step's input, B, C
	Dt, DtB     *ggml.Tensor // the time step [rank, inner] and its bias
	A           *ggml.Tensor // [state, inner]
	D           *ggml.Tensor // the skip [inner]
	Out         *ggml.Tensor // [inner, E]
}

var inner = shape(func(h *Hparams) []int { return []int{h.SSMInnerSize} })

func ssm(name string, role tensorRole, sh func(h *Hparams) []int, field func(S *SSMLayer) **ggml.Tensor) tensorSpec {
	return perLayer(name, role, sh, func(L *Layer) **ggml.Tensor { return field(&L.SSM) })
}

// mambaGraph builds mamba's graph (llama.cpp's build_mamba).
type mambaGraph struct{}

func (mambaGraph) swaLayers(*Hparams) bool { return false }
func (mambaGraph) nodesPerLayer() int      { return 48 }

// stateSizes: the convolution's last kernel-1 inputs of each inner
// channel, the scan's state (state size x inner).
func (mambaGraph) stateSizes(h *Hparams) (k, v int) {
	return (h.SSMConvKernel - 1) * h.SSMInnerSize, h.SSMStateSize * h.SSMInnerSize
}

func (mambaGraph) build(m *Model, ctx *ggml.Context, kv *kvCache, b *batchGraph) {
	h := &m.Hparams
	rms := &decoder{norm: normRMS}
	x := ctx.GetRows(m.TokEmbd, b.tokens)
	for il := range m.Layers {
		L := &m.Layers[il]
		cur := rms.normed(ctx, h, x, L.AttnNorm, nil)
		x = ctx.Add(mambaBlock(ctx, h, &L.SSM, cur, kv.k[il], kv.v[il], b), x)
	}
	if b.nOut < b.n {
		x = lastRows(ctx, x, b.nOut)
	}
	x = rms.normed(ctx, h, x, m.OutNorm, nil)
	b.logits = ctx.MulMat(m.Output, x).SetName("logits").SetOutput()
}

// mambaBlock is the state-space block of the normed input cur [E, n]; it
// reads the layer's convolution and scan states and stores the new ones.
func mambaBlock(ctx *ggml.Context, h *Hparams, S *SSMLayer, cur, convState, scanState *ggml.Tensor, b *batchGraph) *ggml.Tensor {
	n, kc, in, st, rank := b.n, h.SSMConvKernel, h.SSMInnerSize, h.SSMStateSize, h.SSMTimeStepRank
	const f = 4
	xz := ctx.MulMat(S.In, cur) // [2 inner, n]
	x := ctx.View2D(xz, in, n, 2*in*f, 0)
	z := ctx.View2D(xz, in, n, 2*in*f, in*f)

	// the convolution over the kernel-1 previous inputs and these
	conv := ctx.Reshape2D(convState, kc-1, in)
	convX := ctx.Concat(conv, ctx.Transpose(x), 0) // [kernel-1 + n, inner]
	last := ctx.View2D(convX, kc-1, in, convX.Nb()[1], n*f)
	b.g.BuildForward(ctx.Cpy(last, ctx.View1D(convState, (kc-1)*in, 0)))
	x = ctx.Silu(ctx.Add(ctx.SSMConv(convX, S.Conv), S.ConvB)) // [inner, n]

	// the selective scan
	xdb := ctx.MulMat(S.X, x) // [rank + 2 state, n]
	row := (rank + 2*st) * f
	dt := ctx.View2D(xdb, rank, n, row, 0)
	bb := ctx.View2D(xdb, st, n, row, rank*f)
	cc := ctx.View2D(xdb, st, n, row, (rank+st)*f)
	if h.SSMDtBCRMS {
		dt, bb, cc = ctx.RMSNorm(dt, h.RMSEps), ctx.RMSNorm(bb, h.RMSEps), ctx.RMSNorm(cc, h.RMSEps)
	}
	dt = ctx.Add(ctx.MulMat(S.Dt, dt), S.DtB)                               // [inner, n]
	ys := ctx.SSMScan(ctx.Reshape2D(scanState, st, in), x, dt, S.A, bb, cc) // y, then the new state
	b.g.BuildForward(ctx.Cpy(ctx.View1D(ys, st*in, in*n*f), ctx.View1D(scanState, st*in, 0)))
	y := ctx.View2D(ys, in, n, in*f, 0)

	y = ctx.Add(y, ctx.Mul(x, S.D))
	y = ctx.Mul(y, ctx.Silu(ctx.Cont(z)))
	return ctx.MulMat(S.Out, y)
}
