package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
)

// TestDeleteRowGone: deleting a row that another transaction deleted
// while this one waited for its lock, or that this one's RepeatableRead
// snapshot still sees, is a retryable error with the transaction rolled
// back, at every level and in every organization (ErrRowGone, also
// ErrNotFound; on a versioned heap under RepeatableRead PostgreSQL's
// ErrSerialization); deleting a row that never was is ErrNotFound alone,
// and the transaction goes on.
func TestDeleteRowGone(t *testing.T) {
	for _, org := range costOrgs {
		for _, iso := range []Isolation{ReadCommitted, RepeatableRead, Serializable} {
			t.Run(org.String()+"/"+iso.String(), func(t *testing.T) {
				parked := make(chan *lock.Wait)
				db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}, Runtime: signalParker{parked: parked}, Isolation: iso})
				require.NoError(t, err)
				defer func() { require.NoError(t, db.Close()) }()
				tb := costLoad(t, db, org, 8, 10)
				versionedRR := tb.versioned() && iso == RepeatableRead

				// Deleted while the delete waited for the row's lock.
				var m Meter
				a := db.Begin(&m)
				b := db.Begin(nil)
				require.NoError(t, b.Delete(tb, []Value{Int(5)}))
				done := make(chan error)
				go func() { done <- a.Delete(tb, []Value{Int(5)}) }()
				<-parked // a waits for b's lock
				require.NoError(t, b.Commit())
				err = <-done
				require.True(t, Retryable(err), "waited: %v", err)
				if versionedRR {
					require.ErrorIs(t, err, ErrSerialization)
				} else {
					require.ErrorIs(t, err, ErrRowGone)
					require.ErrorIs(t, err, ErrNotFound)
				}
				require.ErrorIs(t, a.Commit(), ErrTxDone, "rolled back")

				// Deleted after the snapshot, committed before the delete
				// asks for the lock: gone for the snapshot under
				// RepeatableRead only. (Under Serializable the read would
				// hold a shared lock that the other delete waits for.)
				if iso != Serializable {
					a = db.Begin(nil)
					_, found, err := a.Get(tb, []Value{Int(6)}, nil) // the snapshot
					require.NoError(t, err)
					require.True(t, found)
					b = db.Begin(nil)
					require.NoError(t, b.Delete(tb, []Value{Int(6)}))
					require.NoError(t, b.Commit())
					err = a.Delete(tb, []Value{Int(6)})
					if versionedRR {
						require.ErrorIs(t, err, ErrSerialization)
					} else {
						require.ErrorIs(t, err, ErrNotFound)
					}
					if iso == RepeatableRead {
						require.True(t, Retryable(err), "the snapshot sees the row: %v", err)
						require.ErrorIs(t, a.Commit(), ErrTxDone, "rolled back")
					} else {
						require.False(t, Retryable(err), "ReadCommitted: the statement sees the row gone: %v", err)
						require.NoError(t, a.Commit())
					}
				}

				// A row that never was.
				a = db.Begin(nil)
				err = a.Delete(tb, []Value{Int(100)})
				require.ErrorIs(t, err, ErrNotFound)
				require.False(t, Retryable(err))
				require.NoError(t, a.Delete(tb, []Value{Int(7)}), "the transaction goes on")
				require.NoError(t, a.Commit())
			})
		}
	}
}
