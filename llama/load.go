package llama

import (
	"errors"
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

// fuseSpec is a set of a layer's weights stored as one tensor, when the
// file has all of them with one type (and, for matrices, one row length):
// matrices one after the other as the rows of one matrix, vectors (biases)
// as one vector.
type fuseSpec struct {
	name  string   // of the fused tensor, without "blk.N."
	parts []string // in row order
	role  tensorRole
}

// fuseGroups are the fusions the loader makes (Layer.Wqkv, Bqkv, WGateUp).
var fuseGroups = []fuseSpec{
	{"attn_qkv.weight", []string{"attn_q.weight", "attn_k.weight", "attn_v.weight"}, roleMatrix},
	{"attn_qkv.bias", []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"}, roleBias},
	{"ffn_gate_up.weight", []string{"ffn_gate.weight", "ffn_up.weight"}, roleMatrix},
}

// fuseGroup is one layer's instance of a fuseSpec.
type fuseGroup struct {
	name  string   // of the fused tensor
	parts []string // in row order
}

// fusable returns the groups of f that can be fused: every part present,
// of one type and rank (1 or 2), matrices of one row length, and the
// fused name not a tensor of the file.
func fusable(f *gguf.File, nLayer int) []fuseGroup {
	var out []fuseGroup
	for i := range nLayer {
		p := "blk." + strconv.Itoa(i) + "."
		for _, s := range fuseGroups {
			g := fuseGroup{name: p + s.name}
			ok := true
			var first gguf.TensorInfo
			for j, part := range s.parts {
				g.parts = append(g.parts, p+part)
				info, found := f.Tensor(p + part)
				if !found || len(info.Shape) < 1 || len(info.Shape) > 2 ||
					(j > 0 && (info.Type != first.Type || len(info.Shape) != len(first.Shape) ||
						(len(info.Shape) == 2 && info.Shape[0] != first.Shape[0]))) {
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

// newFused creates in ctx the tensor of the fused group g.
func newFused(ctx *ggml.Context, g fuseGroup, info map[string]gguf.TensorInfo) *ggml.Tensor {
	first := info[g.parts[0]]
	n := 0
	for _, p := range g.parts {
		n += int(info[p].Shape[len(info[p].Shape)-1])
	}
	if len(first.Shape) == 1 {
		return ctx.NewTensor1D(ggml.Type(first.Type), n).SetName(g.name)
	}
	return ctx.NewTensor(ggml.Type(first.Type), int(first.Shape[0]), n).SetName(g.name)
}

// fusedViews sets tensors[part] for every part of g: views of consecutive
// rows (elements of a vector) of the fused tensor.
func fusedViews(ctx *ggml.Context, fused *ggml.Tensor, g fuseGroup, info map[string]gguf.TensorInfo, tensors map[string]*ggml.Tensor) {
	if fused.NDims() == 1 {
		es, off := fused.ElementSize(), 0
		for _, p := range g.parts {
			n := int(info[p].Shape[0])
			tensors[p] = ctx.View1D(fused, n, off*es).SetName(p)
			off += n
		}
		return
	}
	nb1, row := fused.Nb()[1], 0
	for _, p := range g.parts {
		t := info[p]
		tensors[p] = ctx.View2D(fused, int(t.Shape[0]), int(t.Shape[1]), nb1, row*nb1).SetName(p)
		row += int(t.Shape[1])
	}
}

// The projection matrices (everything only mul_mat reads: the layers'
// attention and FFN matrices and the output matrix unless it is the token
// embedding; see tensorRole) of a type the CPU repacks (ggml.CPURepacks) go
// into a CPU_REPACK buffer (ggml.CPURepackBufferType), in their own
// context; the rest into a CPU buffer.

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
		rank[name] = m.arch.decodeRank(name, m.NLayer)
	}
	sort.SliceStable(units, func(a, b int) bool { return rank[units[a]] < rank[units[b]] })
	// where a tensor goes: ctx, or m.packed for a projection the CPU repacks
	ctxFor := func(name string, t ggml.Type) *ggml.Context {
		if !repack || !m.arch.mulMatOnly(name, m.NLayer) || !ggml.CPURepacks(t) {
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
		fusedCtx[i] = ctxFor(g.name, ggml.Type(info[g.parts[0]].Type))
		fused[i] = newFused(fusedCtx[i], g, info)
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
		fusedViews(fusedCtx[i], fused[i], g, info, m.tensors)
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

// bindFused points the layers at their fused matrices.
func (m *Model) bindFused() {
	for i := range m.Layers {
		p := "blk." + strconv.Itoa(i) + "."
		L := &m.Layers[i]
		if w := m.fused[p+"attn_qkv.weight"]; w != nil {
			L.Wqkv = w
		}
		L.Bqkv = m.fused[p+"attn_qkv.bias"]
		if w := m.fused[p+"ffn_gate_up.weight"]; w != nil {
			L.WGateUp = w
		}
	}
}
