package cmem

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// owner stands for a Go object holding n bytes of C memory.
type owner struct {
	_ [64]byte // some Go heap, much smaller than what it "holds"
	n int64
}

func newOwner(n int64) *owner {
	Charge(n)
	o := &owner{n: n}
	runtime.AddCleanup(o, func(n int64) { Collected(n) }, n)
	return o
}

// A program that drops owners of 64 MiB each without closing them keeps the
// charged bytes bounded, with no runtime.GC of its own: Charge collects.
func TestUnclosedOwnersBounded(t *testing.T) {
	const size = 64 << 20
	start := Read()
	peak := int64(0)
	for range 256 {
		o := newOwner(size)
		_ = o
		peak = max(peak, Read().Live-start.Live)
	}
	// Cleanups run asynchronously: allow for a few pending ones (more under
	// the race detector, which slows them down).
	bound := int64(16 * size)
	if raceEnabled {
		bound *= 4
	}
	if peak > bound {
		t.Fatalf("charged bytes grew to %d MiB for 256 dropped owners of 64 MiB", peak>>20)
	}
	if Read().Collections == start.Collections {
		t.Fatal("Charge started no collection")
	}
	t.Logf("peak %d MiB, %d collections", peak>>20, Read().Collections-start.Collections)
	// Leave nothing pending to the next tests: the owners' cleanups run
	// asynchronously, later on a loaded machine.
	for deadline := time.Now().Add(time.Minute); Read().Live > start.Live && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// Closing what is opened never starts a collection, however much churns.
func TestReleaseDoesNotCollect(t *testing.T) {
	before := Read().Collections
	for range 1000 {
		Charge(MinGoal / 2)
		Release(MinGoal / 2)
	}
	if n := Read().Collections - before; n > 1 {
		t.Fatalf("%d collections for balanced charges", n)
	}
}

func TestGoalFollowsSurvivors(t *testing.T) {
	const big = 4 * MinGoal
	Charge(big) // survives: stays live
	if Read().Goal < Read().Live-big {
		t.Fatalf("goal %d below live %d", Read().Goal, Read().Live)
	}
	// After a collection the goal is about twice what survived.
	Charge(big)
	g := Read().Goal
	if g < 2*big {
		t.Fatalf("goal %d MiB after %d MiB survived", g>>20, 2*big>>20)
	}
	Release(2 * big)
}

func TestHolding(t *testing.T) {
	before := Read().Live
	h := new(Holding)
	h.Set(10 << 20)
	h.Set(30 << 20) // grows: charges 20 MiB more
	require.Equal(t, before+30<<20, Read().Live)
	h.Set(5 << 20) // shrinks: releases 25 MiB
	require.Equal(t, before+5<<20, Read().Live)
	h.Release()
	h.Release() // nothing left
	require.Equal(t, before, Read().Live)
	h.Set(1 << 20)
	h.Collected()
	require.Equal(t, before, Read().Live)
}
