// Command ggml shows the ggml Go library at work and inspects GGUF files.
//
//	ggml demo              build and compute graphs, print results and speed
//	ggml info              build and CPU capabilities
//	ggml gguf inspect FILE keys and tensors of a GGUF file
//	ggml gguf dump --json FILE
//	ggml bench [-t N] [-runs N] [-only RE]  speed figures (conversions, mat-vec, GEMM, model)
//	ggml rpc-server --host 127.0.0.1 --port 50052 --mem MiB
//	ggml run -m MODEL.gguf -p PROMPT -n N   run a llama-architecture model
//	ggml quantize IN.gguf OUT.gguf TYPE     convert a model's weight matrices
//	ggml train-llama [-o OUT.gguf]          train a small llama model on a shipped text
package main

import (
	"fmt"
	"os"
	"sort"
)

type command struct {
	summary string
	run     func(args []string) error
}

var commands = map[string]command{
	"demo":        {"build and compute graphs on several threads, print results", demoCmd},
	"info":        {"print the build and the CPU capabilities", infoCmd},
	"gguf":        {"inspect a GGUF file or dump it as JSON", ggufCmd},
	"train":       {"train a small MLP with AdamW on generated data", trainCmd},
	"rpc-server":  {"serve this machine's CPU to RPC clients (ggml.DialRPC, llama.cpp --rpc)", rpcServerCmd},
	"bench":       {"time the kernels, a llama-shaped model and graph overhead", benchCmd},
	"run":         {"run a llama-architecture GGUF model: -m MODEL -p PROMPT -n N", runCmd},
	"quantize":    {"convert the weight matrices of a GGUF model: IN OUT TYPE", quantizeCmd},
	"train-llama": {"train a small llama model on a shipped public-domain text", trainLlamaCmd},
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ggml <command> [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-11s %s\n", n, commands[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "ggml: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := cmd.run(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "ggml:", err)
		os.Exit(1)
	}
}
