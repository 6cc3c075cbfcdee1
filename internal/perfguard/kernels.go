package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// kernelRow is one mul_mat shape of bench-ab's K sweep: the rates
// (GFLOPS) of library A (new) and B (old), round by round.
type kernelRow struct {
	name     string
	new, old []float64
}

// runKernels runs bench-ab's K sweep with the new library as A and the old
// as B, in one process (the calls alternate), and returns its rows.
func runKernels(benchAB, newSO, oldSO string, rounds, threads int, ks, types []string) ([]kernelRow, error) {
	cmd := exec.Command(benchAB, "-r", strconv.Itoa(rounds), "-t", strconv.Itoa(threads),
		"-k", strings.Join(ks, ","), "-y", strings.Join(types, ","), "-raw", "1", newSO, oldSO)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", benchAB, err)
	}
	return parseBenchRaw(string(out))
}

// parseBenchRaw reads the "raw<TAB>row<TAB>library<TAB>rates" lines of
// bench-ab -raw 1 (library 0 is the new side, 1 the old), in the order of
// the rows.
func parseBenchRaw(out string) ([]kernelRow, error) {
	var rows []kernelRow
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if f[0] != "raw" {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("bench-ab: bad raw line %q", sc.Text())
		}
		var rates []float64
		for _, s := range strings.Fields(f[3]) {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("bench-ab: bad rate in %q: %v", sc.Text(), err)
			}
			rates = append(rates, x)
		}
		if len(rows) == 0 || rows[len(rows)-1].name != f[1] {
			rows = append(rows, kernelRow{name: f[1]})
		}
		r := &rows[len(rows)-1]
		switch f[2] {
		case "0":
			r.new = rates
		case "1":
			r.old = rates
		default:
			return nil, fmt.Errorf("bench-ab: library %s in %q: two were loaded", f[2], sc.Text())
		}
	}
	return rows, sc.Err()
}
