package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// ScanOptions describe an index scan.
type ScanOptions struct {
	// Index is the index to scan: "" (or "PRIMARY") for the primary key.
	Index string
	// Lower and Upper bound a prefix of the index's columns (nil: no
	// bound). A bound of k values compares against the first k columns:
	// an inclusive bound admits every entry whose first k columns equal
	// it, an exclusive bound none of them.
	Lower, Upper                   []Value
	LowerExclusive, UpperExclusive bool
	// Reverse scans from the upper bound down.
	Reverse bool
	// Limit stops the scan after that many rows (0: no limit).
	Limit int
	// Columns lists the columns wanted (nil: all). The scan is index-only
	// when the index entries hold every one of them; otherwise each match
	// costs a row fetch.
	Columns []string
	// ForUpdate makes the scan a locking read (SELECT ... FOR UPDATE): each
	// row it returns is locked exclusive, and it reads the latest version
	// whatever the isolation level. On a versioned heap table under
	// RepeatableRead it is held to the transaction's snapshot as
	// PostgreSQL's is: a row changed or deleted since the snapshot fails
	// the scan with ErrSerialization (the transaction rolled back), and a
	// row inserted since is not returned (Cursor.rrCheck). Without it, a
	// scan of a clustered table under ReadCommitted or RepeatableRead is a
	// consistent read (no locks, the read view's versions), and under
	// Serializable locks shared.
	ForUpdate bool
}

// Cursor walks an index scan. Row returns the current row in table column
// order with the wanted columns filled and the others NULL; it is valid
// until the next call to Next or Close. A Cursor belongs to its Tx's
// goroutine; Close it (a closed cursor's buffers serve the transaction's
// next scan).
//
// Each row a cursor returns is locked shared before it is read, and stays
// locked until the transaction ends. The index entry is read before the
// lock, so when the request had to wait, or the entry's leaf changed
// meanwhile, the cursor reads the row again by its primary key, and skips
// it if it is gone.
// A Count locks nothing, and neither does an index-only scan of a
// HeapRowPointer secondary index (its entries hold no primary key). A
// HeapRowPointer secondary entry is followed to its row before the row is
// locked (the key is in the row); an entry whose slot a concurrent writer
// has freed, or freed and reused, or whose row no longer has the entry's
// values, is skipped (PostgreSQL rechecks the same way).
type Cursor struct {
	tx        *Tx
	t         *TableHandle
	ix        *index
	it        *btree.Iter // &bufs.it while open, nil once closed
	bufs      *cursorBufs
	want      []int
	wanted    []bool // wanted[c]: column c is in want
	indexOnly bool
	reverse   bool
	started   bool
	counting  bool // Count owns the cursor and counts RowsReturned itself
	// locks: the cursor reads without a snapshot (no view, no heap
	// snapshot), so it locks each row it returns or counts, as InnoDB's
	// SERIALIZABLE turns a plain SELECT, a COUNT(*) included, into a
	// locking read; an index-only read of a row-pointer index cannot,
	// its entries holding no key to lock.
	locks bool
	limit int
	n     int
	row   Row
	buf   []byte
	err   error
	// lockWant is want plus the primary-key and index columns, ascending:
	// what a row-pointer index scan decodes to learn the key it must lock
	// and to check that the row still matches the entry.
	lockWant []int
	pkBuf    []byte
	keyBuf   []byte
	// mode is the lock a locking read takes on each row; view, when not
	// nil, makes the scan a consistent read through it (no locks).
	mode lock.Mode
	view *ReadView
	// hsnap, for a plain scan of a versioned heap table under
	// ReadCommitted or RepeatableRead, is the snapshot its rows are read
	// with, without row locks (heapmvcc.go); nil: rows are locked and
	// read at their latest committed version.
	hsnap *heap.Snapshot
	// ownSnap says hsnap is the cursor's own registered copy
	// (Tx.cursorSnap), dropped at Close.
	ownSnap bool
	// ptr is the current row's heap pointer in a heap organization, once
	// load has it (from the entry, or from the primary index in
	// HeapPrimaryKey): what a sort keeps as the row's reference in
	// HeapRowPointer (the handler's position(), ha_heap's pointer).
	ptr  heap.RowPtr
	full Row // a consistent read's whole version, to check a secondary entry
	// rrLock marks a locking scan (ForUpdate) of a versioned heap table
	// under RepeatableRead: as PostgreSQL's, it fails with
	// ErrSerialization on a row changed or deleted since the
	// transaction's snapshot, and does not return a row inserted since
	// (rrCheck). th is the header of the latest version load read (when
	// thSet), curPK the row's encoded primary key.
	rrLock  bool
	thSet   bool
	th      heap.TupleHeader
	curPK   []byte
	rootSet bool        // the entry names a version chain: root
	root    heap.RowPtr // its root pointer
	// allVisible: the index-only entry's page is all-visible.
	allVisible bool
}

// cursorBufs are a cursor's buffers. A closed cursor hands them to its
// transaction for the next scan (opBufs.spare), so that a transaction that
// scans again and again, and the transactions after it, reuse one
// iterator and one row.
type cursorBufs struct {
	it       btree.Iter
	want     []int
	wanted   []bool
	lockWant []int
	row      Row
	buf      []byte
	pkBuf    []byte
	keyBuf   []byte
	full     Row
}

// cursorBufs takes the transaction's spare cursor buffers, or new ones.
func (tx *Tx) cursorBufs() *cursorBufs {
	b := tx.spare
	if b == nil {
		return &cursorBufs{}
	}
	tx.spare = nil
	return b
}

// putCursorBufs gives b back to tx for its next scan. The buffers of a
// cursor closed after its transaction ended are dropped: the transaction's
// own went back to the pool at the end.
func (tx *Tx) putCursorBufs(b *cursorBufs) {
	if !tx.done && tx.spare == nil {
		tx.spare = b
	}
}

// zeroed returns s resized to n zero elements, reusing its array when it
// has room. (append(s[:0], make(S, n)...) does the same without the race
// detector, whose builds allocate the make.)
func zeroed[S ~[]E, E any](s S, n int) S {
	if cap(s) < n {
		return make(S, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// reset drops the row's references to row bytes and callers' values
// before the buffers wait in the pool.
func (b *cursorBufs) reset() {
	clear(b.row[:cap(b.row)])
	b.row = b.row[:0]
	clear(b.full[:cap(b.full)])
	b.full = b.full[:0]
}

// errSkip says the current entry led to a row that is gone: the scan
// waited for its lock and the holder deleted it.
var errSkip = errors.New("engine: entry skipped")

// Path says how a scan reads its rows.
type Path struct {
	Index string // the index scanned
	// IndexOnly is true when every wanted column is in the index entries,
	// so no row is fetched. (In HeapRowPointer tables this is PostgreSQL's
	// best case, an index-only scan where every page is all-visible: there
	// is no visibility map here to consult.)
	IndexOnly bool
}

// Scan starts an index scan of table t.
func (tx *Tx) Scan(t *TableHandle, o ScanOptions) (*Cursor, error) {
	tx.enter()
	if err := tx.check(t); err != nil {
		return nil, err
	}
	ix, err := t.index(o.Index)
	if err != nil {
		return nil, err
	}
	b := tx.cursorBufs()
	want := b.want[:0]
	if o.Columns == nil {
		for i := range t.info.def.Columns {
			want = append(want, i)
		}
	} else if want, err = t.info.resolveInto(want, "scan", o.Columns); err != nil {
		tx.putCursorBufs(b)
		return nil, err
	}
	// Rows come back in table column order whatever order Columns names;
	// decoding wants ascending positions.
	slices.Sort(want)
	b.want = want
	return tx.scan(t, ix, o, b)
}

// resolveInto is resolve appending the positions to dst: the same
// positions and errors, without an allocation when dst has room.
func (t *tableInfo) resolveInto(dst []int, what string, names []string) ([]int, error) {
	start := len(dst)
	for _, n := range names {
		c, ok := t.colIndex[n]
		if !ok {
			return dst, fmt.Errorf("%w: table %s: %s names column %q", ErrUnknownColumn, t.def.Name, what, n)
		}
		if slices.Contains(dst[start:], c) { // one position per name
			return dst, fmt.Errorf("%w: table %s: %s names column %s twice", ErrDuplicateColumn, t.def.Name, what, n)
		}
		dst = append(dst, c)
	}
	return dst, nil
}

// scan opens a cursor on b, whose want holds the wanted columns
// (ascending). The cursor owns b until Close; on an error b goes back to
// tx.
func (tx *Tx) scan(t *TableHandle, ix *index, o ScanOptions, b *cursorBufs) (*Cursor, error) {
	c, err := tx.openCursor(t, ix, o, b)
	if err != nil {
		tx.putCursorBufs(b)
	}
	return c, err
}

func (tx *Tx) openCursor(t *TableHandle, ix *index, o ScanOptions, b *cursorBufs) (*Cursor, error) {
	if o.Limit < 0 {
		return nil, fmt.Errorf("%w: table %s: scan limit %d is negative", ErrBadValue, t.info.def.Name, o.Limit)
	}
	lo, lobuf, err := t.bound(tx.lo, ix, o.Lower, o.LowerExclusive, true)
	tx.lo = lobuf
	if err != nil {
		return nil, err
	}
	hi, hibuf, err := t.bound(tx.hi, ix, o.Upper, o.UpperExclusive, false)
	tx.hi = hibuf
	if err != nil {
		return nil, err
	}
	want, ncol := b.want, len(t.info.def.Columns)
	c := &Cursor{tx: tx, t: t, ix: ix, bufs: b, want: want, indexOnly: ix.covers(want), reverse: o.Reverse,
		limit: o.Limit, row: zeroed(b.row, ncol), wanted: zeroed(b.wanted, ncol),
		buf: b.buf[:0], pkBuf: b.pkBuf[:0], keyBuf: b.keyBuf[:0], full: b.full}
	for _, w := range want {
		c.wanted[w] = true
	}
	c.mode = lock.Shared
	if o.ForUpdate {
		c.mode = lock.Exclusive
		if t.versioned() && tx.iso == RepeatableRead {
			tx.stmtView() // the snapshot is taken before the first lock
			c.rrLock = true
		}
	} else if tx.consistent(t) {
		c.view = tx.readView(true)
	} else if t.versioned() && tx.iso == ReadCommitted {
		// The cursor outlives its statement: a later one reopens
		// tx.view in place, so it keeps a registered copy.
		c.hsnap = tx.cursorSnap(tx.readView(true))
		c.ownSnap = true
		tx.m.ConsistentReads++
	} else if t.versioned() && tx.iso != Serializable {
		c.hsnap = tx.snapOfView(tx.readView(true))
		tx.m.ConsistentReads++
	}
	c.locks = c.view == nil && c.hsnap == nil
	if ix.carry == carryPtr && !c.indexOnly && len(want) > 0 {
		c.lockWant = append(b.lockWant[:0], want...)
		for _, cols := range [...][]int{t.info.pk, ix.cols} {
			for _, p := range cols {
				if !slices.Contains(c.lockWant, p) {
					c.lockWant = append(c.lockWant, p)
				}
			}
		}
		slices.Sort(c.lockWant)
	}
	if lo.Kind == btree.Exclusive && lo.Key == nil {
		// An exclusive lower bound on a prefix that no key can follow.
		c.limit, c.n = 1, 1
	}
	ix.tree.InitIter(&b.it, tx.m, &btree.IterOptions{Lower: lo, Upper: hi})
	c.it = &b.it
	return c, nil
}

// bound turns a prefix bound into a B+tree bound whose key is encoded
// into buf[:0]; it returns the buffer to keep.
func (t *TableHandle) bound(buf []byte, ix *index, vals []Value, exclusive, lower bool) (btree.Bound, []byte, error) {
	if vals == nil {
		return btree.Bound{}, buf, nil
	}
	if len(vals) > len(ix.cols) {
		return btree.Bound{}, buf, fmt.Errorf("%w: table %s: index %s has %d columns, bound has %d values",
			ErrWrongArity, t.info.def.Name, ix.name, len(ix.cols), len(vals))
	}
	cols := t.info.def.Columns
	for i, v := range vals {
		c := &cols[ix.cols[i]]
		if v.IsNull() {
			continue // a NULL bound value is allowed: NULLs sort first
		}
		if err := checkValue(t.info.def.Name, c, v); err != nil {
			return btree.Bound{}, buf, err
		}
	}
	prefix := appendKeyPrefix(buf[:0], cols, ix.cols, vals)
	switch {
	case lower && !exclusive:
		return btree.Incl(prefix), prefix, nil
	case !lower && exclusive:
		return btree.Excl(prefix), prefix, nil
	}
	// The bound is the prefix's successor, made in place: the prefix is
	// needed no more.
	if s := appendPrefixSuccessor(prefix[:0], prefix); s != nil {
		if lower {
			return btree.Incl(s), s, nil
		}
		return btree.Excl(s), s, nil
	}
	if lower {
		return btree.Bound{Kind: btree.Exclusive}, prefix, nil // nothing follows
	}
	return btree.Bound{}, prefix, nil
}

// Path returns how the scan reads its rows.
func (c *Cursor) Path() Path { return Path{Index: c.ix.name, IndexOnly: c.indexOnly} }

// Row returns the current row.
func (c *Cursor) Row() Row { return c.row }

// Err returns the error that stopped the scan.
func (c *Cursor) Err() error { return c.err }

// Close ends the scan. The cursor's buffers go back to its transaction
// for its next scan: Row is no longer valid.
func (c *Cursor) Close() error {
	if c.ownSnap {
		c.ownSnap = false
		c.tx.dropSnap(c.hsnap)
	}
	if c.it != nil {
		_ = c.it.Close()
		c.it = nil
		b := c.bufs
		b.want, b.wanted, b.row, b.buf, b.pkBuf, b.keyBuf, b.full = c.want, c.wanted, c.row, c.buf, c.pkBuf, c.keyBuf, c.full
		if c.lockWant != nil {
			b.lockWant = c.lockWant
		}
		c.bufs = nil
		c.tx.putCursorBufs(b)
	}
	return c.err
}

// Next moves to the next row.
func (c *Cursor) Next() bool {
	if c.it == nil || c.err != nil || (c.limit > 0 && c.n >= c.limit) {
		return false
	}
	tx := c.tx
	if tx.done {
		c.err = ErrTxDone
		return false
	}
	for {
		b := tx.m.NodeVisitsTotal()
		var ok bool
		switch {
		case !c.started && c.reverse:
			ok = c.it.Last()
		case !c.started:
			ok = c.it.First()
		case c.reverse:
			ok = c.it.Prev()
		default:
			ok = c.it.Next()
		}
		c.started = true
		tx.charge(c.ix, b)
		if !ok {
			c.err = c.it.Err()
			return false
		}
		tx.m.RowsExamined++
		err := c.load()
		if err == errSkip {
			continue
		}
		if err != nil {
			c.err = err
			return false
		}
		break
	}
	c.n++
	if !c.counting {
		tx.m.RowsReturned++
	}
	return true
}

// load fills c.row from the current entry, fetching the row when the entry
// does not hold every wanted column; a RepeatableRead locking scan of a
// versioned table then checks the row against the snapshot (rrCheck).
func (c *Cursor) load() error {
	if !c.rrLock {
		return c.loadEntry()
	}
	c.thSet, c.curPK, c.rootSet, c.allVisible = false, nil, false, false
	err := c.loadEntry()
	if err == nil {
		return c.rrCheck()
	}
	return err
}

// loadEntry is load without the RepeatableRead check.
func (c *Cursor) loadEntry() error {
	t, ix, tx := c.t, c.ix, c.tx
	cols := t.info.def.Columns
	clear(c.row)
	c.ptr = heap.RowPtr{}
	c.buf = c.buf[:0] // the previous row's strings are no longer valid
	key, val := c.it.Key(), c.it.Value()
	if c.view != nil {
		return c.loadConsistent(key, val)
	}
	if t.org == Clustered && ((ix.primary && clustDeleted(val)) || (!ix.primary && secDeleted(val))) {
		return c.skipMarked(key, val)
	}
	if len(c.want) == 0 && !t.versioned() && !c.locks {
		return nil // count(*): the entry's existence is all
	}
	// What identifies the row: the primary key's encoding, or a pointer.
	var pk []byte
	var ptr heap.RowPtr
	switch {
	case ix.carry == carryRow:
		if c.locks {
			waited, err := c.lockRow(key)
			if err != nil {
				return err
			}
			if waited {
				return c.reread(key)
			}
			if len(c.want) == 0 {
				return nil // count(*) of a locked row
			}
		}
		_, body, err := splitClustRec(val)
		if err != nil {
			return fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
		}
		tx.m.RowsDecoded++
		return decodeColumns(body, cols, c.want, c.row)
	case ix.primary && t.versioned():
		// (primary key, root pointer): one entry per version a non-HOT
		// write made (heapmvcc.go).
		p, r, err := splitPrimEntry(key)
		if err != nil {
			return err
		}
		pk, ptr = p, r
	case ix.primary:
		pk = key
		p, err := heap.DecodeRowPtr(val)
		if err != nil {
			return err
		}
		ptr = p
	}
	var err error
	var rest []byte
	if !ix.primary {
		rest, c.buf, err = decodeKeyInto(key, cols, ix.cols, c.row, c.buf[:0])
		if err != nil {
			return err
		}
		if ix.carry == carryPtr {
			if ptr, err = heap.DecodeRowPtr(rest); err != nil {
				return err
			}
		} else {
			pk = rest
		}
	}
	// A returned or counted row is locked shared before it is read,
	// unless the cursor reads a snapshot. The iterator holds a pin but no latch between
	// steps, so a wait here holds no latch. After a wait the row is read
	// again by its key: the holder may have changed or deleted it.
	if pk != nil && c.locks {
		waited, err := c.lockRow(pk)
		if err != nil {
			return err
		}
		if waited {
			if !t.versioned() {
				return c.rereadEntry(pk, key)
			}
			// A versioned table's entry names one version chain of
			// the row (its own, or a dead one to skip): the chain is
			// read below, now under the lock.
		}
	}
	c.ptr = ptr
	c.curPK = pk
	if t.versioned() && (ix.primary || ix.carry == carryPtr) {
		c.root, c.rootSet = ptr, true // the entry names this version chain
	}
	if c.indexOnly && t.versioned() {
		// The entry alone answers only on an all-visible page.
		if err := c.indexOnlyVisible(ix, key, pk, ptr); err != nil {
			return err
		}
	}
	if c.indexOnly {
		if pk != nil {
			_, c.buf, err = decodeKeyInto(pk, cols, t.info.pk, c.row, c.buf)
		}
		// The entry held more than was asked for: the row shows only the
		// wanted columns, whatever the path.
		for i := range c.row {
			if !c.wanted[i] {
				c.row[i] = Null
			}
		}
		return err
	}
	// A row fetch.
	tx.m.RowFetches++
	var img []byte
	switch {
	case ix.carry == carryPtr || (ix.primary && t.org != Clustered):
		tx.m.RowFetchesHeap++
		if t.versioned() {
			snap := c.hsnap
			if snap == nil {
				snap = tx.latestSnap()
			}
			var found, allDead bool
			img, _, c.th, found, allDead, err = tx.fetchRootDead(t, ptr, snap, true)
			c.thSet = err == nil && found
			if err == nil && !found {
				if allDead {
					if err := c.killEntry(); err != nil {
						return err
					}
				} else if c.rrLock {
					return c.rrConflict()
				} else if c.lockWant != nil && c.locks {
					return c.waitInserter(key)
				}
				return errSkip
			}
			if err == nil && ix.primary && c.hsnap == nil {
				// Read with the latest snapshot: the slot may have
				// been vacuumed and reused since the entry was read.
				var same bool
				if same, err = tx.versionHasKey(t, img, pk); err == nil && !same {
					return errSkip
				}
			}
		} else {
			img, err = t.heap.Fetch(tx.m, ptr, tx.val)
		}
		if (ix.carry == carryPtr || t.versioned()) && errors.Is(err, heap.ErrRowNotFound) {
			// The entry was read without a lock: a writer that moved
			// or deleted the row has freed its slot and not yet removed
			// the entry. The row is gone from this position.
			return errSkip
		}
	case t.versioned():
		// An entry that carries the primary key: every primary entry
		// of the key names a version chain; the entry counts only if
		// the version the scan sees gives it back (an entry of the
		// row's old values stays until vacuum).
		tx.m.RowFetchesPrimary++
		snap := c.hsnap
		if snap == nil {
			snap = tx.latestSnap()
		}
		var found bool
		img, ptr, _, c.th, found, err = tx.versionedFind(t, pk, snap, c.hsnap == nil)
		c.thSet = err == nil && found
		if err == nil && found {
			found, err = tx.versionGivesEntry(t, ix, img, pk, key)
		}
		if err == nil && !found {
			if c.rrLock {
				return c.rrConflict()
			}
			return errSkip
		}
		c.ptr = ptr
	default:
		tx.m.RowFetchesPrimary++
		prim := t.ixs[0]
		b := tx.m.NodeVisitsTotal()
		var found bool
		img, found, err = prim.tree.Get(tx.m, pk, tx.val)
		tx.charge(prim, b)
		if err == nil && !found {
			if c.counting && t.org == Clustered {
				// Read without a lock: the row was deleted and purged
				// since the entry was read.
				return errSkip
			}
			err = fmt.Errorf("engine: table %s: index %s points at a missing row", t.info.def.Name, ix.name)
		}
		if err == nil && t.org == Clustered {
			tx.val = img
			var h clustHdr
			h, img, err = splitClustRec(img)
			if err == nil && h.deleted() {
				// A count reads without a lock: the row's delete-mark
				// came between the entry's read and this one.
				return errSkip
			}
		}
		if err == nil && t.org == HeapPrimaryKey {
			if ptr, err = heap.DecodeRowPtr(img); err == nil {
				c.ptr = ptr
				img, err = t.heap.Fetch(tx.m, ptr, img)
			}
		}
	}
	if err != nil {
		return err
	}
	tx.val = img
	tx.m.RowsDecoded++
	clear(c.row)
	if c.lockWant == nil || (c.counting && !c.locks) {
		return decodeColumns(img, cols, c.want, c.row)
	}
	// A row-pointer entry: the key to lock comes from the row, and the
	// row must still be the one the entry describes (its slot may have
	// been freed and reused, or its indexed columns changed in place, by
	// a writer this scan has not waited for).
	if err := decodeColumns(img, cols, c.lockWant, c.row); err != nil {
		return err
	}
	if c.keyBuf = t.entryKey(c.keyBuf, ix, c.row, nil, ptr); !bytes.Equal(c.keyBuf, key) {
		return errSkip
	}
	c.pkBuf = appendKey(c.pkBuf[:0], cols, t.info.pk, c.row)
	c.curPK = c.pkBuf
	for i := range c.row {
		if !c.wanted[i] {
			c.row[i] = Null
		}
	}
	if !c.locks {
		return nil // a snapshot read: no lock
	}
	waited, err := c.lockRow(c.pkBuf)
	if err != nil {
		return err
	}
	if waited {
		if t.versioned() {
			return c.rereadVersion(key)
		}
		return c.rereadEntry(c.pkBuf, key)
	}
	return nil
}

// rereadVersion re-reads, once the row lock is held after a wait, the
// latest version of the HOT chain the current row-pointer entry (key)
// names, and keeps it only if it still gives the entry back with the
// locked primary key (c.pkBuf): another entry of the row names its other
// versions, so reading the row by its key here could return it twice.
func (c *Cursor) rereadVersion(key []byte) error {
	tx, t, ix := c.tx, c.t, c.ix
	cols := t.info.def.Columns
	pk := append([]byte(nil), c.pkBuf...)
	img, _, th, found, err := tx.fetchRoot(t, c.ptr, tx.latestSnap())
	if err != nil {
		return err
	}
	if !found {
		if c.rrLock {
			return c.rrConflict()
		}
		return errSkip
	}
	c.th, c.thSet = th, true
	tx.val = img
	tx.m.RowsDecoded++
	clear(c.row)
	if err := decodeColumns(img, cols, c.lockWant, c.row); err != nil {
		return err
	}
	if c.keyBuf = t.entryKey(c.keyBuf, ix, c.row, nil, c.ptr); !bytes.Equal(c.keyBuf, key) {
		return errSkip
	}
	if c.pkBuf = appendKey(c.pkBuf[:0], cols, t.info.pk, c.row); !bytes.Equal(c.pkBuf, pk) {
		return errSkip
	}
	c.curPK = c.pkBuf
	for i := range c.row {
		if !c.wanted[i] {
			c.row[i] = Null
		}
	}
	return nil
}

// waitInserter is PostgreSQL's SnapshotDirty for a locking read of a
// row-pointer entry without a snapshot (Serializable; a locking count):
// the chain the entry names shows the latest snapshot no version, but one
// may have been written by a transaction still running (an update that
// moved the row's indexed value to this entry, or an insert). Skipping
// it would miss the row if that transaction commits, since its old
// entry's chain is dead by the time a wait there ends. So the read locks
// that version's row, waiting for the writer's end, and reads the chain
// again under the lock (rereadVersion); errSkip if no running transaction
// wrote a version of it. Cost: one more heap fetch (the chain's walk).
func (c *Cursor) waitInserter(key []byte) error {
	tx, t := c.tx, c.t
	cols := t.info.def.Columns
	_, vs, err := t.heap.HotChain(tx.m, c.ptr)
	if err != nil {
		return fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	for i := len(vs) - 1; i >= 0; i-- {
		x := vs[i].Header.Xmin
		if x == tx.trxID || !tx.db.trxActive(x) {
			continue
		}
		clear(c.row)
		if err := decodeColumns(vs[i].Row, cols, c.lockWant, c.row); err != nil {
			return err
		}
		c.pkBuf = appendKey(c.pkBuf[:0], cols, t.info.pk, c.row)
		if _, err := c.lockRow(c.pkBuf); err != nil {
			return err
		}
		return c.rereadVersion(key)
	}
	return errSkip
}

// lockRow takes the shared lock of the row with encoded primary key pk and
// reports whether the entry read before the lock may be out of date: the
// request had to wait, or the leaf changed since the entry was read (a
// writer can change or delete the row, and commit, between the read and
// the grant). Once the lock is held, nobody can change the row.
func (c *Cursor) lockRow(pk []byte) (bool, error) {
	tx := c.tx
	before := tx.m.LockWaits
	if err := tx.lock(c.t, pk, c.mode); err != nil {
		return false, err
	}
	return tx.m.LockWaits != before || c.it.Changed(), nil
}

// reread reads the current row with primary key pk into c.row (its wanted
// columns), or reports errSkip if it is gone.
func (c *Cursor) reread(pk []byte) error {
	tx, t := c.tx, c.t
	pk = append(c.pkBuf[:0:0], pk...) // lookup reuses the buffers pk may alias
	img, ptr, found, err := tx.lookup(t, pk, false)
	if err != nil {
		return err
	}
	if !found {
		return errSkip
	}
	c.ptr = ptr
	if t.org == Clustered { // lookup counted the heap fetch itself
		tx.m.RowFetches++
		tx.m.RowFetchesPrimary++
	}
	tx.m.RowsDecoded++
	clear(c.row)
	return decodeColumns(img, t.info.def.Columns, c.want, c.row)
}

// CountOptions describe a count over an index range.
type CountOptions struct {
	ScanOptions
	// Column is the counted column; "" or "*" is count(*). count(col)
	// counts the entries whose col is not NULL, so it must read col: from
	// the index entry if it holds col, else by fetching the row. With the
	// database's CountRewrite option, count(col) of a NOT NULL column is
	// counted as count(*).
	Column string
}

// Count counts the entries of an index range (Columns and Limit of the
// embedded ScanOptions are ignored). It returns the count and the path
// taken.
func (tx *Tx) Count(t *TableHandle, o CountOptions) (int64, Path, error) {
	tx.enter()
	if err := tx.check(t); err != nil {
		return 0, Path{}, err
	}
	ix, err := t.index(o.Index)
	if err != nil {
		return 0, Path{}, err
	}
	col := -1
	if o.Column != "" && o.Column != "*" {
		c, ok := t.info.colIndex[o.Column]
		if !ok {
			return 0, Path{}, fmt.Errorf("%w: table %s: count names column %q", ErrUnknownColumn, t.info.def.Name, strings.Clone(o.Column)) // a copy: o stays on the caller's stack
		}
		col = c
		if tx.db.countRewrite.Load() && !t.info.def.Columns[c].Nullable {
			col = -1
		}
	}
	b := tx.cursorBufs()
	b.want = b.want[:0]
	if col >= 0 {
		b.want = append(b.want, col)
	}
	so := o.ScanOptions
	so.Limit = 0
	cur, err := tx.scan(t, ix, so, b)
	if err != nil {
		return 0, Path{}, err
	}
	cur.counting = true
	var n int64
	for cur.Next() {
		if col < 0 || !cur.row[col].IsNull() {
			n++
		}
	}
	tx.m.RowsReturned += n // the entries counted
	return n, cur.Path(), cur.Close()
}

// loadConsistent fills c.row from the version of the current entry's row
// that the cursor's read view sees, or reports errSkip if the row does
// not exist in it. A secondary entry is trusted as it is when its leaf's
// PAGE_MAX_TRX_ID is below the view's up limit
// (lock_sec_rec_cons_read_sees: every change to the leaf is one the view
// sees, so the entry is live exactly when the view's version of the row
// has it): a delete-marked one is skipped, and an index-only read takes
// its columns from the entry without visiting the row. Otherwise
// (Meter.SecondaryClusterChecks) the entry is confirmed in the clustered
// record: the view's version must still have the entry's values
// (row_sel_sec_rec_is_for_clust_rec), else the entry belongs to another
// version of the row. A read that wants columns the entry lacks builds
// the view's version of the row either way.
func (c *Cursor) loadConsistent(key, val []byte) error {
	t, ix, tx := c.t, c.ix, c.tx
	cols := t.info.def.Columns
	tx.m.ConsistentReads++
	rec := val
	var pk []byte
	if !ix.primary {
		seen := c.it.PageMaxTrx() < c.view.upLimit
		if seen && secDeleted(val) {
			return errSkip
		}
		rest, buf, err := decodeKeyInto(key, cols, ix.cols, c.row, c.buf[:0])
		c.buf = buf
		if err != nil {
			return err
		}
		pk = rest
		if seen && c.indexOnly {
			if len(c.want) == 0 {
				// count(*), or no column wanted: the entry is the row's,
				// and the row shows no column (decodeKeyInto filled the
				// index's).
				clear(c.row)
				return nil
			}
			_, c.buf, err = decodeKeyInto(pk, cols, t.info.pk, c.row, c.buf)
			for i := range c.row {
				if !c.wanted[i] {
					c.row[i] = Null
				}
			}
			return err
		}
		if !seen {
			tx.m.SecondaryClusterChecks++
		}
		tx.m.RowFetches++
		tx.m.RowFetchesPrimary++
		prim := t.ixs[0]
		b := tx.m.NodeVisitsTotal()
		v, found, err := prim.tree.Get(tx.m, pk, tx.val)
		tx.charge(prim, b)
		if err != nil {
			return err
		}
		if !found {
			return errSkip // an insert rolled back, or a delete purged, since the entry was read
		}
		tx.val, rec = v, v
	}
	h, body, err := splitClustRec(rec)
	if err != nil {
		return fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	img, exists, err := tx.buildVersion(c.view, h, body)
	if err != nil || !exists {
		if err == nil {
			err = errSkip
		}
		return err
	}
	clear(c.row)
	if len(c.want) == 0 && ix.primary {
		return nil // count(*): the version exists
	}
	tx.m.RowsDecoded++
	if ix.primary {
		return decodeColumns(img, cols, c.want, c.row)
	}
	if c.full, err = decodeRow(img, cols, c.full); err != nil {
		return fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	if c.keyBuf = t.entryKey(c.keyBuf, ix, c.full, pk, heap.RowPtr{}); !bytes.Equal(c.keyBuf, key) {
		return errSkip
	}
	for _, w := range c.want {
		c.row[w] = c.full[w]
	}
	return nil
}
