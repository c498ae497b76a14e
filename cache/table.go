package cache

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/cache/page"
)

// tableShards is the number of partitions of the page table, as InnoDB
// partitions its page hash (innodb_page_hash_locks): a hit on a page no
// one else holds takes one partition's latch in shared mode, so such hits
// on pages of different partitions touch no common cache line.
const tableShards = 64

// pageTable maps resident page ids to their frames. Page numbers of a
// space are dense (allocated from 1 upward), so within a partition each
// space gets a slice indexed by page number instead of a hash table; space
// ids are dense too (a database hands them out from 0 upward), so a
// partition finds a space's slice by indexing a slice with the space id
// (spaceIndex; ids from denseSpaces up go to a map). A lookup is two slice
// indexes, where a hash map over every resident page would add a cache miss
// or two to each hit on a large pool, and a map probe for the space cost a
// hash and a group match on every hit (3% of a W1 run's CPU). Page n of a
// space lives in partition (n + space) mod tableShards, at index n /
// tableShards, so the partitions' slices together cost 8 bytes for every
// page number up to the highest one resident in each space, as one slice
// would.
//
// Concurrency: writers (put, removeUnpinned) hold both the pool's lock
// and the partition's latch exclusively, and count their change in the
// partition's seq: odd while it is under way, two more once it is done.
// Readers take one of two paths:
//
//   - get, under the pool's lock or the partition's latch held shared
//     (lockShared), as InnoDB's buf_page_get_gen looks up its page hash
//     under the partition's latch. A frame found under the shared latch
//     stays in the table while the latch is held, so a pin taken then is
//     on the page the caller asked for.
//   - pinHot, with no latch: an optimistic read (a sequence lock). It
//     reads seq, looks the frame up, pins it only if the frame is pinned
//     already or keeps a slot (see slotKept; an unpinned frame without
//     one goes the latched way), and reads seq again: unchanged, no
//     writer ran between the two reads, so the frame held the page when
//     it was pinned, and a pinned frame is never evicted. Changed, the
//     pin may be on a frame that took another page meanwhile; it is a
//     pin like any other on a resident frame, and is dropped.
//
// A hot page (a B+tree's root, a hot row's leaf) is hit by every core
// again and again; with the shared latch each hit wrote the latch's reader
// count, a cache line every core then takes in turn: at four terminals on
// two cores, W=1, 3.8% of the CPU went to those latches. The optimistic
// path writes nothing the partition shares; the pin and the page latch
// are the frame's own (InnoDB's buffer-fix and block lock). Readers on
// both paths see the table through atomics: a partition's space map is
// replaced whole when a space is added (copy on write), a space's slot
// slice when it grows, and each slot is an atomic pointer.
type pageTable struct {
	shards [tableShards]tableShard
}

type tableShard struct {
	mu sync.RWMutex
	// Keeps the latch's line, which a latched reader writes, off the
	// line the optimistic readers read.
	_   [64]byte
	seq atomic.Uint64
	// spaces maps a space to its slots; it is never changed once
	// published. Guarded by mu for writers.
	spaces atomic.Pointer[spaceIndex[*tableSlots]]
	n      int
	// Keeps two partitions off one cache line.
	_ [64]byte
}

// tableSlots are one space's slots in one partition; the slice is
// replaced, never grown in place.
type tableSlots struct {
	s atomic.Pointer[[]atomic.Pointer[Page]]
}

func (t *pageTable) init() {
	for i := range t.shards {
		t.shards[i].spaces.Store(&spaceIndex[*tableSlots]{})
	}
}

// denseSpaces bounds the space ids a spaceIndex keeps in its slice: a
// partition's slice costs 8 bytes per id up to the highest one in use, so
// ids from here up (a database that has created and dropped thousands of
// tables) go to a map instead.
const denseSpaces = 1024

// spaceIndex maps a space id to a T: ids below denseSpaces by index, the
// rest by a map (nil until needed).
type spaceIndex[T any] struct {
	dense  []T
	sparse map[uint32]T
}

// get returns space's entry, the zero T if it has none.
func (x *spaceIndex[T]) get(space uint32) T {
	if space < uint32(len(x.dense)) { // not int(space): negative for ids ≥ 2³¹ on 32-bit
		return x.dense[space]
	}
	var zero T
	if space < denseSpaces {
		return zero
	}
	return x.sparse[space] // a nil map reads as empty
}

// set stores v as space's entry, growing x as needed.
func (x *spaceIndex[T]) set(space uint32, v T) {
	if space >= denseSpaces {
		if x.sparse == nil {
			x.sparse = make(map[uint32]T)
		}
		x.sparse[space] = v
		return
	}
	if int(space) >= len(x.dense) {
		nd := make([]T, min(grownLen(int(space), len(x.dense)), denseSpaces))
		copy(nd, x.dense)
		x.dense = nd
	}
	x.dense[space] = v
}

// clone returns a copy of x that set can change without changing x.
func (x *spaceIndex[T]) clone() *spaceIndex[T] {
	return &spaceIndex[T]{dense: slices.Clone(x.dense), sparse: maps.Clone(x.sparse)}
}

// partitionOf returns the partition of page id, and its index in that
// partition's slice for its space (see pageTable); the LSN table
// (lsnTable) is laid out the same way.
func partitionOf(id page.ID) (part, i int) {
	return int((id.Page + id.Space) % tableShards), int(id.Page / tableShards)
}

// spaceSlice returns space's slice in spaces, grown (and stored back) to
// hold index i (grownLen).
func spaceSlice[T any](spaces *spaceIndex[[]T], space uint32, i int) []T {
	sl := spaces.get(space)
	if i >= len(sl) {
		ns := make([]T, grownLen(i, len(sl)))
		copy(ns, sl)
		sl = ns
		spaces.set(space, sl)
	}
	return sl
}

// grownLen is the length a space's slice of n grows to so that it holds
// index i: doubled at least, so that filling a space costs amortized
// constant time per page.
func grownLen(i, n int) int { return max(i+1, 2*n, 64) }

func (t *pageTable) shard(id page.ID) (*tableShard, int) {
	part, i := partitionOf(id)
	return &t.shards[part], i
}

// slot returns the slot of index i of space in s, nil if there is none.
func (s *tableShard) slot(space uint32, i int) *atomic.Pointer[Page] {
	if ts := s.spaces.Load().get(space); ts != nil {
		if sl := *ts.s.Load(); i < len(sl) {
			return &sl[i]
		}
	}
	return nil
}

// get returns the frame holding id, or nil. REQUIRES: the pool's lock or
// id's partition latch held.
func (t *pageTable) get(id page.ID) *Page {
	s, i := t.shard(id)
	if sl := s.slot(id.Space, i); sl != nil {
		return sl.Load()
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

// pinHot pins the frame holding id without the partition's latch, if that
// frame is pinned already or keeps a slot (see pageTable), and returns
// it; nil if it is not resident, has neither, or the partition changed
// meanwhile: the caller then takes the latched path.
func (t *pageTable) pinHot(id page.ID) *Page {
	s, i := t.shard(id)
	seq := s.seq.Load()
	if seq&1 != 0 {
		return nil
	}
	sl := s.slot(id.Space, i)
	if sl == nil {
		return nil
	}
	f := sl.Load()
	if f == nil {
		return nil
	}
	if h := pinHotHook.Load(); h != nil {
		(*h)()
	}
	if !f.pinHeld() {
		return nil // no pin and no slot: pinFree, under the latch
	}
	if s.seq.Load() != seq {
		// A writer ran: f may hold another page by now. The pin is on a
		// resident frame all the same, so an ordinary unpin drops it.
		f.Unpin(false)
		return nil
	}
	return f
}

// pinHotHook, if set (by tests only), runs in pinHot between the lookup
// and the pin: where a writer may take the frame for another page. An
// atomic, so that setting it races with no pool's goroutine.
var pinHotHook atomic.Pointer[func()]

// put maps id to f. REQUIRES: the pool's lock held.
func (t *pageTable) put(id page.ID, f *Page) {
	s, i := t.shard(id)
	s.mu.Lock()
	s.seq.Add(1)
	ts := s.spaces.Load().get(id.Space)
	if ts == nil {
		ts = &tableSlots{}
		ts.s.Store(new([]atomic.Pointer[Page]))
		x := s.spaces.Load().clone()
		x.set(id.Space, ts)
		s.spaces.Store(x)
	}
	sl := *ts.s.Load()
	if i >= len(sl) {
		ns := make([]atomic.Pointer[Page], grownLen(i, len(sl)))
		for j := range sl {
			ns[j].Store(sl[j].Load())
		}
		ts.s.Store(&ns)
		sl = ns
	}
	if sl[i].Load() == nil {
		s.n++
	}
	sl[i].Store(f)
	s.seq.Add(1)
	s.mu.Unlock()
}

// removeUnpinned removes id's mapping to f if f has no pins, and reports
// whether it did. Under the partition's exclusive latch no latched hit
// can pin f meanwhile, and an optimistic one (pinHot) either pins it
// before the pin count is taken here (and the removal gives up) or finds
// the partition changed and lets its pin go. REQUIRES: the pool's lock
// held.
func (t *pageTable) removeUnpinned(id page.ID, f *Page) bool {
	s, i := t.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq.Add(1)
	defer s.seq.Add(1)
	for {
		w := f.pins.Load()
		if w&pinCountMask == 0 && f.dirty.Load() {
			return false // pinned, changed and unpinned since it was chosen clean
		}
		if w == slotKept {
			// The kept slot goes back to the pool with the page; a pin
			// that takes it first makes the swap fail.
			if !f.pins.CompareAndSwap(slotKept, 0) {
				continue
			}
			f.pool.free.Add(1)
		} else if w != 0 {
			return false
		}
		break
	}
	if sl := s.slot(id.Space, i); sl != nil && sl.Load() != nil {
		sl.Store(nil)
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
	spaces spaceIndex[[]uint64]
	// Keeps two partitions' latches off one cache line.
	_ [64]byte
}

func (t *lsnTable) shard(id page.ID) (*lsnShard, int) {
	part, i := partitionOf(id)
	return &t.shards[part], i
}

// note records lsn for id if it is newer than the one known.
func (t *lsnTable) note(id page.ID, lsn uint64) {
	s, i := t.shard(id)
	s.mu.Lock()
	sl := spaceSlice(&s.spaces, id.Space, i)
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
	if sl := s.spaces.get(id.Space); i < len(sl) {
		return sl[i]
	}
	return 0
}
