package ggml

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParityExpr feeds arbitrary text to the parity s-expression parser and
// evaluates what parses against small inputs: malformed expressions and
// invalid op arguments must come back as errors, never crash the process.
func FuzzParityExpr(f *testing.F) {
	for _, s := range []string{
		"(add x0 x1)", "(mul_mat x0 (permute x1 0 2 1 3))", "(set x0 x1 (nb x0 1) (nb x0 2) (nb x0 3) (+ (* 2 (nb x0 1)) 12))",
		"(rope_ext x0 x2 NULL 4 0 4096 10000 1 0 1 32 1)", "(argsort x0 DESC)", "(pool_2d x0 MAX 2 2 2 2 0 0)",
		"(im2col x0 x1 1 1 0 0 1 1 true F32)", "((", ")", "(view_1d x0 99999 12)", "(reshape_2d x0 -1 3)",
	} {
		f.Add(s)
	}
	if dir := os.Getenv("GGML_PARITY_DIR"); dir != "" {
		if idx, err := os.ReadFile(filepath.Join(dir, "ops", "INDEX.tsv")); err == nil {
			f.Add(string(idx[:min(len(idx), 4096)]))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := parseSexpr(src)
		if err != nil {
			return
		}
		ctx, err := NewContext(ContextOptions{MemSize: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		x0 := ctx.NewTensor2D(TypeF32, 4, 3).SetName("x0")
		x1 := ctx.NewTensor2D(TypeF32, 4, 1).SetName("x1")
		x2 := ctx.NewTensor1D(TypeI32, 3).SetName("x2")
		x0.Zero()
		x1.Zero()
		x2.Zero()
		in := &interp{ctx: ctx, inputs: map[string]*Tensor{"x0": x0, "x1": x1, "x2": x2}}
		v, err := in.eval(e)
		if err != nil || v.kind != vTensor || v.t == nil {
			return
		}
		// Graphs that were built must also compute (or report an error).
		g := ctx.NewGraphCustom(256, false)
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(*OpError); !ok {
					panic(r)
				}
			}
		}()
		g.BuildForward(v.t)
		_ = g.Compute(1)
	})
}
