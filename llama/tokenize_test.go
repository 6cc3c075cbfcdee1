package llama

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPreTokenizerUnknown: a tokenizer.ggml.pre llama.cpp does not know is
// refused by name.
func TestPreTokenizerUnknown(t *testing.T) {
	if _, err := lookupPre("no-such-pre"); err == nil || !strings.Contains(err.Error(), `"no-such-pre"`) {
		t.Fatalf("unknown pre-tokenizer: err %v", err)
	}
	for _, name := range append(PreTokenizers(), "") {
		if _, err := lookupPre(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}

// TestPreTokenizerSplits: words of some pre-tokenizers on texts whose
// splitting the reference's rules decide.
func TestPreTokenizerSplits(t *testing.T) {
	for _, c := range []struct {
		pre, text string
		words     []string
	}{
		{"gpt-2", "Hello  world's 123", []string{"Hello", " ", " world", "'s", " 123"}},
		{"gpt-2", "a   ", []string{"a", "   "}},
		{"", "Hello 1234", []string{"Hello", " ", "123", "4"}}, // no pre key: llama.cpp's default rules
		{"llama-bpe", "12345 ab\n\n c", []string{"123", "45", " ab", "\n\n", " c"}},
		{"llama-bpe", "I'VE", []string{"I", "'VE"}},
		{"qwen2", "12345 ab\n\n c", []string{"1", "2", "3", "4", "5", " ab", "\n\n", " c"}},
		{"qwen2", "x  \u00e9t\u00e9!", []string{"x", " ", " \u00e9t\u00e9", "!"}},
		{"tekken", "ABCdef Àb", []string{"ABCdef", " Àb"}},
		{"tekken", "ÀB", []string{"À", "B"}}, // À is upper and lower case in the collapsed text
		{"deepseek-llm", "ab  ", []string{"ab", "  "}},
		{"falcon", "x=1000", []string{"x", "=", "100", "0"}},
		{"starcoder", "x 12", []string{"x", " ", "1", "2"}},
		{"bloom", "Hei, maailma!", []string{"Hei", ",", " maailma", "!"}},
		// later rules cut the words of earlier ones too
		{"chameleon", "<sentinel:12>IMGIMGABZ", []string{"<", "sentinel", ":", "1", "2", ">", "IMGIMGABZ"}},
	} {
		p, err := lookupPre(c.pre)
		if err != nil {
			t.Fatal(err)
		}
		var words []string
		a := 0
		for _, b := range p.split(c.text) {
			words = append(words, c.text[a:b])
			a = b
		}
		if !slices.Equal(words, c.words) {
			t.Errorf("%s %q: got %q want %q", c.pre, c.text, words, c.words)
		}
	}
}

// TestSpecialTokens: control tokens are split out only with parseSpecial,
// user-defined ones always; phi-3's </s> drops the spaces after it
// (llama.cpp's rstrip attribute) and the SPM space prefix follows it.
func TestSpecialTokens(t *testing.T) {
	v := loadTestVocab(t, "ggml-vocab-phi-3.gguf")
	hello := v.Tokenize("Hello", false, false)
	eos, _ := v.ID("</s>")
	got := v.Tokenize("</s>   Hello", false, false)
	if want := append([]int32{eos}, hello...); !equalIDs(got, want) {
		t.Errorf("</s> then spaces: got %v want %v", got, want)
	}
	bos, _ := v.ID("<s>")
	if got := v.Tokenize("<s>Hello", false, true); got[0] != bos || !equalIDs(got[1:], hello) {
		t.Errorf("<s> parsed: got %v", got)
	}
	if got := v.Tokenize("<s>Hello", false, false); slices.Contains(got, bos) {
		t.Errorf("<s> not parsed: got %v", got)
	}
	if got := v.Tokenize("Hello", true, false); got[0] != v.BOS || len(got) != len(hello)+1 {
		t.Errorf("add_bos: got %v", got)
	}
	// llama_detokenize: a removed BOS keeps the prefix space; a control
	// token is written only when unparsed
	ids := v.Tokenize("Hello", true, false)
	if d := v.DetokenizeWith(ids, DetokenizeOptions{RemoveSpecial: true}); d != " Hello" {
		t.Errorf("detokenize remove_special: %q", d)
	}
	if d := v.DetokenizeWith(ids, DetokenizeOptions{UnparseSpecial: true}); d != "<s> Hello" {
		t.Errorf("detokenize unparse_special: %q", d)
	}
	if d := v.Detokenize(ids); d != "Hello" {
		t.Errorf("Detokenize: %q", d)
	}
	if !v.IsEOG(v.EOS) || v.IsEOG(v.BOS) {
		t.Errorf("IsEOG: eos %v bos %v", v.IsEOG(v.EOS), v.IsEOG(v.BOS))
	}
}

// TestWordPiece: add_special gives CLS and SEP; words that no tokens cover
// are the unknown token.
func TestWordPiece(t *testing.T) {
	v := loadTestVocab(t, "ggml-vocab-bert-bge.gguf")
	got := v.Tokenize("Hello, World!", true, false)
	if len(got) < 3 || got[0] != v.CLS || got[len(got)-1] != v.SEP {
		t.Fatalf("add_special: %v", got)
	}
	// "▁hello" is " hello", and WordPiece has no space prefix to remove
	if d := v.Detokenize(got); d != " hello, world!" {
		t.Errorf("detokenize: %q", d)
	}
	if got := v.Tokenize("\U0001F9FF\U0001F9FF", false, false); !equalIDs(got, []int32{v.UNK}) {
		t.Errorf("uncovered word: %v", got)
	}
}

// rwkvTestVocab is a small RWKV vocabulary: all bytes and a few words, with
// the escapes RWKV World files use.
func rwkvTestVocab() *Vocab {
	v := &Vocab{Model: TokenizerRWKV, BOS: -1, EOS: -1, UNK: -1, SEP: -1, PAD: -1, CLS: -1, EOT: -1}
	for b := range 256 {
		switch {
		case b == '\\':
			v.Tokens = append(v.Tokens, `\\`)
		case b == '\n':
			v.Tokens = append(v.Tokens, `\n`)
		case b < 0x20 || b >= 0x7F:
			v.Tokens = append(v.Tokens, fmt.Sprintf(`\x%02x`, b))
		default:
			v.Tokens = append(v.Tokens, string(rune(b)))
		}
	}
	v.Tokens = append(v.Tokens, "he", "hello", "hello world", `\n\n`, "<|end|>")
	v.Types = make([]TokenType, len(v.Tokens))
	for i := range v.Types {
		v.Types[i] = TokenNormal
	}
	v.Types[len(v.Types)-1] = TokenControl
	v.index(-1, -1, -1, -1, "")
	return v
}

// TestRWKV: greedy longest matches over the bytes, escapes undone.
func TestRWKV(t *testing.T) {
	v := rwkvTestVocab()
	got := v.Tokenize("hello worlds\n\n\n", false, false)
	want := []int32{258, 's', 259, '\n'}
	if !equalIDs(got, want) {
		t.Errorf("got %v want %v", got, want)
	}
	if d := v.Detokenize(got); d != "hello worlds\n\n\n" {
		t.Errorf("detokenize: %q", d)
	}
	if got := v.Tokenize("a<|end|>", false, true); !equalIDs(got, []int32{'a', 260}) {
		t.Errorf("special: %v", got)
	}
}

// TestCleanSpaces: llama.cpp's clean_up_tokenization_spaces passes.
func TestCleanSpaces(t *testing.T) {
	for in, want := range map[string]string{
		"Hello , world !": "Hello, world!",
		"a ' b":           "a'b",
		"it 's I 'm":      "it's I'm",
		"we 're you 've":  "we're you've",
		"don 't I 'll":    "don 't I 'll",
		"":                "",
	} {
		if got := string(cleanSpaces([]byte(in))); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

// fuzzVocab loads a shared vocabulary for a fuzz target, or skips.
func fuzzVocab(f *testing.F, name string) *Vocab {
	v := loadTestVocab(f, name)
	for _, s := range []string{"Hello world", " \u00e9t\u00e9  12345\n\n", "\xff\xfe", "a\xc3", "'s'S 'll", "\u3000\u00a0x", "<s></s>"} {
		f.Add(s)
	}
	return v
}

// FuzzBPE: byte-level BPE (Llama 3's pre-tokenizer) never panics, and its
// pieces give back any text, invalid UTF-8 included.
func FuzzBPE(f *testing.F) {
	v := fuzzVocab(f, "ggml-vocab-llama-bpe.gguf")
	f.Fuzz(func(t *testing.T, text string) {
		var b strings.Builder
		for _, id := range v.Tokenize(text, false, false) {
			b.WriteString(v.Piece(id, false))
		}
		if b.String() != text {
			t.Fatalf("%q: pieces give %q", text, b.String())
		}
	})
}

// FuzzPreTokenizers: every pre-tokenizer cuts any text into non-empty words
// that cover it.
func FuzzPreTokenizers(f *testing.F) {
	for _, s := range []string{"Hello world", "IMGIMGAZ <sentinel:1>  \t\n x", "\xff\xfe 1234567", "ÀbC déF  ", "a\u00a0\u3000b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for name, p := range preTokenizers {
			a := 0
			for _, b := range p.split(text) {
				if b <= a {
					t.Fatalf("%s %q: empty or backward word at %d", name, text, a)
				}
				a = b
			}
			if a != len(text) {
				t.Fatalf("%s %q: words end at %d of %d", name, text, a, len(text))
			}
		}
	})
}

// FuzzSPM: SentencePiece never panics; valid text comes back.
func FuzzSPM(f *testing.F) {
	v := fuzzVocab(f, "ggml-vocab-llama-spm.gguf")
	f.Fuzz(func(t *testing.T, text string) {
		ids := v.Tokenize(text, true, true)
		if d := v.Detokenize(ids); utf8.ValidString(text) && !strings.Contains(text, "<") && d != text && d != strings.TrimPrefix(text, " ") {
			t.Fatalf("%q: detokenized %q", text, d)
		}
	})
}

// FuzzWordPiece: WordPiece never panics and gives only valid ids.
func FuzzWordPiece(f *testing.F) {
	v := fuzzVocab(f, "ggml-vocab-bert-bge.gguf")
	f.Fuzz(func(t *testing.T, text string) {
		for _, id := range v.Tokenize(text, true, true) {
			if id < 0 || int(id) >= v.Size() {
				t.Fatalf("%q: id %d", text, id)
			}
		}
	})
}

// FuzzRWKV: the RWKV tokenizer gives back any bytes.
func FuzzRWKV(f *testing.F) {
	v := rwkvTestVocab()
	f.Add("hello world\n\n\xff")
	f.Fuzz(func(t *testing.T, text string) {
		if d := v.Detokenize(v.Tokenize(text, false, false)); d != text {
			t.Fatalf("%q: %q", text, d)
		}
	})
}

// ugmTestVocab is a small unigram vocabulary without a character map.
func ugmTestVocab(t testing.TB) *Vocab {
	v := &Vocab{Model: TokenizerUGM, BOS: -1, EOS: 1, UNK: 2, SEP: -1, PAD: 0, CLS: -1, EOT: -1, AddEOS: true, AddSpacePrefix: true}
	add := func(text string, typ TokenType, score float32) {
		v.Tokens = append(v.Tokens, text)
		v.Types = append(v.Types, typ)
		v.Scores = append(v.Scores, score)
	}
	add("<pad>", TokenControl, 0)
	add("</s>", TokenControl, 0)
	add("<unk>", TokenUnknown, 0)
	add("▁", TokenNormal, -2)        // 3
	add("▁hello", TokenNormal, -3)   // 4
	add("▁he", TokenNormal, -2)      // 5
	add("llo", TokenNormal, -2)      // 6
	add("h", TokenNormal, -5)        // 7
	add("e", TokenNormal, -5)        // 8
	add("l", TokenNormal, -5)        // 9
	add("o", TokenNormal, -5)        // 10
	add("<x>", TokenUserDefined, -9) // 11
	v.index(-1, -1, -1, -1, "")
	if err := v.newUGM(nil, false); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUnigram: the best-scoring segmentation wins, unknown code points
// merge into one unknown token, user-defined tokens score 0, EOS is added.
func TestUnigram(t *testing.T) {
	v := ugmTestVocab(t)
	for _, c := range []struct {
		text string
		want []int32
	}{
		{"hello", []int32{4, 1}},              // ▁hello (-3) beats ▁he llo (-4)
		{"hello ééh", []int32{4, 3, 2, 7, 1}}, // é é unknown once
		{"<x>hello", []int32{11, 4, 1}},       // a user-defined token is a fragment of its own
	} {
		if got := v.Tokenize(c.text, true, false); !equalIDs(got, c.want) {
			t.Errorf("%q: got %v want %v", c.text, got, c.want)
		}
	}
	if d := v.Detokenize([]int32{4, 3, 7, 1}); d != "hello h" {
		t.Errorf("detokenize: %q", d)
	}
}

// FuzzUnigram: the unigram tokenizer never panics and gives valid ids.
func FuzzUnigram(f *testing.F) {
	f.Add("hello <x> ééh\xff")
	v := ugmTestVocab(f)
	f.Fuzz(func(t *testing.T, text string) {
		for _, id := range v.Tokenize(text, true, true) {
			if id < 0 || int(id) >= v.Size() {
				t.Fatalf("%q: id %d", text, id)
			}
		}
	})
}

// FuzzQwen2Scanner: the hand-written Qwen2 scanner splits as the matcher
// running Qwen2's pattern does.
func FuzzQwen2Scanner(f *testing.F) {
	for _, s := range []string{"Hello  world's 123\n\n x", "a \t\r\n b", "'RE 'Ll !!\n\n", " \u00e9t\u00e9 \u3000x", "x  ", "\xff 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if text == "" {
			return
		}
		s := newSplitText(text)
		want := reSplit(reQwen2, s.units(true), 0, nil)
		if got := scanQwen2(s, 0, len(s.cps), nil); !slices.Equal(got, want) {
			t.Fatalf("%q: scanner %v, matcher %v", text, got, want)
		}
	})
}
