package llamacli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/llama"
)

func TestRun(t *testing.T) {
	v, err := llama.TrainVocab("the quick brown fox jumps over the lazy dog", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.NewModel(llama.Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 64, NCtxTrain: 64}, v, llama.ModelOptions{Seed: 1, Std: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := m.Save(path, "cli-test"); err != nil {
		t.Fatal(err)
	}
	m.Close()
	var out, errb bytes.Buffer
	err = Run("llama", []string{"-m", path, "-p", "the lazy", "-n", "8", "-t", "1", "--temp", "0", "--ignore-eos"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.HasPrefix(out.String(), "the lazy") || len(out.String()) <= len("the lazy\n") {
		t.Errorf("stdout %q", out.String())
	}
	if !strings.Contains(errb.String(), "prompt: 10 tokens") || !strings.Contains(errb.String(), "generation: 7 tokens") {
		t.Errorf("stderr %q", errb.String())
	}
	// sampling flags, token ids
	out.Reset()
	errb.Reset()
	err = Run("llama", []string{"-m", path, "-ids", "1,5,6", "-n", "4", "--temp", "0.7", "--top-k", "5", "--top-p", "0.9", "--seed", "3", "-q"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	// the memory ceiling after generating
	out.Reset()
	errb.Reset()
	if err := Run("llama", []string{"-m", path, "-ids", "1,5,6", "-n", "3", "-t", "2", "-ceiling", "3", "-q"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "ceiling: ") || !strings.Contains(errb.String(), "2 threads, 3 rounds): best ") ||
		!strings.Contains(errb.String(), "% of the mean's speed") {
		t.Errorf("no ceiling line:\n%s", errb.String())
	}
	// repetitions: the best times, the same tokens (sampling with a seed too),
	// and the first run's text once
	for _, args := range [][]string{{"--temp", "0"}, {"--temp", "0.8", "--seed", "5"}} {
		out.Reset()
		errb.Reset()
		if err := Run("llama", append([]string{"-m", path, "-ids", "1,5,6", "-n", "5", "-r", "3", "-q", "--ignore-eos"}, args...), &out, &errb); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		if !strings.Contains(errb.String(), "reps: 3,") || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("-r 3 %v:\nstdout %q\nstderr %s", args, out.String(), errb.String())
		}
	}
	for _, bad := range [][]string{{}, {"-m", path, "-ids", "1,x"}, {"-m", filepath.Join(t.TempDir(), "none.gguf")}, {"-m", path, "-ids", "99999"}} {
		if err := Run("llama", bad, &out, &errb); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
