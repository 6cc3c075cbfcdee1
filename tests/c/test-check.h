// test-check.h - what the C test programs share: a check that counts and
// reports (safe to call from several threads), and a log callback that
// silences the core's messages while a test provokes errors on purpose.
#pragma once

#include "ggml.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

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
