package heap

import (
	"fmt"
	"slices"
)

// Visibility of versioned tuples: PostgreSQL's HeapTupleSatisfiesMVCC and
// HeapTupleSatisfiesVacuum (access/heap/heapam_visibility.c), as functions
// of a snapshot and of the commit status of transaction ids.

// XidStatus is a transaction's status as the commit log records it, with
// clog.h's values (TRANSACTION_STATUS_IN_PROGRESS 0, _COMMITTED 1,
// _ABORTED 2; 3, _SUB_COMMITTED, has no use here: no subtransactions).
type XidStatus uint8

const (
	XidInProgress XidStatus = 0
	XidCommitted  XidStatus = 1
	XidAborted    XidStatus = 2
)

func (s XidStatus) String() string {
	switch s {
	case XidInProgress:
		return "in-progress"
	case XidCommitted:
		return "committed"
	case XidAborted:
		return "aborted"
	}
	return fmt.Sprintf("xid-status(%d)", uint8(s))
}

// CommitStatus answers the status of a transaction id: PostgreSQL's
// TransactionIdDidCommit and TransactionIdDidAbort over pg_xact (clog.c).
// The engine gives one backed by its durable commit log. A transaction
// that was running at a crash must read as aborted once recovery is done:
// PostgreSQL infers that (neither in progress, by the proc array, nor
// committed, by the clog, means crashed); here the engine records the
// abort of every transaction recovery rolls back, so the oracle alone
// answers.
//
// The heap calls it with a heap page latched (shared or exclusive): an
// implementation may latch its own pages (which are never latched before
// a heap page) but must not call back into the heap.
type CommitStatus interface {
	XidStatus(xid uint64) (XidStatus, error)
}

// Snapshot is PostgreSQL's MVCC SnapshotData: every transaction id below
// Xmin had finished when the snapshot was taken, none at or above Xmax had
// started, and Xip lists those between that were still running (sorted
// ascending). Own is the snapshot's own transaction (0: a read-only
// snapshot that has none), whose writes it sees; PostgreSQL asks
// TransactionIdIsCurrentTransactionId for that.
type Snapshot struct {
	Xmin, Xmax uint64
	Xip        []uint64
	Own        uint64
}

// InProgress reports whether xid was running (or not yet started) for the
// snapshot: PostgreSQL's XidInMVCCSnapshot. Its own transaction is not
// "in progress" for it, but callers test Own first, as PostgreSQL does.
func (s *Snapshot) InProgress(xid uint64) bool {
	if xid < s.Xmin {
		return false
	}
	if xid >= s.Xmax {
		return true
	}
	_, found := slices.BinarySearch(s.Xip, xid)
	return found
}

// visible decides whether the tuple with header t is visible to snap,
// following HeapTupleSatisfiesMVCC step by step, and returns the hint bits
// it learned (to be ORed into t's infomask: SetHintBits). The hints only
// record a commit status the log already holds, which never changes once
// the transaction finished: XMIN_COMMITTED or XMIN_INVALID when xmin has
// finished, XMAX_COMMITTED or XMAX_INVALID when xmax has.
func visible(t TupleHeader, snap *Snapshot, cs CommitStatus) (bool, uint16, error) {
	var hints uint16
	im := t.Infomask
	if im&HeapXminCommitted == 0 {
		if im&HeapXminInvalid != 0 {
			return false, 0, nil
		}
		switch {
		case t.Xmin == snap.Own && snap.Own != 0:
			// Inserted by the snapshot's own transaction.
			if im&HeapXmaxInvalid != 0 || t.Xmax == 0 || t.LockOnly() {
				return true, 0, nil
			}
			return t.Xmax != snap.Own, 0, nil
		case snap.InProgress(t.Xmin):
			return false, 0, nil
		}
		st, err := cs.XidStatus(t.Xmin)
		if err != nil {
			return false, 0, err
		}
		switch st {
		case XidCommitted:
			hints |= HeapXminCommitted
		case XidAborted:
			return false, HeapXminInvalid, nil
		default:
			// Finished for the snapshot yet not committed in the log:
			// PostgreSQL's "it must have aborted or crashed", without
			// the hint (the oracle has not recorded the abort yet).
			return false, 0, nil
		}
	} else if im&HeapXminInvalid == 0 && snap.InProgress(t.Xmin) {
		// Committed, but after the snapshot was taken (not frozen).
		return false, 0, nil
	}

	// xmin is visible; now xmax.
	if im&HeapXmaxInvalid != 0 || t.Xmax == 0 || t.LockOnly() {
		return true, hints, nil
	}
	if im&HeapXmaxCommitted == 0 {
		if t.Xmax == snap.Own && snap.Own != 0 {
			return false, hints, nil // deleted by the snapshot's own transaction
		}
		if snap.InProgress(t.Xmax) {
			return true, hints, nil
		}
		st, err := cs.XidStatus(t.Xmax)
		if err != nil {
			return false, 0, err
		}
		switch st {
		case XidCommitted:
			hints |= HeapXmaxCommitted
		case XidAborted:
			return true, hints | HeapXmaxInvalid, nil
		default:
			return true, hints, nil
		}
	} else if snap.InProgress(t.Xmax) {
		return true, hints, nil
	}
	return false, hints, nil
}

// VacuumState is what HeapTupleSatisfiesVacuum says of a tuple, given the
// horizon (OldestXmin: the oldest transaction id any snapshot still
// running may see as running).
type VacuumState uint8

const (
	// TupleLive: visible to everybody who can see it at all, and not
	// deleted (HEAPTUPLE_LIVE).
	TupleLive VacuumState = iota
	// TupleDead: dead to every snapshot, now and later (HEAPTUPLE_DEAD):
	// its inserter aborted, or its deleter committed before the horizon.
	TupleDead
	// TupleRecentlyDead: deleted by a committed transaction that some
	// snapshot may still see as running (HEAPTUPLE_RECENTLY_DEAD).
	TupleRecentlyDead
	// TupleInsertInProgress: the inserter is still running.
	TupleInsertInProgress
	// TupleDeleteInProgress: the deleter is still running.
	TupleDeleteInProgress
)

func (s VacuumState) String() string {
	return [...]string{"live", "dead", "recently-dead", "insert-in-progress", "delete-in-progress"}[s]
}

// StateForVacuum is HeapTupleSatisfiesVacuum: the state of the version
// with header t for horizon, for a caller that reads versions itself
// (PageVersions). It sets no hint bits.
func StateForVacuum(t TupleHeader, horizon uint64, cs CommitStatus) (VacuumState, error) {
	st, _, err := vacuumState(t, horizon, cs)
	return st, err
}

// vacuumState is HeapTupleSatisfiesVacuum: the tuple's state for pruning
// and vacuum, with the hint bits it learned.
func vacuumState(t TupleHeader, horizon uint64, cs CommitStatus) (VacuumState, uint16, error) {
	var hints uint16
	im := t.Infomask
	if im&HeapXminCommitted == 0 {
		if im&HeapXminInvalid != 0 {
			return TupleDead, 0, nil
		}
		st, err := cs.XidStatus(t.Xmin)
		if err != nil {
			return 0, 0, err
		}
		switch st {
		case XidInProgress:
			if t.Xmax != 0 && !t.LockOnly() && t.Xmax == t.Xmin {
				return TupleDeleteInProgress, 0, nil
			}
			return TupleInsertInProgress, 0, nil
		case XidAborted:
			return TupleDead, HeapXminInvalid, nil
		}
		hints |= HeapXminCommitted
	}
	if im&HeapXmaxInvalid != 0 || t.Xmax == 0 {
		return TupleLive, hints, nil
	}
	if t.LockOnly() {
		return TupleLive, hints, nil
	}
	if im&HeapXmaxCommitted == 0 {
		st, err := cs.XidStatus(t.Xmax)
		if err != nil {
			return 0, 0, err
		}
		switch st {
		case XidInProgress:
			return TupleDeleteInProgress, hints, nil
		case XidAborted:
			return TupleLive, hints | HeapXmaxInvalid, nil
		}
		hints |= HeapXmaxCommitted
	}
	if t.Xmax < horizon {
		return TupleDead, hints, nil
	}
	return TupleRecentlyDead, hints, nil
}

// Visible reports whether the version with header t is visible to snap
// (HeapTupleSatisfiesMVCC), for a caller that walks versions itself with
// ReadVersion. It sets no hint bits.
func Visible(t TupleHeader, snap *Snapshot, cs CommitStatus) (bool, error) {
	ok, _, err := visible(t, snap, cs)
	return ok, err
}
