//go:build !linux

package cache

// allocArena returns size bytes for the pool's frames.
func allocArena(size int) []byte { return make([]byte, size) }
