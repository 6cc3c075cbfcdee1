package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/llama"
)

func TestParseQuantType(t *testing.T) {
	for in, want := range map[string]ggml.Type{"q4_K": ggml.TypeQ4_K, "Q8_0": ggml.TypeQ8_0, "q8_0": ggml.TypeQ8_0,
		"IQ4_NL": ggml.TypeIQ4_NL, "f16": ggml.TypeF16, "BF16": ggml.TypeBF16} {
		if got, err := parseQuantType(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"q9_9", "Q4_K_M", "q8_1", "q4_0_4_4"} {
		if _, err := parseQuantType(bad); err == nil || !strings.Contains(err.Error(), "q4_K") {
			t.Errorf("%s: %v, want an error listing the types", bad, err)
		}
	}
}

func TestParseTargetIsLlamaCppsFileType(t *testing.T) {
	for _, c := range []struct {
		in      string
		pure    bool
		mixture string
		typ     ggml.Type
	}{
		{"Q4_K_M", false, "Q4_K_M", 0},
		{"q4_k", false, "Q4_K_M", 0}, // llama.cpp's alias, in any case
		{"Q5_K", false, "Q5_K_M", 0},
		{"q8_0", false, "Q8_0", 0},
		{"Q4_K_M", true, "", ggml.TypeQ4_K},
		{"IQ2_S", true, "", ggml.TypeIQ2_XS}, // IQ2_S's base type, as in llama.cpp
	} {
		var o llama.QuantizeOptions
		if err := parseTarget(c.in, c.pure, &o); err != nil || o.Mixture.Name != c.mixture || (c.pure && o.Type != c.typ) {
			t.Errorf("%s (pure %v): mixture %q type %v, err %v", c.in, c.pure, o.Mixture.Name, o.Type, err)
		}
	}
}

// writeModel saves a random llama model with rows of 256 (whole k-quant
// blocks) and nLayer layers.
func writeModel(t *testing.T, nLayer int) string {
	t.Helper()
	v, err := llama.TrainVocab("the quick brown fox jumps over the lazy dog", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.NewModel(llama.Hparams{NEmbd: 256, NLayer: nLayer, NHead: 2, NFF: 256, NCtxTrain: 32}, v, llama.ModelOptions{Seed: 1, Std: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := m.Save(path, "quantize-test"); err != nil {
		t.Fatal(err)
	}
	return path
}

// `ggml quantize` lists the valid types for an unknown one,
// makes llama.cpp's mixtures, prints the size and bits per weight, and
// refuses to requantize without --allow-requantize.
func TestQuantizeCommand(t *testing.T) {
	in := writeModel(t, 8)
	dir := t.TempDir()
	out := filepath.Join(dir, "q4km.gguf")

	_, stderr, status := ggmlCmd(t, "quantize", in, out, "Q4_K_X")
	if status != 2 || !strings.Contains(stderr, `unknown type "Q4_K_X"`) || !strings.Contains(stderr, "Q4_K_M") || !strings.Contains(stderr, "IQ4_XS") {
		t.Errorf("unknown type: status %d, stderr %q", status, stderr)
	}

	_, stderr, status = ggmlCmd(t, "quantize", in, out, "Q4_K_M", "1")
	if status != 0 || !strings.Contains(stderr, "(Q4_K_M)") || !strings.Contains(stderr, "q4_K 49, q6_K 9") ||
		!strings.Contains(stderr, "bits per weight") {
		t.Fatalf("Q4_K_M: status %d, stderr %q", status, stderr)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		info, _ := f.Tensor(fmt.Sprintf("blk.%d.attn_v.weight", i))
		want := gguf.TensorType(ggml.TypeQ4_K)
		if i == 0 || i == 3 || i == 6 || i == 7 { // llama.cpp's use_more_bits for 8 layers
			want = gguf.TensorType(ggml.TypeQ6_K)
		}
		if info.Type != want {
			t.Errorf("blk.%d.attn_v.weight: %v, want %v", i, info.Type, want)
		}
	}
	if info, _ := f.Tensor("output.weight"); info.Type != gguf.TensorType(ggml.TypeQ6_K) {
		t.Errorf("output.weight: %v, want q6_K", info.Type)
	}
	f.Close()

	again := filepath.Join(dir, "again.gguf")
	_, stderr, status = ggmlCmd(t, "quantize", out, again, "Q8_0")
	if status != 1 || !strings.Contains(stderr, "already quantized") || !strings.Contains(stderr, "--allow-requantize") ||
		strings.Count(stderr, "\n") != 1 {
		t.Errorf("requantize: status %d, stderr %q", status, stderr)
	}
	if _, stderr, status = ggmlCmd(t, "quantize", "--allow-requantize", out, again, "Q8_0"); status != 0 {
		t.Errorf("--allow-requantize: status %d, stderr %q", status, stderr)
	}
	// flags may follow the arguments, as llama.cpp's quantize takes them
	if _, stderr, status = ggmlCmd(t, "quantize", out, again, "Q8_0", "--allow-requantize"); status != 0 {
		t.Errorf("IN OUT TYPE --allow-requantize: status %d, stderr %q", status, stderr)
	}
	// a missing output directory is named as given, not by a temporary file
	noDir := filepath.Join(dir, "none", "out.gguf")
	if _, stderr, status = ggmlCmd(t, "quantize", in, noDir, "Q8_0"); status != 1 ||
		!strings.HasPrefix(stderr, "ggml: gguf: create "+noDir+": ") || strings.Contains(stderr, ".tmp-") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("missing output directory: status %d, stderr %q", status, stderr)
	}

	pure := filepath.Join(dir, "pure.gguf")
	if _, stderr, status = ggmlCmd(t, "quantize", "--pure", in, pure, "Q4_K_M"); status != 0 || !strings.Contains(stderr, "q4_K 58") {
		t.Errorf("--pure: status %d, stderr %q", status, stderr)
	}
}
