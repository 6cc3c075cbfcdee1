// fp-nocontract.h - included first by a file whose float steps must be
// rounded as written (a multiply, then an add), never fused into a
// multiply-add: kernels that promise the same bits at every SIMD level.
// GNU C modes let GCC fuse across statements where the target has FMA
// (arm64 always; x86 in functions built for AVX2), so the same source would
// round differently at different levels.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
