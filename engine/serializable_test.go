package engine

import (
	"fmt"
	"testing"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/stretchr/testify/require"
)

// TestAnomaliesSerializable: Serializable is strict two-phase locking on
// rows, plain reads included, in every organization: a dirty read, a
// non-repeatable read and a lost update are prevented by lock waits (and
// a deadlock, whose victim is rolled back), while a phantom is allowed,
// since there are no gap or next-key locks (the documented departure
// from InnoDB's SERIALIZABLE). Each conflicting step runs on a goroutine
// of its own; the test goes on once it is parked on the lock.
func TestAnomaliesSerializable(t *testing.T) {
	for _, org := range costOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, parked := mvccOpenParked(t, Serializable)
			tb, err := db.CreateTable(mvccTable(org))
			require.NoError(t, err)
			tx := db.Begin(nil)
			for i := int64(1); i <= 3; i++ {
				require.NoError(t, tx.Insert(tb, Row{Int(i), Int(10 * i)}))
			}
			require.NoError(t, tx.Commit())
			get := func(x *Tx, id int64) (int64, error) {
				row, _, err := x.Get(tb, []Value{Int(id)}, nil)
				if err != nil {
					return 0, err
				}
				return row[1].I, nil
			}

			// Dirty read: the reader waits for the writer's end and reads
			// what it left (here: the rollback's).
			w := db.Begin(nil)
			require.NoError(t, w.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(99)}}))
			r := db.Begin(nil)
			done := make(chan error, 1)
			var read int64
			go func() {
				var err error
				read, err = get(r, 1)
				done <- err
			}()
			mustPark(t, parked, done, "the read of a row a writer holds")
			require.NoError(t, w.Rollback())
			require.NoError(t, <-done)
			require.Equal(t, int64(10), read, "no dirty read")
			require.NoError(t, r.Commit())

			// Non-repeatable read: the writer waits for the reader's end,
			// so the reader reads the same value twice.
			r = db.Begin(nil)
			v1, err := get(r, 2)
			require.NoError(t, err)
			w = db.Begin(nil)
			go func() { done <- w.Update(tb, []Value{Int(2)}, []Set{{Column: "v", Value: Int(21)}}) }()
			mustPark(t, parked, done, "the update of a row a reader holds")
			v2, err := get(r, 2)
			require.NoError(t, err)
			require.Equal(t, v1, v2, "no non-repeatable read")
			require.NoError(t, r.Commit())
			require.NoError(t, <-done)
			require.NoError(t, w.Commit())

			// Lost update: both read the row (shared locks), both update
			// it; the second update closes a cycle and is the deadlock
			// victim, rolled back; the first's update goes through.
			a, b := db.Begin(nil), db.Begin(nil)
			va, err := get(a, 3)
			require.NoError(t, err)
			vb, err := get(b, 3)
			require.NoError(t, err)
			go func() { done <- a.Update(tb, []Value{Int(3)}, []Set{{Column: "v", Value: Int(va + 1)}}) }()
			mustPark(t, parked, done, "a's update of a row b read")
			err = b.Update(tb, []Value{Int(3)}, []Set{{Column: "v", Value: Int(vb + 1)}})
			require.ErrorIs(t, err, ErrDeadlock, "b's upgrade closes the cycle")
			require.True(t, Retryable(err))
			require.NoError(t, <-done, "a's update is granted once b is rolled back")
			require.NoError(t, a.Commit())
			c := db.Begin(nil)
			v, err := get(c, 3)
			require.NoError(t, err)
			require.Equal(t, int64(31), v, "one increment, none lost")
			require.NoError(t, c.Commit())

			// Phantom: allowed. A scan takes a shared lock on each row it
			// returns and none on the gaps, so a new row goes in without
			// a wait and the same scan then returns it.
			scan := func(x *Tx) int {
				cur, err := x.Scan(tb, ScanOptions{})
				require.NoError(t, err)
				n := 0
				for cur.Next() {
					n++
				}
				require.NoError(t, cur.Close())
				return n
			}
			var m Meter
			r = db.Begin(&m)
			n1 := scan(r)
			// (A versioned heap's primary index holds an entry per
			// version chain, each locked before it is read.)
			require.GreaterOrEqual(t, m.LockRequests, int64(n1), "the scan locked each row it read")
			require.Equal(t, 3, n1)
			w = db.Begin(nil)
			go func() { done <- w.Insert(tb, Row{Int(9), Int(90)}) }()
			select {
			case err := <-done:
				require.NoError(t, err, "no gap lock: the insert does not wait")
			case <-parked:
				t.Fatal("the insert waited: a gap lock")
			}
			require.NoError(t, w.Commit())
			n2 := scan(r)
			require.Equal(t, n1+1, n2, "a phantom: no gap locks")
			require.NoError(t, r.Commit())
		})
	}
}

// TestCountSerializable: under Serializable a count locks each row it
// counts, shared, as InnoDB's SERIALIZABLE does for a plain SELECT
// COUNT(*): it waits for a writer's uncommitted insert and delete and
// counts what the writer's end leaves (a count without the lock counted
// the uncommitted insert and skipped the uncommitted delete of a clustered
// table: a dirty read). The one count that cannot lock is one that reads
// a row-pointer index alone (count(*) of heap-rowptr's ix_s), whose
// entries hold no key: it reads the latest committed versions, so it
// neither waits for nor sees the writer's changes before they commit. The
// test fails when a count skips its locks.
func TestCountSerializable(t *testing.T) {
	for _, org := range costOrgs {
		for _, index := range []string{"", "ix_s"} {
			for _, column := range []string{"*", "pad"} {
				t.Run(org.String()+"/"+index+"/"+column, func(t *testing.T) {
					db, parked := mvccOpenParked(t, Serializable)
					tb := costLoad(t, db, org, 8, 10)
					unlocked := org == HeapRowPointer && index == "ix_s" && column == "*"
					count := func(x *Tx) (int64, error) {
						n, _, err := x.Count(tb, CountOptions{ScanOptions: ScanOptions{Index: index}, Column: column})
						if err == nil {
							err = x.Commit()
						}
						return n, err
					}
					for _, commit := range []bool{false, true} {
						// The writer deletes two rows and inserts one, and
						// has not ended.
						w := db.Begin(nil)
						require.NoError(t, w.Delete(tb, []Value{Int(3)}))
						require.NoError(t, w.Delete(tb, []Value{Int(5)}))
						require.NoError(t, w.Insert(tb, costRow(100, 10)))
						var rm Meter
						r := db.Begin(&rm)
						var n int64
						done := make(chan error, 1)
						go func() {
							var err error
							n, err = count(r)
							done <- err
						}()
						if unlocked {
							require.NoError(t, <-done)
							require.Equal(t, int64(8), n, "the latest committed rows")
							require.Zero(t, rm.LockRequests)
						} else {
							mustPark(t, parked, done, "a count over an uncommitted delete")
						}
						end := w.Rollback
						want := int64(8)
						if commit {
							end, want = w.Commit, 7
						}
						require.NoError(t, end())
						if !unlocked {
							require.NoError(t, doneParking(parked, done))
							require.Equal(t, want, n, "commit=%v", commit)
						}
						got, err := count(db.Begin(nil))
						require.NoError(t, err)
						require.Equal(t, want, got, "commit=%v, counted after the writer ended", commit)
					}
				})
			}
		}
	}
}

// TestLockingReadMovedEntry: a locking count through a secondary index
// of a heap table (Serializable) that waits for a writer who moved a
// row's indexed value ahead of the scan, and then rolls it back or
// commits, counts the row once. Without versions, after the wait the row
// must still have the entry's key (rereadEntry), else it is counted at its
// other entry: before, a rollback had it counted at the moved entry and
// again at its restored one. With versions, the moved entry names a
// version that the latest snapshot cannot see: the count waits for its
// writer (waitInserter, PostgreSQL's SnapshotDirty) instead of skipping
// it, which missed the row when the writer committed. Clustered tables
// recheck the same way.
func TestLockingReadMovedEntry(t *testing.T) {
	for _, hv := range []HeapVersioning{HeapVersionsOff, HeapVersionsOn} {
		for _, org := range costOrgs {
			for _, column := range []string{"*", "pad"} {
				for _, commit := range []bool{false, true} {
					t.Run(fmt.Sprintf("versions=%v/%s/%s/commit=%v", hv.Keep(), org, column, commit), func(t *testing.T) {
						parked := make(chan *lock.Wait, 1)
						db, err := Open(&Options{HeapVersions: hv, Options: cache.Options{PoolSize: 8 << 20},
							Runtime: signalParker{parked: parked}, Isolation: Serializable})
						require.NoError(t, err)
						t.Cleanup(func() { require.NoError(t, db.Close()) })
						tb := costLoad(t, db, org, 8, 10)
						w := db.Begin(nil)
						// Row 7's s moves ahead of every other entry of ix_s.
						require.NoError(t, w.Update(tb, []Value{Int(7)}, []Set{{Column: "s", Value: Str("a")}}))
						r := db.Begin(nil)
						var n int64
						done := make(chan error, 1)
						go func() {
							var err error
							n, _, err = r.Count(tb, CountOptions{ScanOptions: ScanOptions{Index: "ix_s"}, Column: column})
							done <- err
						}()
						if org == HeapRowPointer && column == "*" {
							// The documented exception: an index-only
							// count of a row-pointer index locks nothing.
							require.NoError(t, <-done)
						} else {
							mustPark(t, parked, done, "a count over a moved entry")
							if commit {
								require.NoError(t, w.Commit())
							} else {
								require.NoError(t, w.Rollback())
							}
							require.NoError(t, <-done)
							require.Equal(t, int64(8), n)
						}
						require.NoError(t, r.Commit())
						if !w.done {
							require.NoError(t, w.Rollback())
						}
					})
				}
			}
		}
	}
}
