package llama_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ggml-go/ggml/llama"
)

// The whole life of a model: learn a vocabulary from text, make a small
// model, train it, save it as a llama GGUF file, load it back and generate
// from a prompt. A real model file (llama.cpp's GGUF) starts at Load.
func Example() {
	text := strings.Repeat("The Rays of Light are refracted at the surface of the Glass, "+
		"and the Colours of the Prism are painted on the Paper in the dark Chamber. ", 40)
	vocab, err := llama.TrainVocab(text, 0, 20) // SentencePiece-style pieces of the text
	if err != nil {
		panic(err)
	}
	m, err := llama.NewModel(llama.Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 64, NCtxTrain: 32}, vocab,
		llama.ModelOptions{Tied: true, Seed: 1})
	if err != nil {
		panic(err)
	}
	ids := vocab.Tokenize(text, false, false)
	var first, last float32
	err = llama.Train(context.Background(), m, ids, llama.TrainOptions{Seq: 16, Batch: 4, Steps: 30, LR: 3e-3, Seed: 1, Threads: 1,
		OnStep: func(step int, loss float32) error {
			if step == 1 {
				first = loss
			}
			last = loss
			return nil
		}})
	if err != nil {
		panic(err)
	}
	fmt.Println("training lowered the loss:", last < first)

	dir, err := os.MkdirTemp("", "llama-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	if err := m.Save(path, "tiny"); err != nil {
		panic(err)
	}
	m.Close()

	model, err := llama.Load(path, llama.LoadOptions{})
	if err != nil {
		panic(err)
	}
	defer model.Close()
	s, err := model.NewSession(llama.SessionOptions{Threads: 1})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	prompt := model.Tokenize("The Rays of Light", true)
	var out []byte
	st, err := s.Generate(context.Background(), prompt, llama.GenerateOptions{
		MaxTokens: 8,
		Sampler:   llama.SamplerOptions{Temp: 0}, // greedy
		OnToken:   func(id int32) error { out = append(out, model.Piece(id)...); return nil },
		IgnoreEOG: true,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("prompt tokens:", st.PromptTokens, "generated:", len(st.Tokens), "text bytes > 0:", len(out) > 0)
	// Output:
	// training lowered the loss: true
	// prompt tokens: 19 generated: 8 text bytes > 0: true
}
