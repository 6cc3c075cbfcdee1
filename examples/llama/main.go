// Command llama runs a llama-architecture GGUF model:
//
//	go run ./examples/llama -m MODEL.gguf -p "Once upon a time" -n 64
//
// It prints the prompt and the generated text as it comes, then the prompt
// and generation speeds on stderr. Flags: -m MODEL, -p PROMPT, -n N,
// -t THREADS, --temp T (0: greedy), --top-k K, --top-p P, --seed S,
// --rpc HOST:PORT,... and --tensor-split W1,W2,... (the layers on ggml
// rpc-servers, as llama.cpp's); -h for all.
package main

import (
	"fmt"
	"os"

	"github.com/ggml-go/ggml/internal/llamacli"
)

func main() {
	if err := llamacli.Run("llama", os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "llama:", err)
		os.Exit(1)
	}
}
