// to-float-stream.c - large to-f32 conversions written with non-temporal
// stores. Every to_float (the quantized types' dequantizers, the f16 and bf16
// rows) goes through lm_to_float_stream first; it takes outputs of
// lm_stream_min_bytes() and more from the AVX2 level up and leaves the rest
// to the caller's ordinary (cached) path. (At the AVX-512 level that size is
// by default never: streamed outputs were the slower ones there, see
// ggml-simd.h.)
//
// Why: a dequantized weight matrix of tens of MB does not stay in cache for
// whoever reads it next, and ordinary stores make the core read every output
// line before overwriting it. The kernel itself is not touched: it converts a
// few KB at a time into an L1-resident buffer, and whole cache lines of that
// buffer are streamed to y. The bits are the kernel's own.
// Outputs larger than L3, or written into cold memory, gain; an output
// rewritten while it is still in L3 loses, since streaming stores are slower
// than stores that hit L3 (hence the threshold).
#include "ggml-simd.h"

#include <stdatomic.h>
#include <string.h>

static _Atomic int64_t g_stream_min = -1; // -1: the level's default

int64_t lm_stream_min_bytes(void) {
    const int64_t n = atomic_load_explicit(&g_stream_min, memory_order_relaxed);
    if (n >= 0) return n;
    return lm_cpu_level() == LM_CPU_LEVEL_AVX512 ? INT64_MAX : LM_STREAM_MIN_BYTES_DEFAULT;
}

int64_t lm_set_stream_min_bytes(int64_t n) {
    // at least two whole chunks of floats (see stream_rows_avx2)
    const int64_t v = n < 0 ? -1 : n < ((int64_t) 64 << 10) ? ((int64_t) 64 << 10) : n;
    return atomic_exchange_explicit(&g_stream_min, v, memory_order_relaxed);
}

#if defined(LM_X86)
#include <immintrin.h>

// Elements converted per kernel call: a multiple of every block size (32 and
// 256) and of a cache line of floats; 8 KB stays in L1 with the source
// (much larger chunks fall out of L1 and lose).
#define STREAM_CHUNK 2048
#define LINE_F32 16 // floats per 64-byte line

// The kernel writes each chunk at a 64-byte boundary of buf (its own stores
// never straddle lines, whatever y's alignment), and the copy to y reads buf
// unaligned so that its stores fall on whole lines of y. The few elements of a
// chunk that do not complete a line of y wait in front of the next chunk, so
// no line is ever streamed in parts (a partly filled write-combining buffer
// would go to memory as a partial write). Only the row's first and last
// partial lines are copied with ordinary stores.
LM_TARGET_AVX2 static void stream_rows_avx2(lm_ggml_to_float_t fn, int64_t blck, size_t bsize,
                                            const char * x, float * y, int64_t k) {
    _Alignas(64) float buf[LINE_F32 + STREAM_CHUNK];
    float * const out = buf + LINE_F32;
    const int64_t head = (int64_t) ((64 - ((uintptr_t) y & 63)) & 63) / (int64_t) sizeof(float);
    int64_t done = 0, carry = 0; // elements converted; of those, not yet in y (in front of out)
    while (done < k) {
        const int64_t c = k - done < STREAM_CHUNK ? k - done : STREAM_CHUNK;
        fn(x + (size_t) (done / blck) * bsize, out, c);
        const float * src = out - carry;
        float * dst = y + done - carry;
        int64_t n = carry + c;
        if (done == 0) { // the first chunk is a whole one, longer than the head
            memcpy(dst, src, (size_t) head * sizeof(float));
            src += head, dst += head, n -= head;
        }
        const int64_t full = n & ~(int64_t) (LINE_F32 - 1);
        for (int64_t p = 0; p < full; p += LINE_F32) {
            _mm256_stream_ps(dst + p,     _mm256_loadu_ps(src + p));
            _mm256_stream_ps(dst + p + 8, _mm256_loadu_ps(src + p + 8));
        }
        done += c;
        carry = n - full;
        memcpy(done == k ? dst + full : out - carry, src + full, (size_t) carry * sizeof(float));
    }
    _mm_sfence(); // order the streamed lines before anything the caller publishes
}
_Static_assert((64 << 10) / sizeof(float) > 2 * STREAM_CHUNK, "a streamed row spans more than one chunk");
#endif

bool lm_to_float_stream(lm_ggml_to_float_t fn, int64_t blck, size_t bsize, const void * x, float * y, int64_t k) {
#if defined(LM_X86)
    // every x86 level from AVX2 up has these instructions (the AVX-512 level
    // runs the same to_float kernels)
    if (k * (int64_t) sizeof(float) >= lm_stream_min_bytes() && ((uintptr_t) y & (sizeof(float) - 1)) == 0 &&
        lm_cpu_level() >= LM_CPU_LEVEL_AVX2 && blck > 0 && STREAM_CHUNK % blck == 0) {
        stream_rows_avx2(fn, blck, bsize, (const char *) x, y, k);
        return true;
    }
#else
    (void) fn; (void) blck; (void) bsize; (void) x; (void) y; (void) k;
#endif
    return false;
}
