// rpc-sock.h - the TCP plumbing of the RPC backend (POSIX sockets; Winsock
// on Windows). Internal.
//
// Every blocking step waits with poll() and a timeout, so that a peer that
// vanishes or stalls turns into an error instead of a hang. Timeouts count
// from the last progress (an idle timeout); <= 0 waits forever.
#pragma once

#include "rpc-wire.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef _WIN32
// Sockets are Winsock SOCKET handles, kept in an int as POSIX descriptors
// are: handle values fit in 32 bits, and INVALID_SOCKET converts to -1 and
// back. Closing and shutting one down are Winsock calls.
void lm_rpc_close(int fd);
void lm_rpc_shutdown(int fd);
// WSAStartup, once per process: before any socket call of C code that Go's
// runtime did not start (C programs).
bool lm_rpc_wsa_init(lm_rpc_why why);
#else
#define lm_rpc_close(fd) close(fd)
#define lm_rpc_shutdown(fd) shutdown((fd), SHUT_RDWR)
#endif

// Splits "host:port" or "[v6addr]:port". False if either part is missing or
// does not fit.
bool lm_rpc_split_endpoint(const char * endpoint, char * host, size_t host_len, char * port, size_t port_len);

// A connected TCP socket (set up as by lm_rpc_sock_setup), or -1 with why.
int lm_rpc_connect(const char * endpoint, int timeout_ms, lm_rpc_why why);

// A listening TCP socket bound to endpoint, or -1 with why.
int lm_rpc_listen(const char * endpoint, lm_rpc_why why);

// The local port of a bound socket (0 on error).
int lm_rpc_local_port(int fd);

// Blocking mode, no Nagle delay, no SIGPIPE on writes to a closed peer.
void lm_rpc_sock_setup(int fd);

// All n bytes, or false with why (peer closed, error, timeout). A socket
// shut down by another thread (shutdown(2)) ends a wait at once.
bool lm_rpc_send_all(int fd, const void * p, size_t n, int timeout_ms, lm_rpc_why why);
bool lm_rpc_recv_all(int fd, void * p, size_t n, int timeout_ms, lm_rpc_why why);

// Whether a socket that is idle between requests can be read right now: for
// a peer that only ever answers, that means it closed the connection (or
// broke the protocol). Does not wait; a signal arriving meanwhile does not
// make it say so.
bool lm_rpc_readable_now(int fd);

#ifdef __cplusplus
}
#endif
