package llama

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// QuantizeOptions configure QuantizeFile.
type QuantizeOptions struct {
	Type ggml.Type // the type of the weight matrices (without a Mixture)
	// Mixture, if its Name is set, is a llama.cpp file type (ParseMixture):
	// Type is then its base type, and for a quantized base llama.cpp's rules
	// give some matrices (output, attn_v, ffn_down, ...) other types, as
	// its quantize tool does without --pure.
	Mixture Mixture
	// AllowRequantize lets tensors that are already quantized be converted
	// to another type. Without it such a tensor is an error: its values
	// are the old quantization's, and quantizing them again loses quality
	// that the original weights would have kept (llama.cpp's rule).
	AllowRequantize bool
	// OutputType and EmbdType, if not zero (f32), override Type for
	// output.weight and token_embd.weight.
	OutputType, EmbdType ggml.Type
	// Imatrix holds importance weights per tensor name (see ReadImatrix):
	// ne0 values (or ne0 per matrix of a 3-D tensor). Types that need one
	// (iq2_xxs, iq2_xs, iq1_s, ...) fail without it.
	Imatrix map[string][]float32
	Threads int // 0: ggml.DefaultThreads() (the rule of ggml.ResolveThreads)
	// Progress, if not nil, is called before each tensor is converted.
	Progress func(i, n int, name string)
}

// ErrRequantize is wrapped by the error of QuantizeFile for a tensor that
// is already quantized (see QuantizeOptions.AllowRequantize).
var ErrRequantize = errors.New("already quantized")

// QuantizeStats summarise a QuantizeFile run.
type QuantizeStats struct {
	Tensors, Quantized, Fallbacks int
	BytesIn, BytesOut             int64
	Elements                      int64             // values in all the tensors
	Types                         map[ggml.Type]int // tensors of each type in the output
}

// BitsPerWeight is the output's size in bits per value (all tensors).
func (s QuantizeStats) BitsPerWeight() float64 {
	if s.Elements == 0 {
		return 0
	}
	return float64(s.BytesOut) * 8 / float64(s.Elements)
}

// fallback is the type used for rows that are not a whole number of blocks
// of t: a type of 32-element blocks of about the same size, as llama.cpp's
// quantizer does; f16 when even that does not fit.
func fallback(t ggml.Type, ne0 int) ggml.Type {
	if ne0%t.BlockSize() == 0 {
		return t
	}
	switch t {
	case ggml.TypeIQ2_XXS, ggml.TypeIQ2_XS, ggml.TypeIQ2_S, ggml.TypeIQ3_XXS, ggml.TypeIQ3_S,
		ggml.TypeIQ1_S, ggml.TypeIQ1_M, ggml.TypeQ2_K, ggml.TypeQ3_K, ggml.TypeIQ4_XS:
		t = ggml.TypeIQ4_NL
	case ggml.TypeQ4_K:
		t = ggml.TypeQ5_0
	case ggml.TypeQ5_K:
		t = ggml.TypeQ5_1
	case ggml.TypeQ6_K:
		t = ggml.TypeQ8_0
	}
	if ne0%t.BlockSize() != 0 {
		t = ggml.TypeF16
	}
	return t
}

// quantizable reports whether t is a type QuantizeFile can write.
func quantizable(t ggml.Type) error {
	tr, err := ggml.TypeTraits(t)
	if err != nil {
		return err
	}
	switch {
	case t == ggml.TypeF32 || t == ggml.TypeF16 || t == ggml.TypeBF16:
		return nil
	case !tr.IsQuantized || tr.BlockSizeInterleave > 1 || t == ggml.TypeQ8_1 || t == ggml.TypeQ8_K:
		// integers, repacked layouts and the activation-only q8 types
		return fmt.Errorf("llama: cannot quantize to %s", t)
	}
	return nil
}

// targetType is the type tensor info gets (mix, if not nil, applies the
// mixture's rules; it must see the tensors in file order), and whether
// that is the fallback for rows that are not whole blocks.
func (o *QuantizeOptions) targetType(info gguf.TensorInfo, mix *mixState) (ggml.Type, bool) {
	if len(info.Shape) < 2 || !strings.HasSuffix(info.Name, ".weight") {
		return ggml.Type(info.Type), false // vectors (norms, biases) and non-weights stay
	}
	t := o.Type
	if mix != nil {
		t = mix.rules(info.Name, int(info.Shape[0]))
	}
	switch {
	case info.Name == "output.weight" && o.OutputType != 0:
		t = o.OutputType
	case info.Name == "token_embd.weight" && o.EmbdType != 0:
		t = o.EmbdType
	}
	f := fallback(t, int(info.Shape[0]))
	return f, f != t
}

// keptWeights reports which weights of f QuantizeFile leaves in their type
// whatever their shape: those its architecture reads other than as
// matrices (roleParam: rwkv6's mixes and decays, mamba's convolution and
// A), which llama.cpp's quantize leaves too. Nothing for an architecture
// this package does not know.
func keptWeights(f *gguf.File) func(name string) bool {
	a, err := archOf(f)
	if err != nil {
		return func(string) bool { return false }
	}
	nLayer, _ := f.Int(a.name + ".block_count")
	return func(name string) bool {
		s, ok := a.spec(name, int(nLayer))
		return ok && s.role == roleParam
	}
}

// QuantizeFile converts the weight matrices of the GGUF file in (tensors of
// two or more dimensions named *.weight, but for the parameters of rwkv6
// and mamba that are not matrices) to o.Type and writes the result to
// out, atomically; every other tensor and every metadata entry is copied
// (general.file_type and general.quantization_version are updated). Rows
// that are not a whole number of blocks get a wider type (see fallback).
func QuantizeFile(in, out string, o QuantizeOptions) (QuantizeStats, error) {
	st := QuantizeStats{Types: map[ggml.Type]int{}}
	if o.Mixture.Name != "" {
		if m, ok := ParseMixture(o.Mixture.Name); !ok || m != o.Mixture {
			return st, fmt.Errorf("llama: unknown mixture %+v (ParseMixture gives them)", o.Mixture)
		}
		o.Type = o.Mixture.Base
	}
	for _, t := range []ggml.Type{o.Type, o.OutputType, o.EmbdType} {
		if err := quantizable(t); err != nil {
			return st, err
		}
	}
	threads, err := ggml.ResolveThreads(o.Threads)
	if err != nil {
		return st, fmt.Errorf("llama: QuantizeFile: %w", err)
	}
	o.Threads = threads
	f, err := gguf.Open(in)
	if err != nil {
		return st, err
	}
	defer f.Close()
	infos := f.Tensors()
	var mix *mixState
	if o.Mixture.Name != "" && o.Type != ggml.TypeF32 && o.Type != ggml.TypeF16 && o.Type != ggml.TypeBF16 {
		mix = newMixState(o.Mixture, f, o.Imatrix != nil)
	}
	types := make([]ggml.Type, len(infos))
	fellBack := make([]bool, len(infos))
	kept := keptWeights(f)
	for i, info := range infos {
		if kept(info.Name) {
			types[i] = ggml.Type(info.Type)
			continue
		}
		types[i], fellBack[i] = o.targetType(info, mix)
		if types[i] != ggml.Type(info.Type) {
			tr, err := ggml.TypeTraits(ggml.Type(info.Type))
			if err != nil {
				return st, fmt.Errorf("llama: tensor %s: %w", info.Name, err)
			}
			if tr.IsQuantized && !o.AllowRequantize {
				return st, fmt.Errorf("llama: tensor %s is %w as %s: quantizing it again to %s loses quality; "+
					"quantize the f32, f16 or bf16 model instead", info.Name, ErrRequantize, ggml.Type(info.Type), types[i])
			}
			if ggml.RequiresImatrix(types[i]) && o.Imatrix[info.Name] == nil {
				return st, fmt.Errorf("llama: %s needs an importance matrix (--imatrix) for %s", types[i], info.Name)
			}
		}
	}

	w, err := gguf.Create(out)
	if err != nil {
		return st, err
	}
	defer w.Abort()
	if err := w.CopyKVs(f); err != nil {
		return st, err
	}
	ft := FileType(o.Type)
	if o.Mixture.Name != "" {
		ft = o.Mixture.FileType
	}
	if ft >= 0 {
		if err := w.SetUint32("general.file_type", uint32(ft)); err != nil {
			return st, err
		}
	}
	if err := w.SetUint32("general.quantization_version", 2); err != nil { // LM_GGML_QNT_VERSION
		return st, err
	}
	for i, info := range infos {
		if err := w.DeclareTensor(info.Name, gguf.TensorType(types[i]), info.Shape); err != nil {
			return st, err
		}
	}
	for i, info := range infos {
		if o.Progress != nil {
			o.Progress(i, len(infos), info.Name)
		}
		data, err := f.TensorData(info.Name)
		if err != nil {
			return st, err
		}
		st.Tensors++
		st.BytesIn += int64(len(data))
		st.Elements += info.Elements()
		st.Types[types[i]]++
		if types[i] != ggml.Type(info.Type) {
			if data, err = convertTensor(info, types[i], data, o.Imatrix[info.Name], o.Threads); err != nil {
				return st, fmt.Errorf("llama: tensor %s: %w", info.Name, err)
			}
			st.Quantized++
			if fellBack[i] {
				st.Fallbacks++
			}
		}
		st.BytesOut += int64(len(data))
		if err := w.WriteTensorData(info.Name, data); err != nil {
			return st, err
		}
	}
	if o.Progress != nil {
		o.Progress(len(infos), len(infos), "")
	}
	return st, w.Close()
}

// convertTensor converts the rows of a tensor to type t, on several threads.
func convertTensor(info gguf.TensorInfo, t ggml.Type, data []byte, imatrix []float32, threads int) ([]byte, error) {
	ne0 := int(info.Shape[0])
	rows := int(info.Elements()) / max(ne0, 1)
	if ne0 == 0 || rows == 0 {
		return nil, errors.New("empty tensor")
	}
	src := ggml.Type(info.Type)
	perMatrix := rows // rows sharing one imatrix vector
	if imatrix != nil {
		switch {
		case len(imatrix) == ne0:
		case len(info.Shape) >= 3 && len(imatrix) == ne0*int(info.Shape[2]):
			perMatrix = int(info.Shape[1])
		default:
			return nil, fmt.Errorf("importance matrix has %d values for rows of %d", len(imatrix), ne0)
		}
	}
	inRow, err := ggml.RowSize(src, ne0)
	if err != nil {
		return nil, err
	}
	outRow, err := ggml.RowSize(t, ne0)
	if err != nil {
		return nil, err
	}
	out := make([]byte, rows*outRow)
	// chunks of whole rows, never spanning two imatrix matrices
	chunk := max(1, min(perMatrix, (rows+4*threads-1)/(4*threads)))
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]float32, chunk*ne0)
			for {
				mu.Lock()
				r0 := next
				next += chunk
				if r0 < rows && r0/perMatrix != (r0+chunk-1)/perMatrix {
					next = (r0/perMatrix + 1) * perMatrix // do not span matrices
				}
				r1 := min(next, rows)
				stop := first != nil
				mu.Unlock()
				if r0 >= rows || stop {
					return
				}
				f := buf[:(r1-r0)*ne0]
				err := toFloat(src, data[r0*inRow:r1*inRow], f)
				if err == nil {
					var im []float32
					if imatrix != nil {
						m := r0 / perMatrix
						im = imatrix[m*ne0 : (m+1)*ne0]
					}
					err = ggml.QuantizeInto(out[r0*outRow:r1*outRow], t, f, ne0, im)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return out, first
}

// toFloat converts packed rows of type src to f32.
func toFloat(src ggml.Type, b []byte, f []float32) error {
	return ggml.DequantizeInto(f, src, b)
}

// A Mixture is one of llama.cpp's model file types (llama_ftype, the
// names its quantize tool takes): a base type for the weight matrices and
// rules that give some of them another type (see Mixture.rules).
type Mixture struct {
	Name     string    // llama.cpp's name: Q4_K_M, Q8_0, IQ2_XS, ...
	FileType int       // the general.file_type value (llama_ftype)
	Base     ggml.Type // the type of the matrices no rule picks another for
}

// mixtures lists llama.cpp's file types in the order its quantize tool
// shows them.
var mixtures = []Mixture{
	{"Q4_0", 2, ggml.TypeQ4_0}, {"Q4_1", 3, ggml.TypeQ4_1}, {"Q5_0", 8, ggml.TypeQ5_0}, {"Q5_1", 9, ggml.TypeQ5_1},
	{"IQ2_XXS", 19, ggml.TypeIQ2_XXS}, {"IQ2_XS", 20, ggml.TypeIQ2_XS}, {"IQ2_S", 28, ggml.TypeIQ2_XS}, {"IQ2_M", 29, ggml.TypeIQ2_S},
	{"IQ1_S", 24, ggml.TypeIQ1_S}, {"IQ1_M", 31, ggml.TypeIQ1_M}, {"TQ1_0", 36, ggml.TypeTQ1_0}, {"TQ2_0", 37, ggml.TypeTQ2_0},
	{"Q2_K", 10, ggml.TypeQ2_K}, {"Q2_K_S", 21, ggml.TypeQ2_K}, {"IQ3_XXS", 23, ggml.TypeIQ3_XXS}, {"IQ3_S", 26, ggml.TypeIQ3_S},
	{"IQ3_M", 27, ggml.TypeIQ3_S}, {"Q3_K_S", 11, ggml.TypeQ3_K}, {"Q3_K_M", 12, ggml.TypeQ3_K}, {"Q3_K_L", 13, ggml.TypeQ3_K},
	{"IQ3_XS", 22, ggml.TypeIQ3_S}, {"IQ4_NL", 25, ggml.TypeIQ4_NL}, {"IQ4_XS", 30, ggml.TypeIQ4_XS},
	{"Q4_K_S", 14, ggml.TypeQ4_K}, {"Q4_K_M", 15, ggml.TypeQ4_K}, {"Q5_K_S", 16, ggml.TypeQ5_K}, {"Q5_K_M", 17, ggml.TypeQ5_K},
	{"Q6_K", 18, ggml.TypeQ6_K}, {"Q8_0", 7, ggml.TypeQ8_0}, {"F16", 1, ggml.TypeF16}, {"BF16", 32, ggml.TypeBF16}, {"F32", 0, ggml.TypeF32},
}

// mixtureAliases are the short names llama.cpp's quantize tool also takes.
var mixtureAliases = map[string]string{"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}

// Mixtures returns llama.cpp's file types, in the order its quantize tool
// lists them.
func Mixtures() []Mixture { return append([]Mixture(nil), mixtures...) }

// ParseMixture finds a llama.cpp file type by name, in any case; Q3_K,
// Q4_K and Q5_K are the _M mixtures, as in llama.cpp.
func ParseMixture(name string) (Mixture, bool) {
	up := strings.ToUpper(name)
	if a, ok := mixtureAliases[up]; ok {
		up = a
	}
	for _, m := range mixtures {
		if m.Name == up {
			return m, true
		}
	}
	return Mixture{}, false
}

// mixState is what llama.cpp's per-tensor rules look at: the model's
// shape and how many attn_v (or attn_qkv) and ffn_down matrices came
// before.
type mixState struct {
	m                  Mixture
	hasOutput, imatrix bool
	nGQA               int
	is70B              bool
	nAttnV, nFFNDown   int
	iAttnV, iFFNDown   int
	iFFNGate, iFFNUp   int
	nFFNGate, nFFNUp   int
}

// newMixState reads the model's shape from f's metadata (llama.cpp's key
// names under general.architecture) and counts the matrices the rules
// number.
func newMixState(m Mixture, f *gguf.File, hasImatrix bool) *mixState {
	q := &mixState{m: m, imatrix: hasImatrix, nGQA: 1}
	arch, _ := f.String("general.architecture")
	geti := func(key string) int {
		v, err := f.Int(arch + "." + key)
		if err != nil {
			return 0
		}
		return int(v)
	}
	heads, kvHeads := geti("attention.head_count"), geti("attention.head_count_kv")
	if kvHeads == 0 {
		kvHeads = heads
	}
	if heads > 0 && kvHeads > 0 {
		q.nGQA = heads / kvHeads
	}
	// llama.cpp's MODEL_70B: 80 llama layers with grouped K/V heads
	if a := archs[arch]; a != nil && a.is70B != nil {
		q.is70B = a.is70B(&Hparams{NLayer: geti("block_count"), NHead: heads, NHeadKV: kvHeads})
	}
	for _, t := range f.Tensors() {
		if !strings.HasSuffix(t.Name, ".weight") {
			continue // biases: llama.cpp numbers the layers' matrices
		}
		switch {
		case t.Name == "output.weight":
			q.hasOutput = true
		case strings.Contains(t.Name, "attn_v.weight"), strings.Contains(t.Name, "attn_qkv.weight"):
			q.nAttnV++ // llama.cpp's n_attention_wv counts the fused ones too
		case strings.Contains(t.Name, "ffn_down"):
			q.nFFNDown++
		case strings.Contains(t.Name, "ffn_gate"):
			q.nFFNGate++
		case strings.Contains(t.Name, "ffn_up"):
			q.nFFNUp++
		}
	}
	return q
}

// moreBits is llama.cpp's use_more_bits: the first and the last eighth of
// the layers, and every third layer in between.
func moreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// rules is llama.cpp's llama_tensor_get_type (late 2024) for the matrix
// name with rows of ne0, given in file order (the counters of attn_v and
// ffn_down matrices advance as in llama.cpp): the type the mixture gives
// it, before the fallback for rows that are not whole blocks. The rules
// llama.cpp has for Falcon and for mixtures of experts are left out: this
// package runs dense llama models.
func (q *mixState) rules(name string, ne0 int) ggml.Type {
	has := func(s string) bool { return strings.Contains(name, s) }
	ft := q.m.Name
	is := func(names ...string) bool { return slices.Contains(names, ft) }
	t := q.m.Base
	const qkK = 256
	switch {
	case name == "output.weight" || (!q.hasOutput && name == "token_embd.weight"):
		switch {
		case ne0%qkK != 0:
			t = ggml.TypeQ8_0
		case is("IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"):
			t = ggml.TypeQ5_K
		case t != ggml.TypeQ8_0:
			t = ggml.TypeQ6_K
		}
	case name == "token_embd.weight":
		switch {
		case is("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
			t = ggml.TypeQ2_K
		case is("IQ2_S", "IQ2_M", "IQ3_XXS"):
			t = ggml.TypeIQ3_S
		case is("TQ1_0", "TQ2_0"):
			t = ggml.TypeQ4_K
		}
	case is("IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1_S", "IQ2_M", "IQ1_M"):
		iq3 := is("IQ2_S", "IQ2_M")
		switch {
		case has("attn_v.weight"):
			switch {
			case q.nGQA >= 4:
				t = ggml.TypeQ4_K
			case iq3:
				t = ggml.TypeIQ3_S
			default:
				t = ggml.TypeQ2_K
			}
			q.iAttnV++
		case has("ffn_down"):
			if q.iFFNDown < q.nFFNDown/8 {
				t = ggml.TypeQ2_K
				if iq3 {
					t = ggml.TypeIQ3_S
				}
			}
			q.iFFNDown++
		case has("attn_output.weight"):
			switch {
			case is("IQ1_S", "IQ1_M"):
				t = ggml.TypeIQ2_XXS
			case iq3:
				t = ggml.TypeIQ3_S
			}
		}
	case has("attn_v.weight"):
		switch {
		case ft == "Q2_K":
			t = ggml.TypeQ3_K
			if q.nGQA >= 4 {
				t = ggml.TypeQ4_K
			}
		case ft == "Q2_K_S" && q.nGQA >= 4:
			t = ggml.TypeQ4_K
		case ft == "IQ3_XXS":
			switch {
			case q.nGQA >= 4:
				t = ggml.TypeQ4_K
			case !q.imatrix:
				t = ggml.TypeIQ3_S
			default:
				t = ggml.TypeIQ3_XXS
			}
		case is("IQ3_XS", "IQ3_S") && q.nGQA >= 4:
			t = ggml.TypeQ4_K
		case ft == "IQ3_M":
			t = ggml.TypeQ4_K
		case ft == "Q3_K_M":
			t = ggml.TypeQ4_K
			if q.iAttnV < 2 {
				t = ggml.TypeQ5_K
			}
		case ft == "Q3_K_L":
			t = ggml.TypeQ5_K
		case is("IQ4_NL", "IQ4_XS") && q.nGQA >= 4:
			t = ggml.TypeQ5_K
		case is("Q4_K_M", "Q5_K_M") && moreBits(q.iAttnV, q.nAttnV):
			t = ggml.TypeQ6_K
		case ft == "Q4_K_S" && q.iAttnV < 4:
			t = ggml.TypeQ5_K
		}
		if q.is70B && (t == ggml.TypeQ3_K || t == ggml.TypeQ4_K) {
			t = ggml.TypeQ5_K // 8 heads share each K/V row: more bits cost little
		}
		q.iAttnV++
	case has("attn_k.weight"), has("attn_q.weight"):
		switch {
		case ft == "IQ3_XS":
			t = ggml.TypeIQ3_XXS
		case is("IQ2_S", "IQ2_M"):
			t = ggml.TypeIQ2_S
		}
	case has("ffn_down"):
		i, n := q.iFFNDown, q.nFFNDown
		switch {
		case ft == "Q2_K":
			t = ggml.TypeQ3_K
		case ft == "Q2_K_S":
			if i < n/8 {
				t = ggml.TypeQ4_K
			}
		case ft == "IQ3_XXS" && !q.imatrix:
			t = ggml.TypeQ3_K
			if i < n/8 {
				t = ggml.TypeQ4_K
			}
		case ft == "Q3_K_M":
			t = ggml.TypeQ4_K
			if i < n/16 {
				t = ggml.TypeQ5_K
			}
		case ft == "IQ3_M" && i < n/8:
			t = ggml.TypeQ4_K
		case ft == "Q3_K_L":
			t = ggml.TypeQ5_K
		case ft == "Q4_K_M":
			if moreBits(i, n) {
				t = ggml.TypeQ6_K
			}
		case i < n/8 && is("IQ4_NL", "IQ4_XS") && !q.imatrix:
			t = ggml.TypeQ5_K
		case ft == "Q5_K_M" && moreBits(i, n):
			t = ggml.TypeQ6_K
		case ft == "Q4_K_S" && i < n/8:
			t = ggml.TypeQ5_K
		case is("Q4_0", "Q5_0") && q.imatrix && i < n/8:
			// the first layers' ffn_down go wrong even with an imatrix
			t = ggml.TypeQ4_1
			if ft == "Q5_0" {
				t = ggml.TypeQ5_1
			}
		}
		q.iFFNDown++
	case has("attn_output.weight"):
		switch {
		case ft == "Q2_K":
			t = ggml.TypeQ3_K
		case ft == "IQ3_XXS":
			t = ggml.TypeIQ3_S
		case ft == "Q3_K_M", ft == "IQ3_M":
			t = ggml.TypeQ4_K
		case ft == "Q3_K_L":
			t = ggml.TypeQ5_K
		}
	case has("attn_qkv.weight"): // phi3's fused Q, K and V
		switch {
		case is("Q3_K_M", "Q3_K_L", "IQ3_M"):
			t = ggml.TypeQ4_K
		case ft == "Q4_K_M":
			t = ggml.TypeQ5_K
		case ft == "Q5_K_M":
			t = ggml.TypeQ6_K
		}
	case has("ffn_gate"):
		if ft == "IQ3_XS" && q.iFFNGate >= q.nFFNGate/8 && q.iFFNGate < 7*q.nFFNGate/8 {
			t = ggml.TypeIQ3_XXS
		}
		q.iFFNGate++
	case has("ffn_up"):
		if ft == "IQ3_XS" && q.iFFNUp >= q.nFFNUp/8 && q.iFFNUp < 7*q.nFFNUp/8 {
			t = ggml.TypeIQ3_XXS
		}
		q.iFFNUp++
	}
	return t
}

// QuantizeTypes returns the types QuantizeFile can write, in ggml's order.
func QuantizeTypes() []ggml.Type {
	var ts []ggml.Type
	for t := ggml.Type(0); t < ggml.TypeCount; t++ {
		if t.BlockSize() > 0 && quantizable(t) == nil {
			ts = append(ts, t)
		}
	}
	return ts
}
