package engine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/enginelab/enginelab/btree"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// Operation errors.
var (
	// ErrDuplicateKey means an insert met an existing primary key, or a
	// unique index already holds the same values.
	ErrDuplicateKey = errors.New("engine: duplicate key")
	// ErrNotFound means no row has the given primary key.
	ErrNotFound = errors.New("engine: row not found")
	// ErrTxDone means the transaction has committed.
	ErrTxDone = errors.New("engine: transaction already ended")
	// ErrPrimaryKeyUpdate means an update named a primary-key column:
	// delete the row and insert it again instead.
	ErrPrimaryKeyUpdate = fmt.Errorf("%w: update of a primary-key column", ErrBadValue)
	// ErrTooManyTransactions means every undo slot of the rollback
	// segment is taken by an active transaction that has written.
	ErrTooManyTransactions = errors.New("engine: too many active transactions")
)

// Lock errors. A transaction whose row lock request fails with either is
// already rolled back when the error returns. They are package lock's
// errors under the names this package has always given them.
var (
	// ErrDeadlock means the request would have closed a cycle of waiting
	// transactions; the requester is the victim.
	ErrDeadlock = lock.ErrDeadlock
	// ErrLockTimeout means the request waited longer than
	// Options.LockTimeout.
	ErrLockTimeout = lock.ErrTimeout
	// ErrSerialization means a write or locking read under a snapshot
	// met a row that a concurrent transaction changed or deleted and
	// committed after the snapshot was taken (PostgreSQL's "could not
	// serialize access due to concurrent update" under REPEATABLE READ),
	// or a delete found the row its snapshot sees already gone. The
	// transaction is rolled back when the error returns.
	ErrSerialization = errors.New("engine: could not serialize access due to concurrent update")
	// ErrRowGone means an update or a delete found its row gone,
	// deleted by a transaction that committed while this one waited for
	// the row's lock, or that this one's snapshot does not see (the row
	// is still in the snapshot). SQL would report no row changed; a
	// caller that names one row by its key learns that another
	// transaction took it, as a TPC-C kit's Delivery learns it from its
	// DELETE's count of rows, and retries. The error also matches
	// ErrNotFound. The transaction is rolled back when the error returns.
	ErrRowGone = errors.New("engine: row deleted by a concurrent transaction")
)

// Retryable says err ended its transaction in a way a client retries
// with the same inputs: a deadlock victim, a lock timeout, a
// serialization failure, or an update or delete of a row a concurrent
// transaction deleted. The transaction is already rolled back.
func Retryable(err error) bool {
	return errors.Is(err, ErrDeadlock) || errors.Is(err, ErrLockTimeout) || errors.Is(err, ErrSerialization) ||
		errors.Is(err, ErrRowGone)
}

// Tx is a transaction: every operation runs in one and charges its Meter.
// A Tx is used by one goroutine.
//
// Row values returned by Get and by a Cursor may share the transaction's
// buffers: they are valid until the next operation on the same Tx, Commit
// and Rollback included (or the cursor's next step or Close). Copy what
// must live longer: the buffers outlive the transaction and serve the
// next one.
//
// Row locks are keyed by primary key: a write takes an exclusive lock,
// and under Serializable a read a shared one, every lock held until Commit
// or Rollback (like InnoDB's SERIALIZABLE, without gap locks, so a scan
// can meet rows inserted after it began; see Cursor for what scans lock).
// Under ReadCommitted and RepeatableRead a plain read of a clustered table
// locks nothing and reads its read view's versions (see Isolation). A request that would deadlock, or waits past the lock
// timeout, fails with ErrDeadlock or ErrLockTimeout, and the transaction is
// then already rolled back.
//
// Every structure operation (one B+tree or heap change) is a
// mini-transaction whose log record also carries how to undo it; Rollback
// undoes those steps newest first, and recovery does the same for a
// transaction a crash interrupted. See the package documentation.
type Tx struct {
	db     *DB
	m      *Meter // the caller's, or one of its own (Begin with nil)
	id     uint64 // the lock id, from Begin (lock.Owner.ID)
	trxID  uint64 // the transaction id, from the first write (0: none; see trxSys)
	iso    Isolation
	noSync bool      // TxOptions.NoSync: Commit waits for no log sync
	view   *ReadView // the open read view (nil: none)
	recHdr clustHdr  // the system fields of the clustered record lookup read last
	recPos btree.Pos // where lookup found it (its leaf), for the write that follows
	owner  lock.Owner
	done   bool
	logged bool // has written a log record (and is in the active set)
	// versions says the undo log holds records that build older versions
	// of clustered records (updates): it goes to the history list at
	// commit.
	versions bool
	// hv says the transaction wrote versioned heap tuples: its commit or
	// abort goes into the commit log (heapmvcc.go).
	hv    bool
	hsnap heap.Snapshot // the latest-committed snapshot of a locking access
	hview heap.Snapshot // the read view as a snapshot
	vhi   []byte        // versionRoots' upper bound (not tx.hi: a cursor's bound may share it)
	vrow  Row           // a version decoded for a recheck (versionHasKey)
	vkey  []byte        // a key encoded from vrow
	// snaps are the registered snapshots of tx's open ReadCommitted
	// cursors on versioned heap tables (cursorSnap).
	snaps []*heap.Snapshot
	group uint32    // row operations so far: the group of the next steps
	steps []step    // undo, oldest first
	arena []byte    // the steps' bytes
	note  []byte    // the undo record being written
	patch []byte    // an update's undo patch
	undo  txUndo    // the undo log (logged: taken)
	bufs  *undoBufs // the box the buffers came in, reused to return them

	*opBufs // the operations' buffers; nil once the transaction ended
}

// opBufs are the buffers a transaction's operations encode keys and rows
// into and read rows into. They outlive the transaction: Commit and
// Rollback hand them (those not grown large) to the next transaction that
// begins, so that the operations of a warmed-up workload allocate almost
// nothing. Rows that Get and a Cursor return alias them, which is why
// those rows are valid only until the next operation on the transaction,
// Commit and Rollback included.
type opBufs struct {
	key, key2, val, row, oldImg []byte
	// rec is a clustered record being written (system fields and row);
	// oldRec the clustered record an update or delete read (oldImg is its
	// row image).
	rec, oldRec []byte
	old, cur    Row
	scratch     []byte
	changed     []bool // update: changed[c], column c changes
	setCols     []int  // update: the column each Set names, by index
	// lo and hi hold a scan's bound keys while the iterator copies them.
	lo, hi []byte
	// spare is a closed cursor's buffers, for the transaction's next scan
	// (nil: none).
	spare *cursorBufs
	// sort is a closed sort's plan, whose buffers the next sort reuses
	// (nil: none).
	sort *sortParam
	// view is the transaction's read view, as InnoDB keeps one ReadView
	// in each trx_t and opens and closes it in place (trx->read_view):
	// openView fills it, leaveTrxSys closes it before the buffers are
	// recycled, so no one holds it once the transaction has ended.
	view ReadView
}

// opBufPool holds the operation buffers of ended transactions (*opBufs).
// The buffers hold no database state, so one pool serves every DB.
var opBufPool sync.Pool

// maxPooledBuf is the largest buffer (in elements) kept for the next
// transaction: one that a huge row or scan grew is dropped instead of
// being held by the pool.
const maxPooledBuf = 64 << 10

// small returns b emptied, or nil if it grew past maxPooledBuf.
func small[S ~[]E, E any](b S) S {
	if cap(b) > maxPooledBuf {
		return nil
	}
	return b[:0]
}

// smallRow is small for a row, which it also clears: a pooled row keeps no
// reference to the bytes of a row or of a caller's values.
func smallRow(r Row) Row {
	clear(r[:cap(r)])
	return small(r)
}

// putOpBufs recycles tx's operation buffers and drops them from tx (an
// ended transaction checks tx.done before it could touch them). Rows that
// Get or a cursor returned are no longer valid after it.
func (tx *Tx) putOpBufs() {
	b := tx.opBufs
	*b = opBufs{key: small(b.key), key2: small(b.key2), val: small(b.val), row: small(b.row),
		oldImg: small(b.oldImg), rec: small(b.rec), oldRec: small(b.oldRec), old: smallRow(b.old), cur: smallRow(b.cur), scratch: small(b.scratch),
		changed: small(b.changed), setCols: small(b.setCols), lo: small(b.lo), hi: small(b.hi), spare: b.spare, sort: b.sort,
		view: ReadView{ids: small(b.view.ids)}}
	if s := b.spare; s != nil {
		s.reset()
	}
	if p := b.sort; p != nil {
		*p = sortParam{fields: small(p.fields), addon: small(p.addon), want: small(p.want), selected: small(p.selected),
			sel: small(p.sel), wantCol: small(p.wantCol), row: smallRow(p.row), cursorWant: small(p.cursorWant)}
	}
	opBufPool.Put(b)
	tx.opBufs = nil
}

// Begin starts a transaction that charges m (nil: a meter of its own, read
// with Meter), at the database's isolation level (Options.Isolation).
func (db *DB) Begin(m *Meter) *Tx { return db.BeginTx(m, TxOptions{}) }

// BeginTx starts a transaction that charges m (nil: a meter of its own)
// with options o. An isolation level out of range is the database's.
func (db *DB) BeginTx(m *Meter, o TxOptions) *Tx {
	iso := o.Isolation
	if iso == IsolationDefault || iso > Serializable {
		iso = db.opts.Isolation
	}
	tx := &Tx{db: db, m: m, id: db.lockSeq.Add(1), iso: iso, noSync: o.NoSync}
	if b, ok := db.undoBufs.Get().(*undoBufs); ok {
		tx.steps, tx.arena, tx.note, tx.owner = b.steps, b.arena, b.note, b.owner
		tx.bufs = b
	}
	if b, ok := opBufPool.Get().(*opBufs); ok {
		tx.opBufs = b
	} else {
		tx.opBufs = new(opBufs)
	}
	tx.owner.ID = tx.id
	if m == nil {
		// Allocated only then: a Meter is about 1.3 KB, most of a
		// transaction's handle, and most callers bring their own.
		tx.m = new(Meter)
	}
	return tx
}

// enter tells the Runtime (Runtime.BeforeCall) that an operation of tx
// begins; the real runtime is not told (DB.calls is nil).
func (tx *Tx) enter() {
	if h := tx.db.calls; h != nil {
		h.BeforeCall(tx.m)
	}
}

// lock takes the row lock of the encoded primary key key. A deadlock or a
// timeout rolls the transaction back before the error returns.
func (tx *Tx) lock(t *TableHandle, key []byte, mode lock.Mode) error {
	err := tx.db.locks.LockAs(&tx.m.Counters, &tx.owner, lock.RowKey(t.entry.Primary, key), mode)
	if err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	return err
}

// Rollback takes back every change of the transaction, newest first, and
// releases its locks. Each undone step is a mini-transaction logged with a
// compensation note, so a crash during Rollback resumes it at recovery
// rather than repeating it.
func (tx *Tx) Rollback() error {
	tx.enter()
	if tx.done {
		return ErrTxDone
	}
	tx.done = true
	var err error
	if len(tx.steps) > 0 {
		u := undoer{db: tx.db, m: tx.m, tx: tx.id, steps: tx.steps, done: make([]bool, len(tx.steps)),
			remap: make(map[heap.RowPtr]heap.RowPtr)}
		err = u.run()
	}
	if tx.logged && err == nil {
		// A rollback that failed leaves its undo log active, so that
		// recovery finishes it.
		mt := tx.db.pool.BeginMtr(tx.cm())
		err = tx.db.undoEnd(mt, tx.undo)
		mt.Commit()
		if err == nil {
			tx.db.cacheUndo(tx.undo)
		}
	}
	if serr := tx.commitStatus(nil, heap.XidAborted); serr != nil && err == nil {
		err = serr
	}
	tx.m.Rollbacks++
	tx.leaveTrxSys()
	tx.db.locks.Release(&tx.owner)
	tx.db.putUndoBufs(tx)
	tx.putOpBufs()
	return err
}

// Meter returns the meter the transaction charges.
func (tx *Tx) Meter() *Meter { return tx.m }

// CommitMode says when Commit returns, like innodb_flush_log_at_trx_commit.
type CommitMode uint8

// Commit modes.
const (
	// SyncCommit returns from Commit when the commit record is durable
	// (innodb_flush_log_at_trx_commit=1). Commits that arrive while a
	// sync is running share the next one: group commit.
	SyncCommit CommitMode = iota
	// NoSyncCommit returns at once; the commit is durable at the next
	// sync (another transaction's sync commit, or the page cleaner's
	// before it writes pages whose log is not durable) or checkpoint
	// (innodb_flush_log_at_trx_commit=0 or 2, without their one-second
	// log flush: the cleaner syncs only when it needs to).
	NoSyncCommit
)

func (c CommitMode) String() string {
	switch c {
	case SyncCommit:
		return "sync"
	case NoSyncCommit:
		return "no-sync"
	}
	return fmt.Sprintf("CommitMode(%d)", uint8(c))
}

// LockRelease says when a committing transaction releases its row locks
// and leaves the active list (makes its commit visible to new read
// views), relative to its commit record becoming durable in SyncCommit
// mode (Options.EarlyLockRelease). In both choices the locks go and the
// commit becomes visible at one instant, so a lock waiter granted a row
// and a read view opened after it see the same commit.
//
//   - EarlyRelease, InnoDB's: the locks go as soon as the commit record
//     is in the log, and the sync follows (trx_commit_in_memory erases the
//     transaction from the read-write list and releases its locks,
//     trx_release_impl_and_expl_locks, before trx_flush_log_if_needed
//     writes and syncs the log). Commit still returns only once its
//     record is durable; others see the commit one sync earlier.
//   - LateRelease, PostgreSQL's: the locks go once the commit record is
//     durable (RecordTransactionCommit's XLogFlush comes before
//     ProcArrayEndTransaction and the release of the locks), so a commit
//     is never seen before it is durable, and the locks are held through
//     the sync.
//
// The crash-safety rule of EarlyRelease. A crash may lose a commit that
// others have seen. Durability is a prefix of the log: every record
// before a durable one is durable. So:
//
//   - a writer that saw the commit (read its changes, or was granted a
//     lock it held) appends its own commit record after the seen one,
//     which was in the log before the locks went; in SyncCommit mode its
//     Commit returns once its own record is durable, and so the seen one
//     is: a crash loses the writer with the commit it saw, or neither;
//   - a read-only transaction appends no record, so in SyncCommit mode
//     its Commit waits until the log is durable up to the highest commit
//     made visible before it ends (the end of that commit's record, kept
//     by the database as commits are made visible; Meter.DurableReadWaits
//     counts the commits that had to wait). Before it ends, not before it
//     began: a locking read, and a ReadCommitted statement's read view,
//     see commits made visible after the transaction began. Usually
//     nothing is left to wait for, or it joins the group sync in progress.
//
// A Rollback waits for nothing (it reports nothing), and in NoSyncCommit
// mode no commit waits, in either choice: a crash loses a suffix of the
// commits, seen or not, never a hole.
//
// In simulated mode the order is priced as it happens: a lock released
// before the sync is granted at the end of the committer's priced work
// before the sync (SyncStart prices that work first), one released after
// it once the sync's latency has passed.
type LockRelease uint8

// Lock release choices.
const (
	// LockReleaseDefault is the organization's choice
	// (DefaultLockRelease of Options.DefaultOrg).
	LockReleaseDefault LockRelease = iota
	// EarlyRelease releases before the commit record is durable
	// (InnoDB).
	EarlyRelease
	// LateRelease releases after it (PostgreSQL).
	LateRelease
)

// DefaultLockRelease is the choice of the engine an organization models:
// EarlyRelease for Clustered (InnoDB), LateRelease for the heap
// organizations (PostgreSQL).
func DefaultLockRelease(org Org) LockRelease {
	if org == Clustered || org == OrgDefault {
		return EarlyRelease
	}
	return LateRelease
}

// String is "true" for EarlyRelease and "false" for LateRelease, as the
// command's --early-lock-release takes them.
func (r LockRelease) String() string {
	switch r {
	case LockReleaseDefault:
		return "default"
	case EarlyRelease:
		return "true"
	case LateRelease:
		return "false"
	}
	return fmt.Sprintf("LockRelease(%d)", uint8(r))
}

// Commit ends the transaction: its commit record is logged (and, in
// SyncCommit mode unless TxOptions.NoSync, durable before Commit
// returns), and its locks are released and its commit made visible
// before or after the record is durable, as Options.EarlyLockRelease
// says (see LockRelease, which also says what a read-only transaction
// waits for). The commit that takes the log past CheckpointBytes since
// the last checkpoint takes one (fuzzy: no page writes).
func (tx *Tx) Commit() error {
	tx.enter()
	if tx.done {
		return ErrTxDone
	}
	tx.done = true
	db := tx.db
	sync := db.opts.Commit == SyncCommit && !tx.noSync
	early := db.opts.EarlyLockRelease == EarlyRelease
	released := false
	// releaseAndSync ends a writer whose commit record ends at end: its
	// locks go and its commit becomes visible before the log sync or
	// after it, as LockRelease says.
	releaseAndSync := func(end uint64) (err error) {
		if early {
			tx.release(end)
			released = true
		}
		if sync {
			err = db.log.SyncTo(&tx.cm().Counts, end)
			tx.m.SyncCommits++
		}
		if !released {
			tx.release(end)
			released = true
		}
		return err
	}
	var err error
	kept := false
	if tx.logged {
		// The commit is the mini-transaction that empties the undo log
		// (undoEnd): once it is in the log, recovery finds the log cached,
		// not active, and the transaction stays.
		mt := db.pool.BeginMtr(tx.cm())
		kept, err = tx.undoCommit(mt)
		if err == nil {
			// The commit log's status is durable with the commit.
			err = tx.commitStatus(mt, heap.XidCommitted)
		}
		end := mt.Commit() + 1 // the commit record's end
		if err == nil {
			if kept {
				tx.historyAdded()
			} else {
				db.cacheUndo(tx.undo)
			}
			err = releaseAndSync(end)
		}
	} else if tx.hv {
		// Versioned heap writes without an undo record (a HOT update,
		// a delete): the commit is the commit log's status alone.
		mt := db.pool.BeginMtr(tx.cm())
		err = tx.commitStatus(mt, heap.XidCommitted)
		end := mt.Commit() + 1
		if err == nil {
			err = releaseAndSync(end)
		}
	} else if sync && early {
		// A read-only transaction: its locks protect nothing it will
		// write, so they go at once; what it read is durable when it
		// returns (see LockRelease).
		tx.release(0)
		released = true
		if end := db.visibleEnd.Load(); end > db.log.Durable() {
			err = db.log.SyncTo(&tx.cm().Counts, end)
			tx.m.DurableReadWaits++
		}
	}
	tx.m.Commits++
	if !released {
		tx.release(0)
	}
	db.putUndoBufs(tx)
	tx.putOpBufs()
	if err != nil {
		return fmt.Errorf("engine: commit of transaction %d: %w", tx.id, err)
	}
	tx.db.commits.Add(1)
	switch tx.db.opts.Purge {
	case PurgeAfterCommit:
		if kept || tx.db.undo.historyLen() > 0 {
			if err := tx.db.tryPurge(); err != nil {
				return fmt.Errorf("engine: transaction %d committed, but purge after it failed: %w", tx.id, err)
			}
		}
	case PurgeBackground:
		if kept {
			tx.db.wakePurge()
		}
	}
	if err := db.maybeCheckpoint(tx.cm()); err != nil {
		return fmt.Errorf("engine: transaction %d committed, but the checkpoint after it failed: %w", tx.id, err)
	}
	return nil
}

// release makes tx's commit visible to new read views and releases its
// locks, at one instant. end, if not 0, is the end of its commit record:
// it is noted as made visible first, so that whoever sees the commit
// (through the transaction system's mutex or the lock manager's) also
// finds it in DB.visibleEnd.
func (tx *Tx) release(end uint64) {
	if end != 0 {
		v := &tx.db.visibleEnd
		for old := v.Load(); end > old && !v.CompareAndSwap(old, end); old = v.Load() {
		}
	}
	tx.leaveTrxSys()
	tx.db.locks.Release(&tx.owner)
}

// Isolation returns the transaction's isolation level (the database's
// when it began with none).
func (tx *Tx) Isolation() Isolation { return tx.iso }

func (tx *Tx) check(t *TableHandle) error {
	if tx.done {
		return ErrTxDone
	}
	if t == nil || t.db != tx.db {
		return fmt.Errorf("%w: table handle of another database", ErrUnknownTable)
	}
	return nil
}

func (tx *Tx) cm() *cache.Meter { return &tx.m.Meter }

// charge attributes the node visits since before to ix.
func (tx *Tx) charge(ix *index, before int64) {
	tx.ixCounters(ix).NodeVisits += tx.m.NodeVisitsTotal() - before
}

func (tx *Tx) wrote(ix *index) {
	tx.m.IndexEntriesWritten++
	tx.ixCounters(ix).EntriesWritten++
}

func (tx *Tx) deleted(ix *index) {
	tx.m.IndexEntriesDeleted++
	tx.ixCounters(ix).EntriesDeleted++
}

// ixCounters returns the meter's counters of ix. A meter that has no room
// for them gets room for every index of the database at once, rather than
// growing index by index as the transaction meets them.
func (tx *Tx) ixCounters(ix *index) *IndexCounters {
	m := tx.m
	if ix.id >= cap(m.Index) {
		tx.db.ixMu.Lock()
		n := len(tx.db.ixNames)
		tx.db.ixMu.Unlock()
		m.Index = slices.Grow(m.Index, max(n, ix.id+1)-len(m.Index))
	}
	return m.ix(ix.id)
}

// pkKey checks and encodes a primary key into dst.
func (t *TableHandle) pkKey(dst []byte, pk []Value) ([]byte, error) {
	cols := t.info.def.Columns
	if len(pk) != len(t.info.pk) {
		return nil, fmt.Errorf("%w: table %s: primary key has %d columns, %d values given",
			ErrWrongArity, t.info.def.Name, len(t.info.pk), len(pk))
	}
	for i, c := range t.info.pk {
		if err := checkValue(t.info.def.Name, &cols[c], pk[i]); err != nil {
			return nil, err
		}
	}
	return appendKeyPrefix(dst[:0], cols, t.info.pk, pk), nil
}

// entryKey encodes the key of row's entry in the secondary index ix: its
// columns, then the primary key or the row pointer.
func (t *TableHandle) entryKey(dst []byte, ix *index, row Row, pk []byte, ptr heap.RowPtr) []byte {
	dst = appendKey(dst[:0], t.info.def.Columns, ix.cols, row)
	if ix.carry == carryPtr {
		return ptr.Append(dst)
	}
	return append(dst, pk...)
}

// describeKey renders the values of cols of row for an error message.
func (t *TableHandle) describeKey(cols []int, row Row) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		col := &t.info.def.Columns[c]
		v := row[c]
		if col.Type.isString() && !v.IsNull() {
			parts[i] = col.Name + "=" + strconv.Quote(truncate(v.B)) // long values cut
			continue
		}
		parts[i] = col.Name + "=" + v.Format(col.Type, col.Scale)
	}
	return strings.Join(parts, ", ")
}

// anyNull reports whether one of row's columns cols is NULL: such a row
// is never a duplicate in a unique index (NULLs are distinct, as in
// InnoDB and PostgreSQL).
func anyNull(row Row, cols []int) bool {
	for _, c := range cols {
		if row[c].IsNull() {
			return true
		}
	}
	return false
}

// checkUnique fails with ErrDuplicateKey if a unique secondary index
// already has an entry with row's values (other than the row's own, skip).
func (tx *Tx) checkUnique(t *TableHandle, row Row, skip func(ix *index) bool) error {
	for _, ix := range t.ixs[1:] {
		if !ix.unique || (skip != nil && skip(ix)) {
			continue
		}
		if anyNull(row, ix.cols) {
			continue
		}
		prefix := appendKey(tx.key2[:0], t.info.def.Columns, ix.cols, row)
		tx.key2 = prefix
		var hi btree.Bound // the keys starting with prefix end below its successor
		if s := appendPrefixSuccessor(tx.hi[:0], prefix); s != nil {
			tx.hi, hi = s, btree.Excl(s)
		}
		var found bool
		var err error
		if t.org == Clustered {
			found, err = tx.uniqueClustered(t, ix, prefix, hi)
		} else {
			b := tx.m.NodeVisitsTotal()
			cb := tx.cursorBufs()
			ix.tree.InitIter(&cb.it, tx.m, &btree.IterOptions{Lower: btree.Incl(prefix), Upper: hi})
			found = cb.it.First()
			if found && t.versioned() {
				// Entries of dead rows stay until vacuum: only a live
				// row's entry is a duplicate.
				found, err = tx.anyLive(t, ix, &cb.it, len(prefix), nil)
			}
			if cerr := cb.it.Close(); err == nil {
				err = cerr
			}
			tx.putCursorBufs(cb)
			tx.charge(ix, b)
		}
		if err != nil {
			return err
		}
		if found {
			return fmt.Errorf("%w: table %s: unique index %s already has %s",
				ErrDuplicateKey, t.info.def.Name, ix.name, t.describeKey(ix.cols, row))
		}
	}
	return nil
}

// checkSizes fails with ErrValueTooLong, before anything is written, if
// row's image or any of its index entries would be too large for its page
// (a key encoding doubles 0x00 bytes, so an entry can outgrow its row).
// pk is the row's encoded primary key.
func (tx *Tx) checkSizes(t *TableHandle, row Row, pk, img []byte) error {
	name := t.info.def.Name
	prim := t.ixs[0]
	if t.org == Clustered {
		if n := len(pk) + clustHdrSize + len(img); n > prim.tree.MaxEntry() {
			return fmt.Errorf("%w: table %s: row, its system fields and primary key take %d bytes, a row may take %d",
				ErrValueTooLong, name, n, prim.tree.MaxEntry())
		}
	} else {
		if len(img) > t.heap.MaxRowSize() {
			return fmt.Errorf("%w: table %s: row takes %d bytes, a heap row may take %d",
				ErrValueTooLong, name, len(img), t.heap.MaxRowSize())
		}
		if n := len(pk) + heap.RowPtrSize; n > prim.tree.MaxEntry() {
			return fmt.Errorf("%w: table %s: primary key takes %d bytes, the limit is %d",
				ErrValueTooLong, name, len(pk), prim.tree.MaxEntry()-heap.RowPtrSize)
		}
	}
	for _, ix := range t.ixs[1:] {
		tx.key2 = t.entryKey(tx.key2, ix, row, pk, heap.RowPtr{})
		if len(tx.key2) > ix.tree.MaxEntry() {
			return fmt.Errorf("%w: table %s: index %s entry for %s takes %d bytes, the limit is %d",
				ErrValueTooLong, name, ix.name, t.describeKey(ix.cols, row), len(tx.key2), ix.tree.MaxEntry())
		}
	}
	return nil
}

// Insert adds row (every column, in schema order). A primary key or unique
// index that already holds its values is ErrDuplicateKey; nothing changes.
func (tx *Tx) Insert(t *TableHandle, row Row) error {
	tx.enter()
	if err := tx.db.logFreeCheck(tx.m); err != nil {
		return err
	}
	if err := tx.check(t); err != nil {
		return err
	}
	if err := t.info.checkRow(row); err != nil {
		return err
	}
	cols := t.info.def.Columns
	pk := appendKey(tx.key[:0], cols, t.info.pk, row)
	tx.key = pk
	if t.versioned() {
		tx.stmtView()
	}
	if err := tx.lock(t, pk, lock.Exclusive); err != nil {
		return err
	}
	prim := t.ixs[0]
	dup := func() error {
		return fmt.Errorf("%w: table %s: primary key %s", ErrDuplicateKey, t.info.def.Name, t.describeKey(t.info.pk, row))
	}
	if t.org != Clustered && !t.versioned() {
		b := tx.m.NodeVisitsTotal()
		found, err := prim.tree.Has(tx.m, pk)
		tx.charge(prim, b)
		if err != nil {
			return err
		}
		if found {
			return dup()
		}
	}
	if err := tx.checkUnique(t, row, nil); err != nil {
		return err
	}
	if h := testHookUniqueChecked; h != nil && t.versioned() {
		h(tx)
	}
	tx.row = appendRow(tx.row[:0], cols, row)
	if err := tx.checkSizes(t, row, pk, tx.row); err != nil {
		return err
	}
	var ptr heap.RowPtr
	b := tx.m.NodeVisitsTotal()
	tx.group++
	var err error
	if t.org == Clustered {
		err = tx.clustWrite(prim, &step{kind: stepClustInsert, key: pk}, tx.row)
		if errors.Is(err, btree.ErrDuplicateKey) {
			// A delete-marked record is no duplicate: the insert
			// becomes an update of it (delmark.go).
			tx.charge(prim, b)
			modified, err := tx.clustInsertByModify(prim, pk)
			if err != nil {
				return err
			}
			if !modified {
				return dup()
			}
			tx.wrote(prim)
			return tx.clustInsertSecondaries(t, row, pk)
		}
	} else if t.versioned() {
		ptr, err = tx.versionedInsertRow(t, pk, dup)
	} else {
		if ptr, err = tx.heapInsert(t, tx.row); err == nil {
			p := ptr.Encode()
			err = tx.treeInsert(prim, pk, p[:], 0)
		}
	}
	tx.charge(prim, b)
	if err != nil {
		return err
	}
	tx.wrote(prim)
	if t.org == Clustered {
		return tx.clustInsertSecondaries(t, row, pk)
	}
	for _, ix := range t.ixs[1:] {
		tx.key2 = t.entryKey(tx.key2, ix, row, pk, ptr)
		b := tx.m.NodeVisitsTotal()
		err := tx.treeInsert(ix, tx.key2, nil, 0)
		tx.charge(ix, b)
		if t.versioned() && errors.Is(err, btree.ErrDuplicateKey) {
			// The entry of the key's dead versions, which the new one
			// continues (versionedInsertRow): it names the same chain.
			continue
		}
		if err != nil {
			return fmt.Errorf("engine: table %s: index %s: %w", t.info.def.Name, ix.name, err)
		}
		tx.wrote(ix)
	}
	if t.versioned() {
		return tx.recheckUnique(t, row, pk, ptr, nil)
	}
	return nil
}

// keyOf checks the transaction and the table and encodes primary key pk
// into tx.key.
func (tx *Tx) keyOf(t *TableHandle, pk []Value) ([]byte, error) {
	if err := tx.check(t); err != nil {
		return nil, err
	}
	key, err := t.pkKey(tx.key, pk)
	if err != nil {
		return nil, err
	}
	tx.key = key
	return key, nil
}

// readOld reads the row with primary key key (pk, for messages) into
// tx.old, whose strings then share tx.val, and returns its pointer in a
// heap table. ErrNotFound if there is none.
func (tx *Tx) readOld(t *TableHandle, key []byte, pk []Value) (heap.RowPtr, error) {
	img, ptr, found, err := tx.lookup(t, key, false)
	if err != nil {
		return ptr, err
	}
	if !found {
		return ptr, fmt.Errorf("%w: table %s: primary key %s", ErrNotFound, t.info.def.Name, t.describeKey(t.info.pk, t.pkRow(pk)))
	}
	tx.m.RowsExamined++
	tx.m.RowsDecoded++
	tx.oldImg = append(tx.oldImg[:0], img...)
	if t.org == Clustered {
		tx.oldRec = append(tx.oldRec[:0], tx.val...)
	}
	if tx.old, err = decodeRow(img, t.info.def.Columns, tx.old); err != nil {
		return ptr, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	return ptr, nil
}

// lookup finds the row with primary key pk (encoded): its image (in
// tx.val) and, in a heap table, its pointer. A delete-marked clustered
// record is no row (the latest version is a delete), unless marked is set
// (a consistent read builds older versions from it); tx.recHdr holds a
// clustered record's system fields.
func (tx *Tx) lookup(t *TableHandle, pk []byte, marked bool) (img []byte, ptr heap.RowPtr, found bool, err error) {
	if t.versioned() {
		// The latest committed version (or the transaction's own): the
		// callers lock the row or recheck what they read. ptr is the
		// root of its HOT chain, which its entries name.
		tx.m.RowFetches++
		tx.m.RowFetchesHeap++
		img, ptr, _, _, found, err = tx.versionedFind(t, pk, tx.latestSnap(), true)
		return img, ptr, found, err
	}
	prim := t.ixs[0]
	b := tx.m.NodeVisitsTotal()
	v, found, err := prim.tree.GetPos(tx.m, pk, tx.val, &tx.recPos)
	tx.charge(prim, b)
	if err != nil || !found {
		return nil, ptr, false, err
	}
	tx.val = v
	if t.org == Clustered {
		h, body, err := splitClustRec(v)
		if err != nil {
			return nil, ptr, false, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
		}
		tx.recHdr = h
		if h.deleted() && !marked {
			return nil, ptr, false, nil
		}
		return body, ptr, true, nil
	}
	if ptr, err = heap.DecodeRowPtr(v); err != nil {
		return nil, ptr, false, fmt.Errorf("engine: table %s: primary index entry: %w", t.info.def.Name, err)
	}
	tx.m.RowFetches++
	tx.m.RowFetchesHeap++
	if img, err = t.heap.Fetch(tx.m, ptr, tx.val); err != nil {
		return nil, ptr, false, err
	}
	tx.val = img
	return img, ptr, true, nil
}

// Get reads the row with primary key pk into dst (resized to the table's
// width) and reports whether it exists. Strings in the row share the
// transaction's buffer (see Tx).
func (tx *Tx) Get(t *TableHandle, pk []Value, dst Row) (Row, bool, error) {
	return tx.get(t, pk, dst, lock.Shared)
}

// GetForUpdate is Get taking the row's exclusive lock (SELECT ... FOR
// UPDATE): a transaction that reads a row in order to update it takes the
// lock it will need at once, so two of them queue instead of both holding
// a shared lock and deadlocking on the upgrade.
func (tx *Tx) GetForUpdate(t *TableHandle, pk []Value, dst Row) (Row, bool, error) {
	return tx.get(t, pk, dst, lock.Exclusive)
}

func (tx *Tx) get(t *TableHandle, pk []Value, dst Row, mode lock.Mode) (Row, bool, error) {
	tx.enter()
	key, err := tx.keyOf(t, pk)
	if err != nil {
		return nil, false, err
	}
	if t.versioned() {
		return tx.versionedGet(t, key, dst, mode)
	}
	// A plain read under ReadCommitted or RepeatableRead is a consistent
	// read: no lock, the version the read view sees.
	consistent := mode == lock.Shared && tx.consistent(t)
	if !consistent {
		if err := tx.lock(t, key, mode); err != nil {
			return nil, false, err
		}
	}
	img, _, found, err := tx.lookup(t, key, consistent)
	if err == nil && found && consistent {
		tx.m.ConsistentReads++
		img, found, err = tx.buildVersion(tx.readView(true), tx.recHdr, img)
	}
	if err != nil || !found {
		return dst, false, err
	}
	return tx.returnRow(t, img, dst)
}

// Set names a column to change and its new value.
type Set struct {
	Column string
	Value  Value
}

// Update changes the named columns of the row with primary key pk.
// ErrNotFound if there is none; a primary-key column cannot be changed.
func (tx *Tx) Update(t *TableHandle, pk []Value, set []Set) error {
	tx.enter()
	if err := tx.db.logFreeCheck(tx.m); err != nil {
		return err
	}
	tx.group++
	return tx.update(t, pk, set)
}

func (tx *Tx) update(t *TableHandle, pk []Value, set []Set) error {
	key, err := tx.keyOf(t, pk)
	if err != nil {
		return err
	}
	cols := t.info.def.Columns
	name := t.info.def.Name
	// Resolve and check the changes before reading anything.
	changed := zeroed(tx.changed, len(cols))
	tx.changed = changed
	setCols := tx.setCols[:0]
	for _, s := range set {
		c, ok := t.info.colIndex[s.Column]
		if !ok {
			return fmt.Errorf("%w: table %s: update names column %q", ErrUnknownColumn, name, s.Column)
		}
		for _, p := range t.info.pk {
			if p == c {
				return fmt.Errorf("%w: table %s: column %s", ErrPrimaryKeyUpdate, name, s.Column)
			}
		}
		if err := checkValue(name, &cols[c], s.Value); err != nil {
			return err
		}
		changed[c] = true
		setCols = append(setCols, c)
	}
	tx.setCols = setCols
	ptr, at, err := tx.lockOld(t, key, pk)
	if err != nil {
		return err
	}
	// The old row's strings alias tx.val; keep a private copy, since the
	// writes below reuse that buffer.
	tx.scratch = tx.scratch[:0]
	for i := range tx.old {
		if b := tx.old[i].B; b != nil {
			if len(b) == 0 {
				tx.old[i].B = []byte{} // an empty string stays a string
				continue
			}
			s := len(tx.scratch)
			tx.scratch = append(tx.scratch, b...)
			tx.old[i].B = tx.scratch[s:len(tx.scratch):len(tx.scratch)]
		}
	}
	tx.cur = append(tx.cur[:0], tx.old...)
	for k, s := range set {
		c := setCols[k]
		tx.cur[c] = s.Value
		// A column set to the value it has is not a change: no index
		// entry moves, and a unique index must not see the row's own
		// entry as a duplicate.
		changed[c] = !sameValue(tx.old[c], s.Value)
	}
	touched := func(ix *index) bool {
		for _, c := range ix.cols {
			if changed[c] {
				return true
			}
		}
		return false
	}
	if err := tx.checkUnique(t, tx.cur, func(ix *index) bool { return !touched(ix) }); err != nil {
		return err
	}
	tx.row = appendRow(tx.row[:0], cols, tx.cur)
	if err := tx.checkSizes(t, tx.cur, key, tx.row); err != nil {
		return err
	}
	prim := t.ixs[0]

	if t.org == Clustered {
		b := tx.m.NodeVisitsTotal()
		s := step{kind: stepClustUpdate, key: key, prev: tx.recHdr, val: tx.oldImg, pos: tx.recPos}
		ord := false
		for _, ix := range t.ixs[1:] {
			ord = ord || touched(ix)
		}
		if ord {
			// Purge builds the old entries from the whole old image.
			s.flags = ordChange
		} else if e := undoEdit(tx.patch[:0], tx.oldImg, tx.row); e != nil {
			tx.patch = e
			s.val, s.flags = e, valEdit
		}
		err := tx.clustWrite(prim, &s, tx.row)
		tx.charge(prim, b)
		if err != nil {
			return err
		}
		return tx.reindex(t, key, ptr, ptr, touched)
	}

	if t.versioned() {
		// A new version, heap-only when no index is touched and it fits
		// on the page (no index changes); otherwise it gets entries of
		// its own (versionedIndex) and the old ones stay.
		hotOK := true
		for _, ix := range t.ixs[1:] {
			hotOK = hotOK && !touched(ix)
		}
		if err := tx.versionedWriter(); err != nil {
			return err
		}
		newPtr, hot, err := t.heap.UpdateVersion(tx.m, at, tx.trxID, tx.row, hotOK)
		if err != nil {
			return err
		}
		tx.db.noteDead(t)
		if hot {
			return nil
		}
		return tx.versionedIndex(t, key, newPtr, touched)
	}

	// Heap organizations: in place when it fits (unless every update is a
	// new version), else at a new pointer.
	newPtr := ptr
	if tx.db.opts.HeapUpdate == NewVersion {
		if newPtr, err = tx.heapInsert(t, tx.row); err != nil {
			return err
		}
		if err := tx.heapDelete(t, ptr, tx.oldImg); err != nil {
			return err
		}
	} else {
		// A row updated in place keeps at least its length, so that
		// undoing the update always fits in place (see undoer).
		tx.row = padRow(tx.row, len(tx.oldImg))
		if newPtr, err = tx.heapUpdate(t, ptr, tx.row, tx.oldImg); err != nil {
			return err
		}
	}
	if newPtr != ptr {
		// The row has a new pointer: the primary index gets a new entry.
		p := newPtr.Encode()
		old := ptr.Encode()
		b := tx.m.NodeVisitsTotal()
		err := tx.treeUpdate(prim, key, p[:], old[:], 0)
		tx.charge(prim, b)
		if err != nil {
			return err
		}
		tx.deleted(prim)
		tx.wrote(prim)
	}
	moved := newPtr != ptr
	return tx.reindex(t, key, ptr, newPtr, func(ix *index) bool {
		// Row-pointer secondaries follow the row when it moves.
		return touched(ix) || (moved && ix.carry == carryPtr)
	})
}

// reindex replaces, in every secondary index that redo says, the old row's
// entry with the new row's. tx.old and tx.cur hold the rows.
func (tx *Tx) reindex(t *TableHandle, pk []byte, oldPtr, newPtr heap.RowPtr, redo func(*index) bool) error {
	for _, ix := range t.ixs[1:] {
		if !redo(ix) {
			continue
		}
		if t.org == Clustered {
			// The old entry is delete-marked, kept for the read views
			// that still see the old version until purge removes it.
			tx.key2 = t.entryKey(tx.key2, ix, tx.old, pk, oldPtr)
			err := tx.secMark(ix, tx.key2)
			if err == nil {
				tx.key2 = t.entryKey(tx.key2, ix, tx.cur, pk, newPtr)
				err = tx.secInsert(ix, tx.key2)
			}
			if err != nil {
				return fmt.Errorf("engine: table %s: index %s: %w", t.info.def.Name, ix.name, err)
			}
			continue
		}
		b := tx.m.NodeVisitsTotal()
		tx.key2 = t.entryKey(tx.key2, ix, tx.old, pk, oldPtr)
		err := tx.treeDelete(ix, tx.key2, nil)
		if err == nil {
			tx.key2 = t.entryKey(tx.key2, ix, tx.cur, pk, newPtr)
			err = tx.treeInsert(ix, tx.key2, nil, 0)
		}
		tx.charge(ix, b)
		if err != nil {
			return fmt.Errorf("engine: table %s: index %s: %w", t.info.def.Name, ix.name, err)
		}
		tx.deleted(ix)
		tx.wrote(ix)
	}
	return nil
}

// sameValue reports whether a and b are the same value of one column.
func sameValue(a, b Value) bool {
	return a.NotNull == b.NotNull && (!a.NotNull || (a.I == b.I && string(a.B) == string(b.B)))
}

// pkRow spreads primary-key values into a row, for messages.
func (t *TableHandle) pkRow(pk []Value) Row {
	row := make(Row, len(t.info.def.Columns))
	for i, c := range t.info.pk {
		if i < len(pk) {
			row[c] = pk[i]
		}
	}
	return row
}

// Delete removes the row with primary key pk and its index entries.
// ErrNotFound if there is none. In a clustered table the record and its
// entries are delete-marked (delmark.go): read views older than the
// delete still read the row until purge removes them.
func (tx *Tx) Delete(t *TableHandle, pk []Value) error {
	tx.enter()
	if err := tx.db.logFreeCheck(tx.m); err != nil {
		return err
	}
	tx.group++
	return tx.delete(t, pk)
}

// lockOld locks the row with encoded primary key key exclusive and
// reads its latest version into tx.old (readOld, readOldVersion): what
// an update or a delete starts with. A row gone since the transaction
// began waiting for its lock, or since its RepeatableRead snapshot, is
// ErrRowGone (rowGone); one that never was is ErrNotFound.
func (tx *Tx) lockOld(t *TableHandle, key []byte, pk []Value) (ptr, at heap.RowPtr, err error) {
	if t.versioned() {
		tx.stmtView()
	}
	waits := tx.m.LockWaits
	if err := tx.lock(t, key, lock.Exclusive); err != nil {
		return ptr, at, err
	}
	if t.versioned() {
		ptr, at, err = tx.readOldVersion(t, key, pk)
	} else {
		ptr, err = tx.readOld(t, key, pk)
	}
	if errors.Is(err, ErrNotFound) && (tx.m.LockWaits != waits || tx.snapshotSees(t, pk)) {
		return ptr, at, tx.rowGone(t, pk, err)
	}
	return ptr, at, err
}

// snapshotSees reports whether the transaction's read view (under
// RepeatableRead, if it has one) sees a row with primary key pk. It
// reads through the view as a plain read does, reusing the
// transaction's buffers.
func (tx *Tx) snapshotSees(t *TableHandle, pk []Value) bool {
	if tx.iso != RepeatableRead || tx.view == nil || (!tx.consistent(t) && !t.versioned()) {
		return false
	}
	_, found, err := tx.get(t, pk, nil, lock.Shared)
	return err == nil && found
}

// rowGone rolls tx back and returns ErrRowGone, which also matches
// notFound's ErrNotFound.
func (tx *Tx) rowGone(t *TableHandle, pk []Value, notFound error) error {
	err := fmt.Errorf("%w: table %s: %w", ErrRowGone, t.info.def.Name, notFound)
	if rerr := tx.Rollback(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

func (tx *Tx) delete(t *TableHandle, pk []Value) error {
	key, err := tx.keyOf(t, pk)
	if err != nil {
		return err
	}
	ptr, at, err := tx.lockOld(t, key, pk)
	if err != nil {
		return err
	}
	if t.org == Clustered {
		return tx.clustDelete(t, key) // delete-marks (delmark.go)
	}
	if t.versioned() {
		// The version's xmax is stamped; the index entries stay for the
		// snapshots that still see the row (PostgreSQL removes them at
		// vacuum).
		if err := tx.versionedWriter(); err != nil {
			return err
		}
		if err := t.heap.DeleteVersion(tx.m, at, tx.trxID); err != nil {
			return err
		}
		tx.db.noteDead(t)
		return nil
	}
	for _, ix := range t.ixs[1:] {
		tx.key2 = t.entryKey(tx.key2, ix, tx.old, key, ptr)
		b := tx.m.NodeVisitsTotal()
		err := tx.treeDelete(ix, tx.key2, nil)
		tx.charge(ix, b)
		if err != nil {
			return fmt.Errorf("engine: table %s: index %s: %w", t.info.def.Name, ix.name, err)
		}
		tx.deleted(ix)
	}
	prim := t.ixs[0]
	oldVal := tx.oldRec
	if t.heap != nil {
		p := ptr.Encode()
		oldVal = p[:]
	}
	b := tx.m.NodeVisitsTotal()
	err = tx.treeDelete(prim, key, oldVal)
	tx.charge(prim, b)
	if err != nil {
		return err
	}
	tx.deleted(prim)
	if t.heap != nil {
		return tx.heapDelete(t, ptr, tx.oldImg)
	}
	return nil
}

// returnRow decodes the record image img of a row of t that a point read
// found into dst, and meters it: examined, decoded and returned.
func (tx *Tx) returnRow(t *TableHandle, img []byte, dst Row) (Row, bool, error) {
	tx.m.RowsExamined++
	tx.m.RowsDecoded++
	row, err := decodeRow(img, t.info.def.Columns, dst)
	if err != nil {
		return nil, false, fmt.Errorf("engine: table %s: %w", t.info.def.Name, err)
	}
	tx.m.RowsReturned++
	return row, true, nil
}
