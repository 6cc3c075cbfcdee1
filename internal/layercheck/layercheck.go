// Package layercheck checks the layering of the C core: csrc/ holds one
// folder per layer, each a cgo package whose cgo.go names the layers its C
// code may use in a "//ggml:uses a b c" line. (The packages do not import
// each other, so that go build compiles them in parallel.) Check refuses a
// circle among those lines, compiles every C file of csrc, and reports each
// symbol a file uses that is defined in a layer it may not use (directly or
// through another layer), each private header it includes from one, and
// each circle between files of one layer (a file depends on another when it
// uses a symbol the other defines; within a layer, too, uses go one way).
package layercheck

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// usesDirective starts the line of cgo.go that names the layers a layer uses.
const usesDirective = "//ggml:uses"

// publicDir holds the public headers: every layer may include them.
const publicDir = "include"

// Layer is one folder of csrc: its C sources and the layers it may use.
type Layer struct {
	Name    string
	Sources []string        // .c files, paths
	Headers []string        // .h files, paths
	Imports []string        // layers its cgo.go names in its //ggml:uses line
	Uses    map[string]bool // every layer reachable through Imports
}

// Violation is one use across layers that the imports do not allow, or a
// circle between files of one layer (Circle set).
type Violation struct {
	File, Layer, Target, What string
	Circle                    string // "a.c -> b.c (sym) -> a.c (sym)"
}

func (v Violation) String() string {
	if v.Circle != "" {
		return fmt.Sprintf("files of layer %s depend on each other in a circle: %s", v.Layer, v.Circle)
	}
	return fmt.Sprintf("%s (layer %s) uses %s of layer %s, which it does not import", v.File, v.Layer, v.What, v.Target)
}

// Layers reads the folders of csrc and their imports.
func Layers(csrc string) (map[string]*Layer, error) {
	entries, err := os.ReadDir(csrc)
	if err != nil {
		return nil, err
	}
	layers := map[string]*Layer{}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == publicDir {
			continue
		}
		dir := filepath.Join(csrc, e.Name())
		l := &Layer{Name: e.Name(), Uses: map[string]bool{}}
		l.Sources, _ = filepath.Glob(filepath.Join(dir, "*.c"))
		l.Headers, _ = filepath.Glob(filepath.Join(dir, "*.h"))
		b, err := os.ReadFile(filepath.Join(dir, "cgo.go"))
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", l.Name, err)
		}
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), usesDirective); ok && (rest == "" || rest[0] == ' ') {
				l.Imports = append(l.Imports, strings.Fields(rest)...)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("layer %s: its cgo.go has no %s line", l.Name, usesDirective)
		}
		layers[l.Name] = l
	}
	for _, l := range layers {
		var visit func(name string)
		visit = func(name string) {
			d, ok := layers[name]
			if !ok || l.Uses[name] {
				return
			}
			l.Uses[name] = true
			for _, n := range d.Imports {
				visit(n)
			}
		}
		for _, n := range l.Imports {
			if _, ok := layers[n]; !ok {
				return nil, fmt.Errorf("layer %s uses %q, which is not a layer", l.Name, n)
			}
			visit(n)
		}
		if l.Uses[l.Name] {
			return nil, fmt.Errorf("layer %s uses itself through its %s line and those of the layers it names: a circle", l.Name, usesDirective)
		}
	}
	return layers, nil
}

var includeRE = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)

// checkIncludes reports private headers a layer's files include from layers
// it does not use, and names that resolve to neither its folder nor the
// public headers.
func checkIncludes(csrc string, l *Layer) ([]Violation, error) {
	var out []Violation
	for _, f := range append(append([]string{}, l.Sources...), l.Headers...) {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range includeRE.FindAllSubmatch(b, -1) {
			inc := string(m[1])
			target := l.Name
			if rest, ok := strings.CutPrefix(inc, "../"); ok {
				target, _, _ = strings.Cut(rest, "/")
			} else if _, err := os.Stat(filepath.Join(csrc, l.Name, inc)); err != nil {
				target = publicDir
				if _, err := os.Stat(filepath.Join(csrc, publicDir, inc)); err != nil {
					out = append(out, Violation{File: f, Layer: l.Name, Target: "?", What: "header " + inc + " (in neither its folder nor include/)"})
					continue
				}
			}
			if target != l.Name && target != publicDir && !l.Uses[target] {
				out = append(out, Violation{File: f, Layer: l.Name, Target: target, What: "header " + inc})
			}
		}
	}
	return out, nil
}

// symbols compiles src to an object in dir and returns the global symbols
// it defines and those it needs.
func symbols(cc, csrc, src, dir string) (defined, undefined []string, err error) {
	obj := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c")+".o")
	cmd := exec.Command(cc, "-std=gnu11", "-O0", "-g0", "-I"+filepath.Join(csrc, publicDir), "-c", src, "-o", obj)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("%s: %v\n%s", src, err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, nil, err
	}
	for _, s := range syms {
		bind := elf.ST_BIND(s.Info)
		if s.Name == "" || (bind != elf.STB_GLOBAL && bind != elf.STB_WEAK) {
			continue
		}
		if s.Section == elf.SHN_UNDEF {
			undefined = append(undefined, s.Name)
		} else {
			defined = append(defined, s.Name)
		}
	}
	return defined, undefined, nil
}

// Check compiles every C file of csrc with cc (an ELF target) and returns
// the uses across layers that the layers' imports do not allow and the
// circles between files of one layer (file a depends on file b when a uses
// a symbol b defines: within a layer too, dependencies go one way).
func Check(cc, csrc string) ([]Violation, map[string]*Layer, error) {
	layers, err := Layers(csrc)
	if err != nil {
		return nil, nil, err
	}
	var out []Violation
	type unit struct{ src, layer string }
	var units []unit
	seen := map[string]string{}
	for _, l := range layers {
		v, err := checkIncludes(csrc, l)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, v...)
		for _, s := range l.Sources {
			base := filepath.Base(s)
			if prev, dup := seen[base]; dup {
				return nil, nil, fmt.Errorf("%s and %s: C file names must be unique across layers (objects share one folder in plain builds)", prev, s)
			}
			seen[base] = s
			units = append(units, unit{s, l.Name})
		}
	}
	dir, err := os.MkdirTemp("", "layercheck-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	defs := make([][]string, len(units))
	undefs := make([][]string, len(units))
	errs := make([]error, len(units))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, u := range units {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			defs[i], undefs[i], errs[i] = symbols(cc, csrc, u.src, dir)
		})
	}
	wg.Wait()
	owner := map[string]int{}
	for i := range units {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		for _, s := range defs[i] {
			owner[s] = i
		}
	}
	deps := make([]map[int]string, len(units)) // file -> files of its layer it uses, by one symbol each
	for i, u := range units {
		deps[i] = map[int]string{}
		for _, s := range undefs[i] {
			j, ok := owner[s]
			if !ok {
				continue // the C library's
			}
			if t := units[j].layer; t != u.layer && !layers[u.layer].Uses[t] {
				out = append(out, Violation{File: u.src, Layer: u.layer, Target: t, What: s + " (" + filepath.Base(units[j].src) + ")"})
			} else if t == u.layer && j != i {
				if prev, ok := deps[i][j]; !ok || s < prev {
					deps[i][j] = s
				}
			}
		}
	}
	names := make([]string, len(units))
	for i, u := range units {
		names[i] = filepath.Base(u.src)
	}
	for _, c := range circles(names, deps) {
		out = append(out, Violation{File: units[c[0]].src, Layer: units[c[0]].layer, Circle: describeCircle(names, deps, c)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].String() < out[b].String() })
	return out, layers, nil
}

// circles returns the strongly connected components of more than one file
// of the graph deps (Tarjan's algorithm), each as a list of file indices
// sorted by name.
func circles(names []string, deps []map[int]string) [][]int {
	index := make([]int, len(deps))
	low := make([]int, len(deps))
	on := make([]bool, len(deps))
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, w := range sortedKeys(deps[v], names) {
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var c []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			on[w] = false
			c = append(c, w)
			if w == v {
				break
			}
		}
		if len(c) > 1 {
			sort.Slice(c, func(a, b int) bool { return names[c[a]] < names[c[b]] })
			out = append(out, c)
		}
	}
	for v := range deps {
		if index[v] < 0 {
			visit(v)
		}
	}
	sort.Slice(out, func(a, b int) bool { return names[out[a][0]] < names[out[b][0]] })
	return out
}

// describeCircle names the files of the component c and one shortest circle
// through its first file, each step with a symbol that makes it.
func describeCircle(names []string, deps []map[int]string, c []int) string {
	in := map[int]bool{}
	for _, v := range c {
		in[v] = true
	}
	start := c[0]
	prev := map[int]int{start: -1}
	queue := []int{start}
	end := -1
	for len(queue) > 0 && end < 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range sortedKeys(deps[v], names) {
			if w == start {
				end = v
				break
			}
			if _, seen := prev[w]; !seen && in[w] {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	path := []int{start}
	for v := end; v != start; v = prev[v] {
		path = append(path, v)
	}
	// path is start, then the circle backwards: turn it around
	for a, b := 1, len(path)-1; a < b; a, b = a+1, b-1 {
		path[a], path[b] = path[b], path[a]
	}
	path = append(path, start)
	var b strings.Builder
	b.WriteString(names[start])
	for k := 1; k < len(path); k++ {
		fmt.Fprintf(&b, " -> %s (%s)", names[path[k]], deps[path[k-1]][path[k]])
	}
	var all []string
	for _, v := range c {
		all = append(all, names[v])
	}
	fmt.Fprintf(&b, "; files in the circle: %s", strings.Join(all, " "))
	return b.String()
}

func sortedKeys(m map[int]string, names []string) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return names[keys[a]] < names[keys[b]] })
	return keys
}
