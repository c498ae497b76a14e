package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
	"github.com/enginelab/enginelab/heap/xact"
)

// HeapVersioning is whether new heap-organized tables keep PostgreSQL's
// row versions (Options.HeapVersions).
type HeapVersioning uint8

// Heap versioning choices.
const (
	// HeapVersionsDefault keeps versions, as PostgreSQL does: the
	// default of Options.HeapVersions, kept apart from HeapVersionsOn
	// so that a caller can tell a choice it was given from the default
	// (a stored database's tables keep the choice they were created
	// with; asking for the other one is refused, the default is not).
	HeapVersionsDefault HeapVersioning = iota
	// HeapVersionsOn keeps versions (asked for).
	HeapVersionsOn
	// HeapVersionsOff makes single-version heap tables: an update
	// changes the row where HeapUpdate says, a plain read locks the row
	// (strict two-phase locking at every isolation level), and there is
	// nothing to vacuum.
	HeapVersionsOff
)

// Keep reports whether new heap tables keep versions.
func (v HeapVersioning) Keep() bool { return v != HeapVersionsOff }

// String is "default", "true" or "false", as the command's
// --heap-versions takes them.
func (v HeapVersioning) String() string {
	switch v {
	case HeapVersionsDefault:
		return "default"
	case HeapVersionsOn:
		return "true"
	case HeapVersionsOff:
		return "false"
	}
	return fmt.Sprintf("HeapVersioning(%d)", uint8(v))
}

// Versioned heap tables: PostgreSQL's row versions (Options.HeapVersions).
//
// The heap holds versioned tuples (heap/versions.go): an insert writes a
// version stamped with its transaction id (xmin), a delete stamps the
// version's xmax, an update stamps the old version's xmax and writes a new
// version chained from it by its ctid, heap-only (HOT) when no indexed
// column changed and the page has room (heap_update's use_hot_update).
// Whether a transaction committed is the commit log's answer (heap/xact,
// PostgreSQL's pg_xact): the status is set in the commit's own
// mini-transaction, so it is durable with the commit record, and a
// transaction found running at a crash is set aborted once recovery
// has rolled it back (abortCrashed).
//
// Snapshots. A read view (trxsys.go) is PostgreSQL's snapshot: its up
// limit is xmin, its low limit xmax, its active ids the xip list, its
// creator the snapshot's own transaction. Plain reads under ReadCommitted
// and RepeatableRead take no row lock and read the version their view
// sees. Writes and locking reads take the row lock (PostgreSQL's tuple
// lock) and act on the latest committed version: once the lock is held
// no other transaction writes the row, so a snapshot taken then
// (latestSnap) sees exactly it. Under RepeatableRead, if that version is
// not the one the transaction's view sees (a concurrent transaction
// changed or deleted the row and committed after the view was taken),
// the statement fails with ErrSerialization and the transaction is rolled
// back (ExecUpdate's "could not serialize access due to concurrent
// update"); the view is taken at the statement's start, before the lock
// wait, as PostgreSQL takes the statement's snapshot.
//
// Indexes: an entry per version chain, as PostgreSQL keeps them. The
// primary index is keyed (primary key, root pointer) with an empty value,
// as a PostgreSQL B-tree entry is keyed by its columns and heap TID: the
// root pointer names the slot of a version an insert or a non-HOT update
// wrote, the root of that version's HOT chain. An insert adds one entry
// to every index. A HOT update (no indexed column changed and the new
// version fits on the page) adds none: the new version is reached from
// the chain's root. A non-HOT update (heap_update then
// ExecInsertIndexTuples) adds one to the primary index and to every
// secondary that carries row pointers, each naming the new version,
// whether or not that index's columns changed; in the organization whose
// secondaries carry the primary key, a secondary gets one only when its
// columns changed, an unchanged entry naming the row already. No write
// removes an entry: old versions' entries stay until vacuum removes them
// (vacuum.go), so an older snapshot still finds a row by its old values.
//
// A reader follows an entry to its root and walks that HOT chain only
// (fetchRoot: heap_hot_search_buffer, the chain read under one shared
// latch of its page, so that no prune changes it under the reader),
// taking the version its snapshot sees; an entry whose chain has none is
// skipped. At most one version of a row is visible to a snapshot, so a
// row is returned once however many entries it has. A point read by
// primary key follows every entry of the key (versionedFind). A secondary
// entry that carries the primary key names the row, not a version: the
// reader finds the version it sees through the primary index and keeps
// the entry only if that version gives it back (versionGivesEntry).
//
// Uniqueness. The primary key's uniqueness rests on its row lock: an
// insert takes the key's exclusive lock, then finds no live version
// among the key's entries (versionedInsertRow); the entries of dead
// versions are no conflict. A unique secondary is checked as
// _bt_check_unique checks (anyLive): an entry whose version is live is a
// duplicate, a dead one is ignored, and one being written by a
// transaction in progress is waited for; the check runs again once the
// row's own entries are written (recheckUnique), since it does not hold
// the leaf's latch from the check to the insert as PostgreSQL does.
//
// Vacuum frees a line pointer only after removing the entries that name
// it, but a reader may hold an entry read before: a reader with an MVCC
// snapshot never sees a version written into the freed slot after it
// read the entry (its writer started after the snapshot), as PostgreSQL's
// index scans rely on; a locking reader, whose snapshot is the latest,
// checks the primary key of what it finds (versionHasKey).
//
// Rollback. The heap keeps what an aborted transaction wrote: its
// versions are dead (xmin aborted) and its xmax stamps ignored (xmax
// aborted), as PostgreSQL leaves them. The index entries it added are
// taken back by the undo log as for unversioned tables (PostgreSQL leaves
// them for vacuum), before the commit log says it aborted, so that no
// entry names a version vacuum may free.

// keyXactSpace is the catalog key naming the commit log's space (4
// bytes, little-endian).
var keyXactSpace = []byte("x")

// versioned reports whether t holds versioned tuples.
func (t *TableHandle) versioned() bool { return t.entry.Versioned }

// ensureXactLocked creates the commit log if the database has none.
// REQUIRES: db.mu held.
func (db *DB) ensureXactLocked() error {
	if db.clog.Load() != nil {
		return nil
	}
	space, err := db.allocSpaceLocked()
	if err != nil {
		return err
	}
	l, err := xact.Create(nil, db.pool, space)
	if err != nil {
		return fmt.Errorf("engine: create commit log: %w", err)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], space)
	if err := db.catalog.Insert(nil, keyXactSpace, b[:]); err != nil {
		return fmt.Errorf("engine: record commit log: %w", err)
	}
	db.clog.Store(l)
	return nil
}

// openXact opens the commit log the catalog names, if any.
func (db *DB) openXact() error {
	v, found, err := db.catalog.Get(nil, keyXactSpace, nil)
	if err != nil || !found {
		return err
	}
	if len(v) != 4 {
		return fmt.Errorf("%w: catalog's commit log record has %d bytes", cache.ErrBadFormat, len(v))
	}
	l, err := xact.Open(nil, db.pool, binary.LittleEndian.Uint32(v))
	if err != nil {
		return fmt.Errorf("engine: open commit log: %w", err)
	}
	db.clog.Store(l)
	return nil
}

// abortCrashed sets aborted every transaction id below the next one that
// the commit log still has in progress: after recovery none is running
// (xact.Log.AbortInProgress).
func (db *DB) abortCrashed() error {
	l := db.clog.Load()
	if l == nil {
		return nil
	}
	// A transaction whose writes were all undo-less versions (HOT
	// updates, deletes) left its id in no undo log: the next id must
	// also pass every id the commit log knows.
	hi, err := l.Highest(nil)
	if err != nil {
		return err
	}
	if hi > db.txSeq.Load() {
		db.txSeq.Store(hi)
	}
	_, err = l.AbortInProgress(nil, 0, db.txSeq.Load()+1)
	return err
}

// snapOfView fills tx.hview from v.
func (tx *Tx) snapOfView(v *ReadView) *heap.Snapshot {
	s := &tx.hview
	s.Xmin, s.Xmax, s.Xip, s.Own = v.upLimit, v.lowLimit, v.ids, v.creator
	return s
}

// latestSnap returns a snapshot of the transaction system now, not
// registered anywhere: under a row lock it sees the row's latest
// committed version (or tx's own).
func (tx *Tx) latestSnap() *heap.Snapshot {
	s := &tx.hsnap
	sys := &tx.db.trx
	sys.mu.Lock()
	s.Xmax = tx.db.txSeq.Load() + 1
	s.Xip = append(s.Xip[:0], sys.rw...)
	sys.mu.Unlock()
	s.Xmin = s.Xmax
	if len(s.Xip) > 0 {
		s.Xmin = s.Xip[0]
	}
	s.Own = tx.trxID
	return s
}

// Primary entries of a versioned table. The primary index holds one
// entry per version a non-HOT write made, keyed (primary key, root
// pointer) with an empty value, as a PostgreSQL B-tree entry is keyed by
// its columns and heap TID: the root pointer names the slot of the
// version the insert or non-HOT update wrote, the root of its HOT chain.

// primVersionKey appends the primary entry key of the version rooted at
// root of the row with encoded primary key pk to dst[:0].
func primVersionKey(dst, pk []byte, root heap.RowPtr) []byte {
	return root.Append(append(dst[:0], pk...))
}

// splitPrimEntry splits a versioned table's primary entry key into the
// primary key's encoding and the root pointer.
func splitPrimEntry(key []byte) (pk []byte, root heap.RowPtr, err error) {
	if len(key) < heap.RowPtrSize {
		return nil, root, fmt.Errorf("%w: primary entry of %d bytes", heap.ErrBadRowPtr, len(key))
	}
	n := len(key) - heap.RowPtrSize
	root, err = heap.DecodeRowPtr(key[n:])
	return key[:n], root, err
}

// versionRoots appends to dst the root pointers of the primary entries
// of the row with encoded primary key pk, in index order. Its node
// visits are charged to the primary index.
func (tx *Tx) versionRoots(t *TableHandle, pk []byte, dst []heap.RowPtr) ([]heap.RowPtr, error) {
	prim := t.ixs[0]
	b := tx.m.NodeVisitsTotal()
	defer tx.charge(prim, b)
	// Every entry of pk is pk and a RowPtrSize-byte pointer: the range
	// is [pk, pk + 0xFF...].
	hi := append(tx.vhi[:0], pk...)
	for range heap.RowPtrSize {
		hi = append(hi, 0xFF)
	}
	tx.vhi = hi
	cb := tx.cursorBufs()
	defer tx.putCursorBufs(cb)
	prim.tree.InitIter(&cb.it, tx.m, &btree.IterOptions{Lower: btree.Incl(pk), Upper: btree.Incl(hi)})
	for ok := cb.it.First(); ok; ok = cb.it.Next() {
		k := cb.it.Key()
		if len(k) != len(pk)+heap.RowPtrSize {
			continue // a longer primary key that starts with pk
		}
		root, err := heap.DecodeRowPtr(k[len(pk):])
		if err != nil {
			_ = cb.it.Close()
			return dst, fmt.Errorf("engine: table %s: primary index entry: %w", t.info.def.Name, err)
		}
		dst = append(dst, root)
	}
	return dst, cb.it.Close()
}

// fetchRoot returns the version of the HOT chain rooted at root that snap
// sees (heap_hot_search_buffer: heap.Heap.FetchVersionHeader), its
// pointer and header, after offering the page to the prune on access
// (heap_page_prune_opt, heap.Heap.PruneOpt: only when its prune hint is
// older than the horizon, the page is short of room and no other
// goroutine holds it). The chain is read under one shared latch of its
// page, so no prune changes it under the read. found is false when no
// version of the chain is visible, or root's line pointer is dead or
// unused, or it names a heap-only tuple (the entry's slot was vacuumed
// and reused: a reader with an MVCC snapshot never sees a version
// written there after it read the entry, as PostgreSQL's index scans
// rely on; locking readers recheck the key).
func (tx *Tx) fetchRoot(t *TableHandle, root heap.RowPtr, snap *heap.Snapshot) (img []byte, at heap.RowPtr, th heap.TupleHeader, found bool, err error) {
	img, at, th, found, _, err = tx.fetchRootDead(t, root, snap, false)
	return img, at, th, found, err
}

// fetchRootDead is fetchRoot that, with wantDead, also says when no
// version is found whether the whole chain is dead to every snapshot
// (heap.Heap.FetchVersionAllDead against the vacuum horizon): an index
// scan then kills the entry that led to it (Cursor.killEntry).
func (tx *Tx) fetchRootDead(t *TableHandle, root heap.RowPtr, snap *heap.Snapshot, wantDead bool) (img []byte, at heap.RowPtr, th heap.TupleHeader, found, allDead bool, err error) {
	cs := tx.db.clog.Load()
	var horizon uint64 // the vacuum horizon, read once if needed (0: not read)
	if x := t.heap.PruneXid(root.Page); x != 0 {
		if horizon = tx.db.vacuumHorizon(); x < horizon {
			if _, err := t.heap.PruneOpt(tx.m, root.Page, horizon, cs); err != nil {
				return nil, root, th, false, false, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
			}
		}
	}
	var deadFor uint64 // FetchVersionAllDead's horizon: 0 asks nothing
	if wantDead {
		if horizon == 0 {
			horizon = tx.db.vacuumHorizon()
		}
		deadFor = horizon
	}
	th, img, at, found, allDead, err = t.heap.FetchVersionAllDead(tx.m, root, snap, cs, deadFor, tx.val)
	if err != nil {
		return nil, root, th, false, false, fmt.Errorf("engine: table %s: version %s: %w", t.info.def.Name, root, err)
	}
	tx.val = img
	return img, at, th, found, allDead, nil
}

// versionedFind returns the version of the row with encoded primary key
// pk that snap sees (at most one does): it follows each primary entry of
// pk to its HOT chain (fetchRoot). root is the entry's pointer, at the
// version's own. With recheck, a version whose primary key is not pk is
// skipped: a locking reader's snapshot (the latest) could see a version
// written into a slot that vacuum freed after the entry was read.
func (tx *Tx) versionedFind(t *TableHandle, pk []byte, snap *heap.Snapshot, recheck bool) (img []byte, root, at heap.RowPtr, th heap.TupleHeader, found bool, err error) {
	var stack [4]heap.RowPtr
	roots, err := tx.versionRoots(t, pk, stack[:0])
	if err != nil {
		return nil, root, at, th, false, err
	}
	for _, r := range roots {
		img, at, th, found, err = tx.fetchRoot(t, r, snap)
		if err != nil {
			return nil, r, at, th, false, err
		}
		if found && recheck {
			if found, err = tx.versionHasKey(t, img, pk); err != nil {
				return nil, r, at, th, false, err
			}
		}
		if found {
			return img, r, at, th, true, nil
		}
	}
	return nil, root, at, th, false, nil
}

// versionHasKey reports whether the version img has primary key pk.
func (tx *Tx) versionHasKey(t *TableHandle, img, pk []byte) (bool, error) {
	cols := t.info.def.Columns
	row, err := decodeRow(img, cols, tx.vrow)
	if err != nil {
		return false, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	tx.vrow = row
	tx.vkey = appendKey(tx.vkey[:0], cols, t.info.pk, row)
	return bytes.Equal(tx.vkey, pk), nil
}

// versionGivesEntry reports whether the version img has the secondary
// entry key of ix: an entry that carries the primary key names every
// version of the row, so a reader through it checks that the version it
// finds is one the entry was made for (a row whose indexed columns
// changed keeps its old entry until vacuum, as PostgreSQL keeps it).
func (tx *Tx) versionGivesEntry(t *TableHandle, ix *index, img, pk, key []byte) (bool, error) {
	cols := t.info.def.Columns
	row, err := decodeRow(img, cols, tx.vrow)
	if err != nil {
		return false, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	tx.vrow = row
	tx.vkey = t.entryKey(tx.vkey, ix, row, pk, heap.RowPtr{})
	return bytes.Equal(tx.vkey, key), nil
}

// versionFetch reads the version of the HOT chain rooted at root that a
// locking access sees (the latest committed), for scans; no visible
// version is heap.ErrRowNotFound.
func (tx *Tx) versionFetch(t *TableHandle, root heap.RowPtr) ([]byte, error) {
	return tx.versionFetchSnap(t, root, nil)
}

// versionFetchSnap is versionFetch with snapshot snap (nil: the latest
// committed, as versionFetch).
func (tx *Tx) versionFetchSnap(t *TableHandle, root heap.RowPtr, snap *heap.Snapshot) ([]byte, error) {
	if snap == nil {
		snap = tx.latestSnap()
	}
	row, _, _, found, err := tx.fetchRoot(t, root, snap)
	if err == nil && !found {
		err = fmt.Errorf("%w: table %s: no version of %s visible", heap.ErrRowNotFound, t.info.def.Name, root)
	}
	return row, err
}

// serializationFailure rolls tx back and returns ErrSerialization.
func (tx *Tx) serializationFailure(t *TableHandle) error {
	err := fmt.Errorf("%w: table %s", ErrSerialization, t.info.def.Name)
	tx.m.SerializationFailures++
	if rerr := tx.Rollback(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// stmtView opens, under RepeatableRead, the transaction's view if it has
// none, before a write or locking read waits for its lock (PostgreSQL
// takes the statement's snapshot first).
func (tx *Tx) stmtView() {
	if tx.iso == RepeatableRead && tx.view == nil {
		tx.openView()
	}
}

// versionedLatest reads, under the row lock, the latest version of the
// row with primary key key: the root pointer of its HOT chain, its
// pointer and (in tx.val) its image. Under RepeatableRead a latest
// version the transaction's view does not see (or a row deleted since the
// view was taken) is ErrSerialization, with the transaction rolled back.
func (tx *Tx) versionedLatest(t *TableHandle, key []byte) (img []byte, root, at heap.RowPtr, found bool, err error) {
	tx.m.RowFetches++
	tx.m.RowFetchesHeap++
	img, root, at, th, found, err := tx.versionedFind(t, key, tx.latestSnap(), true)
	if err != nil {
		return nil, root, at, false, err
	}
	if tx.iso == RepeatableRead && tx.view != nil {
		vs := tx.snapOfView(tx.view)
		if found {
			ok, err := heap.Visible(th, vs, tx.db.clog.Load())
			if err != nil {
				return nil, root, at, false, err
			}
			if !ok && th.Xmin != tx.trxID {
				return nil, root, at, false, tx.serializationFailure(t)
			}
		} else {
			// Deleted by a transaction the view does not see: the view
			// still sees a version.
			save := append([]byte(nil), tx.val...)
			_, _, _, _, seen, err := tx.versionedFind(t, key, vs, true)
			tx.val = save
			if err != nil {
				return nil, root, at, false, err
			}
			if seen {
				return nil, root, at, false, tx.serializationFailure(t)
			}
		}
	}
	return img, root, at, found, nil
}

// A locking scan under RepeatableRead (Cursor.rrLock) reads each row's
// latest version under its lock, as every locking read here does, and
// then holds it to what PostgreSQL's would find, whose scan reads the
// transaction's snapshot and locks each row it returns
// (heap_lock_tuple, then "could not serialize access due to concurrent
// update" when the row's version is no longer the latest). For each
// index entry the scan visits:
//   - a latest version the snapshot sees (or the transaction's own) is
//     the row, as before;
//   - otherwise (a latest version the snapshot does not see, or none, or
//     one that no longer gives the entry), if the snapshot's version of
//     the row would have been returned at this entry (the entry names
//     the version chain the snapshot sees, or, for an entry that carries
//     the primary key, the snapshot's version gives it), the row was
//     changed or deleted by a transaction that committed after the
//     snapshot: ErrSerialization, the transaction rolled back;
//   - else the entry is not the snapshot's (a row inserted since, or an
//     entry of values the row no longer had at the snapshot), and the
//     scan skips it, as PostgreSQL's does.
// Only the two last cases cost a read more (the entry's row through the
// snapshot); a row unchanged since the snapshot costs what a locking
// scan did before.

// rrCheck checks the row load read against the snapshot: c.th is its
// latest version's header (read here if load did not: an index-only
// entry).
func (c *Cursor) rrCheck() error {
	tx, t := c.tx, c.t
	if c.allVisible || (c.curPK == nil && !c.rootSet) {
		return nil // visible to every snapshot, or nothing names the row (count(*) entries)
	}
	if !c.thSet {
		save := append(tx.val[:0:0], tx.val...)
		var th heap.TupleHeader
		var found bool
		var err error
		if c.rootSet {
			_, _, th, found, err = tx.fetchRoot(t, c.root, tx.latestSnap())
		} else {
			_, _, _, th, found, err = tx.versionedFind(t, c.curPK, tx.latestSnap(), true)
		}
		tx.val = save
		if err != nil {
			return err
		}
		if !found {
			return c.rrConflict()
		}
		c.th, c.thSet = th, true
	}
	vs := tx.snapOfView(tx.view)
	ok, err := heap.Visible(c.th, vs, tx.db.clog.Load())
	if err != nil || ok || c.th.Xmin == tx.trxID {
		return err
	}
	return c.rrConflict()
}

// rrConflict decides for the current entry, whose row's latest version
// the scan does not return: ErrSerialization (the transaction rolled
// back) if the snapshot's version of the row would have been returned
// at this entry, errSkip if not.
func (c *Cursor) rrConflict() error {
	tx, t, ix := c.tx, c.t, c.ix
	vs := tx.snapOfView(tx.view)
	save := append(tx.val[:0:0], tx.val...)
	var seen bool
	var err error
	if c.rootSet {
		_, _, _, seen, err = tx.fetchRoot(t, c.root, vs)
	} else if c.curPK != nil {
		var img []byte
		img, _, _, _, seen, err = tx.versionedFind(t, c.curPK, vs, true)
		if err == nil && seen && !ix.primary {
			seen, err = tx.versionGivesEntry(t, ix, img, c.curPK, c.it.Key())
		}
	}
	tx.val = save // the row load read, which the scan returns (before a rollback frees the buffers)
	if err != nil {
		return err
	}
	if seen {
		return tx.serializationFailure(t)
	}
	return errSkip
}

// versionedGet is get for a versioned table.
func (tx *Tx) versionedGet(t *TableHandle, key []byte, dst Row, mode lock.Mode) (Row, bool, error) {
	var img []byte
	var found bool
	var err error
	if mode == lock.Shared && tx.iso != Serializable {
		// A plain read: no lock, the view's version.
		snap := tx.snapOfView(tx.readView(true))
		tx.m.ConsistentReads++
		tx.m.RowFetches++
		tx.m.RowFetchesHeap++
		img, _, _, _, found, err = tx.versionedFind(t, key, snap, false)
	} else {
		tx.stmtView()
		if err := tx.lock(t, key, mode); err != nil {
			return nil, false, err
		}
		img, _, _, found, err = tx.versionedLatest(t, key)
	}
	if err != nil || !found {
		return dst, false, err
	}
	return tx.returnRow(t, img, dst)
}

// versionedInsertRow writes the first version of a new row (image
// tx.row, primary key pk) and its primary entry, (pk, its pointer), and
// returns the pointer its secondary entries carry. The caller holds the
// row lock of pk, so no other transaction is writing a version of pk: a
// primary entry of pk whose HOT chain has a live version (the latest
// committed, or the transaction's own) is a duplicate key; entries whose
// versions are dead (deleted and committed, or never committed) are no
// conflict and stay until vacuum removes them (_bt_check_unique).
func (tx *Tx) versionedInsertRow(t *TableHandle, pk []byte, dup func() error) (heap.RowPtr, error) {
	_, _, _, _, live, err := tx.versionedFind(t, pk, tx.latestSnap(), true)
	if err != nil {
		return heap.RowPtr{}, err
	}
	if live {
		return heap.RowPtr{}, dup()
	}
	if err := tx.versionedWriter(); err != nil {
		return heap.RowPtr{}, err
	}
	ptr, err := t.heap.InsertVersion(tx.m, tx.trxID, tx.row)
	if err != nil {
		return ptr, err
	}
	return ptr, tx.insertPrimVersion(t, pk, ptr)
}

// insertPrimVersion inserts the primary entry (pk, root), with its undo.
func (tx *Tx) insertPrimVersion(t *TableHandle, pk []byte, root heap.RowPtr) error {
	prim := t.ixs[0]
	tx.key2 = primVersionKey(tx.key2, pk, root)
	b := tx.m.NodeVisitsTotal()
	err := tx.treeInsert(prim, tx.key2, nil, 0)
	tx.charge(prim, b)
	if err != nil {
		return fmt.Errorf("engine: table %s: primary index: %w", t.info.def.Name, err)
	}
	return nil
}

// versionedIndex adds the index entries of the version a non-HOT update
// wrote at root (heap_update then ExecInsertIndexTuples): one in the
// primary index and one in every secondary index that carries row
// pointers, each naming root; one in each secondary that carries the
// primary key whose columns changed (touched), since an unchanged entry
// already names the row. Old entries stay until vacuum. tx.cur holds the
// new row.
func (tx *Tx) versionedIndex(t *TableHandle, pk []byte, root heap.RowPtr, touched func(*index) bool) error {
	if err := tx.insertPrimVersion(t, pk, root); err != nil {
		return err
	}
	tx.wrote(t.ixs[0])
	for _, ix := range t.ixs[1:] {
		if ix.carry != carryPtr && !touched(ix) {
			continue
		}
		tx.key2 = t.entryKey(tx.key2, ix, tx.cur, pk, root)
		b := tx.m.NodeVisitsTotal()
		err := tx.treeInsert(ix, tx.key2, nil, 0)
		tx.charge(ix, b)
		if ix.carry != carryPtr && errors.Is(err, btree.ErrDuplicateKey) {
			// The row had these values before: that entry serves.
			continue
		}
		if err != nil {
			return fmt.Errorf("engine: table %s: index %s: %w", t.info.def.Name, ix.name, err)
		}
		tx.wrote(ix)
	}
	return tx.recheckUnique(t, tx.cur, pk, root, touched)
}

// commitStatus records tx's end in the commit log, in mt when given (the
// commit's own mini-transaction), else in one of its own.
func (tx *Tx) commitStatus(mt *cache.Mtr, st heap.XidStatus) error {
	if !tx.hv {
		return nil
	}
	l := tx.db.clog.Load()
	if mt != nil {
		return l.SetStatus(mt, tx.trxID, st)
	}
	own := tx.db.pool.BeginMtr(tx.cm())
	err := l.SetStatus(own, tx.trxID, st)
	own.Commit()
	return err
}

// readOldVersion is readOld for a versioned table: under the row lock it
// reads the latest version into tx.old and returns the root of its HOT
// chain and the version's pointer.
func (tx *Tx) readOldVersion(t *TableHandle, key []byte, pk []Value) (root, at heap.RowPtr, err error) {
	img, root, at, found, err := tx.versionedLatest(t, key)
	if err != nil {
		return root, at, err
	}
	if !found {
		return root, at, fmt.Errorf("%w: table %s: primary key %s", ErrNotFound, t.info.def.Name, t.describeKey(t.info.pk, t.pkRow(pk)))
	}
	tx.m.RowsExamined++
	tx.m.RowsDecoded++
	tx.oldImg = append(tx.oldImg[:0], img...)
	if tx.old, err = decodeRow(img, t.info.def.Columns, tx.old); err != nil {
		return root, at, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	return root, at, nil
}

// indexOnlyVisible decides, for an index-only scan of a versioned table,
// whether the entry key (primary key pk, or row pointer ptr) may be
// returned without visiting the heap, as PostgreSQL's IndexOnlyNext
// does: when the visibility map says the page of the entry's pointer
// all-visible, every tuple on it is visible to every snapshot and the
// page has no dead line pointer (vacuum sets the bit only then), so the
// entry names a live version and its columns are that version's.
// Otherwise the heap is visited (IndexOnlyHeapFetches) and an entry none
// of whose chain's versions the scan sees is skipped. An entry that
// carries the primary key names no version: it is always checked in the
// heap, through the primary index, and skipped unless the version the
// scan sees gives the entry back.
//
// The entry was read before: the iterator keeps a pin on its leaf but
// no latch, and a locking scan may have waited for the row's lock since.
// Meanwhile vacuum may have removed the entry, set its line pointer
// unused and the page all-visible, and an insert may have reused the
// pointer for another row. PostgreSQL's index-only scan keeps the leaf
// pinned and btbulkdelete takes a cleanup lock on every leaf, so vacuum
// cannot pass an entry a scan stands on; here vacuum takes no such lock,
// so the scan asks its iterator instead. The map's bit is trusted only
// if the entry's leaf is unchanged after the bit was read: vacuum
// removes the entry before it frees the pointer and sets the bit, so a
// bit set by that vacuum is seen with the leaf changed. Otherwise the
// heap is visited, and a scan with the latest snapshot (a locking one)
// keeps the version only if it gives the entry back: that snapshot sees
// a version written into a reused pointer, an MVCC snapshot does not.
func (c *Cursor) indexOnlyVisible(ix *index, key, pk []byte, ptr heap.RowPtr) error {
	tx, t := c.tx, c.t
	snap := c.hsnap
	if snap == nil {
		snap = tx.latestSnap()
	}
	if !ix.primary && ix.carry != carryPtr {
		tx.m.IndexOnlyHeapFetches++
		img, _, _, th, found, err := tx.versionedFind(t, pk, snap, c.hsnap == nil)
		if err != nil {
			return err
		}
		c.th, c.thSet = th, found
		if !found {
			if c.rrLock {
				return c.rrConflict()
			}
			return errSkip
		}
		if ok, err := tx.versionGivesEntry(t, ix, img, pk, key); err != nil || !ok {
			if err == nil {
				err = errSkip
				if c.rrLock {
					err = c.rrConflict()
				}
			}
			return err
		}
		return nil
	}
	if h := testHookIndexOnlyEntry; h != nil {
		h()
	}
	tx.m.IndexOnlyVMChecks++
	vis, err := t.heap.AllVisible(tx.m, ptr.Page)
	if err != nil {
		return err
	}
	if vis && !c.it.Changed() {
		// Every tuple on the page is visible to every snapshot, the
		// transaction's among them (rrCheck).
		c.allVisible = true
		return nil
	}
	tx.m.IndexOnlyHeapFetches++
	img, _, th, found, allDead, err := tx.fetchRootDead(t, ptr, snap, true)
	c.th, c.thSet = th, err == nil && found
	if err == nil && found && c.hsnap == nil {
		found, err = tx.versionHasEntry(t, ix, img, key, ptr)
	}
	if err == nil && !found {
		if allDead {
			if err := c.killEntry(); err != nil {
				return err
			}
		} else if c.rrLock {
			return c.rrConflict()
		}
		err = errSkip
	}
	return err
}

// killEntry marks the cursor's current entry killed (btree.Iter.Kill),
// after a heap visit found every version of the HOT chain it names dead
// to every snapshot: PostgreSQL's index scan sets kill_prior_tuple when
// heap_hot_search_buffer reports all_dead, and _bt_killitems marks the
// item LP_DEAD; every later scan steps over it without a heap visit
// until vacuum's index pass removes it. Only entries that name a HOT
// chain are killed: a versioned table's primary entries and the entries
// of secondaries that carry row pointers. A secondary entry that carries
// the primary key names the row, whose later versions may give it back
// again (an update setting old values back finds the entry already
// there), so it is never killed.
//
// The mark is a hint: vacuum removes a killed entry as any other, and a
// mark lost in a crash costs only a heap visit.
func (c *Cursor) killEntry() error {
	if !c.ix.primary && c.ix.carry != carryPtr {
		return nil
	}
	b := c.tx.m.NodeVisitsTotal()
	killed, err := c.it.Kill()
	c.tx.charge(c.ix, b)
	if err != nil {
		return fmt.Errorf("engine: table %s: index %s: kill entry: %w", c.t.info.def.Name, c.ix.name, err)
	}
	if killed {
		c.tx.m.IndexEntriesKilled++
	}
	return nil
}

// testHookIndexOnlyEntry, when set by a test, runs in an index-only scan
// of a versioned table between an entry's read and the visibility map's
// check of its page.
var testHookIndexOnlyEntry func()

// versionHasEntry reports whether the version img, found through the
// entry key of ix (the primary index or a secondary that carries row
// pointers) naming root, is a version the entry was made for: one whose
// columns give the entry back. A version written into a pointer vacuum
// freed after the entry was read is another row's, or the same row's
// with other values.
func (tx *Tx) versionHasEntry(t *TableHandle, ix *index, img, key []byte, root heap.RowPtr) (bool, error) {
	cols := t.info.def.Columns
	row, err := decodeRow(img, cols, tx.vrow)
	if err != nil {
		return false, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	tx.vrow = row
	if ix.primary {
		tx.vkey = root.Append(appendKey(tx.vkey[:0], cols, t.info.pk, row))
	} else {
		tx.vkey = t.entryKey(tx.vkey, ix, row, nil, root)
	}
	return bytes.Equal(tx.vkey, key), nil
}

// vacuumHorizon is PostgreSQL's OldestXmin: the smallest of the next
// transaction id, the active writers' ids, the open views' xmin and the
// open cursors' snapshots' xmin (cursorSnap).
func (db *DB) vacuumHorizon() uint64 {
	s := &db.trx
	s.mu.Lock()
	defer s.mu.Unlock()
	h := db.txSeq.Load() + 1
	if len(s.rw) > 0 {
		h = min(h, s.rw[0])
	}
	for v := range s.views {
		h = min(h, v.upLimit)
	}
	for sn := range s.snaps {
		h = min(h, sn.Xmin)
	}
	return h
}

// anyLive reports whether an entry of the unique index ix from it's
// current one on (every one starting with the n-byte key prefix) names a
// live version, as PostgreSQL's _bt_check_unique decides with its dirty
// snapshot: an entry whose versions are dead is no conflict; one whose
// version is live (committed and not deleted, or the transaction's own)
// is a duplicate; one whose version is being inserted, or deleted or
// updated, by a transaction still in progress is waited for (the
// writer's row lock, taken shared and held to the end of the transaction
// as InnoDB's duplicate check holds it; PostgreSQL waits on the
// transaction itself) and looked at again. A row-pointer entry names a
// HOT chain, whose versions all have the entry's values; an entry that
// carries the primary key counts only for a version that gives it back.
//
// The check runs before the row's own entries are written (checkUnique),
// not under the latch of the leaf it inserts into as PostgreSQL's does,
// so it runs again once they are (recheckUnique), skipping the row's own
// entry (self): two transactions that insert the same value at once,
// neither having written its version when the other first checked, meet
// each other's entry then.
func (tx *Tx) anyLive(t *TableHandle, ix *index, it interface {
	Key() []byte
	Next() bool
}, n int, self []byte) (bool, error) {
	var key []byte
	var stack [4]heap.RowPtr
	for ok := true; ok; ok = it.Next() {
		key = append(key[:0], it.Key()...)
		if self != nil && bytes.Equal(key, self) {
			continue
		}
		rest := key[n:]
		for range maxUniqueWaits {
			roots := stack[:0]
			var err error
			if ix.carry == carryPtr {
				root, derr := heap.DecodeRowPtr(rest)
				if derr != nil {
					return false, fmt.Errorf("engine: table %s: index %s entry: %w", t.info.def.Name, ix.name, derr)
				}
				roots = append(roots, root)
			} else if roots, err = tx.versionRoots(t, rest, roots); err != nil {
				return false, err
			}
			live, wait, err := tx.uniqueConflict(t, ix, roots, key)
			if err != nil || live {
				return live, err
			}
			if wait == nil {
				break
			}
			// The iterator holds a pin but no latch: the wait holds none.
			if err := tx.lock(t, wait, lock.Shared); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// maxUniqueWaits bounds how often a unique check waits for writers of
// one entry's row; each wait ends a writer, so a check that needs more
// is a bug, not contention.
const maxUniqueWaits = 64

// uniqueConflict examines the versions of the HOT chains rooted at roots
// for the unique check of ix's entry key (see anyLive): live when one is
// a live version, else wait is the encoded primary key of a row whose
// version a transaction still in progress writes (nil: none).
func (tx *Tx) uniqueConflict(t *TableHandle, ix *index, roots []heap.RowPtr, key []byte) (live bool, wait []byte, err error) {
	cs := tx.db.clog.Load()
	snap := tx.latestSnap()
	cols := t.info.def.Columns
	for _, root := range roots {
		_, vs, err := t.heap.HotChain(tx.m, root)
		if err != nil {
			return false, nil, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
		}
		for _, v := range vs {
			th := v.Header
			vis, err := heap.Visible(th, snap, cs)
			if err != nil {
				return false, nil, err
			}
			deleting := vis && th.Xmax != 0 && !th.LockOnly() && th.Infomask&heap.HeapXmaxInvalid == 0 &&
				th.Xmax != tx.trxID && tx.db.trxActive(th.Xmax)
			inserting := !vis && th.Xmin != tx.trxID && tx.db.trxActive(th.Xmin)
			if !vis && !inserting {
				continue
			}
			row, err := decodeRow(v.Row, cols, nil)
			if err != nil {
				return false, nil, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
			}
			pk := appendKey(nil, cols, t.info.pk, row)
			if ix.carry != carryPtr && !bytes.Equal(t.entryKey(nil, ix, row, pk, root), key) {
				continue // another value of the row's
			}
			if vis && !deleting {
				return true, nil, nil
			}
			if wait == nil {
				wait = pk
			}
		}
	}
	return false, wait, nil
}

// recheckUnique runs the unique checks of the secondaries of t that
// changed (changed nil: all) again once the row's version (root) and its
// entries are written (see anyLive), the row's own entry skipped. A
// duplicate found then comes from a transaction that wrote the same
// value while this one was between its first check and its writes: the
// statement cannot be taken back alone, so the transaction is rolled
// back and the error is ErrSerialization (retryable) wrapping
// ErrDuplicateKey, as PostgreSQL aborts the transaction on a unique
// violation.
func (tx *Tx) recheckUnique(t *TableHandle, row Row, pk []byte, root heap.RowPtr, changed func(*index) bool) error {
	for _, ix := range t.ixs[1:] {
		if !ix.unique || (changed != nil && !changed(ix)) {
			continue
		}
		if anyNull(row, ix.cols) {
			continue
		}
		prefix := appendKey(nil, t.info.def.Columns, ix.cols, row)
		self := t.entryKey(nil, ix, row, pk, root)
		var hi btree.Bound
		if s := appendPrefixSuccessor(nil, prefix); s != nil {
			hi = btree.Excl(s)
		}
		b := tx.m.NodeVisitsTotal()
		cb := tx.cursorBufs()
		ix.tree.InitIter(&cb.it, tx.m, &btree.IterOptions{Lower: btree.Incl(prefix), Upper: hi})
		var found bool
		var err error
		if cb.it.First() {
			found, err = tx.anyLive(t, ix, &cb.it, len(prefix), self)
		}
		if cerr := cb.it.Close(); err == nil {
			err = cerr
		}
		tx.putCursorBufs(cb)
		tx.charge(ix, b)
		if err != nil {
			return err
		}
		if found {
			dup := fmt.Errorf("%w: table %s: unique index %s already has %s",
				ErrDuplicateKey, t.info.def.Name, ix.name, t.describeKey(ix.cols, row))
			tx.m.SerializationFailures++
			err := fmt.Errorf("%w: %w", ErrSerialization, dup)
			if rerr := tx.Rollback(); rerr != nil {
				return errors.Join(err, rerr)
			}
			return err
		}
	}
	return nil
}

// testHookUniqueChecked, when set by a test, runs in an insert into a
// versioned table between its unique checks and its writes.
var testHookUniqueChecked func(tx *Tx)
