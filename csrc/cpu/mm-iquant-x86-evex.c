// mm-iquant-x86-evex.c - mm-iquant-x86.c's AVX2 i-quant kernels compiled
// once more for the AVX-512 level (EVEX encodings, 32 vector registers; no
// other change, so the same bits), as mm_iq_dot_avx2_evex and
// mm_iq_qgemm_avx2_evex. mm_qgemm takes them where the AVX-512 forms of
// mm-iquant-avx512.c give way (lm_cpu_slow_gather).
#define MM_IQ_X86_EVEX 1
#include "mm-iquant-x86.c"
