package llama

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/shareddata"
)

// vocabFile is the path of a shared vocabulary file (../shared/vocab, or
// $GGML_VOCAB_DIR), or skips the test saying why (see shareddata.Dir).
func vocabFile(t testing.TB, name string) string {
	t.Helper()
	return shareddata.Dir(t, "vocab", name)
}

// readVectors reads the test strings of the shared vocabulary name (.inp,
// separated by "\n__ggml_vocab_test__\n") and the expected ids (.out, a
// line each).
func readVectors(t *testing.T, name string) ([]string, [][]int32) {
	base := strings.TrimSuffix(vocabFile(t, name+".inp"), ".inp")
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	outb, err := os.ReadFile(vocabFile(t, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	if texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	lines := strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d strings but %d expected lines", base, len(texts), len(lines))
	}
	want := make([][]int32, len(lines))
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", base, i+1, err)
			}
			want[i] = append(want[i], int32(n))
		}
	}
	return texts, want
}

func loadTestVocab(t testing.TB, name string) *Vocab {
	f, err := gguf.Open(vocabFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := LoadVocab(f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// vectorVocabs are the shared vocabularies with llama.cpp's test vectors.
var vectorVocabs = []string{
	"ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf",
	"ggml-vocab-llama-bpe.gguf", "ggml-vocab-qwen2.gguf", "ggml-vocab-starcoder.gguf",
	"ggml-vocab-deepseek-coder.gguf", "ggml-vocab-deepseek-llm.gguf", "ggml-vocab-falcon.gguf",
	"ggml-vocab-mpt.gguf", "ggml-vocab-refact.gguf", "ggml-vocab-bert-bge.gguf",
}

// TestTokenizerVectors: every shared vocabulary gives llama.cpp's ids on
// every test string (no BOS, control tokens not parsed, as llama.cpp's
// test-tokenizer-0 tokenizes).
func TestTokenizerVectors(t *testing.T) {
	shareddata.Dir(t, "vocab")
	for _, name := range vectorVocabs {
		t.Run(name, func(t *testing.T) {
			v := loadTestVocab(t, name)
			texts, want := readVectors(t, name)
			bad := 0
			for i, text := range texts {
				got := v.Tokenize(text, false, false)
				if !equalIDs(got, want[i]) {
					bad++
					t.Errorf("%q:\n got  %v\n want %v", text, got, want[i])
				}
				// the pieces give the text back (byte-level BPE exactly,
				// SPM but the prefixed space)
				var pieces strings.Builder
				for _, id := range got {
					pieces.WriteString(v.Piece(id, false))
				}
				switch back := pieces.String(); v.Model {
				case TokenizerBPE:
					if back != text {
						t.Errorf("pieces of %q: %q", text, back)
					}
				case TokenizerSPM:
					if d := v.Detokenize(got); d != text && d != strings.TrimPrefix(text, " ") {
						t.Errorf("detokenize %q: %q", text, d)
					}
				}
			}
			t.Logf("%s: %d/%d vectors match", name, len(texts)-bad, len(texts))
		})
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestVocabSaveLoad: a model saved with each shared vocabulary tokenizes the
// test strings as the original file does.
func TestVocabSaveLoad(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-qwen2.gguf", "ggml-vocab-bert-bge.gguf"} {
		t.Run(name, func(t *testing.T) {
			v := loadTestVocab(t, name)
			m, err := NewModel(Hparams{NEmbd: 16, NLayer: 1, NHead: 2, NFF: 32, NCtxTrain: 64}, v, ModelOptions{Tied: true, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := m.Save(path, "vocab-test"); err != nil {
				t.Fatal(err)
			}
			m.Close()
			m2, err := Load(path, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m2.Close()
			texts, want := readVectors(t, name)
			for i, text := range texts {
				if got := m2.Vocab.Tokenize(text, false, false); !equalIDs(got, want[i]) {
					t.Errorf("%q: got %v want %v", text, got, want[i])
				}
			}
			if m2.Vocab.BOS != v.BOS || m2.Vocab.EOS != v.EOS || m2.Vocab.AddBOS != v.AddBOS {
				t.Errorf("special tokens: %d %d %v, want %d %d %v", m2.Vocab.BOS, m2.Vocab.EOS, m2.Vocab.AddBOS, v.BOS, v.EOS, v.AddBOS)
			}
		})
	}
}
