// ggml-quants-api.c - the public entry points over every type:
// lm_ggml_quantize_chunk (and init/free/requires_imatrix), which pick the
// quantizer of ggml-quants.c or ggml-iquants.c, and lm_ggml_validate_row_data.
// Above the type traits (ggml-traits.c), whose sizes they read, and so above
// the formats the traits list: none of those calls in here.
#include "ggml-quants.h"
#include "ggml-iquants.h"
#include "../base/ggml-impl.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

// ================================================================ public API

// Only the i-quants have tables. They are built once, on first use, under the
// lock of ggml-iquants.c; once built, looking them up takes no lock, so this
// may be called before every quantization from any thread.
void lm_ggml_quantize_init(enum lm_ggml_type type) {
    lm_ggml_iquants_init(type);
}

void lm_ggml_quantize_free(void) {
    lm_ggml_iquants_free();
}

bool lm_ggml_quantize_requires_imatrix(enum lm_ggml_type type) {
    return type == LM_GGML_TYPE_IQ2_XXS || type == LM_GGML_TYPE_IQ2_XS || type == LM_GGML_TYPE_IQ1_S;
}

static lm_ggml_quantize_fn_t quantize_fn(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_Q4_0:       return lm_quantize_q4_0;
        case LM_GGML_TYPE_Q4_1:       return lm_quantize_q4_1;
        case LM_GGML_TYPE_Q5_0:       return lm_quantize_q5_0;
        case LM_GGML_TYPE_Q5_1:       return lm_quantize_q5_1;
        case LM_GGML_TYPE_Q8_0:       return lm_quantize_q8_0;
        case LM_GGML_TYPE_Q2_K:       return lm_quantize_q2_K;
        case LM_GGML_TYPE_Q3_K:       return lm_quantize_q3_K;
        case LM_GGML_TYPE_Q4_K:       return lm_quantize_q4_K;
        case LM_GGML_TYPE_Q5_K:       return lm_quantize_q5_K;
        case LM_GGML_TYPE_Q6_K:       return lm_quantize_q6_K;
        case LM_GGML_TYPE_TQ1_0:      return lm_quantize_tq1_0;
        case LM_GGML_TYPE_TQ2_0:      return lm_quantize_tq2_0;
        case LM_GGML_TYPE_IQ2_XXS:    return lm_quantize_iq2_xxs;
        case LM_GGML_TYPE_IQ2_XS:     return lm_quantize_iq2_xs;
        case LM_GGML_TYPE_IQ2_S:      return lm_quantize_iq2_s;
        case LM_GGML_TYPE_IQ3_XXS:    return lm_quantize_iq3_xxs;
        case LM_GGML_TYPE_IQ3_S:      return lm_quantize_iq3_s;
        case LM_GGML_TYPE_IQ1_S:      return lm_quantize_iq1_s;
        case LM_GGML_TYPE_IQ1_M:      return lm_quantize_iq1_m;
        case LM_GGML_TYPE_IQ4_NL:     return lm_quantize_iq4_nl;
        case LM_GGML_TYPE_IQ4_XS:     return lm_quantize_iq4_xs;
        case LM_GGML_TYPE_Q4_0_4_4:   return lm_quantize_q4_0_4x4;
        case LM_GGML_TYPE_Q4_0_4_8:   return lm_quantize_q4_0_4x8;
        case LM_GGML_TYPE_Q4_0_8_8:   return lm_quantize_q4_0_8x8;
        case LM_GGML_TYPE_IQ4_NL_4_4: return lm_quantize_iq4_nl_4x4;
        default:                      return NULL;
    }
}

size_t lm_ggml_quantize_chunk(enum lm_ggml_type type, const float * src, void * dst, int64_t start,
                              int64_t nrows, int64_t n_per_row, const float * imatrix) {
    LM_GGML_ASSERT(type >= 0 && type < LM_GGML_TYPE_COUNT);
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(type);
    LM_GGML_ASSERT(tt->blck_size > 0 && "invalid type");
    LM_GGML_ASSERT(nrows >= 0 && n_per_row > 0);
    if (lm_ggml_quantize_requires_imatrix(type)) {
        LM_GGML_ASSERT(imatrix != NULL);
    }
    LM_GGML_ASSERT(start % tt->blck_size == 0);
    LM_GGML_ASSERT(start % n_per_row == 0);
    LM_GGML_ASSERT(n_per_row % tt->blck_size == 0);

    lm_ggml_quantize_init(type); // no-op once the tables exist

    const int64_t n         = nrows * n_per_row;
    const int64_t start_row = start / n_per_row;
    const size_t  row_size  = tt->type_size * (size_t) (n_per_row / tt->blck_size);

    size_t result;
    switch (type) {
        case LM_GGML_TYPE_F32:
            memcpy((float *) dst + start, src + start, (size_t) n * sizeof(float));
            result = (size_t) n * sizeof(float);
            break;
        case LM_GGML_TYPE_F16:
            lm_ggml_fp32_to_fp16_row(src + start, (lm_ggml_fp16_t *) dst + start, n);
            result = (size_t) n * sizeof(lm_ggml_fp16_t);
            break;
        case LM_GGML_TYPE_BF16:
            lm_ggml_fp32_to_bf16_row_ref(src + start, (lm_ggml_bf16_t *) dst + start, n);
            result = (size_t) n * sizeof(lm_ggml_bf16_t);
            break;
        default: {
            const lm_ggml_quantize_fn_t fn = quantize_fn(type);
            if (!fn) {
                LM_GGML_ABORT("lm_ggml_quantize_chunk: type %s cannot be quantized", tt->type_name);
            }
            result = fn(src + start, (char *) dst + start_row * row_size, nrows, n_per_row, imatrix);
        }
    }
    LM_GGML_ASSERT(result == (size_t) nrows * row_size);
    return result;
}

// ================================================================ validation of tensor data

bool lm_validate_row_data_msg(enum lm_ggml_type type, const void * data, size_t nbytes, char * msg, size_t n) {
    if (n > 0) msg[0] = '\0';
    lm_validate_report_into(msg, n);
    const bool ok = lm_ggml_validate_row_data(type, data, nbytes);
    lm_validate_report_into(NULL, 0);
    return ok;
}

static bool fp16_ok(lm_ggml_half h, size_t i) {
    if ((h & 0x7c00) == 0x7c00) {
        lm_validate_report("found %s value at block %zu", (h & 0x03ff) ? "nan" : "inf", i);
        return false;
    }
    return true;
}

static bool f32_ok(float f, size_t i) {
    if (isinf(f) || isnan(f)) {
        lm_validate_report("found %s value at block %zu", isnan(f) ? "nan" : "inf", i);
        return false;
    }
    return true;
}

// Checks the fp16 fields at byte offsets off[0..noff) of each of nb blocks of
// size bsize (ggml checks the scales only, not the quants).
static bool blocks_ok(const void * data, size_t nb, size_t bsize, const size_t * off, int noff) {
    const uint8_t * p = (const uint8_t *) data;
    for (size_t i = 0; i < nb; ++i, p += bsize) {
        for (int f = 0; f < noff; ++f) {
            lm_ggml_half h;
            memcpy(&h, p + off[f], sizeof(h));
            if (!fp16_ok(h, i)) return false;
        }
    }
    return true;
}

// Counts NaNs and infinities among n values of width w bytes, given the
// magnitude mask and the infinity pattern.
static bool plain_ok(const void * data, size_t n, int w, uint64_t abs_mask, uint64_t inf, const char * tname) {
    size_t nans = 0, infs = 0;
    const uint8_t * p = (const uint8_t *) data;
    for (size_t i = 0; i < n; ++i) {
        uint64_t v = 0;
        memcpy(&v, p + i * (size_t) w, (size_t) w); // little-endian
        v &= abs_mask;
        nans += v > inf;
        infs += v == inf;
    }
    if (nans) {
        lm_validate_report("found %zu NaNs in row of %zu %s values", nans, n, tname);
        return false;
    }
    if (infs) {
        lm_validate_report("found %zu infinities in row of %zu %s values", infs, n, tname);
        return false;
    }
    return true;
}

#define OFFS(...) (const size_t[]){__VA_ARGS__}, (int) (sizeof((const size_t[]){__VA_ARGS__}) / sizeof(size_t))
#define D_ONLY(T)  blocks_ok(data, nb, sizeof(T), OFFS(offsetof(T, d)))
#define D_M(T)     blocks_ok(data, nb, sizeof(T), OFFS(offsetof(T, d), offsetof(T, m)))
#define D_DMIN(T)  blocks_ok(data, nb, sizeof(T), OFFS(offsetof(T, d), offsetof(T, dmin)))

// d[0..n) of the interleaved blocks.
static bool dvec_ok(const void * data, size_t nb, size_t bsize, int n) {
    size_t off[8];
    for (int r = 0; r < n; ++r) off[r] = (size_t) r * sizeof(lm_ggml_half);
    return blocks_ok(data, nb, bsize, off, n);
}

bool lm_ggml_validate_row_data(enum lm_ggml_type type, const void * data, size_t nbytes) {
    if ((int) type < 0 || type >= LM_GGML_TYPE_COUNT || lm_ggml_get_type_traits(type)->type_size == 0) {
        lm_validate_report("invalid type %d", (int) type);
        return false;
    }
    const struct lm_ggml_type_traits * tt = lm_ggml_get_type_traits(type);
    const size_t tsize = tt->type_size;
    if (nbytes % tsize != 0) {
        lm_validate_report("invalid size %zu for type %s (type size = %zu)", nbytes, tt->type_name, tsize);
        return false;
    }
    const size_t nb = nbytes / tsize;

    switch (type) {
        case LM_GGML_TYPE_F32:  return plain_ok(data, nb, 4, 0x7fffffffu, 0x7f800000u, "F32");
        case LM_GGML_TYPE_F16:  return plain_ok(data, nb, 2, 0x7fffu, 0x7c00u, "F16");
        case LM_GGML_TYPE_BF16: return plain_ok(data, nb, 2, 0x7fffu, 0x7f80u, "BF16");
        case LM_GGML_TYPE_F64:  return plain_ok(data, nb, 8, 0x7fffffffffffffffull, 0x7ff0000000000000ull, "F64");

        case LM_GGML_TYPE_Q4_0:    return D_ONLY(block_q4_0);
        case LM_GGML_TYPE_Q4_1:    return D_M(block_q4_1);
        case LM_GGML_TYPE_Q5_0:    return D_ONLY(block_q5_0);
        case LM_GGML_TYPE_Q5_1:    return D_M(block_q5_1);
        case LM_GGML_TYPE_Q8_0:    return D_ONLY(block_q8_0);
        case LM_GGML_TYPE_Q8_1:    return blocks_ok(data, nb, sizeof(block_q8_1), OFFS(offsetof(block_q8_1, d), offsetof(block_q8_1, s)));
        case LM_GGML_TYPE_Q2_K:    return D_DMIN(block_q2_K);
        case LM_GGML_TYPE_Q3_K:    return D_ONLY(block_q3_K);
        case LM_GGML_TYPE_Q4_K:    return D_DMIN(block_q4_K);
        case LM_GGML_TYPE_Q5_K:    return D_DMIN(block_q5_K);
        case LM_GGML_TYPE_Q6_K:    return D_ONLY(block_q6_K);
        case LM_GGML_TYPE_Q8_K: {
            const block_q8_K * q = (const block_q8_K *) data;
            for (size_t i = 0; i < nb; ++i) {
                if (!f32_ok(q[i].d, i)) return false;
            }
            return true;
        }
        case LM_GGML_TYPE_TQ1_0:   return D_ONLY(block_tq1_0);
        case LM_GGML_TYPE_TQ2_0:   return D_ONLY(block_tq2_0);
        case LM_GGML_TYPE_IQ1_S:   return D_ONLY(block_iq1_s);
        case LM_GGML_TYPE_IQ1_M:   return lm_validate_iq_row(type, data, nbytes); // scale spread over the scales words
        case LM_GGML_TYPE_IQ2_XXS: return D_ONLY(block_iq2_xxs);
        case LM_GGML_TYPE_IQ2_XS:  return D_ONLY(block_iq2_xs);
        case LM_GGML_TYPE_IQ2_S:   return D_ONLY(block_iq2_s);
        case LM_GGML_TYPE_IQ3_XXS: return D_ONLY(block_iq3_xxs);
        case LM_GGML_TYPE_IQ3_S:   return D_ONLY(block_iq3_s);
        case LM_GGML_TYPE_IQ4_XS:  return D_ONLY(block_iq4_xs);
        case LM_GGML_TYPE_IQ4_NL:  return D_ONLY(block_iq4_nl);

        // the interleaved types: type_size is per row-block, the structs span several rows
        case LM_GGML_TYPE_Q4_0_4_4:
        case LM_GGML_TYPE_Q4_0_4_8:   return dvec_ok(data, nbytes / sizeof(block_q4_0x4), sizeof(block_q4_0x4), 4);
        case LM_GGML_TYPE_Q4_0_8_8:   return dvec_ok(data, nbytes / sizeof(block_q4_0x8), sizeof(block_q4_0x8), 8);
        case LM_GGML_TYPE_IQ4_NL_4_4: return dvec_ok(data, nbytes / sizeof(block_iq4_nlx4), sizeof(block_iq4_nlx4), 4);

        case LM_GGML_TYPE_I8:
        case LM_GGML_TYPE_I16:
        case LM_GGML_TYPE_I32:
        case LM_GGML_TYPE_I64:
            return true;

        default:
            lm_validate_report("invalid type %d", (int) type);
            return false;
    }
}
