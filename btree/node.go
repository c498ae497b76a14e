package btree

import (
	"bytes"
	"encoding/binary"
	"sync"

	"github.com/enginelab/enginelab/cache/page"
)

// A node is one page. After the 32-byte page header owned by package cache
// comes a 36-byte node header, then a slot array growing forward and cells
// growing backward from the end of the page:
//
//	0          32      34      36          40        44      48      52      56       58       60          68
//	+----------+-------+-------+-----------+---------+-------+-------+-------+--------+--------+-----------+
//	| page hdr | level | count | cellStart | garbage | prev  | next  | left  | prefix | last   | max trx   |
//	|  (32B)   | (2B)  | (2B)  |   (4B)    |  (4B)   | (4B)  | (4B)  | (4B)  |  (2B)  | insert | id (8B)   |
//	+----------+-------+-------+-----------+---------+-------+-------+-------+--------+--------+-----------+
//	| slot 0: offset (2B), head (4B) | slot 1 | … | free space …   | cell k … cell 0           |
//	+--------------------------------------------+-----------------+---------------------------+
//	                                             ^ slots end       ^ cellStart        page end ^
//
//	leaf cell:  | keyLen (2B) | valLen (2B) | key | value |
//	inner cell: | keyLen (2B) | child (4B)  | key |
//
// The top bit of a leaf cell's valLen is the entry's killed mark,
// PostgreSQL's LP_DEAD on a B-tree item (a value is at most a quarter
// page, 16 KiB, so the length never needs the bit): the engine sets it
// (Iter.Kill) on an entry whose row versions are dead to every snapshot,
// and iterators step over killed entries unless asked for them
// (IterOptions.Killed). The mark travels with its cell through merges
// and compaction, and stays when the entry's value is written again (the
// engine kills only entries whose value it never rewrites). A split
// rebuilds both halves from keys and values and drops the marks: a mark
// is a hint, and one lost costs the entry's next reader a heap visit,
// which kills it again. (PostgreSQL instead deletes a leaf's LP_DEAD
// items before splitting it, _bt_simpledel_pass; see the engine's
// versioned-index notes for why this tree does not yet.)
//
// Every key of a node shares its first "prefix" bytes (0xFFFF in an empty
// node). A slot keeps, beside its cell's offset, the key's "head": the four
// bytes after that prefix, big-endian, zero-padded. Heads order like the
// keys, so a binary search compares heads in the slot array (a few cache
// lines) and reads a cell only when heads tie, instead of one cell per
// probe: that is most of the cost of a point get on a large tree. In a
// node of 32 slots or more the search first guesses by interpolation on
// the heads (see interpolate), which finds evenly spread keys in three or
// four cache lines of the slot array. The prefix
// only shrinks (an insert of a key that shares less recomputes every head);
// a delete leaves it as it is, which is still a common prefix.
//
// "last insert" is one more than the slot index of the latest insert (0:
// none). When a node must split for an insert at its end and the insert
// before also went to its end, the inserts are ascending, and the node
// splits at the insertion point instead of the middle, as InnoDB does: a
// table loaded in key order then fills its pages instead of leaving them
// half empty.
//
// "max trx id" is InnoDB's PAGE_MAX_TRX_ID, kept in leaves: the highest
// transaction id its user gave a write to the leaf (InsertTrxIn,
// UpdateTrxIn), in the write's own mini-transaction (0: none). A split
// gives both halves the leaf's, a merge the larger of the two; a delete
// leaves it as it is. The engine sets it on the leaves of clustered
// tables' secondary indexes, so that a consistent read trusts an entry
// without visiting its row when the leaf's last writer is older than its
// read view (lock_sec_rec_cons_read_sees).
//
// level is 0 for leaves and grows toward the root. Slots hold cell offsets
// in key order, so a binary search over slots finds a key; cells themselves
// sit in any order. cellStart is the lowest cell byte (a u32 because an
// empty 64 KiB page has it at 65536); garbage counts bytes of dead cells,
// reclaimed by compaction when an insert needs them.
//
// Leaves link to their neighbours (prev, next; 0 = none) for range scans in
// both directions. An inner node with count keys has count+1 children:
// left holds the keys below key 0, and the child of cell i holds the keys
// from key i up to (not including) key i+1.
const (
	offLevel     = page.HeaderSize
	offCount     = page.HeaderSize + 2
	offCellStart = page.HeaderSize + 4
	offGarbage   = page.HeaderSize + 8
	offPrev      = page.HeaderSize + 12
	offNext      = page.HeaderSize + 16
	offLeft      = page.HeaderSize + 20
	offPrefix    = page.HeaderSize + 24
	offLast      = page.HeaderSize + 26
	offMaxTrx    = page.HeaderSize + 28
	nodeHeader   = page.HeaderSize + 36

	slotSize       = 6
	killedBit      = 0x8000 // in a leaf cell's valLen: the entry is killed
	noPrefix       = 0xFFFF // the prefix of an empty node
	leafCellHeader = 4
	innerCellHead  = 6
)

type node []byte

func (n node) u16(off int) int           { return int(binary.LittleEndian.Uint16(n[off:])) }
func (n node) put16(off, v int)          { binary.LittleEndian.PutUint16(n[off:], uint16(v)) }
func (n node) u32(off int) uint32        { return binary.LittleEndian.Uint32(n[off:]) }
func (n node) put32(off int, v uint32)   { binary.LittleEndian.PutUint32(n[off:], v) }
func (n node) level() int                { return n.u16(offLevel) }
func (n node) isLeaf() bool              { return n.u16(offLevel) == 0 }
func (n node) count() int                { return n.u16(offCount) }
func (n node) setCount(c int)            { n.put16(offCount, c) }
func (n node) cellStart() int            { return int(n.u32(offCellStart)) }
func (n node) setCellStart(v int)        { n.put32(offCellStart, uint32(v)) }
func (n node) garbage() int              { return int(n.u32(offGarbage)) }
func (n node) setGarbage(v int)          { n.put32(offGarbage, uint32(v)) }
func (n node) prev() uint32              { return n.u32(offPrev) }
func (n node) next() uint32              { return n.u32(offNext) }
func (n node) left() uint32              { return n.u32(offLeft) }
func (n node) setPrev(v uint32)          { n.put32(offPrev, v) }
func (n node) setNext(v uint32)          { n.put32(offNext, v) }
func (n node) setLeft(v uint32)          { n.put32(offLeft, v) }
func (n node) slot(i int) int            { return n.u16(nodeHeader + i*slotSize) }
func (n node) setSlot(i, off int)        { n.put16(nodeHeader+i*slotSize, off) }
func (n node) slotsEnd() int             { return nodeHeader + n.count()*slotSize }
func (n node) contiguousFree() int       { return n.cellStart() - n.slotsEnd() }
func (n node) free() int                 { return n.contiguousFree() + n.garbage() }
func (n node) capacity() int             { return len(n) - nodeHeader }
func (n node) used() int                 { return n.capacity() - n.free() }
func (n node) keyLen(off int) int        { return n.u16(off) }
func leafCellSize(key, val []byte) int   { return leafCellHeader + len(key) + len(val) }
func innerCellSize(key []byte) int       { return innerCellHead + len(key) }
func (n node) cellSizeAt(off int) int    { return n.cellSize(off) }
func (n node) innerChild(off int) uint32 { return n.u32(off + 2) }

// init formats n as an empty node of the given level.
func (n node) init(level int) {
	clear(n[page.HeaderSize:])
	n.put16(offLevel, level)
	n.setCellStart(len(n))
	n.setPrefix(noPrefix)
}

// keyHead returns the four bytes of key after the first p, big-endian,
// zero-padded.
func keyHead(key []byte, p int) uint32 {
	if p >= len(key) {
		return 0
	}
	k := key[p:]
	if len(k) >= 4 {
		return binary.BigEndian.Uint32(k)
	}
	var b [4]byte
	copy(b[:], k)
	return binary.BigEndian.Uint32(b[:])
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func (n node) cellSize(off int) int {
	if n.isLeaf() {
		return leafCellHeader + n.u16(off) + n.valLen(off)
	}
	return innerCellHead + n.u16(off)
}

// key returns key i (valid while the page is latched and unchanged).
func (n node) key(i int) []byte {
	off := n.slot(i)
	kl := n.u16(off)
	h := leafCellHeader
	if !n.isLeaf() {
		h = innerCellHead
	}
	return n[off+h : off+h+kl]
}

// val returns value i of a leaf.
func (n node) val(i int) []byte {
	off := n.slot(i)
	kl, vl := n.u16(off), n.valLen(off)
	s := off + leafCellHeader + kl
	return n[s : s+vl]
}

// valLen returns the value length of the leaf cell at off, without its
// killed mark.
func (n node) valLen(off int) int { return n.u16(off+2) &^ killedBit }

// killed reports whether leaf entry i carries the killed mark.
func (n node) killed(i int) bool { return n.u16(n.slot(i)+2)&killedBit != 0 }

// countKilled returns how many entries of the leaf n carry the killed
// mark.
func (n node) countKilled() int {
	k := 0
	for i := range n.count() {
		if n.killed(i) {
			k++
		}
	}
	return k
}

// child returns child i of an inner node; i = -1 is the leftmost child.
func (n node) child(i int) uint32 {
	if i < 0 {
		return n.left()
	}
	return n.u32(n.slot(i) + 2)
}

func (n node) setChild(i int, c uint32) {
	if i < 0 {
		n.setLeft(c)
		return
	}
	n.put32(n.slot(i)+2, c)
}

// search returns the first index whose key is >= key, and whether it is
// equal.
func (n node) search(key []byte) (int, bool) {
	c := n.count()
	if c == 0 {
		return 0, false
	}
	// Search by heads as if key shared the node's common prefix, then
	// check that it does against the key the search ended at (a cell the
	// equality test reads anyway): a key outside the prefix sorts before
	// or after every key of the node.
	p := n.prefix()
	h := keyHead(key, p)
	lo, hi := 0, c
	if c >= interpolateMin {
		lo, hi = n.interpolate(key, h, c)
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if n.before(mid, key, h) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	ref := n.key(min(lo, c-1))
	kp := key
	if len(kp) > p {
		kp = kp[:p]
	}
	switch bytes.Compare(kp, ref[:p]) {
	case -1:
		return 0, false
	case 1:
		return c, false
	}
	return lo, lo < c && n.head(lo) == h && bytes.Equal(ref, key)
}

// before reports whether slot i's key sorts before key, whose head is h:
// the predicate search bisects (true for a prefix of the slots).
func (n node) before(i int, key []byte, h uint32) bool {
	mh := n.head(i)
	return mh < h || (mh == h && bytes.Compare(n.key(i), key) < 0)
}

// interpolateMin is the fewest slots for which search guesses first.
const interpolateMin = 32

// interpolate narrows search's range [0, c) to one that holds the first
// slot not before key, by interpolation on the heads: it guesses where h
// falls between the first and the last slot's head, then gallops from
// the guess (±1, ±2, ±4, …) until it brackets the answer. On keys spread
// evenly over their range (TPC-C's ids, most sequence keys) the guess is
// within a few slots, so a search reads three or four cache lines of the
// slot array instead of one for each of a binary search's first steps:
// on a tree larger than the CPU's caches those are memory reads, most of
// a point get's time. On skewed keys the galloping costs at most twice
// the binary search it replaces. A key whose head is outside the first
// and last slot's (an append at either edge, as a load's or New-Order's
// inserts are) needs no probe more. It only chooses which slots to probe;
// the answer is the binary search's.
func (n node) interpolate(key []byte, h uint32, c int) (lo, hi int) {
	h0, h1 := n.head(0), n.head(c-1)
	switch {
	case h < h0: // before every key (an append at the left edge)
		return 0, 0
	case h > h1: // after every key (an append at the right edge)
		return c, c
	case h == h0:
		return 0, c // a run of equal heads: only the keys tell
	}
	g := int(uint64(h-h0) * uint64(c-1) / uint64(h1-h0))
	if n.before(g, key, h) {
		lo, hi = g+1, c
		for step := 1; ; step <<= 1 {
			i := g + step
			if i >= hi {
				return lo, hi
			}
			if !n.before(i, key, h) {
				return lo, i
			}
			lo = i + 1
		}
	}
	lo, hi = 0, g
	for step := 1; ; step <<= 1 {
		i := g - step
		if i < lo {
			return lo, hi
		}
		if n.before(i, key, h) {
			return i + 1, hi
		}
		hi = i
	}
}

// childIndex returns the index of the child of inner node n that covers
// key: -1 for the leftmost child.
func (n node) childIndex(key []byte) int {
	i, eq := n.search(key)
	if eq {
		return i
	}
	return i - 1
}

// findChild returns the index of child c in inner node n, or -2.
func (n node) findChild(c uint32) int {
	if n.left() == c {
		return -1
	}
	for i := 0; i < n.count(); i++ {
		if n.child(i) == c {
			return i
		}
	}
	return -2
}

// alloc reserves size bytes of cell space, compacting if the contiguous
// free space is short. The caller has checked n.free() >= size+slotSize.
func (n node) alloc(size int) int {
	if n.contiguousFree() < size+slotSize {
		n.compact()
	}
	off := n.cellStart() - size
	n.setCellStart(off)
	return off
}

// insertSlot opens slot i for the cell at off, whose key is key, keeping
// the prefix and the heads right.
func (n node) insertSlot(i, off int, key []byte) {
	c := n.count()
	p := n.prefix()
	np := min(p, len(key))
	if c > 0 {
		np = min(np, commonPrefix(key, n.key(0)))
	}
	if np != p {
		n.setPrefix(np)
		for j := 0; j < c; j++ {
			n.setHead(j, keyHead(n.key(j), np))
		}
	}
	s := nodeHeader + i*slotSize
	copy(n[s+slotSize:nodeHeader+(c+1)*slotSize], n[s:nodeHeader+c*slotSize])
	n.setSlot(i, off)
	n.setHead(i, keyHead(key, np))
	n.setCount(c + 1)
}

// insertLeaf inserts key/val at index i, or reports that it does not fit.
func (n node) insertLeaf(i int, key, val []byte) bool {
	size := leafCellSize(key, val)
	if n.free() < size+slotSize {
		return false
	}
	off := n.alloc(size)
	n.put16(off, len(key))
	n.put16(off+2, len(val))
	copy(n[off+leafCellHeader:], key)
	copy(n[off+leafCellHeader+len(key):], val)
	n.insertSlot(i, off, key)
	n.put16(offLast, i+1)
	return true
}

// insertInner inserts separator key with child at index i.
func (n node) insertInner(i int, key []byte, child uint32) bool {
	size := innerCellSize(key)
	if n.free() < size+slotSize {
		return false
	}
	off := n.alloc(size)
	n.put16(off, len(key))
	n.put32(off+2, child)
	copy(n[off+innerCellHead:], key)
	n.insertSlot(i, off, key)
	n.put16(offLast, i+1)
	return true
}

// remove deletes entry i; its cell becomes garbage.
func (n node) remove(i int) {
	off := n.slot(i)
	size := n.cellSize(off)
	c := n.count()
	s := nodeHeader + i*slotSize
	copy(n[s:], n[s+slotSize:nodeHeader+c*slotSize])
	n.setCount(c - 1)
	if off == n.cellStart() {
		n.setCellStart(off + size)
	} else {
		n.setGarbage(n.garbage() + size)
	}
}

// replaceVal sets the value of leaf entry i, in place when the size is the
// same, else by rewriting the cell. It reports false (changing nothing) if
// the new cell does not fit.
func (n node) replaceVal(i int, val []byte) bool {
	off := n.slot(i)
	mark := n.u16(off+2) & killedBit // kept with the new value
	if n.valLen(off) == len(val) {
		copy(n.val(i), val)
		return true
	}
	oldSize := n.cellSize(off)
	kl := n.u16(off)
	newSize := leafCellHeader + kl + len(val)
	if n.free()+oldSize < newSize {
		return false
	}
	if n.contiguousFree() >= newSize {
		// Write the new cell below the others and retire the old one.
		noff := n.cellStart() - newSize
		n.setCellStart(noff)
		n.put16(noff, kl)
		n.put16(noff+2, len(val)|mark)
		copy(n[noff+leafCellHeader:], n[off+leafCellHeader:off+leafCellHeader+kl])
		copy(n[noff+leafCellHeader+kl:], val)
		n.setSlot(i, noff)
		n.setGarbage(n.garbage() + oldSize)
		return true
	}
	// Rare: the page must be compacted; keep the key aside meanwhile.
	bp := compactBuf.Get().(*[]byte)
	k := append((*bp)[:0], n.key(i)...)
	n.remove(i)
	n.insertLeaf(i, k, val)
	off = n.slot(i)
	n.put16(off+2, n.u16(off+2)|mark)
	compactBuf.Put(bp)
	return true
}

var compactBuf = sync.Pool{New: func() any { b := make([]byte, page.MaxSize); return &b }}

// compact rewrites the cells contiguously at the end of the page, dropping
// garbage. Slot order is kept.
func (n node) compact() {
	bp := compactBuf.Get().(*[]byte)
	tmp := (*bp)[:len(n)]
	copy(tmp, n)
	end := len(n)
	for i := 0; i < n.count(); i++ {
		off := node(tmp).slot(i)
		size := node(tmp).cellSize(off)
		end -= size
		copy(n[end:], tmp[off:off+size])
		n.setSlot(i, end)
	}
	n.setCellStart(end)
	n.setGarbage(0)
	compactBuf.Put(bp)
}

// moveTail moves entries [from, count) of n to the end of dst (same kind).
func (n node) moveTail(dst node, from int) {
	for i := from; i < n.count(); i++ {
		off := n.slot(i)
		dst.appendCell(n[off : off+n.cellSize(off)])
	}
	for n.count() > from {
		n.remove(n.count() - 1)
	}
}

// appendCell appends a cell (of n's kind, taken whole from another node)
// as n's last entry. The caller has checked n.free() >= len(cell)+slotSize.
func (n node) appendCell(cell []byte) {
	size := len(cell)
	doff := n.alloc(size)
	copy(n[doff:doff+size], cell)
	h := leafCellHeader
	if !n.isLeaf() {
		h = innerCellHead
	}
	kl := int(binary.LittleEndian.Uint16(cell))
	n.insertSlot(n.count(), doff, n[doff+h:doff+h+kl])
}

func (n node) head(i int) uint32       { return binary.BigEndian.Uint32(n[nodeHeader+i*slotSize+2:]) }
func (n node) setHead(i int, h uint32) { binary.BigEndian.PutUint32(n[nodeHeader+i*slotSize+2:], h) }
func (n node) prefix() int             { return n.u16(offPrefix) }
func (n node) lastInsert() int         { return n.u16(offLast) }
func (n node) setPrefix(p int)         { n.put16(offPrefix, p) }
func (n node) maxTrx() uint64          { return binary.LittleEndian.Uint64(n[offMaxTrx:]) }
func (n node) setMaxTrx(v uint64)      { binary.LittleEndian.PutUint64(n[offMaxTrx:], v) }
