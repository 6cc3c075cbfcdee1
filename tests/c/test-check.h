// test-check.h - what the C test programs share: checks that count and
// report failures (check, checkf, CHECK, CHECKF; safe to call from several
// threads), catching lm_ggml_abort (EXPECT_ABORT, ASSERTS), and a log
// callback that silences the core's messages while a test provokes errors on
// purpose. Every tests/c/test-*.c counts with it; most end with check_summary.
#pragma once

#include "ggml.h"
#include "ggml-backend.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// g_checks counts the checks, g_fail the failed ones; the exit status of a
// program is g_fail ? 1 : 0. Failures past g_check_max_shown are counted but
// not printed (for checks that one bug can fail a million times).
static int g_fail, g_checks;
static int g_check_max_shown = INT_MAX;
static pthread_mutex_t g_check_mu = PTHREAD_MUTEX_INITIALIZER;

// A check with a printf-style message: "FAIL [file:line: ]<message>" when
// !ok (the place when file is not NULL).
static inline void vcheck_at(bool ok, const char * file, int line, const char * fmt, va_list ap) {
    pthread_mutex_lock(&g_check_mu);
    g_checks++;
    if (!ok && g_fail++ < g_check_max_shown) {
        printf("FAIL ");
        if (file) printf("%s:%d: ", file, line);
        vprintf(fmt, ap);
        printf("\n");
    }
    pthread_mutex_unlock(&g_check_mu);
}

static inline void check_at(bool ok, const char * file, int line, const char * fmt, ...) LM_GGML_ATTRIBUTE_FORMAT(4, 5);
static inline void check_at(bool ok, const char * file, int line, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vcheck_at(ok, file, line, fmt, ap);
    va_end(ap);
}

static inline void checkf(bool ok, const char * fmt, ...) LM_GGML_ATTRIBUTE_FORMAT(2, 3);
static inline void checkf(bool ok, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vcheck_at(ok, NULL, 0, fmt, ap);
    va_end(ap);
}

static inline void check(bool ok, const char * what) { checkf(ok, "%s", what); }

// The line a test program ends with, "PASSED: 0 of n checks failed" or
// "FAILED: k of n checks failed", and its exit status: 1 if any failed.
static inline int check_summary(void) {
    printf("%s: %d of %d checks failed\n", g_fail ? "FAILED" : "PASSED", g_fail, g_checks);
    return g_fail ? 1 : 0;
}

// CHECK(cond): a check named by its place and condition; CHECKF(cond, fmt,
// ...): by its place and a message.
#define CHECK(cond) check_at((cond), __FILE__, __LINE__, "%s", #cond)
#define CHECKF(cond, ...) check_at((cond), __FILE__, __LINE__, __VA_ARGS__)

static inline void quiet_log(enum lm_ggml_log_level level, const char * text, void * ud) {
    (void) level; (void) text; (void) ud;
}

// Runs an expression that must end in lm_ggml_abort; a check that it did,
// with want in the message. For programs that include ggml-impl.h (the
// error frames).
#define EXPECT_ABORT(what, want, expr) do {                                       \
        struct lm_ggml_err_frame f_;                                              \
        volatile bool caught_ = false;                                            \
        if (LM_GGML_TRY(&f_)) {                                                   \
            caught_ = strstr(f_.msg, want) != NULL;                               \
            if (!caught_) printf("  (%s: message was '%s')\n", what, f_.msg);      \
        } else {                                                                  \
            expr;                                                                 \
            lm_ggml_err_pop(&f_);                                                 \
        }                                                                         \
        check(caught_, what);                                                     \
    } while (0)

// ASSERTS(expr): whether the expression ended in lm_ggml_abort (a GNU
// statement expression; for programs that include ggml-impl.h).
#define ASSERTS(expr) ({                                                          \
        struct lm_ggml_err_frame f_;                                              \
        volatile bool caught_ = false;                                            \
        if (LM_GGML_TRY(&f_)) { caught_ = true; }                                 \
        else { (void) (expr); lm_ggml_err_pop(&f_); }                             \
        caught_; })

// Whether two tensors of the same size hold the same bytes (read through their buffers).
static inline bool same_bytes(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b) {
    const size_t n = lm_ggml_nbytes(a);
    if (n != lm_ggml_nbytes(b)) return false;
    void * x = malloc(n), * y = malloc(n);
    lm_ggml_backend_tensor_get(a, x, 0, n);
    lm_ggml_backend_tensor_get(b, y, 0, n);
    const bool eq = memcmp(x, y, n) == 0;
    free(x);
    free(y);
    return eq;
}
