package ggml

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// parityDir returns the parity data directory ($GGML_PARITY_DIR, else
// ../shared/parity next to the module root), or skips the test saying why.
func parityDir(t testing.TB, sub ...string) string {
	t.Helper()
	dir := os.Getenv("GGML_PARITY_DIR")
	if dir == "" {
		dir = filepath.Join("..", "shared", "parity")
	}
	p := filepath.Join(append([]string{dir}, sub...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("parity data not found at %s (set GGML_PARITY_DIR): %v", p, err)
	}
	return p
}

var badEscape = regexp.MustCompile(`(^|[^\\])\\>`)

// readParityJSON decodes a parity JSON file. The reference's op symbols
// contain the graphviz escape `\>`, which is not valid JSON: it is read as a
// literal backslash.
func readParityJSON(t testing.TB, v any, path ...string) {
	t.Helper()
	b, err := os.ReadFile(parityDir(t, path...))
	if err != nil {
		t.Fatal(err)
	}
	s := badEscape.ReplaceAllString(string(b), `$1\\>`)
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%s: %v", filepath.Join(path...), err)
	}
}
