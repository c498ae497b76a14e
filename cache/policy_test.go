package cache_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/store"
	"github.com/stretchr/testify/require"
)

func TestLRUEvictionOrder(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 40)
	p := newPool(t, st, 16, cache.Options{Policy: cache.PolicyLRU})
	for n := uint32(1); n <= 16; n++ {
		touch(t, p, nil, pid(1, n))
	}
	require.Equal(t, seq(1, 16), residentSet(p, 1, 1, 40))

	touch(t, p, nil, pid(1, 1)) // 1 becomes most recent; 2 is the LRU page
	touch(t, p, nil, pid(1, 17))
	require.Equal(t, append([]uint32{1}, seq(3, 17)...), residentSet(p, 1, 1, 40))
	touch(t, p, nil, pid(1, 18)) // evicts 3
	require.Equal(t, append([]uint32{1}, seq(4, 18)...), residentSet(p, 1, 1, 40))

	// A pinned page at the LRU end is passed over.
	pg, err := p.Fetch(nil, pid(1, 4))
	require.NoError(t, err)
	for n := uint32(19); n <= 34; n++ {
		touch(t, p, nil, pid(1, n))
	}
	// 16 fetches of new pages through 15 unpinned frames: all but the
	// pinned page 4 and the last 15 are gone.
	require.Equal(t, append([]uint32{4}, seq(20, 34)...), residentSet(p, 1, 1, 40))
	pg.Unpin(false)
	// 4 was used before 20..34: it is the LRU page now.
	touch(t, p, nil, pid(1, 35))
	require.Equal(t, seq(20, 35), residentSet(p, 1, 1, 40))
}

// TestLRUAgainstModel replays seeded random fetches, with some pages held
// pinned for a while, against a plain LRU list and compares residency
// after every step.
func TestLRUAgainstModel(t *testing.T) {
	rng := seed(t)
	const frames, pages = 16, 48
	st := newStore(t)
	putPages(t, st, 1, 1, pages)
	p := newPool(t, st, frames, cache.Options{Policy: cache.PolicyLRU})

	var model []uint32 // most recent first
	pinned := map[uint32]*cache.Page{}
	for step := range 3000 {
		n := uint32(rng.IntN(pages) + 1)
		if i := slices.Index(model, n); i >= 0 {
			model = slices.Delete(model, i, i+1)
		} else if len(model) == frames {
			evicted := false
			for i := len(model) - 1; i >= 0; i-- {
				if pinned[model[i]] == nil {
					model = slices.Delete(model, i, i+1)
					evicted = true
					break
				}
			}
			require.True(t, evicted, "model: every page pinned")
		}
		model = slices.Insert(model, 0, n)

		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err, "step %d", step)
		if pinned[n] == nil && len(pinned) < 4 && rng.IntN(8) == 0 {
			pinned[n] = pg
		} else {
			pg.Unpin(false)
		}
		for k, q := range pinned {
			if rng.IntN(10) == 0 {
				q.Unpin(false)
				delete(pinned, k)
			}
		}
		want := slices.Clone(model)
		slices.Sort(want)
		require.Equal(t, want, residentSet(p, 1, 1, pages), "step %d: page %d", step, n)
	}
	for _, q := range pinned {
		q.Unpin(false)
	}
}

// midpointPool builds a 16-frame midpoint pool over space 1 with a fake
// clock, and brings it to a known state: pages 1..16 read in
// at one instant, then, two seconds later, the first 16-old of them (the
// working set) touched again, which makes exactly them the young sublist.
// old is the old sublist's length: 16*pct/100.
func midpointPool(t *testing.T, st store.Store, pct int) (p *cache.Pool, clk *fakeClock, old uint32) {
	t.Helper()
	clk = newFakeClock()
	p = newPoolWith(t, st, 16, cache.Options{Policy: cache.PolicyMidpoint, OldPercent: pct, OldBlocksTime: time.Second}, cache.Wiring{Runtime: clk})
	old = uint32(16 * pct / 100)
	for n := uint32(1); n <= 16; n++ {
		touch(t, p, nil, pid(1, n))
	}
	clk.Advance(2 * time.Second)
	for n := uint32(1); n <= 16-old; n++ {
		touch(t, p, nil, pid(1, n))
	}
	require.Equal(t, seq(1, 16), residentSet(p, 1, 1, 16))
	return p, clk, old
}

func TestMidpointScanKeepsWorkingSet(t *testing.T) {
	const scanFirst, scanPages = 1000, 400 // the "large table": 25 times the pool
	st := newStore(t)
	putPages(t, st, 1, 1, 16)
	putPages(t, st, 1, scanFirst, scanFirst+scanPages-1)
	for _, pct := range []int{25, 37, 50, 95} {
		t.Run(fmt.Sprintf("old=%d%%", pct), func(t *testing.T) {
			p, clk, old := midpointPool(t, st, pct)
			young := 16 - old
			// A one-pass scan: each page touched a few times (one per
			// row) within a millisecond of its read.
			var m cache.Meter
			for n := uint32(scanFirst); n < scanFirst+scanPages; n++ {
				for range 4 {
					touch(t, p, &m, pid(1, n))
				}
				clk.Advance(time.Millisecond)
			}
			require.EqualValues(t, scanPages, m.PoolMisses)
			require.EqualValues(t, scanPages, m.Evictions)
			want := append(seq(1, young), seq(scanFirst+scanPages-old, scanFirst+scanPages-1)...)
			require.Equal(t, want, residentSet(p, 1, 1, scanFirst+scanPages),
				"the scan must evict only old-sublist pages")
		})
	}
	// The same scan under plain LRU flushes the working set.
	t.Run("lru", func(t *testing.T) {
		p := newPool(t, st, 16, cache.Options{Policy: cache.PolicyLRU})
		for n := uint32(1); n <= 16; n++ {
			touch(t, p, nil, pid(1, n))
			touch(t, p, nil, pid(1, n))
		}
		for n := uint32(scanFirst); n < scanFirst+scanPages; n++ {
			touch(t, p, nil, pid(1, n))
		}
		require.Equal(t, seq(scanFirst+scanPages-16, scanFirst+scanPages-1), residentSet(p, 1, 1, scanFirst+scanPages))
	})
}

func TestMidpointQuickRetouchStaysOld(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 100)
	p, clk, old := midpointPool(t, st, 37)
	require.EqualValues(t, 5, old)
	ws := seq(1, 11)

	touch(t, p, nil, pid(1, 17)) // evicts an old page, enters the old sublist
	clk.Advance(500 * time.Millisecond)
	touch(t, p, nil, pid(1, 17)) // within OldBlocksTime: stays old
	clk.Advance(499 * time.Millisecond)
	touch(t, p, nil, pid(1, 17)) // 999ms after its read: still old
	require.True(t, p.Resident(pid(1, 17)))

	// Four more reads push 17 to the old sublist's tail, the fifth
	// evicts it; the young working set is untouched throughout.
	for n := uint32(18); n <= 21; n++ {
		touch(t, p, nil, pid(1, n))
	}
	require.Equal(t, append(slices.Clone(ws), seq(17, 21)...), residentSet(p, 1, 1, 100))
	touch(t, p, nil, pid(1, 22))
	require.Equal(t, append(slices.Clone(ws), seq(18, 22)...), residentSet(p, 1, 1, 100))
}

func TestMidpointLateRetouchMakesYoung(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 200)
	p, clk, _ := midpointPool(t, st, 37)

	touch(t, p, nil, pid(1, 17))
	clk.Advance(time.Second) // exactly OldBlocksTime later
	touch(t, p, nil, pid(1, 17))
	// 17 went to the head of the young sublist; the young sublist's tail
	// slid into the old sublist to make room.

	for n := uint32(100); n < 200; n++ {
		touch(t, p, nil, pid(1, n))
	}
	// 17 survived the scan, with ten of the eleven young pages; the scan
	// went through the old sublist only.
	res := residentSet(p, 1, 1, 200)
	require.Equal(t, append([]uint32{17}, seq(195, 199)...), res[len(res)-6:])
	require.Len(t, res, 16)
	require.Subset(t, seq(1, 11), res[:10])
}

// TestMidpointOldPagesGoFirst checks where victims come from when the old
// sublist is all pinned: the young sublist's tail, and only then.
func TestMidpointOldPagesGoFirst(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 100)
	p, _, old := midpointPool(t, st, 37)
	// Read 17..21 and keep them pinned: they replace 12..16 as the whole
	// old sublist (reading them does not make them young).
	var held []*cache.Page
	for n := uint32(17); n < 17+old; n++ {
		pg, err := p.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		held = append(held, pg)
	}
	require.Equal(t, append(seq(1, 11), seq(17, 21)...), residentSet(p, 1, 1, 100))
	// No unpinned old page: the young sublist's tail goes. Which young page
	// that is depends on the order pages crossed the midpoint (a touch of a
	// young page does not reorder it while nothing is evicted, as in
	// InnoDB), so check only that exactly one young page went.
	touch(t, p, nil, pid(1, 50))
	res := residentSet(p, 1, 1, 100)
	require.Equal(t, append(seq(17, 21), 50), res[len(res)-6:])
	youngLeft := res[:len(res)-6]
	require.Len(t, youngLeft, 10)
	require.Subset(t, seq(1, 11), youngLeft)
	for _, pg := range held {
		pg.Unpin(false)
	}
	// Unpinned, the old sublist is used again, from its tail: 17 first.
	touch(t, p, nil, pid(1, 51))
	require.Equal(t, append(append(youngLeft, seq(18, 21)...), 50, 51), residentSet(p, 1, 1, 100))
}

// TestMidpointOldBlocksTimeDefault: a zero OldBlocksTime is the 1s default,
// not "promote on every second touch"; 1ns is the way to ask for that.
func TestMidpointOldBlocksTimeDefault(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 100)
	for _, c := range []struct {
		oldTime time.Duration
		wait    time.Duration
		young   bool
	}{
		{0, 999 * time.Millisecond, false},
		{0, time.Second, true},
		{time.Nanosecond, 0, false}, // same instant: not past the read
		{time.Nanosecond, time.Nanosecond, true},
	} {
		young := retouchSurvivesScan(t, st, cache.Options{Policy: cache.PolicyMidpoint, OldBlocksTime: c.oldTime},
			func(_ *cache.Pool, clk *fakeClock) { clk.Advance(c.wait) })
		require.Equal(t, c.young, young, "OldBlocksTime %v, touched again after %v", c.oldTime, c.wait)
	}
}

// retouchSurvivesScan fills a 16-frame pool with o, reads page 17 into
// its old sublist, runs between, touches 17 again, then scans 20 new
// pages through the old sublist: it reports whether 17 is still resident,
// that is, whether the second touch made it young.
func retouchSurvivesScan(t *testing.T, st store.Store, o cache.Options, between func(*cache.Pool, *fakeClock)) bool {
	t.Helper()
	clk := newFakeClock()
	p := newPoolWith(t, st, 16, o, cache.Wiring{Runtime: clk})
	for n := uint32(1); n <= 16; n++ {
		touch(t, p, nil, pid(1, n))
	}
	if o.Promotion == "" || o.Promotion == cache.PromoteOldBlocksTime {
		clk.Advance(time.Hour)
		for n := uint32(1); n <= 11; n++ { // young = 1..11, old = 12..16
			touch(t, p, nil, pid(1, n))
		}
	}
	touch(t, p, nil, pid(1, 17)) // read into the old sublist
	between(p, clk)
	touch(t, p, nil, pid(1, 17))
	for n := uint32(60); n < 80; n++ { // a scan through the old sublist
		touch(t, p, nil, pid(1, n))
	}
	return p.Resident(pid(1, 17))
}

// Under a freed-page rule no clock is read: a page is made young at a
// touch once enough pages left the pool since it was read in, 1 +
// frames/1024 under MySQL 5.1's rule (1 in a 16-frame pool), more than a
// quarter of the young sublist under the plugin's (11 young pages: 3).
// Here the clock never moves, so the time rule keeps the page old. A page
// made young survives a scan through the old sublist; one left old does
// not.
func TestMidpointFreedPageClock(t *testing.T) {
	st := newStore(t)
	putPages(t, st, 1, 1, 100)
	for _, c := range []struct {
		rule    cache.Promotion
		between int // pages read (each evicting one) between the page's read and its second touch
		young   bool
	}{
		{cache.Promote51, 0, false},
		{cache.Promote51, 1, true},
		{cache.PromotePlugin, 2, false},
		{cache.PromotePlugin, 3, true},
		{cache.PromoteOldBlocksTime, 3, false},
	} {
		young := retouchSurvivesScan(t, st, cache.Options{Policy: cache.PolicyMidpoint, Promotion: c.rule}, func(p *cache.Pool, _ *fakeClock) {
			for i := range c.between { // each read evicts a page
				touch(t, p, nil, pid(1, 50+uint32(i)))
			}
		})
		require.Equal(t, c.young, young, "%s, %d pages read between", c.rule, c.between)
	}
}

// A freed-page rule belongs to the midpoint policy; an unknown rule is
// refused.
func TestPromotionOptions(t *testing.T) {
	st := newStore(t)
	for _, o := range []cache.Options{
		{Policy: cache.PolicyLRU, Promotion: cache.Promote51},
		{Promotion: "sometimes"},
	} {
		_, err := cache.NewPool(st, &o, &cache.Wiring{})
		require.ErrorIs(t, err, cache.ErrInvalidOptions, "%+v", o)
		require.ErrorContains(t, err, string(o.Promotion))
	}
}
