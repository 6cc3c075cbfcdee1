// ops-elem-impl.h - registration hooks of the files that the elementwise and
// reduce families are split into. Internal.
#pragma once

#include "ggml-cpu-impl.h"

void lm_cpu_register_unary(struct lm_cpu_op * table); // ops-unary.c (called by lm_cpu_register_elementwise)
void lm_cpu_register_map  (struct lm_cpu_op * table); // ops-map.c   (idem)
void lm_cpu_register_norm (struct lm_cpu_op * table); // ops-norm.c  (called by lm_cpu_register_reduce)
void lm_cpu_register_shape(struct lm_cpu_op * table); // ops-shape.c (idem)
