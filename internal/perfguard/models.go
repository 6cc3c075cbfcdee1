package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// modelSize is one synthetic llama: synth's shape flags and the tokens a
// timed run generates (more for the small ones, whose tokens are quick).
type modelSize struct {
	name   string
	args   []string
	tokens int
}

// sizes are the models of the decode part. The vocabulary (32000 tokens)
// is a large share of the small ones: 10M is tied (token_embd is also the
// output matrix) to stay near its name. 1B has TinyLlama's shape.
var sizes = []modelSize{
	{"10M", []string{"-embd", "256", "-layers", "4", "-heads", "4", "-ff", "768", "-tied"}, 128},
	{"110M", []string{"-embd", "768", "-layers", "12", "-heads", "12", "-ff", "2048"}, 64},
	{"1B", []string{"-embd", "2048", "-layers", "22", "-heads", "32", "-kv-heads", "4", "-ff", "5632"}, 32},
}

// vocabFile is the shared vocabulary the models take their tokenizer from.
const vocabFile = "vocab/ggml-vocab-llama-spm.gguf"

// models makes and caches the synthetic models: synth (built once per run
// against this checkout) writes the f16 model, the new side's `ggml
// quantize --pure` the other types. The cache is keyed by synth's
// arguments: a file there is never rewritten.
type models struct {
	shared, cache, work, root, ggml string
	synth                           string // the built synth program, once built
	synthErr                        error  // why it could not be built, once tried
}

// available says why the models cannot be made, or nil.
func (m *models) available() error {
	for _, p := range []string{filepath.Join(m.shared, "tools", "synth", "main.go"), filepath.Join(m.shared, vocabFile)} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("the shared data is missing (%v)", err)
		}
	}
	return nil
}

// path returns the model of size s in type typ, making it if needed.
func (m *models) path(s modelSize, typ string) (string, error) {
	args := append([]string{"-vocab", filepath.Base(vocabFile)}, s.args...)
	sum := sha256.Sum256([]byte(strings.Join(args, "\x00")))
	dir := filepath.Join(m.cache, s.name+"-"+hex.EncodeToString(sum[:6]))
	f16 := filepath.Join(dir, "f16.gguf")
	if _, err := os.Stat(f16); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := m.buildSynth(); err != nil {
			return "", err
		}
		fmt.Fprintf(os.Stderr, "perfguard: writing the %s model (synth %s)\n", s.name, strings.Join(s.args, " "))
		tmp := f16 + ".tmp"
		full := append([]string{"-vocab", filepath.Join(m.shared, vocabFile), "-o", tmp}, s.args...)
		if err := run(exec.Command(m.synth, full...)); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, f16); err != nil {
			return "", err
		}
	}
	if typ == "f16" {
		return f16, nil
	}
	out := filepath.Join(dir, typ+".gguf")
	if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "perfguard: quantizing the %s model to %s\n", s.name, typ)
		// the output file appears atomically
		if err := run(exec.Command(m.ggml, "quantize", "--pure", f16, out, typ)); err != nil {
			return "", err
		}
	}
	return out, nil
}

// buildSynth builds the shared synth program against this checkout (its
// go.mod points elsewhere), in the work directory.
func (m *models) buildSynth() error {
	if m.synth == "" && m.synthErr == nil {
		m.synthErr = m.tryBuildSynth()
	}
	return m.synthErr
}

func (m *models) tryBuildSynth() error {
	src := filepath.Join(m.work, "synth-src")
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	from := filepath.Join(m.shared, "tools", "synth")
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	edit := exec.Command("go", "mod", "edit", "-replace", "github.com/ggml-go/ggml="+m.root)
	edit.Dir = src
	if err := run(edit); err != nil {
		return err
	}
	bin := filepath.Join(m.work, "synth")
	// -mod=mod: the checkout's requirements join synth's go.mod (from the
	// module cache, which building the checkout filled)
	build := exec.Command("go", "build", "-mod=mod", "-o", bin, ".")
	build.Dir = src
	if err := run(build); err != nil {
		return err
	}
	m.synth = bin
	return nil
}

// run runs a helper program, its output to stderr.
func run(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	return nil
}
