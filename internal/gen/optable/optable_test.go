package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// moduleRoot is the module root, found from this package's folder
// (internal/gen/optable), where go test runs.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/ggml-go/ggml\n") {
		t.Fatalf("%s is not the module root (go.mod: %v)", root, err)
	}
	return root
}

// The committed files are what the header gives: the CI check that nobody
// edited a generated file or ggml.h's op enums without running go generate.
func TestGeneratedFilesAreFresh(t *testing.T) {
	root := moduleRoot(t)
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Errorf("%s: %v (run go generate in the module root)", f.Path, err)
			continue
		}
		if bytes.Equal(got, f.Data) {
			continue
		}
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(f.Data), "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		line := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end of file)"
		}
		t.Errorf("%s is stale (run go generate in the module root); line %d is\n\t%s\nwant\n\t%s", f.Path, i+1, line(gl), line(wl))
	}
}

func TestHeaderTable(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(moduleRoot(t), header))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Ops.Ops) != tab.Ops.Count || len(tab.Unary.Ops) != tab.Unary.Count {
		t.Fatalf("%d ops, COUNT %d; %d unary ops, COUNT %d", len(tab.Ops.Ops), tab.Ops.Count, len(tab.Unary.Ops), tab.Unary.Count)
	}
	byName := map[string]Op{}
	for _, o := range tab.Ops.Ops {
		byName[o.Name] = o
	}
	// a few facts, spelled out
	for _, c := range []struct {
		name, sym, goName, was string
		inplace                bool
		rpc                    string
		cpu                    bool
	}{
		{"NONE", `"none"`, "None", "", false, "view", false},
		{"ADD", `"x+y"`, "Add", "", true, "rebuild", true},
		{"SQRT", `"√x"`, "Sqrt", "", true, "rebuild", true},
		{"SET", `"y-\\>view(x)"`, "Set", "", false, "rebuild", true},
		{"RMS_NORM", `"rms_norm(x)"`, "RMSNorm", "RmsNorm", true, "rebuild", true},
		{"MUL_MAT", `"X*Y"`, "MulMat", "", false, "rebuild", true},
		{"VIEW", `"view(x)"`, "View", "", false, "view", false},
		{"FLASH_ATTN_BACK", `"flash_attn_back(x)"`, "FlashAttnBack", "", false, "", false},
		{"MAP_CUSTOM1", `"custom(x)"`, "MapCustom1", "", false, "", true},
		{"OPT_STEP_ADAMW", `"adamw(x)"`, "OptStepAdamW", "OptStepAdamw", false, "rebuild", true},
	} {
		o, ok := byName[c.name]
		if !ok {
			t.Errorf("no op %s", c.name)
			continue
		}
		if o.Symbol != c.sym || o.Go != c.goName || o.Was != c.was || o.Inplace != c.inplace || o.RPC != c.rpc || o.CPU != c.cpu {
			t.Errorf("%s: got %+v", c.name, o)
		}
	}
	if u := tab.Unary.Ops[len(tab.Unary.Ops)-1]; u.Name != "EXP" || u.Go != "Exp" {
		t.Errorf("last unary op: %+v", u)
	}
}

func TestParseErrors(t *testing.T) {
	const unary = "enum lm_ggml_unary_op {\n    LM_GGML_UNARY_OP_ABS,\n    LM_GGML_UNARY_OP_COUNT,\n};\n"
	ops := func(body string) []byte {
		return []byte("enum lm_ggml_op {\n" + body + "    LM_GGML_OP_COUNT,\n};\n" + unary)
	}
	if _, err := Parse(ops("    LM_GGML_OP_NONE = 0, // op: sym=\"none\" rpc=view\n    LM_GGML_OP_DUP,  // op: sym=\"a b\" name=DUP2 go=Copy was=Dup inplace rpc cpu\n")); err != nil {
		t.Fatalf("a good table: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{"    LM_GGML_OP_NONE,\n", "no \"// op: sym=...\" comment"},
		{"    LM_GGML_OP_NONE, // op: rpc\n", "no sym="},
		{"    LM_GGML_OP_NONE, // op: sym=none\n", "C string literal"},
		{"    LM_GGML_OP_NONE, // op: sym=\"none\n", "does not end"},
		{"    LM_GGML_OP_NONE, // op: sym=\"none\"rpc\n", "a space must follow"},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" fast\n", "unknown fact \"fast\""},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" rpc=yes\n", "unknown fact \"rpc=yes\""},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" rpc rpc\n", "rpc given twice"},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" cpu=yes\n", "unknown fact \"cpu=yes\""},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" cpu cpu\n", "cpu given twice"},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" go=add\n", "want a Go name"},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" go=Count\n", "the count's"},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" go=A was=A\n", "is its Go name"},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\"\n    LM_GGML_OP_DUP, // op: sym=\"y\" go=None\n", "also a Go name"},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\"\n    LM_GGML_OP_DUP, // op: sym=\"y\" name=NONE\n", "also the name"},
		{"    LM_GGML_OP_NONE, LM_GGML_OP_DUP, // op: sym=\"x\"\n", "one enumerator"},
		{"    LM_GGML_OP_NONE = 1, // op: sym=\"x\"\n", "numbered 0, 1, 2"},
		{"    LM_GGML_OP_NONE, // op: sym=\"x\" \\\n", "backslash"},
		{"    LM_GGML_UNARY_OP_ABS, // op: sym=\"x\"\n", "one enumerator LM_GGML_OP_"},
		{"", "no ops"},
	} {
		_, err := Parse(ops(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got error %v, want one that says %q", c.src, err, c.want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"enum lm_ggml_op {\n    LM_GGML_OP_NONE, // op: sym=\"x\"\n};\n" + unary, "no LM_GGML_OP_COUNT"},
		{"enum lm_ggml_op {\n    LM_GGML_OP_NONE, // op: sym=\"x\"\n    LM_GGML_OP_COUNT,\n    LM_GGML_OP_X,\n};\n" + unary, "nothing may follow"},
		{"enum lm_ggml_op {\n    LM_GGML_OP_NONE, // op: sym=\"x\"\n    LM_GGML_OP_COUNT,\n", "does not end"},
		{"enum lm_ggml_op {\n    LM_GGML_OP_NONE, // op: sym=\"x\"\n    LM_GGML_OP_COUNT,\n};\n", "no line \"enum lm_ggml_unary_op {\""},
		{string(ops("    LM_GGML_OP_NONE, // op: sym=\"x\"\n")) + unary, "defined twice"},
		{"enum lm_ggml_op {\n    LM_GGML_OP_NONE, // op: sym=\"x\"\n    LM_GGML_OP_COUNT,\n};\nenum lm_ggml_unary_op {\n    LM_GGML_UNARY_OP_ABS, // op: inplace\n    LM_GGML_UNARY_OP_COUNT,\n};\n", "not a fact of a unary op"},
		{"enum lm_ggml_op {\n    LM_GGML_OP_NONE, // op: sym=\"x\"\n    LM_GGML_OP_COUNT,\n};\nenum lm_ggml_unary_op {\n    LM_GGML_UNARY_OP_ABS, // op: cpu\n    LM_GGML_UNARY_OP_COUNT,\n};\n", "not a fact of a unary op"},
	} {
		_, err := Parse([]byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got error %v, want one that says %q", c.src, err, c.want)
		}
	}
}

// Generate writes what a small table says, in each file.
func TestGenerateSmall(t *testing.T) {
	tab, err := Parse([]byte(`enum lm_ggml_op {
    LM_GGML_OP_NONE = 0,  // op: sym="none" rpc=view
    LM_GGML_OP_ADD_ONE,   // op: sym="x+1" go=AddOne1 was=AddOne inplace rpc cpu
    LM_GGML_OP_COUNT,
};
enum lm_ggml_unary_op {
    LM_GGML_UNARY_OP_ABS,
    LM_GGML_UNARY_OP_NEW_ABS, // op: go=NewAbs2 was=NewAbs
    LM_GGML_UNARY_OP_COUNT,
};
`))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(tab)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"csrc/core/ggml-names.c": {
			`[LM_GGML_OP_ADD_ONE] = "ADD_ONE",`, `[LM_GGML_OP_ADD_ONE] = "x+1",`, `[LM_GGML_UNARY_OP_NEW_ABS] = "NEW_ABS",`,
			`_Static_assert(LM_GGML_OP_COUNT == 2,`, `_Static_assert(LM_GGML_UNARY_OP_COUNT == 2,`,
		},
		"csrc/backend/ggml-op-inplace.h": {"        case LM_GGML_OP_ADD_ONE:\n            return true;"},
		"csrc/rpc/rpc-ops.h":             {"    X(LM_GGML_OP_ADD_ONE, rb_add_one)\n", "    X(LM_GGML_OP_NONE)\n"},
		"csrc/cpu/ggml-cpu-kernels.c": {
			"extern const struct lm_cpu_op lm_cpu_op_add_one;\n",
			"const struct lm_cpu_op * const lm_cpu_kernels[LM_GGML_OP_COUNT] = {\n    [LM_GGML_OP_ADD_ONE] = &lm_cpu_op_add_one,\n};\n",
			`_Static_assert(LM_GGML_OP_COUNT == 2,`,
		},
		"enums_ops.go": {
			"\tOpNone    Op = 0\n", "\tOpAddOne1 Op = 1\n", "\tOpCount   Op = 2\n", "\tOpAddOne = OpAddOne1\n",
			"\tUnaryNewAbs2 UnaryOp = 1\n", "\tUnaryNewAbs = UnaryNewAbs2\n", "\tUnaryOpCount UnaryOp = 2\n",
		},
	}
	for _, f := range files {
		if !strings.HasPrefix(string(f.Data), "// Code generated by ") || !strings.Contains(strings.SplitN(string(f.Data), "\n", 2)[0], "DO NOT EDIT.") {
			t.Errorf("%s: first line is not a Code generated ... DO NOT EDIT. line", f.Path)
		}
		// spaces in aligned columns do not matter here
		norm := strings.Join(strings.Fields(string(f.Data)), " ")
		for _, w := range want[f.Path] {
			if !strings.Contains(norm, strings.Join(strings.Fields(w), " ")) {
				t.Errorf("%s lacks %q:\n%s", f.Path, w, f.Data)
			}
		}
		delete(want, f.Path)
	}
	for p := range want {
		t.Errorf("no file %s", p)
	}
}

// The ops marked cpu are the ops whose descriptor a kernel file defines: a
// descriptor without the fact would never be used, and the fact without a
// descriptor fails only at link time.
func TestCPUDescriptorsMatchTheFacts(t *testing.T) {
	root := moduleRoot(t)
	src, err := os.ReadFile(filepath.Join(root, header))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{}
	for _, o := range tab.Ops.Ops {
		if o.CPU {
			marked[cpuOpName(&tab.Ops, o)] = true
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "csrc", "cpu", "ops-*.c"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no csrc/cpu/ops-*.c (%v)", err)
	}
	defRE := regexp.MustCompile(`(?m)^const struct lm_cpu_op (lm_cpu_op_[a-z0-9_]+)\s*=`)
	defined := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range defRE.FindAllSubmatch(b, -1) {
			name := string(m[1])
			if prev, dup := defined[name]; dup {
				t.Errorf("%s is defined in %s and %s", name, prev, filepath.Base(f))
			}
			defined[name] = filepath.Base(f)
			if !marked[name] {
				t.Errorf("%s defines %s, but its op is not marked cpu in %s", filepath.Base(f), name, header)
			}
		}
	}
	for name := range marked {
		if _, ok := defined[name]; !ok {
			t.Errorf("%s: marked cpu in %s, but no csrc/cpu/ops-*.c defines it", name, header)
		}
	}
}
