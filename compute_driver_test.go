package ggml

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// setDriverPolicy forces computations on (or off) a driver until the
// returned restore is called.
func setDriverPolicy(p driverPolicy) (restore func()) {
	old := computeDriverPolicy
	computeDriverPolicy = p
	return func() { computeDriverPolicy = old }
}

// The backend's behaviour is the same when a driver thread computes:
// results, cancellation, errors, thread pools, concurrent use, Close.
func TestComputeDriver(t *testing.T) {
	for name, test := range map[string]func(*testing.T){
		"matches graph compute": TestBackendCPUComputeMatchesGraphCompute,
		"threadpool":            TestBackendThreadpool,
		"cancel":                TestBackendComputeCancel,
		"misuse":                TestBackendMisuse,
		"lifetimes":             TestBackendLifetimes,
		"shared weights":        TestBackendSharedWeightsConcurrently,
		"buffer close":          TestBufferCloseWaitsForCompute,
	} {
		t.Run(name, func(t *testing.T) {
			defer setDriverPolicy(driverAlways)()
			test(t)
		})
	}
}

// A node without data fails the computation with the same message either way.
func TestComputeDriverError(t *testing.T) {
	msg := map[driverPolicy]string{}
	for _, p := range []driverPolicy{driverNever, driverAlways} {
		func() {
			defer setDriverPolicy(p)()
			be, err := NewCPUBackend()
			require.NoError(t, err)
			defer be.Close()
			ctx, err := NewContext(ContextOptions{MemSize: 1 << 20, NoAlloc: true})
			require.NoError(t, err)
			defer ctx.Close()
			x := ctx.NewTensor1D(TypeF32, 8)
			err = be.Compute(context.Background(), ctx.NewGraph().BuildForward(ctx.Scale(x, 2)))
			require.Error(t, err)
			msg[p] = err.Error()
			// the backend still computes afterwards
			c2 := newCtx(t, 1<<20)
			y := c2.Scale(c2.NewTensor1D(TypeF32, 4).Fill(3), 2)
			require.NoError(t, be.Compute(context.Background(), c2.NewGraph().BuildForward(y)))
			require.Equal(t, float32(6), y.F32(1))
		}()
	}
	require.Equal(t, msg[driverNever], msg[driverAlways])
}

// A backend dropped without Close stops its driver thread (the cleanup).
func TestComputeDriverCleanup(t *testing.T) {
	defer setDriverPolicy(driverAlways)()
	for range 20 {
		be, err := NewCPUBackend()
		require.NoError(t, err)
		ctx := newCtx(t, 1<<20)
		y := ctx.Scale(ctx.NewTensor1D(TypeF32, 4).Fill(1), 2)
		require.NoError(t, be.Compute(context.Background(), ctx.NewGraph().BuildForward(y)))
	}
	for range 3 {
		runtime.GC()
	}
}

func TestUseDriverAuto(t *testing.T) {
	defer setDriverPolicy(driverAuto)()
	long := driverMinCompute
	require.False(t, useDriver(0))
	require.False(t, useDriver(long/2))
	require.True(t, useDriver(long))
}

// Direct computations yield at most every sysmonYieldEvery (the first one
// does: a zero time is long ago).
func TestYieldForSysmon(t *testing.T) {
	now := time.Now()
	require.True(t, yieldForSysmon(time.Time{}, now))
	require.False(t, yieldForSysmon(now, now))
	require.False(t, yieldForSysmon(now.Add(-sysmonYieldEvery/2), now))
	require.True(t, yieldForSysmon(now.Add(-sysmonYieldEvery), now))

	defer setDriverPolicy(driverNever)()
	be, err := NewCPUBackend()
	require.NoError(t, err)
	defer be.Close()
	ctx := newCtx(t, 1<<20)
	g := ctx.NewGraph().BuildForward(ctx.Scale(ctx.NewTensor1D(TypeF32, 4).Fill(1), 2))
	require.NoError(t, be.Compute(context.Background(), g))
	first := be.yielded
	require.False(t, first.IsZero())
	require.NoError(t, be.Compute(context.Background(), g))
	if time.Since(first) < sysmonYieldEvery { // not on a machine slow enough to take 4 ms in between
		require.Equal(t, first, be.yielded)
	}
}

// A decode-sized computation (a chain of mat-vecs, about a millisecond) on
// every core, computed by the caller and by a driver.
func BenchmarkComputeDriver(b *testing.B) {
	for _, p := range []struct {
		name string
		p    driverPolicy
	}{{"caller", driverNever}, {"driver", driverAlways}} {
		b.Run(p.name, func(b *testing.B) {
			defer setDriverPolicy(p.p)()
			be, err := NewCPUBackend()
			require.NoError(b, err)
			defer be.Close()
			ctx, err := NewContext(ContextOptions{MemSize: 64 << 20})
			require.NoError(b, err)
			defer ctx.Close()
			w := ctx.NewTensor2D(TypeF16, 1024, 1024).Fill(0.001)
			y := ctx.NewTensor1D(TypeF32, 1024).Fill(1)
			for range 16 {
				y = ctx.Scale(ctx.MulMat(w, y), 0.5)
			}
			g := ctx.NewGraph().BuildForward(y)
			b.ResetTimer()
			for b.Loop() {
				if err := be.Compute(context.Background(), g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
