// ggml-iquants.c - the i-quant formats: dequantization, the lattice tables the
// quantizers search, and the importance-weighted quantizers.
//
// The quantizers must give ggml's bits, so every float expression keeps
// ggml's association and evaluation order (a*b*c is (a*b)*c,
// sums run in element order), ties resolve the same way (first candidate wins,
// rounding is half-to-even), and the few quirks that leave traces in the
// output are kept on purpose; each is marked "quirk".
#include "ggml-iquants.h"
#include "../base/ggml-impl.h"
#include "../base/ggml-simd.h"
#include "quantize-simd.h"

// Fused multiply-adds would change the bits (ggml rounds every
// product), and compilers contract a*b + c by default on FMA targets such as
// arm64 or -march=native x86.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ggml's MAX: keeps the first operand unless the second is larger.
#define IQ_MAX(a, b) ((a) > (b) ? (a) : (b))

// ============================================================== dequantization

// Negation is a flip of the sign bit; doing it on the bits keeps the loops
// below branch-free (and vectorizable) with the same results as -v.
static inline float iq_negate_if(float v, unsigned bit) {
    return lm_fp32_from_bits(lm_fp32_bits(v) ^ (bit << 31));
}

// 8 outputs from a grid entry of 8 unsigned magnitudes and a sign byte.
static inline void iq_put8(float * y, uint64_t g, unsigned signs, float db) {
    for (int j = 0; j < 8; ++j) {
        y[j] = iq_negate_if(db * (float) (uint8_t) (g >> 8*j), (signs >> j) & 1);
    }
}

// 4 outputs from a grid entry of 4 magnitudes; sign bits start at bit s0.
static inline void iq_put4(float * y, uint32_t g, unsigned signs, int s0, float db) {
    for (int j = 0; j < 4; ++j) {
        y[j] = iq_negate_if(db * (float) (uint8_t) (g >> 8*j), (signs >> (s0 + j)) & 1);
    }
}

void lm_dequantize_row_iq2_xxs(const block_iq2_xxs * x, float * y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = LM_GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ++ib) {
            uint32_t w[2];
            memcpy(w, x[i].qs + 4*ib, sizeof(w)); // w[0]: 4 grid indices, w[1]: 4x7 sign bits + scale
            const float db = d * (0.5f + (float) (w[1] >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l, y += 8) {
                iq_put8(y, lm_iq2xxs_grid[(w[0] >> 8*l) & 255], lm_ksigns_iq2xs[(w[1] >> 7*l) & 127], db);
            }
        }
    }
}

void lm_dequantize_row_iq2_xs(const block_iq2_xs * x, float * y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = LM_GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const float db[2] = {
                d * (0.5f + (float) (x[i].scales[ib] & 0xf)) * 0.25f,
                d * (0.5f + (float) (x[i].scales[ib] >>  4)) * 0.25f,
            };
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint16_t q = x[i].qs[4*ib + l];
                iq_put8(y, lm_iq2xs_grid[q & 511], lm_ksigns_iq2xs[q >> 9], db[l/2]);
            }
        }
    }
}

void lm_dequantize_row_iq2_s(const block_iq2_s * x, float * y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = LM_GGML_FP16_TO_FP32(x[i].d);
        const uint8_t * signs = x[i].qs + QK_K/8;
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const float db[2] = {
                d * (0.5f + (float) (x[i].scales[ib] & 0xf)) * 0.25f,
                d * (0.5f + (float) (x[i].scales[ib] >>  4)) * 0.25f,
            };
            for (int l = 0; l < 4; ++l, y += 8) {
                const int idx = x[i].qs[4*ib + l] | (((x[i].qh[ib] >> 2*l) & 3) << 8);
                iq_put8(y, lm_iq2s_grid[idx], signs[4*ib + l], db[l/2]);
            }
        }
    }
}

void lm_dequantize_row_iq3_xxs(const block_iq3_xxs * x, float * y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = LM_GGML_FP16_TO_FP32(x[i].d);
        const uint8_t * qs = x[i].qs;
        for (int ib = 0; ib < QK_K/32; ++ib) {
            uint32_t w; // 4x7 sign bits + 4-bit scale
            memcpy(&w, x[i].qs + QK_K/4 + 4*ib, sizeof(w));
            const float db = d * (0.5f + (float) (w >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, y += 8) {
                const unsigned s = lm_ksigns_iq2xs[(w >> 7*l) & 127];
                iq_put4(y + 0, lm_iq3xxs_grid[qs[8*ib + 2*l + 0]], s, 0, db);
                iq_put4(y + 4, lm_iq3xxs_grid[qs[8*ib + 2*l + 1]], s, 4, db);
            }
        }
    }
}

void lm_dequantize_row_iq3_s(const block_iq3_s * x, float * y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = LM_GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const int ls = (x[i].scales[ib/2] >> 4*(ib%2)) & 0xf;
            const float db = d * (float) (1 + 2*ls);
            const uint8_t * qs = x[i].qs + 8*ib;
            const uint8_t * sg = x[i].signs + 4*ib;
            const unsigned qh = x[i].qh[ib];
            for (int l = 0; l < 4; ++l, y += 8) {
                const int i0 = qs[2*l + 0] | (((qh >> (2*l + 0)) & 1) << 8);
                const int i1 = qs[2*l + 1] | (((qh >> (2*l + 1)) & 1) << 8);
                iq_put4(y + 0, lm_iq3s_grid[i0], sg[l], 0, db);
                iq_put4(y + 4, lm_iq3s_grid[i1], sg[l], 4, db);
            }
        }
    }
}

// 8 outputs of iq1: dl * (g + delta) with g in {-1, 0, 1}.
static inline void iq1_put8(float * y, uint64_t g, float dl, float delta) {
    for (int j = 0; j < 8; ++j) {
        y[j] = dl * ((float) (int8_t) (uint8_t) (g >> 8*j) + delta);
    }
}

void lm_dequantize_row_iq1_s(const block_iq1_s * x, float * y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = LM_GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const unsigned qh = x[i].qh[ib];
            const float dl = d * (float) (2*((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -LM_IQ1S_DELTA : LM_IQ1S_DELTA;
            for (int l = 0; l < 4; ++l, y += 8) {
                const int idx = x[i].qs[4*ib + l] | (((qh >> 3*l) & 7) << 8);
                iq1_put8(y, lm_iq1s_grid[idx], dl, delta);
            }
        }
    }
}

// The 4 little-endian 16-bit words of an iq1_m scales field.
static inline void iq1m_words(const uint8_t * s, uint16_t w[4]) {
    for (int i = 0; i < 4; ++i) w[i] = (uint16_t) (s[2*i] | (s[2*i + 1] << 8));
}

// The fp16 super-block scale of iq1_m, spread over the top nibbles of the words.
static inline lm_ggml_fp16_t iq1m_scale(const uint16_t w[4]) {
    return (lm_ggml_fp16_t) ((w[0] >> 12) | ((w[1] >> 8) & 0x00f0) | ((w[2] >> 4) & 0x0f00) | (w[3] & 0xf000));
}

void lm_dequantize_row_iq1_m(const block_iq1_m * x, float * y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        uint16_t sc[4];
        iq1m_words(x[i].scales, sc);
        const float d = LM_GGML_FP16_TO_FP32(iq1m_scale(sc));
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const float dl[2] = {
                d * (float) (2*((sc[ib/2] >> (6*(ib%2) + 0)) & 7) + 1),
                d * (float) (2*((sc[ib/2] >> (6*(ib%2) + 3)) & 7) + 1),
            };
            for (int l = 0; l < 4; ++l, y += 8) {
                const unsigned h = x[i].qh[2*ib + l/2] >> 4*(l%2); // 3 index bits, then the delta sign
                const int idx = x[i].qs[4*ib + l] | ((h & 7) << 8);
                iq1_put8(y, lm_iq1s_grid[idx], dl[l/2], h & 8 ? -LM_IQ1M_DELTA : LM_IQ1M_DELTA);
            }
        }
    }
}

void lm_dequantize_row_iq4_nl(const block_iq4_nl * x, float * y, int64_t k) {
    const int64_t nb = k / QK4_NL;
    for (int64_t i = 0; i < nb; i++, y += QK4_NL) {
        const float d = LM_GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK4_NL/2; ++j) {
            y[j]            = d * (float) lm_kvalues_iq4nl[x[i].qs[j] & 0xf];
            y[j + QK4_NL/2] = d * (float) lm_kvalues_iq4nl[x[i].qs[j] >> 4];
        }
    }
}

void lm_dequantize_row_iq4_xs(const block_iq4_xs * x, float * y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = LM_GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ++ib, y += 32) {
            const int ls = ((x[i].scales_l[ib/2] >> 4*(ib%2)) & 0xf) | (((x[i].scales_h >> 2*ib) & 3) << 4);
            const float dl = d * (float) (ls - 32);
            const uint8_t * qs = x[i].qs + 16*ib;
            for (int j = 0; j < 16; ++j) {
                y[j]      = dl * (float) lm_kvalues_iq4nl[qs[j] & 0xf];
                y[j + 16] = dl * (float) lm_kvalues_iq4nl[qs[j] >> 4];
            }
        }
    }
}

// ============================================================== lattice tables
//
// A quantizer rounds a sub-vector of 8 (or 4) magnitudes to levels and packs
// them into a code of 2 (or 3) bits per coordinate. The map sends a code to
// its grid index, or, for a code that is not a grid point, to a list of
// candidate grid points: all points at the nwant smallest distinct squared
// distances, ordered by (distance, index), as ggml builds them
// in iq2xs_init_impl / iq3xs_init_impl.

enum { LAT_IQ2XXS, LAT_IQ2XS, LAT_IQ2S, LAT_IQ1S, LAT_IQ3XXS, LAT_IQ3S, LAT_COUNT };

typedef lm_iq_lattice iq_lattice; // quantize-simd.h

enum { LAT_HDR = LM_LAT_HDR, LAT_GROUP = LM_LAT_GROUP };

// A candidate list: count grid indices (idx) and their transposed levels.
typedef struct {
    int              count;
    const uint16_t * idx;
    const uint8_t  * tlev;
} iq_list;

static inline iq_list lat_list(const iq_lattice * lat, int32_t m) {
    const size_t o = (size_t) (-(int64_t) m - 1);
    const iq_list l = { lat->nbr[o], lat->nbr + o + LAT_HDR, lat->tlev + (o + LAT_HDR)*(size_t) lat->dim };
    return l;
}

static const struct {
    int n, dim, bits, maxlev, nwant;
    const void * codebook;
} lat_spec[LAT_COUNT] = {
    [LAT_IQ2XXS] = {  256, 8, 2, 2, 2, lm_iq2xxs_grid },
    [LAT_IQ2XS]  = {  512, 8, 2, 2, 2, lm_iq2xs_grid  },
    [LAT_IQ2S]   = { 1024, 8, 2, 2, 1, lm_iq2s_grid   },
    [LAT_IQ1S]   = { 2048, 8, 2, 2, 3, lm_iq1s_grid   },
    [LAT_IQ3XXS] = {  256, 4, 3, 7, 2, lm_iq3xxs_grid },
    [LAT_IQ3S]   = {  512, 4, 3, 7, 3, lm_iq3s_grid   },
};

static iq_lattice      lat_tab[LAT_COUNT];
static atomic_int      lat_ready[LAT_COUNT];
static pthread_mutex_t lat_lock = PTHREAD_MUTEX_INITIALIZER;

// Levels of the codebook entries: the rank of each byte among the codebook's
// distinct values (iq1 bytes are signed).
static void lat_levels(int id, uint8_t * lev) {
    const int n = lat_spec[id].n, dim = lat_spec[id].dim;
    const bool is_signed = id == LAT_IQ1S;
    bool seen[256] = { false };
    uint8_t rank[256];
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < dim; ++i) {
            const uint8_t b = dim == 8 ? (uint8_t) (((const uint64_t *) lat_spec[id].codebook)[j] >> 8*i)
                                       : (uint8_t) (((const uint32_t *) lat_spec[id].codebook)[j] >> 8*i);
            lev[j*dim + i] = b;
            seen[b] = true;
        }
    }
    int r = 0;
    for (int v = is_signed ? -128 : 0; v < (is_signed ? 128 : 256); ++v) {
        if (seen[(uint8_t) v]) rank[(uint8_t) v] = (uint8_t) r++;
    }
    for (int t = 0; t < n*dim; ++t) lev[t] = rank[lev[t]];
}

static bool lat_build(int id, iq_lattice * L) {
    const int n = lat_spec[id].n, dim = lat_spec[id].dim, bits = lat_spec[id].bits;
    const int nwant = lat_spec[id].nwant, maxlev = lat_spec[id].maxlev;
    const int ncode = 1 << (bits*dim);
    L->n = n; L->dim = dim; L->bits = bits; L->maxlev = maxlev;
    L->lev = malloc((size_t) n*dim);
    L->map = malloc(sizeof(int32_t)*ncode);
    int * d2 = malloc(sizeof(int)*n);
    size_t cap = 1 << 16, used = 0;
    L->nbr = malloc(sizeof(uint16_t)*cap);
    L->tlev = NULL;
    if (!L->lev || !L->map || !d2 || !L->nbr) goto fail;

    lat_levels(id, L->lev);
    for (int c = 0; c < ncode; ++c) L->map[c] = INT32_MIN; // never asked for
    for (int j = 0; j < n; ++j) {
        int c = 0;
        for (int i = 0; i < dim; ++i) c |= L->lev[j*dim + i] << bits*i;
        L->map[c] = j;
    }
    const int mask = (1 << bits) - 1;
    for (int c = 0; c < ncode; ++c) {
        if (L->map[c] >= 0) continue;
        int l[8];
        bool reachable = true;
        for (int i = 0; i < dim; ++i) {
            l[i] = (c >> bits*i) & mask;
            reachable &= l[i] <= maxlev;
        }
        if (!reachable) continue;
        // squared distances in level units (ggml's are 4x these: same order)
        int hist[256] = { 0 };
        for (int j = 0; j < n; ++j) {
            int s = 0;
            for (int i = 0; i < dim; ++i) {
                const int t = L->lev[j*dim + i] - l[i];
                s += t*t;
            }
            d2[j] = s;
            hist[s]++;
        }
        int limit = -1, have = 0, count = 0;
        for (int s = 0; s < 256 && have < nwant; ++s) {
            if (hist[s]) { limit = s; have++; count += hist[s]; }
        }
        const size_t slots = LAT_HDR + (size_t) (count + LAT_GROUP - 1)/LAT_GROUP*LAT_GROUP;
        if (used + slots > cap) {
            while (used + slots > cap) cap *= 2;
            uint16_t * p = realloc(L->nbr, sizeof(uint16_t)*cap);
            if (!p) goto fail;
            L->nbr = p;
        }
        L->map[c] = -(int32_t) (used + 1);
        memset(L->nbr + used, 0, sizeof(uint16_t)*LAT_HDR);
        L->nbr[used] = (uint16_t) count;
        // counting sort by distance; indices stay ascending within a distance
        int start[256];
        for (int s = 0, acc = 0; s <= limit; ++s) { start[s] = acc; acc += hist[s]; }
        uint16_t * out = L->nbr + used + LAT_HDR;
        for (int j = 0; j < n; ++j) {
            if (d2[j] <= limit) out[start[d2[j]]++] = (uint16_t) j;
        }
        for (size_t k = (size_t) count; k < slots - LAT_HDR; ++k) out[k] = out[count - 1];
        used += slots;
    }
    // the transposed levels of every list
    L->tlev = malloc((size_t) dim*used);
    if (!L->tlev) goto fail;
    for (size_t o = 0; o < used; ) {
        const size_t slots = LAT_HDR + (size_t) (L->nbr[o] + LAT_GROUP - 1)/LAT_GROUP*LAT_GROUP;
        for (size_t g = o + LAT_HDR; g < o + slots; g += LAT_GROUP) {
            uint8_t * t = L->tlev + g*dim;
            for (int i = 0; i < dim; ++i) {
                for (int k = 0; k < LAT_GROUP; ++k) t[i*LAT_GROUP + k] = L->lev[L->nbr[g + k]*dim + i];
            }
        }
        o += slots;
    }
    free(d2);
    return true;
fail:
    free(d2);
    free(L->lev); free(L->map); free(L->nbr); free(L->tlev);
    memset(L, 0, sizeof(*L));
    return false;
}

static const iq_lattice * lat_get(int id) {
    if (atomic_load_explicit(&lat_ready[id], memory_order_acquire)) return &lat_tab[id];
    pthread_mutex_lock(&lat_lock);
    bool ok = true;
    if (!atomic_load_explicit(&lat_ready[id], memory_order_relaxed)) {
        ok = lat_build(id, &lat_tab[id]);
        if (ok) atomic_store_explicit(&lat_ready[id], 1, memory_order_release);
    }
    pthread_mutex_unlock(&lat_lock);
    LM_GGML_ASSERT(ok && "out of memory building the i-quant tables");
    return &lat_tab[id];
}

static int lat_of_type(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS: return LAT_IQ2XXS;
        case LM_GGML_TYPE_IQ2_XS:  return LAT_IQ2XS;
        case LM_GGML_TYPE_IQ2_S:   return LAT_IQ2S;
        case LM_GGML_TYPE_IQ1_S:
        case LM_GGML_TYPE_IQ1_M:   return LAT_IQ1S;
        case LM_GGML_TYPE_IQ3_XXS: return LAT_IQ3XXS;
        case LM_GGML_TYPE_IQ3_S:   return LAT_IQ3S;
        default:                   return -1;
    }
}

void lm_ggml_iquants_init(enum lm_ggml_type type) {
    const int id = lat_of_type(type);
    if (id >= 0) (void) lat_get(id);
}

void lm_ggml_iquants_free(void) {
    pthread_mutex_lock(&lat_lock);
    for (int id = 0; id < LAT_COUNT; ++id) {
        if (!atomic_load_explicit(&lat_ready[id], memory_order_relaxed)) continue;
        atomic_store_explicit(&lat_ready[id], 0, memory_order_release);
        free(lat_tab[id].lev); free(lat_tab[id].map); free(lat_tab[id].nbr); free(lat_tab[id].tlev);
        memset(&lat_tab[id], 0, sizeof(lat_tab[id]));
    }
    pthread_mutex_unlock(&lat_lock);
}

bool lm_iq_is_iquant(enum lm_ggml_type type) {
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS: case LM_GGML_TYPE_IQ2_XS: case LM_GGML_TYPE_IQ2_S:
        case LM_GGML_TYPE_IQ3_XXS: case LM_GGML_TYPE_IQ3_S:
        case LM_GGML_TYPE_IQ1_S:   case LM_GGML_TYPE_IQ1_M:
        case LM_GGML_TYPE_IQ4_NL:  case LM_GGML_TYPE_IQ4_XS:
            return true;
        default:
            return false;
    }
}

static inline int lat_code(const iq_lattice * lat, const int8_t * l) {
    int c = 0;
    for (int i = 0; i < lat->dim; ++i) c |= l[i] << lat->bits*i;
    return c;
}

// Grid index of levels that should be a grid point. ggml aborts when
// they are not (only reachable with all-zero importance weights); we take the
// first candidate of the code instead.
static int lat_index(const iq_lattice * lat, int8_t * l) {
    for (int i = 0; i < lat->dim; ++i) l[i] = (int8_t) (l[i] < 0 ? 0 : l[i] > lat->maxlev ? lat->maxlev : l[i]);
    const int32_t m = lat->map[lat_code(lat, l)];
    if (m >= 0) return m;
    const int g = lat_list(lat, m).idx[0];
    memcpy(l, lat->lev + g*lat->dim, lat->dim);
    return g;
}

// ============================================================== shared helpers

// Round half to even through the float adder, exactly as ggml does
// (valid for |x| < 2^22).
static inline int iq_nearest_int(float fval) {
    const float val = fval + 12582912.f;
    int i;
    memcpy(&i, &val, sizeof(int));
    return (i & 0x007fffff) - 0x00400000;
}

static inline int iq_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static inline bool iq_use_avx2(void) {
#if defined(LM_X86)
    const enum lm_cpu_level lv = lm_cpu_level();
    return lv == LM_CPU_LEVEL_AVX2 || lv == LM_CPU_LEVEL_AVX512;
#else
    return false;
#endif
}

// The candidate of an off-grid code with the least error sum(w*(scale*q - x)^2)
// (summed in coordinate order; q[v] is the value of level v, 8 readable
// entries), the first in list order on ties; NaN errors keep the first
// candidate (ggml aborts). Returns its grid index.
static int lat_best(const iq_lattice * lat, iq_list list, const float * x, const float * w, float scale, const float * q) {
#if defined(LM_X86)
    if (iq_use_avx2()) return list.idx[lm_lat_best_avx2(x, w, scale, q, lat->dim, list.tlev, list.count)];
#endif
    const int dim = lat->dim, nlev = lat->maxlev + 1;
    float best = FLT_MAX;
    int g = list.idx[0];
    if (list.count <= nlev) {
        for (int c = 0; c < list.count; ++c) {
            const uint8_t * p = lat->lev + list.idx[c]*dim;
            float e = 0;
            for (int i = 0; i < dim; ++i) {
                const float diff = scale*q[p[i]] - x[i];
                e += w[i]*diff*diff;
            }
            if (e < best) { best = e; g = list.idx[c]; }
        }
    } else {
        // Long lists: the terms w*(scale*q - x)^2 depend only on (coordinate,
        // level), so tabulate them; each candidate is then a sum in coordinate
        // order, the same floats as computing them in place.
        float t[8][8];
        for (int i = 0; i < dim; ++i) {
            for (int v = 0; v < nlev; ++v) {
                const float diff = scale*q[v] - x[i];
                t[i][v] = w[i]*diff*diff;
            }
        }
        for (int c = 0; c < list.count; ++c) {
            const uint8_t * p = lat->lev + list.idx[c]*dim;
            float e = 0;
            for (int i = 0; i < dim; ++i) e += t[i][p[i]];
            if (e < best) { best = e; g = list.idx[c]; }
        }
    }
    return g;
}

// Values q = 2*level + 1 of the iq2/iq3 levels.
static const float iq_odd[8] = { 1, 3, 5, 7, 9, 11, 13, 15 };

// Rounds dim magnitudes x at inverse scale id to levels in [0, maxlev]. If the
// point is not on the grid, takes the candidate with the least weighted error
// sum(sw*(scale*q - x)^2), q = 2*level + 1 (first one on ties). Levels of the
// chosen point go to l; returns its index.
static int lat_snap(const iq_lattice * lat, const float * x, const float * sw, float id, float scale,
                    int8_t * l, bool * on_grid) {
    const int dim = lat->dim;
    for (int i = 0; i < dim; ++i) {
        l[i] = (int8_t) iq_clamp(iq_nearest_int(0.5f*(id*x[i] - 1)), 0, lat->maxlev);
    }
    const int32_t m = lat->map[lat_code(lat, l)];
    if (m >= 0) {
        *on_grid = true;
        return m;
    }
    *on_grid = false;
    const int g = lat_best(lat, lat_list(lat, m), x, sw, scale, iq_odd);
    memcpy(l, lat->lev + g*dim, dim);
    return g;
}

// sum(w*x*q) and sum(w*q*q) with q = 2*l + 1.
static inline void iq_sums(int n, const float * w, const float * x, const int8_t * l, float * sqx, float * sq2) {
    float a = 0, b = 0;
    for (int i = 0; i < n; ++i) {
        const float q = (float) (2*l[i] + 1);
        a += w[i]*x[i]*q;
        b += w[i]*q*q;
    }
    *sqx = a;
    *sq2 = b;
}

// Magnitudes of 8 values and their sign bits. With even_parity, only 7 sign
// bits are stored (the 8th is implied by an even count of negatives), so for
// an odd count the value with the least w*x*x is taken with the wrong sign.
static uint8_t iq_fold_signs(const float * x, const float * w, float * ax, bool even_parity) {
    unsigned s = 0;
    int nneg = 0;
    for (int i = 0; i < 8; ++i) {
        if (x[i] >= 0) {
            ax[i] = x[i];
        } else {
            ax[i] = -x[i];
            s |= 1u << i;
            nneg++;
        }
    }
    if (even_parity && (nneg & 1)) {
        int imin = 0;
        float min = w[0]*x[0]*x[0];
        for (int i = 1; i < 8; ++i) {
            const float e = w[i]*x[i]*x[i];
            if (e < min) { min = e; imin = i; }
        }
        ax[imin] = -ax[imin];
        s ^= 1u << imin;
    }
    return (uint8_t) (even_parity ? s & 127 : s);
}

static float iq_sumsq(const float * x, int n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += x[i]*x[i];
    return s;
}

// A weighted least-squares scale for n non-negative x on levels 0..nmax: the
// make_qp_quants of ggml (grid of 9 trial scales, then coordinate descent).
static float iq_qp_scale(int n, int nmax, const float * x, uint8_t * L, const float * w) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = IQ_MAX(max, x[i]);
    if (!max) {
        memset(L, 0, n);
        return 0.f;
    }
    float iscale = nmax / max;
    for (int i = 0; i < n; ++i) L[i] = (uint8_t) iq_nearest_int(iscale * x[i]);
    const float scale = 1/iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale*L[i];
        best_mse += w[i]*diff*diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = (0.1f*is + nmax)/max;
        const float scale_is = 1/iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            const int l = LM_GGML_MIN(nmax, iq_nearest_int(iscale_is*x[i]));
            const float diff = x[i] - scale_is*l;
            mse += w[i]*diff*diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = LM_GGML_MIN(nmax, iq_nearest_int(iscale * x[i]));
        L[i] = (uint8_t) l;
        sumlx += w[i]*x[i]*l;
        suml2 += w[i]*l*l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            float slx = sumlx - w[i]*x[i]*L[i];
            float sl2 = suml2 - w[i]*L[i]*L[i];
            if (slx > 0 && sl2 > 0) {
                const int new_l = LM_GGML_MIN(nmax, iq_nearest_int(x[i] * sl2 / slx));
                if (new_l != L[i]) {
                    slx += w[i]*x[i]*new_l;
                    sl2 += w[i]*new_l*new_l;
                    if (slx*slx*suml2 > sumlx*sumlx*sl2) {
                        L[i] = (uint8_t) new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    return sumlx/suml2;
}

// ============================================================== lattice scale search (iq2, iq3)
//
// One block of n magnitudes xv (sub-vectors of lat->dim) with weights w and
// their square roots sw: try the inverse scales (base + is*step)/ref for is in
// [-nis, nis], snap every sub-vector to the lattice and keep the scale of the
// best weighted fit; then re-snap at that scale and fit once more.

enum iq_refine {
    REFINE_ALL,        // re-snap every sub-vector if the scale is positive (iq2_xxs)
    REFINE_OFF_GRID,   // re-snap those that fell off the grid (iq2_xs, iq2_s, iq3_xxs)
    REFINE_ALL_IF_OFF, // re-snap every sub-vector if any fell off (iq3_s)
};

typedef struct {
    const iq_lattice * lat;
    int   n;
    float base, step;
    int   nis;
    enum iq_refine refine;
} iq_search;

enum { IQ_MAX_TRIALS = 32 };

// Every trial of a search: for inverse scale ids[t], the levels of the snapped
// sub-vectors (Lt + 32*t), their on-grid flags (on + 8*t) and the sums
// sum(w*x*q), sum(w*q*q) of the fit. Lt holds 32*IQ_MAX_TRIALS + 4 bytes.
static void iq_trials(const iq_search * s, const float * xv, const float * w, const float * sw, const float * ids,
                      int ntrial, int8_t * Lt, bool * on, float * sqx, float * sq2) {
#if defined(LM_X86)
    if (iq_use_avx2()) {
        lm_iq_trials_avx2(s->lat, s->n, xv, w, sw, ids, ntrial, Lt, on, sqx, sq2);
        return;
    }
#endif
    const int dim = s->lat->dim, nsub = s->n / dim;
    for (int t = 0; t < ntrial; ++t) {
        const float this_scale = 1/ids[t];
        for (int k = 0; k < nsub; ++k) {
            lat_snap(s->lat, xv + dim*k, sw + dim*k, ids[t], this_scale, Lt + 32*t + dim*k, on + 8*t + k);
        }
        iq_sums(s->n, w, xv, Lt + 32*t, sqx + t, sq2 + t);
    }
}

// L and on_grid carry state between blocks, as in ggml: a block whose
// fits all fail keeps the previous block's levels (quirk).
static float iq_search_scale(const iq_search * s, const float * xv, const float * w, const float * sw,
                             float ref, float scale, int8_t * L, bool * on_grid) {
    const int dim = s->lat->dim, nsub = s->n / dim, ntrial = 2*s->nis + 1;
    float ids[IQ_MAX_TRIALS], sqx[IQ_MAX_TRIALS], sq2[IQ_MAX_TRIALS];
    int8_t Lt[32*IQ_MAX_TRIALS + 4];
    bool on[8*IQ_MAX_TRIALS];
    LM_GGML_ASSERT(ntrial <= IQ_MAX_TRIALS);
    for (int t = 0; t < ntrial; ++t) ids[t] = (s->base + (float) (t - s->nis)*s->step)/ref;
    iq_trials(s, xv, w, sw, ids, ntrial, Lt, on, sqx, sq2);
    float best = 0;
    for (int t = 0; t < ntrial; ++t) {
        if (sq2[t] > 0 && sqx[t]*sqx[t] > best*sq2[t]) {
            scale = sqx[t]/sq2[t];
            best = scale*sqx[t];
            memcpy(L, Lt + 32*t, s->n);
            memcpy(on_grid, on + 8*t, nsub);
        }
    }
    int n_off = 0;
    for (int k = 0; k < nsub; ++k) n_off += !on_grid[k];
    const bool again = s->refine == REFINE_ALL ? scale > 0 : n_off > 0 && scale > 0;
    if (again) {
        const float id = 1/scale;
        for (int k = 0; k < nsub; ++k) {
            if (s->refine == REFINE_OFF_GRID && on_grid[k]) continue;
            bool dummy;
            lat_snap(s->lat, xv + dim*k, sw + dim*k, id, scale, L + dim*k, &dummy);
        }
        float sumqx, sumq2;
        iq_sums(s->n, w, xv, L, &sumqx, &sumq2);
        if (sumq2 > 0) scale = sumqx/sumq2;
    }
    return scale;
}

// Per-row scratch that ggml keeps across blocks (see quirks).
typedef struct {
    int8_t L[32];
    bool   on_grid[8];
} iq_carry;

// Weights of the iq2/iq3/iq4 quantizers: qw*sqrt(sigma2 + x^2) with an imatrix.
static void iq_weights(float * w, const float * x, const float * qw, float sigma2, int n) {
    for (int i = 0; i < n; ++i) w[i] = qw[i] * sqrtf(sigma2 + x[i]*x[i]);
}

// ============================================================== iq2_xxs, iq2_xs, iq2_s

static void quantize_row_iq2_xxs(const float * x, block_iq2_xxs * y, int64_t n, const float * qw_row, iq_carry * c) {
    const iq_search S = { lat_get(LAT_IQ2XXS), 32, 5.0f, 0.1f, 6, REFINE_ALL };
    for (int64_t ibl = 0; ibl < n/QK_K; ++ibl) {
        const float * xbl = x + QK_K*ibl;
        uint32_t q2[2*(QK_K/32)] = { 0 };
        float scales[QK_K/32];
        float max_scale = 0;
        y[ibl].d = LM_GGML_FP32_TO_FP16(0.f);
        const float sigma2 = iq_sumsq(xbl, QK_K)/QK_K;
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const float * xb = xbl + 32*ib;
            float w[32], sw[32], xv[32];
            uint8_t signs[4];
            iq_weights(w, xb, qw_row + QK_K*ibl + 32*ib, sigma2, 32);
            for (int i = 0; i < 32; ++i) sw[i] = sqrtf(w[i]);
            for (int k = 0; k < 4; ++k) signs[k] = iq_fold_signs(xb + 8*k, w + 8*k, xv + 8*k, true);
            float max = xv[0];
            for (int i = 1; i < 32; ++i) max = IQ_MAX(max, xv[i]);
            if (max < 1e-15f) {
                scales[ib] = 0;
                memset(c->L, 0, 32);
                continue;
            }
            float scale = iq_qp_scale(32, 4, xv, (uint8_t *) c->L, w);
            scale = iq_search_scale(&S, xv, w, sw, scale*3, scale, c->L, c->on_grid);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 4; ++k) signs[k] = (uint8_t) (~signs[k] & 127);
            }
            for (int k = 0; k < 4; ++k) {
                q2[2*ib + 0] |= (uint32_t) lat_index(S.lat, c->L + 8*k) << 8*k;
                q2[2*ib + 1] |= (uint32_t) signs[k] << 7*k;
            }
            scales[ib] = scale;
            max_scale = IQ_MAX(max_scale, scale);
        }
        if (!max_scale) {
            memset(y[ibl].qs, 0, QK_K/4);
            continue;
        }
        const float d = max_scale/31;
        y[ibl].d = LM_GGML_FP32_TO_FP16(d);
        const float id = 1/d;
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const int l = iq_clamp(iq_nearest_int(0.5f*(id*scales[ib] - 1)), 0, 15);
            q2[2*ib + 1] |= (uint32_t) l << 28;
        }
        memcpy(y[ibl].qs, q2, QK_K/4);
    }
}

// iq2_xs and iq2_s: blocks of 16 with a 4-bit scale each.
static void quantize_row_iq2_16(bool is_s, const float * x, void * vy, int64_t n, const float * qw_row, iq_carry * c) {
    const iq_search S = { lat_get(is_s ? LAT_IQ2S : LAT_IQ2XS), 16, 5.0f, 0.1f, 9, REFINE_OFF_GRID };
    block_iq2_xs * yx = vy;
    block_iq2_s  * ys = vy;
    for (int64_t ibl = 0; ibl < n/QK_K; ++ibl) {
        const float * xbl = x + QK_K*ibl;
        uint8_t * bscales = is_s ? ys[ibl].scales : yx[ibl].scales;
        uint16_t q2[QK_K/16*2] = { 0 }; // iq2_xs: index | signs << 9
        float scales[QK_K/16];
        float max_scale = 0;
        if (is_s) memset(&ys[ibl], 0, sizeof(block_iq2_s));
        else      memset(yx[ibl].scales, 0, QK_K/32);
        const float sumx2 = iq_sumsq(xbl, QK_K);
        const float sigma2 = is_s ? 2*sumx2/QK_K : sumx2/QK_K;
        for (int ib = 0; ib < QK_K/16; ++ib) {
            const float * xb = xbl + 16*ib;
            float w[16], sw[16], xv[16];
            uint8_t signs[2];
            if (qw_row) {
                iq_weights(w, xb, qw_row + QK_K*ibl + 16*ib, sigma2, 16);
            } else {
                for (int i = 0; i < 16; ++i) w[i] = 0.25f*sigma2 + xb[i]*xb[i];
            }
            for (int i = 0; i < 16; ++i) sw[i] = sqrtf(w[i]);
            for (int k = 0; k < 2; ++k) signs[k] = iq_fold_signs(xb + 8*k, w + 8*k, xv + 8*k, !is_s);
            float max = xv[0];
            for (int i = 1; i < 16; ++i) max = IQ_MAX(max, xv[i]);
            if (max < (is_s ? 1e-8f : 1e-15f)) {
                scales[ib] = 0;
                if (!is_s) memset(c->L, 0, 16);
                continue;
            }
            c->on_grid[0] = c->on_grid[1] = true;
            float scale = iq_search_scale(&S, xv, w, sw, max, max/5, c->L, c->on_grid);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 2; ++k) signs[k] = (uint8_t) (is_s ? ~signs[k] : ~signs[k] & 127);
            }
            for (int k = 0; k < 2; ++k) {
                const int g = lat_index(S.lat, c->L + 8*k);
                const int i8 = 2*ib + k;
                if (is_s) {
                    ys[ibl].qs[i8] = (uint8_t) (g & 255);
                    ys[ibl].qh[i8/4] |= (uint8_t) ((g >> 8) << 2*(i8%4));
                    ys[ibl].qs[QK_K/8 + i8] = signs[k];
                } else {
                    q2[i8] = (uint16_t) (g | (signs[k] << 9));
                }
            }
            scales[ib] = scale;
            max_scale = IQ_MAX(max_scale, scale);
        }
        if (!max_scale) {
            if (!is_s) {
                yx[ibl].d = LM_GGML_FP32_TO_FP16(0.f);
                memset(yx[ibl].qs, 0, QK_K/4);
            }
            continue;
        }
        const float d = max_scale/31;
        const lm_ggml_fp16_t dh = LM_GGML_FP32_TO_FP16(is_s ? d * 0.9875f : d);
        const float id = 1/d;
        for (int ib = 0; ib < QK_K/16; ++ib) {
            const int l = iq_clamp(iq_nearest_int(0.5f*(id*scales[ib] - 1)), 0, 15);
            if (ib%2 == 0) bscales[ib/2] = (uint8_t) l;
            else           bscales[ib/2] |= (uint8_t) (l << 4);
        }
        if (is_s) {
            ys[ibl].d = dh;
        } else {
            yx[ibl].d = dh;
            memcpy(yx[ibl].qs, q2, QK_K/4);
        }
    }
}

// ============================================================== iq3_xxs, iq3_s

static void quantize_row_iq3_xxs(const float * x, block_iq3_xxs * y, int64_t n, const float * qw_row, iq_carry * c) {
    const iq_search S = { lat_get(LAT_IQ3XXS), 32, 15.0f, 0.2f, 15, REFINE_OFF_GRID };
    for (int64_t ibl = 0; ibl < n/QK_K; ++ibl) {
        const float * xbl = x + QK_K*ibl;
        uint8_t q3[3*QK_K/8] = { 0 };   // grid indices, then 32-bit signs+scale words
        uint32_t sas[QK_K/32] = { 0 };
        float scales[QK_K/32];
        float max_scale = 0;
        y[ibl].d = LM_GGML_FP32_TO_FP16(0.f);
        const float sigma2 = 2*iq_sumsq(xbl, QK_K)/QK_K;
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const float * xb = xbl + 32*ib;
            float w[32], sw[32], xv[32];
            uint8_t signs[4];
            if (qw_row) {
                iq_weights(w, xb, qw_row + QK_K*ibl + 32*ib, sigma2, 32);
            } else {
                for (int i = 0; i < 32; ++i) w[i] = xb[i]*xb[i];
            }
            for (int i = 0; i < 32; ++i) sw[i] = sqrtf(w[i]);
            for (int k = 0; k < 4; ++k) signs[k] = iq_fold_signs(xb + 8*k, w + 8*k, xv + 8*k, true);
            float max = xv[0];
            for (int i = 1; i < 32; ++i) max = IQ_MAX(max, xv[i]);
            if (max < 1e-8f) {
                scales[ib] = 0;
                memset(c->L, 0, 32);
                continue;
            }
            // quirk: on_grid is not reset between blocks here
            float scale = iq_search_scale(&S, xv, w, sw, max, max/15, c->L, c->on_grid);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 4; ++k) signs[k] = (uint8_t) (~signs[k] & 127);
            }
            for (int k = 0; k < 8; ++k) q3[8*ib + k] = (uint8_t) lat_index(S.lat, c->L + 4*k);
            sas[ib] = signs[0] | (signs[1] << 7) | (signs[2] << 14) | ((uint32_t) signs[3] << 21);
            scales[ib] = scale;
            max_scale = IQ_MAX(max_scale, scale);
        }
        if (!max_scale) {
            memset(y[ibl].qs, 0, sizeof(y[ibl].qs));
            continue;
        }
        const float d = max_scale/31;
        y[ibl].d = LM_GGML_FP32_TO_FP16(d * 1.0125f);
        const float id = 1/d;
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const int l = iq_clamp(iq_nearest_int(0.5f*(id*scales[ib] - 1)), 0, 15);
            sas[ib] |= (uint32_t) l << 28;
        }
        memcpy(q3 + QK_K/4, sas, sizeof(sas));
        memcpy(y[ibl].qs, q3, sizeof(q3));
    }
}

static void quantize_row_iq3_s(const float * x, block_iq3_s * y, int64_t n, const float * qw_row, iq_carry * c) {
    const iq_search S = { lat_get(LAT_IQ3S), 32, 15.0f, 0.2f, 9, REFINE_ALL_IF_OFF };
    for (int64_t ibl = 0; ibl < n/QK_K; ++ibl) {
        const float * xbl = x + QK_K*ibl;
        float scales[QK_K/32];
        float max_scale = 0;
        memset(&y[ibl], 0, sizeof(block_iq3_s));
        y[ibl].d = LM_GGML_FP32_TO_FP16(0.f);
        // quirk: a skipped (all-zero) block does not advance these, so the
        // indices and signs of later blocks land one block early.
        uint8_t * qs = y[ibl].qs;
        uint8_t * sg = y[ibl].signs;
        const float sigma2 = 2*iq_sumsq(xbl, QK_K)/QK_K;
        for (int ib = 0; ib < QK_K/32; ++ib) {
            const float * xb = xbl + 32*ib;
            float w[32], sw[32], xv[32];
            uint8_t signs[4];
            if (qw_row) {
                iq_weights(w, xb, qw_row + QK_K*ibl + 32*ib, sigma2, 32);
            } else {
                for (int i = 0; i < 32; ++i) w[i] = xb[i]*xb[i];
            }
            for (int i = 0; i < 32; ++i) sw[i] = sqrtf(w[i]);
            for (int k = 0; k < 4; ++k) signs[k] = iq_fold_signs(xb + 8*k, w + 8*k, xv + 8*k, false);
            float max = xv[0];
            for (int i = 1; i < 32; ++i) max = IQ_MAX(max, xv[i]);
            if (!max) {
                scales[ib] = 0;
                continue;
            }
            for (int k = 0; k < 8; ++k) c->on_grid[k] = false;
            float scale = iq_search_scale(&S, xv, w, sw, max, max/15, c->L, c->on_grid);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 4; ++k) signs[k] = (uint8_t) ~signs[k];
            }
            for (int k = 0; k < 8; ++k) {
                const int g = lat_index(S.lat, c->L + 4*k);
                qs[k] = (uint8_t) (g & 255);
                y[ibl].qh[ib] |= (uint8_t) ((g >> 8) << k);
            }
            qs += 8;
            memcpy(sg, signs, 4);
            sg += 4;
            scales[ib] = scale;
            max_scale = IQ_MAX(max_scale, scale);
        }
        if (!max_scale) continue;
        const float d = max_scale/31;
        y[ibl].d = LM_GGML_FP32_TO_FP16(d * 1.033f);
        const float id = 1/d;
        for (int ib = 0; ib < QK_K/32; ib += 2) {
            const int l1 = iq_clamp(iq_nearest_int(0.5f*(id*scales[ib + 0] - 1)), 0, 15);
            const int l2 = iq_clamp(iq_nearest_int(0.5f*(id*scales[ib + 1] - 1)), 0, 15);
            y[ibl].scales[ib/2] = (uint8_t) (l1 | (l2 << 4));
        }
    }
}

// ============================================================== iq1_s, iq1_m
//
// Values map to {-1, 0, 1} + shift with shift = +-delta. The best 3-way split
// of the block is found exhaustively over the values sorted ascending (for
// each split the least-squares scale is closed form), then each octet is
// snapped to the grid.

typedef struct {
    float x;
    int   i;
} iq1_pair;

// Ascending by value, equal values in their original order (ggml's
// qsort is glibc's merge sort, which is stable).
static void iq1_sort(iq1_pair * p, int n) {
    for (int a = 1; a < n; ++a) {
        const iq1_pair t = p[a];
        int b = a;
        while (b > 0 && t.x < p[b - 1].x) { p[b] = p[b - 1]; --b; }
        p[b] = t;
    }
}

// Snaps an octet of levels l to the grid: its index if on the grid, else the
// candidate with the least sum(w*(scale*xg[level] - x)^2) (levels to l).
static int iq1_snap(const iq_lattice * lat, int8_t * l, const float * x, const float * w, float scale, const float * xg) {
    const int32_t m = lat->map[lat_code(lat, l)];
    if (m >= 0) return m;
    const float q[8] = { xg[0], xg[1], xg[2] };
    const int g = lat_best(lat, lat_list(lat, m), x, w, scale, q);
    memcpy(l, lat->lev + g*8, 8);
    return g;
}

// The best 3-way split of the 32 sorted values of an iq1_s block: positions
// [0, i1) take level 0, [i1, i2) level 1, [i2, 32) level 2, with the level
// values of variant v (0: x_p, 1: x_m); sumx/sumw are the prefix sums of w*x
// and w over the sorted values. Splits are tried in the order (i1, i2, v);
// one is kept if its fit beats the best so far.
static void iq1s_split(const float * sumx, const float * sumw, const float * x_p, const float * x_m, lm_iq1_split * r) {
#if defined(LM_X86)
    if (iq_use_avx2()) {
        lm_iq1s_split_avx2(sumx, sumw, x_p, x_m, r);
        return;
    }
#endif
    enum { BS = 32 };
    for (int i1 = 0; i1 <= BS; ++i1) {
        for (int i2 = i1; i2 <= BS; ++i2) {
            for (int t = 0; t < 2; ++t) {
                const float * v = t == 0 ? x_p : x_m;
                const float sumqx = (sumx[i1] - sumx[0])*v[0] + (sumx[i2] - sumx[i1])*v[1] + (sumx[BS] - sumx[i2])*v[2];
                const float sumq2 = (sumw[i1] - sumw[0])*v[0]*v[0] + (sumw[i2] - sumw[i1])*v[1]*v[1] + (sumw[BS] - sumw[i2])*v[2]*v[2];
                if (sumq2 > 0 && sumqx*sumqx > r->best*sumq2) {
                    r->scale = sumqx/sumq2;
                    r->best = r->scale*sumqx;
                    r->i1 = i1; r->i2 = i2; r->v = t;
                }
            }
        }
    }
}

// Levels 0/1/2 of the sorted positions [0, i1), [i1, i2), [i2, n).
static void iq1_assign(int8_t * L, const iq1_pair * p, int n, int i1, int i2) {
    for (int j = 0; j < n; ++j) L[p[j].i] = (int8_t) (j < i1 ? 0 : j < i2 ? 1 : 2);
}

static void quantize_row_iq1_s(const float * x, block_iq1_s * y, int64_t n, const float * qw_row, int8_t * shifts) {
    const iq_lattice * lat = lat_get(LAT_IQ1S);
    const float x_p[3] = { -1 + LM_IQ1S_DELTA,  LM_IQ1S_DELTA, 1 + LM_IQ1S_DELTA };
    const float x_m[3] = { -1 - LM_IQ1S_DELTA, -LM_IQ1S_DELTA, 1 - LM_IQ1S_DELTA };
    enum { BS = 32 };
    for (int64_t ibl = 0; ibl < n/QK_K; ++ibl) {
        const float * xbl = x + QK_K*ibl;
        float scales[QK_K/BS];
        float max_scale = 0;
        y[ibl].d = LM_GGML_FP32_TO_FP16(0.f);
        memset(y[ibl].qs, 0, sizeof(y[ibl].qs));
        memset(y[ibl].qh, 0, sizeof(y[ibl].qh));
        const float sigma2 = 2*iq_sumsq(xbl, QK_K)/QK_K;
        for (int ib = 0; ib < QK_K/BS; ++ib) {
            const float * xb = xbl + BS*ib;
            float w[BS];
            iq_weights(w, xb, qw_row + QK_K*ibl + BS*ib, sigma2, BS);
            float max = fabsf(xb[0]);
            for (int i = 1; i < BS; ++i) max = IQ_MAX(max, fabsf(xb[i]));
            if (max < 1e-12f) {
                scales[ib] = 0; // quirk: shifts[ib] keeps its previous value
                continue;
            }
            iq1_pair p[BS];
            for (int j = 0; j < BS; ++j) { p[j].x = xb[j]; p[j].i = j; }
            iq1_sort(p, BS);
            float sumx[BS + 8] = { 0 }, sumw[BS + 8] = { 0 }; // padded for the SIMD loads
            for (int j = 0; j < BS; ++j) {
                sumx[j + 1] = sumx[j] + w[p[j].i]*xb[p[j].i];
                sumw[j + 1] = sumw[j] + w[p[j].i];
            }
            lm_iq1_split sp = { -FLT_MIN, max, -1, -1, 0 };
            iq1s_split(sumx, sumw, x_p, x_m, &sp);
            float scale = sp.scale;
            int bi1 = sp.i1, bi2 = sp.i2, shift = sp.v == 0 ? 1 : -1;
            if (bi1 < 0) { bi1 = 0; bi2 = BS; shift = 1; } // only with zero weights (ggml aborts)
            int8_t L[BS];
            iq1_assign(L, p, BS, bi1, bi2);
            if (scale < 0) {
                for (int j = 0; j < BS; ++j) L[j] = (int8_t) (2 - L[j]);
                scale = -scale;
                shift = -shift;
            }
            const float * xx = shift == 1 ? x_p : x_m;
            int index[BS/8];
            bool all_on_grid = true;
            for (int k = 0; k < BS/8; ++k) {
                all_on_grid &= lat->map[lat_code(lat, L + 8*k)] >= 0;
                index[k] = iq1_snap(lat, L + 8*k, xb + 8*k, w + 8*k, scale, xx);
            }
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < BS/8; ++k) {
                    const uint8_t * pg = lat->lev + index[k]*8;
                    for (int j = 0; j < 8; ++j) {
                        const float ww = w[8*k + j];
                        const float q = xx[pg[j]];
                        sumqx += ww*q*xb[8*k + j];
                        sumq2 += ww*q*q;
                    }
                }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx/sumq2;
            }
            uint16_t h = 0;
            for (int k = 0; k < BS/8; ++k) {
                y[ibl].qs[(BS/8)*ib + k] = (uint8_t) (index[k] & 255);
                h |= (uint16_t) ((index[k] >> 8) << 3*k);
            }
            y[ibl].qh[ib] = h;
            scales[ib] = scale;
            shifts[ib] = (int8_t) shift;
            max_scale = IQ_MAX(max_scale, scale);
        }
        if (!max_scale) continue;
        const float d = max_scale/15;
        y[ibl].d = LM_GGML_FP32_TO_FP16(d*1.125f);
        const float id = 1/d;
        for (int ib = 0; ib < QK_K/BS; ++ib) {
            int l = iq_clamp(iq_nearest_int(0.5f*(id*scales[ib] - 1)), 0, 7);
            if (shifts[ib] == -1) l |= 8;
            y[ibl].qh[ib] |= (uint16_t) (l << 12);
        }
    }
}

// iq1_m: blocks of 16 whose two octets shift independently. Variant k of the
// split search: octet 0 shifts + for k < 2, octet 1 shifts + for even k.
static inline const float * iq1m_shift(int k, int octet, const float * x_p, const float * x_m) {
    return (octet == 0 ? k < 2 : k % 2 == 0) ? x_p : x_m;
}

// The best split of the 16 sorted values of an iq1_m block, over the splits
// (i1, i2) and the four shift variants k, in that order. t holds the terms
// per (position, segment) as w*q*x for k = 0..3, then w*q*q for k = 0..3; the
// sums of each split run over the positions in order (shared prefixes kept).
static void iq1m_split(const float * t, lm_iq1_split * r) {
#if defined(LM_X86)
    if (iq_use_avx2()) {
        lm_iq1m_split_avx2(t, r);
        return;
    }
#endif
    enum { BS = 16 };
    float a0[8] = { 0 };
    for (int i1 = 0; i1 <= BS; ++i1) {
        if (i1 > 0) {
            for (int k = 0; k < 8; ++k) a0[k] += t[((i1 - 1)*3 + 0)*8 + k];
        }
        float a1[8];
        memcpy(a1, a0, sizeof(a1));
        for (int i2 = i1; i2 <= BS; ++i2) {
            if (i2 > i1) {
                for (int k = 0; k < 8; ++k) a1[k] += t[((i2 - 1)*3 + 1)*8 + k];
            }
            float sq[8];
            memcpy(sq, a1, sizeof(sq));
            for (int j = i2; j < BS; ++j) {
                for (int k = 0; k < 8; ++k) sq[k] += t[(j*3 + 2)*8 + k];
            }
            for (int k = 0; k < 4; ++k) {
                if (sq[4 + k] > 0 && sq[k]*sq[k] > r->best*sq[4 + k]) {
                    r->scale = sq[k]/sq[4 + k];
                    r->best = r->scale*sq[k];
                    r->i1 = i1; r->i2 = i2; r->v = k;
                }
            }
        }
    }
}

static void quantize_row_iq1_m(const float * x, block_iq1_m * y, int64_t n, const float * qw_row, int8_t * shifts) {
    const iq_lattice * lat = lat_get(LAT_IQ1S);
    const float x_p[3] = { -1 + LM_IQ1M_DELTA,  LM_IQ1M_DELTA, 1 + LM_IQ1M_DELTA };
    const float x_m[3] = { -1 - LM_IQ1M_DELTA, -LM_IQ1M_DELTA, 1 - LM_IQ1M_DELTA };
    static const uint8_t masks[4] = { 0x00, 0x80, 0x08, 0x88 };
    enum { BS = 16 };
    for (int64_t ibl = 0; ibl < n/QK_K; ++ibl) {
        const float * xbl = x + QK_K*ibl;
        float scales[QK_K/BS];
        float max_scale = 0;
        memset(&y[ibl], 0, sizeof(block_iq1_m));
        const float sigma2 = 2*iq_sumsq(xbl, QK_K)/QK_K;
        for (int ib = 0; ib < QK_K/BS; ++ib) {
            const float * xb = xbl + BS*ib;
            float w[BS];
            if (qw_row) {
                iq_weights(w, xb, qw_row + QK_K*ibl + BS*ib, sigma2, BS);
            } else {
                for (int i = 0; i < BS; ++i) w[i] = xb[i]*xb[i];
            }
            float max = fabsf(xb[0]);
            for (int i = 1; i < BS; ++i) max = IQ_MAX(max, fabsf(xb[i]));
            if (max < 1e-7f) {
                scales[ib] = 0; // quirk: shifts[ib] keeps its previous value
                continue;
            }
            iq1_pair p[BS];
            for (int j = 0; j < BS; ++j) { p[j].x = xb[j]; p[j].i = j; }
            iq1_sort(p, BS);
            // The sums of each split run over the sorted positions in order;
            // tabulate their terms per (position, segment, variant) and reuse
            // the partial sums of the common prefixes.
            float t[BS][3][8]; // [position][segment][w*q*x of variants 0-3, w*q*q of 0-3]
            for (int j = 0; j < BS; ++j) {
                const int i = p[j].i;
                for (int sg = 0; sg < 3; ++sg) {
                    const float qxp = w[i]*x_p[sg]*xb[i], qxm = w[i]*x_m[sg]*xb[i];
                    const float q2p = w[i]*x_p[sg]*x_p[sg], q2m = w[i]*x_m[sg]*x_m[sg];
                    for (int k = 0; k < 4; ++k) {
                        const bool plus = iq1m_shift(k, i < BS/2 ? 0 : 1, x_p, x_m) == x_p;
                        t[j][sg][k]     = plus ? qxp : qxm;
                        t[j][sg][4 + k] = plus ? q2p : q2m;
                    }
                }
            }
            lm_iq1_split sp = { -FLT_MIN, max, -1, -1, -1 };
            iq1m_split(&t[0][0][0], &sp);
            float scale = sp.scale;
            int bi1 = sp.i1, bi2 = sp.i2, best_k = sp.v;
            if (bi1 < 0) { bi1 = 0; bi2 = BS; best_k = 0; } // only with zero weights (ggml aborts)
            int8_t L[BS];
            iq1_assign(L, p, BS, bi1, bi2);
            if (scale < 0) {
                for (int j = 0; j < BS; ++j) L[j] = (int8_t) (2 - L[j]);
                scale = -scale;
                best_k = 3 - best_k;
            }
            int index[2];
            bool all_on_grid = true;
            for (int k = 0; k < 2; ++k) {
                all_on_grid &= lat->map[lat_code(lat, L + 8*k)] >= 0;
                index[k] = iq1_snap(lat, L + 8*k, xb + 8*k, w + 8*k, scale, iq1m_shift(best_k, k, x_p, x_m));
            }
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < 2; ++k) {
                    const float * xx = iq1m_shift(best_k, k, x_p, x_m);
                    const uint8_t * pg = lat->lev + index[k]*8;
                    for (int j = 0; j < 8; ++j) {
                        const float ww = w[8*k + j];
                        const float q = xx[pg[j]];
                        sumqx += ww*q*xb[8*k + j];
                        sumq2 += ww*q*q;
                    }
                }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx/sumq2;
            }
            y[ibl].qs[2*ib + 0] = (uint8_t) (index[0] & 255);
            y[ibl].qs[2*ib + 1] = (uint8_t) (index[1] & 255);
            y[ibl].qh[ib] = (uint8_t) ((index[0] >> 8) | ((index[1] >> 8) << 4));
            scales[ib] = scale;
            shifts[ib] = (int8_t) best_k;
            max_scale = IQ_MAX(max_scale, scale);
        }
        if (!max_scale) continue;

        // block scales, then a least-squares fit of the super-block scale
        uint16_t sc[4] = { 0 };
        float d = max_scale/15;
        const float id = 1/d;
        float sumqx = 0, sumq2 = 0;
        for (int ib = 0; ib < QK_K/BS; ++ib) {
            const int l = iq_clamp(iq_nearest_int(0.5f*(id*scales[ib] - 1)), 0, 7);
            const int k4 = shifts[ib] & 3; // quirk: stale for skipped blocks
            sc[ib/4] |= (uint16_t) (l << 3*(ib%4));
            y[ibl].qh[ib] |= masks[k4];
            const float * xb = xbl + BS*ib;
            float w[BS];
            if (qw_row) {
                iq_weights(w, xb, qw_row + QK_K*ibl + BS*ib, sigma2, BS);
            } else {
                for (int i = 0; i < BS; ++i) w[i] = xb[i]*xb[i];
            }
            for (int k = 0; k < 2; ++k) {
                const float * xx = iq1m_shift(k4, k, x_p, x_m);
                const int g = y[ibl].qs[2*ib + k] | (((y[ibl].qh[ib] >> 4*k) & 7) << 8);
                const uint8_t * pg = lat->lev + g*8;
                for (int j = 0; j < 8; ++j) {
                    const float ww = w[8*k + j];
                    const float q = xx[pg[j]]*(float) (2*l + 1);
                    sumqx += ww*q*xb[8*k + j];
                    sumq2 += ww*q*q;
                }
            }
        }
        if (sumq2 > 0) d = sumqx/sumq2;
        iq1m_scale_t s;
        s.f16 = LM_GGML_FP32_TO_FP16(d*1.1125f);
        sc[0] |= (uint16_t) ((s.u16 & 0x000f) << 12);
        sc[1] |= (uint16_t) ((s.u16 & 0x00f0) <<  8);
        sc[2] |= (uint16_t) ((s.u16 & 0x0f00) <<  4);
        sc[3] |= (uint16_t) ((s.u16 & 0xf000) <<  0);
        for (int i = 0; i < 4; ++i) {
            y[ibl].scales[2*i + 0] = (uint8_t) (sc[i] & 255);
            y[ibl].scales[2*i + 1] = (uint8_t) (sc[i] >> 8);
        }
    }
}

// ============================================================== iq4_nl, iq4_xs

// The iq4 levels as floats (exact), for the searches below: lm_kvalues_iq4nl,
// a format constant of ggml (MIT License, Copyright (c) 2023-2024 The ggml
// authors; see ggml-iq-tables.c).
static const float iq4_levels[16] = {
    -127.f, -104.f, -83.f, -65.f, -49.f, -35.f, -22.f, -10.f, 1.f, 13.f, 25.f, 38.f, 53.f, 69.f, 89.f, 113.f,
};

// Index of the level nearest to x; a tie goes to the upper level (NaN: 15).
// Counting the levels <= x gives ggml's bisection bracket without
// its unpredictable branches.
static inline int iq4_nearest(float x) {
    const float * v = iq4_levels;
    if (x <= v[0]) return 0;
    if (x >= v[15]) return 15;
    int hi = 0;
    for (int m = 0; m < 16; ++m) hi += !(x < v[m]);
    if (hi > 15) return 15;
    return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

// L[j] = iq4_nearest(id*x[j]) for j < n (a multiple of 8).
static void iq4_levels_of(const float * x, int n, float id, uint8_t * L) {
#if defined(LM_X86)
    if (iq_use_avx2()) {
        lm_iq4_levels_avx2(x, n, id, iq4_levels, L);
        return;
    }
#endif
    for (int j = 0; j < n; ++j) L[j] = (uint8_t) iq4_nearest(id*x[j]);
}

// The scale of one block of 32 (weights w, max the value of largest
// magnitude): a least-squares fit on the levels at d0 = -+max/values[0]
// (those levels go to Lb), then the trial scales (itry + values[0])/max for
// itry in [-ntry, ntry], each fitted and kept if better.
static float iq4_search(const float * xb, const float * w, float max, int ntry, uint8_t * Lb) {
    const int8_t * values = lm_kvalues_iq4nl;
    const float d0 = ntry > 0 ? -max/values[0] : max/values[0];
#if defined(LM_X86)
    if (iq_use_avx2()) return lm_iq4_search_avx2(xb, w, max, d0, ntry, iq4_levels, Lb);
#endif
    float id = 1/d0;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
        const int l = iq4_nearest(id*xb[j]);
        Lb[j] = (uint8_t) l;
        const float q = values[l];
        sumqx += w[j]*q*xb[j];
        sumq2 += w[j]*q*q;
    }
    float d = sumqx/sumq2;
    float best = d*sumqx;
    for (int itry = -ntry; itry <= ntry; ++itry) {
        id = (float) (itry + values[0])/max;
        sumqx = sumq2 = 0;
        for (int j = 0; j < 32; ++j) {
            const float q = values[iq4_nearest(id*xb[j])];
            sumqx += w[j]*q*xb[j];
            sumq2 += w[j]*q*q;
        }
        if (sumq2 > 0 && sumqx*sumqx > best*sumq2) {
            d = sumqx/sumq2;
            best = d*sumqx;
        }
    }
    return d;
}

// One super-block of sbs values in blocks of 32 (sbs == 32: iq4_nl). qw is the
// super-block's slice of the imatrix or NULL; ntry < 0 skips the scale search
// (ggml's from_float_ref). L persists across calls (quirk, see below).
static void iq4_quantize_super(int sbs, const float * x, lm_ggml_fp16_t * dh, uint8_t * q4,
                               uint16_t * scales_h, uint8_t * scales_l, const float * qw, int ntry, uint8_t * L) {
    const int nb = sbs/32;
    float scales[QK_K/32] = {0}; // (gcc -O1 thinks it may be read unset)
    float w[32];
    float sigma2 = iq_sumsq(x, sbs);
    sigma2 *= 2.f/sbs;
    memset(q4, 0, sbs/2);
    dh[0] = LM_GGML_FP32_TO_FP16(0.f);

    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < nb; ++ib) {
        const float * xb = x + 32*ib;
        uint8_t * Lb = L + 32*ib;
        if (qw) {
            iq_weights(w, xb, qw + 32*ib, sigma2, 32);
        } else {
            for (int j = 0; j < 32; ++j) w[j] = xb[j]*xb[j];
        }
        float amax = 0, max = 0;
        for (int j = 0; j < 32; ++j) {
            const float ax = fabsf(xb[j]);
            if (ax > amax) { amax = ax; max = xb[j]; }
        }
        if (amax < 1e-15f) {
            scales[ib] = 0;
            continue;
        }
        const float d = iq4_search(xb, w, max, ntry, Lb);
        scales[ib] = d;
        const float abs_d = fabsf(d);
        if (abs_d > amax_scale) { amax_scale = abs_d; max_scale = d; }
    }

    if (nb > 1) {
        *scales_h = 0;
        const float d = -max_scale/32;
        dh[0] = LM_GGML_FP32_TO_FP16(d);
        const float id = d ? 1/d : 0.f;
        for (int ib = 0; ib < nb; ++ib) {
            int l = iq_clamp(iq_nearest_int(id*scales[ib]), -32, 31);
            const float dl = d * l;
            const float idl = dl ? 1/dl : 0.f;
            iq4_levels_of(x + 32*ib, 32, idl, L + 32*ib);
            l += 32;
            if (ib%2 == 0) scales_l[ib/2] = (uint8_t) (l & 0xf);
            else           scales_l[ib/2] |= (uint8_t) ((l & 0xf) << 4);
            *scales_h |= (uint16_t) ((l >> 4) << 2*(ib%8));
        }
    } else {
        dh[0] = LM_GGML_FP32_TO_FP16(scales[0]);
        if (ntry > 0) {
            const float id = scales[0] ? 1/scales[0] : 0;
            iq4_levels_of(x, sbs, id, L);
        }
        // quirk: with ntry < 0 an all-zero block packs whatever L holds
    }
    for (int i = 0; i < sbs/32; ++i) {
        for (int j = 0; j < 16; ++j) q4[16*i + j] = (uint8_t) (L[32*i + j] | (L[32*i + 16 + j] << 4));
    }
}

// ============================================================== entry points

static void iq_check_row(int64_t n_per_row, int64_t blck) {
    LM_GGML_ASSERT(n_per_row % blck == 0);
}

size_t lm_quantize_iq2_xxs(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK_K);
    LM_GGML_ASSERT(imatrix && "iq2_xxs needs an importance matrix");
    const int64_t nb = n_per_row/QK_K;
    iq_carry c = { 0 };
    for (int64_t r = 0; r < nrows; ++r) {
        quantize_row_iq2_xxs(src + r*n_per_row, (block_iq2_xxs *) dst + r*nb, n_per_row, imatrix, &c);
    }
    return (size_t) (nrows*nb) * sizeof(block_iq2_xxs);
}

size_t lm_quantize_iq2_xs(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK_K);
    LM_GGML_ASSERT(imatrix && "iq2_xs needs an importance matrix");
    const int64_t nb = n_per_row/QK_K;
    iq_carry c = { 0 };
    for (int64_t r = 0; r < nrows; ++r) {
        quantize_row_iq2_16(false, src + r*n_per_row, (block_iq2_xs *) dst + r*nb, n_per_row, imatrix, &c);
    }
    return (size_t) (nrows*nb) * sizeof(block_iq2_xs);
}

size_t lm_quantize_iq2_s(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK_K);
    const int64_t nb = n_per_row/QK_K;
    iq_carry c = { 0 };
    for (int64_t r = 0; r < nrows; ++r) {
        quantize_row_iq2_16(true, src + r*n_per_row, (block_iq2_s *) dst + r*nb, n_per_row, imatrix, &c);
    }
    return (size_t) (nrows*nb) * sizeof(block_iq2_s);
}

size_t lm_quantize_iq3_xxs(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK_K);
    const int64_t nb = n_per_row/QK_K;
    iq_carry c = { 0 };
    for (int64_t r = 0; r < nrows; ++r) {
        quantize_row_iq3_xxs(src + r*n_per_row, (block_iq3_xxs *) dst + r*nb, n_per_row, imatrix, &c);
    }
    return (size_t) (nrows*nb) * sizeof(block_iq3_xxs);
}

size_t lm_quantize_iq3_s(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK_K);
    const int64_t nb = n_per_row/QK_K;
    iq_carry c = { 0 };
    for (int64_t r = 0; r < nrows; ++r) {
        quantize_row_iq3_s(src + r*n_per_row, (block_iq3_s *) dst + r*nb, n_per_row, imatrix, &c);
    }
    return (size_t) (nrows*nb) * sizeof(block_iq3_s);
}

size_t lm_quantize_iq1_s(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK_K);
    LM_GGML_ASSERT(imatrix && "iq1_s needs an importance matrix");
    const int64_t nb = n_per_row/QK_K;
    int8_t shifts[QK_K/32] = { 0 };
    for (int64_t r = 0; r < nrows; ++r) {
        quantize_row_iq1_s(src + r*n_per_row, (block_iq1_s *) dst + r*nb, n_per_row, imatrix, shifts);
    }
    return (size_t) (nrows*nb) * sizeof(block_iq1_s);
}

size_t lm_quantize_iq1_m(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK_K);
    const int64_t nb = n_per_row/QK_K;
    int8_t shifts[QK_K/16] = { 0 };
    for (int64_t r = 0; r < nrows; ++r) {
        quantize_row_iq1_m(src + r*n_per_row, (block_iq1_m *) dst + r*nb, n_per_row, imatrix, shifts);
    }
    return (size_t) (nrows*nb) * sizeof(block_iq1_m);
}

size_t lm_quantize_iq4_nl(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK4_NL);
    const int64_t nb = n_per_row/QK4_NL;
    uint8_t L[QK4_NL] = { 0 };
    block_iq4_nl * y = dst;
    for (int64_t r = 0; r < nrows; ++r) {
        for (int64_t i = 0; i < nb; ++i) {
            block_iq4_nl * b = y + r*nb + i;
            uint16_t unused_h;
            iq4_quantize_super(QK4_NL, src + r*n_per_row + QK4_NL*i, &b->d, b->qs, &unused_h, NULL,
                               imatrix ? imatrix + QK4_NL*i : NULL, 7, L);
        }
    }
    return (size_t) (nrows*nb) * sizeof(block_iq4_nl);
}

size_t lm_quantize_iq4_xs(const float * src, void * dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    iq_check_row(n_per_row, QK_K);
    const int64_t nb = n_per_row/QK_K;
    uint8_t L[QK_K] = { 0 };
    block_iq4_xs * y = dst;
    for (int64_t r = 0; r < nrows; ++r) {
        for (int64_t i = 0; i < nb; ++i) {
            block_iq4_xs * b = y + r*nb + i;
            iq4_quantize_super(QK_K, src + r*n_per_row + QK_K*i, &b->d, b->qs, &b->scales_h, b->scales_l,
                               imatrix ? imatrix + QK_K*i : NULL, 7, L);
        }
    }
    return (size_t) (nrows*nb) * sizeof(block_iq4_xs);
}

void lm_quantize_row_iq3_xxs_ref(const float * x, block_iq3_xxs * y, int64_t k) {
    lm_quantize_iq3_xxs(x, y, 1, k, NULL);
}

void lm_quantize_row_iq3_s_ref(const float * x, block_iq3_s * y, int64_t k) {
    lm_quantize_iq3_s(x, y, 1, k, NULL);
}

void lm_quantize_row_iq2_s_ref(const float * x, block_iq2_s * y, int64_t k) {
    lm_quantize_iq2_s(x, y, 1, k, NULL);
}

void lm_quantize_row_iq4_xs_ref(const float * x, block_iq4_xs * y, int64_t k) {
    lm_quantize_iq4_xs(x, y, 1, k, NULL);
}

// ggml packs stale levels for an all-zero block (see iq4_quantize_super);
// ours are those of the last block quantized by this thread, which is what
// ggml's stack slot held when called row by row.
static _Thread_local uint8_t iq4nl_ref_L[QK4_NL];

void lm_quantize_row_iq4_nl_ref(const float * x, block_iq4_nl * y, int64_t k) {
    iq_check_row(k, QK4_NL);
    for (int64_t i = 0; i < k/QK4_NL; ++i) {
        uint16_t unused_h;
        iq4_quantize_super(QK4_NL, x + QK4_NL*i, &y[i].d, y[i].qs, &unused_h, NULL, NULL, -1, iq4nl_ref_L);
    }
}

void lm_quantize_row_iq4_nl(const float * x, void * y, int64_t k) {
    lm_quantize_row_iq4_nl_ref(x, (block_iq4_nl *) y, k);
}

void lm_quantize_row_iq4_xs(const float * x, void * y, int64_t k) {
    lm_quantize_row_iq4_xs_ref(x, (block_iq4_xs *) y, k);
}

// ============================================================== validation

static bool iq_fp16_ok(lm_ggml_fp16_t h, size_t i) {
    if ((h & 0x7c00) != 0x7c00) return true;
    lm_validate_report("found %s value at block %zu", (h & 0x03ff) ? "nan" : "inf", i);
    return false;
}

#define IQ_VALIDATE_D(T) do { \
        const T * q = data; \
        for (size_t i = 0; i < nbytes/sizeof(T); ++i) if (!iq_fp16_ok(q[i].d, i)) return false; \
    } while (0)

bool lm_validate_iq_row(enum lm_ggml_type type, const void * data, size_t nbytes) {
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS: IQ_VALIDATE_D(block_iq2_xxs); break;
        case LM_GGML_TYPE_IQ2_XS:  IQ_VALIDATE_D(block_iq2_xs);  break;
        case LM_GGML_TYPE_IQ2_S:   IQ_VALIDATE_D(block_iq2_s);   break;
        case LM_GGML_TYPE_IQ3_XXS: IQ_VALIDATE_D(block_iq3_xxs); break;
        case LM_GGML_TYPE_IQ3_S:   IQ_VALIDATE_D(block_iq3_s);   break;
        case LM_GGML_TYPE_IQ1_S:   IQ_VALIDATE_D(block_iq1_s);   break;
        case LM_GGML_TYPE_IQ4_NL:  IQ_VALIDATE_D(block_iq4_nl);  break;
        case LM_GGML_TYPE_IQ4_XS:  IQ_VALIDATE_D(block_iq4_xs);  break;
        case LM_GGML_TYPE_IQ1_M: {
            const block_iq1_m * q = data;
            for (size_t i = 0; i < nbytes/sizeof(block_iq1_m); ++i) {
                uint16_t sc[4];
                iq1m_words(q[i].scales, sc);
                if (!iq_fp16_ok(iq1m_scale(sc), i)) return false;
            }
        } break;
        default:
            break;
    }
    return true;
}
