package cache

import (
	"syscall"
	"unsafe"
)

// hugePage is the transparent huge page size on x86-64 and arm64 Linux.
const hugePage = 2 << 20

// allocArena returns size bytes for the pool's frames. On Linux the frames
// start on a huge-page boundary and the kernel is asked to back them with
// transparent huge pages (MADV_HUGEPAGE; honoured when THP is "always" or
// "madvise"): a large pool is touched at random, and with 4 KiB pages
// nearly every frame access would also miss the TLB. InnoDB and PostgreSQL
// offer large pages for their buffer pools for the same reason. If the
// kernel says no, the arena is ordinary memory.
func allocArena(size int) []byte {
	if size < hugePage {
		return make([]byte, size)
	}
	raw := make([]byte, size+hugePage)
	off := 0
	if r := int(uintptrOf(raw) % hugePage); r != 0 {
		off = hugePage - r
	}
	a := raw[off : off+size : off+size]
	_ = syscall.Madvise(a, syscall.MADV_HUGEPAGE)
	return a
}

// uintptrOf returns the address of b's first byte, for alignment only.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
