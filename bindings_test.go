// bindings_test.go: the parity of the bindings against upstream ggml
// (cui-llama.rn 1.3.3 / ggml 69d065e7), read from ../shared/parity (see
// internal/shareddata; a plain clone lacks it, and these tests skip):
//   - the type traits and the op and unary op names (type_traits.json,
//     op_names.json) against Type, Op and UnaryOp;
//   - the op cases of parity/ops, run through the Go API by the interpreter
//     below, and the fuzz target of that interpreter.
// The parity of the quantizers, fp16/bf16 rows and GGUF files lives with
// their subjects (quant_test.go, convert_test.go, gguf_test.go).

package ggml

// The generic op parity runner: every case file in <parity>/ops is a GGUF
// file holding the inputs, an s-expression of the graph and the reference
// results. The expression is interpreted through the Go API (opTable knows
// every op constructor of csrc/include/ggml.h by its C name and C argument order),
// computed, and compared with the tolerances of the parity README. Nothing
// here knows about individual cases.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/shareddata"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------- the parity data

var badEscape = regexp.MustCompile(`(^|[^\\])\\>`)

// readParityJSON decodes a parity JSON file (path under ../shared/parity;
// see shareddata.Dir for when it skips). The reference's op symbols
// contain the graphviz escape `\>`, which is not valid JSON: it is read as a
// literal backslash.
func readParityJSON(t testing.TB, v any, path ...string) {
	t.Helper()
	b, err := os.ReadFile(shareddata.Dir(t, append([]string{"parity"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	s := badEscape.ReplaceAllString(string(b), `$1\\>`)
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%s: %v", filepath.Join(path...), err)
	}
}

// ---------------------------------------------------------------- type traits and op names

func TestTypeTraitsParity(t *testing.T) {
	var want []struct {
		ID                 uint32 `json:"id"`
		Name               string `json:"name"`
		BlckSize           int    `json:"blck_size"`
		BlckSizeInterleave int    `json:"blck_size_interleave"`
		TypeSize           int    `json:"type_size"`
		IsQuantized        bool   `json:"is_quantized"`
		HasToFloat         bool   `json:"has_to_float"`
		HasFromFloatRef    bool   `json:"has_from_float_ref"`
		RequiresImatrix    bool   `json:"requires_imatrix"`
	}
	readParityJSON(t, &want, "type_traits.json")
	require.NotEmpty(t, want)
	for _, w := range want {
		got, err := TypeTraits(Type(w.ID))
		require.NoError(t, err)
		require.Equal(t, Traits{
			Name: w.Name, BlockSize: w.BlckSize, BlockSizeInterleave: w.BlckSizeInterleave,
			TypeSize: w.TypeSize, IsQuantized: w.IsQuantized, HasToFloat: w.HasToFloat,
			HasFromFloatRef: w.HasFromFloatRef, RequiresImatrix: w.RequiresImatrix,
		}, got, "type %d", w.ID)
		if w.Name != "DEPRECATED" {
			require.Equal(t, w.Name, Type(w.ID).String())
			require.Equal(t, w.BlckSize, Type(w.ID).BlockSize())
			require.Equal(t, w.TypeSize, Type(w.ID).Size())
			byName, ok := TypeByName(w.Name)
			require.True(t, ok)
			require.Equal(t, Type(w.ID), byName)
		}
	}
	_, err := TypeTraits(TypeCount)
	require.Error(t, err)
}

func TestOpNamesParity(t *testing.T) {
	var want struct {
		Ops []struct {
			ID     int    `json:"id"`
			Name   string `json:"name"`
			Symbol string `json:"symbol"`
		} `json:"ops"`
		Unary []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		} `json:"unary_ops"`
	}
	readParityJSON(t, &want, "op_names.json")
	require.Len(t, want.Ops, int(OpCount))
	require.Len(t, want.Unary, int(UnaryOpCount))
	for _, o := range want.Ops {
		require.Equal(t, o.Name, Op(o.ID).String(), "op %d", o.ID)
		require.Equal(t, o.Symbol, Op(o.ID).Symbol(), "op %d", o.ID)
	}
	for _, u := range want.Unary {
		require.Equal(t, u.Name, UnaryOp(u.ID).String(), "unary op %d", u.ID)
	}
}

// ---------------------------------------------------------------- s-expressions

type sexpr struct {
	atom   string
	list   []*sexpr
	isList bool
}

func (e *sexpr) String() string {
	if !e.isList {
		return e.atom
	}
	parts := make([]string, len(e.list))
	for i, x := range e.list {
		parts[i] = x.String()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func parseSexpr(s string) (*sexpr, error) {
	var toks []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r == '(' || r == ')':
			flush()
			toks = append(toks, string(r))
		case unicode.IsSpace(r):
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	pos := 0
	var parse func() (*sexpr, error)
	parse = func() (*sexpr, error) {
		if pos >= len(toks) {
			return nil, errors.New("unexpected end of expression")
		}
		tok := toks[pos]
		pos++
		switch tok {
		case ")":
			return nil, errors.New("unexpected ')'")
		case "(":
			e := &sexpr{isList: true}
			for {
				if pos >= len(toks) {
					return nil, errors.New("missing ')'")
				}
				if toks[pos] == ")" {
					pos++
					if len(e.list) == 0 || e.list[0].isList {
						return nil, errors.New("a list must start with an op name")
					}
					return e, nil
				}
				x, err := parse()
				if err != nil {
					return nil, err
				}
				e.list = append(e.list, x)
			}
		}
		return &sexpr{atom: tok}, nil
	}
	e, err := parse()
	if err != nil {
		return nil, err
	}
	if pos != len(toks) {
		return nil, fmt.Errorf("trailing tokens after the expression: %v", toks[pos:])
	}
	return e, nil
}

// ---------------------------------------------------------------- values and arguments

type pkind int

const (
	vTensor pkind = iota
	vNull
	vNum
	vBool
	vSym
)

type pval struct {
	kind pkind
	t    *Tensor
	num  float64
	b    bool
	sym  string
}

func (v pval) String() string {
	switch v.kind {
	case vTensor:
		return "tensor " + v.t.String()
	case vNull:
		return "NULL"
	case vNum:
		return strconv.FormatFloat(v.num, 'g', -1, 64)
	case vBool:
		return strconv.FormatBool(v.b)
	}
	return v.sym
}

// argError is panicked by the opArgs accessors and recovered by eval.
type argError struct{ msg string }

type opArgs struct {
	op string
	v  []pval
}

func (a *opArgs) bad(i int, want string) {
	panic(argError{fmt.Sprintf("%s: argument %d: want %s, got %v", a.op, i+1, want, a.v[i])})
}

// T is a required tensor argument.
func (a *opArgs) T(i int) *Tensor {
	if a.v[i].kind != vTensor {
		a.bad(i, "a tensor")
	}
	return a.v[i].t
}

// TN is a tensor argument that may be NULL.
func (a *opArgs) TN(i int) *Tensor {
	if a.v[i].kind == vNull {
		return nil
	}
	return a.T(i)
}

func (a *opArgs) I(i int) int {
	v := a.v[i]
	if v.kind == vBool { // C promotes bool to int
		if v.b {
			return 1
		}
		return 0
	}
	if v.kind != vNum || v.num != math.Trunc(v.num) || math.Abs(v.num) > 1<<53 {
		a.bad(i, "an integer")
	}
	return int(v.num)
}

func (a *opArgs) F(i int) float32 {
	if a.v[i].kind != vNum {
		a.bad(i, "a number")
	}
	return float32(a.v[i].num)
}

func (a *opArgs) B(i int) bool {
	switch v := a.v[i]; {
	case v.kind == vBool:
		return v.b
	case v.kind == vNum && (v.num == 0 || v.num == 1):
		return v.num == 1
	}
	a.bad(i, "true or false")
	return false
}

func (a *opArgs) Ty(i int) Type {
	v := a.v[i]
	if v.kind == vNum && v.num == math.Trunc(v.num) && v.num >= 0 && v.num < float64(TypeCount) {
		return Type(v.num)
	}
	if v.kind == vSym {
		for t := Type(0); t < TypeCount; t++ {
			if t.valid() && strings.EqualFold(t.String(), v.sym) {
				return t
			}
		}
	}
	a.bad(i, "a type name")
	return 0
}

func (a *opArgs) Sort(i int) SortOrder {
	v := a.v[i]
	switch {
	case v.kind == vSym && strings.EqualFold(v.sym, "ASC"):
		return SortAsc
	case v.kind == vSym && strings.EqualFold(v.sym, "DESC"):
		return SortDesc
	}
	return SortOrder(a.I(i))
}

func (a *opArgs) Pool(i int) PoolOp {
	v := a.v[i]
	switch {
	case v.kind == vSym && strings.EqualFold(v.sym, "MAX"):
		return PoolMax
	case v.kind == vSym && strings.EqualFold(v.sym, "AVG"):
		return PoolAvg
	}
	return PoolOp(a.I(i))
}

func (a *opArgs) Unary(i int) UnaryOp {
	if v := a.v[i]; v.kind == vSym {
		for u := UnaryOp(0); u < UnaryOpCount; u++ {
			if strings.EqualFold(u.String(), v.sym) {
				return u
			}
		}
		a.bad(i, "a unary op name")
	}
	return UnaryOp(a.I(i))
}

// Ne is an int64_t[4] shape argument, given as a tensor whose shape is used.
func (a *opArgs) Ne(i int) [MaxDims]int { return a.T(i).Ne() }

func (a *opArgs) rope(i int) RopeParams {
	return RopeParams{NDims: a.I(i), Mode: a.I(i + 1), NCtxOrig: a.I(i + 2),
		FreqBase: a.F(i + 3), FreqScale: a.F(i + 4), ExtFactor: a.F(i + 5), AttnFactor: a.F(i + 6),
		BetaFast: a.F(i + 7), BetaSlow: a.F(i + 8)}
}

func (a *opArgs) conv2(i int) Conv2DParams {
	return Conv2DParams{S0: a.I(i), S1: a.I(i + 1), P0: a.I(i + 2), P1: a.I(i + 3), D0: a.I(i + 4), D1: a.I(i + 5)}
}

func (a *opArgs) pool2(i int) Pool2DParams {
	return Pool2DParams{K0: a.I(i), K1: a.I(i + 1), S0: a.I(i + 2), S1: a.I(i + 3), P0: a.F(i + 4), P1: a.F(i + 5)}
}

// ---------------------------------------------------------------- the op table

type opEntry struct {
	n  int // number of arguments after the context
	fn func(c *Context, a *opArgs) *Tensor
}

type (
	fn1 = func(*Context, *Tensor) *Tensor
	fn2 = func(*Context, *Tensor, *Tensor) *Tensor
	fn3 = func(*Context, *Tensor, *Tensor, *Tensor) *Tensor
)

func t1(f fn1) opEntry {
	return opEntry{1, func(c *Context, a *opArgs) *Tensor { return f(c, a.T(0)) }}
}
func t2(f fn2) opEntry {
	return opEntry{2, func(c *Context, a *opArgs) *Tensor { return f(c, a.T(0), a.T(1)) }}
}
func t3(f fn3) opEntry {
	return opEntry{3, func(c *Context, a *opArgs) *Tensor { return f(c, a.T(0), a.T(1), a.T(2)) }}
}
func t1f(f func(*Context, *Tensor, float32) *Tensor) opEntry {
	return opEntry{2, func(c *Context, a *opArgs) *Tensor { return f(c, a.T(0), a.F(1)) }}
}
func t1i(f func(*Context, *Tensor, int) *Tensor) opEntry {
	return opEntry{2, func(c *Context, a *opArgs) *Tensor { return f(c, a.T(0), a.I(1)) }}
}
func t2sz4(f func(*Context, *Tensor, *Tensor, int, int, int, int) *Tensor) opEntry {
	return opEntry{6, func(c *Context, a *opArgs) *Tensor { return f(c, a.T(0), a.T(1), a.I(2), a.I(3), a.I(4), a.I(5)) }}
}
func callback(name string) opEntry {
	return opEntry{-1, func(c *Context, a *opArgs) *Tensor {
		panic(argError{name + " takes a C function or Go callback, which case.expr cannot express"})
	}}
}

// opTable maps the C constructor name (without lm_ggml_) to the Go method,
// with the arguments in C order.
var opTable = map[string]opEntry{
	"dup": t1((*Context).Dup), "dup_inplace": t1((*Context).DupInplace),
	"add": t2((*Context).Add), "add_inplace": t2((*Context).AddInplace),
	"add_cast": {3, func(c *Context, a *opArgs) *Tensor { return c.AddCast(a.T(0), a.T(1), a.Ty(2)) }},
	"add1":     t2((*Context).Add1), "add1_inplace": t2((*Context).Add1Inplace),
	"acc": t2sz4((*Context).Acc), "acc_inplace": t2sz4((*Context).AccInplace),
	"sub": t2((*Context).Sub), "sub_inplace": t2((*Context).SubInplace),
	"mul": t2((*Context).Mul), "mul_inplace": t2((*Context).MulInplace),
	"div": t2((*Context).Div), "div_inplace": t2((*Context).DivInplace),
	"sqr": t1((*Context).Sqr), "sqr_inplace": t1((*Context).SqrInplace),
	"sqrt": t1((*Context).Sqrt), "sqrt_inplace": t1((*Context).SqrtInplace),
	"log": t1((*Context).Log), "log_inplace": t1((*Context).LogInplace),
	"sin": t1((*Context).Sin), "sin_inplace": t1((*Context).SinInplace),
	"cos": t1((*Context).Cos), "cos_inplace": t1((*Context).CosInplace),
	"sum": t1((*Context).Sum), "sum_rows": t1((*Context).SumRows), "mean": t1((*Context).Mean),
	"argmax": t1((*Context).Argmax), "count_equal": t2((*Context).CountEqual),
	"repeat": t2((*Context).Repeat), "repeat_back": t2((*Context).RepeatBack),
	"concat": {3, func(c *Context, a *opArgs) *Tensor { return c.Concat(a.T(0), a.T(1), a.I(2)) }},
	"abs":    t1((*Context).Abs), "abs_inplace": t1((*Context).AbsInplace),
	"sgn": t1((*Context).Sgn), "sgn_inplace": t1((*Context).SgnInplace),
	"neg": t1((*Context).Neg), "neg_inplace": t1((*Context).NegInplace),
	"step": t1((*Context).Step), "step_inplace": t1((*Context).StepInplace),
	"tanh": t1((*Context).Tanh), "tanh_inplace": t1((*Context).TanhInplace),
	"elu": t1((*Context).Elu), "elu_inplace": t1((*Context).EluInplace),
	"relu": t1((*Context).Relu), "relu_inplace": t1((*Context).ReluInplace),
	"leaky_relu": {3, func(c *Context, a *opArgs) *Tensor { return c.LeakyRelu(a.T(0), a.F(1), a.B(2)) }},
	"sigmoid":    t1((*Context).Sigmoid), "sigmoid_inplace": t1((*Context).SigmoidInplace),
	"gelu": t1((*Context).Gelu), "gelu_inplace": t1((*Context).GeluInplace),
	"gelu_quick": t1((*Context).GeluQuick), "gelu_quick_inplace": t1((*Context).GeluQuickInplace),
	"silu": t1((*Context).Silu), "silu_inplace": t1((*Context).SiluInplace),
	"silu_back": t2((*Context).SiluBack),
	"hardswish": t1((*Context).Hardswish), "hardsigmoid": t1((*Context).Hardsigmoid),
	"exp": t1((*Context).Exp), "exp_inplace": t1((*Context).ExpInplace),
	"norm": t1f((*Context).Norm), "norm_inplace": t1f((*Context).NormInplace),
	"rms_norm": t1f((*Context).RMSNorm), "rms_norm_inplace": t1f((*Context).RMSNormInplace),
	"group_norm": {3, func(c *Context, a *opArgs) *Tensor { return c.GroupNorm(a.T(0), a.I(1), a.F(2)) }},
	"group_norm_inplace": {3, func(c *Context, a *opArgs) *Tensor {
		return c.GroupNormInplace(a.T(0), a.I(1), a.F(2))
	}},
	"rms_norm_back": {3, func(c *Context, a *opArgs) *Tensor { return c.RMSNormBack(a.T(0), a.T(1), a.F(2)) }},
	"mul_mat":       t2((*Context).MulMat),
	"mul_mat_id":    t3((*Context).MulMatID),
	"out_prod":      t2((*Context).OutProd),
	"scale":         t1f((*Context).Scale), "scale_inplace": t1f((*Context).ScaleInplace),
	"set": t2sz4((*Context).Set), "set_inplace": t2sz4((*Context).SetInplace),
	"set_1d":         {3, func(c *Context, a *opArgs) *Tensor { return c.Set1D(a.T(0), a.T(1), a.I(2)) }},
	"set_1d_inplace": {3, func(c *Context, a *opArgs) *Tensor { return c.Set1DInplace(a.T(0), a.T(1), a.I(2)) }},
	"set_2d":         {4, func(c *Context, a *opArgs) *Tensor { return c.Set2D(a.T(0), a.T(1), a.I(2), a.I(3)) }},
	"set_2d_inplace": {4, func(c *Context, a *opArgs) *Tensor {
		return c.Set2DInplace(a.T(0), a.T(1), a.I(2), a.I(3))
	}},
	"cpy":     t2((*Context).Cpy),
	"cast":    {2, func(c *Context, a *opArgs) *Tensor { return c.Cast(a.T(0), a.Ty(1)) }},
	"cont":    t1((*Context).Cont),
	"cont_1d": {2, func(c *Context, a *opArgs) *Tensor { return c.Cont1D(a.T(0), a.I(1)) }},
	"cont_2d": {3, func(c *Context, a *opArgs) *Tensor { return c.Cont2D(a.T(0), a.I(1), a.I(2)) }},
	"cont_3d": {4, func(c *Context, a *opArgs) *Tensor { return c.Cont3D(a.T(0), a.I(1), a.I(2), a.I(3)) }},
	"cont_4d": {5, func(c *Context, a *opArgs) *Tensor {
		return c.Cont4D(a.T(0), a.I(1), a.I(2), a.I(3), a.I(4))
	}},
	"reshape":    t2((*Context).Reshape),
	"reshape_1d": {2, func(c *Context, a *opArgs) *Tensor { return c.Reshape1D(a.T(0), a.I(1)) }},
	"reshape_2d": {3, func(c *Context, a *opArgs) *Tensor { return c.Reshape2D(a.T(0), a.I(1), a.I(2)) }},
	"reshape_3d": {4, func(c *Context, a *opArgs) *Tensor { return c.Reshape3D(a.T(0), a.I(1), a.I(2), a.I(3)) }},
	"reshape_4d": {5, func(c *Context, a *opArgs) *Tensor {
		return c.Reshape4D(a.T(0), a.I(1), a.I(2), a.I(3), a.I(4))
	}},
	"view_1d": {3, func(c *Context, a *opArgs) *Tensor { return c.View1D(a.T(0), a.I(1), a.I(2)) }},
	"view_2d": {5, func(c *Context, a *opArgs) *Tensor { return c.View2D(a.T(0), a.I(1), a.I(2), a.I(3), a.I(4)) }},
	"view_3d": {7, func(c *Context, a *opArgs) *Tensor {
		return c.View3D(a.T(0), a.I(1), a.I(2), a.I(3), a.I(4), a.I(5), a.I(6))
	}},
	"view_4d": {9, func(c *Context, a *opArgs) *Tensor {
		return c.View4D(a.T(0), a.I(1), a.I(2), a.I(3), a.I(4), a.I(5), a.I(6), a.I(7), a.I(8))
	}},
	"permute": {5, func(c *Context, a *opArgs) *Tensor {
		return c.Permute(a.T(0), a.I(1), a.I(2), a.I(3), a.I(4))
	}},
	"transpose":     t1((*Context).Transpose),
	"get_rows":      t2((*Context).GetRows),
	"get_rows_back": t3((*Context).GetRowsBack),
	"diag":          t1((*Context).Diag),
	"diag_mask_inf": t1i((*Context).DiagMaskInf), "diag_mask_inf_inplace": t1i((*Context).DiagMaskInfInplace),
	"diag_mask_zero": t1i((*Context).DiagMaskZero), "diag_mask_zero_inplace": t1i((*Context).DiagMaskZeroInplace),
	"soft_max": t1((*Context).SoftMax), "soft_max_inplace": t1((*Context).SoftMaxInplace),
	"soft_max_ext":  {4, func(c *Context, a *opArgs) *Tensor { return c.SoftMaxExt(a.T(0), a.TN(1), a.F(2), a.F(3)) }},
	"soft_max_back": t2((*Context).SoftMaxBack), "soft_max_back_inplace": t2((*Context).SoftMaxBackInplace),
	"rope":         {4, func(c *Context, a *opArgs) *Tensor { return c.Rope(a.T(0), a.T(1), a.I(2), a.I(3)) }},
	"rope_inplace": {4, func(c *Context, a *opArgs) *Tensor { return c.RopeInplace(a.T(0), a.T(1), a.I(2), a.I(3)) }},
	"rope_ext":     {12, func(c *Context, a *opArgs) *Tensor { return c.RopeExt(a.T(0), a.T(1), a.TN(2), a.rope(3)) }},
	"rope_ext_inplace": {12, func(c *Context, a *opArgs) *Tensor {
		return c.RopeExtInplace(a.T(0), a.T(1), a.TN(2), a.rope(3))
	}},
	"rope_custom": {11, func(c *Context, a *opArgs) *Tensor { return c.RopeCustom(a.T(0), a.T(1), a.rope(2)) }},
	"rope_custom_inplace": {11, func(c *Context, a *opArgs) *Tensor {
		return c.RopeCustomInplace(a.T(0), a.T(1), a.rope(2))
	}},
	"rope_back": {12, func(c *Context, a *opArgs) *Tensor { return c.RopeBack(a.T(0), a.T(1), a.TN(2), a.rope(3)) }},
	"clamp":     {3, func(c *Context, a *opArgs) *Tensor { return c.Clamp(a.T(0), a.F(1), a.F(2)) }},
	"im2col": {10, func(c *Context, a *opArgs) *Tensor {
		return c.Im2Col(a.T(0), a.T(1), a.conv2(2), a.B(8), a.Ty(9))
	}},
	"im2col_back": {10, func(c *Context, a *opArgs) *Tensor {
		return c.Im2ColBack(a.T(0), a.T(1), a.Ne(2), a.conv2(3), a.B(9))
	}},
	"conv_depthwise_2d": {8, func(c *Context, a *opArgs) *Tensor { return c.ConvDepthwise2D(a.T(0), a.T(1), a.conv2(2)) }},
	"conv_1d":           {5, func(c *Context, a *opArgs) *Tensor { return c.Conv1D(a.T(0), a.T(1), a.I(2), a.I(3), a.I(4)) }},
	"conv_1d_ph":        {4, func(c *Context, a *opArgs) *Tensor { return c.Conv1DPh(a.T(0), a.T(1), a.I(2), a.I(3)) }},
	"conv_transpose_1d": {5, func(c *Context, a *opArgs) *Tensor {
		return c.ConvTranspose1D(a.T(0), a.T(1), a.I(2), a.I(3), a.I(4))
	}},
	"conv_2d":       {8, func(c *Context, a *opArgs) *Tensor { return c.Conv2D(a.T(0), a.T(1), a.conv2(2)) }},
	"conv_2d_sk_p0": t2((*Context).Conv2DSkP0),
	"conv_2d_s1_ph": t2((*Context).Conv2DS1Ph),
	"conv_transpose_2d_p0": {3, func(c *Context, a *opArgs) *Tensor {
		return c.ConvTranspose2DP0(a.T(0), a.T(1), a.I(2))
	}},
	"pool_1d": {5, func(c *Context, a *opArgs) *Tensor { return c.Pool1D(a.T(0), a.Pool(1), a.I(2), a.I(3), a.I(4)) }},
	"pool_2d": {8, func(c *Context, a *opArgs) *Tensor { return c.Pool2D(a.T(0), a.Pool(1), a.pool2(2)) }},
	"pool_2d_back": {9, func(c *Context, a *opArgs) *Tensor {
		return c.Pool2DBack(a.T(0), a.T(1), a.Pool(2), a.pool2(3))
	}},
	"upscale": t1i((*Context).Upscale),
	"upscale_ext": {5, func(c *Context, a *opArgs) *Tensor {
		return c.UpscaleExt(a.T(0), a.I(1), a.I(2), a.I(3), a.I(4))
	}},
	"pad":                {5, func(c *Context, a *opArgs) *Tensor { return c.Pad(a.T(0), a.I(1), a.I(2), a.I(3), a.I(4)) }},
	"timestep_embedding": {3, func(c *Context, a *opArgs) *Tensor { return c.TimestepEmbedding(a.T(0), a.I(1), a.I(2)) }},
	"argsort":            {2, func(c *Context, a *opArgs) *Tensor { return c.Argsort(a.T(0), a.Sort(1)) }},
	"arange":             {3, func(c *Context, a *opArgs) *Tensor { return c.Arange(a.F(0), a.F(1), a.F(2)) }},
	"top_k":              t1i((*Context).TopK),
	"flash_attn_ext": {7, func(c *Context, a *opArgs) *Tensor {
		return c.FlashAttnExt(a.T(0), a.T(1), a.T(2), a.TN(3), a.F(4), a.F(5), a.F(6))
	}},
	"flash_attn_back": {5, func(c *Context, a *opArgs) *Tensor {
		return c.FlashAttnBack(a.T(0), a.T(1), a.T(2), a.T(3), a.B(4))
	}},
	"ssm_conv": t2((*Context).SSMConv),
	"ssm_scan": {6, func(c *Context, a *opArgs) *Tensor {
		return c.SSMScan(a.T(0), a.T(1), a.T(2), a.T(3), a.T(4), a.T(5))
	}},
	"win_part":   t1i((*Context).WinPart),
	"win_unpart": {4, func(c *Context, a *opArgs) *Tensor { return c.WinUnpart(a.T(0), a.I(1), a.I(2), a.I(3)) }},
	"unary":      {2, func(c *Context, a *opArgs) *Tensor { return c.Unary(a.T(0), a.Unary(1)) }},
	"unary_inplace": {2, func(c *Context, a *opArgs) *Tensor {
		return c.UnaryInplace(a.T(0), a.Unary(1))
	}},
	"get_rel_pos":         {3, func(c *Context, a *opArgs) *Tensor { return c.GetRelPos(a.T(0), a.I(1), a.I(2)) }},
	"add_rel_pos":         t3((*Context).AddRelPos),
	"add_rel_pos_inplace": t3((*Context).AddRelPosInplace),
	"rwkv_wkv6": {6, func(c *Context, a *opArgs) *Tensor {
		return c.RWKVWKV6(a.T(0), a.T(1), a.T(2), a.T(3), a.T(4), a.T(5))
	}},
	"map_unary_f32": callback("map_unary_f32"), "map_unary_inplace_f32": callback("map_unary_inplace_f32"),
	"map_binary_f32": callback("map_binary_f32"), "map_binary_inplace_f32": callback("map_binary_inplace_f32"),
	"map_custom1_f32": callback("map_custom1_f32"), "map_custom1_inplace_f32": callback("map_custom1_inplace_f32"),
	"map_custom2_f32": callback("map_custom2_f32"), "map_custom2_inplace_f32": callback("map_custom2_inplace_f32"),
	"map_custom3_f32": callback("map_custom3_f32"), "map_custom3_inplace_f32": callback("map_custom3_inplace_f32"),
	"map_custom1": callback("map_custom1"), "map_custom1_inplace": callback("map_custom1_inplace"),
	"map_custom2": callback("map_custom2"), "map_custom2_inplace": callback("map_custom2_inplace"),
	"map_custom3": callback("map_custom3"), "map_custom3_inplace": callback("map_custom3_inplace"),
	"cross_entropy_loss":      t2((*Context).CrossEntropyLoss),
	"cross_entropy_loss_back": t3((*Context).CrossEntropyLossBack),
	"opt_step_adamw": {5, func(c *Context, a *opArgs) *Tensor {
		return c.OptStepAdamW(a.T(0), a.T(1), a.T(2), a.T(3), a.T(4))
	}},
}

// ---------------------------------------------------------------- the interpreter

type interp struct {
	ctx    *Context
	inputs map[string]*Tensor
}

func (in *interp) eval(e *sexpr) (v pval, err error) {
	if !e.isList {
		return in.atom(e.atom)
	}
	head := e.list[0].atom
	args := make([]pval, 0, len(e.list)-1)
	for _, x := range e.list[1:] {
		v, err := in.eval(x)
		if err != nil {
			return pval{}, err
		}
		args = append(args, v)
	}
	oa := &opArgs{op: head, v: args}
	defer func() {
		if r := recover(); r != nil {
			switch x := r.(type) {
			case argError:
				err = errors.New(x.msg)
			case error:
				err = fmt.Errorf("%s: %w", head, x)
			default:
				panic(r)
			}
		}
	}()
	switch head {
	case "nb":
		if len(args) != 2 {
			return pval{}, fmt.Errorf("(nb xN i) takes 2 arguments, got %d", len(args))
		}
		d := oa.I(1)
		if d < 0 || d >= MaxDims {
			return pval{}, fmt.Errorf("nb: dimension %d out of range", d)
		}
		return pval{kind: vNum, num: float64(oa.T(0).Nb()[d])}, nil
	case "+", "-", "*", "/":
		if len(args) != 2 {
			return pval{}, fmt.Errorf("(%s a b) takes 2 arguments, got %d", head, len(args))
		}
		x, y := oa.I(0), oa.I(1)
		var r int
		switch head {
		case "+":
			r = x + y
		case "-":
			r = x - y
		case "*":
			r = x * y
		case "/":
			if y == 0 {
				return pval{}, errors.New("division by zero")
			}
			r = x / y
		}
		return pval{kind: vNum, num: float64(r)}, nil
	}
	ent, ok := opTable[head]
	if !ok {
		return pval{}, fmt.Errorf("unknown op %q", head)
	}
	if ent.n >= 0 && len(args) != ent.n {
		return pval{}, fmt.Errorf("%s takes %d arguments, got %d", head, ent.n, len(args))
	}
	t := ent.fn(in.ctx, oa)
	if t == nil {
		return pval{}, fmt.Errorf("%s returned no tensor", head)
	}
	return pval{kind: vTensor, t: t}, nil
}

func (in *interp) atom(s string) (pval, error) {
	if t, ok := in.inputs[s]; ok {
		return pval{kind: vTensor, t: t}, nil
	}
	switch s {
	case "NULL":
		return pval{kind: vNull}, nil
	case "true":
		return pval{kind: vBool, b: true}, nil
	case "false":
		return pval{kind: vBool, b: false}, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return pval{kind: vNum, num: f}, nil
	}
	if regexp.MustCompile(`^x[0-9]+$`).MatchString(s) {
		return pval{}, fmt.Errorf("unknown input %q", s)
	}
	return pval{kind: vSym, sym: s}, nil
}

// ---------------------------------------------------------------- comparison

const (
	tolExact  = 1e-7 // float outputs in general
	tolLoose  = 5e-4 // through mul_mat & co or f16/bf16/quantized operands
	tolGrad   = 1e-6
	tolStored = 5e-4 // outputs stored as f16, bf16 or quantized
)

// nmse compares got with want: non-finite reference values must be matched
// exactly (same infinity, or any NaN) and are left out of the sums.
func nmse(got, want []float32) (float64, error) {
	if len(got) != len(want) {
		return math.Inf(1), fmt.Errorf("%d elements, want %d", len(got), len(want))
	}
	var num, den float64
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		switch {
		case math.IsNaN(w):
			if !math.IsNaN(g) {
				return math.Inf(1), fmt.Errorf("element %d: %g, want NaN", i, g)
			}
			continue
		case math.IsInf(w, 0):
			if g != w {
				return math.Inf(1), fmt.Errorf("element %d: %g, want %g", i, g, w)
			}
			continue
		case math.IsNaN(g) || math.IsInf(g, 0):
			return math.Inf(1), fmt.Errorf("element %d: %g, want %g", i, g, w)
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	if den == 0 {
		return num, nil
	}
	return num / den, nil
}

// memoryImage lays the element-order values v of the f32 view t out as its
// memory span: what reading NBytes() from its data pointer gives.
func memoryImage(t *Tensor, v []float32) ([]float32, error) {
	if t.Type() != TypeF32 {
		return nil, fmt.Errorf("memory image of a non-contiguous %s tensor", t.Type())
	}
	ne, nb := t.Ne(), t.Nb()
	img := make([]float32, t.NBytes()/4)
	i := 0
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for i1 := range ne[1] {
				for i0 := range ne[0] {
					img[(i0*nb[0]+i1*nb[1]+i2*nb[2]+i3*nb[3])/4] = v[i]
					i++
				}
			}
		}
	}
	return img, nil
}

func isIntType(t Type) bool { return t == TypeI8 || t == TypeI16 || t == TypeI32 || t == TypeI64 }

func isLowPrecision(t Type) bool { return t == TypeF16 || t == TypeBF16 || t.IsQuantized() }

// looseGraph reports whether the computation goes through an op or a type for
// which the README allows 5e-4.
func looseGraph(g *Graph) bool {
	for _, n := range g.Nodes() {
		switch n.Op() {
		case OpMulMat, OpMulMatID, OpOutProd, OpFlashAttnExt:
			return true
		}
		if isLowPrecision(n.Type()) {
			return true
		}
		for i := 0; i < 10; i++ {
			if s := n.Src(i); s != nil && isLowPrecision(s.Type()) {
				return true
			}
		}
	}
	for _, l := range g.Leafs() {
		if isLowPrecision(l.Type()) {
			return true
		}
	}
	return false
}

// compareTensor checks got against the reference tensor name of the case.
func compareTensor(ctx *Context, f *gguf.File, name string, got *Tensor, tol float64) (string, error) {
	info, ok := f.Tensor(name)
	if !ok {
		return "", fmt.Errorf("case has no tensor %q", name)
	}
	if got == nil {
		return "", fmt.Errorf("%s: no result tensor", name)
	}
	want := info.Ne()
	gne := got.Ne()
	for i := range MaxDims {
		if int64(gne[i]) != want[i] {
			return "", fmt.Errorf("%s: shape %v, want %v", name, gne, want)
		}
	}
	data, err := f.TensorData(name)
	if err != nil {
		return "", err
	}
	rt := Type(info.Type)
	if isIntType(rt) {
		if got.Type() != rt {
			return "", fmt.Errorf("%s: type %s, want %s", name, got.Type(), rt)
		}
		gb := got.Bytes()
		if string(gb) != string(data) {
			n := 0
			es := rt.Size()
			for i := 0; i+es <= len(gb) && i+es <= len(data); i += es {
				if string(gb[i:i+es]) != string(data[i:i+es]) {
					n++
				}
			}
			return "", fmt.Errorf("%s: %d of %d integer elements differ", name, n, len(data)/es)
		}
		return name + " exact", nil
	}
	if isLowPrecision(rt) && tol < tolStored {
		tol = tolStored
	}
	shape := make([]int, MaxDims)
	for i := range shape {
		shape[i] = int(want[i])
	}
	prev := ctx.NoAlloc()
	ctx.SetNoAlloc(false) // the expected values live in the context (a backend run's is NoAlloc)
	ref := ctx.NewTensor(rt, shape...)
	ctx.SetNoAlloc(prev)
	if err := ref.SetBytes(data); err != nil {
		return "", err
	}
	wv, err := ref.Float32s()
	if err != nil {
		return "", err
	}
	gv, err := got.Float32s()
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(name, "grad.") && !got.IsContiguous() {
		// The reference dumped gradients as the raw bytes of their data
		// (lm_ggml_nbytes from the data pointer), not in element order, and
		// a gradient can be a view (the gradient of a transpose is one).
		if gv, err = memoryImage(got, gv); err != nil {
			return "", fmt.Errorf("%s: %v", name, err)
		}
	}
	e, err := nmse(gv, wv)
	if err != nil {
		return "", fmt.Errorf("%s: %v", name, err)
	}
	fig := fmt.Sprintf("%s nmse=%.3g (tol %.0e)", name, e, tol)
	if !(e <= tol) {
		return "", errors.New(fig)
	}
	return fig, nil
}

// ---------------------------------------------------------------- running a case

type parityCase struct {
	path   string
	name   string
	kind   string
	expr   string
	params []string
}

func readCase(f *gguf.File, path string) (parityCase, error) {
	c := parityCase{path: path}
	var err error
	if c.name, err = f.String("case.name"); err != nil {
		return c, err
	}
	if c.kind, err = f.String("case.kind"); err != nil {
		return c, err
	}
	if c.expr, err = f.String("case.expr"); err != nil {
		return c, err
	}
	if f.Has("case.params") {
		p, err := f.String("case.params")
		if err != nil {
			return c, err
		}
		for s := range strings.SplitSeq(p, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.params = append(c.params, s)
			}
		}
	}
	return c, nil
}

// runCase builds, computes and checks the case with nThreads threads. It
// returns the error figures. With be, the case runs as a backend program
// would: the context is NoAlloc, the inputs live in a buffer of be's
// (AllocTensors), the graph in a GraphAllocator's buffer, and be computes it.
func runCase(f *gguf.File, c parityCase, nThreads int, be *Backend) (figs []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	expr, err := parseSexpr(c.expr)
	if err != nil {
		return nil, fmt.Errorf("case.expr: %w", err)
	}
	infos := f.Tensors()
	mem := 64 << 20
	for _, ti := range infos {
		mem += 8*int(ti.Size) + 4*TensorOverhead()
	}
	mem += GraphOverhead(DefaultGraphSize, true)
	ctx, err := NewContext(ContextOptions{MemSize: mem, NoAlloc: be != nil})
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	var inputs []*Tensor

	in := &interp{ctx: ctx, inputs: map[string]*Tensor{}}
	inputRE := regexp.MustCompile(`^x[0-9]+$`)
	for _, ti := range infos {
		if !inputRE.MatchString(ti.Name) {
			continue
		}
		shape := make([]int, len(ti.Shape))
		for i, d := range ti.Shape {
			shape[i] = int(d)
		}
		if len(shape) == 0 {
			shape = []int{1}
		}
		t := ctx.NewTensor(Type(ti.Type), shape...).SetName(ti.Name)
		in.inputs[ti.Name] = t
		inputs = append(inputs, t)
	}
	if be != nil {
		buf, err := ctx.AllocTensors(be)
		switch {
		case errors.Is(err, ErrNothingToAllocate): // no inputs
		case err != nil:
			return nil, fmt.Errorf("inputs: %w", err)
		default:
			defer buf.Close()
		}
	}
	for _, t := range inputs {
		data, err := f.TensorData(t.Name())
		if err != nil {
			return nil, err
		}
		if err := t.SetBytes(data); err != nil {
			return nil, fmt.Errorf("input %s: %w", t.Name(), err)
		}
	}
	// compute runs g the way the case asks (after the caller's reset, which
	// needs g's memory: reset runs after the allocation)
	var ga *GraphAllocator // lives until the results are read
	if be != nil {
		if ga, err = NewGraphAllocator(be.BufferType()); err != nil {
			return nil, err
		}
		defer ga.Close()
	}
	compute := func(g *Graph, reset func()) error {
		if be == nil {
			reset()
			return g.Compute(nThreads)
		}
		if err := ga.Alloc(g); err != nil {
			return err
		}
		reset()
		if err := be.SetThreads(nThreads); err != nil {
			return err
		}
		return be.Compute(context.Background(), g)
	}
	for _, p := range c.params {
		t, ok := in.inputs[p]
		if !ok {
			return nil, fmt.Errorf("case.params names %q, which is not an input", p)
		}
		ctx.SetParam(t)
	}
	v, err := in.eval(expr)
	if err != nil {
		return nil, err
	}
	if v.kind != vTensor {
		return nil, fmt.Errorf("the expression is %v, not a tensor", v)
	}
	out := v.t
	out.SetOutput() // kept by a graph allocator (a result read back)

	switch c.kind {
	case "forward":
		g := ctx.NewGraphCustom(DefaultGraphSize, false)
		g.BuildForward(out)
		tol := tolExact
		if looseGraph(g) {
			tol = tolLoose
		}
		if err := compute(g, func() {}); err != nil {
			return nil, err
		}
		fig, err := compareTensor(ctx, f, "out", out, tol)
		if err != nil {
			return nil, err
		}
		return []string{fig}, nil

	case "backward":
		loss := out
		if out.NElements() != 1 {
			loss = ctx.Sum(out)
		}
		loss.SetLoss()
		loss.SetOutput()
		g := ctx.NewGraphCustom(DefaultGraphSize, true)
		g.BuildForward(loss)
		tol, gtol := tolExact, tolGrad
		if looseGraph(g) {
			tol, gtol = tolLoose, tolLoose
		}
		if err := g.BuildBackward(ctx, ctx, false); err != nil {
			return nil, err
		}
		if err := compute(g, g.Reset); err != nil {
			return nil, err
		}
		for _, x := range []struct {
			name string
			t    *Tensor
			tol  float64
		}{{"loss", loss, tol}, {"out", out, tol}} {
			fig, err := compareTensor(ctx, f, x.name, x.t, x.tol)
			if err != nil {
				return figs, err
			}
			figs = append(figs, fig)
		}
		for _, p := range c.params {
			gr := g.Grad(in.inputs[p])
			if gr == nil {
				return figs, fmt.Errorf("no gradient for %s", p)
			}
			fig, err := compareTensor(ctx, f, "grad."+p, gr, gtol)
			if err != nil {
				return figs, err
			}
			figs = append(figs, fig)
		}
		return figs, nil
	}
	return nil, fmt.Errorf("unknown case.kind %q", c.kind)
}

var parityBackendOnce = sync.OnceValues(NewCPUBackend)

// parityBackend is the CPU backend the parity cases also run on.
func parityBackend(t *testing.T) *Backend {
	be, err := parityBackendOnce()
	require.NoError(t, err)
	return be
}

func TestOpParity(t *testing.T) {
	dir := shareddata.Dir(t, "parity", "ops")
	files, err := filepath.Glob(filepath.Join(dir, "*.gguf"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no *.gguf case files in %s", dir)
	sort.Strings(files)
	passed, failed := 0, 0
	var failures []string
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".gguf")
		ok := t.Run(base, func(t *testing.T) {
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatalf("case %s: cannot read %s: %v", base, path, err)
			}
			defer f.Close()
			c, err := readCase(f, path)
			if err != nil {
				t.Fatalf("case %s: %v", base, err)
			}
			for _, be := range []*Backend{nil, parityBackend(t)} {
				how := "graph"
				if be != nil {
					how = "backend+gallocr"
				}
				for _, nt := range []int{1, 3} {
					figs, err := runCase(f, c, nt, be)
					if err != nil {
						t.Fatalf("case %s (%s, %d threads, %s) FAILED\n  expr: %s\n  error: %v\n  figures so far: %v",
							c.name, c.kind, nt, how, c.expr, err, figs)
					}
					t.Logf("%s (%d threads, %s): %s", c.name, nt, how, strings.Join(figs, "; "))
				}
			}
		})
		if ok {
			passed++
		} else {
			failed++
			failures = append(failures, base)
		}
	}
	summary := fmt.Sprintf("parity: %d passed, %d failed", passed, failed)
	if failed > 0 {
		summary += " (" + strings.Join(failures, ", ") + ")"
	}
	t.Log(summary)
	fmt.Println(summary)
}

// ---------------------------------------------------------------- the runner's own tests

// TestOpTableCoversHeader checks that the interpreter knows every op
// constructor of the public header (functions returning a tensor between
// the "operations" and "graphs" sections of csrc/include/ggml.h).
func TestOpTableCoversHeader(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("csrc", "include", "ggml.h"))
	require.NoError(t, err)
	s := string(b)
	start := strings.Index(s, "// operations")
	end := strings.Index(s, "// graphs and automatic differentiation")
	require.True(t, start >= 0 && end > start, "section markers not found in csrc/include/ggml.h")
	re := regexp.MustCompile(`LM_T \* lm_ggml_([a-z0-9_]+)\s*\(`)
	var missing []string
	n := 0
	for _, m := range re.FindAllStringSubmatch(s[start:end], -1) {
		n++
		if _, ok := opTable[m[1]]; !ok {
			missing = append(missing, m[1])
		}
	}
	require.Greater(t, n, 150)
	require.Empty(t, missing, "op constructors unknown to the parity interpreter")
	for name := range opTable {
		require.True(t, regexp.MustCompile(`lm_ggml_`+name+`\s*\(`).MatchString(s), "%s is not in the header", name)
	}
}

func TestParitySexpr(t *testing.T) {
	e, err := parseSexpr("(set x0 x1 (nb x0 1) (nb x0 2) (nb x0 3) (+ (* 2 (nb x0 1)) 12))")
	require.NoError(t, err)
	require.Equal(t, "(set x0 x1 (nb x0 1) (nb x0 2) (nb x0 3) (+ (* 2 (nb x0 1)) 12))", e.String())
	for _, bad := range []string{"", "(", "(add x0", "add x0)", "(add x0))", "()", "((add) x0)"} {
		_, err := parseSexpr(bad)
		require.Error(t, err, "%q", bad)
	}
}

// TestParityInterpreter runs the interpreter on hand-built inputs.
func TestParityInterpreter(t *testing.T) {
	ctx := newCtx(t, 16<<20)
	x0 := ctx.NewTensor2D(TypeF32, 4, 3).SetName("x0")
	x1 := ctx.NewTensor2D(TypeF32, 4, 1).SetName("x1")
	pos := ctx.NewTensor1D(TypeI32, 3).SetName("x2")
	v0 := make([]float32, 12)
	for i := range v0 {
		v0[i] = float32(i) - 5
	}
	require.NoError(t, x0.SetFloat32s(v0))
	require.NoError(t, x1.SetFloat32s([]float32{1, 2, 3, 4}))
	require.NoError(t, pos.SetInt32s([]int32{0, 1, 2}))
	in := &interp{ctx: ctx, inputs: map[string]*Tensor{"x0": x0, "x1": x1, "x2": pos}}
	run := func(src string) *Tensor {
		t.Helper()
		e, err := parseSexpr(src)
		require.NoError(t, err)
		v, err := in.eval(e)
		require.NoError(t, err, src)
		require.Equal(t, vTensor, v.kind)
		g := ctx.NewGraph()
		g.BuildForward(v.t)
		require.NoError(t, g.Compute(2))
		return v.t
	}
	r := run("(scale (add x0 x1) 2)")
	got, err := r.Float32s()
	require.NoError(t, err)
	for i := range v0 {
		require.InDelta(t, 2*(v0[i]+float32(i%4+1)), got[i], 1e-6)
	}
	// helpers: row 1 of x0 via a view at byte offset nb1
	r = run("(cont (view_1d x0 4 (* 1 (nb x0 1))))")
	got, _ = r.Float32s()
	require.Equal(t, v0[4:8], got)
	r = run("(argsort (view_2d x0 4 3 (nb x0 1) 0) DESC)")
	idx, err := r.Int32s()
	require.NoError(t, err)
	require.Equal(t, []int32{3, 2, 1, 0}, idx[:4])
	r = run("(pool_1d x0 MAX 2 2 0)")
	require.Equal(t, []int{2, 3}, r.Shape())
	r = run("(cast x0 F16)")
	require.Equal(t, TypeF16, r.Type())
	r = run("(unary x0 RELU)")
	got, _ = r.Float32s()
	require.Equal(t, float32(0), got[0])
	r = run("(rope_ext (reshape_3d x0 4 1 3) x2 NULL 4 0 0 10000 1 0 1 32 1)")
	require.Equal(t, []int{4, 1, 3}, r.Shape())
	r = run("(soft_max_ext x0 NULL 0.5 0.0)")
	require.Equal(t, []int{4, 3}, r.Shape())

	for src, msg := range map[string]string{
		"(frobnicate x0)":              "unknown op",
		"(add x0)":                     "takes 2 arguments",
		"(add x0 1.5)":                 "want a tensor",
		"(scale x0 x1)":                "want a number",
		"(concat x0 x1 0.5)":           "want an integer",
		"(add x0 x9)":                  "unknown input",
		"(mul_mat x0 x2)":              "MulMat",
		"(map_custom1 x0 NULL 1 NULL)": "callback",
		"(argsort x0 SIDEWAYS)":        "want an integer",
	} {
		e, err := parseSexpr(src)
		require.NoError(t, err)
		_, err = in.eval(e)
		require.Error(t, err, src)
		require.Contains(t, err.Error(), msg, src)
	}
}

func TestParityNMSE(t *testing.T) {
	e, err := nmse([]float32{1, 2, float32(math.Inf(-1))}, []float32{1, 2, float32(math.Inf(-1))})
	require.NoError(t, err)
	require.Zero(t, e)
	e, err = nmse([]float32{1.1, 2}, []float32{1, 2})
	require.NoError(t, err)
	require.InDelta(t, 0.01/5, e, 1e-9)
	_, err = nmse([]float32{1, 0}, []float32{1, float32(math.Inf(1))})
	require.Error(t, err)
	_, err = nmse([]float32{float32(math.NaN())}, []float32{1})
	require.Error(t, err)
	e, err = nmse([]float32{0, 0}, []float32{0, 0})
	require.NoError(t, err)
	require.Zero(t, e)
}

// ---------------------------------------------------------------- fuzzing the interpreter

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
	if p, ok := shareddata.Find("parity", "ops", "INDEX.tsv"); ok {
		if idx, err := os.ReadFile(p); err == nil {
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
