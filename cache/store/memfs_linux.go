package store

import "syscall"

// allocChunk maps MemChunkSize zeroed bytes outside Go's heap (an
// anonymous private mapping: its pages take memory when first written).
func allocChunk() ([]byte, error) {
	return syscall.Mmap(-1, 0, MemChunkSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
}

// freeChunk unmaps a chunk of allocChunk's: its memory goes back to the
// system at once.
func freeChunk(c []byte) { _ = syscall.Munmap(c) }
