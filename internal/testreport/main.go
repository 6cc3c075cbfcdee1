// Command testreport reads `go test -json` on its standard input and writes
// what plain `go test` would have (each package's ok/FAIL line, the output
// of failed tests, build errors), then one last line counting the skipped
// tests by reason:
//
//	skipped 25 tests: ../shared/parity not found (20), ../shared/vocab not found (5)
//
// A reason is the skip message up to its first ": " (the rest is detail
// that `go test -v` shows). ./build.sh test pipes the test suite through
// it, so that a run over a plain clone says what it did not test. Its exit
// status is 1 when a test or package failed, else 0 (go test's own status
// is the pipe's other half).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is a line of `go test -json` (cmd/test2json's TestEvent; build
// events carry ImportPath instead of Package).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// logLine is a line t.Log, t.Skip and friends write: indented, file:line: text.
var logLine = regexp.MustCompile(`^\s+\S+\.go:\d+: (.*)$`)

type report struct {
	out     io.Writer
	buf     map[string][]string // output of each running test, by package and name
	skipped map[string]int      // tests skipped, by reason
	failed  bool
}

func newReport(out io.Writer) *report {
	return &report{out: out, buf: map[string][]string{}, skipped: map[string]int{}}
}

// progress lines of -v that plain go test does not print
func isProgress(s string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- SKIP"} {
		if strings.HasPrefix(strings.TrimSpace(s), p) {
			return true
		}
	}
	return false
}

func (r *report) event(e event) {
	key := e.Package + "\x00" + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(r.out, e.Output)
	case e.Action == "build-fail":
		r.failed = true
	case e.Test == "":
		if e.Action == "fail" {
			r.failed = true
			r.flush(e.Package) // tests that never ended: the binary died (a panic, a timeout)
		}
		if e.Action == "output" && e.Output != "PASS\n" && !isProgress(e.Output) {
			fmt.Fprint(r.out, e.Output)
		}
	case e.Action == "output":
		r.buf[key] = append(r.buf[key], e.Output)
	case e.Action == "skip":
		r.skipped[skipReason(r.buf[key])]++
		delete(r.buf, key)
	case e.Action == "fail":
		r.failed = true
		for _, l := range r.buf[key] {
			if !isProgress(l) || strings.Contains(l, "--- FAIL") {
				fmt.Fprint(r.out, l)
			}
		}
		delete(r.buf, key)
	case e.Action == "pass":
		delete(r.buf, key)
	}
}

// flush prints the output of the tests of pkg still running.
func (r *report) flush(pkg string) {
	var keys []string
	for k := range r.buf {
		if strings.HasPrefix(k, pkg+"\x00") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, l := range r.buf[k] {
			fmt.Fprint(r.out, l)
		}
		delete(r.buf, k)
	}
}

// skipReason is the last message the test logged (its t.Skip's), up to
// the first ": ".
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if m := logLine.FindStringSubmatch(strings.TrimRight(lines[i], "\n")); m != nil {
			reason, _, _ := strings.Cut(m[1], ": ")
			return reason
		}
	}
	return "no reason given"
}

// summary is the closing line.
func (r *report) summary() string {
	n := 0
	var reasons []string
	for reason, k := range r.skipped {
		n += k
		reasons = append(reasons, reason)
	}
	sort.Slice(reasons, func(a, b int) bool {
		ka, kb := r.skipped[reasons[a]], r.skipped[reasons[b]]
		if ka != kb {
			return ka > kb
		}
		return reasons[a] < reasons[b]
	})
	s := fmt.Sprintf("skipped %d tests", n)
	if n == 1 {
		s = "skipped 1 test"
	}
	for i, reason := range reasons {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		s += fmt.Sprintf("%s%s (%d)", sep, reason, r.skipped[reason])
	}
	return s
}

func main() {
	r := newReport(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Println(sc.Text()) // not an event: go test's own words
			continue
		}
		r.event(e)
	}
	fmt.Println(r.summary())
	if r.failed {
		os.Exit(1)
	}
}
