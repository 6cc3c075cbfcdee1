package ggml

import "context"

// watchCancel arranges for fire to run once if ctx is done before the
// returned release is called; release returns only when fire is not running
// and will not run, so what fire touches may be freed after it.
//
// context.AfterFunc starts no goroutine unless ctx is actually done. A
// watcher goroutine per compute did: it sat in the run queue of the caller's
// P while the caller was in cgo, so the runtime handed that P to another
// thread to run it, waking a thread and switching contexts on every compute,
// which costs most when every core is computing.
func watchCancel(ctx context.Context, fire func()) (release func()) {
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		fire()
	})
	return func() {
		if !stop() {
			<-fired
		}
	}
}
