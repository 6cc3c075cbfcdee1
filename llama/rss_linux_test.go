package llama

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssKB reads the resident set size of the process.
func rssKB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestRSSFlat generates with a session and checks that memory does not
// grow with the tokens: the compute memory is reserved once.
func TestRSSFlat(t *testing.T) {
	path := smallModel(t, Hparams{NEmbd: 64, NLayer: 2, NHead: 4, NFF: 128, NCtxTrain: 1024}, false)
	m, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gen := func(n int) {
		if _, err := s.Generate(context.Background(), []int32{1}, GenerateOptions{MaxTokens: n, IgnoreEOG: true,
			Sampler: SamplerOptions{Temp: 1, Seed: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	gen(100)
	before := rssKB(t)
	gen(800)
	after := rssKB(t)
	t.Logf("RSS after 100 tokens %d kB, after 900 %d kB", before, after)
	if after-before > 4096 {
		t.Errorf("RSS grew by %d kB over 800 tokens", after-before)
	}
}
