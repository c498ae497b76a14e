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
	require.Equal(t, cache.PoolMemory(64<<20, page.DefaultSize)+512<<20+StoreOverhead, o.MemoryEstimate())
	_, err = Open(o)
	require.ErrorIs(t, err, ErrInsufficientMemory)
	require.Contains(t, err.Error(), "the remote tier (512 MiB in this process)")
	require.Contains(t, err.Error(), "the in-memory store's pages come on top and are not counted")
	require.Contains(t, err.Error(), "Make the remote tier smaller", "no pool fits beside it")

	o.Tier = tier.NewNullTier()
	require.Equal(t, cache.PoolMemory(64<<20, page.DefaultSize)+StoreOverhead, o.MemoryEstimate(), "a tier that keeps nothing")
	db, err := Open(o)
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

func TestOptionsMemoryLimitNegative(t *testing.T) {
	_, err := Open(&Options{MemoryLimit: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
}
