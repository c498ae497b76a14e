package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/engine/lock"
	"github.com/enginelab/enginelab/heap"
)

// TestScanLocks: under Serializable (below it a plain scan is a
// consistent read, and locks nothing), a scan locks each row it returns (shared, until the
// transaction ends), waits for a writer's lock without holding a latch, and
// after the wait reads the row as the writer left it, skipping it if the
// writer deleted it. A count locks each row it counts, as the scan does;
// index-only scans of row-pointer indexes (whose entries do not hold the
// primary key) lock nothing.
func TestScanLocks(t *testing.T) {
	for _, org := range costOrgs {
		for _, index := range []string{"", "ix_s"} {
			t.Run(fmt.Sprintf("%s/index=%q", org, index), func(t *testing.T) {
				parked := make(chan *lock.Wait)
				db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 8 << 20}, Runtime: signalParker{parked: parked}, Isolation: Serializable})
				require.NoError(t, err)
				defer db.Close()
				tb := costLoad(t, db, org, 6, 10)

				scan := func(tx *Tx) ([]string, error) {
					cur, err := tx.Scan(tb, ScanOptions{Index: index, Columns: []string{"id", "pad"}})
					if err != nil {
						return nil, err
					}
					var rows []string
					for cur.Next() {
						rows = append(rows, fmt.Sprintf("%d %s", cur.Row()[0].I, cur.Row()[3].B))
					}
					return rows, cur.Close()
				}

				// A writer holds row 2 (updated) and row 4 (deleted).
				w := db.Begin(nil)
				require.NoError(t, w.Update(tb, []Value{Int(2)}, []Set{{Column: "pad", Value: Str("new")}}))
				require.NoError(t, w.Delete(tb, []Value{Int(4)}))

				var m Meter
				r := db.Begin(&m)
				type result struct {
					rows []string
					err  error
				}
				done := make(chan result)
				go func() {
					rows, err := scan(r)
					done <- result{rows, err}
				}()
				select {
				case wait := <-parked: // the scan reached row 2 and waits
					require.Equal(t, r.id, wait.Tx)
				case res := <-done:
					t.Fatalf("the scan did not wait for the writer's lock: %v, %v", res.rows, res.err)
				}
				// The scan holds no latch while it waits: another reader
				// gets through the same pages.
				other := db.Begin(nil)
				_, found, err := other.Get(tb, []Value{Int(5)}, nil)
				require.NoError(t, err)
				require.True(t, found)
				require.NoError(t, other.Commit())
				require.NoError(t, w.Commit())
				res := <-done
				require.NoError(t, res.err)
				require.Equal(t, []string{"0 aaaaaaaaaa", "1 bbbbbbbbbb", "2 new", "3 dddddddddd", "5 ffffffffff"}, res.rows)
				require.Equal(t, 5, db.locks.HeldBy(&r.owner), "one shared lock per row returned")
				require.Equal(t, int64(1), m.LockWaits)
				require.NoError(t, r.Commit())

				// A count locks each row it counts, as the scan does.
				var cm Meter
				c := db.Begin(&cm)
				n, _, err := c.Count(tb, CountOptions{ScanOptions: ScanOptions{Index: index}, Column: "pad"})
				require.NoError(t, err)
				require.Equal(t, int64(5), n)
				require.Equal(t, int64(5), cm.LockRequests)
				require.NoError(t, c.Commit())

				// scanLocks runs a scan in a transaction of its own and
				// returns its rows and lock requests.
				scanLocks := func(o ScanOptions) (int, int64) {
					var m Meter
					x := db.Begin(&m)
					cur, err := x.Scan(tb, o)
					require.NoError(t, err)
					rows := 0
					for cur.Next() {
						rows++
					}
					require.NoError(t, cur.Close())
					require.NoError(t, x.Commit())
					return rows, m.LockRequests
				}

				// So does a scan that wants no column (SELECT 1 ...),
				// except a row-pointer index's, whose entries hold no key.
				rows, locks := scanLocks(ScanOptions{Index: index, Columns: []string{}})
				require.Equal(t, 5, rows)
				if org == HeapRowPointer && index == "ix_s" {
					require.Zero(t, locks)
				} else {
					require.Equal(t, int64(5), locks)
				}

				// An index-only scan locks each row by the primary key in
				// its entries, except a row-pointer index's, whose entries
				// hold none.
				rows, locks = scanLocks(ScanOptions{Index: "ix_s", Columns: []string{"s"}})
				require.Equal(t, 5, rows)
				if org == HeapRowPointer {
					require.Zero(t, locks)
				} else {
					require.Equal(t, int64(5), locks)
				}
			})
		}
	}
}

// TestRowPointerScanSkipsStaleEntries: a row-pointer index entry is read
// before its row is locked, so it can lead to a slot a concurrent writer
// has freed (moved or deleted the row, entry not yet removed) or freed and
// reused. The scan skips such an entry instead of failing or returning the
// wrong row. The stale states are made here by changing the heap behind
// the indexes' back.
func TestRowPointerScanSkipsStaleEntries(t *testing.T) {
	db, err := Open(&Options{HeapVersions: HeapVersionsOff, Options: cache.Options{PoolSize: 8 << 20}})
	require.NoError(t, err)
	defer db.Close()
	tb := costLoad(t, db, HeapRowPointer, 6, 10)
	ptrOf := func(id int64) heap.RowPtr {
		tx := db.Begin(nil)
		defer tx.Commit()
		_, ptr, found, err := tx.lookup(tb, mustKey(t, tb, id), false)
		require.NoError(t, err)
		require.True(t, found)
		return ptr
	}
	scan := func() []int64 {
		tx := db.Begin(nil)
		defer tx.Commit()
		cur, err := tx.Scan(tb, ScanOptions{Index: "ix_s", Columns: []string{"id", "pad"}})
		require.NoError(t, err)
		var ids []int64
		for cur.Next() {
			ids = append(ids, cur.Row()[0].I)
		}
		require.NoError(t, cur.Close())
		return ids
	}
	// Row 1's slot freed: its entries now lead nowhere.
	p1, p4 := ptrOf(1), ptrOf(4)
	require.NoError(t, tb.heap.Delete(nil, p1))
	require.Equal(t, []int64{0, 2, 3, 4, 5}, scan())
	// Row 4's slot freed too, and one of the two taken by a row that
	// matches no entry.
	require.NoError(t, tb.heap.Delete(nil, p4))
	img := appendRow(nil, tb.info.def.Columns, costRow(77, 10))
	got, err := tb.heap.Insert(nil, img)
	require.NoError(t, err)
	require.Contains(t, []heap.RowPtr{p1, p4}, got, "the insert reuses a freed slot")
	require.Equal(t, []int64{0, 2, 3, 5}, scan())
}

func mustKey(t *testing.T, tb *TableHandle, id int64) []byte {
	t.Helper()
	k, err := tb.pkKey(nil, []Value{Int(id)})
	require.NoError(t, err)
	return k
}
