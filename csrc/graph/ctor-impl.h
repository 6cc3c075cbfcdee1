// ctor-impl.h - helpers shared by the op constructors (ctor-*.c). Internal.
#pragma once

#include "ggml-op-params.h"
#include "../quant/ggml-traits.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
