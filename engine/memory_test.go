package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
)

// Open refuses a pool larger than the memory the process may use, before
// anything is opened, naming the pool, the estimate, the limit and the
// way out; SkipMemoryCheck opens it anyway.
func TestOpenRefusesPoolOverLimit(t *testing.T) {
	dir := t.TempDir()
	o := &Options{Dir: dir, Options: cache.Options{PoolSize: 1 << 30}, MemoryLimit: 256 << 20}
	db, err := Open(o)
	require.Nil(t, db)
	require.ErrorIs(t, err, ErrInsufficientMemory)
	require.ErrorIs(t, err, ErrInvalidOptions)
	for _, w := range []string{"PoolSize 1.0 GiB", "need about 1.1 GiB", "256 MiB this process may use (set by Options.MemoryLimit)",
		"Make PoolSize at most 118 MiB", "Options.SkipMemoryCheck"} {
		require.Contains(t, err.Error(), w)
	}
	require.NotContains(t, err.Error(), "in-memory store", "the store is on disk")

	o.PoolSize = 64 << 20
	db, err = Open(o)
	require.NoError(t, err, "a pool that fits")
	require.NoError(t, db.Close())

	o.PoolSize, o.MemoryLimit, o.SkipMemoryCheck = 128<<20, 64<<20, true
	db, err = Open(o)
	require.NoError(t, err, "the override")
	require.NoError(t, db.Close())
}

// An in-process tier counts its budget; the in-memory store's pages are
// not counted, and the message says so.
func TestOpenMemoryCheckCountsTier(t *testing.T) {
	tr, err := lru.New(512 << 20)
	require.NoError(t, err)
	defer tr.Close()
	o := &Options{Options: cache.Options{PoolSize: 64 << 20, Tier: tr}, MemoryLimit: 512 << 20}
	require.Equal(t, cache.PoolMemory(64<<20, page.DefaultSize)+512<<20+o.StoreBudget(), o.MemoryEstimate())
	_, err = Open(o)
	require.ErrorIs(t, err, ErrInsufficientMemory)
	require.Contains(t, err.Error(), "the remote tier (512 MiB in this process)")
	require.Contains(t, err.Error(), "the in-memory store's pages come on top and are not counted")
	require.Contains(t, err.Error(), "Make the remote tier smaller", "no pool fits beside it")

	o.Tier = tier.NewNullTier()
	require.Equal(t, cache.PoolMemory(64<<20, page.DefaultSize)+o.StoreBudget(), o.MemoryEstimate(), "a tier that keeps nothing")
	db, err := Open(o)
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

func TestOptionsMemoryLimitNegative(t *testing.T) {
	_, err := Open(&Options{MemoryLimit: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
}

// The store's budget is its memtables (two of MemTableSize) and its
// block cache, from the options: 16 MiB memtables in memory and 64 MiB on
// disk unless set.
func TestStoreBudget(t *testing.T) {
	require.Equal(t, int64(2*16<<20+8<<20), (&Options{}).StoreBudget())
	require.Equal(t, int64(2*64<<20+8<<20), (&Options{Dir: "d"}).StoreBudget())
	o := &Options{Dir: "d", MemTableSize: 4 << 20, BlockCacheSize: 1 << 20}
	require.Equal(t, int64(2*4<<20+1<<20), o.StoreBudget())
	so := o.StoreOptions()
	require.Equal(t, int64(4<<20), so.MemTableSize)
	require.Equal(t, int64(1<<20), so.BlockCacheSize)
	for _, o := range []*Options{{MemTableSize: -1}, {MemTableSize: 1000}, {MemTableSize: 4 << 30}, {BlockCacheSize: -1}} {
		_, err := Open(o)
		require.ErrorIs(t, err, ErrInvalidOptions, "%+v", o)
	}
}

// An in-memory database reports its store's bytes, a database on disk
// none; a populated pool opens and works like any other.
func TestStoreMemoryBytes(t *testing.T) {
	db, err := Open(&Options{Options: cache.Options{PoolSize: 4 << 20, PoolPopulate: true}, MemTableSize: 1 << 20})
	require.NoError(t, err)
	require.Positive(t, db.StoreMemoryBytes(), "the redo log's first segment and pebble's files")
	require.Equal(t, int64(1<<20), db.Options().MemTableSize)
	require.NoError(t, db.Close())
	db, err = Open(&Options{Dir: t.TempDir()})
	require.NoError(t, err)
	require.Zero(t, db.StoreMemoryBytes())
	require.NoError(t, db.Close())
}
