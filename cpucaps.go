package ggml

/*
#include "glue.h"
#include "ggml-cpu-impl.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// CPULevel is a SIMD code path of the kernels. The best level the CPU
// supports is chosen at run time; tests can force lower ones.
type CPULevel int

// SIMD levels.
const (
	LevelScalar CPULevel = 0
	LevelAVX2   CPULevel = 1 // x86-64: AVX2 + FMA + F16C
	LevelAVX512 CPULevel = 2 // x86-64: AVX-512 F/BW/VL/DQ
	LevelNEON   CPULevel = 3 // arm64: ARMv8.0 Advanced SIMD
	// arm64 with the ARMv8.2 dot product instructions (SDOT): the NEON
	// kernels, some integer dots replaced; the same bits as LevelNEON.
	LevelNEONDotProd CPULevel = 4
)

func (l CPULevel) String() string {
	switch l {
	case LevelScalar:
		return "scalar"
	case LevelAVX2:
		return "avx2"
	case LevelAVX512:
		return "avx512"
	case LevelNEON:
		return "neon"
	case LevelNEONDotProd:
		return "dotprod"
	}
	return fmt.Sprintf("CPULevel(%d)", int(l))
}

// CurrentCPULevel is the level the kernels use now.
func CurrentCPULevel() CPULevel { return CPULevel(C.lm_cpu_level()) }

// SupportedCPULevels lists the levels this CPU can run, lowest first.
func SupportedCPULevels() []CPULevel {
	out := []CPULevel{LevelScalar}
	for _, l := range []CPULevel{LevelAVX2, LevelAVX512, LevelNEON, LevelNEONDotProd} {
		if bool(C.lm_cpu_force_level(C.int(l))) {
			out = append(out, l)
		}
	}
	C.lm_cpu_force_level(-1)
	return out
}

// ForceCPULevel makes every kernel use the given level (for tests and
// benchmarks); it fails if the CPU lacks it. It affects the whole process,
// so do not change it while graphs are being computed. ResetCPULevel undoes it.
func ForceCPULevel(l CPULevel) error {
	if !bool(C.lm_cpu_force_level(C.int(l))) {
		return fmt.Errorf("ggml: CPU level %s is not supported here", l)
	}
	return nil
}

// ResetCPULevel returns to the best level of the CPU (capped by the
// LM_GGML_CPU_LEVEL environment variable: a level's String, e.g. scalar,
// avx2, avx512, neon or dotprod).
func ResetCPULevel() { C.lm_cpu_force_level(-1) }

// CPUFeatures reports the CPU features relevant to the kernels, as seen by
// golang.org/x/sys/cpu, keyed by name.
func CPUFeatures() map[string]bool {
	switch runtime.GOARCH {
	case "amd64":
		return map[string]bool{
			"sse3": cpu.X86.HasSSE3, "ssse3": cpu.X86.HasSSSE3, "avx": cpu.X86.HasAVX,
			"avx2": cpu.X86.HasAVX2, "fma": cpu.X86.HasFMA, "f16c": C.lm_ggml_cpu_has_f16c() != 0,
			"avx512f": cpu.X86.HasAVX512F, "avx512bw": cpu.X86.HasAVX512BW, "avx512vl": cpu.X86.HasAVX512VL,
			"avx512dq": cpu.X86.HasAVX512DQ, "avx512vnni": cpu.X86.HasAVX512VNNI,
			"avx512vbmi": cpu.X86.HasAVX512VBMI, "avx512bf16": cpu.X86.HasAVX512BF16,
			"avxvnni": cpu.X86.HasAVXVNNI,
		}
	case "arm64":
		return map[string]bool{
			"neon": cpu.ARM64.HasASIMD, "fp16": cpu.ARM64.HasFPHP, "asimdhp": cpu.ARM64.HasASIMDHP,
			"asimddp": cpu.ARM64.HasASIMDDP, "sve": cpu.ARM64.HasSVE,
		}
	}
	return map[string]bool{}
}

// CPUSummary is a one-line description of the CPU features and the level in use.
func CPUSummary() string {
	var on []string
	for _, k := range sortedKeys(CPUFeatures()) {
		if CPUFeatures()[k] {
			on = append(on, k)
		}
	}
	return fmt.Sprintf("%s/%s, %d CPUs, kernels: %s, features: %s", runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), CurrentCPULevel(), strings.Join(on, " "))
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
