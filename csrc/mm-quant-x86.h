// mm-quant-x86.h - AVX2 decoding of quantized weight blocks shared by the
// integer dots (mm-quant-x86.c) and the quantized GEMM (mm-qgemm-x86.c).
// x86-64 only; include after <immintrin.h> and ggml-common.h.
#pragma once

// 16 packed nibbles -> 32 bytes: the low nibbles, then the high ones (the
// element order of the 32-quant blocks).
// The 16 bytes go to both lanes by a broadcast load (no ALU work) and
// lane 1 is shifted by 4: two operations instead of four.
LM_TARGET_AVX2 static inline __m256i nibbles32(const uint8_t * p) {
    const __m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) p));
    return _mm256_and_si256(_mm256_srlv_epi32(q, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(0xF));
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
// 8-11: low nibbles of scales 4-7, high nibbles of mins 4-7), unpacked into
// bytes 0-7 scales, 8-15 mins. With the 32-bit words a, b, c of the field:
// result words a&0x3F.., (c&0x0F..)|((a>>2)&0x30..), b&0x3F..,
// ((c>>4)&0x0F..)|((b>>2)&0x30..), built as vectors [a c b c] and [. a . b]
// (a dozen scalar ops and three inserts before, once per block and row).
// Reads 16 bytes at q: the field is followed by the block's quants.
LM_TARGET_AVX2 static inline __m256i k4_unpack_scales(__m256i v) {
    const __m256i lo = _mm256_shuffle_epi32(v, 0 | 2 << 2 | 1 << 4 | 2 << 6); // a c b c
    const __m256i hi = _mm256_shuffle_epi32(v, 0 | 0 << 2 | 0 << 4 | 1 << 6); // . a . b
    const __m256i l = _mm256_and_si256(_mm256_srlv_epi32(lo, _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4)),
                                       _mm256_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F,
                                                         0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F));
    const __m256i h = _mm256_and_si256(_mm256_srli_epi32(hi, 2), _mm256_setr_epi32(0, 0x30303030, 0, 0x30303030,
                                                                                  0, 0x30303030, 0, 0x30303030));
    return _mm256_or_si256(l, h);
}
LM_TARGET_AVX2 static inline __m128i k4_scales_mins(const uint8_t * q) {
    return _mm256_castsi256_si128(k4_unpack_scales(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) q))));
}
// the same for two blocks at once: lane 0 from q0, lane 1 from q1
LM_TARGET_AVX2 static inline __m256i k4_scales_mins2(const uint8_t * q0, const uint8_t * q1) {
    return k4_unpack_scales(_mm256_loadu2_m128i((const __m128i *) q1, (const __m128i *) q0));
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

