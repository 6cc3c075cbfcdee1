// ggml-traits.h - which tensor types convert rows to and from f32, and the
// converters that do it: the one answer the constructors (which refuse what
// no kernel can convert) and the CPU kernels (which convert) share. Internal.
#pragma once

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

// A type of the table: in range and with a block size (not one of the
// retired numbers).
bool lm_type_valid(enum lm_ggml_type type);

// A row of k values of type to f32: f32, f16, bf16 and the quantized types
// with a dequantizer. NULL for every other type, and for numbers outside the
// table.
lm_ggml_to_float_t lm_type_to_f32_row(enum lm_ggml_type type);

// k f32 values to a row of type (k a multiple of the block size): f32, f16,
// bf16 and the quantized types with a quantizer; the legacy, k-quant,
// ternary and q8_K rows take the fast converters (the same bits as the
// traits' from_float_ref), the i-quants their reference quantizer. NULL for
// every other type.
lm_ggml_from_float_t lm_type_from_f32_row(enum lm_ggml_type type);

// Whether rows of type can be read (to f32) and written (from f32): what an
// op that computes in f32 and stores in its operand's type needs.
bool lm_type_rows_rw(enum lm_ggml_type type);

#ifdef __cplusplus
}
#endif
