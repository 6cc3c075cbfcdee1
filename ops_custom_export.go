// Exported trampolines of ops_custom.go. Kept apart because a cgo file with
// //export directives may only declare, not define, C functions.

package ggml

/*
#include <stdint.h>
#include "ggml.h"
*/
import "C"

//export goCustom1
func goCustom1(dst, a *C.struct_lm_ggml_tensor, ith, nth C.int, h C.uintptr_t) {
	runCustom(h, dst, func(op *customOp, w func(*C.struct_lm_ggml_tensor) *Tensor) {
		op.f1(w(dst), w(a), int(ith), int(nth))
	})
}

//export goCustom2
func goCustom2(dst, a, b *C.struct_lm_ggml_tensor, ith, nth C.int, h C.uintptr_t) {
	runCustom(h, dst, func(op *customOp, w func(*C.struct_lm_ggml_tensor) *Tensor) {
		op.f2(w(dst), w(a), w(b), int(ith), int(nth))
	})
}

//export goCustom3
func goCustom3(dst, a, b, c *C.struct_lm_ggml_tensor, ith, nth C.int, h C.uintptr_t) {
	runCustom(h, dst, func(op *customOp, w func(*C.struct_lm_ggml_tensor) *Tensor) {
		op.f3(w(dst), w(a), w(b), w(c), int(ith), int(nth))
	})
}

//export goCustomF32
func goCustomF32(dst, a, b, c *C.struct_lm_ggml_tensor, h C.uintptr_t) {
	runCustom(h, dst, func(op *customOp, w func(*C.struct_lm_ggml_tensor) *Tensor) {
		op.fF32(w(dst), w(a), w(b), w(c))
	})
}
