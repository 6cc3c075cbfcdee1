package llama

// SentencePiece ("llama") tokenization as llama.cpp does it: the text is cut
// into UTF-8 characters, then adjacent pieces are merged, best vocabulary
// score first (leftmost on ties), as long as the merged text is a token.
// Pieces that are not tokens fall back to their bytes (<0xNN> tokens).

const spmSpace = "\u2581" // "▁": how SentencePiece writes a space

// utf8Len is the length of the UTF-8 sequence a lead byte announces; a
// stray continuation byte counts as one character (as llama.cpp's utf8_len).
func utf8Len(b byte) int {
	switch {
	case b < 0xC0:
		return 1
	case b < 0xE0:
		return 2
	case b < 0xF0:
		return 3
	}
	return 4
}

// symbol is a piece of the text being merged: a doubly linked list over
// the pieces still alive (n > 0).
type symbol struct {
	start, n   int
	prev, next int
}

// splitChars cuts s into characters (utf8Len), linked in order.
func splitChars(s string, syms []symbol) []symbol {
	for off := 0; off < len(s); {
		n := min(utf8Len(s[off]), len(s)-off)
		i := len(syms)
		syms = append(syms, symbol{start: off, n: n, prev: i - 1, next: i + 1})
		off += n
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

type spmBigram struct {
	left, right int
	score       float32
	size        int
}

type spmSession struct {
	v     *Vocab
	text  string
	syms  []symbol
	queue heap[spmBigram]
}

// spm tokenizes text (spaces already written as "▁") and appends to out.
func (v *Vocab) spm(text string, out []int32) []int32 {
	s := &spmSession{v: v, text: text}
	s.queue.less = func(a, b spmBigram) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.left < b.left
	}
	s.syms = splitChars(text, nil)
	for i := 1; i < len(s.syms); i++ {
		s.tryPair(i-1, i)
	}
	for s.queue.len() > 0 {
		b := s.queue.pop()
		l, r := &s.syms[b.left], &s.syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue // one side was merged elsewhere since
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			s.syms[r.next].prev = b.left
		}
		s.tryPair(l.prev, b.left)
		s.tryPair(b.left, l.next)
	}
	for i := 0; i >= 0 && i < len(s.syms); i = s.syms[i].next {
		out = s.emit(i, out)
	}
	return out
}

func (s *spmSession) piece(i int) string {
	return s.text[s.syms[i].start : s.syms[i].start+s.syms[i].n]
}

// tryPair queues the merge of symbols left and right if their text is a token.
func (s *spmSession) tryPair(left, right int) {
	if left < 0 || right < 0 {
		return
	}
	l, r := s.syms[left], s.syms[right]
	t := s.text[l.start : l.start+l.n+r.n]
	id, ok := s.v.ids[t]
	if !ok {
		return
	}
	s.queue.push(spmBigram{left: left, right: right, score: s.v.Scores[id], size: len(t)})
}

// emit appends the tokens of symbol i: its token, or else (a character that
// is no token: merged pieces always are) its bytes.
func (s *spmSession) emit(i int, out []int32) []int32 {
	t := s.piece(i)
	if id, ok := s.v.ids[t]; ok {
		return append(out, id)
	}
	for j := 0; j < len(t); j++ {
		if id := s.v.byteTok[t[j]]; id >= 0 {
			out = append(out, id)
		}
	}
	return out
}
