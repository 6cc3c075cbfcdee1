package llama_test

import (
	"context"
	"fmt"
	"log"
	"sort"

	"github.com/ggml-go/ggml/llama"
)

// A semantic search: embed a few sentences and a query with a sentence
// encoder (a bert GGUF file such as bge-small-en-v1.5, as llama.cpp's
// converter writes it) and rank the sentences by their cosine similarity
// to the query.
func ExampleSession_Embeddings() {
	m, err := llama.Load("bge-small-en-v1.5-f16.gguf", llama.LoadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(llama.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	embed := func(text string) []float32 {
		v, err := s.Embeddings(ctx, m.Tokenize(text, true)) // [CLS] text [SEP], pooled as the file says
		if err != nil {
			log.Fatal(err)
		}
		return v
	}
	docs := []string{
		"The cat sat on the mat.",
		"Interest rates rose again this quarter.",
		"A kitten is asleep on the rug.",
	}
	query := embed("Where is the cat sleeping?")
	score := make(map[string]float64)
	for _, d := range docs {
		score[d] = llama.CosineSimilarity(query, embed(d))
	}
	sort.Slice(docs, func(i, j int) bool { return score[docs[i]] > score[docs[j]] })
	for _, d := range docs {
		fmt.Printf("%.3f  %s\n", score[d], d)
	}
}
