package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/llama"
)

// `ggml bench -m MODEL` is llama.cpp's llama-bench for one model: a
// prompt-processing test (ppN: N random tokens evaluated from an empty
// cache, in batches) and a generation test (tgN: N tokens evaluated one at
// a time) for each -p, -n and -t value, each timed -r times after one
// untimed run; the rows give the mean tokens per second and its standard
// deviation over the repetitions, in llama-bench's table, CSV or JSON.

// modelDesc is what the rows say of the model: llama-bench's model_type
// ("llama 24M Q8_0"), file name, bytes of tensor data and parameters.
type modelDesc struct {
	typ, file     string
	size, nParams int64
}

// describeModel reads the model's description from its file's metadata.
func describeModel(path string) (modelDesc, error) {
	f, err := gguf.OpenWithOptions(path, gguf.Options{MetadataOnly: true})
	if err != nil {
		return modelDesc{}, err
	}
	defer f.Close()
	d := modelDesc{file: path}
	for _, t := range f.Tensors() {
		d.size += t.Size
		n := int64(1)
		for _, x := range t.Shape {
			n *= x
		}
		d.nParams += n
	}
	arch := "llama"
	if v, err := f.Value("general.architecture"); err == nil {
		if s, ok := v.(string); ok {
			arch = s
		}
	}
	ftype := "?"
	if v, err := f.Value("general.file_type"); err == nil {
		if n, err := strconv.Atoi(fmt.Sprint(v)); err == nil {
			for _, m := range llama.Mixtures() {
				if m.FileType == n {
					ftype = m.Name
				}
			}
		}
	}
	d.typ = fmt.Sprintf("%s %s %s", arch, paramsLabel(d.nParams), ftype)
	return d, nil
}

// paramsLabel is a model's size as its name gives it: 24M, 7B.
func paramsLabel(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.0fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.0fK", float64(n)/1e3)
}

// modelBench is what `ggml bench -m` runs: the model, and the lists whose
// every combination is a row.
type modelBench struct {
	path                                string
	prompts, gens, threads, fas, depths []int
	reps, batch                         int
	format                              string
}

// benchResult is one test's row.
type benchResult struct {
	desc            modelDesc
	threads, batch  int
	nPrompt, nGen   int
	flashAttn       bool
	nDepth          int
	when            time.Time
	samplesNs       []int64
	samplesTs       []float64
	avgNs, stddevNs float64
	avgTs, stddevTs float64
}

// name is the test column: pp512, tg128, tg128 @ d4096.
func (r *benchResult) name() string {
	n := "tg" + strconv.Itoa(r.nGen)
	if r.nPrompt > 0 {
		n = "pp" + strconv.Itoa(r.nPrompt)
	}
	if r.nDepth > 0 {
		n += " @ d" + strconv.Itoa(r.nDepth)
	}
	return n
}

// fields are the row's values under llama-bench's CSV and JSON names.
func (r *benchResult) fields() []benchField {
	return []benchField{
		{"build_commit", "ggml-go"},
		{"cpu_info", ggml.CPUSummary()},
		{"backends", "CPU"},
		{"model_filename", r.desc.file},
		{"model_type", r.desc.typ},
		{"model_size", r.desc.size},
		{"model_n_params", r.desc.nParams},
		{"n_batch", r.batch},
		{"n_threads", r.threads},
		{"flash_attn", r.flashAttn},
		{"n_prompt", r.nPrompt},
		{"n_gen", r.nGen},
		{"n_depth", r.nDepth},
		{"test_time", r.when.UTC().Format(time.RFC3339)},
		{"avg_ns", int64(r.avgNs)},
		{"stddev_ns", int64(r.stddevNs)},
		{"avg_ts", r.avgTs},
		{"stddev_ts", r.stddevTs},
		{"samples_ns", r.samplesNs},
		{"samples_ts", r.samplesTs},
	}
}

type benchField struct {
	name  string
	value any
}

// meanStddev returns the mean and the sample standard deviation of xs (0
// for fewer than two).
func meanStddev(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// benchPrinter writes the results as they come.
type benchPrinter interface {
	header()
	row(r *benchResult)
	footer()
}

// newBenchPrinter returns the printer of format -o (md, csv or json); fa
// says whether any row has flash attention.
func newBenchPrinter(format string, w io.Writer, fa bool) (benchPrinter, error) {
	switch format {
	case "md":
		return &mdPrinter{w: w, fa: fa}, nil
	case "csv":
		return &csvPrinter{w: w}, nil
	case "json":
		return &jsonPrinter{w: w}, nil
	}
	return nil, cli.Usagef("bench: -o %q: the formats are md, csv and json", format)
}

// mdPrinter writes llama-bench's markdown table: a column's width, and
// right alignment where it is positive. As there, the fa column is shown
// only when flash attention is asked for.
type mdPrinter struct {
	w  io.Writer
	fa bool
}

type mdColumn struct {
	name  string
	width int
}

func (p *mdPrinter) columns() []mdColumn {
	c := []mdColumn{{"model", -30}, {"size", 10}, {"params", 10}, {"backend", -10}, {"threads", 7}}
	if p.fa {
		c = append(c, mdColumn{"fa", 2})
	}
	return append(c, mdColumn{"test", 13}, mdColumn{"t/s", 20})
}

func (p *mdPrinter) line(cells []string) {
	var b strings.Builder
	b.WriteString("|")
	for i, c := range p.columns() {
		fmt.Fprintf(&b, " %*s |", c.width, cells[i])
	}
	fmt.Fprintln(p.w, b.String())
}

func (p *mdPrinter) header() {
	cols := p.columns()
	names := make([]string, len(cols))
	rule := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
		w := c.width
		if w < 0 {
			rule[i] = strings.Repeat("-", -w)
		} else {
			rule[i] = strings.Repeat("-", w-1) + ":"
		}
	}
	p.line(names)
	p.line(rule)
}

func (p *mdPrinter) row(r *benchResult) {
	cells := []string{r.desc.typ, sizeString(r.desc.size), paramsString(r.desc.nParams), "CPU", strconv.Itoa(r.threads)}
	if p.fa {
		fa := "0"
		if r.flashAttn {
			fa = "1"
		}
		cells = append(cells, fa)
	}
	p.line(append(cells, r.name(), fmt.Sprintf("%.2f ± %.2f", r.avgTs, r.stddevTs)))
}

func (p *mdPrinter) footer() {
	fmt.Fprintf(p.w, "\nbuild: ggml for Go, SIMD level %v\n", ggml.CurrentCPULevel())
}

// sizeString and paramsString are llama-bench's size and params cells.
func sizeString(n int64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

func paramsString(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

// csvPrinter writes a header line and a line per test, every value quoted,
// as llama-bench does (the samples are left out, as there).
type csvPrinter struct{ w io.Writer }

func (p *csvPrinter) header() {
	var names []string
	for _, f := range (&benchResult{}).fields() {
		if !strings.HasPrefix(f.name, "samples_") {
			names = append(names, f.name)
		}
	}
	fmt.Fprintln(p.w, strings.Join(names, ","))
}

func (p *csvPrinter) row(r *benchResult) {
	var vals []string
	for _, f := range r.fields() {
		if !strings.HasPrefix(f.name, "samples_") {
			s := fmt.Sprint(f.value)
			if x, ok := f.value.(float64); ok {
				s = strconv.FormatFloat(x, 'f', 6, 64)
			}
			vals = append(vals, `"`+strings.ReplaceAll(s, `"`, `""`)+`"`)
		}
	}
	fmt.Fprintln(p.w, strings.Join(vals, ","))
}

func (p *csvPrinter) footer() {}

// jsonPrinter writes a JSON array of an object per test, its keys in the
// fields' order.
type jsonPrinter struct {
	w    io.Writer
	rows int
}

func (p *jsonPrinter) header() { fmt.Fprint(p.w, "[") }

func (p *jsonPrinter) row(r *benchResult) {
	if p.rows > 0 {
		fmt.Fprint(p.w, ",")
	}
	p.rows++
	fmt.Fprint(p.w, "\n  {")
	for i, f := range r.fields() {
		v, err := json.Marshal(f.value)
		if err != nil { // NaN or Inf: not JSON
			v = []byte("null")
		}
		sep := ","
		if i == 0 {
			sep = ""
		}
		k, _ := json.Marshal(f.name)
		fmt.Fprintf(p.w, "%s\n    %s: %s", sep, k, v)
	}
	fmt.Fprint(p.w, "\n  }")
}

func (p *jsonPrinter) footer() { fmt.Fprintln(p.w, "\n]") }

// runModelBench runs the tests: for each thread count, flash attention
// setting and depth, each -p value's prompt test, then each -n value's
// generation test.
func runModelBench(b modelBench, stdout, stderr io.Writer) error {
	if len(b.fas) == 0 {
		b.fas = []int{0}
	}
	if len(b.depths) == 0 {
		b.depths = []int{0}
	}
	pr, err := newBenchPrinter(b.format, stdout, slices.Contains(b.fas, 1))
	if err != nil {
		return err
	}
	if err := cli.CheckFile(b.path); err != nil {
		return err
	}
	desc, err := describeModel(b.path)
	if err != nil {
		return err
	}
	m, err := llama.Load(b.path, llama.LoadOptions{})
	if err != nil {
		return err
	}
	defer m.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rng := rand.New(rand.NewPCG(1, 2))
	token := func() int32 { return int32(rng.IntN(m.NVocab)) }
	pr.header()
	defer pr.footer()
	for _, t := range b.threads {
		t = cli.Threads(t, func(msg string) { fmt.Fprintln(stderr, "warning:", msg) })
		for _, fa := range b.fas {
			for _, d := range b.depths {
				for _, test := range benchTests(b.prompts, b.gens) {
					r := &benchResult{desc: desc, threads: t, batch: b.batch, nPrompt: test[0], nGen: test[1],
						flashAttn: fa == 1, nDepth: d, when: time.Now()}
					if err := timeTest(ctx, m, r, b.reps, token); err != nil {
						return fmt.Errorf("bench %s, %d threads: %w", r.name(), t, err)
					}
					pr.row(r)
				}
			}
		}
	}
	return nil
}

// benchTests lists the tests as {n_prompt, n_gen}: the prompt tests, then
// the generation tests; 0 values are none.
func benchTests(prompts, gens []int) [][2]int {
	var tests [][2]int
	for _, p := range prompts {
		if p > 0 {
			tests = append(tests, [2]int{p, 0})
		}
	}
	for _, n := range gens {
		if n > 0 {
			tests = append(tests, [2]int{0, n})
		}
	}
	return tests
}

// timeTest runs r's test once untimed and reps times timed, each from a
// cache holding r.nDepth random tokens (evaluated untimed, in batches),
// and fills in r's samples and statistics.
func timeTest(ctx context.Context, m *llama.Model, r *benchResult, reps int, token func() int32) error {
	n := r.nPrompt + r.nGen
	s, err := m.NewSession(llama.SessionOptions{Threads: r.threads, Context: r.nDepth + n,
		Batch: min(r.batch, max(r.nPrompt, r.nDepth, 1)), FlashAttn: r.flashAttn})
	if err != nil {
		return err
	}
	defer s.Close()
	randomTokens := func(n int) []int32 {
		toks := make([]int32, n)
		for i := range toks {
			toks[i] = token()
		}
		return toks
	}
	// rewind leaves the depth's tokens in the cache: evaluated once, kept
	// for every run (a recurrent state cannot rewind into them: evaluated again)
	atDepth := false
	rewind := func() error {
		if atDepth {
			if err := s.Rewind(r.nDepth); err == nil {
				return nil
			} else if !errors.Is(err, llama.ErrRecurrentRewind) {
				return err
			}
		}
		if err := s.Rewind(0); err != nil {
			return err
		}
		if r.nDepth > 0 {
			if _, err := s.Eval(ctx, randomTokens(r.nDepth)); err != nil {
				return err
			}
		}
		atDepth = true
		return nil
	}
	run := func(tokens int) error {
		if r.nPrompt > 0 {
			_, err := s.Eval(ctx, randomTokens(tokens))
			return err
		}
		for range tokens {
			if _, err := s.Eval(ctx, []int32{token()}); err != nil {
				return err
			}
		}
		return nil
	}
	// the warm-up: the whole prompt, or one token
	if err := rewind(); err != nil {
		return err
	}
	if err := run(max(r.nPrompt, min(r.nGen, 1))); err != nil {
		return err
	}
	for range reps {
		if err := rewind(); err != nil {
			return err
		}
		t0 := time.Now()
		if err := run(n); err != nil {
			return err
		}
		d := time.Since(t0)
		r.samplesNs = append(r.samplesNs, d.Nanoseconds())
		r.samplesTs = append(r.samplesTs, float64(n)/d.Seconds())
	}
	ns := make([]float64, len(r.samplesNs))
	for i, x := range r.samplesNs {
		ns[i] = float64(x)
	}
	r.avgNs, r.stddevNs = meanStddev(ns)
	r.avgTs, r.stddevTs = meanStddev(r.samplesTs)
	return nil
}

// modelBenchDefaults are llama-bench's: -p 512, -n 128, -r 5, all CPUs.
var modelBenchDefaults = struct{ prompt, gen, reps int }{512, 128, 5}
