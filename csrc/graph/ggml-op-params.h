// ggml-op-params.h - what the op constructors (graph/ctor-*.c) and the
// kernels that compute their nodes (cpu/ops-*.c) must agree on: op_params
// layouts that one side writes and the other reads back, and the type and
// layout tests that both apply. Internal.
#pragma once

#include "../base/ggml-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

// f32, f16 or bf16: the types read and written element by element.
static inline bool lm_is_plain_float(enum lm_ggml_type t) {
    return t == LM_GGML_TYPE_F32 || t == LM_GGML_TYPE_F16 || t == LM_GGML_TYPE_BF16;
}

// ggml's "padded 1d" test: rows of one dense element stride, higher dims packed.
static inline bool lm_is_padded_1d(const struct lm_ggml_tensor * t) {
    return t->nb[0] == lm_ggml_type_size(t->type) &&
           t->nb[2] == t->nb[1]*t->ne[1] &&
           t->nb[3] == t->nb[2]*t->ne[2];
}

// Whether a copy from src's type and layout to dst's can be done: quantized
// data is addressed in whole blocks along dim 0, other pairs of types
// convert through f32 (graph/ctor-copy.c). set's constructor asks it; the CPU
// copy engine asks it of the nodes it is given (ggml's cpy constructor
// accepts any pair, so programs can build one to ask supports_op).
bool lm_copy_supported(const struct lm_ggml_tensor * src, const struct lm_ggml_tensor * dst);

// op_params of MAP_CUSTOM1/2/3 (ggml's layout, since other code
// reads them back): the function, the number of threads that call it
// (LM_GGML_N_TASKS_MAX: all) and the user's pointer. n_tasks sits right after
// the function pointer in all three.
struct lm_map_custom1_params { lm_ggml_custom1_op_t fun; int n_tasks; void * userdata; };
struct lm_map_custom2_params { lm_ggml_custom2_op_t fun; int n_tasks; void * userdata; };
struct lm_map_custom3_params { lm_ggml_custom3_op_t fun; int n_tasks; void * userdata; };

#ifdef __cplusplus
}
#endif
