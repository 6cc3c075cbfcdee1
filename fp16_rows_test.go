package ggml

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Rows of fp16 output from the streaming threshold up (by default 32 MiB at
// the AVX2 level and never at AVX-512; 4 MB at every level here) take the
// streaming-store path of the converter
// (csrc/base/ggml-fp16.c). The parity inputs (NaNs, infinities,
// subnormals, ties) are tiled over such a row and every element must match the
// reference bits, at every level and for destinations that are not 32-byte
// aligned (the path converts a head up to the boundary).
func TestFP16RowStreaming(t *testing.T) {
	if testing.Short() {
		t.Skip("large rows")
	}
	var data map[string]any
	readParityJSON(t, &data, "fp16_bf16.json")
	str := func(k string) string { s, _ := data[k].(string); require.NotEmpty(t, s, k); return s }
	in := hexF32(t, str("input_f32"))
	want := hexU16(t, str("fp32_to_fp16_row"))
	defer setStreamMinBytes(setStreamMinBytes(4 << 20)) // the rows below are a little over 4 MB
	const n = 2<<20 + 37
	src := make([]float32, n+8)
	for i := range src {
		src[i] = in[i%len(in)]
	}
	buf := make([]uint16, n+32)
	forEachLevel(t, func(t *testing.T) {
		for _, off := range []int{0, 1, 5, 15} {
			h := buf[off : off+n]
			clear(buf)
			FP32ToFP16Row(h, src[:n])
			for i := range n {
				w := want[i%len(in)]
				if isNaN16(w) {
					if !isNaN16(h[i]) {
						t.Fatalf("offset %d: element %d: got %04x, want a NaN", off, i, h[i])
					}
				} else if h[i] != w {
					t.Fatalf("offset %d: element %d (input %08x): got %04x, want %04x", off, i, math.Float32bits(src[i]), h[i], w)
				}
			}
			// nothing written past the row
			for i := off + n; i < len(buf); i++ {
				require.Zero(t, buf[i])
			}
		}
	})
}
