package ggml

/*
#include "glue.h"
static void gg_point_data(struct lm_ggml_tensor * t, void * p) { t->data = p; }
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/link"
)

// GGUFContextSize is the MemSize a Context needs to hold every tensor of f:
// the tensor structs, plus their data when withData (LoadGGUF with copy).
func GGUFContextSize(f *gguf.File, withData bool) int {
	n := 0
	for _, t := range f.Tensors() {
		n += TensorOverhead()
		if withData {
			n += int(t.Size+15) &^ 15
		}
	}
	return n
}

// LoadGGUF creates in c one tensor per tensor of f, named and shaped as in
// the file, and returns them by name.
//
// With copy, the bytes are copied into the context, which needs room for
// them (see GGUFContextSize) and must not be NoAlloc; f may be closed
// afterwards. Without copy, the tensors point into f's read-only memory
// mapping (f must come from gguf.Open on a platform that maps files): no
// bytes are copied, nothing is allocated for data, f must stay open while
// the tensors are used, and they must not be written to (as inputs of
// operations they are fine; in-place operations on them are not).
func (c *Context) LoadGGUF(f *gguf.File, copy bool) (tensors map[string]*Tensor, err error) {
	if !copy && !f.Mapped() {
		return nil, errors.New("ggml: LoadGGUF without copy needs a memory-mapped gguf.File (gguf.Open)")
	}
	if copy && c.NoAlloc() {
		return nil, errors.New("ggml: LoadGGUF with copy needs a context that allocates data")
	}
	defer func() {
		// NewTensor reports a full arena or a bad shape by panicking
		if r := recover(); r != nil {
			var oe *OpError
			if e, ok := r.(error); ok && errors.As(e, &oe) {
				tensors, err = nil, fmt.Errorf("ggml: LoadGGUF: %w", oe)
				return
			}
			panic(r)
		}
	}()
	if !copy {
		prev := c.NoAlloc()
		c.SetNoAlloc(true)
		defer c.SetNoAlloc(prev)
	}
	if !copy {
		// The tensors point into f's mapping: f lives as long as c.
		c.keep = append(c.keep, f)
	}
	infos := f.Tensors()
	tensors = make(map[string]*Tensor, len(infos))
	for _, info := range infos {
		shape := make([]int, len(info.Shape))
		for i, d := range info.Shape {
			shape[i] = int(d)
		}
		data, err := link.GGUFTensorView(f, info.Name)
		if err != nil {
			return nil, err
		}
		t := c.NewTensor(Type(info.Type), shape...)
		t.SetName(info.Name)
		if copy {
			if err := t.SetBytes(data); err != nil {
				return nil, err
			}
		} else {
			C.gg_point_data(t.ptr(), unsafe.Pointer(unsafe.SliceData(data)))
		}
		tensors[info.Name] = t
	}
	return tensors, nil
}

// AddTensorToGGUF adds t (its name, type, shape and a packed copy of its
// data) to a GGUF writer.
func AddTensorToGGUF(w *gguf.Writer, t *Tensor) error {
	shape := t.Shape()
	s := make([]int64, len(shape))
	for i, d := range shape {
		s[i] = int64(d)
	}
	return w.AddTensor(t.Name(), gguf.TensorType(t.Type()), s, t.Bytes())
}
