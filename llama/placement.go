package llama

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// Placing a model's layers on other backends (RPC servers, as llama.cpp's
// --rpc): each such device holds the weights of a run of consecutive layers
// in a buffer of its own, and the sessions keep those layers' KV cache there
// too, so a token's activations cross to a device once and come back once.
// The local CPU keeps the token embeddings, the output norm and matrix, and
// the first layers if any stay local (llama.cpp's layers that are not
// offloaded); the devices follow in the order given.

// device is one backend other than the local CPU and the layers it holds.
type device struct {
	name       string // the RPC endpoint, or the backend's name
	endpoint   string // "" for a backend the caller gave
	be         *ggml.Backend
	owned      bool   // dialled by Load: closed by Model.Close
	free       uint64 // free memory it reported at load (0: unknown)
	first, end int    // its layers
	ctx        *ggml.Context
	buf        *ggml.Buffer
	rope       ropeFactorSet // its copies of the rope factors the file has
	probe      *ggml.Tensor  // a small weight read to see whether the part is still there
}

// DeviceUsage says where part of a model lives and how much memory it holds
// there.
type DeviceUsage struct {
	Name         string // "CPU" (this process), or the RPC server's "host:port"
	First, End   int    // its layers, [First, End) (none when First == End)
	WeightBytes  int    // the weights it holds
	KVBytes      int    // its layers' KV cache (Session.Devices only)
	ComputeBytes int    // its compute buffer (Session.Devices only)
	FreeBytes    uint64 // free memory the device reported at load (0: unknown or local)
}

// tensorLayer is the layer of a GGUF tensor name ("blk.N..."), or -1 for
// a tensor of none of the model's nLayer layers.
func tensorLayer(name string, nLayer int) int {
	if l, _, ok := layerOf(name); ok && l < nLayer {
		return l
	}
	return -1
}

// deviceOf is the device holding layer il, or nil for the local CPU.
func (m *Model) deviceOf(il int) *device {
	for _, d := range m.devs {
		if il >= d.first && il < d.end {
			return d
		}
	}
	return nil
}

// local reports whether the weight of this GGUF (or fused) name stays in
// this process.
func (m *Model) local(name string) bool { return m.deviceOfTensor(name) == nil }

// deviceOfTensor is the device holding the weight of this GGUF (or fused)
// name, or nil for the local CPU.
func (m *Model) deviceOfTensor(name string) *device {
	if m.outDev != nil && m.arch.isOutput(name) {
		return m.outDev
	}
	if l := tensorLayer(name, m.NLayer); l >= 0 {
		return m.deviceOf(l)
	}
	return nil
}

// localLayers is the number of layers the local CPU computes (the first ones).
func (m *Model) localLayers() int {
	if len(m.devs) == 0 {
		return m.NLayer
	}
	return m.devs[0].first
}

// placeLayers connects to the devices of opts and decides which layers each
// holds (m.devs); the weights are not loaded yet.
func (m *Model) placeLayers(f *gguf.File, lopts LoadOptions) error {
	if lopts.Split == nil {
		return nil
	}
	opts := *lopts.Split
	if len(opts.RPC) == 0 && len(opts.Backends) == 0 {
		if len(opts.TensorSplit) > 0 {
			return errors.New("TensorSplit without RPC servers or backends to split over")
		}
		return nil
	}
	if lopts.Mmap {
		return errors.New("with Mmap the weights stay in this process: it cannot be combined with RPC servers or other backends")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ep := range opts.RPC {
		free, _, err := ggml.RPCDeviceMemory(ctx, ep)
		if err != nil {
			return fmt.Errorf("RPC server %s: %w", ep, err)
		}
		be, err := ggml.DialRPC(ctx, ep)
		if err != nil {
			return fmt.Errorf("RPC server %s: %w", ep, err)
		}
		m.devs = append(m.devs, &device{name: ep, endpoint: ep, be: be, owned: true, free: free})
	}
	for i, be := range opts.Backends {
		if be == nil {
			return fmt.Errorf("split over backends: backend %d is nil", i)
		}
		m.devs = append(m.devs, &device{name: be.Name(), be: be})
	}
	// what a layer needs: its weights (each tensor aligned), and its KV
	// cache at the default context in f16
	layerBytes := make([]uint64, m.NLayer)
	for _, t := range f.Tensors() {
		if l := tensorLayer(t.Name, m.NLayer); l >= 0 {
			layerBytes[l] += uint64(t.Size) + 64
		}
	}
	kvLayer := uint64(2 * 2 * m.NEmbdGQA() * min(m.NCtxTrain, 2048))
	counts, err := m.layerCounts(opts.TensorSplit, layerBytes, kvLayer)
	if err != nil {
		return err
	}
	// lay them out: the local CPU's first, then each device's in order
	next := m.NLayer
	for _, n := range counts {
		next -= n
	}
	for i, d := range m.devs {
		d.first, d.end = next, next+counts[i]
		next = d.end
		if d.free == 0 {
			continue
		}
		var need uint64
		for l := d.first; l < d.end; l++ {
			need += layerBytes[l]
		}
		if need > d.free {
			return fmt.Errorf("RPC server %s has %s free; its layers %s need %s of weights (and their KV cache and compute memory more): give it a smaller --tensor-split share or start it with more --mem",
				d.name, fmtBytes(d.free), layerRange(d.first, d.end), fmtBytes(need))
		}
	}
	// the output head on the device of the last layer, if asked and not
	// tied to the token embeddings (which stay here)
	if opts.OutputRemote && len(m.devs) > 0 {
		if _, untied := f.Tensor("output.weight"); untied {
			if d := m.deviceOf(m.NLayer - 1); d != nil {
				m.outDev = d
				var need uint64
				for _, t := range f.Tensors() {
					if m.deviceOfTensor(t.Name) == d {
						need += uint64(t.Size) + 64
					}
				}
				if d.free > 0 && need > d.free {
					return fmt.Errorf("RPC server %s has %s free; its layers %s and the output need %s of weights: give it a smaller --tensor-split share or start it with more --mem",
						d.name, fmtBytes(d.free), layerRange(d.first, d.end), fmtBytes(need))
				}
			}
		}
	}
	// devices with no layers are not used
	kept := m.devs[:0]
	for _, d := range m.devs {
		if d.first < d.end || d == m.outDev {
			kept = append(kept, d)
		} else if d.owned {
			d.be.Close()
		}
	}
	m.devs = kept
	return nil
}

// layerCounts is the number of layers each device holds. With weights (one
// per device, and optionally one more for the local CPU) the layers go in
// proportion, as llama.cpp's tensor split; without, in proportion to the
// devices' free memory, each taking no more layers than fit (weights and
// KV cache at the default context, with room for a compute buffer), the
// rest staying local.
func (m *Model) layerCounts(split []float64, layerBytes []uint64, kvLayer uint64) ([]int, error) {
	nd := len(m.devs)
	w := make([]float64, nd+1) // the devices', then the local CPU's
	capped := false
	switch {
	case len(split) > 0:
		if len(split) != nd && len(split) != nd+1 {
			return nil, fmt.Errorf("TensorSplit has %d weights for %d devices (one per device, and optionally one more for the local CPU)", len(split), nd)
		}
		norm, err := splitShares(split)
		if err != nil {
			return nil, err
		}
		copy(w, norm)
	default:
		capped = true
		known := true
		for _, d := range m.devs {
			known = known && d.free > 0
		}
		for i, d := range m.devs {
			w[i] = 1
			if known {
				w[i] = float64(d.free)
			}
		}
	}
	// the cumulative split, as llama.cpp: layer il (counted over the
	// layers to place) goes to the first device whose cumulative share
	// exceeds il/n
	total := 0.0
	for _, v := range w {
		total += v
	}
	counts := make([]int, nd+1)
	// the local CPU's share is taken from the front (its layers come first)
	order := append([]int{nd}, seq(nd)...)
	cum := make([]float64, len(order))
	acc := 0.0
	for k, i := range order {
		acc += w[i] / total
		cum[k] = acc
	}
	for il := range m.NLayer {
		x := float64(il) / float64(m.NLayer)
		k := sort.Search(len(cum), func(k int) bool { return cum[k] > x })
		k = min(k, len(cum)-1)
		for w[order[k]] == 0 && k > 0 { // rounding: never a device of weight 0
			k--
		}
		counts[order[k]]++
	}
	if capped {
		per := uint64(0)
		for _, b := range layerBytes {
			per = max(per, b)
		}
		per += kvLayer
		compute := m.computeEstimate()
		for i, d := range m.devs {
			if d.free == 0 {
				continue
			}
			fit := 0
			if d.free > compute && per > 0 {
				fit = int(min((d.free-compute)/per, uint64(m.NLayer)))
			}
			if fit == 0 {
				return nil, fmt.Errorf("RPC server %s has %s free, less than one layer needs (%s of weights, %s of KV cache at %d positions, about %s of compute buffer): start it with more --mem or leave it out",
					d.name, fmtBytes(d.free), fmtBytes(per-kvLayer), fmtBytes(kvLayer), min(m.NCtxTrain, 2048), fmtBytes(compute))
			}
			counts[i] = min(counts[i], fit)
		}
	}
	return counts[:nd], nil
}

// splitShares turns TensorSplit weights into shares that sum to 1. The
// weights are proportions of any size: they are divided by the largest
// first, so that their sum cannot overflow (1e308 twice is two halves).
// NaN, infinite, negative and all-zero weights are errors.
func splitShares(split []float64) ([]float64, error) {
	top := 0.0
	for i, v := range split {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("TensorSplit weight %d is %g: weights are finite and not negative", i+1, v)
		}
		top = max(top, v)
	}
	if top == 0 {
		return nil, errors.New("TensorSplit weights are all 0: at least one must be positive")
	}
	out := make([]float64, len(split))
	sum := 0.0
	for i, v := range split {
		out[i] = v / top
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out, nil
}

// computeEstimate is about the most a device's compute buffer takes at the
// default context and batch: the activations a layer keeps alive at once
// (the allocator reuses the rest).
func (m *Model) computeEstimate() uint64 {
	ctx := min(m.NCtxTrain, 2048)
	batch := min(512, ctx)
	row := 2*m.NEmbd + m.NEmbd + 2*m.NEmbdGQA() + m.NHead*ctx + 3*m.NFF
	return uint64(4 * batch * row)
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// layerRange prints [first, end) as "3-5" or "3".
func layerRange(first, end int) string {
	switch {
	case end <= first:
		return "none"
	case end == first+1:
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d-%d", first, end-1)
}

func fmtBytes(n uint64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// loadDevices loads the weights of every device's layers.
func (m *Model) loadDevices(f *gguf.File, fuse bool) error {
	if len(m.devs) == 0 {
		return nil
	}
	// marked as weights, the local ones keep their nodes on the CPU (the
	// scheduler would otherwise run them where their neighbours run, and
	// send the weights there every time)
	for _, b := range []*ggml.Buffer{m.buf, m.packedBuf} {
		if b != nil {
			b.SetUsage(ggml.BufferUsageWeights)
		}
	}
	for _, d := range m.devs {
		if err := m.loadDevice(d, f, fuse); err != nil {
			return fmt.Errorf("RPC server %s (layers %s): %w", d.name, layerRange(d.first, d.end), err)
		}
	}
	return nil
}

// loadDevice creates the tensors of d's layers in a context of d's, fusing
// what can be (as loadWeights), allocates them on d's backend and copies
// their data from f.
func (m *Model) loadDevice(d *device, f *gguf.File, fuse bool) (err error) {
	defer recoverOp(&err)
	mine := func(name string) bool { return m.deviceOfTensor(name) == d }
	var groups []fuseGroup
	if fuse {
		for _, g := range fusable(f, m.NLayer) {
			if mine(g.name) {
				groups = append(groups, g)
			}
		}
	}
	inGroup, groupOf := map[string]bool{}, map[string]int{}
	for i, g := range groups {
		groupOf[g.parts[0]] = i
		for _, p := range g.parts {
			inGroup[p] = true
		}
	}
	info := map[string]gguf.TensorInfo{}
	var units []string
	for _, t := range f.Tensors() {
		if !mine(t.Name) {
			continue
		}
		info[t.Name] = t
		if _, first := groupOf[t.Name]; first || !inGroup[t.Name] {
			units = append(units, t.Name)
		}
	}
	sort.SliceStable(units, func(a, b int) bool {
		return m.arch.decodeRank(units[a], m.NLayer) < m.arch.decodeRank(units[b], m.NLayer)
	})
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: (2*len(info)+8)*ggml.TensorOverhead() + 4096, NoAlloc: true})
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			ctx.Close()
		}
	}()
	dims := func(s []int64) []int {
		out := make([]int, len(s))
		for i, v := range s {
			out[i] = int(v)
		}
		return out
	}
	tensors := map[string]*ggml.Tensor{}
	fused := make([]*ggml.Tensor, len(groups))
	for _, name := range units {
		i, isGroup := groupOf[name]
		if !isGroup {
			t := info[name]
			tensors[name] = ctx.NewTensor(ggml.Type(t.Type), dims(t.Shape)...).SetName(name)
			continue
		}
		fused[i] = newFused(ctx, groups[i], info)
	}
	// every layer's rope reads the factors: copies here keep the rope on
	// this device
	var rope Model // its factor fields, bound as the architecture binds the model's
	factors := map[string]*ggml.Tensor{}
	for _, s := range m.arch.tensors {
		if t, found := f.Tensor(s.name); found && !s.layer && s.role == roleFactors {
			factors[s.name] = ctx.NewTensor(ggml.Type(t.Type), dims(t.Shape)...).SetName(s.name)
			*s.bind(&rope, nil) = factors[s.name]
		}
	}
	buf, err := ctx.AllocTensors(d.be)
	if err != nil {
		return err
	}
	defer func() {
		if !ok {
			buf.Close()
		}
	}()
	buf.SetUsage(ggml.BufferUsageWeights)
	for i, g := range groups {
		fusedViews(ctx, fused[i], g, info, tensors)
	}
	for name := range info {
		data, err := f.TensorData(name)
		if err != nil {
			return err
		}
		if err := tensors[name].SetBytes(data); err != nil {
			return err
		}
	}
	for name, t := range factors {
		data, err := f.TensorData(name)
		if err != nil {
			return err
		}
		if err := t.SetBytes(data); err != nil {
			return err
		}
	}
	var probe *ggml.Tensor
	for name, t := range tensors {
		if probe == nil || t.NBytes() < probe.NBytes() || (t.NBytes() == probe.NBytes() && name < probe.Name()) {
			probe = t
		}
	}
	for name, t := range tensors {
		m.tensors[name] = t
	}
	for i, g := range groups {
		m.fused[g.name] = fused[i]
	}
	d.ctx, d.buf, d.rope, d.probe = ctx, buf, rope.ropeFactorTensors(), probe
	ok = true
	return nil
}

// bindDevices points the layers of each device at its copy of the rope
// factors.
func (m *Model) bindDevices() {
	for _, d := range m.devs {
		for il := d.first; il < d.end && il < len(m.Layers); il++ {
			m.Layers[il].rope = &d.rope
		}
	}
}

// closeDevices frees the devices' weights and the backends Load dialled.
func (m *Model) closeDevices() {
	for _, d := range m.devs {
		d.closeWeights()
		if d.owned && d.be != nil {
			d.be.Close()
			d.be = nil
		}
	}
	m.devs, m.outDev = nil, nil
}

func (d *device) closeWeights() {
	if d.buf != nil {
		d.buf.Close()
		d.buf = nil
	}
	if d.ctx != nil {
		d.ctx.Close()
		d.ctx = nil
	}
	d.probe, d.rope = nil, ropeFactorSet{}
}

// alive reports whether d still holds its weights (an RPC server that went
// away, even if back since, lost them with the connection).
func (d *device) alive() (ok bool) {
	if d.probe == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := d.probe.Float32s()
	return err == nil
}

// restoreDevices loads again, from the model's file, the weights of every
// RPC server that lost them (it went away and is back), so that a new
// session works without loading the model again anywhere else.
func (m *Model) restoreDevices() error {
	var lost []*device
	for _, d := range m.devs {
		if !d.alive() {
			lost = append(lost, d)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	for _, d := range lost {
		if d.endpoint == "" || m.path == "" {
			return fmt.Errorf("llama: the weights of layers %s on %s are gone: load the model again", layerRange(d.first, d.end), d.name)
		}
	}
	f, err := gguf.Open(m.path)
	if err != nil {
		return fmt.Errorf("llama: reloading the layers the RPC servers lost: %w", err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, d := range lost {
		be, err := ggml.DialRPC(ctx, d.endpoint)
		if err != nil {
			return fmt.Errorf("llama: RPC server %s (layers %s) lost its weights and cannot be reached again: %w; start it again, then make a new session",
				d.name, layerRange(d.first, d.end), err)
		}
		d.closeWeights()
		if d.owned {
			d.be.Close()
		}
		d.be, d.owned = be, true
		if err := m.loadDevice(d, f, m.fuse); err != nil {
			return fmt.Errorf("llama: reloading layers %s on RPC server %s: %w", layerRange(d.first, d.end), d.name, err)
		}
	}
	if err := m.bind(); err != nil {
		return err
	}
	m.bindFused()
	m.bindDevices()
	return nil
}

// Devices reports where the model's layers and weights are: the local CPU
// first, then each device in the order Load was given them.
func (m *Model) Devices() []DeviceUsage {
	out := []DeviceUsage{{Name: "CPU", First: 0, End: m.localLayers()}}
	for _, d := range m.devs {
		out = append(out, DeviceUsage{Name: d.name, First: d.first, End: d.end, FreeBytes: d.free})
	}
	index := map[*device]int{}
	for i, d := range m.devs {
		index[d] = i + 1
	}
	for name, t := range m.tensors {
		out[index[m.deviceOfTensor(name)]].WeightBytes += t.NBytes()
	}
	return out
}
