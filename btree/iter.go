package btree

import (
	"bytes"
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
	pg     *cache.Page // pinned leaf of the current entry, nil if none
	mod    uint64      // pg's modification count when the entry was read
	maxTrx uint64      // pg's max trx id when the entry was read
	idx    int
	depth  int // depth of the leaves
	key    []byte
	val    []byte
	valid  bool
	err    error
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
	if it.idx+1 < node(pg.Data()).count() {
		return it.landForward(pg, it.idx+1)
	}
	return it.scanForward(pg, it.key, true)
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
	if it.idx > 0 {
		return it.landBackward(pg, it.idx-1)
	}
	return it.scanBackward(pg, it.key, true)
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
		if node(pg.Data()).count() > 0 {
			return it.landForward(pg, 0)
		}
		return it.scanForward(pg, nil, false)
	}
	return it.scanForward(pg, key, strict)
}

// scanForward finds, from the latched leaf pg rightward, the first entry
// at or above key (above, if strict; the first entry at all if key is nil).
func (it *Iter) scanForward(pg *cache.Page, key []byte, strict bool) bool {
	for {
		n := node(pg.Data())
		i := 0
		if key != nil {
			var eq bool
			i, eq = n.search(key)
			if eq && strict {
				i++
			}
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
		pg = nx
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
			if c := node(pg.Data()).count(); c > 0 {
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
