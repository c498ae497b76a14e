package btree

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// BoundKind says whether a bound's key is in the range.
type BoundKind uint8

// Bound kinds. The zero Bound is Unbounded.
const (
	Unbounded BoundKind = iota
	Inclusive
	Exclusive
)

// Bound is one end of a range.
type Bound struct {
	Key  []byte
	Kind BoundKind
}

// Incl is an inclusive bound at key.
func Incl(key []byte) Bound { return Bound{Key: key, Kind: Inclusive} }

// Excl is an exclusive bound at key.
func Excl(key []byte) Bound { return Bound{Key: key, Kind: Exclusive} }

// IterOptions bound an iterator. The zero value iterates the whole tree.
type IterOptions struct {
	Lower, Upper Bound
	// Killed makes the iterator return killed entries too (see Kill); by
	// default it steps over them, as a PostgreSQL index scan ignores
	// LP_DEAD items (_bt_readpage with ignore_killed_tuples). Whoever
	// removes dead entries (vacuum's index pass) asks for them.
	Killed bool
}

// Iter walks the entries of a tree between its bounds, forward or backward.
// Position it with First, Last, SeekGE or SeekLT, then step with Next and
// Prev. Key and Value are copies, valid until the iterator moves.
//
// Between calls the iterator holds a pin on its leaf but no latch, so the
// caller may write to the tree while iterating; when the leaf changed
// meanwhile, the next step finds its place again by key (one more descent,
// visible in the meter). An iterator is used by one goroutine; Close it to
// release its pin.
type Iter struct {
	t      *Tree
	m      *cache.Meter // the pages' half of the Account NewIter was given
	tc     *TreeCounts  // and the tree's
	lo, hi Bound
	killed bool        // return killed entries too (IterOptions.Killed)
	pg     *cache.Page // pinned leaf of the current entry, nil if none
	mod    uint64      // pg's modification count when the entry was read
	maxTrx uint64      // pg's max trx id when the entry was read
	idx    int
	depth  int // depth of the leaves
	key    []byte
	val    []byte
	valid  bool
	err    error
	// isKilled: the current entry carried the killed mark when read.
	isKilled bool
	// loBuf and hiBuf hold the copies of the bounds' keys (lo.Key and
	// hi.Key when bounded), kept across InitIter.
	loBuf, hiBuf []byte
}

// NewIter returns an unpositioned iterator over the entries within o's
// bounds (nil: the whole tree). The bound keys are copied; a nil key in an
// Inclusive or Exclusive bound is the empty key. Every step of the
// iterator charges m, whose two halves NewIter takes once.
func (t *Tree) NewIter(m Account, o *IterOptions) *Iter {
	it := &Iter{key: make([]byte, 0, 32)}
	t.InitIter(it, m, o)
	return it
}

// InitIter makes it an unpositioned iterator over t's entries within o's
// bounds, as NewIter returns one, reusing the buffers it already has: a
// caller that iterates again and again keeps one Iter and initializes it
// for each range, which allocates nothing once its buffers have grown to
// the keys and values met. it may be the zero Iter, or one used before
// (over any tree), which InitIter closes first if it still holds a pin.
// Every key and value it returned before is invalid after.
func (t *Tree) InitIter(it *Iter, m Account, o *IterOptions) {
	it.drop()
	pm, tc := accounts(m)
	// Inside the iterator a nil key means "no key" (the edge of the tree),
	// so keys it holds are never nil, even when empty.
	key := it.key[:0]
	if key == nil {
		key = make([]byte, 0, 32)
	}
	*it = Iter{t: t, m: pm, tc: tc, key: key, val: it.val[:0], loBuf: it.loBuf, hiBuf: it.hiBuf}
	if o != nil {
		it.lo, it.loBuf = copyBound(o.Lower, it.loBuf)
		it.hi, it.hiBuf = copyBound(o.Upper, it.hiBuf)
		it.killed = o.Killed
	}
}

// copyBound returns a copy of b whose key, never nil when bounded, is
// appended to buf[:0], and the buffer to keep.
func copyBound(b Bound, buf []byte) (Bound, []byte) {
	if b.Kind == Unbounded {
		return Bound{}, buf
	}
	buf = append(buf[:0], b.Key...)
	if buf == nil {
		buf = []byte{}
	}
	return Bound{Key: buf, Kind: b.Kind}, buf
}

// nonNil returns key, or the empty key for nil.
func nonNil(key []byte) []byte {
	if key == nil {
		return []byte{}
	}
	return key
}

// Valid reports whether the iterator is at an entry.
func (it *Iter) Valid() bool { return it.valid }

// Key returns the current key.
func (it *Iter) Key() []byte { return it.key }

// Value returns the current value.
func (it *Iter) Value() []byte { return it.val }

// Err returns the error that stopped the iterator, if any.
func (it *Iter) Err() error { return it.err }

// Close releases the iterator's pin.
func (it *Iter) Close() error {
	it.drop()
	it.valid = false
	return it.err
}

func (it *Iter) drop() {
	if it.pg != nil {
		it.pg.Unpin(false)
		it.pg = nil
	}
}

func (it *Iter) fail(err error) bool {
	it.drop()
	it.valid = false
	it.err = err
	return false
}

func (it *Iter) exhausted() bool {
	it.drop()
	it.valid = false
	return false
}

// First moves to the first entry within the bounds.
func (it *Iter) First() bool {
	it.drop()
	it.err = nil
	if it.lo.Kind == Unbounded {
		return it.seekForward(nil, edgeFirst, false)
	}
	return it.seekForward(it.lo.Key, edgeKey, it.lo.Kind == Exclusive)
}

// Last moves to the last entry within the bounds.
func (it *Iter) Last() bool {
	it.drop()
	it.err = nil
	if it.hi.Kind == Unbounded {
		return it.seekBackward(nil, edgeLast, false)
	}
	return it.seekBackward(it.hi.Key, edgeKey, it.hi.Kind == Exclusive)
}

// SeekGE moves to the first entry at or above key (and within the bounds).
func (it *Iter) SeekGE(key []byte) bool {
	if it.lo.Kind != Unbounded && bytes.Compare(key, it.lo.Key) <= 0 {
		return it.First()
	}
	it.drop()
	it.err = nil
	return it.seekForward(nonNil(key), edgeKey, false)
}

// SeekLT moves to the last entry below key (and within the bounds).
func (it *Iter) SeekLT(key []byte) bool {
	if it.hi.Kind != Unbounded && bytes.Compare(key, it.hi.Key) > 0 {
		return it.Last()
	}
	it.drop()
	it.err = nil
	return it.seekBackward(nonNil(key), edgeKey, true)
}

// Next moves to the next entry.
func (it *Iter) Next() bool {
	if !it.valid {
		return false
	}
	pg := it.pg
	pg.RLatch()
	if pg.ModCount() != it.mod {
		// The leaf changed since we read our entry: find our place again.
		pg.RUnlatch()
		it.drop()
		return it.seekForward(it.key, edgeKey, true)
	}
	it.pg = nil
	return it.forwardFrom(pg, it.idx+1)
}

// Prev moves to the previous entry.
func (it *Iter) Prev() bool {
	if !it.valid {
		return false
	}
	pg := it.pg
	pg.RLatch()
	if pg.ModCount() != it.mod {
		pg.RUnlatch()
		it.drop()
		return it.seekBackward(it.key, edgeKey, true)
	}
	it.pg = nil
	i := it.idx - 1
	n := node(pg.Data())
	for i >= 0 && it.skip(n, i) {
		if it.belowLower(n.key(i)) {
			pg.RUnlatch()
			pg.Unpin(false)
			return it.exhausted()
		}
		i--
	}
	if i >= 0 {
		return it.landBackward(pg, i)
	}
	// Every entry left of ours on this leaf is killed: the search goes
	// on to the left leaves, whose keys are all below ours.
	return it.scanBackward(pg, it.key, true)
}

// skip reports whether entry i of leaf n is a killed entry the iterator
// steps over.
func (it *Iter) skip(n node, i int) bool { return !it.killed && n.killed(i) }

// aboveUpper reports whether key is past the upper bound.
func (it *Iter) aboveUpper(key []byte) bool {
	if it.hi.Kind == Unbounded {
		return false
	}
	c := bytes.Compare(key, it.hi.Key)
	return c > 0 || (c == 0 && it.hi.Kind == Exclusive)
}

// belowLower reports whether key is before the lower bound.
func (it *Iter) belowLower(key []byte) bool {
	if it.lo.Kind == Unbounded {
		return false
	}
	c := bytes.Compare(key, it.lo.Key)
	return c < 0 || (c == 0 && it.lo.Kind == Exclusive)
}

// seekForward descends to the leaf covering key (or the first leaf) and
// moves to the first entry at or above key (above, if strict).
func (it *Iter) seekForward(key []byte, edge int, strict bool) bool {
	pg, depth, err := it.t.descend(it.m, it.tc, nil, key, edge, false)
	if err != nil {
		return it.fail(err)
	}
	it.depth = depth
	if edge == edgeFirst {
		return it.forwardFrom(pg, 0)
	}
	return it.scanForward(pg, key, strict)
}

// scanForward finds, from the latched leaf pg rightward, the first entry
// at or above key (above, if strict; the first entry at all if key is nil).
func (it *Iter) scanForward(pg *cache.Page, key []byte, strict bool) bool {
	i := 0
	if key != nil {
		var eq bool
		i, eq = node(pg.Data()).search(key)
		if eq && strict {
			i++
		}
	}
	return it.forwardFrom(pg, i)
}

// forwardFrom finds, from entry i of the latched leaf pg rightward, the
// first entry not skipped, stepping over killed ones (and stopping at
// the first past the upper bound: no entry beyond it is wanted).
func (it *Iter) forwardFrom(pg *cache.Page, i int) bool {
	for {
		n := node(pg.Data())
		for i < n.count() && it.skip(n, i) {
			if it.aboveUpper(n.key(i)) {
				pg.RUnlatch()
				pg.Unpin(false)
				return it.exhausted()
			}
			i++
		}
		if i < n.count() {
			return it.landForward(pg, i)
		}
		next := n.next()
		if next == 0 {
			pg.RUnlatch()
			pg.Unpin(false)
			return it.exhausted()
		}
		nx, err := it.t.pool.Fetch(it.m, it.t.id(next))
		if err != nil {
			pg.RUnlatch()
			pg.Unpin(false)
			return it.fail(err)
		}
		nx.RLatch() // left to right: the latch order writers use too
		visit(it.tc, it.depth)
		pg.RUnlatch()
		pg.Unpin(false)
		if err := it.checkLeaf(nx); err != nil {
			nx.RUnlatch()
			nx.Unpin(false)
			return it.fail(err)
		}
		pg, i = nx, 0
	}
}

func (it *Iter) checkLeaf(pg *cache.Page) error {
	if page.KindOf(pg.Data()) != page.KindBTreeLeaf {
		return fmt.Errorf("%w: leaf link leads to page %s of kind %s", ErrCorruptTree, pg.ID(), page.KindOf(pg.Data()))
	}
	return nil
}

// landForward makes entry i of latched leaf pg current, then checks the
// upper bound.
func (it *Iter) landForward(pg *cache.Page, i int) bool {
	it.capture(pg, i)
	if it.hi.Kind != Unbounded {
		c := bytes.Compare(it.key, it.hi.Key)
		if c > 0 || (c == 0 && it.hi.Kind == Exclusive) {
			return it.exhausted()
		}
	}
	return true
}

func (it *Iter) landBackward(pg *cache.Page, i int) bool {
	it.capture(pg, i)
	if it.lo.Kind != Unbounded {
		c := bytes.Compare(it.key, it.lo.Key)
		if c < 0 || (c == 0 && it.lo.Kind == Exclusive) {
			return it.exhausted()
		}
	}
	return true
}

// capture copies entry i of the latched leaf pg, keeps the pin and drops
// the latch.
// Changed reports whether the current entry's leaf has been latched
// exclusively since the entry was read, so that the entry may be out of
// date (a false positive is possible: an exclusive latch released without
// a change counts). A caller that locks the entry's row after reading it
// asks this to learn whether it must read the row again.
func (it *Iter) Changed() bool {
	if !it.valid || it.pg == nil {
		return false
	}
	it.pg.RLatch()
	changed := it.pg.ModCount() != it.mod
	it.pg.RUnlatch()
	return changed
}

// PageMaxTrx returns the max trx id (InnoDB's PAGE_MAX_TRX_ID, see
// node.go) the current entry's leaf had when the entry was read: every
// write to the leaf through InsertTrxIn or UpdateTrxIn up to then was by a
// transaction id at most this.
func (it *Iter) PageMaxTrx() uint64 { return it.maxTrx }

func (it *Iter) capture(pg *cache.Page, i int) {
	n := node(pg.Data())
	it.key = append(it.key[:0], n.key(i)...)
	it.val = append(it.val[:0], n.val(i)...)
	it.idx = i
	it.isKilled = n.killed(i)
	it.mod = pg.ModCount()
	it.maxTrx = n.maxTrx()
	it.pg = pg
	it.valid = true
	pg.RUnlatch()
}

// seekBackward descends to the leaf covering key (or the last leaf) and
// moves to the last entry at or below key (below, if strict).
func (it *Iter) seekBackward(key []byte, edge int, strict bool) bool {
	for {
		pg, depth, err := it.t.descend(it.m, it.tc, nil, key, edge, false)
		if err != nil {
			return it.fail(err)
		}
		it.depth = depth
		if edge == edgeLast {
			if c := node(pg.Data()).count(); c > 0 && !it.skip(node(pg.Data()), c-1) {
				return it.landBackward(pg, c-1)
			}
		}
		ok, restart := it.scanBackwardOnce(pg, key, strict)
		if !restart {
			return ok
		}
	}
}

// scanBackward is scanBackwardOnce, descending again when it must.
func (it *Iter) scanBackward(pg *cache.Page, key []byte, strict bool) bool {
	ok, restart := it.scanBackwardOnce(pg, key, strict)
	if restart {
		return it.seekBackward(key, edgeKey, strict)
	}
	return ok
}

// scanBackwardOnce finds, from the latched leaf pg leftward, the last entry
// below key (at or below, if not strict; the last entry at all if key is
// nil). Moving left goes against the writers' latch order, so it only
// tries the left leaf's latch; if that fails it lets go of pg, waits for
// the left leaf, and checks that it is still pg's left neighbour. If not,
// it asks the caller to descend again (restart).
func (it *Iter) scanBackwardOnce(pg *cache.Page, key []byte, strict bool) (ok, restart bool) {
	for {
		n := node(pg.Data())
		i := n.count() - 1
		if key != nil {
			var eq bool
			i, eq = n.search(key)
			if !(eq && !strict) {
				i--
			}
		}
		for i >= 0 && it.skip(n, i) {
			if it.belowLower(n.key(i)) {
				pg.RUnlatch()
				pg.Unpin(false)
				return it.exhausted(), false
			}
			i--
		}
		if i >= 0 {
			return it.landBackward(pg, i), false
		}
		prev := n.prev()
		if prev == 0 {
			pg.RUnlatch()
			pg.Unpin(false)
			return it.exhausted(), false
		}
		pv, err := it.t.pool.Fetch(it.m, it.t.id(prev))
		if err != nil {
			pg.RUnlatch()
			pg.Unpin(false)
			return it.fail(err), false
		}
		if pv.TryRLatch() {
			visit(it.tc, it.depth)
			pg.RUnlatch()
			pg.Unpin(false)
		} else {
			cur := pg.ID().Page
			pg.RUnlatch()
			pg.Unpin(false)
			pv.RLatch()
			visit(it.tc, it.depth)
			if page.KindOf(pv.Data()) != page.KindBTreeLeaf || node(pv.Data()).next() != cur {
				pv.RUnlatch()
				pv.Unpin(false)
				return false, true
			}
		}
		if err := it.checkLeaf(pv); err != nil {
			pv.RUnlatch()
			pv.Unpin(false)
			return it.fail(err), false
		}
		pg = pv
	}
}

// Kill sets the killed mark on the iterator's current entry: its caller
// found that the row versions the entry names are dead to every snapshot
// there is or will be (PostgreSQL's kill_prior_tuple), so that later
// iterators step over it without asking the caller again, until the
// entry is removed (vacuum deletes it as any entry). It is nbtree's
// _bt_killitems for one entry: the leaf is latched again (exclusively
// here: the mark is a logged page change, one redo write of two bytes
// in a mini-transaction of its own, as a hint bit is with wal_log_hints,
// since every page change must reach the log for the remote tier's LSN
// check) and the mark set only if the entry is still there. When the
// leaf is unchanged since the entry was read the entry is at its slot;
// otherwise the leaf is searched for its key, and the mark is given up
// when the key left it (a split moved it, or it was removed), as
// _bt_killitems gives up on a page whose LSN changed.
//
// It reports whether it set the mark (false: the entry was already
// killed or has gone). The iterator keeps its place: its own change to
// the leaf does not count as one (Changed stays false and the next step
// needs no descent) unless another writer changed the leaf too. The
// extra latch and pin are charged as one page request.
func (it *Iter) Kill() (bool, error) {
	if !it.valid || it.pg == nil {
		return false, nil
	}
	// The mini-transaction takes over a pin of its own; the iterator's
	// stays.
	pg, err := it.t.pool.Fetch(it.m, it.pg.ID())
	if err != nil {
		return false, err
	}
	mt := it.t.pool.BeginMtr(it.m)
	mt.Latch(pg)
	n := node(pg.Data())
	same := pg.ModCount() == it.mod
	i := -1
	switch {
	case same:
		i = it.idx
	case page.KindOf(pg.Data()) == page.KindBTreeLeaf:
		if j, eq := n.search(it.key); eq {
			i = j
		}
	}
	set := i >= 0 && !n.killed(i)
	if set {
		off := n.slot(i)
		var b [2]byte
		binary.LittleEndian.PutUint16(b[:], uint16(n.u16(off+2)|killedBit))
		mt.Write(pg, off+2, b[:])
	}
	mt.Release(pg, set)
	mt.Commit()
	if set && same {
		// Exactly one exclusive release since the entry was read (the
		// mark's) means nobody else changed the leaf: the iterator's
		// place is still good.
		it.pg.RLatch()
		if it.pg.ModCount() == it.mod+1 {
			it.mod++
		}
		it.pg.RUnlatch()
	}
	return set, nil
}

// Killed reports whether the current entry carried the killed mark when
// it was read (only an iterator with IterOptions.Killed meets one).
func (it *Iter) Killed() bool { return it.isKilled }
