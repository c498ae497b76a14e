package engine

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

// TestNoSyncTx: in SyncCommit mode, a transaction begun with
// TxOptions.NoSync commits without a log sync (no sync, no synced commit
// on its meter), so a crash right after its Commit loses it; the next
// synced commit syncs the log past it, and a crash after that keeps both.
// No page cleaner runs (steppedRuntime), so nothing else syncs the log.
func TestNoSyncTx(t *testing.T) {
	for _, org := range costOrgs {
		t.Run(org.String(), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			opts := &Options{FS: fs, Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096},
				Commit: SyncCommit, Runtime: steppedRuntime{}}
			db, err := Open(opts)
			require.NoError(t, err)
			tb, err := db.CreateTable(hvTable(org))
			require.NoError(t, err)

			var async, synced Meter
			tx := db.BeginTx(&async, TxOptions{NoSync: true})
			require.NoError(t, tx.Insert(tb, Row{Int(1), Int(10), Int(100)}))
			require.NoError(t, tx.Commit())
			require.Zero(t, async.SyncCommits, "a NoSync commit is not a synced commit")
			require.Zero(t, async.LogSyncs, "a NoSync commit syncs nothing")
			require.Equal(t, int64(1), async.Commits)
			require.Less(t, db.log.Durable(), db.log.End(), "the NoSync commit's record is not durable")
			lost := fs.CrashClone(vfs.CrashCloneCfg{})

			tx = db.BeginTx(&synced, TxOptions{})
			require.NoError(t, tx.Insert(tb, Row{Int(2), Int(20), Int(200)}))
			require.NoError(t, tx.Commit())
			require.Equal(t, int64(1), synced.SyncCommits)
			require.Equal(t, int64(1), synced.LogSyncs)
			require.Equal(t, db.log.End(), db.log.Durable(), "the synced commit made the log durable to its end")
			kept := fs.CrashClone(vfs.CrashCloneCfg{})
			require.NoError(t, db.Close())

			for _, c := range []struct {
				what  string
				image *vfs.MemFS
				want  []bool // rows 1 and 2 found
			}{
				{"crash after the NoSync commit", lost, []bool{false, false}},
				{"crash after the synced commit", kept, []bool{true, true}},
			} {
				o := *opts
				o.FS = c.image
				db, err := Open(&o)
				require.NoError(t, err, c.what)
				tb, err := db.Table(tb.Name())
				require.NoError(t, err, c.what)
				r := db.Begin(nil)
				for i, want := range c.want {
					_, found, err := r.Get(tb, []Value{Int(int64(i + 1))}, nil)
					require.NoError(t, err, c.what)
					require.Equal(t, want, found, "%s: row %d", c.what, i+1)
				}
				require.NoError(t, tb.Check(r), c.what)
				require.NoError(t, r.Commit())
				require.NoError(t, db.Close(), c.what)
			}
		})
	}
}
