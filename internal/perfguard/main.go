// Command perfguard compares the speed of two builds of this project, the
// working tree ("new") and an older revision ("old"), on the same machine
// at the same time, so that a change that slows a kernel, the engine, the
// allocator or the runner is seen before it lands. `./build.sh perfguard
// [REV]` builds both sides and runs it; its flags are the build's outputs
// and the knobs the build.sh header lists.
//
// Two parts, each case alternating the sides round by round:
//
//   - decode: `ggml run` of each side generating tokens from synthetic
//     llamas (10M, 110M, 1B parameters; written by the shared synth tool,
//     quantized with `ggml quantize --pure`, cached) in each type, at each
//     thread count; the rate is the runner's generation tokens/s. The side
//     that runs first alternates from round to round.
//   - kernels: tests/c/bench-ab's K sweep, both sides' C cores loaded into
//     one process, mul_mat call by call: a mat-vec and a GEMM per type and
//     row length K, in GFLOPS.
//
// Each case prints the median and range of each side, and the median and
// range of the per-round new/old ratios. A case is SLOWER when that median
// is below 0.97 and the two sides' ranges do not overlap, judged from 3
// rounds up; the command then exits with status 1 (also when the new side
// fails). On a loaded machine
// the ranges widen and fewer cases are judged: more rounds (ROUNDS) narrow
// them.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// config is the command line.
type config struct {
	oldName, oldGgml, oldSO, newGgml, newSO, benchAB string
	shared, work, cache                              string
	rounds, tokens                                   int
	parts, sizes, types, threads, ks                 []string
}

func main() {
	var c config
	var parts, sizeList, types, threads, ks string
	flag.StringVar(&c.oldName, "old-name", "old", "what the old side is (for the table)")
	flag.StringVar(&c.oldGgml, "old-ggml", "", "the old side's cmd/ggml")
	flag.StringVar(&c.oldSO, "old-so", "", "the old side's C core as a shared object")
	flag.StringVar(&c.newGgml, "new-ggml", "", "the new side's cmd/ggml")
	flag.StringVar(&c.newSO, "new-so", "", "the new side's C core as a shared object")
	flag.StringVar(&c.benchAB, "bench-ab", "", "tests/c/bench-ab, built")
	flag.StringVar(&c.shared, "shared", "../shared", "the shared data (tools/synth, vocab)")
	flag.StringVar(&c.work, "work", os.TempDir(), "a scratch directory (the synth program is built there)")
	flag.StringVar(&c.cache, "cache", "", "where the models are kept")
	flag.IntVar(&c.rounds, "rounds", 5, "rounds per case")
	flag.IntVar(&c.tokens, "tokens", 0, "tokens a decode run generates (0: by model size)")
	flag.StringVar(&parts, "parts", "decode,kernels", "the parts to run")
	flag.StringVar(&sizeList, "sizes", "10M,110M,1B", "model sizes of the decode part")
	flag.StringVar(&types, "types", "f16,bf16,q8_0,q4_0,q4_K,iq4_xs", "weight types (ggml names)")
	flag.StringVar(&threads, "threads", "1", "thread counts")
	flag.StringVar(&ks, "k", "768,2048,4096,5632,11008", "row lengths of the kernel part")
	flag.Parse()
	c.parts, c.sizes, c.types, c.threads, c.ks = list(parts), list(sizeList), list(types), list(threads), list(ks)
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "perfguard:", err)
		os.Exit(2)
	}
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfguard:", err)
		os.Exit(2)
	}
	t := &table{w: os.Stdout}
	t.header(c.oldName)
	if slices.Contains(c.parts, "kernels") {
		kernelPart(c, t)
	}
	if slices.Contains(c.parts, "decode") {
		m := &models{shared: c.shared, cache: c.cache, work: c.work, root: root, ggml: c.newGgml}
		if err := m.available(); err != nil {
			fmt.Printf("perfguard: decode part skipped: %v\n", err)
		} else {
			decodePart(c, m, t)
		}
	}
	if !t.footer() {
		os.Exit(1)
	}
}

// list splits a comma-separated flag.
func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// check refuses a command line that would time nothing or time wrongly.
func (c *config) check() error {
	switch {
	case c.rounds < 1:
		return fmt.Errorf("-rounds %d: at least 1", c.rounds)
	case c.tokens < 0:
		return fmt.Errorf("-tokens %d: 0 (by size) or more", c.tokens)
	case c.oldGgml == "" || c.newGgml == "" || c.oldSO == "" || c.newSO == "" || c.benchAB == "":
		return fmt.Errorf("-old-ggml, -old-so, -new-ggml, -new-so and -bench-ab are needed (./build.sh perfguard gives them)")
	case len(c.types) == 0 || len(c.threads) == 0:
		return fmt.Errorf("no types or no thread counts")
	}
	for _, p := range c.parts {
		if p != "decode" && p != "kernels" {
			return fmt.Errorf("part %q: decode or kernels", p)
		}
	}
	for _, s := range c.sizes {
		if _, ok := sizeNamed(s); !ok {
			return fmt.Errorf("size %q: one of 10M, 110M, 1B", s)
		}
	}
	for _, n := range c.threads {
		if v, err := strconv.Atoi(n); err != nil || v < 1 {
			return fmt.Errorf("thread count %q: a number >= 1", n)
		}
	}
	for _, k := range c.ks {
		if v, err := strconv.Atoi(k); err != nil || v < 1 {
			return fmt.Errorf("row length %q: a number >= 1", k)
		}
	}
	return nil
}

func sizeNamed(name string) (modelSize, bool) {
	for _, s := range sizes {
		if strings.EqualFold(s.name, name) {
			return s, true
		}
	}
	return modelSize{}, false
}

// kernelPart runs bench-ab's sweep once per thread count.
func kernelPart(c config, t *table) {
	for _, n := range c.threads {
		nth, _ := strconv.Atoi(n)
		rows, err := runKernels(c.benchAB, c.newSO, c.oldSO, c.rounds, nth, c.ks, c.types)
		if err != nil {
			t.row("kernels t="+n, "GFLOPS", nil, nil, err, true)
			continue
		}
		for _, r := range rows {
			t.row(r.name+" t="+n, "GFLOPS", r.old, r.new, nil, false)
		}
	}
}

// decodePart times each size, type and thread count: rounds of one run
// per side, the side that goes first alternating.
func decodePart(c config, m *models, t *table) {
	for _, name := range c.sizes {
		s, _ := sizeNamed(name)
		tokens := s.tokens
		if c.tokens > 0 {
			tokens = c.tokens
		}
		for _, typ := range c.types {
			model, err := m.path(s, typ)
			for _, n := range c.threads {
				nth, _ := strconv.Atoi(n)
				caseName := fmt.Sprintf("decode %s %s t=%d", s.name, typ, nth)
				if err != nil {
					t.row(caseName, "tok/s", nil, nil, err, true)
					continue
				}
				old, new, newFailed, err := decodeRounds(c, model, nth, tokens)
				t.row(caseName, "tok/s", old, new, err, newFailed)
			}
		}
	}
}

// decodeRounds alternates the two runners on one model.
// newFailed says which side failed when err is not nil.
func decodeRounds(c config, model string, threads, tokens int) (old, new []float64, newFailed bool, err error) {
	for r := range c.rounds {
		sides := []bool{false, true} // new?
		if r%2 == 1 {
			sides = []bool{true, false}
		}
		for _, isNew := range sides {
			bin := c.oldGgml
			if isNew {
				bin = c.newGgml
			}
			v, err := decode(bin, model, threads, tokens)
			if err != nil {
				return nil, nil, isNew, err
			}
			if isNew {
				new = append(new, v)
			} else {
				old = append(old, v)
			}
		}
	}
	return old, new, false, nil
}
