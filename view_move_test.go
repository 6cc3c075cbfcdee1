package ggml

import (
	"slices"
	"testing"
)

// SetViewOffset: a graph built once writes and reads another part of a
// buffer after its views move; bad offsets and non-views are errors.
func TestSetViewOffset(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	cache := ctx.NewTensor1D(TypeF32, 12).SetName("cache").Zero()
	row := ctx.NewTensor1D(TypeF32, 3).SetName("row")
	dst := ctx.View1D(cache, 3, 0)
	store := ctx.Cpy(ctx.Scale(row, 2), dst) // a view of cache too
	g := ctx.NewGraph().BuildForward(store)

	for i, off := range []int{0, 12, 36} {
		for _, v := range []*Tensor{dst, store} {
			if err := v.SetViewOffset(off); err != nil {
				t.Fatal(err)
			}
			if v.ViewOffset() != off {
				t.Fatalf("ViewOffset %d, want %d", v.ViewOffset(), off)
			}
		}
		if err := row.SetFloat32s([]float32{float32(i), float32(i) + 0.5, 1}); err != nil {
			t.Fatal(err)
		}
		if err := g.Compute(1); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := cache.Float32s()
	want := []float32{0, 1, 2, 2, 3, 2, 0, 0, 0, 4, 5, 2}
	if !slices.Equal(got, want) {
		t.Fatalf("cache %v, want %v", got, want)
	}

	// a strided 2-D view and a view of a view (VIEW op: its op param follows)
	v2 := ctx.View2D(cache, 2, 2, 24, 0) // elements 0,1 and 6,7
	if err := v2.SetViewOffset(4 * 3); err != nil {
		t.Fatal(err)
	}
	if got, _ := v2.Float32s(); !slices.Equal(got, []float32{2, 3, 4, 5}) {
		t.Fatalf("moved 2-D view reads %v", got)
	}
	vv := ctx.View1D(v2, 1, 4) // element 4 of cache
	if err := vv.SetViewOffset(4 * 10); err != nil {
		t.Fatal(err)
	}
	if got := vv.F32(0); got != 5 {
		t.Fatalf("moved view of a view reads %v, want 5", got)
	}

	for _, c := range []struct {
		name string
		t    *Tensor
		off  int
	}{
		{"not a view", cache, 0},
		{"negative", dst, -4},
		{"past the end", dst, 40},
		{"strided past the end", v2, 4 * 5},
		{"before its operand", vv, 4},
	} {
		before := c.t.ViewOffset()
		if err := c.t.SetViewOffset(c.off); err == nil {
			t.Errorf("%s: no error", c.name)
		}
		if c.t.ViewOffset() != before {
			t.Errorf("%s: offset changed to %d", c.name, c.t.ViewOffset())
		}
	}
	if err := ctx.View1D(cache, 0, 48).SetViewOffset(48); err != nil {
		t.Errorf("empty view at the end: %v", err)
	}
}

// SetViewOffset on a view of a NoAlloc context: the offset moves, the data
// comes when the source gets memory.
func TestSetViewOffsetNoData(t *testing.T) {
	ctx, err := NewContext(ContextOptions{MemSize: 1 << 16, NoAlloc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	src := ctx.NewTensor1D(TypeF32, 8)
	v := ctx.View1D(src, 2, 0)
	if err := v.SetViewOffset(8); err != nil {
		t.Fatal(err)
	}
	if v.HasData() {
		t.Fatal("a view of a tensor without data has data")
	}
	buf, err := ctx.AllocTensors(CPUBufferType())
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	if err := src.SetFloat32s([]float32{0, 1, 2, 3, 4, 5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.Float32s(); !slices.Equal(got, []float32{2, 3}) {
		t.Fatalf("view reads %v, want [2 3]", got)
	}
}
