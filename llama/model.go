// Package llama runs language models of the architectures it registers
// (SupportedArchitectures: llama, qwen2, ...) stored in GGUF files
// as llama.cpp writes them: it loads the weights (any tensor type with a
// mul_mat kernel), the tokenizer of the file, and evaluates tokens with a KV
// cache (for the recurrent rwkv6 and mamba, a state of fixed size) through
// the ggml graph engine.
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

// Hparams are a model's hyperparameters (the <arch>.* keys of its file,
// read as llama.cpp 1.3.3 reads them; see the architecture's list).
type Hparams struct {
	Arch      string // general.architecture ("llama", "qwen2", ...; see SupportedArchitectures)
	NVocab    int    // rows of token_embd
	NEmbd     int    // embedding_length
	NFF       int    // feed_forward_length
	NHead     int    // attention.head_count
	NHeadKV   int    // attention.head_count_kv (GQA: fewer K/V heads than Q heads)
	NLayer    int    // block_count
	NRot      int    // rope.dimension_count (rotated leading dimensions of a head)
	NCtxTrain int    // context_length
	HeadDim   int    // attention.key_length: the head size of Q and K (default NEmbd / NHead)

	RMSEps        float32 // attention.layer_norm_rms_epsilon
	RopeFreqBase  float32 // rope.freq_base
	RopeFreqScale float32 // 1 / rope scaling factor (1 with rope.scaling.type none)

	// The following are 0 or "" in values made before they existed, which
	// means what the comment after the colon says.
	HeadDimV          int     // attention.value_length: the head size of V: HeadDim
	NormEps           float32 // attention.layer_norm_epsilon (LayerNorm architectures)
	RopeType          int     // the architecture's rope, ggml.RopeTypeNorm or ggml.RopeTypeNeox
	RopeScaling       string  // rope.scaling.type: "none", "linear" or "yarn": linear
	RopeScalingFactor float32 // rope.scaling.factor (or the older rope.scale_linear): none
	NCtxOrigYarn      int     // rope.scaling.original_context_length: NCtxTrain
	RopeAttnFactor    float32 // rope.scaling.attn_factor: 1
	RopeFinetuned     bool    // rope.scaling.finetuned
	SlidingWindow     int     // attention.sliding_window: positions a sliding-window layer sees: none
	AttnSoftCap       float32 // attn_logit_softcapping: none
	FinalSoftCap      float32 // final_logit_softcapping: none

	// The recurrent architectures' keys (0 in the others).
	WKVHeadSize         int  // wkv.head_size (rwkv6)
	TimeMixExtraDim     int  // time_mix_extra_dim: the rank of rwkv6's data-dependent mixes
	TimeDecayExtraDim   int  // time_decay_extra_dim: the rank of rwkv6's data-dependent decay
	RescaleEveryNLayers int  // rescale_every_n_layers: rwkv6 halves the residual after every such layer: never
	SSMConvKernel       int  // ssm.conv_kernel (mamba)
	SSMInnerSize        int  // ssm.inner_size
	SSMStateSize        int  // ssm.state_size
	SSMTimeStepRank     int  // ssm.time_step_rank
	SSMDtBCRMS          bool // ssm.dt_b_c_rms: RMS norms on the time step, B and C (FalconMamba)

	// Encoders (bert): attention.causal (default true; bert's files say
	// false), tokenizer.ggml.token_type_count, and pooling_type, the
	// pooling Session.Embeddings applies (see Pooling).
	Causal      bool
	NVocabType  int
	PoolingType Pooling
}

// NEmbdGQA is the width of the K and V projections.
func (h Hparams) NEmbdGQA() int { return h.HeadDim * h.NHeadKV }

// NEmbdQ is the width of the Q projection (NEmbd unless attention.key_length
// says otherwise).
func (h Hparams) NEmbdQ() int { return h.HeadDim * h.NHead }

// Layer holds the weights of one transformer block. A weight the
// architecture does not have, or an optional one the file lacks, is nil.
type Layer struct {
	AttnNorm, Wq, Wk, Wv, Wo   *ggml.Tensor
	FFNNorm, WGate, WUp, WDown *ggml.Tensor
	// Wqkv and WGateUp, when not nil, hold [Wq; Wk; Wv] and [WGate; WUp]
	// as one matrix each (Wq ... WUp are then views of them).
	Wqkv, WGateUp *ggml.Tensor

	AttnNormB, FFNNormB       *ggml.Tensor // LayerNorm biases
	Bq, Bk, Bv, Bo            *ggml.Tensor // attention biases
	Bqkv                      *ggml.Tensor // [Bq; Bk; Bv] as one vector (Bq, Bk, Bv are then views of it)
	BGate, BUp, BDown         *ggml.Tensor // feed-forward biases
	AttnPostNorm, FFNPostNorm *ggml.Tensor // norms of the attention's and the FFN's outputs (gemma2)
	// the post-norms of the encoders (bert): after the attention's
	// residual and after the feed-forward's, with their biases
	AttnOutNorm, AttnOutNormB, LayerOutNorm, LayerOutNormB *ggml.Tensor
	// jina-bert-v2's optional LayerNorms of Q and K, and its second norm
	// after the attention
	QNorm, QNormB, KNorm, KNormB, AttnNorm2, AttnNorm2B *ggml.Tensor

	RWKV RWKVLayer // the weights of an rwkv6 layer (arch_rwkv6.go)
	SSM  SSMLayer  // the weights of a mamba layer (arch_mamba.go)

	rope *ropeFactorSet // the rope factors on the layer's device, if not the model's
}

// Model is a loaded model: weights, hyperparameters and tokenizer. It is
// safe for concurrent use by several Sessions (the weights are read-only).
type Model struct {
	Hparams
	Vocab *Vocab

	TokEmbd, OutNorm, Output *ggml.Tensor // Output == TokEmbd when tied
	OutNormB                 *ggml.Tensor // the output LayerNorm's bias, or nil
	RopeFreqs                *ggml.Tensor // optional per-dimension rope divisors
	// encoders (bert): token type and position embeddings; the norm of
	// the input embeddings and its bias (bert, rwkv6)
	TypeEmbd, PosEmbd, TokNorm, TokNormB *ggml.Tensor
	Cls, ClsB                            *ggml.Tensor // a reranker's head (jina-bert-v2; unused: rank pooling is refused)
	Layers                               []Layer

	// LongRoPE's rope divisors for contexts longer than the original one,
	// and for the others (phi3; optional; see ropefactors.go)
	RopeFactorsLong, RopeFactorsShort *ggml.Tensor

	arch *architecture // general.architecture's description

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

// Load reads a GGUF model of one of the SupportedArchitectures (any other
// is refused before its tensors are read, as is a file whose tensors are not
// those of its architecture): its weights, in the type the
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
	if m.arch, err = archOf(f); err != nil {
		return nil, err
	}
	if m.Hparams, err = m.arch.readHparams(f); err != nil {
		return nil, err
	}
	if err := m.arch.checkTensors(f, &m.Hparams); err != nil {
		return nil, err
	}
	if m.Vocab, err = LoadVocab(f); err != nil {
		return nil, err
	}
	size := ggml.GGUFContextSize(f, false) + len(fuseGroups)*m.NLayer*ggml.TensorOverhead() + 1<<12
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
