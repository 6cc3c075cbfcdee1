package ggml

import (
	"strings"
	"testing"
)

// streamProbe reads host tensors (allocated, empty, in a backend buffer),
// and refuses tensors without data and tensors of a closed buffer.
func TestStreamProbe(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	a, b := ctx.NewTensor1D(TypeF32, 100003), ctx.NewTensor2D(TypeQ8_0, 64, 7)
	empty := ctx.NewTensor1D(TypeF32, 0)
	for _, threads := range []int{1, 2, 5} {
		ts, n, err := streamProbe([]*Tensor{a, empty, b}, threads, 3)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(a.NBytes() + b.NBytes()); n != want || len(ts) != 3 {
			t.Fatalf("%d threads: %d bytes, %d rounds; want %d, 3", threads, n, len(ts), want)
		}
	}
	if _, n, err := streamProbe(nil, 2, 1); err != nil || n != 0 {
		t.Fatalf("no tensors: %d bytes, %v", n, err)
	}
	for _, bad := range [][2]int{{0, 1}, {65, 1}, {1, 0}} {
		if _, _, err := streamProbe([]*Tensor{a}, bad[0], bad[1]); err == nil {
			t.Fatalf("threads %d, rounds %d accepted", bad[0], bad[1])
		}
	}

	na, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer na.Close()
	x := na.NewTensor1D(TypeF32, 1000)
	if _, _, err := streamProbe([]*Tensor{a, x}, 1, 1); err == nil || !strings.Contains(err.Error(), "no data") {
		t.Fatalf("tensor without data: %v", err)
	}
	be, err := NewCPUBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	buf, err := na.AllocTensors(be)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := streamProbe([]*Tensor{x}, 2, 2); err != nil {
		t.Fatalf("tensor of a backend buffer: %v", err)
	}
	buf.Close()
	if _, _, err := streamProbe([]*Tensor{a, x}, 1, 1); err == nil {
		t.Fatal("tensor of a closed buffer accepted")
	}
}
