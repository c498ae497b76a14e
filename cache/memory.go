package cache

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

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
// zeroed already, so its bytes do not change): Options.PoolPopulate where
// the arena cannot be populated in the background (populateStep).
func populate(b []byte) {
	for i := 0; i < len(b); i += 4 << 10 {
		b[i] = 0
	}
}

// populator makes a pool's arena resident in the background
// (Options.PoolPopulate): a goroutine of the pool's, started by NewPool
// and stopped by Close, backs the arena a populateChunk at a time with
// populateStep, from its end towards its start. The pool hands out its
// frames from the start (its free list's top is frame 0), so the work
// takes its first frames itself, faulting them in as it writes them, and
// meets the populator somewhere in the middle; populateStep never changes
// a byte, so the two may touch the same pages in any order.
type populator struct {
	stop atomic.Bool
	done chan struct{}
}

// populateChunk is how much of the arena populateStep backs per call:
// one transparent huge page, so that a stop waits for one at most.
const populateChunk = hugePage

// startPopulate makes arena resident: in the background if populateStep
// works on it (the first chunk, at its end, is populated here to learn
// that), else here and now by writing to every page (populate).
func (p *Pool) startPopulate(arena []byte) {
	n := len(arena)
	first := max(0, n-populateChunk)
	if !populateStep(arena[first:]) {
		populate(arena)
		return
	}
	pop := &populator{done: make(chan struct{})}
	p.populator = pop
	go func() {
		defer close(pop.done)
		// The populator takes only the processors' idle time: the pages
		// it backs are the work's to fault in if it gets there first.
		// Its thread ends with it (it stays locked), so that no other
		// goroutine runs at its priority.
		runtime.LockOSThread()
		lowerThreadPriority()
		for end := first; end > 0 && !pop.stop.Load(); end -= populateChunk {
			if !populateStep(arena[max(0, end-populateChunk):end]) {
				return
			}
		}
		// The arena stays mapped while this runs: the pool, whose
		// cleanup unmaps it, is reachable from here until now.
		runtime.KeepAlive(p)
	}()
}

// stopPopulate stops the background populator, if any, and waits for it.
func (p *Pool) stopPopulate() {
	if pop := p.populator; pop != nil {
		pop.stop.Store(true)
		<-pop.done
	}
}
