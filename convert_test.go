package ggml

// Conversions between f32, fp16 and bf16 (convert.go): the reference's
// values on every SIMD path.

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func decodeHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func hexF32(t *testing.T, s string) []float32 {
	b := decodeHex(t, s)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func hexU16(t *testing.T, s string) []uint16 {
	b := decodeHex(t, s)
	out := make([]uint16, len(b)/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

// halfToFloat converts IEEE binary16 to float32 exactly, independently of the core.
func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		v := float32(mant) * float32(math.Ldexp(1, -24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

func isNaN16(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x03ff != 0 }

func isNaNBF16(h uint16) bool { return h&0x7f80 == 0x7f80 && h&0x007f != 0 }

func TestFP16BF16Parity(t *testing.T) {
	var data map[string]any
	readParityJSON(t, &data, "fp16_bf16.json")
	str := func(k string) string { s, _ := data[k].(string); require.NotEmpty(t, s, k); return s }
	in := hexF32(t, str("input_f32"))
	wantF16 := hexU16(t, str("fp32_to_fp16_row"))
	wantF16F32 := hexF32(t, str("fp16_to_fp32_row"))
	wantBF16Ref := hexU16(t, str("fp32_to_bf16_row_ref"))
	wantBF16 := hexU16(t, str("fp32_to_bf16_row"))
	wantBF16F32 := hexF32(t, str("bf16_to_fp32_row"))
	n := len(in)
	require.Equal(t, 4096, n)
	// The reference file's fp16_to_fp32_row holds only zeros (its producer
	// did not fill the buffer). An all-zero answer for non-zero halves is
	// impossible, so in that case the rows are held to the exact conversion
	// computed independently here instead.
	degenerateF16F32, nonzeroHalves := true, false
	for i := range n {
		degenerateF16F32 = degenerateF16F32 && math.Float32bits(wantF16F32[i]) == 0
		nonzeroHalves = nonzeroHalves || wantF16[i]&0x7fff != 0
	}
	degenerateF16F32 = degenerateF16F32 && nonzeroHalves
	if degenerateF16F32 {
		t.Log("fp16_to_fp32_row in the parity file is all zeros: checking against the exact conversion instead")
	}

	forEachLevel(t, func(t *testing.T) {
		// odd lengths exercise the scalar tails of the SIMD loops
		for _, m := range []int{n, n - 3, 7, 1} {
			h := make([]uint16, m)
			FP32ToFP16Row(h, in[:m])
			for i := range m {
				if isNaN16(wantF16[i]) {
					require.True(t, isNaN16(h[i]), "fp32_to_fp16 %d", i)
				} else {
					require.Equal(t, wantF16[i], h[i], "fp32_to_fp16 %d (input %08x)", i, math.Float32bits(in[i]))
				}
				require.Equal(t, wantF16[i] == h[i] || isNaN16(h[i]), true)
			}
			f := make([]float32, m)
			FP16ToFP32Row(f, wantF16[:m])
			for i := range m {
				w := wantF16F32[i]
				if degenerateF16F32 {
					w = halfToFloat(wantF16[i])
				}
				if math.IsNaN(float64(w)) {
					require.True(t, math.IsNaN(float64(f[i])), "fp16_to_fp32 %d", i)
				} else {
					require.Equal(t, math.Float32bits(w), math.Float32bits(f[i]), "fp16_to_fp32 %d", i)
				}
			}
			b := make([]uint16, m)
			FP32ToBF16RowRef(b, in[:m])
			for i := range m {
				if isNaNBF16(wantBF16Ref[i]) {
					require.True(t, isNaNBF16(b[i]), "bf16_ref %d", i)
				} else {
					require.Equal(t, wantBF16Ref[i], b[i], "fp32_to_bf16_row_ref %d", i)
				}
			}
			FP32ToBF16Row(b, in[:m])
			for i := range m {
				switch {
				case isNaNBF16(wantBF16[i]):
					require.True(t, isNaNBF16(b[i]), "bf16 %d", i)
				case wantBF16[i] != wantBF16Ref[i]:
					// the reference's AVX512-BF16 path flushed a subnormal:
					// we give the _ref answer on every path
					require.Equal(t, wantBF16Ref[i], b[i], "fp32_to_bf16_row %d", i)
				default:
					require.Equal(t, wantBF16[i], b[i], "fp32_to_bf16_row %d", i)
				}
			}
			g := make([]float32, m)
			BF16ToFP32Row(g, wantBF16Ref[:m])
			for i := range m {
				w := wantBF16F32[i]
				if math.IsNaN(float64(w)) {
					require.True(t, math.IsNaN(float64(g[i])))
				} else {
					require.Equal(t, math.Float32bits(w), math.Float32bits(g[i]), "bf16_to_fp32 %d", i)
				}
			}
		}
	})
	// scalar helpers agree with the rows
	for i := range 64 {
		require.True(t, FP32ToFP16(in[i]) == wantF16[i] || isNaN16(wantF16[i]))
	}
}
