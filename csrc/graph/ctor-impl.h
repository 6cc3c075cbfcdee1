// ctor-impl.h - helpers shared by the op constructors (ctor-*.c). Internal.
#pragma once

#include "ggml-op-params.h"

#ifdef __cplusplus
extern "C" {
#endif

// A type of the table with a block size (not one of the retired numbers).
static inline bool lm_type_in_range(enum lm_ggml_type type) {
    return (int) type >= 0 && type < LM_GGML_TYPE_COUNT && lm_ggml_blck_size(type) > 0;
}

// Whether rows of a type can be converted to f32: the types the CPU's row
// converters cover (lm_cpu_to_float), f32, f16, bf16 and the quantized types
// with a dequantizer in the type traits.
static inline bool lm_type_to_float_ok(enum lm_ggml_type type) {
    if (lm_is_plain_float(type)) return true;
    if (!lm_type_in_range(type) || !lm_ggml_is_quantized(type)) return false;
    return lm_ggml_get_type_traits(type)->to_float != NULL;
}

// Whether rows of f32 can be converted to a type (lm_cpu_from_float): f32,
// f16, bf16 and the quantized types with a reference quantizer in the type
// traits, and q8_K, which has none there but a CPU row quantizer.
static inline bool lm_type_from_float_ok(enum lm_ggml_type type) {
    if (lm_is_plain_float(type) || type == LM_GGML_TYPE_Q8_K) return true;
    if (!lm_type_in_range(type) || !lm_ggml_is_quantized(type)) return false;
    return lm_ggml_get_type_traits(type)->from_float_ref != NULL;
}

#ifdef __cplusplus
}
#endif
