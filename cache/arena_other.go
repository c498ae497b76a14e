//go:build !linux

package cache

// allocArena returns size bytes for the pool's frames, on Go's heap.
func allocArena(size int, _ *Pool) []byte { return make([]byte, size) }
