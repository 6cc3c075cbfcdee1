// ops-copy.c - constructors and CPU kernels (see ggml-cpu-impl.h for the contract).
#include "ggml-cpu-impl.h"

void lm_cpu_register_copy(struct lm_cpu_op * table) {
    (void) table;
}
