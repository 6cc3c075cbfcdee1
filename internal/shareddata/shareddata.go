// Package shareddata finds the project's shared reference data for tests:
// the folder ../shared next to the module root, which a plain clone lacks
// (parity data of upstream ggml in parity/, tokenizer vocabularies and
// vectors in vocab/, C tools such as llama_run.c in tools/).
//
// Every test that reads it asks Dir, so that a missing folder is said the
// same way everywhere: the test skips with the reason "../shared/NAME not
// found", which ./build.sh test counts. Where the data is expected, a
// missing file is a failure instead of a skip: when the shared folder exists
// (a test must not skip over a part of it that went missing), when the
// environment names the folder, or when CI is set.
//
// The environment can name the folders: GGML_SHARED_DIR the shared folder,
// GGML_PARITY_DIR its parity folder (and, when GGML_SHARED_DIR is not set,
// the shared folder as its parent), GGML_VOCAB_DIR its vocab folder.
package shareddata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The folders the environment may name, by their name under the shared folder.
var envDirs = map[string]string{
	"parity": "GGML_PARITY_DIR",
	"vocab":  "GGML_VOCAB_DIR",
}

// Root returns the shared folder: $GGML_SHARED_DIR, else the parent of
// $GGML_PARITY_DIR, else ../shared next to the module root (the first
// folder up from the working directory with a go.mod). It may not exist.
func Root() string {
	root, _ := root()
	return root
}

// root also says whether the environment named the folder.
func root() (string, bool) {
	if d := os.Getenv("GGML_SHARED_DIR"); d != "" {
		return d, true
	}
	if d := os.Getenv("GGML_PARITY_DIR"); d != "" {
		return filepath.Dir(d), true
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared"), false
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(d), "shared"), false
		}
		if filepath.Dir(d) == d {
			return filepath.Join(filepath.Dir(dir), "shared"), false
		}
	}
}

// Path returns where elem (a folder or file under the shared folder, e.g.
// "parity", "quant") is, whether or not it exists, and whether the
// environment named the folder it is in.
func Path(elem ...string) (string, bool) {
	if len(elem) > 0 {
		if env, ok := envDirs[elem[0]]; ok {
			if d := os.Getenv(env); d != "" {
				return filepath.Join(append([]string{d}, elem[1:]...)...), true
			}
		}
	}
	r, named := root()
	return filepath.Join(append([]string{r}, elem...)...), named
}

// Find returns the path of elem under the shared folder and whether it
// exists, never skipping nor failing: for data a test can do without (seeds
// of a fuzz target).
func Find(elem ...string) (string, bool) {
	p, _ := Path(elem...)
	_, err := os.Stat(p)
	return p, err == nil
}

// Dir returns the path of elem under the shared folder (a folder or a file:
// Dir(t, "parity"), Dir(t, "parity", "quant"), Dir(t, "vocab",
// "ggml-vocab-gpt-2.gguf"), Dir(t, "tools", "llama_run.c")). When it does
// not exist, the test skips with the reason "../shared/NAME not found"
// (NAME: elem[0]) if the data is not expected here, and fails otherwise
// (see the package comment).
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	if len(elem) == 0 {
		t.Fatal("shareddata.Dir: which folder?")
	}
	p, named := Path(elem...)
	_, err := os.Stat(p)
	if err == nil {
		return p
	}
	r, _ := root()
	_, rootErr := os.Stat(r)
	switch {
	case named:
		t.Fatalf("%s not found, though the environment names its folder: %v", p, err)
	case rootErr == nil:
		t.Fatalf("%s not found, though the shared folder %s is there: a test that needs it must not skip", p, r)
	case ci():
		t.Fatalf("%s not found, and CI is set: a test that needs the shared data must not skip", p)
	}
	t.Skipf("../shared/%s not found: a plain clone has no shared data (GGML_SHARED_DIR names its folder)", elem[0])
	return ""
}

// ci reports whether CI is set (to anything but false or 0), as CI systems do.
func ci() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}
