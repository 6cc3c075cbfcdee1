// ggml-iquants.h - the i-quant block formats (iq2_xxs, iq2_xs, iq2_s, iq3_xxs,
// iq3_s, iq1_s, iq1_m, iq4_nl, iq4_xs): codebooks, dequantization and the
// importance-weighted quantizers. Internal; included by ggml-quants.h.
#pragma once

#include "ggml-common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------- codebooks (ggml-iq-tables.c)
// Format constants reproduced from ggml (MIT License, Copyright (c) 2023-2024
// The ggml authors; the notice is in ggml-iq-tables.c), as are the grid size
// and the iq1 deltas below.

extern const uint8_t  lm_kmask_iq2xs[8];
extern const uint8_t  lm_ksigns_iq2xs[128];   // 7 stored sign bits -> 8 bits of even parity
extern const uint64_t lm_ksigns64[128];       // the same as 0x00/0xff byte masks
extern const uint64_t lm_iq2xxs_grid[256];    // 8 magnitudes per entry, one per byte
extern const uint64_t lm_iq2xs_grid[512];
extern const uint64_t lm_iq2s_grid[1024];
extern const uint32_t lm_iq3xxs_grid[256];    // 4 magnitudes per entry
extern const uint32_t lm_iq3s_grid[512];
extern const uint64_t lm_iq1s_grid[2048];     // 8 signed bytes in {-1, 0, 1}
extern const int8_t   lm_kvalues_iq4nl[16];

#define LM_NGRID_IQ1S  2048
#define LM_IQ1S_DELTA  0.125f
#define LM_IQ1M_DELTA  0.125f

// ---------------------------------------------------------------- dequantization (k = element count)

void lm_dequantize_row_iq2_xxs(const block_iq2_xxs * x, float * y, int64_t k);
void lm_dequantize_row_iq2_xs (const block_iq2_xs  * x, float * y, int64_t k);
void lm_dequantize_row_iq2_s  (const block_iq2_s   * x, float * y, int64_t k);
void lm_dequantize_row_iq3_xxs(const block_iq3_xxs * x, float * y, int64_t k);
void lm_dequantize_row_iq3_s  (const block_iq3_s   * x, float * y, int64_t k);
void lm_dequantize_row_iq1_s  (const block_iq1_s   * x, float * y, int64_t k);
void lm_dequantize_row_iq1_m  (const block_iq1_m   * x, float * y, int64_t k);
void lm_dequantize_row_iq4_nl (const block_iq4_nl  * x, float * y, int64_t k);
void lm_dequantize_row_iq4_xs (const block_iq4_xs  * x, float * y, int64_t k);

// ---------------------------------------------------------------- reference quantization (no importance matrix)

void lm_quantize_row_iq3_xxs_ref(const float * x, block_iq3_xxs * y, int64_t k);
void lm_quantize_row_iq3_s_ref  (const float * x, block_iq3_s   * y, int64_t k);
void lm_quantize_row_iq2_s_ref  (const float * x, block_iq2_s   * y, int64_t k);
void lm_quantize_row_iq4_nl_ref (const float * x, block_iq4_nl  * y, int64_t k);
void lm_quantize_row_iq4_xs_ref (const float * x, block_iq4_xs  * y, int64_t k);

// CPU row converters (ggml's from_float for these two; same bits as _ref).
void lm_quantize_row_iq4_nl(const float * x, void * y, int64_t k);
void lm_quantize_row_iq4_xs(const float * x, void * y, int64_t k);

// ---------------------------------------------------------------- importance-weighted quantization
//
// nrows rows of n_per_row floats; imatrix holds n_per_row weights (or NULL
// where the type allows it). Returns the bytes written. iq2_xxs, iq2_xs and
// iq1_s require an imatrix. The lattice types need lm_ggml_iquants_init first.

size_t lm_quantize_iq2_xxs(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq2_xs (const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq2_s  (const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq3_xxs(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq3_s  (const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq1_s  (const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq1_m  (const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq4_nl (const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
size_t lm_quantize_iq4_xs (const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

// Builds the lookup tables (grid maps, neighbour lists) the quantizer of type
// needs. Thread-safe and idempotent; a no-op for types without such tables.
void lm_ggml_iquants_init(enum lm_ggml_type type);
// Releases every table built by lm_ggml_iquants_init.
void lm_ggml_iquants_free(void);

// True when type is one of the nine i-quant types above.
bool lm_iq_is_iquant(enum lm_ggml_type type);

// Checks the fp16 scales of nbytes of blocks of an i-quant type for inf/nan
// (nbytes must be a whole number of blocks; the caller checks that). Logs the
// first bad block and returns false; returns true for types it does not know.
bool lm_validate_iq_row(enum lm_ggml_type type, const void * data, size_t nbytes);

// How lm_ggml_validate_row_data reports what it finds: as an error log line,
// or, inside lm_validate_row_data_msg, into the caller's buffer.
LM_GGML_ATTRIBUTE_FORMAT(1, 2)
void lm_validate_report(const char * fmt, ...);
// Sends the reports of the calling thread to msg (size n) instead of the
// log; NULL: back to the log (validate-report.c).
void lm_validate_report_into(char * msg, size_t n);
// lm_ggml_validate_row_data with the reason for a failure in msg (size n)
// instead of the log.
bool lm_validate_row_data_msg(enum lm_ggml_type type, const void * data, size_t nbytes, char * msg, size_t n);

#ifdef __cplusplus
}
#endif
