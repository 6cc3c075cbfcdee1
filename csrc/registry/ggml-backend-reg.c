// ggml-backend-reg.c - the registry: the CPU backend built in and the
// backends registered at run time (RPC servers, custom backends), with their
// devices.
#include "../backend/ggml-backend-impl.h"
#include "ggml-cpu.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// The global list of registries and of their devices. Registries are static
// objects owned by their backends; the list only points at them.
#define MAX_REGS 32
#define MAX_DEVS 256

static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t  g_reg_once = PTHREAD_ONCE_INIT;
static lm_ggml_backend_reg_t g_regs[MAX_REGS];
static size_t g_n_regs;
static lm_ggml_backend_dev_t g_devs[MAX_DEVS];
static size_t g_n_devs;

// Under g_reg_mu.
static void register_locked(lm_ggml_backend_reg_t reg) {
    for (size_t i = 0; i < g_n_regs; i++) {
        if (g_regs[i] == reg) return;
    }
    if (reg->api_version != LM_BACKEND_API_VERSION) {
        LM_GGML_LOG_ERROR("%s: registry %s has API version %d, this core %d: not registered\n",
                          __func__, lm_ggml_backend_reg_name(reg), reg->api_version, LM_BACKEND_API_VERSION);
        return;
    }
    const size_t nd = lm_ggml_backend_reg_dev_count(reg);
    if (g_n_regs == MAX_REGS || g_n_devs + nd > MAX_DEVS) {
        LM_GGML_LOG_ERROR("%s: too many registries or devices: %s not registered\n", __func__, lm_ggml_backend_reg_name(reg));
        return;
    }
    g_regs[g_n_regs++] = reg;
    for (size_t i = 0; i < nd; i++) {
        lm_ggml_backend_dev_t dev = reg->ops->dev_get(reg, i);
        if (dev != NULL) g_devs[g_n_devs++] = dev;
    }
}

static void register_builtin_locked(void) {
    register_locked(lm_ggml_backend_cpu_reg());
}

static void registry_init(void) {
    pthread_mutex_lock(&g_reg_mu);
    register_builtin_locked();
    pthread_mutex_unlock(&g_reg_mu);
}

static void registry_lock(void) {
    pthread_once(&g_reg_once, registry_init);
    pthread_mutex_lock(&g_reg_mu);
}

void lm_backend_register(lm_ggml_backend_reg_t reg) {
    if (reg == NULL) return;
    registry_lock();
    register_locked(reg);
    pthread_mutex_unlock(&g_reg_mu);
}

size_t lm_ggml_backend_reg_count(void) {
    registry_lock();
    const size_t n = g_n_regs;
    pthread_mutex_unlock(&g_reg_mu);
    return n;
}

lm_ggml_backend_reg_t lm_ggml_backend_reg_get(size_t index) {
    registry_lock();
    lm_ggml_backend_reg_t r = index < g_n_regs ? g_regs[index] : NULL;
    const size_t n = g_n_regs;
    pthread_mutex_unlock(&g_reg_mu);
    LM_BACKEND_CHECK_RET(r != NULL, NULL, "registry index %zu out of range (%zu registered)", index, n);
    return r;
}

static bool name_equal(const char * a, const char * b) {
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        if (tolower((unsigned char) *a) != tolower((unsigned char) *b)) return false;
    }
    return *a == *b;
}

lm_ggml_backend_reg_t lm_ggml_backend_reg_by_name(const char * name) {
    if (name == NULL) return NULL;
    registry_lock();
    lm_ggml_backend_reg_t r = NULL;
    for (size_t i = 0; i < g_n_regs && r == NULL; i++) {
        if (name_equal(lm_ggml_backend_reg_name(g_regs[i]), name)) r = g_regs[i];
    }
    pthread_mutex_unlock(&g_reg_mu);
    return r;
}

size_t lm_ggml_backend_dev_count(void) {
    registry_lock();
    const size_t n = g_n_devs;
    pthread_mutex_unlock(&g_reg_mu);
    return n;
}

lm_ggml_backend_dev_t lm_ggml_backend_dev_get(size_t index) {
    registry_lock();
    lm_ggml_backend_dev_t d = index < g_n_devs ? g_devs[index] : NULL;
    const size_t n = g_n_devs;
    pthread_mutex_unlock(&g_reg_mu);
    LM_BACKEND_CHECK_RET(d != NULL, NULL, "device index %zu out of range (%zu registered)", index, n);
    return d;
}

lm_ggml_backend_dev_t lm_ggml_backend_dev_by_name(const char * name) {
    if (name == NULL) return NULL;
    registry_lock();
    lm_ggml_backend_dev_t d = NULL;
    for (size_t i = 0; i < g_n_devs && d == NULL; i++) {
        if (name_equal(lm_ggml_backend_dev_name(g_devs[i]), name)) d = g_devs[i];
    }
    pthread_mutex_unlock(&g_reg_mu);
    return d;
}

lm_ggml_backend_dev_t lm_ggml_backend_dev_by_type(enum lm_ggml_backend_dev_type type) {
    registry_lock();
    lm_ggml_backend_dev_t d = NULL;
    for (size_t i = 0; i < g_n_devs && d == NULL; i++) {
        if (lm_ggml_backend_dev_type(g_devs[i]) == type) d = g_devs[i];
    }
    pthread_mutex_unlock(&g_reg_mu);
    return d;
}

lm_ggml_backend_t lm_ggml_backend_init_by_name(const char * name, const char * params) {
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name(name);
    return dev != NULL ? lm_ggml_backend_dev_init(dev, params) : NULL;
}

lm_ggml_backend_t lm_ggml_backend_init_by_type(enum lm_ggml_backend_dev_type type, const char * params) {
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_type(type);
    return dev != NULL ? lm_ggml_backend_dev_init(dev, params) : NULL;
}

lm_ggml_backend_t lm_ggml_backend_init_best(void) {
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_GPU);
    if (dev == NULL) dev = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    return dev != NULL ? lm_ggml_backend_dev_init(dev, NULL) : NULL;
}

lm_ggml_backend_reg_t lm_ggml_backend_load(const char * path) {
    LM_GGML_LOG_ERROR("%s: cannot load %s: this core links its backends in (no backend libraries)\n",
                      __func__, path != NULL ? path : "(NULL)");
    return NULL;
}

void lm_ggml_backend_unload(lm_ggml_backend_reg_t reg) {
    if (reg == NULL) return;
    registry_lock();
    size_t k = 0;
    for (size_t i = 0; i < g_n_regs; i++) {
        if (g_regs[i] != reg) g_regs[k++] = g_regs[i];
    }
    g_n_regs = k;
    k = 0;
    for (size_t i = 0; i < g_n_devs; i++) {
        if (g_devs[i]->reg != reg) g_devs[k++] = g_devs[i];
    }
    g_n_devs = k;
    pthread_mutex_unlock(&g_reg_mu);
}

void lm_ggml_backend_load_all(void) {
    registry_lock();
    register_builtin_locked();
    pthread_mutex_unlock(&g_reg_mu);
}

