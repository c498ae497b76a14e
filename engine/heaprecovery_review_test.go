package engine

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// TestReviewRecoveryReusesRunningXid checks that recovery never hands out
// the id of a transaction that was running at the crash. The case: a
// transaction running at the crash
// whose only write was a HOT update (no undo) and whose id is above every
// id the commit log and the undo logs know: recovery does not abort its
// id, the next transaction gets the same id and sees (and commits) the
// crashed transaction's update as its own.
func TestReviewRecoveryReusesRunningXid(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := &Options{FS: fs, Dir: "db", HeapVersions: HeapVersionsOn, Vacuum: VacuumManual, Options: cache.Options{PoolSize: 4 << 20}}
	db, err := Open(opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(hvTable(HeapRowPointer))
	require.NoError(t, err)
	tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(0)}))
	require.NoError(t, tx.Insert(tb, Row{Int(2), Int(20), Int(0)}))
	require.NoError(t, tx.Commit())

	// Undo-less transactions (HOT updates) past the rollback segment's
	// max tx id margin (256).
	for i := range 300 {
		hvUpdateWRow(t, db, tb, 2, int64(i+1))
	}
	t2 := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, t2.Update(tb, []Value{Int(2)}, []Set{{Column: "w", Value: Int(1000)}})) // id X, no undo
	t1 := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, t1.Update(tb, []Value{Int(1)}, []Set{{Column: "w", Value: Int(99)}})) // id A+1, HOT, no undo
	t.Logf("t2 %d t1 %d hv %v", t2.trxID, t1.trxID, t1.hv)
	require.NoError(t, t2.Commit())
	require.NoError(t, db.log.SyncTo(nil, db.log.End()))
	image := fs.CrashClone(vfs.CrashCloneCfg{})
	_ = t1.Rollback()
	_ = db.Close()

	opts.FS = image
	db, err = Open(opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	tb, err = db.Table(tb.Name())
	require.NoError(t, err)

	n := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, n.Update(tb, []Value{Int(2)}, []Set{{Column: "w", Value: Int(5)}}))
	t.Logf("after recovery: txSeq %d n %d", db.txSeq.Load(), n.trxID)
	row, found := hvGet(t, n, tb, 1)
	require.True(t, found)
	require.EqualValues(t, 0, row[2].I, "the crashed transaction's update must not be visible")
	require.NoError(t, n.Commit())
}

// hvUpdateWRow sets column w of row id in a transaction of its own
// (ReadCommitted), committed: a HOT update, which writes no undo.
func hvUpdateWRow(t *testing.T, db *DB, tb *TableHandle, id, w int64) {
	t.Helper()
	tx := db.BeginTx(nil, TxOptions{Isolation: ReadCommitted})
	require.NoError(t, tx.Update(tb, []Value{Int(id)}, []Set{{Column: "w", Value: Int(w)}}))
	require.NoError(t, tx.Commit())
}
