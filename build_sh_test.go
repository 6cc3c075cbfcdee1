package ggml

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// build.sh lists its targets once, in its header (which it prints when run
// without one): every target it runs is there, and nothing else is.
func TestBuildShHeaderListsEveryTarget(t *testing.T) {
	b, err := os.ReadFile("build.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^#   \./build\.sh ([a-z0-9]+)`).FindAllStringSubmatch(s, -1) {
		listed = append(listed, m[1])
	}
	i := strings.LastIndex(s, `case "${1:-}" in`)
	if i < 0 {
		t.Fatal(`build.sh: no case "${1:-}" in`)
	}
	var run []string
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z0-9|-]+)\)$`).FindAllStringSubmatch(s[i:], -1) {
		for _, name := range strings.Split(m[1], "|") {
			if name != "help" && !strings.HasPrefix(name, "-") {
				run = append(run, name)
			}
		}
	}
	slices.Sort(listed)
	slices.Sort(run)
	if len(listed) == 0 || !slices.Equal(listed, run) {
		t.Fatalf("build.sh's header lists %v, its case runs %v", listed, run)
	}
}
