package ggml

import (
	"fmt"
	"slices"
	"strings"
)

// The rules of the ops in words. A check of the core that fails while an op
// is built comes back as its condition and place ("a->ne[0] == b->ne[0] &&
// ... (ctor-matmul.c:13)"). operandError looks the condition up here and
// says the rule for the operands the Go call passed (MulMat: "rows of a and b
// must have the same length (4 ≠ 5)"); the condition and place stay in
// OpError.Detail. A check without an entry reads as its condition.

// opRule is one check of the core put into words.
type opRule struct {
	file string   // the core's source file of the check
	cond string   // its condition as the core prints it; "..." at the end: a prefix
	ops  []string // the Go ops it serves, without "Inplace"; nil: every op
	say  func(x opnds) string
}

// opnds are an op's operands as the Go call passed them (nil for an
// optional operand not given), named as its parameters.
type opnds struct {
	names []string
	ts    []*Tensor
}

func (x opnds) ne(i, d int) int    { return x.ts[i].Ne()[d] }
func (x opnds) typ(i int) string   { return x.ts[i].Type().String() }
func (x opnds) name(i int) string  { return x.names[i] }
func (x opnds) shape(i int) string { return shapeText(x.ts[i]) }

// shapeText is "[3, 4]" for a tensor of 3 by 4 elements.
func shapeText(t *Tensor) string {
	return strings.Trim(strings.ReplaceAll(fmt.Sprint(t.Shape()), " ", ", "), "[]")
}

// opOperandNames names the operands of the ops whose parameters are not
// a, b, c, ... (the default).
var opOperandNames = map[string][]string{
	"FlashAttnExt": {"q", "k", "v", "mask"},
	"SoftMaxExt":   {"a", "mask"},
	"RopeExt":      {"a", "b", "freqFactors"},
	"MulMatID":     {"as", "b", "ids"},
}

func operandNames(op string, n int) []string {
	names := slices.Clone(opOperandNames[strings.TrimSuffix(op, "Inplace")])
	for i := len(names); i < n; i++ {
		names = append(names, string(rune('a'+i)))
	}
	return names
}

var (
	binaryOps = []string{"Add", "Sub", "Mul", "Div", "AddCast"}
	ropeOps   = []string{"Rope", "RopeExt", "RopeBack", "RopeExtBack", "RopeMulti"}
	softMax   = []string{"SoftMax", "SoftMaxExt"}
	flashAttn = []string{"FlashAttnExt"}
	reshapes  = []string{"Reshape", "Reshape1D", "Reshape2D", "Reshape3D", "Reshape4D"}
)

// broadcastRule is the rule of lm_ggml_can_repeat(x[src], x[dst]): src
// repeats a whole number of times along every dimension of dst.
func broadcastRule(x opnds, src, dst int) string {
	for d := range 4 {
		s, t := x.ne(src, d), x.ne(dst, d)
		if s == 0 || t%s != 0 {
			return fmt.Sprintf("%s must broadcast over %s: each dimension of %s must divide %s's (dimension %d: %d does not divide %d)",
				x.name(src), x.name(dst), x.name(src), x.name(dst), d, s, t)
		}
	}
	return fmt.Sprintf("%s must broadcast over %s: each dimension of %s must divide %s's", x.name(src), x.name(dst), x.name(src), x.name(dst))
}

// multiplesRule says that dimensions 2 and 3 of x[big] must be whole
// multiples of x[small]'s (heads and batches broadcast).
func multiplesRule(x opnds, big, small int) string {
	return fmt.Sprintf("%s's dimensions 2 and 3 (%d, %d) must be whole multiples of %s's (%d, %d)",
		x.name(big), x.ne(big, 2), x.ne(big, 3), x.name(small), x.ne(small, 2), x.ne(small, 3))
}

func rowsRule(x opnds, i, j int) string {
	return fmt.Sprintf("rows of %s and %s must have the same length (%d ≠ %d)", x.name(i), x.name(j), x.ne(i, 0), x.ne(j, 0))
}

var opRules = []opRule{
	// mul_mat
	{"ctor-matmul.c", "a->ne[0] == b->ne[0] && mm_bcast_ok...", []string{"MulMat"}, func(x opnds) string {
		if x.ne(0, 0) != x.ne(1, 0) {
			return rowsRule(x, 0, 1)
		}
		return multiplesRule(x, 1, 0)
	}},
	{"ctor-matmul.c", "!lm_ggml_is_transposed(a)", []string{"MulMat"}, func(x opnds) string {
		return "a must not be transposed (Cont makes a contiguous copy)"
	}},

	// add, sub, mul, div
	{"ctor-elementwise.c", "lm_ggml_can_repeat(b, a)", binaryOps, func(x opnds) string { return broadcastRule(x, 1, 0) }},
	{"ctor-elementwise.c", "b->ne[0] == a->ne[0] && lm_ggml_can_repeat(b, a)", binaryOps, func(x opnds) string {
		if x.ne(0, 0) != x.ne(1, 0) {
			return rowsRule(x, 0, 1)
		}
		return broadcastRule(x, 1, 0)
	}},
	{"ctor-elementwise.c", "lm_is_plain_float(b->type)", binaryOps, func(x opnds) string {
		return fmt.Sprintf("b must be f32, f16 or bf16 (b is %s)", x.typ(1))
	}},

	// concat
	{"ctor-shape.c", "dim >= 0 && dim < LM_GGML_MAX_DIMS", []string{"Concat"}, func(x opnds) string {
		return "dim must be 0, 1, 2 or 3"
	}},
	{"ctor-shape.c", "a->type == b->type", []string{"Concat"}, func(x opnds) string {
		return fmt.Sprintf("a and b must have the same type (%s ≠ %s)", x.typ(0), x.typ(1))
	}},
	{"ctor-shape.c", "a->ne[d] == b->ne[d]", []string{"Concat"}, func(x opnds) string {
		var differ []string
		for d := range 4 {
			if x.ne(0, d) != x.ne(1, d) {
				differ = append(differ, fmt.Sprintf("%d (%d ≠ %d)", d, x.ne(0, d), x.ne(1, d)))
			}
		}
		return "a and b must have the same size in every dimension but the one joined; they differ in dimensions " +
			strings.Join(differ, ", ")
	}},

	// cpy
	{"ctor-copy.c", "lm_ggml_nelements(a) == lm_ggml_nelements(b)", []string{"Cpy"}, func(x opnds) string {
		return fmt.Sprintf("a and b must have the same number of elements (%d ≠ %d)",
			x.ts[0].NElements(), x.ts[1].NElements())
	}},

	// get_rows
	{"ctor-copy.c", "a->ne[2] == b->ne[1]", []string{"GetRows"}, func(x opnds) string {
		return fmt.Sprintf("b holds a list of row numbers per matrix of a: its dimension 1 (%d) must equal a's dimension 2 (%d)",
			x.ne(1, 1), x.ne(0, 2))
	}},
	{"ctor-copy.c", "b->ne[3] == 1", []string{"GetRows"}, func(x opnds) string {
		return fmt.Sprintf("b must have at most 3 dimensions (its dimension 3 is %d)", x.ne(1, 3))
	}},
	{"ctor-copy.c", "b->type == LM_GGML_TYPE_I32", []string{"GetRows"}, func(x opnds) string {
		return fmt.Sprintf("the row numbers b must be i32 (b is %s)", x.typ(1))
	}},
	{"ctor-copy.c", "b->ne[2] <= a->ne[3]...", []string{"GetRows"}, func(x opnds) string {
		return fmt.Sprintf("b's batches (dimension 2: %d) must not outnumber a's (dimension 3: %d)", x.ne(1, 2), x.ne(0, 3))
	}},

	// reshape (the element count and the views' bounds are said by the core)
	{"ggml.c", "lm_ggml_is_contiguous(a)...", reshapes, func(x opnds) string {
		return "a must be contiguous to be reshaped (Cont makes a contiguous copy)"
	}},

	// rope
	{"ctor-nn.c", "lm_ggml_is_vector(b)", ropeOps, func(x opnds) string {
		return fmt.Sprintf("the positions b must be a vector (b is [%s])", x.shape(1))
	}},
	{"ctor-nn.c", "b->type == LM_GGML_TYPE_I32", ropeOps, func(x opnds) string {
		return fmt.Sprintf("the positions b must be i32 (b is %s)", x.typ(1))
	}},
	{"ctor-nn.c", "a->ne[2] == b->ne[0]", ropeOps, func(x opnds) string {
		return fmt.Sprintf("b holds one position per token: its length (%d) must equal a's dimension 2 (%d)", x.ne(1, 0), x.ne(0, 2))
	}},
	{"ctor-nn.c", "c->type == LM_GGML_TYPE_F32", ropeOps, func(x opnds) string {
		return fmt.Sprintf("the frequency factors must be f32 (they are %s)", x.typ(2))
	}},
	{"ctor-nn.c", "c->ne[0] >= n_dims / 2", ropeOps, func(x opnds) string {
		return fmt.Sprintf("the frequency factors must hold NDims/2 values or more (they hold %d)", x.ne(2, 0))
	}},
	{"ctor-nn.c", "a->type == LM_GGML_TYPE_F32 || a->type == LM_GGML_TYPE_F16", ropeOps, func(x opnds) string {
		return fmt.Sprintf("a must be f32 or f16 (a is %s)", x.typ(0))
	}},
	{"ctor-nn.c", "n_dims >= 0 && n_dims % 2 == 0 && n_dims <= a->ne[0]", ropeOps, func(x opnds) string {
		return fmt.Sprintf("the rotated dimensions must be an even number, at most a's row length (%d)", x.ne(0, 0))
	}},

	// soft_max_ext's mask
	{"ctor-norm.c", "mask->type == LM_GGML_TYPE_F16 || mask->type == LM_GGML_TYPE_F32", softMax, func(x opnds) string {
		return fmt.Sprintf("the mask must be f16 or f32 (it is %s)", x.typ(1))
	}},
	{"ctor-norm.c", "lm_ggml_is_contiguous(mask)", softMax, func(x opnds) string { return "the mask must be contiguous" }},
	{"ctor-norm.c", "lm_ggml_is_matrix(mask)", softMax, func(x opnds) string {
		return fmt.Sprintf("the mask must be a matrix (it is [%s])", x.shape(1))
	}},
	{"ctor-norm.c", "mask->ne[0] == a->ne[0]", softMax, func(x opnds) string {
		return fmt.Sprintf("the mask's rows must be as long as a's (%d ≠ %d)", x.ne(1, 0), x.ne(0, 0))
	}},
	{"ctor-norm.c", "mask->ne[1] >= a->ne[1]", softMax, func(x opnds) string {
		return fmt.Sprintf("the mask must have a row for each of a's %d rows (it has %d)", x.ne(0, 1), x.ne(1, 1))
	}},
	{"ctor-norm.c", "mask", softMax, func(x opnds) string { return "maxBias > 0 needs a mask" }},

	// flash_attn_ext
	{"ctor-attn.c", "k->ne[0] == q->ne[0] && q->ne[2] % k->ne[2] == 0...", flashAttn, func(x opnds) string {
		if x.ne(0, 0) != x.ne(1, 0) {
			return rowsRule(x, 0, 1)
		}
		return multiplesRule(x, 0, 1)
	}},
	{"ctor-attn.c", "q->ne[2] % v->ne[2] == 0 && q->ne[3] % v->ne[3] == 0", flashAttn, func(x opnds) string {
		return multiplesRule(x, 0, 2)
	}},
	{"ctor-attn.c", "v->ne[1] == k->ne[1]", flashAttn, func(x opnds) string {
		return fmt.Sprintf("k and v must have one row per key each (%d ≠ %d)", x.ne(1, 1), x.ne(2, 1))
	}},
	{"ctor-attn.c", "lm_ggml_is_contiguous(mask)", flashAttn, func(x opnds) string { return "the mask must be contiguous" }},
	{"ctor-attn.c", "mask->ne[2] == 1", flashAttn, func(x opnds) string {
		return fmt.Sprintf("the mask must be a matrix (it is [%s])", x.shape(3))
	}},
	{"ctor-attn.c", "mask->ne[3] == 1", flashAttn, func(x opnds) string {
		return fmt.Sprintf("the mask must be a matrix (it is [%s])", x.shape(3))
	}},
	{"ctor-attn.c", "mask->ne[1] >= LM_GGML_PAD(q->ne[1], LM_GGML_KQ_MASK_PAD)...", flashAttn, func(x opnds) string {
		nq := x.ne(0, 1)
		want := (nq + KQMaskPad - 1) / KQMaskPad * KQMaskPad
		return fmt.Sprintf("the mask must have at least %d rows, q's %d queries rounded up to a multiple of KQMaskPad (%d); it has %d",
			want, nq, KQMaskPad, x.ne(3, 1))
	}},
	{"ctor-attn.c", "mask->type == LM_GGML_TYPE_F16", flashAttn, func(x opnds) string {
		return fmt.Sprintf("the mask must be f16 (it is %s)", x.typ(3))
	}},
	{"ctor-attn.c", "mask->ne[0] >= k->ne[1]", flashAttn, func(x opnds) string {
		return fmt.Sprintf("the mask must have a column for each of k's %d keys (it has %d)", x.ne(1, 1), x.ne(3, 0))
	}},
	{"ctor-attn.c", "mask", flashAttn, func(x opnds) string { return "maxBias > 0 needs a mask" }},
	{"ctor-attn.c", "q->type == LM_GGML_TYPE_F32", flashAttn, func(x opnds) string {
		return fmt.Sprintf("q must be f32 (q is %s)", x.typ(0))
	}},
}

// ruleFor finds the rule of op's failed check cond in file.
func ruleFor(op, file, cond string) *opRule {
	base := strings.TrimSuffix(op, "Inplace")
	for i := range opRules {
		r := &opRules[i]
		if r.file != file || (r.ops != nil && !slices.Contains(r.ops, base)) {
			continue
		}
		if p, ok := strings.CutSuffix(r.cond, "..."); (ok && strings.HasPrefix(cond, p)) || cond == r.cond {
			return r
		}
	}
	return nil
}

// coreCheck splits a message of the core into what failed (an assertion's
// condition, or the core's own words) and where ("ctor-matmul.c:13").
func coreCheck(msg string) (what, file, at string, assertion bool) {
	what = msg
	if i := strings.LastIndex(msg, " ("); i >= 0 && strings.HasSuffix(msg, ")") {
		loc := msg[i+2 : len(msg)-1]
		if f, _, ok := strings.Cut(loc, ":"); ok && strings.HasSuffix(f, ".c") {
			what, file, at = msg[:i], f, loc
		}
	}
	if cond, ok := strings.CutPrefix(what, "LM_GGML_ASSERT("); ok {
		if c, ok := strings.CutSuffix(cond, ") failed"); ok {
			return c, file, at, true
		}
	}
	return what, file, at, false
}

// sayRule is the rule's words for the operands; the condition itself if
// the rule cannot read them (an operand missing that it expects).
func sayRule(r *opRule, x opnds, cond string) (words string) {
	defer func() {
		if recover() != nil {
			words = cond + " does not hold"
		}
	}()
	return r.say(x)
}
