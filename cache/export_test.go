package cache

// FlushTargetFor is FlushTarget's formula for given numbers, defaults
// applied to o, for tests.
func FlushTargetFor(o Options, capacity int64, age uint64, dirty, frames int) int {
	o.ensureDefaults()
	return flushTarget(&o, capacity, age, dirty, frames)
}

// MergeCount is mergeCount, for tests.
var MergeCount = mergeCount
