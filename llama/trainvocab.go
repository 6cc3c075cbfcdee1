package llama

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// TrainVocab learns a SentencePiece-style ("llama") vocabulary of at most
// size tokens from text: the control tokens <unk>, <s>, </s>, the 256 byte
// tokens of the fallback, every character that occurs at least minCount
// times, then pieces made by byte-pair merges (most frequent adjacent pair
// first, within words; a word starts at a space, written "▁"). A merged
// piece gets the score -rank, so SentencePiece's best-score-first merging
// replays the merges in the order they were learned. With size no larger
// than the base set, the vocabulary is character-level.
func TrainVocab(text string, size, minCount int) (*Vocab, error) {
	if !utf8.ValidString(text) {
		return nil, errors.New("llama: TrainVocab: the text is not valid UTF-8")
	}
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []TokenType{TokenUnknown, TokenControl, TokenControl}
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, TokenByte)
	}
	esc := strings.ReplaceAll(text, " ", spmSpace)

	// characters, most frequent first
	chars := map[string]int{}
	for _, r := range esc {
		chars[string(r)]++
	}
	var cs []string
	for c, n := range chars {
		if n >= max(minCount, 1) {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if chars[cs[i]] != chars[cs[j]] {
			return chars[cs[i]] > chars[cs[j]]
		}
		return cs[i] < cs[j]
	})
	known := map[string]bool{}
	for _, c := range cs {
		tokens = append(tokens, c)
		types = append(types, TokenNormal)
		known[c] = true
	}
	scores := make([]float32, len(tokens))
	for i := range scores {
		scores[i] = -1e9 // never produced by a merge: the order of characters does not matter
	}

	// words as sequences of known characters (others break words: they
	// fall back to bytes anyway), with their counts
	type word struct {
		syms  []string
		count int
	}
	counts := map[string]int{}
	for _, w := range splitWords(esc) {
		counts[w]++
	}
	words := make([]word, 0, len(counts))
	for w, n := range counts {
		var syms []string
		for _, r := range w {
			if known[string(r)] {
				syms = append(syms, string(r))
			}
		}
		if len(syms) > 1 {
			words = append(words, word{syms, n})
		}
	}
	sort.Slice(words, func(i, j int) bool { return strings.Join(words[i].syms, "") < strings.Join(words[j].syms, "") })

	for rank := 0; len(tokens) < size; rank++ {
		pairs := map[[2]string]int{}
		for _, w := range words {
			for i := 1; i < len(w.syms); i++ {
				pairs[[2]string{w.syms[i-1], w.syms[i]}] += w.count
			}
		}
		var best [2]string
		bestN := 0
		for p, n := range pairs {
			if n > bestN || (n == bestN && p[0]+p[1] < best[0]+best[1]) || (n == bestN && p[0]+p[1] == best[0]+best[1] && p[0] < best[0]) {
				best, bestN = p, n
			}
		}
		if bestN < 2 {
			break
		}
		merged := best[0] + best[1]
		if !known[merged] {
			known[merged] = true
			tokens = append(tokens, merged)
			types = append(types, TokenNormal)
			scores = append(scores, -float32(rank))
		}
		for wi := range words {
			s := words[wi].syms
			out := s[:0]
			for i := 0; i < len(s); i++ {
				if i+1 < len(s) && s[i] == best[0] && s[i+1] == best[1] {
					out = append(out, merged)
					i++
				} else {
					out = append(out, s[i])
				}
			}
			words[wi].syms = out
		}
	}
	return NewVocab(TokenizerSPM, tokens, scores, types, nil)
}

// splitWords cuts text (spaces written "▁") before every "▁" and around
// newlines.
func splitWords(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if (r == '\u2581' || r == '\n') && i > start {
			out = append(out, s[start:i])
			start = i
		}
		if r == '\n' {
			out = append(out, s[i:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
