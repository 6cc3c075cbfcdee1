package llama

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// BenchmarkDecode measures one-token evaluations of the model in
// $LLAMA_BENCH_MODEL (skipped without it).
func BenchmarkDecode(b *testing.B) {
	path := os.Getenv("LLAMA_BENCH_MODEL")
	if path == "" {
		b.Skip("set LLAMA_BENCH_MODEL to a GGUF model")
	}
	m, err := Load(path, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Threads: benchThreads(), Context: 256, Batch: 32})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	tok := []int32{1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Pos() == s.ContextSize() {
			s.Rewind(0)
		}
		if _, err := s.Eval(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

func benchThreads() int {
	if n, err := strconv.Atoi(os.Getenv("LLAMA_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return 2
}

// BenchmarkBuildDecode measures building (not computing) a one-token graph.
func BenchmarkBuildDecode(b *testing.B) {
	path := os.Getenv("LLAMA_BENCH_MODEL")
	if path == "" {
		b.Skip("set LLAMA_BENCH_MODEL to a GGUF model")
	}
	m, err := Load(path, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(SessionOptions{Threads: 1, Context: 256, Batch: 32})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ctx, err := s.eng.context()
		if err != nil {
			b.Fatal(err)
		}
		m.build(ctx, s.kv, 1, 100, 1)
	}
}
