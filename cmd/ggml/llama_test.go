package main

import (
	"testing"

	"github.com/ggml-go/ggml"
)

func TestParseQuantType(t *testing.T) {
	for in, want := range map[string]ggml.Type{"q4_K": ggml.TypeQ4_K, "Q4_K_M": ggml.TypeQ4_K, "q8_0": ggml.TypeQ8_0,
		"Q5_K_S": ggml.TypeQ5_K, "IQ4_NL": ggml.TypeIQ4_NL, "f16": ggml.TypeF16, "BF16": ggml.TypeBF16} {
		if got, err := parseQuantType(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	if _, err := parseQuantType("q9_9"); err == nil {
		t.Error("q9_9: no error")
	}
}
