package llama

import (
	"fmt"
	"strings"
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

// bpeDecode is the inverse of bpeEncode, as llama.cpp's llama_decode_text:
// a character outside the alphabet is written as "[UNK_BYTE_0x" + its
// UTF-8 bytes in hex + the whole token text + "]".
func bpeDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n, _ := decodeCp(s, i)
		i += n
		if c, ok := runeByte[r]; ok {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "[UNK_BYTE_0x%x%s]", string(utf8.AppendRune(nil, r)), s)
	}
	return b.String()
}

type bpeBigram struct {
	left, right int
	rank        int32
	ln, rn      int // the sizes of both sides when queued: a merge since makes it stale
}

// bpe tokenizes text (one fragment) and appends to out, as llama.cpp's
// llm_tokenizer_bpe_session: each word of the pre-tokenizer is merged apart
// from the others.
func (v *Vocab) bpe(text string, out []int32) []int32 {
	var q heap[bpeBigram]
	q.less = func(a, b bpeBigram) bool {
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.left < b.left
	}
	var syms []symbol
	start := 0
	for _, end := range v.pre.split(text) {
		word := bpeEncode(text[start:end])
		start = end
		if v.pre.ignoreMerges {
			if id, ok := v.ids[word]; ok {
				out = append(out, id)
				continue
			}
		}
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
