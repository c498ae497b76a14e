package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/heap"
)

var noRowPtr heap.RowPtr

// mvccOpenManual opens a database whose purge runs only when asked
// (PurgeManual): delete-marked records stay until then.
func mvccOpenManual(t *testing.T) *DB {
	t.Helper()
	db, err := Open(&Options{Options: cache.Options{PoolSize: 8 << 20}, Purge: PurgeManual})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

// mvccScan returns the ids a scan of index (all columns) returns.
func mvccScan(t *testing.T, tx *Tx, tb *TableHandle, o ScanOptions) []int64 {
	t.Helper()
	cur, err := tx.Scan(tb, o)
	require.NoError(t, err)
	var ids []int64
	for cur.Next() {
		ids = append(ids, cur.Row()[0].I)
	}
	require.NoError(t, cur.Close())
	return ids
}

func mvccDelete(t *testing.T, db *DB, tb *TableHandle, id int64) {
	t.Helper()
	tx := db.Begin(nil)
	require.NoError(t, tx.Delete(tb, []Value{Int(id)}))
	require.NoError(t, tx.Commit())
}

func mvccCheck(t *testing.T, db *DB, tb *TableHandle) {
	t.Helper()
	tx := db.Begin(nil)
	require.NoError(t, tb.Check(tx))
	require.NoError(t, tx.Commit())
}

// TestDeleteMark: a Delete in a clustered table delete-marks the record
// and its secondary entries (two undo records, two entries counted
// deleted, one per index); a read view opened before the delete still
// reads the row, through the primary key and through the secondary index,
// building the version before the delete in one undo step; a view opened
// after does not; locking reads and writes find no row.
func TestDeleteMark(t *testing.T) {
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, 3)
	var rm Meter
	rr := db.BeginTx(&rm, TxOptions{Isolation: RepeatableRead})
	require.Equal(t, []int64{1, 2, 3}, mvccScan(t, rr, tb, ScanOptions{}))

	var m Meter
	d := db.Begin(&m)
	require.NoError(t, d.Delete(tb, []Value{Int(2)}))
	require.Equal(t, int64(2), m.UndoRecords, "the delete-mark of the record and of its one secondary entry")
	require.Equal(t, int64(2), m.IndexEntriesDeleted)
	require.NoError(t, d.Commit())

	// The records are still there, marked.
	prim, sec := tb.ixs[0], tb.ixs[1]
	v, found, err := prim.tree.Get(nil, mustKey(t, tb, 2), nil)
	require.NoError(t, err)
	require.True(t, found)
	require.True(t, clustDeleted(v))
	sk := tb.entryKey(nil, sec, Row{Int(2), Int(20)}, mustKey(t, tb, 2), noRowPtr)
	v, found, err = sec.tree.Get(nil, sk, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, secDelMarked, v)
	mvccCheck(t, db, tb)

	before := rm.UndoVersionsRead
	got, ok := mvccGet(t, rr, tb, 2)
	require.True(t, ok, "the view does not see the delete")
	require.Equal(t, int64(20), got)
	require.Equal(t, int64(1), rm.UndoVersionsRead-before, "one undo step: the delete-mark")
	require.Equal(t, []int64{1, 2, 3}, mvccScan(t, rr, tb, ScanOptions{}))
	require.Equal(t, []int64{1, 2, 3}, mvccScan(t, rr, tb, ScanOptions{Index: "by_v"}))
	require.Equal(t, int64(3), mvccCount(t, rr, tb, ""))
	require.Equal(t, int64(3), mvccCount(t, rr, tb, "by_v"))

	for _, iso := range []Isolation{ReadCommitted, RepeatableRead} {
		tx := db.BeginTx(nil, TxOptions{Isolation: iso})
		_, ok := mvccGet(t, tx, tb, 2)
		require.False(t, ok, "%s: a view after the delete", iso)
		require.Equal(t, []int64{1, 3}, mvccScan(t, tx, tb, ScanOptions{Index: "by_v"}))
		require.Equal(t, int64(2), mvccCount(t, tx, tb, ""))
		require.NoError(t, tx.Commit())
	}

	// Locking reads and writes act on the latest version: no row.
	for _, iso := range []Isolation{ReadCommitted, RepeatableRead, Serializable} {
		var lm Meter
		tx := db.BeginTx(&lm, TxOptions{Isolation: iso})
		_, found, err := tx.GetForUpdate(tb, []Value{Int(2)}, nil)
		require.NoError(t, err)
		require.False(t, found)
		require.Equal(t, []int64{1, 3}, mvccScan(t, tx, tb, ScanOptions{ForUpdate: true}))
		require.Equal(t, []int64{1, 3}, mvccScan(t, tx, tb, ScanOptions{Index: "by_v", ForUpdate: true}))
		require.Equal(t, int64(1+2+2), lm.LockRequests, "%s: a committed delete-mark is skipped without a lock", iso)
		require.ErrorIs(t, tx.Update(tb, []Value{Int(2)}, []Set{{Column: "v", Value: Int(1)}}), ErrNotFound)
		require.NoError(t, tx.Rollback())
		tx = db.BeginTx(nil, TxOptions{Isolation: iso})
		require.ErrorIs(t, tx.Delete(tb, []Value{Int(2)}), ErrNotFound)
		require.NoError(t, tx.Rollback())
	}
	require.NoError(t, rr.Commit())
	mvccCheck(t, db, tb)
}

// TestDeleteMarkRollback: rolling back a delete unmarks the record and its
// entries; the row is back for every read.
func TestDeleteMarkRollback(t *testing.T) {
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, 3)
	d := db.Begin(nil)
	require.NoError(t, d.Delete(tb, []Value{Int(2)}))
	require.NoError(t, d.Rollback())
	mvccCheck(t, db, tb)
	for _, iso := range []Isolation{ReadCommitted, RepeatableRead, Serializable} {
		tx := db.BeginTx(nil, TxOptions{Isolation: iso})
		got, ok := mvccGet(t, tx, tb, 2)
		require.True(t, ok)
		require.Equal(t, int64(20), got)
		require.Equal(t, []int64{1, 2, 3}, mvccScan(t, tx, tb, ScanOptions{Index: "by_v"}))
		require.NoError(t, tx.Commit())
	}
	require.Zero(t, db.Purge().Lag, "a rolled-back transaction leaves nothing to purge")
}

// TestInsertOverDeleteMark: an insert of a key whose record is
// delete-marked updates that record (row_ins_clust_index_entry_by_modify)
// and unmarks the row's secondary entry if it has the same values, else
// inserts a new one; the versions stay readable: a view from before the
// delete reads the first row, one between the delete and the insert reads
// none, a later one the new row. Rolling the insert back restores the
// delete-marked record.
func TestInsertOverDeleteMark(t *testing.T) {
	for _, same := range []bool{true, false} {
		db := mvccOpenManual(t)
		tb := mvccLoad(t, db, 3)
		v1 := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
		_, _ = mvccGet(t, v1, tb, 1)
		mvccDelete(t, db, tb, 2)
		v2 := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
		_, _ = mvccGet(t, v2, tb, 1)

		nv := int64(20)
		if !same {
			nv = 25
		}
		var m Meter
		ins := db.Begin(&m)
		require.NoError(t, ins.Insert(tb, Row{Int(2), Int(nv)}))
		require.Equal(t, int64(2), m.UndoRecords, "an update of the record, then an insert or unmark of the entry")
		require.Equal(t, int64(2), m.IndexEntriesWritten)
		require.ErrorIs(t, ins.Insert(tb, Row{Int(2), Int(nv)}), ErrDuplicateKey, "the record is live again")
		require.NoError(t, ins.Commit())
		mvccCheck(t, db, tb)

		got, ok := mvccGet(t, v1, tb, 2)
		require.True(t, ok)
		require.Equal(t, int64(20), got)
		require.Equal(t, []int64{1, 2, 3}, mvccScan(t, v1, tb, ScanOptions{Index: "by_v"}))
		_, ok = mvccGet(t, v2, tb, 2)
		require.False(t, ok)
		require.Equal(t, []int64{1, 3}, mvccScan(t, v2, tb, ScanOptions{Index: "by_v"}))
		now := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
		got, ok = mvccGet(t, now, tb, 2)
		require.True(t, ok)
		require.Equal(t, nv, got)
		require.Equal(t, []int64{1, 2, 3}, mvccScan(t, now, tb, ScanOptions{Index: "by_v"}))
		require.NoError(t, now.Commit())

		// Deleted again and re-inserted, then rolled back: marked again.
		mvccDelete(t, db, tb, 2)
		rb := db.Begin(nil)
		require.NoError(t, rb.Insert(tb, Row{Int(2), Int(99)}))
		require.NoError(t, rb.Rollback())
		mvccCheck(t, db, tb)
		v, found, err := tb.ixs[0].tree.Get(nil, mustKey(t, tb, 2), nil)
		require.NoError(t, err)
		require.True(t, found)
		require.True(t, clustDeleted(v))
		got, ok = mvccGet(t, v1, tb, 2)
		require.True(t, ok, "the oldest view still builds the first row")
		require.Equal(t, int64(20), got)
		require.NoError(t, v1.Commit())
		require.NoError(t, v2.Commit())
	}
}

// TestUpdateMarksSecondary: an update of an indexed column delete-marks
// the old entry and inserts the new one; a view from before reads the row
// through the old entry only, a view from after through the new one only;
// an update back to the old value unmarks the old entry.
func TestUpdateMarksSecondary(t *testing.T) {
	db := mvccOpenManual(t)
	tb := mvccLoad(t, db, 3)
	old := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	_, _ = mvccGet(t, old, tb, 1)
	mvccSet(t, db, tb, 2, 35)
	mvccCheck(t, db, tb)
	by := func(tx *Tx, lo, hi int64) []int64 {
		return mvccScan(t, tx, tb, ScanOptions{Index: "by_v", Lower: []Value{Int(lo)}, Upper: []Value{Int(hi)}})
	}
	require.Equal(t, []int64{2}, by(old, 20, 20))
	require.Empty(t, by(old, 35, 35))
	now := db.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.Empty(t, by(now, 20, 20))
	require.Equal(t, []int64{2}, by(now, 35, 35))
	require.Equal(t, []int64{1, 3, 2}, mvccScan(t, now, tb, ScanOptions{Index: "by_v", ForUpdate: true}))
	require.NoError(t, now.Commit())

	var m Meter
	back := db.Begin(&m)
	require.NoError(t, back.Update(tb, []Value{Int(2)}, []Set{{Column: "v", Value: Int(20)}}))
	require.Equal(t, int64(3), m.UndoRecords, "the record, the mark of (35, 2), the unmark of (20, 2)")
	require.NoError(t, back.Commit())
	mvccCheck(t, db, tb)
	sk := tb.entryKey(nil, tb.ixs[1], Row{Int(2), Int(20)}, mustKey(t, tb, 2), noRowPtr)
	v, found, err := tb.ixs[1].tree.Get(nil, sk, nil)
	require.NoError(t, err)
	require.True(t, found)
	require.Empty(t, v, "unmarked")
	require.Equal(t, []int64{2}, by(old, 20, 20))
	require.NoError(t, old.Commit())
}

// TestUniqueOverDeleteMark: a delete-marked entry of a unique index is no
// duplicate (row_ins_dupl_error_with_rec); a live one is.
func TestUniqueOverDeleteMark(t *testing.T) {
	db := mvccOpenManual(t)
	def := mvccTable(Clustered)
	def.Indexes[0].Unique = true
	tb, err := db.CreateTable(def)
	require.NoError(t, err)
	tx := db.Begin(nil)
	require.NoError(t, tx.Insert(tb, Row{Int(1), Int(5)}))
	require.NoError(t, tx.Insert(tb, Row{Int(2), Int(6)}))
	require.NoError(t, tx.Commit())

	tx = db.Begin(nil)
	require.ErrorIs(t, tx.Insert(tb, Row{Int(3), Int(5)}), ErrDuplicateKey)
	require.NoError(t, tx.Rollback())

	mvccDelete(t, db, tb, 1)
	var m Meter
	tx = db.Begin(&m)
	require.NoError(t, tx.Insert(tb, Row{Int(3), Int(5)}), "the only entry with 5 is delete-marked")
	require.Equal(t, int64(2), m.LockRequests, "the new row's, and the marked entry's row, shared")
	require.NoError(t, tx.Commit())
	mvccCheck(t, db, tb)
	// An update onto a value whose only entry is marked.
	mvccSet(t, db, tb, 3, 7)
	mvccSet(t, db, tb, 2, 5)
	mvccCheck(t, db, tb)
	tx = db.Begin(nil)
	require.ErrorIs(t, tx.Update(tb, []Value{Int(3)}, []Set{{Column: "v", Value: Int(5)}}), ErrDuplicateKey)
	require.NoError(t, tx.Rollback())
}
