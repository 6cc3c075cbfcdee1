package ggml

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/internal/shareddata"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------- parity data

// quantCase is one file of <parity>/quant: 12 rows quantized by the reference.
type quantCase struct {
	TypeName          string `json:"type"`
	TypeID            uint32 `json:"type_id"`
	BlockSize         int    `json:"block_size"`
	TypeSize          int    `json:"type_size"`
	Rows              int    `json:"rows"`
	NPerRow           int    `json:"n_per_row"`
	RequiresImatrix   bool   `json:"requires_imatrix"`
	InputHex          string `json:"input_f32"`
	RefQuantHex       string `json:"ref_quant"`
	RefDequantHex     string `json:"ref_dequant_f32"`
	ImatrixHex        string `json:"imatrix_f32"`
	ImatrixQuantHex   string `json:"imatrix_quant"`
	ImatrixDequantHex string `json:"imatrix_dequant_f32"`

	file       string
	typ        Type
	input      []float32
	refQuant   []byte    // nil when the type has no from_float_ref
	refDequant []float32 // nil with refQuant
	imatrix    []float32
	imQuant    []byte
	imDequant  []float32
}

func (c *quantCase) n() int { return c.Rows * c.NPerRow }

func quantHexBytes(tb testing.TB, what, s string) []byte {
	tb.Helper()
	if s == "" {
		return nil
	}
	b, err := hex.DecodeString(s)
	require.NoError(tb, err, what)
	return b
}

func bytesToF32(b []byte) []float32 {
	if b == nil {
		return nil
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// loadQuantCases reads every file of <parity>/quant, whatever their number:
// the same tests are run against other inputs of the same form.
func loadQuantCases(tb testing.TB) []*quantCase {
	tb.Helper()
	dir := shareddata.Dir(tb, "parity", "quant")
	entries, err := os.ReadDir(dir)
	require.NoError(tb, err)
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	require.NotEmpty(tb, names, "no quant/*.json files in %s", dir)
	cases := make([]*quantCase, 0, len(names))
	for _, name := range names {
		c := &quantCase{file: name}
		readParityJSON(tb, c, "quant", name)
		c.typ = Type(c.TypeID)
		tr, err := TypeTraits(c.typ)
		require.NoError(tb, err, name)
		require.Equal(tb, c.TypeName, c.typ.String(), "%s: type name", name)
		require.Equal(tb, c.BlockSize, tr.BlockSize, "%s: block size", name)
		require.Equal(tb, c.TypeSize, tr.TypeSize, "%s: type size", name)
		require.Equal(tb, c.RequiresImatrix, tr.RequiresImatrix, "%s: requires_imatrix", name)
		require.Positive(tb, c.Rows, name)
		require.Positive(tb, c.NPerRow, name)
		rowSize, err := RowSize(c.typ, c.NPerRow)
		require.NoError(tb, err, name)

		c.input = bytesToF32(quantHexBytes(tb, name+" input_f32", c.InputHex))
		c.refQuant = quantHexBytes(tb, name+" ref_quant", c.RefQuantHex)
		c.refDequant = bytesToF32(quantHexBytes(tb, name+" ref_dequant_f32", c.RefDequantHex))
		c.imatrix = bytesToF32(quantHexBytes(tb, name+" imatrix_f32", c.ImatrixHex))
		c.imQuant = quantHexBytes(tb, name+" imatrix_quant", c.ImatrixQuantHex)
		c.imDequant = bytesToF32(quantHexBytes(tb, name+" imatrix_dequant_f32", c.ImatrixDequantHex))
		c.InputHex, c.RefQuantHex, c.RefDequantHex = "", "", ""
		c.ImatrixHex, c.ImatrixQuantHex, c.ImatrixDequantHex = "", "", ""

		require.Len(tb, c.input, c.n(), "%s: input_f32", name)
		require.Equal(tb, c.refQuant != nil, c.refDequant != nil, "%s: ref_quant and ref_dequant_f32 come together", name)
		// ref_quant exists exactly for the types with a reference row quantizer
		require.Equal(tb, tr.HasFromFloatRef, c.refQuant != nil, "%s: ref_quant present vs has_from_float_ref", name)
		if c.refQuant != nil {
			require.Len(tb, c.refQuant, c.Rows*rowSize, "%s: ref_quant", name)
			require.Len(tb, c.refDequant, c.n(), "%s: ref_dequant_f32", name)
		}
		if c.imQuant != nil {
			require.Len(tb, c.imatrix, c.NPerRow, "%s: imatrix_f32", name)
			require.Len(tb, c.imQuant, c.Rows*rowSize, "%s: imatrix_quant", name)
			require.Len(tb, c.imDequant, c.n(), "%s: imatrix_dequant_f32", name)
		}
		require.True(tb, c.refQuant != nil || c.imQuant != nil, "%s: nothing to check", name)
		cases = append(cases, c)
	}
	return cases
}

// ---------------------------------------------------------------- comparison helpers

// requireSameF32 fails unless got and want have the same bits everywhere.
func requireSameF32(t testing.TB, want, got []float32, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), fmt.Sprintf(msg, args...))
	diff, first := 0, -1
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			if first < 0 {
				first = i
			}
			diff++
		}
	}
	if diff > 0 {
		require.Failf(t, "values differ", "%s: %d of %d differ; first at %d: got %g (%08x), want %g (%08x)",
			fmt.Sprintf(msg, args...), diff, len(want), first,
			got[first], math.Float32bits(got[first]), want[first], math.Float32bits(want[first]))
	}
}

// diffBlocks counts the blocks of blockBytes bytes that differ.
func diffBlocks(a, b []byte, blockBytes int) (n, first int) {
	first = -1
	for i := 0; i+blockBytes <= len(a) && i+blockBytes <= len(b); i += blockBytes {
		if string(a[i:i+blockBytes]) != string(b[i:i+blockBytes]) {
			if first < 0 {
				first = i / blockBytes
			}
			n++
		}
	}
	return n, first
}

func rmse(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return math.Sqrt(s / float64(len(a)))
}

// ---------------------------------------------------------------- parity: dequantization

// TestQuantParityDequantize decodes the reference's bytes on every SIMD
// level: the decoded values are the file format and must match bit for bit.
func TestQuantParityDequantize(t *testing.T) {
	cases := loadQuantCases(t)
	forEachLevel(t, func(t *testing.T) {
		for _, c := range cases {
			t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
				for _, p := range []struct {
					what string
					q    []byte
					want []float32
				}{{"ref_quant", c.refQuant, c.refDequant}, {"imatrix_quant", c.imQuant, c.imDequant}} {
					if p.q == nil {
						continue
					}
					nb := c.n() / c.BlockSize
					// The whole tensor, then prefixes of a few blocks: they
					// end inside the vector loops and exercise their tails.
					for _, blocks := range []int{nb, 1, 2, 3, 5, 7, 9, nb - 1} {
						if blocks < 1 || blocks > nb {
							continue
						}
						m := blocks * c.BlockSize
						got, err := Dequantize(c.typ, p.q, m)
						require.NoError(t, err)
						requireSameF32(t, p.want[:m], got, "%s %s, %d blocks", c.file, p.what, blocks)
					}
					// A source that is not aligned (as a tensor inside a file may be).
					buf := make([]byte, len(p.q)+1)
					copy(buf[1:], p.q)
					got, err := Dequantize(c.typ, buf[1:], c.n())
					require.NoError(t, err)
					requireSameF32(t, p.want, got, "%s %s, unaligned source", c.file, p.what)
				}
			})
		}
	})
}

// ---------------------------------------------------------------- parity: quantization

// TestQuantParityQuantize quantizes the reference's input on every SIMD level
// and requires the reference's bytes; it reports per type how many blocks
// differ and the error of both against the input.
func TestQuantParityQuantize(t *testing.T) {
	cases := loadQuantCases(t)
	best := CurrentCPULevel()
	forEachLevel(t, func(t *testing.T) {
		verbose := CurrentCPULevel() == best
		for _, c := range cases {
			t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
				rowSize, err := RowSize(c.typ, c.NPerRow)
				require.NoError(t, err)
				check := func(what string, got, want []byte, wantDeq []float32) {
					t.Helper()
					require.Len(t, got, len(want), what)
					nd, first := diffBlocks(got, want, c.TypeSize)
					deq, err := Dequantize(c.typ, got, c.n())
					require.NoError(t, err)
					if nd > 0 || verbose {
						t.Logf("%-8s %-13s %d/%d blocks differ; RMSE vs input: ours %.6g, reference %.6g",
							c.TypeName, what, nd, len(want)/c.TypeSize, rmse(deq, c.input), rmse(wantDeq, c.input))
					}
					if nd > 0 {
						require.Failf(t, "quantization differs", "%s %s: %d of %d blocks differ, first is block %d (row %d)",
							c.file, what, nd, len(want)/c.TypeSize, first, first*c.TypeSize/rowSize)
					}
				}
				if c.imQuant != nil {
					got, err := Quantize(c.typ, c.input, c.NPerRow, c.imatrix)
					require.NoError(t, err)
					check("imatrix_quant", got, c.imQuant, c.imDequant)
				}
				if c.refQuant != nil {
					got, err := QuantizeRef(c.typ, c.input, c.NPerRow)
					require.NoError(t, err)
					check("ref_quant", got, c.refQuant, c.refDequant)
				}
			})
		}
	})
}

// ---------------------------------------------------------------- round trips

// quantTypes lists the valid types that Quantize accepts and Dequantize can
// decode (the interleaved types have no decoder and are tested apart).
func quantTypes(t testing.TB) []Type {
	var out []Type
	for ty := Type(0); ty < TypeCount; ty++ {
		tr, err := TypeTraits(ty)
		require.NoError(t, err)
		if ty.valid() && (tr.HasToFloat || ty == TypeF32) {
			out = append(out, ty)
		}
	}
	require.Len(t, out, 24) // f32, f16, bf16 and the 21 quantized types with a decoder
	return out
}

// interleavedTypes are the repacked q4_0 / iq4_nl layouts: quantized several
// rows at a time, with no to_float.
var interleavedTypes = []Type{TypeQ4_0_4_4, TypeQ4_0_4_8, TypeQ4_0_8_8, TypeIQ4_NL_4_4}

// totalErrorBound is the bound on sqrt(sum of squared errors)/n of the
// round trip of the test signal. The figures are those of the reference's
// test-quantize-fns for the types it checks; the ones it skips (iq2_xxs,
// iq2_xs, iq1_s, iq1_m) get bounds of ours, about 25% above what they give.
func totalErrorBound(ty Type) float64 {
	switch ty {
	case TypeTQ1_0, TypeTQ2_0:
		return 0.01
	case TypeQ2_K, TypeIQ2_S:
		return 0.0075
	case TypeQ3_K, TypeIQ3_S:
		return 0.004
	case TypeIQ3_XXS:
		return 0.005
	case TypeIQ2_XXS, TypeIQ2_XS:
		return 0.009
	case TypeIQ1_S, TypeIQ1_M:
		return 0.015
	}
	return 0.002
}

// quantBound limits the round-trip error of a type, row by row, as fractions
// of the row's largest magnitude: maxAbs for every element (about one step
// of the format's grid; the i-quants' lattices can miss an element by nearly
// its magnitude), rmse for the row as a whole. maxAbs holds for unweighted
// quantization only: an importance matrix trades the error of unimportant
// elements away. The K- and i-quant figures are ours (about 30% above what
// gaussian, cosine and constant rows give); the others follow from the format.
type quantBound struct{ maxAbs, rmse float64 }

var quantBounds = map[Type]quantBound{
	TypeF32:  {0, 0},
	TypeF16:  {1.0 / 2048, 1.0 / 2048},
	TypeBF16: {1.0 / 256, 1.0 / 256},
	TypeQ8_0: {0.5/127 + 1.0/2048, 0.003}, // half a step, plus the rounding of the fp16 scale
	TypeQ6_K: {0.04, 0.011},
	TypeQ5_0: {0.07, 0.024}, TypeQ5_1: {0.07, 0.024}, TypeQ5_K: {0.07, 0.022},
	TypeQ4_0: {0.14, 0.045}, TypeQ4_1: {0.14, 0.045}, TypeQ4_K: {0.14, 0.04},
	TypeIQ4_NL: {0.14, 0.05}, TypeIQ4_XS: {0.14, 0.05},
	TypeQ3_K: {0.3, 0.1}, TypeQ2_K: {0.5, 0.19},
	TypeIQ3_XXS: {0.8, 0.22}, TypeIQ3_S: {0.8, 0.21},
	TypeIQ2_XXS: {0.9, 0.43}, TypeIQ2_XS: {0.9, 0.26}, TypeIQ2_S: {0.9, 0.21},
	TypeTQ1_0: {0.5 + 1.0/2048, 0.37}, TypeTQ2_0: {0.5 + 1.0/2048, 0.37}, // ternary: half the magnitude at worst
	TypeIQ1_S: {1.25, 0.39}, TypeIQ1_M: {1.25, 0.48},
}

func onesImatrix(n int) []float32 {
	im := make([]float32, n)
	for i := range im {
		im[i] = 1
	}
	return im
}

// imatrixFor is nil unless the type cannot be quantized without one.
func imatrixFor(ty Type, n int) []float32 {
	if RequiresImatrix(ty) {
		return onesImatrix(n)
	}
	return nil
}

func randRows(seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func absMax(x []float32) float64 {
	var m float64
	for _, v := range x {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

func roundTrip(t *testing.T, ty Type, x []float32, nPerRow int, im []float32) []float32 {
	t.Helper()
	q, err := Quantize(ty, x, nPerRow, im)
	require.NoError(t, err)
	rs, err := RowSize(ty, nPerRow)
	require.NoError(t, err)
	require.Len(t, q, len(x)/nPerRow*rs)
	require.NoError(t, ValidateRowData(ty, q), "Quantize output must validate")
	y, err := Dequantize(ty, q, len(x))
	require.NoError(t, err)
	return y
}

// requireErrors checks a round trip against the type's bounds, row by row;
// weighted says an importance matrix other than uniform was used.
func requireErrors(t *testing.T, ty Type, x, y []float32, nPerRow int, weighted bool, what string) {
	t.Helper()
	bound, ok := quantBounds[ty]
	require.True(t, ok, "no error bound for %s", ty)
	for r := 0; r < len(x)/nPerRow; r++ {
		xr, yr := x[r*nPerRow:(r+1)*nPerRow], y[r*nPerRow:(r+1)*nPerRow]
		amax := absMax(xr)
		for i := range xr {
			require.False(t, math.IsNaN(float64(yr[i])) || math.IsInf(float64(yr[i]), 0), "%s %s: row %d [%d] = %g", ty, what, r, i, yr[i])
			if weighted {
				continue
			}
			e := math.Abs(float64(yr[i]) - float64(xr[i]))
			require.LessOrEqual(t, e, bound.maxAbs*amax*(1+1e-6), "%s %s: row %d [%d]: %g for %g (bound %.3g of %g)", ty, what, r, i, yr[i], xr[i], bound.maxAbs, amax)
		}
		require.LessOrEqual(t, rmse(xr, yr), bound.rmse*amax*(1+1e-6), "%s %s: row %d RMSE (bound %.3g of %g)", ty, what, r, bound.rmse, amax)
	}
}

// TestQuantRoundTrip mirrors the reference's test-quantize-fns: the signal
// 0.1 + 2 cos(i + offset) quantized and decoded must stay within the total
// error bound of the type, and each element within its family's bound.
func TestQuantRoundTrip(t *testing.T) {
	const n = 32 * 128
	for _, ty := range quantTypes(t) {
		t.Run(ty.String(), func(t *testing.T) {
			for _, offset := range []float64{0, 1} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(0.1 + 2*math.Cos(float64(i)+offset))
				}
				y := roundTrip(t, ty, x, n, imatrixFor(ty, n))
				var s float64
				for i := range x {
					d := float64(y[i]) - float64(x[i])
					s += d * d
				}
				total := math.Sqrt(s) / n
				require.LessOrEqual(t, total, totalErrorBound(ty), "%s: total quantization error", ty)
				requireErrors(t, ty, x, y, n, false, "cosine")
				if offset == 0 {
					t.Logf("%-8s total error %.6f (bound %.4f), RMSE %.5f", ty, total, totalErrorBound(ty), rmse(x, y))
				}
			}
			// Gaussian rows, several at once, with and without an imatrix.
			x := randRows(uint64(ty)+1, 4*512)
			requireErrors(t, ty, x, roundTrip(t, ty, x, 512, imatrixFor(ty, 512)), 512, false, "gaussian")
			im := make([]float32, 512)
			for i := range im {
				im[i] = 0.1 + float32(i%17)
			}
			requireErrors(t, ty, x, roundTrip(t, ty, x, 512, im), 512, true, "gaussian+imatrix")
		})
	}
}

// TestQuantZeroAndConstantRows: zeros decode to zeros exactly; constant rows
// stay within the family bound and never produce NaN or infinities.
func TestQuantZeroAndConstantRows(t *testing.T) {
	for _, ty := range quantTypes(t) {
		t.Run(ty.String(), func(t *testing.T) {
			nPerRow := 2 * ty.BlockSize()
			if nPerRow < 64 {
				nPerRow = 64
			}
			for _, im := range [][]float32{imatrixFor(ty, nPerRow), onesImatrix(nPerRow)} {
				zeros := make([]float32, 3*nPerRow)
				y := roundTrip(t, ty, zeros, nPerRow, im)
				for i, v := range y {
					require.Zero(t, v, "%s: zero input, element %d", ty, i)
				}
				// magnitudes whose block scales are normal fp16 numbers
				for _, c := range []float32{0.5, -3, 0.01, 7, -1e4} {
					x := make([]float32, 2*nPerRow)
					for i := range x {
						x[i] = c
					}
					requireErrors(t, ty, x, roundTrip(t, ty, x, nPerRow, im), nPerRow, false, fmt.Sprintf("constant %g", c))
				}
			}
		})
	}
}

// TestQuantRowsIndependent: any number of rows (odd ones too, and rows of a
// single block) quantizes to the concatenation of the rows quantized alone.
func TestQuantRowsIndependent(t *testing.T) {
	for _, ty := range quantTypes(t) {
		t.Run(ty.String(), func(t *testing.T) {
			for _, nPerRow := range []int{ty.BlockSize(), 2 * ty.BlockSize(), 3 * ty.BlockSize()} {
				for _, rows := range []int{1, 3, 5, 7} {
					x := randRows(uint64(rows*1000+nPerRow), rows*nPerRow)
					for _, im := range [][]float32{imatrixFor(ty, nPerRow), onesImatrix(nPerRow)} {
						all, err := Quantize(ty, x, nPerRow, im)
						require.NoError(t, err)
						var cat []byte
						for r := 0; r < rows; r++ {
							one, err := Quantize(ty, x[r*nPerRow:(r+1)*nPerRow], nPerRow, im)
							require.NoError(t, err)
							cat = append(cat, one...)
						}
						require.Equal(t, cat, all, "%s: %d rows of %d", ty, rows, nPerRow)
						y, err := Dequantize(ty, all, len(x))
						require.NoError(t, err)
						requireErrors(t, ty, x, y, nPerRow, false, fmt.Sprintf("%d rows of %d", rows, nPerRow))
					}
				}
			}
			// No rows at all.
			q, err := Quantize(ty, []float32{}, ty.BlockSize(), imatrixFor(ty, ty.BlockSize()))
			require.NoError(t, err)
			require.Empty(t, q)
		})
	}
}

// TestQuantRefMatchesChunk: without an imatrix, the reference's chunk
// quantizer uses from_float_ref's algorithm for every type but iq4_nl, whose
// row quantizer makes no search over scales (ref_quant in the parity data
// shows it); QuantizeRef and Quantize must agree, and for iq4_nl the search
// must not do worse.
func TestQuantRefMatchesChunk(t *testing.T) {
	for _, ty := range quantTypes(t) {
		tr, _ := TypeTraits(ty)
		if !tr.HasFromFloatRef || tr.RequiresImatrix {
			continue
		}
		t.Run(ty.String(), func(t *testing.T) {
			x := randRows(uint64(ty)+77, 3*512)
			a, err := Quantize(ty, x, 512, nil)
			require.NoError(t, err)
			b, err := QuantizeRef(ty, x, 512)
			require.NoError(t, err)
			nd, first := diffBlocks(a, b, ty.Size())
			if ty != TypeIQ4_NL {
				require.Zero(t, nd, "%s: %d blocks differ between Quantize and QuantizeRef, first %d", ty, nd, first)
				return
			}
			ya, err := Dequantize(ty, a, len(x))
			require.NoError(t, err)
			yb, err := Dequantize(ty, b, len(x))
			require.NoError(t, err)
			t.Logf("%s: %d/%d blocks differ; RMSE Quantize %.5f, QuantizeRef %.5f", ty, nd, len(a)/ty.Size(), rmse(x, ya), rmse(x, yb))
			require.LessOrEqual(t, rmse(x, ya), rmse(x, yb))
		})
	}
}

// TestQuantInterleaved: the repacked types quantize groups of 4 or 8 rows;
// each group block carries the scales of the plain blocks of its rows.
func TestQuantInterleaved(t *testing.T) {
	for _, ty := range interleavedTypes {
		t.Run(ty.String(), func(t *testing.T) {
			tr, err := TypeTraits(ty)
			require.NoError(t, err)
			require.False(t, tr.HasToFloat)
			plain := TypeQ4_0
			if ty == TypeIQ4_NL_4_4 {
				plain = TypeIQ4_NL
			}
			group := 4
			if ty == TypeQ4_0_8_8 {
				group = 8
			}
			const nPerRow = 256
			x := randRows(uint64(ty), 2*group*nPerRow)
			q, err := Quantize(ty, x, nPerRow, nil)
			require.NoError(t, err)
			rs, _ := RowSize(ty, nPerRow)
			require.Len(t, q, 2*group*rs)
			require.NoError(t, ValidateRowData(ty, q))
			p, err := Quantize(plain, x, nPerRow, nil)
			require.NoError(t, err)
			// group block g of row group r holds d[0..group) of those rows' block g
			nb := nPerRow / 32
			gsize := group * tr.TypeSize
			for r := 0; r < 2; r++ {
				for b := 0; b < nb; b++ {
					gb := q[(r*nb+b)*gsize:]
					for k := 0; k < group; k++ {
						row := r*group + k
						pd := p[row*rs+b*tr.TypeSize:][:2]
						require.Equal(t, pd, gb[2*k:2*k+2], "%s: group %d block %d row %d scale", ty, r, b, k)
					}
				}
			}
			_, err = Dequantize(ty, q, nPerRow)
			require.Error(t, err)
			for _, rows := range []int{1, 3, group + 1} {
				_, err = Quantize(ty, x[:rows*nPerRow], nPerRow, nil)
				require.Error(t, err, "%d rows", rows)
			}
		})
	}
}

// ---------------------------------------------------------------- errors

func TestQuantErrors(t *testing.T) {
	x := randRows(5, 1024)

	t.Run("row length", func(t *testing.T) {
		for _, c := range []struct {
			ty      Type
			nPerRow int
		}{{TypeQ4_0, 48}, {TypeQ4_0, 16}, {TypeQ4_K, 128}, {TypeQ4_K, 384}, {TypeIQ4_NL, 31}, {TypeQ8_0, 0}, {TypeQ8_0, -32}, {TypeF16, 0}} {
			_, err := Quantize(c.ty, x[:768], c.nPerRow, nil)
			require.Error(t, err, "%s %d", c.ty, c.nPerRow)
			if c.ty.BlockSize() > 1 && c.nPerRow != 0 {
				_, err = RowSize(c.ty, c.nPerRow)
				require.Error(t, err, "%s %d", c.ty, c.nPerRow)
				_, err = Dequantize(c.ty, make([]byte, 4096), c.nPerRow)
				require.Error(t, err, "%s %d", c.ty, c.nPerRow)
			}
		}
		_, err := Quantize(TypeQ4_0, x[:100], 32, nil) // not a whole number of rows
		require.Error(t, err)
		_, err = QuantizeRef(TypeQ4_0, x[:96], 48)
		require.Error(t, err)
		_, err = Dequantize(TypeQ4_0, make([]byte, 64), -32)
		require.Error(t, err)
	})

	t.Run("imatrix", func(t *testing.T) {
		var need []Type
		for ty := Type(0); ty < TypeCount; ty++ {
			tr, err := TypeTraits(ty)
			require.NoError(t, err)
			require.Equal(t, tr.RequiresImatrix, RequiresImatrix(ty))
			if RequiresImatrix(ty) {
				need = append(need, ty)
				_, err := Quantize(ty, x[:512], 256, nil)
				require.Error(t, err, "%s without imatrix", ty)
				q, err := Quantize(ty, x[:512], 256, onesImatrix(256))
				require.NoError(t, err)
				require.NotEmpty(t, q)
			}
		}
		require.Equal(t, []Type{TypeIQ2_XXS, TypeIQ2_XS, TypeIQ1_S}, need)
		for _, ty := range []Type{TypeQ4_0, TypeQ4_K, TypeIQ2_XXS, TypeF16} {
			for _, m := range []int{0, 255, 257, 512} {
				_, err := Quantize(ty, x[:512], 256, make([]float32, m))
				require.Error(t, err, "%s with an imatrix of %d", ty, m)
			}
		}
		require.False(t, RequiresImatrix(TypeCount))
		require.False(t, RequiresImatrix(Type(1<<31)))
	})

	t.Run("short buffers", func(t *testing.T) {
		for _, ty := range quantTypes(t) {
			n := 2 * 256
			size, err := RowSize(ty, n)
			require.NoError(t, err)
			for _, l := range []int{0, 1, size - 1} {
				_, err = Dequantize(ty, make([]byte, l), n)
				require.Error(t, err, "%s: %d bytes for %d elements", ty, l, n)
			}
			_, err = Dequantize(ty, nil, n)
			require.Error(t, err)
			out, err := Dequantize(ty, nil, 0)
			require.NoError(t, err)
			require.Empty(t, out)
			out, err = Dequantize(ty, make([]byte, size+7), n) // longer is fine
			require.NoError(t, err)
			require.Len(t, out, n)
		}
	})

	t.Run("huge element counts", func(t *testing.T) {
		// n whose byte size overflows an int must be an error, not a panic
		for _, ty := range []Type{TypeF32, TypeF16, TypeQ8_0, TypeQ4_K, TypeI64, TypeF64} {
			for _, n := range []int{math.MaxInt, math.MaxInt - math.MaxInt%256, 1 << 62, 1 << 61, 3 << 60} {
				if n%ty.BlockSize() != 0 {
					continue
				}
				require.NotPanics(t, func() {
					_, err := Dequantize(ty, make([]byte, 64), n)
					require.Error(t, err, "%s n=%d", ty, n)
				}, "%s n=%d", ty, n)
				require.NotPanics(t, func() {
					if size, err := RowSize(ty, n); err == nil {
						require.GreaterOrEqual(t, size, n/ty.BlockSize(), "%s n=%d: RowSize %d overflowed", ty, n, size)
					}
				}, "%s n=%d", ty, n)
			}
		}
	})

	t.Run("invalid types", func(t *testing.T) {
		for _, ty := range []Type{4, 5, 37, 38, TypeCount, TypeCount + 1, 1 << 31, math.MaxUint32} {
			_, err := Quantize(ty, x[:256], 256, nil)
			require.Error(t, err, "Quantize %d", uint32(ty))
			_, err = QuantizeRef(ty, x[:256], 256)
			require.Error(t, err, "QuantizeRef %d", uint32(ty))
			_, err = Dequantize(ty, make([]byte, 1024), 32)
			require.Error(t, err, "Dequantize %d", uint32(ty))
			_, err = RowSize(ty, 256)
			require.Error(t, err, "RowSize %d", uint32(ty))
			require.Error(t, ValidateRowData(ty, make([]byte, 64)), "ValidateRowData %d", uint32(ty))
			require.False(t, RequiresImatrix(ty))
			if ty >= TypeCount {
				_, err = TypeTraits(ty)
				require.Error(t, err)
			}
		}
	})

	t.Run("no decoder", func(t *testing.T) {
		var none []Type
		for ty := Type(0); ty < TypeCount; ty++ {
			tr, _ := TypeTraits(ty)
			if !ty.valid() || tr.HasToFloat || ty == TypeF32 {
				continue
			}
			none = append(none, ty)
			size, err := RowSize(ty, 256)
			require.NoError(t, err)
			_, err = Dequantize(ty, make([]byte, size), 256)
			require.Error(t, err, "Dequantize %s", ty)
		}
		require.Subset(t, none, []Type{TypeQ8_1, TypeQ8_K, TypeQ4_0_4_4, TypeQ4_0_4_8, TypeQ4_0_8_8, TypeIQ4_NL_4_4, TypeI8, TypeI32, TypeF64})
	})

	t.Run("no quantizer", func(t *testing.T) {
		for _, ty := range []Type{TypeQ8_1, TypeQ8_K, TypeI8, TypeI16, TypeI32, TypeI64, TypeF64} {
			_, err := Quantize(ty, x[:512], 256, nil)
			require.Error(t, err, "Quantize %s", ty)
		}
		for ty := Type(0); ty < TypeCount; ty++ {
			if tr, _ := TypeTraits(ty); ty.valid() && !tr.HasFromFloatRef {
				_, err := QuantizeRef(ty, x[:512], 256)
				require.Error(t, err, "QuantizeRef %s", ty)
			}
		}
		// q8_1 has a reference row quantizer although it has no decoder
		q, err := QuantizeRef(TypeQ8_1, x[:512], 256)
		require.NoError(t, err)
		require.Len(t, q, 16*36)
		require.NoError(t, ValidateRowData(TypeQ8_1, q))
	})
}

// ---------------------------------------------------------------- ValidateRowData

// fp16ScaleOffsets are the byte offsets of the fp16 scales in one block (or,
// for the interleaved types, in one group block of TypeSize*rows bytes),
// from the block layouts of the format.
var fp16ScaleOffsets = map[Type][]int{
	TypeQ4_0: {0}, TypeQ4_1: {0, 2}, TypeQ5_0: {0}, TypeQ5_1: {0, 2}, TypeQ8_0: {0}, TypeQ8_1: {0, 2},
	TypeQ2_K: {80, 82}, TypeQ3_K: {108}, TypeQ4_K: {0, 2}, TypeQ5_K: {0, 2}, TypeQ6_K: {208},
	TypeIQ2_XXS: {0}, TypeIQ2_XS: {0}, TypeIQ2_S: {0}, TypeIQ3_XXS: {0}, TypeIQ3_S: {0},
	TypeIQ1_S: {0}, TypeIQ4_NL: {0}, TypeIQ4_XS: {0}, TypeTQ1_0: {52}, TypeTQ2_0: {64},
	TypeQ4_0_4_4: {0, 2, 4, 6}, TypeQ4_0_4_8: {0, 2, 4, 6}, TypeIQ4_NL_4_4: {0, 2, 4, 6},
	TypeQ4_0_8_8: {0, 2, 4, 6, 8, 10, 12, 14},
}

// groupRows is the number of rows a block of the type spans in memory.
func groupRows(ty Type) int {
	switch ty {
	case TypeQ4_0_4_4, TypeQ4_0_4_8, TypeIQ4_NL_4_4:
		return 4
	case TypeQ4_0_8_8:
		return 8
	}
	return 1
}

// setIQ1MScale stores the fp16 scale h of an iq1_m block: its four nibbles
// are the top nibbles of the four 16-bit scale words at offset 48.
func setIQ1MScale(b []byte, h uint16) {
	for k := 0; k < 4; k++ {
		w := binary.LittleEndian.Uint16(b[48+2*k:])
		w = w&0x0fff | (h>>(4*k)&0xf)<<12
		binary.LittleEndian.PutUint16(b[48+2*k:], w)
	}
}

func TestValidateRowData(t *testing.T) {
	quietLogs(t) // every rejection is logged
	r := rand.New(rand.NewPCG(11, 12))
	bad16 := []uint16{0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xffff}

	t.Run("quantized", func(t *testing.T) {
		types := append([]Type{TypeIQ1_M}, interleavedTypes...)
		for ty := range fp16ScaleOffsets {
			if groupRows(ty) == 1 {
				types = append(types, ty)
			}
		}
		sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
		for _, ty := range types {
			bsize := ty.Size() * groupRows(ty)
			const nblocks = 5
			data := make([]byte, nblocks*bsize)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			// random quants with sane scales: valid whatever the quants are
			for b := 0; b < nblocks; b++ {
				blk := data[b*bsize : (b+1)*bsize]
				if ty == TypeIQ1_M {
					setIQ1MScale(blk, 0x3c00)
					continue
				}
				for _, off := range fp16ScaleOffsets[ty] {
					binary.LittleEndian.PutUint16(blk[off:], 0x2e66)
				}
			}
			require.NoError(t, ValidateRowData(ty, data), "%s: random quants, finite scales", ty)
			require.NoError(t, ValidateRowData(ty, data[:0]), "%s: empty", ty)
			for _, cut := range []int{1, ty.Size() - 1, ty.Size() + 1} {
				if cut > 0 && cut < len(data) && cut%ty.Size() != 0 {
					require.Error(t, ValidateRowData(ty, data[:len(data)-cut]), "%s: %d bytes short", ty, cut)
				}
			}
			offs := fp16ScaleOffsets[ty]
			if ty == TypeIQ1_M {
				offs = []int{-1}
			}
			for _, off := range offs {
				for _, h := range bad16 {
					for _, b := range []int{0, nblocks - 1} {
						bad := append([]byte(nil), data...)
						if off < 0 {
							setIQ1MScale(bad[b*bsize:], h)
						} else {
							binary.LittleEndian.PutUint16(bad[b*bsize+off:], h)
						}
						require.Error(t, ValidateRowData(ty, bad), "%s: scale at %d of block %d = %04x", ty, off, b, h)
					}
				}
			}
		}
		// q8_K has an f32 scale
		data := make([]byte, 3*TypeQ8_K.Size())
		binary.LittleEndian.PutUint32(data[TypeQ8_K.Size():], math.Float32bits(0.25))
		require.NoError(t, ValidateRowData(TypeQ8_K, data))
		for _, v := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
			binary.LittleEndian.PutUint32(data[TypeQ8_K.Size():], math.Float32bits(v))
			require.Error(t, ValidateRowData(TypeQ8_K, data), "q8_K scale %g", v)
		}
	})

	t.Run("plain", func(t *testing.T) {
		for _, c := range []struct {
			ty  Type
			bad []uint64
		}{
			{TypeF32, []uint64{0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001}},
			{TypeF16, []uint64{0x7c00, 0xfc00, 0x7e00}},
			{TypeBF16, []uint64{0x7f80, 0xff80, 0x7fc0, 0x7f81}},
			{TypeF64, []uint64{0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000}},
		} {
			w := c.ty.Size()
			data := make([]byte, 33*w)
			for i := 0; i < 33; i++ {
				v := uint64(r.Uint32() & 0x3fff3fff) // finite in every width
				for k := 0; k < w; k++ {
					data[i*w+k] = byte(v >> (8 * (k % 4)))
				}
			}
			require.NoError(t, ValidateRowData(c.ty, data), "%s", c.ty)
			if w > 1 {
				require.Error(t, ValidateRowData(c.ty, data[:len(data)-1]), "%s: odd size", c.ty)
			}
			for _, v := range c.bad {
				for _, i := range []int{0, 17, 32} {
					bad := append([]byte(nil), data...)
					for k := 0; k < w; k++ {
						bad[i*w+k] = byte(v >> (8 * k))
					}
					require.Error(t, ValidateRowData(c.ty, bad), "%s: %x at %d", c.ty, v, i)
				}
			}
		}
		// integers have no invalid values
		for _, ty := range []Type{TypeI8, TypeI16, TypeI32, TypeI64} {
			data := make([]byte, 8*ty.Size())
			for i := range data {
				data[i] = 0xff
			}
			require.NoError(t, ValidateRowData(ty, data), "%s", ty)
		}
	})

	t.Run("parity data", func(t *testing.T) {
		for _, c := range loadQuantCases(t) {
			for _, q := range [][]byte{c.refQuant, c.imQuant} {
				if q != nil {
					require.NoError(t, ValidateRowData(c.typ, q), c.file)
				}
			}
		}
	})
}

// ---------------------------------------------------------------- concurrency

// TestQuantConcurrent quantizes and decodes every type from 8 goroutines at
// once (the i-quant tables are built on first use, possibly by all of them
// together) and requires the bytes of a sequential run. Run it alone too,
// with -race, so that the lazy initialization is what races.
func TestQuantConcurrent(t *testing.T) {
	types := append(quantTypes(t), interleavedTypes...)
	const nPerRow, rows = 512, 8
	x := randRows(99, rows*nPerRow)
	im := make([]float32, nPerRow)
	for i := range im {
		im[i] = 0.5 + float32(i%7)
	}
	type result struct {
		q []byte
		y []float32
	}
	run := func(ty Type) (result, error) {
		q, err := Quantize(ty, x, nPerRow, im)
		if err != nil {
			return result{}, err
		}
		var y []float32
		if tr, _ := TypeTraits(ty); tr.HasToFloat {
			if y, err = Dequantize(ty, q, len(x)); err != nil {
				return result{}, err
			}
		}
		return result{q, y}, nil
	}

	const workers = 8
	got := make([][]result, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[w] = make([]result, len(types))
			for k := range types {
				i := (k + 3*w) % len(types) // different orders, same types at once too
				res, err := run(types[i])
				if err != nil {
					errs[w] = fmt.Errorf("%s: %w", types[i], err)
					return
				}
				got[w][i] = res
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	for i, ty := range types {
		want, err := run(ty)
		require.NoError(t, err)
		for w := 0; w < workers; w++ {
			require.Equal(t, want.q, got[w][i].q, "%s: goroutine %d bytes", ty, w)
			if want.y != nil {
				requireSameF32(t, want.y, got[w][i].y, "%s: goroutine %d values", ty, w)
			}
		}
	}
}

// ---------------------------------------------------------------- benchmarks

const benchRows, benchPerRow = 16, 4096

// benchTypes are the types Quantize accepts.
func benchTypes() []Type {
	var out []Type
	for ty := Type(0); ty < TypeCount; ty++ {
		if !ty.valid() {
			continue
		}
		switch ty {
		case TypeQ8_1, TypeQ8_K, TypeI8, TypeI16, TypeI32, TypeI64, TypeF64:
			continue
		}
		out = append(out, ty)
	}
	return out
}

// BenchmarkQuantize measures Quantize ("alloc") and QuantizeInto into a
// reused buffer ("into": the kernels alone, as the reference's figures are)
// on 16 gaussian rows of 4096; MB/s counts the f32 input. Only the types
// that require one get an imatrix.
func BenchmarkQuantize(b *testing.B) {
	x := randRows(1, benchRows*benchPerRow)
	for _, ty := range benchTypes() {
		im := imatrixFor(ty, benchPerRow)
		rs, err := RowSize(ty, benchPerRow)
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]byte, benchRows*rs)
		benchBoth(b, ty.String(), int64(4*len(x)),
			func() error { _, err := Quantize(ty, x, benchPerRow, im); return err },
			func() error { return QuantizeInto(dst, ty, x, benchPerRow, im) })
	}
}

// BenchmarkDequantize measures Dequantize and DequantizeInto of the same
// data; MB/s counts the f32 output.
func BenchmarkDequantize(b *testing.B) {
	x := randRows(1, benchRows*benchPerRow)
	for _, ty := range benchTypes() {
		if tr, _ := TypeTraits(ty); !tr.HasToFloat {
			continue
		}
		q, err := Quantize(ty, x, benchPerRow, imatrixFor(ty, benchPerRow))
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]float32, len(x))
		benchBoth(b, ty.String(), int64(4*len(x)),
			func() error { _, err := Dequantize(ty, q, len(x)); return err },
			func() error { return DequantizeInto(dst, ty, q) })
	}
}

// benchBoth runs name/alloc and name/into over bytes bytes per call.
func benchBoth(b *testing.B, name string, bytes int64, alloc, into func() error) {
	for _, v := range []struct {
		name string
		fn   func() error
	}{{"alloc", alloc}, {"into", into}} {
		b.Run(name+"/"+v.name, func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				if err := v.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// QuantizeInto and DequantizeInto give what Quantize and Dequantize return,
// into the caller's buffers, and reject buffers of the wrong size.
func TestQuantizeIntoBuffers(t *testing.T) {
	x := randRows(3, 4*256)
	for _, ty := range []Type{TypeQ4_0, TypeQ8_0, TypeQ4_K, TypeF16} {
		want, err := Quantize(ty, x, 256, nil)
		require.NoError(t, err)
		dst := make([]byte, len(want))
		require.NoError(t, QuantizeInto(dst, ty, x, 256, nil))
		require.Equal(t, want, dst, ty.String())
		require.Error(t, QuantizeInto(dst[:len(dst)-1], ty, x, 256, nil))
		require.Error(t, QuantizeInto(append(dst, 0), ty, x, 256, nil))

		back, err := Dequantize(ty, want, len(x))
		require.NoError(t, err)
		got := make([]float32, len(x))
		require.NoError(t, DequantizeInto(got, ty, want))
		require.Equal(t, back, got, ty.String())
		require.Error(t, DequantizeInto(make([]float32, len(x)+256), ty, want), "src too short")
		if ty.BlockSize() > 1 {
			require.Error(t, DequantizeInto(make([]float32, 3), ty, want), "not whole blocks")
		}
	}
	_, err := Dequantize(TypeQ4_0, nil, -32)
	require.Error(t, err)
}
