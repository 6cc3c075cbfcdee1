package ggml

// Threadpools: parameters, pause and resume, Close.

import (
	"testing"

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
	_, err = NewThreadpool(DefaultThreadpoolParams(0))
	require.Error(t, err)
}
