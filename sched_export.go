// Exported trampoline of sched.go (a cgo file with //export directives may
// only declare C functions).

package ggml

/*
#include <stdint.h>
#include "ggml.h"
*/
import "C"

import (
	"runtime/cgo"
)

//export goSchedEval
func goSchedEval(t *C.struct_lm_ggml_tensor, ask C.bool, h C.uintptr_t) (want C.bool) {
	call := cgo.Handle(h).Value().(*schedCall)
	if call.err != nil {
		return C.bool(ask) // see the node through, then stop
	}
	callbacksRunning.Add(1)
	defer callbacksRunning.Add(-1)
	done := make(chan struct{})
	go runSchedEval(call, call.g.ctx.wrap(t), bool(ask), done)
	<-done
	if call.err != nil {
		return ask
	}
	return C.bool(call.want)
}
