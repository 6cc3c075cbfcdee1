package ggml

/*
#include "glue.h"
// Points t at memory it must not write (a read-only mapping of the file).
static void gg_point_data_readonly(struct lm_ggml_tensor * t, void * p) {
    t->data = p;
    t->flags |= LM_TENSOR_FLAG_READONLY;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/link"
)

// GGUFType is the GGUF tensor type of t (the ids are the same).
func (t Type) GGUFType() gguf.TensorType { return gguf.TensorType(t) }

// TypeFromGGUF is the Type of a GGUF tensor type (the ids are the same).
func TypeFromGGUF(t gguf.TensorType) Type { return Type(t) }

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
// afterwards.
//
// Without copy, the tensors point into f's read-only memory mapping (f must
// come from gguf.Open on a platform that maps files): no bytes are copied and
// nothing is allocated for data. The context keeps the mapping alive until
// it is closed or collected, so the tensors stay readable after f.Close. They are read-only (Tensor.ReadOnly): the methods
// that write data (SetFloat32s, SetBytes, SetInt32s, SetF32, SetI32, Fill,
// Zero) return an error or panic with an *OpError, and computing a node that
// writes into one (an in-place op, a Cpy into it, an optimizer step) returns
// an error. As operands of operations they are fine.
func (c *Context) LoadGGUF(f *gguf.File, copy bool) (tensors map[string]*Tensor, err error) {
	if !copy && !f.Mapped() {
		return nil, errors.New("ggml: LoadGGUF without copy needs a memory-mapped gguf.File (gguf.Open)")
	}
	if copy && c.NoAlloc() {
		return nil, errors.New("ggml: LoadGGUF with copy needs a context that allocates data")
	}
	defer recoverGGUF("LoadGGUF", &tensors, &err)
	c.ptr()
	var mem []byte // the file's mapping, kept alive by the context
	if !copy {
		data, release, ok, err := link.GGUFRetain(f)
		if err != nil {
			return nil, fmt.Errorf("ggml: LoadGGUF: %w", err)
		}
		if !ok {
			return nil, errors.New("ggml: LoadGGUF without copy needs a memory-mapped gguf.File (gguf.Open)")
		}
		c.hold.add(release)
		mem = data
		prev := c.NoAlloc()
		c.SetNoAlloc(true)
		defer c.SetNoAlloc(prev)
	}
	infos := f.Tensors()
	base := f.DataOffset()
	tensors = make(map[string]*Tensor, len(infos))
	for _, info := range infos {
		t := c.newGGUFTensor(info)
		if copy {
			data, err := link.GGUFTensorView(f, info.Name) // copied at once: not a view lent out
			if err != nil {
				return nil, err
			}
			if err := t.SetBytes(data); err != nil {
				return nil, err
			}
		} else {
			off := base + info.Offset
			if off < 0 || info.Size > int64(len(mem))-off {
				return nil, fmt.Errorf("ggml: LoadGGUF: tensor %q: its data lies past the end of the file: %w", info.Name, gguf.ErrNoData)
			}
			C.gg_point_data_readonly(t.ptr(), unsafe.Add(unsafe.Pointer(unsafe.SliceData(mem)), off))
		}
		tensors[info.Name] = t
	}
	return tensors, nil
}

// newGGUFTensor creates in c the tensor info describes, named and shaped
// as in the file.
func (c *Context) newGGUFTensor(info gguf.TensorInfo) *Tensor {
	shape := make([]int, len(info.Shape))
	for i, d := range info.Shape {
		shape[i] = int(d)
	}
	return c.NewTensor(TypeFromGGUF(info.Type), shape...).SetName(info.Name)
}

// recoverGGUF, deferred, turns the panics of loading a gguf.File into an
// error of op: NewTensor's *OpError for a full arena or a bad shape, and
// gguf.ErrClosed from a closed file's methods. Other panics go on.
func recoverGGUF(op string, tensors *map[string]*Tensor, err *error) {
	if r := recover(); r != nil {
		var oe *OpError
		if e, ok := r.(error); ok && (errors.As(e, &oe) || errors.Is(e, gguf.ErrClosed)) {
			*tensors, *err = nil, fmt.Errorf("ggml: %s: %w", op, e)
			return
		}
		panic(r)
	}
}

// AddTensorToGGUF adds t (its name, type, shape and a packed copy of its
// data) to a GGUF writer.
func AddTensorToGGUF(w *gguf.Writer, t *Tensor) error {
	shape := t.Shape()
	s := make([]int64, len(shape))
	for i, d := range shape {
		s[i] = int64(d)
	}
	return w.AddTensor(t.Name(), t.Type().GGUFType(), s, t.Bytes())
}
