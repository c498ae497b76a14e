package engine

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
)

// TestHeapVersionsReopen: a table keeps the choice it was created with.
// Reopened with HeapVersionsOff, a stored versioned table is still
// versioned and the background vacuum still runs for it; a heap table
// created by that open is not versioned. A database starts its vacuum
// goroutine with its first versioned table, and with the default options
// a heap table is versioned, a clustered one not.
func TestHeapVersionsReopen(t *testing.T) {
	fs := vfs.NewMem()
	opts := &Options{FS: fs, Dir: "db", HeapVersions: HeapVersionsOn, Vacuum: VacuumBackground, Options: cache.Options{PoolSize: 4 << 20}}
	db, err := Open(opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(hvTable(HeapRowPointer))
	require.NoError(t, err)
	require.True(t, tb.Versioned())
	require.NoError(t, db.Close())

	opts.HeapVersions = HeapVersionsOff
	db, err = Open(opts)
	require.NoError(t, err)
	tb, err = db.Table(tb.Name())
	require.NoError(t, err)
	require.True(t, tb.Versioned(), "stored versioned")
	require.NotNil(t, db.vacuumer.Load(), "its vacuum runs")
	plain := hvTable(HeapRowPointer)
	plain.Name = "plain"
	p, err := db.CreateTable(plain)
	require.NoError(t, err)
	require.False(t, p.Versioned(), "created with HeapVersionsOff")
	require.NoError(t, db.Close())

	fs2 := vfs.NewMem()
	db, err = Open(&Options{FS: fs2, Dir: "db", Vacuum: VacuumBackground, Options: cache.Options{PoolSize: 4 << 20}})
	require.NoError(t, err)
	cl := hvTable(Clustered)
	cl.Name = "clustered"
	c, err := db.CreateTable(cl)
	require.NoError(t, err)
	require.False(t, c.Versioned(), "clustered: versions are undo records")
	require.Nil(t, db.vacuumer.Load(), "no versioned table, no vacuum goroutine")
	h, err := db.CreateTable(hvTable(HeapPrimaryKey))
	require.NoError(t, err)
	require.True(t, h.Versioned(), "the default keeps versions")
	require.NotNil(t, db.vacuumer.Load(), "started with the first versioned table")
	require.NoError(t, db.Close())

	_, err = Open(&Options{HeapVersions: HeapVersionsOff + 1})
	require.ErrorIs(t, err, ErrInvalidOptions)
}
