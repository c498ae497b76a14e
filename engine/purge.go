package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/heap"
)

// Purge removes what no read view can need any more, as InnoDB's purge
// (trx0purge.cc, row0purge.cc). A committed transaction whose undo log
// holds records that build older versions (updates, delete-marks) puts the
// log on the history list (undolog.go); purge takes the logs from the
// list's oldest end, in commit order, as long as the purge view sees
// their transaction:
//
//	purge view: a view of now merged with every open read view, without
//	            creators (MariaDB's trx_sys.clone_oldest_view, which
//	            appends each open view with ReadViewBase::append): the
//	            smallest low limit, and the union of the views' active ids
//	            below it. A transaction it sees is seen by every open view
//	            and every later one, so no view needs a version older than
//	            that transaction's change. Copying the one view with the
//	            smallest low limit is not enough: two views made with no
//	            transaction id handed out between them share their low
//	            limit, and the later one lacks the ids that committed in
//	            between, which the earlier one must still not see.
//
// For each undo record of such a log (row_purge_record):
//
//   - a delete-mark ('x', TRX_UNDO_DEL_MARK_REC: row_purge_del_mark):
//     each secondary entry of the deleted row (built from the image the
//     record keeps) is removed if possible (below), then the clustered
//     record, if it is still delete-marked with this very undo record as
//     its roll pointer (row_purge_remove_clust_if_poss: a record updated
//     again, by an insert over it, is not this delete's to remove);
//   - an update that changed an indexed column ('c' with ordChange,
//     row_purge_upd_exist_or_extern): the old entry of every secondary
//     index, built from the old image, is removed if possible;
//   - anything else (an insert, an update of no indexed column, an update
//     of a delete-marked record) leaves nothing to remove.
//
// A secondary entry is removed if possible (row_purge_remove_sec_if_poss):
// if it is still there and delete-marked, and no version of its row that
// some view may still read has the entry (row_purge_poss_sec,
// row_vers_old_has_index_entry): the versions from the clustered record's
// current one back to the first one the purge view sees, built from undo
// like a consistent read's. The test and the removal are not atomic here
// (InnoDB holds the secondary leaf's latch across both); instead the
// removal is conditional on the entry still being delete-marked, under
// the leaf's latch (btree.DeleteIfIn). A writer that brings the entry
// back between the two either unmarked it first (the removal then leaves
// it) or finds it gone and inserts it (secInsert).
//
// Then the log is freed (historyRemove: off the list's head, its first
// page cached in a free slot for the next transaction, the others freed).
// Purge is not a transaction: it takes
// no row locks and writes no undo; each removal is one mini-transaction,
// and the log leaves the history list in its own, after every removal,
// so that a crash before it repeats the log's purge (each removal finds
// its record gone or changed, and does nothing).
//
// Every step is metered, on the meter PurgeStep is given: PurgeUndoRecords
// (undo records read), PurgeVersionsRead (versions built to decide about
// a secondary entry), PurgeRecords (clustered records removed),
// PurgeSecondaryRemoved, PurgeSecondaryKept (entries a version still
// needs) and UndoLogsPurged.

// PurgeMode says who runs purge (Options.Purge).
type PurgeMode uint8

// Purge modes.
const (
	// PurgeDefault is the database's default: PurgeBackground with the
	// real runtime, PurgeAfterCommit with another. The simulator's
	// scheduler sets PurgeManual and runs purge as an actor of its own.
	PurgeDefault PurgeMode = iota
	// PurgeBackground runs purge on a goroutine of its own (InnoDB's
	// purge coordinator, innodb_purge_threads=1; the work of a batch is
	// not split among workers here), on the database's purge meter
	// (DB.PurgeMeter), at InnoDB's pace (purgeBatchSize and the
	// timeouts below): batch after batch while there is work it may do,
	// then suspended for at most 10 ms, and then until a commit finds
	// the history list longer than a batch, or a second has passed.
	// Close stops it. Commits never wait for it: purge lag
	// (DB.PurgeLag) is what it has not done yet.
	PurgeBackground
	// PurgeAfterCommit purges on the committing goroutine, after each
	// commit that put a log on the history list (unless a purge is
	// already running, which will take it), on the database's purge
	// meter. A test that counts a transaction's work exactly gets the
	// same undo logs cached every run.
	PurgeAfterCommit
	// PurgeManual purges only when DB.PurgeStep is called (and once at
	// Open, after recovery): the simulator's scheduled purge actor, and
	// tests that look at delete-marked records.
	PurgeManual
)

func (p PurgeMode) String() string {
	switch p {
	case PurgeDefault:
		return "default"
	case PurgeBackground:
		return "background"
	case PurgeAfterCommit:
		return "after-commit"
	case PurgeManual:
		return "manual"
	}
	return fmt.Sprintf("PurgeMode(%d)", uint8(p))
}

// purgeView returns the purge view (see above).
func (db *DB) purgeView() ReadView {
	s := &db.trx
	s.mu.Lock()
	defer s.mu.Unlock()
	v := ReadView{lowLimit: db.txSeq.Load() + 1, ids: append([]uint64(nil), s.rw...)}
	for o := range s.views {
		v.merge(o)
	}
	v.upLimit = v.lowLimit
	if len(v.ids) > 0 {
		v.upLimit = v.ids[0]
	}
	return v
}

// merge makes v see only what both v and o see, as ReadViewBase::append:
// the smaller low limit, and the union of both views' ids below it (both
// ascending). The creator is left out: purge is no view's creator. v's up
// limit is left for the caller to set.
func (v *ReadView) merge(o *ReadView) {
	v.lowLimit = min(v.lowLimit, o.lowLimit)
	ids := v.ids
	for _, id := range o.ids {
		if i, found := slices.BinarySearch(ids, id); !found {
			ids = slices.Insert(ids, i, id)
		}
	}
	i, _ := slices.BinarySearch(ids, v.lowLimit)
	v.ids = ids[:i]
}

// PurgeStats say what purge has done since Open and what it has left.
type PurgeStats struct {
	// Purged counts the undo logs purged; Lag is the history list's length
	// now (InnoDB's purge lag, innodb_history_list_length).
	Purged, Lag int64
	// Records, SecondaryRemoved and SecondaryKept total the meters'
	// PurgeRecords, PurgeSecondaryRemoved and PurgeSecondaryKept.
	Records, SecondaryRemoved, SecondaryKept int64
}

// Purge returns the purge counters.
func (db *DB) Purge() PurgeStats {
	u := &db.undo
	u.mu.Lock()
	defer u.mu.Unlock()
	s := db.purgeStats
	s.Lag = int64(len(u.history))
	return s
}

// PurgeLag returns the history list's length: committed undo logs purge
// has not yet freed (InnoDB's history list length).
func (db *DB) PurgeLag() int64 { return int64(db.undo.historyLen()) }

// PurgeMeter returns a copy of the database's purge meter: the work of
// the purges that were given no meter of their own (the background
// goroutine's, the after-commit ones', Open's). It waits for a running
// purge.
func (db *DB) PurgeMeter() Meter {
	db.undo.purgeMu.Lock()
	defer db.undo.purgeMu.Unlock()
	return db.purgeMeter.Clone()
}

// PurgeStep purges, oldest first, the committed undo logs on the history
// list that the purge view sees, at most max of them (0: no limit), and
// returns how many it purged. Its work is charged to m (nil: the
// database's purge meter, PurgeMeter); Purge's totals count it either
// way. One purge runs at a time: a call waits for a running one. It is
// the step the simulator schedules as its purge actor (PurgeManual).
func (db *DB) PurgeStep(m *Meter, max int) (int, error) {
	db.undo.purgeMu.Lock()
	defer db.undo.purgeMu.Unlock()
	return db.purgeLocked(m, max)
}

// tryPurge is PurgeStep(nil, 0) unless a purge is running, which will see
// the log just added (the committing transaction's purge: it never waits).
func (db *DB) tryPurge() error {
	if !db.undo.purgeMu.TryLock() {
		return nil
	}
	defer db.undo.purgeMu.Unlock()
	_, err := db.purgeLocked(nil, 0)
	return err
}

func (db *DB) purgeLocked(m *Meter, max int) (int, error) {
	u := &db.undo
	if m == nil {
		m = &db.purgeMeter
	}
	view := db.purgeView()
	n := 0
	for max == 0 || n < max {
		u.mu.Lock()
		if len(u.history) == 0 {
			u.mu.Unlock()
			break
		}
		h := u.history[0]
		u.mu.Unlock()
		if !view.changesVisible(h.trxID) {
			break
		}
		before := *m
		if err := db.purgeLog(m, &view, h); err != nil {
			return n, fmt.Errorf("engine: purge of the undo log of transaction %d: %w", h.trxID, err)
		}
		db.crashPoint("purge-log-done")
		if err := db.historyRemove(m.Pages(), h); err != nil {
			return n, fmt.Errorf("engine: purge of the undo log of transaction %d: %w", h.trxID, err)
		}
		m.UndoLogsPurged++
		u.mu.Lock()
		s := &db.purgeStats
		s.Purged++
		s.Records += m.PurgeRecords - before.PurgeRecords
		s.SecondaryRemoved += m.PurgeSecondaryRemoved - before.PurgeSecondaryRemoved
		s.SecondaryKept += m.PurgeSecondaryKept - before.PurgeSecondaryKept
		u.mu.Unlock()
		n++
	}
	return n, nil
}

// purgeLog purges the records of the committed undo log h. REQUIRES:
// db.undo.purgeMu held.
func (db *DB) purgeLog(m *Meter, view *ReadView, h histLog) error {
	for no := h.l.first; no != 0; {
		next, recs, err := db.undoPageRecords(m.Pages(), no, db.undo.purgeBuf[:0])
		if err != nil {
			return err
		}
		db.undo.purgeBuf = recs
		for off := 0; off < len(recs); {
			n := int(binary.LittleEndian.Uint16(recs[off:]))
			undone := recs[off+2]&1 != 0
			body := recs[off+undoRecHeader : off+undoRecHeader+n]
			at := binary.LittleEndian.Uint32(recs[off+undoRecHeader+n:])
			off += undoRecHeader + n + 4
			if undone {
				continue
			}
			s, err := decodeStep(body)
			if err != nil {
				return fmt.Errorf("undo page %d, record at %d: %w", no, at, err)
			}
			m.PurgeUndoRecords++
			if err := db.purgeRecord(m, view, &s, rollPtr{page: no, off: uint16(at)}); err != nil {
				return err
			}
		}
		no = next
	}
	return nil
}

// undoPageRecords copies the records of undo page no into dst, each as
// its length (2B), flags (1B) and body, followed by its offset on the
// page (4B), and returns the next page of the log: purge works on the
// copy with no latch held.
func (db *DB) undoPageRecords(m *cache.Meter, no uint32, dst []byte) (uint32, []byte, error) {
	id := page.ID{Space: undoSpace, Page: no}
	pg, err := db.pool.Fetch(m, id)
	if err != nil {
		return 0, dst, fmt.Errorf("engine: undo page %d: %w", no, err)
	}
	pg.RLatch()
	defer func() {
		pg.RUnlatch()
		pg.Unpin(false)
	}()
	b := pg.Data()
	if page.KindOf(b) != page.KindUndo {
		return 0, dst, fmt.Errorf("%w: undo page %s has kind %s", cache.ErrBadFormat, id, page.KindOf(b))
	}
	free := int(binary.LittleEndian.Uint32(b[offUndoFree:]))
	if free < undoRecStart || free > len(b) {
		return 0, dst, fmt.Errorf("%w: undo page %s: records end at %d", cache.ErrBadFormat, id, free)
	}
	for off := undoRecStart; off < free; {
		if free-off < undoRecHeader {
			return 0, dst, fmt.Errorf("%w: undo page %s: record header at %d runs past %d", cache.ErrBadFormat, id, off, free)
		}
		n := int(binary.LittleEndian.Uint16(b[off:]))
		end := off + undoRecHeader + n
		if end > free {
			return 0, dst, fmt.Errorf("%w: undo page %s: record at %d runs past %d", cache.ErrBadFormat, id, off, free)
		}
		dst = append(dst, b[off:end]...)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(off))
		// A heap step's moved pointer follows its body (the kind is
		// the byte after the group's uvarint).
		if _, k := binary.Uvarint(b[off+undoRecHeader : end]); k > 0 && off+undoRecHeader+k < end && hasMoved(b[off+undoRecHeader+k]) {
			end += undoMoved
		}
		off = end
	}
	return binary.LittleEndian.Uint32(b[offUndoNext:]), dst, nil
}

// purgeRecord purges one undo record s, found at r, of a committed log.
func (db *DB) purgeRecord(m *Meter, view *ReadView, s *step, r rollPtr) error {
	if s.kind != stepClustDelMark && (s.kind != stepClustUpdate || s.flags&ordChange == 0) {
		return nil
	}
	st, err := db.structureOf(s.space)
	if err != nil {
		return err
	}
	t := st.table
	if t == nil {
		return fmt.Errorf("%w: a clustered undo record names space %d, which holds no clustered table", ErrInconsistent, s.space)
	}
	if len(t.ixs) > 1 && len(s.val) > 0 {
		// The old image: the deleted row's, or the one an update
		// replaced (whole: ordChange).
		row, err := decodeRow(s.val, t.info.def.Columns, nil)
		if err != nil {
			return fmt.Errorf("engine: table %s: purge: %w", t.info.def.Name, err)
		}
		for _, ix := range t.ixs[1:] {
			entry := t.entryKey(nil, ix, row, s.key, heap.RowPtr{})
			if err := db.purgeSec(m, view, t, ix, entry, s.key); err != nil {
				return fmt.Errorf("engine: table %s: index %s: purge: %w", t.info.def.Name, ix.name, err)
			}
		}
	}
	if s.kind == stepClustDelMark {
		return db.purgeClust(m, t, s.key, r)
	}
	return nil
}

// purgeClust removes the clustered record of key if it is still
// delete-marked by the undo record at r (row_purge_remove_clust_if_poss).
func (db *DB) purgeClust(m *Meter, t *TableHandle, key []byte, r rollPtr) error {
	prim := t.ixs[0]
	mt := db.pool.BeginMtr(m.Pages())
	removed, err := prim.tree.DeleteIfIn(m, mt, key, func(v []byte) bool {
		if len(v) < clustHdrSize {
			return false
		}
		h := readClustHdr(v)
		return h.deleted() && !h.roll.insert && h.roll.page == r.page && h.roll.off == r.off
	})
	mt.Commit()
	if removed {
		m.PurgeRecords++
	}
	return err
}

// purgeSec removes the secondary entry of ix if possible
// (row_purge_remove_sec_if_poss; see the top of this file). pk is the
// row's primary key.
func (db *DB) purgeSec(m *Meter, view *ReadView, t *TableHandle, ix *index, entry, pk []byte) error {
	v, found, err := ix.tree.Get(m, entry, nil)
	if err != nil || !found || !secDeleted(v) {
		return err // gone, or live: an entry of the row's current version
	}
	needed, err := db.versionHasEntry(m, view, t, ix, entry, pk, false)
	if err != nil {
		return err
	}
	if needed {
		m.PurgeSecondaryKept++
		return nil
	}
	mt := db.pool.BeginMtr(m.Pages())
	removed, err := ix.tree.DeleteIfIn(m, mt, entry, secDeleted)
	mt.Commit()
	if removed {
		m.PurgeSecondaryRemoved++
	}
	return err
}

// versionHasEntry reports whether a version of the row with primary key
// pk that a read view may still read has secondary entry entry in ix: the
// clustered record's current version, then the older ones built from
// undo, down to the first the purge view sees (row_vers_old_has_index_entry
// with also_curr; versions older than that one no view reads). With
// skipCurrent, the current version is not asked (it is being rolled
// back), only the older ones. A row without a clustered record has none.
func (db *DB) versionHasEntry(m *Meter, view *ReadView, t *TableHandle, ix *index, entry, pk []byte, skipCurrent bool) (bool, error) {
	prim := t.ixs[0]
	rec, found, err := prim.tree.Get(m, pk, nil)
	if err != nil || !found {
		return false, err
	}
	h, body, err := splitClustRec(rec)
	if err != nil {
		return false, err
	}
	cols := t.info.def.Columns
	var row Row
	for first := true; ; first = false {
		if !h.deleted() && !(first && skipCurrent) {
			if row, err = decodeRow(body, cols, row); err != nil {
				return false, err
			}
			if bytes.Equal(t.entryKey(nil, ix, row, pk, heap.RowPtr{}), entry) {
				return true, nil
			}
		}
		if h.roll.insert || view.changesVisible(h.trxID) {
			return false, nil
		}
		if h, body, err = db.prevVersion(m.Pages(), h, body); err != nil {
			return false, err
		}
		m.PurgeVersionsRead++
	}
}

// The background purge's pace, as InnoDB's purge coordinator
// (srv0srv.cc: srv_purge_coordinator_thread, srv_do_purge,
// srv_purge_coordinator_suspend; trx0purge.cc:
// trx_purge_add_update_undo_to_history):
//
//   - it purges in batches of at most purgeBatchSize logs
//     (innodb_purge_batch_size, 300 undo pages; here one log is one
//     page), batch after batch as long as a batch purged something;
//   - a batch that purged nothing (the history list empty, or its head
//     still seen as running by some view) suspends it for at most
//     purgeSuspendTimeout (SRV_PURGE_MAX_TIMEOUT, 10 ms); if no log was
//     added in that time it sleeps until woken, and at most
//     purgeMasterInterval (the master thread's once-a-second wake,
//     srv_master_callback calling purge_sys.wake_if_not_active);
//   - a commit that puts a log on the history list wakes it only if it
//     is suspended and the list is longer than purgeWakeHistory
//     (innodb_purge_threads x innodb_purge_batch_size; one purge thread
//     here); the end of a transaction that closes a read view does not
//     wake it (the timeout sees the view gone).
//
// So a commit costs no wake-up of another goroutine while purge keeps up:
// waking it at every commit, as this engine once did, cost each
// transaction a futex wake-up (about 4% of a terminal's time at one
// terminal), and purge then ran one log per batch. The price is purge
// lag: under load the history list holds up to the commits of one
// timeout (a few hundred logs at this machine's speed), as InnoDB's does.
var (
	purgeSuspendTimeout = 10 * time.Millisecond
	purgeMasterInterval = time.Second
)

const (
	purgeBatchSize   = 300
	purgeWakeHistory = 1 * purgeBatchSize
)

// purger is the background purge goroutine (PurgeBackground).
type purger struct {
	wake chan struct{} // a pending wake-up (buffer 1: wakes coalesce)
	stop chan struct{} // closed by Close
	done chan struct{} // closed when the goroutine has returned
	// suspended is set while the goroutine waits (InnoDB's
	// srv_sys->n_threads_active[SRV_PURGE] == 0): only then does a
	// commit wake it.
	suspended atomic.Bool
}

// startPurger starts the background purge goroutine.
func (db *DB) startPurger() {
	p := &purger{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	db.purger = p
	suspendTimeout, masterInterval := purgeSuspendTimeout, purgeMasterInterval
	go func() {
		defer close(p.done)
		timer := time.NewTimer(masterInterval)
		defer timer.Stop()
		for {
			n, err := db.PurgeStep(nil, purgeBatchSize)
			if err != nil {
				db.undo.mu.Lock()
				db.purgeErr = err
				db.undo.mu.Unlock()
			}
			if h := testHookPurgeRound; h != nil {
				h(db)
			}
			if n > 0 && err == nil {
				select {
				case <-p.stop:
					return
				default:
					continue // the next batch
				}
			}
			// Suspended: at most the timeout, then, if nothing was
			// added, until woken or the master's tick.
			lag := db.undo.historyLen()
			wait := suspendTimeout
			for {
				p.suspended.Store(true)
				timer.Reset(wait) // no stale tick survives a Reset (Go 1.23 timers)
				woken := false
				select {
				case <-p.stop:
					return
				case <-p.wake:
					woken = true
				case <-timer.C:
				}
				p.suspended.Store(false)
				if woken || wait == masterInterval || db.undo.historyLen() != lag {
					break
				}
				wait = masterInterval
			}
		}
	}()
}

// testHookPurgeRound, when set by a test, runs after each batch of the
// background purge.
var testHookPurgeRound func(db *DB)

// wakePurge wakes the background purge, if there is one, it is suspended
// and the history list is longer than purgeWakeHistory (above).
func (db *DB) wakePurge() {
	if p := db.purger; p != nil && p.suspended.Load() && db.undo.historyLen() > purgeWakeHistory {
		select {
		case p.wake <- struct{}{}:
		default: // already woken
		}
	}
}

// stopPurger stops the background purge goroutine and waits for it.
func (db *DB) stopPurger() {
	if p := db.purger; p != nil {
		close(p.stop)
		<-p.done
	}
}

// PurgeErr returns the last error the background purge met (nil: none).
// Purge stops at the log it failed on and tries again when next woken.
func (db *DB) PurgeErr() error {
	db.undo.mu.Lock()
	defer db.undo.mu.Unlock()
	return db.purgeErr
}
