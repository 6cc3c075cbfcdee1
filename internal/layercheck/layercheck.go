// Package layercheck checks the layering of the C core: csrc/ holds one
// folder per layer, each a cgo package whose cgo.go names the layers its C
// code may use in a "//ggml:uses a b c" line. (The packages do not import
// each other, so that go build compiles them in parallel.) Check refuses a
// circle among those lines, compiles every C file of csrc, and reports each
// symbol a file uses that is defined in a layer it may not use (directly or
// through another layer), and each private header it includes from one.
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

// Violation is one use across layers that the imports do not allow.
type Violation struct {
	File, Layer, Target, What string
}

func (v Violation) String() string {
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
// the uses across layers that the layers' imports do not allow.
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
	for i, u := range units {
		for _, s := range undefs[i] {
			j, ok := owner[s]
			if !ok {
				continue // the C library's
			}
			if t := units[j].layer; t != u.layer && !layers[u.layer].Uses[t] {
				out = append(out, Violation{File: u.src, Layer: u.layer, Target: t, What: s + " (" + filepath.Base(units[j].src) + ")"})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].String() < out[b].String() })
	return out, layers, nil
}
