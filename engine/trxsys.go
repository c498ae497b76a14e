package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/enginelab/enginelab/heap"
)

// Isolation is a transaction's isolation level (TxOptions.Isolation).
//
// The levels are InnoDB's as they apply to the clustered organization:
//
//   - ReadCommitted: a plain read (Get, Scan, Count) takes no row lock and
//     reads the newest version committed when its statement began: each
//     call builds a new read view (InnoDB's READ COMMITTED, which opens a
//     view per statement).
//   - RepeatableRead: a plain read takes no row lock and reads the version
//     of the read view built at the transaction's first plain read, kept
//     until it ends (InnoDB's REPEATABLE READ, its default).
//   - Serializable: strict two-phase row locking, reads included, as the
//     engine has always run (InnoDB's SERIALIZABLE turns every plain read
//     into a locking read; without gap locks here, so phantoms remain
//     possible).
//
// In all three, writes and locking reads (GetForUpdate,
// ScanOptions.ForUpdate) lock the row and act on its latest committed
// version, never on a read view's (InnoDB's locking reads do the same:
// row_search_mvcc reads the newest version under the lock). So under
// RepeatableRead a plain read followed by an update of what it read can
// lose a concurrent update, as InnoDB's can; reading FOR UPDATE prevents
// it.
//
// Heap tables have no versions yet: their plain reads lock as under
// Serializable whatever the level.
type Isolation uint8

// Isolation levels.
const (
	// IsolationDefault is the database's level, Options.Isolation.
	IsolationDefault Isolation = iota
	ReadCommitted
	RepeatableRead
	Serializable
)

func (l Isolation) String() string {
	switch l {
	case IsolationDefault:
		return "default"
	case ReadCommitted:
		return "read-committed"
	case RepeatableRead:
		return "repeatable-read"
	case Serializable:
		return "serializable"
	}
	return fmt.Sprintf("Isolation(%d)", uint8(l))
}

// ParseIsolation reads a level as String writes it.
func ParseIsolation(s string) (Isolation, error) {
	for l := ReadCommitted; l <= Serializable; l++ {
		if s == l.String() {
			return l, nil
		}
	}
	return 0, fmt.Errorf("engine: %w: isolation level %q (want read-committed, repeatable-read or serializable)", ErrInvalidOptions, s)
}

// TxOptions configure a transaction (DB.BeginTx).
type TxOptions struct {
	// Isolation is the transaction's level; IsolationDefault takes the
	// database's (Options.Isolation).
	Isolation Isolation
	// NoSync makes this transaction's Commit return without waiting for
	// its log sync, whatever Options.Commit says: NoSyncCommit for one
	// transaction, as PostgreSQL's synchronous_commit = off may be set
	// for one transaction (SET LOCAL). Its commit is durable once the log
	// is synced past it, which any later synced commit does, the log
	// being one sequence: a bulk load commits its batches this way and
	// syncs once, with its last commit.
	NoSync bool
}

// The transaction system, as InnoDB's trx_sys: it hands out transaction
// ids, keeps the list of active read-write transactions, and builds read
// views from it.
//
// Every transaction gets a lock id at Begin (its row locks' owner, from
// a counter of this process, DB.lockSeq). A transaction that writes gets
// a transaction id (from DB.txSeq, the counter the rollback segment's max
// tx id persists) at its first write, under
// trxSys.mu, and is entered in the active list at the same instant, as
// InnoDB assigns trx->id when a transaction turns read-write
// (trx_set_rw_mode) and enters it in trx_sys.rw_trx_hash. That id is the
// one written into the records it changes (DB_TRX_ID) and into its undo
// log's header. A read-only transaction never has one, so it never
// appears in anyone's read view and costs the active list nothing; and
// the ids written into records depend on the writing transactions alone
// (a simulated run writes the same bytes whatever read-only transactions
// or opens came before it).
//
// A read view (InnoDB's ReadView, read0types.h) is a snapshot of the list
// taken under the same mutex:
//
//	lowLimit  the next transaction id at the snapshot (m_low_limit_id):
//	          changes of ids ≥ lowLimit are invisible;
//	ids       the active read-write ids, ascending (m_ids): invisible;
//	upLimit   the smallest of ids, or lowLimit if none (m_up_limit_id):
//	          changes of ids < upLimit are visible without a search;
//	creator   the viewing transaction's own id, 0 while it has none
//	          (m_creator_trx_id): its own changes are visible. A
//	          transaction that writes after opening its view is given its
//	          id then (MariaDB's trx_set_rw_mode sets it on the open view).
//
// changesVisible is ReadView::changes_visible. Because ids are assigned
// and entered in the list under one mutex, and removed from it only once
// the commit's mini-transaction is done, an id below lowLimit that is not
// in ids belongs to a transaction that had committed (or rolled back) when
// the view was made.
type trxSys struct {
	mu sync.Mutex
	// rw holds the active read-write transaction ids, ascending: ids are
	// handed out in increasing order under mu and appended.
	rw []uint64
	// views holds the open read views: purge may not remove what the
	// oldest of them needs.
	views map[*ReadView]struct{}
	// snaps holds the snapshots of open ReadCommitted cursors on
	// versioned heap tables (cursorSnap). Each is a copy: a later
	// statement of the same transaction reopens its view in place, so the
	// view no longer holds the vacuum horizon (vacuumHorizon) at or below
	// what the cursor still reads.
	snaps map[*heap.Snapshot]struct{}
}

// ReadView decides which versions a consistent read sees (see trxSys).
type ReadView struct {
	lowLimit, upLimit uint64
	ids               []uint64
	creator           uint64
}

// changesVisible reports whether the changes of transaction id are visible
// in the view (InnoDB's ReadView::changes_visible).
func (v *ReadView) changesVisible(id uint64) bool {
	if id < v.upLimit || id == v.creator {
		return true
	}
	if id >= v.lowLimit {
		return false
	}
	_, found := slices.BinarySearch(v.ids, id)
	return !found
}

// assignTrxID gives tx its transaction id and enters it in the active
// list (see trxSys), once, at its first write.
func (tx *Tx) assignTrxID() {
	if tx.trxID != 0 {
		return
	}
	s := &tx.db.trx
	s.mu.Lock()
	id := tx.db.txSeq.Add(1)
	s.rw = append(s.rw, id)
	if tx.view != nil {
		tx.view.creator = id
	}
	s.mu.Unlock()
	tx.trxID = id
}

// leaveTrxSys removes tx from the active list and closes its read view:
// from here on every new view sees its changes (commit) or finds them
// gone (rollback). Called at the instant its locks are released.
func (tx *Tx) leaveTrxSys() {
	if tx.trxID == 0 && tx.view == nil && len(tx.snaps) == 0 {
		return
	}
	s := &tx.db.trx
	s.mu.Lock()
	if tx.trxID != 0 {
		if i, found := slices.BinarySearch(s.rw, tx.trxID); found {
			s.rw = slices.Delete(s.rw, i, i+1)
		}
	}
	closed := tx.view != nil
	if closed {
		delete(s.views, tx.view)
	}
	for _, sn := range tx.snaps {
		delete(s.snaps, sn)
	}
	s.mu.Unlock()
	clear(tx.snaps)
	tx.snaps = tx.snaps[:0]
	tx.view = nil
}

// addViewLocked registers v as open, for purge and vacuum (views).
// REQUIRES: s.mu held.
func (s *trxSys) addViewLocked(v *ReadView) {
	if s.views == nil {
		s.views = make(map[*ReadView]struct{})
	}
	s.views[v] = struct{}{}
}

// openView builds a read view of the transaction system now, with
// creator tx's transaction id (0 if it has not written), and registers it
// for purge (ReadView::open).
func (tx *Tx) openView() *ReadView {
	s := &tx.db.trx
	v := tx.view
	if v == nil {
		v = &tx.opBufs.view
	}
	s.mu.Lock()
	v.lowLimit = tx.db.txSeq.Load() + 1
	v.ids = append(v.ids[:0], s.rw...)
	v.upLimit = v.lowLimit
	if len(v.ids) > 0 {
		v.upLimit = v.ids[0]
	}
	v.creator = tx.trxID
	s.addViewLocked(v)
	s.mu.Unlock()
	tx.view = v
	tx.m.ReadViews++
	return v
}

// ErrNoSnapshot means ShareSnapshot was asked of a transaction that has
// no one snapshot to share: it is not RepeatableRead, or it has written.
var ErrNoSnapshot = errors.New("engine: no snapshot to share")

// ShareSnapshot begins a transaction, charging m (nil: a meter of its
// own), whose consistent reads read tx's snapshot: a copy of tx's read
// view (opened now if tx has not read yet), registered as the new
// transaction's own, so that purge and vacuum keep what it reads however
// long it runs and whether tx ends first. The two may then run on
// different goroutines. This is how PostgreSQL's parallel pg_dump
// workers read one snapshot (pg_export_snapshot, then SET TRANSACTION
// SNAPSHOT in each worker) and how InnoDB's Parallel_reader (CHECK
// TABLE, SELECT COUNT(*)) shares its transaction's read view among
// threads. The new transaction is RepeatableRead; a shared snapshot is
// not a new one, so it does not count in Meter.ReadViews.
//
// tx must be a RepeatableRead transaction that has not written
// (ErrNoSnapshot otherwise: a ReadCommitted or Serializable transaction
// has no single snapshot, and a writer's view shows its own changes) and
// must not be used by another goroutine during the call. A table without
// versions is read with row locks whatever the snapshot (see Isolation).
func (tx *Tx) ShareSnapshot(m *Meter) (*Tx, error) {
	switch {
	case tx.done:
		return nil, ErrTxDone
	case tx.iso != RepeatableRead:
		return nil, fmt.Errorf("%w: the transaction is %s, not RepeatableRead", ErrNoSnapshot, tx.iso)
	case tx.trxID != 0:
		return nil, fmt.Errorf("%w: the transaction has written", ErrNoSnapshot)
	}
	src := tx.readView(false)
	c := tx.db.BeginTx(m, TxOptions{Isolation: RepeatableRead})
	v := &c.opBufs.view
	s := &tx.db.trx
	s.mu.Lock()
	v.lowLimit, v.upLimit, v.creator = src.lowLimit, src.upLimit, 0
	v.ids = append(v.ids[:0], src.ids...)
	s.addViewLocked(v)
	s.mu.Unlock()
	c.view = v
	return c, nil
}

// readView returns the view a consistent read of tx uses: under
// RepeatableRead the one opened at its first consistent read; under
// ReadCommitted a new one for each statement (stmt says the read begins
// one).
func (tx *Tx) readView(stmt bool) *ReadView {
	if tx.view != nil && (tx.iso == RepeatableRead || !stmt) {
		return tx.view
	}
	return tx.openView()
}

// consistent says whether tx's plain reads of t are consistent
// (non-locking) reads: ReadCommitted and RepeatableRead on a clustered
// table.
func (tx *Tx) consistent(t *TableHandle) bool {
	return tx.iso != Serializable && t.org == Clustered
}

// ActiveTransactions returns how many read-write transactions are active
// and how many read views are open.
func (db *DB) ActiveTransactions() (rw, views int) {
	db.trx.mu.Lock()
	defer db.trx.mu.Unlock()
	return len(db.trx.rw), len(db.trx.views)
}

// trxActive says whether transaction id is in the active read-write list
// (InnoDB's trx_sys.is_active, which decides whether a record's DB_TRX_ID
// still holds an implicit lock on it).
func (db *DB) trxActive(id uint64) bool {
	s := &db.trx
	s.mu.Lock()
	_, found := slices.BinarySearch(s.rw, id)
	s.mu.Unlock()
	return found
}

// cursorSnap returns a snapshot of view v of tx for a cursor to keep: its
// own copy of v's ids, registered with the transaction system so that the
// vacuum horizon stays at or below its Xmin until dropSnap (the cursor's
// Close) or tx's end. v must still be registered (a view tx has just
// opened), so the horizon never passes the copy in between.
func (tx *Tx) cursorSnap(v *ReadView) *heap.Snapshot {
	sn := &heap.Snapshot{Xmin: v.upLimit, Xmax: v.lowLimit, Xip: slices.Clone(v.ids), Own: v.creator}
	s := &tx.db.trx
	s.mu.Lock()
	if s.snaps == nil {
		s.snaps = make(map[*heap.Snapshot]struct{})
	}
	s.snaps[sn] = struct{}{}
	s.mu.Unlock()
	tx.snaps = append(tx.snaps, sn)
	return sn
}

// dropSnap unregisters a snapshot cursorSnap made (once its cursor is
// closed).
func (tx *Tx) dropSnap(sn *heap.Snapshot) {
	i := slices.Index(tx.snaps, sn)
	if i < 0 {
		return // tx has ended and dropped it
	}
	tx.snaps = slices.Delete(tx.snaps, i, i+1)
	s := &tx.db.trx
	s.mu.Lock()
	delete(s.snaps, sn)
	s.mu.Unlock()
}
