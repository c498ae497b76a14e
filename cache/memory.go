package cache

import "unsafe"

// FrameOverhead is the memory a buffer pool takes per frame besides the
// page itself: the frame's Page (header, latch, list links), its slot in
// the free list, and two page-table slots (a space's table grows by
// doubling). NewPool allocates and touches them for every frame at once,
// so they take memory whatever the data; the frames' pages are one arena
// that takes memory only as its pages are first used (all at once with
// Options.PoolPopulate).
const FrameOverhead = int64(unsafe.Sizeof(Page{})) + 3*int64(unsafe.Sizeof(uintptr(0)))

// PoolMemory is the memory a pool of capacity bytes of pageSize pages
// takes when every frame holds a page: the frames and their FrameOverhead.
func PoolMemory(capacity int64, pageSize int) int64 {
	if pageSize <= 0 {
		return capacity
	}
	frames := capacity / int64(pageSize)
	return frames * (int64(pageSize) + FrameOverhead)
}

// populate makes every page of b resident by writing a zero to it (b is
// zeroed already, so its bytes do not change): Options.PoolPopulate.
func populate(b []byte) {
	for i := 0; i < len(b); i += 4 << 10 {
		b[i] = 0
	}
}
