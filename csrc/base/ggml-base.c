// ggml-base.c - what every layer uses: logging, errors and aborts, time,
// file names and the allocator of large aligned blocks.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ggml-impl.h"

#include <pthread.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <time.h>
#ifdef _WIN32
#include <errno.h>
#include <malloc.h>
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <windows.h>
#endif

// ---------------------------------------------------------------- logging

static lm_ggml_log_callback g_log_cb = NULL;
static void * g_log_ud = NULL;

void lm_ggml_log_set(lm_ggml_log_callback log_callback, void * user_data) {
    g_log_cb = log_callback;
    g_log_ud = user_data;
}

static _Thread_local int  g_log_quiet = 0;
static _Thread_local bool g_log_dropped = false; // the last line was dropped (its continuations go too)

void lm_ggml_log_quiet(bool on) { g_log_quiet += on ? 1 : (g_log_quiet > 0 ? -1 : 0); }

void lm_ggml_log_internal(enum lm_ggml_log_level level, const char * format, ...) {
    if (level != LM_GGML_LOG_LEVEL_CONT) {
        g_log_dropped = g_log_quiet > 0 && (level == LM_GGML_LOG_LEVEL_WARN || level == LM_GGML_LOG_LEVEL_ERROR);
    }
    if (g_log_dropped) {
        return;
    }
    char buf[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(buf, sizeof(buf), format, args);
    va_end(args);
    if (g_log_cb) {
        g_log_cb(level, buf, g_log_ud);
    } else {
        fputs(buf, stderr);
        fflush(stderr);
    }
}

// ---------------------------------------------------------------- errors

static _Thread_local struct lm_ggml_err_frame * g_err_top = NULL;

struct lm_ggml_err_frame ** lm_ggml_err_top(void) { return &g_err_top; }

void lm_ggml_err_push(struct lm_ggml_err_frame * f) {
    f->msg[0] = '\0';
    f->prev = g_err_top;
    g_err_top = f;
}

void lm_ggml_err_pop(struct lm_ggml_err_frame * f) {
    if (g_err_top == f) {
        g_err_top = f->prev;
    }
}

void lm_ggml_err_report(struct lm_ggml_err_frame * f, const char * fmt, ...) {
    char msg[sizeof(f->msg)];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);
    if (f != NULL) {
        memcpy(f->msg, msg, sizeof(msg));
    } else {
        LM_GGML_LOG_ERROR("%s\n", msg);
    }
}

void lm_ggml_abort(const char * file, int line, const char * fmt, ...) {
    char msg[480];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);

    struct lm_ggml_err_frame * f = g_err_top;
    if (f != NULL) {
        // A caller on this thread asked for errors instead of aborts.
        g_err_top = f->prev;
        snprintf(f->msg, sizeof(f->msg), "%s (%s:%d)", msg, file, line);
        longjmp(f->jb, 1);
    }
    fflush(stdout);
    fprintf(stderr, "%s:%d: %s\n", file, line, msg);
    fflush(stderr);
    abort();
}

const char * lm_ggml_status_to_string(enum lm_ggml_status status) {
    switch (status) {
        case LM_GGML_STATUS_ALLOC_FAILED: return "GGML status: error (failed to allocate memory)";
        case LM_GGML_STATUS_FAILED:       return "GGML status: error (operation failed)";
        case LM_GGML_STATUS_SUCCESS:      return "GGML status: success";
        case LM_GGML_STATUS_ABORTED:      return "GGML status: warning (operation aborted)";
    }
    return "GGML status: unknown";
}

// ---------------------------------------------------------------- misc

bool lm_ggml_guid_matches(lm_ggml_guid_t guid_a, lm_ggml_guid_t guid_b) {
    return memcmp(guid_a, guid_b, sizeof(lm_ggml_guid)) == 0;
}

void lm_ggml_time_init(void) {}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}
int64_t lm_ggml_time_ms(void) { return now_ns() / 1000000; }
int64_t lm_ggml_time_us(void) { return now_ns() / 1000; }
int64_t lm_ggml_cycles(void) { return (int64_t) clock(); }
int64_t lm_ggml_cycles_per_ms(void) { return CLOCKS_PER_SEC / 1000; }

#ifdef _WIN32
// Names are UTF-8 (Go's strings); fopen would read them in the ANSI code page.
FILE * lm_ggml_fopen(const char * fname, const char * mode) {
    wchar_t wmode[8];
    const int nm = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, mode, -1, wmode, (int) (sizeof(wmode) / sizeof(wmode[0])));
    const int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, fname, -1, NULL, 0);
    if (nm <= 0 || n <= 0) {
        errno = EINVAL;
        return NULL;
    }
    wchar_t * wname = malloc((size_t) n * sizeof(wchar_t));
    if (wname == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, fname, -1, wname, n);
    FILE * f = _wfopen(wname, wmode);
    free(wname);
    return f;
}
#else
FILE * lm_ggml_fopen(const char * fname, const char * mode) { return fopen(fname, mode); }
#endif

// ---------------------------------------------------------------- large blocks

#define LM_BUFFER_ALIGN 64

// Large arenas (weights, KV caches) are streamed by mat-vec: on Linux they
// ask for transparent huge pages (honoured where THP is "madvise" or
// "always"), which saves a TLB walk every 4 KiB, a cost that shows when
// short rows are streamed from memory. Freed with free() as any other.
#define LM_HUGE_PAGE (2u << 20)
#define LM_HUGE_MIN  (8u << 20)
#ifdef _WIN32
// No posix_memalign in the Windows C runtime; no large pages either (they
// need the "Lock pages in memory" privilege, which accounts seldom have).
int lm_big_alloc(void ** p, size_t size) {
    *p = _aligned_malloc(size > 0 ? size : 1, LM_BUFFER_ALIGN);
    return *p != NULL ? 0 : ENOMEM;
}

void lm_big_free(void * p) {
    _aligned_free(p);
}
#else
int lm_big_alloc(void ** p, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= LM_HUGE_MIN) {
        const int rc = posix_memalign(p, LM_HUGE_PAGE, size);
        if (rc == 0) (void) madvise(*p, size & ~(size_t)(LM_HUGE_PAGE - 1), MADV_HUGEPAGE); // a hint: failure is harmless
        return rc;
    }
#endif
    return posix_memalign(p, LM_BUFFER_ALIGN, size);
}
#endif

