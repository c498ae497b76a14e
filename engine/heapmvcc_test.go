package engine

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
)

// hvOpen opens an in-memory database whose heap tables keep versions,
// vacuumed only when a test says so (exact counts).
func hvOpen(t *testing.T) *DB {
	t.Helper()
	db, err := Open(&Options{HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

// hvTable is mvccTable in org with a column w that no index covers.
func hvTable(org Org) Table {
	tb := mvccTable(org)
	tb.Columns = append(tb.Columns, Column{Name: "w", Type: TypeInt})
	return tb
}

func hvGet(t *testing.T, tx *Tx, tb *TableHandle, id int64) (Row, bool) {
	t.Helper()
	row, found, err := tx.Get(tb, []Value{Int(id)}, nil)
	require.NoError(t, err)
	return append(Row(nil), row...), found
}

var hvOrgs = []Org{HeapRowPointer, HeapPrimaryKey}

// TestHeapVersionsSnapshot: a plain read sees what its snapshot sees:
// not an uncommitted insert (no dirty read), under RepeatableRead not a
// later commit (no non-repeatable read), under ReadCommitted the latest
// commit; rollback leaves a dead tuple no one sees.
func TestHeapVersionsSnapshot(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, parked := hvOpenParked(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			require.True(t, tb.versioned())

			w := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, w.Insert(tb, Row{Int(1), Int(10), Int(100)}))
			rr := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			rc := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			_, found := hvGet(t, rr, tb, 1)
			require.False(t, found, "dirty read")
			_, found = hvGet(t, rc, tb, 1)
			require.False(t, found, "dirty read")
			row, found := hvGet(t, w, tb, 1)
			require.True(t, found, "own insert")
			require.EqualValues(t, 100, row[2].I)
			require.NoError(t, w.Commit())

			_, found = hvGet(t, rr, tb, 1)
			require.False(t, found, "phantom row under RepeatableRead")
			row, found = hvGet(t, rc, tb, 1)
			require.True(t, found, "ReadCommitted sees the commit")
			require.EqualValues(t, 100, row[2].I)

			u := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, u.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(101)}}))
			require.NoError(t, u.Commit())
			row, _ = hvGet(t, rc, tb, 1)
			require.EqualValues(t, 101, row[2].I, "ReadCommitted: non-repeatable read")
			require.NoError(t, rr.Commit())
			require.NoError(t, rc.Commit())

			// A rolled-back update and delete leave dead tuples.
			a := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, a.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(999)}}))
			require.NoError(t, a.Rollback())
			a = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, a.Delete(tb, []Value{Int(1)}))
			require.NoError(t, a.Rollback())
			r := db.BeginTx(nil, TxOptions{Isolation: Serializable})
			row, found = hvGet(t, r, tb, 1)
			require.True(t, found)
			require.EqualValues(t, 101, row[2].I)
			require.NoError(t, r.Commit())

			// Delete, then insert the key again.
			old := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			hvGet(t, old, tb, 1)
			d := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, d.Delete(tb, []Value{Int(1)}))
			require.ErrorIs(t, d.Insert(tb, Row{Int(1), Int(10), Int(7)}), nil)
			require.NoError(t, d.Commit())
			row, found = hvGet(t, old, tb, 1)
			require.True(t, found, "the older snapshot still reads the row")
			_ = row
			require.NoError(t, old.Commit())
			r = db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			row, found = hvGet(t, r, tb, 1)
			require.True(t, found)
			require.EqualValues(t, 7, row[2].I)
			dup := r.Insert(tb, Row{Int(1), Int(10), Int(8)})
			require.ErrorIs(t, dup, ErrDuplicateKey)
			require.NoError(t, r.Rollback())

			// Serializable reads lock, they read no snapshot: a read of
			// a row with an uncommitted update waits for the writer's
			// end and reads what it left (no dirty read), and an update
			// of a row it read waits for its end (no non-repeatable
			// read).
			for _, commit := range []bool{false, true} {
				u := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
				require.NoError(t, u.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(50)}}))
				s := db.BeginTx(nil, TxOptions{Isolation: Serializable})
				got := make(chan Row, 1)
				go func() {
					row, _, err := s.Get(tb, []Value{Int(1)}, nil)
					if err != nil {
						row = nil
					}
					got <- append(Row(nil), row...)
				}()
				select {
				case <-parked:
				case row := <-got:
					t.Fatalf("the Serializable read of an uncommitted update did not wait: %v", row)
				}
				want := int64(7)
				if commit {
					require.NoError(t, u.Commit())
					want = 50
				} else {
					require.NoError(t, u.Rollback())
				}
				row = <-got
				require.NotNil(t, row)
				require.Equal(t, want, row[2].I, "commit=%v: no dirty read", commit)
				done := make(chan error, 1)
				u = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
				go func() { done <- u.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(7)}}) }()
				select {
				case <-parked:
				case err := <-done:
					t.Fatalf("the update of a row a Serializable read did not wait: %v", err)
				}
				row, _ = hvGet(t, s, tb, 1)
				require.Equal(t, want, row[2].I, "commit=%v: no non-repeatable read", commit)
				require.NoError(t, s.Commit())
				require.NoError(t, <-done)
				require.NoError(t, u.Commit())
			}
		})
	}
}

// TestHeapVersionsHOT: an update that changes no indexed column is a
// heap-only tuple on the same page and touches no index; one that changes
// v writes a new version and moves v's entry. Exact counts.
func TestHeapVersionsHOT(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(100)}))
			require.NoError(t, tx.Commit())

			var m Meter
			tx = db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(101)}}))
			require.NoError(t, tx.Commit())
			require.EqualValues(t, 1, m.HeapHOTUpdates)
			require.EqualValues(t, 0, m.HeapNonHOTUpdates)
			require.EqualValues(t, 0, m.IndexEntriesWritten)
			require.EqualValues(t, 0, m.IndexEntriesDeleted)
			require.EqualValues(t, 1, m.HeapVersionsRead, "the chain's one version")

			m = Meter{}
			tx = db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Update(tb, []Value{Int(1)}, []Set{{Column: "v", Value: Int(11)}}))
			require.NoError(t, tx.Commit())
			require.EqualValues(t, 0, m.HeapHOTUpdates)
			require.EqualValues(t, 1, m.HeapNonHOTUpdates)
			require.EqualValues(t, 2, m.IndexEntriesWritten, "the new version's primary and by_v entries")
			require.EqualValues(t, 0, m.IndexEntriesDeleted, "the old entries stay until vacuum")
			require.EqualValues(t, 2, m.HeapVersionsRead, "the HOT chain's two versions")

			m = Meter{}
			tx = db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
			row, found := hvGet(t, tx, tb, 1)
			require.True(t, found)
			require.Equal(t, Row{Int(1), Int(11), Int(101)}, row)
			require.EqualValues(t, 3, m.HeapVersionsRead, "the old HOT chain's two versions, then the new chain's one")
			c, err := tx.Scan(tb, ScanOptions{Index: "by_v"})
			require.NoError(t, err)
			n := 0
			for c.Next() {
				require.EqualValues(t, 11, c.Row()[1].I)
				n++
			}
			require.NoError(t, c.Close())
			require.Equal(t, 1, n)
			require.NoError(t, tx.Commit())
		})
	}
}

// TestHeapVersionsLostUpdate: under RepeatableRead a write of a row a
// concurrent transaction changed and committed after the snapshot fails
// with ErrSerialization (retryable, the transaction rolled back): no lost
// update. Under ReadCommitted the write acts on the latest version.
// Under Serializable two transactions that read the row and write what
// they read from hold shared locks: the first writer waits for the
// second's lock, the second's write closes the cycle and is the deadlock
// victim (rolled back), and the first's increment commits: no lost update.
func TestHeapVersionsLostUpdate(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, parked := hvOpenParked(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(100)}))
			require.NoError(t, tx.Commit())

			for _, op := range []string{"update", "delete", "for-update"} {
				var m Meter
				a := db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
				row, _ := hvGet(t, a, tb, 1) // the snapshot
				b := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
				require.NoError(t, b.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(row[2].I + 1)}}))
				require.NoError(t, b.Commit())
				switch op {
				case "update":
					err = a.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(row[2].I + 1)}})
				case "delete":
					err = a.Delete(tb, []Value{Int(1)})
				default:
					_, _, err = a.GetForUpdate(tb, []Value{Int(1)}, nil)
				}
				require.ErrorIs(t, err, ErrSerialization, op)
				require.True(t, Retryable(err))
				require.EqualValues(t, 1, m.SerializationFailures)
				require.ErrorIs(t, a.Commit(), ErrTxDone, "rolled back")
			}

			a := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			row, _ := hvGet(t, a, tb, 1)
			b := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			require.NoError(t, b.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(row[2].I + 1)}}))
			require.NoError(t, b.Commit())
			require.NoError(t, a.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(row[2].I + 1)}}))
			require.NoError(t, a.Commit())

			a = db.BeginTx(nil, TxOptions{Isolation: Serializable})
			b = db.BeginTx(nil, TxOptions{Isolation: Serializable})
			ra, _ := hvGet(t, a, tb, 1)
			rb, _ := hvGet(t, b, tb, 1)
			start := ra[2].I
			require.Equal(t, start, rb[2].I)
			done := make(chan error, 1)
			go func() { done <- a.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(ra[2].I + 1)}}) }()
			select {
			case <-parked:
			case err := <-done:
				t.Fatalf("a's update of a row b read did not wait: %v", err)
			}
			err = b.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(rb[2].I + 1)}})
			require.ErrorIs(t, err, ErrDeadlock, "b's update closes the cycle")
			require.True(t, Retryable(err))
			require.ErrorIs(t, b.Commit(), ErrTxDone, "the victim is rolled back")
			require.NoError(t, <-done, "a's update is granted once b is rolled back")
			require.NoError(t, a.Commit())
			r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			row, _ = hvGet(t, r, tb, 1)
			require.Equal(t, start+1, row[2].I, "Serializable: a's increment, b's rolled back")
			require.NoError(t, r.Commit())
		})
	}
}

// hvOpenParked is hvOpen whose lock waits signal parked (signalParker).
func hvOpenParked(t *testing.T) (*DB, chan *lock.Wait) {
	t.Helper()
	parked := make(chan *lock.Wait, 1)
	db, err := Open(&Options{HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Runtime: signalParker{parked: parked},
		Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db, parked
}

// TestHeapVersionsWriteSkew: RepeatableRead allows write skew, as
// PostgreSQL's snapshot isolation does: two transactions each read both
// rows and update a different one; both commit. Serializable (strict
// two-phase locking, not PostgreSQL's SSI) prevents it: each reader holds
// a shared lock on both rows, a's update waits for b's, b's update closes
// the cycle and is the deadlock victim, and only a's update commits. In
// both heap organizations.
func TestHeapVersionsWriteSkew(t *testing.T) {
	for _, org := range hvOrgs {
		for _, iso := range []Isolation{RepeatableRead, Serializable} {
			t.Run(org.String()+"/"+iso.String(), func(t *testing.T) {
				db, parked := hvOpenParked(t)
				tb, err := db.CreateTable(hvTable(org))
				require.NoError(t, err)
				tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
				require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(1)}))
				require.NoError(t, tx.Insert(tb, Row{Int(2), Int(20), Int(1)}))
				require.NoError(t, tx.Commit())
				a := db.BeginTx(nil, TxOptions{Isolation: iso})
				b := db.BeginTx(nil, TxOptions{Isolation: iso})
				for _, x := range []*Tx{a, b} {
					r1, _ := hvGet(t, x, tb, 1)
					r2, _ := hvGet(t, x, tb, 2)
					require.EqualValues(t, 2, r1[2].I+r2[2].I, "both on call")
				}
				want := int64(0) // write skew: nobody on call
				if iso == Serializable {
					done := make(chan error, 1)
					go func() { done <- a.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(0)}}) }()
					select {
					case <-parked:
					case err := <-done:
						t.Fatalf("a's update of a row b read did not wait: %v", err)
					}
					err := b.Update(tb, []Value{Int(2)}, []Set{{Column: "w", Value: Int(0)}})
					require.ErrorIs(t, err, ErrDeadlock, "b's update closes the cycle")
					require.True(t, Retryable(err))
					require.ErrorIs(t, b.Commit(), ErrTxDone, "the victim is rolled back")
					require.NoError(t, <-done, "a's update is granted once b is rolled back")
					require.NoError(t, a.Commit())
					want = 1 // no write skew: b's update is gone
				} else {
					require.NoError(t, a.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(0)}}))
					require.NoError(t, b.Update(tb, []Value{Int(2)}, []Set{{Column: "w", Value: Int(0)}}))
					require.NoError(t, a.Commit())
					require.NoError(t, b.Commit())
				}
				r := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				r1, _ := hvGet(t, r, tb, 1)
				r2, _ := hvGet(t, r, tb, 2)
				require.EqualValues(t, want, r1[2].I+r2[2].I, "%s: on call after both", iso)
				require.NoError(t, r.Commit())
			})
		}
	}
}

// TestHeapVersionsCrash: the commit log is durable with the commit; a
// transaction running at the crash reads as aborted after recovery.
func TestHeapVersionsCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := &Options{FS: fs, Dir: "db", HeapVersions: HeapVersionsOn, Options: cache.Options{PoolSize: 4 << 20}}
	db, err := Open(opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(hvTable(HeapRowPointer))
	require.NoError(t, err)
	tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(100)}))
	require.NoError(t, tx.Commit())
	tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.NoError(t, tx.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(101)}}))
	require.NoError(t, tx.Commit())
	loser := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.NoError(t, loser.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(666)}}))
	require.NoError(t, loser.Insert(tb, Row{Int(2), Int(20), Int(200)}))
	require.NoError(t, db.log.SyncTo(nil, db.log.End()))
	db, tb = crashReopen(t, fs, opts, db, tb.Name())
	for _, iso := range []Isolation{ReadCommitted, Serializable} {
		r := db.BeginTx(nil, TxOptions{Isolation: iso})
		row, found := hvGet(t, r, tb, 1)
		require.True(t, found)
		require.EqualValues(t, 101, row[2].I, "the committed update, not the loser's")
		_, found = hvGet(t, r, tb, 2)
		require.False(t, found, "the loser's insert")
		require.NoError(t, r.Commit())
	}
	w := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.NoError(t, w.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(102)}}))
	require.NoError(t, w.Commit())
}

var _ = errors.Is

// TestHeapVersionsVisibilityMap: an index-only lookup fetches the heap
// page unless the visibility map says it all-visible; Vacuum sets the
// bit, an update clears it; a count sees no deleted row. Exact counts.
func TestHeapVersionsVisibilityMap(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(100)}))
			require.NoError(t, tx.Insert(tb, Row{Int(2), Int(20), Int(200)}))
			require.NoError(t, tx.Commit())

			lookup := func() Meter {
				t.Helper()
				var m Meter
				tx := db.BeginTx(&m, TxOptions{Isolation: RepeatableRead})
				c, err := tx.Scan(tb, ScanOptions{Index: "by_v", Lower: []Value{Int(10)}, Upper: []Value{Int(10)}, Columns: []string{"v"}})
				require.NoError(t, err)
				require.True(t, c.Next())
				require.EqualValues(t, 10, c.Row()[1].I)
				require.False(t, c.Next())
				require.NoError(t, c.Close())
				require.NoError(t, tx.Commit())
				return m
			}
			// An entry that carries the primary key names no heap page:
			// the map cannot vouch for it, the heap is always visited.
			vmChecks, fetched := int64(1), int64(0)
			if org == HeapPrimaryKey {
				vmChecks, fetched = 0, 1
			}
			m := lookup()
			require.EqualValues(t, vmChecks, m.IndexOnlyVMChecks)
			require.EqualValues(t, 1, m.IndexOnlyHeapFetches, "not all-visible: one heap fetch")

			st, err := db.Vacuum(nil, tb)
			require.NoError(t, err)
			require.Equal(t, VacuumStats{PagesScanned: 1, PagesAllVisible: 1, LiveTuples: 2}, st)
			m = lookup()
			require.EqualValues(t, vmChecks, m.IndexOnlyVMChecks)
			require.EqualValues(t, fetched, m.IndexOnlyHeapFetches, "all-visible: no heap fetch")
			require.EqualValues(t, fetched, m.HeapFetches)

			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Update(tb, []Value{Int(2)}, []Set{{Column: "w", Value: Int(201)}}))
			require.NoError(t, tx.Commit())
			m = lookup()
			require.EqualValues(t, 1, m.IndexOnlyHeapFetches, "the update cleared the page's bit")

			// Vacuum prunes the old version (the root redirected to the
			// new one), and the page is all-visible again.
			st, err = db.Vacuum(nil, tb)
			require.NoError(t, err)
			require.Equal(t, VacuumStats{PagesScanned: 1, PagesAllVisible: 1, PagesPruned: 1, TuplesRemoved: 1, LiveTuples: 2}, st)
			m = lookup()
			require.EqualValues(t, fetched, m.IndexOnlyHeapFetches)

			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Delete(tb, []Value{Int(2)}))
			require.NoError(t, tx.Commit())
			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			n, _, err := tx.Count(tb, CountOptions{})
			require.NoError(t, err)
			require.EqualValues(t, 1, n, "the deleted row is not counted")
			require.NoError(t, tx.Commit())
		})
	}
}

// TestHeapVersionsPhantom: a plain scan under RepeatableRead reads its
// snapshot without row locks: a row inserted and committed after the
// snapshot does not appear (no phantom), nor does a deletion show; under
// ReadCommitted each scan sees the commits before it. Under Serializable
// a scan locks each row it returns (shared) and no gap: a delete of a
// row it returned waits for the scanner's end (no phantom through a
// delete), but an insert does not wait and the next scan returns the
// new row: a phantom, the documented departure from InnoDB's
// SERIALIZABLE (there are no gap or next-key locks).
func TestHeapVersionsPhantom(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db, parked := hvOpenParked(t)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)
			tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(100)}))
			require.NoError(t, tx.Insert(tb, Row{Int(2), Int(10), Int(200)}))
			require.NoError(t, tx.Commit())
			scan := func(tx *Tx, index string) []int64 {
				t.Helper()
				before := tx.Meter().LockRequests
				c, err := tx.Scan(tb, ScanOptions{Index: index, Lower: []Value{Int(10)}, Upper: []Value{Int(10)}})
				if index == "" {
					c, err = tx.Scan(tb, ScanOptions{})
				}
				require.NoError(t, err)
				var ids []int64
				for c.Next() {
					ids = append(ids, c.Row()[0].I)
				}
				require.NoError(t, c.Close())
				if tx.Isolation() == Serializable {
					require.GreaterOrEqual(t, tx.Meter().LockRequests-before, int64(len(ids)), "a Serializable scan locks each row it returns")
				} else {
					require.Equal(t, before, tx.Meter().LockRequests, "a snapshot scan takes no row lock")
				}
				return ids
			}
			rr := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			rc := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
			for _, ix := range []string{"", "by_v"} {
				require.Equal(t, []int64{1, 2}, scan(rr, ix))
			}
			w := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, w.Insert(tb, Row{Int(3), Int(10), Int(300)}))
			require.NoError(t, w.Delete(tb, []Value{Int(1)}))
			for _, ix := range []string{"", "by_v"} {
				require.Equal(t, []int64{1, 2}, scan(rc, ix), "%s: uncommitted changes unseen", ix)
			}
			require.NoError(t, w.Commit())
			for _, ix := range []string{"", "by_v"} {
				require.Equal(t, []int64{1, 2}, scan(rr, ix), "%s: no phantom, the deleted row still read", ix)
				require.Equal(t, []int64{2, 3}, scan(rc, ix), "%s: read committed sees the commit", ix)
			}
			require.Zero(t, rr.Meter().LockRequests, "snapshot scans take no row lock")
			require.NoError(t, rr.Commit())
			require.NoError(t, rc.Commit())

			// Serializable: rows 2 and 3 are live.
			sr := db.BeginTx(nil, TxOptions{Isolation: Serializable})
			for _, ix := range []string{"", "by_v"} {
				require.Equal(t, []int64{2, 3}, scan(sr, ix))
			}
			done := make(chan error, 1)
			d := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			go func() { done <- d.Delete(tb, []Value{Int(2)}) }()
			select {
			case <-parked:
			case err := <-done:
				t.Fatalf("the delete of a row a Serializable scan returned did not wait: %v", err)
			}
			i := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			ins := make(chan error, 1)
			go func() { ins <- i.Insert(tb, Row{Int(4), Int(10), Int(400)}) }()
			select {
			case err := <-ins:
				require.NoError(t, err, "no gap lock: the insert does not wait")
			case <-parked:
				t.Fatal("the insert waited: a gap lock")
			}
			require.NoError(t, i.Commit())
			for _, ix := range []string{"", "by_v"} {
				// The phantom: allowed, there are no gap locks.
				require.Equal(t, []int64{2, 3, 4}, scan(sr, ix), "%s: a phantom insert; the delete still waits", ix)
			}
			require.NoError(t, sr.Commit())
			require.NoError(t, <-done, "the delete goes on once the scanner ends")
			require.NoError(t, d.Commit())
		})
	}
}

// TestHeapVersionsUnique: a unique index's check looks at visibility: the
// entry of a deleted (committed) row is no duplicate, a live row's is.
func TestHeapVersionsUnique(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			def := hvTable(org)
			def.Indexes[0].Unique = true
			tb, err := db.CreateTable(def)
			require.NoError(t, err)
			tx := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Insert(tb, Row{Int(1), Int(5), Int(0)}))
			require.NoError(t, tx.Commit())
			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.ErrorIs(t, tx.Insert(tb, Row{Int(2), Int(5), Int(0)}), ErrDuplicateKey, "a live row's entry")
			require.NoError(t, tx.Rollback())
			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Delete(tb, []Value{Int(1)}))
			require.NoError(t, tx.Commit())
			tx = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
			require.NoError(t, tx.Insert(tb, Row{Int(2), Int(5), Int(0)}), "a deleted row's entry is no duplicate")
			require.ErrorIs(t, tx.Insert(tb, Row{Int(3), Int(5), Int(0)}), ErrDuplicateKey, "the transaction's own row")
			require.NoError(t, tx.Rollback())
		})
	}
}
