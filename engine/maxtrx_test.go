package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// maxTrxTable is mvccTable with a column no index has.
func maxTrxTable() Table {
	return Table{
		Name:       "maxtrx",
		Columns:    []Column{{Name: "id", Type: TypeInt}, {Name: "v", Type: TypeInt}, {Name: "pad", Type: TypeInt}},
		PrimaryKey: []string{"id"},
		Indexes:    []Index{{Name: "by_v", Columns: []string{"v"}}},
	}
}

func maxTrxLoad(t *testing.T, db *DB, n int) *TableHandle {
	t.Helper()
	tb, err := db.CreateTable(maxTrxTable())
	require.NoError(t, err)
	tx := db.Begin(nil)
	for i := 1; i <= n; i++ {
		require.NoError(t, tx.Insert(tb, Row{Int(int64(i)), Int(int64(10 * i)), Int(0)}))
	}
	require.NoError(t, tx.Commit())
	return tb
}

// consistentCount counts by_v index-only (count(*)) in tx and returns the
// count and what it cost.
func consistentCount(t *testing.T, tx *Tx, tb *TableHandle) (int64, Meter) {
	t.Helper()
	before := tx.m.Clone()
	n := mvccCount(t, tx, tb, "by_v")
	return n, tx.m.Diff(&before)
}

// TestPageMaxTrx: a consistent index-only read of a clustered table's
// secondary index trusts an entry without visiting its row when the
// entry's leaf's PAGE_MAX_TRX_ID is below the view's up limit
// (lock_sec_rec_cons_read_sees); otherwise every entry of the leaf is
// checked in the clustered record (SecondaryClusterChecks, each a row
// fetch). One leaf of ten rows.
func TestPageMaxTrx(t *testing.T) {
	db := mvccOpenManual(t)
	tb := maxTrxLoad(t, db, 10)
	var vm Meter
	v := db.BeginTx(&vm, TxOptions{Isolation: RepeatableRead})
	n, m := consistentCount(t, v, tb)
	require.Equal(t, int64(10), n)
	require.Zero(t, m.SecondaryClusterChecks, "the loader committed before the view")
	require.Zero(t, m.RowFetches)

	// A row read through the index needs the row for its other columns,
	// but no check.
	before := vm.Clone()
	require.Len(t, mvccScan(t, v, tb, ScanOptions{Index: "by_v"}), 10)
	d := vm.Diff(&before)
	require.Equal(t, int64(10), d.RowFetches)
	require.Zero(t, d.SecondaryClusterChecks)

	// An update of a column no index has leaves the index's leaf alone.
	up := db.Begin(nil)
	require.NoError(t, up.Update(tb, []Value{Int(3)}, []Set{{Column: "pad", Value: Int(1)}}))
	require.NoError(t, up.Commit())
	n, m = consistentCount(t, v, tb)
	require.Equal(t, int64(10), n)
	require.Zero(t, m.SecondaryClusterChecks)

	// An update of v marks an entry and inserts one on the leaf: the
	// view, older than it, checks all eleven entries in the clustered
	// record; row 5 is built back once through each of its two entries,
	// and row 3 (the pad update) once.
	mvccSet(t, db, tb, 5, 55)
	n, m = consistentCount(t, v, tb)
	require.Equal(t, int64(10), n)
	require.Equal(t, int64(11), m.SecondaryClusterChecks)
	require.Equal(t, int64(11), m.RowFetches)
	require.Equal(t, int64(3), m.UndoVersionsRead)
	require.NoError(t, v.Commit())

	// A view opened after the update sees every change to the leaf: no
	// checks, and the marked entry skipped on its own.
	var wm Meter
	w := db.BeginTx(&wm, TxOptions{Isolation: RepeatableRead})
	n, m = consistentCount(t, w, tb)
	require.Equal(t, int64(10), n)
	require.Zero(t, m.SecondaryClusterChecks)
	require.Zero(t, m.RowFetches)
	require.Zero(t, m.UndoVersionsRead)
	ids := mvccScan(t, w, tb, ScanOptions{Index: "by_v", Columns: []string{"id", "v"}})
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, ids)
	require.NoError(t, w.Commit())

	// An active writer that has not touched the leaf does not force
	// checks; one that has, does.
	act := db.Begin(nil)
	require.NoError(t, act.Update(tb, []Value{Int(1)}, []Set{{Column: "pad", Value: Int(2)}}))
	r := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	_, m = consistentCount(t, r, tb)
	require.Zero(t, m.SecondaryClusterChecks)
	require.NoError(t, r.Commit())
	require.NoError(t, act.Update(tb, []Value{Int(2)}, []Set{{Column: "v", Value: Int(21)}}))
	r = db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	n, m = consistentCount(t, r, tb)
	require.Equal(t, int64(10), n, "the active update is not seen")
	require.Equal(t, int64(12), m.SecondaryClusterChecks)
	require.NoError(t, r.Commit())
	require.NoError(t, act.Rollback())
}

// TestPageMaxTrxLeaves: with many leaves, an update forces the checks of
// the entries on the leaves it wrote to only.
func TestPageMaxTrxLeaves(t *testing.T) {
	const rows = 3000
	db := mvccOpenManual(t)
	tb := maxTrxLoad(t, db, rows)
	v := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	n, m := consistentCount(t, v, tb)
	require.Equal(t, int64(rows), n)
	require.Zero(t, m.SecondaryClusterChecks)
	mvccSet(t, db, tb, 7, 10*rows+5) // from the first leaf to the last

	// The leaves holding entries with a max trx id at or past the view's
	// up limit, counted on the tree.
	want := 0
	it := tb.ixs[1].tree.NewIter(nil, nil)
	for ok := it.First(); ok; ok = it.Next() {
		if it.PageMaxTrx() >= v.view.upLimit {
			want++
		}
	}
	require.NoError(t, it.Close())
	shape, err := tb.ixs[1].tree.Check(nil)
	require.NoError(t, err)
	n, m = consistentCount(t, v, tb)
	require.Equal(t, int64(rows), n)
	require.Equal(t, int64(want), m.SecondaryClusterChecks)
	require.Greater(t, want, 2, "the two leaves' entries")
	require.Less(t, want, rows/4, "only those")
	require.Greater(t, shape.Leaves, 4)
	require.NoError(t, v.Commit())
}
