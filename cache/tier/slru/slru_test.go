package slru_test

import (
	"fmt"
	"testing"

	"github.com/enginelab/enginelab/cache/tier"
	"github.com/enginelab/enginelab/cache/tier/slru"
	"github.com/enginelab/enginelab/cache/tier/tiertest"
	"github.com/stretchr/testify/require"
)

// newSLRUTier returns the tiertest.Factory of tiers with options o.
func newSLRUTier(o *slru.Options) tiertest.Factory {
	return func(t testing.TB, capacity int64) tier.Tier {
		tr, err := slru.New(capacity, o)
		require.NoError(t, err)
		return tr
	}
}

func TestSLRUTierModel(t *testing.T) {
	t.Run("defaults", func(t *testing.T) { tiertest.Model(t, newSLRUTier(nil), true) })
	t.Run("hot=1,warm=79", func(t *testing.T) {
		tiertest.Model(t, newSLRUTier(&slru.Options{HotPercent: 1, WarmPercent: 79}), true)
	})
	t.Run("inexact", func(t *testing.T) { tiertest.Model(t, newSLRUTier(nil), false) })
}

func TestSLRUTierConfig(t *testing.T) {
	for _, c := range []int64{0, -1} {
		_, err := slru.New(c, nil)
		require.ErrorIs(t, err, tier.ErrInvalidOptions, "slru capacity %d", c)
	}
	for _, o := range []slru.Options{
		{HotPercent: -1}, {WarmPercent: -1}, {HotPercent: 80}, {WarmPercent: 80},
		{HotPercent: 41, WarmPercent: 40}, {HotPercent: 1, WarmPercent: 80},
	} {
		_, err := slru.New(1<<20, &o)
		require.ErrorIs(t, err, tier.ErrInvalidOptions, "%+v", o)
	}
	for _, o := range []*slru.Options{nil, {}, {HotPercent: 40, WarmPercent: 40}, {HotPercent: 1, WarmPercent: 1}} {
		_, err := slru.New(1<<20, o)
		require.NoError(t, err, "%+v", o)
	}
}

// TestSLRUTierEdges: the budget's edge, a dst of the wrong length, and a
// closed tier (tiertest.Edges).
func TestSLRUTierEdges(t *testing.T) { tiertest.Edges(t, newSLRUTier(nil)) }

// TestSLRUTierOrder spells out the segmented LRU's moves and evictions
// (rules 1 to 5 of SLRUTier). Queues are listed head first.
func TestSLRUTierOrder(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		// Pages of 100 bytes cost 148; the budget holds ten: HOT's share
		// (20%, 296 bytes) is two pages, WARM's (40%, 592) four.
		const size, cost = 100, 100 + tier.ItemOverhead
		s, err := slru.New(10*cost, nil)
		require.NoError(t, err)
		defer s.Close()
		queues := func() string {
			hot, warm, cold := s.Queues()
			return fmt.Sprintf("HOT %v WARM %v COLD %v", tiertest.PageNumbers(hot), tiertest.PageNumbers(warm), tiertest.PageNumbers(cold))
		}
		put := func(n uint32) { tiertest.PutN(t, s, n, size) }
		get := func(n uint32) bool { return tiertest.GetN(t, s, n, size) }
		hit := func(n uint32) { require.True(t, get(n), "get %d", n) }

		put(1)
		put(2)
		require.Equal(t, "HOT [2 1] WARM [] COLD []", queues())
		put(3) // HOT over its share: its tail, 1, never hit, goes to COLD
		require.Equal(t, "HOT [3 2] WARM [] COLD [1]", queues())
		for n := uint32(4); n <= 8; n++ {
			put(n)
		}
		require.Equal(t, "HOT [8 7] WARM [] COLD [6 5 4 3 2 1]", queues())

		hit(2) // first hit in COLD: fetched, stays
		require.Equal(t, "HOT [8 7] WARM [] COLD [6 5 4 3 2 1]", queues())
		hit(2) // second hit: active, so to WARM at once
		require.Equal(t, "HOT [8 7] WARM [2] COLD [6 5 4 3 1]", queues())
		hit(8)
		hit(8) // active in HOT: no move yet
		require.Equal(t, "HOT [8 7] WARM [2] COLD [6 5 4 3 1]", queues())

		put(9) // HOT's tail 7 is not active: to COLD
		require.Equal(t, "HOT [9 8] WARM [2] COLD [7 6 5 4 3 1]", queues())
		put(10) // HOT's tail 8 is active: to WARM. Ten pages: full
		require.Equal(t, "HOT [10 9] WARM [8 2] COLD [7 6 5 4 3 1]", queues())
		require.Zero(t, s.Stats().Evictions)

		put(11) // evicts COLD's tail, 1; 9 leaves HOT
		require.Equal(t, "HOT [11 10] WARM [8 2] COLD [9 7 6 5 4 3]", queues())
		hit(3)  // one hit does not save a COLD page
		put(12) // evicts 3
		require.Equal(t, "HOT [12 11] WARM [8 2] COLD [10 9 7 6 5 4]", queues())
		require.Equal(t, int64(2), s.Stats().Evictions)

		for _, n := range []uint32{4, 5} {
			hit(n)
			hit(n)
		}
		require.Equal(t, "HOT [12 11] WARM [5 4 8 2] COLD [10 9 7 6]", queues())
		hit(8) // fetched already (in HOT): one hit makes it active again
		hit(6)
		hit(6) // WARM over its share: its tail 2, not active, to COLD
		require.Equal(t, "HOT [12 11] WARM [6 5 4 8] COLD [2 10 9 7]", queues())
		hit(7)
		hit(7) // WARM over: 8 is active, bumped to WARM's head (flag
		// cleared); then 4, not active, to COLD
		require.Equal(t, "HOT [12 11] WARM [8 7 6 5] COLD [4 2 10 9]", queues())

		// A scan of pages never hit again flows through HOT and COLD;
		// WARM is untouched.
		put(13) // evicts 9
		put(14) // evicts 10
		put(15) // evicts 2
		require.Equal(t, "HOT [15 14] WARM [8 7 6 5] COLD [13 12 11 4]", queues())
		st := s.Stats()
		require.Equal(t, int64(5), st.Evictions)
		require.Equal(t, int64(10), st.Items)
		require.Equal(t, int64(10*cost), st.Bytes)
		for n := uint32(1); n <= 15; n++ {
			want := n >= 4 && n <= 8 || n >= 11
			require.Equal(t, want, get(n), "page %d", n)
		}
	})

	t.Run("fallback", func(t *testing.T) {
		// A budget of 1000: HOT's share is 200, WARM's 400. Pages of 52
		// bytes cost 100; bigger ones show where room comes from when COLD
		// has none.
		const small = 100 - tier.ItemOverhead
		s, err := slru.New(1000, nil)
		require.NoError(t, err)
		defer s.Close()
		queues := func() string {
			hot, warm, cold := s.Queues()
			return fmt.Sprintf("HOT %v WARM %v COLD %v", tiertest.PageNumbers(hot), tiertest.PageNumbers(warm), tiertest.PageNumbers(cold))
		}
		tiertest.PutN(t, s, 1, small)
		require.True(t, tiertest.GetN(t, s, 1, small))
		require.True(t, tiertest.GetN(t, s, 1, small)) // active in HOT
		tiertest.PutN(t, s, 2, small)
		tiertest.PutN(t, s, 3, small) // HOT over: 1 is active, to WARM
		require.Equal(t, "HOT [3 2] WARM [1] COLD []", queues())

		// 800 bytes: 300 held, so 100 must go; COLD is empty, so HOT's
		// tail 2 is evicted. Then HOT is over its share until it is
		// empty: 3 and the new page itself go to COLD.
		tiertest.PutN(t, s, 4, 800-tier.ItemOverhead)
		require.Equal(t, "HOT [] WARM [1] COLD [4 3]", queues())
		require.Equal(t, int64(1), s.Stats().Evictions)

		// The whole budget: COLD's 3 and 4 go, then, with COLD and HOT
		// empty, WARM's 1.
		tiertest.PutN(t, s, 5, 1000-tier.ItemOverhead)
		require.Equal(t, "HOT [] WARM [] COLD [5]", queues())
		st := s.Stats()
		require.Equal(t, int64(4), st.Evictions)
		require.Equal(t, int64(1), st.Items)
		require.Equal(t, int64(1000), st.Bytes)
	})
}

// BenchmarkTierGet is a pool miss that the tier serves (tiertest.BenchGet).
func BenchmarkTierGet(b *testing.B) { tiertest.BenchGet(b, openBench) }

// BenchmarkTierPut is a Put that evicts, into a full tier
// (tiertest.BenchPut).
func BenchmarkTierPut(b *testing.B) { tiertest.BenchPut(b, openBench) }

func openBench(b *testing.B, capacity int64) tier.Tier {
	tr, err := slru.New(capacity, nil)
	if err != nil {
		b.Fatal(err)
	}
	return tr
}
