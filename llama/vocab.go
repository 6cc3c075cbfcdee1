package llama

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ggml-go/ggml/gguf"
)

// TokenType is the kind of a vocabulary entry (tokenizer.ggml.token_type).
type TokenType int32

// Token types, with the values GGUF files store.
const (
	TokenUndefined   TokenType = 0
	TokenNormal      TokenType = 1
	TokenUnknown     TokenType = 2
	TokenControl     TokenType = 3 // <s>, </s>, <|endoftext|>: never produced from text unless parsed as special
	TokenUserDefined TokenType = 4 // always matched verbatim in text
	TokenUnused      TokenType = 5
	TokenByte        TokenType = 6 // <0xNN>: SentencePiece byte fallback
)

// Tokenizer kinds (tokenizer.ggml.model).
const (
	TokenizerSPM  = "llama" // SentencePiece: scores, byte fallback, "▁" for spaces
	TokenizerBPE  = "gpt2"  // byte-level BPE with ranked merges and a pre-tokenizer
	TokenizerWPM  = "bert"  // WordPiece: lower-cased, accents stripped, greedy longest match
	TokenizerRWKV = "rwkv"  // RWKV World: greedy longest match over the bytes
	TokenizerUGM  = "t5"    // Unigram: best sum of token scores, precompiled character map
	TokenizerNone = "none"
)

// Vocab is a model's tokenizer, read from the tokenizer.ggml.* keys of its
// GGUF file, with llama.cpp's (1.3.3) rules and defaults: the same text
// gives the same ids as llama_tokenize, the same ids the same bytes as
// llama_token_to_piece and llama_detokenize. It is immutable after loading
// and safe for concurrent use.
type Vocab struct {
	Model string // TokenizerSPM, TokenizerBPE, TokenizerWPM, TokenizerRWKV, TokenizerUGM or TokenizerNone
	Pre   string // pre-tokenizer name of BPE vocabularies (tokenizer.ggml.pre)
	// Deprecated: every pre-tokenizer llama.cpp knows is implemented and an
	// unknown one is refused when loading, so PreApprox is always false.
	PreApprox bool
	Tokens    []string
	Scores    []float32 // SPM merge priorities (higher merges first); nil for BPE
	Types     []TokenType

	// Special tokens, -1 when the vocabulary has none.
	BOS, EOS, UNK      int32
	SEP, PAD, CLS, EOT int32
	AddBOS, AddEOS     bool // what Tokenize adds when asked for special tokens (WordPiece: CLS and SEP always)
	// AddSpacePrefix: SPM prepends a space to text that starts a fragment
	// (and Detokenize removes it again).
	AddSpacePrefix bool
	// CleanSpaces: detokenizing removes the spaces before ? ! . , and
	// some apostrophes (clean_up_tokenization_spaces).
	CleanSpaces bool
	// ChatTemplate is the file's tokenizer.chat_template ("" if none).
	ChatTemplate string

	ids         map[string]int32
	ranks       map[bpePair]int32 // BPE merge ranks
	pre         *preTokenizer     // BPE
	byteTok     [256]int32        // SPM: token of each byte for the fallback (-1: none)
	specials    []int32           // control, user-defined and unknown tokens, longest text first
	strip       map[int32]tokenStrip
	eog         map[int32]bool
	maxTokenLen int              // WPM
	rwkv        map[string]int32 // RWKV: the tokens' bytes
	rwkvMax     int
	ugm         *ugmState
}

type bpePair struct{ left, right string }

// tokenStrip are llama.cpp's LSTRIP / RSTRIP token attributes: the spaces
// before / after the token in the text are not tokenized.
type tokenStrip uint8

const (
	stripLeft tokenStrip = 1 << iota
	stripRight
)

// vocabKeys are the GGUF keys of the tokenizer.
const (
	keyTokModel     = "tokenizer.ggml.model"
	keyTokPre       = "tokenizer.ggml.pre"
	keyTokTokens    = "tokenizer.ggml.tokens"
	keyTokScores    = "tokenizer.ggml.scores"
	keyTokTypes     = "tokenizer.ggml.token_type"
	keyTokMerges    = "tokenizer.ggml.merges"
	keyTokBOS       = "tokenizer.ggml.bos_token_id"
	keyTokEOS       = "tokenizer.ggml.eos_token_id"
	keyTokUNK       = "tokenizer.ggml.unknown_token_id"
	keyTokAddBOS    = "tokenizer.ggml.add_bos_token"
	keyTokAddEOS    = "tokenizer.ggml.add_eos_token"
	keyTokAddPrefix = "tokenizer.ggml.add_space_prefix"
	keyChatTemplate = "tokenizer.chat_template"
	keyTokEOT       = "tokenizer.ggml.eot_token_id"
	keyTokEOM       = "tokenizer.ggml.eom_token_id"
	keyTokSEP       = "tokenizer.ggml.seperator_token_id" // sic, as llama.cpp writes it
	keyTokPAD       = "tokenizer.ggml.padding_token_id"
	keyTokCLS       = "tokenizer.ggml.cls_token_id"

	keyTokCharsmap      = "tokenizer.ggml.precompiled_charsmap"
	keyTokRemoveExtraWS = "tokenizer.ggml.remove_extra_whitespaces"
)

// LoadVocab reads the tokenizer of a GGUF file. Files without
// tokenizer.ggml.tokens give a Vocab of Model TokenizerNone (tokens can then
// only be given as ids). A tokenizer model or pre-tokenizer llama.cpp does
// not know is an error naming it.
func LoadVocab(f *gguf.File) (*Vocab, error) {
	v := &Vocab{BOS: -1, EOS: -1, UNK: -1, SEP: -1, PAD: -1, CLS: -1, EOT: -1}
	model, _ := f.String(keyTokModel)
	if !f.Has(keyTokTokens) || model == "no_vocab" {
		v.Model = TokenizerNone
		if id, err := f.Int(keyTokBOS); err == nil {
			v.BOS = int32(id)
		}
		return v, nil
	}
	var err error
	if v.Model, err = f.String(keyTokModel); err != nil {
		return nil, fmt.Errorf("llama: vocabulary: %w", err)
	}
	if v.Tokens, err = f.Strings(keyTokTokens); err != nil {
		return nil, fmt.Errorf("llama: vocabulary: %w", err)
	}
	n := len(v.Tokens)
	if n == 0 {
		return nil, errors.New("llama: vocabulary: no tokens")
	}
	v.Types = make([]TokenType, n)
	if f.Has(keyTokTypes) {
		tt, err := f.Int32s(keyTokTypes)
		if err != nil {
			return nil, fmt.Errorf("llama: vocabulary: %w", err)
		}
		if len(tt) != n {
			return nil, fmt.Errorf("llama: vocabulary: %d token types for %d tokens", len(tt), n)
		}
		for i, t := range tt {
			v.Types[i] = TokenType(t)
		}
	} else {
		for i := range v.Types {
			v.Types[i] = TokenNormal
		}
	}
	if f.Has(keyTokScores) {
		if v.Scores, err = f.Float32s(keyTokScores); err != nil {
			return nil, fmt.Errorf("llama: vocabulary: %w", err)
		}
		if len(v.Scores) != n {
			return nil, fmt.Errorf("llama: vocabulary: %d scores for %d tokens", len(v.Scores), n)
		}
	}
	v.Pre, _ = f.String(keyTokPre)
	v.ChatTemplate, _ = f.String(keyChatTemplate)

	// the defaults of llm_load_vocab per tokenizer model
	switch v.Model {
	case TokenizerSPM:
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		v.AddBOS, v.AddSpacePrefix = true, true
		if v.Scores == nil {
			v.Scores = make([]float32, n)
		}
	case TokenizerWPM:
		v.UNK, v.SEP, v.PAD, v.CLS = 100, 102, 0, 101
		v.AddBOS, v.CleanSpaces = true, true
	case TokenizerRWKV:
	case TokenizerUGM:
		v.EOS, v.UNK, v.PAD = 1, 2, 0
		v.AddEOS = true
		if v.Scores == nil {
			v.Scores = make([]float32, n)
		}
	case TokenizerBPE:
		v.BOS, v.EOS = 11, 11
		if v.pre, err = lookupPre(v.Pre); err != nil {
			return nil, err
		}
		v.CleanSpaces, v.AddBOS = v.pre.cleanSpaces, v.pre.addBOS
		if v.pre.noBOS {
			v.BOS = -1
		}
		merges, err := f.Strings(keyTokMerges)
		if err != nil {
			return nil, fmt.Errorf("llama: BPE vocabulary: %w", err)
		}
		v.ranks = make(map[bpePair]int32, len(merges))
		for i, m := range merges {
			// the separator is the first space after the first byte (a merge
			// part is never empty)
			k := strings.IndexByte(m[min(1, len(m)):], ' ')
			if k < 0 {
				return nil, fmt.Errorf("llama: BPE vocabulary: merge %d %q has no separator", i, m)
			}
			k += min(1, len(m))
			p := bpePair{m[:k], m[k+1:]}
			if _, dup := v.ranks[p]; !dup {
				v.ranks[p] = int32(i)
			}
		}
	default:
		return nil, fmt.Errorf("llama: tokenizer model %q is not supported (llama, gpt2, bert, rwkv and t5 are)", v.Model)
	}
	if f.Has(keyTokAddPrefix) {
		if v.AddSpacePrefix, err = f.Bool(keyTokAddPrefix); err != nil {
			return nil, fmt.Errorf("llama: vocabulary: %w", err)
		}
	}

	// special token ids: an id out of range keeps the default, as llama.cpp
	var eom, fimPad, fimRep, fimSep int32 = -1, -1, -1, -1
	for _, k := range []struct {
		key string
		dst *int32
	}{{keyTokBOS, &v.BOS}, {keyTokEOS, &v.EOS}, {keyTokEOT, &v.EOT}, {keyTokEOM, &eom}, {keyTokUNK, &v.UNK},
		{keyTokSEP, &v.SEP}, {keyTokPAD, &v.PAD}, {keyTokCLS, &v.CLS},
		{"tokenizer.ggml.fim_pad_token_id", &fimPad}, {"tokenizer.ggml.fim_rep_token_id", &fimRep},
		{"tokenizer.ggml.fim_sep_token_id", &fimSep}} {
		if !f.Has(k.key) {
			continue
		}
		id, err := f.Int(k.key)
		if err != nil {
			return nil, fmt.Errorf("llama: vocabulary: %w", err)
		}
		if id >= 0 && id < int64(n) {
			*k.dst = int32(id)
		}
	}
	for _, k := range []struct {
		key string
		dst *bool
	}{{keyTokAddBOS, &v.AddBOS}, {keyTokAddEOS, &v.AddEOS}} {
		if f.Has(k.key) {
			b, err := f.Bool(k.key)
			if err != nil {
				return nil, fmt.Errorf("llama: vocabulary: %w", err)
			}
			*k.dst = b
		}
	}
	for _, id := range []*int32{&v.BOS, &v.EOS, &v.UNK, &v.SEP, &v.PAD, &v.CLS} {
		if *id >= int32(n) {
			*id = -1
		}
	}
	name, _ := f.String("general.name")
	v.index(eom, fimPad, fimRep, fimSep, name)
	if v.Model == TokenizerUGM {
		var charsmap []byte
		if f.Has(keyTokCharsmap) {
			if charsmap, err = f.Uint8s(keyTokCharsmap); err != nil {
				i8, err2 := f.Int8s(keyTokCharsmap)
				if err2 != nil {
					return nil, fmt.Errorf("llama: vocabulary: %w", err)
				}
				charsmap = make([]byte, len(i8))
				for i, b := range i8 {
					charsmap[i] = byte(b)
				}
			}
		}
		removeExtra := false
		if f.Has(keyTokRemoveExtraWS) {
			if removeExtra, err = f.Bool(keyTokRemoveExtraWS); err != nil {
				return nil, fmt.Errorf("llama: vocabulary: %w", err)
			}
		}
		if err := v.newUGM(charsmap, removeExtra); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// NewVocab builds a vocabulary from its parts (as a training program does
// before saving it); scores may be nil for BPE, merges nil for SPM. A BPE
// vocabulary gets the GPT-2 pre-tokenizer. The slices are kept, not copied:
// as when loading, an empty token is renamed "[EMPTY_n]" and tokens
// llama.cpp recognises by their text as end-of-generation or FIM markers
// become TokenControl.
func NewVocab(model string, tokens []string, scores []float32, types []TokenType, merges []string) (*Vocab, error) {
	v := &Vocab{Model: model, Tokens: tokens, Scores: scores, Types: types, BOS: -1, EOS: -1, UNK: -1, SEP: -1, PAD: -1, CLS: -1, EOT: -1}
	if len(types) != len(tokens) || (scores != nil && len(scores) != len(tokens)) {
		return nil, errors.New("llama: NewVocab: tokens, scores and types differ in length")
	}
	switch model {
	case TokenizerSPM:
		if scores == nil {
			v.Scores = make([]float32, len(tokens))
		}
		v.AddBOS, v.AddSpacePrefix = true, true
	case TokenizerBPE:
		v.Pre, v.pre = "gpt-2", preGPT2
		v.CleanSpaces = true
		v.ranks = make(map[bpePair]int32, len(merges))
		for i, m := range merges {
			a, b, ok := strings.Cut(m, " ")
			if !ok {
				return nil, fmt.Errorf("llama: NewVocab: merge %q has no separator", m)
			}
			v.ranks[bpePair{a, b}] = int32(i)
		}
	default:
		return nil, fmt.Errorf("llama: NewVocab: tokenizer model %q is not supported", model)
	}
	for i, t := range types {
		switch {
		case t == TokenControl && tokens[i] == "<s>":
			v.BOS = int32(i)
		case t == TokenControl && tokens[i] == "</s>":
			v.EOS = int32(i)
		case t == TokenUnknown:
			v.UNK = int32(i)
		}
	}
	v.index(-1, -1, -1, -1, "")
	return v, nil
}

// Texts that mark special tokens, as llm_load_vocab finds them when the file
// does not name them: the first token found becomes the EOT (or FIM) token
// and is made a control token.
var (
	eotTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "<｜end▁of▁sentence｜>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<｜fim▁begin｜>", "<PRE>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<｜fim▁hole｜>", "<SUF>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<｜fim▁end｜>", "<MID>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<PAD>"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>"}
	fimSepTexts = []string{"<|file_sep|>"}
	// every token with one of these texts ends a generation
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>"}
)

// index builds the lookup tables and finishes the special tokens as
// llm_load_vocab does (name is general.name, for the per-model token
// attributes).
func (v *Vocab) index(eom, fimPad, fimRep, fimSep int32, name string) {
	v.ids = make(map[string]int32, len(v.Tokens))
	v.maxTokenLen = 0
	for i, t := range v.Tokens {
		if t == "" {
			t = fmt.Sprintf("[EMPTY_%d]", i) // as llama.cpp names an empty token
			v.Tokens[i] = t
		}
		v.ids[t] = int32(i) // the last of equal texts, as llama.cpp
		v.maxTokenLen = max(v.maxTokenLen, len(t))
	}
	for b := range v.byteTok {
		v.byteTok[b] = -1
		if id, ok := v.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			v.byteTok[b] = id
		} else if id, ok := v.ids[string([]byte{byte(b)})]; ok {
			v.byteTok[b] = id
		} else {
			v.byteTok[b] = v.UNK
		}
	}
	if v.Model == TokenizerRWKV {
		v.rwkv = make(map[string]int32, len(v.Tokens))
		for i, t := range v.Tokens {
			b := rwkvUnescape(t)
			v.rwkv[string(b)] = int32(i)
			v.rwkvMax = max(v.rwkvMax, len(b))
		}
	}

	// tokens found by their text; a found one becomes a control token
	find := func(dst *int32, texts []string) {
		if *dst >= 0 {
			return
		}
		best := int32(-1)
		for _, t := range texts {
			if id, ok := v.ids[t]; ok && (best < 0 || id < best) {
				best = id
			}
		}
		if best >= 0 {
			*dst = best
			v.Types[best] = TokenControl
		}
	}
	var fimPre, fimSuf, fimMid int32 = -1, -1, -1
	find(&v.EOT, eotTexts)
	find(&eom, eomTexts)
	find(&fimPre, fimPreTexts)
	find(&fimSuf, fimSufTexts)
	find(&fimMid, fimMidTexts)
	find(&fimPad, fimPadTexts)
	find(&fimRep, fimRepTexts)
	find(&fimSep, fimSepTexts)
	v.eog = map[int32]bool{}
	for _, id := range []int32{fimPad, fimRep, fimSep, v.EOS, v.EOT, eom} {
		if id >= 0 {
			v.eog[id] = true
		}
	}
	for _, t := range eogTexts {
		if id, ok := v.ids[t]; ok {
			v.eog[id] = true
			v.Types[id] = TokenControl
		}
	}

	v.specials = v.specials[:0]
	for i, t := range v.Types {
		if t == TokenControl || t == TokenUserDefined || t == TokenUnknown {
			v.specials = append(v.specials, int32(i))
		}
	}
	// longest first, so that a special token containing another wins
	slices.SortStableFunc(v.specials, func(a, b int32) int { return len(v.Tokens[b]) - len(v.Tokens[a]) })

	// per-model attributes llama.cpp sets by name
	v.strip = map[int32]tokenStrip{}
	lname := strings.ToLower(name)
	switch {
	case strings.Contains(v.Pre, "jina-v2-de") || strings.Contains(v.Pre, "jina-v2-es") || strings.Contains(v.Pre, "jina-v2-code"):
		if id, ok := v.ids["<mask>"]; ok {
			v.strip[id] |= stripLeft
		}
	case strings.Contains(lname, "phi-3") || strings.Contains(lname, "phi3"):
		for _, id := range v.specials {
			v.strip[id] |= stripRight
		}
		if id, ok := v.ids["</s>"]; ok {
			v.strip[id] |= stripRight
		}
		for _, t := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			if id, ok := v.ids[t]; ok {
				v.strip[id] &^= stripRight
			}
		}
	}
}

// Size is the number of tokens.
func (v *Vocab) Size() int { return len(v.Tokens) }

// ID returns the id of a token text.
func (v *Vocab) ID(text string) (int32, bool) {
	id, ok := v.ids[text]
	return id, ok
}

// IsEOG reports whether id ends a generation, as llama_token_is_eog: the
// EOS and EOT tokens, and the tokens llama.cpp recognises by their text
// (<|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, <|endoftext|>, ...).
func (v *Vocab) IsEOG(id int32) bool {
	if id < 0 || int(id) >= len(v.Tokens) {
		return false
	}
	// EOS is in llama.cpp's set; asked apart, a program that sets the
	// field after loading is followed too
	return id == v.EOS || v.eog[id]
}

// fragment is a piece of the input: raw text to tokenize, or a special token.
type fragment struct {
	text  string
	token int32 // >= 0: a special token
}

// isCSpace is C's isspace in the C locale.
func isCSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}

// partition splits text around special tokens as llama.cpp's
// tokenizer_st_partition: user-defined tokens always, control and unknown
// tokens only with parseSpecial; longer tokens first. The spaces next to a
// token with a strip attribute are dropped.
func (v *Vocab) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, token: -1}}
	var out []fragment
	for _, id := range v.specials {
		if t := v.Types[id]; !parseSpecial && (t == TokenControl || t == TokenUnknown) {
			continue
		}
		s := v.Tokens[id]
		strip := v.strip[id]
		out = out[:0]
		for _, fr := range frags {
			if fr.token >= 0 || !strings.Contains(fr.text, s) {
				out = append(out, fr)
				continue
			}
			rest := fr.text
			for {
				i := strings.Index(rest, s)
				if i < 0 {
					break
				}
				left := rest[:i]
				if strip&stripLeft != 0 {
					for len(left) > 0 && isCSpace(left[len(left)-1]) {
						left = left[:len(left)-1]
					}
				}
				if left != "" {
					out = append(out, fragment{text: left, token: -1})
				}
				out = append(out, fragment{token: id})
				rest = rest[i+len(s):]
				if strip&stripRight != 0 {
					for len(rest) > 0 && isCSpace(rest[0]) {
						rest = rest[1:]
					}
				}
			}
			if rest != "" {
				out = append(out, fragment{text: rest, token: -1})
			}
		}
		frags, out = out, frags
	}
	return frags
}

// Tokenize converts text to token ids, as llama.cpp's llama_tokenize.
// addSpecial adds what the vocabulary asks for: BOS and EOS
// (tokenizer.ggml.add_bos_token / add_eos_token), CLS and SEP for WordPiece;
// parseSpecial recognises control tokens written in the text (e.g. "<s>");
// user-defined tokens are always recognised.
func (v *Vocab) Tokenize(text string, addSpecial, parseSpecial bool) []int32 {
	var out []int32
	if v.Model == TokenizerNone {
		return nil
	}
	var frags []fragment
	if text != "" {
		frags = v.partition(text, parseSpecial)
	}
	first, last := int32(-1), int32(-1)
	if addSpecial {
		switch v.Model {
		case TokenizerWPM:
			first, last = v.CLS, v.SEP
		case TokenizerRWKV:
		default:
			if v.AddBOS {
				first = v.BOS
			}
			if v.AddEOS {
				last = v.EOS
			}
		}
	}
	if first >= 0 {
		out = append(out, first)
	}
	prevSpecial := true // SPM: a space before the text and after a special token
	for _, fr := range frags {
		if fr.token >= 0 {
			out = append(out, fr.token)
			prevSpecial = true
			continue
		}
		switch v.Model {
		case TokenizerSPM:
			t := fr.text
			if v.AddSpacePrefix && prevSpecial {
				t = " " + t
			}
			out = v.spm(strings.ReplaceAll(t, " ", spmSpace), out)
		case TokenizerBPE:
			out = v.bpe(fr.text, out)
		case TokenizerWPM:
			out = v.wpm(fr.text, out)
		case TokenizerRWKV:
			out = v.rwkvTokenize(fr.text, out)
		case TokenizerUGM:
			out = v.ugmTokenize(fr.text, out)
		}
		prevSpecial = false
	}
	if last >= 0 {
		out = append(out, last)
	}
	return out
}

// Piece returns the bytes token id stands for in text, as llama.cpp's
// llama_token_to_piece (with lstrip 0): "▁" becomes a space (SPM,
// WordPiece), byte tokens their byte, BPE tokens are byte-decoded, RWKV
// tokens unescaped; control and unknown tokens give "" unless special is
// set, unused and undefined ones "".
func (v *Vocab) Piece(id int32, special bool) string {
	if id < 0 || int(id) >= len(v.Tokens) {
		return ""
	}
	t := v.Tokens[id]
	typ := v.Types[id]
	if !special && (typ == TokenControl || typ == TokenUnknown) {
		return ""
	}
	switch v.Model {
	case TokenizerRWKV:
		return string(rwkvUnescape(t))
	case TokenizerSPM, TokenizerWPM, TokenizerUGM:
		switch typ {
		case TokenControl, TokenUnknown, TokenUserDefined:
			return t
		case TokenNormal:
			return strings.ReplaceAll(t, spmSpace, " ")
		case TokenByte:
			if b, ok := parseByteToken(t); ok {
				return string([]byte{b})
			}
		}
	case TokenizerBPE:
		switch typ {
		case TokenControl, TokenUnknown, TokenUserDefined:
			return t
		case TokenNormal:
			return bpeDecode(t)
		}
	}
	return ""
}

// DetokenizeOptions are the flags of llama_detokenize.
type DetokenizeOptions struct {
	// RemoveSpecial leaves out a leading BOS and a trailing EOS where the
	// vocabulary adds them.
	RemoveSpecial bool
	// UnparseSpecial writes control and unknown tokens as their text.
	UnparseSpecial bool
}

// DetokenizeWith converts token ids back to text exactly as llama.cpp's
// llama_detokenize: the pieces, the space prefix of an SPM vocabulary
// removed from the first piece, then (CleanSpaces) the spaces before
// punctuation and contractions removed.
func (v *Vocab) DetokenizeWith(ids []int32, o DetokenizeOptions) string {
	removeSpace := v.AddSpacePrefix
	if o.RemoveSpecial && v.AddBOS && len(ids) > 0 && ids[0] == v.BOS {
		removeSpace = false
		ids = ids[1:]
	}
	if o.RemoveSpecial && v.AddEOS && len(ids) > 0 && ids[len(ids)-1] == v.EOS {
		ids = ids[:len(ids)-1]
	}
	var b []byte
	for _, id := range ids {
		p := v.Piece(id, o.UnparseSpecial)
		if removeSpace && strings.HasPrefix(p, " ") {
			p = p[1:]
		}
		removeSpace = false
		b = append(b, p...)
	}
	if v.CleanSpaces {
		b = cleanSpaces(b)
	}
	return string(b)
}

// Detokenize converts token ids back to text: control tokens are left out,
// and a leading BOS does not keep the space an SPM vocabulary prefixes to
// the text (llama_detokenize keeps it there). Otherwise as DetokenizeWith
// with no options.
func (v *Vocab) Detokenize(ids []int32) string {
	if len(ids) > 0 && ids[0] == v.BOS && v.BOS >= 0 {
		ids = ids[1:]
	}
	return v.DetokenizeWith(ids, DetokenizeOptions{})
}

// cleanSpaces is llama.cpp's clean_up_tokenization_spaces, its three passes
// in order: " ?", " !", " .", " ," lose the space; a lone apostrophe
// between spaces loses both; " 's", " 'm", " 're", " 've" lose the space.
func cleanSpaces(t []byte) []byte {
	if len(t) == 0 {
		return t
	}
	in := slices.Clone(t)
	out := t[:1]
	for i := 1; i < len(in); i++ {
		x := in[i]
		if in[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') {
			out = out[:len(out)-1]
		}
		out = append(out, x)
	}
	in = append(in[:0], out...)
	out = out[:1]
	for i := 1; i < len(in); i++ {
		x := in[i]
		if x == '\'' && i+1 < len(in) && in[i-1] == ' ' && in[i+1] == ' ' {
			out = out[:len(out)-1]
			i++
			in[i] = 0 // the reference overwrites the skipped space
		}
		out = append(out, x)
	}
	in = append(in[:0], out...)
	out = out[:1]
	for i := 1; i < len(in); i++ {
		x := in[i]
		if in[i-1] == ' ' && x == '\'' && i+1 < len(in) {
			x1 := in[i+1]
			switch {
			case x1 == 's' || x1 == 'm':
				out = out[:len(out)-1]
			case x1 == 't' || x1 == 'd':
			case i+2 < len(in) && (x1 == 'r' || x1 == 'v') && in[i+2] == 'e':
				out = out[:len(out)-1]
			}
		}
		out = append(out, x)
	}
	return out
}

// parseByteToken parses "<0xNN>".
func parseByteToken(t string) (byte, bool) {
	if len(t) != 6 || t[:3] != "<0x" || t[5] != '>' {
		return 0, false
	}
	var b byte
	for _, c := range []byte(t[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			b = b<<4 | (c - '0')
		case c >= 'A' && c <= 'F':
			b = b<<4 | (c - 'A' + 10)
		case c >= 'a' && c <= 'f':
			b = b<<4 | (c - 'a' + 10)
		default:
			return 0, false
		}
	}
	return b, true
}
