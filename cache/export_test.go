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
