package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// heldParker parks a lock wait as signalParker does, and once the lock is
// granted holds the waiter until resume is closed: what the test does in
// between happens while the waiter stands on the entry it read.
type heldParker struct {
	RealRuntime
	parked chan *lock.Wait
	resume chan struct{}
}

func (p heldParker) Park(w *lock.Wait) bool {
	p.parked <- w
	<-w.Ready()
	<-p.resume
	return true
}

// TestHeapVersionsLockingIndexOnlyAfterVacuum: a locking index-only scan
// of a versioned table reads row 1's primary entry, then waits for the
// row's lock held by a transaction that deletes it. The deleter commits;
// vacuum removes the entry, sets its line pointer unused and the page
// all-visible; in "reused" an insert of row 4 then takes that very
// pointer. When the scan resumes, the entry it read is gone: the scan
// must skip it (TPC-C's Delivery scans new_order this way, then deletes
// the row it found), and return row 2, which it locks. In "unused" the
// page is all-visible, but the entry's leaf changed after the entry was
// read, so the visibility map is not trusted and the heap is visited
// (one heap fetch; row 2's entry is then read on an unchanged leaf and
// answered by the map). In "reused" the insert cleared the page's bit,
// so both entries are checked in the heap, and row 4's version in the
// reused pointer does not give back row 1's entry. Exact counts.
func TestHeapVersionsLockingIndexOnlyAfterVacuum(t *testing.T) {
	for _, org := range hvOrgs {
		for _, c := range []struct {
			name        string
			reuse       bool
			heapFetches int64
		}{
			{"unused", false, 1},
			{"reused", true, 2},
		} {
			t.Run(org.String()+"/"+c.name, func(t *testing.T) {
				p := heldParker{parked: make(chan *lock.Wait), resume: make(chan struct{})}
				db, err := Open(&Options{HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Runtime: p,
					Options: cache.Options{PoolSize: 8 << 20}})
				require.NoError(t, err)
				defer func() { require.NoError(t, db.Close()) }()
				tb, err := db.CreateTable(hv2Table(org))
				require.NoError(t, err)
				for id := int64(1); id <= 3; id++ {
					hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(id), Int(10 * id), Int(0), Int(0), Null}) })
				}
				root1 := hvRoot(t, db, tb, 1)

				del := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
				require.NoError(t, del.Delete(tb, []Value{Int(1)}))

				var m Meter
				r := db.BeginTx(&m, TxOptions{Isolation: ReadCommitted})
				cur, err := r.Scan(tb, ScanOptions{Columns: []string{"id"}, ForUpdate: true, Limit: 1})
				require.NoError(t, err)
				require.True(t, cur.Path().IndexOnly, "the scan answers from the primary index")
				type result struct {
					ok  bool
					id  int64
					err error
				}
				done := make(chan result, 1)
				go func() {
					ok := cur.Next()
					var id int64
					if ok {
						id = cur.Row()[0].I
					}
					done <- result{ok, id, cur.Close()}
				}()
				wait := <-p.parked
				require.Equal(t, r.id, wait.Tx)

				require.NoError(t, del.Commit())
				st, err := db.Vacuum(nil, tb)
				require.NoError(t, err)
				require.Equal(t, 1, st.DeadItems)
				require.Equal(t, 1, st.LinePointersFreed)
				// The primary entry, and in heap-rowptr the two
				// secondaries' (which carry row pointers). In heap-pk
				// the secondaries' entries of row 1 carry its primary
				// key and are removed under the row's lock, taken
				// without waiting: the waiting scan has been granted
				// it, so they stay for a later pass.
				wantRemoved := 3
				if org == HeapPrimaryKey {
					wantRemoved = 1
				}
				require.Equal(t, wantRemoved, st.IndexEntriesRemoved)
				vis, err := tb.heap.AllVisible(nil, root1.Page)
				require.NoError(t, err)
				require.True(t, vis, "vacuum's second heap pass sets the page all-visible")
				if c.reuse {
					hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(4), Int(40), Int(0), Int(0), Null}) })
					require.Equal(t, root1, hvRoot(t, db, tb, 4), "row 4 reuses row 1's freed pointer")
				}
				close(p.resume)

				res := <-done
				require.NoError(t, res.err)
				require.True(t, res.ok, "the scan goes on past the vacuumed entry")
				require.EqualValues(t, 2, res.id, "row 1 is gone: the first row is row 2")
				require.EqualValues(t, 1, m.LockWaits)
				require.EqualValues(t, 2, m.IndexOnlyVMChecks)
				require.EqualValues(t, c.heapFetches, m.IndexOnlyHeapFetches)
				// What Delivery does next: the row found is there to
				// delete.
				require.NoError(t, r.Delete(tb, []Value{Int(2)}))
				require.NoError(t, r.Commit())
				hvCheck(t, db, tb)
			})
		}
	}
}

// hvRoot returns the root pointer of the chain of row id's live version.
func hvRoot(t *testing.T, db *DB, tb *TableHandle, id int64) heap.RowPtr {
	t.Helper()
	tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	defer func() { require.NoError(t, tx.Commit()) }()
	row, found := hvGet(t, tx, tb, id)
	require.True(t, found)
	pk := appendKey(nil, tb.info.def.Columns, tb.info.pk, row)
	_, root, _, _, found, err := tx.versionedFind(tb, pk, tx.latestSnap(), true)
	require.NoError(t, err)
	require.True(t, found)
	return root
}

// TestHeapVersionsIndexOnlyVacuumedUnderScan: a plain (snapshot)
// index-only scan has read row 1's primary entry (row 1 deleted before
// its snapshot) when vacuum, on another goroutine in real mode (here a
// hook at that very point), removes the entry, frees its line pointer
// and sets the page all-visible. The map's bit is then not trusted, as
// the entry's leaf changed after the entry was read: the heap is visited,
// the pointer is unused, the entry is skipped, and the scan returns row 2
// (answered by the map: its leaf is unchanged since its entry was read).
// Exact counts.
func TestHeapVersionsIndexOnlyVacuumedUnderScan(t *testing.T) {
	for _, org := range hvOrgs {
		t.Run(org.String(), func(t *testing.T) {
			db := hvOpen(t)
			tb, err := db.CreateTable(hv2Table(org))
			require.NoError(t, err)
			for id := int64(1); id <= 3; id++ {
				hvWrite(t, db, func(tx *Tx) error { return tx.Insert(tb, Row{Int(id), Int(10 * id), Int(0), Int(0), Null}) })
			}
			root1 := hvRoot(t, db, tb, 1)
			hvWrite(t, db, func(tx *Tx) error { return tx.Delete(tb, []Value{Int(1)}) })

			var m Meter
			r := db.BeginTx(&m, TxOptions{Isolation: ReadCommitted})
			cur, err := r.Scan(tb, ScanOptions{Columns: []string{"id"}, Limit: 1})
			require.NoError(t, err)
			require.True(t, cur.Path().IndexOnly)
			var st VacuumStats
			fired := 0
			testHookIndexOnlyEntry = func() {
				if fired++; fired == 1 {
					st, err = db.Vacuum(nil, tb)
				}
			}
			defer func() { testHookIndexOnlyEntry = nil }()
			require.True(t, cur.Next())
			require.NoError(t, err)
			require.EqualValues(t, 2, cur.Row()[0].I, "row 1 was deleted before the scan's snapshot")
			require.NoError(t, cur.Close())
			require.Equal(t, 1, st.DeadItems)
			require.Equal(t, 1, st.LinePointersFreed)
			vis, err := tb.heap.AllVisible(nil, root1.Page)
			require.NoError(t, err)
			require.True(t, vis)
			require.Equal(t, 2, fired)
			require.EqualValues(t, 2, m.IndexOnlyVMChecks)
			require.EqualValues(t, 1, m.IndexOnlyHeapFetches)
			require.NoError(t, r.Commit())
			hvCheck(t, db, tb)
		})
	}
}
