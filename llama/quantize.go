package llama

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// QuantizeOptions configure QuantizeFile.
type QuantizeOptions struct {
	Type ggml.Type // the type of the weight matrices
	// OutputType and EmbdType, if not zero (f32), override Type for
	// output.weight and token_embd.weight.
	OutputType, EmbdType ggml.Type
	// Imatrix holds importance weights per tensor name (see ReadImatrix):
	// ne0 values (or ne0 per matrix of a 3-D tensor). Types that need one
	// (iq2_xxs, iq2_xs, iq1_s, ...) fail without it.
	Imatrix map[string][]float32
	Threads int // 0: all CPUs
	// Progress, if not nil, is called before each tensor is converted.
	Progress func(i, n int, name string)
}

// QuantizeStats summarise a QuantizeFile run.
type QuantizeStats struct {
	Tensors, Quantized, Fallbacks int
	BytesIn, BytesOut             int64
}

// fallback is the type used for rows that are not a whole number of blocks
// of t: a type of 32-element blocks of about the same size, as llama.cpp's
// quantizer does; f16 when even that does not fit.
func fallback(t ggml.Type, ne0 int) ggml.Type {
	if ne0%t.BlockSize() == 0 {
		return t
	}
	switch t {
	case ggml.TypeIQ2_XXS, ggml.TypeIQ2_XS, ggml.TypeIQ2_S, ggml.TypeIQ3_XXS, ggml.TypeIQ3_S,
		ggml.TypeIQ1_S, ggml.TypeIQ1_M, ggml.TypeQ2_K, ggml.TypeQ3_K, ggml.TypeIQ4_XS:
		t = ggml.TypeIQ4_NL
	case ggml.TypeQ4_K:
		t = ggml.TypeQ5_0
	case ggml.TypeQ5_K:
		t = ggml.TypeQ5_1
	case ggml.TypeQ6_K:
		t = ggml.TypeQ8_0
	}
	if ne0%t.BlockSize() != 0 {
		t = ggml.TypeF16
	}
	return t
}

// quantizable reports whether t is a type QuantizeFile can write.
func quantizable(t ggml.Type) error {
	tr, err := ggml.TypeTraits(t)
	if err != nil {
		return err
	}
	switch {
	case t == ggml.TypeF32 || t == ggml.TypeF16 || t == ggml.TypeBF16:
		return nil
	case !tr.IsQuantized || tr.BlockSizeInterleave > 1 || t == ggml.TypeQ8_1 || t == ggml.TypeQ8_K:
		// integers, repacked layouts and the activation-only q8 types
		return fmt.Errorf("llama: cannot quantize to %s", t)
	}
	return nil
}

// targetType is the type tensor info gets.
func (o *QuantizeOptions) targetType(info gguf.TensorInfo) ggml.Type {
	if len(info.Shape) < 2 || !strings.HasSuffix(info.Name, ".weight") {
		return ggml.Type(info.Type) // vectors (norms, biases) and non-weights stay
	}
	t := o.Type
	switch {
	case info.Name == "output.weight" && o.OutputType != 0:
		t = o.OutputType
	case info.Name == "token_embd.weight" && o.EmbdType != 0:
		t = o.EmbdType
	}
	return fallback(t, int(info.Shape[0]))
}

// QuantizeFile converts the weight matrices of the GGUF file in (tensors of
// two or more dimensions named *.weight) to o.Type and writes the result to
// out, atomically; every other tensor and every metadata entry is copied
// (general.file_type and general.quantization_version are updated). Rows
// that are not a whole number of blocks get a wider type (see fallback).
func QuantizeFile(in, out string, o QuantizeOptions) (QuantizeStats, error) {
	var st QuantizeStats
	for _, t := range []ggml.Type{o.Type, o.OutputType, o.EmbdType} {
		if err := quantizable(t); err != nil {
			return st, err
		}
	}
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	f, err := gguf.Open(in)
	if err != nil {
		return st, err
	}
	defer f.Close()
	infos := f.Tensors()
	types := make([]ggml.Type, len(infos))
	for i, info := range infos {
		types[i] = o.targetType(info)
		if types[i] != ggml.Type(info.Type) {
			if _, err := ggml.TypeTraits(ggml.Type(info.Type)); err != nil {
				return st, fmt.Errorf("llama: tensor %s: %w", info.Name, err)
			}
			if ggml.RequiresImatrix(types[i]) && o.Imatrix[info.Name] == nil {
				return st, fmt.Errorf("llama: %s needs an importance matrix (--imatrix) for %s", types[i], info.Name)
			}
		}
	}

	w, err := gguf.Create(out)
	if err != nil {
		return st, err
	}
	defer w.Abort()
	if err := w.CopyKVs(f); err != nil {
		return st, err
	}
	if ft := FileType(o.Type); ft >= 0 {
		if err := w.SetUint32("general.file_type", uint32(ft)); err != nil {
			return st, err
		}
	}
	if err := w.SetUint32("general.quantization_version", 2); err != nil { // LM_GGML_QNT_VERSION
		return st, err
	}
	for i, info := range infos {
		if err := w.DeclareTensor(info.Name, gguf.TensorType(types[i]), info.Shape); err != nil {
			return st, err
		}
	}
	for i, info := range infos {
		if o.Progress != nil {
			o.Progress(i, len(infos), info.Name)
		}
		data, err := f.TensorData(info.Name)
		if err != nil {
			return st, err
		}
		st.Tensors++
		st.BytesIn += int64(len(data))
		if types[i] != ggml.Type(info.Type) {
			if data, err = convertTensor(info, types[i], data, o.Imatrix[info.Name], o.Threads); err != nil {
				return st, fmt.Errorf("llama: tensor %s: %w", info.Name, err)
			}
			st.Quantized++
			if types[i] != o.Type && types[i] != o.OutputType && types[i] != o.EmbdType {
				st.Fallbacks++
			}
		}
		st.BytesOut += int64(len(data))
		if err := w.WriteTensorData(info.Name, data); err != nil {
			return st, err
		}
	}
	if o.Progress != nil {
		o.Progress(len(infos), len(infos), "")
	}
	return st, w.Close()
}

// convertTensor converts the rows of a tensor to type t, on several threads.
func convertTensor(info gguf.TensorInfo, t ggml.Type, data []byte, imatrix []float32, threads int) ([]byte, error) {
	ne0 := int(info.Shape[0])
	rows := int(info.Elements()) / max(ne0, 1)
	if ne0 == 0 || rows == 0 {
		return nil, errors.New("empty tensor")
	}
	src := ggml.Type(info.Type)
	perMatrix := rows // rows sharing one imatrix vector
	if imatrix != nil {
		switch {
		case len(imatrix) == ne0:
		case len(info.Shape) >= 3 && len(imatrix) == ne0*int(info.Shape[2]):
			perMatrix = int(info.Shape[1])
		default:
			return nil, fmt.Errorf("importance matrix has %d values for rows of %d", len(imatrix), ne0)
		}
	}
	inRow, err := ggml.RowSize(src, ne0)
	if err != nil {
		return nil, err
	}
	outRow, err := ggml.RowSize(t, ne0)
	if err != nil {
		return nil, err
	}
	out := make([]byte, rows*outRow)
	// chunks of whole rows, never spanning two imatrix matrices
	chunk := max(1, min(perMatrix, (rows+4*threads-1)/(4*threads)))
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]float32, chunk*ne0)
			for {
				mu.Lock()
				r0 := next
				next += chunk
				if r0 < rows && r0/perMatrix != (r0+chunk-1)/perMatrix {
					next = (r0/perMatrix + 1) * perMatrix // do not span matrices
				}
				r1 := min(next, rows)
				stop := first != nil
				mu.Unlock()
				if r0 >= rows || stop {
					return
				}
				f := buf[:(r1-r0)*ne0]
				err := toFloat(src, data[r0*inRow:r1*inRow], f)
				if err == nil {
					var im []float32
					if imatrix != nil {
						m := r0 / perMatrix
						im = imatrix[m*ne0 : (m+1)*ne0]
					}
					err = ggml.QuantizeInto(out[r0*outRow:r1*outRow], t, f, ne0, im)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return out, first
}

// toFloat converts packed rows of type src to f32.
func toFloat(src ggml.Type, b []byte, f []float32) error {
	return ggml.DequantizeInto(f, src, b)
}
