// ggml-cpu-traits.c - the CPU type traits (lm_ggml_get_type_traits_cpu): per
// tensor type, the row dot product the CPU has for it, the type its other
// operand must be in (vec_dot_type), and the converter from f32 rows. The
// kernels themselves are in mm-*.c; the row converters of every type in
// quant/ggml-traits.c.
#include "mm-kernels.h"

#include <pthread.h>

static struct lm_ggml_type_traits_cpu g_traits_cpu[LM_GGML_TYPE_COUNT];
static pthread_once_t g_traits_once = PTHREAD_ONCE_INIT;

static void traits_cpu_fill(void) {
    for (int t = 0; t < LM_GGML_TYPE_COUNT; t++) {
        struct lm_ggml_type_traits_cpu * tr = &g_traits_cpu[t];
        memset(tr, 0, sizeof(*tr));
        tr->nrows = 1;
        tr->vec_dot_type = (enum lm_ggml_type) t;
        switch ((enum lm_ggml_type) t) {
            case LM_GGML_TYPE_F32:  tr->vec_dot = mm_vec_dot_f32;  break;
            case LM_GGML_TYPE_F16:  tr->vec_dot = mm_vec_dot_f16;  break;
            case LM_GGML_TYPE_BF16: tr->vec_dot = mm_vec_dot_bf16; break;
            case LM_GGML_TYPE_Q4_0_4_4: case LM_GGML_TYPE_Q4_0_4_8: case LM_GGML_TYPE_Q4_0_8_8:
            case LM_GGML_TYPE_IQ4_NL_4_4:
                tr->vec_dot_type = LM_GGML_TYPE_Q8_0; // repacked layouts: no row dot here
                break;
            default: {
                enum lm_ggml_type vdt = (enum lm_ggml_type) t;
                tr->vec_dot = mm_traits_vec_dot((enum lm_ggml_type) t, &vdt);
                tr->vec_dot_type = vdt;
                break;
            }
        }
        tr->from_float = mm_act_quantizer((enum lm_ggml_type) t);
        if (tr->from_float == NULL) tr->from_float = lm_type_from_f32_row((enum lm_ggml_type) t);
    }
}

const struct lm_ggml_type_traits_cpu * lm_ggml_get_type_traits_cpu(enum lm_ggml_type type) {
    pthread_once(&g_traits_once, traits_cpu_fill);
    LM_GGML_ASSERT((int) type >= 0 && type < LM_GGML_TYPE_COUNT);
    return &g_traits_cpu[type];
}
