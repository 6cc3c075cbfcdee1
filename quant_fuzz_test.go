package ggml

import (
	"log/slog"
	"math"
	"path/filepath"
	"sort"
	"testing"

	"github.com/ggml-go/ggml/internal/shareddata"
	"github.com/stretchr/testify/require"
)

// quantParityFiles lists the quant parity files, to seed the fuzz targets
// when the data is there (they have seeds of their own otherwise).
func quantParityFiles() []string {
	dir, ok := shareddata.Find("parity", "quant")
	if !ok {
		return nil
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(m)
	return m
}

type quantSeed struct {
	ty   Type
	n    int
	data []byte
}

// quantSeeds are two rows of each parity file (valid data of every decodable
// type), small quantized rows of every type, and a few invalid ids.
func quantSeeds(f *testing.F) []quantSeed {
	var out []quantSeed
	for _, p := range quantParityFiles() {
		var c quantCase
		readParityJSON(f, &c, "quant", filepath.Base(p))
		q := quantHexBytes(f, p, c.ImatrixQuantHex)
		if q == nil {
			q = quantHexBytes(f, p, c.RefQuantHex)
		}
		rs := c.NPerRow / c.BlockSize * c.TypeSize
		if len(q) >= 2*rs {
			out = append(out, quantSeed{Type(c.TypeID), 2 * c.NPerRow, q[:2*rs]})
		}
	}
	x := randRows(3, 8*256)
	for ty := Type(0); ty < TypeCount; ty++ {
		if !ty.valid() {
			continue
		}
		q, err := Quantize(ty, x, 256, onesImatrix(256))
		if err != nil {
			q = make([]byte, 8*256/ty.BlockSize()*ty.Size())
		}
		out = append(out, quantSeed{ty, len(x), q}, quantSeed{ty, ty.BlockSize(), q[:ty.Size()]})
	}
	for _, ty := range []Type{4, 5, 37, 38, TypeCount, 1 << 31} {
		out = append(out, quantSeed{ty, 32, make([]byte, 64)})
	}
	return out
}

// quietLogs keeps the rejections the fuzzers provoke out of the output.
func quietLogs(tb testing.TB) {
	initOnce()
	prev := logger.Load()
	SetLogger(slog.New(slog.DiscardHandler))
	tb.Cleanup(func() { logger.Store(prev) })
}

// FuzzDequantize decodes arbitrary bytes as any type id with any element
// count: it must return an error or the values, never crash; it must
// succeed exactly when the type has a decoder and the buffer is big enough,
// and decode block by block (a prefix decodes to the prefix).
func FuzzDequantize(f *testing.F) {
	quietLogs(f)
	for _, s := range quantSeeds(f) {
		f.Add(uint32(s.ty), s.n, s.data)
	}
	f.Add(uint32(TypeF32), math.MaxInt, []byte{})
	f.Add(uint32(TypeF32), 1<<62, []byte{1, 2, 3, 4})
	f.Add(uint32(TypeQ8_0), -32, make([]byte, 34))
	f.Fuzz(func(t *testing.T, id uint32, n int, data []byte) {
		ty := Type(id)
		out, err := Dequantize(ty, data, n)
		tr, terr := TypeTraits(ty)
		decodable := terr == nil && ty.valid() && (tr.HasToFloat || ty == TypeF32)
		fits := decodable && n >= 0 && n%tr.BlockSize == 0 && n/tr.BlockSize <= len(data)/tr.TypeSize
		if n == 0 && ty.valid() && err == nil {
			require.Empty(t, out) // nothing to decode: no decoder needed
			return
		}
		if !fits {
			require.Error(t, err, "%s n=%d, %d bytes", ty, n, len(data))
			return
		}
		require.NoError(t, err, "%s n=%d, %d bytes", ty, n, len(data))
		require.Len(t, out, n)
		if n >= tr.BlockSize {
			m := n - tr.BlockSize
			pre, err := Dequantize(ty, data, m)
			require.NoError(t, err)
			// NaNs may differ in payload: the vector fp16 conversion quiets
			// signalling NaNs, the scalar tail keeps them
			for i := range pre {
				a, b := out[i], pre[i]
				if math.Float32bits(a) != math.Float32bits(b) && !(a != a && b != b) {
					require.Failf(t, "prefix decodes differently", "%s: prefix of %d, element %d: %g (%08x) vs %g (%08x)",
						ty, m, i, b, math.Float32bits(b), a, math.Float32bits(a))
				}
			}
		}
	})
}

// FuzzValidateRowData checks arbitrary bytes as any type id: never a crash;
// sizes that are not whole blocks are rejected; and data it accepts decodes
// to finite values.
func FuzzValidateRowData(f *testing.F) {
	quietLogs(f)
	for _, s := range quantSeeds(f) {
		f.Add(uint32(s.ty), s.data)
	}
	f.Add(uint32(TypeF16), []byte{0x00, 0x7c})
	f.Add(uint32(TypeQ8_0), append([]byte{0x00, 0x7e}, make([]byte, 32)...))
	f.Fuzz(func(t *testing.T, id uint32, data []byte) {
		ty := Type(id)
		err := ValidateRowData(ty, data)
		if !ty.valid() {
			require.Error(t, err)
			return
		}
		if len(data)%ty.Size() != 0 {
			require.Error(t, err, "%s: %d bytes", ty, len(data))
			return
		}
		tr, _ := TypeTraits(ty)
		if err != nil || !tr.HasToFloat {
			return
		}
		out, err := Dequantize(ty, data, len(data)/ty.Size()*ty.BlockSize())
		require.NoError(t, err)
		for i, v := range out {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				require.Failf(t, "validated data decodes to a non-finite value", "%s: element %d = %g", ty, i, v)
			}
		}
	})
}
