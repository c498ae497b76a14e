package store

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// The options the store gives pebble follow PebbleOptions: the block
// cache and the memtable size, with their defaults (16 MiB memtables in
// memory, 64 MiB on a directory or a given filesystem), two memtables at
// most, and the WAL off only when volatile.
func TestPebbleOptionsDerived(t *testing.T) {
	for _, c := range []struct {
		o               PebbleOptions
		cache, memtable int64
		budget          int64
		disableWAL      bool
	}{
		{PebbleOptions{Volatile: true}, 8 << 20, 16 << 20, 32 << 20, true},
		{PebbleOptions{}, 8 << 20, 16 << 20, 32 << 20, false},
		{PebbleOptions{Dir: "d"}, 8 << 20, 64 << 20, 128 << 20, false},
		{PebbleOptions{FS: vfs.NewMem()}, 8 << 20, 64 << 20, 128 << 20, false},
		{PebbleOptions{Dir: "d", BlockCacheSize: 1 << 20, MemTableSize: 32 << 20}, 1 << 20, 32 << 20, 64 << 20, false},
		{PebbleOptions{Volatile: true, MemTableSize: MinMemTableSize}, 8 << 20, 1 << 20, 2 << 20, true},
	} {
		require.NoError(t, c.o.Validate(), "%+v", c.o)
		d := c.o.Defaults()
		p := pebbleOptions(d, vfs.NewMem())
		require.Equal(t, c.cache, p.CacheSize, "%+v", c.o)
		require.Equal(t, uint64(c.memtable), p.MemTableSize, "%+v", c.o)
		require.Equal(t, 2, p.MemTableStopWritesThreshold, "%+v", c.o)
		require.Equal(t, c.budget, MemTableBudget(d.MemTableSize), "%+v", c.o)
		require.Equal(t, c.disableWAL, p.DisableWAL, "%+v", c.o)
	}
}

// Invalid sizes are refused before anything is opened.
func TestPebbleOptionsInvalid(t *testing.T) {
	for _, o := range []PebbleOptions{
		{BlockCacheSize: -1},
		{MemTableSize: -1},
		{MemTableSize: MinMemTableSize - 1},
		{MemTableSize: MaxMemTableSize + 1},
		{Volatile: true, Dir: "d"},
		{PageSize: 1000},
	} {
		require.ErrorIs(t, o.Validate(), ErrInvalidOptions, "%+v", o)
		_, err := OpenPebble(o)
		require.ErrorIs(t, err, ErrInvalidOptions, "%+v", o)
	}
}
