// mm-quant-x86.h - AVX2 decoding of quantized weight blocks shared by the
// integer dots (mm-quant-x86.c) and the quantized GEMM (mm-qgemm-x86.c).
// x86-64 only; include after <immintrin.h> and ggml-common.h.
#pragma once

// 16 packed nibbles -> 32 bytes: the low nibbles, then the high ones (the
// element order of the 32-quant blocks).
LM_TARGET_AVX2 static inline __m256i nibbles32(const uint8_t * p) {
    const __m128i q = _mm_loadu_si128((const __m128i *) p);
    const __m128i m4 = _mm_set1_epi8(0xF);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m4), _mm_and_si128(q, m4));
}

// 32 bits -> 32 bytes, byte j 0xFF when bit j is set: byte j first gets byte
// j/8 of the word, then only bit j%8 of it is kept and compared.
LM_TARGET_AVX2 static inline __m256i bits_to_bytes(const uint8_t * p) {
    uint32_t w;
    memcpy(&w, p, 4);
    const __m256i spread = _mm256_setr_epi64x(0, 0x0101010101010101ll, 0x0202020202020202ll, 0x0303030303030303ll);
    const __m256i sel = _mm256_set1_epi64x((long long) 0x8040201008040201ull);
    const __m256i v = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32((int) w), spread), sel);
    return _mm256_cmpeq_epi8(v, sel);
}

// q4_K / q5_K: 8 scales and 8 mins of 6 bits packed in 12 bytes (bytes 0-3:
// scales 0-3 | top bits of scales 4-7; 4-7: mins 0-3 | top bits of mins 4-7;
// 8-11: low nibbles of scales 4-7, high nibbles of mins 4-7), unpacked with
// 32-bit word ops into bytes 0-7 scales, 8-15 mins.
static inline __m128i k4_scales_mins(const uint8_t * q) {
    uint32_t a, b, c;
    memcpy(&a, q, 4);
    memcpy(&b, q + 4, 4);
    memcpy(&c, q + 8, 4);
    const uint32_t m6 = 0x3F3F3F3Fu, m4 = 0x0F0F0F0Fu, top = 0x30303030u;
    return _mm_setr_epi32((int)(a & m6), (int)((c & m4) | ((a >> 2) & top)),
                          (int)(b & m6), (int)(((c >> 4) & m4) | ((b >> 2) & top)));
}

// q3_K: the 16 signed 6-bit scales as int8 (low 4 bits in bytes 0-7, two
// per byte; high 2 bits in bytes 8-11, four per byte), with 64-bit word ops.
static inline __m128i q3k_scales8(const uint8_t * p) {
    uint64_t lo;
    uint32_t hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, p + 8, 4);
    const uint64_t n4 = 0x0F0F0F0F0F0F0F0Full;
    const uint32_t b2 = 0x03030303u;
    // scales 4g..4g+3 take their high bits from bits 2g..2g+1 of bytes 8-11
    const uint64_t h01 = (uint64_t)(hi & b2) | (uint64_t)((hi >> 2) & b2) << 32;
    const uint64_t h23 = (uint64_t)((hi >> 4) & b2) | (uint64_t)((hi >> 6) & b2) << 32;
    const __m128i u = _mm_set_epi64x((long long)(((lo >> 4) & n4) | h23 << 4), (long long)((lo & n4) | h01 << 4));
    return _mm_sub_epi8(u, _mm_set1_epi8(32));
}

