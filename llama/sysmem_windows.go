package llama

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

var globalMemoryStatusEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

// memoryStatusEx is kernel32's MEMORYSTATUSEX.
type memoryStatusEx struct {
	length, memoryLoad           uint32
	totalPhys, availPhys         uint64
	totalPageFile, availPageFile uint64
	totalVirtual, availVirtual   uint64
	availExtendedVirtual         uint64
}

// physicalMemory is the machine's RAM in bytes (0 if unknown).
func physicalMemory() int64 {
	st := memoryStatusEx{length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	if r, _, _ := globalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&st))); r == 0 {
		return 0
	}
	return int64(min(st.totalPhys, 1<<62))
}
