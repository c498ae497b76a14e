package cache

import (
	"runtime"
	"syscall"
	"unsafe"
)

// hugePage is the transparent huge page size on x86-64 and arm64 Linux.
const hugePage = 2 << 20

// ArenaOnGoHeap says whether a pool's frames are Go memory, which the
// collector's headroom doubles: not here, where an arena of a huge page or
// more is a mapping of its own (allocArena).
const ArenaOnGoHeap = false

// allocArena returns size bytes for the pool's frames, zeroed, and
// attaches their release to owner; mapped says whether they are a mapping
// of their own (releaseArena).
//
// On Linux an arena of a huge page or more is an anonymous private
// mapping (mmap), outside Go's heap, as InnoDB's buffer pool is
// os_mem_alloc_large's mmap and PostgreSQL's shared buffers are a
// mapping of their own:
//
//   - the collector neither scans it nor counts it: Go's heap goal is
//     twice the live heap (GOGC=100), so an arena on the heap let the
//     garbage grow by the pool's whole size, and resident memory was
//     about twice the pool's before the pool was even full;
//   - its pages take memory only when first written, as the heap's did;
//   - it starts on a huge-page boundary and the kernel is asked to back it
//     with transparent huge pages (MADV_HUGEPAGE; honoured when THP is
//     "always" or "madvise"): a large pool is touched at random, and with
//     4 KiB pages nearly every frame access would also miss the TLB.
//     InnoDB and PostgreSQL offer large pages for their buffer pools for
//     the same reason.
//
// The mapping is unmapped by a cleanup (runtime.AddCleanup) once owner,
// the Pool, is unreachable. That is safe because nothing reaches a
// frame's bytes but through the pool: a *Page points at its pool, and a
// caller holds a page's bytes only while it holds the page pinned. If
// the kernel refuses the mapping, or the arena is smaller than a huge
// page, it is ordinary Go memory.
func allocArena(size int, owner *Pool) (arena []byte, mapped bool) {
	if size < hugePage {
		return make([]byte, size), false
	}
	raw, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]byte, size), false
	}
	off := 0
	if r := int(uintptrOf(raw) % hugePage); r != 0 {
		off = hugePage - r
	}
	a := raw[off : off+size : off+size]
	_ = syscall.Madvise(a, syscall.MADV_HUGEPAGE)
	runtime.AddCleanup(owner, func(m []byte) { _ = syscall.Munmap(m) }, raw)
	return a, true
}

// releaseArena gives a closed pool's arena back to the system now
// (madvise(MADV_DONTNEED)), leaving it mapped: the cleanup unmaps it once
// the pool is unreachable, but a program that opens pool after pool (an
// experiment's sides, one after another) may not collect garbage for
// minutes, while each arena held up to its whole size. A page read after
// this reads zeros; nothing reads one, since a closed pool fetches none.
// Go memory (a small arena) is left to the collector.
func releaseArena(b []byte, mapped bool) {
	if mapped && len(b) > 0 {
		_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
	}
}

// uintptrOf returns the address of b's first byte, for alignment only.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// lowerThreadPriority gives the calling thread the lowest priority (nice
// 19: on a busy processor it gets about 1.5% of the time a thread at the
// default priority does). Linux's priorities are per thread; the caller
// holds its goroutine on the thread (runtime.LockOSThread) and lets the
// thread end with the goroutine. A refusal leaves the priority as it is.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// populateStep backs b's pages with memory as writes would, without
// changing a byte (madvise(MADV_POPULATE_WRITE)), so that it may run while
// other goroutines use those pages. It reports false if it could not
// (a kernel older than 5.14, or b not a mapping of allocArena's).
func populateStep(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptrOf(b), uintptr(len(b)), madvPopulateWrite)
	return errno == 0
}
