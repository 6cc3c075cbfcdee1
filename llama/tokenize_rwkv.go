package llama

// RWKV World tokenization as llama.cpp's llm_tokenizer_rwkv_session: from
// each position, the longest token whose bytes the text continues with.
// Token texts are escaped (\t \n \r \xNN and \c for c).

// rwkvTokenize tokenizes text (one fragment) and appends to out. A byte no
// token starts with gives the unknown token, or nothing when the vocabulary
// has none (llama.cpp would emit the id -1).
func (v *Vocab) rwkvTokenize(text string, out []int32) []int32 {
	for pos := 0; pos < len(text); {
		n := 0
		var id int32
		for l := min(v.rwkvMax, len(text)-pos); l > 0; l-- {
			if t, ok := v.rwkv[text[pos:pos+l]]; ok {
				n, id = l, t
				break
			}
		}
		if n == 0 {
			if v.UNK >= 0 {
				out = append(out, v.UNK)
			}
			pos++
			continue
		}
		out = append(out, id)
		pos += n
	}
	return out
}

// rwkvUnescape is llama.cpp's llama_unescape_rwkv_token.
func rwkvUnescape(s string) []byte {
	out := make([]byte, 0, len(s))
	escaping := false
	hexLeft, acc := 0, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case hexLeft > 0:
			var d byte
			if c >= 'a' {
				d = c - 'a' + 10
			} else {
				d = c - '0'
			}
			acc = acc<<4 + d
			if hexLeft--; hexLeft == 0 {
				out = append(out, acc)
				acc = 0
			}
		case escaping:
			switch c {
			case 't':
				out = append(out, '\t')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 'x':
				hexLeft = 2
			default:
				out = append(out, c)
			}
			escaping = false
		case c == '\\':
			escaping = true
		default:
			out = append(out, c)
		}
	}
	return out
}
