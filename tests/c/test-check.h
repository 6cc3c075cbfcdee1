// test-check.h - what the C test programs share: a check that counts and
// reports (safe to call from several threads), and a log callback that
// silences the core's messages while a test provokes errors on purpose.
#pragma once

#include "ggml.h"
#include "ggml-backend.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_fail, g_checks;
static pthread_mutex_t g_check_mu = PTHREAD_MUTEX_INITIALIZER;

static inline void check(bool ok, const char * what) {
    pthread_mutex_lock(&g_check_mu);
    g_checks++;
    if (!ok) { g_fail++; printf("FAIL %s\n", what); }
    pthread_mutex_unlock(&g_check_mu);
}

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
