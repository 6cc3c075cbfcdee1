// Command ggml shows the ggml Go library at work and inspects GGUF files.
//
//	ggml demo              build and compute graphs, print results and speed
//	ggml info              build and CPU capabilities
//	ggml gguf inspect FILE keys and tensors of a GGUF file
//	ggml gguf dump --json FILE
//	ggml bench [-t N] [-runs N] [-only RE]  speed figures (conversions, mat-vec, GEMM, model)
//	ggml bench -m MODEL.gguf [-p N,..] [-n N,..] [-t N,..] [-r N] [-o md|csv|json]  as llama-bench
//	ggml rpc-server --host 127.0.0.1 --port 50052 --mem MiB
//	ggml run -m MODEL.gguf -p PROMPT -n N   run a llama-architecture model (llama.cpp's flags)
//	ggml quantize IN.gguf OUT.gguf TYPE     convert a model's weight matrices
//	ggml embed -m MODEL.gguf -p TEXT [-p TEXT ...]  embeddings of texts (as llama-embedding)
//	ggml train-llama [-o OUT.gguf]          train a small llama model on a shipped text
//	ggml help [COMMAND]                     this list, or a command's flags
//
// Every command takes -h. Flags take one dash or two and may follow the
// other arguments; an unknown one's error names the nearest known flag. A
// bad flag or argument exits with status 2, any other error with 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/cli"
)

type command struct {
	summary string
	run     func(args []string) error
}

var commands map[string]command

func init() {
	// assigned here: helpCmd refers to commands
	commands = map[string]command{
		"demo":        {"build and compute graphs on several threads, print results", demoCmd},
		"info":        {"print the build and the CPU capabilities", infoCmd},
		"gguf":        {"inspect a GGUF file or dump it as JSON", ggufCmd},
		"train":       {"train a small MLP with AdamW on generated data", trainCmd},
		"rpc-server":  {"serve this machine's CPU to RPC clients (ggml.DialRPC, llama.cpp --rpc)", rpcServerCmd},
		"bench":       {"time the kernels, a llama-shaped model and graph overhead; with -m a model, as llama-bench", benchCmd},
		"run":         {"run a llama-architecture GGUF model: -m MODEL -p PROMPT -n N (-cnv: chat on stdin)", runCmd},
		"embed":       {"print the embeddings of texts and their cosine similarities: -m MODEL -p TEXT [-p TEXT ...]", embedCmd},
		"quantize":    {"convert the weight matrices of a GGUF model: IN OUT TYPE", quantizeCmd},
		"train-llama": {"train a small llama model on a shipped public-domain text", trainLlamaCmd},
		"help":        {"print this list, or with a command's name its usage and flags", helpCmd},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ggml <command> [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\n`ggml help COMMAND` or `ggml COMMAND -h` shows a command's usage and flags.")
}

// helpCmd: ggml help [COMMAND]
func helpCmd(args []string) error {
	switch {
	case len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		usage(os.Stdout)
		return nil
	case len(args) > 1:
		return cli.Usagef("help: one command name expected, got %q", args)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return cli.Usagef("help: unknown command %q (`ggml help` lists them)", args[0])
	}
	if args[0] == "help" {
		usage(os.Stdout)
		return nil
	}
	return cmd.run([]string{"-h"})
}

// parseFlags parses a subcommand's flags (cli.Parse): its help is
// "usage: ggml SYNOPSIS", the text about, and the flags if it has any.
func parseFlags(fs *flag.FlagSet, args []string, synopsis, about string) (help bool, err error) {
	return cli.Parse(fs, args, os.Stdout, func(w io.Writer) {
		fmt.Fprintf(w, "usage: ggml %s\n", synopsis)
		if about != "" {
			fmt.Fprintf(w, "\n%s\n", about)
		}
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nflags:")
			cli.PrintFlags(fs, w)
		}
	})
}

// noArgs is the error for positional arguments a command does not take.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return cli.Usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// intFlag is an integer flag's name and value, for positive.
type intFlag struct {
	name string
	v    int
}

// positive returns a command-line error for the first flag below 1.
func positive(cmd string, flags ...intFlag) error {
	for _, f := range flags {
		if f.v < 1 {
			return cli.Usagef("%s: -%s %d: must be >= 1", cmd, f.name, f.v)
		}
	}
	return nil
}

// run runs the command line args (without the program name) and returns
// the exit status.
func run(args []string) int {
	if len(args) < 1 {
		usage(os.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(os.Stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "ggml: unknown command %q\n", args[0])
		usage(os.Stderr)
		return 2
	}
	return cli.Report(os.Stderr, "ggml", runRecovering(cmd, args[1:]))
}

// runRecovering runs cmd, turning the panic of an operation given
// arguments it cannot take (*ggml.OpError: a size from the command line
// that does not fit, say) into the command's error.
func runRecovering(cmd command, args []string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			var oe *ggml.OpError
			if !ok || !errors.As(e, &oe) {
				panic(r)
			}
			err = e
		}
	}()
	return cmd.run(args)
}

func main() { os.Exit(run(os.Args[1:])) }
