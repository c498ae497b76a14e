package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeleteRowGone: an update or a delete of a row that another
// transaction deleted while this one waited for its lock, or that this
// one's RepeatableRead snapshot still sees, is a retryable error with
// the transaction rolled back, at every level and in every organization
// (ErrRowGone, also ErrNotFound; on a versioned heap under
// RepeatableRead PostgreSQL's ErrSerialization); deleting a row that
// never was is ErrNotFound alone, and the transaction goes on.
func TestDeleteRowGone(t *testing.T) {
	for _, org := range costOrgs {
		for _, iso := range []Isolation{ReadCommitted, RepeatableRead, Serializable} {
			t.Run(org.String()+"/"+iso.String(), func(t *testing.T) {
				db, parked := mvccOpenParked(t, iso)
				tb := costLoad(t, db, org, 8, 10)
				versionedRR := tb.versioned() && iso == RepeatableRead
				ops := []struct {
					name string
					do   func(x *Tx, id int64) error
				}{
					{"delete", func(x *Tx, id int64) error { return x.Delete(tb, []Value{Int(id)}) }},
					{"update", func(x *Tx, id int64) error {
						return x.Update(tb, []Value{Int(id)}, []Set{{Column: "pad", Value: Str("new")}})
					}},
				}
				for i, op := range ops {
					// Deleted while the write waited for the row's lock.
					waited, seen := int64(5-i), int64(7-i) // rows 5, 4; 7, 6
					a := db.Begin(nil)
					b := db.Begin(nil)
					require.NoError(t, b.Delete(tb, []Value{Int(waited)}))
					done := make(chan error, 1)
					go func() { done <- op.do(a, waited) }()
					mustPark(t, parked, done, op.name+" of a row another transaction deletes")
					require.NoError(t, b.Commit())
					err := <-done
					require.True(t, Retryable(err), "%s, waited: %v", op.name, err)
					if versionedRR {
						require.ErrorIs(t, err, ErrSerialization, op.name)
					} else {
						require.ErrorIs(t, err, ErrRowGone, op.name)
						require.ErrorIs(t, err, ErrNotFound, op.name)
					}
					require.ErrorIs(t, a.Commit(), ErrTxDone, "%s: rolled back", op.name)

					// Deleted after the snapshot, committed before the
					// write asks for the lock: gone for the snapshot under
					// RepeatableRead only. (Under Serializable the read
					// would hold a shared lock that the other delete waits
					// for.)
					if iso == Serializable {
						continue
					}
					a = db.Begin(nil)
					_, found, err := a.Get(tb, []Value{Int(seen)}, nil) // the snapshot
					require.NoError(t, err)
					require.True(t, found)
					b = db.Begin(nil)
					require.NoError(t, b.Delete(tb, []Value{Int(seen)}))
					require.NoError(t, b.Commit())
					err = op.do(a, seen)
					if versionedRR {
						require.ErrorIs(t, err, ErrSerialization, op.name)
					} else {
						require.ErrorIs(t, err, ErrNotFound, op.name)
					}
					if iso == RepeatableRead {
						require.True(t, Retryable(err), "%s: the snapshot sees the row: %v", op.name, err)
						require.ErrorIs(t, a.Commit(), ErrTxDone, "%s: rolled back", op.name)
					} else {
						require.False(t, Retryable(err), "%s, ReadCommitted: the statement sees the row gone: %v", op.name, err)
						require.NoError(t, a.Commit(), op.name)
					}
				}

				// A row that never was.
				a := db.Begin(nil)
				for _, op := range ops {
					err := op.do(a, 100)
					require.ErrorIs(t, err, ErrNotFound, op.name)
					require.False(t, Retryable(err), op.name)
				}
				require.NoError(t, a.Delete(tb, []Value{Int(0)}), "the transaction goes on")
				require.NoError(t, a.Commit())
			})
		}
	}
}
