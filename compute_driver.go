package ggml

/*
#include "glue.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// Computes g on b. On failure e holds the reason.
int gg_backend_compute(struct lm_ggml_backend * b, gg_g * g, gg_err * e) {
    lm_backend_clear_error();
    struct lm_ggml_err_frame fr;
    if (LM_GGML_TRY(&fr)) {
        e->failed = 1;
        memcpy(e->msg, fr.msg, sizeof(e->msg));
        return LM_GGML_STATUS_FAILED;
    }
    const int st = lm_ggml_backend_graph_compute(b, g);
    lm_ggml_err_pop(&fr);
    if (st == LM_GGML_STATUS_FAILED || st == LM_GGML_STATUS_ALLOC_FAILED) {
        e->failed = 1;
        snprintf(e->msg, sizeof(e->msg), "%s", lm_backend_last_error()[0] != '\0' ? lm_backend_last_error() : lm_ggml_status_to_string(st));
    }
    return st;
}

// A thread of our own that computes for a goroutine (see computeDriver):
// while it computes, the goroutine waits parked on the read end of a pipe
// instead of sitting in a cgo call. Results are handed over under mu.
typedef struct {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int wfd;      // write end: one byte per finished job
    int posted;   // guarded by mu: a job waits
    int busy;     // guarded by mu: posted or computing
    int stop;     // guarded by mu
    struct lm_ggml_backend * b;
    gg_g * g;
    gg_err e;
    int st;
} gg_driver;

static void * gg_driver_main(void * arg) {
    gg_driver * d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->posted && !d->stop) pthread_cond_wait(&d->cv, &d->mu);
        if (d->stop) break;
        d->posted = 0;
        pthread_mutex_unlock(&d->mu);
        gg_err e = {0};
        const int st = gg_backend_compute(d->b, d->g, &e);
        pthread_mutex_lock(&d->mu);
        d->e = e;
        d->st = st;
        d->busy = 0;
        pthread_cond_broadcast(&d->cv);
        const char one = 1;
        while (write(d->wfd, &one, 1) < 0 && errno == EINTR) {}
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

// Starts a driver; *rfd gets the non-blocking read end of its pipe.
static gg_driver * gg_driver_new(int * rfd) {
#ifdef _WIN32
    // none on Windows (a pipe's descriptor is not the HANDLE os.NewFile
    // takes there): the caller computes itself
    (void) rfd;
    return NULL;
#else
    gg_driver * d = calloc(1, sizeof(*d));
    int fds[2];
    if (d == NULL || pipe(fds) != 0) {
        free(d);
        return NULL;
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    d->wfd = fds[1];
    if (pthread_create(&d->th, NULL, gg_driver_main, d) != 0) {
        close(fds[0]);
        close(fds[1]);
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cv);
        free(d);
        return NULL;
    }
    *rfd = fds[0];
    return d;
#endif
}

static void gg_driver_post(gg_driver * d, struct lm_ggml_backend * b, gg_g * g) {
    pthread_mutex_lock(&d->mu);
    d->b = b;
    d->g = g;
    d->posted = 1;
    d->busy = 1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

// The result of the last job, waiting for it if it is not done (the Go side
// normally waits on the pipe first; this is the fallback if it cannot).
static int gg_driver_result(gg_driver * d, gg_err * e) {
    pthread_mutex_lock(&d->mu);
    while (d->busy) pthread_cond_wait(&d->cv, &d->mu);
    *e = d->e;
    const int st = d->st;
    pthread_mutex_unlock(&d->mu);
    return st;
}

// Stops the thread (after its job) and frees the driver; the read end is
// the Go side's to close.
static void gg_driver_free(gg_driver * d) {
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->th, NULL);
    close(d->wfd);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    free(d);
}
*/
import "C"

import (
	"os"
	"runtime"
	"sync"
	"time"
)

// A long CPU computation runs on a thread of our own (a computeDriver)
// while the goroutine waits parked on a pipe, instead of running as thread 0
// inside a cgo call.
//
// Why: a goroutine in a long cgo call keeps its P, so the runtime's monitor
// thread (sysmon) keeps polling it, every 20 µs after each time it takes
// the P back (which it does when the same goroutine has run for 10 ms, that
// is about every other token when decoding). With every core computing,
// each of those wake-ups preempts a compute thread that all the others then
// wait for at the next barrier; with a core to spare they still slow the
// computation where cores share resources. A parked
// goroutine holds no P: sysmon sleeps, and other goroutines get the P. The
// price is one hand-off each way per computation, so short computations are
// computed by the caller as before.
type computeDriver struct {
	d *C.gg_driver
	r *os.File // read end of the driver's pipe: one byte per finished job
}

// driverRef holds a backend's driver, created on first use; the backend's
// cleanup frees it, so it must not reference the Backend.
type driverRef struct {
	mu  sync.Mutex
	drv *computeDriver
}

// driverPolicy chooses when computations use a driver; tests set it.
type driverPolicy int

const (
	driverAuto driverPolicy = iota // after a long computation (driverMinCompute)
	driverNever
	driverAlways
)

var computeDriverPolicy = driverAuto

// get returns the driver, starting it if needed; nil if it cannot start
// (the caller then computes itself).
func (dr *driverRef) get() *computeDriver {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if dr.drv != nil {
		return dr.drv
	}
	var rfd C.int
	d := C.gg_driver_new(&rfd)
	if d == nil {
		return nil
	}
	f := os.NewFile(uintptr(rfd), "ggml-compute-driver")
	if f == nil {
		C.gg_driver_free(d)
		return nil
	}
	dr.drv = &computeDriver{d: d, r: f}
	return dr.drv
}

// started reports whether the driver's thread runs.
func (dr *driverRef) started() bool {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	return dr.drv != nil
}

// close stops the driver, if any. No computation may be running.
func (dr *driverRef) close() {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if dr.drv == nil {
		return
	}
	C.gg_driver_free(dr.drv.d)
	dr.drv.r.Close()
	dr.drv = nil
}

// compute runs gg_backend_compute(b, g) on the driver's thread and waits
// for it with the goroutine parked.
func (cd *computeDriver) compute(b *C.struct_lm_ggml_backend, g *C.gg_g, e *C.gg_err) C.int {
	C.gg_driver_post(cd.d, b, g)
	var one [1]byte
	for {
		n, err := cd.r.Read(one[:])
		if n == 1 || err != nil {
			break // on an error, gg_driver_result waits in C instead
		}
	}
	return C.gg_driver_result(cd.d, e)
}

// driverMinCompute is how long the previous computation on a backend must
// have taken for the next to use a driver. Since direct computations yield
// every sysmonYieldEvery (below), sysmon leaves a direct call alone unless it
// runs 10 ms past a yield; steady computations under 8 ms never do (each one
// of 4 ms or more is preceded by a yield). The hand-offs, in turn, wake
// sleeping threads twice per computation, which costs more than it saves on
// computations of a few milliseconds, so a lower threshold slows decoding.
// Computations of 10 ms and more still need the driver.
const driverMinCompute = 8 * time.Millisecond

// useDriver reports whether a computation on a backend whose previous
// computation took last should run on a driver (see computeDriver).
func useDriver(last time.Duration) bool {
	switch computeDriverPolicy {
	case driverNever:
		return false
	case driverAlways:
		return true
	}
	return last >= driverMinCompute
}

// A goroutine computing short graphs directly, one after the other (a
// decode loop), never blocks: to the runtime it runs one time slice. After
// 10 ms of that, sysmon takes its P during a cgo call (the goroutine gets
// one back when the call returns), and that resets sysmon's back-off: it
// then wakes every 20 µs for a millisecond and less often after, each
// wake-up preempting a compute thread when every core computes (the other
// threads wait for it at the next barrier). A yield starts a new time
// slice, so sysmon never takes the P and backs off to 10 ms sleeps; it
// costs the wake-up of an idle thread (the runtime looks for a thread to
// run the yielded goroutine on), so a backend yields at most every
// sysmonYieldEvery, well within the 10 ms. With the yield, sysmon switches
// in far less often.
const sysmonYieldEvery = 4 * time.Millisecond

// yieldForSysmon yields (runtime.Gosched) and reports true if the last
// yield before a direct computation was sysmonYieldEvery or more before now.
func yieldForSysmon(last, now time.Time) bool {
	if now.Sub(last) < sysmonYieldEvery {
		return false
	}
	runtime.Gosched()
	return true
}
