package heap

import (
	"errors"
	"fmt"
	"slices"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// Row versions, as PostgreSQL's heap keeps them (access/heap/heapam.c). A
// heap used through these methods holds versioned tuples (tuple.go): each
// insert writes a version stamped with its transaction (xmin), a delete or
// a row lock stamps the version's xmax, and an update stamps the old
// version's xmax and writes a new version, chained from the old one by its
// ctid. Nothing is removed until pruning (prune.go) finds versions dead to
// every snapshot. Rolling a transaction back changes nothing here: its
// versions stay, and the commit log's "aborted" makes them invisible (its
// inserts dead, its xmax ignored), as in PostgreSQL.
//
// The heap-only tuple (HOT) update: when the caller says no indexed column
// changed (hotOK) and the new version fits on the old version's page, the
// new version is a heap-only tuple (HEAP_ONLY_TUPLE) on that page and the
// old one is marked HEAP_HOT_UPDATED: the indexes keep naming the chain's
// root slot, and a fetch walks the chain from there (FetchVersion, as
// heap_hot_search_buffer). This is heap_update's decision: use_hot_update
// when the new tuple goes to the same buffer and
// HeapDetermineColumnsInfo found no indexed column modified. A new version
// that fits on the page but changed an indexed column still goes on the
// same page, as in PostgreSQL, without the HOT flags: it needs index
// entries of its own. One that does not fit goes to another page (a
// higher one, the heap's latch order) and is not heap-only either.
//
// The caller locks rows (the engine's row locks) and decides conflicts:
// these methods stamp what they are told. Versioned and plain rows must
// not be mixed in one heap: Fetch, Update and Delete see a versioned
// tuple's header as row bytes.
//
// Every change is logged: a new version is a heap-insert of its cell
// (header and row), an xmax change is heap-xmax (the fields it writes),
// and hint bits are heap-hint (redo.go).

// ErrNotVersion means a row pointer names a slot that holds no versioned
// tuple (a redirect or dead slot, or a cell shorter than a tuple header).
var ErrNotVersion = errors.New("heap: not a versioned tuple")

// MaxVersionSize returns the longest row a versioned heap accepts: the
// heap's MaxRowSize less the tuple header.
func (h *Heap) MaxVersionSize() int { return h.maxRow - TupleHeaderSize }

// InsertVersion stores row as a new version created by transaction xid
// (xmin xid, no xmax: HEAP_XMAX_INVALID) and returns its pointer, whose
// slot is the root of the row's HOT chains to come. It goes where Insert
// puts a row; it is one mini-transaction.
func (h *Heap) InsertVersion(m Account, xid uint64, row []byte) (RowPtr, error) {
	pm, _ := accounts(m)
	mt := h.pool.BeginMtr(pm)
	ptr, err := h.InsertVersionIn(m, mt, xid, row)
	mt.Commit()
	return ptr, err
}

// InsertVersionIn is InsertVersion in the caller's mini-transaction (see
// InsertIn for what that asks).
func (h *Heap) InsertVersionIn(m Account, mt *cache.Mtr, xid uint64, row []byte) (RowPtr, error) {
	n := TupleHeaderSize + len(row)
	if n > h.maxRow {
		return RowPtr{}, h.tooLarge(n)
	}
	pg, fr, err := h.place(mt, n, 0)
	if err != nil {
		return RowPtr{}, fmt.Errorf("heap: insert version in space %d: %w", h.space, err)
	}
	hc := heapCounts(m)
	vr, err := h.vmPrepare(mt, hc, pg)
	var ptr RowPtr
	var cat uint8
	if err == nil {
		ptr, cat, err = h.insertVersionLatched(mt, pg, TupleHeader{Xmin: xid, Infomask: HeapXmaxInvalid}, row)
	}
	if err == nil {
		vmClearPage(mt, pg)
	}
	mt.Release(pg, err == nil)
	if err != nil {
		if fr.pg != nil {
			fr.pg.Unpin(false)
		}
		vr.unpin()
		return RowPtr{}, fmt.Errorf("heap: insert version in space %d: %w", h.space, err)
	}
	if fr.pg != nil {
		h.fsmSet(mt, fr, cat)
	}
	h.vmClear(mt, hc, vr, vmValidBits)
	return ptr, nil
}

// insertVersionLatched writes a version with header th (its ctid set here
// to its own pointer) and row into pg, which has room for it.
func (h *Heap) insertVersionLatched(mt *cache.Mtr, pg *cache.Page, th TupleHeader, row []byte) (RowPtr, uint8, error) {
	b := hpage(pg.Data())
	th.Ctid = RowPtr{Page: pg.ID().Page, Slot: uint16(b.insertSlot())}
	sp := scratchPool.Get().(*[]byte)
	cell := appendTuple((*sp)[:0], th, row)
	ptr, cat, err := h.insertLatched(mt, pg, cell)
	scratchPool.Put(sp)
	if err == nil && ptr != th.Ctid {
		return ptr, cat, h.corrupt(ptr.Page, "version went to slot %d, expected %d", ptr.Slot, th.Ctid.Slot)
	}
	return ptr, cat, err
}

// versionAt checks that pg (latched) is a heap page whose slot ptr.Slot
// holds a versioned tuple, and returns it.
func (h *Heap) versionAt(pg *cache.Page, ptr RowPtr) (hpage, tuple, error) {
	b := hpage(pg.Data())
	if k := page.KindOf(b); k != page.KindHeap {
		return nil, nil, h.notFound(ptr, "page %d has kind %s, not %s", ptr.Page, k, page.KindHeap)
	}
	if !b.headerOK() {
		return nil, nil, h.badHeader(ptr.Page, b)
	}
	if int(ptr.Slot) >= b.nslots() {
		return nil, nil, h.notFound(ptr, "page %d has %d slots", ptr.Page, b.nslots())
	}
	st, _ := b.lp(int(ptr.Slot))
	if st == lpUnused {
		return nil, nil, h.notFound(ptr, "slot %d is unused", ptr.Slot)
	}
	t := b.tupleAt(int(ptr.Slot))
	if t == nil {
		return nil, nil, fmt.Errorf("%w: %s in space %d: slot %d is %s", ErrNotVersion, ptr, h.space, ptr.Slot, st)
	}
	return b, t, nil
}

// DeleteVersion stamps the version ptr names as deleted by xid (heap_delete:
// xmax xid, HEAP_KEYS_UPDATED, the xmax hint bits cleared). It is one
// mini-transaction.
func (h *Heap) DeleteVersion(m Account, ptr RowPtr, xid uint64) error {
	return h.setXmax(m, ptr, xid, HeapKeysUpdated, 0, vmValidBits)
}

// LockVersion stamps the version ptr names as locked by xid
// (heap_lock_tuple for FOR UPDATE: xmax xid with HEAP_XMAX_LOCK_ONLY and
// HEAP_XMAX_EXCL_LOCK), which a reader's snapshot ignores. One
// mini-transaction.
func (h *Heap) LockVersion(m Account, ptr RowPtr, xid uint64) error {
	return h.setXmax(m, ptr, xid, 0, HeapXmaxLockOnly|HeapXmaxExclLock, VMAllFrozen)
}

// setXmax stamps xmax and clears vmBits of the page's visibility map
// bits (with PD_ALL_VISIBLE when they include all-visible).
func (h *Heap) setXmax(m Account, ptr RowPtr, xid uint64, im2, im uint16, vmBits uint8) error {
	if err := h.checkPtr(ptr); err != nil {
		return err
	}
	pm, hc := accounts(m)
	mt := h.pool.BeginMtr(pm)
	defer mt.Commit()
	pg, err := h.pool.Fetch(mt.Meter(), h.id(ptr.Page))
	if err != nil {
		return fmt.Errorf("heap: set xmax of %s in space %d: %w", ptr, h.space, err)
	}
	mt.Latch(pg)
	_, t, err := h.versionAt(pg, ptr)
	if err != nil {
		mt.Release(pg, false)
		return err
	}
	vr, err := h.vmPrepare(mt, hc, pg)
	if err != nil {
		mt.Release(pg, false)
		return err
	}
	old := t.header()
	heapXmax(mt, pg, int(ptr.Slot), xid, old.Ctid,
		old.Infomask2&^(HeapHotUpdated|HeapKeysUpdated)|im2,
		old.Infomask&^xmaxBits|im)
	if im&HeapXmaxLockOnly == 0 {
		h.setPrunable(ptr.Page, xid)
	}
	if vmBits&VMAllVisible != 0 {
		vmClearPage(mt, pg)
	}
	mt.Release(pg, true)
	h.vmClear(mt, hc, vr, vmBits)
	return nil
}

// UpdateVersion writes row as the version after the one ptr names,
// created by xid, and stamps the old version's xmax with xid and its ctid
// with the new version's pointer (heap_update). hotOK says no indexed
// column changed: then, if the new version fits on the old one's page, it
// is a heap-only tuple and hot is true (the caller's indexes are not
// touched). Otherwise the caller must add index entries for newPtr. It is
// one mini-transaction: both versions change in one redo record.
func (h *Heap) UpdateVersion(m Account, ptr RowPtr, xid uint64, row []byte, hotOK bool) (newPtr RowPtr, hot bool, err error) {
	pm, _ := accounts(m)
	mt := h.pool.BeginMtr(pm)
	newPtr, hot, err = h.UpdateVersionIn(m, mt, ptr, xid, row, hotOK)
	mt.Commit()
	return newPtr, hot, err
}

// UpdateVersionIn is UpdateVersion in the caller's mini-transaction (see
// InsertIn and UpdateIn for what that asks).
func (h *Heap) UpdateVersionIn(m Account, mt *cache.Mtr, ptr RowPtr, xid uint64, row []byte, hotOK bool) (RowPtr, bool, error) {
	n := TupleHeaderSize + len(row)
	if n > h.maxRow {
		return ptr, false, h.tooLarge(n)
	}
	if err := h.checkPtr(ptr); err != nil {
		return ptr, false, err
	}
	pg, err := h.pool.Fetch(mt.Meter(), h.id(ptr.Page))
	if err != nil {
		return ptr, false, fmt.Errorf("heap: update version %s in space %d: %w", ptr, h.space, err)
	}
	mt.Latch(pg)
	newPtr, hot, err := h.updateVersionLatched(mt, heapCounts(m), pg, ptr, xid, row, hotOK)
	mt.Release(pg, err == nil)
	return newPtr, hot, err
}

func (h *Heap) updateVersionLatched(mt *cache.Mtr, hc *HeapCounts, pg *cache.Page, ptr RowPtr, xid uint64, row []byte, hotOK bool) (RowPtr, bool, error) {
	b, t, err := h.versionAt(pg, ptr)
	if err != nil {
		return ptr, false, err
	}
	old := t.header()
	n := TupleHeaderSize + len(row)
	nh := TupleHeader{Xmin: xid, Infomask: HeapXmaxInvalid | HeapUpdated}
	// The visibility map pages of both pages are pinned before either
	// page changes, and cleared last (map latches come after FSM ones).
	vr, err := h.vmPrepare(mt, hc, pg)
	if err != nil {
		return ptr, false, err
	}
	var vq vmRef
	var newPtr RowPtr
	hot := false
	if b.fits(n) {
		hot = hotOK
		if hot {
			nh.Infomask2 = HeapOnlyTuple
		}
		// The page's FSM byte is left as an insert leaves it: high.
		newPtr, _, err = h.insertVersionLatched(mt, pg, nh, row)
		if err != nil {
			vr.unpin()
			return ptr, false, err
		}
	} else {
		q, fq, err := h.place(mt, n, ptr.Page)
		if err != nil {
			vr.unpin()
			return ptr, false, fmt.Errorf("heap: update version %s in space %d: %w", ptr, h.space, err)
		}
		vq, err = h.vmPrepare(mt, hc, q)
		var qCat uint8
		if err == nil {
			newPtr, qCat, err = h.insertVersionLatched(mt, q, nh, row)
		}
		if err == nil {
			vmClearPage(mt, q)
		}
		mt.Release(q, err == nil)
		if err != nil {
			if fq.pg != nil {
				fq.pg.Unpin(false)
			}
			vr.unpin()
			vq.unpin()
			return ptr, false, err
		}
		if fq.pg != nil {
			h.fsmSet(mt, fq, qCat)
		}
	}
	im2 := old.Infomask2 &^ (HeapHotUpdated | HeapKeysUpdated)
	if hot {
		im2 |= HeapHotUpdated
	}
	heapXmax(mt, pg, int(ptr.Slot), xid, newPtr, im2, old.Infomask&^xmaxBits)
	h.setPrunable(ptr.Page, xid)
	vmClearPage(mt, pg)
	h.vmClear(mt, hc, vr, vmValidBits)
	h.vmClear(mt, hc, vq, vmValidBits)
	if hc != nil {
		if hot {
			hc.HeapHOTUpdates++
		} else {
			hc.HeapNonHOTUpdates++
		}
	}
	return newPtr, hot, nil
}

// ReadVersion copies the version ptr names, whatever its visibility
// (PostgreSQL's SnapshotAny), into dst[:0] and returns its header and row.
// It follows no chain: a redirect or dead slot is ErrNotVersion.
func (h *Heap) ReadVersion(m Account, ptr RowPtr, dst []byte) (TupleHeader, []byte, error) {
	dst = dst[:0]
	if err := h.checkPtr(ptr); err != nil {
		return TupleHeader{}, dst, err
	}
	pm, hc := accounts(m)
	pg, err := h.pool.Fetch(pm, h.id(ptr.Page))
	if err != nil {
		return TupleHeader{}, dst, fmt.Errorf("heap: read version %s in space %d: %w", ptr, h.space, err)
	}
	if hc != nil {
		hc.HeapFetches++
	}
	pg.RLatch()
	var th TupleHeader
	_, t, err := h.versionAt(pg, ptr)
	if err == nil {
		th = t.header()
		dst = append(dst, t[TupleHeaderSize:]...)
	}
	pg.RUnlatch()
	pg.Unpin(false)
	return th, dst, err
}

// ReadChainVersion is ReadVersion for a caller walking a version chain
// itself: a redirect left by pruning is followed to the slot it names
// (at, the version's own pointer), and a slot that holds no version any
// more (dead or unused: pruned or vacuumed) is ok false, the chain's end
// as far as this pointer goes. Cost: one page request, HeapFetches+1.
func (h *Heap) ReadChainVersion(m Account, ptr RowPtr, dst []byte) (th TupleHeader, row []byte, at RowPtr, ok bool, err error) {
	row = dst[:0]
	if err := h.checkPtr(ptr); err != nil {
		return th, row, ptr, false, err
	}
	pm, hc := accounts(m)
	pg, err := h.pool.Fetch(pm, h.id(ptr.Page))
	if err != nil {
		return th, row, ptr, false, fmt.Errorf("heap: read version %s in space %d: %w", ptr, h.space, err)
	}
	if hc != nil {
		hc.HeapFetches++
	}
	pg.RLatch()
	at = ptr
	b := hpage(pg.Data())
	switch {
	case page.KindOf(b) != page.KindHeap:
		err = h.notFound(ptr, "page %d has kind %s, not %s", ptr.Page, page.KindOf(b), page.KindHeap)
	case !b.headerOK():
		err = h.badHeader(ptr.Page, b)
	case int(ptr.Slot) >= b.nslots():
		// Trimmed off after its slot became unused.
	default:
		st, to := b.lp(int(ptr.Slot))
		if st == lpRedirect {
			at.Slot = uint16(to)
			if to >= b.nslots() {
				break
			}
			st, _ = b.lp(to)
		}
		if st != lpNormal {
			break
		}
		t := b.tupleAt(int(at.Slot))
		if t == nil {
			err = fmt.Errorf("%w: %s in space %d", ErrNotVersion, at, h.space)
			break
		}
		th, ok = t.header(), true
		row = append(row, t[TupleHeaderSize:]...)
	}
	pg.RUnlatch()
	pg.Unpin(false)
	return th, row, at, ok, err
}

// slotHint is hint bits learned for one slot's tuple, with the xmin and
// xmax they were learned for (so that they are set only on that tuple).
type slotHint struct {
	slot       int
	xmin, xmax uint64
	bits       uint16
}

// FetchVersion returns the version of the row whose HOT chain starts at
// root that snap sees: heap_hot_search_buffer. It reads root's page, and
// from root (following a redirect left by pruning) walks the chain of
// heap-only versions through their ctids while the versions are
// HEAP_HOT_UPDATED and each one's xmin is the xmax of the one before,
// testing each with HeapTupleSatisfiesMVCC. It copies the visible
// version's row into dst[:0] and returns it with its pointer; ok is false
// when no version of the chain is visible (or root's slot is unused or
// dead, or holds a heap-only tuple: a stale index entry).
//
// Hint bits learned on the way are set on the page afterwards, in a
// mini-transaction of their own under the page's exclusive latch (see
// setHints). Cost: one page request, HeapFetches+1, HeapVersionsRead+1
// per version tested.
func (h *Heap) FetchVersion(m Account, root RowPtr, snap *Snapshot, cs CommitStatus, dst []byte) (row []byte, at RowPtr, ok bool, err error) {
	_, row, at, ok, err = h.FetchVersionHeader(m, root, snap, cs, dst)
	return row, at, ok, err
}

// FetchVersionHeader is FetchVersion that also returns the visible
// version's header (zero when ok is false).
func (h *Heap) FetchVersionHeader(m Account, root RowPtr, snap *Snapshot, cs CommitStatus, dst []byte) (th TupleHeader, row []byte, at RowPtr, ok bool, err error) {
	th, row, at, ok, _, err = h.FetchVersionAllDead(m, root, snap, cs, 0, dst)
	return th, row, at, ok, err
}

// FetchVersionAllDead is FetchVersionHeader that also says, when no
// version is visible and horizon is not 0, whether the whole chain is
// dead to every snapshot: each version it tested is dead for horizon
// (HEAPTUPLE_DEAD: its deleter committed below horizon, or its inserter
// aborted), or root names no chain any more (its line pointer dead or
// unused, or a heap-only tuple). It is heap_hot_search_buffer's
// all_dead, which lets an index scan kill the entry that led here
// (kill_prior_tuple); horizon is the oldest xmin of every snapshot
// (PostgreSQL's GlobalVisState), as for pruning.
func (h *Heap) FetchVersionAllDead(m Account, root RowPtr, snap *Snapshot, cs CommitStatus, horizon uint64, dst []byte) (th TupleHeader, row []byte, at RowPtr, ok, allDead bool, err error) {
	dst = dst[:0]
	if err := h.checkPtr(root); err != nil {
		return th, dst, RowPtr{}, false, false, err
	}
	pm, hc := accounts(m)
	pg, err := h.pool.Fetch(pm, h.id(root.Page))
	if err != nil {
		return th, dst, RowPtr{}, false, false, fmt.Errorf("heap: fetch version %s in space %d: %w", root, h.space, err)
	}
	if hc != nil {
		hc.HeapFetches++
	}
	pg.RLatch()
	var stack [4]slotHint
	slot, hints, allDead, err := h.hotSearch(pg, hc, root, snap, cs, horizon, stack[:0])
	if err == nil && slot >= 0 {
		t := hpage(pg.Data()).tupleAt(slot)
		th = t.header()
		dst = append(dst, t[TupleHeaderSize:]...)
		at, ok = RowPtr{Page: root.Page, Slot: uint16(slot)}, true
	}
	pg.RUnlatch()
	if len(hints) > 0 && err == nil {
		h.setHints(pm, hc, pg, hints)
		return th, dst, at, ok, allDead, nil
	}
	pg.Unpin(false)
	return th, dst, at, ok, allDead, err
}

// ChainVersion is one version of a HOT chain (HotChain): its pointer,
// header and row.
type ChainVersion struct {
	At     RowPtr
	Header TupleHeader
	Row    []byte
}

// HotChain returns the versions of the HOT chain whose index entry names
// root, in chain order, read under one shared latch of root's page, so
// that no prune changes the chain while it is read (the walk
// heap_hot_search_buffer makes, without a snapshot). root's line pointer
// state is returned too: "normal" or "redirect" when the chain has
// versions, "dead" (pruned, its index entries not yet removed by vacuum)
// or "unused" (no tuple: an index entry naming it is stale) when it has
// none; a root that holds a heap-only tuple is a stale entry too: its
// state is "heap-only" and no version is returned. Rows are fresh copies.
// Cost: one page request, HeapFetches+1.
func (h *Heap) HotChain(m Account, root RowPtr) (state string, vs []ChainVersion, err error) {
	if err := h.checkPtr(root); err != nil {
		return "", nil, err
	}
	pm, hc := accounts(m)
	pg, err := h.pool.Fetch(pm, h.id(root.Page))
	if err != nil {
		return "", nil, fmt.Errorf("heap: read chain %s in space %d: %w", root, h.space, err)
	}
	defer pg.Unpin(false)
	if hc != nil {
		hc.HeapFetches++
	}
	pg.RLatch()
	defer pg.RUnlatch()
	b := hpage(pg.Data())
	if k := page.KindOf(b); k != page.KindHeap {
		return "", nil, h.notFound(root, "page %d has kind %s, not %s", root.Page, k, page.KindHeap)
	}
	if !b.headerOK() {
		return "", nil, h.badHeader(root.Page, b)
	}
	slot := int(root.Slot)
	if slot >= b.nslots() {
		return lpUnused.String(), nil, nil
	}
	st, _ := b.lp(slot)
	state = st.String()
	atStart := true
	var priorXmax uint64
	for range b.nslots() + 1 {
		if slot >= b.nslots() {
			return state, vs, nil
		}
		st, to := b.lp(slot)
		switch st {
		case lpRedirect:
			if !atStart {
				return state, vs, nil
			}
			slot, atStart = to, false
			continue
		case lpUnused, lpDead:
			return state, vs, nil
		}
		t := b.tupleAt(slot)
		if t == nil {
			return state, vs, h.corrupt(root.Page, "slot %d of a HOT chain holds no versioned tuple", slot)
		}
		th := t.header()
		if atStart && th.HeapOnly() {
			return "heap-only", nil, nil
		}
		if priorXmax != 0 && th.Xmin != priorXmax {
			return state, vs, nil
		}
		vs = append(vs, ChainVersion{At: RowPtr{Page: root.Page, Slot: uint16(slot)}, Header: th,
			Row: append([]byte(nil), t[TupleHeaderSize:]...)})
		if !th.HotUpdated() || th.Ctid.Page != root.Page {
			return state, vs, nil
		}
		slot, priorXmax, atStart = int(th.Ctid.Slot), th.Xmax, false
	}
	return state, vs, h.corrupt(root.Page, "HOT chain from slot %d loops", root.Slot)
}

// hotSearch walks root's HOT chain on pg (latched) and returns the slot
// of the version snap sees, or -1, and hints with the hints it learned
// appended (returned rather than appended through a pointer, so that a
// caller's stack array stays on its stack). With horizon not 0 and no
// version visible, allDead says whether every version tested is dead for
// horizon (heap_hot_search_buffer's all_dead, which starts true and
// stays so when root's line pointer names no chain).
func (h *Heap) hotSearch(pg *cache.Page, hc *HeapCounts, root RowPtr, snap *Snapshot, cs CommitStatus, horizon uint64, hints []slotHint) (slot int, _ []slotHint, allDead bool, _ error) {
	b := hpage(pg.Data())
	if k := page.KindOf(b); k != page.KindHeap {
		return -1, hints, false, h.notFound(root, "page %d has kind %s, not %s", root.Page, k, page.KindHeap)
	}
	if !b.headerOK() {
		return -1, hints, false, h.badHeader(root.Page, b)
	}
	allDead = horizon != 0
	slot = int(root.Slot)
	atStart := true
	var priorXmax uint64
	for range b.nslots() + 1 {
		if slot >= b.nslots() {
			return -1, hints, allDead, nil
		}
		st, to := b.lp(slot)
		switch st {
		case lpRedirect:
			if !atStart {
				return -1, hints, allDead, nil
			}
			slot, atStart = to, false
			continue
		case lpUnused, lpDead:
			return -1, hints, allDead, nil
		}
		t := b.tupleAt(slot)
		if t == nil {
			return -1, hints, false, h.corrupt(root.Page, "slot %d of a HOT chain holds no versioned tuple", slot)
		}
		th := t.header()
		if atStart && th.HeapOnly() {
			return -1, hints, allDead, nil // the index entry's slot was reused
		}
		if priorXmax != 0 && th.Xmin != priorXmax {
			return -1, hints, allDead, nil // the chain was broken by pruning and reuse
		}
		if hc != nil {
			hc.HeapVersionsRead++
		}
		vis, bits, err := visible(th, snap, cs)
		if err != nil {
			return -1, hints, false, err
		}
		if bits&^th.Infomask != 0 {
			hints = append(hints, slotHint{slot: slot, xmin: th.Xmin, xmax: th.Xmax, bits: bits})
		}
		if vis {
			return slot, hints, false, nil
		}
		if allDead {
			// Dead to every snapshot: HeapTupleIsSurelyDead, with the
			// hints just learned so that a committed deleter's status
			// is not looked up twice.
			t2 := th
			t2.Infomask |= bits
			st, _, err := vacuumState(t2, horizon, cs)
			if err != nil {
				return -1, hints, false, err
			}
			allDead = st == TupleDead
		}
		if !th.HotUpdated() || th.Ctid.Page != root.Page {
			return -1, hints, allDead, nil
		}
		slot, priorXmax, atStart = int(th.Ctid.Slot), th.Xmax, false
	}
	return -1, hints, false, h.corrupt(root.Page, "HOT chain from slot %d loops", root.Slot)
}

// setHints sets hint bits learned under a shared latch: PostgreSQL's
// SetHintBits, which sets them under a shared content lock and marks the
// buffer dirty without WAL (MarkBufferDirtyHint) unless checksums or
// wal_log_hints are on. Here every page change must reach the redo log
// (the remote page tier checks page LSNs against it), so a hint is logged
// as heap-hint, in a mini-transaction of its own under the page's
// exclusive latch, as with wal_log_hints. A bonus of logging them: the
// hint's record follows the commit's in the log, so a page carrying a
// commit hint is never durable before the commit itself, which PostgreSQL
// must check by hand for asynchronous commits (SetHintBits skips the hint
// while the commit's LSN is not flushed).
//
// The tuple may have changed between the shared and the exclusive latch:
// a hint is set only on a normal slot whose xmin and xmax are still those
// it was learned for. pg is pinned by the caller; setHints takes over the
// pin.
func (h *Heap) setHints(pm *cache.Meter, hc *HeapCounts, pg *cache.Page, hints []slotHint) {
	mt := h.pool.BeginMtr(pm)
	mt.Latch(pg)
	b := hpage(pg.Data())
	changed := false
	if page.KindOf(b) == page.KindHeap && b.headerOK() {
		for _, x := range hints {
			if x.slot >= b.nslots() {
				continue
			}
			t := b.tupleAt(x.slot)
			if t == nil || t.xmin() != x.xmin || t.xmax() != x.xmax || t.infomask()|x.bits == t.infomask() {
				continue
			}
			heapHint(mt, pg, x.slot, x.bits)
			changed = true
			if hc != nil {
				hc.HeapHintsSet++
			}
		}
	}
	mt.Release(pg, changed)
	mt.Commit()
}

// LinkVersion points the ctid of the version ptr names at next, keeping
// its xmax and infomask: the engine chains a row inserted again under a
// key whose versions are all dead (deleted and committed, or aborted)
// after the last of them, so that a snapshot that still sees the deleted
// version finds it, and a later one walks on to next. One
// mini-transaction, logged as heap-xmax.
func (h *Heap) LinkVersion(m Account, ptr, next RowPtr) error {
	if err := h.checkPtr(ptr); err != nil {
		return err
	}
	pm, _ := accounts(m)
	mt := h.pool.BeginMtr(pm)
	defer mt.Commit()
	pg, err := h.pool.Fetch(mt.Meter(), h.id(ptr.Page))
	if err != nil {
		return fmt.Errorf("heap: link version %s in space %d: %w", ptr, h.space, err)
	}
	mt.Latch(pg)
	_, t, err := h.versionAt(pg, ptr)
	if err != nil {
		mt.Release(pg, false)
		return err
	}
	old := t.header()
	heapXmax(mt, pg, int(ptr.Slot), old.Xmax, next, old.Infomask2, old.Infomask)
	mt.Release(pg, true)
	return nil
}

// LinePointer is one slot of a versioned heap page, as PostgreSQL's
// ItemIdData with the tuple header it leads to: State is "unused",
// "normal", "redirect" or "dead"; To is a redirect's target slot; Header
// is a normal slot's tuple header.
type LinePointer struct {
	State  string
	To     uint16
	Header TupleHeader
}

// PageVersions returns the line pointers of heap page no and its free
// bytes (what a new tuple and its slot may take), for tests, tools and
// vacuum's look at a page. A page that is not a heap page is
// ErrRowNotFound. Cost: one page request.
func (h *Heap) PageVersions(m Account, no uint32) ([]LinePointer, int, error) {
	return h.AppendPageVersions(nil, m, no)
}

// AppendPageVersions is PageVersions appending to dst (vacuum reuses one
// slice for every page).
func (h *Heap) AppendPageVersions(dst []LinePointer, m Account, no uint32) ([]LinePointer, int, error) {
	dst = dst[:0]
	ptr := RowPtr{Page: no}
	if err := h.checkPtr(ptr); err != nil {
		return nil, 0, err
	}
	pm, _ := accounts(m)
	pg, err := h.pool.Fetch(pm, h.id(no))
	if err != nil {
		return nil, 0, fmt.Errorf("heap: read page %d of space %d: %w", no, h.space, err)
	}
	defer pg.Unpin(false)
	pg.RLatch()
	defer pg.RUnlatch()
	b := hpage(pg.Data())
	if page.KindOf(b) != page.KindHeap {
		return nil, 0, h.notFound(ptr, "page %d has kind %s, not %s", no, page.KindOf(b), page.KindHeap)
	}
	if !b.headerOK() {
		return nil, 0, h.badHeader(no, b)
	}
	lps := slices.Grow(dst, b.nslots())[:b.nslots()]
	for i := range lps {
		st, to := b.lp(i)
		lps[i] = LinePointer{State: st.String(), To: uint16(to)}
		if t := b.tupleAt(i); st == lpNormal && t != nil {
			lps[i].Header = t.header()
		}
	}
	return lps, b.free(), nil
}
