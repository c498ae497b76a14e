//go:build !linux

package sim

// mappingsInHeap says whether the pool's arena and the in-memory store's
// files are on Go's heap, where the collector's headroom doubles them:
// off Linux they are Go slices (cache/arena_other.go,
// cache/store/memfs_other.go).
const mappingsInHeap = true
