package ggml

/*
#include "glue.h"
#include "ggml-cpu-impl.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// setStreamMinBytes sets the output size from which row conversions use
// streaming stores (lm_set_stream_min_bytes) and returns the previous one:
// tests lower it to reach that path with rows of a few MB.
func setStreamMinBytes(n int64) int64 { return int64(C.lm_set_stream_min_bytes(C.int64_t(n))) }

// setMvSeqMinBytes sets the matrix size from which mat-vec walks contiguous
// short rows one by one (lm_set_mv_seq_min_bytes) and returns the previous
// one: tests set it to 0 and to the maximum to compare both walks.
func setMvSeqMinBytes(n int64) int64 { return int64(C.lm_set_mv_seq_min_bytes(C.int64_t(n))) }

// FP32ToFP16 converts to IEEE half precision, rounding to nearest even.
func FP32ToFP16(f float32) uint16 { return uint16(C.lm_ggml_fp32_to_fp16(C.float(f))) }

// FP16ToFP32 converts from IEEE half precision (exact).
func FP16ToFP32(h uint16) float32 { return float32(C.lm_ggml_fp16_to_fp32(C.lm_ggml_fp16_t(h))) }

// FP32ToBF16 converts to bfloat16, rounding to nearest even (NaNs stay NaN).
func FP32ToBF16(f float32) uint16 { return uint16(C.lm_ggml_fp32_to_bf16(C.float(f)).bits) }

// BF16ToFP32 converts from bfloat16 (exact).
func BF16ToFP32(h uint16) float32 {
	return float32(C.lm_ggml_bf16_to_fp32(C.lm_ggml_bf16_t{bits: C.uint16_t(h)}))
}

func checkRow(op string, nd, ns int) {
	if nd < ns {
		panic(&OpError{Op: op, Msg: fmt.Sprintf("destination has %d elements, source %d", nd, ns)})
	}
}

// FP32ToFP16Row converts src into dst (len(dst) >= len(src)) with the fastest
// SIMD path of the CPU; every path gives the same bits.
func FP32ToFP16Row(dst []uint16, src []float32) {
	checkRow("FP32ToFP16Row", len(dst), len(src))
	if len(src) > 0 {
		C.lm_ggml_fp32_to_fp16_row((*C.float)(unsafe.Pointer(&src[0])), (*C.lm_ggml_fp16_t)(unsafe.Pointer(&dst[0])), C.int64_t(len(src)))
	}
}

// FP16ToFP32Row converts src into dst (len(dst) >= len(src)).
func FP16ToFP32Row(dst []float32, src []uint16) {
	checkRow("FP16ToFP32Row", len(dst), len(src))
	if len(src) > 0 {
		C.lm_ggml_fp16_to_fp32_row((*C.lm_ggml_fp16_t)(unsafe.Pointer(&src[0])), (*C.float)(unsafe.Pointer(&dst[0])), C.int64_t(len(src)))
	}
}

// FP32ToBF16Row converts src into dst (len(dst) >= len(src)) with SIMD.
func FP32ToBF16Row(dst []uint16, src []float32) {
	checkRow("FP32ToBF16Row", len(dst), len(src))
	if len(src) > 0 {
		C.lm_ggml_fp32_to_bf16_row((*C.float)(unsafe.Pointer(&src[0])), (*C.lm_ggml_bf16_t)(unsafe.Pointer(&dst[0])), C.int64_t(len(src)))
	}
}

// FP32ToBF16RowRef is the scalar reference conversion of FP32ToBF16Row.
func FP32ToBF16RowRef(dst []uint16, src []float32) {
	checkRow("FP32ToBF16RowRef", len(dst), len(src))
	if len(src) > 0 {
		C.lm_ggml_fp32_to_bf16_row_ref((*C.float)(unsafe.Pointer(&src[0])), (*C.lm_ggml_bf16_t)(unsafe.Pointer(&dst[0])), C.int64_t(len(src)))
	}
}

// BF16ToFP32Row converts src into dst (len(dst) >= len(src)).
func BF16ToFP32Row(dst []float32, src []uint16) {
	checkRow("BF16ToFP32Row", len(dst), len(src))
	if len(src) > 0 {
		C.lm_ggml_bf16_to_fp32_row((*C.lm_ggml_bf16_t)(unsafe.Pointer(&src[0])), (*C.float)(unsafe.Pointer(&dst[0])), C.int64_t(len(src)))
	}
}
