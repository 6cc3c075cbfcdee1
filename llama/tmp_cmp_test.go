package llama

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestTmpCompare(t *testing.T) {
	m, err := Load("/tmp/llw/tiny.gguf", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 64, F32KV: true})
	if err != nil {
		t.Fatal(err)
	}
	lg, err := s.Eval(context.Background(), []int32{1, 5, 9, 200, 17})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("/tmp/llw/last.txt")
	mx := 0.0
	for i, l := range strings.Fields(string(b)) {
		v, _ := strconv.ParseFloat(l, 64)
		d := v - float64(lg[i])
		if d < 0 {
			d = -d
		}
		mx = max(mx, d)
	}
	fmt.Println("maxdiff", mx)
}
