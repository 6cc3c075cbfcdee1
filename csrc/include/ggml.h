// ggml.h - public C API of the ggml-go core.
//
// Source-compatible with the ggml C API of late 2024 as shipped (with the lm_
// prefixes) in cui-llama.rn 1.3.3: names, signatures, enum values and public
// struct layouts match, so C code written against that API compiles unchanged
// for everything implemented here. The implementation is our own; the
// declarations it matches (names, enum values, public struct layouts) are
// ggml's (MIT License, Copyright (c) 2023-2024 The ggml authors; the notice
// is in ggml-iq-tables.c).
#pragma once

#ifdef LM_GGML_SHARED
#    if defined(_WIN32) && !defined(__MINGW32__)
#        ifdef LM_GGML_BUILD
#            define LM_GGML_API __declspec(dllexport)
#        else
#            define LM_GGML_API __declspec(dllimport)
#        endif
#    else
#        define LM_GGML_API __attribute__ ((visibility ("default")))
#    endif
#else
#    define LM_GGML_API
#endif
#define LM_GGML_BACKEND_API LM_GGML_API
#define LM_GGML_CALL

#ifdef __GNUC__
#    define LM_GGML_DEPRECATED(func, hint) func __attribute__((deprecated(hint)))
#elif defined(_MSC_VER)
#    define LM_GGML_DEPRECATED(func, hint) __declspec(deprecated(hint)) func
#else
#    define LM_GGML_DEPRECATED(func, hint) func
#endif

#ifndef __GNUC__
#    define LM_GGML_ATTRIBUTE_FORMAT(...)
#elif defined(__MINGW32__)
#    define LM_GGML_ATTRIBUTE_FORMAT(...) __attribute__((format(gnu_printf, __VA_ARGS__)))
#else
#    define LM_GGML_ATTRIBUTE_FORMAT(...) __attribute__((format(printf, __VA_ARGS__)))
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LM_GGML_FILE_MAGIC   0x67676d6c // "ggml"
#define LM_GGML_FILE_VERSION 2

#define LM_GGML_QNT_VERSION        2
#define LM_GGML_QNT_VERSION_FACTOR 1000

#define LM_GGML_MAX_DIMS           4
#define LM_GGML_MAX_PARAMS         2048
#define LM_GGML_MAX_CONTEXTS       64
#define LM_GGML_MAX_SRC            10
#ifndef LM_GGML_MAX_NAME
#define LM_GGML_MAX_NAME           64
#define LM_GGML_MAX_N_THREADS      512
#endif
#define LM_GGML_MAX_OP_PARAMS      64
#define LM_GGML_DEFAULT_N_THREADS  4
#define LM_GGML_DEFAULT_GRAPH_SIZE 2048
#if UINTPTR_MAX == 0xFFFFFFFF
    #define LM_GGML_MEM_ALIGN 4
#else
    #define LM_GGML_MEM_ALIGN 16
#endif

#define LM_GGML_EXIT_SUCCESS 0
#define LM_GGML_EXIT_ABORTED 1

#define LM_GGML_ROPE_TYPE_NEOX 2

#define LM_GGUF_MAGIC "GGUF"
#define LM_GGUF_VERSION 3
#define LM_GGUF_DEFAULT_ALIGNMENT 32

#define LM_GGML_UNUSED(x) (void)(x)
#define LM_GGML_PAD(x, n) (((x) + (n) - 1) & ~((n) - 1))

#ifndef NDEBUG
#define LM_GGML_UNREACHABLE() do { fprintf(stderr, "statement should be unreachable\n"); abort(); } while(0)
#elif defined(__GNUC__)
#define LM_GGML_UNREACHABLE() __builtin_unreachable()
#else
#define LM_GGML_UNREACHABLE() ((void) 0)
#endif

#ifdef __cplusplus
#define LM_GGML_NORETURN [[noreturn]]
#elif defined(_MSC_VER)
#define LM_GGML_NORETURN __declspec(noreturn)
#else
#define LM_GGML_NORETURN _Noreturn
#endif

#define LM_GGML_ABORT(...) lm_ggml_abort((strrchr(__FILE__, '/') ? strrchr(__FILE__, '/') + 1 : __FILE__), __LINE__, __VA_ARGS__)
#define LM_GGML_ASSERT(x) if (!(x)) LM_GGML_ABORT("LM_GGML_ASSERT(%s) failed", #x)

// Copy ne/nb of tensors into locals (ne00, ne01, ..., nb0, nb1, ...).
#define LM_GGML_TENSOR_LOCALS_1(type, prefix, pointer, array) \
    const type prefix##0 = (pointer)->array[0]; LM_GGML_UNUSED(prefix##0);
#define LM_GGML_TENSOR_LOCALS_2(type, prefix, pointer, array) \
    LM_GGML_TENSOR_LOCALS_1(type, prefix, pointer, array) \
    const type prefix##1 = (pointer)->array[1]; LM_GGML_UNUSED(prefix##1);
#define LM_GGML_TENSOR_LOCALS_3(type, prefix, pointer, array) \
    LM_GGML_TENSOR_LOCALS_2(type, prefix, pointer, array) \
    const type prefix##2 = (pointer)->array[2]; LM_GGML_UNUSED(prefix##2);
#define LM_GGML_TENSOR_LOCALS(type, prefix, pointer, array) \
    LM_GGML_TENSOR_LOCALS_3(type, prefix, pointer, array) \
    const type prefix##3 = (pointer)->array[3]; LM_GGML_UNUSED(prefix##3);

#define LM_GGML_TENSOR_UNARY_OP_LOCALS \
    LM_GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne) \
    LM_GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb) \
    LM_GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne) \
    LM_GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

#define LM_GGML_TENSOR_BINARY_OP_LOCALS \
    LM_GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne) \
    LM_GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb) \
    LM_GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne) \
    LM_GGML_TENSOR_LOCALS(size_t,  nb1, src1, nb) \
    LM_GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne) \
    LM_GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

#define LM_GGML_TENSOR_BINARY_OP_LOCALS01 \
    LM_GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne) \
    LM_GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb) \
    LM_GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne) \
    LM_GGML_TENSOR_LOCALS(size_t,  nb1, src1, nb)

#ifdef  __cplusplus
extern "C" {
#endif

LM_GGML_NORETURN LM_GGML_ATTRIBUTE_FORMAT(3, 4)
LM_GGML_API void lm_ggml_abort(const char * file, int line, const char * fmt, ...);

enum lm_ggml_status {
    LM_GGML_STATUS_ALLOC_FAILED = -2,
    LM_GGML_STATUS_FAILED = -1,
    LM_GGML_STATUS_SUCCESS = 0,
    LM_GGML_STATUS_ABORTED = 1,
};

LM_GGML_API const char * lm_ggml_status_to_string(enum lm_ggml_status status);

// IEEE 754 half precision and Google Brain bfloat16.
typedef uint16_t lm_ggml_fp16_t;
LM_GGML_API float          lm_ggml_fp16_to_fp32(lm_ggml_fp16_t);
LM_GGML_API lm_ggml_fp16_t lm_ggml_fp32_to_fp16(float);
LM_GGML_API void           lm_ggml_fp16_to_fp32_row(const lm_ggml_fp16_t *, float *, int64_t);
LM_GGML_API void           lm_ggml_fp32_to_fp16_row(const float *, lm_ggml_fp16_t *, int64_t);

typedef struct { uint16_t bits; } lm_ggml_bf16_t;
LM_GGML_API lm_ggml_bf16_t lm_ggml_fp32_to_bf16(float);
LM_GGML_API float          lm_ggml_bf16_to_fp32(lm_ggml_bf16_t);
LM_GGML_API void           lm_ggml_bf16_to_fp32_row(const lm_ggml_bf16_t *, float *, int64_t);
LM_GGML_API void           lm_ggml_fp32_to_bf16_row_ref(const float *, lm_ggml_bf16_t *, int64_t);
LM_GGML_API void           lm_ggml_fp32_to_bf16_row(const float *, lm_ggml_bf16_t *, int64_t);

struct lm_ggml_object;
struct lm_ggml_context;
struct lm_ggml_cgraph;

// NOTE: values are part of the file formats; never renumber.
enum lm_ggml_type {
    LM_GGML_TYPE_F32     = 0,
    LM_GGML_TYPE_F16     = 1,
    LM_GGML_TYPE_Q4_0    = 2,
    LM_GGML_TYPE_Q4_1    = 3,
    // 4 and 5 (Q4_2, Q4_3) were removed
    LM_GGML_TYPE_Q5_0    = 6,
    LM_GGML_TYPE_Q5_1    = 7,
    LM_GGML_TYPE_Q8_0    = 8,
    LM_GGML_TYPE_Q8_1    = 9,
    LM_GGML_TYPE_Q2_K    = 10,
    LM_GGML_TYPE_Q3_K    = 11,
    LM_GGML_TYPE_Q4_K    = 12,
    LM_GGML_TYPE_Q5_K    = 13,
    LM_GGML_TYPE_Q6_K    = 14,
    LM_GGML_TYPE_Q8_K    = 15,
    LM_GGML_TYPE_IQ2_XXS = 16,
    LM_GGML_TYPE_IQ2_XS  = 17,
    LM_GGML_TYPE_IQ3_XXS = 18,
    LM_GGML_TYPE_IQ1_S   = 19,
    LM_GGML_TYPE_IQ4_NL  = 20,
    LM_GGML_TYPE_IQ3_S   = 21,
    LM_GGML_TYPE_IQ2_S   = 22,
    LM_GGML_TYPE_IQ4_XS  = 23,
    LM_GGML_TYPE_I8      = 24,
    LM_GGML_TYPE_I16     = 25,
    LM_GGML_TYPE_I32     = 26,
    LM_GGML_TYPE_I64     = 27,
    LM_GGML_TYPE_F64     = 28,
    LM_GGML_TYPE_IQ1_M   = 29,
    LM_GGML_TYPE_BF16    = 30,
    LM_GGML_TYPE_Q4_0_4_4 = 31,
    LM_GGML_TYPE_Q4_0_4_8 = 32,
    LM_GGML_TYPE_Q4_0_8_8 = 33,
    LM_GGML_TYPE_TQ1_0   = 34,
    LM_GGML_TYPE_TQ2_0   = 35,
    LM_GGML_TYPE_IQ4_NL_4_4 = 36,
    // 37 (IQ4_NL_4_8) and 38 (IQ4_NL_8_8) are reserved
    LM_GGML_TYPE_COUNT   = 39,
};

enum lm_ggml_prec {
    LM_GGML_PREC_DEFAULT,
    LM_GGML_PREC_F32,
};

enum lm_ggml_backend_type {
    LM_GGML_BACKEND_TYPE_CPU = 0,
    LM_GGML_BACKEND_TYPE_GPU = 10,
    LM_GGML_BACKEND_TYPE_GPU_SPLIT = 20,
};

enum lm_ggml_ftype {
    LM_GGML_FTYPE_UNKNOWN        = -1,
    LM_GGML_FTYPE_ALL_F32        = 0,
    LM_GGML_FTYPE_MOSTLY_F16     = 1,
    LM_GGML_FTYPE_MOSTLY_Q4_0    = 2,
    LM_GGML_FTYPE_MOSTLY_Q4_1    = 3,
    LM_GGML_FTYPE_MOSTLY_Q4_1_SOME_F16 = 4,
    LM_GGML_FTYPE_MOSTLY_Q8_0    = 7,
    LM_GGML_FTYPE_MOSTLY_Q5_0    = 8,
    LM_GGML_FTYPE_MOSTLY_Q5_1    = 9,
    LM_GGML_FTYPE_MOSTLY_Q2_K    = 10,
    LM_GGML_FTYPE_MOSTLY_Q3_K    = 11,
    LM_GGML_FTYPE_MOSTLY_Q4_K    = 12,
    LM_GGML_FTYPE_MOSTLY_Q5_K    = 13,
    LM_GGML_FTYPE_MOSTLY_Q6_K    = 14,
    LM_GGML_FTYPE_MOSTLY_IQ2_XXS = 15,
    LM_GGML_FTYPE_MOSTLY_IQ2_XS  = 16,
    LM_GGML_FTYPE_MOSTLY_IQ3_XXS = 17,
    LM_GGML_FTYPE_MOSTLY_IQ1_S   = 18,
    LM_GGML_FTYPE_MOSTLY_IQ4_NL  = 19,
    LM_GGML_FTYPE_MOSTLY_IQ3_S   = 20,
    LM_GGML_FTYPE_MOSTLY_IQ2_S   = 21,
    LM_GGML_FTYPE_MOSTLY_IQ4_XS  = 22,
    LM_GGML_FTYPE_MOSTLY_IQ1_M   = 23,
    LM_GGML_FTYPE_MOSTLY_BF16    = 24,
    LM_GGML_FTYPE_MOSTLY_Q4_0_4_4 = 25,
    LM_GGML_FTYPE_MOSTLY_Q4_0_4_8 = 26,
    LM_GGML_FTYPE_MOSTLY_Q4_0_8_8 = 27,
};

// The ops, one enumerator a line, each with its facts in a trailing comment
// "// op: FACT FACT ...". internal/gen/optable reads these two enums and
// writes from them (run go generate in the module root; C users need not:
// the output is committed) the name and symbol tables (csrc/core/ggml-names.c),
// the Go constants (enums_ops.go), the allocator's in-place rule
// (csrc/backend/ggml-op-inplace.h), which ops an RPC server rebuilds
// (csrc/rpc/rpc-ops.h) and the CPU engine's kernel table
// (csrc/cpu/ggml-cpu-kernels.c). Facts, separated by spaces:
//
//   sym="..."   required: lm_ggml_op_symbol, a C string literal (escaped for
//               graphviz labels)
//   name=NAME   lm_ggml_op_name; default: the enumerator without LM_GGML_OP_
//   go=Name     the Go constant is OpName; default: the enumerator's suffix
//               in CamelCase (LM_GGML_OP_SUM_ROWS: OpSumRows)
//   was=Name    also a deprecated Go constant OpName, equal to it
//   inplace     the result may take the memory of an operand that dies with
//               it (the graph allocator): the CPU kernel reads each element
//               (row) of its operands before writing that element (row)
//   rpc         an RPC server builds it again with rb_ + the enumerator's
//               suffix in lower case (rb_sum_rows in csrc/rpc/rpc-graph.c);
//               an op without rpc or rpc=view is refused by RPC
//   rpc=view    an RPC server takes it as sent (a view: nothing to compute)
//   cpu         the CPU engine computes it with the descriptor lm_cpu_op_ +
//               the enumerator's suffix in lower case (const struct lm_cpu_op
//               lm_cpu_op_sum_rows, in the csrc/cpu/ops-*.c file of its
//               kernel); an op without cpu has no CPU kernel (views and NONE
//               need none)
//
// A new CPU op is then: its line here (with cpu), its constructor in
// csrc/graph/ctor-*.c, its descriptor and kernel in csrc/cpu/ops-*.c, its Go
// method and a test.
//
// The values are part of the API and of file formats: append new ops before
// LM_GGML_OP_COUNT, never renumber.
enum lm_ggml_op {
    LM_GGML_OP_NONE = 0,                   // op: sym="none" rpc=view
    LM_GGML_OP_DUP,                        // op: sym="x" rpc cpu
    LM_GGML_OP_ADD,                        // op: sym="x+y" inplace rpc cpu
    LM_GGML_OP_ADD1,                       // op: sym="x+y" inplace rpc cpu
    LM_GGML_OP_ACC,                        // op: sym="view(x,nb,offset)+=y->x" inplace rpc cpu
    LM_GGML_OP_SUB,                        // op: sym="x-y" inplace rpc cpu
    LM_GGML_OP_MUL,                        // op: sym="x*y" inplace rpc cpu
    LM_GGML_OP_DIV,                        // op: sym="x/y" inplace rpc cpu
    LM_GGML_OP_SQR,                        // op: sym="x^2" inplace rpc cpu
    LM_GGML_OP_SQRT,                       // op: sym="√x" inplace rpc cpu
    LM_GGML_OP_LOG,                        // op: sym="log(x)" inplace rpc cpu
    LM_GGML_OP_SIN,                        // op: sym="sin(x)" inplace rpc cpu
    LM_GGML_OP_COS,                        // op: sym="cos(x)" inplace rpc cpu
    LM_GGML_OP_SUM,                        // op: sym="Σx" rpc cpu
    LM_GGML_OP_SUM_ROWS,                   // op: sym="Σx_k" rpc cpu
    LM_GGML_OP_MEAN,                       // op: sym="Σx/n" rpc cpu
    LM_GGML_OP_ARGMAX,                     // op: sym="argmax(x)" rpc cpu
    LM_GGML_OP_COUNT_EQUAL,                // op: sym="count_equal(x)" rpc cpu
    LM_GGML_OP_REPEAT,                     // op: sym="repeat(x)" rpc cpu
    LM_GGML_OP_REPEAT_BACK,                // op: sym="repeat_back(x)" rpc cpu
    LM_GGML_OP_CONCAT,                     // op: sym="concat(x, y)" rpc cpu
    LM_GGML_OP_SILU_BACK,                  // op: sym="silu_back(x)" inplace rpc cpu
    LM_GGML_OP_NORM,                       // op: sym="norm(x)" inplace rpc cpu
    LM_GGML_OP_RMS_NORM,                   // op: sym="rms_norm(x)" go=RMSNorm was=RmsNorm inplace rpc cpu
    LM_GGML_OP_RMS_NORM_BACK,              // op: sym="rms_norm_back(x)" go=RMSNormBack was=RmsNormBack inplace rpc cpu
    LM_GGML_OP_GROUP_NORM,                 // op: sym="group_norm(x)" rpc cpu
    LM_GGML_OP_MUL_MAT,                    // op: sym="X*Y" rpc cpu
    LM_GGML_OP_MUL_MAT_ID,                 // op: sym="X[i]*Y" go=MulMatID was=MulMatId rpc cpu
    LM_GGML_OP_OUT_PROD,                   // op: sym="X*Y" rpc cpu
    LM_GGML_OP_SCALE,                      // op: sym="x*v" inplace rpc cpu
    LM_GGML_OP_SET,                        // op: sym="y-\\>view(x)" rpc cpu
    LM_GGML_OP_CPY,                        // op: sym="x-\\>y" rpc cpu
    LM_GGML_OP_CONT,                       // op: sym="cont(x)" rpc cpu
    LM_GGML_OP_RESHAPE,                    // op: sym="reshape(x)" rpc=view
    LM_GGML_OP_VIEW,                       // op: sym="view(x)" rpc=view
    LM_GGML_OP_PERMUTE,                    // op: sym="permute(x)" rpc=view
    LM_GGML_OP_TRANSPOSE,                  // op: sym="transpose(x)" rpc=view
    LM_GGML_OP_GET_ROWS,                   // op: sym="get_rows(x)" rpc cpu
    LM_GGML_OP_GET_ROWS_BACK,              // op: sym="get_rows_back(x)" rpc cpu
    LM_GGML_OP_DIAG,                       // op: sym="diag(x)" rpc cpu
    LM_GGML_OP_DIAG_MASK_INF,              // op: sym="diag_mask_inf(x)" inplace rpc cpu
    LM_GGML_OP_DIAG_MASK_ZERO,             // op: sym="diag_mask_zero(x)" inplace rpc cpu
    LM_GGML_OP_SOFT_MAX,                   // op: sym="soft_max(x)" inplace rpc cpu
    LM_GGML_OP_SOFT_MAX_BACK,              // op: sym="soft_max_back(x)" inplace rpc cpu
    LM_GGML_OP_ROPE,                       // op: sym="rope(x)" inplace rpc cpu
    LM_GGML_OP_ROPE_BACK,                  // op: sym="rope_back(x)" inplace rpc cpu
    LM_GGML_OP_CLAMP,                      // op: sym="clamp(x)" inplace rpc cpu
    LM_GGML_OP_CONV_TRANSPOSE_1D,          // op: sym="conv_transpose_1d(x)" go=ConvTranspose1D was=ConvTranspose1d rpc cpu
    LM_GGML_OP_IM2COL,                     // op: sym="im2col(x)" go=Im2Col was=Im2col rpc cpu
    LM_GGML_OP_IM2COL_BACK,                // op: sym="im2col_back(x)" go=Im2ColBack was=Im2colBack rpc cpu
    LM_GGML_OP_CONV_TRANSPOSE_2D,          // op: sym="conv_transpose_2d(x)" go=ConvTranspose2D was=ConvTranspose2d rpc cpu
    LM_GGML_OP_POOL_1D,                    // op: sym="pool_1d(x)" go=Pool1D was=Pool1d rpc cpu
    LM_GGML_OP_POOL_2D,                    // op: sym="pool_2d(x)" go=Pool2D was=Pool2d rpc cpu
    LM_GGML_OP_POOL_2D_BACK,               // op: sym="pool_2d_back(x)" go=Pool2DBack was=Pool2dBack rpc cpu
    LM_GGML_OP_UPSCALE,                    // op: sym="upscale(x)" rpc cpu
    LM_GGML_OP_PAD,                        // op: sym="pad(x)" rpc cpu
    LM_GGML_OP_ARANGE,                     // op: sym="arange(start, stop, step)" rpc cpu
    LM_GGML_OP_TIMESTEP_EMBEDDING,         // op: sym="timestep_embedding(timesteps, dim, max_period)" rpc cpu
    LM_GGML_OP_ARGSORT,                    // op: sym="argsort(x)" rpc cpu
    LM_GGML_OP_LEAKY_RELU,                 // op: sym="leaky_relu(x)" inplace rpc cpu
    LM_GGML_OP_FLASH_ATTN_EXT,             // op: sym="flash_attn_ext(x)" rpc cpu
    LM_GGML_OP_FLASH_ATTN_BACK,            // op: sym="flash_attn_back(x)"
    LM_GGML_OP_SSM_CONV,                   // op: sym="ssm_conv(x)" go=SSMConv was=SsmConv rpc cpu
    LM_GGML_OP_SSM_SCAN,                   // op: sym="ssm_scan(x)" go=SSMScan was=SsmScan rpc cpu
    LM_GGML_OP_WIN_PART,                   // op: sym="win_part(x)" rpc cpu
    LM_GGML_OP_WIN_UNPART,                 // op: sym="win_unpart(x)" rpc cpu
    LM_GGML_OP_GET_REL_POS,                // op: sym="get_rel_pos(x)" rpc cpu
    LM_GGML_OP_ADD_REL_POS,                // op: sym="add_rel_pos(x)" rpc cpu
    LM_GGML_OP_RWKV_WKV6,                  // op: sym="rwkv_wkv6(k, v, r, tf, td, s)" go=RWKVWKV6 was=RwkvWkv6 rpc cpu
    LM_GGML_OP_UNARY,                      // op: sym="unary(x)" inplace rpc cpu
    LM_GGML_OP_MAP_UNARY,                  // op: sym="f(x)" cpu
    LM_GGML_OP_MAP_BINARY,                 // op: sym="f(x,y)" cpu
    LM_GGML_OP_MAP_CUSTOM1_F32,            // op: sym="custom_f32(x)" cpu
    LM_GGML_OP_MAP_CUSTOM2_F32,            // op: sym="custom_f32(x,y)" cpu
    LM_GGML_OP_MAP_CUSTOM3_F32,            // op: sym="custom_f32(x,y,z)" cpu
    LM_GGML_OP_MAP_CUSTOM1,                // op: sym="custom(x)" cpu
    LM_GGML_OP_MAP_CUSTOM2,                // op: sym="custom(x,y)" cpu
    LM_GGML_OP_MAP_CUSTOM3,                // op: sym="custom(x,y,z)" cpu
    LM_GGML_OP_CROSS_ENTROPY_LOSS,         // op: sym="cross_entropy_loss(x,y)" rpc cpu
    LM_GGML_OP_CROSS_ENTROPY_LOSS_BACK,    // op: sym="cross_entropy_loss_back(x,y)" rpc cpu
    LM_GGML_OP_OPT_STEP_ADAMW,             // op: sym="adamw(x)" go=OptStepAdamW was=OptStepAdamw rpc cpu
    LM_GGML_OP_COUNT,
};

// The unary ops of LM_GGML_OP_UNARY, one enumerator a line, read by
// internal/gen/optable as enum lm_ggml_op above. lm_ggml_unary_op_name is the
// enumerator without LM_GGML_UNARY_OP_ and the Go constant Unary + its
// CamelCase (UnaryGeluQuick) unless an optional "// op:" comment says
// otherwise with name=, go= or was= (no other facts apply).
enum lm_ggml_unary_op {
    LM_GGML_UNARY_OP_ABS,
    LM_GGML_UNARY_OP_SGN,
    LM_GGML_UNARY_OP_NEG,
    LM_GGML_UNARY_OP_STEP,
    LM_GGML_UNARY_OP_TANH,
    LM_GGML_UNARY_OP_ELU,
    LM_GGML_UNARY_OP_RELU,
    LM_GGML_UNARY_OP_SIGMOID,
    LM_GGML_UNARY_OP_GELU,
    LM_GGML_UNARY_OP_GELU_QUICK,
    LM_GGML_UNARY_OP_SILU,
    LM_GGML_UNARY_OP_HARDSWISH,
    LM_GGML_UNARY_OP_HARDSIGMOID,
    LM_GGML_UNARY_OP_EXP,
    LM_GGML_UNARY_OP_COUNT,
};

enum lm_ggml_object_type {
    LM_GGML_OBJECT_TYPE_TENSOR,
    LM_GGML_OBJECT_TYPE_GRAPH,
    LM_GGML_OBJECT_TYPE_WORK_BUFFER
};

enum lm_ggml_log_level {
    LM_GGML_LOG_LEVEL_NONE  = 0,
    LM_GGML_LOG_LEVEL_DEBUG = 1,
    LM_GGML_LOG_LEVEL_INFO  = 2,
    LM_GGML_LOG_LEVEL_WARN  = 3,
    LM_GGML_LOG_LEVEL_ERROR = 4,
    LM_GGML_LOG_LEVEL_CONT  = 5,
};

enum lm_ggml_tensor_flag {
    LM_GGML_TENSOR_FLAG_INPUT  = 1,
    LM_GGML_TENSOR_FLAG_OUTPUT = 2,
    LM_GGML_TENSOR_FLAG_PARAM  = 4,
    LM_GGML_TENSOR_FLAG_LOSS   = 8,
};

struct lm_ggml_init_params {
    size_t mem_size;   // bytes
    void * mem_buffer; // NULL: allocated internally
    bool   no_alloc;   // do not allocate tensor data
};

// n-dimensional tensor; layout identical to ggml's (336 bytes on 64-bit).
struct lm_ggml_tensor {
    enum lm_ggml_type type;

    LM_GGML_DEPRECATED(enum lm_ggml_backend_type backend, "use the buffer type to find the storage location of the tensor");

    struct lm_ggml_backend_buffer * buffer;

    int64_t ne[LM_GGML_MAX_DIMS]; // number of elements
    size_t  nb[LM_GGML_MAX_DIMS]; // stride in bytes

    enum lm_ggml_op op;

    int32_t op_params[LM_GGML_MAX_OP_PARAMS / sizeof(int32_t)];

    int32_t flags;

    struct lm_ggml_tensor * src[LM_GGML_MAX_SRC];

    struct lm_ggml_tensor * view_src;
    size_t               view_offs;

    void * data;

    char name[LM_GGML_MAX_NAME];

    void * extra;

    char padding[8];
};

static const size_t LM_GGML_TENSOR_SIZE = sizeof(struct lm_ggml_tensor);

typedef bool (*lm_ggml_abort_callback)(void * data);

typedef uint8_t lm_ggml_guid[16];
typedef lm_ggml_guid * lm_ggml_guid_t;
LM_GGML_API bool lm_ggml_guid_matches(lm_ggml_guid_t guid_a, lm_ggml_guid_t guid_b);

// misc
LM_GGML_API void    lm_ggml_time_init(void);
LM_GGML_API int64_t lm_ggml_time_ms(void);
LM_GGML_API int64_t lm_ggml_time_us(void);
LM_GGML_API int64_t lm_ggml_cycles(void);
LM_GGML_API int64_t lm_ggml_cycles_per_ms(void);
LM_GGML_API FILE *  lm_ggml_fopen(const char * fname, const char * mode);
LM_GGML_API void    lm_ggml_print_object (const struct lm_ggml_object * obj);
LM_GGML_API void    lm_ggml_print_objects(const struct lm_ggml_context * ctx);

LM_GGML_API int64_t lm_ggml_nelements (const struct lm_ggml_tensor * tensor);
LM_GGML_API int64_t lm_ggml_nrows     (const struct lm_ggml_tensor * tensor);
LM_GGML_API size_t  lm_ggml_nbytes    (const struct lm_ggml_tensor * tensor);
LM_GGML_API size_t  lm_ggml_nbytes_pad(const struct lm_ggml_tensor * tensor);

LM_GGML_API int64_t lm_ggml_blck_size(enum lm_ggml_type type);
LM_GGML_API size_t  lm_ggml_type_size(enum lm_ggml_type type);
LM_GGML_API size_t  lm_ggml_row_size (enum lm_ggml_type type, int64_t ne);

LM_GGML_DEPRECATED(LM_GGML_API double lm_ggml_type_sizef(enum lm_ggml_type type), "use lm_ggml_row_size() instead");

LM_GGML_API const char * lm_ggml_type_name(enum lm_ggml_type type);
LM_GGML_API const char * lm_ggml_op_name  (enum lm_ggml_op   op);
LM_GGML_API const char * lm_ggml_op_symbol(enum lm_ggml_op   op);
LM_GGML_API const char * lm_ggml_unary_op_name(enum lm_ggml_unary_op op);
LM_GGML_API const char * lm_ggml_op_desc(const struct lm_ggml_tensor * t);

LM_GGML_API size_t lm_ggml_element_size(const struct lm_ggml_tensor * tensor);
LM_GGML_API bool   lm_ggml_is_quantized(enum lm_ggml_type type);
LM_GGML_API enum lm_ggml_type lm_ggml_ftype_to_lm_ggml_type(enum lm_ggml_ftype ftype);

LM_GGML_API bool lm_ggml_is_transposed(const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_permuted  (const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_empty     (const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_scalar    (const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_vector    (const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_matrix    (const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_3d        (const struct lm_ggml_tensor * tensor);
LM_GGML_API int  lm_ggml_n_dims       (const struct lm_ggml_tensor * tensor);

LM_GGML_API bool lm_ggml_is_contiguous  (const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_contiguous_0(const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_contiguous_1(const struct lm_ggml_tensor * tensor);
LM_GGML_API bool lm_ggml_is_contiguous_2(const struct lm_ggml_tensor * tensor);

LM_GGML_API bool lm_ggml_are_same_shape (const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1);
LM_GGML_API bool lm_ggml_are_same_stride(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1);
LM_GGML_API bool lm_ggml_can_repeat     (const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1);

LM_GGML_API size_t lm_ggml_tensor_overhead(void);
LM_GGML_API bool   lm_ggml_validate_row_data(enum lm_ggml_type type, const void * data, size_t nbytes);

// contexts
LM_GGML_API struct lm_ggml_context * lm_ggml_init (struct lm_ggml_init_params params);
LM_GGML_API void                     lm_ggml_reset(struct lm_ggml_context * ctx);
LM_GGML_API void                     lm_ggml_free (struct lm_ggml_context * ctx);

LM_GGML_API size_t lm_ggml_used_mem(const struct lm_ggml_context * ctx);
LM_GGML_API bool   lm_ggml_get_no_alloc(struct lm_ggml_context * ctx);
LM_GGML_API void   lm_ggml_set_no_alloc(struct lm_ggml_context * ctx, bool no_alloc);
LM_GGML_API void * lm_ggml_get_mem_buffer     (const struct lm_ggml_context * ctx);
LM_GGML_API size_t lm_ggml_get_mem_size       (const struct lm_ggml_context * ctx);
LM_GGML_API size_t lm_ggml_get_max_tensor_size(const struct lm_ggml_context * ctx);

// tensors
LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor   (struct lm_ggml_context * ctx, enum lm_ggml_type type, int n_dims, const int64_t * ne);
LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor_1d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0);
LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor_2d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1);
LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor_3d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2);
LM_GGML_API struct lm_ggml_tensor * lm_ggml_new_tensor_4d(struct lm_ggml_context * ctx, enum lm_ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
LM_GGML_API void * lm_ggml_new_buffer(struct lm_ggml_context * ctx, size_t nbytes);

LM_GGML_API struct lm_ggml_tensor * lm_ggml_dup_tensor (struct lm_ggml_context * ctx, const struct lm_ggml_tensor * src);
LM_GGML_API struct lm_ggml_tensor * lm_ggml_view_tensor(struct lm_ggml_context * ctx, struct lm_ggml_tensor * src);

LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_first_tensor(const struct lm_ggml_context * ctx);
LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_next_tensor (const struct lm_ggml_context * ctx, struct lm_ggml_tensor * tensor);
LM_GGML_API struct lm_ggml_tensor * lm_ggml_get_tensor(struct lm_ggml_context * ctx, const char * name);

LM_GGML_API void lm_ggml_unravel_index(const struct lm_ggml_tensor * tensor, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3);
LM_GGML_API enum lm_ggml_unary_op lm_ggml_get_unary_op(const struct lm_ggml_tensor * tensor);

LM_GGML_API void *  lm_ggml_get_data    (const struct lm_ggml_tensor * tensor);
LM_GGML_API float * lm_ggml_get_data_f32(const struct lm_ggml_tensor * tensor);

LM_GGML_API const char *            lm_ggml_get_name   (const struct lm_ggml_tensor * tensor);
LM_GGML_API struct lm_ggml_tensor * lm_ggml_set_name   (struct lm_ggml_tensor * tensor, const char * name);
LM_GGML_ATTRIBUTE_FORMAT(2, 3)
LM_GGML_API struct lm_ggml_tensor * lm_ggml_format_name(struct lm_ggml_tensor * tensor, const char * fmt, ...);

LM_GGML_API void lm_ggml_set_input (struct lm_ggml_tensor * tensor);
LM_GGML_API void lm_ggml_set_output(struct lm_ggml_tensor * tensor);
LM_GGML_API void lm_ggml_set_param (struct lm_ggml_context * ctx, struct lm_ggml_tensor * tensor);
LM_GGML_API void lm_ggml_set_loss  (struct lm_ggml_tensor * tensor);

//
// operations (ctx first, then the operands in this order)
//
#define LM_T struct lm_ggml_tensor
#define LM_C struct lm_ggml_context
LM_GGML_API LM_T * lm_ggml_dup        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_dup_inplace(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_add        (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_add_inplace(LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_add_cast   (LM_C * ctx, LM_T * a, LM_T * b, enum lm_ggml_type type);
LM_GGML_API LM_T * lm_ggml_add1        (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_add1_inplace(LM_C * ctx, LM_T * a, LM_T * b);
// dst = a; view(dst, nb1, nb2, nb3, offset) += b
LM_GGML_API LM_T * lm_ggml_acc        (LM_C * ctx, LM_T * a, LM_T * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
LM_GGML_API LM_T * lm_ggml_acc_inplace(LM_C * ctx, LM_T * a, LM_T * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
LM_GGML_API LM_T * lm_ggml_sub        (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_sub_inplace(LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_mul        (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_mul_inplace(LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_div        (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_div_inplace(LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_sqr         (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sqr_inplace (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sqrt        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sqrt_inplace(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_log         (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_log_inplace (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sin         (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sin_inplace (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_cos         (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_cos_inplace (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sum         (LM_C * ctx, LM_T * a);  // scalar
LM_GGML_API LM_T * lm_ggml_sum_rows    (LM_C * ctx, LM_T * a);  // [a,b,c,d] -> [1,b,c,d]
LM_GGML_API LM_T * lm_ggml_mean        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_argmax      (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_count_equal (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_repeat      (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_repeat_back (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_concat      (LM_C * ctx, LM_T * a, LM_T * b, int dim);
LM_GGML_API LM_T * lm_ggml_abs         (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_abs_inplace (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sgn         (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sgn_inplace (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_neg         (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_neg_inplace (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_step        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_step_inplace(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_tanh        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_tanh_inplace(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_elu         (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_elu_inplace (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_relu        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_leaky_relu  (LM_C * ctx, LM_T * a, float negative_slope, bool inplace);
LM_GGML_API LM_T * lm_ggml_relu_inplace(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sigmoid        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_sigmoid_inplace(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_gelu           (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_gelu_inplace   (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_gelu_quick        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_gelu_quick_inplace(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_silu           (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_silu_inplace   (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_silu_back      (LM_C * ctx, LM_T * a, LM_T * b); // a: x, b: dy
LM_GGML_API LM_T * lm_ggml_hardswish      (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_hardsigmoid    (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_exp            (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_exp_inplace    (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_norm              (LM_C * ctx, LM_T * a, float eps);
LM_GGML_API LM_T * lm_ggml_norm_inplace      (LM_C * ctx, LM_T * a, float eps);
LM_GGML_API LM_T * lm_ggml_rms_norm          (LM_C * ctx, LM_T * a, float eps);
LM_GGML_API LM_T * lm_ggml_rms_norm_inplace  (LM_C * ctx, LM_T * a, float eps);
LM_GGML_API LM_T * lm_ggml_group_norm        (LM_C * ctx, LM_T * a, int n_groups, float eps);
LM_GGML_API LM_T * lm_ggml_group_norm_inplace(LM_C * ctx, LM_T * a, int n_groups, float eps);
LM_GGML_API LM_T * lm_ggml_rms_norm_back     (LM_C * ctx, LM_T * a, LM_T * b, float eps); // a: x, b: dy
// a: [k, n, ne02, ne03], b: [k, m, ne02*x, ne03*y] -> [n, m, ne02*x, ne03*y]
LM_GGML_API LM_T * lm_ggml_mul_mat(LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API void   lm_ggml_mul_mat_set_prec(LM_T * a, enum lm_ggml_prec prec);
LM_GGML_API LM_T * lm_ggml_mul_mat_id(LM_C * ctx, LM_T * as, LM_T * b, LM_T * ids);
// a: [m, n], b: [p, n] -> [m, p]
LM_GGML_API LM_T * lm_ggml_out_prod(LM_C * ctx, LM_T * a, LM_T * b);

LM_GGML_API LM_T * lm_ggml_scale        (LM_C * ctx, LM_T * a, float s);
LM_GGML_API LM_T * lm_ggml_scale_inplace(LM_C * ctx, LM_T * a, float s);
LM_GGML_API LM_T * lm_ggml_set           (LM_C * ctx, LM_T * a, LM_T * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
LM_GGML_API LM_T * lm_ggml_set_inplace   (LM_C * ctx, LM_T * a, LM_T * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
LM_GGML_API LM_T * lm_ggml_set_1d        (LM_C * ctx, LM_T * a, LM_T * b, size_t offset);
LM_GGML_API LM_T * lm_ggml_set_1d_inplace(LM_C * ctx, LM_T * a, LM_T * b, size_t offset);
LM_GGML_API LM_T * lm_ggml_set_2d        (LM_C * ctx, LM_T * a, LM_T * b, size_t nb1, size_t offset);
LM_GGML_API LM_T * lm_ggml_set_2d_inplace(LM_C * ctx, LM_T * a, LM_T * b, size_t nb1, size_t offset);
LM_GGML_API LM_T * lm_ggml_cpy (LM_C * ctx, LM_T * a, LM_T * b); // a -> b, returns view(b)
LM_GGML_API LM_T * lm_ggml_cast(LM_C * ctx, LM_T * a, enum lm_ggml_type type);
LM_GGML_API LM_T * lm_ggml_cont   (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_cont_1d(LM_C * ctx, LM_T * a, int64_t ne0);
LM_GGML_API LM_T * lm_ggml_cont_2d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1);
LM_GGML_API LM_T * lm_ggml_cont_3d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1, int64_t ne2);
LM_GGML_API LM_T * lm_ggml_cont_4d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
LM_GGML_API LM_T * lm_ggml_reshape   (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_reshape_1d(LM_C * ctx, LM_T * a, int64_t ne0);
LM_GGML_API LM_T * lm_ggml_reshape_2d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1);
LM_GGML_API LM_T * lm_ggml_reshape_3d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1, int64_t ne2);
LM_GGML_API LM_T * lm_ggml_reshape_4d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
LM_GGML_API LM_T * lm_ggml_view_1d(LM_C * ctx, LM_T * a, int64_t ne0, size_t offset);
LM_GGML_API LM_T * lm_ggml_view_2d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
LM_GGML_API LM_T * lm_ggml_view_3d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset);
LM_GGML_API LM_T * lm_ggml_view_4d(LM_C * ctx, LM_T * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset);
LM_GGML_API LM_T * lm_ggml_permute  (LM_C * ctx, LM_T * a, int axis0, int axis1, int axis2, int axis3);
LM_GGML_API LM_T * lm_ggml_transpose(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_get_rows     (LM_C * ctx, LM_T * a, LM_T * b);           // a: data, b: i32 row indices
LM_GGML_API LM_T * lm_ggml_get_rows_back(LM_C * ctx, LM_T * a, LM_T * b, LM_T * c); // a: grad, b: indices, c: shape
LM_GGML_API LM_T * lm_ggml_diag(LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_diag_mask_inf         (LM_C * ctx, LM_T * a, int n_past);
LM_GGML_API LM_T * lm_ggml_diag_mask_inf_inplace (LM_C * ctx, LM_T * a, int n_past);
LM_GGML_API LM_T * lm_ggml_diag_mask_zero        (LM_C * ctx, LM_T * a, int n_past);
LM_GGML_API LM_T * lm_ggml_diag_mask_zero_inplace(LM_C * ctx, LM_T * a, int n_past);
LM_GGML_API LM_T * lm_ggml_soft_max        (LM_C * ctx, LM_T * a);
LM_GGML_API LM_T * lm_ggml_soft_max_inplace(LM_C * ctx, LM_T * a);
// soft_max(a*scale + mask*(ALiBi slope)); mask optional; max_bias = 0 for no ALiBi
LM_GGML_API LM_T * lm_ggml_soft_max_ext         (LM_C * ctx, LM_T * a, LM_T * mask, float scale, float max_bias);
LM_GGML_API LM_T * lm_ggml_soft_max_back        (LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_soft_max_back_inplace(LM_C * ctx, LM_T * a, LM_T * b);
// rotary position embedding; b: i32 positions [a->ne[2]]; mode & LM_GGML_ROPE_TYPE_NEOX: GPT-NeoX style
LM_GGML_API LM_T * lm_ggml_rope        (LM_C * ctx, LM_T * a, LM_T * b, int n_dims, int mode);
LM_GGML_API LM_T * lm_ggml_rope_inplace(LM_C * ctx, LM_T * a, LM_T * b, int n_dims, int mode);
LM_GGML_API LM_T * lm_ggml_rope_ext        (LM_C * ctx, LM_T * a, LM_T * b, LM_T * c, int n_dims, int mode, int n_ctx_orig,
        float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
LM_GGML_API LM_T * lm_ggml_rope_ext_inplace(LM_C * ctx, LM_T * a, LM_T * b, LM_T * c, int n_dims, int mode, int n_ctx_orig,
        float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_rope_custom(LM_C * ctx, LM_T * a, LM_T * b, int n_dims, int mode, int n_ctx_orig,
        float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow),
        "use lm_ggml_rope_ext instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_rope_custom_inplace(LM_C * ctx, LM_T * a, LM_T * b, int n_dims, int mode, int n_ctx_orig,
        float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow),
        "use lm_ggml_rope_ext_inplace instead");
LM_GGML_API void lm_ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]);
LM_GGML_API LM_T * lm_ggml_rope_back(LM_C * ctx, LM_T * a, LM_T * b, LM_T * c, int n_dims, int mode, int n_ctx_orig,
        float freq_base, float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
LM_GGML_API LM_T * lm_ggml_clamp(LM_C * ctx, LM_T * a, float min, float max);
LM_GGML_API LM_T * lm_ggml_im2col(LM_C * ctx, LM_T * a, LM_T * b, int s0, int s1, int p0, int p1, int d0, int d1,
        bool is_2D, enum lm_ggml_type dst_type);
LM_GGML_API LM_T * lm_ggml_im2col_back(LM_C * ctx, LM_T * a, LM_T * b, int64_t * ne, int s0, int s1, int p0, int p1,
        int d0, int d1, bool is_2D);
LM_GGML_API LM_T * lm_ggml_conv_depthwise_2d(LM_C * ctx, LM_T * a, LM_T * b, int s0, int s1, int p0, int p1, int d0, int d1);
LM_GGML_API LM_T * lm_ggml_conv_1d(LM_C * ctx, LM_T * a, LM_T * b, int s0, int p0, int d0);
LM_GGML_API LM_T * lm_ggml_conv_1d_ph(LM_C * ctx, LM_T * a, LM_T * b, int s, int d);
LM_GGML_API LM_T * lm_ggml_conv_transpose_1d(LM_C * ctx, LM_T * a, LM_T * b, int s0, int p0, int d0);
LM_GGML_API LM_T * lm_ggml_conv_2d(LM_C * ctx, LM_T * a, LM_T * b, int s0, int s1, int p0, int p1, int d0, int d1);
LM_GGML_API LM_T * lm_ggml_conv_2d_sk_p0(LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_conv_2d_s1_ph(LM_C * ctx, LM_T * a, LM_T * b);
LM_GGML_API LM_T * lm_ggml_conv_transpose_2d_p0(LM_C * ctx, LM_T * a, LM_T * b, int stride);

enum lm_ggml_op_pool {
    LM_GGML_OP_POOL_MAX,
    LM_GGML_OP_POOL_AVG,
    LM_GGML_OP_POOL_COUNT,
};

LM_GGML_API LM_T * lm_ggml_pool_1d(LM_C * ctx, LM_T * a, enum lm_ggml_op_pool op, int k0, int s0, int p0);
LM_GGML_API LM_T * lm_ggml_pool_2d(LM_C * ctx, LM_T * a, enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1);
LM_GGML_API LM_T * lm_ggml_pool_2d_back(LM_C * ctx, LM_T * a, LM_T * af, enum lm_ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1);
LM_GGML_API LM_T * lm_ggml_upscale    (LM_C * ctx, LM_T * a, int scale_factor);
LM_GGML_API LM_T * lm_ggml_upscale_ext(LM_C * ctx, LM_T * a, int ne0, int ne1, int ne2, int ne3);
LM_GGML_API LM_T * lm_ggml_pad(LM_C * ctx, LM_T * a, int p0, int p1, int p2, int p3);
LM_GGML_API LM_T * lm_ggml_timestep_embedding(LM_C * ctx, LM_T * timesteps, int dim, int max_period);

enum lm_ggml_sort_order {
    LM_GGML_SORT_ORDER_ASC,
    LM_GGML_SORT_ORDER_DESC,
};

LM_GGML_API LM_T * lm_ggml_argsort(LM_C * ctx, LM_T * a, enum lm_ggml_sort_order order);
LM_GGML_API LM_T * lm_ggml_arange (LM_C * ctx, float start, float stop, float step);
LM_GGML_API LM_T * lm_ggml_top_k  (LM_C * ctx, LM_T * a, int k);

#define LM_GGML_KQ_MASK_PAD 32

// q: [n_embd, n_batch, n_head, 1], k/v: [n_embd, n_kv, n_head_kv, 1], mask: [n_kv, n_batch_pad, 1, 1]
// res: [n_embd, n_head, n_batch, 1] (permuted)
LM_GGML_API LM_T * lm_ggml_flash_attn_ext(LM_C * ctx, LM_T * q, LM_T * k, LM_T * v, LM_T * mask,
        float scale, float max_bias, float logit_softcap);
LM_GGML_API void lm_ggml_flash_attn_ext_set_prec(LM_T * a, enum lm_ggml_prec prec);
LM_GGML_API enum lm_ggml_prec lm_ggml_flash_attn_ext_get_prec(const LM_T * a);
LM_GGML_API LM_T * lm_ggml_flash_attn_back(LM_C * ctx, LM_T * q, LM_T * k, LM_T * v, LM_T * d, bool masked);
LM_GGML_API LM_T * lm_ggml_ssm_conv(LM_C * ctx, LM_T * sx, LM_T * c);
LM_GGML_API LM_T * lm_ggml_ssm_scan(LM_C * ctx, LM_T * s, LM_T * x, LM_T * dt, LM_T * A, LM_T * B, LM_T * C);
LM_GGML_API LM_T * lm_ggml_win_part  (LM_C * ctx, LM_T * a, int w);
LM_GGML_API LM_T * lm_ggml_win_unpart(LM_C * ctx, LM_T * a, int w0, int h0, int w);
LM_GGML_API LM_T * lm_ggml_unary        (LM_C * ctx, LM_T * a, enum lm_ggml_unary_op op);
LM_GGML_API LM_T * lm_ggml_unary_inplace(LM_C * ctx, LM_T * a, enum lm_ggml_unary_op op);
LM_GGML_API LM_T * lm_ggml_get_rel_pos(LM_C * ctx, LM_T * a, int qh, int kh);
LM_GGML_API LM_T * lm_ggml_add_rel_pos        (LM_C * ctx, LM_T * a, LM_T * pw, LM_T * ph);
LM_GGML_API LM_T * lm_ggml_add_rel_pos_inplace(LM_C * ctx, LM_T * a, LM_T * pw, LM_T * ph);
LM_GGML_API LM_T * lm_ggml_rwkv_wkv6(LM_C * ctx, LM_T * k, LM_T * v, LM_T * r, LM_T * tf, LM_T * td, LM_T * state);

// custom operators
typedef void (*lm_ggml_unary_op_f32_t) (const int, float *, const float *);
typedef void (*lm_ggml_binary_op_f32_t)(const int, float *, const float *, const float *);
typedef void (*lm_ggml_custom1_op_f32_t)(LM_T *, const LM_T *);
typedef void (*lm_ggml_custom2_op_f32_t)(LM_T *, const LM_T *, const LM_T *);
typedef void (*lm_ggml_custom3_op_f32_t)(LM_T *, const LM_T *, const LM_T *, const LM_T *);

LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_unary_f32(LM_C * ctx, LM_T * a, lm_ggml_unary_op_f32_t fun), "use lm_ggml_map_custom1 instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_unary_inplace_f32(LM_C * ctx, LM_T * a, lm_ggml_unary_op_f32_t fun), "use lm_ggml_map_custom1_inplace instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_binary_f32(LM_C * ctx, LM_T * a, LM_T * b, lm_ggml_binary_op_f32_t fun), "use lm_ggml_map_custom2 instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_binary_inplace_f32(LM_C * ctx, LM_T * a, LM_T * b, lm_ggml_binary_op_f32_t fun), "use lm_ggml_map_custom2_inplace instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_custom1_f32(LM_C * ctx, LM_T * a, lm_ggml_custom1_op_f32_t fun), "use lm_ggml_map_custom1 instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_custom1_inplace_f32(LM_C * ctx, LM_T * a, lm_ggml_custom1_op_f32_t fun), "use lm_ggml_map_custom1_inplace instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_custom2_f32(LM_C * ctx, LM_T * a, LM_T * b, lm_ggml_custom2_op_f32_t fun), "use lm_ggml_map_custom2 instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_custom2_inplace_f32(LM_C * ctx, LM_T * a, LM_T * b, lm_ggml_custom2_op_f32_t fun), "use lm_ggml_map_custom2_inplace instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_custom3_f32(LM_C * ctx, LM_T * a, LM_T * b, LM_T * c, lm_ggml_custom3_op_f32_t fun), "use lm_ggml_map_custom3 instead");
LM_GGML_DEPRECATED(LM_GGML_API LM_T * lm_ggml_map_custom3_inplace_f32(LM_C * ctx, LM_T * a, LM_T * b, LM_T * c, lm_ggml_custom3_op_f32_t fun), "use lm_ggml_map_custom3_inplace instead");

typedef void (*lm_ggml_custom1_op_t)(LM_T * dst, const LM_T * a, int ith, int nth, void * userdata);
typedef void (*lm_ggml_custom2_op_t)(LM_T * dst, const LM_T * a, const LM_T * b, int ith, int nth, void * userdata);
typedef void (*lm_ggml_custom3_op_t)(LM_T * dst, const LM_T * a, const LM_T * b, const LM_T * c, int ith, int nth, void * userdata);

#define LM_GGML_N_TASKS_MAX (-1)

LM_GGML_API LM_T * lm_ggml_map_custom1        (LM_C * ctx, LM_T * a, lm_ggml_custom1_op_t fun, int n_tasks, void * userdata);
LM_GGML_API LM_T * lm_ggml_map_custom1_inplace(LM_C * ctx, LM_T * a, lm_ggml_custom1_op_t fun, int n_tasks, void * userdata);
LM_GGML_API LM_T * lm_ggml_map_custom2        (LM_C * ctx, LM_T * a, LM_T * b, lm_ggml_custom2_op_t fun, int n_tasks, void * userdata);
LM_GGML_API LM_T * lm_ggml_map_custom2_inplace(LM_C * ctx, LM_T * a, LM_T * b, lm_ggml_custom2_op_t fun, int n_tasks, void * userdata);
LM_GGML_API LM_T * lm_ggml_map_custom3        (LM_C * ctx, LM_T * a, LM_T * b, LM_T * c, lm_ggml_custom3_op_t fun, int n_tasks, void * userdata);
LM_GGML_API LM_T * lm_ggml_map_custom3_inplace(LM_C * ctx, LM_T * a, LM_T * b, LM_T * c, lm_ggml_custom3_op_t fun, int n_tasks, void * userdata);

// loss functions and optimizer
LM_GGML_API LM_T * lm_ggml_cross_entropy_loss     (LM_C * ctx, LM_T * a, LM_T * b);           // a: logits, b: labels
LM_GGML_API LM_T * lm_ggml_cross_entropy_loss_back(LM_C * ctx, LM_T * a, LM_T * b, LM_T * c); // c: grad of the loss
// AdamW step; adamw_params: f32 [7] = alpha, beta1, beta2, eps, wd, beta1h, beta2h
LM_GGML_API LM_T * lm_ggml_opt_step_adamw(LM_C * ctx, LM_T * a, LM_T * grad, LM_T * m, LM_T * v, LM_T * adamw_params);

//
// graphs and automatic differentiation
//
LM_GGML_API void lm_ggml_build_forward_expand(struct lm_ggml_cgraph * cgraph, LM_T * tensor);
LM_GGML_API void lm_ggml_build_backward_expand(LM_C * ctx_static, LM_C * ctx_compute, struct lm_ggml_cgraph * cgraph, bool accumulate);

LM_GGML_API struct lm_ggml_cgraph * lm_ggml_new_graph       (LM_C * ctx); // size = LM_GGML_DEFAULT_GRAPH_SIZE, grads = false
LM_GGML_API struct lm_ggml_cgraph * lm_ggml_new_graph_custom(LM_C * ctx, size_t size, bool grads);
LM_GGML_API struct lm_ggml_cgraph * lm_ggml_graph_dup       (LM_C * ctx, struct lm_ggml_cgraph * cgraph);
LM_GGML_API void                    lm_ggml_graph_cpy       (struct lm_ggml_cgraph * src, struct lm_ggml_cgraph * dst);
// graph_reset: loss gradient 1, accumulators and AdamW moments 0. An
// accumulator without memory (the graph was never allocated) is skipped and
// reported (log, lm_backend_last_error), not an abort.
LM_GGML_API void                    lm_ggml_graph_reset     (struct lm_ggml_cgraph * cgraph);
LM_GGML_API void                    lm_ggml_graph_clear     (struct lm_ggml_cgraph * cgraph);

LM_GGML_API int     lm_ggml_graph_size   (struct lm_ggml_cgraph * cgraph);
LM_GGML_API LM_T *  lm_ggml_graph_node   (struct lm_ggml_cgraph * cgraph, int i); // i < 0: nodes[n_nodes + i]
LM_GGML_API LM_T ** lm_ggml_graph_nodes  (struct lm_ggml_cgraph * cgraph);
LM_GGML_API int     lm_ggml_graph_n_nodes(struct lm_ggml_cgraph * cgraph);
LM_GGML_API void    lm_ggml_graph_add_node(struct lm_ggml_cgraph * cgraph, LM_T * tensor);

LM_GGML_API size_t lm_ggml_graph_overhead(void);
LM_GGML_API size_t lm_ggml_graph_overhead_custom(size_t size, bool grads);

LM_GGML_API LM_T * lm_ggml_graph_get_tensor  (const struct lm_ggml_cgraph * cgraph, const char * name);
LM_GGML_API LM_T * lm_ggml_graph_get_grad    (const struct lm_ggml_cgraph * cgraph, const LM_T * node);
LM_GGML_API LM_T * lm_ggml_graph_get_grad_acc(const struct lm_ggml_cgraph * cgraph, const LM_T * node);

LM_GGML_API void                    lm_ggml_graph_export(const struct lm_ggml_cgraph * cgraph, const char * fname);
LM_GGML_API struct lm_ggml_cgraph * lm_ggml_graph_import(const char * fname, LM_C ** ctx_data, LM_C ** ctx_eval);

LM_GGML_API void lm_ggml_graph_print(const struct lm_ggml_cgraph * cgraph);
LM_GGML_API void lm_ggml_graph_dump_dot(const struct lm_ggml_cgraph * gb, const struct lm_ggml_cgraph * gf, const char * filename);

typedef void (*lm_ggml_log_callback)(enum lm_ggml_log_level level, const char * text, void * user_data);
// NULL callback: everything goes to stderr.
LM_GGML_API void lm_ggml_log_set(lm_ggml_log_callback log_callback, void * user_data);

LM_GGML_API LM_T * lm_ggml_set_zero(LM_T * tensor);

//
// quantization (thread-safe; init is idempotent and called by quantize_chunk)
//
LM_GGML_API void   lm_ggml_quantize_init(enum lm_ggml_type type);
LM_GGML_API void   lm_ggml_quantize_free(void);
LM_GGML_API bool   lm_ggml_quantize_requires_imatrix(enum lm_ggml_type type);
LM_GGML_API size_t lm_ggml_quantize_chunk(enum lm_ggml_type type, const float * src, void * dst, int64_t start,
        int64_t nrows, int64_t n_per_row, const float * imatrix);

//
// gguf
//
enum lm_gguf_type {
    LM_GGUF_TYPE_UINT8   = 0,
    LM_GGUF_TYPE_INT8    = 1,
    LM_GGUF_TYPE_UINT16  = 2,
    LM_GGUF_TYPE_INT16   = 3,
    LM_GGUF_TYPE_UINT32  = 4,
    LM_GGUF_TYPE_INT32   = 5,
    LM_GGUF_TYPE_FLOAT32 = 6,
    LM_GGUF_TYPE_BOOL    = 7,
    LM_GGUF_TYPE_STRING  = 8,
    LM_GGUF_TYPE_ARRAY   = 9,
    LM_GGUF_TYPE_UINT64  = 10,
    LM_GGUF_TYPE_INT64   = 11,
    LM_GGUF_TYPE_FLOAT64 = 12,
    LM_GGUF_TYPE_COUNT,
};

struct lm_gguf_context;

struct lm_gguf_init_params {
    bool no_alloc;
    // if not NULL, create a lm_ggml_context and allocate the tensor data in it
    struct lm_ggml_context ** ctx;
};

LM_GGML_API struct lm_gguf_context * lm_gguf_init_empty(void);
LM_GGML_API struct lm_gguf_context * lm_gguf_init_from_file(const char * fname, struct lm_gguf_init_params params);
LM_GGML_API void lm_gguf_free(struct lm_gguf_context * ctx);
LM_GGML_API const char * lm_gguf_type_name(enum lm_gguf_type type);

LM_GGML_API int    lm_gguf_get_version    (const struct lm_gguf_context * ctx);
LM_GGML_API size_t lm_gguf_get_alignment  (const struct lm_gguf_context * ctx);
LM_GGML_API size_t lm_gguf_get_data_offset(const struct lm_gguf_context * ctx);
LM_GGML_API void * lm_gguf_get_data       (const struct lm_gguf_context * ctx);

LM_GGML_API int          lm_gguf_get_n_kv(const struct lm_gguf_context * ctx);
LM_GGML_API int          lm_gguf_find_key(const struct lm_gguf_context * ctx, const char * key);
LM_GGML_API const char * lm_gguf_get_key (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API enum lm_gguf_type lm_gguf_get_kv_type (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API enum lm_gguf_type lm_gguf_get_arr_type(const struct lm_gguf_context * ctx, int key_id);

LM_GGML_API uint8_t      lm_gguf_get_val_u8  (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API int8_t       lm_gguf_get_val_i8  (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API uint16_t     lm_gguf_get_val_u16 (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API int16_t      lm_gguf_get_val_i16 (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API uint32_t     lm_gguf_get_val_u32 (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API int32_t      lm_gguf_get_val_i32 (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API float        lm_gguf_get_val_f32 (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API uint64_t     lm_gguf_get_val_u64 (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API int64_t      lm_gguf_get_val_i64 (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API double       lm_gguf_get_val_f64 (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API bool         lm_gguf_get_val_bool(const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API const char * lm_gguf_get_val_str (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API const void * lm_gguf_get_val_data(const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API int          lm_gguf_get_arr_n   (const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API const void * lm_gguf_get_arr_data(const struct lm_gguf_context * ctx, int key_id);
LM_GGML_API const char * lm_gguf_get_arr_str (const struct lm_gguf_context * ctx, int key_id, int i);

LM_GGML_API int               lm_gguf_get_n_tensors    (const struct lm_gguf_context * ctx);
LM_GGML_API int               lm_gguf_find_tensor      (const struct lm_gguf_context * ctx, const char * name);
LM_GGML_API size_t            lm_gguf_get_tensor_offset(const struct lm_gguf_context * ctx, int i);
LM_GGML_API char *            lm_gguf_get_tensor_name  (const struct lm_gguf_context * ctx, int i);
LM_GGML_API enum lm_ggml_type lm_gguf_get_tensor_type  (const struct lm_gguf_context * ctx, int i);

LM_GGML_API void lm_gguf_remove_key(struct lm_gguf_context * ctx, const char * key);

LM_GGML_API void lm_gguf_set_val_u8  (struct lm_gguf_context * ctx, const char * key, uint8_t  val);
LM_GGML_API void lm_gguf_set_val_i8  (struct lm_gguf_context * ctx, const char * key, int8_t   val);
LM_GGML_API void lm_gguf_set_val_u16 (struct lm_gguf_context * ctx, const char * key, uint16_t val);
LM_GGML_API void lm_gguf_set_val_i16 (struct lm_gguf_context * ctx, const char * key, int16_t  val);
LM_GGML_API void lm_gguf_set_val_u32 (struct lm_gguf_context * ctx, const char * key, uint32_t val);
LM_GGML_API void lm_gguf_set_val_i32 (struct lm_gguf_context * ctx, const char * key, int32_t  val);
LM_GGML_API void lm_gguf_set_val_f32 (struct lm_gguf_context * ctx, const char * key, float    val);
LM_GGML_API void lm_gguf_set_val_u64 (struct lm_gguf_context * ctx, const char * key, uint64_t val);
LM_GGML_API void lm_gguf_set_val_i64 (struct lm_gguf_context * ctx, const char * key, int64_t  val);
LM_GGML_API void lm_gguf_set_val_f64 (struct lm_gguf_context * ctx, const char * key, double   val);
LM_GGML_API void lm_gguf_set_val_bool(struct lm_gguf_context * ctx, const char * key, bool     val);
LM_GGML_API void lm_gguf_set_val_str (struct lm_gguf_context * ctx, const char * key, const char * val);
LM_GGML_API void lm_gguf_set_arr_data(struct lm_gguf_context * ctx, const char * key, enum lm_gguf_type type, const void * data, int n);
LM_GGML_API void lm_gguf_set_arr_str (struct lm_gguf_context * ctx, const char * key, const char ** data, int n);
LM_GGML_API void lm_gguf_set_kv(struct lm_gguf_context * ctx, struct lm_gguf_context * src);

LM_GGML_API void lm_gguf_add_tensor     (struct lm_gguf_context * ctx, const LM_T * tensor);
LM_GGML_API void lm_gguf_set_tensor_type(struct lm_gguf_context * ctx, const char * name, enum lm_ggml_type type);
LM_GGML_API void lm_gguf_set_tensor_data(struct lm_gguf_context * ctx, const char * name, const void * data, size_t size);

LM_GGML_API void   lm_gguf_write_to_file(const struct lm_gguf_context * ctx, const char * fname, bool only_meta);
LM_GGML_API size_t lm_gguf_get_meta_size(const struct lm_gguf_context * ctx);
LM_GGML_API void   lm_gguf_get_meta_data(const struct lm_gguf_context * ctx, void * data);
#undef LM_T
#undef LM_C

#ifdef  __cplusplus
#define LM_GGML_RESTRICT
#else
#define LM_GGML_RESTRICT restrict
#endif
typedef void (*lm_ggml_to_float_t)  (const void  * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k);
typedef void (*lm_ggml_from_float_t)(const float * LM_GGML_RESTRICT x, void  * LM_GGML_RESTRICT y, int64_t k);

struct lm_ggml_type_traits {
    const char         * type_name;
    int64_t              blck_size;
    int64_t              blck_size_interleave;
    size_t               type_size;
    bool                 is_quantized;
    lm_ggml_to_float_t   to_float;
    lm_ggml_from_float_t from_float_ref;
};

LM_GGML_API const struct lm_ggml_type_traits * lm_ggml_get_type_traits(enum lm_ggml_type type);

//
// threadpool
//
enum lm_ggml_sched_priority {
    LM_GGML_SCHED_PRIO_NORMAL,
    LM_GGML_SCHED_PRIO_MEDIUM,
    LM_GGML_SCHED_PRIO_HIGH,
    LM_GGML_SCHED_PRIO_REALTIME
};

struct lm_ggml_threadpool_params {
    bool                        cpumask[LM_GGML_MAX_N_THREADS]; // all zero: default affinity
    int                         n_threads;
    enum lm_ggml_sched_priority prio;
    uint32_t                    poll;       // 0: no polling .. 100: aggressive polling
    bool                        strict_cpu;
    bool                        paused;     // start paused
};

struct lm_ggml_threadpool;
typedef struct lm_ggml_threadpool * lm_ggml_threadpool_t;

LM_GGML_API struct lm_ggml_threadpool_params lm_ggml_threadpool_params_default(int n_threads);
LM_GGML_API void lm_ggml_threadpool_params_init (struct lm_ggml_threadpool_params * p, int n_threads);
LM_GGML_API bool lm_ggml_threadpool_params_match(const struct lm_ggml_threadpool_params * p0, const struct lm_ggml_threadpool_params * p1);

#ifdef  __cplusplus
}
#endif
