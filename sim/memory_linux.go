package sim

// mappingsInHeap says whether the pool's arena and the in-memory store's
// files are on Go's heap, where the collector's headroom doubles them.
// On Linux they are anonymous mappings outside it (cache/arena_linux.go,
// cache/store/memfs_linux.go).
const mappingsInHeap = false
