package llama

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// Architectures. Each model architecture a file may name in
// general.architecture is one *architecture value, registered by name from
// its own file (arch_NAME.go): the <arch>.* keys it reads, the tensors it
// holds, the state a session keeps for it and the graph builder. Loading,
// sessions, quantization, placement and the ceiling ask this value; nothing
// outside the arch_*.go files tests an architecture's name.

// architecture describes one model architecture.
type architecture struct {
	name string
	// hparams are the keys read, in order, after general.architecture (see
	// hparamKey); a key's default may depend on the keys before it.
	hparams []hparamKey
	// check validates the hyperparameters once read (nil: nothing more).
	check func(h *Hparams) error
	// ropeType is the rope of the architecture (ggml.RopeTypeNorm or
	// ggml.RopeTypeNeox); it becomes Hparams.RopeType.
	ropeType int
	// tensors are its weights in the order one token reads them (the
	// buffers are laid out so; see decodeRank): the global ones first
	// (token_embd, ...), then those of a layer (layer: true), then the
	// output head (output: true).
	tensors []tensorSpec
	// state is what a session keeps between evaluations.
	state stateKind
	// graph builds the forward graph of a batch.
	graph graphBuilder
	// trainable: Train and NewModel work with it (llama only).
	trainable bool
	// is70B is llama.cpp's MODEL_70B for the quantization mixtures (nil:
	// never).
	is70B func(h *Hparams) bool
}

// stateKind is what a session keeps between evaluations.
type stateKind int

const (
	// stateKV: a KV cache of every layer (kvcache.go); sliding-window
	// layers use the same cache with a mask hiding the positions out of
	// their window (decoder.swa).
	stateKV stateKind = iota
	// stateRecurrent: a fixed-size state per layer (rwkv6, mamba; see
	// recurrent.go): the graph builder is a recurrentGraph.
	stateRecurrent
	// stateNone: nothing (encoders such as bert: every evaluation is a
	// whole sequence, see Session.Embeddings).
	stateNone
)

func (k stateKind) String() string {
	switch k {
	case stateKV:
		return "KV cache"
	case stateRecurrent:
		return "recurrent state"
	case stateNone:
		return "no state"
	}
	return "state " + strconv.Itoa(int(k))
}

// graphBuilder builds the graph of one batch (see batchGraph): b's n,
// nPast, nOut and nKV are set and b.g, its inputs tokens, pos, mask (and
// maskSWA, see swaLayers) made; the builder adds the nodes, with the K and
// V stores of one-token graphs in b.stores, and sets b.logits.
type graphBuilder interface {
	build(m *Model, ctx *ggml.Context, kv *kvCache, b *batchGraph)
	// swaLayers reports whether any layer of h uses a sliding window (the
	// graph then has the input maskSWA).
	swaLayers(h *Hparams) bool
	// nodesPerLayer bounds the graph nodes of one layer.
	nodesPerLayer() int
}

// hparamKey is one <arch>.KEY the architecture reads.
type hparamKey struct {
	key      string // after "<arch>."
	required bool   // a missing key refuses the file
	// field is the Hparams field it sets: *int, *float32, *string or *bool.
	field func(h *Hparams) any
	// def, if not nil, sets the default just before the key is read (it
	// may use the fields read before).
	def func(h *Hparams)
	// min is the smallest value of an int key (0 or 1; at most 1<<30).
	min int
	// legacy: an older spelling, read but not written by Save.
	legacy bool
	// global: key is the whole key, not prefixed with "<arch>."
	// (tokenizer.ggml.token_type_count).
	global bool
}

// name is the GGUF key of k in a file of architecture arch.
func (k hparamKey) name(arch string) string {
	if k.global {
		return k.key
	}
	return arch + "." + k.key
}

// tensorSpec is one weight of an architecture.
type tensorSpec struct {
	// name is the GGUF name, without the "blk.N." prefix of a layer's.
	name  string
	layer bool // one per layer: "blk.N." + name
	// shape in terms of the hyperparameters (ne0 first).
	shape func(h *Hparams) []int
	// optional: a file may lack it. What its absence means is the graph
	// builder's (a nil bias is no bias); tie names the tensor that stands
	// in for a missing one instead (output.weight: token_embd.weight).
	optional bool
	tie      string
	// tiedOnly: the file must not hold it; it is always the tie
	// (gemma's output).
	tiedOnly bool
	role     tensorRole
	// output: a weight of the output head (after the layers; placed with
	// the output when it goes to another device).
	output bool
	// bind is where it goes: a field of the Model (for global tensors) or
	// of the layer.
	bind func(m *Model, L *Layer) **ggml.Tensor
}

// tensorRole is what a weight is used for: it decides where it is stored
// (matrices only mul_mat reads may go into a repacked buffer), the types
// it may have, and which quantization rules apply.
type tensorRole int

const (
	roleMatrix  tensorRole = iota // a projection: only ever mul_mat's first operand
	roleEmbd                      // the token embedding (rows gathered; tied: the output matrix too)
	roleNorm                      // a norm's weight (f32)
	roleBias                      // a bias, added (f32)
	roleFactors                   // rope frequency factors (f32)
	// roleParam: a weight element-wise ops read, or mul_mat through a
	// reshape (rwkv6's mixes and decays, mamba's convolution, A and D):
	// never repacked, and kept in its type by QuantizeFile (as llama.cpp's
	// quantize keeps them).
	roleParam
)

// archs are the registered architectures by name.
var archs = map[string]*architecture{}

// registerArch adds an architecture; its file calls it from init.
func registerArch(a *architecture) {
	if _, dup := archs[a.name]; dup {
		panic("llama: architecture " + a.name + " registered twice")
	}
	archs[a.name] = a
}

// SupportedArchitectures lists the general.architecture values Load
// accepts, sorted.
func SupportedArchitectures() []string {
	out := make([]string, 0, len(archs))
	for name := range archs {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ErrUnsupportedArchitecture is what Load returns (wrapped, naming it) for
// a file of an architecture this package does not run.
var ErrUnsupportedArchitecture = errors.New("architecture not supported")

type unsupportedArchError struct{ name string }

func (e *unsupportedArchError) Error() string {
	return fmt.Sprintf("llama: architecture %q is not supported (supported: %s)", e.name, strings.Join(SupportedArchitectures(), ", "))
}
func (e *unsupportedArchError) Is(target error) bool { return target == ErrUnsupportedArchitecture }

// archOf reads general.architecture and finds its description.
func archOf(f *gguf.File) (*architecture, error) {
	name, err := f.String("general.architecture")
	if err != nil {
		return nil, fmt.Errorf("general.architecture: %w", err)
	}
	a := archs[name]
	if a == nil {
		return nil, &unsupportedArchError{name}
	}
	return a, nil
}

// readHparams reads the architecture's keys from f.
func (a *architecture) readHparams(f *gguf.File) (Hparams, error) {
	h := Hparams{Arch: a.name, RopeType: a.ropeType}
	for _, k := range a.hparams {
		if k.def != nil {
			k.def(&h)
		}
		key := k.name(a.name)
		if !f.Has(key) {
			if k.required {
				return h, fmt.Errorf("hyperparameter %s: %w", key, gguf.ErrNotFound)
			}
			continue
		}
		var err error
		switch p := k.field(&h).(type) {
		case *int:
			var v int64
			if v, err = f.Int(key); err == nil && (v < int64(k.min) || v > 1<<30) {
				err = fmt.Errorf("%d out of range [%d, %d]", v, k.min, 1<<30)
			}
			*p = int(v)
		case *float32:
			var v float64
			v, err = f.Float(key)
			*p = float32(v)
		case *Pooling:
			var v int64
			if v, err = f.Int(key); err == nil && (v < int64(PoolingNone) || v > int64(PoolingRank)) {
				err = fmt.Errorf("%d is not a pooling type (0 none, 1 mean, 2 cls, 3 last, 4 rank)", v)
			}
			*p = Pooling(v)
		case *string:
			*p, err = f.String(key)
		case *bool:
			*p, err = f.Bool(key)
		default:
			panic(fmt.Sprintf("llama: hyperparameter %s: field of type %T", key, p))
		}
		if err != nil {
			return h, fmt.Errorf("hyperparameter %s: %w", key, err)
		}
	}
	if a.check != nil {
		if err := a.check(&h); err != nil {
			return h, err
		}
	}
	return h, nil
}

// checkTensors compares the tensors of f with the architecture's list for
// h, before any tensor is allocated or read: every required tensor present
// with its shape, nothing the architecture does not know. The first
// difference is the error. A file that declares more layers than it holds
// fails first, in time proportional to the file.
func (a *architecture) checkTensors(f *gguf.File, h *Hparams) error {
	infos := f.Tensors()
	layers := make(map[int]bool, min(h.NLayer, len(infos)))
	for _, t := range infos {
		if l, _, ok := layerOf(t.Name); ok && l < h.NLayer {
			layers[l] = true
		}
	}
	if len(layers) < h.NLayer {
		first := 0
		for layers[first] {
			first++
		}
		name := "?"
		for _, s := range a.tensors {
			if s.layer && !s.optional {
				name = s.name
				break
			}
		}
		return fmt.Errorf("missing tensor blk.%d.%s: %s.block_count declares %d layers, the file holds tensors of %d",
			first, name, h.Arch, h.NLayer, len(layers))
	}
	if te, ok := f.Tensor("token_embd.weight"); ok && len(te.Shape) == 2 {
		if v, err := f.Int(h.Arch + ".vocab_size"); err == nil && te.Shape[1] != v {
			return fmt.Errorf("tensor token_embd.weight has shape %v, which does not match %s.vocab_size %d", te.Shape, h.Arch, v)
		}
		h.NVocab = int(te.Shape[1])
	}
	known := make(map[string]bool, len(infos))
	check := func(s tensorSpec, name string) error {
		known[name] = true
		t, ok := f.Tensor(name)
		if ok && s.tiedOnly {
			return fmt.Errorf("unexpected tensor %s: architecture %s always uses %s in its place", name, a.name, s.tie)
		}
		if !ok {
			if s.optional {
				return nil
			}
			return fmt.Errorf("missing tensor %s (architecture %s)", name, a.name)
		}
		want := s.shape(h)
		if !sameShape(t.Shape, want) {
			return fmt.Errorf("tensor %s has shape %v, want %v (architecture %s)%s", name, t.Shape, want, a.name, dimSources(h, t.Shape, want))
		}
		if s.role == roleNorm || s.role == roleBias || s.role == roleFactors {
			if ggml.Type(t.Type) != ggml.TypeF32 {
				return fmt.Errorf("tensor %s is %s; norms, biases and rope factors must be f32", name, ggml.Type(t.Type))
			}
		}
		return nil
	}
	for _, s := range a.tensors {
		if !s.layer {
			if err := check(s, s.name); err != nil {
				return err
			}
		}
	}
	for il := range h.NLayer {
		p := "blk." + strconv.Itoa(il) + "."
		for _, s := range a.tensors {
			if s.layer {
				if err := check(s, p+s.name); err != nil {
					return err
				}
			}
		}
	}
	for _, t := range infos {
		if !known[t.Name] {
			return fmt.Errorf("unexpected tensor %s: not a weight of architecture %s with %d layers", t.Name, a.name, h.NLayer)
		}
	}
	return nil
}

// dimSources names the hyperparameters that give the first dimension in
// which got and want differ.
func dimSources(h *Hparams, got []int64, want []int) string {
	for i, w := range want {
		if i < len(got) && got[i] == int64(w) {
			continue
		}
		var keys []string
		for _, k := range []struct {
			v   int
			key string
		}{
			{h.NEmbd, "embedding_length"}, {h.NFF, "feed_forward_length"}, {h.NEmbdQ(), "attention.head_count"},
			{h.NEmbdGQA(), "attention.head_count_kv"}, {h.NVocab, "vocab_size"}, {h.NRot / 2, "rope.dimension_count"},
		} {
			if k.v == w {
				keys = append(keys, h.Arch+"."+k.key)
			}
		}
		if len(keys) > 0 {
			return fmt.Sprintf(": dimension %d does not match %s", i, strings.Join(keys, ", "))
		}
		return ""
	}
	return ""
}

// sameShape compares a file's shape with a wanted one (trailing 1s aside).
func sameShape(got []int64, want []int) bool {
	for i := range max(len(got), len(want)) {
		g, w := int64(1), 1
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != int64(w) {
			return false
		}
	}
	return true
}

// bind points the model's and the layers' fields at the weights (checked
// by checkTensors, or made by NewModel) and checks their shapes again.
func (m *Model) bind() error {
	a, h := m.arch, &m.Hparams
	if te := m.tensors["token_embd.weight"]; te != nil {
		h.NVocab = te.Ne()[1]
	}
	if m.Vocab != nil && m.Vocab.Model != TokenizerNone && m.Vocab.Size() > h.NVocab && h.NVocab > 0 {
		return fmt.Errorf("the tokenizer has %d tokens but token_embd only %d rows", m.Vocab.Size(), h.NVocab)
	}
	m.Layers = make([]Layer, h.NLayer)
	var errs []string
	one := func(s tensorSpec, name string, L *Layer) {
		t := m.tensors[name]
		if t == nil && s.tie != "" {
			t = m.tensors[s.tie]
		}
		if t == nil {
			if !s.optional {
				errs = append(errs, "missing tensor "+name)
			}
			return
		}
		if ne, want := t.Ne(), s.shape(h); !sameShape(int64s(ne[:]), want) {
			errs = append(errs, fmt.Sprintf("tensor %s has shape %v, want %v", name, t.Shape(), want))
			return
		}
		*s.bind(m, L) = t
	}
	for _, s := range a.tensors {
		if !s.layer {
			one(s, s.name, nil)
		}
	}
	for il := range m.Layers {
		p := "blk." + strconv.Itoa(il) + "."
		for _, s := range a.tensors {
			if s.layer {
				one(s, p+s.name, &m.Layers[il])
			}
		}
	}
	if len(errs) > 0 {
		if len(errs) > 8 {
			errs = append(errs[:8], fmt.Sprintf("... and %d more", len(errs)-8))
		}
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func int64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

// spec finds the architecture's tensor of a GGUF name ("blk.N.x" or a
// global one) among its own or fused names (see fuseGroups).
func (a *architecture) spec(name string, nLayer int) (tensorSpec, bool) {
	field, layer := name, false
	if l, f, ok := layerOf(name); ok {
		if l >= nLayer {
			return tensorSpec{}, false
		}
		field, layer = f, true
	}
	for _, s := range a.tensors {
		if s.layer == layer && s.name == field {
			return s, true
		}
	}
	for _, g := range fuseGroups {
		if layer && g.name == field {
			return tensorSpec{name: g.name, layer: true, role: g.role}, true
		}
	}
	return tensorSpec{}, false
}

// isOutput reports whether name is a weight of the output head.
func (a *architecture) isOutput(name string) bool {
	s, ok := a.spec(name, 0)
	return ok && s.output
}

// mulMatOnly reports whether the weight of this GGUF (or fused) name is
// only ever the first operand of mul_mat.
func (a *architecture) mulMatOnly(name string, nLayer int) bool {
	s, ok := a.spec(name, nLayer)
	return ok && s.role == roleMatrix
}

// decodeRank orders tensors as a token's evaluation reads them: the
// architecture's list order (global tensors, each layer's in turn, then the
// output head), a fused matrix in the place of its first part; tensors it
// does not know come last, in file order (sort.SliceStable). Laid out in
// this order, one matrix ends where the next one read begins: the mat-vec
// kernels' prefetch past a matrix's last rows, and the hardware
// prefetchers' streams, then run on into the next matrix instead of into
// weights read much later.
func (a *architecture) decodeRank(name string, nLayer int) int {
	perLayer := len(a.tensors) + len(fuseGroups) + 1
	head := (nLayer + 1) * perLayer // the output head, after the layers
	field := name
	l, f, isLayer := layerOf(name)
	if isLayer {
		if l >= nLayer {
			return (nLayer + 2) * perLayer
		}
		field = f
	}
	index := func(field string) int {
		return slices.IndexFunc(a.tensors, func(s tensorSpec) bool { return s.name == field && s.layer == isLayer })
	}
	i := index(field)
	if i < 0 && isLayer {
		for _, g := range fuseGroups { // a fused matrix: the place of its first part
			if g.name == field {
				i = index(g.parts[0])
			}
		}
	}
	switch {
	case i >= 0 && isLayer:
		return (l+1)*perLayer + i
	case i >= 0 && a.tensors[i].output:
		return head + i
	case i >= 0:
		return i
	case isLayer:
		return (l+2)*perLayer - 1
	}
	return (nLayer + 2) * perLayer
}
