package llamacli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/llama"
)

// splitOptions parses --rpc HOST:PORT[,HOST:PORT...] and --tensor-split
// W1,W2,... (llama.cpp's spelling and meaning; one more weight than servers
// gives the local CPU a share); nil when no server is given.
func splitOptions(rpc, tensorSplit string) (*llama.SplitOptions, error) {
	if rpc == "" {
		if tensorSplit != "" {
			return nil, cli.Usagef("--tensor-split %q without --rpc servers to split over", tensorSplit)
		}
		return nil, nil
	}
	o := &llama.SplitOptions{}
	for _, ep := range strings.Split(rpc, ",") {
		ep = strings.TrimSpace(ep)
		host, port, err := net.SplitHostPort(ep)
		if err != nil || host == "" || port == "" {
			return nil, cli.Usagef("--rpc: %q is not HOST:PORT", ep)
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return nil, cli.Usagef("--rpc: %q: port out of range (1 to 65535)", ep)
		}
		o.RPC = append(o.RPC, ep)
	}
	if tensorSplit != "" {
		for _, f := range strings.FieldsFunc(tensorSplit, func(r rune) bool { return r == ',' || r == '/' }) {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, cli.Usagef("--tensor-split: %q is not a weight (a number >= 0)", f)
			}
			o.TensorSplit = append(o.TensorSplit, v)
		}
		if n := len(o.TensorSplit); n != len(o.RPC) && n != len(o.RPC)+1 {
			return nil, cli.Usagef("--tensor-split has %d weights for %d --rpc servers (one per server, and optionally one more for this machine)", n, len(o.RPC))
		}
	}
	return o, nil
}

// rpcLoadError is Load's error err, or when a --rpc server cannot be
// reached, one line naming it once ("--rpc 127.0.0.1:1: connection
// refused") instead of the layers of messages a failed connection gives.
func rpcLoadError(err error, split *llama.SplitOptions) error {
	if split == nil {
		return err
	}
	for _, ep := range split.RPC {
		c, derr := net.DialTimeout("tcp", ep, 10*time.Second)
		if derr != nil {
			return fmt.Errorf("--rpc %s: %s", ep, dialReason(derr))
		}
		c.Close()
	}
	return err
}

// dialReason is the innermost words of a failed dial ("connection
// refused", "no such host", "i/o timeout").
func dialReason(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Err
	}
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}

// printDevices prints where each layer went and what each device holds.
func printDevices(w io.Writer, s *llama.Session) {
	for i, d := range s.Devices() {
		name := "local CPU"
		if i > 0 {
			name = "RPC " + d.Name
		}
		layers := "none"
		switch {
		case d.End == d.First+1:
			layers = strconv.Itoa(d.First)
		case d.End > d.First:
			layers = fmt.Sprintf("%d-%d", d.First, d.End-1)
		}
		fmt.Fprintf(w, "device %s: layers %s; weights %.1f MiB, KV cache %.1f MiB, compute buffer %.1f MiB",
			name, layers, mib(d.WeightBytes), mib(d.KVBytes), mib(d.ComputeBytes))
		if d.FreeBytes > 0 {
			fmt.Fprintf(w, " (%.1f MiB free at load)", float64(d.FreeBytes)/(1<<20))
		}
		fmt.Fprintln(w)
	}
}

// quietCore keeps the core's log lines (connection warnings and the errors
// that follow a lost server) off stderr: the error Run returns says what
// happened in one line. It returns the function that restores the logger.
func quietCore() func() {
	ggml.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return func() { ggml.SetLogger(nil) }
}
