//go:build !linux

package cache

// ArenaOnGoHeap says whether a pool's frames are Go memory, which the
// collector's headroom doubles: here they are (allocArena).
const ArenaOnGoHeap = true

// allocArena returns size bytes for the pool's frames, on Go's heap.
func allocArena(size int, _ *Pool) ([]byte, bool) { return make([]byte, size), false }

// releaseArena does nothing: the collector frees a Go arena.
func releaseArena([]byte, bool) {}

// hugePage is populateChunk's size: the background populator's unit.
const hugePage = 2 << 20

// lowerThreadPriority does nothing: the populator never starts here.
func lowerThreadPriority() {}

// populateStep cannot back pages without writing them here: the pool
// populates its arena by writing to it (populate).
func populateStep([]byte) bool { return false }
