package cache

import "github.com/enginelab/enginelab/cache/page"

// FlushTargetFor is FlushTarget's formula for given numbers, defaults
// applied to o, for tests.
func FlushTargetFor(o Options, capacity int64, age uint64, dirty, frames int) int {
	o.ensureDefaults()
	return flushTarget(&o, capacity, age, dirty, frames)
}

// MergeCount is mergeCount, for tests.
var MergeCount = mergeCount

// FreeSlots is the pool's free count: slots neither pinned, reserved nor
// kept by an unpinned frame.
func (p *Pool) FreeSlots() int64 { return p.free.Load() }

// KeptSlots is keptSlots, for tests.
func (p *Pool) KeptSlots() int { return p.keptSlots() }

// PinHot is the page table's optimistic pin (pageTable.pinHot), for
// tests: the frame holding id, pinned, or nil.
func (p *Pool) PinHot(id page.ID) *Page { return p.table.pinHot(id) }

// SetPinHotHook sets a function pinHot runs between its lookup and its
// pin (nil: none).
func SetPinHotHook(f func()) {
	if f == nil {
		pinHotHook.Store(nil)
	} else {
		pinHotHook.Store(&f)
	}
}

// SetWriteUnpinnedHook sets a function that runs with a page chosen
// unpinned for a write-out (an eviction's victim, a flush's page), made
// busy and share-latched, before the pool's lock is released (nil:
// none). It must not call the pool.
func SetWriteUnpinnedHook(f func(*Page)) {
	if f == nil {
		writeUnpinnedHook.Store(nil)
	} else {
		writeUnpinnedHook.Store(&f)
	}
}

// TryLatch takes the page's exclusive latch if nobody holds the latch,
// without waiting, and reports whether it did.
func (p *Page) TryLatch() bool { return p.latch.TryLock() }
