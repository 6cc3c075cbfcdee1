// Exported trampoline of sched.go (a cgo file with //export directives may
// only declare C functions).

package ggml

/*
#include <stdint.h>
#include "ggml.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
)

//export goSchedEval
func goSchedEval(t *C.struct_lm_ggml_tensor, ask C.bool, h C.uintptr_t) (want C.bool) {
	call := cgo.Handle(h).Value().(*schedCall)
	if call.err != nil {
		return C.bool(ask) // see the node through, then stop
	}
	defer func() {
		if r := recover(); r != nil {
			call.err = fmt.Errorf("ggml: Scheduler.Compute: eval callback panicked: %v", r)
			want = C.bool(ask)
		}
	}()
	return C.bool(call.fn(call.g.ctx.wrap(t), bool(ask)))
}
