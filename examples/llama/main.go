// Command llama runs a llama-architecture GGUF model:
//
//	go run ./examples/llama -m MODEL.gguf -p "Once upon a time" -n 64
//
// It prints the prompt and the generated text as it comes, then the prompt
// and generation speeds on stderr. Flags, llama.cpp's: -m MODEL, -p PROMPT
// or -f FILE, -n N (-1: until the context is full), -t THREADS (0: all
// CPUs), -c CONTEXT, --temp T (0: greedy), --top-k K, --top-p P, --min-p P,
// -s SEED, --rpc HOST:PORT,... and --tensor-split W1,W2,... (the layers on
// ggml rpc-servers), and their long names (--model, --ctx-size, ...); -cnv
// (a chat: each line of stdin is a user message, formatted with the model's
// chat template; -sys SYSTEM, --chat-template NAME); -h for all. A bad flag
// exits with status 2, any other error with 1.
package main

import (
	"os"

	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/internal/llamacli"
)

func main() {
	err := llamacli.Run("llama", os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(cli.Report(os.Stderr, "llama", err))
}
