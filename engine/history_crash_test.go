package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// TestCrashHistoryList: the history list is on the rollback segment's
// pages and survives a crash. Four committed transactions (each deletes a
// row and moves another's indexed column) leave four logs on the list;
// purge frees the first, then purges the second's records and crashes
// before it unlinks that log (its work synced). Recovery finds three logs
// on the list (RecoveryStats.HistoryLogs) and purges them: the second's
// records find their work done, the others' delete-marks go.
func TestCrashHistoryList(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := &Options{FS: fs, Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096},
		Purge: PurgeManual, Runtime: steppedRuntime{}}
	db, err := Open(opts)
	require.NoError(t, err)
	tb := mvccLoad(t, db, 20)
	for i := int64(1); i <= 4; i++ {
		tx := db.Begin(nil)
		require.NoError(t, tx.Delete(tb, []Value{Int(i)}))
		require.NoError(t, tx.Update(tb, []Value{Int(10 + i)}, []Set{{Column: "v", Value: Int(1000 + i)}}))
		require.NoError(t, tx.Commit())
	}
	require.Equal(t, int64(4), db.PurgeLag())
	c, s, _, _ := marks(t, tb)
	require.Equal(t, [2]int{4, 8}, [2]int{c, s}, "4 deleted records; their 4 entries and 4 moved entries")

	got, m := purgeAll1(t, db)
	require.Equal(t, 1, got)
	require.Equal(t, int64(1), m.PurgeRecords)
	require.Equal(t, int64(2), m.PurgeSecondaryRemoved)

	var image *vfs.MemFS
	testHookCrashPoint = func(point string) {
		if point == "purge-log-done" && image == nil {
			require.NoError(t, db.log.SyncTo(nil, db.log.End()))
			image = fs.CrashClone(vfs.CrashCloneCfg{RNG: rand.New(rand.NewPCG(1, 2))})
		}
	}
	_, err = db.PurgeStep(nil, 1)
	testHookCrashPoint = nil
	require.NoError(t, err)
	require.NotNil(t, image)
	require.NoError(t, db.Close())

	opts.FS = image
	db2, err := Open(opts)
	require.NoError(t, err)
	defer db2.Close()
	rs := db2.Recovery()
	require.Equal(t, int64(3), rs.HistoryLogs)
	require.Zero(t, rs.RolledBack)
	ps := db2.Purge()
	require.Equal(t, PurgeStats{Purged: 3, Records: 2, SecondaryRemoved: 4}, ps,
		"the second log's work was done before the crash")
	tb2, err := db2.Table(tb.info.def.Name)
	require.NoError(t, err)
	c, s, ca, sa := marks(t, tb2)
	require.Equal(t, [4]int{0, 0, 16, 16}, [4]int{c, s, ca, sa})
	mvccCheck(t, db2, tb2)

	// The list works on after recovery: a new log goes on it and is
	// purged.
	tx := db2.Begin(nil)
	require.NoError(t, tx.Delete(tb2, []Value{Int(20)}))
	require.NoError(t, tx.Commit())
	require.Equal(t, int64(1), db2.PurgeLag())
	got, m = purgeAll1(t, db2)
	require.Equal(t, 1, got)
	require.Equal(t, int64(1), m.PurgeRecords)
}

// purgeAll1 purges one log.
func purgeAll1(t *testing.T, db *DB) (int, Meter) {
	t.Helper()
	var m Meter
	n, err := db.PurgeStep(&m, 1)
	require.NoError(t, err)
	return n, m
}

// TestCrashRollbackVersions: a transaction a crash interrupts after it
// moved a row's indexed column away and back, deleted a row and inserted
// it again over its own delete-mark, and deleted a row that an earlier
// committed transaction had updated, is rolled back at recovery from its
// undo log: the rows and entries are as before it, with no mark left
// once purge ran, and its transaction id counts as active while it is
// rolled back (an entry it unmarked and marked again is one an older
// version of its own needs).
func TestCrashRollbackVersions(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := &Options{FS: fs, Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096},
		Purge: PurgeManual, Runtime: steppedRuntime{}}
	db, err := Open(opts)
	require.NoError(t, err)
	tb := mvccLoad(t, db, 5)
	mvccSet(t, db, tb, 4, 44)
	tx := db.Begin(nil)
	set := func(id, v int64) {
		require.NoError(t, tx.Update(tb, []Value{Int(id)}, []Set{{Column: "v", Value: Int(v)}}))
	}
	set(2, 35)
	set(2, 20)
	require.NoError(t, tx.Delete(tb, []Value{Int(3)}))
	require.NoError(t, tx.Insert(tb, Row{Int(3), Int(33)}))
	require.NoError(t, tx.Delete(tb, []Value{Int(4)}))
	require.NoError(t, db.log.SyncTo(nil, db.log.End()))
	image := fs.CrashClone(vfs.CrashCloneCfg{RNG: rand.New(rand.NewPCG(3, 4))})
	require.NoError(t, db.Close())

	opts.FS = image
	db2, err := Open(opts)
	require.NoError(t, err)
	defer db2.Close()
	require.Equal(t, int64(1), db2.Recovery().RolledBack)
	tb2, err := db2.Table(tb.info.def.Name)
	require.NoError(t, err)
	mvccCheck(t, db2, tb2)
	c, s, ca, sa := marks(t, tb2)
	require.Equal(t, [4]int{0, 0, 5, 5}, [4]int{c, s, ca, sa})
	r := db2.BeginTx(nil, TxOptions{Isolation: RepeatableRead})
	require.Equal(t, []int64{1, 2, 3, 4, 5}, mvccScan(t, r, tb2, ScanOptions{Index: "by_v"}))
	for id, want := range map[int64]int64{2: 20, 3: 30, 4: 44} {
		got, ok := mvccGet(t, r, tb2, id)
		require.True(t, ok)
		require.Equal(t, want, got)
	}
	require.NoError(t, r.Commit())
}
