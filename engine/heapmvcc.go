package engine

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
	"github.com/enginelab/enginelab/heap/xact"
)

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
// Indexes. The primary index maps a key to the pointer of the row's first
// version (the head of its version chain, not only its HOT chain); a read
// walks the chain forward through the versions' ctids, testing each, and
// stops at the one its snapshot sees (at most one is). This departs from
// PostgreSQL, whose non-HOT update adds an entry pointing at the new
// version, so that one key has two entries: here one entry per key keeps
// the primary index unique without a visibility-aware unique check, at
// the price of longer walks for rows updated many times (vacuum would
// shorten them; not built). Secondary entries carry the head pointer too
// (row-pointer organization), so a version change never moves them; an
// update that changes an indexed column replaces the entry, and a delete
// removes it, as before, with undo: an older snapshot reading through a
// secondary index does not find the row's old key (PostgreSQL keeps the
// old entry until vacuum).
//
// Rollback. The heap keeps what an aborted transaction wrote: its
// versions are dead (xmin aborted) and its xmax stamps ignored (xmax
// aborted), as PostgreSQL leaves them. Index changes are taken back by the
// undo log as for unversioned tables.

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

// walkVersions follows the version chain from head and returns the
// version snap sees: its row (in tx.val), pointer and header. found is
// false when none is; th is then the chain's last version's header.
//
// Pruning. Each page the walk comes to is first offered to the prune on
// access (heap.Heap.PruneOpt, heap_page_prune_opt: only when its prune
// hint is older than the horizon, the page is short of room and no other
// goroutine holds it). The heap keeps the last version of a HOT chain
// dead to its end (SetKeepChainTails), so every version another names by
// its ctid, or an index entry names, stays reachable: a pruned HOT root
// is a redirect, which the walk follows. A chain pruned while the walk
// was on its way (the slot it was heading for became unused, or was
// reused by another version: a HOT successor's xmin is not its
// predecessor's xmax, as heap_hot_search_buffer checks) is walked again
// from the head.
//
// The walk goes past a version only to the one its ctid names, and only
// when the version was updated or deleted by a transaction that did not
// abort (or never committed itself and was linked to a re-insert,
// versionedInsertRow): an aborted update leaves a stale ctid, whose
// target pruning may have removed.
func (tx *Tx) walkVersions(t *TableHandle, head heap.RowPtr, snap *heap.Snapshot) (row []byte, at heap.RowPtr, th heap.TupleHeader, found bool, err error) {
	cs := tx.db.clog.Load()
	var horizon uint64
	lastPruned := ^uint32(0)
	for range maxChainRestarts {
		p := head
		var prev heap.TupleHeader
		first := true
		for {
			if p.Page != lastPruned {
				lastPruned = p.Page
				if x := t.heap.PruneXid(p.Page); x != 0 {
					if horizon == 0 {
						horizon = tx.db.vacuumHorizon()
					}
					if x < horizon {
						if _, err := t.heap.PruneOpt(tx.m, p.Page, horizon, cs); err != nil {
							return nil, p, th, false, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
						}
					}
				}
			}
			var ok bool
			th, row, at, ok, err = t.heap.ReadChainVersion(tx.m, p, tx.val)
			if err != nil {
				return nil, p, th, false, fmt.Errorf("engine: table %s: version %s: %w", t.info.def.Name, p, err)
			}
			tx.val = row
			if !ok || (!first && prev.HotUpdated() && th.Xmin != prev.Xmax) {
				if first {
					return nil, at, th, false, nil
				}
				break // pruned under the walk: again from the head
			}
			tx.m.HeapVersionsRead++
			vis, err := heap.Visible(th, snap, cs)
			if err != nil {
				return nil, at, th, false, err
			}
			if vis {
				return row, at, th, true, nil
			}
			next, err := chainNext(th, at, cs)
			if err != nil || !next {
				return nil, at, th, false, err
			}
			p, prev, first = th.Ctid, th, false
		}
	}
	return nil, head, th, false, fmt.Errorf("engine: table %s: version chain from %s changed under %d walks", t.info.def.Name, head, maxChainRestarts)
}

// maxChainRestarts bounds how often a walk starts again from the head of
// a chain pruned under it; each restart means a prune finished, so a walk
// that needs many is a bug, not contention.
const maxChainRestarts = 64

// chainNext reports whether a walk goes on from the version at at (header
// th) to th.Ctid: the version links to another, and its xmax is a
// deleter or updater that did not abort, or none (a version whose
// inserter aborted, linked to a re-insert). A lock-only xmax means the
// version was not updated: its ctid is whatever an aborted update left.
func chainNext(th heap.TupleHeader, at heap.RowPtr, cs heap.CommitStatus) (bool, error) {
	if th.Ctid == at {
		return false, nil
	}
	if th.Xmax == 0 {
		return true, nil
	}
	if th.LockOnly() || th.Infomask&heap.HeapXmaxInvalid != 0 {
		return false, nil
	}
	if th.Infomask&heap.HeapXmaxCommitted != 0 {
		return true, nil
	}
	st, err := cs.XidStatus(th.Xmax)
	return st != heap.XidAborted, err
}

// versionFetch reads the version of the row whose chain starts at head
// that a locking access sees (the latest committed), for scans; no
// visible version is heap.ErrRowNotFound.
func (tx *Tx) versionFetch(t *TableHandle, head heap.RowPtr) ([]byte, error) {
	return tx.versionFetchSnap(t, head, nil)
}

// versionFetchSnap is versionFetch with snapshot snap (nil: the latest
// committed, as versionFetch).
func (tx *Tx) versionFetchSnap(t *TableHandle, head heap.RowPtr, snap *heap.Snapshot) ([]byte, error) {
	if snap == nil {
		snap = tx.latestSnap()
	}
	row, _, _, found, err := tx.walkVersions(t, head, snap)
	if err == nil && !found {
		err = fmt.Errorf("%w: table %s: no version of %s visible", heap.ErrRowNotFound, t.info.def.Name, head)
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
// row with primary key key: its head pointer, its pointer and (in tx.val)
// its image. Under RepeatableRead a latest version the transaction's view
// does not see (or a row deleted since it) is ErrSerialization, with the
// transaction rolled back.
func (tx *Tx) versionedLatest(t *TableHandle, key []byte) (img []byte, head, at heap.RowPtr, found bool, err error) {
	prim := t.ixs[0]
	b := tx.m.NodeVisitsTotal()
	v, ok, err := prim.tree.Get(tx.m, key, tx.val)
	tx.charge(prim, b)
	if err != nil || !ok {
		return nil, head, at, false, err
	}
	if head, err = heap.DecodeRowPtr(v); err != nil {
		return nil, head, at, false, fmt.Errorf("engine: table %s: primary index entry: %w", t.info.def.Name, err)
	}
	tx.m.RowFetches++
	tx.m.RowFetchesHeap++
	img, at, th, found, err := tx.walkVersions(t, head, tx.latestSnap())
	if err != nil {
		return nil, head, at, false, err
	}
	if tx.iso == RepeatableRead && tx.view != nil {
		vs := tx.snapOfView(tx.view)
		cs := tx.db.clog.Load()
		if found {
			ok, err := heap.Visible(th, vs, cs)
			if err != nil {
				return nil, head, at, false, err
			}
			if !ok && th.Xmin != tx.trxID {
				return nil, head, at, false, tx.serializationFailure(t)
			}
		} else if th.Xmax != 0 && th.Xmax != tx.trxID && vs.InProgress(th.Xmax) {
			// Deleted by a transaction the view does not see.
			if st, err := cs.XidStatus(th.Xmax); err == nil && st == heap.XidCommitted {
				return nil, head, at, false, tx.serializationFailure(t)
			}
		}
	}
	return img, head, at, found, nil
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
		prim := t.ixs[0]
		b := tx.m.NodeVisitsTotal()
		v, ok, gerr := prim.tree.Get(tx.m, key, tx.val)
		tx.charge(prim, b)
		if gerr != nil || !ok {
			return dst, false, gerr
		}
		head, derr := heap.DecodeRowPtr(v)
		if derr != nil {
			return dst, false, fmt.Errorf("engine: table %s: primary index entry: %w", t.info.def.Name, derr)
		}
		tx.m.RowFetches++
		tx.m.RowFetchesHeap++
		img, _, _, found, err = tx.walkVersions(t, head, snap)
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
// tx.row, primary key pk) and its primary entry, and returns the head
// pointer its secondary entries carry. A key whose chain has no live
// version (deleted and committed, or never committed) keeps its entry:
// the new version is chained after the chain's last one (LinkVersion),
// where a walk finds it once the older ones are invisible.
func (tx *Tx) versionedInsertRow(t *TableHandle, pk []byte, dup func() error) (heap.RowPtr, error) {
	prim := t.ixs[0]
	b := tx.m.NodeVisitsTotal()
	v, exists, err := prim.tree.Get(tx.m, pk, tx.val)
	tx.charge(prim, b)
	if err != nil {
		return heap.RowPtr{}, err
	}
	var head, tail heap.RowPtr
	if exists {
		if head, err = heap.DecodeRowPtr(v); err != nil {
			return head, fmt.Errorf("engine: table %s: primary index entry: %w", t.info.def.Name, err)
		}
		var live bool
		if _, tail, _, live, err = tx.walkVersions(t, head, tx.latestSnap()); err != nil {
			return head, err
		}
		if live {
			return head, dup()
		}
	}
	if err := tx.versionedWriter(); err != nil {
		return heap.RowPtr{}, err
	}
	ptr, err := t.heap.InsertVersion(tx.m, tx.trxID, tx.row)
	if err != nil {
		return ptr, err
	}
	if exists {
		return head, t.heap.LinkVersion(tx.m, tail, ptr)
	}
	p := ptr.Encode()
	b = tx.m.NodeVisitsTotal()
	err = tx.treeInsert(prim, pk, p[:], 0)
	tx.charge(prim, b)
	return ptr, err
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
// reads the latest version into tx.old and returns the chain's head and
// the version's pointer.
func (tx *Tx) readOldVersion(t *TableHandle, key []byte, pk []Value) (head, at heap.RowPtr, err error) {
	img, head, at, found, err := tx.versionedLatest(t, key)
	if err != nil {
		return head, at, err
	}
	if !found {
		return head, at, fmt.Errorf("%w: table %s: primary key %s", ErrNotFound, t.info.def.Name, t.describeKey(t.info.pk, t.pkRow(pk)))
	}
	tx.m.RowsExamined++
	tx.m.RowsDecoded++
	tx.oldImg = append(tx.oldImg[:0], img...)
	if tx.old, err = decodeRow(img, t.info.def.Columns, tx.old); err != nil {
		return head, at, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	return head, at, nil
}

// indexOnlyVisible decides, for an index-only scan of a versioned table,
// whether the entry (primary key pk or row pointer ptr) may be returned
// without visiting the heap, as PostgreSQL's IndexOnlyNext does: when the
// visibility map says the chain head's page all-visible, every tuple on
// it is visible to every snapshot, so the head is the row's live version
// and the entry's columns are its own. Otherwise the heap is visited
// (IndexOnlyHeapFetches) and an entry whose row no version of which the
// scan sees is skipped. The entry's columns are returned either way: an
// update that changes them replaces the entry.
func (c *Cursor) indexOnlyVisible(ix *index, pk []byte, ptr heap.RowPtr) error {
	tx, t := c.tx, c.t
	if !ix.primary && ix.carry != carryPtr {
		// The entry carries the primary key: the head comes from the
		// primary index.
		prim := t.ixs[0]
		b := tx.m.NodeVisitsTotal()
		v, found, err := prim.tree.Get(tx.m, pk, tx.val)
		tx.charge(prim, b)
		if err != nil {
			return err
		}
		if !found {
			return errSkip
		}
		if ptr, err = heap.DecodeRowPtr(v); err != nil {
			return fmt.Errorf("engine: table %s: primary index entry: %w", t.info.def.Name, err)
		}
	}
	tx.m.IndexOnlyVMChecks++
	vis, err := t.heap.AllVisible(tx.m, ptr.Page)
	if err != nil || vis {
		return err
	}
	tx.m.IndexOnlyHeapFetches++
	if _, err := tx.versionFetchSnap(t, ptr, c.hsnap); err != nil {
		if errors.Is(err, heap.ErrRowNotFound) {
			return errSkip
		}
		return err
	}
	return nil
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
// row with a live version: committed and not deleted, or the
// transaction's own (PostgreSQL's _bt_check_unique tests the heap tuple
// of each equal entry). A version written by a transaction still in
// progress is not seen: PostgreSQL would wait for it; here a concurrent
// insert of the same unique value under another primary key is not
// caught (the primary key's own row lock catches one of the same key).
func (tx *Tx) anyLive(t *TableHandle, ix *index, it interface {
	Key() []byte
	Next() bool
}, n int) (bool, error) {
	var rest []byte
	for ok := true; ok; ok = it.Next() {
		rest = append(rest[:0], it.Key()[n:]...)
		var head heap.RowPtr
		var err error
		if ix.carry == carryPtr {
			head, err = heap.DecodeRowPtr(rest)
		} else {
			prim := t.ixs[0]
			v, found, gerr := prim.tree.Get(tx.m, rest, tx.val)
			if gerr != nil || !found {
				if gerr != nil {
					return false, gerr
				}
				continue
			}
			head, err = heap.DecodeRowPtr(v)
		}
		if err != nil {
			return false, fmt.Errorf("engine: table %s: index %s entry: %w", t.info.def.Name, ix.name, err)
		}
		_, _, _, live, err := tx.walkVersions(t, head, tx.latestSnap())
		if err != nil || live {
			return live, err
		}
	}
	return false, nil
}
