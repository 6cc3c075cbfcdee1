package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/cli"
)

// rpcServerCmd serves the CPU backend to RPC clients (ggml.DialRPC, or the
// reference's client: llama.cpp --rpc) until SIGINT or SIGTERM.
func rpcServerCmd(args []string) error {
	fs := flag.NewFlagSet("rpc-server", flag.ContinueOnError)
	host := fs.String("host", "127.0.0.1", "address to listen on; anything but loopback lets anyone who can reach it use this machine (README: Many machines)")
	port := fs.Int("port", 50052, "TCP port")
	mem := fs.Uint64("mem", 0, "MiB of memory clients may allocate in all (0: all of the machine's)")
	threads := fs.Int("threads", runtime.NumCPU(), "CPU threads per graph (0 or negative: all CPUs)")
	cli.Alias(fs, "threads", "t")
	if help, err := parseFlags(fs, args, "rpc-server [--host ADDR] [--port N] [--mem MiB] [-t|--threads N]",
		"Serves this machine's CPU backend to RPC clients until interrupted."); help || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *port < 0 || *port > 65535 {
		return cli.Usagef("rpc-server: port %d out of range", *port)
	}
	if *mem > 1<<44 {
		return cli.Usagef("rpc-server: --mem %d MiB is more than any machine has", *mem)
	}
	*threads = cli.Threads(*threads, func(msg string) { fmt.Fprintln(os.Stderr, "warning:", msg) })
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ggml.SetLogger(log)

	cpu, err := ggml.NewCPUBackend()
	if err != nil {
		return err
	}
	defer cpu.Close()
	if err := cpu.SetThreads(*threads); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	if ip := net.ParseIP(*host); ip == nil || !ip.IsLoopback() {
		log.Warn("rpc-server: listening beyond this machine; the protocol has no authentication or encryption", "host", *host)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	ggml.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil))) // not the probe's connection
	go func() { served <- ggml.ServeRPC(ctx, ln, cpu, *mem<<20) }()
	// what clients are told is free, asked as a client would
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	free, _, perr := ggml.RPCDeviceMemory(pctx, ln.Addr().String())
	cancel()
	ggml.SetLogger(log)
	if perr != nil {
		stop()
		<-served
		return fmt.Errorf("rpc-server: asking the server for its memory: %w", perr)
	}
	fmt.Printf("rpc-server: listening on %s, %.1f MiB free for clients, %d threads\n", ln.Addr(), float64(free)/(1<<20), *threads)
	err = <-served
	log.Info("rpc-server: stopped")
	return err
}
