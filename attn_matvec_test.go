package ggml

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// fma32 is a*b+c rounded once to float32, as the FMA instruction and C's
// fmaf give it. float32(math.FMA(...)) would round twice (to float64, then
// to float32); instead the float64 sum is rounded to odd, after which the
// rounding to float32 is exact.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b) // exact: 48 significant bits
	s := p + float64(c)
	bb := s - p
	e := (p - (s - bb)) + (float64(c) - bb) // the part of p+c that s lost
	if e != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return float32(s)
}

// dotLevelRef is one (row, column) pair of the float mat-vec kernels of a
// level, in that kernel's order; ok is false where the order is not modelled
// here (AVX-512, NEON, and the scalar kernel where C may contract).
func dotLevelRef(l CPULevel, x, y []float32) (s float32, ok bool) {
	K := len(x)
	switch {
	case l == LevelAVX2:
		// one 8-lane FMA accumulator over K in steps of 8, hsum8's pairing,
		// then the tail with fmaf
		var a [8]float32
		K8 := K &^ 7
		for k := 0; k < K8; k += 8 {
			for j := range a {
				a[j] = fma32(x[k+j], y[k+j], a[j])
			}
		}
		s = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
		for k := K8; k < K; k++ {
			s = fma32(x[k], y[k], s)
		}
		return s, true
	case l == LevelScalar && runtime.GOARCH == "amd64":
		// four partial sums of separately rounded products (no FMA in the
		// x86-64 baseline), the tail into the first
		var a [4]float32
		k := 0
		for ; k+4 <= K; k += 4 {
			for j := range a {
				a[j] += float32(x[k+j] * y[k+j])
			}
		}
		for ; k < K; k++ {
			a[0] += float32(x[k] * y[k])
		}
		return (a[0] + a[1]) + (a[2] + a[3]), true
	}
	return 0, false
}

// attnCase is one decode step's attention mat-vecs over a KV cache laid out
// as llama_run.c's: K one row of nHeadKV*hd per position, V transposed (one
// row of nCtx positions per channel).
type attnCase struct {
	typ              Type // of the cache: f16 or f32
	hd, nkv, nHeadKV int
	nHead, nCtx      int
	k, v             []float32 // the cache's values (f16-representable for f16)
	q, p             []float32 // [nHead][hd] and [nHead][nkv]
	kBytes, vBytes   []byte
}

func newAttnCase(r *rand.Rand, typ Type, hd, nkv, nHeadKV, nHead int) *attnCase {
	c := &attnCase{typ: typ, hd: hd, nkv: nkv, nHeadKV: nHeadKV, nHead: nHead, nCtx: nkv + 3}
	n := nHeadKV * hd * c.nCtx
	gen := func(n int) ([]float32, []byte) {
		v := make([]float32, n)
		b := make([]byte, n*typ.Size())
		for i := range v {
			f := float32(r.NormFloat64())
			if typ == TypeF16 {
				h := FP32ToFP16(f)
				binary.LittleEndian.PutUint16(b[2*i:], h)
				f = FP16ToFP32(h)
			} else {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
			}
			v[i] = f
		}
		return v, b
	}
	c.k, c.kBytes = gen(n)
	c.v, c.vBytes = gen(n)
	c.q = make([]float32, nHead*hd)
	for i := range c.q {
		c.q[i] = float32(r.NormFloat64())
	}
	c.p = make([]float32, nHead*nkv)
	for i := range c.p {
		c.p[i] = r.Float32()
	}
	return c
}

// want computes the level's results in its order (ok false: not modelled).
func (c *attnCase) want(l CPULevel) (kq, kqv []float32, ok bool) {
	gqa := c.nHeadKV * c.hd
	kq = make([]float32, c.nHead*c.nkv)
	kqv = make([]float32, c.nHead*c.hd)
	for h := 0; h < c.nHead; h++ {
		kvh := h / (c.nHead / c.nHeadKV) // broadcast: consecutive heads share a KV head
		for i := 0; i < c.nkv; i++ {
			row := c.k[i*gqa+kvh*c.hd:][:c.hd]
			if kq[h*c.nkv+i], ok = dotLevelRef(l, row, c.q[h*c.hd:][:c.hd]); !ok {
				return nil, nil, false
			}
		}
		for ch := 0; ch < c.hd; ch++ {
			row := c.v[(kvh*c.hd+ch)*c.nCtx:][:c.nkv]
			kqv[h*c.hd+ch], _ = dotLevelRef(l, row, c.p[h*c.nkv:][:c.nkv])
		}
	}
	return kq, kqv, true
}

// compute builds kq = K view x q and kqv = V view x p as llama's decode
// graph does (strided cache views, permuted q) and computes them.
func (c *attnCase) compute(t *testing.T, threads int) (kq, kqv []float32) {
	es := c.typ.Size()
	gqa := c.nHeadKV * c.hd
	ctx := newCtx(t, 2*len(c.kBytes)+4*(len(c.q)+len(c.p))*3+1<<20)
	defer ctx.Close()
	kc := ctx.NewTensor1D(c.typ, gqa*c.nCtx)
	require.NoError(t, kc.SetBytes(c.kBytes))
	vc := ctx.NewTensor1D(c.typ, gqa*c.nCtx)
	require.NoError(t, vc.SetBytes(c.vBytes))
	q := ctx.NewTensor3D(TypeF32, c.hd, c.nHead, 1)
	require.NoError(t, q.SetFloat32s(c.q))
	p := ctx.NewTensor3D(TypeF32, c.nkv, 1, c.nHead)
	require.NoError(t, p.SetFloat32s(c.p))
	kv := ctx.View3D(kc, c.hd, c.nkv, c.nHeadKV, es*gqa, es*c.hd, 0)
	vv := ctx.View3D(vc, c.nkv, c.hd, c.nHeadKV, es*c.nCtx, es*c.nCtx*c.hd, 0)
	kqT := ctx.MulMat(kv, ctx.Permute(q, 0, 2, 1, 3))
	kqvT := ctx.MulMat(vv, p)
	g := ctx.NewGraph().BuildForward(kqT)
	g.BuildForward(kqvT)
	require.NoError(t, g.Compute(threads))
	var err error
	kq, err = kqT.Float32s()
	require.NoError(t, err)
	kqv, err = kqvT.Float32s()
	require.NoError(t, err)
	return kq, kqv
}

// The attention mat-vecs of one-token decoding (short strided rows of an f16
// or f32 cache, heads broadcast over KV heads) give, at each level, the bits
// of that level's kernel order: one accumulator per lane over K, the fixed
// pairing of the lane sums, then the tail. Every head size 1..130 and every
// cache length 1..300 (all tails and group remainders), 1 and 3 threads.
func TestAttnMatVecBits(t *testing.T) {
	type shape struct{ hd, nkv int }
	var shapes []shape
	for hd := 1; hd <= 130; hd++ {
		shapes = append(shapes, shape{hd, []int{1, 9, 64, 300, 77, 16}[hd%6]})
	}
	for nkv := 1; nkv <= 300; nkv++ {
		shapes = append(shapes, shape{[]int{64, 13, 128, 8}[nkv%4], nkv})
	}
	forEachLevel(t, func(t *testing.T) {
		l := CurrentCPULevel()
		rng := rand.New(rand.NewPCG(11, 12))
		modelled := 0
		for i, s := range shapes {
			nHeadKV := 1 + i%6
			nHead := nHeadKV * (1 + i%2) // every other case broadcasts
			typ := []Type{TypeF16, TypeF32}[(i/2)%2]
			c := newAttnCase(rng, typ, s.hd, s.nkv, nHeadKV, nHead)
			wantKQ, wantKQV, ok := c.want(l)
			var first []float32
			for _, th := range []int{1, 3} {
				kq, kqv := c.compute(t, th)
				if ok {
					for j := range wantKQ {
						require.Equal(t, math.Float32bits(wantKQ[j]), math.Float32bits(kq[j]),
							"kq %v hd=%d nkv=%d heads=%d/%d threads=%d: element %d", typ, s.hd, s.nkv, nHead, nHeadKV, th, j)
					}
					for j := range wantKQV {
						require.Equal(t, math.Float32bits(wantKQV[j]), math.Float32bits(kqv[j]),
							"kqv %v hd=%d nkv=%d heads=%d/%d threads=%d: element %d", typ, s.hd, s.nkv, nHead, nHeadKV, th, j)
					}
				}
				all := append(kq, kqv...)
				if first == nil {
					first = all
					continue
				}
				for j := range first {
					require.Equal(t, math.Float32bits(first[j]), math.Float32bits(all[j]), "threads 1 vs %d, %v hd=%d nkv=%d", th, typ, s.hd, s.nkv)
				}
			}
			if ok {
				modelled++
			}
		}
		if modelled == 0 {
			t.Logf("level %v: its kernel order is not modelled here; 1 and 3 threads compared only", l)
		}
	})
}

// One layer's attention in one-token decoding over an f16 cache laid out as
// llama_run.c's (hd 64, 12 heads, a context of 1056): kq = K view x q,
// softmax, kqv = V view x kq. Cache lengths that are and are not multiples
// of 8 (the mat-vec tails). One layer's cache is read again and again here
// (in caches); in a model's decoding every layer's comes from L3 or memory.
func BenchmarkAttnDecode(b *testing.B) {
	const hd, nHead, nCtx = 64, 12, 1056
	for _, nkv := range []int{64, 256, 259, 1024, 1021} {
		b.Run("f16/nkv"+itoa(nkv), func(b *testing.B) {
			benchGraph(b, 1, func(ctx *Context, r *rand.Rand) (*Tensor, int64) {
				gqa := hd * nHead
				kc := randTensor(b, ctx, r, TypeF16, gqa*nCtx)
				vc := randTensor(b, ctx, r, TypeF16, gqa*nCtx)
				q := randTensor(b, ctx, r, TypeF32, hd, nHead, 1)
				mask := ctx.NewTensor2D(TypeF32, nkv, 1)
				require.NoError(b, mask.SetFloat32s(make([]float32, nkv)))
				k := ctx.View3D(kc, hd, nkv, nHead, 2*gqa, 2*hd, 0)
				v := ctx.View3D(vc, nkv, hd, nHead, 2*nCtx, 2*nCtx*hd, 0)
				kq := ctx.SoftMaxExt(ctx.MulMat(k, ctx.Permute(q, 0, 2, 1, 3)), mask, 0.125, 0)
				return ctx.MulMat(v, kq), int64(4 * hd * nkv * nHead)
			})
		})
	}
}
