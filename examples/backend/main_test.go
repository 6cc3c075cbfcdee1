package main

import (
	"strings"
	"testing"
)

func TestBackendExampleComputesThreeRounds(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 2); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"weights:", "graph:", "round 1,", "round 3,"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
