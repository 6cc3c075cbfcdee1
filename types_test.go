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

func TestTypeTraitsParity(t *testing.T) {
	var want []struct {
		ID                 uint32 `json:"id"`
		Name               string `json:"name"`
		BlckSize           int    `json:"blck_size"`
		BlckSizeInterleave int    `json:"blck_size_interleave"`
		TypeSize           int    `json:"type_size"`
		IsQuantized        bool   `json:"is_quantized"`
		HasToFloat         bool   `json:"has_to_float"`
		HasFromFloatRef    bool   `json:"has_from_float_ref"`
		RequiresImatrix    bool   `json:"requires_imatrix"`
	}
	readParityJSON(t, &want, "type_traits.json")
	require.NotEmpty(t, want)
	for _, w := range want {
		got, err := TypeTraits(Type(w.ID))
		require.NoError(t, err)
		require.Equal(t, Traits{
			Name: w.Name, BlockSize: w.BlckSize, BlockSizeInterleave: w.BlckSizeInterleave,
			TypeSize: w.TypeSize, IsQuantized: w.IsQuantized, HasToFloat: w.HasToFloat,
			HasFromFloatRef: w.HasFromFloatRef, RequiresImatrix: w.RequiresImatrix,
		}, got, "type %d", w.ID)
		if w.Name != "DEPRECATED" {
			require.Equal(t, w.Name, Type(w.ID).String())
			require.Equal(t, w.BlckSize, Type(w.ID).BlockSize())
			require.Equal(t, w.TypeSize, Type(w.ID).Size())
			byName, ok := TypeByName(w.Name)
			require.True(t, ok)
			require.Equal(t, Type(w.ID), byName)
		}
	}
	_, err := TypeTraits(TypeCount)
	require.Error(t, err)
}
