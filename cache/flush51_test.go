package cache_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/enginelab/enginelab/cache"
	"github.com/enginelab/enginelab/cache/page"
)

// pool51Dirty opens a 256-frame LRU pool with MySQL 5.1's flushing and an
// exclusive tier double over a store of 300 pages, reads the first load
// of them and then changes the first dirty of those (hits: no flushing
// on the way), and returns the pool, the ids and the tier.
func pool51Dirty(t *testing.T, load, dirty int, o cache.Options) (*cache.Pool, []page.ID, *tierDouble) {
	t.Helper()
	st, l, ids := tierData(t, 300)
	td := newTierDouble()
	o.Policy, o.Flushing, o.Tier = cache.PolicyLRU, cache.Flushing51, td
	p := newPoolWith(t, st, 256, o, cache.Wiring{Log: l, TierDB: 7, TierEpoch: 1})
	var m cache.Meter
	readAll(t, p, &m, ids[:load])
	require.Zero(t, m.LRUFlushPages+m.StoreWrites, "clean pages at the LRU's end: no flushing while reading")
	rng := seed(t)
	for _, id := range ids[:dirty] {
		changeInMtr(t, p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 1) })
	}
	require.Equal(t, dirty, p.Stats().Dirty)
	return p, ids, td
}

// The master thread: a round a second; past 90% dirty (240 of 256: 93%)
// a batch of 100 from the flush list and no sleep before the next round;
// the tenth round writes 10 (at most 70% dirty) and marks a checkpoint.
// Its writes never SET, even with an exclusive tier. Each batch also
// writes its pages' dirty neighbours in their flush area (8 pages in a
// 256-frame pool) and stops after the area that reaches its count: the
// oldest pages are pages 1 to 240 of the space, so the first batch
// writes pages 1 to 103 (the areas 0-7 to 96-103), in two requests (64
// merged pages at most a request: 101 writes merged), and the tenth
// round's 10 pages 104 to 119.
func TestMaster51MaxDirtyPct(t *testing.T) {
	p, _, td := pool51Dirty(t, 240, 240, cache.Options{})
	var m cache.Meter
	pass, err := p.MasterStep(&m, 999*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, cache.MasterPass{Next: time.Millisecond}, pass)

	pass, err = p.MasterStep(&m, time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, cache.MasterPass{Rounds: 1, Pages: 103, Next: 0}, pass, "no sleep after a max-dirty batch")
	require.EqualValues(t, 103, m.MasterFlushListPages, m.String())
	require.EqualValues(t, 103, m.StoreWrites)
	require.EqualValues(t, 101, m.StoreWritesMerged)
	require.Equal(t, 137, p.Stats().Dirty) // 53%

	pass, err = p.MasterStep(&m, 0)
	require.NoError(t, err)
	require.Equal(t, cache.MasterPass{Rounds: 1, Next: time.Second}, pass, "the next round at once, under the limit")

	pass, err = p.MasterStep(&m, 8*time.Second) // rounds 3 to 10
	require.NoError(t, err)
	require.Equal(t, cache.MasterPass{Rounds: 8, Pages: 16, Checkpoints: 1, Next: time.Second}, pass)
	require.Equal(t, 121, p.Stats().Dirty)
	require.EqualValues(t, 10, m.MasterRounds)
	require.EqualValues(t, 1, m.MasterCheckpoints)
	require.EqualValues(t, 119, m.MasterFlushListPages)
	require.EqualValues(t, 101+15, m.StoreWritesMerged)
	require.Zero(t, m.TierPuts+m.Evictions, "the master thread evicts nothing and SETs nothing")
	require.Zero(t, td.len())
}

// A tenth round that flushes for the dirty share still sleeps before the
// next: srv_master_thread's loop: label, where the ten-second work
// returns, clears skip_sleep. Nine rounds at 77% dirty write nothing;
// then 40 more changes make 93%, and the tenth round writes the
// max-dirty batch (pages 1 to 103, as in TestMaster51MaxDirtyPct) and
// the ten-second batch (104 to 119), and the next round is a second away.
func TestMaster51SleepsAfterTenSecondWork(t *testing.T) {
	p, ids, _ := pool51Dirty(t, 240, 200, cache.Options{})
	var m cache.Meter
	pass, err := p.MasterStep(&m, 9*time.Second)
	require.NoError(t, err)
	require.Equal(t, cache.MasterPass{Rounds: 9, Next: time.Second}, pass)
	require.Zero(t, m.MasterFlushListPages, m.String())
	rng := seed(t)
	for _, id := range ids[200:240] {
		changeInMtr(t, p, nil, id, func(mt *cache.Mtr, pg *cache.Page) { scatter(rng, mt, pg, 1) })
	}
	require.Equal(t, 240, p.Stats().Dirty)
	pass, err = p.MasterStep(&m, time.Second)
	require.NoError(t, err)
	require.Equal(t, cache.MasterPass{Rounds: 1, Pages: 119, Checkpoints: 1, Next: time.Second}, pass, "a tenth round sleeps after its work")
	require.EqualValues(t, 119, m.MasterFlushListPages)
}

// Between 70% and 90% dirty (200 of 256: 77%) only the tenth round
// writes, a batch of 100 (103 with the neighbours of its last area, as
// above); with a nil meter the work is the background's.
func TestMaster51TenthRound(t *testing.T) {
	p, _, _ := pool51Dirty(t, 240, 200, cache.Options{})
	bg0 := p.BackgroundMeter()
	pass, err := p.MasterStep(nil, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, cache.MasterPass{Rounds: 10, Pages: 103, Checkpoints: 1, Next: time.Second}, pass)
	bg := p.BackgroundMeter()
	bg.Sub(&bg0)
	require.EqualValues(t, 103, bg.MasterFlushListPages, bg.String())
	require.EqualValues(t, 10, bg.MasterRounds)
	require.Equal(t, 97, p.Stats().Dirty)
}

// A foreground miss in a pool whose pages are all dirty: no free frame,
// no clean page within 100 + 256/10 of the LRU's end, so the caller
// writes an LRU batch itself (buf_flush_free_margin: the margin 5 + 8
// and its extra 13/4 + 100, 116 pages, for the 8-page area of a 256-frame
// pool), evicts the now clean last page and SETs it to the tier, all on
// its own meter; after its read, 21 clean pages at the LRU's end are
// margin enough.
func TestForeground51LRUFlush(t *testing.T) {
	p, ids, td := pool51Dirty(t, 256, 256, cache.Options{})
	var m cache.Meter
	pg, err := p.Fetch(&m, ids[256])
	require.NoError(t, err)
	pg.Unpin(false)
	require.EqualValues(t, 1, m.LRUFlushBatches, m.String())
	require.EqualValues(t, 116, m.LRUFlushPages)
	require.EqualValues(t, 116, m.StoreWrites)
	require.EqualValues(t, 1, m.Evictions)
	require.Zero(t, m.DirtyWriteBacks, "the victim was clean when evicted")
	require.EqualValues(t, 1, m.StoreReads)
	require.EqualValues(t, 1, m.TierPuts, "the eviction's SET is on the foreground path")
	require.Equal(t, 1, td.len())
	require.Equal(t, 140, p.Stats().Dirty)
	// The batch wrote the LRU's last 116 pages, ids[0] first, and each
	// went to the LRU's end as its write completed
	// (buf_LRU_make_block_old), so the last written, ids[115], was the
	// victim, not ids[0].
	require.False(t, p.Resident(ids[115]))
	require.True(t, p.Resident(ids[0]))

	// The next miss finds a clean page at once: the batch's next-to-last.
	m = cache.Meter{}
	pg, err = p.Fetch(&m, ids[257])
	require.NoError(t, err)
	pg.Unpin(false)
	require.Zero(t, m.LRUFlushPages+m.StoreWrites, m.String())
	require.EqualValues(t, 1, m.Evictions)
	require.EqualValues(t, 1, m.TierPuts)
	require.False(t, p.Resident(ids[114]))

	// No page cleaner in 5.1.
	n, err := p.CleanStep(nil, 1000, true)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, 140, p.Stats().Dirty)
}

// The master thread's schedule with nothing to write: a round a second,
// the tenth marking a checkpoint.
func TestMaster51Schedule(t *testing.T) {
	st := newStore(t)
	p := newPool(t, st, 16, cache.Options{Flushing: cache.Flushing51})
	for _, c := range []struct {
		elapsed time.Duration
		want    cache.MasterPass
	}{
		{500 * time.Millisecond, cache.MasterPass{Next: 500 * time.Millisecond}},
		{500 * time.Millisecond, cache.MasterPass{Rounds: 1, Next: time.Second}},
		{10 * time.Second, cache.MasterPass{Rounds: 10, Checkpoints: 1, Next: time.Second}},
		{-time.Second, cache.MasterPass{Next: time.Second}},
	} {
		pass, err := p.MasterStep(nil, c.elapsed)
		require.NoError(t, err)
		require.Equal(t, c.want, pass, c.elapsed)
	}
	_, err := cache.NewPool(st, &cache.Options{Flushing: "5.5"}, nil)
	require.ErrorIs(t, err, cache.ErrInvalidOptions)
}

// In real mode the pool runs the master thread on a goroutine of its own
// (instead of a page cleaner), which Close stops.
func TestMaster51Goroutine(t *testing.T) {
	st, l, ids := tierData(t, 32)
	p := newPoolWith(t, st, 16, cache.Options{Flushing: cache.Flushing51}, cache.Wiring{Log: l, Cleaner: cache.CleanerGoroutine})
	readAll(t, p, nil, ids)
	require.NoError(t, p.Close())
}

// TestPoolStress's workers on a pool with MySQL 5.1's flushing and both
// of its read-aheads (in a 16-frame pool the area is one page: every
// first access reads the page before it in the background, and each
// read-ahead and each miss checks the LRU's free margin): no counter
// goes backwards, none is lost.
func TestPoolStress51(t *testing.T) {
	const (
		frames  = 16
		pages   = maxStressPages
		workers = 6
		ops     = 600
	)
	rng := seed(t)
	st := newStore(t)
	createCounterPages(t, st, frames, pages)

	p := newPool(t, st, frames, cache.Options{Policy: cache.PolicyLRU, Flushing: cache.Flushing51,
		ReadAhead: true, ReadAheadLinear: cache.Linear51, RandomReadAhead: true})
	incs := make([][maxStressPages + 1]uint64, workers)
	meters := make([]cache.Meter, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wr := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
		wg.Go(func() { errs[w] = stressWorker(p, wr, &meters[w], &incs[w], pages, ops) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	var sum cache.Meter
	for i := range meters {
		sum.Add(&meters[i])
	}
	bg := p.BackgroundMeter()
	t.Logf("workers: %s", sum.String())
	t.Logf("background: %s", bg.String())
	require.Positive(t, sum.LRUFlushPages, "foreground LRU flushes")
	require.Positive(t, bg.ReadAheads)
	require.NoError(t, p.FlushAll(nil))
	fresh := newPool(t, st, frames, cache.Options{})
	for n := uint32(1); n <= pages; n++ {
		var want uint64
		for w := range workers {
			want += incs[w][n]
		}
		pg, err := fresh.Fetch(nil, pid(1, n))
		require.NoError(t, err)
		pg.RLatch()
		require.Equal(t, want, getCounter(t, pg), "page %d", n)
		pg.RUnlatch()
		pg.Unpin(false)
	}
}

// A batch's pages at consecutive page numbers of one space go out as one
// request (MySQL 5.1's simulated AIO), at most 64 to a request, whatever
// the order they were added in: the rest of each run is merged.
func TestMergeCount51(t *testing.T) {
	ids := []page.ID{{Space: 1, Page: 6}, {Space: 1, Page: 2}, {Space: 2, Page: 4}, {Space: 1, Page: 1},
		{Space: 1, Page: 3}, {Space: 2, Page: 3}, {Space: 1, Page: 5}, {Space: 3, Page: 3}}
	// Runs: 1:1-3, 1:5-6, 2:3-4, 3:3.
	require.EqualValues(t, 4, cache.MergeCount(ids))
	var long []page.ID
	for pg := range uint32(130) {
		long = append(long, page.ID{Space: 1, Page: 1000 + pg})
	}
	require.EqualValues(t, 130-3, cache.MergeCount(long), "64 + 64 + 2: three requests")
	require.Zero(t, cache.MergeCount(nil))
}

// A sharp checkpoint's writes (FlushAll) under Flushing51 are merged as
// any batch's, also without a doublewrite buffer, where each page is
// written as soon as it is taken: pages 1 to 240 of one space go out in
// four requests of at most 64 pages, so 236 of the 240 writes are merged
// (with a doublewrite buffer each batch of 128 is counted as it is
// written; without one the merges were never counted, and a checkpoint
// cost a request a page).
func TestFlushAllMerges51(t *testing.T) {
	p, _, _ := pool51Dirty(t, 240, 240, cache.Options{})
	var m cache.Meter
	require.NoError(t, p.FlushAll(&m))
	require.EqualValues(t, 240, m.PageFlushes)
	require.EqualValues(t, 240, m.StoreWrites)
	require.EqualValues(t, 240-4, m.StoreWritesMerged, m.String())
	require.Zero(t, p.Stats().Dirty)
}
