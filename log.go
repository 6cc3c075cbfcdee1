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

// SetLogger routes the core's log messages to l (nil restores slog.Default()).
// Levels map as DEBUG, INFO, WARN and ERROR; continuation lines are joined.
func SetLogger(l *slog.Logger) { logger.Store(l) }

func currentLogger() *slog.Logger {
	if l := logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

var logMu sync.Mutex
var logPending strings.Builder
var logLevel slog.Level

//export goLogCallback
func goLogCallback(level C.int, text *C.char, _ uintptr) {
	msg := C.GoString(text)
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
		currentLogger().Log(context.Background(), logLevel, line, "source", "ggml")
	}
}
