package cli

import (
	"bytes"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

func aliasedFlags() (*flag.FlagSet, *int, *bool) {
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	n := fs.Int("ctx-size", 0, "context size")
	fa := fs.Bool("flash-attn", false, "flash attention")
	fs.String("prompt", "hi", "the prompt")
	Alias(fs, "ctx-size", "c")
	Alias(fs, "flash-attn", "fa")
	return fs, n, fa
}

// An alias sets the same variable as its flag, and the help shows
// the two names on one entry, the short one with one dash.
func TestAliasSharesOneVariableAndOneHelpEntry(t *testing.T) {
	for _, args := range [][]string{{"-c", "7", "-fa"}, {"--ctx-size", "7", "--flash-attn"}, {"--c=7", "-flash-attn"}} {
		fs, n, fa := aliasedFlags()
		if _, err := Parse(fs, args, io.Discard, func(io.Writer) {}); err != nil || *n != 7 || !*fa {
			t.Errorf("%v: err %v, ctx-size %d, flash-attn %v", args, err, *n, *fa)
		}
	}
	fs, _, _ := aliasedFlags()
	var out bytes.Buffer
	PrintFlags(fs, &out)
	help := out.String()
	for _, want := range []string{"  -c, --ctx-size int\n    \tcontext size\n", "  -fa, --flash-attn\n", "  --prompt string\n    \tthe prompt (default \"hi\")\n"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Count(help, "context size") != 1 {
		t.Errorf("an alias has its own entry:\n%s", help)
	}
}

// An unknown flag's error names the nearest known one when it is
// near enough to be a typo (llama.cpp's underscores included), and none
// otherwise.
func TestUnknownFlagSuggestsTheNearest(t *testing.T) {
	for arg, want := range map[string]string{
		"--ctx_size":  "flag provided but not defined: -ctx_size (did you mean --ctx-size?)",
		"--ctxsize":   "(did you mean --ctx-size?)",
		"-flash-atn":  "(did you mean --flash-attn?)",
		"-fb":         "(did you mean -fa?)",
		"--promt=x":   "(did you mean --prompt?)",
		"--nothing-x": "flag provided but not defined: -nothing-x",
	} {
		fs, _, _ := aliasedFlags()
		_, err := Parse(fs, []string{arg}, io.Discard, func(io.Writer) {})
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want it to end with %q", arg, err, want)
		}
		if arg == "--nothing-x" && err != nil && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: a far name suggested: %v", arg, err)
		}
	}
}

// Flags may follow positional arguments; "--" ends the flags, and
// a negative number is a positional argument.
func TestParseTakesFlagsAfterArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		n    int
		pos  []string
	}{
		{[]string{"a", "b", "-n", "5", "c"}, 5, []string{"a", "b", "c"}},
		{[]string{"a", "-n=4"}, 4, []string{"a"}},
		{[]string{"a", "--", "-n", "5"}, 3, []string{"a", "-n", "5"}},
		{[]string{"a", "-1", "-n", "2"}, 2, []string{"a", "-1"}},
		{[]string{"-", "-n", "2"}, 2, []string{"-"}},
	} {
		fs, n, usage := newFlags()
		if help, err := Parse(fs, c.args, io.Discard, usage); help || err != nil || *n != c.n || !slices.Equal(fs.Args(), c.pos) {
			t.Errorf("%q: help %v err %v, n %d, args %q; want n %d, args %q", c.args, help, err, *n, fs.Args(), c.n, c.pos)
		}
	}
	fs, _, usage := newFlags()
	if _, err := Parse(fs, []string{"a", "-x"}, io.Discard, usage); err == nil {
		t.Error("an unknown flag after an argument: no error")
	}
}

// IntList takes commas and repeated flags, the first use replacing
// the default.
func TestIntList(t *testing.T) {
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	l := NewIntList(512)
	fs.Var(l, "p", "lengths")
	if l.String() != "512" || l.Given() {
		t.Errorf("default: %q, given %v", l, l.Given())
	}
	if _, err := Parse(fs, []string{"-p", "1,2", "-p", "3"}, io.Discard, func(io.Writer) {}); err != nil || !slices.Equal(l.Values, []int{1, 2, 3}) || !l.Given() {
		t.Errorf("-p 1,2 -p 3: %v, %v", err, l.Values)
	}
	fs = flag.NewFlagSet("prog", flag.ContinueOnError)
	fs.Var(NewIntList(), "p", "lengths")
	if _, err := Parse(fs, []string{"-p", "1,x"}, io.Discard, func(io.Writer) {}); err == nil || !strings.Contains(err.Error(), `"x" is not an integer`) {
		t.Errorf("-p 1,x: %v", err)
	}
}
