package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/enginelab/enginelab/cache"
	"github.com/stretchr/testify/require"
)

// TestDoublewriteOpen: a database that writes through the doublewrite
// buffer keeps its file in its directory; a page of its last batch torn
// in the store is restored from its copy when the database is opened
// (with or without the buffer), and a damaged doublewrite file is an
// error naming it.
func TestDoublewriteOpen(t *testing.T) {
	fs := vfs.NewMem()
	opts := func(torn cache.TornPages) *Options {
		return &Options{FS: fs, Dir: "db", PageSize: 4096, Options: cache.Options{PoolSize: 64 * 4096, TornPages: torn}}
	}
	db, err := Open(opts(cache.TornPagesDoublewrite))
	require.NoError(t, err)
	tb, err := db.CreateTable(metaTable(Clustered))
	require.NoError(t, err)
	for i := range 300 {
		tx := db.Begin(nil)
		require.NoError(t, tx.Insert(tb, Row{Str("k"), Int(int64(i)), Dec(int64(i)), Null, Int(int64(i % 4)), Null}))
		require.NoError(t, tx.Commit())
	}
	bg := db.Pool().BackgroundMeter()
	require.Positive(t, bg.DoublewriteWrites)
	require.Equal(t, bg.StoreWrites, bg.DoublewritePages, "every page write went through the doublewrite file")
	require.NoError(t, db.Close())
	rows := func(db *DB) int {
		tb, err := db.Table(tb.Name())
		require.NoError(t, err)
		tx := db.Begin(nil)
		require.NoError(t, tb.Check(tx))
		require.NoError(t, tx.Commit())
		return len(scanAllRows(t, db, tb))
	}

	r := rand.New(rand.NewPCG(1, 2))
	path := fs.PathJoin("db", cache.DoublewriteFile)
	for _, torn := range []cache.TornPages{cache.TornPagesDoublewrite, cache.TornPagesNone} {
		require.True(t, tearDoublewritten(t, fs, r, "open"), "no page of the last batch in the store")
		db, err = Open(opts(torn))
		require.NoError(t, err, "%v", torn)
		require.Equal(t, 1, db.DoublewriteRecovery().Restored, "%v", torn)
		require.Equal(t, 300, rows(db))
		require.NoError(t, db.Close())
	}
	// Opened without the buffer, the database wrote in place and removed
	// the file: a copy older than the pages' later writes never comes
	// back.
	_, err = fs.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)

	db, err = Open(opts(cache.TornPagesDoublewrite))
	require.NoError(t, err)
	require.Equal(t, cache.DoublewriteRecovery{}, db.DoublewriteRecovery())
	require.NoError(t, db.Close())

	// The file's header damaged: an error naming the file.
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("XXXX"), 16)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = Open(opts(cache.TornPagesDoublewrite))
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, cache.ErrCorruptDoublewrite)
	require.ErrorContains(t, err, fmt.Sprintf("db/%s", cache.DoublewriteFile))
}
