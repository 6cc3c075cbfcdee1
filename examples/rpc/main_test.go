package main

import (
	"strings"
	"testing"
)

func TestRPCExampleSplitMatchesLocal(t *testing.T) {
	var out strings.Builder
	if err := run(&out, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "largest difference from the local result: 0\n") {
		t.Errorf("the split result differs from the local one:\n%s", out.String())
	}
}
