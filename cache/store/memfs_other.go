//go:build !linux

package store

// FilesOnGoHeap says whether an in-memory store's files are Go memory,
// which the collector's headroom doubles: here they are (allocChunk).
const FilesOnGoHeap = true

// allocChunk returns MemChunkSize zeroed bytes, on Go's heap.
func allocChunk() ([]byte, error) { return make([]byte, MemChunkSize), nil }

// freeChunk leaves a chunk to the collector.
func freeChunk([]byte) {}

// populate does nothing: Go's heap zeroed the chunk already.
func populate([]byte) {}
