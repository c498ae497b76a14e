package cache

import (
	"syscall"
	"unsafe"
)

// WaitPopulated waits for the pool's background populator, if any, to
// finish (Options.PoolPopulate).
func (p *Pool) WaitPopulated() {
	if pop := p.populator; pop != nil {
		<-pop.done
	}
}

// ArenaResidency returns how many of the 4 KiB pages of the pool's
// frames are resident (mincore), and how many there are.
func (p *Pool) ArenaResidency() (resident, pages int) {
	first := p.frames[0].buf
	arena := unsafe.Slice(unsafe.SliceData(first), len(p.frames)*p.pageSize)
	return Residency(arena)
}

// Residency returns how many of b's 4 KiB pages are resident, and how
// many it has. b starts on a page boundary.
func Residency(b []byte) (resident, pages int) {
	vec := make([]byte, (len(b)+4095)/4096)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptrOf(b), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if errno != 0 {
		panic(errno)
	}
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

// PopulateStep is populateStep, for tests.
var PopulateStep = populateStep
