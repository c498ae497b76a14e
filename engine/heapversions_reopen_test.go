package engine

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// TestHeapVersionsReopen: a table keeps the choice it was created with.
// Reopened without Options.HeapVersions, a stored versioned table is still
// versioned and the background vacuum still runs for it; a heap table
// created by that open is not versioned. A database with no versioned
// table starts no vacuum goroutine.
func TestHeapVersionsReopen(t *testing.T) {
	fs := vfs.NewMem()
	opts := &Options{FS: fs, Dir: "db", HeapVersions: true, Vacuum: VacuumBackground, Options: cache.Options{PoolSize: 4 << 20}}
	db, err := Open(opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(hvTable(HeapRowPointer))
	require.NoError(t, err)
	require.True(t, tb.Versioned())
	require.NoError(t, db.Close())

	opts.HeapVersions = false
	db, err = Open(opts)
	require.NoError(t, err)
	tb, err = db.Table(tb.Name())
	require.NoError(t, err)
	require.True(t, tb.Versioned(), "stored versioned")
	require.NotNil(t, db.vacuumer, "its vacuum runs")
	plain := hvTable(HeapRowPointer)
	plain.Name = "plain"
	p, err := db.CreateTable(plain)
	require.NoError(t, err)
	require.False(t, p.Versioned(), "created without HeapVersions")
	require.NoError(t, db.Close())

	fs2 := vfs.NewMem()
	db, err = Open(&Options{FS: fs2, Dir: "db", Vacuum: VacuumBackground, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	_, err = db.CreateTable(plain)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db, err = Open(&Options{FS: fs2, Dir: "db", Vacuum: VacuumBackground, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	require.Nil(t, db.vacuumer, "no versioned table, no vacuum goroutine")
	require.NoError(t, db.Close())
}
