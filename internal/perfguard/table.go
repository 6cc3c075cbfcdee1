package main

import (
	"fmt"
	"io"
)

// table prints the cases as they finish, a row each, and counts the
// verdicts.
type table struct {
	w              io.Writer
	slower, failed int
}

const rowFormat = "%-40s %-8s %-24s %-24s %-22s %s\n"

func (t *table) header(oldName string) {
	fmt.Fprintf(t.w, "old = %s; new = the working tree. Rates are medians [min-max] over the rounds; new/old is the median [min-max] of the rounds' ratios.\n", oldName)
	fmt.Fprintf(t.w, rowFormat, "case", "unit", "old", "new", "new/old", "verdict")
}

// row prints one case; err is a side's failure (a failed new side counts
// as a failure of the guard, an old side's is only shown).
func (t *table) row(name, unit string, old, new []float64, err error, newFailed bool) {
	if err != nil {
		v := "old side failed (not judged)"
		if newFailed {
			v = "FAILED"
			t.failed++
		}
		fmt.Fprintf(t.w, rowFormat, name, unit, "", "", "", v+": "+err.Error())
		return
	}
	s, err := summarize(old, new)
	if err != nil {
		t.failed++
		fmt.Fprintf(t.w, rowFormat, name, unit, "", "", "", "FAILED: "+err.Error())
		return
	}
	if s.verdict == verdictSlower {
		t.slower++
	}
	fmt.Fprintf(t.w, rowFormat, name, unit,
		fmt.Sprintf("%s [%s-%s]", num(s.oldMed), num(s.oldLo), num(s.oldHi)),
		fmt.Sprintf("%s [%s-%s]", num(s.newMed), num(s.newLo), num(s.newHi)),
		fmt.Sprintf("%.3f [%.3f-%.3f]", s.ratio, s.ratioLo, s.ratioHi),
		s.verdict)
}

// num prints a rate with three or four significant digits.
func num(x float64) string {
	switch {
	case x >= 1000:
		return fmt.Sprintf("%.0f", x)
	case x >= 100:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// footer sums up; it returns whether the guard passed.
func (t *table) footer() bool {
	switch {
	case t.slower == 0 && t.failed == 0:
		fmt.Fprintf(t.w, "perfguard: no case slower (a SLOWER case has new/old below %.2f and the two sides' ranges apart)\n", minRatio)
		return true
	default:
		fmt.Fprintf(t.w, "perfguard: %d case(s) SLOWER (new/old below %.2f with the ranges apart), %d FAILED\n", t.slower, minRatio, t.failed)
		return false
	}
}
