package lru_test

import (
	"testing"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/lru"
	"github.com/enginelab/enginelab/cache/tier/tiertest"
	"github.com/stretchr/testify/require"
)

// newLRUTier is the tiertest.Factory of this package's tier.
func newLRUTier(t testing.TB, capacity int64) tier.Tier {
	tr, err := lru.New(capacity)
	require.NoError(t, err)
	return tr
}

func TestLRUTierModel(t *testing.T) {
	t.Run("exact", func(t *testing.T) { tiertest.Model(t, newLRUTier, true) })
	// The inexact checks must pass on an exact backend too.
	t.Run("inexact", func(t *testing.T) { tiertest.Model(t, newLRUTier, false) })
}

func TestLRUTierConfig(t *testing.T) {
	for _, c := range []int64{0, -1} {
		_, err := lru.New(c)
		require.ErrorIs(t, err, tier.ErrInvalidOptions, "lru capacity %d", c)
	}
}

// TestLRUTierEdges: the budget's edge, a dst of the wrong length, and a
// closed tier (tiertest.Edges).
func TestLRUTierEdges(t *testing.T) { tiertest.Edges(t, newLRUTier) }

// TestLRUTierOrder spells out the LRU's eviction order. Pages are 100
// bytes, so each costs 148 with tier.ItemOverhead, and the budget holds
// four. Lists are most recently used first.
func TestLRUTierOrder(t *testing.T) {
	const size, cost = 100, 100 + tier.ItemOverhead
	tr, err := lru.New(4 * cost)
	require.NoError(t, err)
	defer tr.Close()
	order := func() []uint32 { return tiertest.PageNumbers(tr.Order()) }
	put := func(n uint32) { tiertest.PutN(t, tr, n, size) }
	get := func(n uint32) bool { return tiertest.GetN(t, tr, n, size) }

	for n := uint32(1); n <= 4; n++ {
		put(n)
	}
	require.Equal(t, []uint32{4, 3, 2, 1}, order())
	require.True(t, get(1)) // a hit moves 1 to the head
	require.Equal(t, []uint32{1, 4, 3, 2}, order())
	put(5) // full: 2, least recently used, goes
	require.Equal(t, []uint32{5, 1, 4, 3}, order())
	put(3) // a replacing put makes 3 most recently used, evicts nothing
	require.Equal(t, []uint32{3, 5, 1, 4}, order())
	put(6) // evicts 4
	require.Equal(t, []uint32{6, 3, 5, 1}, order())
	require.NoError(t, tr.Delete(tiertest.NumKey(5)))
	require.Equal(t, []uint32{6, 3, 1}, order())
	put(7) // room left by the delete: nothing evicted
	require.Equal(t, []uint32{7, 6, 3, 1}, order())
	require.True(t, get(6))
	require.Equal(t, []uint32{6, 7, 3, 1}, order())
	require.Equal(t, int64(2), tr.Stats().Evictions)

	// A page of 248 bytes costs two small ones: 1, then 3, go.
	tiertest.PutN(t, tr, 8, 2*cost-tier.ItemOverhead)
	require.Equal(t, []uint32{8, 6, 7}, order())
	require.False(t, get(1))
	require.False(t, get(3))
	require.Equal(t, []uint32{8, 6, 7}, order(), "a miss changes nothing")
	put(9) // evicts 7; 8 and 6 were used since
	require.Equal(t, []uint32{9, 8, 6}, order())

	s := tr.Stats()
	require.Equal(t, int64(5), s.Evictions)
	require.Equal(t, int64(3), s.Items)
	require.Equal(t, int64(4*cost), s.Bytes)
	require.True(t, tiertest.GetN(t, tr, 8, 2*cost-tier.ItemOverhead))
	for _, n := range []uint32{9, 6} {
		require.True(t, get(n), "page %d", n)
	}
	for _, n := range []uint32{1, 2, 3, 4, 5, 7} {
		require.False(t, get(n), "page %d", n)
	}
}

// BenchmarkTierGet is a pool miss that the tier serves (tiertest.BenchGet).
func BenchmarkTierGet(b *testing.B) { tiertest.BenchGet(b, openBench) }

// BenchmarkTierPut is a Put that evicts, into a full tier
// (tiertest.BenchPut).
func BenchmarkTierPut(b *testing.B) { tiertest.BenchPut(b, openBench) }

func openBench(b *testing.B, capacity int64) tier.Tier {
	tr, err := lru.New(capacity)
	if err != nil {
		b.Fatal(err)
	}
	return tr
}
