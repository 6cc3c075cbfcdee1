package ggml

// Threadpools: parameters, pause and resume, Close.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestThreadpool(t *testing.T) {
	p := DefaultThreadpoolParams(3)
	require.Equal(t, uint32(50), p.Poll)
	require.True(t, p.Match(DefaultThreadpoolParams(3)))
	require.False(t, p.Match(DefaultThreadpoolParams(2)))
	q := p
	q.CPUMask = []bool{true}
	require.False(t, p.Match(q))
	tp, err := NewThreadpool(p)
	require.NoError(t, err)
	require.Equal(t, 3, tp.NThreads())
	tp.Pause()
	tp.Resume()
	require.NoError(t, tp.Close())
	require.NoError(t, tp.Close())
	require.PanicsWithValue(t, ErrClosedThreadpool, func() { tp.NThreads() })
	_, err = NewThreadpool(DefaultThreadpoolParams(-1))
	require.Error(t, err)
}

// Between graphs a pool's workers sleep on its condition variable and stay
// asleep: after a computation every worker goes to sleep (within a deadline,
// however loaded the machine), and while nothing is computed none wakes.
// Events are counted, not CPU time, so the machine's load does not matter.
func TestIdleWorkersSleep(t *testing.T) {
	const n = 4
	tp, err := NewThreadpool(DefaultThreadpoolParams(n))
	require.NoError(t, err)
	defer tp.Close()
	ctx, err := NewContext(ContextOptions{MemSize: 16 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor2D(TypeF32, 256, 256).Fill(1)
	g := ctx.NewGraph().BuildForward(ctx.MulMat(a, a))

	allAsleep := func() bool { s, _ := tp.idle(); return s == n-1 }
	require.Eventually(t, allAsleep, 20*time.Second, time.Millisecond, "a new pool's workers")
	for round := 0; round < 3; round++ {
		_, before := tp.idle()
		require.NoError(t, g.Run(context.Background(), ComputeOptions{Threadpool: tp}))
		require.Eventually(t, allAsleep, 20*time.Second, time.Millisecond, "after a computation")
		_, woke := tp.idle()
		require.GreaterOrEqual(t, woke-before, uint(n-1), "the computation woke every worker")
		time.Sleep(50 * time.Millisecond)
		sleeping, after := tp.idle()
		require.Equal(t, n-1, sleeping)
		require.Equal(t, woke, after, "a worker woke while the pool was idle")
	}
	// a paused pool's workers sleep too, and Resume alone does not give them work
	tp.Pause()
	tp.Resume()
	require.Eventually(t, allAsleep, 20*time.Second, time.Millisecond, "after Pause and Resume")
}
