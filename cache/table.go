package cache

import (
	"sync"

	"github.com/enginelab/enginelab/cache/page"
)

// tableShards is the number of partitions of the page table, as InnoDB
// partitions its page hash (innodb_page_hash_locks): a hit takes one
// partition's latch in shared mode, so hits on pages of different
// partitions touch no common cache line, and hits on one partition share
// its latch.
const tableShards = 64

// pageTable maps resident page ids to their frames. Page numbers of a
// space are dense (allocated from 1 upward), so within a partition each
// space gets a slice indexed by page number instead of a hash table: a
// lookup is one small-map probe for the space (a handful of entries, always
// in cache) and one slice index, where a hash map over every resident page
// would add a cache miss or two to each hit on a large pool. Page n of a
// space lives in partition (n + space) mod tableShards, at index n /
// tableShards, so the partitions' slices together cost 8 bytes for every
// page number up to the highest one resident in each space, as one slice
// would.
//
// Concurrency: readers (get) hold the partition's latch shared (getShared
// takes it) or the pool's lock; writers (put, remove) hold both the pool's
// lock and the partition's latch exclusively. A frame found under the
// shared latch stays in the table while the latch is held, so a pin taken
// then is on the page the caller asked for (the evictor re-checks the pins
// under the exclusive latch before it removes a page).
type pageTable struct {
	shards [tableShards]tableShard
}

type tableShard struct {
	mu     sync.RWMutex
	spaces map[uint32][]*Page
	n      int
	// Keeps two partitions' latches off one cache line.
	_ [64]byte
}

func (t *pageTable) init() {
	for i := range t.shards {
		t.shards[i].spaces = make(map[uint32][]*Page)
	}
}

// partitionOf returns the partition of page id, and its index in that
// partition's slice for its space (see pageTable); the LSN table
// (lsnTable) is laid out the same way.
func partitionOf(id page.ID) (part, i int) {
	return int((id.Page + id.Space) % tableShards), int(id.Page / tableShards)
}

// spaceSlice returns spaces[space], grown (and stored back) to hold
// index i: doubled at least, so that filling a space costs amortized
// constant time per page.
func spaceSlice[T any](spaces map[uint32][]T, space uint32, i int) []T {
	sl := spaces[space]
	if i >= len(sl) {
		ns := make([]T, max(i+1, 2*len(sl), 64))
		copy(ns, sl)
		sl = ns
		spaces[space] = sl
	}
	return sl
}

func (t *pageTable) shard(id page.ID) (*tableShard, int) {
	part, i := partitionOf(id)
	return &t.shards[part], i
}

// get returns the frame holding id, or nil. REQUIRES: the pool's lock or
// id's partition latch held.
func (t *pageTable) get(id page.ID) *Page {
	s, i := t.shard(id)
	if sl := s.spaces[id.Space]; i < len(sl) {
		return sl[i]
	}
	return nil
}

// lockShared takes the latch of id's partition shared and returns it, for
// RUnlock.
func (t *pageTable) lockShared(id page.ID) *sync.RWMutex {
	s, _ := t.shard(id)
	s.mu.RLock()
	return &s.mu
}

// put maps id to f. REQUIRES: the pool's lock held.
func (t *pageTable) put(id page.ID, f *Page) {
	s, i := t.shard(id)
	s.mu.Lock()
	sl := spaceSlice(s.spaces, id.Space, i)
	if sl[i] == nil {
		s.n++
	}
	sl[i] = f
	s.mu.Unlock()
}

// removeUnpinned removes id's mapping to f if f has no pins, and reports
// whether it did. Under the partition's exclusive latch no hit can pin f
// meanwhile. REQUIRES: the pool's lock held.
func (t *pageTable) removeUnpinned(id page.ID, f *Page) bool {
	s, i := t.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	w := f.pins.Load()
	if w&pinCountMask == 0 && f.dirty.Load() {
		return false // pinned, changed and unpinned since it was chosen clean
	}
	switch w {
	case 0:
	case slotKept:
		// No pin can come meanwhile (a hit needs this latch, a pin under
		// the pool's lock the lock the caller holds): the kept slot goes
		// back to the pool with the page.
		f.pins.Store(0)
		f.pool.free.Add(1)
	default:
		return false
	}
	if sl := s.spaces[id.Space]; i < len(sl) && sl[i] != nil {
		sl[i] = nil
		s.n--
	}
	return true
}

// len returns the number of resident pages. REQUIRES: the pool's lock
// held.
func (t *pageTable) len() int {
	n := 0
	for i := range t.shards {
		n += t.shards[i].n
	}
	return n
}

// lsnTable holds the newest LSN known for each page (Pool.KnownLSN),
// partitioned as the page table is and for the same reason: every
// mini-transaction that changes a page notes its LSN here, so one latch
// over the whole table would be a line every committing thread writes.
// Its partitions are the page table's (partitionOf).
type lsnTable struct {
	shards [tableShards]lsnShard
}

type lsnShard struct {
	mu     sync.Mutex
	spaces map[uint32][]uint64
	// Keeps two partitions' latches off one cache line.
	_ [64]byte
}

func (t *lsnTable) init() {
	for i := range t.shards {
		t.shards[i].spaces = make(map[uint32][]uint64)
	}
}

func (t *lsnTable) shard(id page.ID) (*lsnShard, int) {
	part, i := partitionOf(id)
	return &t.shards[part], i
}

// note records lsn for id if it is newer than the one known.
func (t *lsnTable) note(id page.ID, lsn uint64) {
	s, i := t.shard(id)
	s.mu.Lock()
	sl := spaceSlice(s.spaces, id.Space, i)
	if lsn > sl[i] {
		sl[i] = lsn
	}
	s.mu.Unlock()
}

// known returns the newest LSN noted for id (0: none).
func (t *lsnTable) known(id page.ID) uint64 {
	s, i := t.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sl := s.spaces[id.Space]; i < len(sl) {
		return sl[i]
	}
	return 0
}
