package slab_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/slab"
	"github.com/enginelab/enginelab/cache/tier/tiertest"
)

// newSlabTier is the tiertest.Factory: a 64-bit 1.6.18 model of at least
// 2 MiB (a memcached's limit holds whole slab pages, and a class's first
// page is allowed past it, so a smaller budget would not mean what the
// checks take it to).
func newSlabTier(t testing.TB, capacity int64) tier.Tier {
	tr, err := slab.NewTier(slab.Memcached1618(8, max(capacity, 2<<20)))
	require.NoError(t, err)
	return tr
}

// The Tier contract (inexact: memcached's budget is slab pages, not
// bytes).
func TestSlabTierModel(t *testing.T) { tiertest.Model(t, newSlabTier, false) }

// The tier's counters are the server's, and an evicted page's copy goes
// with it: with the MRU patch, a page read back is the next evicted.
func TestSlabTierStatsAndMRUPatch(t *testing.T) {
	p := slab.Memcached125(4, 1031520) // one slab page: 60 pages of 16 KiB
	p.MRUPatch = true
	tr, err := slab.NewTier(p)
	require.NoError(t, err)
	defer tr.Close()
	require.Equal(t, "memcached-1.2.5", tr.Name())
	for n := uint32(0); n < 60; n++ {
		tiertest.PutN(t, tr, n, pageSize)
	}
	require.True(t, tiertest.GetN(t, tr, 30, pageSize))
	tiertest.PutN(t, tr, 60, pageSize)
	require.False(t, tiertest.GetN(t, tr, 30, pageSize), "read back, then evicted first")
	require.True(t, tiertest.GetN(t, tr, 0, pageSize))
	require.NoError(t, tr.Delete(tiertest.NumKey(0)))
	var bytes int64 // pages 1-29 and 31-60, their keys of one or two hex digits
	for n := uint32(1); n <= 60; n++ {
		if n != 30 {
			bytes += int64(p.ItemSize(len(tiertest.NumKey(n).String()), pageSize, 0))
		}
	}
	s := tr.Stats()
	require.Equal(t, tier.Stats{Items: 59, Bytes: bytes,
		Capacity: 1031520, Puts: 61, Evictions: 1, Gets: 3, Hits: 2, Deletes: 1}, s)
	ms := tr.MemcachedStats()
	require.EqualValues(t, 59, ms.CurrItems)
	require.EqualValues(t, 1, ms.GetMisses)
	require.EqualValues(t, 1, ms.DeleteHits)
	require.Equal(t, 1, ms.Threads, "1.2.5 served on one thread")
	cls := tr.SlabStats()
	require.Len(t, cls, 1)
	require.EqualValues(t, 17192, cls[0].Size)
	require.EqualValues(t, 1, cls[0].FreeChunks)
}
