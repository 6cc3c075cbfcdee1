package llama

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Byte-level BPE ("gpt2") tokenization: the text is split into words by the
// pre-tokenizer, each word's bytes are written as printable characters (the
// GPT-2 byte alphabet), then adjacent pieces merge by merge rank (lowest
// first, leftmost on ties) while a ranked merge exists.

// byteRune maps a byte to the character the GPT-2 alphabet writes it as:
// printable Latin-1 bytes stand for themselves, the others (controls,
// space, DEL, NBSP, soft hyphen) for 256, 257, ... in byte order.
var byteRune, runeByte = func() ([256]rune, map[rune]byte) {
	var br [256]rune
	rb := make(map[rune]byte, 256)
	next := rune(256)
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE {
			br[b] = rune(b)
		} else {
			br[b] = next
			next++
		}
		rb[br[b]] = byte(b)
	}
	return br, rb
}()

// bpeEncode writes the bytes of s in the GPT-2 alphabet.
func bpeEncode(s string) string {
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteRune[s[i]])
	}
	return b.String()
}

// bpeDecode is the inverse of bpeEncode; characters outside the alphabet are
// kept as they are.
func bpeDecode(s string) string {
	var b strings.Builder
	for _, r := range s {
		if c, ok := runeByte[r]; ok {
			b.WriteByte(c)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

type bpeBigram struct {
	left, right int
	rank        int32
	ln, rn      int // the sizes of both sides when queued: a merge since makes it stale
}

// bpe tokenizes text (one fragment) and appends to out.
func (v *Vocab) bpe(text string, out []int32) []int32 {
	var q heap[bpeBigram]
	q.less = func(a, b bpeBigram) bool {
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.left < b.left
	}
	var syms []symbol
	for _, w := range splitGPT2(text) {
		word := bpeEncode(w)
		syms = splitChars(word, syms[:0])
		piece := func(i int) string { return word[syms[i].start : syms[i].start+syms[i].n] }
		pair := func(l, r int) {
			if l < 0 || r < 0 {
				return
			}
			if rank, ok := v.ranks[bpePair{piece(l), piece(r)}]; ok {
				q.push(bpeBigram{left: l, right: r, rank: rank, ln: syms[l].n, rn: syms[r].n})
			}
		}
		for i := 1; i < len(syms); i++ {
			pair(i-1, i)
		}
		for q.len() > 0 {
			b := q.pop()
			l, r := &syms[b.left], &syms[b.right]
			// outdated: a side was merged elsewhere since (a symbol only
			// grows, at its end, so its size tells)
			if l.n != b.ln || r.n != b.rn {
				continue
			}
			l.n += r.n
			r.n = 0
			l.next = r.next
			if r.next >= 0 {
				syms[r.next].prev = b.left
			}
			pair(l.prev, b.left)
			pair(b.left, l.next)
		}
		for i := 0; i >= 0 && i < len(syms); i = syms[i].next {
			t := piece(i)
			if id, ok := v.ids[t]; ok {
				out = append(out, id)
				continue
			}
			// not a token: its single bytes, where those are tokens
			for j := 0; j < len(t); j++ {
				if id, ok := v.ids[t[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

// Character classes of the GPT-2 pre-tokenizer pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// (Go's regexp has no lookahead, so it is matched by hand below.)
func isL(r rune) bool     { return unicode.IsLetter(r) }
func isN(r rune) bool     { return unicode.IsNumber(r) }
func isSpace(r rune) bool { return unicode.IsSpace(r) }
func isOther(r rune) bool { return !isSpace(r) && !isL(r) && !isN(r) }

// splitGPT2 cuts text into the words of the GPT-2 pattern. It works on byte
// offsets so that invalid UTF-8 passes through unchanged (an invalid byte is
// a character of class "other").
func splitGPT2(text string) []string {
	var words []string
	at := func(i int) (rune, int) {
		if i >= len(text) {
			return -1, 0
		}
		return utf8.DecodeRuneInString(text[i:])
	}
	// run returns the end of the run of characters of class cls from i.
	run := func(i int, cls func(rune) bool) int {
		for {
			r, n := at(i)
			if n == 0 || !cls(r) {
				return i
			}
			i += n
		}
	}
	for i := 0; i < len(text); {
		r, n := at(i)
		// contractions
		if r == '\'' {
			rest := text[i+1:]
			if len(rest) >= 2 && (rest[:2] == "re" || rest[:2] == "ve" || rest[:2] == "ll") {
				words = append(words, text[i:i+3])
				i += 3
				continue
			}
			if len(rest) >= 1 && strings.IndexByte("stmd", rest[0]) >= 0 {
				words = append(words, text[i:i+2])
				i += 2
				continue
			}
		}
		// an optional space, then a run of letters, numbers or others
		j, c := i, r
		if r == ' ' {
			if r2, n2 := at(i + n); n2 > 0 {
				j, c = i+n, r2
			}
		}
		var end int
		switch {
		case c >= 0 && isL(c):
			end = run(j, isL)
		case c >= 0 && isN(c):
			end = run(j, isN)
		case c >= 0 && isOther(c):
			end = run(j, isOther)
		}
		if end > j {
			words = append(words, text[i:end])
			i = end
			continue
		}
		// whitespace: \s+(?!\S) keeps the last space for the next word
		// when a non-space follows; a single space then matches \s+
		end = run(i, isSpace)
		if end < len(text) && end-i > 0 {
			_, ln := utf8.DecodeLastRuneInString(text[i:end])
			if end-ln > i {
				end -= ln
			}
		}
		if end == i {
			end = i + n // cannot happen: every character has a class
		}
		words = append(words, text[i:end])
		i = end
	}
	return words
}
