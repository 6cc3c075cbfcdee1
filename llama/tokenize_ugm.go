package llama

import (
	"encoding/binary"
	"errors"
	"math"
)

// Unigram ("t5") tokenization as llama.cpp's llm_tokenizer_ugm_session: the
// text is normalized (the file's precompiled character map, spaces written
// as "▁"), then the tokenization with the best sum of token scores is found
// by dynamic programming over the bytes (Viterbi); a code point no token
// covers is the unknown token, consecutive unknowns one.

// byteTrie is a trie over bytes: node 0 is the root.
type byteTrie struct {
	child map[uint64]int32 // node<<8 | byte -> node
	value []int32          // token at a node, -1: none
}

func newByteTrie() *byteTrie { return &byteTrie{child: map[uint64]int32{}, value: []int32{-1}} }

func (t *byteTrie) insert(key string, id int32) {
	n := int32(0)
	for i := 0; i < len(key); i++ {
		k := uint64(n)<<8 | uint64(key[i])
		c, ok := t.child[k]
		if !ok {
			c = int32(len(t.value))
			t.value = append(t.value, -1)
			t.child[k] = c
		}
		n = c
	}
	t.value[n] = id
}

// next is the child of node n for byte b, or -1.
func (t *byteTrie) next(n int32, b byte) int32 {
	if c, ok := t.child[uint64(n)<<8|uint64(b)]; ok {
		return c
	}
	return -1
}

// depth is how far s can be walked down from the root (llama.cpp's
// naive_trie::get_longest_prefix, which does not ask for a token there).
func (t *byteTrie) depth(s string) int {
	n, d := int32(0), 0
	for d < len(s) {
		if n = t.next(n, s[d]); n < 0 {
			break
		}
		d++
	}
	return d
}

// ugmState is what a unigram vocabulary keeps for tokenizing.
type ugmState struct {
	tokens, userDefined *byteTrie
	unkScore            float32
	xcda                []uint32 // the character map's double array
	replacements        []byte   // its NUL-terminated replacement strings
	removeExtraSpaces   bool
	charsmap            []byte // as the file has it, for saving
}

// newUGM builds the tries and reads the precompiled character map.
func (v *Vocab) newUGM(charsmap []byte, removeExtraSpaces bool) error {
	u := &ugmState{tokens: newByteTrie(), userDefined: newByteTrie(), removeExtraSpaces: removeExtraSpaces, charsmap: charsmap}
	if len(charsmap) > 0 {
		if len(charsmap) < 4 {
			return errors.New("llama: unigram vocabulary: precompiled charsmap too short")
		}
		n := int(binary.LittleEndian.Uint32(charsmap))
		if n < 0 || n+4 >= len(charsmap) {
			return errors.New("llama: unigram vocabulary: precompiled charsmap index out of bounds")
		}
		u.xcda = make([]uint32, n/4)
		for i := range u.xcda {
			u.xcda[i] = binary.LittleEndian.Uint32(charsmap[4+4*i:])
		}
		u.replacements = charsmap[4+n:]
	}
	minScore, maxScore := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for i, t := range v.Types {
		if t == TokenNormal {
			minScore = min(minScore, v.Scores[i])
			maxScore = max(maxScore, v.Scores[i])
		}
		if t == TokenNormal || t == TokenUserDefined || t == TokenUnused {
			u.tokens.insert(v.Tokens[i], int32(i))
		}
		if t == TokenUserDefined {
			u.userDefined.insert(v.Tokens[i], int32(i))
		}
	}
	u.unkScore = minScore - 10
	v.ugm = u
	return nil
}

// ugmTokenize tokenizes text (one fragment) and appends to out.
func (v *Vocab) ugmTokenize(text string, out []int32) []int32 {
	u := v.ugm
	norm := v.ugmNormalize(text)
	n := len(norm)
	if n == 0 {
		return out
	}
	type best struct {
		id    int32
		from  int
		score float32
	}
	res := make([]best, n+1)
	for i := range res {
		res[i] = best{v.UNK, 0, -math.MaxFloat32}
	}
	res[0].score = 0
	for off := 0; off < n; {
		cpLen := min(utf8Len(norm[off]), n-off)
		single := false
		cur := res[off]
		node := u.tokens.next(0, norm[off])
		for p := off + 1; node >= 0; p++ {
			if id := u.tokens.value[node]; id >= 0 {
				if p-off == cpLen {
					single = true
				}
				score := float64(v.Scores[id])
				if v.Types[id] == TokenUserDefined {
					score = 0 // user-defined tokens are preferred
				}
				if c := float64(cur.score) + score; c > float64(res[p].score) {
					res[p] = best{id, off, float32(c)}
				}
			}
			if p >= n {
				break
			}
			node = u.tokens.next(node, norm[p])
		}
		if !single {
			if c := cur.score + u.unkScore; c > res[off+cpLen].score {
				res[off+cpLen] = best{v.UNK, off, c}
			}
		}
		off += cpLen
	}
	mark := len(out)
	prevUnk := false
	for t := res[n]; ; t = res[t.from] {
		unk := t.id == v.UNK
		if !(prevUnk && unk) {
			out = append(out, t.id)
		}
		if t.from == 0 {
			break
		}
		prevUnk = unk
	}
	for i, j := mark, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// ugmNormalize is llm_tokenizer_ugm_session::normalize.
func (v *Vocab) ugmNormalize(text string) []byte {
	u := v.ugm
	space := spmSpace
	prepend := v.AddSpacePrefix
	merge := u.removeExtraSpaces
	out := make([]byte, 0, 3*len(text))
	prepended, inWord := false, false
	for off := 0; off < len(text); {
		piece, used := u.normalizePrefix(text, off)
		for i := 0; i < len(piece); i++ {
			c := piece[i]
			if c != ' ' {
				if !inWord {
					inWord = true
					if (prepend && !prepended) || merge {
						out = append(out, space...)
						prepended = true
					}
				}
				out = append(out, c)
				continue
			}
			inWord = false
			if !merge {
				out = append(out, space...)
			}
		}
		off += used
	}
	return out
}

// normalizePrefix returns the normalized form of the text at off and how
// many bytes it stands for: a user-defined token as it is, the longest
// match of the character map, a valid code point as it is, else U+FFFD
// for one byte.
func (u *ugmState) normalizePrefix(s string, off int) (string, int) {
	if d := u.userDefined.depth(s[off:]); d > 0 {
		return s[off : off+d], d
	}
	if len(u.xcda) > 0 {
		node := func(i uint32) (uint32, bool) {
			if int(i) >= len(u.xcda) {
				return 0, false
			}
			return u.xcda[i], true
		}
		base := func(x uint32) uint32 { return (x >> 10) << ((x & (1 << 9)) >> 6) }
		longest, at := 0, uint32(0)
		root, _ := node(0)
		idx := base(root)
		for p := off; p < len(s) && s[p] != 0; p++ {
			c := uint32(s[p])
			idx ^= c
			x, ok := node(idx)
			if !ok || x&(1<<31|0xFF) != c {
				break
			}
			leaf := (x>>8)&1 == 1
			idx ^= base(x)
			if leaf {
				y, ok := node(idx)
				if !ok {
					break
				}
				longest, at = p-off+1, y&(1<<31-1)
			}
		}
		if longest > 0 && int(at) < len(u.replacements) {
			r := u.replacements[at:]
			end := 0
			for end < len(r) && r[end] != 0 {
				end++
			}
			return string(r[:end]), longest
		}
	}
	if n, ok := refSeqLen(s, off); ok {
		return s[off : off+n], n
	}
	return "\uFFFD", 1
}

// refSeqLen is the length of the UTF-8 sequence at s[off:] if llama.cpp's
// unicode_cpt_from_utf8 accepts it (lead and continuation bytes only).
func refSeqLen(s string, off int) (int, bool) {
	b := s[off]
	n := 0
	switch {
	case b < 0x80:
		return 1, true
	case b&0x40 == 0:
		return 0, false
	case b&0x20 == 0:
		n = 2
	case b&0x10 == 0:
		n = 3
	case b&0x08 == 0:
		n = 4
	default:
		return 0, false
	}
	if off+n > len(s) {
		return 0, false
	}
	for k := 1; k < n; k++ {
		if s[off+k]&0xC0 != 0x80 {
			return 0, false
		}
	}
	return n, true
}
