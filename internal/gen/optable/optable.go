// Command optable writes the op tables of ggml-go from their one description:
// the op enums of csrc/include/ggml.h, where each enumerator of enum
// lm_ggml_op carries its facts in a trailing "// op:" comment (the syntax is
// documented above the enum). From them it writes
//
//	csrc/core/ggml-names.c          lm_ggml_op_name/symbol and lm_ggml_unary_op_name tables
//	csrc/backend/ggml-op-inplace.h  lm_ggml_op_can_inplace, the graph allocator's in-place rule
//	csrc/rpc/rpc-ops.h              the ops an RPC server rebuilds (rb_<op>) or takes as sent
//	csrc/cpu/ggml-cpu-kernels.c     lm_cpu_kernels, the CPU engine's kernel descriptor (lm_cpu_op_<op>) of each op
//	enums_ops.go                    the Go Op and UnaryOp constants
//
// Run it with go generate in the module root (enums.go has the directive);
// -root names the module root otherwise. The outputs are committed, so that
// C programs build without Go; a test of this package fails when one of them
// is not what the header gives.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// header is the description, relative to the module root.
const header = "csrc/include/ggml.h"

// generator names this program in the "Code generated" lines.
const generator = "go run ./internal/gen/optable"

// Op is one enumerator with its facts.
type Op struct {
	Enum    string // LM_GGML_OP_ADD
	Value   int
	Name    string // lm_ggml_op_name: ADD
	Symbol  string // a C string literal, quotes included ("x+y"); ops only
	Go      string // Go constant without its prefix: Add
	Was     string // a deprecated Go name without its prefix, or ""
	Inplace bool
	RPC     string // "", "rebuild" or "view"
	CPU     bool   // has a CPU kernel descriptor lm_cpu_op_<op>
	Line    int    // in the header
}

// Enum is one of the two enums.
type Enum struct {
	CName  string // lm_ggml_op
	Prefix string // LM_GGML_OP_
	Ops    []Op
	Count  int // value of <Prefix>COUNT
}

// Table is the description: the ops and the unary ops.
type Table struct {
	Ops, Unary Enum
}

var (
	enumeratorRE = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)\s*(?:=\s*([0-9]+)\s*)?,\s*(?://(.*))?$`)
	upperRE      = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	goNameRE     = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// Parse reads the two op enums of ggml.h.
func Parse(src []byte) (*Table, error) {
	t := &Table{}
	var err error
	if t.Ops, err = parseEnum(src, "lm_ggml_op", "LM_GGML_OP_", true); err != nil {
		return nil, err
	}
	if t.Unary, err = parseEnum(src, "lm_ggml_unary_op", "LM_GGML_UNARY_OP_", false); err != nil {
		return nil, err
	}
	return t, nil
}

func parseEnum(src []byte, cname, prefix string, isOp bool) (Enum, error) {
	e := Enum{CName: cname, Prefix: prefix, Count: -1}
	lines := strings.Split(string(src), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "enum "+cname+" {" {
			if start >= 0 {
				return e, fmt.Errorf("%s:%d: enum %s defined twice", header, i+1, cname)
			}
			start = i
		}
	}
	if start < 0 {
		return e, fmt.Errorf("%s: no line \"enum %s {\"", header, cname)
	}
	names := map[string]int{}
	goNames := map[string]int{}
	next := 0
	for i := start + 1; ; i++ {
		if i >= len(lines) {
			return e, fmt.Errorf("%s:%d: enum %s does not end", header, start+1, cname)
		}
		ln := i + 1
		l := strings.TrimSpace(lines[i])
		if l == "};" {
			break
		}
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		if e.Count >= 0 {
			return e, fmt.Errorf("%s:%d: %s: nothing may follow %sCOUNT", header, ln, l, prefix)
		}
		m := enumeratorRE.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(m[1], prefix) {
			return e, fmt.Errorf("%s:%d: %q is not one enumerator %s... a line, with an optional value and comment", header, ln, l, prefix)
		}
		if strings.HasSuffix(l, "\\") {
			return e, fmt.Errorf("%s:%d: a line comment ending in a backslash continues on the next line", header, ln)
		}
		if m[2] != "" {
			v, err := strconv.Atoi(m[2])
			if err != nil {
				return e, fmt.Errorf("%s:%d: %v", header, ln, err)
			}
			next = v
		}
		value := next
		next++
		short := strings.TrimPrefix(m[1], prefix)
		comment, facts := m[3], ""
		hasFacts := false
		if c := strings.TrimSpace(comment); strings.HasPrefix(c, "op:") {
			facts, hasFacts = strings.TrimPrefix(c, "op:"), true
		}
		if short == "COUNT" {
			if hasFacts {
				return e, fmt.Errorf("%s:%d: %sCOUNT is not an op", header, ln, prefix)
			}
			e.Count = value
			continue
		}
		if value != len(e.Ops) {
			return e, fmt.Errorf("%s:%d: %s = %d: the ops must be numbered 0, 1, 2, ... (the tables are indexed by them)", header, ln, m[1], value)
		}
		if isOp && !hasFacts {
			return e, fmt.Errorf("%s:%d: %s has no \"// op: sym=...\" comment", header, ln, m[1])
		}
		op := Op{Enum: m[1], Value: value, Name: short, Go: camel(short), Line: ln}
		if err := op.parseFacts(facts, isOp); err != nil {
			return e, fmt.Errorf("%s:%d: %s: %v", header, ln, m[1], err)
		}
		if j, dup := names[op.Name]; dup {
			return e, fmt.Errorf("%s:%d: name %s is also the name of line %d", header, ln, op.Name, j)
		}
		names[op.Name] = ln
		for _, g := range []string{op.Go, op.Was} {
			if g == "" {
				continue
			}
			if j, dup := goNames[g]; dup {
				return e, fmt.Errorf("%s:%d: Go name %s is also a Go name of line %d", header, ln, g, j)
			}
			goNames[g] = ln
		}
		e.Ops = append(e.Ops, op)
	}
	if e.Count < 0 {
		return e, fmt.Errorf("%s: enum %s has no %sCOUNT", header, cname, prefix)
	}
	if len(e.Ops) == 0 {
		return e, fmt.Errorf("%s: enum %s has no ops", header, cname)
	}
	// OpCount and UnaryOpCount
	if j, dup := goNames[map[bool]string{true: "Count", false: "OpCount"}[isOp]]; dup {
		return e, fmt.Errorf("%s:%d: that Go name is the count's", header, j)
	}
	return e, nil
}

// parseFacts reads the facts after "op:".
func (op *Op) parseFacts(s string, isOp bool) error {
	seen := map[string]bool{}
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		var key, val string
		n := strings.IndexAny(s, " \t=")
		if n < 0 {
			key, s = s, ""
		} else {
			key, s = s[:n], s[n:]
		}
		hasVal := strings.HasPrefix(s, "=")
		if hasVal {
			s = s[1:]
			if key == "sym" {
				lit, rest, err := cString(s)
				if err != nil {
					return err
				}
				val, s = lit, rest
				if s != "" && s[0] != ' ' && s[0] != '\t' {
					return fmt.Errorf("sym=%s: a space must follow the string", val)
				}
			} else {
				n := strings.IndexAny(s, " \t")
				if n < 0 {
					n = len(s)
				}
				val, s = s[:n], s[n:]
			}
		}
		if seen[key] {
			return fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		if !isOp && (key == "sym" || key == "inplace" || key == "rpc" || key == "cpu") {
			return fmt.Errorf("%s: not a fact of a unary op (name=, go=, was=)", key)
		}
		switch {
		case key == "sym" && hasVal:
			op.Symbol = val
		case key == "name" && hasVal:
			if !upperRE.MatchString(val) {
				return fmt.Errorf("name=%s: want upper-case letters, digits and _", val)
			}
			op.Name = val
		case (key == "go" || key == "was") && hasVal:
			if !goNameRE.MatchString(val) {
				return fmt.Errorf("%s=%s: want a Go name that starts with an upper-case letter", key, val)
			}
			if key == "go" {
				op.Go = val
			} else {
				op.Was = val
			}
		case key == "inplace" && !hasVal:
			op.Inplace = true
		case key == "rpc" && !hasVal:
			op.RPC = "rebuild"
		case key == "rpc" && val == "view":
			op.RPC = "view"
		case key == "cpu" && !hasVal:
			op.CPU = true
		default:
			if hasVal {
				key += "=" + val
			}
			return fmt.Errorf("unknown fact %q (see the comment above enum lm_ggml_op)", key)
		}
	}
	if isOp && op.Symbol == "" {
		return fmt.Errorf("no sym=\"...\"")
	}
	if op.Was != "" && op.Was == op.Go {
		return fmt.Errorf("was=%s is its Go name", op.Was)
	}
	return nil
}

// cString cuts the C string literal at the start of s.
func cString(s string) (lit, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", fmt.Errorf(`sym=: want a C string literal "..."`)
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[:i+1], s[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("sym=%s: the string does not end", s)
}

// camel spells an upper-case C name in Go: SUM_ROWS is SumRows.
func camel(s string) string {
	var b strings.Builder
	for _, p := range strings.Split(s, "_") {
		if p == "" {
			continue
		}
		b.WriteString(p[:1])
		b.WriteString(strings.ToLower(p[1:]))
	}
	return b.String()
}

// File is one generated file: its path from the module root and its text.
type File struct {
	Path string
	Data []byte
}

// Generate writes every file from the table.
func Generate(t *Table) ([]File, error) {
	goSrc, err := goFile(t)
	if err != nil {
		return nil, err
	}
	return []File{
		{"csrc/core/ggml-names.c", namesC(t)},
		{"csrc/backend/ggml-op-inplace.h", inplaceH(t)},
		{"csrc/rpc/rpc-ops.h", rpcH(t)},
		{"csrc/cpu/ggml-cpu-kernels.c", cpuKernelsC(t)},
		{"enums_ops.go", goSrc},
	}, nil
}

func cHead(b *bytes.Buffer) {
	fmt.Fprintf(b, "// Code generated by %s from %s; DO NOT EDIT.\n", generator, header)
}

// countAssert makes a C build fail when the header has more or fewer ops than
// the generated file was made from (ggml.h edited, go generate not run).
func countAssert(b *bytes.Buffer, e *Enum) {
	fmt.Fprintf(b, "_Static_assert(%sCOUNT == %d, \"%s changed: run go generate in the module root\");\n", e.Prefix, e.Count, header)
}

func width(ops []Op, f func(Op) string) int {
	w := 0
	for _, o := range ops {
		w = max(w, len(f(o)))
	}
	return w
}

func namesC(t *Table) []byte {
	var b bytes.Buffer
	cHead(&b)
	b.WriteString(`//
// ggml-names.c - names and symbols of the ops and unary ops (the strings the
// ggml API returns; the symbols are escaped for graphviz labels). The
// strings are ggml's (MIT License, Copyright (c) 2023-2024 The ggml authors;
// the notice is in ggml-iq-tables.c).
#include "../base/ggml-impl.h"
`)
	table := func(e *Enum, name string, val func(Op) string) {
		fmt.Fprintf(&b, "\nconst char * const %s[%sCOUNT] = {\n", name, e.Prefix)
		w := width(e.Ops, func(o Op) string { return o.Enum }) + 2
		for _, o := range e.Ops {
			fmt.Fprintf(&b, "    %-*s = %s,\n", w, "["+o.Enum+"]", val(o))
		}
		b.WriteString("};\n")
	}
	table(&t.Ops, "lm_ggml_op_name_table", func(o Op) string { return strconv.Quote(o.Name) })
	table(&t.Ops, "lm_ggml_op_symbol_table", func(o Op) string { return o.Symbol })
	table(&t.Unary, "lm_ggml_unary_op_name_table", func(o Op) string { return strconv.Quote(o.Name) })
	b.WriteString("\n")
	countAssert(&b, &t.Ops)
	countAssert(&b, &t.Unary)
	return b.Bytes()
}

func inplaceH(t *Table) []byte {
	var b bytes.Buffer
	cHead(&b)
	b.WriteString(`//
// ggml-op-inplace.h - the ops marked inplace in enum lm_ggml_op: the graph
// allocator may give such a node the memory of an operand that dies with it.
#pragma once

#include "ggml.h"

#include <stdbool.h>

`)
	countAssert(&b, &t.Ops)
	b.WriteString(`
static inline bool lm_ggml_op_can_inplace(enum lm_ggml_op op) {
    switch (op) {
`)
	for _, o := range t.Ops.Ops {
		if o.Inplace {
			fmt.Fprintf(&b, "        case %s:\n", o.Enum)
		}
	}
	b.WriteString(`            return true;
        default:
            return false;
    }
}
`)
	return b.Bytes()
}

func rpcH(t *Table) []byte {
	var b bytes.Buffer
	cHead(&b)
	b.WriteString(`//
// rpc-ops.h - what an RPC server does with each op, from the rpc facts of enum
// lm_ggml_op, as lists for the caller's macro X:
//
//   LM_RPC_REBUILT_OPS(X)  X(op, rb_fn) for each op marked rpc: the function
//                          in rpc-graph.c that builds the op again
//   LM_RPC_VIEW_OPS(X)     X(op) for each op marked rpc=view: taken as sent
//
// Ops in neither list are refused.
#pragma once

#include "ggml.h"

`)
	countAssert(&b, &t.Ops)
	list := func(name, kind string, item func(Op) string) {
		fmt.Fprintf(&b, "\n#define %s(X) \\\n", name)
		var items []string
		for _, o := range t.Ops.Ops {
			if o.RPC == kind {
				items = append(items, item(o))
			}
		}
		for i, it := range items {
			if i < len(items)-1 {
				fmt.Fprintf(&b, "    %s \\\n", it)
			} else {
				fmt.Fprintf(&b, "    %s\n", it)
			}
		}
	}
	list("LM_RPC_REBUILT_OPS", "rebuild", func(o Op) string { return "X(" + o.Enum + ", " + rebuildFn(&t.Ops, o) + ")" })
	list("LM_RPC_VIEW_OPS", "view", func(o Op) string { return "X(" + o.Enum + ")" })
	return b.Bytes()
}

// rebuildFn names the function that rebuilds an op marked rpc: LM_GGML_OP_SUM_ROWS is rb_sum_rows.
func rebuildFn(e *Enum, o Op) string {
	return "rb_" + strings.ToLower(strings.TrimPrefix(o.Enum, e.Prefix))
}

func cpuKernelsC(t *Table) []byte {
	var b bytes.Buffer
	cHead(&b)
	b.WriteString(`//
// ggml-cpu-kernels.c - lm_cpu_kernels, the CPU engine's kernel of each op
// marked cpu in enum lm_ggml_op: the descriptor lm_cpu_op_ + the enumerator's
// suffix in lower case, defined in the ops-*.c file that computes the op.
// The other ops have none (NULL).
#include "ggml-cpu-impl.h"

`)
	countAssert(&b, &t.Ops)
	b.WriteString("\n")
	var ops []Op
	for _, o := range t.Ops.Ops {
		if o.CPU {
			ops = append(ops, o)
		}
	}
	for _, o := range ops {
		fmt.Fprintf(&b, "extern const struct lm_cpu_op %s;\n", cpuOpName(&t.Ops, o))
	}
	fmt.Fprintf(&b, "\nconst struct lm_cpu_op * const lm_cpu_kernels[%sCOUNT] = {\n", t.Ops.Prefix)
	w := width(ops, func(o Op) string { return o.Enum }) + 2
	for _, o := range ops {
		fmt.Fprintf(&b, "    %-*s = &%s,\n", w, "["+o.Enum+"]", cpuOpName(&t.Ops, o))
	}
	b.WriteString("};\n")
	return b.Bytes()
}

// cpuOpName names the CPU kernel descriptor of an op marked cpu: LM_GGML_OP_SUM_ROWS has lm_cpu_op_sum_rows.
func cpuOpName(e *Enum, o Op) string {
	return "lm_cpu_op_" + strings.ToLower(strings.TrimPrefix(o.Enum, e.Prefix))
}

func goFile(t *Table) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `// Code generated by %s from %s; DO NOT EDIT.
// The numbering is ggml's (MIT License, Copyright (c) 2023-2024 The ggml authors).

package ggml

// Op is a graph operation (lm_ggml_op).
type Op int32

// Operations, in the order of the C enum.
const (
`, generator, header)
	goConsts(&b, &t.Ops, "Op", "Op", "OpCount")
	goDeprecated(&b, &t.Ops, "Op", `// Deprecated names of ops, kept for compatibility: the package spells
// initialisms and dimension suffixes as its methods do (MulMatID, Conv1D,
// Im2Col, RMSNorm, SSMConv, RWKVWKV6, OptStepAdamW).
`)
	b.WriteString(`
// UnaryOp is an element-wise function of LM_GGML_OP_UNARY (lm_ggml_unary_op).
type UnaryOp int32

// Unary operations, in the order of the C enum.
const (
`)
	goConsts(&b, &t.Unary, "UnaryOp", "Unary", "UnaryOpCount")
	goDeprecated(&b, &t.Unary, "Unary", "// Deprecated names of unary ops, kept for compatibility.\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("enums_ops.go: %v\n%s", err, b.Bytes())
	}
	return src, nil
}

func goConsts(b *bytes.Buffer, e *Enum, typ, prefix, count string) {
	for _, o := range e.Ops {
		fmt.Fprintf(b, "\t%s%s %s = %d\n", prefix, o.Go, typ, o.Value)
	}
	fmt.Fprintf(b, "\t%s %s = %d\n)\n", count, typ, e.Count)
}

func goDeprecated(b *bytes.Buffer, e *Enum, prefix, doc string) {
	type alias struct{ old, cur string }
	var as []alias
	for _, o := range e.Ops {
		if o.Was != "" {
			as = append(as, alias{prefix + o.Was, prefix + o.Go})
		}
	}
	if len(as) == 0 {
		return
	}
	sort.Slice(as, func(i, j int) bool { return as[i].old < as[j].old })
	b.WriteString("\n" + doc + "const (\n")
	for _, a := range as {
		fmt.Fprintf(b, "\t// Deprecated: use %s.\n\t%s = %s\n", a.cur, a.old, a.cur)
	}
	b.WriteString(")\n")
}
