package ggml

/*
#include "glue.h"
extern void goLogCallback(int, char *, uintptr_t);
static void gg_install_log(void) {
    lm_ggml_log_set((lm_ggml_log_callback)(void *) goLogCallback, NULL);
}
*/
import "C"

import "sync"

var initOnce = sync.OnceFunc(func() {
	C.gg_install_log()
	C.lm_ggml_cpu_init()
})
