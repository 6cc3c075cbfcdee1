package layercheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// The C core's layers use only the layers their cgo packages import: no
// symbol and no private header from a layer above; and no two files of a
// layer use each other, directly or through others of it.
func TestCoreLayersUseOnlyWhatTheyImport(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads ELF objects")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skip("no C compiler")
	}
	viol, layers, err := Check(cc, filepath.Join("..", "..", "csrc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range viol {
		t.Error(v)
	}
	var names []string
	for n, l := range layers {
		var uses []string
		for u := range l.Uses {
			uses = append(uses, u)
		}
		sort.Strings(uses)
		names = append(names, n+" -> "+strings.Join(uses, " "))
	}
	sort.Strings(names)
	t.Logf("layers:\n%s", strings.Join(names, "\n"))
}

// A layer's Uses is the closure of its //ggml:uses lines, a circle among
// them is refused, and a private header from a layer it does not use is
// reported.
func TestIncludesOfUnimportedLayersAreReported(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("include/pub.h", "")
	write("low/cgo.go", "//ggml:uses\npackage low\n")
	write("low/low.h", "")
	write("mid/cgo.go", "//ggml:uses low\npackage mid\n")
	write("top/cgo.go", "//ggml:uses mid\npackage top\n")
	write("top/top.h", "")
	write("top/a.c", "#include \"pub.h\"\n#include \"top.h\"\n#include \"../low/low.h\"\n")
	write("low/b.c", "#include \"../top/top.h\"\n#include \"missing.h\"\n")
	layers, err := Layers(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !layers["top"].Uses["low"] || layers["low"].Uses["top"] {
		t.Fatalf("uses: top %v, low %v", layers["top"].Uses, layers["low"].Uses)
	}
	var got []string
	for _, n := range []string{"low", "top"} {
		v, err := checkIncludes(dir, layers[n])
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range v {
			got = append(got, x.Layer+":"+x.Target)
		}
	}
	if strings.Join(got, " ") != "low:top low:?" {
		t.Fatalf("violations %q, want low:top and low:? (missing header)", got)
	}
	write("low/cgo.go", "//ggml:uses top\npackage low\n")
	if _, err := Layers(dir); err == nil || !strings.Contains(err.Error(), "circle") {
		t.Fatalf("a circle of layers gave %v", err)
	}
}

// Files of one layer that use each other's symbols in a circle are found,
// with one circle through them named step by step; files used one way are not.
func TestCirclesBetweenFilesAreFound(t *testing.T) {
	names := []string{"a.c", "b.c", "c.c", "d.c", "e.c"}
	deps := []map[int]string{
		{1: "b_fn"},         // a -> b
		{2: "c_fn", 3: "d"}, // b -> c, d
		{0: "a_fn"},         // c -> a
		{4: "e_fn"},         // d -> e
		{},                  // e
	}
	got := circles(names, deps)
	if len(got) != 1 || len(got[0]) != 3 {
		t.Fatalf("circles %v, want one of a, b, c", got)
	}
	want := "a.c -> b.c (b_fn) -> c.c (c_fn) -> a.c (a_fn); files in the circle: a.c b.c c.c"
	if s := describeCircle(names, deps, got[0]); s != want {
		t.Fatalf("described as %q, want %q", s, want)
	}
	deps[2] = map[int]string{}
	if got := circles(names, deps); len(got) != 0 {
		t.Fatalf("one-way uses gave circles %v", got)
	}
}
