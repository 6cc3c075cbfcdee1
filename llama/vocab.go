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
	TokenizerNone = "none"
)

// Vocab is a model's tokenizer, read from the tokenizer.ggml.* keys of its
// GGUF file. It is immutable after loading and safe for concurrent use.
type Vocab struct {
	Model string // TokenizerSPM or TokenizerBPE
	Pre   string // pre-tokenizer name of BPE vocabularies (tokenizer.ggml.pre)
	// PreApprox reports a BPE vocabulary whose pre-tokenizer is not GPT-2's:
	// its text is split with the GPT-2 pattern, which may give other ids than
	// the model's own tokenizer for some texts.
	PreApprox bool
	Tokens    []string
	Scores    []float32 // SPM merge priorities (higher merges first); nil for BPE
	Types     []TokenType

	BOS, EOS, UNK  int32 // -1 when the vocabulary has none
	AddBOS, AddEOS bool  // what Tokenize adds when asked for special tokens
	// AddSpacePrefix: SPM prepends a space to text that starts a fragment.
	AddSpacePrefix bool
	// ChatTemplate is the file's tokenizer.chat_template ("" if none).
	ChatTemplate string

	ids      map[string]int32
	ranks    map[bpePair]int32 // BPE merge ranks
	byteTok  [256]int32        // SPM: token of each byte for the fallback (-1: none)
	specials []int32           // control and user-defined tokens, longest text first
}

type bpePair struct{ left, right string }

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
)

// LoadVocab reads the tokenizer of a GGUF file. Files without
// tokenizer.ggml.tokens give a Vocab of Model TokenizerNone (tokens can then
// only be given as ids).
func LoadVocab(f *gguf.File) (*Vocab, error) {
	v := &Vocab{BOS: -1, EOS: -1, UNK: -1}
	if !f.Has(keyTokTokens) {
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

	switch v.Model {
	case TokenizerSPM:
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		v.AddBOS, v.AddSpacePrefix = true, true
		if v.Scores == nil {
			v.Scores = make([]float32, n)
		}
	case TokenizerBPE:
		v.BOS, v.EOS = 11, 11
		v.AddBOS = false
		switch v.Pre {
		case "", "default", "gpt-2", "gpt2":
		default:
			v.PreApprox = true
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
		return nil, fmt.Errorf("llama: tokenizer model %q is not supported (llama and gpt2 are)", v.Model)
	}

	readID := func(key string, dst *int32) error {
		if !f.Has(key) {
			return nil
		}
		id, err := f.Int(key)
		if err != nil {
			return fmt.Errorf("llama: vocabulary: %w", err)
		}
		if id < -1 || id >= int64(n) {
			return fmt.Errorf("llama: vocabulary: %s = %d out of range [0, %d)", key, id, n)
		}
		*dst = int32(id)
		return nil
	}
	for _, k := range []struct {
		key string
		dst *int32
	}{{keyTokBOS, &v.BOS}, {keyTokEOS, &v.EOS}, {keyTokUNK, &v.UNK}} {
		if err := readID(k.key, k.dst); err != nil {
			return nil, err
		}
	}
	for _, k := range []struct {
		key string
		dst *bool
	}{{keyTokAddBOS, &v.AddBOS}, {keyTokAddEOS, &v.AddEOS}, {keyTokAddPrefix, &v.AddSpacePrefix}} {
		if f.Has(k.key) {
			b, err := f.Bool(k.key)
			if err != nil {
				return nil, fmt.Errorf("llama: vocabulary: %w", err)
			}
			*k.dst = b
		}
	}
	for _, id := range []*int32{&v.BOS, &v.EOS, &v.UNK} {
		if *id >= int32(n) {
			*id = -1
		}
	}
	v.index()
	return v, nil
}

// NewVocab builds a vocabulary from its parts (as a training program does
// before saving it); scores may be nil for BPE, merges nil for SPM.
func NewVocab(model string, tokens []string, scores []float32, types []TokenType, merges []string) (*Vocab, error) {
	v := &Vocab{Model: model, Tokens: tokens, Scores: scores, Types: types, BOS: -1, EOS: -1, UNK: -1}
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
	v.index()
	return v, nil
}

// index builds the lookup tables.
func (v *Vocab) index() {
	v.ids = make(map[string]int32, len(v.Tokens))
	for i, t := range v.Tokens {
		if _, dup := v.ids[t]; !dup {
			v.ids[t] = int32(i)
		}
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
	v.specials = v.specials[:0]
	for i, t := range v.Types {
		if (t == TokenControl || t == TokenUserDefined) && v.Tokens[i] != "" {
			v.specials = append(v.specials, int32(i))
		}
	}
	// longest first, so that a special token containing another wins
	slices.SortStableFunc(v.specials, func(a, b int32) int { return len(v.Tokens[b]) - len(v.Tokens[a]) })
}

// Size is the number of tokens.
func (v *Vocab) Size() int { return len(v.Tokens) }

// ID returns the id of a token text.
func (v *Vocab) ID(text string) (int32, bool) {
	id, ok := v.ids[text]
	return id, ok
}

// IsEOG reports whether id ends a generation (the EOS token, or any control
// token named like an end marker).
func (v *Vocab) IsEOG(id int32) bool {
	if id < 0 || int(id) >= len(v.Tokens) {
		return false
	}
	if id == v.EOS {
		return true
	}
	if v.Types[id] != TokenControl {
		return false
	}
	switch v.Tokens[id] {
	case "</s>", "<|endoftext|>", "<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>":
		return true
	}
	return false
}

// fragment is a piece of the input: raw text to tokenize, or a special token.
type fragment struct {
	text  string
	token int32 // >= 0: a special token
}

// partition splits text around special tokens: user-defined tokens always,
// control tokens only with parseSpecial (as llama.cpp does).
func (v *Vocab) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, token: -1}}
	for _, id := range v.specials {
		if v.Types[id] == TokenControl && !parseSpecial {
			continue
		}
		s := v.Tokens[id]
		var out []fragment
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
				if i > 0 {
					out = append(out, fragment{text: rest[:i], token: -1})
				}
				out = append(out, fragment{token: id})
				rest = rest[i+len(s):]
			}
			if rest != "" {
				out = append(out, fragment{text: rest, token: -1})
			}
		}
		frags = out
	}
	return frags
}

// Tokenize converts text to token ids. addSpecial adds BOS (and EOS) as the
// vocabulary asks (tokenizer.ggml.add_bos_token / add_eos_token);
// parseSpecial recognises control tokens written in the text (e.g. "<s>").
// The result equals llama.cpp's llama_tokenize for the same arguments.
func (v *Vocab) Tokenize(text string, addSpecial, parseSpecial bool) []int32 {
	var out []int32
	if addSpecial && v.AddBOS && v.BOS >= 0 {
		out = append(out, v.BOS)
	}
	var frags []fragment
	if text != "" {
		frags = v.partition(text, parseSpecial)
	}
	switch v.Model {
	case TokenizerSPM:
		prevSpecial := true
		for _, fr := range frags {
			if fr.token >= 0 {
				out = append(out, fr.token)
				prevSpecial = true
				continue
			}
			t := fr.text
			if v.AddSpacePrefix && prevSpecial {
				t = " " + t
			}
			out = v.spm(strings.ReplaceAll(t, " ", spmSpace), out)
			prevSpecial = false
		}
	case TokenizerBPE:
		for _, fr := range frags {
			if fr.token >= 0 {
				out = append(out, fr.token)
				continue
			}
			out = v.bpe(fr.text, out)
		}
	}
	if addSpecial && v.AddEOS && v.EOS >= 0 {
		out = append(out, v.EOS)
	}
	return out
}

// Piece returns the bytes token id stands for in text: "▁" becomes a space
// (SPM), byte tokens their byte, BPE tokens are byte-decoded; control tokens
// give "" unless special is set.
func (v *Vocab) Piece(id int32, special bool) string {
	if id < 0 || int(id) >= len(v.Tokens) {
		return ""
	}
	t := v.Tokens[id]
	switch v.Types[id] {
	case TokenControl, TokenUnknown:
		if !special {
			return ""
		}
		return t
	case TokenUserDefined:
		return t
	case TokenByte:
		if b, ok := parseByteToken(t); ok {
			return string([]byte{b})
		}
	}
	switch v.Model {
	case TokenizerSPM:
		return strings.ReplaceAll(t, spmSpace, " ")
	case TokenizerBPE:
		return bpeDecode(t)
	}
	return t
}

// Detokenize converts token ids back to text. Control tokens are left out;
// the space an SPM vocabulary prefixes to the text is removed.
func (v *Vocab) Detokenize(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(v.Piece(id, false))
	}
	s := b.String()
	if v.Model == TokenizerSPM && v.AddSpacePrefix && strings.HasPrefix(s, " ") {
		s = s[1:]
	}
	return s
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
