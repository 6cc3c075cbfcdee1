package ggml

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
)

var logger atomic.Pointer[slog.Logger]

// SetLogger routes the core's log messages to l, at every level l's handler
// enables; levels map as DEBUG, INFO, WARN and ERROR, and continuation lines
// are joined. Until SetLogger is called with a non-nil l (and again after
// SetLogger(nil)) the package is quiet: only WARN and ERROR messages reach
// slog.Default(), while DEBUG and INFO ones (an RPC server's connections, a
// backend's choices) are dropped.
func SetLogger(l *slog.Logger) { logger.Store(l) }

// currentLogger is where the core's messages go and the lowest level that
// goes there.
func currentLogger() (*slog.Logger, slog.Level) {
	if l := logger.Load(); l != nil {
		return l, slog.LevelDebug
	}
	return slog.Default(), slog.LevelWarn
}

var logMu sync.Mutex
var logPending strings.Builder
var logLevel slog.Level

//export goLogCallback
func goLogCallback(level C.int, text *C.char, _ uintptr) {
	coreLog(int(level), C.GoString(text))
}

// coreLog takes one piece of a message of the core at its level (ggml's
// enum lm_ggml_log_level: 1 debug ... 4 error, 5 continuation).
func coreLog(level int, msg string) {
	logMu.Lock()
	defer logMu.Unlock()
	switch level {
	case 1:
		logLevel = slog.LevelDebug
	case 2:
		logLevel = slog.LevelInfo
	case 3:
		logLevel = slog.LevelWarn
	case 4:
		logLevel = slog.LevelError
	case 5: // continuation of the previous message
	default:
		logLevel = slog.LevelInfo
	}
	logPending.WriteString(msg)
	// The core writes lines that end in "\n"; emit one record per line.
	if strings.HasSuffix(msg, "\n") {
		line := strings.TrimRight(logPending.String(), "\n")
		logPending.Reset()
		if l, least := currentLogger(); logLevel >= least {
			l.Log(context.Background(), logLevel, line, "source", "ggml")
		}
	}
}

// logWarn logs a warning of the Go side as the core's messages go.
func logWarn(msg string, args ...any) {
	l, _ := currentLogger()
	l.Warn(msg, append(args, "source", "ggml")...)
}
