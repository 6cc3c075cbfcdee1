package llama

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/internal/shareddata"
)

// The C runner: ../shared/tools/llama_run.c (a llama forward pass written
// against the C API) built against this module's csrc/, as the numerical
// reference of the Go runner. The build is cached in the scratch directory,
// keyed by a hash of the sources.

var (
	crunOnce sync.Once
	crunPath string
	crunErr  error
)

// cRunner returns the path of llama_run built against csrc, or skips the
// test when the shared tools are absent (see shareddata.Dir) or there is no
// C compiler.
func cRunner(t *testing.T) string {
	t.Helper()
	src := shareddata.Dir(t, "tools", "llama_run.c")
	crunOnce.Do(func() { crunPath, crunErr = buildCRunner(src) })
	if errors.Is(crunErr, errNoCC) {
		t.Skipf("C runner not available: %v", crunErr)
	}
	if crunErr != nil {
		t.Fatalf("C runner: %v", crunErr)
	}
	return crunPath
}

var errNoCC = errors.New("no C compiler")

func buildCRunner(src string) (string, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("%w: %v", errNoCC, err)
	}
	csrc, err := filepath.Abs(filepath.Join("..", "csrc"))
	if err != nil {
		return "", err
	}
	files, _ := filepath.Glob(filepath.Join(csrc, "*", "*.[ch]")) // one folder per layer
	sort.Strings(files)
	h := sha256.New()
	for _, f := range append(files, src) {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(strings.TrimPrefix(f, csrc)), len(b))
		h.Write(b)
	}
	return buildCached("llama_run-"+hex.EncodeToString(h.Sum(nil))[:16], "llama_run", func(work string) error {
		return compileCRunner(cc, csrc, src, files, work)
	})
}

// compileCRunner compiles llama_run into work.
func compileCRunner(cc, csrc, src string, files []string, work string) error {
	var cfiles []string
	for _, f := range files {
		if strings.HasSuffix(f, ".c") {
			cfiles = append(cfiles, f)
		}
	}
	cfiles = append(cfiles, src)
	objs := make([]string, len(cfiles))
	errs := make([]error, len(cfiles))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, f := range cfiles {
		objs[i] = filepath.Join(work, strings.TrimSuffix(filepath.Base(f), ".c")+".o")
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := exec.Command(cc, "-std=gnu11", "-O2", "-pthread", "-I"+filepath.Join(csrc, "include"), "-c", f, "-o", objs[i]).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("%s: %v\n%s", filepath.Base(f), err, out)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	args := append([]string{"-pthread", "-o", filepath.Join(work, "llama_run")}, objs...)
	if out, err := exec.Command(cc, append(args, "-lm")...).CombinedOutput(); err != nil {
		return fmt.Errorf("link: %v\n%s", err, out)
	}
	return nil
}

// scratchDir is where tests cache what they build: GGML_SCRATCH, else
// ggml-<checkout's name> in the temporary directory.
func scratchDir() string {
	if d := os.Getenv("GGML_SCRATCH"); d != "" {
		return d
	}
	root, err := filepath.Abs("..")
	if err != nil {
		root = "llama-test"
	}
	return filepath.Join(os.TempDir(), "ggml-"+filepath.Base(root))
}

// buildCached returns the program name built by build in the scratch
// directory's folder key, building it once: in a private directory
// (another test process may be building the same sources), then moved
// into place.
func buildCached(key, name string, build func(work string) error) (string, error) {
	dir := filepath.Join(scratchDir(), key)
	exe := filepath.Join(dir, name)
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := build(work); err != nil {
		return "", err
	}
	return exe, os.Rename(filepath.Join(work, name), exe)
}

// cRun is what llama_run reports.
type cRun struct {
	gen    []int32
	logits []float32 // last prompt position
}

// runC runs llama_run on model with the prompt ids, greedy, f32 KV cache.
func runC(t *testing.T, exe, model string, prompt []int32, nGen int) cRun {
	t.Helper()
	ids := make([]string, len(prompt))
	for i, id := range prompt {
		ids[i] = strconv.Itoa(int(id))
	}
	logitsFile := filepath.Join(t.TempDir(), "last.txt")
	cmd := exec.Command(exe, model, "-ids", strings.Join(ids, ","), "-n", strconv.Itoa(nGen), "-kv", "f32", "-t", "2", "-o", logitsFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llama_run: %v\n%s", err, out)
	}
	var r cRun
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "gen ("); ok {
			_, list, _ := strings.Cut(rest, ":")
			for _, f := range strings.Fields(list) {
				v, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("llama_run gen line %q: %v", line, err)
				}
				r.gen = append(r.gen, int32(v))
			}
		}
	}
	b, err := os.ReadFile(logitsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseFloat(f, 32)
		if err != nil {
			t.Fatal(err)
		}
		r.logits = append(r.logits, float32(v))
	}
	return r
}
