package llama

import "fmt"

// Pre-tokenizers of byte-level BPE vocabularies: before merging, the text is
// cut into words by a list of splitting rules, each applied to the pieces the
// previous ones left (tokenizer.ggml.pre names the list). The lists and their
// semantics are llama.cpp's (llama-vocab.cpp, unicode.cpp of cui-llama.rn
// 1.3.3): the GPT-2 and Llama 3 patterns by its hand-written scanners, the
// others as std::regex matches them, over the code points, or over the
// "collapsed" text where \p{L}, \p{N} and \p{P} stand for one byte each.

// preSplit is one splitting rule.
type preSplit struct {
	scan      func(s *splitText, a, b int, out []int) []int // a hand-written scanner
	re        reNode                                        // else a pattern
	collapsed bool                                          // the pattern reads collapsed units
}

// preTokenizer is what a tokenizer.ggml.pre value selects.
type preTokenizer struct {
	splits []preSplit
	// what the value changes of the vocabulary's defaults
	cleanSpaces  bool // clean_up_tokenization_spaces when detokenizing
	ignoreMerges bool // a word that is a token is that token
	addBOS       bool // add_bos_token unless the file says
	noBOS        bool // no BOS token unless the file names one
}

// Units of std::regex's \s in the C locale, and of the classes the collapsed
// text gives \p{L}, \p{N}, \p{P} (k_ucat_map in unicode.cpp).
var (
	reSpace = reIs('\t', '\n', '\v', '\f', '\r', ' ')
	reCRLF  = reIs('\r', '\n')
	cL      = reOr(reIs(0xD2), reRanges('A', 'Z', 'a', 'z'))
	cN      = reOr(reIs(0xD1), reRanges('0', '9'))
	cP      = reOr(reIs(0xD3), reRanges('!', '#', '%', '*', ',', '/', ':', ';', '?', '@', '[', ']', '_', '_', '{', '{', '}', '}'))
)

// collapseUnit is the unit llama.cpp's collapsed text has for a code point.
func collapseUnit(c rune, f cpFlags) int32 {
	switch {
	case c < 128:
		return c
	case f&cpWhitespace != 0:
		return '\v'
	}
	switch f & cpCategories {
	case cpNumber:
		return 0xD1
	case cpLetter:
		return 0xD2
	case cpPunct:
		return 0xD3
	}
	return 0xD0
}

// The patterns (each quoted from llama-vocab.cpp above its Go form).
var (
	// (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	reQwen2 = reAlt{
		reContractions,
		reSeq{reOpt(reNot(reOr(reCRLF, cL, cN))), rePlus(cL)},
		reOne(cN),
		reSeq{reOpt(reIs(' ')), rePlus(reNot(reOr(reSpace, cL, cN))), reStar(reCRLF)},
		reSeq{reStar(reSpace), rePlus(reCRLF)},
		reSeq{rePlus(reSpace), reNotAhead(reNot(reSpace))},
		rePlus(reSpace),
	}
	reContractions = reAlt{
		reSeq{reOne(reIs('\'')), reOne(reIs('s', 'S'))},
		reSeq{reOne(reIs('\'')), reOne(reIs('t', 'T'))},
		reSeq{reOne(reIs('\'')), reOne(reIs('r', 'R')), reOne(reIs('e', 'E'))},
		reSeq{reOne(reIs('\'')), reOne(reIs('v', 'V')), reOne(reIs('e', 'E'))},
		reSeq{reOne(reIs('\'')), reOne(reIs('m', 'M'))},
		reSeq{reOne(reIs('\'')), reOne(reIs('l', 'L')), reOne(reIs('l', 'L'))},
		reSeq{reOne(reIs('\'')), reOne(reIs('d', 'D'))},
	}
	// [^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
	// ((?=[\p{L}])([^a-z])) is one unit of \p{L} but a-z, which in the
	// collapsed text is a class of its own.
	reTekken = func() reNode {
		upper := func(u int32) bool { return cL(u) && !(u >= 'a' && u <= 'z') }
		lower := func(u int32) bool { return cL(u) && !(u >= 'A' && u <= 'Z') }
		x := reNot(reOr(reCRLF, cL, cN))
		return reAlt{
			reSeq{reOpt(x), reStar(upper), rePlus(lower)},
			reSeq{reOpt(x), rePlus(upper), reStar(lower)},
			reOne(cN),
			reSeq{reOpt(reIs(' ')), rePlus(reNot(reOr(reSpace, cL, cN))), reStar(reIs('\r', '\n', '/'))},
			reSeq{reStar(reSpace), rePlus(reCRLF)},
			reSeq{rePlus(reSpace), reNotAhead(reNot(reSpace))},
			rePlus(reSpace),
		}
	}()
	// [\p{P}\$\+<=>\^~\|]+
	rePunctSym = rePlus(reOr(cP, reIs('$', '+', '<', '=', '>', '^', '~', '|')))
	// [0-9][0-9][0-9]
	reDigits3 = reSeq{reOne(reRanges('0', '9')), reOne(reRanges('0', '9')), reOne(reRanges('0', '9'))}
	// [\r\n]
	reNewline = reOne(reCRLF)
	// [一-龥ࠀ-一가-퟿]+
	reCJK = rePlus(reRanges(0x4E00, 0x9FA5, 0x0800, 0x4E00, 0xAC00, 0xD7FF))
	// \s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+
	reDeepseekLetters = reSeq{reOpt(reSpace), rePlus(reRanges(classRanges(
		"A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃")...))}
	// \s?[!-/:-~！-／：-～‘-‟　-。]+
	reDeepseekPunct = reSeq{reOpt(reSpace), rePlus(reRanges(classRanges("!-/:-~！-／：-～‘-‟　-。")...))}
	// \s+$
	reTrailingSpace = reSeq{rePlus(reSpace), reEnd{}}
	// " ?[^(\s|.,!?…。，、।۔،)]+"
	rePoro = reSeq{reOpt(reIs(' ')), rePlus(reNot(reOr(reSpace, reIs('(', '|', '.', ',', '!', '?', '…', '。', '，', '、', '।', '۔', '،', ')'))))}
	// \s?\p{L}+, \s?\p{P}+, \p{N}, \p{N}+
	reSpaceLetters = reSeq{reOpt(reSpace), rePlus(cL)}
	reSpacePunct   = reSeq{reOpt(reSpace), rePlus(cP)}
	reDigit        = reOne(cN)
	reNumber       = rePlus(cN)
	// <sentinel:[0-9]+>, (IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z, ([\t\n]|    |  ), [\p{P}!-/:-@\[-`{-~]
	reSentinel  = reSeq{reLit("<sentinel:"), rePlus(reRanges('0', '9')), reLit(">")}
	reImage     = reSeq{reLit("IMGIMG"), reRep{reRanges('A', 'I'), 1, 4}, reLit("Z")}
	reIndent    = reAlt{reOne(reIs('\t', '\n')), reLit("    "), reLit("  ")}
	rePunctOnly = reOne(reOr(cP, reRanges('!', '/', ':', '@', '[', '`', '{', '~')))
)

// classRanges turns a bracket expression's body of single characters and
// a-b ranges into lo, hi pairs.
func classRanges(s string) []rune {
	rs := []rune(s)
	var out []rune
	for i := 0; i < len(rs); i++ {
		if i+2 < len(rs) && rs[i+1] == '-' {
			out = append(out, rs[i], rs[i+2])
			i += 2
			continue
		}
		out = append(out, rs[i], rs[i])
	}
	return out
}

var (
	splitGPT2   = preSplit{scan: scanGPT2}
	splitLlama3 = preSplit{scan: scanLlama3}
)

func wide(re reNode) preSplit      { return preSplit{re: re} }
func collapsed(re reNode) preSplit { return preSplit{re: re, collapsed: true} }

// Pre-tokenizers by tokenizer.ggml.pre, as llm_load_vocab and
// llm_tokenizer_bpe of llama.cpp map them.
var (
	preDefault = &preTokenizer{cleanSpaces: true, splits: []preSplit{collapsed(rePunctSym), splitGPT2, collapsed(reNumber), wide(reDigits3)}}
	preLlama3  = &preTokenizer{cleanSpaces: true, ignoreMerges: true, addBOS: true, splits: []preSplit{splitLlama3}}
	preGPT2    = &preTokenizer{cleanSpaces: true, splits: []preSplit{splitGPT2}}
	preDigits  = []preSplit{collapsed(reDigit), splitGPT2} // starcoder and kin
	preQwen2   = []preSplit{{scan: scanQwen2}}
	prePoro    = []preSplit{wide(rePoro)}

	preTokenizers = map[string]*preTokenizer{
		"default":        preDefault,
		"llama3":         preLlama3,
		"llama-v3":       preLlama3,
		"llama-bpe":      preLlama3,
		"dbrx":           {cleanSpaces: true, splits: []preSplit{splitLlama3}},
		"smaug-bpe":      {cleanSpaces: true, splits: []preSplit{splitLlama3}},
		"chatglm-bpe":    {cleanSpaces: true, noBOS: true, splits: []preSplit{splitLlama3}},
		"deepseek-llm":   {splits: []preSplit{wide(reNewline), wide(reDeepseekLetters), wide(reDeepseekPunct), wide(reTrailingSpace), wide(reCJK), collapsed(reNumber)}},
		"deepseek-coder": {splits: []preSplit{wide(reNewline), collapsed(reSpaceLetters), collapsed(reSpacePunct), wide(reCJK), collapsed(reDigit)}},
		"falcon":         {cleanSpaces: true, splits: []preSplit{collapsed(rePunctSym), splitGPT2, wide(reDigits3)}},
		"starcoder":      {cleanSpaces: true, splits: preDigits},
		"refact":         {cleanSpaces: true, splits: preDigits},
		"command-r":      {splits: preDigits},
		"smollm":         {splits: preDigits},
		"codeshell":      {cleanSpaces: true, splits: preDigits},
		"exaone":         {cleanSpaces: true, splits: preDigits},
		"gpt-2":          preGPT2,
		"phi-2":          preGPT2,
		"jina-es":        preGPT2,
		"jina-de":        preGPT2,
		"jina-v1-en":     preGPT2,
		"jina-v2-es":     preGPT2,
		"jina-v2-de":     preGPT2,
		"jina-v2-code":   preGPT2,
		"mpt":            preGPT2,
		"olmo":           preGPT2,
		"jais":           preGPT2,
		"qwen2":          {splits: preQwen2},
		"stablelm2":      {cleanSpaces: true, splits: preQwen2},
		"poro-chat":      {splits: prePoro},
		"bloom":          {cleanSpaces: true, splits: prePoro},
		"gpt3-finnish":   {cleanSpaces: true, splits: prePoro},
		"viking":         {splits: []preSplit{wide(rePoro), collapsed(reDigit)}},
		"tekken":         {ignoreMerges: true, addBOS: true, splits: []preSplit{collapsed(reTekken)}},
		"chameleon": {addBOS: true, splits: []preSplit{wide(reSentinel), wide(reImage), wide(reIndent),
			collapsed(reDigit), collapsed(rePunctOnly), splitGPT2}},
	}
)

// PreTokenizers lists the tokenizer.ggml.pre values byte-level BPE
// vocabularies may have (a file without the key gets "default").
func PreTokenizers() []string {
	names := make([]string, 0, len(preTokenizers))
	for n := range preTokenizers {
		names = append(names, n)
	}
	return names
}

// lookupPre returns the pre-tokenizer of a tokenizer.ggml.pre value; an
// unknown one is an error, as llama.cpp refuses it.
func lookupPre(name string) (*preTokenizer, error) {
	if name == "" {
		return preDefault, nil
	}
	p, ok := preTokenizers[name]
	if !ok {
		return nil, fmt.Errorf("llama: unknown pre-tokenizer %q (tokenizer.ggml.pre); llama.cpp 1.3.3 refuses it too", name)
	}
	return p, nil
}

// splitText is a text being pre-tokenized: its code points with their
// flags and byte offsets, and the units the patterns read (made when
// needed).
type splitText struct {
	text  string
	cps   []rune
	flags []cpFlags
	offs  []int // byte offset of each code point, and len(text)
	coll  []int32
	wide  []int32
}

func newSplitText(text string) *splitText {
	n := len(text) // an upper bound of the code points
	s := &splitText{text: text, cps: make([]rune, 0, n), flags: make([]cpFlags, 0, n), offs: make([]int, 0, n+1)}
	for i := 0; i < len(text); {
		c, n, _ := decodeCp(text, i)
		s.cps = append(s.cps, c)
		s.flags = append(s.flags, flagsOf(c))
		s.offs = append(s.offs, i)
		i += n
	}
	s.offs = append(s.offs, len(text))
	return s
}

func (s *splitText) units(collapsed bool) []int32 {
	if collapsed {
		if s.coll == nil {
			s.coll = make([]int32, len(s.cps))
			for i, c := range s.cps {
				s.coll[i] = collapseUnit(c, s.flags[i])
			}
		}
		return s.coll
	}
	if s.wide == nil {
		s.wide = make([]int32, len(s.cps))
		for i, c := range s.cps {
			if c > 0x7F && s.flags[i]&cpWhitespace != 0 {
				c = '\v' // as llama.cpp: std::wregex's \s knows ASCII only
			}
			s.wide[i] = c
		}
	}
	return s.wide
}

// split returns the words of text as byte ranges: ends[i] is the end of
// word i (each starts where the previous ends).
func (p *preTokenizer) split(text string) []int {
	if text == "" {
		return nil
	}
	s := newSplitText(text)
	ends := []int{len(s.cps)} // word ends, in code points
	var next []int
	for _, sp := range p.splits {
		next = next[:0]
		a := 0
		for _, b := range ends {
			if sp.scan != nil {
				next = sp.scan(s, a, b, next)
			} else {
				next = reSplit(sp.re, s.units(sp.collapsed)[a:b], a, next)
			}
			a = b
		}
		ends, next = next, ends
	}
	for i, e := range ends {
		ends[i] = s.offs[e]
	}
	return ends
}

// reSplit cuts in (which starts at code point base) at the matches of re
// and between them, as llama.cpp's unicode_regex_split_stl does.
func reSplit(re reNode, in []int32, base int, out []int) []int {
	last := 0
	for pos := 0; pos < len(in); {
		a, b, ok := reFind(re, in, pos)
		if !ok {
			break
		}
		if b == a { // an empty match: none of the patterns has one
			pos = a + 1
			continue
		}
		if a > last {
			out = append(out, base+a)
		}
		out = append(out, base+b)
		last, pos = b, b
	}
	if last < len(in) {
		out = append(out, base+len(in))
	}
	return out
}

// chunk is a scanner's view of code points a..b: outside, no code point
// (-1) and no flags; add ends a word.
type chunk struct {
	s          *splitText
	a, b, prev int
	out        []int
}

func (c *chunk) cpt(i int) rune {
	if i >= c.a && i < c.b {
		return c.s.cps[i]
	}
	return -1
}

func (c *chunk) fl(i int) cpFlags {
	if i >= c.a && i < c.b {
		return c.s.flags[i]
	}
	return 0
}

// add ends a word at end (nothing when it would be empty) and returns its
// length.
func (c *chunk) add(end int) int {
	n := end - c.prev
	if n > 0 {
		c.out = append(c.out, end)
	}
	c.prev = end
	return n
}

// contraction ends a word after 's 't 'm 'd 're 've 'll at pos (lower
// maps the letters) and returns its length, or 0.
func (c *chunk) contraction(pos int, lower func(rune) rune) int {
	if c.cpt(pos) != '\'' || pos+1 >= c.b {
		return 0
	}
	n := lower(c.cpt(pos + 1))
	if n == 's' || n == 't' || n == 'm' || n == 'd' {
		return c.add(pos + 2)
	}
	if pos+2 < c.b {
		nn := lower(c.cpt(pos + 2))
		if (n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l') {
			return c.add(pos + 3)
		}
	}
	return 0
}

// spaces ends the word of the whitespace at pos as both scanners do
// (\s+(?!\S), else \s+, else the code point alone) and returns the next
// position.
func (c *chunk) spaces(pos int) int {
	nws := 0
	for c.fl(pos+nws)&cpWhitespace != 0 {
		nws++
	}
	switch {
	case nws > 1 && c.cpt(pos+nws) >= 0:
		pos += nws - 1
	case nws > 0:
		pos += nws
	default:
		pos++
	}
	c.add(pos)
	return pos
}

func identity(r rune) rune { return r }

// scanGPT2 is llama.cpp's hand-written scanner for the GPT-2 pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
//
// over code points a..b, appending word ends to out.
func scanGPT2(s *splitText, a, b int, out []int) []int {
	c := &chunk{s: s, a: a, b: b, prev: a, out: out}
	other := func(f cpFlags) bool { return f&(cpWhitespace|cpLetter|cpNumber) == 0 && f != 0 }
	for pos := a; pos < b; {
		if n := c.contraction(pos, identity); n > 0 {
			pos += n
			continue
		}
		r, f := c.cpt(pos), c.fl(pos)
		f2 := f
		if r == ' ' {
			f2 = c.fl(pos + 1)
		}
		if f2&cpLetter != 0 || f2&cpNumber != 0 || other(f2) {
			if r == ' ' {
				pos++
			}
			switch {
			case f2&cpLetter != 0:
				for c.fl(pos)&cpLetter != 0 {
					pos++
				}
			case f2&cpNumber != 0:
				for c.fl(pos)&cpNumber != 0 {
					pos++
				}
			default:
				for other(c.fl(pos)) {
					pos++
				}
			}
			c.add(pos)
			continue
		}
		pos = c.spaces(pos)
	}
	return c.out
}

// scanLlama3 is llama.cpp's hand-written scanner for the Llama 3 pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// over code points a..b, appending word ends to out.
func scanLlama3(s *splitText, a, b int, out []int) []int {
	c := &chunk{s: s, a: a, b: b, prev: a, out: out}
	for pos := a; pos < b; {
		if n := c.contraction(pos, cpLower); n > 0 {
			pos += n
			continue
		}
		r, f := c.cpt(pos), c.fl(pos)
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if !(r == '\r' || r == '\n' || f&cpNumber != 0) {
			if f&cpLetter != 0 || c.fl(pos+1)&cpLetter != 0 {
				pos++
				for c.fl(pos)&cpLetter != 0 {
					pos++
				}
				c.add(pos)
				continue
			}
		}
		// \p{N}{1,3}
		if f&cpNumber != 0 {
			ini := pos
			for c.fl(pos)&cpNumber != 0 {
				pos++
				if pos-ini >= 3 {
					c.add(pos)
					ini = pos
				}
			}
			c.add(pos)
			continue
		}
		// <space>?[^\s\p{L}\p{N}]+[\r\n]*  (the reference tests the flags
		// of the first code point, not of the one after the space)
		f2 := f
		if r == ' ' {
			f2 = c.fl(pos + 1)
		}
		if f2&(cpWhitespace|cpLetter|cpNumber) == 0 && f != 0 {
			if r == ' ' {
				pos++
			}
			for f2&(cpWhitespace|cpLetter|cpNumber) == 0 && f2 != 0 {
				pos++
				f2 = c.fl(pos)
			}
			for r2 := c.cpt(pos); r2 == '\r' || r2 == '\n'; r2 = c.cpt(pos) {
				pos++
			}
			c.add(pos)
			continue
		}
		// \s*[\r\n]+: up to the last newline of the whitespace
		lastNL := 0
		for k := pos; c.fl(k)&cpWhitespace != 0; k++ {
			if r2 := c.cpt(k); r2 == '\r' || r2 == '\n' {
				lastNL = k + 1
			}
		}
		if lastNL > 0 {
			pos = lastNL
			c.add(pos)
			continue
		}
		pos = c.spaces(pos)
	}
	return c.out
}

// scanQwen2 splits code points a..b as reQwen2 does (the fuzz test
// FuzzQwen2Scanner checks it against the matcher), without backtracking:
// each alternative's first success is decided by the runs at pos.
func scanQwen2(s *splitText, a, b int, out []int) []int {
	in := s.units(true)[a:b]
	n := len(in)
	run := func(p int, c reClass) int {
		for p < n && c(in[p]) {
			p++
		}
		return p
	}
	isQ := func(u int32) bool { return !reSpace(u) && !cL(u) && !cN(u) }
	for p := 0; p < n; {
		e := qwen2Contraction(in, p)
		switch {
		case e > 0:
		case cL(in[p]):
			e = run(p, cL)
		case p+1 < n && cL(in[p+1]) && !reCRLF(in[p]) && !cN(in[p]):
			e = run(p+1, cL)
		case cN(in[p]):
			e = p + 1
		case isQ(in[p]) || (in[p] == ' ' && p+1 < n && isQ(in[p+1])):
			e = run(run(p+1, isQ), reCRLF)
		default: // whitespace
			ws := run(p, reSpace)
			lastNL := -1
			for k := p; k < ws; k++ {
				if reCRLF(in[k]) {
					lastNL = k
				}
			}
			switch {
			case lastNL >= 0:
				e = lastNL + 1
			case ws == n || ws-p < 2:
				e = ws
			default:
				e = ws - 1
			}
		}
		out = append(out, a+e)
		p = e
	}
	return out
}

// qwen2Contraction is the end of (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]) at p, or 0.
func qwen2Contraction(in []int32, p int) int {
	if in[p] != '\'' || p+1 >= len(in) {
		return 0
	}
	lower := func(u int32) int32 {
		if u >= 'A' && u <= 'Z' {
			return u + 'a' - 'A'
		}
		return u
	}
	switch c := lower(in[p+1]); {
	case c == 's' || c == 't' || c == 'm' || c == 'd':
		return p + 2
	case p+2 < len(in) && ((c == 'r' || c == 'v') && lower(in[p+2]) == 'e' || c == 'l' && lower(in[p+2]) == 'l'):
		return p + 3
	}
	return 0
}
