package llamacli

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/internal/cli"
)

// embed runs `embed args...` and returns its stdout and stderr.
func embed(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = Embed("embed", args, &out, &errb)
	return out.String(), errb.String(), err
}

// The text output is llama-embedding's: a line per text (16 values each
// for several texts, all of them for one), then the cosine similarity
// matrix with the texts' heads; a prompt's lines are texts too.
func TestEmbedTextOutput(t *testing.T) {
	model := testModel(t, 64)
	out, _, err := embed(t, "-m", model, "-t", "1", "--pooling", "mean", "-p", "the quick fox", "-p", "the lazy dog\nthe quick brown fox")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "" || !strings.HasPrefix(lines[1], "embedding 0: ") || !strings.HasPrefix(lines[3], "embedding 2: ") {
		t.Fatalf("output:\n%s", out)
	}
	if n := len(strings.Fields(strings.TrimPrefix(lines[1], "embedding 0: "))); n != 16 {
		t.Errorf("%d values on a line of several texts, want 16:\n%s", n, lines[1])
	}
	for _, want := range []string{"\ncosine similarity matrix:\n\n", "the qu the la the qu \n", "  1.00 ", "the quick \n", "the lazy d\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// one text: the whole vector, and no matrix
	out, _, err = embed(t, "-m", model, "-t", "1", "--pooling", "last", "-p", "the dog")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(strings.TrimPrefix(strings.Split(out, "\n")[1], "embedding 0: "))); n != 32 || strings.Contains(out, "cosine") {
		t.Errorf("one text: %d values (want 32) or a matrix:\n%s", n, out)
	}
	// no pooling: a line per token, its first and last 3 values
	out, _, err = embed(t, "-m", model, "-t", "1", "--pooling", "none", "-p", "the quick dog")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, " ... ") || strings.Contains(out, "cosine") || strings.Count(out, "embedding ") < 3 {
		t.Errorf("per-token output:\n%s", out)
	}
	// a decoder file has no pooling of its own: per-token output, as
	// llama-embedding's
	def, _, err := embed(t, "-m", model, "-t", "1", "-p", "the quick dog")
	if err != nil || def != out {
		t.Errorf("the model's pooling (none): %v\n%s\nwant\n%s", err, def, out)
	}
}

// --embd-normalize scales as llama.cpp (2: unit length, 0: the int16
// range, -1: as computed); --embd-output-format json+ adds the
// similarities; a file gives a text per line.
func TestEmbedJSONAndNormalize(t *testing.T) {
	model := testModel(t, 64)
	file := filepath.Join(t.TempDir(), "texts.txt")
	if err := os.WriteFile(file, []byte("the quick fox\nthe lazy dog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Cos [][]float64 `json:"cosineSimilarity"`
	}
	out, _, err := embed(t, "-m", model, "-t", "1", "--pooling", "mean", "-f", file, "--embd-output-format", "json+")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(doc.Data) != 2 || doc.Data[1].Index != 1 || len(doc.Cos) != 2 || math.Abs(doc.Cos[0][0]-1) > 0.005 {
		t.Fatalf("json+: %+v", doc)
	}
	var sq float64
	for _, v := range doc.Data[0].Embedding {
		sq += v * v
	}
	if math.Abs(sq-1) > 1e-5 {
		t.Errorf("euclidean: squared norm %g", sq)
	}
	for norm, check := range map[string]func([]float64) bool{
		"0": func(v []float64) bool {
			m := 0.0
			for _, x := range v {
				if x != math.Trunc(x) {
					return false
				}
				m = max(m, math.Abs(x))
			}
			return m == 32760
		},
		"1": func(v []float64) bool {
			s := 0.0
			for _, x := range v {
				s += math.Abs(x)
			}
			return math.Abs(s-1) < 1e-4
		},
	} {
		out, _, err := embed(t, "-m", model, "-t", "1", "--pooling", "mean", "-p", "the fox", "--embd-output-format", "array", "--embd-normalize", norm)
		if err != nil {
			t.Fatal(err)
		}
		var arr [][]float64
		if err := json.Unmarshal([]byte(out), &arr); err != nil || len(arr) != 1 || !check(arr[0]) {
			t.Errorf("--embd-normalize %s: %v\n%s", norm, err, out)
		}
	}
}

func TestEmbedBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-p", "x"},
		{"-m", "x.gguf"},
		{"-m", "x.gguf", "-p", "x", "--embd-normalize", "-5"},
		{"-m", "x.gguf", "-p", "x", "--embd-output-format", "csv"},
		{"-m", "x.gguf", "-p", "x", "--pooling", "max"},
		{"-m", "x.gguf", "-p", "x", "extra"},
	} {
		if _, _, err := embed(t, args...); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
