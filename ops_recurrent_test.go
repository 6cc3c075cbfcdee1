package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The recurrent models' ops (RWKVWKV6, SSMScan, SSMConv, GroupNorm) with 1
// thread up to twice as many threads as heads (groups, rows) and more
// threads than the op has units of work: each thread count finishes (a hang
// fails after a deadline instead of blocking), gives one thread's bits, and
// one thread matches a double-precision reference; at every SIMD level.
// llama.cpp 1.3.3's WKV6 kernel hangs with more threads than heads.

// recurrentCase builds an op's node in ctx and the reference of all its
// result's elements in order.
type recurrentCase struct {
	name  string
	heads int // thread counts go from 1 to 2*heads, then to units+1
	units int
	tol   float64 // nmse against the reference
	build func(ctx *Context, r *rand.Rand) (*Tensor, []float64)
}

// a hang detector, not a speed limit: the largest case takes milliseconds
const recurrentDeadline = 2 * time.Minute

func recurrentTensor(ctx *Context, r *rand.Rand, lo, hi float32, ne ...int) (*Tensor, []float32) {
	x := ctx.NewTensor(TypeF32, ne...)
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float32()
	}
	if err := x.SetFloat32s(v); err != nil {
		panic(err)
	}
	return x, v
}

func runRecurrentCase(t *testing.T, c recurrentCase) {
	threads := []int{}
	for n := 1; n <= 2*c.heads; n++ {
		threads = append(threads, n)
	}
	if c.units+1 > 2*c.heads {
		threads = append(threads, c.units+1)
	}
	for _, l := range SupportedCPULevels() {
		t.Run(c.name+"/"+l.String(), func(t *testing.T) {
			require.NoError(t, ForceCPULevel(l))
			defer ResetCPULevel()
			ctx, err := NewContext(ContextOptions{MemSize: 16 << 20})
			require.NoError(t, err)
			out, ref := c.build(ctx, rand.New(rand.NewPCG(7, 11)))
			g := ctx.NewGraph().BuildForward(out)
			var first []float32
			for _, n := range threads {
				done := make(chan error, 1)
				go func() { done <- g.Compute(n) }()
				select {
				case err := <-done:
					require.NoError(t, err, "%d threads", n)
				case <-time.After(recurrentDeadline):
					// the computation still holds ctx: it is left open
					t.Fatalf("%d threads: no result after %v (a hang?)", n, recurrentDeadline)
				}
				got, err := out.Float32s()
				require.NoError(t, err)
				if first == nil {
					first = got
					require.Len(t, ref, len(got))
					var num, den float64
					for i, v := range got {
						d := float64(v) - ref[i]
						num += d * d
						den += ref[i] * ref[i]
					}
					require.LessOrEqual(t, num/den, c.tol, "1 thread against the reference (nmse)")
					continue
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
						t.Fatalf("%d threads: element %d is %g, with 1 thread %g", n, i, got[i], first[i])
					}
				}
			}
			ctx.Close()
		})
	}
}

func wkv6Case(S, H, T, NS int) recurrentCase {
	return recurrentCase{
		name: fmt.Sprintf("S%d_H%d_T%d_seqs%d", S, H, T, NS), heads: H, units: NS * H * ((S + 15) / 16), tol: 1e-11,
		build: func(ctx *Context, r *rand.Rand) (*Tensor, []float64) {
			k, K := recurrentTensor(ctx, r, -1, 1, S, 1, H, T)
			v, V := recurrentTensor(ctx, r, -1, 1, 1, S, H, T)
			rr, R := recurrentTensor(ctx, r, -1, 1, 1, S, H, T)
			tf, TF := recurrentTensor(ctx, r, -1, 1, S, H)
			td, TD := recurrentTensor(ctx, r, 0, 1, 1, S, H, T)
			st, S0 := recurrentTensor(ctx, r, -1, 1, S*S*H, NS)
			out := ctx.RWKVWKV6(k, v, rr, tf, td, st)
			Cn := S * H
			ref := make([]float64, Cn*(T+S*NS))
			state := ref[Cn*T:]
			for i := range S0 {
				state[i] = float64(S0[i])
			}
			for t := range T {
				seq := t / (T / NS)
				for h := range H {
					sh := state[seq*S*Cn+h*S*S:]
					b := t*Cn + h*S
					for j := range S {
						acc := 0.0
						for i := range S {
							acc += (float64(K[b+i])*float64(V[b+j])*float64(TF[h*S+i]) + sh[i*S+j]) * float64(R[b+i])
						}
						ref[b+j] = acc
					}
					for i := range S {
						for j := range S {
							sh[i*S+j] = sh[i*S+j]*float64(TD[b+i]) + float64(K[b+i])*float64(V[b+j])
						}
					}
				}
			}
			return out, ref
		},
	}
}

func TestWKV6ThreadCounts(t *testing.T) {
	for _, c := range []recurrentCase{
		wkv6Case(64, 2, 4, 2), // 2 heads: llama.cpp 1.3.3 hangs at 4 threads
		wkv6Case(64, 1, 3, 1),
		wkv6Case(20, 3, 3, 3), // a block of 16 value columns and a rest
	} {
		runRecurrentCase(t, c)
	}
}

func ssmScanCase(dState, dInner, nT, nS int) recurrentCase {
	return recurrentCase{
		name: fmt.Sprintf("state%d_inner%d_t%d_s%d", dState, dInner, nT, nS), heads: dInner, units: dInner * nS, tol: 1e-10,
		build: func(ctx *Context, r *rand.Rand) (*Tensor, []float64) {
			s, S0 := recurrentTensor(ctx, r, -1, 1, dState, dInner, nS)
			x, X := recurrentTensor(ctx, r, -1, 1, dInner, nT, nS)
			dt, DT := recurrentTensor(ctx, r, -2, 25, dInner, nT, nS)
			a, A := recurrentTensor(ctx, r, -3, 0, dState, dInner)
			b, B := recurrentTensor(ctx, r, -1, 1, dState, nT, nS)
			c, C := recurrentTensor(ctx, r, -1, 1, dState, nT, nS)
			out := ctx.SSMScan(s, x, dt, a, b, c)
			ny := dInner * nT * nS
			ref := make([]float64, ny+len(S0))
			for i := range S0 {
				ref[ny+i] = float64(S0[i])
			}
			for is := range nS {
				state := ref[ny+is*dInner*dState:]
				for t := range nT {
					for i := range dInner {
						d := float64(DT[(is*nT+t)*dInner+i])
						sp := d
						if d <= 20 {
							sp = math.Log1p(math.Exp(d))
						}
						xd := float64(X[(is*nT+t)*dInner+i]) * sp
						acc := 0.0
						for j := range dState {
							bc := (is*nT+t)*dState + j
							v := &state[i*dState+j]
							*v = *v*math.Exp(sp*float64(A[i*dState+j])) + float64(B[bc])*xd
							acc += *v * float64(C[bc])
						}
						ref[(is*nT+t)*dInner+i] = acc
					}
				}
			}
			return out, ref
		},
	}
}

func TestSSMScanThreadCounts(t *testing.T) {
	for _, c := range []recurrentCase{
		ssmScanCase(16, 5, 4, 2), // Mamba's d_state
		ssmScanCase(24, 3, 3, 1),
		ssmScanCase(13, 4, 2, 2), // a rest after the SIMD steps
	} {
		runRecurrentCase(t, c)
	}
}

func ssmConvCase(dConv, dInner, nT, nS int) recurrentCase {
	units := nS * ((dInner + 15) / 16)
	return recurrentCase{
		name: fmt.Sprintf("conv%d_inner%d_t%d_s%d", dConv, dInner, nT, nS), heads: units, units: units, tol: 1e-12,
		build: func(ctx *Context, r *rand.Rand) (*Tensor, []float64) {
			w := dConv - 1 + nT
			sx, SX := recurrentTensor(ctx, r, -1, 1, w, dInner, nS)
			cw, CW := recurrentTensor(ctx, r, -1, 1, dConv, dInner)
			out := ctx.SSMConv(sx, cw)
			ref := make([]float64, dInner*nT*nS)
			for s := range nS {
				for t := range nT {
					for i := range dInner {
						acc := 0.0
						for k := range dConv {
							acc += float64(SX[(s*dInner+i)*w+t+k]) * float64(CW[i*dConv+k])
						}
						ref[(s*nT+t)*dInner+i] = acc
					}
				}
			}
			return out, ref
		},
	}
}

func TestSSMConvThreadCounts(t *testing.T) {
	for _, c := range []recurrentCase{
		ssmConvCase(4, 45, 5, 2), // Mamba's d_conv; blocks of 16 rows and a rest
		ssmConvCase(3, 29, 4, 2),
	} {
		runRecurrentCase(t, c)
	}
}

func groupNormCase(ne0, ne1, ne2, ne3, groups int) recurrentCase {
	return recurrentCase{
		name: fmt.Sprintf("%dx%dx%dx%d_groups%d", ne0, ne1, ne2, ne3, groups), heads: groups, units: ne2 * ne3, tol: 1e-12,
		build: func(ctx *Context, r *rand.Rand) (*Tensor, []float64) {
			a, A := recurrentTensor(ctx, r, -2, 3, ne0, ne1, ne2, ne3)
			const eps = 1e-5
			out := ctx.GroupNorm(a, groups, eps)
			ref := make([]float64, len(A))
			per := (ne2 + groups - 1) / groups
			plane := ne0 * ne1
			for i3 := range ne3 {
				for c0 := 0; c0 < ne2; c0 += per {
					c1 := min(c0+per, ne2)
					lo, hi := (i3*ne2+c0)*plane, (i3*ne2+c1)*plane // the group's elements follow one another
					s := 0.0
					for _, v := range A[lo:hi] {
						s += float64(v)
					}
					mean := s / float64(hi-lo)
					s2 := 0.0
					for _, v := range A[lo:hi] {
						s2 += (float64(v) - mean) * (float64(v) - mean)
					}
					sc := 1 / math.Sqrt(s2/float64(hi-lo)+float64(float32(eps)))
					for i := lo; i < hi; i++ {
						ref[i] = (float64(A[i]) - mean) * sc
					}
				}
			}
			return out, ref
		},
	}
}

func TestGroupNormThreadCounts(t *testing.T) {
	for _, c := range []recurrentCase{
		groupNormCase(37, 2, 6, 2, 2), // fewer groups than threads
		groupNormCase(19, 3, 7, 1, 3), // uneven groups
		groupNormCase(64, 1, 4, 1, 4), // RWKV's: a group per head of 64
	} {
		runRecurrentCase(t, c)
	}
}

// benchRecurrent times one op node on one thread at the current level
// (LM_GGML_CPU_LEVEL picks another).
func benchRecurrent(b *testing.B, mem int, build func(ctx *Context, r *rand.Rand) *Tensor) {
	ctx, err := NewContext(ContextOptions{MemSize: mem})
	require.NoError(b, err)
	defer ctx.Close()
	g := ctx.NewGraph().BuildForward(build(ctx, rand.New(rand.NewPCG(1, 2))))
	for b.Loop() {
		if err := g.Compute(1); err != nil {
			b.Fatal(err)
		}
	}
}

// RWKV-6's shapes: head size 64, 2 to 32 heads, a decoded token and a prompt
// of 512.
func BenchmarkWKV6(b *testing.B) {
	const S = 64
	for _, H := range []int{2, 8, 32} {
		for _, T := range []int{1, 512} {
			b.Run(fmt.Sprintf("heads%d_tokens%d", H, T), func(b *testing.B) {
				benchRecurrent(b, 4*(S*H*T*6+S*S*H*2)+1<<20, func(ctx *Context, r *rand.Rand) *Tensor {
					k, _ := recurrentTensor(ctx, r, -1, 1, S, 1, H, T)
					v, _ := recurrentTensor(ctx, r, -1, 1, 1, S, H, T)
					rr, _ := recurrentTensor(ctx, r, -1, 1, 1, S, H, T)
					tf, _ := recurrentTensor(ctx, r, -1, 1, S, H)
					td, _ := recurrentTensor(ctx, r, 0, 1, 1, S, H, T)
					st, _ := recurrentTensor(ctx, r, -1, 1, S*S*H, 1)
					return ctx.RWKVWKV6(k, v, rr, tf, td, st)
				})
			})
		}
	}
}

// Mamba's shapes: d_state 16, d_inner 256 to 1536 (130M to 1.4B models).
func BenchmarkSSMScan(b *testing.B) {
	const dState = 16
	for _, dInner := range []int{256, 768, 1536} {
		for _, T := range []int{1, 512} {
			b.Run(fmt.Sprintf("inner%d_tokens%d", dInner, T), func(b *testing.B) {
				benchRecurrent(b, 4*(dState*dInner*3+dInner*T*3+dState*T*2)+1<<20, func(ctx *Context, r *rand.Rand) *Tensor {
					s, _ := recurrentTensor(ctx, r, -1, 1, dState, dInner, 1)
					x, _ := recurrentTensor(ctx, r, -1, 1, dInner, T, 1)
					dt, _ := recurrentTensor(ctx, r, -2, 2, dInner, T, 1)
					a, _ := recurrentTensor(ctx, r, -3, 0, dState, dInner)
					bb, _ := recurrentTensor(ctx, r, -1, 1, dState, T, 1)
					c, _ := recurrentTensor(ctx, r, -1, 1, dState, T, 1)
					return ctx.SSMScan(s, x, dt, a, bb, c)
				})
			})
		}
	}
}

func BenchmarkSSMConv(b *testing.B) {
	const dConv = 4
	for _, dInner := range []int{768, 1536} {
		for _, T := range []int{1, 512} {
			b.Run(fmt.Sprintf("inner%d_tokens%d", dInner, T), func(b *testing.B) {
				benchRecurrent(b, 4*(dInner*(dConv+T)*2+dConv*dInner)+1<<20, func(ctx *Context, r *rand.Rand) *Tensor {
					sx, _ := recurrentTensor(ctx, r, -1, 1, dConv-1+T, dInner, 1)
					cw, _ := recurrentTensor(ctx, r, -1, 1, dConv, dInner)
					return ctx.SSMConv(sx, cw)
				})
			})
		}
	}
}

// test-backend-ops' group_norm shapes (a diffusion model's), and RWKV's
// group per head over a 512-token prompt.
func BenchmarkGroupNorm(b *testing.B) {
	for _, c := range []struct{ ne0, ne1, ne2, groups int }{{64, 64, 320, 32}, {9, 9, 1280, 32}, {64, 32, 512, 32}} {
		b.Run(fmt.Sprintf("%dx%dx%d_groups%d", c.ne0, c.ne1, c.ne2, c.groups), func(b *testing.B) {
			benchRecurrent(b, 8*c.ne0*c.ne1*c.ne2+1<<20, func(ctx *Context, r *rand.Rand) *Tensor {
				a, _ := recurrentTensor(ctx, r, -2, 3, c.ne0, c.ne1, c.ne2)
				return ctx.GroupNorm(a, c.groups, 1e-6)
			})
		})
	}
}
