package llama

import "unicode/utf8"

// WordPiece ("bert") tokenization as llama.cpp's llm_tokenizer_wpm_session:
// the text is normalized (each code point to the first of its canonical
// decomposition, lower-cased, controls dropped) and cut into words at
// whitespace, around punctuation, ASCII symbols and CJK ideographs; each
// word, prefixed with "▁", is covered by the longest tokens from its start,
// or is the unknown token when it cannot be covered.

// wpm tokenizes text (one fragment) and appends to out.
func (v *Vocab) wpm(text string, out []int32) []int32 {
	for _, w := range wpmWords(text) {
		word := spmSpace + w
		n := len(word)
		mark := len(out)
		for i := 0; i < n; {
			found := false
			for j := min(n, i+v.maxTokenLen+1); j > i; j-- {
				if id, ok := v.ids[word[i:j]]; ok {
					out = append(out, id)
					found = true
					i = j
					break
				}
			}
			if !found {
				out = out[:mark]
				break
			}
		}
		if len(out) == mark {
			out = append(out, v.UNK)
		}
	}
	return out
}

// wpmWords is llama.cpp's llm_tokenizer_wpm_session::preprocess.
func wpmWords(text string) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(text); {
		c, n, _ := decodeCp(text, i)
		i += n
		c = cpNFD(c)
		f := flagsOf(c)
		if f&cpWhitespace != 0 {
			flush()
			continue
		}
		if c == 0 || c == 0xFFFD || f&cpControl != 0 {
			continue
		}
		lc := cpLower(c)
		if f&cpPunct != 0 || (c < 0x7F && f&cpSymbol != 0) || isChineseCp(c) {
			flush()
			words = append(words, string(utf8.AppendRune(nil, lc)))
			continue
		}
		cur = utf8.AppendRune(cur, lc)
	}
	flush()
	return words
}

// isChineseCp is the reference's is_chinese_char: the CJK ideograph blocks
// (with its 0x2B920 where Unicode's block starts at 0x2B820, as Hugging
// Face's code has it).
func isChineseCp(c rune) bool {
	return (c >= 0x4E00 && c <= 0x9FFF) ||
		(c >= 0x3400 && c <= 0x4DBF) ||
		(c >= 0x20000 && c <= 0x2A6DF) ||
		(c >= 0x2A700 && c <= 0x2B73F) ||
		(c >= 0x2B740 && c <= 0x2B81F) ||
		(c >= 0x2B920 && c <= 0x2CEAF) ||
		(c >= 0xF900 && c <= 0xFAFF) ||
		(c >= 0x2F800 && c <= 0x2FA1F)
}
