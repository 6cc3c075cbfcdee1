package llama

import (
	"sort"
	"strconv"
	"strings"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// keyValue is a metadata entry to write.
type keyValue struct {
	key string
	v   any
}

// Save writes the model as a GGUF file in llama.cpp's llama layout: the
// hyperparameters under <arch>.*, the tokenizer under tokenizer.ggml.*, and
// the weights in their current types. The file appears atomically.
func (m *Model) Save(path, name string) error {
	done, err := m.use("Save")
	if err != nil {
		return err
	}
	defer done()
	w, err := gguf.Create(path)
	if err != nil {
		return err
	}
	defer w.Abort()
	set := append([]keyValue{{"general.architecture", m.Arch}, {"general.name", name}}, m.hparamKVs()...)
	set = append(set, keyValue{m.Arch + ".vocab_size", uint32(m.NVocab)}, keyValue{"general.file_type", uint32(m.fileType())})
	for _, kv := range set {
		if err := w.Set(kv.key, kv.v); err != nil {
			return err
		}
	}
	if err := m.Vocab.write(w); err != nil {
		return err
	}
	for _, name := range m.tensorOrder() {
		if err := ggml.AddTensorToGGUF(w, m.tensors[name]); err != nil {
			return err
		}
	}
	return w.Close()
}

// hparamKVs are the architecture's keys with the model's values: the
// required ones and those whose value is not the default the loader would
// take; not the older spellings a loader also reads (hparamKey.legacy).
func (m *Model) hparamKVs() []keyValue {
	h := m.Hparams
	if h.RopeScalingFactor == 0 && h.RopeFreqScale > 0 && h.RopeFreqScale != 1 {
		h.RopeScalingFactor = 1 / h.RopeFreqScale // a value made by hand (NewModel)
	}
	var out []keyValue
	var d Hparams // what the loader has read so far, defaults included
	for _, k := range m.arch.hparams {
		if k.legacy {
			continue // the loader reads the new spelling after it
		}
		if k.def != nil {
			k.def(&d)
		}
		key := k.name(m.Arch)
		var v any
		switch p := k.field(&h).(type) {
		case *int:
			dp := k.field(&d).(*int)
			if *p != *dp || k.required {
				v = uint32(*p)
			}
			*dp = *p
		case *float32:
			dp := k.field(&d).(*float32)
			if *p != *dp || k.required {
				v = *p
			}
			*dp = *p
		case *Pooling:
			dp := k.field(&d).(*Pooling)
			if *p != *dp || k.required {
				v = uint32(*p)
			}
			*dp = *p
		case *string:
			dp := k.field(&d).(*string)
			if *p != *dp || k.required {
				v = *p
			}
			*dp = *p
		case *bool:
			dp := k.field(&d).(*bool)
			if *p != *dp || k.required {
				v = *p
			}
			*dp = *p
		}
		if v != nil {
			out = append(out, keyValue{key, v})
		}
	}
	return out
}

// tensorOrder lists the weights as llama.cpp orders them: token_embd,
// output_norm, output, then block by block.
func (m *Model) tensorOrder() []string {
	names := make([]string, 0, len(m.tensors))
	for n := range m.tensors {
		names = append(names, n)
	}
	rank := func(n string) (int, string) {
		switch {
		case n == "token_embd.weight":
			return -3, n
		case n == "output_norm.weight":
			return -2, n
		case n == "output.weight":
			return -1, n
		case strings.HasPrefix(n, "blk."):
			rest := n[4:]
			if i := strings.IndexByte(rest, '.'); i > 0 {
				if b, err := strconv.Atoi(rest[:i]); err == nil {
					return b, rest[i+1:]
				}
			}
		}
		return 1 << 30, n
	}
	sort.Slice(names, func(i, j int) bool {
		ri, si := rank(names[i])
		rj, sj := rank(names[j])
		if ri != rj {
			return ri < rj
		}
		return si < sj
	})
	return names
}

// fileType is llama.cpp's general.file_type of the model's matrices: the
// type of most weights (0 all f32, 1 mostly f16, 7 mostly q8_0, ...).
func (m *Model) fileType() int {
	count := map[ggml.Type]int{}
	for _, t := range m.tensors {
		if t.NDims() >= 2 {
			count[t.Type()]++
		}
	}
	best, bn := ggml.TypeF32, 0
	for t, n := range count {
		if n > bn || (n == bn && t < best) {
			best, bn = t, n
		}
	}
	return FileType(best)
}

// FileType maps a tensor type to llama.cpp's general.file_type value for a
// model whose matrices are mostly of that type (-1 if it has none).
func FileType(t ggml.Type) int {
	// llama_ftype values (llama.h)
	switch t {
	case ggml.TypeF32:
		return 0
	case ggml.TypeF16:
		return 1
	case ggml.TypeQ4_0:
		return 2
	case ggml.TypeQ4_1:
		return 3
	case ggml.TypeQ8_0:
		return 7
	case ggml.TypeQ5_0:
		return 8
	case ggml.TypeQ5_1:
		return 9
	case ggml.TypeQ2_K:
		return 10
	case ggml.TypeQ3_K:
		return 12 // Q3_K_M
	case ggml.TypeQ4_K:
		return 15 // Q4_K_M
	case ggml.TypeQ5_K:
		return 17 // Q5_K_M
	case ggml.TypeQ6_K:
		return 18
	case ggml.TypeIQ2_XXS:
		return 19
	case ggml.TypeIQ2_XS:
		return 20
	case ggml.TypeIQ3_XXS:
		return 23
	case ggml.TypeIQ1_S:
		return 24
	case ggml.TypeIQ4_NL:
		return 25
	case ggml.TypeIQ3_S:
		return 26
	case ggml.TypeIQ2_S:
		return 28
	case ggml.TypeIQ4_XS:
		return 30
	case ggml.TypeIQ1_M:
		return 31
	case ggml.TypeBF16:
		return 32
	case ggml.TypeTQ1_0:
		return 36
	case ggml.TypeTQ2_0:
		return 37
	}
	return -1
}

// write stores the tokenizer keys.
func (v *Vocab) write(w *gguf.Writer) error {
	if v.Model == TokenizerNone || len(v.Tokens) == 0 {
		return nil
	}
	types := make([]int32, len(v.Types))
	for i, t := range v.Types {
		types[i] = int32(t)
	}
	kvs := []keyValue{
		{keyTokModel, v.Model},
		{keyTokTokens, v.Tokens},
		{keyTokTypes, types},
	}
	if v.Pre != "" {
		kvs = append(kvs, keyValue{keyTokPre, v.Pre})
	}
	if v.ChatTemplate != "" {
		kvs = append(kvs, keyValue{keyChatTemplate, v.ChatTemplate})
	}
	if v.Scores != nil {
		kvs = append(kvs, keyValue{keyTokScores, v.Scores})
	}
	if v.Model == TokenizerBPE {
		merges := make([]string, len(v.ranks))
		for p, r := range v.ranks {
			if int(r) < len(merges) {
				merges[r] = p.left + " " + p.right
			}
		}
		kvs = append(kvs, keyValue{keyTokMerges, merges})
	}
	if v.ugm != nil {
		if len(v.ugm.charsmap) > 0 {
			kvs = append(kvs, keyValue{keyTokCharsmap, v.ugm.charsmap})
		}
		kvs = append(kvs, keyValue{keyTokRemoveExtraWS, v.ugm.removeExtraSpaces})
	}
	for _, id := range []struct {
		key string
		id  int32
	}{{keyTokBOS, v.BOS}, {keyTokEOS, v.EOS}, {keyTokUNK, v.UNK}, {keyTokEOT, v.EOT},
		{keyTokSEP, v.SEP}, {keyTokPAD, v.PAD}, {keyTokCLS, v.CLS}} {
		if id.id >= 0 {
			kvs = append(kvs, keyValue{id.key, uint32(id.id)})
		}
	}
	kvs = append(kvs, keyValue{keyTokAddBOS, v.AddBOS}, keyValue{keyTokAddEOS, v.AddEOS},
		keyValue{keyTokAddPrefix, v.AddSpacePrefix})
	for _, kv := range kvs {
		if err := w.Set(kv.key, kv.v); err != nil {
			return err
		}
	}
	return nil
}
