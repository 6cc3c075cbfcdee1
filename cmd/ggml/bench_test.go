package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
)

// The repacked mat-vec figure runs for every type the CPU_REPACK buffer can
// hold, whether or not this CPU repacks it, with and without a pool.
func TestBenchMulMatRepackedRuns(t *testing.T) {
	for _, threads := range []int{1, 2} {
		b := &bencher{threads: threads, runs: 2}
		if err := b.open(); err != nil {
			t.Fatal(err)
		}
		for _, ty := range []ggml.Type{ggml.TypeQ8_0, ggml.TypeQ4_0, ggml.TypeIQ4_NL, ggml.TypeQ4_K, ggml.TypeQ6_K, ggml.TypeF32} {
			if err := benchMulMatRepacked(ty, 256, 40)(b, ty.String()+" repacked"); err != nil {
				t.Errorf("%v, %d threads: %v", ty, threads, err)
			}
		}
		b.close()
	}
}

// `ggml bench -m` prints llama-bench's rows: a ppN and a tgN test per
// thread count, in its markdown table, CSV and JSON.
func TestBenchModelAsLlamaBench(t *testing.T) {
	model := writeModel(t, 1)
	stdout, stderr, status := ggmlCmd(t, "bench", "-m", model, "-p", "16", "-n", "4", "-r", "2", "-t", "1")
	if status != 0 {
		t.Fatalf("status %d, stderr %s", status, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 4 ||
		lines[0] != "| model                          |       size |     params | backend    | threads |          test |                  t/s |" ||
		lines[1] != "| ------------------------------ | ---------: | ---------: | ---------- | ------: | ------------: | -------------------: |" {
		t.Fatalf("table:\n%s", stdout)
	}
	row := regexp.MustCompile(`^\| llama \S+ F32 +\| +[0-9.]+ MiB \| +[0-9.]+ M \| CPU +\| +1 \| +(pp16|tg4) \| +[0-9.]+ ± [0-9.]+ \|$`)
	for i, test := range []string{"pp16", "tg4"} {
		if m := row.FindStringSubmatch(lines[2+i]); m == nil || m[1] != test {
			t.Errorf("row %d: %q", i, lines[2+i])
		}
	}

	stdout, stderr, status = ggmlCmd(t, "bench", "-m", model, "-p", "8", "-n", "0", "-r", "1", "-t", "1", "-o", "csv")
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if status != 0 || err != nil || len(recs) != 2 || recs[0][0] != "build_commit" {
		t.Fatalf("csv: status %d, %v\n%s%s", status, err, stdout, stderr)
	}
	got := map[string]string{}
	for i, k := range recs[0] {
		got[k] = recs[1][i]
	}
	if got["n_prompt"] != "8" || got["n_gen"] != "0" || got["n_threads"] != "1" || got["avg_ts"] == "" {
		t.Errorf("csv row: %v", got)
	}

	stdout, stderr, status = ggmlCmd(t, "bench", "-m", model, "-p", "0", "-n", "3", "-r", "2", "-t", "1", "-o", "json")
	var rows []struct {
		NPrompt   int       `json:"n_prompt"`
		NGen      int       `json:"n_gen"`
		AvgTs     float64   `json:"avg_ts"`
		SamplesTs []float64 `json:"samples_ts"`
	}
	if status != 0 || json.Unmarshal([]byte(stdout), &rows) != nil || len(rows) != 1 ||
		rows[0].NGen != 3 || rows[0].NPrompt != 0 || len(rows[0].SamplesTs) != 2 || !(rows[0].AvgTs > 0) {
		t.Errorf("json: status %d, %+v\n%s%s", status, rows, stdout, stderr)
	}
}

// -fa and -d as llama-bench's: a row per flash attention setting and
// depth, the fa column shown when flash attention is asked for, and the
// depth in the test's name and in the CSV.
func TestBenchModelFlashAttnAndDepth(t *testing.T) {
	model := writeModel(t, 1)
	stdout, stderr, status := ggmlCmd(t, "bench", "-m", model, "-p", "0", "-n", "2", "-d", "0,5", "-fa", "0,1", "-r", "1", "-t", "1")
	if status != 0 {
		t.Fatalf("status %d, stderr %s", status, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 6 || !strings.Contains(lines[0], "| threads | fa |          test |") {
		t.Fatalf("table:\n%s", stdout)
	}
	row := regexp.MustCompile(`\| +1 \| +([01]) \| +(tg2(?: @ d5)?) \| +[0-9.]+ ± [0-9.]+ \|$`)
	want := [][2]string{{"0", "tg2"}, {"0", "tg2 @ d5"}, {"1", "tg2"}, {"1", "tg2 @ d5"}}
	for i, w := range want {
		if m := row.FindStringSubmatch(lines[2+i]); m == nil || m[1] != w[0] || m[2] != w[1] {
			t.Errorf("row %d: %q, want fa %s, %s", i, lines[2+i], w[0], w[1])
		}
	}

	stdout, stderr, status = ggmlCmd(t, "bench", "-m", model, "-p", "3", "-n", "0", "-d", "4", "-fa", "1", "-r", "1", "-t", "1", "-o", "csv")
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if status != 0 || err != nil || len(recs) != 2 {
		t.Fatalf("csv: status %d, %v\n%s%s", status, err, stdout, stderr)
	}
	got := map[string]string{}
	for i, k := range recs[0] {
		got[k] = recs[1][i]
	}
	if got["n_prompt"] != "3" || got["n_depth"] != "4" || got["flash_attn"] != "true" {
		t.Errorf("csv row: %v", got)
	}

	for _, bad := range [][]string{{"-fa", "2"}, {"-d", "-1"}} {
		_, stderr, status := ggmlCmd(t, append([]string{"bench", "-m", model}, bad...)...)
		if status != 2 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("%v: status %d, stderr %q", bad, status, stderr)
		}
	}
}

func TestMeanStddev(t *testing.T) {
	if m, sd := meanStddev([]float64{2, 4, 4, 4, 5, 5, 7, 9}); m != 5 || math.Abs(sd-2.138089935299395) > 1e-12 {
		t.Errorf("mean %g, sd %g", m, sd)
	}
	if m, sd := meanStddev([]float64{3}); m != 3 || sd != 0 {
		t.Errorf("one value: %g %g", m, sd)
	}
}
