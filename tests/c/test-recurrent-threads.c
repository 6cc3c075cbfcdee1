// test-recurrent-threads.c - the recurrent models' ops (rwkv_wkv6, ssm_scan,
// ssm_conv, group_norm) with 1 thread up to twice as many threads as heads
// (groups, rows) and more threads than the op has units of work: every
// thread count must finish (llama.cpp 1.3.3's WKV6 kernel hangs with more
// threads than heads: a thread with no head leaves before a barrier the
// others wait at), give the same bits as one thread, and match a
// double-precision reference; on each SIMD level the CPU has, with the bits
// the kernels promise across levels (see run_threads). A watchdog
// fails the program when one computation takes longer than a minute
// instead of letting a hang block the suite.
//
// Build: cc -O2 -pthread $(find csrc -type d -printf '-I%p ') -Itests/c tests/c/test-recurrent-threads.c $(find csrc -name '*.c') -lm
// usage: test-recurrent-threads [op]   (a substring of the op names above)
#include "nnconv-util.h"

#include <time.h>

// ---------------------------------------------------------------- watchdog

#ifndef DEADLINE_S
#define DEADLINE_S 60
#endif

static pthread_mutex_t g_wd_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wd_cv = PTHREAD_COND_INITIALIZER;
static unsigned g_wd_beats;   // computations finished
static bool g_wd_done;
static const char * g_wd_what = "start";

static void * watchdog(void * arg) {
    (void) arg;
    pthread_mutex_lock(&g_wd_mu);
    while (!g_wd_done) {
        const unsigned seen = g_wd_beats;
        struct timespec until = { time(NULL) + DEADLINE_S, 0 };
        while (!g_wd_done && g_wd_beats == seen) {
            if (pthread_cond_timedwait(&g_wd_cv, &g_wd_mu, &until) != 0 && !g_wd_done && g_wd_beats == seen &&
                time(NULL) >= until.tv_sec) {
                printf("FAIL %s: no result after %d s (a hang?)\n", g_wd_what, DEADLINE_S);
                fflush(stdout);
                _Exit(1);
            }
        }
    }
    pthread_mutex_unlock(&g_wd_mu);
    return NULL;
}

static void beat(const char * next) {
    pthread_mutex_lock(&g_wd_mu);
    g_wd_beats++;
    g_wd_what = next;
    pthread_cond_signal(&g_wd_cv);
    pthread_mutex_unlock(&g_wd_mu);
}

// ---------------------------------------------------------------- the driver

static int g_level;

// Which levels give the same bits: every level (ops that round as the
// scalar code does), or the levels of one ladder above scalar (AVX-512 gives
// AVX2's bits, NEON with dotprod NEON's).
enum same_bits { SAME_ALL, SAME_LADDER };

static int level_class(enum same_bits sb, int level) {
    if (sb == SAME_ALL) return 0;
    return level == 0 ? 0 : level <= 2 ? 1 : 3;
}

// the first result of each case in each class of levels (the cases' inputs
// are the same at every level: each case starts the generator afresh)
static struct { char what[96]; int cls; void * bits; size_t nb; } g_seen[64];
static int g_n_seen;

// WKV6's scalar level matches its vector levels' bits where fmaf is the
// fused multiply-add of the C library it calls; built with mingw-w64 (run
// under wine) the scalar level differs, for a cause not pinned down yet, so
// there only the vector levels are held to one another's bits.
#ifdef _WIN32
#define WKV6_SAME SAME_LADDER
#else
#define WKV6_SAME SAME_ALL
#endif

static void check_levels(const char * what, enum same_bits sb, const void * bits, size_t nb) {
    const int cls = level_class(sb, g_level);
    for (int i = 0; i < g_n_seen; i++) {
        if (g_seen[i].cls == cls && strcmp(g_seen[i].what, what) == 0) {
            checkf(g_seen[i].nb == nb && memcmp(g_seen[i].bits, bits, nb) == 0, "%s: level %d differs from level %d's bits",
                   what, g_level, cls);
            return;
        }
    }
    if (g_n_seen == (int)(sizeof(g_seen) / sizeof(g_seen[0]))) return;
    snprintf(g_seen[g_n_seen].what, sizeof(g_seen[0].what), "%s", what);
    g_seen[g_n_seen].cls = cls;
    g_seen[g_n_seen].bits = malloc(nb);
    memcpy(g_seen[g_n_seen].bits, bits, nb);
    g_seen[g_n_seen].nb = nb;
    g_n_seen++;
}

// Computes y with each thread count of ths (ths[0] = 1): all finish, all give
// the bits of the first, the first is within tol (nmse) of ref and has the
// bits of the other levels that sb names.
static void run_threads(const char * what, enum same_bits sb, struct lm_ggml_context * ctx, struct lm_ggml_tensor * y, const double * ref,
                        double tol, const int * ths, int n_ths) {
    const size_t nb = lm_ggml_nbytes(y);
    void * first = malloc(nb);
    char label[160];
    for (int i = 0; i < n_ths; i++) {
        snprintf(label, sizeof(label), "%s (level %d, %d threads)", what, g_level, ths[i]);
        beat(label);
        if (nb > 0) memset(y->data, 0x7f, nb); // stale results would not pass
        u_compute(ctx, y, ths[i]);
        if (i == 0) {
            if (nb > 0) memcpy(first, y->data, nb);
            u_check(label, y, ref, tol);
            check_levels(what, sb, first, nb);
        } else {
            checkf(nb == 0 || memcmp(first, y->data, nb) == 0, "%s: not the bits of 1 thread", label);
        }
    }
    beat("between ops");
    free(first);
}

// 1 .. 2n threads, then more threads than units
static int thread_list(int * ths, int n, int units) {
    int k = 0;
    for (int t = 1; t <= 2*n; t++) ths[k++] = t;
    if (units + 1 > 2*n) ths[k++] = units + 1;
    return k;
}

// ---------------------------------------------------------------- rwkv_wkv6

static void wkv_case(int S, int H, int T, int NS) {
    u_seed = 12345;
    struct lm_ggml_context * ctx = u_ctx();
    struct lm_ggml_tensor * k  = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, S, 1, H, T);
    struct lm_ggml_tensor * v  = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 1, S, H, T);
    struct lm_ggml_tensor * r  = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 1, S, H, T);
    struct lm_ggml_tensor * tf = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, S, H);
    struct lm_ggml_tensor * td = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, 1, S, H, T);
    struct lm_ggml_tensor * st = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, S * S * H, NS);
    u_fill(k, -1, 1); u_fill(v, -1, 1); u_fill(r, -1, 1); u_fill(tf, -1, 1); u_fill(td, 0, 1); u_fill(st, -1, 1);
    struct lm_ggml_tensor * y = lm_ggml_rwkv_wkv6(ctx, k, v, r, tf, td, st);

    const int64_t Cn = (int64_t) S * H;
    double * ref = calloc((size_t)(Cn * (T + S * NS)), sizeof(double));
    double * state = ref + Cn * T;
    const float * K = k->data, * V = v->data, * R = r->data, * TF = tf->data, * TD = td->data, * S0 = st->data;
    for (int64_t i = 0; i < S * Cn * NS; i++) state[i] = S0[i];
    for (int t = 0; t < T; t++) {
        const int64_t seq = t / (T / NS), b0 = t * Cn;
        for (int h = 0; h < H; h++) {
            double * sh = state + seq * S * Cn + (int64_t) h * S * S;
            const int64_t b = b0 + (int64_t) h * S;
            for (int j = 0; j < S; j++) {
                double acc = 0;
                for (int i = 0; i < S; i++) acc += ((double) K[b + i] * V[b + j] * TF[h * S + i] + sh[i * S + j]) * R[b + i];
                ref[b + j] = acc;
            }
            for (int i = 0; i < S; i++) for (int j = 0; j < S; j++) {
                sh[i * S + j] = sh[i * S + j] * TD[b + i] + (double) K[b + i] * V[b + j];
            }
        }
    }
    int ths[64];
    const int n = thread_list(ths, H, NS * H * ((S + 15) / 16));
    char what[96];
    snprintf(what, sizeof(what), "rwkv_wkv6 S=%d H=%d T=%d seqs=%d", S, H, T, NS);
    run_threads(what, WKV6_SAME, ctx, y, ref, 1e-11, ths, n);
    free(ref);
    lm_ggml_free(ctx);
}

static void t_wkv(void) {
    wkv_case(64, 2, 4, 2);  // 2 heads: llama.cpp 1.3.3 hangs at 4 threads
    wkv_case(64, 1, 3, 1);
    wkv_case(20, 3, 3, 3);  // a block of 16 columns and a rest of 4
    wkv_case(8, 2, 2, 1);   // fewer columns than a block
}

// ---------------------------------------------------------------- ssm_scan

static void scan_case(int d_state, int d_inner, int n_t, int n_s) {
    u_seed = 12345;
    struct lm_ggml_context * ctx = u_ctx();
    struct lm_ggml_tensor * st = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_state, d_inner, n_s);
    struct lm_ggml_tensor * x  = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_inner, n_t, n_s);
    struct lm_ggml_tensor * dt = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_inner, n_t, n_s);
    struct lm_ggml_tensor * A  = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, d_state, d_inner);
    struct lm_ggml_tensor * B  = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_state, n_t, n_s);
    struct lm_ggml_tensor * C  = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_state, n_t, n_s);
    u_fill(st, -1, 1); u_fill(x, -1, 1); u_fill(dt, -2, 25); u_fill(A, -3, 0); u_fill(B, -1, 1); u_fill(C, -1, 1);
    struct lm_ggml_tensor * y = lm_ggml_ssm_scan(ctx, st, x, dt, A, B, C);

    const int64_t ny = lm_ggml_nelements(x);
    double * ref = malloc(sizeof(double) * (size_t)(ny + lm_ggml_nelements(st)));
    for (int s = 0; s < n_s; s++) {
        double * state = ref + ny + (int64_t) s * d_inner * d_state;
        for (int i = 0; i < d_inner * d_state; i++) state[i] = ((float *) st->data)[(int64_t) s * d_inner * d_state + i];
        for (int t = 0; t < n_t; t++) for (int i = 0; i < d_inner; i++) {
            const double d = u_get(dt, i, t, s, 0);
            const double sp = d <= 20 ? log1p(exp(d)) : d;
            const double xd = u_get(x, i, t, s, 0) * sp;
            double acc = 0;
            for (int j = 0; j < d_state; j++) {
                double * v = &state[i * d_state + j];
                *v = *v * exp(sp * u_get(A, j, i, 0, 0)) + u_get(B, j, t, s, 0) * xd;
                acc += *v * u_get(C, j, t, s, 0);
            }
            ref[((int64_t) s * n_t + t) * d_inner + i] = acc;
        }
    }
    int ths[64];
    const int n = thread_list(ths, d_inner, d_inner * n_s);
    char what[96];
    snprintf(what, sizeof(what), "ssm_scan d_state=%d d_inner=%d n_t=%d n_s=%d", d_state, d_inner, n_t, n_s);
    run_threads(what, SAME_LADDER, ctx, y, ref, 1e-10, ths, n);
    free(ref);
    lm_ggml_free(ctx);
}

static void t_scan(void) {
    scan_case(16, 5, 4, 2);  // Mamba's d_state: one AVX-512 step, two AVX2 steps
    scan_case(24, 3, 3, 1);  // AVX-512 then AVX2 steps
    scan_case(13, 4, 2, 2);  // a scalar rest
    scan_case(3, 2, 3, 1);   // shorter than a step
}

// ---------------------------------------------------------------- ssm_conv

static void conv_case(int d_conv, int d_inner, int n_t, int n_s) {
    u_seed = 12345;
    struct lm_ggml_context * ctx = u_ctx();
    struct lm_ggml_tensor * sx = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, d_conv - 1 + n_t, d_inner, n_s);
    struct lm_ggml_tensor * cw = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, d_conv, d_inner);
    u_fill(sx, -1, 1); u_fill(cw, -1, 1);
    struct lm_ggml_tensor * y = lm_ggml_ssm_conv(ctx, sx, cw);
    double * ref = malloc(sizeof(double) * (size_t) d_inner * n_t * n_s);
    for (int s = 0; s < n_s; s++) for (int t = 0; t < n_t; t++) for (int i = 0; i < d_inner; i++) {
        double acc = 0;
        for (int k = 0; k < d_conv; k++) acc += u_get(sx, t + k, i, s, 0) * u_get(cw, k, i, 0, 0);
        ref[((int64_t) s * n_t + t) * d_inner + i] = acc;
    }
    int ths[64];
    const int units = n_s * ((d_inner + 15) / 16);
    const int n = thread_list(ths, units, units);
    char what[96];
    snprintf(what, sizeof(what), "ssm_conv d_conv=%d d_inner=%d n_t=%d n_s=%d", d_conv, d_inner, n_t, n_s);
    run_threads(what, SAME_ALL, ctx, y, ref, 1e-12, ths, n);
    free(ref);
    lm_ggml_free(ctx);
}

static void t_conv(void) {
    conv_case(4, 45, 5, 2);  // Mamba's d_conv: blocks of 16, a step of 8, a scalar rest
    conv_case(4, 3, 1, 1);   // fewer rows than a step
    conv_case(3, 29, 4, 2);  // other widths gather
    conv_case(4, 16, 0, 1);  // no tokens
}

// ---------------------------------------------------------------- group_norm

static void gn_case(int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int groups) {
    u_seed = 12345;
    struct lm_ggml_context * ctx = u_ctx();
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, ne0, ne1, ne2, ne3);
    u_fill(a, -2, 3);
    const float eps = 1e-5f;
    struct lm_ggml_tensor * y = lm_ggml_group_norm(ctx, a, groups, eps);
    double * ref = malloc(sizeof(double) * (size_t) lm_ggml_nelements(a));
    const int64_t per = (ne2 + groups - 1) / groups;
    for (int64_t i3 = 0; i3 < ne3; i3++) for (int64_t c0 = 0; c0 < ne2; c0 += per) {
        const int64_t c1 = c0 + per < ne2 ? c0 + per : ne2;
        double s = 0, s2 = 0;
        const double cnt = (double)(ne0 * ne1 * (c1 - c0));
        for (int64_t i2 = c0; i2 < c1; i2++) for (int64_t i1 = 0; i1 < ne1; i1++) for (int64_t i0 = 0; i0 < ne0; i0++) s += u_get(a, i0, i1, i2, i3);
        const double mean = s / cnt;
        for (int64_t i2 = c0; i2 < c1; i2++) for (int64_t i1 = 0; i1 < ne1; i1++) for (int64_t i0 = 0; i0 < ne0; i0++) {
            const double d = u_get(a, i0, i1, i2, i3) - mean;
            s2 += d * d;
        }
        const double sc = 1.0 / sqrt(s2 / cnt + eps);
        for (int64_t i2 = c0; i2 < c1; i2++) for (int64_t i1 = 0; i1 < ne1; i1++) for (int64_t i0 = 0; i0 < ne0; i0++) {
            ref[((i3 * ne2 + i2) * ne1 + i1) * ne0 + i0] = (u_get(a, i0, i1, i2, i3) - mean) * sc;
        }
    }
    int ths[64];
    const int n = thread_list(ths, groups, (int)(ne2 * ne3));
    char what[96];
    snprintf(what, sizeof(what), "group_norm [%d,%d,%d,%d] groups=%d", (int) ne0, (int) ne1, (int) ne2, (int) ne3, groups);
    run_threads(what, SAME_LADDER, ctx, y, ref, 1e-12, ths, n);
    free(ref);
    lm_ggml_free(ctx);
}

static void t_gn(void) {
    gn_case(37, 2, 6, 2, 2);  // fewer groups than threads
    gn_case(19, 3, 7, 1, 3);  // uneven groups (3, 3, 1)
    gn_case(64, 1, 4, 1, 4);  // RWKV's: a group per head of 64
}

int main(int argc, char ** argv) {
    (void) u_main; // nnconv-util.h's driver: these tests choose their own thread counts
    pthread_t wd;
    if (pthread_create(&wd, NULL, watchdog, NULL) != 0) {
        printf("FAIL: no watchdog thread\n");
        return 1;
    }
    const struct { const char * name; void (*fn)(void); } tests[] = {
        { "rwkv_wkv6", t_wkv }, { "ssm_scan", t_scan }, { "ssm_conv", t_conv }, { "group_norm", t_gn },
    };
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        const int before = g_fail;
        for (g_level = 0; g_level <= 4; g_level++) {
            if (!lm_cpu_force_level(g_level)) continue;
            tests[i].fn();
        }
        lm_cpu_force_level(-1);
        printf("%-4s %s\n", g_fail != before ? "FAIL" : "ok", tests[i].name);
    }
    pthread_mutex_lock(&g_wd_mu);
    g_wd_done = true;
    pthread_cond_signal(&g_wd_cv);
    pthread_mutex_unlock(&g_wd_mu);
    pthread_join(wd, NULL);
    for (int i = 0; i < g_n_seen; i++) free(g_seen[i].bits);
    return check_summary();
}
