package cli

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Alias makes each of aliases another name of fs's flag name: they share
// its value (setting any sets it), and PrintFlags shows them on its line.
// It panics if name is not defined (a programmer error).
func Alias(fs *flag.FlagSet, name string, aliases ...string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("cli.Alias: no flag " + name)
	}
	for _, a := range aliases {
		fs.Var(f.Value, a, f.Usage)
	}
}

// FlagName is how the help writes a flag's name: one dash for a
// one-letter name and for the short forms of a flag with a longer alias
// (-c, -fa), two for the rest (--ctx-size), as llama.cpp's tools do. Go's
// flag package accepts both spellings either way.
func FlagName(name string, short bool) string {
	if len(name) == 1 || short {
		return "-" + name
	}
	return "--" + name
}

// flagGroup is a flag and its aliases (the names sharing one Value).
type flagGroup struct {
	names []string // shortest first
	f     *flag.Flag
}

// groups returns fs's flags with their aliases together, in the order of
// their longest names.
func groups(fs *flag.FlagSet) []*flagGroup {
	var gs []*flagGroup
	byValue := map[flag.Value]*flagGroup{}
	fs.VisitAll(func(f *flag.Flag) {
		comparable := reflect.TypeOf(f.Value).Comparable()
		if comparable {
			if g := byValue[f.Value]; g != nil {
				g.names = append(g.names, f.Name)
				return
			}
		}
		g := &flagGroup{names: []string{f.Name}, f: f}
		gs = append(gs, g)
		if comparable {
			byValue[f.Value] = g
		}
	})
	for _, g := range gs {
		slices.SortStableFunc(g.names, func(a, b string) int { return len(a) - len(b) })
		g.f = fs.Lookup(g.names[len(g.names)-1])
	}
	slices.SortFunc(gs, func(a, b *flagGroup) int { return strings.Compare(a.long(), b.long()) })
	return gs
}

func (g *flagGroup) long() string { return g.names[len(g.names)-1] }

// spelled returns the group's names as the help writes them.
func (g *flagGroup) spelled() []string {
	out := make([]string, len(g.names))
	for i, n := range g.names {
		out[i] = FlagName(n, i < len(g.names)-1)
	}
	return out
}

// PrintFlags writes fs's flags as flag.PrintDefaults does, except that a
// flag's aliases (Alias) share one entry: "  -c, --ctx-size int".
func PrintFlags(fs *flag.FlagSet, w io.Writer) {
	for _, g := range groups(fs) {
		typ, usage := flag.UnquoteUsage(g.f)
		fmt.Fprintf(w, "  %s", strings.Join(g.spelled(), ", "))
		if typ != "" {
			fmt.Fprintf(w, " %s", typ)
		}
		fmt.Fprintf(w, "\n    \t%s", strings.ReplaceAll(usage, "\n", "\n    \t"))
		switch def := g.f.DefValue; {
		case def == "" || def == "0" || def == "false" || def == "[]":
		case typ == "string":
			fmt.Fprintf(w, " (default %s)", strconv.Quote(def))
		default:
			fmt.Fprintf(w, " (default %s)", def)
		}
		fmt.Fprintln(w)
	}
}

// suggest returns the defined flag name nearest to name (edit distance),
// spelled as the help does, or "" when none is near enough to be a typo.
func suggest(fs *flag.FlagSet, name string) string {
	name = strings.TrimLeft(name, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	// llama.cpp's older spellings use underscores (--n_predict)
	name = strings.ReplaceAll(name, "_", "-")
	// a one-letter typo has too many neighbours to name one
	best, bestD := "", min(max(2, len(name)/3)+1, len(name))
	for _, g := range groups(fs) {
		for i, n := range g.names {
			if d := editDistance(name, n); d < bestD {
				best, bestD = FlagName(n, i < len(g.names)-1), d
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// parseInterspersed parses args with fs letting flags follow positional
// arguments (IN OUT TYPE --pure), as llama.cpp's tools do; "--" ends the
// flags, and a negative number where a positional argument may stand is
// one. fs.Args() then holds the positional arguments in order.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		for len(args) > 0 && isNegativeNumber(args[0]) && fs.Lookup(args[0][1:]) == nil {
			pos, args = append(pos, args[0]), args[1:]
		}
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if i := len(args) - len(rest) - 1; i >= 0 && args[i] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	// leaves fs.Args() == pos (the flags parsed so far keep their values)
	return fs.Parse(append([]string{"--"}, pos...))
}

func isNegativeNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(s[1:], 64)
	return err == nil
}

// IntList is a flag of comma-separated integers that may also be given
// several times (-p 64,128 -p 512), as llama-bench's lists: the first use
// replaces the default.
type IntList struct {
	Values []int
	given  bool
}

// NewIntList returns a list holding defaults until the flag is given.
func NewIntList(defaults ...int) *IntList { return &IntList{Values: defaults} }

func (l *IntList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(l.Values))
	for i, v := range l.Values {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *IntList) Set(v string) error {
	if !l.given {
		l.Values, l.given = nil, true
	}
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("%q is not an integer", f)
		}
		l.Values = append(l.Values, n)
	}
	return nil
}

// Given reports whether the flag was on the command line.
func (l *IntList) Given() bool { return l.given }
