package ggml

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Conversions to f32 from the streaming threshold up (by default 32 MiB of
// output at the AVX2 level and never at AVX-512; 4 MB at every level here) are written with streaming stores through a
// chunk buffer (csrc/base/to-float-stream.c). For every type with
// a conversion, one large row must give the same bits as the same data
// converted in pieces small enough for the ordinary path: at every level, for
// destinations at every kind of offset from a cache line, for lengths that are
// not a multiple of the chunk, and without writing outside the row.
func TestToFloatStreaming(t *testing.T) {
	if testing.Short() {
		t.Skip("large rows")
	}
	defer setStreamMinBytes(setStreamMinBytes(4 << 20)) // the rows below are a little over 4 MB

	const sentinel = 0x7fc0dead // a NaN no conversion writes here
	const piece = 1 << 16       // elements per call of the ordinary path (256 KB out)
	rng := rand.New(rand.NewPCG(12, 34))
	type row struct {
		typ  Type
		tr   Traits
		n    int
		data []byte
	}
	var rows []row
	for typ := Type(0); typ < TypeCount; typ++ {
		tr, err := TypeTraits(typ)
		require.NoError(t, err)
		if !tr.HasToFloat {
			continue
		}
		// a little over 4 MB of floats, whole blocks, not whole 2048-float chunks
		n := (1<<20 + 300 + tr.BlockSize - 1) / tr.BlockSize * tr.BlockSize
		// random bytes: every bit pattern is a valid block (NaN and infinite
		// scales included), and both paths must agree on all of them
		data := make([]byte, n/tr.BlockSize*tr.TypeSize)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		rows = append(rows, row{typ, tr, n, data})
	}
	require.GreaterOrEqual(t, len(rows), 23) // f16, bf16 and every quantized type but q8_1/q8_K/repacked
	const maxN = 1<<20 + 512
	want := make([]float32, maxN)
	buf := make([]float32, maxN+32)
	forEachLevel(t, func(t *testing.T) {
		for _, r := range rows {
			for i := 0; i < r.n; i += piece {
				e := min(i+piece, r.n)
				require.NoError(t, DequantizeInto(want[i:e], r.typ, r.data[i/r.tr.BlockSize*r.tr.TypeSize:]))
			}
			for _, off := range []int{0, 1, 5, 15, 16} {
				for i := range buf {
					buf[i] = math.Float32frombits(sentinel)
				}
				require.NoError(t, DequantizeInto(buf[off:off+r.n], r.typ, r.data))
				for i := range r.n {
					if g, w := math.Float32bits(buf[off+i]), math.Float32bits(want[i]); g != w {
						t.Fatalf("%s, offset %d: element %d of %d: got %08x, want %08x", r.typ, off, i, r.n, g, w)
					}
				}
				for i := range buf {
					if i < off || i >= off+r.n {
						require.Equal(t, uint32(sentinel), math.Float32bits(buf[i]), "%s, offset %d: wrote element %d outside the row", r.typ, off, i)
					}
				}
			}
		}
	})
}
