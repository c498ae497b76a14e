package engine

import (
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/redo"
	"github.com/stretchr/testify/require"
)

// TestFSStatsCoverLog commits transactions on a durable database (on a
// memory filesystem) and requires the filesystem meter to hold at least
// what the redo log counted, in the redo class, and the page writes of
// a checkpoint in pebble's WAL; Commits counts the committed transactions,
// read-only ones included, and not the rolled-back ones.
func TestFSStatsCoverLog(t *testing.T) {
	for _, mem := range []bool{false, true} {
		o := &Options{FS: vfs.NewMem(), Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096}}
		if mem {
			o = &Options{PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096}} // volatile: no WAL
		}
		db, err := Open(o)
		require.NoError(t, err)
		tb, err := db.CreateTable(metaTable(Clustered))
		require.NoError(t, err)
		require.Zero(t, db.Commits())
		const n = 40
		for i := range int64(n) {
			tx := db.Begin(nil)
			require.NoError(t, tx.Insert(tb, Row{Str("x"), Int(i), Dec(i), Null, Int(0), Null}))
			require.NoError(t, tx.Commit())
		}
		tx := db.Begin(nil)
		require.NoError(t, tx.Insert(tb, Row{Str("x"), Int(n), Dec(0), Null, Int(0), Null}))
		require.NoError(t, tx.Rollback())
		tx = db.Begin(nil)
		_, _, err = tx.Get(tb, []Value{Int(0), Int(0)}, nil)
		require.NoError(t, err)
		require.NoError(t, tx.Commit()) // read-only
		require.Equal(t, int64(n+1), db.Commits())

		before := db.FSStats()
		require.Positive(t, before.Redo.Writes)
		require.NoError(t, db.Checkpoint())
		d := db.FSStats().Sub(before)
		// The checkpoint wrote the log out (the rollback's records were
		// still in its buffer).
		require.GreaterOrEqual(t, db.FSStats().Redo.Bytes, db.LogStats().Bytes, "mem=%v: every logged byte reached a segment file", mem)
		if mem {
			require.Zero(t, db.FSStats().WAL.Bytes, "a volatile store has no WAL")
			require.Zero(t, d.Other.Syncs, "a volatile log syncs nothing")
		} else {
			require.GreaterOrEqual(t, d.WAL.Bytes, int64(4096), "the checkpoint's page writes go through pebble's WAL")
			require.Positive(t, d.WAL.Syncs, "the checkpoint syncs the store")
			require.Positive(t, d.Other.Syncs, "the checkpoint record is synced in the control file")
		}
		require.Positive(t, d.Other.Bytes, "the checkpoint record")
		require.NoError(t, db.Close())
	}
}

// TestRecoveryStats crashes a database (pebble's crashable memory
// filesystem) with committed transactions whose pages were never written
// and one transaction unfinished, and requires the recovery's figures to
// be consistent: records redone, every page change applied or skipped,
// the log scanned from the checkpoint to the end, the unfinished
// transaction rolled back. A clean close then leaves nothing to recover.
// Durations are not checked.
func TestRecoveryStats(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db, err := Open(crashableOpts(fs))
	require.NoError(t, err)
	require.False(t, db.Recovery().Recovered(), "a new database")
	tb, err := db.CreateTable(metaTable(HeapRowPointer))
	require.NoError(t, err)
	require.NoError(t, db.Checkpoint())
	ckpt := db.LogStats().Bytes
	for i := range int64(30) {
		tx := db.Begin(nil)
		require.NoError(t, tx.Insert(tb, Row{Str("x"), Int(i), Dec(i), Null, Int(0), Null}))
		require.NoError(t, tx.Commit())
	}
	loser := db.Begin(nil)
	require.NoError(t, loser.Insert(tb, Row{Str("y"), Int(100), Dec(0), Null, Int(0), Null}))
	tx := db.Begin(nil)
	require.NoError(t, tx.Insert(tb, Row{Str("x"), Int(30), Dec(0), Null, Int(0), Null}))
	require.NoError(t, tx.Commit()) // its sync makes the loser's step durable too
	image := fs.CrashClone(vfs.CrashCloneCfg{})

	db2, err := Open(crashableOpts(image))
	require.NoError(t, err)
	rec := db2.Recovery()
	require.True(t, rec.Recovered())
	require.GreaterOrEqual(t, rec.Records, int64(31), "the commits after the checkpoint")
	require.Equal(t, rec.Pages, rec.PagesApplied+rec.PagesSkipped)
	require.Positive(t, rec.PagesApplied, "no page was written since the checkpoint")
	require.Positive(t, rec.PagesRead, "the pages changed after the checkpoint were read to redo them")
	require.Equal(t, int64(1), rec.RolledBack)
	require.Greater(t, rec.EndLSN, rec.CheckpointLSN)
	require.Equal(t, int64(rec.EndLSN-rec.CheckpointLSN), rec.Bytes)
	require.Equal(t, db.LogStats().Bytes-ckpt, rec.Bytes, "the records logged since the checkpoint, all synced")
	require.NoError(t, db2.Close())

	db3, err := Open(crashableOpts(image))
	require.NoError(t, err)
	rec = db3.Recovery()
	require.False(t, rec.Recovered(), "a clean close")
	require.Zero(t, rec.Records)
	require.Zero(t, rec.Pages)
	require.Zero(t, rec.Bytes)
	require.Zero(t, rec.PagesRead)
	require.Equal(t, rec.CheckpointLSN, rec.EndLSN)
	require.NoError(t, db3.Close())
}

// TestCloseCheckpointNeedsNoWAL: after Close's checkpoint
// (closeCheckpoint) the pages are in the store's sstables and the
// checkpoint is at the log's end, so a crash right after it, with
// pebble's WAL gone, recovers nothing and keeps every committed row. It
// counts as a checkpoint and as one store sync, as Checkpoint does.
func TestCloseCheckpointNeedsNoWAL(t *testing.T) {
	fs := vfs.NewCrashableMem()
	const n = 200
	db, tb := openMetaRows(t, crashableOpts(fs), Clustered, n)
	ckpts, syncs := db.LogStats().Checkpoints, db.Pool().BackgroundMeter().StoreSyncs
	require.NoError(t, db.closeCheckpoint())
	require.Equal(t, ckpts+1, db.LogStats().Checkpoints)
	require.Equal(t, syncs+1, db.Pool().BackgroundMeter().StoreSyncs)
	image := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, db.Close())

	names, err := image.List("db")
	require.NoError(t, err)
	wals := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".log") {
			require.NoError(t, image.Remove(image.PathJoin("db", name)))
			wals++
		}
	}
	require.Positive(t, wals, "the image has a WAL to remove")

	db2, err := Open(crashableOpts(image))
	require.NoError(t, err)
	defer func() { require.NoError(t, db2.Close()) }()
	rec := db2.Recovery()
	require.Zero(t, rec.Records, "the checkpoint is at the log's end")
	require.Zero(t, rec.RolledBack)
	requireMetaRows(t, db2, tb.Name(), n)
}

// crashableOpts are the options of a small database in directory "db" of
// f (pebble's crashable memory filesystem in these tests), on the stepped
// runtime, so that a crash clone can be opened again with them.
func crashableOpts(f vfs.FS) *Options {
	return &Options{FS: f, Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096}, Runtime: steppedRuntime{}}
}

// TestCloseFast: CloseFast writes no page and syncs the log, so that a
// crash right after it (only synced bytes left) loses no commit, even
// with commits that did not sync, in every organization: the next Open
// redoes the pages from the log and rolls back the transaction the close
// left open. A second close does nothing.
func TestCloseFast(t *testing.T) {
	for _, org := range []Org{Clustered, HeapRowPointer, HeapPrimaryKey} {
		t.Run(org.String(), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			opts := crashableOpts(fs)
			opts.Commit = NoSyncCommit
			const n = 200
			db, tb := openMetaRows(t, opts, org, n)
			open := db.Begin(nil)
			require.NoError(t, open.Insert(tb, Row{Str("x"), Int(n), Dec(n), Null, Int(0), Null}))
			require.Less(t, db.log.Durable(), db.log.End(), "commits that did not sync")
			writes := db.Pool().BackgroundMeter().StoreWrites
			ckpts := db.LogStats().Checkpoints
			require.NoError(t, db.CloseFast())
			require.Equal(t, writes, db.Pool().BackgroundMeter().StoreWrites, "no page written")
			require.Equal(t, ckpts, db.LogStats().Checkpoints, "no checkpoint")
			require.Equal(t, db.log.End(), db.log.Durable(), "the log synced to its end")
			require.NoError(t, db.CloseFast())
			require.NoError(t, db.Close())
			image := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})

			opts.FS = image
			db2, err := Open(opts)
			require.NoError(t, err)
			defer func() { require.NoError(t, db2.Close()) }()
			rec := db2.Recovery()
			require.Positive(t, rec.Records, "the log redone")
			require.Positive(t, rec.PagesApplied, "pages the close did not write")
			require.Equal(t, int64(1), rec.RolledBack, "the transaction left open")
			requireMetaRows(t, db2, tb.Name(), n)
			tb2, err := db2.Table(tb.Name())
			require.NoError(t, err)
			tx := db2.Begin(nil)
			defer func() { require.NoError(t, tx.Commit()) }()
			_, found, err := tx.Get(tb2, []Value{Int(n), Int(0)}, nil)
			require.NoError(t, err)
			require.False(t, found, "the open transaction's row rolled back")
		})
	}
}

// openMetaRows opens a database with opts and inserts n rows into a new
// metaTable of org (insertMetaRows from 0).
func openMetaRows(t *testing.T, opts *Options, org Org, n int64) (*DB, *TableHandle) {
	t.Helper()
	db, err := Open(opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(metaTable(org))
	require.NoError(t, err)
	insertMetaRows(t, db, tb, 0, n)
	return db, tb
}

// insertMetaRows inserts n rows into tb, keys (i, 0) for i from first, a
// transaction each.
func insertMetaRows(t *testing.T, db *DB, tb *TableHandle, first, n int64) {
	t.Helper()
	for i := first; i < first+n; i++ {
		tx := db.Begin(nil)
		require.NoError(t, tx.Insert(tb, Row{Str("x"), Int(i), Dec(i), Null, Int(0), Null}))
		require.NoError(t, tx.Commit())
	}
}

// requireMetaRows checks that table name of db (metaTable's columns)
// holds the rows the tests above inserted, keys (i, 0) for i below n.
func requireMetaRows(t *testing.T, db *DB, name string, n int64) {
	t.Helper()
	tb, err := db.Table(name)
	require.NoError(t, err)
	tx := db.Begin(nil)
	defer func() { require.NoError(t, tx.Commit()) }()
	for i := range n {
		_, found, err := tx.Get(tb, []Value{Int(i), Int(0)}, nil)
		require.NoError(t, err)
		require.True(t, found, "row %d", i)
	}
}

// TestReopenWithAnotherLogSize: a database reopened with another LogSize
// writes redo segments of another size, whose names step over the
// spares the old size recycled. The log removes each such spare as it
// passes it, so a crash then (synced bytes only) recovers under either
// size, every committed row there. (Open refused such a database as
// damaged, "segment file ..., before the log's end ..., has no valid
// header", when an old spare's name lay inside the log.)
func TestReopenWithAnotherLogSize(t *testing.T) {
	const before, after = 1500, 3000
	fs := vfs.NewCrashableMem()
	opts := crashableOpts(fs)
	opts.LogSize = 8 * 48 << 10 // segments of 48 KiB
	db, _ := openMetaRows(t, opts, Clustered, before)
	require.NoError(t, db.Close())
	sizes := func() map[int64]int {
		names, err := fs.List(fs.PathJoin("db", "redo"))
		require.NoError(t, err)
		n := map[int64]int{}
		for _, name := range names {
			if name == "checkpoint" {
				continue
			}
			fi, err := fs.Stat(fs.PathJoin("db", "redo", name))
			require.NoError(t, err)
			n[fi.Size()]++
		}
		return n
	}
	require.GreaterOrEqual(t, sizes()[48<<10], 2, "spares of the first size, ahead of the log's end")

	small := crashableOpts(fs)
	small.LogSize = redo.MinCapacity // segments of 32 KiB
	db, err := Open(small)
	require.NoError(t, err)
	tb, err := db.Table(metaTable(Clustered).Name)
	require.NoError(t, err)
	insertMetaRows(t, db, tb, before, after)
	require.Greater(t, db.LogStats().Bytes, int64(8*48<<10), "the log passed every old spare's name")
	image := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, db.Close())

	for i, size := range []int64{redo.MinCapacity, 8 * 48 << 10} {
		o := crashableOpts(image)
		o.LogSize = size
		db, err := Open(o)
		require.NoError(t, err, "reopened with a log of %d bytes", size)
		require.Equal(t, i == 0, db.Recovery().Recovered(), "the crash is recovered once")
		requireMetaRows(t, db, metaTable(Clustered).Name, before+after)
		require.NoError(t, db.CloseFast()) // the next size opens a log it did not write
	}
}
