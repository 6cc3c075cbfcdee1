package ggml

/*
#include "glue.h"
#include "ggml-cpu-impl.h"
*/
import "C"

// goAndCConstant pairs a Go constant that mirrors the C API with the value
// the C headers give it.
type goAndCConstant struct {
	name  string
	goVal int64
	cVal  int64
}

// mirroredConstants lists every Go constant defined with a literal copy of a
// C enum or macro value (literals, so that go doc shows the values), next to
// the C value, for the test that keeps the two equal.
func mirroredConstants() []goAndCConstant {
	return []goAndCConstant{
		{"BufferUsageAny", int64(BufferUsageAny), C.LM_GGML_BACKEND_BUFFER_USAGE_ANY},
		{"BufferUsageWeights", int64(BufferUsageWeights), C.LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS},
		{"BufferUsageCompute", int64(BufferUsageCompute), C.LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE},
		{"SortAsc", int64(SortAsc), C.LM_GGML_SORT_ORDER_ASC},
		{"SortDesc", int64(SortDesc), C.LM_GGML_SORT_ORDER_DESC},
		{"PoolMax", int64(PoolMax), C.LM_GGML_OP_POOL_MAX},
		{"PoolAvg", int64(PoolAvg), C.LM_GGML_OP_POOL_AVG},
		{"PrecDefault", int64(PrecDefault), C.LM_GGML_PREC_DEFAULT},
		{"PrecF32", int64(PrecF32), C.LM_GGML_PREC_F32},
		{"LevelScalar", int64(LevelScalar), C.LM_CPU_LEVEL_SCALAR},
		{"LevelAVX2", int64(LevelAVX2), C.LM_CPU_LEVEL_AVX2},
		{"LevelAVX512", int64(LevelAVX512), C.LM_CPU_LEVEL_AVX512},
		{"LevelNEON", int64(LevelNEON), C.LM_CPU_LEVEL_NEON},
		{"LevelNEONDotProd", int64(LevelNEONDotProd), C.LM_CPU_LEVEL_NEON_DOTPROD},
		{"FlagInput", int64(FlagInput), C.LM_GGML_TENSOR_FLAG_INPUT},
		{"FlagOutput", int64(FlagOutput), C.LM_GGML_TENSOR_FLAG_OUTPUT},
		{"FlagParam", int64(FlagParam), C.LM_GGML_TENSOR_FLAG_PARAM},
		{"FlagLoss", int64(FlagLoss), C.LM_GGML_TENSOR_FLAG_LOSS},
		{"PrioNormal", int64(PrioNormal), C.LM_GGML_SCHED_PRIO_NORMAL},
		{"PrioMedium", int64(PrioMedium), C.LM_GGML_SCHED_PRIO_MEDIUM},
		{"PrioHigh", int64(PrioHigh), C.LM_GGML_SCHED_PRIO_HIGH},
		{"PrioRealtime", int64(PrioRealtime), C.LM_GGML_SCHED_PRIO_REALTIME},
		{"DefaultGraphSize", int64(DefaultGraphSize), C.LM_GGML_DEFAULT_GRAPH_SIZE},
		{"NTasksMax", int64(NTasksMax), C.LM_GGML_N_TASKS_MAX},
		{"KQMaskPad", int64(KQMaskPad), C.LM_GGML_KQ_MASK_PAD},
		{"MaxThreads", int64(MaxThreads), C.LM_GGML_MAX_N_THREADS},
	}
}
