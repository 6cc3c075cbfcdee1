// validate-report.c - lm_validate_report, where the checks of tensor data
// (ggml-quants-api.c's, and ggml-iquants.c's of the i-quant scales) say what
// they found. Below them all: it calls none.
#include "ggml-iquants.h"
#include "../base/ggml-impl.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char * g_validate_msg;   // set by lm_validate_report_into
static _Thread_local size_t g_validate_msg_n;

void lm_validate_report(const char * fmt, ...) {
    char buf[256];
    va_list args;
    va_start(args, fmt);
    vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    if (g_validate_msg != NULL) {
        snprintf(g_validate_msg, g_validate_msg_n, "%s", buf);
    } else {
        LM_GGML_LOG_ERROR("lm_ggml_validate_row_data: %s\n", buf);
    }
}

void lm_validate_report_into(char * msg, size_t n) {
    g_validate_msg = msg;
    g_validate_msg_n = n;
}
