// Package llama runs llama-architecture language models stored in GGUF files
// as llama.cpp writes them: it loads the weights (any tensor type with a
// mul_mat kernel), the tokenizer of the file, and evaluates tokens with a KV
// cache through the ggml graph engine.
//
//	m, err := llama.Load("model.gguf", llama.LoadOptions{})
//	defer m.Close()
//	s, err := m.NewSession(llama.SessionOptions{Threads: 4})
//	defer s.Close()
//	prompt := m.Tokenize("Once upon a time", true)
//	stats, err := s.Generate(ctx, prompt, llama.GenerateOptions{MaxTokens: 64,
//		OnToken: func(id int32) error { fmt.Print(m.Piece(id)); return nil }})
package llama

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// Hparams are a model's hyperparameters (the <arch>.* keys of its file).
type Hparams struct {
	Arch      string // general.architecture ("llama", ...)
	NVocab    int    // rows of token_embd
	NEmbd     int    // embedding_length
	NFF       int    // feed_forward_length
	NHead     int    // attention.head_count
	NHeadKV   int    // attention.head_count_kv (GQA: fewer K/V heads than Q heads)
	NLayer    int    // block_count
	NRot      int    // rope.dimension_count (rotated leading dimensions of a head)
	NCtxTrain int    // context_length
	HeadDim   int    // NEmbd / NHead

	RMSEps        float32 // attention.layer_norm_rms_epsilon
	RopeFreqBase  float32 // rope.freq_base
	RopeFreqScale float32 // 1 / linear rope scaling factor
}

// NEmbdGQA is the width of the K and V projections.
func (h Hparams) NEmbdGQA() int { return h.HeadDim * h.NHeadKV }

// Layer holds the weights of one transformer block.
type Layer struct {
	AttnNorm, Wq, Wk, Wv, Wo   *ggml.Tensor
	FFNNorm, WGate, WUp, WDown *ggml.Tensor
	// Wqkv and WGateUp, when not nil, hold [Wq; Wk; Wv] and [WGate; WUp]
	// as one matrix each (Wq ... WUp are then views of them).
	Wqkv, WGateUp *ggml.Tensor

	ropeFreqs *ggml.Tensor // the rope factors on the layer's device, if not the model's
}

// Model is a loaded model: weights, hyperparameters and tokenizer. It is
// safe for concurrent use by several Sessions (the weights are read-only).
type Model struct {
	Hparams
	Vocab *Vocab

	TokEmbd, OutNorm, Output *ggml.Tensor // Output == TokEmbd when tied
	RopeFreqs                *ggml.Tensor // optional per-dimension rope divisors
	Layers                   []Layer

	file    *gguf.File // the mapped file (Mmap only)
	weights *ggml.Context
	buf     *ggml.Buffer // the backend buffer of the weights (nil with Mmap or NewModel)
	// the repacked projections (see loadWeights), or nil
	packed    *ggml.Context
	packedBuf *ggml.Buffer
	tensors   map[string]*ggml.Tensor
	fused     map[string]*ggml.Tensor // the fused matrices of the layers, by made-up name

	devs   []*device // the backends other than the local CPU holding layers (see placement.go)
	outDev *device   // the one holding the output head too, or nil
	path   string    // the file Load read (to load again what a lost RPC server held)
	fuse   bool      // whether the layers' matrices were fused

	// mu is held for reading by whatever uses the weights (evaluations,
	// NewSession, Save, ...) and for writing by Close, so that Close from
	// another goroutine waits for them instead of freeing memory they read.
	mu sync.RWMutex
}

// ErrClosed is what the methods of a closed Model or Session (and of a
// Session whose Model is closed) return, wrapped in an error naming the
// method: errors.Is(err, ErrClosed).
var ErrClosed = errors.New("llama: closed")

// closedError names the method called and what was closed.
type closedError struct{ op, what string }

func (e *closedError) Error() string        { return "llama: " + e.op + ": the " + e.what + " is closed" }
func (e *closedError) Is(target error) bool { return target == ErrClosed }

// errClosedModel is the error of op on a closed (or nil) Model.
func errClosedModel(op string) error { return &closedError{op, "model"} }

// use locks the model for reading for op, failing with ErrClosed if it is
// closed; the caller calls the returned function when done.
func (m *Model) use(op string) (func(), error) {
	if m == nil {
		return nil, errClosedModel(op)
	}
	m.mu.RLock()
	if m.closed() {
		m.mu.RUnlock()
		return nil, errClosedModel(op)
	}
	return m.mu.RUnlock, nil
}

// LoadOptions configure Load.
type LoadOptions struct {
	// Mmap uses the weights in place in the memory-mapped file (nothing is
	// copied; the pages are read as they are first used) instead of
	// copying them into a backend buffer.
	Mmap bool
	// NoFuse keeps each layer's Q, K, V (and gate, up) matrices apart in
	// memory; by default a layer's matrices of one type are stored as one
	// (see Layer.Wqkv), which Train does not accept.
	NoFuse bool
	// NoRepack keeps every weight in a plain CPU buffer. By default the
	// projection matrices of a type the CPU repacks (ggml.CPURepacks: on
	// x86-64 with AVX2 or AVX-512, q8_0, q4_0, iq4_nl, q4_K and q6_K) go
	// into a ggml.CPURepackBufferType
	// buffer, where only MulMat reads them (Tensor(name).Bytes still gives
	// their bytes).
	NoRepack bool

	// Split, if not nil, spreads the layers over RPC servers or other
	// backends (see SplitOptions); nil keeps everything in this process.
	// (A pointer: LoadOptions stays comparable.)
	Split *SplitOptions
}

// SplitOptions say which devices other than the local CPU hold layers of
// the model, and how many each.
type SplitOptions struct {
	// RPC lists RPC servers ("host:port": ggml rpc-server, or llama.cpp's
	// rpc-server) to spread the layers over, as llama.cpp's --rpc. Each
	// server holds the weights of a run of consecutive layers and, in every
	// session, their KV cache, and computes them; the token embeddings, the
	// output norm and matrix, and the layers no server takes stay local
	// (they come first). The connections stay open until Model.Close.
	// A server that went away loses its layers' weights; once it is back,
	// Model.NewSession loads them again from the model's file (make it
	// while no other session of the model computes).
	RPC []string
	// Backends are other backends to spread the layers over, after the RPC
	// servers (the caller keeps them open while the model is in use).
	Backends []*ggml.Backend
	// TensorSplit weighs the devices (RPC, then Backends), as llama.cpp's
	// --tensor-split: the layers go in proportion to the weights, one per
	// device, and optionally one more for the local CPU (without it the
	// devices take every layer). Empty: in proportion to the free memory
	// each RPC server reports (equal shares if one is not an RPC server),
	// no device taking more layers than fit in it, the rest staying local.
	// A server whose share does not fit in its free memory is refused.
	TensorSplit []float64
	// OutputRemote puts the output norm and matrix on the device of the
	// last layer (when that is not the local CPU and the output is not
	// tied to the token embeddings, which stay local): the logits then
	// cross the wire instead of the last activations.
	OutputRemote bool
}

// Load reads a llama-architecture GGUF model: its weights, in the type the
// file stores them in, go into a CPU backend buffer (or stay in the file's
// mapping, see LoadOptions.Mmap).
func Load(path string, opts LoadOptions) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := loadFile(f, opts)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("llama: %s: %w", path, withoutPrefix{err})
	}
	if !opts.Mmap {
		f.Close()
		m.file = nil
	}
	m.path = path
	return m, nil
}

// withoutPrefix shows err without a leading "llama: ", for an error of
// this package that wraps it and already starts so; errors.Is and As see
// err unchanged.
type withoutPrefix struct{ err error }

func (e withoutPrefix) Error() string { return strings.TrimPrefix(e.err.Error(), "llama: ") }
func (e withoutPrefix) Unwrap() error { return e.err }

func loadFile(f *gguf.File, opts LoadOptions) (*Model, error) {
	m := &Model{file: f}
	var err error
	if m.Hparams, err = readHparams(f); err != nil {
		return nil, err
	}
	if err := checkDeclared(f, m.Hparams); err != nil {
		return nil, err
	}
	if m.Vocab, err = LoadVocab(f); err != nil {
		return nil, err
	}
	size := ggml.GGUFContextSize(f, false) + 2*m.NLayer*ggml.TensorOverhead() + 1<<12
	if m.weights, err = ggml.NewContext(ggml.ContextOptions{MemSize: size, NoAlloc: true}); err != nil {
		return nil, err
	}
	m.fused = map[string]*ggml.Tensor{}
	m.fuse = !opts.NoFuse
	if err = m.placeLayers(f, opts); err != nil {
		m.file = nil
		m.Close()
		return nil, err
	}
	if opts.Mmap {
		m.tensors, err = m.weights.LoadGGUF(f, false)
	} else {
		err = m.loadWeights(f, !opts.NoFuse, !opts.NoRepack)
	}
	if err == nil {
		err = m.loadDevices(f, !opts.NoFuse)
	}
	if err == nil {
		err = m.bind()
	}
	if err == nil {
		m.bindFused()
		m.bindDevices()
	}
	if err != nil {
		m.file = nil // the caller closes it
		m.Close()
		return nil, err
	}
	return m, nil
}

// readHparams reads the <arch>.* keys.
func readHparams(f *gguf.File) (Hparams, error) {
	h := Hparams{Arch: "llama", RopeFreqBase: 10000, RopeFreqScale: 1, RMSEps: 1e-5, NCtxTrain: 2048}
	if a, err := f.String("general.architecture"); err == nil {
		h.Arch = a
	}
	key := func(s string) string { return h.Arch + "." + s }
	geti := func(s string, dst *int, required bool) error {
		v, err := f.Int(key(s))
		if err != nil {
			if !required && errors.Is(err, gguf.ErrNotFound) {
				return nil
			}
			return fmt.Errorf("hyperparameter %s: %w", key(s), err)
		}
		if v <= 0 || v > 1<<30 {
			return fmt.Errorf("hyperparameter %s = %d out of range", key(s), v)
		}
		*dst = int(v)
		return nil
	}
	getf := func(s string, dst *float32) error {
		v, err := f.Float(key(s))
		if err != nil {
			if errors.Is(err, gguf.ErrNotFound) {
				return nil
			}
			return fmt.Errorf("hyperparameter %s: %w", key(s), err)
		}
		*dst = float32(v)
		return nil
	}
	for _, k := range []struct {
		name     string
		dst      *int
		required bool
	}{
		{"embedding_length", &h.NEmbd, true},
		{"feed_forward_length", &h.NFF, true},
		{"attention.head_count", &h.NHead, true},
		{"block_count", &h.NLayer, true},
		{"context_length", &h.NCtxTrain, false},
	} {
		if err := geti(k.name, k.dst, k.required); err != nil {
			return h, err
		}
	}
	h.NHeadKV = h.NHead
	if err := geti("attention.head_count_kv", &h.NHeadKV, false); err != nil {
		return h, err
	}
	if h.NEmbd%h.NHead != 0 {
		return h, fmt.Errorf("embedding length %d is not a multiple of the head count %d", h.NEmbd, h.NHead)
	}
	if h.NHead%h.NHeadKV != 0 {
		return h, fmt.Errorf("head count %d is not a multiple of the KV head count %d", h.NHead, h.NHeadKV)
	}
	h.HeadDim = h.NEmbd / h.NHead
	h.NRot = h.HeadDim
	if err := geti("rope.dimension_count", &h.NRot, false); err != nil {
		return h, err
	}
	if h.NRot > h.HeadDim || h.NRot%2 != 0 {
		return h, fmt.Errorf("rope dimension count %d must be even and at most the head size %d", h.NRot, h.HeadDim)
	}
	if err := getf("attention.layer_norm_rms_epsilon", &h.RMSEps); err != nil {
		return h, err
	}
	if err := getf("rope.freq_base", &h.RopeFreqBase); err != nil {
		return h, err
	}
	// linear rope scaling: rope.scaling.factor (type linear) or the older rope.scale_linear
	factor := float32(0)
	if t, err := f.String(key("rope.scaling.type")); err == nil && t == "linear" {
		if err := getf("rope.scaling.factor", &factor); err != nil {
			return h, err
		}
	} else if err := getf("rope.scale_linear", &factor); err != nil {
		return h, err
	}
	if factor > 0 {
		h.RopeFreqScale = 1 / factor
	}
	return h, nil
}

// bind finds the named weights and checks their shapes.
func (m *Model) bind() error {
	h := &m.Hparams
	var errs []string
	get := func(name string, shape ...int) *ggml.Tensor {
		t := m.tensors[name]
		if t == nil {
			errs = append(errs, "missing tensor "+name)
			return nil
		}
		ne := t.Ne()
		for i := range ggml.MaxDims {
			want := 1
			if i < len(shape) {
				want = shape[i]
			}
			if ne[i] != want {
				errs = append(errs, fmt.Sprintf("tensor %s has shape %v, want %v", name, t.Shape(), shape))
				break
			}
		}
		return t
	}
	if te := m.tensors["token_embd.weight"]; te != nil {
		h.NVocab = te.Ne()[1]
	}
	if m.Vocab.Model != TokenizerNone && m.Vocab.Size() > h.NVocab && h.NVocab > 0 {
		errs = append(errs, fmt.Sprintf("the tokenizer has %d tokens but token_embd only %d rows", m.Vocab.Size(), h.NVocab))
	}
	m.TokEmbd = get("token_embd.weight", h.NEmbd, h.NVocab)
	m.OutNorm = get("output_norm.weight", h.NEmbd)
	if m.tensors["output.weight"] != nil {
		m.Output = get("output.weight", h.NEmbd, h.NVocab)
	} else {
		m.Output = m.TokEmbd // tied embeddings
	}
	if m.tensors["rope_freqs.weight"] != nil {
		m.RopeFreqs = get("rope_freqs.weight", h.NRot/2)
	}
	gqa := h.NEmbdGQA()
	m.Layers = make([]Layer, h.NLayer)
	for i := range m.Layers {
		L := &m.Layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		L.AttnNorm = get(p+"attn_norm.weight", h.NEmbd)
		L.Wq = get(p+"attn_q.weight", h.NEmbd, h.NEmbd)
		L.Wk = get(p+"attn_k.weight", h.NEmbd, gqa)
		L.Wv = get(p+"attn_v.weight", h.NEmbd, gqa)
		L.Wo = get(p+"attn_output.weight", h.NEmbd, h.NEmbd)
		L.FFNNorm = get(p+"ffn_norm.weight", h.NEmbd)
		L.WGate = get(p+"ffn_gate.weight", h.NEmbd, h.NFF)
		L.WUp = get(p+"ffn_up.weight", h.NEmbd, h.NFF)
		L.WDown = get(p+"ffn_down.weight", h.NFF, h.NEmbd)
	}
	if len(errs) > 0 {
		if len(errs) > 8 {
			errs = append(errs[:8], fmt.Sprintf("... and %d more", len(errs)-8))
		}
		return errors.New(strings.Join(errs, "; "))
	}
	for _, t := range []*ggml.Tensor{m.OutNorm, m.RopeFreqs} {
		if t != nil && t.Type() != ggml.TypeF32 {
			return fmt.Errorf("tensor %s is %s; norms and rope factors must be f32", t.Name(), t.Type())
		}
	}
	for _, L := range m.Layers {
		for _, t := range []*ggml.Tensor{L.AttnNorm, L.FFNNorm} {
			if t.Type() != ggml.TypeF32 {
				return fmt.Errorf("tensor %s is %s; norms must be f32", t.Name(), t.Type())
			}
		}
	}
	return nil
}

// WeightBytes is the size of the weights (0 once the model is closed).
func (m *Model) WeightBytes() int {
	done, err := m.use("WeightBytes")
	if err != nil {
		return 0
	}
	defer done()
	n := 0
	for _, t := range m.tensors {
		n += t.NBytes()
	}
	return n
}

// Tensor returns a weight of the model by its GGUF name, or nil (also once
// the model is closed).
func (m *Model) Tensor(name string) *ggml.Tensor {
	done, err := m.use("Tensor")
	if err != nil {
		return nil
	}
	defer done()
	return m.tensors[name]
}

// WeightTypes counts the tensors of the model by type (none once the
// model is closed).
func (m *Model) WeightTypes() map[ggml.Type]int {
	out := map[ggml.Type]int{}
	done, err := m.use("WeightTypes")
	if err != nil {
		return out
	}
	defer done()
	for _, t := range m.tensors {
		out[t.Type()]++
	}
	return out
}

// Tokenize converts text to token ids; addSpecial adds BOS/EOS as the
// vocabulary asks. Special tokens written in the text are not parsed.
// The tokenizer is Go memory: it works after Close too.
func (m *Model) Tokenize(text string, addSpecial bool) []int32 {
	if m == nil || m.Vocab == nil {
		return nil
	}
	return m.Vocab.Tokenize(text, addSpecial, false)
}

// Detokenize converts ids back to text.
func (m *Model) Detokenize(ids []int32) string {
	if m == nil || m.Vocab == nil {
		return ""
	}
	return m.Vocab.Detokenize(ids)
}

// Piece is the text of one token, as it is printed while generating.
func (m *Model) Piece(id int32) string {
	if m == nil || m.Vocab == nil {
		return ""
	}
	return m.Vocab.Piece(id, false)
}

// closed reports whether the weights are gone (Close, or a model whose
// context was closed under it).
func (m *Model) closed() bool { return m.weights == nil || m.weights.Closed() }

// Close releases the weights and the file mapping. Sessions of the model
// should be closed first; those still open fail with ErrClosed from then
// on. Close called while another goroutine evaluates with the model waits
// for that evaluation to end.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeDevices()
	if m.buf != nil {
		m.buf.Close()
		m.buf = nil
	}
	if m.packedBuf != nil {
		m.packedBuf.Close()
		m.packedBuf = nil
	}
	if m.packed != nil {
		m.packed.Close()
		m.packed = nil
	}
	if m.weights != nil {
		m.weights.Close()
		m.weights = nil
	}
	if m.file != nil {
		err := m.file.Close()
		m.file = nil
		return err
	}
	return nil
}
