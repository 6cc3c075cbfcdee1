// rpc-sock.c - TCP plumbing of the RPC backend (see rpc-sock.h).
// The POSIX names this file uses (getaddrinfo, clock_gettime, ...) are
// declared under -std=c11 only when asked for; on macOS _POSIX_C_SOURCE
// alone would hide SO_NOSIGPIPE, hence _DARWIN_C_SOURCE.
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DARWIN_C_SOURCE
#define _DARWIN_C_SOURCE
#endif
#include "rpc-sock.h"

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#else
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef MSG_NOSIGNAL
#define LM_SEND_FLAGS MSG_NOSIGNAL
#else
#define LM_SEND_FLAGS 0 // SO_NOSIGPIPE instead (lm_rpc_sock_setup)
#endif
#endif

LM_GGML_ATTRIBUTE_FORMAT(2, 3)
static bool fail(lm_rpc_why why, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, LM_RPC_WHY, fmt, ap);
    va_end(ap);
    return false;
}

bool lm_rpc_split_endpoint(const char * endpoint, char * host, size_t host_len, char * port, size_t port_len) {
    if (endpoint == NULL) return false;
    const char * colon = strrchr(endpoint, ':');
    if (colon == NULL || colon[1] == '\0') return false;
    const char * h = endpoint;
    size_t hn = (size_t)(colon - endpoint);
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') { // [v6]:port
        h++;
        hn -= 2;
    }
    const size_t pn = strlen(colon + 1);
    if (hn == 0 || hn >= host_len || pn >= port_len) return false;
    for (size_t i = 0; i < pn; i++) {
        if (colon[1 + i] < '0' || colon[1 + i] > '9') return false;
    }
    memcpy(host, h, hn);
    host[hn] = '\0';
    memcpy(port, colon + 1, pn + 1);
    return true;
}

#ifdef _WIN32
// Winsock: sockets stay in non-blocking mode (there is no MSG_DONTWAIT), and
// waits are select() calls in slices of WAIT_SLICE_MS: a shutdown() by
// another thread is not sure to end a select() already waiting (on POSIX it
// ends a poll()), so between slices the socket is asked whether it was shut
// down. No SIGPIPE to avoid.
#define WAIT_SLICE_MS 10

static pthread_once_t g_wsa_once = PTHREAD_ONCE_INIT;
static int g_wsa_error;

static void wsa_start(void) {
    WSADATA data;
    g_wsa_error = WSAStartup(MAKEWORD(2, 2), &data);
}

// Winsock's message for err (or its number), in buf.
static const char * sock_strerror(int err, char * buf, size_t n) {
    char msg[200];
    DWORD k = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, (DWORD) err,
                             MAKELANGID(LANG_NEUTRAL, SUBLANG_DEFAULT), msg, sizeof(msg), NULL);
    while (k > 0 && (msg[k - 1] == '\n' || msg[k - 1] == '\r' || msg[k - 1] == '.' || msg[k - 1] == ' ')) k--;
    if (k > 0) snprintf(buf, n, "%.*s (WSA error %d)", (int) k, msg, err);
    else snprintf(buf, n, "WSA error %d", err);
    return buf;
}

#define SOCK(fd) ((SOCKET) (intptr_t) (fd))

bool lm_rpc_wsa_init(lm_rpc_why why) {
    pthread_once(&g_wsa_once, wsa_start);
    if (g_wsa_error == 0) return true;
    char e[240];
    return fail(why, "WSAStartup: %s", sock_strerror(g_wsa_error, e, sizeof(e)));
}

void lm_rpc_close(int fd) {
    if (fd >= 0) closesocket(SOCK(fd));
}

void lm_rpc_shutdown(int fd) {
    shutdown(SOCK(fd), SD_BOTH);
}

void lm_rpc_sock_setup(int fd) {
    u_long nonblocking = 1;
    (void) ioctlsocket(SOCK(fd), FIONBIO, &nonblocking);
    int one = 1;
    (void) setsockopt(SOCK(fd), IPPROTO_TCP, TCP_NODELAY, (const char *) &one, sizeof(one));
}

// A socket not inherited by child processes.
static int new_socket(const struct addrinfo * a) {
    const SOCKET s = WSASocketW(a->ai_family, a->ai_socktype, a->ai_protocol, NULL, 0, WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
    return s == INVALID_SOCKET ? -1 : (int) (intptr_t) s;
}

// Waits until fd is ready for reading (write false) or writing; 1 ready (or
// shut down: the next call tells), 0 timed out, -1 error (WSAGetLastError).
static int wait_fd(int fd, bool write, int timeout_ms) {
    const uint64_t deadline = timeout_ms > 0 ? GetTickCount64() + (uint64_t) timeout_ms : 0;
    for (;;) {
        int slice = WAIT_SLICE_MS;
        if (timeout_ms > 0) {
            const uint64_t now = GetTickCount64();
            if (now >= deadline) return 0;
            if (deadline - now < (uint64_t) slice) slice = (int) (deadline - now);
        }
        fd_set set, err;
        FD_ZERO(&set);
        FD_ZERO(&err);
        FD_SET(SOCK(fd), &set);
        FD_SET(SOCK(fd), &err); // a failed non-blocking connect shows here
        struct timeval tv = { slice / 1000, (slice % 1000) * 1000 };
        const int r = select(0, write ? NULL : &set, write ? &set : NULL, &err, &tv);
        if (r > 0) return 1;
        if (r < 0) return -1;
        // shut down while we waited? A zero-byte call answers at once.
        char c;
        const int k = write ? send(SOCK(fd), &c, 0, 0) : recv(SOCK(fd), &c, 1, MSG_PEEK);
        if (k >= 0 && !write) return 1; // data, or the peer closed: the next call tells
        if (k < 0 && WSAGetLastError() != WSAEWOULDBLOCK) return 1;
    }
}

bool lm_rpc_readable_now(int fd) {
    fd_set set;
    FD_ZERO(&set);
    FD_SET(SOCK(fd), &set);
    struct timeval tv = { 0, 0 };
    return select(0, &set, NULL, NULL, &tv) > 0;
}

bool lm_rpc_send_all(int fd, const void * p, size_t n, int timeout_ms, lm_rpc_why why) {
    const char * c = p;
    char e[240];
    while (n > 0) {
        const int want = n > (size_t) INT32_MAX ? INT32_MAX : (int) n;
        const int k = send(SOCK(fd), c, want, 0);
        if (k > 0) {
            c += k;
            n -= (size_t) k;
            continue;
        }
        const int err = k < 0 ? WSAGetLastError() : 0;
        if (err == WSAEWOULDBLOCK) {
            const int w = wait_fd(fd, true, timeout_ms);
            if (w == 0) return fail(why, "send: timed out after %d ms", timeout_ms);
            if (w < 0) return fail(why, "send: %s", sock_strerror(WSAGetLastError(), e, sizeof(e)));
            continue;
        }
        if (err == WSAEINTR) continue;
        return fail(why, "send: %s", k < 0 ? sock_strerror(err, e, sizeof(e)) : "connection closed");
    }
    return true;
}

bool lm_rpc_recv_all(int fd, void * p, size_t n, int timeout_ms, lm_rpc_why why) {
    char * c = p;
    char e[240];
    while (n > 0) {
        const int want = n > (size_t) INT32_MAX ? INT32_MAX : (int) n;
        const int k = recv(SOCK(fd), c, want, 0);
        if (k > 0) {
            c += k;
            n -= (size_t) k;
            continue;
        }
        if (k == 0) return fail(why, "connection closed by peer");
        const int err = WSAGetLastError();
        if (err == WSAEWOULDBLOCK) {
            const int w = wait_fd(fd, false, timeout_ms);
            if (w == 0) return fail(why, "recv: timed out after %d ms", timeout_ms);
            if (w < 0) return fail(why, "recv: %s", sock_strerror(WSAGetLastError(), e, sizeof(e)));
            continue;
        }
        if (err == WSAEINTR) continue;
        if (err == WSAESHUTDOWN || err == WSAECONNRESET || err == WSAECONNABORTED) return fail(why, "connection closed");
        return fail(why, "recv: %s", sock_strerror(err, e, sizeof(e)));
    }
    return true;
}
#else
void lm_rpc_sock_setup(int fd) {
    const int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK)) (void) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    int one = 1;
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
#ifdef SO_NOSIGPIPE
    (void) setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
}

// A socket closed on exec (SOCK_CLOEXEC where it exists: not on macOS).
static int new_socket(const struct addrinfo * a) {
#ifdef SOCK_CLOEXEC
    return socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
#else
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0) (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
#endif
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Waits until fd is ready for events; 1 ready, 0 timed out, -1 error.
// Signals (the Go runtime preempts threads with them) restart the wait with
// what is left of the timeout.
static int wait_fd(int fd, short events, int timeout_ms) {
    const int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
    for (;;) {
        struct pollfd pfd = { .fd = fd, .events = events, .revents = 0 };
        int left = -1;
        if (timeout_ms > 0) {
            const int64_t d = deadline - now_ms();
            left = d > 0 ? (int) d : 0;
        }
        const int r = poll(&pfd, 1, left);
        if (r > 0) return 1; // readable, writable, or hung up: the next call tells
        if (r == 0) return 0;
        if (errno != EINTR) return -1;
    }
}

bool lm_rpc_readable_now(int fd) {
    for (;;) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN, .revents = 0 };
        const int r = poll(&pfd, 1, 0);
        // poll fails with EINTR even when it does not wait
        if (r >= 0 || errno != EINTR) return r > 0;
    }
}

bool lm_rpc_send_all(int fd, const void * p, size_t n, int timeout_ms, lm_rpc_why why) {
    const char * c = p;
    while (n > 0) {
        const ssize_t k = send(fd, c, n, LM_SEND_FLAGS | MSG_DONTWAIT);
        if (k > 0) {
            c += k;
            n -= (size_t) k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            const int w = wait_fd(fd, POLLOUT, timeout_ms);
            if (w == 0) return fail(why, "send: timed out after %d ms", timeout_ms);
            if (w < 0) return fail(why, "send: %s", strerror(errno));
            continue;
        }
        return fail(why, "send: %s", k < 0 ? strerror(errno) : "connection closed");
    }
    return true;
}

bool lm_rpc_recv_all(int fd, void * p, size_t n, int timeout_ms, lm_rpc_why why) {
    char * c = p;
    while (n > 0) {
        const ssize_t k = recv(fd, c, n, MSG_DONTWAIT);
        if (k > 0) {
            c += k;
            n -= (size_t) k;
            continue;
        }
        if (k == 0) return fail(why, "connection closed by peer");
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            const int w = wait_fd(fd, POLLIN, timeout_ms);
            if (w == 0) return fail(why, "recv: timed out after %d ms", timeout_ms);
            if (w < 0) return fail(why, "recv: %s", strerror(errno));
            continue;
        }
        return fail(why, "recv: %s", strerror(errno));
    }
    return true;
}

#endif

static struct addrinfo * resolve(const char * endpoint, bool passive, lm_rpc_why why) {
    char host[256], port[16];
    if (!lm_rpc_split_endpoint(endpoint, host, sizeof(host), port, sizeof(port))) {
        fail(why, "endpoint '%s' is not host:port", endpoint ? endpoint : "(null)");
        return NULL;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    struct addrinfo * res = NULL;
    const int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        fail(why, "cannot resolve '%s': %s", host, gai_strerror(rc));
        return NULL;
    }
    return res;
}

#ifdef _WIN32
// A non-blocking connect bounded by timeout_ms.
static int connect_one(const struct addrinfo * a, int timeout_ms, lm_rpc_why why) {
    char e[240];
    const int fd = new_socket(a);
    if (fd < 0) {
        fail(why, "socket: %s", sock_strerror(WSAGetLastError(), e, sizeof(e)));
        return -1;
    }
    lm_rpc_sock_setup(fd); // non-blocking from here on
    int err = 0;
    if (connect(SOCK(fd), a->ai_addr, (int) a->ai_addrlen) != 0) {
        err = WSAGetLastError();
        if (err == WSAEWOULDBLOCK) {
            const int w = wait_fd(fd, true, timeout_ms);
            int so = 0, len = sizeof(so);
            if (w == 0) {
                err = WSAETIMEDOUT;
            } else if (w < 0) {
                err = WSAGetLastError();
            } else if (getsockopt(SOCK(fd), SOL_SOCKET, SO_ERROR, (char *) &so, &len) == 0) {
                err = so;
            }
        }
    }
    if (err != 0) {
        fail(why, "connect: %s", sock_strerror(err, e, sizeof(e)));
        lm_rpc_close(fd);
        return -1;
    }
    return fd;
}

int lm_rpc_connect(const char * endpoint, int timeout_ms, lm_rpc_why why) {
    if (!lm_rpc_wsa_init(why)) return -1;
    struct addrinfo * res = resolve(endpoint, false, why);
    if (res == NULL) return -1;
    int fd = -1;
    for (struct addrinfo * a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = connect_one(a, timeout_ms, why);
    }
    freeaddrinfo(res);
    return fd;
}

int lm_rpc_listen(const char * endpoint, lm_rpc_why why) {
    if (!lm_rpc_wsa_init(why)) return -1;
    struct addrinfo * res = resolve(endpoint, true, why);
    if (res == NULL) return -1;
    char e[240];
    int fd = -1;
    for (struct addrinfo * a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = new_socket(a);
        if (fd < 0) {
            fail(why, "socket: %s", sock_strerror(WSAGetLastError(), e, sizeof(e)));
            continue;
        }
        // no SO_REUSEADDR: on Windows it lets another socket take the port
        // while this one listens; SO_EXCLUSIVEADDRUSE forbids that
        int one = 1;
        (void) setsockopt(SOCK(fd), SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *) &one, sizeof(one));
        if (bind(SOCK(fd), a->ai_addr, (int) a->ai_addrlen) != 0 || listen(SOCK(fd), 64) != 0) {
            fail(why, "bind %s: %s", endpoint, sock_strerror(WSAGetLastError(), e, sizeof(e)));
            lm_rpc_close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}
#else
// A non-blocking connect bounded by timeout_ms.
static int connect_one(const struct addrinfo * a, int timeout_ms, lm_rpc_why why) {
    const int fd = new_socket(a);
    if (fd < 0) {
        fail(why, "socket: %s", strerror(errno));
        return -1;
    }
    const int fl = fcntl(fd, F_GETFL);
    (void) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && (errno == EINPROGRESS || errno == EINTR)) {
        const int w = wait_fd(fd, POLLOUT, timeout_ms);
        int err = 0;
        socklen_t len = sizeof(err);
        if (w == 0) {
            errno = ETIMEDOUT;
        } else if (w > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0) {
            errno = err;
            rc = err == 0 ? 0 : -1;
        }
    }
    if (rc < 0) {
        fail(why, "connect: %s", strerror(errno));
        close(fd);
        return -1;
    }
    lm_rpc_sock_setup(fd);
    return fd;
}

int lm_rpc_connect(const char * endpoint, int timeout_ms, lm_rpc_why why) {
    struct addrinfo * res = resolve(endpoint, false, why);
    if (res == NULL) return -1;
    int fd = -1;
    for (struct addrinfo * a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = connect_one(a, timeout_ms, why);
    }
    freeaddrinfo(res);
    return fd;
}

int lm_rpc_listen(const char * endpoint, lm_rpc_why why) {
    struct addrinfo * res = resolve(endpoint, true, why);
    if (res == NULL) return -1;
    int fd = -1;
    for (struct addrinfo * a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = new_socket(a);
        if (fd < 0) {
            fail(why, "socket: %s", strerror(errno));
            continue;
        }
        int one = 1;
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 64) < 0) {
            fail(why, "bind %s: %s", endpoint, strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

#endif

int lm_rpc_local_port(int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
#ifdef _WIN32
    if (getsockname(SOCK(fd), (struct sockaddr *) &ss, &len) != 0) return 0;
#else
    if (getsockname(fd, (struct sockaddr *) &ss, &len) < 0) return 0;
#endif
    if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *) &ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *) &ss)->sin6_port);
    return 0;
}
