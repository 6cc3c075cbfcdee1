package ggml

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCPULevels: each supported level can be forced, the default is the
// best one, and the arm64 levels follow the CPU's features (the dot product
// level exactly when HWCAP_ASIMDDP is set).
func TestCPULevels(t *testing.T) {
	levels := SupportedCPULevels()
	t.Logf("%s; levels %v", CPUSummary(), levels)
	require.Equal(t, LevelScalar, levels[0])
	has := map[CPULevel]bool{}
	for _, l := range levels {
		require.NoError(t, ForceCPULevel(l))
		require.Equal(t, l, CurrentCPULevel())
		has[l] = true
	}
	ResetCPULevel()
	require.Error(t, ForceCPULevel(CPULevel(99)))
	if os.Getenv("LM_GGML_CPU_LEVEL") != "" {
		return // capped: the rest describes the CPU itself
	}
	require.Equal(t, levels[len(levels)-1], CurrentCPULevel(), "the best level by default")
	switch runtime.GOARCH {
	case "arm64":
		require.True(t, has[LevelNEON])
		require.Equal(t, CPUFeatures()["asimddp"], has[LevelNEONDotProd])
		require.False(t, has[LevelAVX2] || has[LevelAVX512])
	case "amd64":
		require.False(t, has[LevelNEON] || has[LevelNEONDotProd])
	}
}

// TestCPULevelEnvCap: LM_GGML_CPU_LEVEL=<a level's name> makes a fresh
// process start at that level (each supported one).
func TestCPULevelEnvCap(t *testing.T) {
	for _, l := range SupportedCPULevels() {
		t.Run(l.String(), func(t *testing.T) {
			t.Setenv("LM_GGML_CPU_LEVEL", l.String())
			inSubprocess(t, 2*time.Minute, func(t *testing.T) {
				require.Equal(t, os.Getenv("LM_GGML_CPU_LEVEL"), CurrentCPULevel().String())
			})
		})
	}
}

// forEachLevel runs f once per SIMD level the CPU supports.
func forEachLevel(t *testing.T, f func(t *testing.T)) {
	for _, l := range SupportedCPULevels() {
		t.Run(l.String(), func(t *testing.T) {
			require.NoError(t, ForceCPULevel(l))
			defer ResetCPULevel()
			f(t)
		})
	}
}
