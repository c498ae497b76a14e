package tpcc

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/enginelab/enginelab/engine"
)

// snapshotReads groups the reads of a Check or an Export into
// transactions. They run in one RepeatableRead transaction, one snapshot,
// as long as the engine reads the tables without row locks (tables with
// versions, whose plain reads are consistent reads): the job then sees
// one committed state of the whole database, holds no lock, and runs
// beside terminals. A table without versions is read with shared row locks
// whatever the level; from the first part whose reads took a lock, each
// part ends its transaction, so that the locks held at once stay bounded
// (one district's rows, one chunk of a table), and the reads are then no
// snapshot: such a job must run while nothing writes.
type snapshotReads struct {
	db *engine.DB
	m  *engine.Meter // charged; nil: each transaction's own
	tx *engine.Tx    // the transaction open, nil: none
	// locks is the meter's LockRequests when tx began, and locking says a
	// part's reads took row locks.
	locks   int64
	locking bool
	// shared says tx shares another transaction's snapshot (a worker's):
	// its parts may not take locks, since ending tx part by part would
	// leave that snapshot for a new one of its own.
	shared bool
}

// part runs fn, one part of the job's reads, in the snapshot's
// transaction (begun if need be). On an error the transaction is rolled
// back and the next part begins another.
func (r *snapshotReads) part(fn func(tx *engine.Tx) error) error {
	if r.tx == nil {
		r.tx = r.db.BeginTx(r.m, engine.TxOptions{Isolation: engine.RepeatableRead})
		r.locks = r.tx.Meter().LockRequests
	}
	if err := fn(r.tx); err != nil {
		_ = r.tx.Rollback() // may already be rolled back (a lock error)
		r.tx = nil
		return err
	}
	if r.tx.Meter().LockRequests != r.locks {
		if r.shared {
			// Workers read only tables read without locks
			// (readsWithoutLocks): fail rather than go on in another
			// snapshot.
			return errors.New("tpcc: a read of a shared snapshot took row locks (a table whose reads lock)")
		}
		r.locking = true
	}
	if r.locking {
		if err := r.end(); err != nil {
			return fmt.Errorf("tpcc: commit of a read transaction: %w", err)
		}
	}
	return nil
}

// end commits the transaction open, if any.
func (r *snapshotReads) end() error {
	tx := r.tx
	if tx == nil {
		return nil
	}
	r.tx = nil
	return tx.Commit()
}

// abort rolls back the transaction open, if any.
func (r *snapshotReads) abort() {
	if r.tx != nil {
		_ = r.tx.Rollback()
		r.tx = nil
	}
}

// readWorkers resolves the Workers of a job that reads one snapshot with
// several goroutines (CheckConfig, ExportConfig): 0 is GOMAXPROCS, and a
// database on another Runtime than engine.RealRuntime gets one (the
// simulator's scheduler runs one goroutine's calls). A negative count is
// refused with an error wrapping ErrInvalidConfig that names the job.
func readWorkers(db *engine.DB, n int, job string) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("tpcc: %w: %s with %d workers", ErrInvalidConfig, job, n)
	case n == 0:
		n = runtime.GOMAXPROCS(0)
	}
	if _, real := db.Options().Runtime.(engine.RealRuntime); !real {
		n = 1
	}
	return n, nil
}

// readsWithoutLocks says whether every table given is read without row
// locks (consistent reads of a snapshot): clustered, or a heap table with
// versions; nil entries are skipped. Workers share a snapshot only then:
// locking reads commit their locks part by part (snapshotReads), which no
// shared snapshot survives.
func readsWithoutLocks(tables ...*engine.TableHandle) bool {
	for _, t := range tables {
		if t != nil && t.Org() != engine.Clustered && !t.Versioned() {
			return false
		}
	}
	return true
}

// testHookShared, if set (tests only), is called once the workers of
// withSharedSnapshot have their transactions, before any job runs.
var testHookShared func()

// withSharedSnapshot runs jobs 0 to n-1 with workers goroutines, each in
// a transaction that reads tx's snapshot (engine.Tx.ShareSnapshot, as
// parallel pg_dump's workers import their leader's): a worker takes the
// next job not taken and runs do in its transaction. After an error no
// job is taken; the failing worker's transaction is rolled back, the
// others are committed, and every error is returned. With m, each worker
// charges a meter of its own, added to m at the end; job names the work
// in errors.
func withSharedSnapshot(tx *engine.Tx, m *engine.Meter, job string, workers, n int, do func(wtx *engine.Tx, j int) error) error {
	txs := make([]*engine.Tx, workers)
	meters := make([]*engine.Meter, workers)
	for i := range txs {
		if m != nil {
			meters[i] = new(engine.Meter)
		}
		wtx, err := tx.ShareSnapshot(meters[i])
		if err != nil {
			for _, t := range txs[:i] {
				_ = t.Rollback()
			}
			return fmt.Errorf("tpcc: %s: %w", job, err)
		}
		txs[i] = wtx
	}
	if h := testHookShared; h != nil {
		h()
	}
	var next atomic.Int64
	var failed atomic.Bool
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i, wtx := range txs {
		wg.Go(func() {
			for !failed.Load() {
				j := int(next.Add(1) - 1)
				if j >= n {
					break
				}
				if err := do(wtx, j); err != nil {
					errs[i] = err
					failed.Store(true)
					_ = wtx.Rollback() // may already be rolled back (a lock error)
					return
				}
			}
			if err := wtx.Commit(); err != nil {
				errs[i] = fmt.Errorf("tpcc: %s: commit of a read transaction: %w", job, err)
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	if m != nil {
		for _, wm := range meters {
			m.Add(wm)
		}
	}
	return errors.Join(errs...)
}
