package ggml

/*
#include "glue.h"
#include "ggml-cpu-impl.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"time"
	"unsafe"

	"github.com/ggml-go/ggml/internal/link"
)

func init() {
	link.StreamProbe = func(ts []any, threads, rounds int) ([]time.Duration, int64, error) {
		tt := make([]*Tensor, len(ts))
		for i, t := range ts {
			var ok bool
			if tt[i], ok = t.(*Tensor); !ok {
				return nil, 0, errors.New("ggml: StreamProbe: not a *Tensor")
			}
		}
		return streamProbe(tt, threads, rounds)
	}
}

// streamProbe times reading the tensors' bytes once, in order, rounds times,
// with threads threads (see csrc/cpu/stream-probe.c): the ceiling of a
// computation that reads the same memory. It returns each round's time and
// the bytes a round reads.
func streamProbe(ts []*Tensor, threads, rounds int) ([]time.Duration, int64, error) {
	if threads < 1 || threads > 64 || rounds < 1 {
		return nil, 0, errors.New("ggml: StreamProbe: threads must be in 1..64 and rounds at least 1")
	}
	n := len(ts)
	// C memory: the array holds pointers, which cgo's rules forbid in Go memory passed to C
	cp := C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(unsafe.Pointer(nil))))
	if cp == nil {
		return nil, 0, errors.New("ggml: StreamProbe: out of memory")
	}
	defer C.free(cp)
	ptrs := unsafe.Slice((*unsafe.Pointer)(cp), n)
	sizes := make([]C.size_t, max(n, 1))
	var total int64
	for i, t := range ts {
		p, release, err := t.localData("StreamProbe", true)
		if err != nil {
			return nil, 0, err
		}
		defer release()
		ptrs[i] = p
		if p != nil {
			sizes[i] = C.lm_ggml_nbytes(t.t)
		}
		total += int64(sizes[i])
	}
	secs := make([]C.double, rounds)
	rc := C.lm_cpu_stream_probe((*unsafe.Pointer)(cp), &sizes[0], C.int(n), C.int(threads), C.int(rounds), &secs[0])
	runtime.KeepAlive(ts)
	if rc != 0 {
		return nil, 0, errors.New("ggml: StreamProbe: could not start the threads")
	}
	out := make([]time.Duration, rounds)
	for i, s := range secs {
		out[i] = time.Duration(float64(s) * 1e9)
	}
	return out, total, nil
}
