#!/usr/bin/env bash
# bf16-model.sh - runs mm-bf16.c's AVX512_BF16 kernels, their own source
# text, on any x86-64 CPU: the few intrinsics they use are modelled in
# portable C (vdpbf16ps as Intel's SDM defines it: per lane the odd pair,
# then the even pair, each an FMA with subnormal inputs read as zero and
# subnormal results flushed), and the kernels are selected at the AVX2
# level instead of the AVX-512 one. Then test-bf16-dot, test-batch-invariance
# and test-matmul (bf16) run through mul_mat as they would on such a CPU.
# A check of indexing, tails, padding and the selection before a run on
# hardware or under tests/emu/avx512emu.sh, not a substitute for them: the
# model's lanes are the SDM's, the hardware's are what the hardware does.
# Not part of `./build.sh test`.
#
# Usage: tests/emu/bf16-model.sh SCRATCH_DIR   (from the repository root)
set -euo pipefail
M="$1/bf16-model"
rm -rf "$M" && mkdir -p "$M/inc" "$M/obj"
CC="${CC:-cc}"

cat >"$M/inc/immintrin.h" <<'EOF'
// The intrinsics of mm-bf16.c in portable C (GCC vector types).
#pragma once
#include <math.h>
#include <stdint.h>
#include <string.h>
typedef float __m512 __attribute__((vector_size(64)));
typedef float __m256 __attribute__((vector_size(32)));
typedef float __m128 __attribute__((vector_size(16)));
typedef long long __m512i __attribute__((vector_size(64)));
typedef short __m512bh __attribute__((vector_size(64)));
typedef uint32_t __mmask32;
#undef LM_TARGET_AVX512BF16
#define LM_TARGET_AVX512BF16
static inline __m512 _mm512_setzero_ps(void) { return (__m512){ 0 }; }
static inline __m512i _mm512_loadu_si512(const void * p) { __m512i v; memcpy(&v, p, 64); return v; }
// only the selected elements are read, as the hardware suppresses faults on the others
static inline __m512i _mm512_maskz_loadu_epi16(__mmask32 m, const void * p) {
    uint16_t o[32];
    for (int i = 0; i < 32; i++) { o[i] = 0; if ((m >> i) & 1) memcpy(&o[i], (const char *) p + 2 * i, 2); }
    __m512i v; memcpy(&v, o, 64); return v;
}
static inline float mdl_daz(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }
static inline float mdl_bf(short h) { uint32_t u = (uint32_t)(uint16_t) h << 16; float f; memcpy(&f, &u, 4); return mdl_daz(f); }
static inline __m512 _mm512_dpbf16_ps(__m512 acc, __m512bh a, __m512bh b) {
    __m512 r;
    for (int i = 0; i < 16; i++) {
        float s = mdl_daz(acc[i]);
        s = mdl_daz(fmaf(mdl_bf(a[2 * i + 1]), mdl_bf(b[2 * i + 1]), s));
        s = mdl_daz(fmaf(mdl_bf(a[2 * i]), mdl_bf(b[2 * i]), s));
        r[i] = s;
    }
    return r;
}
static inline __m256 _mm512_castps512_ps256(__m512 v) { __m256 r; for (int i = 0; i < 8; i++) r[i] = v[i]; return r; }
static inline __m256 _mm512_extractf32x8_ps(__m512 v, int h) { __m256 r; for (int i = 0; i < 8; i++) r[i] = v[8 * h + i]; return r; }
static inline __m256 _mm256_add_ps(__m256 a, __m256 b) { return a + b; }
static inline __m128 _mm256_castps256_ps128(__m256 v) { return (__m128){ v[0], v[1], v[2], v[3] }; }
static inline __m128 _mm256_extractf128_ps(__m256 v, int h) { return (__m128){ v[4 * h], v[4 * h + 1], v[4 * h + 2], v[4 * h + 3] }; }
static inline __m128 _mm_add_ps(__m128 a, __m128 b) { return a + b; }
static inline __m128 _mm_movehl_ps(__m128 a, __m128 b) { return (__m128){ b[2], b[3], a[2], a[3] }; }
static inline __m128 _mm_add_ss(__m128 a, __m128 b) { a[0] = a[0] + b[0]; return a; }
static inline __m128 _mm_movehdup_ps(__m128 a) { return (__m128){ a[1], a[1], a[3], a[3] }; }
static inline float _mm_cvtss_f32(__m128 a) { return a[0]; }
EOF

# the kernels over the model; "the CPU has AVX512_BF16" at the AVX2 level
cat >"$M/model.c" <<'EOF'
#include "mm-bf16.c"
bool lm_cpu_avx512bf16(void) { return lm_cpu_level() == LM_CPU_LEVEL_AVX2; }
EOF
"$CC" -std=gnu11 -O2 -Wno-psabi -pthread -I"$M/inc" $(for d in csrc/*/; do printf -- '-I%s ' "${d%/}"; done)-c "$M/model.c" -o "$M/obj/model.o"

# mm-float.c selecting them before the level's own kernels
sed -e 's/if (lv == LM_CPU_LEVEL_AVX512) return mm_bf16_dot(xt) ? \(mm_[a-z_0-9]*\) : avx512\[xt\];/if (mm_bf16_dot(xt)) return \1; if (lv == LM_CPU_LEVEL_AVX512) return avx512[xt];/' \
  csrc/cpu/mm-float.c >"$M/mm-float.c"
[ "$(grep -c 'if (mm_bf16_dot(xt)) return mm_' "$M/mm-float.c")" = 2 ] || { echo "bf16-model: mm-float.c's selection has changed"; exit 1; }
for f in $(find csrc -name '*.c'); do
  b=$(basename "$f" .c)
  case "$b" in
    mm-bf16) ;;
    mm-float) nice -n 19 "$CC" -std=gnu11 -O2 -pthread $(for d in csrc/*/; do printf -- '-I%s ' "${d%/}"; done)-c "$M/mm-float.c" -o "$M/obj/$b.o" & ;;
    *)        nice -n 19 "$CC" -std=gnu11 -O2 -pthread $(for d in csrc/*/; do printf -- '-I%s ' "${d%/}"; done)-c "$f" -o "$M/obj/$b.o" & ;;
  esac
done
wait
# model.o's lm_cpu_avx512bf16 replaces the CPUID one
objcopy --weaken-symbol=lm_cpu_avx512bf16 "$M/obj/ggml-cpu-features.o"

fail=0
for t in "test-bf16-dot" "test-batch-invariance 1 bf16" "test-matmul 1 bf16"; do
  p="${t%% *}"
  nice -n 19 "$CC" -std=gnu11 -O2 -pthread $(for d in csrc/*/; do printf -- '-I%s ' "${d%/}"; done)-Itests/c -DBF16DOT_LEVEL=LM_CPU_LEVEL_AVX2 "tests/c/$p.c" "$M"/obj/*.o -lm -o "$M/$p"
  # shellcheck disable=SC2086
  if nice -n 19 "$M/$p" ${t#"$p"} >"$M/$p.log" 2>&1; then echo "ok   $t ($(tail -1 "$M/$p.log"))"; else fail=1; echo "FAIL $t"; tail -20 "$M/$p.log"; fi
done
grep -q '^AVX512_BF16 kernels at level 1' "$M/test-bf16-dot.log" || { echo "bf16-model: the kernels did not run"; exit 1; }
exit $fail
