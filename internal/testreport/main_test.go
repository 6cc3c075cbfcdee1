package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A stream of go test -json: package lines and failures pass through as go
// test prints them, passing tests' output does not, and skips are counted
// by reason.
func TestReportCountsSkipsByReason(t *testing.T) {
	events := []event{
		{Action: "start", Package: "p"},
		{Action: "run", Package: "p", Test: "TestA"},
		{Action: "output", Package: "p", Test: "TestA", Output: "=== RUN   TestA\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "    a_test.go:9: a log line\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "    a_test.go:10: ../shared/parity not found: a plain clone has no shared data\n"},
		{Action: "output", Package: "p", Test: "TestA", Output: "--- SKIP: TestA (0.00s)\n"},
		{Action: "skip", Package: "p", Test: "TestA"},
		{Action: "output", Package: "p", Test: "TestB/x", Output: "    b_test.go:3: ../shared/parity not found: again\n"},
		{Action: "skip", Package: "p", Test: "TestB/x"},
		{Action: "output", Package: "p", Test: "TestB", Output: "    b_test.go:5: passing noise\n"},
		{Action: "pass", Package: "p", Test: "TestB"},
		{Action: "output", Package: "p", Test: "TestC", Output: "--- SKIP: TestC (0.00s)\n"},
		{Action: "skip", Package: "p", Test: "TestC"},
		{Action: "output", Package: "p", Test: "TestD", Output: "=== RUN   TestD\n"},
		{Action: "output", Package: "p", Test: "TestD", Output: "    d_test.go:7: broken\n"},
		{Action: "output", Package: "p", Test: "TestD", Output: "--- FAIL: TestD (0.00s)\n"},
		{Action: "fail", Package: "p", Test: "TestD"},
		{Action: "output", Package: "p", Output: "FAIL\n"},
		{Action: "output", Package: "p", Output: "FAIL\tp\t0.1s\n"},
		{Action: "fail", Package: "p"},
		{Action: "output", Package: "q", Output: "PASS\n"},
		{Action: "output", Package: "q", Output: "ok  \tq\t0.2s\n"},
		{Action: "pass", Package: "q"},
	}
	var b strings.Builder
	r := newReport(&b)
	for _, e := range events {
		// through JSON, as the command reads them
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back event
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		r.event(back)
	}
	b.WriteString(r.summary() + "\n")
	want := "    d_test.go:7: broken\n--- FAIL: TestD (0.00s)\nFAIL\nFAIL\tp\t0.1s\nok  \tq\t0.2s\n" +
		"skipped 3 tests: ../shared/parity not found (2), no reason given (1)\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	if !r.failed {
		t.Fatal("a failed package was not noticed")
	}
}
