package llama

import (
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/link"
)

// DecodeMatrices returns the weight matrices a one-token evaluation reads,
// in the order it reads them: per layer the Q/K/V projections (one fused
// matrix, or three), the attention output, the gate and up projections (one
// or two) and the down projection; then the vocabulary projection. The
// token embedding (one row per token) and the norms are left out.
func (m *Model) DecodeMatrices() []*ggml.Tensor {
	done, err := m.use("DecodeMatrices")
	if err != nil {
		return nil
	}
	defer done()
	return m.decodeMatrices()
}

func (m *Model) decodeMatrices() []*ggml.Tensor {
	var ts []*ggml.Tensor
	for _, L := range m.Layers {
		if L.Wqkv != nil {
			ts = append(ts, L.Wqkv)
		} else {
			ts = append(ts, L.Wq, L.Wk, L.Wv)
		}
		ts = append(ts, L.Wo)
		if L.WGateUp != nil {
			ts = append(ts, L.WGateUp)
		} else {
			ts = append(ts, L.WGate, L.WUp)
		}
		ts = append(ts, L.WDown)
	}
	return append(ts, m.Output)
}

// StreamCeiling times reading the bytes of DecodeMatrices once, in order,
// with plain loads and no arithmetic, rounds times on threads threads (which
// split each matrix and wait for each other after it, as a graph's threads
// do): the time a memory-bound one-token evaluation cannot beat on this
// machine. It returns the time of each round and the bytes a round reads.
func (m *Model) StreamCeiling(threads, rounds int) ([]time.Duration, int64, error) {
	done, err := m.use("StreamCeiling")
	if err != nil {
		return nil, 0, err
	}
	defer done()
	ts := m.decodeMatrices()
	as := make([]any, len(ts))
	for i, t := range ts {
		as[i] = t
	}
	return link.StreamProbe(as, threads, rounds)
}
