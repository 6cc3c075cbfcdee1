package llama

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// Loading the weights into a CPU backend buffer. Where a layer's Q, K and V
// matrices have one type (and so do its gate and up matrices) they are
// stored one after the other as one matrix, [q; k; v] and [gate; up]: one
// mul_mat then computes all of them, which halves the graph nodes (and
// thread barriers) of the projections, quantizes the activations once, and
// gives the threads bigger pieces of work. Each output element is the same
// dot product as with separate matrices. The original names stay as views
// of the fused matrices (Model.Tensor, Save and training see them).

// checkDeclared compares what the hyperparameters declare with the tensors
// f holds, before anything proportional to a declared count is allocated
// or looped over: a file that declares more layers (or wider ones) than its
// tensors back fails here, in time proportional to the file, with the first
// tensor it misses. The shapes of every tensor are checked again, one by
// one, once the weights are bound.
func checkDeclared(f *gguf.File, h Hparams) error {
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
		return fmt.Errorf("missing tensor blk.%d.attn_norm.weight: %s.block_count declares %d layers, the file holds tensors of %d",
			first, h.Arch, h.NLayer, len(layers))
	}
	if v, err := f.Int(h.Arch + ".vocab_size"); err == nil {
		if te, ok := f.Tensor("token_embd.weight"); ok && len(te.Shape) == 2 && te.Shape[1] != v {
			return fmt.Errorf("tensor token_embd.weight has shape %v, which does not match %s.vocab_size %d", te.Shape, h.Arch, v)
		}
	}
	// The widths every layer repeats, against the first layer's matrices
	// and the embedding (when present: bind reports missing ones).
	for _, c := range []struct {
		tensor string
		dim    int
		key    string
		want   int
	}{
		{"token_embd.weight", 0, "embedding_length", h.NEmbd},
		{"blk.0.attn_q.weight", 1, "embedding_length", h.NEmbd},
		{"blk.0.attn_k.weight", 1, "attention.head_count_kv", h.NEmbdGQA()},
		{"blk.0.ffn_gate.weight", 1, "feed_forward_length", h.NFF},
		{"blk.0.ffn_down.weight", 0, "feed_forward_length", h.NFF},
	} {
		t, ok := f.Tensor(c.tensor)
		if !ok || len(t.Shape) <= c.dim {
			continue
		}
		if t.Shape[c.dim] != int64(c.want) {
			return fmt.Errorf("tensor %s has shape %v, which does not match %s.%s (dimension %d should be %d)",
				c.tensor, t.Shape, h.Arch, c.key, c.dim, c.want)
		}
	}
	return nil
}

// layerOf splits "blk.N.field" into N and field.
func layerOf(name string) (layer int, field string, ok bool) {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return 0, "", false
	}
	num, field, _ := strings.Cut(rest, ".")
	l, err := strconv.Atoi(num)
	if err != nil || l < 0 {
		return 0, "", false
	}
	return l, field, true
}

// fuseGroup is a set of matrices stored as one.
type fuseGroup struct {
	name  string   // of the fused tensor
	parts []string // in row order
}

// fusable returns the groups of f that can be fused: every part present,
// two-dimensional, of one type and row length.
func fusable(f *gguf.File, nLayer int) []fuseGroup {
	var out []fuseGroup
	for i := range nLayer {
		p := "blk." + strconv.Itoa(i) + "."
		for _, g := range []fuseGroup{
			{p + "attn_qkv.weight", []string{p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"}},
			{p + "ffn_gate_up.weight", []string{p + "ffn_gate.weight", p + "ffn_up.weight"}},
		} {
			ok := true
			var first gguf.TensorInfo
			for j, name := range g.parts {
				info, found := f.Tensor(name)
				if !found || len(info.Shape) != 2 || (j > 0 && (info.Type != first.Type || info.Shape[0] != first.Shape[0])) {
					ok = false
					break
				}
				if j == 0 {
					first = info
				}
			}
			if _, taken := f.Tensor(g.name); ok && !taken {
				out = append(out, g)
			}
		}
	}
	return out
}

// The projection matrices (everything only mul_mat reads: the layers'
// attention and FFN matrices and the output matrix unless it is the token
// embedding) of a type the CPU repacks (ggml.CPURepacks) go into a
// CPU_REPACK buffer (ggml.CPURepackBufferType), in their own context; the
// rest into a CPU buffer.

// mulMatOnly reports whether the weight of this GGUF (or fused) name is
// only ever the first operand of mul_mat.
func mulMatOnly(name string, nLayer int) bool {
	if name == "output.weight" {
		return true
	}
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return false
	}
	num, field, _ := strings.Cut(rest, ".")
	if l, err := strconv.Atoi(num); err != nil || l < 0 || l >= nLayer {
		return false
	}
	switch field {
	case "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_qkv.weight", "attn_output.weight",
		"ffn_gate.weight", "ffn_up.weight", "ffn_gate_up.weight", "ffn_down.weight":
		return true
	}
	return false
}

// loadWeights creates the tensors of f in m.weights (a NoAlloc context; the
// repacked ones in m.packed), fusing what can be, allocates them in a CPU
// buffer (and a CPU_REPACK one) and copies their data from f.
func (m *Model) loadWeights(f *gguf.File, fuse, repack bool) (err error) {
	defer recoverOp(&err)
	infos := f.Tensors()
	var groups []fuseGroup
	if fuse {
		for _, g := range fusable(f, m.NLayer) {
			if m.local(g.name) { // the devices load theirs (placement.go)
				groups = append(groups, g)
			}
		}
	}
	inGroup := map[string]bool{}
	for _, g := range groups {
		for _, p := range g.parts {
			inGroup[p] = true
		}
	}
	info := map[string]gguf.TensorInfo{}
	for _, t := range infos {
		info[t.Name] = t
	}
	shape := func(s []int64) []int {
		out := make([]int, len(s))
		for i, d := range s {
			out[i] = int(d)
		}
		return out
	}
	ctx := m.weights
	m.tensors = map[string]*ggml.Tensor{}
	// The tensors are created, and so laid out in the buffer, in the order a
	// token's evaluation reads them (see decodeRank), fused groups in the
	// place of their first part.
	units := make([]string, 0, len(infos))
	groupOf := map[string]int{}
	for i, g := range groups {
		groupOf[g.parts[0]] = i
	}
	for _, t := range infos {
		if !m.local(t.Name) {
			continue
		}
		if _, first := groupOf[t.Name]; first || !inGroup[t.Name] {
			units = append(units, t.Name)
		}
	}
	rank := make(map[string]int, len(units))
	for _, name := range units {
		rank[name] = decodeRank(name, m.NLayer)
	}
	sort.SliceStable(units, func(a, b int) bool { return rank[units[a]] < rank[units[b]] })
	// where a tensor goes: ctx, or m.packed for a projection the CPU repacks
	ctxFor := func(name string, t ggml.Type) *ggml.Context {
		if !repack || !mulMatOnly(name, m.NLayer) || !ggml.CPURepacks(t) {
			return ctx
		}
		if m.packed == nil {
			m.packed, err = ggml.NewContext(ggml.ContextOptions{MemSize: 2 * len(infos) * ggml.TensorOverhead(), NoAlloc: true})
			if err != nil {
				panic(err)
			}
		}
		return m.packed
	}
	fused := make([]*ggml.Tensor, len(groups))
	fusedCtx := make([]*ggml.Context, len(groups))
	for _, name := range units {
		i, isGroup := groupOf[name]
		if !isGroup {
			t := info[name]
			m.tensors[name] = ctxFor(name, ggml.Type(t.Type)).NewTensor(ggml.Type(t.Type), shape(t.Shape)...).SetName(name)
			continue
		}
		g := groups[i]
		first := info[g.parts[0]]
		rows := 0
		for _, p := range g.parts {
			rows += int(info[p].Shape[1])
		}
		fusedCtx[i] = ctxFor(g.name, ggml.Type(first.Type))
		fused[i] = fusedCtx[i].NewTensor(ggml.Type(first.Type), int(first.Shape[0]), rows).SetName(g.name)
	}
	if m.packed != nil {
		if m.packedBuf, err = m.packed.AllocTensors(ggml.CPURepackBufferType()); err != nil {
			return err
		}
	}
	if m.buf, err = ctx.AllocTensors(ggml.CPUBufferType()); err != nil {
		if !errors.Is(err, ggml.ErrNothingToAllocate) {
			return err
		}
		if m.packed == nil {
			return nil // no tensors: bind names the missing ones
		}
	}
	// the parts: views of consecutive rows of their fused matrix (in its
	// context; a view of a repacked matrix is for Tensor and SetBytes, not
	// for computing: mul_mat takes the fused matrix)
	for i, g := range groups {
		nb1 := fused[i].Nb()[1]
		row := 0
		for _, p := range g.parts {
			t := info[p]
			v := fusedCtx[i].View2D(fused[i], int(t.Shape[0]), int(t.Shape[1]), nb1, row*nb1).SetName(p)
			m.tensors[p] = v
			row += int(t.Shape[1])
		}
		m.fused[g.name] = fused[i]
	}
	for _, t := range infos {
		if !m.local(t.Name) {
			continue
		}
		data, err := f.TensorData(t.Name)
		if err != nil {
			return err
		}
		if err := m.tensors[t.Name].SetBytes(data); err != nil {
			return err
		}
	}
	return nil
}

// decodeRank orders tensors as a token's evaluation reads them: the token
// embeddings, then each layer's attention norm, Q, K, V and output matrices,
// FFN norm, gate, up and down matrices, then the output norm and matrix;
// tensors it does not know come last, in file order (sort.SliceStable).
// Laid out in this order, one matrix ends where the next one read begins:
// the mat-vec kernels' prefetch past a matrix's last rows, and the hardware
// prefetchers' streams, then run on into the next matrix instead of into
// weights read much later. (In file order the fused matrices were at the end
// of the buffer, and every matrix of a token began with cold misses.)
func decodeRank(name string, nLayer int) int {
	const perLayer = 16 // > 1 + len(decodeSlots) + 1 (unknown names of a layer)
	slots := decodeSlots
	switch name {
	case "token_embd.weight", "rope_freqs.weight":
		return 0
	case "output_norm.weight":
		return (nLayer + 1) * perLayer
	case "output.weight":
		return (nLayer+1)*perLayer + 1
	}
	if rest, ok := strings.CutPrefix(name, "blk."); ok {
		num, field, _ := strings.Cut(rest, ".")
		if l, err := strconv.Atoi(num); err == nil && l >= 0 && l < nLayer {
			slot := len(slots)
			for i, s := range slots {
				if field == s+".weight" {
					slot = i
				}
			}
			return (l+1)*perLayer + 1 + slot
		}
	}
	return (nLayer + 2) * perLayer
}

// decodeSlots are a layer's tensors in the order a token reads them.
var decodeSlots = []string{"attn_norm", "attn_q", "attn_qkv", "attn_k", "attn_v", "attn_output",
	"ffn_norm", "ffn_gate", "ffn_gate_up", "ffn_up", "ffn_down"}

// bindFused points the layers at their fused matrices.
func (m *Model) bindFused() {
	for i := range m.Layers {
		p := "blk." + strconv.Itoa(i) + "."
		m.Layers[i].Wqkv = m.fused[p+"attn_qkv.weight"]
		m.Layers[i].WGateUp = m.fused[p+"ffn_gate_up.weight"]
	}
}
