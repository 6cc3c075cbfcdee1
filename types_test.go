package ggml

import (
	"strings"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/require"
)

// Type names are written both ways ("q4_K" in ggml, "Q4_K" in llama.cpp's
// tools): TypeByName accepts any case, which is unambiguous only while no two
// names differ in case alone.
func TestTypeByNameIgnoresCase(t *testing.T) {
	seen := map[string]Type{}
	for typ := Type(0); typ < TypeCount; typ++ {
		if !typ.valid() {
			continue
		}
		name := typ.String()
		if prev, dup := seen[strings.ToLower(name)]; dup {
			t.Fatalf("%v and %v differ only in case", prev, typ)
		}
		seen[strings.ToLower(name)] = typ
		for _, spelling := range []string{name, strings.ToUpper(name), strings.ToLower(name)} {
			got, ok := TypeByName(spelling)
			if !ok || got != typ {
				t.Errorf("TypeByName(%q) = %v, %v; want %v", spelling, got, ok, typ)
			}
		}
	}
	for _, bad := range []string{"", "q4", "Q4_K_M", "f32 ", "DEPRECATED"} {
		if got, ok := TypeByName(bad); ok {
			t.Errorf("TypeByName(%q) = %v, want no type", bad, got)
		}
	}
}

func TestTypeGGUFConversion(t *testing.T) {
	for ty := Type(0); ty < TypeCount; ty++ {
		g := ty.GGUFType()
		require.Equal(t, ty, TypeFromGGUF(g))
		if ty.valid() {
			require.Equal(t, ty.String(), g.String())
		}
	}
	require.Equal(t, gguf.TensorQ4_K, TypeQ4_K.GGUFType())
	require.Equal(t, OpMulMatID, OpMulMatId) // the deprecated alias
}
