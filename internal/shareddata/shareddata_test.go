package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB whose Skipf and Fatalf record what they were
// told and stop the call, as the real ones stop the test.
type recorder struct {
	testing.TB
	how, msg string
}

type stopped struct{}

func (r *recorder) Helper() {}
func (r *recorder) Fatal(args ...any) {
	r.how, r.msg = "fail", fmt.Sprint(args...)
	panic(stopped{})
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.how, r.msg = "fail", fmt.Sprintf(format, args...)
	panic(stopped{})
}
func (r *recorder) Skipf(format string, args ...any) {
	r.how, r.msg = "skip", fmt.Sprintf(format, args...)
	panic(stopped{})
}

// dir calls Dir with a recorder: the path, or "skip: why" / "fail: why".
func dir(t *testing.T, elem ...string) string {
	r := &recorder{TB: t}
	p := func() (p string) {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stopped); !ok {
					panic(v)
				}
			}
		}()
		return Dir(r, elem...)
	}()
	if r.how != "" {
		return r.how + ": " + r.msg
	}
	return p
}

// Dir finds what exists, skips naming the folder when the shared data is
// absent, and fails instead when it is there, named, or CI is set.
func TestDirSkipsOnlyWhenTheSharedDataIsAbsent(t *testing.T) {
	tmp := t.TempDir()
	shared := filepath.Join(tmp, "shared")
	if err := os.MkdirAll(filepath.Join(shared, "parity", "quant"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GGML_PARITY_DIR", "")
	t.Setenv("GGML_VOCAB_DIR", "")
	t.Setenv("CI", "")

	t.Setenv("GGML_SHARED_DIR", shared)
	if got := dir(t, "parity", "quant"); got != filepath.Join(shared, "parity", "quant") {
		t.Errorf("present: %q", got)
	}
	if got := dir(t, "vocab"); !strings.HasPrefix(got, "fail: ") {
		t.Errorf("vocab missing from a shared folder that is there: %q, want a failure", got)
	}

	// a plain clone: no shared folder next to the module (the working
	// directory is a module of its own here)
	t.Setenv("GGML_SHARED_DIR", "")
	mod := filepath.Join(tmp, "clone", "pkg")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "clone", "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(mod)
	if got := Root(); got != filepath.Join(tmp, "shared") {
		t.Errorf("Root() = %q, want the shared folder next to the module root", got)
	}
	if err := os.RemoveAll(shared); err != nil {
		t.Fatal(err)
	}
	if got := dir(t, "parity", "quant", "q4_0.json"); got != "skip: ../shared/parity not found: a plain clone has no shared data (GGML_SHARED_DIR names its folder)" {
		t.Errorf("absent: %q", got)
	}
	if p, ok := Find("vocab"); ok || p != filepath.Join(tmp, "shared", "vocab") {
		t.Errorf("Find(vocab) = %q, %v", p, ok)
	}
	t.Setenv("CI", "true")
	if got := dir(t, "parity"); !strings.HasPrefix(got, "fail: ") || !strings.Contains(got, "CI is set") {
		t.Errorf("absent under CI: %q, want a failure", got)
	}
	t.Setenv("CI", "false")
	t.Setenv("GGML_VOCAB_DIR", filepath.Join(tmp, "nowhere"))
	if got := dir(t, "vocab", "x.gguf"); !strings.HasPrefix(got, "fail: ") {
		t.Errorf("a named folder that is missing: %q, want a failure", got)
	}
}
