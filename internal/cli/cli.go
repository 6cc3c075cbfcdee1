// Package cli holds what the repository's commands share about their
// command lines: -h handling, one-line flag errors and error messages
// without a doubled prefix.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
)

// ErrUsage is wrapped by the errors that are about the command line itself
// (a bad flag or argument): a main function may then add a hint such as
// "-h for help".
var ErrUsage = errors.New("usage")

// usageError is a command-line error: its text is the message alone.
type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

// Usagef returns an error about the command line (errors.Is(err, ErrUsage)).
func Usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// Parse parses args with fs; flags may also follow the positional
// arguments (fs.Args() holds those, in order), and "--" ends the flags.
// The flag package's own printing is silenced: -h, -help and --help print
// usage to stdout and return help == true (the command then exits 0); a
// bad flag gives a one-line error (ErrUsage) instead of the flag list, an
// unknown one with the nearest known name. usage writes the whole help
// text (it may call PrintDefaults or PrintFlags, which Parse points at the
// same writer).
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer, usage func(w io.Writer)) (help bool, err error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err = parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		PrintUsage(fs, stdout, usage)
		return true, nil
	}
	if err != nil {
		msg := err.Error()
		const undefined = "flag provided but not defined: "
		if name, ok := strings.CutPrefix(msg, undefined); ok {
			if s := suggest(fs, name); s != "" {
				msg += " (did you mean " + s + "?)"
			}
		}
		return false, &usageError{msg}
	}
	return false, nil
}

// PrintUsage writes usage to w, with fs's defaults going to w too.
func PrintUsage(fs *flag.FlagSet, w io.Writer, usage func(w io.Writer)) {
	fs.SetOutput(w)
	usage(w)
	fs.SetOutput(io.Discard)
}

// Message is the line a command prints for err: "prog: text", where a text
// that already starts with "prog:" (an error of the package of the same
// name, as "llama: ...") is not prefixed again.
func Message(prog string, err error) string {
	s := err.Error()
	if strings.HasPrefix(s, prog+":") {
		return s
	}
	return prog + ": " + s
}

// Threads applies llama.cpp's rule for a thread count: 0 or negative means
// all CPUs. More threads than CPUs are capped to the CPUs, and warn (if not
// nil) is called with what was done: they would only compete for the same
// cores (and hundreds of threads take seconds per token).
func Threads(n int, warn func(msg string)) int {
	cpus := runtime.NumCPU()
	if n <= 0 {
		return cpus
	}
	if n > cpus {
		if warn != nil {
			warn(fmt.Sprintf("-t %d: this machine has %d CPUs; using %d threads", n, cpus, cpus))
		}
		return cpus
	}
	return n
}

// Report prints err's message for prog (see Message) to w and returns the
// exit status: 0 for nil, 2 for a command-line error (ErrUsage), 1 for any
// other.
func Report(w io.Writer, prog string, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(w, Message(prog, err))
	if errors.Is(err, ErrUsage) {
		return 2
	}
	return 1
}

// CheckFile returns an error naming path if it is not a regular file that
// exists (a directory, say), before a reader gets to give a system call's
// less telling error ("mmap: no such device").
func CheckFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s: %w", path, pe.Err) // without the system call's name
		}
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory, not a GGUF file", path)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	return nil
}
