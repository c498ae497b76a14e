package cache_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
	"github.com/enginelab/enginelab/internal/memcachedtest"
)

// The memory a tier may hold in this process: its budget in process,
// nothing for none, the inner tier's when recorded.
func TestInProcessBytes(t *testing.T) {
	require.Zero(t, cache.InProcessBytes(nil))
	require.Zero(t, cache.InProcessBytes(cache.NewNullTier()))
	lru, err := cache.NewLRUTier(1 << 20)
	require.NoError(t, err)
	defer lru.Close()
	require.Equal(t, int64(1<<20), cache.InProcessBytes(lru))
	slru, err := cache.NewSLRUTier(2<<20, nil)
	require.NoError(t, err)
	defer slru.Close()
	require.Equal(t, int64(2<<20), cache.InProcessBytes(slru))
	rt, err := cache.NewRistrettoTier(4 << 20)
	require.NoError(t, err)
	defer rt.Close()
	require.Equal(t, int64(4<<20), cache.InProcessBytes(rt))
	require.Equal(t, int64(1<<20), cache.InProcessBytes(cache.NewTraceTier(lru, io.Discard, page.DefaultSize, cache.TierExclusive)))
	require.Zero(t, cache.InProcessBytes(cache.NewTraceTier(nil, io.Discard, page.DefaultSize, cache.TierExclusive)))
}

// A memcached tier's budget (its servers' -m) is other processes' memory.
func TestInProcessBytesMemcached(t *testing.T) {
	addr, _ := memcachedtest.Start(t)
	tier, err := cache.NewMemcachedTier([]string{addr}, &cache.MemcachedOptions{PageSize: page.DefaultSize})
	require.NoError(t, err)
	defer tier.Close()
	require.Positive(t, tier.Stats().Capacity)
	require.Zero(t, cache.InProcessBytes(tier))
}

func TestPoolMemory(t *testing.T) {
	require.Greater(t, cache.FrameOverhead, int64(64), "a Page is more than its links")
	require.Equal(t, 1024*(16<<10+cache.FrameOverhead), cache.PoolMemory(16<<20, 16<<10))
	require.Equal(t, 1024*(16<<10+cache.FrameOverhead), cache.PoolMemory(16<<20+100, 16<<10), "whole frames")
}
