package ggml

/*
#include "glue.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-rpc.h"
#ifdef _WIN32
#include <winsock2.h>

// A socket handle of our own for the same connection (handles fit an int).
static int gg_dup_fd(int fd) {
	WSAPROTOCOL_INFOW info;
	if (WSADuplicateSocketW((SOCKET) (intptr_t) fd, GetCurrentProcessId(), &info) != 0) return -1;
	const SOCKET s = WSASocketW(FROM_PROTOCOL_INFO, FROM_PROTOCOL_INFO, FROM_PROTOCOL_INFO, &info, 0,
	                            WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
	return s == INVALID_SOCKET ? -1 : (int) (intptr_t) s;
}

static uint64_t gg_phys_mem(void) {
	MEMORYSTATUSEX ms;
	ms.dwLength = sizeof(ms);
	return GlobalMemoryStatusEx(&ms) ? (uint64_t) ms.ullTotalPhys : 0;
}
#else
#include <fcntl.h>
#include <unistd.h>

static int gg_dup_fd(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }
#endif

// Connects to endpoint and makes a backend for it; NULL with err set.
static struct lm_ggml_backend * gg_rpc_dial(const char * endpoint, char * err, size_t n) {
	lm_backend_clear_error();
	if (lm_ggml_backend_rpc_buffer_type(endpoint) == NULL) {
		snprintf(err, n, "%s", lm_backend_last_error());
		return NULL;
	}
	struct lm_ggml_backend * b = lm_ggml_backend_rpc_init(endpoint);
	if (b == NULL) snprintf(err, n, "%s", lm_backend_last_error());
	return b;
}

static bool gg_rpc_memory(const char * endpoint, uint64_t * free_mem, uint64_t * total_mem, char * err, size_t n) {
	lm_backend_clear_error();
	size_t f = 0, t = 0;
	lm_ggml_backend_rpc_get_device_memory(endpoint, &f, &t);
	*free_mem = f;
	*total_mem = t;
	if (lm_backend_last_error()[0] != '\0') {
		snprintf(err, n, "%s", lm_backend_last_error());
		return false;
	}
	return true;
}

// Physical memory of this machine (0 if unknown).
#ifndef _WIN32
static uint64_t gg_phys_mem(void) {
	const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (uint64_t) pages * (uint64_t) size : 0;
}
#endif
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// DialRPC connects to an RPC server (ggml rpc-server, or upstream ggml's
// rpc-server) at endpoint ("host:port") and returns a backend that keeps its
// buffers and computes its graphs there. Use it like any backend, alone or
// with a scheduler; Close frees the backend (the connection stays for
// buffers still in use).
//
// Connections are per endpoint: all backends and buffers of one endpoint
// share one, and requests on it run one at a time. If the server goes away
// or stalls past the I/O timeout (SetRPCTimeouts), operations on it fail
// with an error; the next use of the endpoint (a new DialRPC, a new buffer)
// connects again, and buffers of the lost connection stay unusable.
//
// ctx bounds the connection attempt.
func DialRPC(ctx context.Context, endpoint string) (*Backend, error) {
	initOnce()
	if ctx == nil {
		return nil, errors.New("ggml: DialRPC: nil context.Context")
	}
	type result struct {
		b   *C.struct_lm_ggml_backend
		err string
	}
	cep := C.CString(endpoint)
	ch := make(chan result, 1)
	go func() {
		defer C.free(unsafe.Pointer(cep))
		var msg [512]C.char
		b := C.gg_rpc_dial(cep, &msg[0], C.size_t(len(msg)))
		ch <- result{b, C.GoString(&msg[0])}
	}()
	select {
	case r := <-ch:
		if r.b == nil {
			return nil, fmt.Errorf("ggml: DialRPC %s: %s", endpoint, r.err)
		}
		return newBackend(r.b)
	case <-ctx.Done():
		go func() { // the attempt ends within the connect timeout; drop what it makes
			if r := <-ch; r.b != nil {
				C.lm_ggml_backend_free(r.b)
			}
		}()
		return nil, ctx.Err()
	}
}

// IsRPC reports whether b computes on an RPC server.
func (b *Backend) IsRPC() bool {
	p, done := b.use("Backend.IsRPC")
	defer done()
	return bool(C.lm_ggml_backend_is_rpc(p))
}

// RPCDeviceMemory returns the free and total memory the RPC server at
// endpoint reports. ctx bounds the request.
func RPCDeviceMemory(ctx context.Context, endpoint string) (free, total uint64, err error) {
	initOnce()
	if ctx == nil {
		return 0, 0, errors.New("ggml: RPCDeviceMemory: nil context.Context")
	}
	type result struct {
		free, total uint64
		err         string
	}
	cep := C.CString(endpoint)
	ch := make(chan result, 1)
	go func() {
		defer C.free(unsafe.Pointer(cep))
		var msg [512]C.char
		var f, t C.uint64_t
		ok := C.gg_rpc_memory(cep, &f, &t, &msg[0], C.size_t(len(msg)))
		r := result{free: uint64(f), total: uint64(t)}
		if !ok {
			r.err = C.GoString(&msg[0])
		}
		ch <- r
	}()
	select {
	case r := <-ch:
		if r.err != "" {
			return 0, 0, fmt.Errorf("ggml: RPCDeviceMemory %s: %s", endpoint, r.err)
		}
		return r.free, r.total, nil
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
}

// SetRPCTimeouts sets how long RPC clients of this process wait for a
// connection to be made, and for any progress of a request or its reply (a
// graph computed on the server counts as one wait). Zero or negative keeps
// the current value. The defaults are 10 s and 5 min.
func SetRPCTimeouts(connect, io time.Duration) {
	ms := func(d time.Duration) C.int {
		if d <= 0 {
			return 0
		}
		return C.int(min(max(d.Milliseconds(), 1), 1<<31-1))
	}
	C.lm_ggml_backend_rpc_set_timeouts(ms(connect), ms(io))
}

// ServeRPC serves b to RPC clients that connect to ln, each on a goroutine
// of its own, until ctx is done; it then closes ln, ends every client's
// connection and returns nil once all are gone (or the error that stopped
// ln.Accept). Clients may hold memBytes bytes of buffers in all (0: the
// machine's physical memory), which is also what they are told is free.
//
// The server checks everything a client sends (see the README's "Many
// machines"): a client that breaks the protocol is disconnected with a log
// line and the others carry on. Graphs are computed one at a time; b must
// not be used for anything else while it is served. ln should be a TCP
// listener (the clients' connections are handed to the C server as file
// descriptors).
func ServeRPC(ctx context.Context, ln net.Listener, b *Backend, memBytes uint64) error {
	switch {
	case ctx == nil:
		return errors.New("ggml: ServeRPC: nil context.Context")
	case ln == nil:
		return errors.New("ggml: ServeRPC: nil listener")
	case b == nil:
		return errors.New("ggml: ServeRPC: nil *Backend")
	}
	// Close of b stops the server and waits until it is done with b
	if b.closeLater.Load() || !b.life.pin() {
		return fmt.Errorf("ggml: ServeRPC: %w", ErrClosedBackend)
	}
	defer b.life.unpin()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer b.onClose(cancel)()
	if b.closeLater.Load() { // Close came between the pin and onClose
		cancel()
	}
	if memBytes == 0 {
		memBytes = uint64(C.gg_phys_mem())
	}
	memBytes = min(memBytes, uint64(^C.size_t(0)))
	srv := C.lm_rpc_server_new(b.b, C.size_t(memBytes), C.size_t(memBytes))
	if srv == nil {
		return errors.New("ggml: ServeRPC: cannot create the server")
	}
	defer runtime.KeepAlive(b)
	stopped := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(stopped)
		ln.Close()
		C.lm_rpc_server_stop(srv)
	})

	var clients sync.WaitGroup
	var err error
	for delay := time.Duration(0); ; {
		conn, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() != nil {
				break
			}
			var ne net.Error
			if errors.As(aerr, &ne) && ne.Timeout() || errors.Is(aerr, syscall.EMFILE) || errors.Is(aerr, syscall.ENFILE) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			err = fmt.Errorf("ggml: ServeRPC: %w", aerr)
			break
		}
		delay = 0
		fd, ferr := connFD(conn)
		conn.Close()
		if ferr != nil {
			logWarn("rpc-server: cannot take over a connection", "err", ferr)
			continue
		}
		clients.Go(func() { C.lm_rpc_server_serve(srv, C.int(fd)) }) // closes fd
	}
	C.lm_rpc_server_stop(srv)
	clients.Wait()
	if !stop() {
		<-stopped // srv is freed next: a stop already running must be over
	}
	C.lm_rpc_server_free(srv)
	if err == nil && b.closeLater.Load() {
		err = fmt.Errorf("ggml: ServeRPC: %w", ErrClosedBackend)
	}
	return err
}

// connFD is a descriptor of conn's socket that the caller owns (a
// duplicate: conn can be closed).
func connFD(conn net.Conn) (int, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("%T is not a socket", conn)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	cerr := raw.Control(func(s uintptr) { fd = int(C.gg_dup_fd(C.int(s))) })
	switch {
	case cerr != nil:
		return -1, cerr
	case fd < 0:
		return -1, errors.New("cannot duplicate the socket")
	}
	return fd, nil
}
